// neuron.js — the neuron view: how one head turns one query token's vector
// into its attention row. Columns, from the real q/k vectors of the layer:
//   key k_j  |  q × k_j (element-wise)  |  q · k_j  |  q · k_j / √d  |  softmax  (| ‖α f(x)‖)
// Vectors are painted on canvases (orange < 0 < blue); numbers are SVG text.
// Export SVG writes the vector cells as <rect>s (up to SVG_MAX_CELLS per strip).
//
// Scales: q and k share one diverging colour scale, q × k has its own; both
// are symmetric around 0 and saturate at the 98th percentile of |value|
// (data.js clipRange), and the legend under the rows says where. Softmax
// bars use a fixed 0..1 scale (a weight of 0.228 is a bar 0.228 long, with
// [CLS]/[SEP] hidden or not); ‖α f(x)‖ bars scale to the largest shown.
//
// Layout (layout.js neuronLayout): side by side when the box is wide enough,
// else two stacked bands (vectors, then numbers) with their own key labels;
// in an embed the rows shrink to the frame's height.
//
// data = {labels[R], rows[R] (token index of each shown key), query, queryLabel,
//         tokens[T] (for the query picker), d, cols (data.js neuronColumns),
//         weights[R] (softmax shown, renormalized or not), norms[R] | null,
//         notes[], title}

import {
  THEMES, sizeCanvas, tooltip, fmt, clip, exportable, cellMarks, SVG_MAX_CELLS,
  infoLine, linksTable, exportContext, chromeHeight,
  colourTable, setAll,
} from './common.js';
import { neuronLayout, neuronFrame, NEURON } from './layout.js';
import { clipRange, softmaxBar, neuronColumns, headMatrix } from '../lib/data.js';

const d3 = globalThis.d3;
const NORM_COLOUR = '#8f5bd6';

// Key rows written in the redraw itself: all of them up to SYNC_ROWS, else
// those in the window (and a quarter of a window around it); the others
// ROWS_PER_FRAME a frame, from the second frame after it (the first lays out
// the rows in the window). Chromium lays out ~0.065 ms per changed SVG text
// (measured at 512 keys): 3 numbers x 512 rows were ~100 ms in one frame.
const SYNC_ROWS = 128;
const ROWS_PER_FRAME = 48;

/** The values vecs[j] (d each) of the shown rows, after `first`, in one
 *  array (for the colour scales' percentiles; reused: read it before the
 *  next call). */
let rowsScratch = new Float64Array(0);
function rowsOf(rows, vecs, d, first = []) {
  const n = first.length + rows.length * d;
  if (rowsScratch.length < n) rowsScratch = new Float64Array(n);
  const out = rowsScratch.subarray(0, n);
  out.set(first);
  rows.forEach((j, r) => out.set(vecs[j], first.length + r * d));
  return out;
}

