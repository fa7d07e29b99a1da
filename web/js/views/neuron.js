// neuron.js — the neuron view: how one head turns one query token's vector
// into its attention row. Columns, from the real q/k vectors of the layer:
//   key k_j  |  q × k_j (element-wise)  |  q · k_j  |  q · k_j / √d  |  softmax  (| ‖α f(x)‖)
// Vectors are painted on canvases (orange < 0 < blue); numbers are SVG text.
// Export SVG writes the vector cells as <rect>s (up to SVG_MAX_CELLS per strip).
//
// data = {labels[R], rows[R] (token index of each shown key), query, queryLabel,
//         tokens[T] (for the query picker), d, cols (data.js neuronColumns),
//         weights[R] (softmax shown, renormalized or not), norms[R] | null,
//         legendLines[], title}

import { THEMES, sizeCanvas, tooltip, fmt, clip, textWidth, exportable, cellMarks, SVG_MAX_CELLS } from './common.js';

const d3 = globalThis.d3;

export function neuronView() {
  let theme = THEMES.light;
  let onQuery = () => {};
  let width = 1100;

  function view(root, data) {
    render(root);
    update(root, data);
  }

  function render(root) {
    root.classed('bl-neuronview', true);
    root.selectAll('div.view-title').data([null]).join('div').attr('class', 'view-title');
    const bar = root.selectAll('div.nv-bar').data([null]).join('div').attr('class', 'nv-bar');
    const lab = bar.selectAll('label.nv-query').data([null]).join('label').attr('class', 'nv-query');
    lab.selectAll('span').data([null]).join('span').text('Query token (the row being explained): ');
    lab.selectAll('select').data([null]).join('select').attr('id', 'neuron-query');
    bar.selectAll('button.nv-prev').data([null]).join('button').attr('class', 'nv-prev').attr('type', 'button').text('◀ previous');
    bar.selectAll('button.nv-next').data([null]).join('button').attr('class', 'nv-next').attr('type', 'button').text('next ▶');
    const stage = root.selectAll('div.nv-stage').data([null]).join('div').attr('class', 'nv-stage stage');
    stage.selectAll('canvas.nv-q').data([null]).join('canvas').attr('class', 'nv-q');
    stage.selectAll('canvas.nv-k').data([null]).join('canvas').attr('class', 'nv-k');
    stage.selectAll('canvas.nv-p').data([null]).join('canvas').attr('class', 'nv-p');
    const svg = stage.selectAll('svg.nv-svg').data([null]).join('svg').attr('class', 'nv-svg');
    for (const c of ['heads', 'qrow', 'rows', 'hit', 'legend']) svg.selectAll(`g.${c}`).data([null]).join('g').attr('class', c);
  }

  function update(root, data) {
    const { labels, rows, cols, d } = data;
    const R = rows.length;
    root.select('.view-title').text(data.title);

    // Query picker: every token of the input (specials included).
    root.select('#neuron-query').selectAll('option').data(data.tokens.map((t, i) => ({ t, i })))
      .join('option').attr('value', (o) => o.i).text((o) => `${o.i}: ${o.t}`);
    root.select('#neuron-query').property('value', String(data.query))
      .on('change', (ev) => onQuery(Number(ev.target.value)));
    root.select('button.nv-prev').property('disabled', data.query <= 0).on('click', () => onQuery(data.query - 1));
    root.select('button.nv-next').property('disabled', data.query >= data.tokens.length - 1).on('click', () => onQuery(data.query + 1));

    const rowH = R > 80 ? 13 : 17;
    const font = R > 80 ? 10 : 11;
    const labelW = Math.min(130, Math.max(48, d3.max(labels, (l) => textWidth(clip(l), font)) || 48));
    const fixed = labelW + 10 + 36 + 66 + 80 + (data.norms ? 260 : 130) + 10;
    const cw = Math.max(1, Math.min(7, Math.floor(Math.min(224 * 2, width - fixed) / (2 * d)))); // px per vector element
    const stripW = d * cw;
    const x = {};
    x.k = labelW + 10;
    x.p = x.k + stripW + 18;
    x.dot = x.p + stripW + 18;
    x.scaled = x.dot + 66;
    x.soft = x.scaled + 80;
    x.norm = x.soft + 130;
    const W = (data.norms ? x.norm + 130 : x.norm) + 10;
    const top = 96; // header block (query vector + column titles)
    const Hpx = top + R * rowH + 36 + 15 * data.legendLines.length;
    const stage = root.select('.nv-stage').style('width', `${W}px`).style('height', `${Hpx}px`);

    // Diverging colour scales, symmetric around 0, saturating at the 98th
    // percentile of |value| so one outlier element does not wash out the rest.
    const scaleOf = (vals) => d3.quantile(vals.map(Math.abs).sort(d3.ascending), 0.98) || 1;
    const amax = scaleOf([...cols.q, ...cols.keys.flat()]);
    const pmax = scaleOf(cols.products.flat());
    const vecColour = (v, m) => theme.div(Math.max(-1, Math.min(1, v / m)) * 0.5 + 0.5);

    // q vector.
    const qc = sizeCanvas(stage.select('canvas.nv-q').style('left', `${x.k}px`).style('top', '22px').node(), stripW, rowH);
    cols.q.forEach((v, c) => { qc.fillStyle = vecColour(v, amax); qc.fillRect(c * cw, 0, cw, rowH - 1); });
    // Keys and products, one row per shown key.
    const kc = sizeCanvas(stage.select('canvas.nv-k').style('left', `${x.k}px`).style('top', `${top}px`).node(), stripW, R * rowH);
    const pc = sizeCanvas(stage.select('canvas.nv-p').style('left', `${x.p}px`).style('top', `${top}px`).node(), stripW, R * rowH);
    rows.forEach((j, r) => {
      for (let c = 0; c < d; c++) {
        kc.fillStyle = vecColour(cols.keys[j][c], amax);
        kc.fillRect(c * cw, r * rowH, cw, rowH - 1);
        pc.fillStyle = vecColour(cols.products[j][c], pmax);
        pc.fillRect(c * cw, r * rowH, cw, rowH - 1);
      }
    });
    const strip = (name, nRows, value, m) => () => {
      if (nRows * d > SVG_MAX_CELLS) {
        return { node: null, note: `Neuron-view ${name} strip (${nRows} × ${d} cells) is an embedded PNG image: too many cells for vector export.` };
      }
      return {
        node: cellMarks(`nv-${name}`, (put) => {
          for (let r = 0; r < nRows; r++) for (let c = 0; c < d; c++) put(c * cw, r * rowH, cw, rowH - 1, vecColour(value(r, c), m));
        }),
        note: `Neuron-view ${name} strip: ${nRows * d} vector rectangles.`,
      };
    };
    exportable(stage.select('canvas.nv-q').node(), strip('query', 1, (r, c) => cols.q[c], amax));
    exportable(stage.select('canvas.nv-k').node(), strip('key', R, (r, c) => cols.keys[rows[r]][c], amax));
    exportable(stage.select('canvas.nv-p').node(), strip('product', R, (r, c) => cols.products[rows[r]][c], pmax));

    const svg = stage.select('svg.nv-svg').attr('width', W).attr('height', Hpx)
      .attr('font-family', 'system-ui, sans-serif').attr('font-size', font);

    // Query row and column titles.
    svg.select('g.qrow').selectAll('text').data([
      { t: 'query q', x: x.k, y: 14, a: 'start', w: 600 },
      { t: clip(data.queryLabel), x: labelW, y: 22 + rowH / 2, a: 'end', w: 700 },
      { t: `d = ${d} (one cell per element; orange < 0 < blue)`, x: x.p, y: 22 + rowH / 2, a: 'start', w: 400 },
    ]).join('text').attr('x', (t) => t.x).attr('y', (t) => t.y).attr('dy', '0.35em')
      .attr('text-anchor', (t) => t.a).attr('font-weight', (t) => t.w).attr('fill', theme.fg).text((t) => t.t);
    const heads = [
      { t: 'key k', x: x.k },
      { t: 'q × k (element-wise)', x: x.p },
      { t: 'q · k', x: x.dot },
      { t: `q·k / √${d}`, x: x.scaled },
      { t: 'softmax', x: x.soft },
    ];
    if (data.norms) heads.push({ t: '‖α f(x)‖', x: x.norm });
    svg.select('g.heads').selectAll('text').data(heads).join('text').attr('class', 'col-title')
      .attr('x', (t) => t.x).attr('y', top - 10).attr('font-weight', 600).attr('fill', theme.fg).text((t) => t.t);

    const smax = d3.max(data.weights) || 1;
    const nmax = data.norms ? d3.max(data.norms) || 1 : 1;
    const rowData = rows.map((j, r) => ({
      r, j, label: labels[r], dot: cols.dots[j], scaled: cols.scaled[j], w: data.weights[r],
      norm: data.norms ? data.norms[r] : null,
    }));
    const g = svg.select('g.rows').attr('transform', `translate(0,${top})`)
      .selectAll('g.nv-row').data(rowData, (rd) => rd.j)
      .join((enter) => {
        const e = enter.append('g').attr('class', 'nv-row');
        e.append('text').attr('class', 'key-label');
        e.append('text').attr('class', 'dot');
        e.append('text').attr('class', 'scaled');
        e.append('rect').attr('class', 'soft-bar');
        e.append('text').attr('class', 'soft');
        return e;
      })
      .attr('transform', (rd) => `translate(0,${rd.r * rowH})`);
    const mid = rowH / 2;
    g.select('text.key-label').attr('x', labelW).attr('y', mid).attr('dy', '0.35em').attr('text-anchor', 'end')
      .attr('fill', theme.fg).attr('font-weight', (rd) => (rd.j === data.query ? 700 : 400)).text((rd) => clip(rd.label));
    g.select('text.dot').attr('x', x.dot + 52).attr('y', mid).attr('dy', '0.35em').attr('text-anchor', 'end')
      .attr('fill', theme.fg).text((rd) => rd.dot.toFixed(2));
    g.select('text.scaled').attr('x', x.scaled + 60).attr('y', mid).attr('dy', '0.35em').attr('text-anchor', 'end')
      .attr('fill', theme.fg).text((rd) => rd.scaled.toFixed(2));
    g.select('rect.soft-bar').attr('x', x.soft).attr('y', 2).attr('height', rowH - 4)
      .attr('width', (rd) => Math.max(0.5, (80 * rd.w) / smax)).attr('fill', theme.accent).attr('rx', 2);
    g.select('text.soft').attr('x', x.soft + 84).attr('y', mid).attr('dy', '0.35em').attr('fill', theme.fg)
      .text((rd) => fmt(rd.w));
    g.selectAll('rect.norm-bar').data((rd) => (rd.norm === null ? [] : [rd])).join('rect').attr('class', 'norm-bar')
      .attr('x', x.norm).attr('y', 2).attr('height', rowH - 4).attr('rx', 2)
      .attr('width', (rd) => Math.max(0.5, (80 * rd.norm) / nmax)).attr('fill', '#8f5bd6');
    g.selectAll('text.norm').data((rd) => (rd.norm === null ? [] : [rd])).join('text').attr('class', 'norm')
      .attr('x', x.norm + 84).attr('y', mid).attr('dy', '0.35em').attr('fill', theme.fg).text((rd) => fmt(rd.norm));

    // Hover a row: its numbers; hover a vector cell: the element.
    svg.select('g.hit').selectAll('rect').data([null]).join('rect')
      .attr('x', 0).attr('y', top).attr('width', W).attr('height', R * rowH).attr('fill', 'transparent')
      .on('mousemove', (ev) => {
        const [px, py] = d3.pointer(ev);
        const r = Math.floor((py - top) / rowH);
        if (r < 0 || r >= R) return;
        const rd = rowData[r];
        const lines = [`${data.queryLabel} → ${rd.label}`, `q·k = ${rd.dot.toFixed(4)}`, `q·k/√${d} = ${rd.scaled.toFixed(4)}`, `softmax = ${rd.w.toFixed(4)}`];
        if (rd.norm !== null) lines.push(`‖α f(x)‖ = ${rd.norm.toFixed(4)}`);
        for (const [name, x0, arr] of [['k', x.k, cols.keys[rd.j]], ['q×k', x.p, cols.products[rd.j]]]) {
          const c = Math.floor((px - x0) / cw);
          if (c >= 0 && c < d) lines.push(`${name}[${c}] = ${arr[c].toFixed(4)}  (q[${c}] = ${cols.q[c].toFixed(4)})`);
        }
        tooltip.show(ev, lines);
      })
      .on('mouseleave', () => tooltip.hide());

    svg.select('g.legend').attr('transform', `translate(4,${top + R * rowH + 24})`)
      .selectAll('text').data(data.legendLines).join('text').attr('y', (t, i) => i * 15)
      .attr('fill', theme.muted).text((t) => t);
  }

  view.theme = function (t) { if (!arguments.length) return theme; theme = t; return view; };
  view.width = function (w) { if (!arguments.length) return width; width = w; return view; };
  view.onQuery = function (f) { if (!arguments.length) return onQuery; onQuery = f; return view; };
  return view;
}
