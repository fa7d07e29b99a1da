// common.js — what every view shares: theme palettes, colour scales, the
// tooltip, crisp canvases and the colour legend. D3 is the global loaded from
// vendor/d3.min.js (copied from node_modules at build time, never a CDN).
// Importable in Node without D3 (tests): only THEMES and the formatters need it.

import { headColour as paletteColour } from './palette.js';
import { textWidth as layoutTextWidth } from './layout.js';


const d3 = globalThis.d3;
const noD3 = () => { throw new Error('D3 is not loaded'); };

/** Per-theme colours. seq: 0..1 -> colour for attention/norm cells;
 *  div: -1..1 -> colour for signed neuron values (orange < 0 < blue). */
export const THEMES = {
  light: {
    name: 'light', bg: '#ffffff', fg: '#1d232b', muted: '#66707d', grid: '#dfe3e8', accent: '#2563eb',
    seq: (t) => d3.interpolateBlues(0.02 + 0.98 * t),
    div: d3 ? d3.piecewise(d3.interpolateRgb, ['#c2570c', '#f7f7f7', '#1d5fa8']) : noD3,
    font: '12px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif',
  },
  dark: {
    name: 'dark', bg: '#12161c', fg: '#e4e8ee', muted: '#98a2b0', grid: '#2b323d', accent: '#6ea8ff',
    seq: (t) => d3.interpolateMagma(0.04 + 0.92 * t),
    div: d3 ? d3.piecewise(d3.interpolateRgb, ['#ff9a3c', '#1c2129', '#5aa9ff']) : noD3,
    font: '12px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif',
  },
};

/** One colour per head (palette.js: >= 3:1 on both themes, told apart under
 *  simulated deuteranopia and protanopia). */
export function headColour(h) {
  return paletteColour(h);
}

/** Size a canvas for the device pixel ratio; returns its 2d context already
 *  scaled so drawing happens in CSS pixels. */
export function sizeCanvas(canvas, w, h) {
  const dpr = Math.min(2, globalThis.devicePixelRatio || 1);
  const W = Math.max(1, Math.round(w * dpr));
  const Hh = Math.max(1, Math.round(h * dpr));
  if (canvas.width !== W) canvas.width = W;
  if (canvas.height !== Hh) canvas.height = Hh;
  canvas.style.width = `${w}px`;
  canvas.style.height = `${h}px`;
  const ctx = canvas.getContext('2d');
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  return ctx;
}

/** 256 colours of a scale fn (0..1 -> CSS colour) as packed RGBA pixels
 *  (Uint32Array; RGBA in memory order, for ImageData), made once per fn. */
const colourTables = new WeakMap();
export function colourTable(fn) {
  let lut = colourTables.get(fn);
  if (!lut) {
    lut = new Uint32Array(256);
    const bytes = new Uint8Array(lut.buffer);
    for (let i = 0; i < 256; i++) {
      const c = d3.rgb(fn(i / 255));
      bytes.set([c.r, c.g, c.b, 255], 4 * i);
    }
    colourTables.set(fn, lut);
  }
  return lut;
}

/** Set attributes (and the text, key '#text') of one element, touching the
 *  DOM only where a value changed since the last call: at 512 tokens a
 *  redraw rewrites thousands of row attributes, most of them unchanged. */
export function setAll(node, attrs) {
  const was = node.__blAttrs || (node.__blAttrs = {});
  for (const k in attrs) {
    const raw = attrs[k];
    if (was[k] === raw) continue;
    was[k] = raw;
    const v = raw == null ? null : String(raw);
    if (k === '#text') node.textContent = v ?? '';
    else if (v === null) node.removeAttribute(k);
    else node.setAttribute(k, v);
  }
}

/** Shared tooltip: one element, text only (lines joined with newlines). It
 *  never outlives what it describes: it hides on any scroll, on a tap or
 *  click outside the element that showed it, on Escape, and whenever a view
 *  redraws (each view's update calls tooltip.hide()). */
export const tooltip = {
  el: null,
  owner: null,
  guarded: false,
  guard() {
    if (this.guarded || typeof window === 'undefined') return;
    this.guarded = true;
    window.addEventListener('scroll', () => this.hide(), { capture: true, passive: true });
    window.addEventListener('pointerdown', (ev) => {
      if (this.owner && ev.target instanceof Node && this.owner.contains(ev.target)) return;
      this.hide();
    }, { capture: true });
    window.addEventListener('keydown', (ev) => { if (ev.key === 'Escape') this.hide(); });
  },
  show(event, lines, owner = null) {
    if (!this.el) this.el = document.getElementById('tooltip');
    if (!this.el) return;
    this.guard();
    this.owner = owner || (event && event.currentTarget instanceof Node ? event.currentTarget : null);
    this.el.textContent = lines.join('\n');
    this.el.hidden = false;
    const pad = 14;
    const r = this.el.getBoundingClientRect();
    let x = event.clientX + pad;
    let y = event.clientY + pad;
    if (x + r.width > window.innerWidth - 4) x = event.clientX - r.width - pad;
    if (y + r.height > window.innerHeight - 4) y = event.clientY - r.height - pad;
    this.el.style.left = `${Math.max(4, Math.min(x, window.innerWidth - r.width - 4))}px`;
    this.el.style.top = `${Math.max(4, y)}px`;
  },
  hide() {
    if (!this.el) this.el = typeof document !== 'undefined' ? document.getElementById('tooltip') : null;
    if (this.el) this.el.hidden = true;
    this.owner = null;
  },
};

