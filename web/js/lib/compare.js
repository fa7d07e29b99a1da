// compare.js — comparing two runs of the model head by head (plain module,
// no DOM; tests/web/compare.test.mjs). One mechanism for three questions:
//
//   ablate  the same input with heads switched off (A: all heads, B: the
//           ablated model)
//   text    a minimal pair: a second text (A: the page's text, B: the other)
//   model   a second model of the same shape (A: the page's model, B: the
//           other), e.g. the default against the f16 "exact" bundle
//
// The page's views always draw the page's own run: its text, its model and
// its switched-off heads. With ablate the comparison run is the same input
// with every head on; otherwise the switched-off heads apply to both runs.
//
// URL state (state.js, through the compare view's params):
//   ablate=3:5,4:*      heads switched off, 0-based layer:head, layer:* for a
//                       whole layer (canonical: sorted, whole layers as L:*)
//   cmp=ablate|text|model   what B is (default ablate)
//   cmp_text=…&cmp_text_b=… the minimal pair's other text (and its pair part)
//   cmp_model=<id>      the other model (an id of models/index.json)
//
// Alignment: the two runs' attention is compared cell by cell, so A and B
// must have the same units: identical token positions when the token counts
// match, else words (data.js word merging, Clark et al.'s rule) when the word
// counts match; otherwise no per-head difference is possible (the embedding
// comparison still is). The distances themselves are computed in C
// (src/analysis/analyze.c bl_head_compare, via the worker's 'compare' message).

import { tokenAxis, headMatrix } from './data.js';

export const CMP_KINDS = ['ablate', 'text', 'model'];

const ITEM = /^(\d{1,3}):(\d{1,3}|\*)$/;

/** Parse an ablate= value into its canonical text ('' = none), or null when
 *  it is not a list of layer:head / layer:* items. Ranges are checked by
 *  fitAblate once the model is known. */
export function parseAblate(raw) {
  if (raw === '' || raw === 'none') return '';
  const parts = raw.split(',');
  if (parts.length > 4096) return null;
  const items = [];
  for (const p of parts) {
    const m = ITEM.exec(p.trim());
    if (!m) return null;
    items.push([Number(m[1]), m[2] === '*' ? -1 : Number(m[2])]);
  }
  return canonical(items);
}

/** Items [layer, head | -1 (whole layer)] as sorted text, whole layers
 *  swallowing their single heads. */
function canonical(items) {
  const whole = new Set(items.filter(([, h]) => h < 0).map(([l]) => l));
  const seen = new Map();
  for (const [l, h] of items) {
    if (whole.has(l)) { seen.set(`${l}:*`, [l, -1]); continue; }
    seen.set(`${l}:${h}`, [l, h]);
  }
  return [...seen.values()].sort((a, b) => a[0] - b[0] || a[1] - b[1])
    .map(([l, h]) => `${l}:${h < 0 ? '*' : h}`).join(',');
}

/** The heads an ablate text switches off, for a model of L layers × H heads:
 *  {heads: [[l, h], ...], text (canonical, out-of-range items dropped),
 *  notices}. */
export function fitAblate(text, L, H) {
  const heads = [];
  const bad = [];
  if (text) {
    for (const item of text.split(',')) {
      const [ls, hs] = item.split(':');
      const l = Number(ls);
      const h = hs === '*' ? -1 : Number(hs);
      if (l >= L || h >= H) { bad.push(item); continue; }
      if (h < 0) for (let k = 0; k < H; k++) heads.push([l, k]);
      else heads.push([l, h]);
    }
  }
  const notices = bad.length
    ? [`Ignored ${bad.join(', ')} in ablate= (this model has layers 0–${L - 1} and heads 0–${H - 1}).`] : [];
  return { heads, text: formatMask(heads, L, H), notices };
}

/** Canonical ablate text of a list of heads. */
export function formatMask(heads, L, H) {
  const byLayer = new Map();
  for (const [l, h] of heads) {
    if (!byLayer.has(l)) byLayer.set(l, new Set());
    byLayer.get(l).add(h);
  }
  const items = [];
  for (const [l, hs] of byLayer) {
    if (hs.size >= H) items.push([l, -1]);
    else for (const h of hs) items.push([l, h]);
  }
  return canonical(items);
}

/** Switch one head on or off; whole layer; all but one head. */
export function toggleHead(text, l, h, L, H) {
  const { heads } = fitAblate(text, L, H);
  const k = heads.findIndex(([a, b]) => a === l && b === h);
  if (k >= 0) heads.splice(k, 1); else heads.push([l, h]);
  return formatMask(heads, L, H);
}

