// common.js — what every view shares: theme palettes, colour scales, the
// tooltip, crisp canvases and the colour legend. D3 is the global loaded from
// vendor/d3.min.js (copied from node_modules at build time, never a CDN).

const d3 = globalThis.d3;

/** Per-theme colours. seq: 0..1 -> colour for attention/norm cells;
 *  div: -1..1 -> colour for signed neuron values (orange < 0 < blue). */
export const THEMES = {
  light: {
    name: 'light', bg: '#ffffff', fg: '#1d232b', muted: '#66707d', grid: '#dfe3e8', accent: '#2563eb',
    seq: (t) => d3.interpolateBlues(0.02 + 0.98 * t),
    div: d3.piecewise(d3.interpolateRgb, ['#c2570c', '#f7f7f7', '#1d5fa8']),
    font: '12px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif',
  },
  dark: {
    name: 'dark', bg: '#12161c', fg: '#e4e8ee', muted: '#98a2b0', grid: '#2b323d', accent: '#6ea8ff',
    seq: (t) => d3.interpolateMagma(0.04 + 0.92 * t),
    div: d3.piecewise(d3.interpolateRgb, ['#ff9a3c', '#1c2129', '#5aa9ff']),
    font: '12px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif',
  },
};

const EXTRA_HEAD_COLOURS = ['#1b9e77', '#7570b3', '#a6761d', '#e7298a'];

/** One distinct colour per head: Tableau 10, four more, then evenly spaced hues. */
export function headColour(h, H) {
  const base = d3.schemeTableau10.concat(EXTRA_HEAD_COLOURS);
  if (h < base.length) return base[h];
  return d3.interpolateSinebow((h - base.length) / Math.max(1, H - base.length));
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

/** Shared tooltip: one element, text only (lines joined with newlines). */
export const tooltip = {
  el: null,
  show(event, lines) {
    if (!this.el) this.el = document.getElementById('tooltip');
    if (!this.el) return;
    this.el.textContent = lines.join('\n');
    this.el.hidden = false;
    const pad = 14;
    const r = this.el.getBoundingClientRect();
    let x = event.clientX + pad;
    let y = event.clientY + pad;
    if (x + r.width > window.innerWidth - 4) x = event.clientX - r.width - pad;
    if (y + r.height > window.innerHeight - 4) y = event.clientY - r.height - pad;
    this.el.style.left = `${Math.max(4, x)}px`;
    this.el.style.top = `${Math.max(4, y)}px`;
  },
  hide() {
    if (!this.el) this.el = document.getElementById('tooltip');
    if (this.el) this.el.hidden = true;
  },
};

export const fmt = d3.format('.3f');
export const fmtSigned = d3.format('+.3f');

/** A horizontal colour legend: gradient bar from 0 to max with ticks.
 *  g is an SVG <g>; interp maps 0..1 to colours. */
export function drawLegendBar(g, { interp, domain, width = 180, title, id }) {
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
    .call(d3.axisBottom(scale).ticks(4).tickSize(4).tickFormat(d3.format('.2~f')));
}

/** Approximate text width in px for the 12px UI font (no layout pass). */
export function textWidth(s, px = 12) {
  return Math.ceil(String(s).length * px * 0.58) + 4;
}

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
 *  canvas as a PNG image; note says in words what was exported and how. */
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