export const fmt = (v) => (Number.isFinite(v) ? v.toFixed(3) : String(v));
export const fmtSigned = (v) => (v >= 0 ? `+${fmt(v)}` : fmt(v));

/** A horizontal colour legend: gradient bar from 0 to max with ticks.
 *  g is an SVG <g>; interp maps 0..1 to colours. */
export function drawLegendBar(g, { interp, domain, width = 180, title, id, format = '.2~f' }) {
  const gradId = `grad-${id}`;
  const defs = g.selectAll('defs').data([null]).join('defs');
  const grad = defs.selectAll('linearGradient').data([null]).join('linearGradient').attr('id', gradId);
  const n = 12;
  grad.selectAll('stop').data(d3.range(n + 1)).join('stop')
    .attr('offset', (i) => `${(100 * i) / n}%`)
    .attr('stop-color', (i) => interp(i / n));
  g.selectAll('text.legend-title').data([title]).join('text').attr('class', 'legend-title')
    .attr('x', 0).attr('y', 0).attr('dy', '-0.4em').text((t) => t);
  g.selectAll('rect.legend-bar').data([null]).join('rect').attr('class', 'legend-bar')
    .attr('width', width).attr('height', 10).attr('fill', `url(#${gradId})`);
  const scale = d3.scaleLinear().domain(domain).range([0, width]);
  g.selectAll('g.legend-axis').data([null]).join('g').attr('class', 'legend-axis')
    .attr('transform', 'translate(0,10)')
    .call(d3.axisBottom(scale).ticks(4).tickSize(4).tickFormat(d3.format(format)));
}

/** Approximate text width in px for the UI font (no layout pass). */
export const textWidth = layoutTextWidth;

/** Shorten long token labels for axes; the tooltip shows the full text. */
export function clip(s, n = 14) {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}

/** Largest number of cell rectangles / lines a view writes into an exported
 *  SVG; above it the canvas goes in as an embedded PNG (and the SVG's <desc>
 *  says so). 128 x 128 heatmap cells = 16384. */
export const SVG_MAX_CELLS = 128 * 128;
export const SVG_MAX_LINES = 4000;

/** Give a canvas a vector form for "Export SVG" (export.js). fn() returns
 *  {node, note}: node is a mark tree {tag: 'g'|'rect'|'line'|'path', attrs,
 *  children} in the canvas's CSS-pixel coordinates, or null to keep the
 *  canvas as a PNG image; note says in words what was exported and how.
 *  With node null, image (a canvas) goes in instead of the page's canvas,
 *  dy px lower and height px tall (a page canvas that shows only a band). */
export function exportable(canvas, fn) {
  canvas.blExport = fn;
}

const r2 = (v) => Math.round(v * 100) / 100;

/** Mark tree of a grid of coloured cells: cells(put) calls put(x, y, w, h,
 *  colour) once per cell. */
export function cellMarks(className, cells) {
  const children = [];
  cells((x, y, w, h, fill) => children.push({ tag: 'rect', attrs: { x: r2(x), y: r2(y), width: r2(w), height: r2(h), fill } }));
  return { tag: 'g', attrs: { class: className, 'shape-rendering': 'crispEdges' }, children };
}

// ------------------------------------------------------ shared view parts

/** The box a view may use inside its container: width always; height only in
 *  an embed (the frame's height minus what is drawn below the view). */
export function viewBox(viewEl, { embed = false, below = 0 } = {}) {
  const cs = getComputedStyle(viewEl);
  const padX = parseFloat(cs.paddingLeft) + parseFloat(cs.paddingRight);
  const padY = parseFloat(cs.paddingTop) + parseFloat(cs.paddingBottom);
  const width = Math.max(200, viewEl.clientWidth - padX);
  if (!embed) return { width, height: null };
  const top = viewEl.getBoundingClientRect().top + (window.scrollY || 0);
  return { width, height: Math.max(160, window.innerHeight - top - padY - below) };
}

