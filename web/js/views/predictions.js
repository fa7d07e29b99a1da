// predictions.js — what the model's masked-language-model head predicts:
// for each mask token of the text (and each position the learner asked for,
// the view's mask= parameter) the k most probable words with probability
// bars, and the actual token's probability and rank. The numbers come from
// the C head (src/model/mlm.c through the worker's 'predict' message,
// engine/worker_predict.js; needs() asks for them, lib/protocol.js).
//
// A click, tap or Enter on a token replaces it in the text with the model's
// own mask token ([MASK], <mask>, ...) and the page runs again, so the other
// views show attention to and from the blank; "?" beside a token shows the
// predictions at that token without masking it (mask= keeps those positions).
// A model without a head says so, and how to get one that has one.
// A snapshot (lib/snapshot_predict.js) carries the predictions drawn, so an
// embed or a standalone file shows them with no model; there masking is
// switched off (it runs the model), and a sentence says so.
//
// data = {hasHead, tokens[T], labels[T] (tokens.js: "Ġcle" reads "␣cle"),
//         label (piece -> label), maskToken, preds [{index, token, token_prob,
//         token_rank, top: [{id, token, prob}]}], asked (Set of mask=
//         positions), snapshot (drawn from a snapshot), title, notes[]}
// Tokens and guesses are shown by their labels, the raw piece in the tooltip.

import { THEMES, tooltip, infoLine, exportContext } from './common.js';
import { emptySentence } from './view_notes.js';
import { piecesOf, rawNote, runLabels, tokenLabel } from '../lib/tokens.js';
import { tokenSpan, maskPatch, unmaskPatch, parseWas, formatWas, wasPairs } from '../lib/predict_was.js';

const K = 5;
const MAX_ASKED = 64;

/** mask= value: "3,5" -> [3, 5] (sorted, unique), '' -> []. */
export function parsePositions(raw) {
  if (raw === '' || raw === undefined || raw === null) return [];
  if (!/^\d{1,4}(,\d{1,4}){0,63}$/.test(String(raw))) return null;
  return [...new Set(String(raw).split(',').map(Number))].sort((a, b) => a - b);
}

/** The text edit that masks token i of a run: {text} or {text_b} with the
 *  token's characters (not a space before it) replaced by the mask token,
 *  or null (a special token, no offsets); lib/predict_was.js. */
export function maskEdit(run, s, i, maskToken) {
  const sp = maskToken ? tokenSpan(run, s, i) : null;
  return sp ? { [sp.key]: sp.text.slice(0, sp.from) + maskToken + sp.text.slice(sp.to) } : null;
}

const pct = (p) => (p >= 0.001 ? `${(100 * p).toFixed(1)} %` : p > 0 ? '< 0.1 %' : '0 %');
const shown = (t) => (t === null || t === undefined ? '(no token: padded row)' : t);

export const NO_HEAD_LINE = 'This model has no masked-language-model head, so it cannot predict words (all-MiniLM-L6-v2, the default, was trained for sentence embeddings and shipped without one). To see predictions, load a model that has its head: convert a checkpoint folder that includes it — for example a BertForMaskedLM such as bert-base-uncased — with “Convert a model folder…” or `bertlens convert`, or load one from the Hugging Face Hub.';

/** The sentence shown when no position has predictions: the text has no
 *  words yet (empty, only spaces), or none is masked. */
export function emptyLine(run, maskToken) {
  const mask = maskToken || 'the mask token';
  return run.wordIds && emptySentence({ wordIds: run.wordIds, shown: run.tokens.length, hide: false }) !== null
    ? `The text has no words yet (it is empty or only spaces), so there is nothing to predict. Type a sentence with ${mask} where the model should guess, for example “The capital of France is ${mask}.”`
    : `No masked token yet: type ${mask} in the text, or click a word to mask it.`;
}

export const SNAPSHOT_LINE = 'This view is a snapshot: its predictions were stored with it and the model is not loaded, so clicking a word to mask it (which runs the model) is switched off here. Open it in bertlens, or load the model, to mask words.';

