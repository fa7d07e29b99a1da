// data.js — everything the views derive from one model run, as plain
// functions over typed arrays. Nothing here touches the DOM, so node's test
// runner checks it directly (tests/web/data.test.mjs).

import { isSpecialToken, isTypedSpecial, piecesOf, tokenLabel, tokenSegments, wordLabel } from './tokens.js';
//
// A "run" is what the worker sends back (see worker.js):
//   tokens   string[T]        the tokenizer's pieces, specials included
//   typeIds  int[T]           0 for [CLS] A [SEP], 1 for B [SEP] (the template's)
//   wordIds  int[T]           word index inside its own text, -1 for specials
//   nA       int              index of text B's first token (T: no text B)
//   pieces   string           how pieces spell words (tokens.js), 'wordpiece' if absent
//   special  int[T]           1 for the model's own special tokens (optional)
//   L, H, T, d               layers, heads, tokens, head width
//   attn     Float32Array[L]  each [H][T][T], row = query, sums to 1
//   norms    Float32Array[L]  each [H][T][T] ||alpha_ij f(x_j)|| (or null)
//   q, k     Float32Array[L]  each [H][T][d], null for a layer not kept (or null)

/** One head's T x T matrix of a layer, or the mean over heads (head = 'mean'). */
export function headMatrix(layerData, H, T, head) {
  const n = T * T;
  if (head === 'mean') return headMean(layerData, H, T);
  if (!Number.isInteger(head) || head < 0 || head >= H) throw new RangeError(`head ${head} not in 0..${H - 1}`);
  return layerData.slice(head * n, head * n + n);
}

/** Element-wise mean of the H matrices of one layer ([H][T][T] -> [T][T]). */
export function headMean(layerData, H, T) {
  const n = T * T;
  const out = new Float32Array(n);
  for (let h = 0; h < H; h++) {
    const off = h * n;
    for (let i = 0; i < n; i++) out[i] += layerData[off + i];
  }
  for (let i = 0; i < n; i++) out[i] /= H;
  return out;
}

/** 'A' or 'B' for every token: B starts after the first [SEP] (type id 1). */
export function segments(typeIds) {
  return Array.from(typeIds, (t) => (t === 1 ? 'B' : 'A'));
}

export const PAIR_FILTERS = ['all', 'aa', 'ab', 'ba', 'bb'];

/** Does a line from query segment sq to key segment sk pass the filter? */
export function pairAllows(filter, sq, sk) {
  switch (filter) {
    case 'all': return true;
    case 'aa': return sq === 'A' && sk === 'A';
    case 'ab': return sq === 'A' && sk === 'B';
    case 'ba': return sq === 'B' && sk === 'A';
    case 'bb': return sq === 'B' && sk === 'B';
    default: throw new RangeError(`unknown pair filter ${filter}`);
  }
}

/** Word groups: the tokenizer's words, as Hugging Face's word_ids() gives
 *  them (the engine's word ids): consecutive tokens of one sequence with one
 *  word id form one group; each token the template added (no word id) is a
 *  group of its own. seqs says which sequence of a pair each token is in
 *  (type ids, or tokenSegments' 'A'/'B' where the template's type ids are
 *  all 0): word ids restart in B. A special token typed in the text
 *  (<mask>) is a word of its own by its word id; an [UNK] inside a
 *  SentencePiece word stays in it, as in Hugging Face's words.
 *  Never offsets: DeBERTa-v3's and ModernBERT's include the space before a
 *  word, so every word touches the next.
 *  Labels join the pieces as the text spells them (tokens.js wordLabel); a
 *  word of one special token is shown as it is. */
export function wordGroups(tokens, seqs, wordIds, { pieces = 'wordpiece', special = null } = {}) {
  const groups = [];
  let last = null;
  for (let i = 0; i < tokens.length; i++) {
    const w = wordIds[i];
    if (w >= 0 && last && last.word === w && last.seg === seqs[i]) last.members.push(i);
    else groups.push((last = { members: [i], word: w, seg: seqs[i], special: w < 0 }));
  }
  for (const g of groups) {
    const one = g.members.length === 1 && (g.special || !!(special && special[g.members[0]]));
    g.label = one ? tokens[g.members[0]] : wordLabel(g.members.map((k) => tokens[k]), pieces);
  }
  return groups;
}

