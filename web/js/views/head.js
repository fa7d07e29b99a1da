// head.js — the head view: tokens in two columns (queries left, keys right)
// joined by lines whose opacity is the attention (or norm), one colour per
// head. Lines go to a canvas and weak ones are pruned (data.js headLines), so
// long inputs never create tens of thousands of SVG nodes.
//
// Interaction: click a head swatch to toggle it, double-click to show it
// alone; hover a token to isolate its lines, click it to freeze that; the
// pair filter keeps only A->A, A->B, B->A or B->B lines.
// Keyboard: each token column is one tab stop; arrow keys move between
// tokens (Left/Right: to the other column), which isolates their lines like
// hovering; Enter or Space freezes/unfreezes, Escape unfreezes.
// Export SVG writes the drawn lines as <line>s (up to SVG_MAX_LINES).
//
// data = {K, labels[K], segs[K], H, mats[H] (K*K each), selected[] (heads
//         shown), filter, hasPair, valueName, vmax, legendLines[], title}

import { THEMES, sizeCanvas, tooltip, headColour, textWidth, clip, exportable, SVG_MAX_LINES } from './common.js';
import { headLines } from '../data.js';

const d3 = globalThis.d3;
const FILTER_LABELS = [['all', 'All'], ['aa', 'A→A'], ['ab', 'A→B'], ['ba', 'B→A'], ['bb', 'B→B']];

