// decision_data.js — the Decision view's numbers, without the DOM (Node
// tests: tests/web/decision_data.test.mjs): its URL parameters, the one
// record it draws (from the worker's answer, engine/worker_decision.js, or
// from a snapshot), that record checked field by field when a snapshot
// (anyone's JSON) brings it, its export, and the attribution colour scale.
//
// The record D (what the view draws, what a snapshot's "view_data" holds):
//   {kind: 'sequence-classification' | 'token-classification' |
//          'question-answering' | 'masked-lm' | 'none',
//    method: 'grad-input' | 'ig', steps, target (-1: the predicted label),
//    at (-1: the default position), labels: [C] | null,
//    seq:   {problem: 'single' | 'multi' | 'regression', probs: [C] | null,
//            value: number | null, pred} | null
//    token: {probs: [T][C]} | null          (per token, softmax over labels)
//    qa:    {start: [T], end: [T], span: {start, end, text, prob} | null} | null
//    mlm:   {mask: string | null, blanks: [{index, top: [{id, token, prob}]}],
//            lens: [{layer, index, top: [{id, token, prob}]}]} | null
//    attr:  {position, target, label, scores: [T], logit, delta, sum, prob} | null
//    attrError: string | null (why there is no attribution, in words)
//    heads: [L][H] | null}  (head effects: p_target − p_target with it off;
//           a grid cancelled part-way keeps its first rows, then null rows)

import { DECISION_METHODS, DECISION_KINDS, MAX_IG_STEPS, decisionKey } from '../lib/protocol.js';

export const MAX_WORD = 200; // characters of a stored token or label
const MAX_LABELS = 1000;
const MAX_ID = 2 ** 31 - 1; // a vocabulary id

export const METHOD_NAMES = Object.freeze({ 'grad-input': 'Gradient × input', ig: 'Integrated gradients' });
export const KIND_NAMES = Object.freeze({
  'sequence-classification': 'sequence classification', 'token-classification': 'token classification',
  'question-answering': 'question answering', 'masked-lm': 'masked-language-model', none: 'no head',
});

export const NO_HEAD_LINE = 'This model has no task head and no masked-language-model head, so there is no decision to explain (all-MiniLM-L6-v2, the default, was trained for sentence embeddings and shipped without one). This view shows the output and the token attributions of a sequence classifier (sentiment, NLI: label probabilities), a token classifier (NER: a label per token), a question-answering model (the answer in the context) or a masked-language model (its guesses at each blank, layer by layer). To see one, convert a checkpoint folder of a *ForSequenceClassification, *ForTokenClassification, *ForQuestionAnswering or *ForMaskedLM model (BERT, ALBERT, DistilBERT, ELECTRA, RoBERTa, XLM-R, CamemBERT, MPNet, DeBERTa-v2/v3 or ModernBERT) with “Convert a model folder…” or `bertlens convert`, or load one from the Hugging Face Hub.';

// ------------------------------------------------------------- parameters

const intParam = (lo, hi) => (raw) => (/^-?\d{1,10}$/.test(String(raw)) && Number(raw) >= lo && Number(raw) <= hi ? Number(raw) : null);

/** The view's URL parameters (descriptor.params). */
export const PARAMS = Object.freeze([
  { key: 'method', def: 'grad-input', parse: (raw) => (DECISION_METHODS.includes(raw) ? raw : null), expect: DECISION_METHODS.join(' or ') },
  { key: 'steps', def: 32, parse: intParam(1, MAX_IG_STEPS), expect: `a whole number of integrated-gradients steps, 1 to ${MAX_IG_STEPS}` },
  // a label index, or for a masked-LM the vocabulary id of the word to explain
  { key: 'target', def: -1, parse: intParam(-1, MAX_ID), expect: 'a label index or word id (-1: the predicted one)' },
  { key: 'at', def: -1, perText: true, parse: intParam(-1, 9999), expect: 'a token position (-1: the default)',
    within: (v, { T }) => (v >= T ? `at=${v} names a token past its ${T}` : null) },
]);