/** Merge a T x T matrix into words: a word's row is the MEAN of its tokens'
 *  rows (so attention rows still sum to 1) and a word's column is the SUM of
 *  its tokens' columns (all attention paid to any of its pieces). */
export function mergeMatrix(mat, T, groups) {
  const G = groups.length;
  const cols = new Float32Array(T * G); // [T][G] column sums
  for (let i = 0; i < T; i++) {
    for (let g = 0; g < G; g++) {
      let s = 0;
      for (const j of groups[g].members) s += mat[i * T + j];
      cols[i * G + g] = s;
    }
  }
  const out = new Float32Array(G * G);
  for (let a = 0; a < G; a++) {
    const m = groups[a].members;
    for (const i of m) for (let g = 0; g < G; g++) out[a * G + g] += cols[i * G + g];
    for (let g = 0; g < G; g++) out[a * G + g] /= m.length;
  }
  return out;
}

/** Keep only the rows and columns listed in keep. With renorm, each kept row
 *  is rescaled to sum to 1 over the kept columns (rows that sum to 0 stay 0). */
export function selectTokens(mat, T, keep, renorm) {
  const K = keep.length;
  const out = new Float32Array(K * K);
  for (let a = 0; a < K; a++) {
    const row = keep[a] * T;
    let s = 0;
    for (let b = 0; b < K; b++) {
      const v = mat[row + keep[b]];
      out[a * K + b] = v;
      s += v;
    }
    if (renorm && s > 0) for (let b = 0; b < K; b++) out[a * K + b] /= s;
  }
  return out;
}

/** The token axis a view shows after word merging and special hiding:
 *  labels, segment per unit, whether a unit is special, and a function that
 *  maps any raw T x T matrix to the shown K x K matrix. */
export function tokenAxis(run, { words = false, hideSpecials = false, renorm = true } = {}) {
  const T = run.T;
  const segs = tokenSegments(run.typeIds, run.nA);
  const pieces = piecesOf(run); // a snapshot's run does not say: guessed from its tokens
  const special = run.tokens.map((_, i) => isSpecialToken(run, i));
  const typed = run.tokens.map((_, i) => isTypedSpecial(run, i));
  let units; // [{label, members, special}]
  if (words) {
    units = wordGroups(run.tokens, segs, run.wordIds, { pieces, special: typed });
  } else {
    units = run.tokens.map((t, i) => ({ label: tokenLabel(t, pieces, special[i] || typed[i]), members: [i], special: special[i] }));
  }
  const keep = [];
  units.forEach((u, idx) => { if (!(hideSpecials && u.special)) keep.push(idx); });
  const shown = keep.map((idx) => units[idx]);
  const kept = new Set(keep);
  const identity = !words && keep.length === T;
  const transform = (mat) => {
    if (identity) return mat;
    const merged = words ? mergeMatrix(mat, T, units) : mat;
    const U = units.length;
    if (keep.length === U) return merged;
    return selectTokens(merged, U, keep, renorm);
  };
  return {
    K: shown.length,
    labels: shown.map((u) => u.label),
    segs: shown.map((u) => segs[u.members[0]]),
    special: shown.map((u) => u.special),
    members: shown.map((u) => u.members),
    raw: shown.map((u) => u.members.map((i) => run.tokens[i]).join(' ')), // the pieces, for tooltips
    hidden: [...new Set(units.filter((u, idx) => u.special && !kept.has(idx)).map((u) => u.label))], // e.g. ['<s>', '</s>']
    transform,
  };
}

/** Largest value of an array (0 for empty). */
export function maxOf(arr) {
  let m = 0;
  for (let i = 0; i < arr.length; i++) if (arr[i] > m) m = arr[i];
  return m;
}