export function neuronView() {
  let theme = THEMES.light;
  let onQuery = () => {};
  let box = { width: 1100, height: null };
  let picked = null; // key token (raw index) tapped last
  let later = null; // {frame, rest, write}: key rows still to write after the redraw

  let exported = exportContext(); // what an export adds (its last drawing)

  function view(root, data) {
    tooltip.hide();
    // Where the stage is in the window, read before anything is written.
    const stageEl = root.select('.nv-stage').node();
    const top = stageEl ? stageEl.getBoundingClientRect().top : 0;
    if (picked !== null && !data.rows.includes(picked)) picked = null;
    skeleton(root);
    root.select('.view-title').text(data.title);
    queryPicker(root, data);
    const scales = {
      qk: clipRange(rowsOf(data.rows, data.cols.keys, data.d, data.cols.q)),
      prod: clipRange(rowsOf(data.rows, data.cols.products, data.d)),
    };
    root.select('p.view-notes').text(notesOf(data, scales).join(' '));
    textAlternative(root, data);
    const g = neuronLayout({
      R: data.rows.length, d: data.d, longestLabel: d3.max(data.labels, (l) => l.length) || 4,
      width: box.width, norms: !!data.norms,
      height: box.height ? box.height - chromeHeight(root.node(), root.select('.nv-scroll').node()) : null,
    });
    const stage = root.select('.nv-stage').style('width', `${g.W}px`).style('height', `${g.H}px`)
      .attr('data-layout', g.stacked ? 'stacked' : 'wide');
    paintVectors(stage, data, g, scales);
    const svg = stage.select('svg.nv-svg');
    // Only what changed: Chromium treats a re-set attribute as a change, and
    // the font inherited by every row text would lay them all out again
    // (~70 ms at 512 keys).
    setAll(svg.node(), { width: g.W, height: g.H, 'font-family': 'system-ui, sans-serif', 'font-size': g.font });
    titles(svg, data, g);
    rows(svg, data, g, top);
    stage.node().blSettle = settle;
    legend(svg, data, g, scales);
    wireRows(root, svg, data, g);
    exported = exportContext({ notes: notesOf(data, scales) });
  }

  function skeleton(root) {
    root.classed('bl-neuronview', true);
    root.selectAll('div.view-title').data([null]).join('div').attr('class', 'view-title');
    const bar = root.selectAll('div.nv-bar').data([null]).join('div').attr('class', 'nv-bar');
    const lab = bar.selectAll('label.nv-query').data([null]).join('label').attr('class', 'nv-query');
    lab.selectAll('span').data([null]).join('span').text('Query token: ');
    lab.selectAll('select').data([null]).join('select').attr('id', 'neuron-query').attr('class', 'nv-query-select');
    bar.selectAll('button.nv-prev').data([null]).join('button').attr('class', 'nv-prev').attr('type', 'button')
      .attr('aria-label', 'previous query token').text('◀');
    bar.selectAll('button.nv-next').data([null]).join('button').attr('class', 'nv-next').attr('type', 'button')
      .attr('aria-label', 'next query token').text('▶');
    infoLine(root);
    const stage = root.selectAll('div.nv-scroll').data([null]).join('div').attr('class', 'nv-scroll')
      .selectAll('div.nv-stage').data([null]).join('div').attr('class', 'nv-stage stage');
    for (const c of ['q', 'k', 'p']) stage.selectAll(`canvas.nv-${c}`).data([null]).join('canvas').attr('class', `nv-${c}`);
    const svg = stage.selectAll('svg.nv-svg').data([null]).join('svg').attr('class', 'nv-svg');
    for (const c of ['heads', 'qrow', 'rows', 'scales', 'hit']) svg.selectAll(`g.${c}`).data([null]).join('g').attr('class', c);
    root.selectAll('p.view-notes').data([null]).join('p').attr('class', 'view-notes');
    root.selectAll('p.view-hint').data([null]).join('p').attr('class', 'view-hint')
      .text('Hover or tap a row for its numbers, a vector cell for its element.');
  }

  function queryPicker(root, data) {
    // Every token of the input (specials included); for new tokens only the
    // options that changed are rewritten (512 of them at the longest).
    const select = root.select('select.nv-query-select');
    if (select.node().blTokens !== data.tokens) {
      select.selectAll('option').data(data.tokens).join('option')
        .each(function (t, i) { setAll(this, { value: i, '#text': `${i}: ${t}` }); });
      select.node().blTokens = data.tokens;
    }
    select.property('value', String(data.query)).on('change', (ev) => onQuery(Number(ev.target.value)));
    root.select('button.nv-prev').property('disabled', data.query <= 0).on('click', () => onQuery(data.query - 1));
    root.select('button.nv-next').property('disabled', data.query >= data.tokens.length - 1).on('click', () => onQuery(data.query + 1));
  }

  const vecColour = (v, m) => theme.div(Math.max(-1, Math.min(1, v / m)) * 0.5 + 0.5);

  /** R rows of d values (vecs[rows[r]]) onto a canvas, one cw x (rowH -
   *  gapY) cell each: the values become one pixel each of a d x R image
   *  (256 colours of the diverging scale, saturating at ±m), drawn row by
   *  row scaled up without smoothing. At 512 keys that is 2 x 16,384 cells
   *  per redraw: as rectangles they took tens of ms, and as long again for
   *  Chromium to rasterise them. */
  function paintStrip(canvas, rows, vecs, d, m, g, gapY) {
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

  function paintVectors(stage, data, g, scales) {
    const { rows: keys, cols, d } = data;
    const R = keys.length;
    const { cw, rowH, stripW } = g;
    const amax = scales.qk.limit;
    const pmax = scales.prod.limit;
    const qH = Math.max(6, Math.min(14, rowH));
    const qc = sizeCanvas(stage.select('canvas.nv-q').style('left', `${g.x.k}px`).style('top', '22px').node(), stripW, qH);
    qc.clearRect(0, 0, stripW, qH);
    cols.q.forEach((v, c) => { qc.fillStyle = vecColour(v, amax); qc.fillRect(c * cw, 0, cw, qH - 1); });
    const gapY = rowH > 4 ? 1 : 0;
    paintStrip(stage.select('canvas.nv-k').style('left', `${g.x.k}px`).style('top', `${g.y.rows}px`).node(), keys, cols.keys, d, amax, g, gapY);
    paintStrip(stage.select('canvas.nv-p').style('left', `${g.x.p}px`).style('top', `${g.y.rows}px`).node(), keys, cols.products, d, pmax, g, gapY);
    const strip = (name, nRows, h, value, m) => () => {
      if (nRows * d > SVG_MAX_CELLS) {
        return { node: null, note: `Neuron-view ${name} strip (${nRows} × ${d} cells) is an embedded PNG image: too many cells for vector export.` };
      }
      return {
        node: cellMarks(`nv-${name}`, (put) => {
          for (let r = 0; r < nRows; r++) for (let c = 0; c < d; c++) put(c * cw, r * h, cw, h - gapY, vecColour(value(r, c), m));
        }),
        note: `Neuron-view ${name} strip: ${nRows * d} vector rectangles.`,
      };
    };
    exportable(stage.select('canvas.nv-q').node(), strip('query', 1, qH, (r, c) => cols.q[c], amax));
    exportable(stage.select('canvas.nv-k').node(), strip('key', R, rowH, (r, c) => cols.keys[keys[r]][c], amax));
    exportable(stage.select('canvas.nv-p').node(), strip('product', R, rowH, (r, c) => cols.products[keys[r]][c], pmax));
  }

  function titles(svg, data, g) {
    const qH = Math.max(6, Math.min(14, g.rowH));
    svg.select('g.qrow').selectAll('text').data([
      { t: 'query q', x: g.x.k, y: 12, a: 'start', w: 600 },
      { t: clip(data.queryLabel, g.chars), x: g.labelW, y: 22 + qH / 2, a: 'end', w: 700 },
    ]).join('text').attr('x', (t) => t.x).attr('y', (t) => t.y).attr('dy', '0.35em').attr('font-size', 11)
      .attr('text-anchor', (t) => t.a).attr('font-weight', (t) => t.w).attr('fill', theme.fg).text((t) => t.t);
    const vecY = g.y.rows - 8;
    const numY = g.y.numbers - 8;
    const heads = [
      { t: 'key k', x: g.x.k, y: vecY },
      { t: g.compact ? 'q × k' : 'q × k (element-wise)', x: g.x.p, y: vecY },
      ...(g.compact ? [] : [{ t: 'q · k', x: g.x.dot, y: numY }, { t: `q·k / √${data.d}`, x: g.x.scaled, y: numY }]),
      { t: 'softmax', x: g.x.soft, y: numY },
    ];
    if (data.norms) heads.push({ t: '‖α f(x)‖', x: g.x.norm, y: numY });
    svg.select('g.heads').selectAll('text').data(heads).join('text').attr('class', 'col-title')
      .attr('x', (t) => t.x).attr('y', (t) => t.y).attr('font-size', 11).attr('font-weight', 600)
      .attr('fill', theme.fg).text((t) => t.t);
  }

  /** The key rows (SVG: label, q · k, q·k/√d, softmax bar and value, ‖α f(x)‖):
   *  one group per key, kept while the key is shown, its attributes
   *  written only where they changed (setAll). A head or layer switch at
   *  512 keys then rewrites the numbers and bars, not 3,000 elements. */
  function rows(svg, data, g, top) {
    const { rowH } = g;
    const full = g.softW - 6;
    const nmax = data.norms ? d3.max(data.norms) || 1 : 1;
    const normBar = Math.max(20, Math.min(64, g.normW - 44));
    const barY = rowH > 6 ? 2 : 0;
    const barH = Math.max(1, rowH - (rowH > 6 ? 4 : 1));
    const numX = { dot: g.x.dot + NEURON.num - 8, scaled: g.x.scaled + NEURON.num - 8 };
    const nodes = svg.select('g.rows').selectAll('g.nv-row').data(data.rows, (j) => j)
      .join((enter) => {
        const e = enter.append('g').attr('class', 'nv-row');
        e.append('text').attr('class', 'key-label').attr('dy', '0.35em').attr('text-anchor', 'end');
        for (const c of ['dot', 'scaled']) e.append('text').attr('class', c).attr('dy', '0.35em').attr('text-anchor', 'end');
        e.append('rect').attr('class', 'soft-bar').attr('rx', 2);
        e.append('text').attr('class', 'soft').attr('dy', '0.35em');
        return e;
      })
      .nodes();
    const write = (r) => {
      const row = nodes[r];
      const j = data.rows[r];
      const [label, dot, scaled, bar, soft] = row.children;
      const yv = g.y.rows + r * rowH + rowH / 2;
      const yn = g.y.numbers + r * rowH + rowH / 2;
      const labelText = r % g.step === 0 ? clip(data.labels[r], g.chars) : '';
      const weight = j === data.query ? 700 : 400;
      setAll(row, { 'data-key': j });
      setAll(label, { x: g.labelW, y: yv, fill: theme.fg, 'font-weight': weight, '#text': labelText });
      setAll(dot, { x: numX.dot, y: yn, fill: theme.fg, '#text': g.numbers ? data.cols.dots[j].toFixed(2) : '' });
      setAll(scaled, { x: numX.scaled, y: yn, fill: theme.fg, '#text': g.numbers ? data.cols.scaled[j].toFixed(2) : '' });
      setAll(bar, {
        x: g.x.soft, y: yn - rowH / 2 + barY, height: barH,
        width: Math.max(0.5, softmaxBar(data.weights[r], full)), fill: theme.accent,
      });
      setAll(soft, { x: g.x.soft + full + 4, y: yn, fill: theme.fg, '#text': g.numbers ? fmt(data.weights[r]) : '' });
      // Stacked layout: the numbers band has its own key labels.
      const label2 = optional(row, 'text', 'key-label2', g.stacked);
      if (label2) setAll(label2, { x: g.labelW, y: yn, dy: '0.35em', 'text-anchor': 'end', fill: theme.fg, 'font-weight': weight, '#text': labelText });
      const norm = data.norms ? data.norms[r] : null;
      const nb = optional(row, 'rect', 'norm-bar', norm !== null);
      const nt = optional(row, 'text', 'norm', norm !== null);
      if (nb) setAll(nb, { x: g.x.norm, y: yn - rowH / 2 + barY, height: barH, rx: 2, width: Math.max(0.5, (normBar * norm) / nmax), fill: NORM_COLOUR });
      if (nt) setAll(nt, { x: g.x.norm + normBar + 4, y: yn, dy: '0.35em', fill: theme.fg, '#text': g.numbers ? fmt(norm) : '' });
    };
    // The rows in the window now, in either band; the others in later
    // frames, the nearest below first.
    if (later) cancelAnimationFrame(later.frame);
    later = null;
    const R = nodes.length;
    const now = new Uint8Array(R);
    if (R <= SYNC_ROWS) now.fill(1);
    else {
      const h = globalThis.innerHeight || 800;
      for (const y0 of g.stacked ? [g.y.rows, g.y.numbers] : [g.y.rows]) {
        const from = Math.max(0, Math.floor((-h / 4 - top - y0) / rowH));
        const to = Math.min(R, Math.ceil((1.25 * h - top - y0) / rowH));
        now.fill(1, Math.min(from, R), Math.max(from, to));
      }
    }
    const rest = [];
    let first = now.indexOf(1);
    if (first < 0) first = 0;
    for (let r = 0; r < R; r++) if (now[r]) write(r);
    for (let r = first; r < R; r++) if (!now[r]) rest.push(r);
    for (let r = 0; r < first; r++) rest.push(r);
    if (rest.length) {
      later = { rest, write, frame: 0 };
      const step = () => {
        const batch = later.rest.splice(0, ROWS_PER_FRAME);
        batch.forEach(later.write);
        if (later.rest.length) later.frame = requestAnimationFrame(step);
        else later = null;
      };
      later.frame = requestAnimationFrame(() => { if (later) later.frame = requestAnimationFrame(step); });
    }
  }

  /** Write every key row still waiting for a frame (before an export). */
  function settle() {
    if (!later) return;
    cancelAnimationFrame(later.frame);
    later.rest.forEach(later.write);
    later = null;
  }

  /** A row's child of class cls, made when `want` and missing, removed when
   *  not wanted (null then). */
  function optional(row, tag, cls, want) {
    const made = row.blOptional || (row.blOptional = {});
    let el = made[cls] || null;
    if (want && !el) {
      el = made[cls] = document.createElementNS('http://www.w3.org/2000/svg', tag);
      el.setAttribute('class', cls);
      row.appendChild(el);
    } else if (!want && el) {
      el.remove();
      el = made[cls] = null;
    }
    return el;
  }

  /** Colour scales with their ranges, and the softmax bar's fixed 0..1 axis. */
  function legend(svg, data, g, scales) {
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

  function describeRow(data, rd) {
    const parts = [`${data.queryLabel} → ${rd.label}`, `q·k = ${rd.dot.toFixed(3)}`, `q·k/√${data.d} = ${rd.scaled.toFixed(3)}`, `softmax = ${rd.w.toFixed(3)}`];
    if (rd.norm !== null && rd.norm !== undefined) parts.push(`‖α f(x)‖ = ${rd.norm.toFixed(3)}`);
    return parts;
  }

  function wireRows(root, svg, data, g) {
    const info = infoLine(root);
    const R = data.rows.length;
    const rowOf = (r) => ({
      r, j: data.rows[r], label: data.labels[r], dot: data.cols.dots[data.rows[r]], scaled: data.cols.scaled[data.rows[r]],
      w: data.weights[r], norm: data.norms ? data.norms[r] : null,
    });
    const at = (ev) => {
      const [px, py] = d3.pointer(ev, svg.node());
      let band = 'rows';
      let r = Math.floor((py - g.y.rows) / g.rowH);
      if (g.stacked && py >= g.y.numbers) { band = 'numbers'; r = Math.floor((py - g.y.numbers) / g.rowH); }
      return r >= 0 && r < R ? { r, px, band } : null;
    };
    const linesFor = (hit) => {
      const rd = rowOf(hit.r);
      const lines = describeRow(data, rd);
      if (hit.band === 'rows') {
        for (const [name, x0, arr] of [['k', g.x.k, data.cols.keys[rd.j]], ['q×k', g.x.p, data.cols.products[rd.j]]]) {
          const c = Math.floor((hit.px - x0) / g.cw);
          if (c >= 0 && c < data.d) lines.push(`${name}[${c}] = ${arr[c].toFixed(4)}  (q[${c}] = ${data.cols.q[c].toFixed(4)})`);
        }
      }
      return lines;
    };
    if (picked !== null) {
      const r = data.rows.indexOf(picked);
      info.set(describeRow(data, rowOf(r)).join(' · '));
    } else info.set(`Query ${data.query} (${data.queryLabel}): tap or hover a key row for its numbers.`);
    const bottom = g.stacked ? g.y.numbers + R * g.rowH : g.y.rows + R * g.rowH;
    svg.select('g.hit').selectAll('rect').data([null]).join('rect')
      .attr('x', 0).attr('y', g.y.rows).attr('width', g.W).attr('height', bottom - g.y.rows).attr('fill', 'transparent')
      .on('pointermove', (ev) => {
        if (ev.pointerType !== 'mouse') return;
        const hit = at(ev);
        if (hit) tooltip.show(ev, linesFor(hit));
      })
      .on('pointerleave', () => tooltip.hide())
      .on('click', (ev) => {
        const hit = at(ev);
        if (!hit) return;
        picked = data.rows[hit.r];
        info.set(describeRow(data, rowOf(hit.r)).join(' · '));
        tooltip.show(ev, linesFor(hit));
      });
  }

  function notesOf(data, scales) {
    const pct = (x) => `${(100 * x).toFixed(1)}%`;
    return [
      ...(data.notes || []),
      `Vectors have d = ${data.d} elements, one cell each (orange < 0 < blue).`,
      `q and k colours saturate at ±${scales.qk.limit.toFixed(2)}, the 98th percentile of |q|, |k| (${pct(scales.qk.clipped)} of elements beyond; largest ${scales.qk.max.toFixed(2)}).`,
      `q × k colours saturate at ±${scales.prod.limit.toFixed(2)}, the 98th percentile of |q × k| (${pct(scales.prod.clipped)} beyond; largest ${scales.prod.max.toFixed(2)}).`,
      'Softmax bars use a fixed 0–1 scale.',
    ];
  }

  function textAlternative(root, data) {
    const order = data.rows.map((j, r) => r).sort((a, b) => data.weights[b] - data.weights[a]).slice(0, 10);
    linksTable(root, {
      summary: `Table: the ${order.length} keys query “${data.queryLabel}” attends to most`,
      columns: [{ key: 'k', title: 'key' }, { key: 'dot', title: 'q · k', fmt }, { key: 'scaled', title: `q·k / √${data.d}`, fmt }, { key: 'w', title: 'softmax', fmt }],
      rows: order.map((r) => ({ k: `${data.rows[r]}: ${data.labels[r]}`, dot: data.cols.dots[data.rows[r]], scaled: data.cols.scaled[data.rows[r]], w: data.weights[r] })),
    });
  }

  /** What an export adds around the stage, as last drawn (export.js). */
  view.exportContext = () => exported;
  view.theme = function (t) { if (!arguments.length) return theme; theme = t; return view; };
  view.size = function (b) { if (!arguments.length) return box; box = { width: b.width, height: b.height || null }; return view; };
  /** Kept for callers of the old API. */
  view.width = function (w) { if (!arguments.length) return box.width; box = { width: w, height: null }; return view; };
  view.onQuery = function (f) { if (!arguments.length) return onQuery; onQuery = f; return view; };
  return view;
}

/** The registry entry (views/index.js): what the page controller needs. */
export const descriptor = {
  id: 'neuron',
  label: 'Neuron view (q · k details)',
  size: ({ K }) => neuronFrame(K), // the embed frame (layout.js)
  controls: { layer: true, head: true, mean: false, words: false, mode: true },
  snapshot: true,
  query: true, // the state's query token is this view's: the controller keeps it in range
  needs: (s) => ({ norms: s.mode === 'norm', qk: true }),
  create: (ctx) => neuronView().onQuery((q) => ctx.update({ query: q })),
  /** Opening the view from another: it explains a single head. */
  enter: (s) => (s.head === 'mean'
    ? { patch: { head: 0 }, note: 'The neuron view explains a single head; showing head 0 (pick another in “Head”).' }
    : null),
  prepare(run, s, { axis }) {
    const { H, T } = run;
    if (!run.q || !run.q[s.layer] || !run.k || !run.k[s.layer]) throw new Error('query/key vectors of this layer are missing');
    const head = s.head === 'mean' ? 0 : s.head;
    const query = Math.min(s.query, T - 1);
    const cols = neuronColumns(run.q[s.layer], run.k[s.layer], H, T, run.d, head, query);
    // A snapshot's q/k are 8-bit; its stored attention row is the exact softmax.
    if (run.snapshot) cols.softmax = Array.from(headMatrix(run.attn[s.layer], H, T, head).subarray(query * T, (query + 1) * T));
    const keep = axis.members.map((m) => m[0]);
    let weights = keep.map((j) => cols.softmax[j]);
    if (s.hide && s.renorm) {
      const sum = weights.reduce((a, b) => a + b, 0) || 1;
      weights = weights.map((w) => w / sum);
    }
    let norms = null;
    if (s.mode === 'norm' && run.norms) {
      const off = (head * T + query) * T;
      norms = keep.map((j) => run.norms[s.layer][off + j]);
    }
    return {
      labels: axis.labels, rows: keep, query, queryLabel: run.tokens[query], tokens: run.tokens, d: run.d,
      cols, weights, norms,
      title: `Neuron view — layer ${s.layer}, head ${head}: how query “${run.tokens[query]}” (token ${query}) attends`,
      notes: [
        `softmax(q · k / √${run.d}) over all ${T} keys is exactly this head's attention row (q, k: this layer's query and key vectors).`,
        ...(s.hide ? [s.renorm ? '[CLS]/[SEP] rows hidden; softmax column renormalized over the rows shown.' : '[CLS]/[SEP] rows hidden; softmax column not renormalized.'] : []),
        ...(norms ? ['‖α f(x)‖: the same weight times the length of the value vector it moves (Kobayashi et al. 2020).'] : []),
      ],
    };
  },
};
