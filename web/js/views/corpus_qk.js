// corpus_qk.js — the Corpus view's joint query/key map (issue 25 item 2,
// after AttentionViz): every token of the corpus as two points, its query
// and its key vector of one head (the model's own q and k, kept by the
// corpus run: src/wasm/wasm_corpus.c), projected to 2-D together by PCA
// (lib/corpus_pca.js, deterministic), in a module worker
// (engine/pca_worker.js) so the main thread is never held; where no module
// worker can start (the one-file page, an old browser) in slices here.
// Points are drawn on a canvas; colours by query/key, position or token
// kind; hover names the token in its sentence, a click opens the input in
// the heatmap at that head with that token as the query.
//
// drawQk(box, qk, o) -> Promise; qk from engine/corpus_run.js; o = {theme,
//   width, head: {layer, head}, colorBy, onColorBy(c), onOpen(text, pos),
//   describe(text, pos) -> Promise<string>}

import { pca2Sliced } from '../lib/corpus_pca.js';
import { ASSETS } from '../engine/assets.js';
import { tooltip } from './common.js';

export const COLOR_BY = Object.freeze({ type: 'query or key', position: 'token position', kind: 'token kind' });
const KIND = [['special', '#6b7280'], ['punctuation', '#d97706'], ['word', '#2563eb'], ['subword', '#16a34a']];
const QK = [['query', '#2563eb'], ['key', '#ea580c']];

let cached = null; // {qk, map, how}: the projection of the last q/k drawn
let worker = null, workerFailed = false, nextId = 1;

/** The PCA in the worker (resolves {map, how: 'worker'}); in slices on the
 *  main thread where no module worker starts or it fails. */
const pending = new Map(); // id -> {resolve, qk}
function sliced(qk) { return pca2Sliced(qk.vectors, 2 * qk.n, qk.dh).then((map) => ({ map, how: 'sliced' })); }
function failWorker() {
  workerFailed = true;
  if (worker) worker.terminate();
  worker = null;
  for (const { resolve, qk } of pending.values()) resolve(sliced(qk));
  pending.clear();
}
function project(qk) {
  const n = 2 * qk.n, d = qk.dh;
  if (workerFailed || !ASSETS.pca || typeof Worker !== 'function') return sliced(qk);
  try {
    if (!worker) {
      worker = new Worker(ASSETS.pca, { type: 'module', name: 'bertlens-pca' });
      worker.onerror = (ev) => { ev.preventDefault?.(); failWorker(); };
      worker.onmessage = (ev) => {
        const p = pending.get(ev.data?.id);
        if (!p) return;
        pending.delete(ev.data.id);
        if (ev.data.error) { p.resolve(sliced(p.qk)); return; }
        const { xy, axes, variance, total } = ev.data;
        p.resolve({ map: { xy, axes, variance, total }, how: 'worker' });
      };
    }
  } catch { workerFailed = true; return sliced(qk); }
  const id = nextId++;
  const points = qk.vectors.slice(0, n * d); // a copy: the run keeps its own
  return new Promise((resolve) => {
    pending.set(id, { resolve, qk });
    worker.postMessage({ id, points, n, d }, [points.buffer]);
  });
}

function colorOf(by, i, side, meta, maxPos) {
  if (by === 'kind') return KIND[meta[i * 4 + 3]]?.[1] || '#999';
  if (by === 'position') return d3.interpolateViridis(Math.min(1, meta[i * 4 + 1] / Math.max(1, maxPos)));
  return QK[side][1];
}