/** Height of everything in root except the element `stage` (px). Views that
 *  must fit a frame subtract it from the frame to size their stage. */
export function chromeHeight(root, stage) {
  let h = 0;
  for (const el of root.children) {
    if (el === stage || el.hidden) continue;
    const cs = getComputedStyle(el);
    if (cs.display === 'none' || cs.position === 'absolute') continue;
    h += el.getBoundingClientRect().height + parseFloat(cs.marginTop) + parseFloat(cs.marginBottom);
  }
  return Math.ceil(h);
}

/** The view's info line: one line of text that shows the selected value
 *  (tap, keyboard) and is announced by screen readers (aria-live). An
 *  optional action button sits at its end. */
export function infoLine(root) {
  const box = root.selectAll('div.view-info').data([null]).join('div').attr('class', 'view-info')
    .attr('aria-live', 'polite').attr('aria-atomic', 'true');
  box.selectAll('span.info-text').data([null]).join('span').attr('class', 'info-text');
  box.selectAll('button.info-action').data([null]).join('button').attr('class', 'info-action').attr('type', 'button')
    .property('hidden', true);
  return {
    set(text, action = null) {
      box.select('span.info-text').text(text);
      const b = box.select('button.info-action');
      b.property('hidden', !action);
      if (action) b.text(action.label).on('click', action.run);
    },
  };
}

/** A view with nothing to draw (views/view_notes.js emptySentence): one
 *  sentence in place of the chart, no empty axes. The page clears it before
 *  the next drawing (page/draw.js, data-empty). */
export function emptyView(root, sentence) {
  tooltip.hide();
  root.selectAll('*').remove();
  root.attr('data-empty', '1');
  root.append('p').attr('class', 'view-empty').attr('role', 'status').text(sentence);
}

/** Text alternative of a view: a collapsible table (visually hidden in an
 *  embed, always there for screen readers). columns: [{key, title, fmt?}]. */
export function linksTable(root, { summary, columns, rows }) {
  const det = root.selectAll('details.view-alt').data([null]).join('details').attr('class', 'view-alt');
  det.selectAll('summary').data([null]).join('summary').text(summary);
  const table = det.selectAll('table').data([null]).join('table');
  table.selectAll('caption').data([null]).join('caption').text(summary);
  table.selectAll('thead').data([null]).join('thead').selectAll('tr').data([null]).join('tr')
    .selectAll('th').data(columns).join('th').attr('scope', 'col').text((c) => c.title);
  table.selectAll('tbody').data([null]).join('tbody').selectAll('tr').data(rows).join('tr')
    .selectAll('td').data((r) => columns.map((c) => (c.fmt ? c.fmt(r[c.key]) : String(r[c.key]))))
    .join('td').text((t) => t);
}

/** Run the steps of an iterator (a generator: each yield ends a step) in
 *  slices of about budget ms, one slice per task, so that heavy drawing
 *  work never blocks the page for long (at 512 tokens a view's numbers take
 *  hundreds of ms). The first slice runs at once, in the drawing's own task,
 *  for about first ms (what the drawing did before it counts towards the
 *  50 ms of a long task). Returns {done, cancel}:
 *  done resolves true when the last step has run, false once cancel() has
 *  stopped it (before its next step), and rejects with a step's error;
 *  flush() runs what is left at once. A view returns done from its drawing
 *  so the page waits for it (app.js), and sets its stage's blSettle to
 *  flush so an export waits too (export.js). */
export function sliced(steps, budget = 30, first = 10) {
  let stop = false;
  let over = false;
  let settle;
  const done = new Promise((resolve, reject) => { settle = { resolve, reject }; });
  const end = (how, v) => { over = true; settle[how](v); };
  let room = first;
  const slice = () => {
    if (over) return;
    const t0 = performance.now();
    const ms = room;
    room = budget;
    try {
      for (;;) {
        if (stop) { end('resolve', false); return; }
        if (steps.next().done) { end('resolve', true); return; }
        if (performance.now() - t0 >= ms) break;
      }
    } catch (e) {
      end('reject', e);
      return;
    }
    setTimeout(slice, 0);
  };
  slice();
  return {
    done,
    cancel() { stop = true; },
    /** Run the remaining steps now (an export needs the finished drawing). */
    flush() { room = Infinity; slice(); },
  };
}

/** What an export adds around a view's stage (export.js): colour keys drawn
 *  outside the stage (e.g. the head swatches) and explanatory notes (never
 *  instructions for the page); subject: what the title line names instead
 *  of the page's text, for a view drawn from something else (the Corpus
 *  view's inputs). A chart keeps the one of its last drawing and hands it
 *  out as chart.exportContext() (views/index.js). */
export function exportContext({ notes = [], keys = [], subject = null } = {}) {
  return { notes, keys, subject };
}
