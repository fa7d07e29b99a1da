// overview.js — the heads overview: every layer × head as one glyph, coloured
// by its Kovaleva et al. (2019) pattern class and sized by its confidence
// (mean over rows of the row's largest weight). The features come from the
// C analysis (src/analysis/analyze.c bl_analyze through blw_analyze_json; the JS only
// draws). Rank the heads by any feature and keep only those reaching a
// threshold ("heads that attend to the previous token": rank by prev, at
// least 0.5), or rank them by how alike their attention maps are to the
// open head (Jensen–Shannon distance, Clark et al. 2019; computed in the
// model worker from the run's attention: needs() asks for it, protocol.js). A click selects a head and offers to open it in the
// other views; Enter or a double click opens it in the heatmap.
//
// State (URL): rank = layer | <feature> | like, min = the threshold (for
// like: the largest distance kept).
//
// data = {L, H, T, heads[L*H] (analysis features), layer, head, rank, min,
//         dist[L*H] | null (JS distance to the open head, rank=like; the
//         run's like.dist from the worker),
//         pair, title, notes[]}

import { THEMES, tooltip, fmt, infoLine, linksTable, exportContext, chromeHeight, textWidth } from './common.js';
import { ANALYSIS } from '../lib/protocol.js';
import { maskSet } from '../lib/compare.js';
import { classColour } from './palette.js';

const d3 = globalThis.d3;

export const CLASSES = ['vertical', 'diagonal', 'vertical+diagonal', 'block', 'heterogeneous'];

/** Features a head can be ranked by: [key, label, what it is]. */
export const FEATURES = [
  ['confidence', 'confidence', 'mean over rows of the row\'s largest weight'],
  ['entropy', 'entropy', 'mean row entropy (nats): high = spread out'],
  ['cls', '→ [CLS]', 'mean attention on [CLS]'],
  ['sep', '→ [SEP]', 'mean attention on [SEP]'],
  ['punct', '→ punctuation', 'mean attention on punctuation'],
  ['prev', '→ previous token', 'mean attention on the token before'],
  ['self', '→ itself', 'mean attention on the token itself'],
  ['next', '→ next token', 'mean attention on the token after'],
  ['segment', '→ own segment', 'mean attention kept in the query\'s own sentence (pairs)'],
];
export const RANKS = ['layer', ...FEATURES.map((f) => f[0]), 'like'];

/** The heads in the order and selection of a rank / threshold: [{l, h, v}]. */
export function rankHeads({ heads, L, H, rank, min, dist }) {
  const all = [];
  for (let l = 0; l < L; l++) {
    for (let h = 0; h < H; h++) {
      const f = heads[l * H + h];
      const v = rank === 'layer' ? null : rank === 'like' ? dist[l * H + h] : f[rank];
      all.push({ l, h, v, f });
    }
  }
  if (rank === 'layer') return all;
  const ok = all.filter((x) => x.v !== null && Number.isFinite(x.v) && (rank === 'like' ? x.v <= min : x.v >= min));
  return ok.sort((a, b) => (rank === 'like' ? a.v - b.v : b.v - a.v) || a.l - b.l || a.h - b.h);
}

