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
// Layout (layout.js headLayout): rows shrink to fit the height of an embed's
// frame (labels of every step-th token when rows get thin); swatches shrink
// so all heads fit one row. A pair's A/B boundary is a dashed line across
// both columns before the first B token (also with [SEP] hidden).
//
// data = {K, labels[K], segs[K], H, mats[H] (K*K each), selected[] (heads
//         shown), filter, hasPair, valueName, vmax, notes[], title}

import {
  THEMES, sizeCanvas, tooltip, headColour, clip, exportable, SVG_MAX_LINES, fmt,
  infoLine, linksTable, exportContext, chromeHeight,
  sliced, setAll,
} from './common.js';
import { headLayout, swatchLayout, headFrame } from './layout.js';
import { pairBoundary, strongestLinks, maxOf } from '../lib/data.js';
import { headLinesSteps, drain, rowShareThresholds } from '../lib/lines.js';

const d3 = globalThis.d3;
const BAND_MARGIN = 0.3; // of the window's height, painted above and below it (views: bandOf)
// A drawing rasterises its band in pieces of about this many ms each (paintSteps).
const PIECE_MS = 8;
const FILTER_LABELS = [['all', 'All'], ['aa', 'A→A'], ['ab', 'A→B'], ['ba', 'B→A'], ['bb', 'B→B']];