/** Row sums of a K x K matrix. */
export function rowSums(mat, K) {
  const out = new Float64Array(K);
  for (let i = 0; i < K; i++) {
    let s = 0;
    for (let j = 0; j < K; j++) s += mat[i * K + j];
    out[i] = s;
  }
  return out;
}

/** Numerically stable softmax of a plain array. */
export function softmax(xs) {
  let m = -Infinity;
  for (const x of xs) if (x > m) m = x;
  const e = xs.map((x) => Math.exp(x - m));
  const s = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / s);
}

/** Neuron-view columns for one head and one query token, from the real
 *  q and k vectors ([H][T][d], q after its bias and before any scaling):
 *    q        the query vector                          [d]
 *    keys     every key vector                          [T][d]
 *    products q * k element-wise, one row per key       [T][d]
 *    dots     q . k                                     [T]
 *    scaled   q . k / sqrt(d)                           [T]
 *    softmax  softmax over keys of scaled               [T]  (= attention row) */
export function neuronColumns(q, k, H, T, d, head, query) {
  if (head < 0 || head >= H) throw new RangeError(`head ${head} not in 0..${H - 1}`);
  if (query < 0 || query >= T) throw new RangeError(`query ${query} not in 0..${T - 1}`);
  // Plain loops (no iterators or callbacks): at 512 keys this runs on every
  // redraw of the neuron view.
  const qv = new Array(d);
  for (let c = 0, o = (head * T + query) * d; c < d; c++) qv[c] = q[o + c];
  const keys = new Array(T);
  const products = new Array(T);
  const dots = new Array(T);
  for (let j = 0; j < T; j++) {
    const kv = new Array(d);
    const p = new Array(d);
    let dot = 0;
    for (let c = 0, o = (head * T + j) * d; c < d; c++) {
      kv[c] = k[o + c];
      p[c] = kv[c] * qv[c];
      dot += p[c];
    }
    keys[j] = kv;
    products[j] = p;
    dots[j] = dot;
  }
  const scale = Math.sqrt(d);
  const scaled = dots.map((x) => x / scale);
  return { q: qv, keys, products, dots, scale, scaled, softmax: softmax(scaled) };
}

/** A token axis with the raw tokens of `span` merged into one unit (at the
 *  place of its first unit): its row is the attention FROM the span and its
 *  column the attention TO the span, both summed over the span's units. A
 *  unit belongs to the span when any of its tokens does. Span empty or null:
 *  the axis itself. */
export function spanAxis(axis, span) {
  if (!span || !span.length) return axis;
  const want = new Set(span);
  const inSpan = axis.members.map((m) => m.some((t) => want.has(t)));
  const first = inSpan.indexOf(true);
  if (first < 0) return axis;
  const order = []; // shown units: old index, or -1 for the span
  inSpan.forEach((x, u) => { if (!x) order.push(u); else if (u === first) order.push(-1); });
  const K0 = axis.K;
  const K = order.length;
  const spanUnits = inSpan.map((x, u) => (x ? u : -1)).filter((u) => u >= 0);
  const label = `[${spanUnits.map((u) => axis.labels[u]).join(' ')}]`;
  const transform = (mat) => {
    const m = axis.transform(mat);
    const out = new Float32Array(K * K);
    const cell = (a, b) => {
      const rows = a < 0 ? spanUnits : [a];
      const cols = b < 0 ? spanUnits : [b];
      let s = 0;
      for (const i of rows) for (const j of cols) s += m[i * K0 + j];
      return s;
    };
    for (let x = 0; x < K; x++) for (let y = 0; y < K; y++) out[x * K + y] = cell(order[x], order[y]);
    return out;
  };
  return {
    K,
    labels: order.map((u) => (u < 0 ? label : axis.labels[u])),
    segs: order.map((u) => axis.segs[u < 0 ? first : u]),
    special: order.map((u) => (u < 0 ? false : axis.special[u])),
    members: order.map((u) => (u < 0 ? spanUnits.flatMap((v) => axis.members[v]) : axis.members[u])),
    spanIndex: order.indexOf(-1),
    spanLabel: label,
    transform,
  };
}