export function overviewView() {
  let theme = THEMES.light;
  let box = { width: 720, height: null };
  let onPick = () => {};
  let onRank = () => {};
  let onOpen = () => {};
  let onAblate = null; // (l, h) -> true when the click switched a head off / on
  let openIn = [];

  let exported = exportContext(); // what an export adds (its last drawing)

  function view(root, data) {
    tooltip.hide(); // (a tap shows one; the redraw it causes removes it)
    if (root.select('.ov-stage').empty()) build(root);
    update(root, data);
  }

  function build(root) {
    root.selectAll('div.view-title').data([null]).join('div').attr('class', 'view-title');
    const bar = root.selectAll('div.ov-bar').data([null]).join('div').attr('class', 'ov-bar hv-bar');
    const sortL = bar.append('label').text('Rank by ');
    sortL.append('select').attr('class', 'ov-rank').attr('aria-label', 'Rank heads by');
    const minL = bar.append('label').attr('class', 'ov-min-ctl');
    minL.append('span').attr('class', 'ov-min-label');
    minL.append('input').attr('type', 'range').attr('class', 'ov-min').attr('min', 0).attr('max', 1).attr('step', 0.01)
      .style('width', '110px').style('vertical-align', 'middle');
    minL.append('output').attr('class', 'ov-min-value').style('display', 'inline-block').style('min-width', '3em');
    bar.append('span').attr('class', 'ov-count');
    infoLine(root);
    root.selectAll('div.ov-scroll').data([null]).join('div').attr('class', 'ov-scroll').style('max-width', '100%').style('overflow', 'auto')
      .selectAll('div.ov-stage').data([null]).join('div').attr('class', 'ov-stage stage')
      .selectAll('svg.ov-svg').data([null]).join('svg').attr('class', 'ov-svg');
    root.selectAll('p.view-notes').data([null]).join('p').attr('class', 'view-notes');
    root.selectAll('p.view-hint').data([null]).join('p').attr('class', 'view-hint')
      .text('Click or tap a head to select it and open it in another view; double click or Enter opens it as a heatmap. Keyboard: Tab to the grid, arrows move, Enter opens.');
  }

  function label(d) { return `layer ${d.l}, head ${d.h}`; }

  function describe(d, data) {
    const f = d.f;
    const parts = [`${label(d)}: ${f.class}`, `confidence ${fmt(f.confidence)}`, `entropy ${fmt(f.entropy)}`,
      `prev ${fmt(f.prev)}`, `self ${fmt(f.self)}`, `next ${fmt(f.next)}`, `[CLS] ${fmt(f.cls)}`, `[SEP] ${fmt(f.sep)}`, `punct ${fmt(f.punct)}`];
    if (data.pair && f.segment !== null) parts.push(`own segment ${fmt(f.segment)}`);
    if (data.rank === 'like' && d.v !== null) parts.push(`JS distance ${fmt(d.v)}`);
    return parts.join(' · ');
  }

  function update(root, data) {
    const { L, H } = data;
    root.select('.view-title').text(data.title);
    root.select('p.view-notes').text((data.notes || []).join(' '));

    // Controls: rank select and threshold.
    const ranks = RANKS.filter((r) => r !== 'segment' || data.pair);
    const rankLabel = (r) => (r === 'layer' ? 'layer and head' : r === 'like' ? 'like the open head (JS distance)' : FEATURES.find((f) => f[0] === r)[1]);
    root.select('select.ov-rank').selectAll('option').data(ranks).join('option').attr('value', (r) => r).text(rankLabel);
    root.select('select.ov-rank').property('value', data.rank).on('change', (ev) => onRank({ rank: ev.target.value, min: ev.target.value === 'like' ? 1 : 0 }));
    const minCtl = root.select('.ov-min-ctl').style('display', data.rank === 'layer' ? 'none' : null);
    const isLike = data.rank === 'like';
    let hi = 1;
    if (data.rank === 'entropy') hi = Math.max(1, Math.ceil(d3.max(data.heads, (f) => f.entropy) * 10) / 10);
    minCtl.select('.ov-min-label').text(isLike ? 'at most ' : 'at least ');
    minCtl.select('input').attr('max', hi).attr('aria-label', isLike ? 'largest distance kept' : 'smallest value kept')
      .property('value', data.min)
      .on('input', (ev) => minCtl.select('output').text(Number(ev.target.value).toFixed(2)))
      .on('change', (ev) => onRank({ rank: data.rank, min: Number(ev.target.value) }));
    minCtl.select('output').text(Number(data.min).toFixed(2));

    const shown = rankHeads(data);
    root.select('.ov-count').text(`${shown.length} of ${L * H} heads`);

    // Layout: a grid H wide; by layer, rows are layers; ranked, row-major.
    const bar = 34;
    const width = Math.max(200, box.width);
    const cell = Math.max(18, Math.min(52, Math.floor((width - bar - 4) / H)));
    const rows = data.rank === 'layer' ? L : Math.max(1, Math.ceil(shown.length / H));
    const legendH = 40;
    const top = 16;
    let cellY = cell;
    if (box.height) {
      const avail = box.height - chromeHeight(root.node(), root.select('.ov-scroll').node()) - top - legendH - 6;
      cellY = Math.max(16, Math.min(cell, Math.floor(avail / rows)));
    }
    const c = Math.min(cell, cellY);
    const W = bar + H * cell + 4;
    const Hh = top + rows * cellY + legendH;
    const rMax = c / 2 - 2;
    const svg = root.select('svg.ov-svg').attr('width', W).attr('height', Hh).attr('role', 'group')
      .attr('aria-label', `Heads overview: ${shown.length} of ${L * H} heads`);
    root.select('.ov-stage').style('width', `${W}px`).style('height', `${Hh}px`);

    const pos = new Map();
    shown.forEach((d, k) => {
      const row = data.rank === 'layer' ? d.l : Math.floor(k / H);
      const col = data.rank === 'layer' ? d.h : k % H;
      pos.set(`${d.l}/${d.h}`, { x: bar + col * cell + cell / 2, y: top + row * cellY + cellY / 2 });
    });
    // Axis labels: layers down the side and heads across the top when by
    // layer; ranks otherwise.
    const side = data.rank === 'layer' ? d3.range(L).map((l) => ({ t: `L${l}`, y: top + l * cellY + cellY / 2 }))
      : d3.range(rows).map((r) => ({ t: `#${r * H + 1}`, y: top + r * cellY + cellY / 2 }));
    svg.selectAll('text.ov-side').data(side).join('text').attr('class', 'ov-side').attr('x', bar - 4).attr('y', (d) => d.y)
      .attr('text-anchor', 'end').attr('dominant-baseline', 'middle').attr('font-size', 11).attr('fill', theme.fg).text((d) => d.t);
    const headsTop = data.rank === 'layer' ? d3.range(H).map((h) => ({ t: `H${h}`, x: bar + h * cell + cell / 2 })) : [];
    svg.selectAll('text.ov-top').data(headsTop).join('text').attr('class', 'ov-top').attr('x', (d) => d.x).attr('y', top - 4)
      .attr('text-anchor', 'middle').attr('font-size', 10).attr('fill', theme.fg).text((d) => d.t);

    const all = shown;
    const colour = (f) => classColour(f.class);
    const g = svg.selectAll('g.ov-head').data(all, (d) => `${d.l}/${d.h}`).join((enter) => {
      const e = enter.append('g').attr('class', 'ov-head').attr('tabindex', 0);
      e.append('rect').attr('class', 'ov-cell');
      e.append('circle').attr('class', 'ov-glyph');
      e.append('text').attr('class', 'ov-name');
      e.append('path').attr('class', 'ov-off');
      return e;
    });
    g.attr('transform', (d) => { const p = pos.get(`${d.l}/${d.h}`); return `translate(${p.x},${p.y})`; })
      .attr('role', 'button')
      .attr('aria-label', (d) => describe(d, data))
      .attr('data-layer', (d) => d.l).attr('data-head', (d) => d.h).attr('data-class', (d) => d.f.class);
    g.select('rect.ov-cell').attr('x', -cell / 2 + 1).attr('y', -cellY / 2 + 1).attr('width', cell - 2).attr('height', cellY - 2)
      .attr('rx', 3).attr('fill', 'transparent')
      .attr('stroke', (d) => (d.l === data.layer && d.h === data.head ? theme.fg : 'none')).attr('stroke-width', 2);
    g.select('circle.ov-glyph').attr('r', (d) => Math.max(1.5, rMax * Math.sqrt(Math.max(0, Math.min(1, d.f.confidence)))))
      .attr('cy', data.rank === 'layer' ? 0 : -3)
      .attr('fill', (d) => colour(d.f));
    g.select('text.ov-name').text((d) => (data.rank === 'layer' ? '' : `${d.l}·${d.h}`))
      .attr('y', cellY / 2 - 3).attr('text-anchor', 'middle').attr('font-size', Math.min(10, cell / 3.2)).attr('fill', theme.fg);
    const info = infoLine(root);
    const pick = (d) => {
      info.set(describe(d, data), { label: 'Open as heatmap', run: () => onOpen(null, d.l, d.h) });
      onPick(d.l, d.h);
    };
    g.select('path.ov-off').attr('d', (d) => (data.off && data.off.has(`${d.l}/${d.h}`)
      ? `M${-cell / 2 + 4},${-cellY / 2 + 4}L${cell / 2 - 4},${cellY / 2 - 4}M${cell / 2 - 4},${-cellY / 2 + 4}L${-cell / 2 + 4},${cellY / 2 - 4}` : null))
      .attr('stroke', theme.muted).attr('stroke-width', 2).attr('pointer-events', 'none');
    g.attr('data-off', (d) => (data.off && data.off.has(`${d.l}/${d.h}`) ? 1 : null));
    g.on('click', (ev, d) => { if (!(onAblate && onAblate(d.l, d.h))) pick(d); })
      .on('dblclick', (ev, d) => onOpen(null, d.l, d.h))
      .on('keydown', (ev, d) => {
        if (ev.key === 'Enter' || ev.key === ' ') { ev.preventDefault(); if (!(onAblate && onAblate(d.l, d.h))) onOpen(null, d.l, d.h); return; }
        // Arrows move along the grid (one tab stop for all heads).
        const k = all.indexOf(d);
        const to = { ArrowLeft: k - 1, ArrowRight: k + 1, ArrowUp: k - H, ArrowDown: k + H, Home: 0, End: all.length - 1 }[ev.key];
        if (to === undefined) return;
        ev.preventDefault();
        const next = all[Math.max(0, Math.min(all.length - 1, to))];
        const node = g.filter((x) => x === next).node();
        g.attr('tabindex', (x) => (x === next ? 0 : -1));
        if (node) { node.focus(); info.set(describe(next, data)); }
      })
      .on('mouseenter mousemove', (ev, d) => tooltip.show(ev, describe(d, data).split(' · ')))
      .on('mouseleave', () => tooltip.hide());
    const cur = all.find((d) => d.l === data.layer && d.h === data.head);
    g.attr('tabindex', (d) => (d === (cur || all[0]) ? 0 : -1));
    info.set(cur ? describe(cur, data) : `Layer ${data.layer}, head ${data.head} is open in the other views${data.rank === 'layer' ? '' : ' (not among the heads shown)'}.`);
    // "Open in" buttons for the open head: every view that shows one head.
    const btns = root.select('div.view-info').selectAll('button.ov-open').data(openIn).join('button')
      .attr('class', 'ov-open').attr('type', 'button')
      .text((v) => v.label).on('click', (ev, v) => onOpen(v.id, data.layer, data.head));
    btns.attr('aria-label', (v) => `Open layer ${data.layer}, head ${data.head} in the ${v.label}`);

    // Legend: the class colours, then the size key, flowed left to right in
    // rows as wide as the grid (each key as wide as its own label).
    const lg = svg.selectAll('g.legend').data([null]).join('g').attr('class', 'legend')
      .attr('transform', `translate(${bar}, ${top + rows * cellY + 10})`);
    const sizes = [0.25, 1].map((v) => ({ v, r: Math.max(1.5, Math.min(6, rMax) * Math.sqrt(v)) }));
    const items = [...CLASSES.map((k) => ({ k, c: classColour(k), text: k })),
      { k: 'size', c: theme.muted, text: 'size: confidence', sizes }];
    let x = 0;
    let y = 0;
    const avail = W - bar;
    for (const it of items) {
      // lead: from the key's left edge to its text (one swatch, or the two sizes)
      const lead = it.sizes ? 2 * (sizes[0].r + sizes[1].r) + 7 : 14;
      it.w = lead + textWidth(it.text, 11) + 8;
      if (x > 0 && x + it.w > avail) { x = 0; y += 15; }
      it.x = x; it.y = y; it.lead = lead;
      x += it.w;
    }
    lg.selectAll('g.key').data(items, (d) => d.k).join((enter) => {
      const e = enter.append('g').attr('class', 'key');
      e.append('text').attr('dominant-baseline', 'middle').attr('font-size', 11);
      return e;
    }).attr('transform', (d) => `translate(${d.x + 5}, ${d.y})`)
      .call((k) => k.selectAll('circle').data((d) => (d.sizes
        ? [{ r: d.sizes[0].r, cx: d.sizes[0].r - 5 }, { r: d.sizes[1].r, cx: 2 * d.sizes[0].r + 3 + d.sizes[1].r - 5 }] : [{ r: 5, cx: 0 }])
        .map((z) => ({ ...z, fill: d.c })))
        .join('circle').attr('cx', (z) => z.cx).attr('r', (z) => z.r).attr('fill', (z) => z.fill))
      .call((k) => k.select('text').attr('x', (d) => d.lead - 5).attr('fill', theme.fg).text((d) => d.text));
    // Two legend rows were planned for (legendH); as tall as the rows drawn.
    const stageH = top + rows * cellY + 10 + y + 12;
    svg.attr('height', stageH);
    root.select('.ov-stage').style('height', `${stageH}px`);

    exported = exportContext({ notes: data.notes || [] });
    linksTable(root, {
      summary: `Table: the ${Math.min(shown.length, 24)} first heads shown, with their class and features`,
      columns: [{ key: 'lh', title: 'head' }, { key: 'c', title: 'class' }, { key: 'conf', title: 'confidence', fmt },
        { key: 'v', title: data.rank === 'layer' ? 'entropy' : rankLabel(data.rank), fmt }],
      rows: shown.slice(0, 24).map((d) => ({ lh: label(d), c: d.f.class, conf: d.f.confidence, v: data.rank === 'layer' ? d.f.entropy : d.v })),
    });
  }

  view.exportContext = () => exported;
  view.theme = function (t) { if (!arguments.length) return theme; theme = t; return view; };
  view.size = function (b) { if (!arguments.length) return box; box = { width: b.width, height: b.height || null }; return view; };
  view.onPick = function (f) { onPick = f; return view; };
  view.onRank = function (f) { onRank = f; return view; };
  view.onOpen = function (f) { onOpen = f; return view; };
  view.openIn = function (list) { openIn = list; return view; };
  view.onAblate = function (f) { onAblate = f; return view; };
  return view;
}

