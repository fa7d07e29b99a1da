// model.js — the model view: a thumbnail of every layer x head matrix, all
// painted into ONE canvas (144 heads x 512 tokens stays fast: each matrix is
// max-pooled to the thumbnail size first). Click a thumbnail to open it.
// Keyboard: the grid is one tab stop; arrow keys move a highlighted
// thumbnail (Home/End: first/last head, PageUp/PageDown: first/last layer),
// Enter or Space opens it. Export SVG keeps the thumbnails as one PNG image.
//
// Layout (layout.js modelLayout): every head of a layer always in one row;
// thumbnails shrink to the width (and in an embed, the height) given.
//
// Heads switched off (head ablation, data.off) are greyed and crossed; in
// the page's "Switch heads off" mode a click toggles a head instead of
// opening it (the registry entry decides, through ctx.ablating()).
//
// data = {L, H, K, labels[K], mat(l, h) -> K*K Float32Array, layer, head,
//         valueName, notes[], title, off Set('l/h') of heads switched off}

import { shownMatrices } from '../lib/export_data.js';
import { THEMES, sizeCanvas, tooltip, drawLegendBar, exportable, fmt, infoLine, linksTable, exportContext, chromeHeight,
  sliced, colourTable,
} from './common.js';
import { modelLayout, modelFrame, MODEL_MAX_THUMB } from './layout.js';
import { poolMatrix, maxOf, strongestLinks } from '../lib/data.js';
import { maskSet } from '../lib/compare.js';

const d3 = globalThis.d3;