/** Max-pool a K x K matrix into an S x S grid (S <= K) or repeat it (S > K):
 *  what a thumbnail of size S pixels shows. */
export function poolMatrix(mat, K, S) {
  const out = new Float32Array(S * S);
  if (K === 0) return out;
  if (S >= K) {
    for (let y = 0; y < S; y++) {
      const i = Math.min(K - 1, Math.floor((y * K) / S));
      for (let x = 0; x < S; x++) out[y * S + x] = mat[i * K + Math.min(K - 1, Math.floor((x * K) / S))];
    }
    return out;
  }
  // Key j falls in pooled column floor(j S / K): columns are runs of keys,
  // from[x] .. from[x + 1] - 1 (one pass over the 512 x 512 matrices of a
  // long input, no division per cell).
  const from = new Int32Array(S + 1);
  for (let j = K - 1; j >= 0; j--) from[Math.floor((j * S) / K)] = j;
  from[S] = K;
  for (let i = 0; i < K; i++) {
    const o = Math.floor((i * S) / K) * S;
    const row = i * K;
    for (let x = 0; x < S; x++) {
      let m = out[o + x];
      for (let j = row + from[x], end = row + from[x + 1]; j < end; j++) if (mat[j] > m) m = mat[j];
      out[o + x] = m;
    }
  }
  return out;
}

/** Where a pair's B text starts on a shown token axis: the index of the
 *  first unit of segment B (segs from tokenAxis), or -1 without a B text.
 *  The boundary line goes just before it, so it stays in place when [SEP]
 *  is hidden (the first B token still follows A's last shown token). */
export function pairBoundary(segs) {
  return segs.indexOf('B');
}

/** The n strongest cells of a K x K matrix as {query, key, weight} (indices
 *  into the shown axis), heaviest first; what the views' text alternative
 *  lists. Ties keep reading order. */
export function strongestLinks(mat, K, n = 10) {
  // One pass keeping the n best in order (n is small; K*K may be 262,144).
  const best = [];
  let floor = -Infinity; // the n-th best so far, once there are n
  for (let p = 0; p < K * K; p++) {
    const w = mat[p];
    if (!(w > floor) && best.length === n) continue;
    let at = best.length;
    while (at > 0 && best[at - 1].weight < w) at--;
    best.splice(at, 0, { query: Math.floor(p / K), key: p % K, weight: w });
    if (best.length > n) best.pop();
    if (best.length === n) floor = best[n - 1].weight;
  }
  return best;
}

/** Length of a softmax bar on the fixed 0..1 scale (full = length of 1). */
export function softmaxBar(weight, full) {
  return Math.max(0, Math.min(1, weight)) * full;
}

let clipScratch = new Float64Array(0); // clipRange's sorted |values|, reused

/** Symmetric colour range of a diverging scale: the q-th quantile of |v|
 *  (values beyond it saturate), and what share of the values it clips.
 *  values: an array or typed array. */
export function clipRange(values, q = 0.98) {
  // |values| sorted as a typed array (numeric, no comparator): 2 ms for
  // 16,000 values where an Array with a comparator took 11-13 ms (Node 20).
  if (clipScratch.length < values.length) clipScratch = new Float64Array(values.length);
  const a = clipScratch.subarray(0, values.length);
  for (let i = 0; i < a.length; i++) a[i] = Math.abs(values[i]);
  a.sort();
  if (!a.length) return { limit: 1, clipped: 0, max: 0 };
  const pos = (a.length - 1) * q;
  const lo = Math.floor(pos);
  const limit = (a[lo] + (a[Math.min(a.length - 1, lo + 1)] - a[lo]) * (pos - lo)) || 1;
  let clipped = 0;
  for (const v of a) if (v > limit) clipped++;
  return { limit, clipped: clipped / a.length, max: a[a.length - 1] };
}