/** The worker request's choice for state s (descriptor.needs). */
export const decisionNeed = (s) => ({ method: s.method || 'grad-input', steps: s.steps || 32, target: Number.isInteger(s.target) ? s.target : -1, position: Number.isInteger(s.at) ? s.at : -1 });

// ------------------------------------------------------------- the record

/** The record D of the worker's answer (run.decision) for state s. */
export function decisionRecord(out, s) {
  const need = decisionNeed(s);
  const D = {
    kind: out.kind, method: need.method, steps: need.steps, target: need.target, at: need.position,
    labels: null, seq: null, token: null, qa: null, mlm: null, attr: null, attrError: out.explainError || null, heads: out.heads || null,
  };
  const h = out.head;
  if (out.kind === 'sequence-classification') {
    D.labels = h.labels.slice();
    const probs = h.probs ? h.probs.slice() : null;
    D.seq = { problem: h.problem_type === 'regression' ? 'regression' : h.problem_type === 'multi_label_classification' ? 'multi' : 'single', probs, value: probs ? null : h.value, pred: probs ? argmax(probs) : 0 };
  } else if (out.kind === 'token-classification') {
    D.labels = h.labels.slice();
    D.token = { probs: h.positions.map((p) => p.probs.slice()) };
  } else if (out.kind === 'question-answering') {
    D.qa = { start: h.start_probs.slice(), end: h.end_probs.slice(), span: h.span ? { start: h.span.start, end: h.span.end, text: h.span.text ?? '', prob: h.span.prob } : null };
  } else if (out.kind === 'masked-lm') {
    const w = out.words || { positions: [] };
    const top = (t) => t.map((e) => ({ id: e.id, token: e.token ?? '', prob: e.prob }));
    D.mlm = {
      mask: w.mask_token ?? null,
      blanks: w.positions.map((p) => ({ index: p.index, top: top(p.top) })),
      lens: (out.lens || []).flatMap((l) => l.positions.map((p) => ({ layer: l.layer, index: p.index, top: top(p.top) }))),
    };
  }
  const e = out.explain;
  if (e) D.attr = { position: e.position, target: e.target, label: e.label ?? '', scores: e.scores.slice(), logit: e.logit, delta: e.delta, sum: e.sum, prob: e.prob };
  return D;
}

const argmax = (x) => x.reduce((k, v, i) => (v > x[k] ? i : k), 0);

/** The key (protocol.js decisionKey) of the choice a record was made for. */
export const recordKey = (D) => decisionKey({ method: D.method, steps: D.steps, target: D.target, position: D.at });

/** The label index the attribution explains (the picker's value). */
export function targetOf(D) {
  if (D.attr) return D.attr.target;
  return D.target;
}

/** The answer's probability per kind, as the view says it in words. */
export function headline(D) {
  if (D.kind === 'sequence-classification') {
    const { seq } = D;
    if (seq.problem === 'regression') return `Predicted value: ${num(seq.value)}`;
    return `Predicted: ${D.labels[seq.pred]} (${pct(seq.probs[seq.pred])})`;
  }
  if (D.kind === 'question-answering') return D.qa.span ? `Answer: “${D.qa.span.text}” (${pct(D.qa.span.prob)})` : 'No answer span in the context';
  if (D.kind === 'token-classification') return 'Predicted label of each token';
  if (D.kind === 'masked-lm') return D.mlm.blanks.length ? `Top word at position ${D.mlm.blanks[0].index}: “${D.mlm.blanks[0].top[0].token}”` : 'No blank in the text';
  return '';
}

export const pct = (p) => (!Number.isFinite(p) ? '–' : p >= 0.001 ? `${(100 * p).toFixed(1)} %` : p > 0 ? '< 0.1 %' : '0 %');
export const num = (v) => (Number.isFinite(v) ? (Math.abs(v) >= 1e-3 || v === 0 ? v.toFixed(4) : v.toExponential(2)) : '–');