export function modelView() {
  let theme = THEMES.light;
  let frame = { width: 900, height: null };
  let onOpen = () => {};
  let kbd = null; // {l, h}: the thumbnail the keyboard cursor is on

  let job = null; // the drawing in progress (common.js sliced)

  /** Draw; returns a promise that resolves when the thumbnails are painted
   *  (at 512 tokens their pooling is spread over several tasks). */
  let exported = exportContext(); // what an export adds (its last drawing)

  function view(root, data) {
    tooltip.hide();
    render(root);
    return update(root, data);
  }

  function render(root) {
    root.classed('bl-modelview', true);
    root.selectAll('div.view-title').data([null]).join('div').attr('class', 'view-title');
    infoLine(root);
    const stage = root.selectAll('div.mv-scroll').data([null]).join('div').attr('class', 'mv-scroll')
      .selectAll('div.mv-stage').data([null]).join('div').attr('class', 'mv-stage stage');
    stage.selectAll('canvas.mv-thumbs').data([null]).join('canvas').attr('class', 'mv-thumbs');
    const svg = stage.selectAll('svg.mv-svg').data([null]).join('svg').attr('class', 'mv-svg');
    svg.selectAll('g.layer-labels').data([null]).join('g').attr('class', 'layer-labels');
    svg.selectAll('g.head-labels').data([null]).join('g').attr('class', 'head-labels');
    svg.selectAll('rect.mv-current').data([null]).join('rect').attr('class', 'mv-current');
    svg.selectAll('rect.mv-hover').data([null]).join('rect').attr('class', 'mv-hover');
    svg.selectAll('rect.mv-focus').data([null]).join('rect').attr('class', 'mv-focus');
    svg.selectAll('g.mv-offs').data([null]).join('g').attr('class', 'mv-offs').attr('pointer-events', 'none');
    svg.selectAll('rect.mv-hit').data([null]).join('rect').attr('class', 'mv-hit');
    svg.selectAll('g.legend').data([null]).join('g').attr('class', 'legend');
    root.selectAll('p.view-notes').data([null]).join('p').attr('class', 'view-notes');
    root.selectAll('p.view-hint').data([null]).join('p').attr('class', 'view-hint')
      .text('Hover a thumbnail for its largest value; click or tap it to open it as a heatmap. Keyboard: Tab to the grid, arrows move, Enter opens.');
  }

  /** Text alternative: the strongest link of every layer (over its heads);
   *  one step per layer. */
  function* textAlternative(root, data, peaks) {
    const rows = [];
    for (let l = 0; l < data.L; l++) {
      let best = 0;
      for (let h = 1; h < data.H; h++) if (peaks[l][h] > peaks[l][best]) best = h;
      const [top] = strongestLinks(data.mat(l, best), data.K, 1);
      if (top) rows.push({ l, h: best, q: `${top.query}: ${data.labels ? data.labels[top.query] : ''}`, k: `${top.key}: ${data.labels ? data.labels[top.key] : ''}`, w: top.weight });
      yield;
    }
    linksTable(root, {
      summary: `Table: the strongest link of each layer (${data.valueName})`,
      columns: [{ key: 'l', title: 'layer' }, { key: 'h', title: 'head' }, { key: 'q', title: 'query' }, { key: 'k', title: 'key' }, { key: 'w', title: data.valueName, fmt }],
      rows,
    });
  }

  function update(root, data) {
    root.select('.view-title').text(data.title);
    root.select('p.view-notes').text((data.notes || []).join(' '));
    const info = infoLine(root);
    info.set(`Layer ${data.layer}, ${data.head === 'mean' ? 'mean of heads' : `head ${data.head}`} is open in the other views.`);
    const g = modelLayout({
      L: data.L, H: data.H, width: frame.width,
      height: frame.height ? frame.height - chromeHeight(root.node(), root.select('.mv-scroll').node()) : null,
    });
    const stage = root.select('.mv-stage').style('width', `${g.W}px`).style('height', `${g.H}px`);
    const b = baseOf(data);
    const { peaks } = b;
    const svg = stage.select('svg.mv-svg').attr('width', g.W).attr('height', g.H)
      .attr('font-family', 'system-ui, sans-serif');
    axisLabels(svg, data, g);
    const sc = { data, g, svg, peaks, info };
    marks(sc);
    wirePointer(sc);
    wireKeyboard(sc);
    legend(svg, data, g);
    exported = exportContext({ notes: data.notes || [] });
    if (job) job.cancel();
    job = sliced(paint(root, data, b, g, stage));
    const current = job;
    stage.node().blSettle = () => current.flush(); // an export draws the finished picture
    return job.done;
  }

  /** The drawing's heavy part, in steps (one head pooled, one layer of the
   *  atlas, one layer of the table): the thumbnails, then the table. */
  function* paint(root, data, b, g, stage) {
    yield* poolBase(data, b);
    const pix = yield* thumbnails(data, b, g.S);
    paintGrid(stage.select('canvas.mv-thumbs'), pix, g);
    const was = root.node().blAltOf; // the table changes with the numbers only
    if (!was || was.source !== data.source || was.key !== data.pixelKey) {
      yield* textAlternative(root, data, b.peaks);
      root.node().blAltOf = { source: data.source, key: data.pixelKey };
    }
  }

  // Thumbnail pixels, kept per run. Each head's matrix is max-pooled once to
  // at most MODEL_MAX_THUMB cells a side (base: kept while the run, mode and
  // axis stay the same, data.source and data.pixelKey), then to the
  // thumbnail's P = min(S, K) from there, scaled to its own maximum (weak
  // heads still show their pattern; the tooltip gives the numbers), and
  // written into one atlas canvas (L rows x H columns of P x P pixels, one
  // putImageData). A redraw that changes only the open head, the
  // switched-off marks or the "Switch heads off" mode paints nothing; a new
  // size pools the base again (72 x 96 x 96 cells, not 72 x 512 x 512).
  // Every pixel is the largest of the cells it covers, so a thumbnail's
  // maximum is its head's peak.
  let base = null; // {source, key, P0, mats[L][H], peaks[L][H]} (filled by poolBase)
  let px = null; // {base, key, P, atlas}
  /** The base for these numbers: kept, or a new one still to pool (its
   *  peaks read 0 until then). */
  function baseOf(data) {
    if (base && base.source === data.source && base.key === data.pixelKey) return base;
    const { L, H, K } = data;
    const P0 = Math.min(Math.max(K, 1), MODEL_MAX_THUMB);
    base = {
      source: data.source, key: data.pixelKey, P0,
      mats: Array.from({ length: L }, () => new Array(H).fill(null)),
      peaks: Array.from({ length: L }, () => new Array(H).fill(0)),
    };
    return base;
  }

  /** Pool every head not pooled yet, one step each (a drawing stopped
   *  half-way leaves the rest to the next one for the same numbers). */
  function* poolBase(data, b) {
    const { L, H, K } = data;
    for (let l = 0; l < L; l++) {
      for (let h = 0; h < H; h++) {
        if (b.mats[l][h]) continue;
        const mat = data.mat(l, h);
        const pooled = b.P0 === K ? mat : poolMatrix(mat, K, b.P0);
        b.mats[l][h] = pooled;
        b.peaks[l][h] = maxOf(pooled);
        yield;
      }
    }
  }

  /** The atlas of a pooled base at thumbnail size S (kept while base, theme
   *  and size stay), one step per layer. */
  function* thumbnails(data, b, S) {
    const P = Math.min(S, b.P0);
    const key = `${theme.name}|${P}`;
    if (px && px.base === b && px.key === key) return px;
    const { L, H } = data;
    const lut = colourTable(theme.seq);
    const img = new ImageData(H * P, L * P); // into the atlas at the end: a drawing stopped half-way leaves it as it was
    const out = new Uint32Array(img.data.buffer);
    const rowLen = H * P;
    for (let l = 0; l < L; l++) {
      for (let h = 0; h < H; h++) {
        const pooled = P === b.P0 ? b.mats[l][h] : poolMatrix(b.mats[l][h], b.P0, P);
        const scale = 255 / (b.peaks[l][h] || 1);
        let o = l * P * rowLen + h * P;
        for (let y = 0, p = 0; y < P; y++, o += rowLen) {
          for (let x = 0; x < P; x++, p++) out[o + x] = lut[Math.min(255, Math.round(pooled[p] * scale))];
        }
      }
      yield;
    }
    const atlas = (px && px.atlas) || document.createElement('canvas');
    if (atlas.width !== H * P) atlas.width = H * P;
    if (atlas.height !== L * P) atlas.height = L * P;
    atlas.getContext('2d').putImageData(img, 0, 0);
    px = { base: b, key, P, atlas, peaks: b.peaks };
    return px;
  }

  /** The atlas onto the page's canvas, one head per thumbnail; nothing to do
   *  when the canvas already shows this atlas at this geometry. */
  function paintGrid(sel, pix, g) {
    const canvas = sel.style('left', `${g.left}px`).style('top', `${g.top}px`).node();
    const dpr = Math.min(2, globalThis.devicePixelRatio || 1);
    const painted = `${g.S}|${g.gap}|${g.gridW}|${g.gridH}|${dpr}`;
    if (canvas.blPainted && canvas.blPainted.px === pix && canvas.blPainted.geometry === painted) return;
    const { S, gap, gridW, gridH } = g;
    const ctx = sizeCanvas(canvas, gridW, gridH);
    ctx.clearRect(0, 0, gridW, gridH);
    ctx.imageSmoothingEnabled = false;
    const { P, atlas, peaks } = pix;
    for (let l = 0; l < peaks.length; l++) {
      for (let h = 0; h < peaks[l].length; h++) ctx.drawImage(atlas, h * P, l * P, P, P, h * (S + gap), l * (S + gap), S, S);
    }
    canvas.blPainted = { px: pix, geometry: painted };
    exportable(canvas, () => ({
      node: null,
      note: `Model-view thumbnails (${peaks.length} layers × ${peaks[0].length} heads) are one embedded PNG image; open a thumbnail as a heatmap for a vector export of its cells.`,
    }));
  }

  function axisLabels(svg, data, g) {
    const step = g.S + g.gap;
    svg.select('g.layer-labels').selectAll('text').data(d3.range(data.L)).join('text')
      .attr('class', 'layer-label').attr('x', g.left - 8).attr('y', (l) => g.top + l * step + g.S / 2)
      .attr('dy', '0.35em').attr('text-anchor', 'end').attr('font-size', 11).attr('fill', theme.fg)
      .text((l) => (g.narrow ? `L${l}` : `layer ${l}`));
    svg.select('g.head-labels').selectAll('text').data(d3.range(data.H)).join('text')
      .attr('class', 'head-label').attr('x', (h) => g.left + h * step + g.S / 2).attr('y', g.top - 8)
      .attr('text-anchor', 'middle').attr('font-size', g.S < 20 ? 9 : 11).attr('fill', theme.fg)
      .text((h) => (g.S < 14 ? `${h}` : `h${h}`));
  }

  /** Place a highlight box around thumbnail (l, h). */
  function boxAt(sel, g, l, h) {
    return sel.attr('x', g.left + h * (g.S + g.gap) - 2).attr('y', g.top + l * (g.S + g.gap) - 2)
      .attr('width', g.S + 4).attr('height', g.S + 4).attr('rx', 3);
  }

  /** The open head (solid), the hovered one (dashed), the keyboard cursor. */
  function marks({ data, g, svg }) {
    const off = [...(data.off || [])].map((k) => k.split('/').map(Number));
    const step = g.S + g.gap;
    const x = svg.select('g.mv-offs').selectAll('g.mv-off').data(off, (d) => d.join('/')).join((e) => {
      const n = e.append('g').attr('class', 'mv-off');
      n.append('rect');
      n.append('path');
      return n;
    }).attr('data-layer', (d) => d[0]).attr('data-head', (d) => d[1])
      .attr('transform', ([l, h]) => `translate(${g.left + h * step},${g.top + l * step})`);
    x.select('rect').attr('width', g.S).attr('height', g.S).attr('fill', theme.grid).attr('opacity', 0.85);
    x.select('path').attr('d', `M2,2L${g.S - 2},${g.S - 2}M${g.S - 2},2L2,${g.S - 2}`).attr('stroke', theme.muted).attr('stroke-width', 1.5);
    const current = svg.select('rect.mv-current').attr('fill', 'none').attr('stroke', theme.accent).attr('stroke-width', 2.5);
    if (data.head === 'mean') current.attr('visibility', 'hidden');
    else boxAt(current.attr('visibility', 'visible'), g, data.layer, data.head);
    svg.select('rect.mv-hover').attr('fill', 'none').attr('stroke', theme.fg)
      .attr('stroke-width', 1.5).attr('stroke-dasharray', '3 2').attr('visibility', 'hidden');
    svg.select('rect.mv-focus').attr('fill', 'none').attr('stroke', theme.fg)
      .attr('stroke-width', 3).attr('pointer-events', 'none').attr('visibility', 'hidden');
  }

  const describe = (c) => `layer ${c.l}, head ${c.h}`;

  function wirePointer({ data, g, svg, peaks, info }) {
    const hover = svg.select('rect.mv-hover');
    const cellAt = (ev) => {
      const [x, y] = d3.pointer(ev);
      const h = Math.floor((x - g.left) / (g.S + g.gap));
      const l = Math.floor((y - g.top) / (g.S + g.gap));
      return l >= 0 && l < data.L && h >= 0 && h < data.H ? { l, h } : null;
    };
    svg.select('rect.mv-hit').attr('x', g.left).attr('y', g.top).attr('width', g.gridW).attr('height', g.gridH)
      .attr('fill', 'transparent').style('cursor', 'pointer')
      .on('mousemove', (ev) => {
        const c = cellAt(ev);
        if (!c) { hover.attr('visibility', 'hidden'); tooltip.hide(); return; }
        boxAt(hover.attr('visibility', 'visible'), g, c.l, c.h);
        const isOff = data.off && data.off.has(`${c.l}/${c.h}`);
        tooltip.show(ev, [describe(c) + (isOff ? ' (switched off)' : ''), `largest ${data.valueName}: ${peaks[c.l][c.h].toFixed(3)}`, data.ablating ? 'click: switch this head off / on' : 'click: open as heatmap']);
        info.set(`Layer ${c.l}, head ${c.h}: largest ${data.valueName} ${peaks[c.l][c.h].toFixed(3)}`);
      })
      .on('mouseleave', () => { hover.attr('visibility', 'hidden'); tooltip.hide(); })
      .on('click', (ev) => {
        const c = cellAt(ev);
        if (c) { tooltip.hide(); onOpen(c.l, c.h); }
      });
  }

  /** Keyboard: one tab stop; arrows move a solid box, Enter opens it. */
  function wireKeyboard({ data, g, svg, peaks, info }) {
    const { L, H } = data;
    if (kbd) kbd = { l: Math.min(kbd.l, L - 1), h: Math.min(kbd.h, H - 1) };
    const focusBox = svg.select('rect.mv-focus');
    const hit = svg.select('rect.mv-hit');
    const showKbd = () => {
      boxAt(focusBox.attr('visibility', 'visible'), g, kbd.l, kbd.h);
      hit.attr('aria-label', `Thumbnail grid, ${describe(kbd)}: arrow keys move, Enter opens it as a heatmap`);
      info.set(`${describe(kbd)}: largest ${data.valueName} ${peaks[kbd.l][kbd.h].toFixed(3)} (Enter opens it)`);
      const r = focusBox.node().getBoundingClientRect();
      tooltip.show({ clientX: r.right, clientY: r.bottom }, [describe(kbd), `largest ${data.valueName}: ${peaks[kbd.l][kbd.h].toFixed(3)}`, 'Enter: open as heatmap · arrows: move'], hit.node());
    };
    const start = () => { if (!kbd) kbd = { l: data.layer, h: data.head === 'mean' ? 0 : data.head }; };
    hit.attr('tabindex', 0)
      .attr('role', 'application')
      .attr('aria-roledescription', 'thumbnail grid')
      .attr('aria-label', `Thumbnail grid of ${L} layers × ${H} heads: arrow keys move, Enter opens one as a heatmap`)
      .on('focus', function () {
        if (!this.matches(':focus-visible')) return; // a mouse click opens directly
        start();
        showKbd();
      })
      .on('blur', () => { focusBox.attr('visibility', 'hidden'); tooltip.hide(); })
      .on('keydown', (ev) => {
        start();
        const { l, h } = kbd;
        const moves = {
          ArrowLeft: [l, h - 1], ArrowRight: [l, h + 1], ArrowUp: [l - 1, h], ArrowDown: [l + 1, h],
          Home: [l, 0], End: [l, H - 1], PageUp: [0, h], PageDown: [L - 1, h],
        };
        if (ev.key === 'Enter' || ev.key === ' ') {
          ev.preventDefault();
          tooltip.hide();
          onOpen(l, h);
          return;
        }
        if (!moves[ev.key]) return;
        ev.preventDefault();
        const [nl, nh] = moves[ev.key];
        kbd = { l: Math.max(0, Math.min(L - 1, nl)), h: Math.max(0, Math.min(H - 1, nh)) };
        showKbd();
      });
  }

  function legend(svg, data, g) {
    const lg = svg.select('g.legend').attr('transform', `translate(${Math.min(g.left, 8)},${g.top + g.gridH + 30})`);
    const key = `${data.valueName}|${theme.name}|${Math.min(180, g.W - 20)}`;
    if (lg.node().blKey === key) return; // its axis is the slowest part of a redraw
    lg.node().blKey = key;
    drawLegendBar(lg, { interp: theme.seq, domain: [0, 1], title: `${data.valueName} ÷ each thumbnail’s own maximum`, id: 'mv', width: Math.min(180, g.W - 20) });
    lg.selectAll('g.legend-axis text, text.legend-title').attr('fill', theme.fg);
    lg.selectAll('text.legend-title').attr('font-size', 11);
    lg.selectAll('g.legend-axis line, g.legend-axis path').attr('stroke', theme.muted);
  }

  /** What an export adds around the stage, as last drawn (export.js). */
  view.exportContext = () => exported;
  view.theme = function (t) { if (!arguments.length) return theme; theme = t; return view; };
  view.size = function (b) { if (!arguments.length) return frame; frame = { width: b.width, height: b.height || null }; return view; };
  /** Kept for callers of the old API. */
  view.width = function (w) { if (!arguments.length) return frame.width; frame = { width: w, height: null }; return view; };
  view.onOpen = function (f) { if (!arguments.length) return onOpen; onOpen = f; return view; };
  return view;
}

