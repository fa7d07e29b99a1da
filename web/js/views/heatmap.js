// heatmap.js — one attention matrix (one head, or the mean over heads).
// Rows are queries, columns are keys. Cells are painted on a canvas (512
// tokens = 262k cells, far too many for SVG); labels, the cursor, the pair
// boundary and the colour legend are SVG. Export SVG writes the cells as
// <rect>s up to 128 x 128 cells (common.js SVG_MAX_CELLS), as an embedded PNG
// above that.
//
// Layout (layout.js heatmapLayout): cells shrink to the box the caller gives
// (.size({width, height})); in an embed the height counts too, so the whole
// view fits its frame. When even the smallest cell is too wide (long inputs
// on a phone) the matrix scrolls inside its own box and the row labels and
// the legend stay pinned to its left edge.
//
// Interaction: hover (mouse) shows a cell in the tooltip; a click or tap
// selects it and shows its value in the info line, whose button opens the
// neuron view for that row. Keyboard: the matrix is one tab stop; arrow keys
// move the selected cell (Home/End: first/last key, PageUp/PageDown:
// first/last query), Enter opens the neuron view; the info line is an
// aria-live region, so the value is announced.
//
// Usage: heatmapView().theme(THEMES.light).size({width, height}).onQuery(fn)(root, data)
// with data = {K, labels[K], segs[K]?, matrix Float32Array[K*K], valueName,
//              notes[], title}

import { shownMatrices } from '../lib/export_data.js';
import {
  THEMES, sizeCanvas, tooltip, fmt, drawLegendBar, clip, exportable, cellMarks, SVG_MAX_CELLS, sliced,
  infoLine, linksTable, exportContext, chromeHeight,
  colourTable, setAll,
} from './common.js';
import { heatmapLayout, heatmapFrame } from './layout.js';
import { pairBoundary, strongestLinks, headMatrix, maxOf } from '../lib/data.js';
import { strideNote } from './view_notes.js';

/** The tokenizer's own pieces of a cell's query and key, when the labels
 *  spell them otherwise (byte-level "Ġthe", SentencePiece "▁the"). */
function rawLine(data, c) {
  const r = data.raw;
  if (!r || (r[c.i] === data.labels[c.i] && r[c.j] === data.labels[c.j])) return [];
  return [`pieces: ${r[c.i]} → ${r[c.j]}`];
}


const d3 = globalThis.d3;
// Above PAINT_K tokens the cells are written as pixels (paintCells), not
// one fillRect each; above SLICE_K the drawing spreads over three tasks (view).
const PAINT_K = 160;
const SLICE_K = 160;