/** The predicted label of each token (token classification): [T] indices. */
export const tokenLabels = (D) => D.token.probs.map(argmax);

/** Largest |score| (the diverging scale's end; 0 when all are 0). */
export const scoreMax = (scores) => scores.reduce((m, v) => Math.max(m, Math.abs(v)), 0);

/** The position of a score on the diverging scale: 0..1, 0.5 for 0. */
export const scaleOf = (v, max) => (max > 0 ? 0.5 + 0.5 * Math.max(-1, Math.min(1, v / max)) : 0.5);

// ----------------------------------------------------------------- export

/** Export (CSV/JSON, descriptor.shown): the head's output, the
 *  attribution per token and the head effects when computed. */
export function shownDecision(D, run, s) {
  if (!D || D.kind === 'none') throw new Error('this model has no task head and no masked-LM head, so there is nothing to export');
  const tok = run.tokens;
  const blocks = [];
  if (D.seq) {
    const reg = D.seq.problem === 'regression';
    blocks.push({ name: `${KIND_NAMES[D.kind]}: ${reg ? 'value' : 'label probabilities'}`, rows: reg ? ['value'] : D.labels, cols: [reg ? 'value' : 'probability'],
      values: reg ? [D.seq.value] : D.seq.probs, extra: { problem_type: D.seq.problem } });
  }
  if (D.token) blocks.push({ name: 'token classification: label probabilities per token', rows: tok, cols: D.labels, values: D.token.probs.flat() });
  if (D.qa) {
    blocks.push({ name: 'question answering: start and end probabilities', rows: tok, cols: ['start', 'end'], values: tok.flatMap((_, t) => [D.qa.start[t], D.qa.end[t]]),
      extra: { span: D.qa.span } });
  }
  if (D.mlm) {
    for (const b of D.mlm.blanks) blocks.push({ name: `masked-LM: top words at position ${b.index}`, rows: b.top.map((e) => e.token), cols: ['probability'], values: b.top.map((e) => e.prob), extra: { position: b.index } });
    for (const l of D.mlm.lens) blocks.push({ name: `logit lens: layer ${l.layer} at position ${l.index}`, rows: l.top.map((e) => e.token), cols: ['probability'], values: l.top.map((e) => e.prob), extra: { layer: l.layer, position: l.index } });
  }
  if (D.attr) {
    blocks.push({ name: `attribution (${METHOD_NAMES[D.method]}${D.method === 'ig' ? `, ${D.steps} steps` : ''}) of ${D.attr.label || `target ${D.attr.target}`}`, rows: tok, cols: ['score'], values: D.attr.scores,
      extra: { method: D.method, ...(D.method === 'ig' ? { steps: D.steps } : {}), position: D.attr.position, target: D.attr.target, label: D.attr.label, logit: D.attr.logit, delta: D.attr.delta, sum: D.attr.sum, prob: D.attr.prob } });
  }
  const done = D.heads ? D.heads.filter(Boolean) : []; // a grid cancelled part-way: its first layers
  if (done.length) {
    const H = done[0].length;
    blocks.push({ name: 'head effects: p(target) with every head - p(target) with that head off', rows: done.map((_, l) => `layer ${l}`), cols: Array.from({ length: H }, (_, h) => `head ${h}`), values: done.flat(),
      ...(done.length < D.heads.length ? { extra: { layers_computed: done.length, layers: D.heads.length } } : {}) });
  }
  return {
    view: s.view, mode: 'attn', what: `${KIND_NAMES[D.kind]} head output and attributions`, hide: false, renorm: false, words: false, ablate: s.ablate || '',
    text: s.text, text_b: s.text_b || '', tokens: tok.slice(), blocks, extra: { head: D.kind },
  };
}

// --------------------------------------------------------------- snapshot

