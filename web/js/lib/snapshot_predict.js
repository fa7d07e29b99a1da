// snapshot_predict.js — the masked-LM predictions a snapshot (snapshot.js)
// carries for a view whose snapshot spec says `predict: true` (the
// Predictions view), so an embed or a standalone file draws them without
// the model. Plain ES module, no DOM; names no view.
//
// In the snapshot's meta JSON, key "predict" (absent in snapshots of other
// views and in older ones):
//   {"has_head": bool, "k": 1..100, "mask_token": string | null,
//    "asked": [token indices, the state's mask= list, increasing],
//    "was": [[position, id], ...] (optional: the state's was= pairs,
//            lib/predict_was.js; absent in older snapshots: none),
//    "positions": [{"index": 0..T-1, "token": string | null,
//                   "was": {"id", "token"} (optional: the masked-out word
//                   whose probability and rank follow),
//                   "token_prob": 0..1, "token_rank": 1..2^31-1,
//                   "top": [{"id": 0..2^31-1, "token": string | null,
//                            "prob": 0..1}, ... at most k]}, ... at most T]}
// as the worker's predict answer has them (src/wasm/wasm_predict.c). A link is
// anyone's JSON: checkPredict refuses any other type, range or count with a
// SnapshotError naming the field; strings stay data (the view sets them as
// text, never as HTML) and are at most MAX_WORD characters.

import { FormatError as SnapshotError } from './bytes.js';
import { predictKey } from './protocol.js';
import { wasPairs, MAX_WAS } from './predict_was.js';

export const MAX_PREDICT_K = 100; // as makePredictRequest (protocol.js)
const MAX_WORD = 200; // characters of a stored token
const MAX_ID = 2 ** 31 - 1;

const shown = (v) => {
  let t;
  try { t = JSON.stringify(v); } catch { t = undefined; }
  t = t === undefined ? String(v) : t;
  return t.length > 40 ? `${t.slice(0, 40)}…` : t;
};
const isObj = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const isInt = (v, lo, hi) => Number.isInteger(v) && v >= lo && v <= hi;
const isProb = (v) => typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= 1;
const isWord = (v) => v === null || (typeof v === 'string' && v.length <= MAX_WORD);

/** The state's mask= value as token indices ('' -> []). */
function askedOf(state) {
  const raw = state && typeof state.mask === 'string' ? state.mask : '';
  return raw ? raw.split(',').map(Number).filter((i) => Number.isInteger(i) && i >= 0) : [];
}

/** The snapshot's predictions of a live run's run.predict (the worker's
 *  answer, engine/worker_predict.js) for page state `state`. */
export function predictFromRun(pr, state) {
  if (!pr) throw new SnapshotError('the run has no predictions');
  return checkPredict({
    has_head: !!pr.hasHead, k: pr.k, mask_token: pr.maskToken ?? null, asked: askedOf(state), was: wasPairs(state && state.was),
    positions: (pr.positions || []).map((p) => ({
      index: p.index, token: p.token ?? null, ...(p.was ? { was: { id: p.was.id, token: p.was.token ?? null } } : {}),
      token_prob: p.token_prob, token_rank: p.token_rank,
      top: p.top.map((e) => ({ id: e.id, token: e.token ?? null, prob: e.prob })),
    })),
  }, Infinity);
}

/** The meta JSON's "predict" checked field by field for a snapshot of T
 *  tokens: a clean copy, or a SnapshotError naming the field. */