export function heatmapView() {
  let theme = THEMES.light;
  let box = { width: 620, height: null };
  let onQuery = () => {};
  let onSpan = () => {};
  let onCell = () => {}; // (i, j, data.members): a cell was selected (the page keeps it as cell=)
  let sel = null; // {i, j}: selected cell (tap or keyboard; data.cell, the page's cell=, wins)
  let lastLabels = '';
  // A tap's tooltip outlives the redraws its own cell= causes: {i, j, key,
  // v, ev, owner, lines, at} of the last click (view() below).
  let tapEcho = null;

  let exported = exportContext(); // what an export adds (its last drawing)
  let scratch = null; // {ctx, img}: the K x K pixels of a large matrix (paintCells)

  let job = null; // a large matrix's drawing in progress (common.js sliced)

  /** Draw data in root. Up to SLICE_K tokens at once; above, in three
   *  tasks (common.js sliced), so that no task of a keystroke at 512
   *  tokens blocks the page for 50 ms: the message that brought the run
   *  and what the page derives from it (its own task), the numbers of the
   *  matrix (its largest value, its strongest links, the cells' pixels:
   *  ~262k values, no DOM), then every change to the DOM at once, so no
   *  frame shows half a drawing. Returns the sliced drawing's promise
   *  (true once drawn, false when a newer drawing replaced it), or
   *  undefined when drawn at once. */
  function view(root, data) {
    if (job) { job.cancel(); job = null; }
    if (data.K <= SLICE_K) { commit(root, data, numbers(data)); return undefined; }
    const t = sliced((function* steps() {
      yield; // the task that brought the run ends here
      const nums = numbers(data);
      yield;
      commit(root, data, nums);
    }()), 0, 0);
    job = t;
    const stage = root.select('.hm-stage').node();
    if (stage) stage.blSettle = () => t.flush(); // an export draws the finished picture
    return t.done.finally(() => { if (job === t) job = null; });
  }

  /** What the drawing reads from the matrix: its largest value (the colour
   *  scale's top), its strongest links (the text alternative) and, for a
   *  large matrix, the cells' packed pixels (paintCells). */
  function numbers(data) {
    const vmax = maxOf(data.matrix) || 1;
    return { vmax, links: strongestLinks(data.matrix, data.K, 10), pixels: data.K > PAINT_K ? cellPixels(data, vmax) : null };
  }

  function commit(root, data, { vmax, links, pixels }) {
    // A tap's tooltip still up (nothing else hid it) is shown again below
    // when this drawing only echoes that tap (its cell=, or a second redraw).
    const tip = typeof document !== 'undefined' ? document.getElementById('tooltip') : null;
    const echo = tip && !tip.hidden ? tapEcho : null;
    tooltip.hide();
    const key = data.labels.join('\u0000');
    if (key !== lastLabels) { sel = null; lastLabels = key; }
    if ('cell' in data) sel = data.cell;
    if (sel && (sel.i >= data.K || sel.j >= data.K)) sel = null;
    skeleton(root);
    root.select('.view-title').text(data.title);
    const g = layoutFor(root, data);
    notes(root, data, g, links);
    const colour = (v) => theme.seq(v / vmax);
    const stage = root.select('.hm-stage').style('width', `${g.W}px`).style('height', `${g.H}px`);
    stage.node().blSettle = null; // drawn: nothing for an export to wait for
    root.select('.hm-scroll').classed('scrolls', g.scroll);
    paintCells(stage, data, g, colour, pixels);
    // (setAll: an attribute set again, even to its value, has the SVG's
    // labels laid out again — ~20 ms at 512 tokens)
    const svg = stage.select('svg.hm-svg');
    setAll(svg.node(), { width: g.W, height: g.H, 'font-family': 'system-ui, sans-serif', 'font-size': 11, fill: theme.fg });
    drawLabels(svg, data, g);
    drawBoundary(svg, data, g);
    drawLegend(svg, data, g, vmax);
    wireCells(root, svg, data, g);
    pinToScroll(root, svg);
    exported = exportContext({ notes: notesOf(data, g) });
    // The echo of a tap (its cell=, same labels, same value, within a second)
    // keeps the tap's tooltip; any other redraw leaves it hidden.
    if (echo && sel && sel.i === echo.i && sel.j === echo.j && key === echo.key
        && data.matrix[sel.i * data.K + sel.j] === echo.v && performance.now() - echo.at < 1000) tooltip.show(echo.ev, echo.lines, echo.owner);
  }

  // Skeleton, created once per root.
  function skeleton(root) {
    root.classed('bl-heatmap', true);
    root.selectAll('div.view-title').data([null]).join('div').attr('class', 'view-title');
    infoLine(root);
    const scroller = root.selectAll('div.hm-scroll').data([null]).join('div').attr('class', 'hm-scroll');
    const stage = scroller.selectAll('div.hm-stage').data([null]).join('div').attr('class', 'hm-stage stage');
    stage.selectAll('canvas.hm-cells').data([null]).join('canvas').attr('class', 'hm-cells');
    const svg = stage.selectAll('svg.hm-svg').data([null]).join('svg').attr('class', 'hm-svg');
    for (const c of ['cols', 'pair', 'cursor', 'hit', 'pinned']) svg.selectAll(`g.${c}`).data([null]).join('g').attr('class', c);
    const pinned = svg.select('g.pinned');
    pinned.selectAll('rect.pin-bg').data([null]).join('rect').attr('class', 'pin-bg');
    pinned.selectAll('g.rows').data([null]).join('g').attr('class', 'rows');
    pinned.selectAll('g.legend').data([null]).join('g').attr('class', 'legend');
    pinned.selectAll('g.axis-names').data([null]).join('g').attr('class', 'axis-names');
    root.selectAll('p.view-notes').data([null]).join('p').attr('class', 'view-notes');
    root.selectAll('p.view-hint').data([null]).join('p').attr('class', 'view-hint')
      .text('Hover or tap a cell for its value; Tab to the matrix and use the arrow keys to move. The info line’s button opens the row in the neuron view.');
  }

  function layoutFor(root, data) {
    const longest = d3.max(data.labels, (l) => l.length) || 4;
    let height = null;
    let screen = null; // on the page: the window's height below the sticky controls (draw.js)
    if (box.height) {
      const stage = root.select('.hm-scroll').node();
      height = box.height - chromeHeight(root.node(), stage);
    } else if (box.screen) { // what is above the matrix stays on screen with it
      screen = box.screen - (root.select('.hm-scroll').node().getBoundingClientRect().top - root.node().getBoundingClientRect().top);
    }
    return heatmapLayout({ K: data.K, longestLabel: longest, width: box.width, height, screen });
  }

  /** A large matrix's cells as packed RGBA pixels, one per cell (one
   *  colour per 1/256 of the range), in the K x K ImageData kept between
   *  drawings: {img}. */
  function cellPixels(data, vmax) {
    const { K, matrix } = data;
    const lut = colourTable(theme.seq);
    // one K x K canvas and its pixels, kept between drawings: a new
    // canvas's first 2D context cost ~10 ms a drawing at 512 tokens
    if (!scratch || scratch.img.width !== K) {
      const c = document.createElement('canvas');
      c.width = K; c.height = K;
      scratch = { ctx: c.getContext('2d'), img: new ImageData(K, K) };
    }
    const { img } = scratch;
    const px = new Uint32Array(img.data.buffer);
    for (let p = 0; p < K * K; p++) px[p] = lut[Math.min(255, Math.round((255 * matrix[p]) / vmax))];
    if (data.causal) {
      const g = d3.rgb(theme.grid);
      const grid = new Uint32Array(new Uint8Array([g.r, g.g, g.b, 255]).buffer)[0];
      for (let i = 0; i < K; i++) for (let j = i + 1; j < K; j++) px[i * K + j] = grid;
    }
    return { img };
  }

  function paintCells(stage, data, g, colour, pixels) {
    const { K, matrix } = data;
    const { cell, side } = g;
    // A decoder's masked cells (a key after its query) in the grid colour, not as weights of 0.
    const paint = data.causal ? (v, i, j) => (j > i ? theme.grid : colour(v)) : colour;
    const canvas = stage.select('canvas.hm-cells').style('left', `${g.left}px`).style('top', `${g.top}px`).node();
    const ctx = sizeCanvas(canvas, side, side);
    ctx.fillStyle = theme.bg;
    ctx.fillRect(0, 0, side, side);
    if (!pixels) {
      for (let i = 0; i < K; i++) {
        for (let j = 0; j < K; j++) {
          ctx.fillStyle = paint(matrix[i * K + j], i, j);
          ctx.fillRect(j * cell, i * cell, cell, cell);
        }
      }
    } else {
      // Large inputs: the pixels written directly (cellPixels), scaled up.
      scratch.ctx.putImageData(pixels.img, 0, 0);
      ctx.imageSmoothingEnabled = false;
      ctx.drawImage(scratch.ctx.canvas, 0, 0, side, side);
    }
    exportable(canvas, () => {
      if (K * K > SVG_MAX_CELLS) {
        return { node: null, note: `Heatmap cells (${K} × ${K}) are an embedded PNG image: more than 128 × 128 cells would make the SVG too heavy.` };
      }
      return {
        node: cellMarks('hm-cells', (put) => {
          for (let i = 0; i < K; i++) for (let j = 0; j < K; j++) put(j * cell, i * cell, cell, cell, paint(matrix[i * K + j], i, j));
        }),
        note: `Heatmap cells: ${K * K} vector rectangles (${K} × ${K}).`,
      };
    });
  }

  // Row and column labels: at 512 tokens up to a thousand <text>s. Each
  // keeps what it was last given (setAll) and is touched only where that
  // changed, so a redraw with the same tokens (another head, a keystroke
  // past the model's 512 positions) leaves the labels to style and layout
  // as they were; their events are the groups' (one listener each, the
  // label's datum read from the event's target), not 3 per label re-bound
  // on every draw.
  function drawLabels(svg, data, g) {
    const { labels } = data;
    const shown = labels.map((l, i) => ({ l, i })).filter((d) => d.i % g.step === 0);
    const fg = theme.fg;
    const label = (ev, cls) => (ev.target instanceof Element && ev.target.classList.contains(cls) ? d3.select(ev.target).datum() : null);
    const rows = svg.select('g.rows');
    setAll(rows.node(), { transform: `translate(${g.left - 6},${g.top})` });
    rows.on('click', (ev) => { const d = label(ev, 'row-label'); if (d) { if (ev.shiftKey) onSpan(d.i); else onQuery(d.i); } })
      .on('mouseover', (ev) => { const d = label(ev, 'row-label'); if (d) tooltip.show(ev, [`query ${d.i}: ${d.l}`, 'click: explain this row (neuron view)', 'shift-click: add to / remove from the span'], ev.target); })
      .on('mouseout', (ev) => { if (label(ev, 'row-label')) tooltip.hide(); })
      .selectAll('text.row-label').data(shown, (d) => d.i)
      .join('text')
      .each(function (d) {
        setAll(this, {
          class: 'row-label', x: 0, y: d.i * g.cell + g.cell / 2, dy: '0.35em', 'text-anchor': 'end',
          'font-size': g.fontSize, fill: fg, '#text': clip(d.l, g.chars),
        });
      });
    const cols = svg.select('g.cols');
    setAll(cols.node(), { transform: `translate(${g.left},${g.top - 6})` });
    cols.on('click', (ev) => { const d = label(ev, 'col-label'); if (d && ev.shiftKey) onSpan(d.i); })
      .selectAll('text.col-label').data(shown, (d) => d.i)
      .join('text')
      .each(function (d) {
        setAll(this, {
          class: 'col-label', transform: `translate(${d.i * g.cell + g.cell / 2},0) rotate(-90)`, dy: '0.35em',
          'font-size': g.fontSize, fill: fg, '#text': clip(d.l, g.chars),
        });
      });
    svg.select('g.axis-names').selectAll('text').data([
      { t: 'keys →', x: g.left, y: 12 },
      { t: 'queries ↓', x: 4, y: g.top - 8 },
    ]).join('text').attr('x', (d) => d.x).attr('y', (d) => d.y)
      .attr('fill', theme.muted).attr('font-size', 11).text((d) => d.t);
  }

  /** A pair's A/B boundary: a line before the first B token, on both axes. */
  function drawBoundary(svg, data, g) {
    const b = data.segs ? pairBoundary(data.segs) : -1;
    const pos = g.cell * b;
    const marks = b > 0 ? [
      { x1: g.left + pos, y1: g.top - 4, x2: g.left + pos, y2: g.top + g.side },
      { x1: g.left - 4, y1: g.top + pos, x2: g.left + g.side, y2: g.top + pos },
    ] : [];
    svg.select('g.pair').attr('data-boundary', b)
      .selectAll('line.pair-boundary').data(marks).join('line').attr('class', 'pair-boundary')
      .attr('x1', (d) => d.x1).attr('y1', (d) => d.y1).attr('x2', (d) => d.x2).attr('y2', (d) => d.y2)
      .attr('stroke', theme.fg).attr('stroke-width', 1.5).attr('stroke-dasharray', '4 3');
  }

  function drawLegend(svg, data, g, vmax) {
    const width = Math.min(180, Math.max(100, g.side));
    const lg = svg.select('g.legend').attr('transform', `translate(${Math.min(g.left, Math.max(4, g.W - width - 16))},${g.top + g.side + 30})`);
    drawLegendBar(lg, { interp: theme.seq, domain: [0, vmax], title: data.valueName, id: 'hm', width });
    lg.selectAll('g.legend-axis text').attr('fill', theme.fg);
    lg.selectAll('g.legend-axis line, g.legend-axis path').attr('stroke', theme.muted);
    lg.selectAll('text.legend-title').attr('fill', theme.fg);
  }

  function describe(data, i, j) {
    const v = data.matrix[i * data.K + j];
    return `${data.labels[i]} → ${data.labels[j]}: ${data.valueName} ${fmt(v)} (query ${i}, key ${j})`;
  }

  function wireCells(root, svg, data, g) {
    const { K } = data;
    const info = infoLine(root);
    const cursor = svg.select('g.cursor');
    const boxes = (c, cls, visible) => {
      const rects = c ? [
        { x: g.left, y: g.top + c.i * g.cell, w: g.side, h: g.cell },
        { x: g.left + c.j * g.cell, y: g.top, w: g.cell, h: g.side },
      ] : [];
      cursor.selectAll(`rect.${cls}`).data(visible ? rects : []).join('rect').attr('class', cls)
        .attr('x', (r) => r.x).attr('y', (r) => r.y).attr('width', (r) => r.w).attr('height', (r) => r.h)
        .attr('fill', 'none').attr('stroke', cls === 'hm-sel' ? theme.fg : theme.accent)
        .attr('stroke-width', cls === 'hm-sel' ? 2 : 1.5).attr('pointer-events', 'none');
    };
    const select = (c) => {
      sel = c;
      boxes(sel, 'hm-sel', !!sel);
      if (!sel) { info.set(K ? 'Tap or hover a cell for its value.' : ''); return; }
      info.set(describe(data, sel.i, sel.j), { label: `Explain query ${sel.i} in the neuron view`, run: () => onQuery(sel.i, sel.j) });
    };
    const cellAt = (ev) => {
      const [x, y] = d3.pointer(ev, svg.node());
      const j = Math.floor((x - g.left) / g.cell);
      const i = Math.floor((y - g.top) / g.cell);
      return i < 0 || j < 0 || i >= K || j >= K ? null : { i, j };
    };
    select(sel);
    svg.select('g.hit').selectAll('rect.hm-hit').data([null]).join('rect').attr('class', 'hm-hit')
      .attr('x', g.left).attr('y', g.top).attr('width', g.side).attr('height', g.side)
      .attr('fill', 'transparent')
      .attr('tabindex', 0)
      .attr('role', 'application')
      .attr('aria-roledescription', 'heatmap')
      .attr('aria-label', `${data.title}: ${K} × ${K} cells. Arrow keys move the selected cell, Enter opens its row in the neuron view.`)
      .on('pointermove', (ev) => {
        if (ev.pointerType !== 'mouse') return;
        const c = cellAt(ev);
        boxes(c, 'hm-hover', !!c);
        if (c) tooltip.show(ev, [`${data.labels[c.i]} → ${data.labels[c.j]}`, `${data.valueName}: ${fmt(data.matrix[c.i * K + c.j])}`, `query ${c.i}, key ${c.j}`, ...rawLine(data, c)]);
      })
      .on('pointerleave', () => { boxes(null, 'hm-hover', false); tooltip.hide(); })
      .on('click', (ev) => {
        const c = cellAt(ev);
        if (!c) return;
        if (ev.shiftKey) { onSpan(c.i); return; } // shift-click: the query joins / leaves the span
        select(c);
        const lines = [`${data.labels[c.i]} → ${data.labels[c.j]}`, `${data.valueName}: ${fmt(data.matrix[c.i * K + c.j])}`];
        tapEcho = { i: c.i, j: c.j, key: data.labels.join('\u0000'), v: data.matrix[c.i * K + c.j], ev, owner: ev.currentTarget, lines, at: performance.now() };
        onCell(c.i, c.j, data.members);
        tooltip.show(ev, lines);
      })
      .on('focus', function () {
        if (!this.matches(':focus-visible')) return; // a click selects where it lands
        if (!sel) select({ i: 0, j: 0 }); else select(sel);
      })
      .on('keydown', (ev) => {
        const c = sel || { i: 0, j: 0 };
        const moves = {
          ArrowLeft: [c.i, c.j - 1], ArrowRight: [c.i, c.j + 1], ArrowUp: [c.i - 1, c.j], ArrowDown: [c.i + 1, c.j],
          Home: [c.i, 0], End: [c.i, K - 1], PageUp: [0, c.j], PageDown: [K - 1, c.j],
        };
        if (ev.key === 'Enter' || ev.key === ' ') { ev.preventDefault(); onQuery(c.i, c.j); return; }
        if (!moves[ev.key]) return;
        ev.preventDefault();
        const [i, j] = moves[ev.key];
        select({ i: Math.max(0, Math.min(K - 1, i)), j: Math.max(0, Math.min(K - 1, j)) });
        onCell(sel.i, sel.j, data.members);
      });
  }

  /** Long inputs on narrow screens: the matrix scrolls inside its own box;
   *  row labels, axis names and legend stay at the box's left edge. */
  function pinToScroll(root, svg) {
    const scroller = root.select('.hm-scroll');
    const pin = () => {
      // scrollLeft forces a layout; a box that does not scroll is at 0.
      const x = scroller.classed('scrolls') ? scroller.node().scrollLeft : 0;
      setAll(svg.select('g.pinned').node(), { transform: x ? `translate(${x},0)` : null });
      const rows = x ? svg.select('g.rows').node().getBBox() : null; // (a layout: only when scrolled)
      setAll(svg.select('rect.pin-bg').node(), { x: 0, y: 0, width: x ? rows.x + rows.width + 2 : 0, height: svg.attr('height'), fill: theme.bg });
    };
    scroller.on('scroll', pin);
    pin();
  }

  function notesOf(data, g) {
    const b = data.segs ? pairBoundary(data.segs) : -1;
    const stride = strideNote(g.step);
    return [...(data.notes || []), ...(stride ? [stride] : []), ...(b > 0 ? [`Dashed lines: sentence B starts at token ${b} (${data.labels[b]}).`] : [])];
  }

  function notes(root, data, g, links) {
    root.select('p.view-notes').text(notesOf(data, g).join(' '));
    linksTable(root, {
      summary: `Table: the ${links.length} strongest links (${data.valueName})`,
      columns: [{ key: 'q', title: 'query' }, { key: 'k', title: 'key' }, { key: 'w', title: data.valueName, fmt }],
      rows: links.map((l) => ({ q: `${l.query}: ${data.labels[l.query]}`, k: `${l.key}: ${data.labels[l.key]}`, w: l.weight })),
    });
  }

  /** What an export adds around the stage, as last drawn (export.js). */
  view.exportContext = () => exported;
  view.theme = function (t) { if (!arguments.length) return theme; theme = t; return view; };
  view.size = function (b) { if (!arguments.length) return box; box = { width: b.width, height: b.height || null, screen: b.screen || null }; return view; };
  /** Kept for callers of the old API: the largest matrix side in px. */
  view.maxSize = function (v) { if (!arguments.length) return box.width; box = { width: v + 200, height: null }; return view; };
  view.onQuery = function (f) { if (!arguments.length) return onQuery; onQuery = f; return view; };
  view.onSpan = function (f) { if (!arguments.length) return onSpan; onSpan = f; return view; };
  view.onCell = function (f) { if (!arguments.length) return onCell; onCell = f; return view; };
  return view;
}

