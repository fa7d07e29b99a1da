// lines.js — the head view's lines: which (query, key) pairs of which heads
// are drawn, strongest first, within a line budget, optionally pruned to the
// links that carry a share of each row. No DOM; tests/web/span_prune.test.mjs.

import { pairAllows } from './data.js';

/** Lines for the head view: for each shown head, every (query i, key j) pair
 *  allowed by the pair filter and the focus, with weight >= minWeight.
 *  At most maxLines lines are returned (the heaviest), so long inputs stay
 *  cheap to draw. mats[h] is the K x K matrix of head h (null = hidden).
 *
 *  Capped, the lines are in decreasing weight (ties in head, query, key
 *  order), else in head, query, key order. Two passes, so that 12 heads of
 *  512 x 512 never make an object per candidate (with pruning that was
 *  ~1.5 M objects sorted): the first counts candidates per weight bin (the
 *  float's top 16 bits, which order like the values for weights >= 0), the
 *  second keeps only the bins that reach the heaviest maxLines, and only
 *  those are sorted. thresholds (optional): rowShareThresholds(mats[h], K,
 *  share) per head, when the caller keeps them. */
export function headLines(mats, K, segs, opts = {}) {
  return drain(headLinesSteps(mats, K, segs, opts));
}

/** Run a generator of steps to its end at once; returns its return value. */
export function drain(steps) {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/** headLines in steps (a generator: one step per shown head; its return
 *  value is the lines), for a view that spreads its work over several
 *  tasks (views/common.js sliced). */
export function* headLinesSteps(mats, K, segs, { filter = 'all', focus = null, minWeight = 0.01, maxLines = 20000, share = 1, thresholds = null } = {}) {
  const sel = { K, segs, filter, minWeight, rows: focusRange(focus, 'left', K), cols: focusRange(focus, 'right', K) };
  const hist = new Uint32Array(65536);
  const buf = { n: 0, pos: new Int32Array(4096), head: new Uint16Array(4096), w: new Float32Array(4096) };
  for (let h = 0; h < mats.length; h++) {
    const m = mats[h];
    if (!m) continue;
    const thr = share < 1 ? (thresholds && thresholds[h]) || rowShareThresholds(m, K, share) : null;
    scanLines(sel, m, h, thr, hist, buf);
    yield;
  }
  const { n, pos, head, w } = buf;
  const lines = [];
  let cut = 0;
  if (n > maxLines) {
    cut = 65535;
    for (let acc = hist[cut]; acc < maxLines && cut > 0;) acc += hist[--cut];
  }
  for (let c = 0; c < n; c++) {
    if (cut && binOf(w[c]) < cut) continue;
    lines.push({ head: head[c], i: Math.floor(pos[c] / K), j: pos[c] % K, w: w[c] });
  }
  if (n <= maxLines) return lines;
  lines.sort((a, b) => b.w - a.w);
  lines.length = Math.max(0, maxLines);
  return lines;
}

/** A weight's bin: its float32's top 16 bits (0 for 0, negatives, NaN). */
const binF32 = new Float32Array(1);
const binU32 = new Uint32Array(binF32.buffer);
function binOf(w) {
  if (!(w > 0)) return 0;
  binF32[0] = w;
  return binU32[0] >>> 16;
}

/** headLines' pass over one head h (matrix m, pruning thresholds thr or
 *  null), in query, key order: its candidates appended to buf (head,
 *  i * K + j, weight; the arrays grow by doubling), their count per weight
 *  bin added to hist. */
function scanLines({ K, segs, filter, minWeight, rows, cols }, m, h, thr, hist, buf) {
  let { n, pos, head, w: ws } = buf;
  for (let i = rows[0]; i < rows[1]; i++) {
    const t = thr ? thr[i] : minWeight;
    const o = i * K;
    for (let j = cols[0]; j < cols[1]; j++) {
      const w = m[o + j];
      if (thr ? (w < t || w <= 0) : w < t) continue;
      if (filter !== 'all' && !pairAllows(filter, segs[i], segs[j])) continue;
      if (n === pos.length) {
        const grow = (a) => { const b = new a.constructor(2 * a.length); b.set(a); return b; };
        pos = grow(pos);
        head = grow(head);
        ws = grow(ws);
      }
      pos[n] = o + j;
      head[n] = h;
      ws[n] = w;
      hist[binOf(w)]++;
      n++;
    }
  }
  Object.assign(buf, { n, pos, head, w: ws });
}

/** [from, to) of the rows (side 'left') or columns ('right') a focus keeps. */
function focusRange(focus, side, K) {
  if (!focus || focus.side !== side) return [0, K];
  const i = focus.index;
  return Number.isInteger(i) && i >= 0 && i < K ? [i, i + 1] : [0, 0];
}

/** For each row of a K x K matrix, the smallest value among the strongest
 *  entries that together carry at least `share` (0..1] of the row's sum:
 *  keeping every entry >= it keeps those links (ties kept too). Rows summing
 *  to 0 get Infinity (nothing kept). */
export function rowShareThresholds(mat, K, share) {
  const out = new Float32Array(K);
  const row = new Float32Array(K);
  for (let i = 0; i < K; i++) {
    let total = 0;
    for (let j = 0; j < K; j++) { row[j] = mat[i * K + j]; total += row[j]; }
    if (!(total > 0)) { out[i] = Infinity; continue; }
    row.sort();
    let acc = 0;
    let t = row[K - 1];
    for (let j = K - 1; j >= 0; j--) {
      acc += row[j];
      t = row[j];
      if (acc >= share * total * (1 - 1e-6)) break;
    }
    out[i] = t;
  }
  return out;
}
