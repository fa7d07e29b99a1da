// head.js — the head view: tokens in two columns (queries left, keys right)
// joined by lines whose opacity is the attention (or norm), one colour per
// head. Lines go to a canvas and weak ones are pruned (data.js headLines), so
// long inputs never create tens of thousands of SVG nodes.
//
// The chart is five files, each one job: this one (the drawing's data flow
// and the descriptor), head_chrome.js (title, heads key, pair filter,
// pruning slider, A/B boundary, hints), head_tokens.js (the token columns:
// hover, tap, focus, freeze, keyboard), head_bars.js (per-head bars beside
// the other column's tokens while one is focused), head_lines.js (the
// lines: computed, painted in a band near the window, exported). They share
// one state object, st.
//
// Interaction: click a head swatch to toggle it, double-click to show it
// alone; hover a token to isolate its lines, click it to freeze that; the
// pair filter keeps only A->A, A->B, B->A or B->B lines.
// Export SVG writes the drawn lines as <line>s (up to SVG_MAX_LINES).
//
// Layout (layout.js headLayout): rows shrink to fit the height of an embed's
// frame (labels of every step-th token when rows get thin); swatches shrink
// so all heads fit one row. A pair's A/B boundary is a dashed line across
// both columns before the first B token (also with [SEP] hidden).
//
// data = {K, labels[K], raw[K] (the pieces of each, for tooltips), segs[K], H, mats[H] (K*K each), selected[] (heads
//         shown), filter, hasPair, valueName, vmax, notes[], title}

import { shownMatrices } from '../lib/export_data.js';
import {
  THEMES, tooltip, headColour, fmt, infoLine, linksTable, exportContext, chromeHeight,
  sliced, setAll,
} from './common.js';
import { headLayout, headFrame } from './layout.js';
import { pairBoundary, strongestLinks, maxOf } from '../lib/data.js';
import { renderChrome, swatches, pairFilter, boundary } from './head_chrome.js';
import { headTokens } from './head_tokens.js';
import { headLines, measure } from './head_lines.js';
import { drawHeadBars } from './head_bars.js';

const d3 = globalThis.d3;

export function headView() {
  // The state the chart's files share.
  const st = {
    theme: THEMES.light,
    box: { width: 900, height: null },
    on: { heads: () => {}, filter: () => {}, share: () => {}, span: () => {} },
    focus: null, // {side: 'left'|'right', index}
    frozen: false,
    kbd: { left: 0, right: 0 }, // token of each column that has the tab stop
    cur: null, // the scene drawn last (scene()), which token events act on
  };
  let last = null; // last data
  let exported = exportContext(); // what an export adds (its last drawing)
  const lines = headLines(st);
  const tokens = headTokens(st, redraw);

  function view(root, data) {
    if (last && (last.K !== data.K || last.labels.join('\u0000') !== data.labels.join('\u0000'))) {
      st.focus = null;
      st.frozen = false;
      st.kbd = { left: 0, right: 0 };
    }
    last = data;
    tooltip.hide();
    renderChrome(root);
    return update(root, data);
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
    swatches(root, data, sel, st);
    pairFilter(root, data, st);
    const pct = Math.round((data.share ?? 1) * 100);
    root.select('label.hv-prune input').property('value', pct)
      .on('input', (ev) => root.select('label.hv-prune output').text(`${ev.target.value} %`))
      .on('change', (ev) => st.on.share(Number(ev.target.value) / 100));
    root.select('label.hv-prune output').text(`${pct} %`);
    root.select('p.view-notes').text(notesOf(data).join(' '));
    const info = infoLine(root);
    if (!st.focus) info.set('Lines join each query (left) to the keys it attends to (right).');
    const sc = scene(root, data, sel, info);
    sc.at = at;
    st.cur = sc;
    boundary(sc.svg, data, sc.lay, st);
    tokens.column(sc, 'left');
    tokens.column(sc, 'right');
    drawHeadBars(sc, st.focus, st.theme);
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
    yield* lines.linesSteps(sc);
    yield;
    yield* lines.paintSteps(sc);
    yield;
    yield* textAlternative(root, data, sel);
  }

  /** Everything one drawing needs: data, shown heads, layout, elements. */
  function scene(root, data, sel, info) {
    const lay = headLayout({
      K: data.K, longestLabel: d3.max(data.labels, (l) => l.length) || 4, width: st.box.width,
      height: st.box.height ? st.box.height - chromeHeight(root.node(), root.select('.hv-scroll').node()) : null,
      // on the page: the window's height below the sticky controls, less what is above the stage
      screen: st.box.screen ? st.box.screen - (root.select('.hv-scroll').node().getBoundingClientRect().top - root.node().getBoundingClientRect().top) : null,
    });
    const stage = root.select('.hv-stage').style('width', `${lay.W}px`).style('height', `${lay.H}px`);
    const svg = stage.select('svg.hv-svg');
    // (setAll: an attribute set again, even to its value, makes the browser
    // lay out every token row under it again: ~60 ms at 512 tokens)
    setAll(svg.node(), { width: lay.W, height: lay.H, 'font-family': 'system-ui, sans-serif' });
    const canvas = stage.select('canvas.hv-lines').style('left', `${lay.xL}px`).style('top', `${lay.top}px`).node();
    const tint = sel.size === 1 ? headColour([...sel][0]) : st.theme.accent;
    return { data, sel, info, lay, stage, svg, canvas, tint };
  }

  /** Hover, focus or freeze: restyle the tokens and redraw the lines. */
  function redraw(sc) {
    tokens.tokenState(sc, 'left');
    tokens.tokenState(sc, 'right');
    drawHeadBars(sc, st.focus, st.theme);
    lines.repaint(sc);
  }

  /** What an export adds around the stage, as last drawn (export.js). */
  view.exportContext = () => exported;
  view.theme = function (t) { if (!arguments.length) return st.theme; st.theme = t; return view; };
  view.size = function (b) { if (!arguments.length) return st.box; st.box = { width: b.width, height: b.height || null, screen: b.screen || null }; return view; };
  const hook = (name) => function (f) { if (!arguments.length) return st.on[name]; st.on[name] = f; return view; };
  view.onHeads = hook('heads');
  view.onFilter = hook('filter');
  view.onShare = hook('share');
  view.onSpan = hook('span');
  return view;
}