/** The registry entry (views/index.js). */
export const descriptor = {
  id: 'overview',
  label: 'Heads overview',
  // the embed frame: every head as a cell of 18..52 px
  size: ({ L = 12, H = 12 } = {}) => {
    const cell = Math.max(18, Math.min(52, Math.floor((720 - 40) / H)));
    return { width: 720, height: Math.min(1400, 230 + L * cell + 60) };
  },
  controls: { layer: true, head: true, mean: false, words: false, mode: false },
  // a snapshot of every head's attention; the analyses come from it (page/boot.js, lib/attn_analyze.js)
  snapshot: { layers: 'all', heads: 'all', draws: 'heads' },
  axis: false,
  needs: (s) => ({ analysis: ANALYSIS.HEADS, like: s.rank === 'like' ? [s.layer, s.head === 'mean' ? 0 : s.head] : null }),
  params: [
    { key: 'rank', def: 'layer', parse: (raw) => (RANKS.includes(raw) ? raw : null), expect: `one of ${RANKS.join(', ')}` },
    { key: 'min', def: 0, parse: (raw) => (/^\d{1,3}(\.\d{1,4})?$/.test(raw) && Number(raw) <= 100 ? Number(raw) : null), expect: 'a number from 0 to 100' },
  ],
  enter: (s) => (s.head === 'mean' ? { patch: { head: 0 } } : null),
  create: (ctx) => overviewView()
    .onPick((layer, head) => ctx.update({ layer, head }))
    .onRank((patch) => ctx.update(patch))
    .onOpen((id, layer, head) => (id ? ctx.update({ view: id, layer, head }) : ctx.openHead(layer, head)))
    .openIn(ctx.viewsShowingOneHead())
    // In the page's "Switch heads off" mode a click toggles the head.
    .onAblate((l, h) => (ctx.ablating && ctx.ablating() ? (ctx.toggleAblate(l, h), true) : false)),
  prepare(run, s) {
    if (!run.analysis) throw new Error('the run holds no analysis');
    const { L, H, T } = run;
    const head = s.head === 'mean' ? 0 : s.head;
    let dist = null;
    if (s.rank === 'like') {
      // From the worker (src/analysis/analyze.c bl_head_compare); needs() asks for them.
      if (!(run.like && run.like.of[0] === s.layer && run.like.of[1] === head)) throw new Error('the run holds no distances to this head');
      dist = run.like.dist;
    }
    return {
      L, H, T, heads: run.analysis.heads, layer: s.layer, head, rank: s.rank, min: s.min, dist, pair: !!run.analysis.pair,
      off: maskSet(s.ablate, L, H),
      title: `Heads overview — ${L} layers × ${H} heads; colour: pattern class, size: confidence`,
      notes: [
        'Classes after Kovaleva et al. (2019): vertical = most rows attend to the same few tokens ([CLS], [SEP], punctuation); diagonal = to themselves or a neighbour; block = within their own sentence (pairs); heterogeneous = none of these. Confidence = mean over rows of the row\'s largest weight.',
        ...(s.rank === 'like' ? [`Heads ranked by Jensen–Shannon distance (base 2, mean over rows; 0 = the same map) from layer ${s.layer}, head ${head} (Clark et al. 2019).`] : []),
      ],
    };
  },
  /** Export (CSV/JSON): one row per head with its features. */
  shown(run, s) {
    const cols = [`class (${CLASSES.map((c, i) => `${i} ${c}`).join(', ')})`, ...FEATURES.map((f) => f[0])];
    const heads = run.analysis.heads;
    return {
      view: 'overview', mode: 'attn', what: 'head features', hide: false, renorm: false, words: false, ablate: s.ablate || '',
      text: s.text, text_b: s.text_b || '', tokens: run.tokens.slice(),
      blocks: [{
        layer: 'all', head: 'all', rows: heads.map((f) => `layer ${f.layer} head ${f.head}`), cols,
        values: heads.flatMap((f) => cols.map((c, k) => (k === 0 ? CLASSES.indexOf(f.class) : (f[c] === null ? NaN : f[c])))),
      }],
    };
  },
};