export function headView() {
  let theme = THEMES.light;
  let onHeads = () => {};
  let onFilter = () => {};
  let onShare = () => {};
  let onSpan = () => {};
  let focus = null; // {side: 'left'|'right', index}
  let frozen = false;
  let kbd = { left: 0, right: 0 }; // token of each column that has the tab stop
  let last = null; // last data, for redraws on hover
  let cur = null; // the scene drawn last (scene()), which token events act on
  let box = { width: 900, height: null };

  let exported = exportContext(); // what an export adds (its last drawing)

  function view(root, data) {
    if (last && (last.K !== data.K || last.labels.join('\u0000') !== data.labels.join('\u0000'))) {
      focus = null;
      frozen = false;
      kbd = { left: 0, right: 0 };
    }
    last = data;
    tooltip.hide();
    render(root);
    return update(root, data);
  }

  function render(root) {
    root.classed('bl-headview', true);
    root.selectAll('div.view-title').data([null]).join('div').attr('class', 'view-title');
    const bar = root.selectAll('div.hv-bar').data([null]).join('div').attr('class', 'hv-bar');
    bar.selectAll('svg.hv-swatches').data([null]).join('svg').attr('class', 'hv-swatches');
    bar.selectAll('div.hv-filter').data([null]).join('div').attr('class', 'hv-filter segmented')
      .attr('role', 'group').attr('aria-label', 'Sentence pair filter');
    const prune = bar.selectAll('label.hv-prune').data([null]).join((e) => {
      const l = e.append('label').attr('class', 'hv-prune');
      l.append('span').text('Links carrying ');
      l.append('input').attr('type', 'range').attr('min', 50).attr('max', 100).attr('step', 5)
        .attr('aria-label', 'Share of each row\'s mass the lines drawn carry (percent)').style('width', '90px').style('vertical-align', 'middle');
      l.append('output').style('display', 'inline-block').style('min-width', '2.6em').style('text-align', 'right');
      l.append('span').text(' of each row');
      return l;
    });
    prune.attr('title', 'Draw only the strongest links of each query that together carry this share of its row (100 %: every link above a small floor).');
    infoLine(root);
    const scroller = root.selectAll('div.hv-scroll').data([null]).join('div').attr('class', 'hv-scroll');
    const stage = scroller.selectAll('div.hv-stage').data([null]).join('div').attr('class', 'hv-stage stage');
    stage.selectAll('canvas.hv-lines').data([null]).join('canvas').attr('class', 'hv-lines');
    const svg = stage.selectAll('svg.hv-svg').data([null]).join('svg').attr('class', 'hv-svg');
    svg.selectAll('g.pair').data([null]).join('g').attr('class', 'pair');
    svg.selectAll('g.left').data([null]).join('g').attr('class', 'left');
    svg.selectAll('g.right').data([null]).join('g').attr('class', 'right');
    root.selectAll('p.view-notes').data([null]).join('p').attr('class', 'view-notes');
    root.selectAll('p.view-hint').data([null]).join('p').attr('class', 'view-hint')
      .text('Hover or tap a token to isolate its lines, click to freeze, shift-click several to sum them as one span; click a head swatch to toggle it, double-click to show it alone. Keyboard: Tab to a column, arrows move, Enter freezes.');
  }

  function swatches(root, data, sel) {
    const { H } = data;
    const { sw, W, H: h } = swatchLayout({ H, width: box.width });
    root.select('svg.hv-swatches').attr('width', W).attr('height', h)
      .attr('role', 'group').attr('aria-label', 'Heads (colour key)')
      .selectAll('g.swatch').data(d3.range(H)).join((enter) => {
        const g = enter.append('g').attr('class', 'swatch');
        g.append('rect');
        g.append('text');
        return g;
      })
      .attr('transform', (hd) => `translate(${hd * (sw + 4) + 2},2)`)
      .attr('data-head', (hd) => hd)
      .attr('role', 'button')
      .attr('tabindex', 0)
      .attr('aria-label', (hd) => `head ${hd}`)
      .attr('aria-pressed', (hd) => String(sel.has(hd)))
      .on('keydown', (ev, hd) => {
        // Enter toggles, Shift+Enter (or Space with Shift) shows only this head.
        if (ev.key !== 'Enter' && ev.key !== ' ') return;
        ev.preventDefault();
        if (ev.shiftKey) { onHeads([hd]); return; }
        toggleHead(sel, hd);
      })
      .on('click', (ev, hd) => toggleHead(sel, hd))
      .on('dblclick', (ev, hd) => onHeads([hd]))
      .on('mouseenter', (ev, hd) => tooltip.show(ev, [`head ${hd}${sel.has(hd) ? ' (shown)' : ' (hidden)'}`, 'click: toggle · double-click: only this head']))
      .on('mouseleave', () => tooltip.hide())
      .call((g) => g.select('rect').attr('width', sw).attr('height', sw).attr('rx', 4)
        .attr('fill', (hd) => headColour(hd)).attr('fill-opacity', (hd) => (sel.has(hd) ? 1 : 0.15))
        .attr('stroke', (hd) => headColour(hd)).attr('stroke-width', 1.5)
        .attr('stroke-dasharray', (hd) => (hd >= 12 ? '3 2' : null)))
      .call((g) => g.select('text').attr('x', sw / 2).attr('y', sw + 11).attr('text-anchor', 'middle')
        .attr('font-size', 10).attr('fill', theme.fg).text((hd) => hd));
  }

  function toggleHead(sel, h) {
    const next = new Set(sel);
    if (next.has(h)) next.delete(h); else next.add(h);
    onHeads([...next].sort((a, b) => a - b));
  }

  function pairFilter(root, data) {
    // Only meaningful with two texts.
    root.select('div.hv-filter').style('display', data.hasPair ? null : 'none')
      .selectAll('button').data(FILTER_LABELS).join('button')
      .attr('type', 'button')
      .attr('data-filter', (d) => d[0])
      .attr('aria-pressed', (d) => String(d[0] === data.filter))
      .text((d) => d[1])
      .on('click', (ev, d) => onFilter(d[0]));
  }

  /** Dashed line before the first B token, across both token columns. */
  function boundary(svg, data, g) {
    const b = data.hasPair ? pairBoundary(data.segs) : -1;
    const y = g.top + b * g.rowH;
    svg.select('g.pair').attr('data-boundary', b)
      .selectAll('line.pair-boundary').data(b > 0 ? [[0, g.xL], [g.xR, g.xR + g.labelW + 4]] : []).join('line')
      .attr('class', 'pair-boundary').attr('x1', (d) => d[0]).attr('x2', (d) => d[1]).attr('y1', y).attr('y2', y)
      .attr('stroke', theme.fg).attr('stroke-width', 1.5).attr('stroke-dasharray', '4 3');
  }

  function notesOf(data) {
    const b = data.hasPair ? pairBoundary(data.segs) : -1;
    return [...(data.notes || []), ...(b > 0 ? [`Dashed line: sentence B starts at token ${b} (${data.labels[b]}).`] : [])];
  }

  /** The links table; one step per head shown. */
  function* textAlternative(root, data, sel) {
    const rows = [];
    for (const h of sel) {
      for (const l of strongestLinks(data.mats[h], data.K, 10)) rows.push({ h, ...l });
      yield;
    }
    rows.sort((a, b) => b.weight - a.weight);
    rows.length = Math.min(rows.length, 12);
    linksTable(root, {
      summary: `Table: the ${rows.length} strongest links of the heads shown (${data.valueName})`,
      columns: [{ key: 'h', title: 'head' }, { key: 'q', title: 'query' }, { key: 'k', title: 'key' }, { key: 'w', title: data.valueName, fmt }],
      rows: rows.map((r) => ({ h: r.h, q: `${r.query}: ${data.labels[r.query]}`, k: `${r.key}: ${data.labels[r.key]}`, w: r.weight })),
    });
  }

  function update(root, data) {
    // Where the stage is, read before this drawing writes to the page (so
    // reading it forces no layout); the lines' band follows from it.
    const was = root.select('.hv-stage').node();
    const at = was && was.isConnected ? measure(was) : null;
    const sel = new Set(data.selected);
    root.select('.view-title').text(data.title);
    swatches(root, data, sel);
    pairFilter(root, data);
    const pct = Math.round((data.share ?? 1) * 100);
    root.select('label.hv-prune input').property('value', pct)
      .on('input', (ev) => root.select('label.hv-prune output').text(`${ev.target.value} %`))
      .on('change', (ev) => onShare(Number(ev.target.value) / 100));
    root.select('label.hv-prune output').text(`${pct} %`);
    root.select('p.view-notes').text(notesOf(data).join(' '));
    const info = infoLine(root);
    if (!focus) info.set('Lines join each query (left) to the keys it attends to (right).');
    const sc = scene(root, data, sel, info);
    sc.at = at;
    cur = sc;
    boundary(sc.svg, data, sc.lay);
    column(sc, 'left');
    column(sc, 'right');
    exported = exportContext({ notes: notesOf(data), keys: [root.select('svg.hv-swatches').node()] });
    if (job) job.cancel();
    job = sliced(drawing(root, data, sel, sc));
    const current = job;
    sc.stage.node().blSettle = () => current.flush(); // an export draws the finished picture
    return job.done;
  }

  let job = null; // the drawing in progress (common.js sliced)

  /** A drawing's heavy part in steps of one head each: the lines, then the
   *  links table (at 512 tokens each step reads a 512 x 512 matrix). */
  function* drawing(root, data, sel, sc) {
    yield* linesSteps(sc);
    yield;
    yield* paintSteps(sc);
    yield;
    yield* textAlternative(root, data, sel);
  }

  /** Everything one drawing needs: data, shown heads, layout, elements. */
  function scene(root, data, sel, info) {
    const lay = headLayout({
      K: data.K, longestLabel: d3.max(data.labels, (l) => l.length) || 4, width: box.width,
      height: box.height ? box.height - chromeHeight(root.node(), root.select('.hv-scroll').node()) : null,
    });
    const stage = root.select('.hv-stage').style('width', `${lay.W}px`).style('height', `${lay.H}px`);
    const svg = stage.select('svg.hv-svg');
    // (setAll: an attribute set again, even to its value, makes the browser
    // lay out every token row under it again: ~60 ms at 512 tokens)
    setAll(svg.node(), { width: lay.W, height: lay.H, 'font-family': 'system-ui, sans-serif' });
    const canvas = stage.select('canvas.hv-lines').style('left', `${lay.xL}px`).style('top', `${lay.top}px`).node();
    const tint = sel.size === 1 ? headColour([...sel][0]) : theme.accent;
    return { data, sel, info, lay, stage, svg, canvas, tint };
  }

  const sideName = (side) => (side === 'left' ? 'query' : 'key');
  const isFrozen = (side, i) => frozen && focus && focus.side === side && focus.index === i;

  /** Strongest shown weight between the focused token and token idx (0..1). */
  function weightFor(sc, side, idx) {
    if (!focus || focus.side === side) return 0;
    const { K, mats, vmax } = sc.data;
    let w = 0;
    for (const h of sc.sel) {
      const v = focus.side === 'left' ? mats[h][focus.index * K + idx] : mats[h][idx * K + focus.index];
      if (v > w) w = v;
    }
    return w / vmax;
  }

  function toggleFreeze(sc, side, i) {
    if (isFrozen(side, i)) frozen = false;
    else { focus = { side, index: i }; frozen = true; }
    redraw(sc);
  }

  function showTip(sc, node, side, d) {
    const r = node.getBoundingClientRect();
    tooltip.show({ clientX: side === 'left' ? r.left : r.right, clientY: r.bottom }, [
      `${sideName(side)} ${d.i}: ${d.l}`,
      isFrozen(side, d.i) ? 'Enter: unfreeze' : 'Enter: freeze this token · arrows: move',
    ], node);
    sc.info.set(`${sideName(side)} ${d.i}: ${d.l}${isFrozen(side, d.i) ? ' (frozen)' : ''}`);
  }

  /** Keyboard on a token: arrows move (Left/Right: other column), Enter or
   *  Space freeze, Escape unfreezes. */
  function tokenKey(sc, side, node, ev, d) {
    const K = sc.data.K;
    if (ev.key === 'Enter' || ev.key === ' ') {
      ev.preventDefault();
      toggleFreeze(sc, side, d.i);
      showTip(sc, node, side, d);
      return;
    }
    if (ev.key === 'Escape') { if (frozen) { frozen = false; redraw(sc); } return; }
    const moves = { ArrowDown: Math.min(K - 1, d.i + 1), ArrowUp: Math.max(0, d.i - 1), Home: 0, End: K - 1 };
    let to = moves[ev.key];
    let toSide = side;
    if (ev.key === 'ArrowLeft' || ev.key === 'ArrowRight') { toSide = ev.key === 'ArrowLeft' ? 'left' : 'right'; to = d.i; }
    if (to === undefined) return;
    ev.preventDefault();
    kbd[toSide] = to;
    tokenState(sc, toSide);
    const next = sc.svg.select(`g.${toSide}`).selectAll('g.tok').filter((t) => t.i === to).node();
    if (next && next !== node) next.focus();
  }

  /** One token column (queries left, keys right): rows joined once per
   *  drawing, their events bound once per row (they read the current
   *  scene, cur), then their state (tokenState). */
  function column(sc, side) {
    const { data, lay, svg } = sc;
    const anchor = side === 'left' ? 'end' : 'start';
    const g = svg.select(`g.${side}`);
    setAll(g.node(), { transform: `translate(${side === 'left' ? lay.xL - 4 : lay.xR + 4},${lay.top})` });
    g.selectAll('g.tok').data(data.labels.map((l, i) => ({ l, i })), (d) => d.i)
      .join((enter) => {
        const r = enter.append('g').attr('class', 'tok').attr('role', 'button');
        r.append('rect');
        r.append('text').attr('class', 'token-label');
        tokenEvents(r, side);
        return r;
      })
      .each(function (d) {
        setAll(this, { transform: `translate(0,${d.i * lay.rowH})`, 'aria-label': `${sideName(side)} ${d.i}: ${d.l}` });
        setAll(this.firstChild, {
          x: anchor === 'end' ? -lay.labelW : 0, y: 1, width: lay.labelW, height: Math.max(1, lay.rowH - 2), rx: 3,
        });
        setAll(this.lastChild, {
          x: anchor === 'end' ? -4 : 4, y: lay.rowH / 2, dy: '0.35em', 'text-anchor': anchor, 'font-size': lay.font,
          fill: theme.fg, '#text': d.i % lay.step === 0 ? clip(d.l, lay.chars) : '',
        });
      });
    tokenState(sc, side);
  }

  /** What hover, focus and freezing change in a column: tab stop, pressed
   *  state, the weight tint, the frozen outline, the bold focused label. */
  function tokenState(sc, side) {
    const K = sc.data.K;
    const stop = Math.min(kbd[side], K - 1);
    sc.svg.select(`g.${side}`).selectAll('g.tok').each(function (d) {
      const fr = isFrozen(side, d.i);
      setAll(this, { tabindex: d.i === stop ? 0 : -1, 'aria-pressed': String(fr) });
      setAll(this.firstChild, {
        fill: sc.tint, 'fill-opacity': 0.85 * Math.min(1, weightFor(sc, side, d.i)),
        stroke: fr ? theme.fg : 'none', 'stroke-dasharray': fr ? '3 2' : null,
      });
      setAll(this.lastChild, { 'font-weight': focus && focus.side === side && focus.index === d.i ? 700 : 400 });
    });
  }

  /** A row's events, bound once when it is created; they act on the scene
   *  drawn last (cur). */
  function tokenEvents(rows, side) {
    rows
      .on('focus', function (ev, d) {
        kbd[side] = d.i;
        if (!frozen) { focus = { side, index: d.i }; redraw(cur); } else tokenState(cur, side);
        showTip(cur, this, side, d);
      })
      .on('blur', (ev) => {
        tooltip.hide();
        const next = ev.relatedTarget;
        const stays = next && next.closest && next.closest('g.tok') && cur.stage.node().contains(next);
        if (!frozen && !stays) { focus = null; redraw(cur); }
      })
      .on('keydown', function (ev, d) { tokenKey(cur, side, this, ev, d); })
      .on('mouseenter', (ev, d) => {
        if (!frozen) { focus = { side, index: d.i }; redraw(cur); }
        tooltip.show(ev, [`${sideName(side)} ${d.i}: ${d.l}`, frozen ? 'click: unfreeze' : 'click: freeze this token']);
      })
      .on('mouseleave', () => {
        tooltip.hide();
        if (!frozen) { focus = null; redraw(cur); }
      })
      .on('click', (ev, d) => {
        if (ev.shiftKey) { onSpan(d.i); return; } // shift-click: add to / remove from the span
        toggleFreeze(cur, side, d.i);
        cur.info.set(`${sideName(side)} ${d.i}: ${d.l}${isFrozen(side, d.i) ? ' (frozen: only its lines are drawn)' : ''}`);
      });
  }

  /** Hover, focus or freeze: restyle the tokens and redraw the lines. */
  function redraw(sc) {
    tokenState(sc, 'left');
    tokenState(sc, 'right');
    repaint(sc);
  }

  // Lines are computed once per drawing state (data, heads shown, filter,
  // pruning, focus) and kept: a redraw for the same state (scrolling, a
  // hover that ends where it began) only paints.
  let linesMemo = null; // {data, key, lines}
  let thrMemo = null; // {data, share, thresholds[h]}: pruning per head, kept across hovers

  const linesOf = (sc) => drain(linesSteps(sc));

  /** The lines of a scene for the focus at the start (kept in linesMemo);
   *  one step per head computed. */
  function* linesSteps(sc) {
    const { data, lay, sel } = sc;
    const at = focus;
    const share = data.share ?? 1;
    const minWeight = (lay.rowH < 10 ? 0.05 : data.K > 64 ? 0.03 : 0.005) * data.vmax;
    const heads = [...sel].join(',');
    const key = `${heads}|${data.hasPair ? data.filter : 'all'}|${share}|${minWeight}|${at ? `${at.side}${at.index}` : ''}`;
    if (linesMemo && linesMemo.data === data && linesMemo.key === key) return linesMemo.lines;
    if (share < 1 && !(thrMemo && thrMemo.data === data && thrMemo.share === share)) {
      thrMemo = { data, share, thresholds: data.mats.map(() => null) };
    }
    const shown = data.mats.map((m, h) => (sel.has(h) ? m : null));
    if (share < 1) {
      for (const [h, m] of shown.entries()) {
        if (!m || thrMemo.thresholds[h]) continue;
        thrMemo.thresholds[h] = rowShareThresholds(m, data.K, share);
        yield;
      }
    }
    const lines = yield* headLinesSteps(shown, data.K, data.segs, {
      filter: data.hasPair ? data.filter : 'all',
      focus: at,
      minWeight,
      share,
      thresholds: share < 1 ? thrMemo.thresholds : null,
      maxLines: 12000,
    });
    linesMemo = { data, key, lines };
    return lines;
  }

  /** Where a stage is in the window: its top (CSS px from the window's
   *  top) and the window's height. Both reads force a layout when the page
   *  has changed since the last one: the view reads them before it writes
   *  (update), or in a frame callback (scrolling), and hovers reuse them. */
  function measure(node) {
    return { top: node.getBoundingClientRect().top, vh: globalThis.innerHeight || 800 };
  }

  /** Rows of the canvas (CSS px from its top) to paint: all of it when it
   *  is short, else the part in the window and a margin of BAND_MARGIN
   *  window heights above and below (scrolling repaints when the window
   *  leaves it). Chromium rasterises a 2D canvas on the main thread,
   *  and at 512 tokens the whole canvas is ~6,700 px tall: painting only
   *  what can be seen keeps that raster small. */
  function bandOf(sc, full) {
    if (!sc.at) sc.at = measure(sc.stage.node()); // the first drawing: forces a layout once
    const { vh } = sc.at;
    const span = vh * (1 + 2 * BAND_MARGIN);
    if (full <= span) return [0, full];
    const top = sc.at.top + sc.lay.top;
    const y0 = Math.max(0, Math.min(full, -top - vh * BAND_MARGIN));
    const y1 = Math.max(0, Math.min(full, vh - top + vh * BAND_MARGIN));
    return y1 - y0 >= vh / 2 ? [y0, y1] : (y1 >= full ? [Math.max(0, full - span), full] : [y0, Math.min(full, y0 + span)]);
  }

  /** Paint lines into ctx whose vertical band [y0, y1] (CSS px of the full
   *  line area) is the canvas: lines that miss the band are skipped. */
  function paintLines(ctx, sc, lines, y0, y1) {
    drain(paintLinesSteps(ctx, sc, lines, y0, y1, Infinity));
  }

  /** paintLines in pieces of about pieceMs each, one step per piece, each
   *  rasterised before it ends: Chromium records a 2D canvas's drawing and
   *  rasterises it all at once at the end of the task (FinalizeFrame) or
   *  when its pixels are read, on the main thread. At 512 tokens the band's
   *  raster takes 20-90 ms (measured by getImageData; 2-4 ms of it is the
   *  JavaScript that records the lines), so a band painted in one task is a
   *  long task by itself. Reading one pixel makes each piece's raster
   *  happen inside its step, where sliced() counts it. The pieces go to a
   *  canvas off the page (paintSteps), so no frame shows part of a band. */
  function* paintLinesSteps(ctx, sc, lines, y0, y1, pieceMs) {
    const { data, lay } = sc;
    const w = lay.xR - lay.xL;
    const y = (i) => i * lay.rowH + lay.rowH / 2;
    ctx.clearRect(0, 0, w, y1 - y0);
    ctx.translate(0, -y0);
    // 1 px at long inputs: the canvas rasterises on the main thread, and a
    // 1-px line takes the rasteriser's hairline path (at 512 tokens 12,000
    // lines: ~0.4 s instead of ~1.6 s at 1.2 px, measured by getImageData).
    ctx.lineWidth = data.K > 80 ? 1 : 2;
    const k = focus ? 1 : 0.9;
    // lines per piece: adapted after each piece to take about pieceMs
    let n = pieceMs === Infinity ? lines.length : 1000;
    for (let s = 0; s < lines.length;) {
      const t0 = performance.now();
      const e = Math.min(lines.length, s + n);
      for (; s < e; s++) {
        const l = lines[s];
        const a = y(l.i);
        const b = y(l.j);
        if ((a < y0 - 2 && b < y0 - 2) || (a > y1 + 2 && b > y1 + 2)) continue;
        ctx.strokeStyle = headColour(l.head);
        ctx.globalAlpha = Math.min(1, (l.w / data.vmax) * k);
        ctx.beginPath();
        ctx.moveTo(0, a);
        ctx.lineTo(w, b);
        ctx.stroke();
      }
      if (pieceMs === Infinity || s >= lines.length) continue;
      ctx.getImageData(0, 0, 1, 1); // rasterise this piece now
      n = Math.max(100, Math.min(8000, Math.round((n * pieceMs) / Math.max(0.5, performance.now() - t0))));
      yield;
    }
    ctx.globalAlpha = 1;
    ctx.translate(0, y0);
  }

  // The canvas a drawing paints its band on in pieces (paintSteps), off the
  // page; willReadFrequently keeps it in memory (never on the GPU), where
  // the one-pixel reads are cheap.
  let scratch = null;
  let paintGen = 0; // bumped by every paint: a drawing's pieces stop when another painted since

  /** The drawing's lines, painted in pieces (paintLinesSteps) on the
   *  scratch canvas and then copied to the page's canvas in one step: the
   *  copy is a bitmap (~1 ms to rasterise), and until then the page shows
   *  the previous picture whole. The latest paint wins: one started since
   *  (a drawing, a hover, a scroll) stops this one's pieces. */
  function* paintSteps(sc) {
    const gen = ++paintGen;
    sc.stage.attr('data-painting', 1); // until linesPainted (tests wait on it)
    const { data, lay } = sc;
    const lines = linesOf(sc);
    const full = data.K * lay.rowH;
    const [y0, y1] = bandRows(sc, full);
    if (!scratch) {
      scratch = document.createElement('canvas');
      scratch.getContext('2d', { willReadFrequently: true });
    }
    const steps = paintLinesSteps(sizeCanvas(scratch, lay.xR - lay.xL, y1 - y0), sc, lines, y0, y1, PIECE_MS);
    while (!steps.next().done) {
      yield;
      if (gen !== paintGen) return;
    }
    yield;
    if (gen !== paintGen) return;
    const ctx = placeCanvas(sc, y0, y1);
    ctx.save();
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.globalCompositeOperation = 'copy';
    ctx.drawImage(scratch, 0, 0);
    ctx.restore();
    linesPainted(sc, lines, y0, y1);
  }

  /** The band of rows to paint (bandOf), in whole CSS px. */
  function bandRows(sc, full) {
    const [b0, b1] = bandOf(sc, full);
    return [Math.floor(b0), Math.min(full, Math.ceil(b1))];
  }

  /** Size the page's canvas for band [y0, y1] and move it there; its context. */
  function placeCanvas(sc, y0, y1) {
    const { lay, canvas } = sc;
    canvas.style.top = `${lay.top + y0}px`;
    return sizeCanvas(canvas, lay.xR - lay.xL, y1 - y0);
  }

  /** Repaint the lines outside a drawing (hover, focus, freeze, scroll):
   *  the same pieces (paintSteps), run in slices (sliced): a token's few
   *  lines finish in the first slice, at once; the whole band at 512 tokens
   *  (a 20-90 ms raster in one piece) no longer makes a long task. */
  function repaint(sc) {
    sliced(paintSteps(sc));
  }

  /** After the band [y0, y1] of lines was painted: what scrolling and the
   *  export read, and the scroll watch. */
  function linesPainted(sc, lines, y0, y1) {
    const { data, lay, canvas } = sc;
    const { K } = data;
    const w = lay.xR - lay.xL;
    const full = K * lay.rowH;
    const y = (i) => i * lay.rowH + lay.rowH / 2;
    canvas.blBand = { sc, lines, y0, y1 };
    sc.stage.attr('data-lines', lines.length).attr('data-painting', null);
    watchScroll();
    const alpha = (l) => Math.min(1, (l.w / data.vmax) * (focus ? 1 : 0.9));
    const lw = K > 80 ? 1 : 2;
    exportable(canvas, () => {
      if (lines.length > SVG_MAX_LINES) {
        const whole = document.createElement('canvas');
        paintLines(sizeCanvas(whole, w, full), sc, lines, 0, full);
        return {
          node: null, image: whole, dy: -y0, height: full,
          note: `Head-view lines (${lines.length}) are an embedded PNG image: more than ${SVG_MAX_LINES} lines would make the SVG too heavy.`,
        };
      }
      const byHead = new Map();
      for (const l of lines) {
        if (!byHead.has(l.head)) byHead.set(l.head, []);
        byHead.get(l.head).push({ tag: 'line', attrs: { x1: 0, y1: y(l.i), x2: w, y2: y(l.j), 'stroke-opacity': +alpha(l).toFixed(3) } });
      }
      return {
        node: { tag: 'g', attrs: { class: 'hv-lines', 'stroke-width': lw, fill: 'none', transform: y0 ? `translate(0,${-y0})` : null },
          children: [...byHead].map(([h, children]) => ({ tag: 'g', attrs: { stroke: headColour(h), 'data-head': h }, children })) },
        note: `Head-view lines: ${lines.length} vector <line> elements (weak lines are not drawn, as on the page).`,
      };
    });
  }

  /** Scrolling the page moves the band in view: once per frame, repaint
   *  the band when the window has left the painted one (lines kept). */
  let scrollWatched = false;
  let scrollDue = false;
  function watchScroll() {
    if (scrollWatched || typeof window === 'undefined') return;
    scrollWatched = true;
    window.addEventListener('scroll', () => {
      if (scrollDue) return;
      scrollDue = true;
      requestAnimationFrame(() => {
        scrollDue = false;
        const canvas = cur && cur.canvas;
        const band = canvas && canvas.blBand;
        if (!band || band.sc !== cur || !canvas.isConnected) return;
        const full = cur.data.K * cur.lay.rowH;
        cur.at = measure(cur.stage.node()); // (layout is clean in a frame callback)
        const { vh } = cur.at;
        const top = cur.at.top + cur.lay.top;
        const v0 = Math.max(0, -top);
        const v1 = Math.min(full, vh - top);
        if (v1 <= v0 || (v0 >= band.y0 && v1 <= band.y1)) return; // out of sight, or still inside the band
        repaint(cur);
      });
    }, { passive: true });
  }

  /** What an export adds around the stage, as last drawn (export.js). */
  view.exportContext = () => exported;
  view.theme = function (t) { if (!arguments.length) return theme; theme = t; return view; };
  view.size = function (b) { if (!arguments.length) return box; box = { width: b.width, height: b.height || null }; return view; };
  view.onHeads = function (f) { if (!arguments.length) return onHeads; onHeads = f; return view; };
  view.onFilter = function (f) { if (!arguments.length) return onFilter; onFilter = f; return view; };
  view.onShare = function (f) { if (!arguments.length) return onShare; onShare = f; return view; };
  view.onSpan = function (f) { if (!arguments.length) return onSpan; onSpan = f; return view; };
  return view;
}