const FILTERS = ['all', 'aa', 'ab', 'ba', 'bb'];
const headIndex = (p) => (/^\d{1,4}$/.test(p) ? Number(p) : null);

/** The head view's own URL parameters (page/state.js reads them through the
 *  registry): keep (draw only the strongest links carrying this share of
 *  each row; 1: all above a floor), filter (a pair's A→A, A→B, B→A, B→B
 *  lines), heads (the heads shown; null: every head). */
export const HEAD_PARAMS = [
  { key: 'keep', def: 1, parse: (raw) => (/^(0(\.\d{1,3})?|1(\.0{1,3})?)$/.test(raw) && Number(raw) >= 0.05 ? Number(raw) : null), expect: 'a share from 0.05 to 1' },
  { key: 'filter', def: 'all', parse: (raw) => (FILTERS.includes(raw) ? raw : null), expect: `one of ${FILTERS.join(', ')}` },
  {
    key: 'heads', def: null, none: ['all', ''], expect: 'a comma-separated list of head numbers',
    parse: (raw) => {
      const parts = raw.split(',').map(headIndex);
      return parts.some((p) => p === null) ? null : [...new Set(parts)].sort((a, b) => a - b);
    },
    // The model's heads: numbers past them are dropped; all of them is every head.
    fit: (v, { heads }) => {
      const ok = v.filter((h) => h < heads);
      return { value: ok.length && ok.length < heads ? ok : null, notice: ok.length !== v.length ? `Ignored head numbers ≥ ${heads} in heads=.` : null };
    },
    within: (v, { H }) => (v.some((h) => h >= H) ? `heads ${v.join(',').slice(0, 40)}${v.join(',').length > 40 ? '…' : ''} name heads past its ${H}` : null),
  },
];

/** The registry entry (views/index.js): what the page controller needs. */
export const descriptor = {
  id: 'head',
  label: 'Head view',
  size: ({ K }) => headFrame(K), // the embed frame (layout.js)
  controls: { layer: true, head: false, mean: false, words: true, mode: true, span: true },
  // its export: one K x K matrix per shown head of the layer
  shown: (run, s) => shownMatrices(run, s, { span: true, blocks: ({ H, block }) => (s.heads || [...Array(H).keys()]).map((h) => block(s.layer, h)) }),
  snapshot: { layers: 'shown', heads: 'all', draws: 'heads' }, // what a snapshot holds (lib/snapshot.js)
  // keep: draw only the strongest links carrying this share of each row (1: all above a floor).
  params: HEAD_PARAMS,
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
      K: axis.K, labels: axis.labels, raw: axis.raw, segs: axis.segs, H, mats, selected, filter: s.filter,
      hasPair: !!s.text_b, valueName, vmax, share: s.keep,
      title: `Head view — layer ${s.layer}, ${selected.length} of ${H} heads (${modeWord}); queries left, keys right`,
      notes: [
        `Line opacity = ${s.mode === 'norm' ? 'value-weighted norm ‖α f(x)‖ relative to the largest shown' : 'attention weight α'}; one colour per head; ${s.keep < 1 ? `per query, only the strongest links carrying ${Math.round(s.keep * 100)} % of its row are drawn` : 'the weakest lines are not drawn'}.`,
        ...lines.slice(1),
      ],
    };
  },
};
