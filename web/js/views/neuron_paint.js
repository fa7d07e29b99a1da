// neuron_paint.js — the neuron view's vectors (neuron.js): q, the keys and
// q × k painted as canvas strips (one cell per element, orange < 0 < blue),
// what an SVG export writes for them, and the legend of their colour scales
// (and of the softmax bars' fixed 0..1 axis). rowsOf gathers the values the
// scales' percentiles are taken over.

import { sizeCanvas, exportable, cellMarks, SVG_MAX_CELLS, colourTable } from './common.js';
import { NEURON } from './layout.js';

const d3 = globalThis.d3;

/** The values vecs[j] (d each) of the shown rows, after `first`, in one
 *  array (for the colour scales' percentiles; reused: read it before the
 *  next call). */
let rowsScratch = new Float64Array(0);
export function rowsOf(rows, vecs, d, first = []) {
const n = first.length + rows.length * d;
if (rowsScratch.length < n) rowsScratch = new Float64Array(n);
const out = rowsScratch.subarray(0, n);
out.set(first);
rows.forEach((j, r) => out.set(vecs[j], first.length + r * d));
return out;
}

const vecColour = (theme, v, m) => theme.div(Math.max(-1, Math.min(1, v / m)) * 0.5 + 0.5);

/** R rows of d values (vecs[rows[r]]) onto a canvas, one cw x (rowH -
 *  gapY) cell each: the values become one pixel each of a d x R image
 *  (256 colours of the diverging scale, saturating at ±m), drawn row by
 *  row scaled up without smoothing. At 512 keys that is 2 x 16,384 cells
 *  per redraw: as rectangles they took tens of ms, and as long again for
 *  Chromium to rasterise them. */
function paintStrip(theme, canvas, rows, vecs, d, m, g, gapY) {
  const R = rows.length;
  const { cw, rowH, stripW } = g;
  const ctx = sizeCanvas(canvas, stripW, R * rowH);
  ctx.clearRect(0, 0, stripW, R * rowH);
  if (!R) return;
  const lut = colourTable(theme.div);
  const src = canvas.blSource || (canvas.blSource = document.createElement('canvas'));
  if (src.width !== d) src.width = d;
  if (src.height !== R) src.height = R;
  const sctx = src.getContext('2d');
  let img = canvas.blImage; // reused while the size stays
  if (!img || img.width !== d || img.height !== R) img = canvas.blImage = sctx.createImageData(d, R);
  const px = new Uint32Array(img.data.buffer);
  for (let r = 0, o = 0; r < R; r++) {
    const v = vecs[rows[r]];
    for (let c = 0; c < d; c++, o++) px[o] = lut[Math.round((Math.max(-1, Math.min(1, v[c] / m)) * 0.5 + 0.5) * 255)];
  }
  sctx.putImageData(img, 0, 0);
  ctx.imageSmoothingEnabled = false;
  if (!gapY) ctx.drawImage(src, 0, 0, d, R, 0, 0, stripW, R * rowH);
  else for (let r = 0; r < R; r++) ctx.drawImage(src, 0, r, d, 1, 0, r * rowH, stripW, rowH - gapY);
}

export function paintVectors(stage, data, g, scales, theme) {
  const { rows: keys, cols, d } = data;
  const R = keys.length;
  const { cw, rowH, stripW } = g;
  const amax = scales.qk.limit;
  const pmax = scales.prod.limit;
  const qH = Math.max(6, Math.min(14, rowH));
  const qc = sizeCanvas(stage.select('canvas.nv-q').style('left', `${g.x.k}px`).style('top', '22px').node(), stripW, qH);
  qc.clearRect(0, 0, stripW, qH);
  cols.q.forEach((v, c) => { qc.fillStyle = vecColour(theme, v, amax); qc.fillRect(c * cw, 0, cw, qH - 1); });
  const gapY = rowH > 4 ? 1 : 0;
  paintStrip(theme, stage.select('canvas.nv-k').style('left', `${g.x.k}px`).style('top', `${g.y.rows}px`).node(), keys, cols.keys, d, amax, g, gapY);
  paintStrip(theme, stage.select('canvas.nv-p').style('left', `${g.x.p}px`).style('top', `${g.y.rows}px`).node(), keys, cols.products, d, pmax, g, gapY);
  const strip = (name, nRows, h, value, m) => () => {
    if (nRows * d > SVG_MAX_CELLS) {
      return { node: null, note: `Neuron-view ${name} strip (${nRows} × ${d} cells) is an embedded PNG image: too many cells for vector export.` };
    }
    return {
      node: cellMarks(`nv-${name}`, (put) => {
        for (let r = 0; r < nRows; r++) for (let c = 0; c < d; c++) put(c * cw, r * h, cw, h - gapY, vecColour(theme, value(r, c), m));
      }),
      note: `Neuron-view ${name} strip: ${nRows * d} vector rectangles.`,
    };
  };
  exportable(stage.select('canvas.nv-q').node(), strip('query', 1, qH, (r, c) => cols.q[c], amax));
  exportable(stage.select('canvas.nv-k').node(), strip('key', R, rowH, (r, c) => cols.keys[keys[r]][c], amax));
  exportable(stage.select('canvas.nv-p').node(), strip('product', R, rowH, (r, c) => cols.products[keys[r]][c], pmax));
}

