// head_bars.js — the head view's per-head bars (head.js): while a token is
// hovered, focused or frozen, every token of the other column gets a small
// bar chart beside it, one bar per head shown, in the head's colour, as
// tall as that head's weight between the two tokens. A reader sees which
// head sends the token's attention where (lines of several heads overlap;
// the bars do not). One SVG path per head (a few thousand rectangles at 512
// tokens cost one attribute each).
//
// drawHeadBars(sc, focus, theme): sc the scene drawn last (head.js
// scene()), focus {side, index} or null (no bars). The bars stand on a
// backdrop of the page's colour with a baseline per token, so the lines
// under them do not read as bars.

import { headColour, setAll } from './common.js';

/** Width of one column's bar charts (CSS px), from the gap between columns. */
const barsWidth = (lay, n) => Math.max(Math.min(n * 3, 24), Math.min(n * 6, 60, Math.floor((lay.xR - lay.xL) * 0.22)));

export function drawHeadBars(sc, focus, theme) {
  const { data, lay, svg, sel } = sc;
  const g = svg.selectAll('g.hv-headbars').data([null]).join('g').attr('class', 'hv-headbars').attr('aria-hidden', 'true');
  const heads = focus ? [...sel] : [];
  const back = g.selectAll('rect.hv-barsback').data(heads.length ? [null] : []).join('rect').attr('class', 'hv-barsback');
  const base = g.selectAll('path.hv-baselines').data(heads.length ? [null] : []).join('path').attr('class', 'hv-baselines');
  const paths = g.selectAll('path.hv-bar').data(heads, (h) => h).join('path').attr('class', 'hv-bar');
  if (!heads.length) {
    g.attr('data-side', null);
    return;
  }
  const { K, mats, vmax } = data;
  const other = focus.side === 'left' ? 'right' : 'left';
  const W = barsWidth(lay, heads.length);
  const slot = W / heads.length;
  const bw = Math.max(1, slot - (slot > 3 ? 1 : 0));
  // Beside the other column's labels: keys' bars end where their labels
  // begin, queries' bars begin where their labels end.
  const x0 = other === 'right' ? lay.xR + 2 - W : lay.xL - 2;
  const full = Math.max(1, lay.rowH - 2);
  g.attr('data-side', other);
  setAll(back.node(), { x: x0 - 2, y: lay.top, width: W + 4, height: K * lay.rowH, fill: theme.bg, 'fill-opacity': 0.92 });
  let bl = '';
  for (let t = 0; t < K; t++) bl += `M${x0 - 1},${(lay.top + (t + 1) * lay.rowH - 1).toFixed(1)}h${W + 2}`;
  setAll(base.node(), { d: bl, stroke: theme.grid, 'stroke-width': 1, fill: 'none' });
  paths.each(function (h, j) {
    const m = mats[h];
    let d = '';
    let top = -1;
    let topV = -1;
    for (let t = 0; t < K; t++) {
      const v = focus.side === 'left' ? m[focus.index * K + t] : m[t * K + focus.index];
      if (v > topV) { topV = v; top = t; }
      const bh = full * Math.min(1, v / vmax);
      if (bh < 0.5) continue;
      const x = x0 + j * slot;
      const y = lay.top + t * lay.rowH + 1 + full - bh;
      d += `M${x.toFixed(1)},${y.toFixed(1)}h${bw.toFixed(1)}v${bh.toFixed(1)}h${(-bw).toFixed(1)}z`;
    }
    setAll(this, { d: d || 'M0,0', fill: headColour(h), 'data-head': h, 'data-top': top });
  });
}