export function predictionsView() {
  let theme = THEMES.light;
  let onMask = () => {};
  let onAsk = () => {};
  let onUnmask = () => {};
  let exported = exportContext();

  function view(root, data) {
    tooltip.hide();
    root.selectAll('div.view-title').data([null]).join('div').attr('class', 'view-title').text(data.title);
    infoLine(root);
    // the stage: Export SVG/PNG redraw its HTML (page/export.js)
    const body = root.selectAll('div.pv-body').data([null]).join('div').attr('class', 'pv-body stage')
      .style('color', theme.fg).style('max-width', '100%');
    body.selectAll('*').remove();
    if (!data.hasHead) {
      body.append('p').attr('class', 'pv-nohead').text(NO_HEAD_LINE);
      exported = exportContext({ notes: [NO_HEAD_LINE] });
      return;
    }
    const strip = body.append('div').attr('class', 'pv-tokens').attr('role', 'group')
      .attr('aria-label', 'Tokens: activate one to mask it and see what the model predicts there');
    data.tokens.forEach((raw, i) => {
      const t = data.labels[i];
      const cell = strip.append('span').attr('class', 'pv-tok');
      const masked = data.maskToken !== null && raw === data.maskToken;
      const was = masked ? data.was.get(i) : null; // a word this page masked: a click puts it back
      const b = cell.append('button').attr('type', 'button').attr('class', masked ? 'pv-mask' : 'pv-word').text(t)
        .attr('aria-label', was ? `${t}, position ${i}: masked “${was.word}”; put it back` : masked ? `${t}, position ${i}: masked` : `Mask “${t}” (position ${i})`)
        .attr('title', was ? `was “${was.word}”: click to put it back` : rawNote(raw, t) || null)
        .attr('disabled', (masked && !was) || !data.maskable[i] || data.snapshot ? true : null);
      b.on('click', () => (was ? onUnmask(i) : onMask(i)));
      if (!masked) {
        cell.append('button').attr('type', 'button').attr('class', 'pv-ask')
          .attr('aria-pressed', data.asked.has(i) ? 'true' : 'false')
          .attr('aria-label', `Show what the model predicts at “${t}” without masking it`)
          .attr('title', 'predictions here, unmasked').text('?')
          .attr('disabled', data.snapshot ? true : null)
          .on('click', () => onAsk(i));
      }
    });
    if (data.snapshot) body.insert('p', 'div.pv-tokens').attr('class', 'pv-snapshot').text(SNAPSHOT_LINE);
    if (!data.preds.length) body.append('p').attr('class', 'pv-empty').text(data.empty);
    const list = body.append('div').attr('class', 'pv-list');
    for (const p of data.preds) {
      const card = list.append('section').attr('class', 'pv-card').attr('data-index', p.index);
      const masked = p.token === data.maskToken;
      const token = p.token === null || p.token === undefined ? p.token : data.label(p.token);
      const was = masked && p.was ? data.was.get(p.index) : null; // what this page masked there
      card.append('h3').attr('class', 'pv-head')
        .text(masked ? `Position ${p.index}: ${shown(token)} — the model's guesses` : `Position ${p.index}: “${shown(token)}” — what the model expects here`);
      const ol = card.append('ol').attr('class', 'pv-top');
      const max = Math.max(...p.top.map((e) => e.prob), 1e-9);
      for (const e of p.top) {
        const li = ol.append('li').attr('class', 'pv-row');
        const label = e.token === null || e.token === undefined ? e.token : data.label(e.token);
        li.append('span').attr('class', 'pv-word-label').text(shown(label)).attr('title', (label && rawNote(e.token, label)) || null);
        const bar = li.append('span').attr('class', 'pv-bar').attr('aria-hidden', 'true');
        bar.append('span').attr('class', 'pv-fill').style('width', `${(100 * e.prob / max).toFixed(1)}%`)
          .style('background', theme.accent);
        li.append('span').attr('class', 'pv-prob').text(pct(e.prob));
      }
      // At a word masked here, the rank of that word (the model no longer sees it), not of the mask token.
      const whose = p.was ? `The masked-out word “${shown(data.label(p.was.token))}”` : masked ? 'The mask token itself' : `The actual token “${shown(token)}”`;
      card.append('p').attr('class', 'pv-actual').attr('data-rank', p.token_rank)
        .text(`${whose}: probability ${pct(p.token_prob)}, rank ${p.token_rank}.`);
      if (was && !data.snapshot) {
        card.append('button').attr('type', 'button').attr('class', 'pv-unmask')
          .text(`Unmask: put “${was.word}” back`).on('click', () => onUnmask(p.index));
      }
    }
    root.selectAll('p.view-notes').data([null]).join('p').attr('class', 'view-notes').text(data.notes.join(' '));
    root.selectAll('p.view-hint').data([null]).join('p').attr('class', 'view-hint')
      .text(data.snapshot ? '' : 'Click, tap or press Enter on a word to replace it with the mask token (on the masked word again, or “Unmask”, to put it back); “?” shows the predictions at a word without masking it.');
    exported = exportContext({ notes: data.snapshot ? [...data.notes, SNAPSHOT_LINE] : data.notes });
  }

  view.theme = (t) => { theme = t || THEMES.light; return view; };
  view.size = () => view;
  view.onMask = (f) => { onMask = f; return view; };
  view.onAsk = (f) => { onAsk = f; return view; };
  view.onUnmask = (f) => { onUnmask = f; return view; };
  view.exportContext = () => exported;
  return view;
}

