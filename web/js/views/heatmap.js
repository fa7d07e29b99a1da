// heatmap.js — one attention matrix (one head, or the mean over heads).
// Rows are queries, columns are keys. Cells are painted on a canvas (512
// tokens = 262k cells, far too many for SVG); labels, the hover cursor and
// the legend are SVG. Export SVG writes the cells as <rect>s up to 128 x 128
// cells (common.js SVG_MAX_CELLS), as an embedded PNG above that.
//
// Usage: heatmapView().theme(THEMES.light).onQuery(fn)(root, data) with data =
//   {K, labels[K], matrix Float32Array[K*K], valueName, legendLines[], title}

import { THEMES, sizeCanvas, tooltip, fmt, drawLegendBar, textWidth, clip, exportable, cellMarks, SVG_MAX_CELLS } from './common.js';

const d3 = globalThis.d3;

export function heatmapView() {
  let theme = THEMES.light;
  let maxSize = 620;
  let onQuery = () => {};

  function view(root, data) {
    render(root);
    update(root, data);
  }

  // Skeleton, created once per root.
  function render(root) {
    root.classed('bl-heatmap', true);
    root.selectAll('div.hm-title').data([null]).join('div').attr('class', 'view-title');
    const stage = root.selectAll('div.hm-stage').data([null]).join('div').attr('class', 'hm-stage stage');
    stage.selectAll('canvas.hm-cells').data([null]).join('canvas').attr('class', 'hm-cells');
    const svg = stage.selectAll('svg.hm-svg').data([null]).join('svg').attr('class', 'hm-svg');
    svg.selectAll('g.rows').data([null]).join('g').attr('class', 'rows');
    svg.selectAll('g.cols').data([null]).join('g').attr('class', 'cols');
    svg.selectAll('rect.hm-cursor-row').data([null]).join('rect').attr('class', 'hm-cursor-row');
    svg.selectAll('rect.hm-cursor-col').data([null]).join('rect').attr('class', 'hm-cursor-col');
    svg.selectAll('rect.hm-hit').data([null]).join('rect').attr('class', 'hm-hit');
    svg.selectAll('g.legend').data([null]).join('g').attr('class', 'legend');
    svg.selectAll('g.axis-names').data([null]).join('g').attr('class', 'axis-names');
  }

  function update(root, data) {
    const { K, labels, matrix } = data;
    const cell = Math.max(K > 256 ? 2 : 3, Math.min(30, Math.floor(maxSize / Math.max(1, K))));
    const side = cell * K;
    const step = Math.ceil(11 / cell); // label every step-th token when cells are tiny
    const labelW = Math.min(130, Math.max(40, d3.max(labels, (l) => textWidth(clip(l))) || 40));
    const m = { top: labelW + 22, left: labelW + 22, right: 24, bottom: 110 };
    const W = Math.max(560, m.left + side + m.right);
    const H = m.top + side + m.bottom;
    const vmax = d3.max(matrix) || 1;

    root.select('.view-title').text(data.title);
    const stage = root.select('.hm-stage').style('width', `${W}px`).style('height', `${H}px`);

    // Cells.
    const canvas = stage.select('canvas.hm-cells').style('left', `${m.left}px`).style('top', `${m.top}px`).node();
    const ctx = sizeCanvas(canvas, side, side);
    ctx.fillStyle = theme.bg;
    ctx.fillRect(0, 0, side, side);
    const colour = (v) => theme.seq(v / vmax);
    if (K <= 160) {
      for (let i = 0; i < K; i++) {
        for (let j = 0; j < K; j++) {
          ctx.fillStyle = colour(matrix[i * K + j]);
          ctx.fillRect(j * cell, i * cell, cell, cell);
        }
      }
    } else {
      // Large inputs: write pixels directly (one rgb lookup per 1/256 of the range).
      const lut = d3.range(256).map((i) => d3.rgb(theme.seq(i / 255)));
      const img = new ImageData(K, K);
      for (let p = 0; p < K * K; p++) {
        const c = lut[Math.min(255, Math.round((255 * matrix[p]) / vmax))];
        img.data[4 * p] = c.r; img.data[4 * p + 1] = c.g; img.data[4 * p + 2] = c.b; img.data[4 * p + 3] = 255;
      }
      const tmp = document.createElement('canvas');
      tmp.width = K; tmp.height = K;
      tmp.getContext('2d').putImageData(img, 0, 0);
      ctx.imageSmoothingEnabled = false;
      ctx.drawImage(tmp, 0, 0, side, side);
    }
    exportable(canvas, () => {
      if (K * K > SVG_MAX_CELLS) {
        return { node: null, note: `Heatmap cells (${K} × ${K}) are an embedded PNG image: more than 128 × 128 cells would make the SVG too heavy.` };
      }
      return {
        node: cellMarks('hm-cells', (put) => {
          for (let i = 0; i < K; i++) for (let j = 0; j < K; j++) put(j * cell, i * cell, cell, cell, colour(matrix[i * K + j]));
        }),
        note: `Heatmap cells: ${K * K} vector rectangles (${K} × ${K}).`,
      };
    });

    const svg = stage.select('svg.hm-svg').attr('width', W).attr('height', H)
      .attr('font-family', 'system-ui, sans-serif').attr('font-size', 11).attr('fill', theme.fg);

    const shown = labels.map((l, i) => ({ l, i })).filter((d) => d.i % step === 0);
    const fontSize = Math.min(12, Math.max(8, cell - 2));
    svg.select('g.rows').attr('transform', `translate(${m.left - 6},${m.top})`)
      .selectAll('text.row-label').data(shown, (d) => d.i)
      .join('text')
      .attr('class', 'row-label')
      .attr('x', 0).attr('y', (d) => d.i * cell + cell / 2)
      .attr('dy', '0.35em').attr('text-anchor', 'end').attr('font-size', fontSize)
      .attr('fill', theme.fg)
      .text((d) => clip(d.l))
      .on('click', (ev, d) => onQuery(d.i))
      .on('mouseenter', (ev, d) => tooltip.show(ev, [`query ${d.i}: ${d.l}`, 'click: explain this row (neuron view)']))
      .on('mouseleave', () => tooltip.hide());
    svg.select('g.cols').attr('transform', `translate(${m.left},${m.top - 6})`)
      .selectAll('text.col-label').data(shown, (d) => d.i)
      .join('text')
      .attr('class', 'col-label')
      .attr('transform', (d) => `translate(${d.i * cell + cell / 2},0) rotate(-90)`)
      .attr('dy', '0.35em').attr('font-size', fontSize).attr('fill', theme.fg)
      .text((d) => clip(d.l));

    svg.select('g.axis-names').selectAll('text').data([
      { t: 'keys (attended to) →', x: m.left, y: 12, a: 'start' },
      { t: 'queries ↓', x: 4, y: 12, a: 'start' },
    ]).join('text').attr('x', (d) => d.x).attr('y', (d) => d.y).attr('text-anchor', (d) => d.a)
      .attr('fill', theme.muted).attr('font-size', 11).text((d) => d.t);

    // Hover: value and the two tokens; cursor rectangles show row and column.
    const cur = svg.selectAll('rect.hm-cursor-row, rect.hm-cursor-col')
      .attr('fill', 'none').attr('stroke', theme.accent).attr('stroke-width', 1.5).attr('visibility', 'hidden');
    svg.select('rect.hm-hit').attr('x', m.left).attr('y', m.top).attr('width', side).attr('height', side)
      .attr('fill', 'transparent')
      .on('mousemove', (ev) => {
        const [x, y] = d3.pointer(ev);
        const j = Math.floor((x - m.left) / cell);
        const i = Math.floor((y - m.top) / cell);
        if (i < 0 || j < 0 || i >= K || j >= K) return;
        svg.select('rect.hm-cursor-row').attr('visibility', 'visible')
          .attr('x', m.left).attr('y', m.top + i * cell).attr('width', side).attr('height', cell);
        svg.select('rect.hm-cursor-col').attr('visibility', 'visible')
          .attr('x', m.left + j * cell).attr('y', m.top).attr('width', cell).attr('height', side);
        tooltip.show(ev, [`${labels[i]} → ${labels[j]}`, `${data.valueName}: ${fmt(matrix[i * K + j])}`, `query ${i}, key ${j}`]);
      })
      .on('mouseleave', () => { cur.attr('visibility', 'hidden'); tooltip.hide(); })
      .on('click', (ev) => {
        const [, y] = d3.pointer(ev);
        const i = Math.floor((y - m.top) / cell);
        if (i >= 0 && i < K) onQuery(i);
      });

    // Legend: colour bar and the sentences that say what rows mean.
    const lg = svg.select('g.legend').attr('transform', `translate(${m.left},${m.top + side + 34})`);
    drawLegendBar(lg, { interp: theme.seq, domain: [0, vmax], title: data.valueName, id: 'hm' });
    lg.selectAll('g.legend-axis text').attr('fill', theme.fg);
    lg.selectAll('g.legend-axis line, g.legend-axis path').attr('stroke', theme.muted);
    lg.selectAll('text.legend-title').attr('fill', theme.fg);
    lg.selectAll('text.legend-line').data(data.legendLines).join('text').attr('class', 'legend-line')
      .attr('x', 0).attr('y', (d, i) => 42 + i * 15).attr('fill', theme.muted).attr('font-size', 11)
      .text((d) => d);
  }

  view.theme = function (t) { if (!arguments.length) return theme; theme = t; return view; };
  view.maxSize = function (v) { if (!arguments.length) return maxSize; maxSize = v; return view; };
  view.onQuery = function (f) { if (!arguments.length) return onQuery; onQuery = f; return view; };
  return view;
}