/** The registry entry (views/index.js): what the page controller needs. */
export const descriptor = {
  id: 'head',
  label: 'Head view',
  size: ({ K }) => headFrame(K), // the embed frame (layout.js)
  controls: { layer: true, head: false, mean: false, words: true, mode: true, span: true },
  snapshot: true,
  // keep: draw only the strongest links carrying this share of each row (1: all above a floor).
  params: [{ key: 'keep', def: 1, parse: (raw) => (/^(0(\.\d{1,3})?|1(\.0{1,3})?)$/.test(raw) && Number(raw) >= 0.05 ? Number(raw) : null), expect: 'a share from 0.05 to 1' }],
  needs: (s) => ({ norms: s.mode === 'norm' }),
  create: (ctx) => headView()
    .onHeads((hs) => ctx.update({ heads: hs.length === ctx.nHeads() ? null : hs }))
    .onFilter((f) => ctx.update({ filter: f }))
    .onShare((keep) => ctx.update({ keep }))
    .onSpan((i) => ctx.toggleSpan(i)),
  prepare(run, s, { axis, src, lines, valueName, modeWord }) {
    const { H, T } = run;
    const all = Array.from({ length: H }, (_, h) => h);
    const selected = s.heads || all;
    const n = T * T; // read-only views into the run (no copy of 12 x 1 MB at 512 tokens)
    const mats = all.map((h) => axis.transform(src[s.layer].subarray(h * n, h * n + n)));
    const vmax = s.mode === 'norm' ? Math.max(1e-9, ...selected.map((h) => maxOf(mats[h]))) : 1;
    return {
      K: axis.K, labels: axis.labels, segs: axis.segs, H, mats, selected, filter: s.filter,
      hasPair: !!s.text_b, valueName, vmax, share: s.keep,
      title: `Head view — layer ${s.layer}, ${selected.length} of ${H} heads (${modeWord}); queries left, keys right`,
      notes: [
        `Line opacity = ${s.mode === 'norm' ? 'value-weighted norm ‖α f(x)‖ relative to the largest shown' : 'attention weight α'}; one colour per head; ${s.keep < 1 ? `per query, only the strongest links carrying ${Math.round(s.keep * 100)} % of its row are drawn` : 'the weakest lines are not drawn'}.`,
        ...lines.slice(1),
      ],
    };
  },
};