/** The registry entry (views/index.js): what the page controller needs. */
export const descriptor = {
  id: 'model',
  label: 'Model view',
  size: ({ L, H }) => modelFrame({ layers: L, heads: H }), // the embed frame (layout.js)
  controls: { layer: false, head: false, mean: false, words: true, mode: true },
  // its export: one K x K matrix per layer and head
  shown: (run, s) => shownMatrices(run, s, { blocks: ({ L, H, block }) => [...Array(L).keys()].flatMap((l) => [...Array(H).keys()].map((h) => block(l, h))) }),
  snapshot: { layers: 'all', heads: 'all', draws: 'heads' }, // what a snapshot holds (lib/snapshot.js)
  needs: (s) => ({ norms: s.mode === 'norm' }),
  create: (ctx) => modelView().onOpen((layer, head) => (ctx.ablating && ctx.ablating() ? ctx.toggleAblate(layer, head) : ctx.openHead(layer, head))),
  prepare(run, s, env) {
    const { axis, src, lines, valueName, modeWord } = env;
    const { L, H, T } = run;
    const cache = new Map();
    const n = T * T;
    return {
      L, H, K: axis.K, labels: axis.labels, layer: s.layer, head: s.head, valueName,
      off: maskSet(s.ablate, L, H), ablating: !!(env.ablating && env.ablating()),
      // What the thumbnails' pixels are made of: the run's per-layer arrays
      // (the same object until the next run) and how the axis shapes them.
      source: src,
      pixelKey: [s.mode, s.words, s.hide, s.renorm].join('|'),
      // Read-only views into the run (no copy of the 512 x 512 matrices).
      mat: (l, h) => {
        const k = `${l}/${h}`;
        if (!cache.has(k)) cache.set(k, axis.transform(src[l].subarray(h * n, h * n + n)));
        return cache.get(k);
      },
      title: `Model view — ${L} layers × ${H} heads (${modeWord}); click a thumbnail to open it`,
      notes: lines,
    };
  },
};
