// model.js — the model view: a thumbnail of every layer x head matrix, all
// painted into ONE canvas (144 heads x 512 tokens stays fast: each matrix is
// max-pooled to the thumbnail size first). Click a thumbnail to open it.
// Keyboard: the grid is one tab stop; arrow keys move a highlighted
// thumbnail (Home/End: first/last head, PageUp/PageDown: first/last layer),
// Enter or Space opens it. Export SVG keeps the thumbnails as one PNG image.
//
// data = {L, H, K, mat(l, h) -> K*K Float32Array, layer, head, valueName,
//         legendLines[], title}

import { THEMES, sizeCanvas, tooltip, drawLegendBar, exportable } from './common.js';
import { poolMatrix, maxOf } from '../data.js';

const d3 = globalThis.d3;

export function modelView() {
  let theme = THEMES.light;
  let width = 900;
  let onOpen = () => {};
  let kbd = null; // {l, h}: the thumbnail the keyboard cursor is on

  function view(root, data) {
    render(root);
    update(root, data);
  }

  function render(root) {
    root.classed('bl-modelview', true);
    root.selectAll('div.view-title').data([null]).join('div').attr('class', 'view-title');
    const stage = root.selectAll('div.mv-stage').data([null]).join('div').attr('class', 'mv-stage stage');
    stage.selectAll('canvas.mv-thumbs').data([null]).join('canvas').attr('class', 'mv-thumbs');
    const svg = stage.selectAll('svg.mv-svg').data([null]).join('svg').attr('class', 'mv-svg');
    svg.selectAll('g.layer-labels').data([null]).join('g').attr('class', 'layer-labels');
    svg.selectAll('g.head-labels').data([null]).join('g').attr('class', 'head-labels');
    svg.selectAll('rect.mv-current').data([null]).join('rect').attr('class', 'mv-current');
    svg.selectAll('rect.mv-hover').data([null]).join('rect').attr('class', 'mv-hover');
    svg.selectAll('rect.mv-focus').data([null]).join('rect').attr('class', 'mv-focus');
    svg.selectAll('rect.mv-hit').data([null]).join('rect').attr('class', 'mv-hit');
    svg.selectAll('g.legend').data([null]).join('g').attr('class', 'legend');
  }

  function update(root, data) {
    const { L, H, K } = data;
    root.select('.view-title').text(data.title);
    const m = { top: 24, left: 62, gap: 6 };
    const S = Math.max(36, Math.min(96, Math.floor((width - m.left - 10) / H) - m.gap)); // thumbnail px
    const gridW = H * (S + m.gap);
    const gridH = L * (S + m.gap);
    const W = Math.max(520, m.left + gridW + 10);
    const Hpx = m.top + gridH + 80 + 15 * data.legendLines.length;
    const stage = root.select('.mv-stage').style('width', `${W}px`).style('height', `${Hpx}px`);

    // One pooled matrix per head, shared colour scale per thumbnail (its own max,
    // so weak heads still show their pattern; the tooltip gives the numbers).
    const canvas = stage.select('canvas.mv-thumbs').style('left', `${m.left}px`).style('top', `${m.top}px`).node();
    const ctx = sizeCanvas(canvas, gridW, gridH);
    ctx.clearRect(0, 0, gridW, gridH);
    const P = Math.min(S, Math.max(K, 1)); // pooled resolution
    const lut = d3.range(256).map((i) => d3.rgb(theme.seq(i / 255)));
    const tmp = document.createElement('canvas');
    tmp.width = P; tmp.height = P;
    const tctx = tmp.getContext('2d');
    const img = tctx.createImageData(P, P);
    const peaks = [];
    ctx.imageSmoothingEnabled = false;
    for (let l = 0; l < L; l++) {
      peaks.push([]);
      for (let h = 0; h < H; h++) {
        const mat = data.mat(l, h);
        const pooled = poolMatrix(mat, K, P);
        const vmax = maxOf(pooled) || 1;
        peaks[l].push(maxOf(mat));
        for (let p = 0; p < P * P; p++) {
          const c = lut[Math.min(255, Math.round((255 * pooled[p]) / vmax))];
          img.data[4 * p] = c.r; img.data[4 * p + 1] = c.g; img.data[4 * p + 2] = c.b; img.data[4 * p + 3] = 255;
        }
        tctx.putImageData(img, 0, 0);
        ctx.drawImage(tmp, h * (S + m.gap), l * (S + m.gap), S, S);
      }
    }
    exportable(canvas, () => ({
      node: null,
      note: `Model-view thumbnails (${L} layers × ${H} heads) are one embedded PNG image; open a thumbnail as a heatmap for a vector export of its cells.`,
    }));

    const svg = stage.select('svg.mv-svg').attr('width', W).attr('height', Hpx)
      .attr('font-family', 'system-ui, sans-serif');
    svg.select('g.layer-labels').selectAll('text').data(d3.range(L)).join('text')
      .attr('class', 'layer-label').attr('x', m.left - 8).attr('y', (l) => m.top + l * (S + m.gap) + S / 2)
      .attr('dy', '0.35em').attr('text-anchor', 'end').attr('font-size', 11).attr('fill', theme.fg)
      .text((l) => `layer ${l}`);
    svg.select('g.head-labels').selectAll('text').data(d3.range(H)).join('text')
      .attr('class', 'head-label').attr('x', (h) => m.left + h * (S + m.gap) + S / 2).attr('y', m.top - 8)
      .attr('text-anchor', 'middle').attr('font-size', 11).attr('fill', theme.fg)
      .text((h) => `h${h}`);

    const box = (sel, l, h) => sel.attr('x', m.left + h * (S + m.gap) - 2).attr('y', m.top + l * (S + m.gap) - 2)
      .attr('width', S + 4).attr('height', S + 4).attr('rx', 3);
    const current = svg.select('rect.mv-current').attr('fill', 'none').attr('stroke', theme.accent).attr('stroke-width', 2.5);
    if (data.head === 'mean') current.attr('visibility', 'hidden');
    else box(current.attr('visibility', 'visible'), data.layer, data.head);
    const hover = svg.select('rect.mv-hover').attr('fill', 'none').attr('stroke', theme.fg)
      .attr('stroke-width', 1.5).attr('stroke-dasharray', '3 2').attr('visibility', 'hidden');
    const cellAt = (ev) => {
      const [x, y] = d3.pointer(ev);
      const h = Math.floor((x - m.left) / (S + m.gap));
      const l = Math.floor((y - m.top) / (S + m.gap));
      return l >= 0 && l < L && h >= 0 && h < H ? { l, h } : null;
    };
    svg.select('rect.mv-hit').attr('x', m.left).attr('y', m.top).attr('width', gridW).attr('height', gridH)
      .attr('fill', 'transparent').style('cursor', 'pointer')
      .on('mousemove', (ev) => {
        const c = cellAt(ev);
        if (!c) { hover.attr('visibility', 'hidden'); tooltip.hide(); return; }
        box(hover.attr('visibility', 'visible'), c.l, c.h);
        tooltip.show(ev, [`layer ${c.l}, head ${c.h}`, `largest ${data.valueName}: ${peaks[c.l][c.h].toFixed(3)}`, 'click: open as heatmap']);
      })
      .on('mouseleave', () => { hover.attr('visibility', 'hidden'); tooltip.hide(); })
      .on('click', (ev) => {
        const c = cellAt(ev);
        if (c) { tooltip.hide(); onOpen(c.l, c.h); }
      });

    // Keyboard cursor: a solid box that follows the arrow keys.
    if (kbd) kbd = { l: Math.min(kbd.l, L - 1), h: Math.min(kbd.h, H - 1) };
    const focusBox = svg.select('rect.mv-focus').attr('fill', 'none').attr('stroke', theme.fg)
      .attr('stroke-width', 3).attr('pointer-events', 'none').attr('visibility', 'hidden');
    const hitNode = svg.select('rect.mv-hit').node();
    const describe = (c) => `layer ${c.l}, head ${c.h}`;
    const showKbd = () => {
      box(focusBox.attr('visibility', 'visible'), kbd.l, kbd.h);
      hitNode.setAttribute('aria-label', `Thumbnail grid, ${describe(kbd)}: arrow keys move, Enter opens it as a heatmap`);
      const r = focusBox.node().getBoundingClientRect();
      tooltip.show({ clientX: r.right, clientY: r.bottom }, [describe(kbd), `largest ${data.valueName}: ${peaks[kbd.l][kbd.h].toFixed(3)}`, 'Enter: open as heatmap · arrows: move']);
    };
    svg.select('rect.mv-hit')
      .attr('tabindex', 0)
      .attr('role', 'application')
      .attr('aria-roledescription', 'thumbnail grid')
      .attr('aria-label', `Thumbnail grid of ${L} layers × ${H} heads: arrow keys move, Enter opens one as a heatmap`)
      .on('focus', function () {
        if (!this.matches(':focus-visible')) return; // a mouse click opens directly
        if (!kbd) kbd = { l: data.layer, h: data.head === 'mean' ? 0 : data.head };
        showKbd();
      })
      .on('blur', () => { focusBox.attr('visibility', 'hidden'); tooltip.hide(); })
      .on('keydown', (ev) => {
        if (!kbd) kbd = { l: data.layer, h: data.head === 'mean' ? 0 : data.head };
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

    const lg = svg.select('g.legend').attr('transform', `translate(${m.left},${m.top + gridH + 30})`);
    drawLegendBar(lg, { interp: theme.seq, domain: [0, 1], title: `${data.valueName} (each thumbnail scaled to its own maximum)`, id: 'mv' });
    lg.selectAll('g.legend-axis text, text.legend-title').attr('fill', theme.fg);
    lg.selectAll('g.legend-axis line, g.legend-axis path').attr('stroke', theme.muted);
    lg.selectAll('text.legend-line').data(data.legendLines).join('text').attr('class', 'legend-line')
      .attr('y', (d, i) => 40 + i * 15).attr('font-size', 11).attr('fill', theme.muted).text((d) => d);
  }

  view.theme = function (t) { if (!arguments.length) return theme; theme = t; return view; };
  view.width = function (w) { if (!arguments.length) return width; width = w; return view; };
  view.onOpen = function (f) { if (!arguments.length) return onOpen; onOpen = f; return view; };
  return view;
}