/** The registry entry (views/index.js). */
export const descriptor = {
  id: 'predict',
  label: 'Predictions',
  size: ({ K: n }) => ({ width: 560, height: Math.min(900, 260 + 30 * n) }),
  controls: { layer: false, head: false, mean: false, words: false, mode: false },
  snapshot: { layers: 'none', predict: true }, // the words shown, no attention (lib/snapshot_predict.js)
  axis: false,
  params: [
    // (perText: a selection on the text it was made on; a new text drops it, page/toolbar.js)
    { key: 'mask', def: '', perText: true, parse: (raw) => { const p = parsePositions(raw); return p === null ? null : p.join(','); }, expect: `token positions, e.g. 3,5 (at most ${MAX_ASKED})`,
      within: (v, { T }) => ((parsePositions(v) || []).some((i) => i >= T) ? `mask ${v.slice(0, 40)} names tokens past its ${T}` : null) },
    // the words a click masked (lib/predict_was.js): their rank, and Unmask
    { key: 'was', def: '', perText: true, parse: (raw) => { const w = parseWas(raw); return w === null ? null : formatWas(w); }, expect: 'position:id:word entries, e.g. 3:1015:of',
      within: (v, { T }) => ((parseWas(v) || []).some((e) => e.at >= T) ? `was names tokens past its ${T}` : null) },
  ],
  needs: (s) => ({ predict: { positions: parsePositions(s.mask) || [], masked: true, k: K, was: wasPairs(s.was) } }),
  shown: (run, s) => shownPredictions(run, s),
  create(ctx) {
    let last = null; // the run and state drawn last (for the click handlers)
    const chart = predictionsView()
      .onMask((i) => {
        if (!last) return;
        const ids = last.run.predict && last.run.predict.ids; // the token's id: its rank once masked
        const edit = maskPatch(last.run, last.s, i, last.maskToken, ids ? ids[i] : null);
        if (edit) ctx.update(edit);
      })
      .onUnmask((i) => {
        if (!last) return;
        const edit = unmaskPatch(last.run, last.s, i);
        if (edit) ctx.update(edit);
      })
      .onAsk((i) => {
        if (!last) return;
        const set = new Set(parsePositions(last.s.mask) || []);
        if (set.has(i)) set.delete(i); else set.add(i);
        ctx.update({ mask: [...set].sort((a, b) => a - b).join(',') });
      });
    const draw = (root, data) => {
      last = data._ctx;
      return chart(root, data);
    };
    draw.theme = (t) => { chart.theme(t); return draw; };
    draw.size = (b) => { chart.size(b); return draw; };
    draw.exportContext = () => chart.exportContext();
    return draw;
  },
  prepare(run, s) {
    const pr = run.predict || { hasHead: false, positions: [], maskToken: null };
    const asked = new Set(parsePositions(s.mask) || []);
    const maskable = run.tokens.map((t, i) => !!(run.offsets && run.offsets[i] && run.offsets[i][1] > run.offsets[i][0]));
    const style = piecesOf(run);
    return {
      hasHead: pr.hasHead, tokens: run.tokens, labels: runLabels(run), label: (piece) => tokenLabel(piece, style, piece === pr.maskToken), maskToken: pr.maskToken, preds: pr.positions || [], asked, maskable, snapshot: !!run.snapshot,
      was: new Map((parseWas(s.was) || []).filter((e) => run.tokens[e.at] === pr.maskToken).map((e) => [e.at, e])),
      empty: emptyLine(run, pr.maskToken),
      title: pr.hasHead ? `Predictions — what the model's masked-LM head expects (top ${pr.k || K})` : 'Predictions — this model has no masked-LM head',
      notes: pr.hasHead ? ['Probabilities are the softmax of the head\'s logits over the whole vocabulary, computed in the page by the same C engine as the attention.'] : [],
      _ctx: { run, s, maskToken: pr.maskToken },
    };
  },
};

/** Export (CSV/JSON): one block per position with predictions, its top
 *  words (rank, probability) and last the actual token's. */
export function shownPredictions(run, s) {
  const pr = run.predict;
  if (!pr || !pr.hasHead) throw new Error('this model has no masked-language-model head, so there are no predictions to export');
  const positions = pr.positions || [];
  if (!positions.length) throw new Error(`no position has predictions yet: type ${pr.maskToken || 'the mask token'} in the text, or click a word to mask it`);
  return {
    view: 'predict', mode: 'attn', what: 'masked-LM predictions', hide: false, renorm: false, words: false, ablate: s.ablate || '',
    text: s.text, text_b: s.text_b || '', tokens: run.tokens.slice(),
    blocks: positions.map((p) => ({
      name: `position ${p.index} ${shown(p.token)}: top ${p.top.length} predictions`,
      rows: [...p.top.map((e) => shown(e.token)), p.was ? `masked-out word: ${shown(p.was.token)}` : `actual: ${shown(p.token)}`],
      cols: ['rank', 'probability'],
      values: [...p.top.flatMap((e, r) => [r + 1, e.prob]), p.token_rank, p.token_prob],
      extra: { position: p.index, token: p.token, ...(p.was ? { was: { id: p.was.id, token: p.was.token } } : {}), token_rank: p.token_rank, token_prob: p.token_prob, top: p.top.map((e) => ({ id: e.id, token: e.token, prob: e.prob })) },
    })),
  };
}