/** Colour scales with their ranges, and the softmax bar's fixed 0..1 axis. */
export function legend(svg, data, g, scales, theme) {
  const y0 = g.H - NEURON.legend + 24;
  const w = Math.max(70, Math.min(140, Math.floor((g.W - 16) / 3) - 14));
  const items = [
    { id: 'qk', title: `q, k (clip ±${scales.qk.limit.toFixed(2)})`, lo: -scales.qk.limit, hi: scales.qk.limit, div: true },
    { id: 'prod', title: `q × k (clip ±${scales.prod.limit.toFixed(2)})`, lo: -scales.prod.limit, hi: scales.prod.limit, div: true },
    { id: 'soft', title: 'softmax (fixed 0–1)', lo: 0, hi: 1, div: false },
  ];
  // Titles at 9 px; in a very narrow box the short form (the notes and the
  // ticks still give the clip range).
  const tw = (t) => Math.ceil(t.length * 9 * 0.6);
  const short = { qk: `q, k ±${scales.qk.limit.toFixed(2)}`, prod: `q × k ±${scales.prod.limit.toFixed(2)}`, soft: 'softmax 0–1' };
  const span = (list) => list.reduce((sum, it) => sum + Math.max(w, tw(it.title)) + 12, 0);
  if (span(items) > g.W - 4) for (const it of items) it.title = short[it.id];
  let x0 = 4;
  for (const it of items) { it.x = x0; x0 += Math.max(w, tw(it.title)) + 12; }
  const gs = svg.select('g.scales').selectAll('g.scale').data(items, (it) => it.id)
    .join((enter) => {
      const e = enter.append('g').attr('class', 'scale');
      e.append('text').attr('class', 'scale-title');
      e.append('g').attr('class', 'scale-bar');
      e.append('g').attr('class', 'scale-ticks');
      return e;
    })
    .attr('data-scale', (it) => it.id)
    .attr('transform', (it) => `translate(${it.x},${y0})`);
  gs.select('text.scale-title').attr('y', -5).attr('font-size', 9).attr('fill', theme.fg).text((it) => it.title);
  const n = 16;
  gs.select('g.scale-bar').selectAll('rect').data((it) => (it.div
    ? d3.range(n).map((i) => ({ x: (i * w) / n, w: w / n + 0.5, fill: theme.div(i / (n - 1)) }))
    : [{ x: 0, w, fill: 'none', stroke: theme.muted }]))
    .join('rect').attr('x', (r) => r.x).attr('width', (r) => r.w).attr('height', 8)
    .attr('fill', (r) => r.fill).attr('stroke', (r) => r.stroke || null);
  gs.select('g.scale-ticks').selectAll('text').data((it) => [
    { t: it.div ? `−${it.hi.toFixed(2)}` : '0', x: 0, a: 'start' },
    { t: it.div ? '0' : '0.5', x: w / 2, a: 'middle' },
    { t: it.div ? `+${it.hi.toFixed(2)}` : '1', x: w, a: 'end' },
  ]).join('text').attr('x', (t) => t.x).attr('y', 19).attr('text-anchor', (t) => t.a)
    .attr('font-size', 9).attr('fill', theme.fg).text((t) => t.t);
}