export function headView() {
  let theme = THEMES.light;
  let onHeads = () => {};
  let onFilter = () => {};
  let focus = null; // {side: 'left'|'right', index}
  let frozen = false;
  let kbd = { left: 0, right: 0 }; // token of each column that has the tab stop
  let last = null; // last data, for redraws on hover

  function view(root, data) {
    if (last && (last.K !== data.K || last.labels.join('\u0000') !== data.labels.join('\u0000'))) {
      focus = null;
      frozen = false;
      kbd = { left: 0, right: 0 };
    }
    last = data;
    render(root);
    update(root, data);
  }

  function render(root) {
    root.classed('bl-headview', true);
    root.selectAll('div.view-title').data([null]).join('div').attr('class', 'view-title');
    const bar = root.selectAll('div.hv-bar').data([null]).join('div').attr('class', 'hv-bar');
    bar.selectAll('svg.hv-swatches').data([null]).join('svg').attr('class', 'hv-swatches');
    bar.selectAll('div.hv-filter').data([null]).join('div').attr('class', 'hv-filter segmented')
      .attr('role', 'group').attr('aria-label', 'Sentence pair filter');
    const stage = root.selectAll('div.hv-stage').data([null]).join('div').attr('class', 'hv-stage stage');
    stage.selectAll('canvas.hv-lines').data([null]).join('canvas').attr('class', 'hv-lines');
    const svg = stage.selectAll('svg.hv-svg').data([null]).join('svg').attr('class', 'hv-svg');
    svg.selectAll('g.left').data([null]).join('g').attr('class', 'left');
    svg.selectAll('g.right').data([null]).join('g').attr('class', 'right');
    svg.selectAll('g.legend').data([null]).join('g').attr('class', 'legend');
  }

  function update(root, data) {
    const { K, labels, H, selected, hasPair } = data;
    const sel = new Set(selected);
    root.select('.view-title').text(data.title);

    // Head swatches.
    const sw = 22;
    root.select('svg.hv-swatches').attr('width', H * (sw + 4) + 60).attr('height', sw + 16)
      .selectAll('g.swatch').data(d3.range(H)).join((enter) => {
        const g = enter.append('g').attr('class', 'swatch');
        g.append('rect');
        g.append('text');
        return g;
      })
      .attr('transform', (h) => `translate(${h * (sw + 4)},2)`)
      .attr('data-head', (h) => h)
      .attr('role', 'button')
      .attr('tabindex', 0)
      .attr('aria-label', (h) => `head ${h}`)
      .attr('aria-pressed', (h) => String(sel.has(h)))
      .on('keydown', (ev, h) => {
        // Enter toggles, Shift+Enter (or Space with Shift) shows only this head.
        if (ev.key !== 'Enter' && ev.key !== ' ') return;
        ev.preventDefault();
        if (ev.shiftKey) { onHeads([h]); return; }
        const next = new Set(sel);
        if (next.has(h)) next.delete(h); else next.add(h);
        onHeads([...next].sort((a, b) => a - b));
      })
      .on('click', (ev, h) => {
        const next = new Set(sel);
        if (next.has(h)) next.delete(h); else next.add(h);
        onHeads([...next].sort((a, b) => a - b));
      })
      .on('dblclick', (ev, h) => onHeads([h]))
      .on('mouseenter', (ev, h) => tooltip.show(ev, [`head ${h}${sel.has(h) ? ' (shown)' : ' (hidden)'}`, 'click: toggle · double-click: only this head']))
      .on('mouseleave', () => tooltip.hide())
      .call((g) => g.select('rect').attr('width', sw).attr('height', sw).attr('rx', 4)
        .attr('fill', (h) => headColour(h, H)).attr('fill-opacity', (h) => (sel.has(h) ? 1 : 0.15))
        .attr('stroke', (h) => headColour(h, H)).attr('stroke-width', 1.5))
      .call((g) => g.select('text').attr('x', sw / 2).attr('y', sw + 11).attr('text-anchor', 'middle')
        .attr('font-size', 10).attr('fill', theme.muted).text((h) => h));

    // Pair filter (only meaningful with two texts).
    root.select('div.hv-filter').style('display', hasPair ? null : 'none')
      .selectAll('button').data(FILTER_LABELS).join('button')
      .attr('type', 'button')
      .attr('data-filter', (d) => d[0])
      .attr('aria-pressed', (d) => String(d[0] === data.filter))
      .text((d) => d[1])
      .on('click', (ev, d) => onFilter(d[0]));

    // Token columns.
    const rowH = K > 80 ? 13 : 22;
    const font = K > 80 ? 10 : 12;
    const labelW = Math.min(150, Math.max(50, d3.max(labels, (l) => textWidth(clip(l, 18), font)) || 50));
    const gap = Math.max(240, Math.min(360, 16 * K));
    const top = 8;
    const W = labelW * 2 + gap + 16;
    const Hpx = top + K * rowH + 70 + 15 * data.legendLines.length;
    const xL = labelW + 4;
    const xR = labelW + gap + 12;
    const stage = root.select('.hv-stage').style('width', `${W}px`).style('height', `${Hpx}px`);
    const svg = stage.select('svg.hv-svg').attr('width', W).attr('height', Hpx)
      .attr('font-family', 'system-ui, sans-serif');
    const canvas = stage.select('canvas.hv-lines').style('left', `${xL}px`).style('top', `${top}px`).node();

    const weightFor = (side, idx) => {
      // Strongest shown weight between the focused token and token idx.
      if (!focus || focus.side === side) return 0;
      let w = 0;
      for (const h of sel) {
        const m = data.mats[h];
        const v = focus.side === 'left' ? m[focus.index * K + idx] : m[idx * K + focus.index];
        if (v > w) w = v;
      }
      return w / data.vmax;
    };
    const tint = sel.size === 1 ? headColour([...sel][0], H) : theme.accent;
    const isFrozen = (side, i) => frozen && focus && focus.side === side && focus.index === i;
    const toggleFreeze = (side, i) => {
      if (isFrozen(side, i)) frozen = false;
      else { focus = { side, index: i }; frozen = true; }
      redraw();
    };
    const tokNode = (side, i) => svg.select(`g.${side}`).selectAll('g.tok').filter((d) => d.i === i).node();
    const showTip = (node, side, d) => {
      const r = node.getBoundingClientRect();
      tooltip.show({ clientX: side === 'left' ? r.left : r.right, clientY: r.bottom }, [
        `${side === 'left' ? 'query' : 'key'} ${d.i}: ${d.l}`,
        isFrozen(side, d.i) ? 'Enter: unfreeze' : 'Enter: freeze this token · arrows: move',
      ]);
    };

    const column = (side, x, anchor) => {
      const g = svg.select(`g.${side}`).attr('transform', `translate(${x},${top})`);
      const rows = g.selectAll('g.tok').data(labels.map((l, i) => ({ l, i })), (d) => d.i)
        .join((enter) => {
          const r = enter.append('g').attr('class', 'tok');
          r.append('rect');
          r.append('text').attr('class', 'token-label');
          return r;
        })
        .attr('transform', (d) => `translate(0,${d.i * rowH})`)
        .attr('role', 'button')
        .attr('tabindex', (d) => (d.i === Math.min(kbd[side], K - 1) ? 0 : -1))
        .attr('aria-label', (d) => `${side === 'left' ? 'query' : 'key'} ${d.i}: ${d.l}`)
        .attr('aria-pressed', (d) => String(isFrozen(side, d.i)))
        .on('focus', function (ev, d) {
          kbd[side] = d.i;
          if (!frozen) { focus = { side, index: d.i }; redraw(); } else column(side, x, anchor);
          showTip(this, side, d);
        })
        .on('blur', (ev) => {
          tooltip.hide();
          const next = ev.relatedTarget;
          const stays = next && next.closest && next.closest('g.tok') && stage.node().contains(next);
          if (!frozen && !stays) { focus = null; redraw(); }
        })
        .on('keydown', function (ev, d) {
          let to = null;
          let toSide = side;
          if (ev.key === 'Enter' || ev.key === ' ') {
            ev.preventDefault();
            toggleFreeze(side, d.i);
            showTip(this, side, d);
            return;
          }
          if (ev.key === 'Escape') { if (frozen) { frozen = false; redraw(); } return; }
          if (ev.key === 'ArrowDown') to = Math.min(K - 1, d.i + 1);
          else if (ev.key === 'ArrowUp') to = Math.max(0, d.i - 1);
          else if (ev.key === 'Home') to = 0;
          else if (ev.key === 'End') to = K - 1;
          else if (ev.key === 'ArrowLeft' || ev.key === 'ArrowRight') {
            toSide = ev.key === 'ArrowLeft' ? 'left' : 'right';
            to = d.i;
          } else return;
          ev.preventDefault();
          kbd[toSide] = to;
          column(toSide, toSide === 'left' ? xL - 4 : xR + 4, toSide === 'left' ? 'end' : 'start');
          const n = tokNode(toSide, to);
          if (n && n !== this) n.focus();
        })
        .on('mouseenter', (ev, d) => {
          if (!frozen) { focus = { side, index: d.i }; redraw(); }
          tooltip.show(ev, [`${side === 'left' ? 'query' : 'key'} ${d.i}: ${d.l}`, frozen ? 'click: unfreeze' : 'click: freeze this token']);
        })
        .on('mouseleave', () => {
          tooltip.hide();
          if (!frozen) { focus = null; redraw(); }
        })
        .on('click', (ev, d) => toggleFreeze(side, d.i));
      rows.select('rect').attr('x', anchor === 'end' ? -labelW : 0).attr('y', 1).attr('width', labelW)
        .attr('height', rowH - 2).attr('rx', 3).attr('fill', tint)
        .attr('fill-opacity', (d) => 0.85 * weightFor(side, d.i))
        .attr('stroke', (d) => (isFrozen(side, d.i) ? theme.fg : 'none'))
        .attr('stroke-dasharray', (d) => (isFrozen(side, d.i) ? '3 2' : null));
      rows.select('text').attr('x', anchor === 'end' ? -4 : 4).attr('y', rowH / 2).attr('dy', '0.35em')
        .attr('text-anchor', anchor).attr('font-size', font)
        .attr('fill', theme.fg)
        .attr('font-weight', (d) => (focus && focus.side === side && focus.index === d.i ? 700 : 400))
        .text((d) => clip(d.l, 18));
    };

    const redraw = () => {
      column('left', xL - 4, 'end');
      column('right', xR + 4, 'start');
      drawLines();
    };

    const drawLines = () => {
      const ctx = sizeCanvas(canvas, xR - xL, K * rowH);
      ctx.clearRect(0, 0, xR - xL, K * rowH);
      const mats = data.mats.map((m, h) => (sel.has(h) ? m : null));
      const lines = headLines(mats, K, data.segs, {
        filter: hasPair ? data.filter : 'all',
        focus,
        minWeight: (K > 64 ? 0.03 : 0.005) * data.vmax,
        maxLines: 12000,
      });
      ctx.lineWidth = K > 80 ? 1.2 : 2;
      for (const l of lines) {
        ctx.strokeStyle = headColour(l.head, H);
        ctx.globalAlpha = Math.min(1, (l.w / data.vmax) * (focus ? 1 : 0.9));
        ctx.beginPath();
        ctx.moveTo(0, l.i * rowH + rowH / 2);
        ctx.lineTo(xR - xL, l.j * rowH + rowH / 2);
        ctx.stroke();
      }
      ctx.globalAlpha = 1;
      stage.attr('data-lines', lines.length);
      const w = xR - xL;
      const lw = ctx.lineWidth;
      exportable(canvas, () => {
        if (lines.length > SVG_MAX_LINES) {
          return { node: null, note: `Head-view lines (${lines.length}) are an embedded PNG image: more than ${SVG_MAX_LINES} lines would make the SVG too heavy.` };
        }
        const byHead = new Map();
        for (const l of lines) {
          if (!byHead.has(l.head)) byHead.set(l.head, []);
          byHead.get(l.head).push({ tag: 'line', attrs: {
            x1: 0, y1: l.i * rowH + rowH / 2, x2: w, y2: l.j * rowH + rowH / 2,
            'stroke-opacity': +Math.min(1, (l.w / data.vmax) * (focus ? 1 : 0.9)).toFixed(3),
          } });
        }
        return {
          node: { tag: 'g', attrs: { class: 'hv-lines', 'stroke-width': lw, fill: 'none' },
            children: [...byHead].map(([h, children]) => ({ tag: 'g', attrs: { stroke: headColour(h, H), 'data-head': h }, children })) },
          note: `Head-view lines: ${lines.length} vector <line> elements (weak lines are not drawn, as on the page).`,
        };
      });
    };

    redraw();

    svg.select('g.legend').attr('transform', `translate(4,${top + K * rowH + 28})`)
      .selectAll('text').data(data.legendLines).join('text')
      .attr('y', (d, i) => i * 15).attr('font-size', 11).attr('fill', theme.muted).text((d) => d);
  }

  view.theme = function (t) { if (!arguments.length) return theme; theme = t; return view; };
  view.onHeads = function (f) { if (!arguments.length) return onHeads; onHeads = f; return view; };
  view.onFilter = function (f) { if (!arguments.length) return onFilter; onFilter = f; return view; };
  return view;
}