export function checkPredict(raw, T) {
  const bad = (field, v, want) => { throw new SnapshotError(`its predictions' ${field} is ${shown(v)}, not ${want}`); };
  if (!isObj(raw)) bad('record', raw, 'an object');
  if (typeof raw.has_head !== 'boolean') bad('has_head', raw.has_head, 'true or false');
  if (!isInt(raw.k, 1, MAX_PREDICT_K)) bad('k', raw.k, `a whole number 1 to ${MAX_PREDICT_K}`);
  if (!isWord(raw.mask_token)) bad('mask_token', raw.mask_token, `a text of at most ${MAX_WORD} characters or null`);
  const idx = (v) => isInt(v, 0, Math.min(T - 1, 9999));
  const where = `a token index below ${T}`;
  if (!Array.isArray(raw.asked) || raw.asked.length > Math.min(T, 64)) bad('asked', raw.asked, `a list of at most ${Math.min(T, 64)} token indices`);
  raw.asked.forEach((v, i) => {
    if (!idx(v)) bad(`asked[${i}]`, v, where);
    if (i && v <= raw.asked[i - 1]) bad(`asked[${i}]`, v, 'larger than the index before it');
  });
  const was = raw.was === undefined ? [] : raw.was;
  if (!Array.isArray(was) || was.length > MAX_WAS) bad('was', was, `a list of at most ${MAX_WAS} [position, id] pairs`);
  was.forEach((w, i) => {
    if (!Array.isArray(w) || w.length !== 2 || !idx(w[0]) || !isInt(w[1], 0, MAX_ID)) bad(`was[${i}]`, w, `a [position, id] pair (${where})`);
    if (i && w[0] <= was[i - 1][0]) bad(`was[${i}]`, w, 'after the position before it');
  });
  if (!Array.isArray(raw.positions) || raw.positions.length > T) bad('positions', raw.positions, `a list of at most ${T} positions`);
  if (!raw.has_head && raw.positions.length) bad('positions', raw.positions, 'empty (the model has no head)');
  const positions = raw.positions.map((p, i) => {
    const f = `positions[${i}]`;
    if (!isObj(p)) bad(f, p, 'an object');
    if (!idx(p.index)) bad(`${f}.index`, p.index, where);
    if (i && p.index <= raw.positions[i - 1].index) bad(`${f}.index`, p.index, 'larger than the index before it');
    if (!isWord(p.token)) bad(`${f}.token`, p.token, `a text of at most ${MAX_WORD} characters or null`);
    if (!isProb(p.token_prob)) bad(`${f}.token_prob`, p.token_prob, 'a probability (0 to 1)');
    if (!isInt(p.token_rank, 1, MAX_ID)) bad(`${f}.token_rank`, p.token_rank, 'a rank (a whole number from 1)');
    if (!Array.isArray(p.top) || p.top.length < 1 || p.top.length > raw.k) bad(`${f}.top`, p.top, `a list of 1 to k = ${raw.k} words`);
    const top = p.top.map((e, r) => {
      const g = `${f}.top[${r}]`;
      if (!isObj(e)) bad(g, e, 'an object');
      if (!isInt(e.id, 0, MAX_ID)) bad(`${g}.id`, e.id, 'a token id (a whole number from 0)');
      if (!isWord(e.token)) bad(`${g}.token`, e.token, `a text of at most ${MAX_WORD} characters or null`);
      if (!isProb(e.prob)) bad(`${g}.prob`, e.prob, 'a probability (0 to 1)');
      if (r && e.prob > p.top[r - 1].prob) bad(`${g}.prob`, e.prob, 'at most the probability before it (most probable first)');
      return { id: e.id, token: e.token, prob: e.prob };
    });
    if (p.was !== undefined && !(isObj(p.was) && isInt(p.was.id, 0, MAX_ID) && isWord(p.was.token))) bad(`${f}.was`, p.was, 'an object {id, token}');
    return { index: p.index, token: p.token, ...(p.was !== undefined ? { was: { id: p.was.id, token: p.was.token } } : {}), token_prob: p.token_prob, token_rank: p.token_rank, top };
  });
  return { has_head: raw.has_head, k: raw.k, mask_token: raw.mask_token, asked: raw.asked.slice(), was: was.map((w) => [w[0], w[1]]), positions };
}

/** Does the snapshot's predictions answer state s (same text: the caller
 *  checked)? {ok: true} or {ok: false, why} as snapshotCovers. */
export function predictCovers(o, s) {
  if (!o.predict) return { ok: false, why: 'the model\'s predictions' };
  const want = typeof s.mask === 'string' ? s.mask : '';
  if (want !== o.predict.asked.join(',')) return { ok: false, why: `the predictions at positions ${want || '(none asked)'}` };
  if (wasPairs(s.was).join(';') !== (o.predict.was || []).join(';')) return { ok: false, why: 'the ranks of the words masked' };
  return { ok: true };
}

/** run.predict (as runs.js attaches the worker's answer) of a snapshot's
 *  predictions: the key the view's needs ask for ({positions: mask=,
 *  masked: true, k}). */
export function predictRun(p) {
  return {
    hasHead: p.has_head, k: p.k, maskToken: p.mask_token, positions: p.positions, ms: 0,
    key: predictKey({ positions: p.asked, masked: true, k: p.k, was: p.was || [] }),
  };
}