export async function drawQk(box, qk, o) {
  box.selectAll('*').remove();
  box.append('h3').attr('class', 'cp-h').text(`Joint query/key map of layer ${o.head.layer}, head ${o.head.head}`);
  if (!qk || !qk.n) { box.append('p').text('No queries and keys were kept in this run.'); return; }
  const pick = box.append('label').attr('class', 'cp-pick');
  pick.append('span').text('Colour by ');
  pick.append('select').attr('class', 'cp-colorby').on('change', (ev) => o.onColorBy(ev.target.value))
    .selectAll('option').data(Object.keys(COLOR_BY)).join('option').attr('value', (d) => d).text((d) => COLOR_BY[d])
    .property('selected', (d) => d === o.colorBy);
  const note = box.append('p').attr('class', 'cp-note');
  const t0 = performance.now();
  if (!cached || cached.qk !== qk) cached = { qk, ...(await project(qk)) };
  const pcaMs = performance.now() - t0;
  const { xy, variance, total } = cached.map;
  const t1 = performance.now();
  const W = Math.max(260, Math.min(o.width, 640)), H = Math.round(W * 0.75), pad = 8;
  const dpr = globalThis.devicePixelRatio || 1;
  const canvas = box.append('canvas').attr('class', 'cp-qk').attr('width', W * dpr).attr('height', H * dpr)
    .style('width', `${W}px`).style('height', `${H}px`).attr('role', 'img')
    .attr('aria-label', `${qk.n} tokens as ${2 * qk.n} points (queries and keys) of layer ${o.head.layer}, head ${o.head.head}, projected by PCA`);
  let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
  for (let i = 0; i < 2 * qk.n; i++) {
    x0 = Math.min(x0, xy[2 * i]); x1 = Math.max(x1, xy[2 * i]); y0 = Math.min(y0, xy[2 * i + 1]); y1 = Math.max(y1, xy[2 * i + 1]);
  }
  const sx = (v) => pad + ((v - x0) / (x1 - x0 || 1)) * (W - 2 * pad);
  const sy = (v) => H - pad - ((v - y0) / (y1 - y0 || 1)) * (H - 2 * pad);
  const g = canvas.node().getContext('2d');
  g.scale(dpr, dpr);
  g.fillStyle = o.theme.bg;
  g.fillRect(0, 0, W, H);
  let maxPos = 0;
  for (let i = 0; i < qk.n; i++) maxPos = Math.max(maxPos, qk.meta[i * 4 + 1]);
  g.globalAlpha = 0.7;
  const by = o.colorBy;
  for (let p = 0; p < 2 * qk.n; p++) {
    const i = p >> 1, side = p & 1;
    g.fillStyle = colorOf(by, i, side, qk.meta, maxPos);
    g.fillRect(sx(xy[2 * p]) - 1.5, sy(xy[2 * p + 1]) - 1.5, 3, 3);
  }
  g.globalAlpha = 1;
  const drawMs = performance.now() - t1;
  box.attr('data-qk-points', 2 * qk.n).attr('data-qk-pca-ms', pcaMs.toFixed(0)).attr('data-qk-draw-ms', drawMs.toFixed(0))
    .attr('data-qk-pca-in', cached.how);
  const legend = box.append('div').attr('class', 'cp-legend');
  const items = by === 'kind' ? KIND : by === 'type' ? QK : [['position 0', d3.interpolateViridis(0)], [`position ${maxPos}`, d3.interpolateViridis(1)]];
  for (const [name, col] of items) {
    const it = legend.append('span').attr('class', 'cp-legend-item');
    it.append('span').attr('class', 'cp-swatch').style('background', col);
    it.append('span').text(name);
  }
  const share = total > 0 ? (100 * (variance[0] + variance[1]) / total).toFixed(0) : '0';
  note.text(`Method: PCA of the queries and keys together (${2 * qk.n} points of ${qk.dh} dimensions; the two axes hold ${share} % of their variance), computed in the page. `
    + `Vectors as the model computes them (after the bias, before the 1/√d scale).${qk.seen > qk.n ? ` The first ${qk.n} of ${qk.seen} tokens.` : ''}`);
  const nearest = (ev) => {
    const r = canvas.node().getBoundingClientRect();
    const mx = ev.clientX - r.left, my = ev.clientY - r.top;
    let best = -1, bd = 64; // within 8 px
    for (let p = 0; p < 2 * qk.n; p++) {
      const dx = sx(xy[2 * p]) - mx, dy = sy(xy[2 * p + 1]) - my, dd = dx * dx + dy * dy;
      if (dd < bd) { bd = dd; best = p; }
    }
    return best;
  };
  let hoverSeq = 0;
  canvas.on('mousemove', (ev) => {
    const p = nearest(ev);
    if (p < 0) { tooltip.hide(); return; }
    const i = p >> 1, seq = ++hoverSeq;
    const head = `${p & 1 ? 'key' : 'query'} of token ${qk.meta[i * 4 + 1]} in input ${qk.meta[i * 4]}`;
    tooltip.show(ev, [head]);
    o.describe(qk.meta[i * 4], qk.meta[i * 4 + 1]).then((line) => { if (seq === hoverSeq && line) tooltip.show(ev, [head, line]); }).catch(() => {});
  }).on('mouseleave', () => tooltip.hide())
    .on('click', (ev) => { const p = nearest(ev); if (p >= 0) o.onOpen(qk.meta[(p >> 1) * 4], qk.meta[(p >> 1) * 4 + 1]); });
}