const isObj = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const isNum = (v) => typeof v === 'number' && Number.isFinite(v);
const isProb = (v) => isNum(v) && v >= 0 && v <= 1;
const isText = (v) => typeof v === 'string' && v.length <= MAX_WORD;
const isInt = (v, lo, hi) => Number.isInteger(v) && v >= lo && v <= hi;
const shown = (v) => { let t; try { t = JSON.stringify(v); } catch { t = undefined; } t = t === undefined ? String(v) : t; return t.length > 40 ? `${t.slice(0, 40)}…` : t; };

/** A snapshot's "view_data" (anyone's JSON) checked against T tokens, L
 *  layers, H heads: a clean record D, or an Error naming the field. */
export function checkRecord(raw, { T, L, H }) {
  const bad = (field, v, want) => { throw new Error(`its decision's ${field} is ${shown(v)}, not ${want}`); };
  const list = (field, v, n, ok, want) => {
    if (!Array.isArray(v) || (n !== null && v.length !== n) || v.length > 10000) bad(field, v, `a list of ${n ?? 'some'} ${want}`);
    v.forEach((x, i) => { if (!ok(x)) bad(`${field}[${i}]`, x, want); });
    return v.slice();
  };
  if (!isObj(raw)) bad('record', raw, 'an object');
  if (!DECISION_KINDS.includes(raw.kind)) bad('kind', raw.kind, `one of ${DECISION_KINDS.join(', ')}`);
  if (!DECISION_METHODS.includes(raw.method)) bad('method', raw.method, DECISION_METHODS.join(' or '));
  if (!isInt(raw.steps, 1, MAX_IG_STEPS)) bad('steps', raw.steps, `a whole number 1 to ${MAX_IG_STEPS}`);
  if (!isInt(raw.target, -1, MAX_ID)) bad('target', raw.target, 'a label index, a word id or -1');
  if (!isInt(raw.at, -1, T - 1)) bad('at', raw.at, `a token index below ${T} or -1`);
  const D = { kind: raw.kind, method: raw.method, steps: raw.steps, target: raw.target, at: raw.at, labels: null, seq: null, token: null, qa: null, mlm: null, attr: null, attrError: null, heads: null };
  const needs = (field, when) => { if (when && !isObj(raw[field])) bad(field, raw[field], 'an object'); };
  if (raw.kind === 'sequence-classification' || raw.kind === 'token-classification') D.labels = list('labels', raw.labels, null, isText, 'label names');
  if (D.labels && (D.labels.length < 1 || D.labels.length > MAX_LABELS)) bad('labels', raw.labels, `1 to ${MAX_LABELS} label names`);
  const C = D.labels ? D.labels.length : 0;
  needs('seq', raw.kind === 'sequence-classification');
  if (raw.kind === 'sequence-classification') {
    const s = raw.seq;
    if (!['single', 'multi', 'regression'].includes(s.problem)) bad('seq.problem', s.problem, 'single, multi or regression');
    const reg = s.problem === 'regression';
    D.seq = { problem: s.problem, probs: reg ? null : list('seq.probs', s.probs, C, isProb, 'probabilities'), value: reg ? (isNum(s.value) ? s.value : bad('seq.value', s.value, 'a number')) : null, pred: 0 };
    if (!isInt(s.pred, 0, C - 1)) bad('seq.pred', s.pred, `a label index below ${C}`);
    D.seq.pred = s.pred;
  }
  needs('token', raw.kind === 'token-classification');
  if (raw.kind === 'token-classification') D.token = { probs: list('token.probs', raw.token.probs, T, (r) => Array.isArray(r) && r.length === C && r.every(isProb), `rows of ${C} probabilities`).map((r) => r.slice()) };
  needs('qa', raw.kind === 'question-answering');
  if (raw.kind === 'question-answering') {
    const q = raw.qa;
    D.qa = { start: list('qa.start', q.start, T, isProb, 'probabilities'), end: list('qa.end', q.end, T, isProb, 'probabilities'), span: null };
    if (q.span !== null) {
      const sp = q.span;
      if (!isObj(sp) || !isInt(sp.start, 0, T - 1) || !isInt(sp.end, sp.start, T - 1) || !isText(sp.text) || !isProb(sp.prob)) bad('qa.span', sp, 'a span {start <= end below T, text, prob}');
      D.qa.span = { start: sp.start, end: sp.end, text: sp.text, prob: sp.prob };
    }
  }
  needs('mlm', raw.kind === 'masked-lm');
  if (raw.kind === 'masked-lm') {
    const m = raw.mlm;
    if (m.mask !== null && !isText(m.mask)) bad('mlm.mask', m.mask, 'a token or null');
    const top = (field, t) => list(field, t, null, (e) => isObj(e) && isInt(e.id, 0, MAX_ID) && isText(e.token) && isProb(e.prob), '{id, token, prob} entries').map((e) => ({ id: e.id, token: e.token, prob: e.prob }));
    const blanks = list('mlm.blanks', m.blanks, null, (b) => isObj(b) && isInt(b.index, 0, T - 1), 'blanks {index, top}').map((b, i) => ({ index: b.index, top: top(`mlm.blanks[${i}].top`, b.top) }));
    const lens = list('mlm.lens', m.lens, null, (b) => isObj(b) && isInt(b.layer, 1, L) && isInt(b.index, 0, T - 1), 'lens rows {layer, index, top}').map((b, i) => ({ layer: b.layer, index: b.index, top: top(`mlm.lens[${i}].top`, b.top) }));
    D.mlm = { mask: m.mask, blanks, lens };
  }
  if (raw.attr !== null && raw.attr !== undefined) {
    const a = raw.attr;
    if (!isObj(a) || !isInt(a.position, 0, T - 1) || !isInt(a.target, 0, 2 ** 31 - 1) || !isText(a.label)) bad('attr', a, 'an attribution {position, target, label, scores, …}');
    for (const f of ['logit', 'delta', 'sum', 'prob']) if (!isNum(a[f])) bad(`attr.${f}`, a[f], 'a number');
    D.attr = { position: a.position, target: a.target, label: a.label, scores: list('attr.scores', a.scores, T, isNum, 'numbers'), logit: a.logit, delta: a.delta, sum: a.sum, prob: a.prob };
  }
  if (raw.attrError !== null && raw.attrError !== undefined) D.attrError = typeof raw.attrError === 'string' && raw.attrError.length <= 400 ? raw.attrError : bad('attrError', raw.attrError, 'a sentence');
  if (raw.heads !== null && raw.heads !== undefined) { // rows of H numbers; a grid cancelled part-way ends in null rows
    D.heads = list('heads', raw.heads, L, (r) => r === null || (Array.isArray(r) && r.length === H && r.every((v) => isNum(v) && Math.abs(v) <= 1e6)), `rows of ${H} numbers (or null after the computed ones)`).map((r) => (r ? r.slice() : null));
    const k = D.heads.findIndex((r) => r === null);
    if (k === 0 || (k > 0 && D.heads.slice(k).some((r) => r !== null))) bad('heads', raw.heads, 'computed rows first, then null rows');
  }
  return D;
}

/** The snapshot's record of a live run (descriptor.snapshot.data.fromRun). */
export function recordForSnapshot(run, s) {
  if (!run.decision) throw new Error('the run has no decision yet');
  const D = decisionRecord(run.decision, s);
  return checkRecord(JSON.parse(JSON.stringify(D)), { T: run.T, L: run.L, H: run.H });
}

/** Does a snapshot (snapshot.js object o) hold the decision state s asks
 *  for? {ok} or {ok: false, why} (why completes "It does not hold …"). */
export function recordCovers(o, s) {
  let D;
  try {
    D = checkRecord(o.viewData, o);
  } catch (e) {
    return { ok: false, why: `a readable decision (${e.message})` };
  }
  const need = decisionNeed(s);
  if (recordKey(D) !== decisionKey(need)) return { ok: false, why: `the attribution for ${METHOD_NAMES[need.method]}, target ${need.target}, position ${need.position}` };
  return { ok: true };
}