/** The mask with head (l, h) switched off (unchanged when it already is). */
export function withHeadOff(text, l, h, L, H) {
  const { heads } = fitAblate(text, L, H);
  if (!heads.some(([a, b]) => a === l && b === h)) heads.push([l, h]);
  return formatMask(heads, L, H);
}

export function toggleLayer(text, l, L, H) {
  const { heads } = fitAblate(text, L, H);
  const inLayer = heads.filter(([a]) => a === l).length;
  const rest = heads.filter(([a]) => a !== l);
  if (inLayer < H) for (let h = 0; h < H; h++) rest.push([l, h]);
  return formatMask(rest, L, H);
}

export function allBut(l, h, L, H) {
  const heads = [];
  for (let a = 0; a < L; a++) for (let b = 0; b < H; b++) if (a !== l || b !== h) heads.push([a, b]);
  return formatMask(heads, L, H);
}

/** A Set of 'l/h' keys of the heads switched off. */
export function maskSet(text, L, H) {
  return new Set(fitAblate(text, L, H).heads.map(([l, h]) => `${l}/${h}`));
}

/** One line saying which heads are off ('' for none). */
export function describeMask(text, L, H) {
  const { heads } = fitAblate(text, L, H);
  if (!heads.length) return '';
  const n = heads.length;
  const on = L * H - n;
  if (on === 1) {
    const keep = [];
    for (let l = 0; l < L; l++) for (let h = 0; h < H; h++) if (!heads.some(([a, b]) => a === l && b === h)) keep.push(`${l}:${h}`);
    return `${n} of ${L * H} heads switched off: every head but ${keep[0]}`;
  }
  return `${n} of ${L * H} heads switched off (${text})`;
}

/** Is a comparison wanted in every view of state s (heads are switched off:
 *  the ablation line shows its embedding figure)? The compare view asks for
 *  one itself (its needs()). */
export function comparing(s) {
  return !!s.ablate;
}

/** What the comparison run is, for state s: {kind, text, text_b, model,
 *  masked (the partner run keeps the page's switched-off heads), key}. The
 *  page's own run is the other side. */
export function partnerOf(s) {
  const kind = CMP_KINDS.includes(s.cmp) ? s.cmp : 'ablate';
  if (kind === 'text') return { kind, text: s.cmp_text, text_b: s.cmp_text_b || '', model: s.model, masked: true };
  if (kind === 'model') return { kind, text: s.text, text_b: s.text_b || '', model: s.cmp_model, masked: true };
  return { kind, text: s.text, text_b: s.text_b || '', model: s.model, masked: false };
}

/** Which run is A and which is B: with ablate, A = all heads (the partner)
 *  and B = the page's run; otherwise A = the page's run, B = the partner. */
export function sides(kind, pageRun, partnerRun) {
  return kind === 'ablate' ? { A: partnerRun, B: pageRun } : { A: pageRun, B: partnerRun };
}

/** Align two runs for a cell-by-cell comparison: {how: 'tokens' | 'words' |
 *  null, K, labelsA, labelsB, same (labels identical), mats(run, l) ->
 *  Float32Array [H][K][K] of layer l, why (when how is null)}. */
export function alignRuns(A, B) {
  if (A.L !== B.L || A.H !== B.H) {
    return { how: null, why: `the models differ in shape (${A.L} × ${A.H} against ${B.L} × ${B.H} heads)` };
  }
  let axA;
  let axB;
  let how;
  if (A.T === B.T) {
    how = 'tokens';
    axA = tokenAxis(A);
    axB = tokenAxis(B);
  } else {
    axA = tokenAxis(A, { words: true });
    axB = tokenAxis(B, { words: true });
    if (axA.K !== axB.K) {
      return {
        how: null,
        why: `A has ${A.T} tokens and ${axA.K} words (with the specials), B has ${B.T} tokens and ${axB.K} words: a head-by-head difference needs the same number of tokens or of words`,
        counts: { tokens: [A.T, B.T], words: [axA.K, axB.K] },
      };
    }
    how = 'words';
  }
  const K = axA.K;
  const axes = new Map([[A, axA], [B, axB]]);
  const mats = (run, l) => {
    const ax = axes.get(run);
    if (how === 'tokens') return run.attn[l];
    const out = new Float32Array(run.H * K * K);
    for (let h = 0; h < run.H; h++) out.set(ax.transform(headMatrix(run.attn[l], run.H, run.T, h)), h * K * K);
    return out;
  };
  const same = axA.labels.every((t, i) => t === axB.labels[i]);
  return { how, K, labelsA: axA.labels, labelsB: axB.labels, segs: axA.segs, same, mats };
}

/** Cosine similarity of two vectors (sentence embeddings are unit length;
 *  divided by the norms anyway). */