// cell=Q,K: the selected cell as raw token positions (query, key), page
// state so a permalink or another view (the Corpus view's examples) opens
// on it; drawn on the shown tokens that hold them (a word, the span).
export const CELL_PARAM = {
  key: 'cell', def: null, perText: true, expect: 'a query and a key token number, as 3,5', // a new text drops it (page/toolbar.js)
  parse: (raw) => {
    const m = /^(\d{1,5}),(\d{1,5})$/.exec(raw);
    return m ? [Number(m[1]), Number(m[2])] : null;
  },
  format: (v) => v.join(','),
  within: (v, { T }) => (v[0] < T && v[1] < T ? null : `cell ${v.join(',')} names a token past the last (${T - 1})`),
};
/** cell= on the shown axis: {i, j}, or null (none, or a token not shown). */
export function shownCell(axis, cell) {
  if (!cell) return null;
  const at = (t) => axis.members.findIndex((m) => m.includes(t));
  const i = at(cell[0]), j = at(cell[1]);
  return i < 0 || j < 0 ? null : { i, j };
}

export const CAUSAL_NOTE = 'Causal attention (a decoder): each query sees only itself and earlier keys; the cells right of the diagonal are masked (grid colour), not weights of 0.';

/** The registry entry (views/index.js): what the page controller needs. */
export const descriptor = {
  id: 'heatmap',
  label: 'Heatmap',
  size: ({ K }) => heatmapFrame(K), // the embed frame (layout.js)
  controls: { layer: true, head: true, mean: true, words: true, mode: true, span: true },
  // its export: one K x K matrix, the layer's head or the mean of its heads
  shown: (run, s) => shownMatrices(run, s, { span: true, blocks: ({ block }) => [block(s.layer, s.head)] }),
  snapshot: { layers: 'shown', heads: 'all', draws: 'head' }, // what a snapshot holds (lib/snapshot.js)
  // span: raw token indices summed as one (shift-click tokens; the head view
  // uses it too, controls.span).
  params: [{
    key: 'span', def: null, expect: 'a comma-separated list of token numbers',
    parse: (raw) => {
      if (raw === '') return null;
      const parts = raw.split(',');
      if (parts.length > 512 || !parts.every((p) => /^\d{1,4}$/.test(p))) return null;
      return [...new Set(parts.map(Number))].sort((a, b) => a - b);
    },
    format: (v) => v.join(','),
  }, CELL_PARAM],
  needs: (s) => ({ norms: s.mode === 'norm' }),
  // A cell's key goes with its query: from the mean of heads the neuron view
  // opens on the head that gives that cell the most (neuron.js enter).
  create: (ctx) => heatmapView().onQuery((i, j) => ctx.openNeuron(i, j)).onSpan((i) => ctx.toggleSpan(i))
    .onCell((i, j, members) => { if (members?.[i] && members[j]) ctx.update({ cell: [members[i][0], members[j][0]] }); }),
  prepare(run, s, { axis, src, lines, valueName, modeWord }) {
    const matrix = axis.transform(headMatrix(src[s.layer], run.H, run.T, s.head));
    const headTxt = s.head === 'mean' ? 'mean of heads' : `head ${s.head}`;
    const notes = s.head === 'mean' ? [...lines, `Mean over all ${run.H} heads of the layer.`] : lines;
    return {
      K: axis.K, labels: axis.labels, raw: axis.raw, segs: s.text_b ? axis.segs : null, matrix, valueName,
      cell: shownCell(axis, s.cell), members: axis.members, causal: !!run.causal,
      title: `Heatmap — layer ${s.layer}, ${headTxt} (${modeWord})`,
      notes: run.causal ? [...notes, CAUSAL_NOTE] : notes,
    };
  },
};