export function cosine(u, v) {
  let d = 0; let a = 0; let b = 0;
  for (let i = 0; i < u.length; i++) { d += u[i] * v[i]; a += u[i] * u[i]; b += v[i] * v[i]; }
  return d / Math.sqrt(a * b || 1);
}

/** The embedding figures of a comparison: for one sentence, cosine(A, B);
 *  for a pair, the cosine of its two texts encoded separately (how
 *  sentence-transformers uses the model) in A and in B. */
export function embeddingFigures(A, B) {
  if (!A.embeddings || !B.embeddings) return null;
  const out = { self: cosine(A.embeddings[0], B.embeddings[0]) };
  if (A.embeddings.length === 2 && B.embeddings.length === 2) {
    out.pairA = cosine(A.embeddings[0], A.embeddings[1]);
    out.pairB = cosine(B.embeddings[0], B.embeddings[1]);
    out.selfB = cosine(A.embeddings[1], B.embeddings[1]);
  }
  return out;
}

/** Heads ranked by how much they changed: [{l, h, js, maxAbs, off}],
 *  switched-off heads (off: all-zero in B or A) last, then by JS distance. */
export function rankChanges(js, maxAbs, L, H, off = new Set()) {
  const all = [];
  for (let l = 0; l < L; l++) for (let h = 0; h < H; h++) all.push({ l, h, js: js[l * H + h], maxAbs: maxAbs[l * H + h], off: off.has(`${l}/${h}`) });
  return all.sort((a, b) => (a.off - b.off) || (b.js - a.js) || a.l - b.l || a.h - b.h);
}

/** The difference B − A of one head (or the mean of the layer's heads,
 *  head = 'mean') on aligned matrices [H][K][K]: Float32Array [K][K]. */
export function headDifference(matA, matB, H, K, head) {
  const n = K * K;
  const out = new Float32Array(n);
  const heads = head === 'mean' ? [...Array(H).keys()] : [head];
  for (const h of heads) for (let i = 0; i < n; i++) out[i] += (matB[h * n + i] - matA[h * n + i]) / heads.length;
  return out;
}

/** Below this max |Δ| (attention, 0..1) two heads are the same map: float32
 *  runs of the same computation differ by less. */
export const NO_DIFFERENCE = 1e-6;

/** The head a comparison opens on: the largest max |B − A| over the heads
 *  that are on in both runs (off: Set of 'l/h' switched off; first in
 *  layer, head order on a tie). {l, h, maxAbs, js, none} — none: true when
 *  no head on differs by more than NO_DIFFERENCE — or null when every head
 *  is off. */
export function mostChanged(js, maxAbs, L, H, off = new Set()) {
  let best = null;
  for (let l = 0; l < L; l++) {
    for (let h = 0; h < H; h++) {
      if (off.has(`${l}/${h}`)) continue;
      const m = maxAbs[l * H + h];
      if (!best || m > best.maxAbs) best = { l, h, maxAbs: m, js: js[l * H + h] };
    }
  }
  return best && { ...best, none: !(best.maxAbs > NO_DIFFERENCE) };
}

/** What a comparison calls its two runs: A is the original; B by what was
 *  changed. */
export function runNames(kind) {
  return { A: 'original', B: { ablate: 'heads off', text: 'edited text', model: 'other model' }[kind] || 'changed' };
}

/** A page's text as one line: a pair's sentences kept apart by " | ". */
export function pairText(text, textB) {
  return textB ? `${text} | ${textB}` : text;
}

/** Text cut to at most max characters with an ellipsis (whole code points). */
export function shorten(text, max = 80) {
  const cps = [...text];
  return cps.length > max ? `${cps.slice(0, max - 1).join('').trimEnd()}…` : text;
}

/** Decimals that show a number of size m (> 0) in fixed notation, with
 *  two significant digits: 0.5 -> 2, 0.004 -> 4, 1e-6 -> 7 (never e-notation). */
export function fixedDecimals(m) {
  if (!(m > 0) || !Number.isFinite(m)) return 2;
  return Math.max(2, Math.min(12, 1 - Math.floor(Math.log10(m))));
}

/** A d3-format spec for legend ticks reaching m: fixed decimals, trailing
 *  zeros dropped ('~'), so 0 is "0" and 1e-6 is "0.000001". */
export const legendFormat = (m) => `.${fixedDecimals(m)}~f`;

/** A small non-negative number in words' company: "0", else fixed
 *  notation with two significant digits below 0.001, three decimals above. */
export function formatSmall(v) {
  if (v === 0) return '0';
  if (Math.abs(v) >= 0.001) return v.toFixed(3);
  return v.toFixed(fixedDecimals(Math.abs(v)));
}
