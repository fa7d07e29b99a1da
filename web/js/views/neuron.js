// neuron.js — the neuron view: how one head turns one query token's vector
// into its attention row. Columns, from the layer's real q/k vectors and the
// engine's scores (src/analysis/scores.c, asked of the worker for the head shown):
//   key k_j | q × k_j (element-wise) | each term of the score | score | softmax (| ‖α f(x)‖)
// The terms are the family's, named as its paper names them (q·k/√d;
// MPNet's relative position bias; DeBERTa's c2c, c2p, p2c), the score is
// their sum (shown when there are several; null = a key the model masks
// out), and the softmax column is the head's attention row itself, the
// heatmap's numbers. q × k decomposes the content term: its cells add up to
// q · k, which that term divides by its scale.
// Vectors are painted on canvases (orange < 0 < blue); numbers are SVG text.
// Export SVG writes the vector cells as <rect>s (up to SVG_MAX_CELLS per strip).
// Three files: this one (the drawing and the descriptor), neuron_paint.js
// (the vector strips and their colour legend), neuron_rows.js (the key rows
// and what tapping or hovering them tells).
//
// Scales: q and k share one diverging colour scale, q × k has its own; both
// are symmetric around 0 and saturate at the 98th percentile of |value|
// (data.js clipRange), and the legend under the rows says where. Softmax
// bars use a fixed 0..1 scale (a weight of 0.228 is a bar 0.228 long, with
// the specials hidden or not); ‖α f(x)‖ bars scale to the largest shown.
//
// Layout (layout.js neuronLayout): side by side when the box is wide enough,
// else two stacked bands (vectors, then numbers) with their own key labels;
// in an embed the rows shrink to the frame's height.
//
// data = {labels[R], rows[R] (token index of each shown key), query, queryLabel,
//         tokens[T] (for the query picker), d, cols (data.js neuronColumns:
//         q, keys, products), terms [{name, abbr, about, values[R]}],
//         score[R] (NaN: masked), weights[R] (the attention row shown,
//         renormalized or not), norms[R] | null, notes[], title}

import { shownMatrices } from '../lib/export_data.js';
import {
  THEMES, tooltip, fmt, clip, infoLine, linksTable, exportContext, chromeHeight, setAll,
} from './common.js';
import { neuronLayout, neuronFrame, textWidth } from './layout.js';
import { clipRange, neuronColumns, headMatrix } from '../lib/data.js';
import { rowsOf, paintVectors, legend } from './neuron_paint.js';
import { keyRows, numberColumns, scoreText } from './neuron_rows.js';
import { runLabels, templateSpecials } from '../lib/tokens.js';
import { strongestHead, headReason, strideNote } from './view_notes.js';

/** A run's tokens as labels (byte-level "Ġthe" reads " the"), once per run:
 *  the query menu is rebuilt only when they change. */
const shownOf = new WeakMap();
function shownTokensOf(run) {
  let t = shownOf.get(run);
  if (!t) {
    t = runLabels(run);
    shownOf.set(run, t);
  }
  return t;
}

const d3 = globalThis.d3;


export function neuronView() {
  const st = { theme: THEMES.light, picked: null }; // picked: key token (raw index) tapped last
  let onQuery = () => {};
  let box = { width: 1100, height: null };
  const keys = keyRows(st);

  let exported = exportContext(); // what an export adds (its last drawing)

  function view(root, data) {
    tooltip.hide();
    // Where the stage is in the window, read before anything is written.
    const stageEl = root.select('.nv-stage').node();
    const top = stageEl ? stageEl.getBoundingClientRect().top : 0;
    if (st.picked !== null && !data.rows.includes(st.picked)) st.picked = null;
    skeleton(root);
    root.select('.view-title').text(data.title);
    queryPicker(root, data);
    const scales = {
      qk: clipRange(rowsOf(data.rows, data.cols.keys, data.d, data.cols.q)),
      prod: clipRange(rowsOf(data.rows, data.cols.products, data.d)),
    };
    textAlternative(root, data);
    const g = neuronLayout({
      R: data.rows.length, d: data.d, longestLabel: d3.max(data.labels, (l) => l.length) || 4,
      width: box.width, norms: !!data.norms, cols: numberColumns(data).length,
      height: box.height ? box.height - chromeHeight(root.node(), root.select('.nv-scroll').node()) : null,
      // on the page: the window's height below the sticky controls, less what is above the stage
      screen: box.screen ? box.screen - (root.select('.nv-scroll').node().getBoundingClientRect().top - root.node().getBoundingClientRect().top) : null,
    });
    root.select('p.view-notes').text(notesOf(data, scales, g).join(' ')); // (below the stage)
    const stage = root.select('.nv-stage').style('width', `${g.W}px`).style('height', `${g.H}px`)
      .attr('data-layout', g.stacked ? 'stacked' : 'wide');
    paintVectors(stage, data, g, scales, st.theme);
    const svg = stage.select('svg.nv-svg');
    // Only what changed: Chromium treats a re-set attribute as a change, and
    // the font inherited by every row text would lay them all out again
    // (~70 ms at 512 keys).
    setAll(svg.node(), { width: g.W, height: g.H, 'font-family': 'system-ui, sans-serif', 'font-size': g.font });
    titles(svg, data, g);
    keys.rows(svg, data, g, top);
    stage.node().blSettle = keys.settle;
    legend(svg, data, g, scales, st.theme);
    keys.wireRows(root, svg, data, g);
    exported = exportContext({ notes: notesOf(data, scales, g) });
  }

  function skeleton(root) {
    root.classed('bl-neuronview', true);
    root.selectAll('div.view-title').data([null]).join('div').attr('class', 'view-title');
    const bar = root.selectAll('div.nv-bar').data([null]).join('div').attr('class', 'nv-bar');
    const lab = bar.selectAll('label.nv-query').data([null]).join('label').attr('class', 'nv-query');
    lab.selectAll('span').data([null]).join('span').text('Query token: ');
    lab.selectAll('select').data([null]).join('select').attr('id', 'neuron-query').attr('class', 'nv-query-select');
    bar.selectAll('button.nv-prev').data([null]).join('button').attr('class', 'nv-prev').attr('type', 'button')
      .attr('aria-label', 'previous query token').text('◀');
    bar.selectAll('button.nv-next').data([null]).join('button').attr('class', 'nv-next').attr('type', 'button')
      .attr('aria-label', 'next query token').text('▶');
    infoLine(root);
    const stage = root.selectAll('div.nv-scroll').data([null]).join('div').attr('class', 'nv-scroll')
      .selectAll('div.nv-stage').data([null]).join('div').attr('class', 'nv-stage stage');
    for (const c of ['q', 'k', 'p']) stage.selectAll(`canvas.nv-${c}`).data([null]).join('canvas').attr('class', `nv-${c}`);
    const svg = stage.selectAll('svg.nv-svg').data([null]).join('svg').attr('class', 'nv-svg');
    for (const c of ['heads', 'qrow', 'rows', 'scales', 'hit']) svg.selectAll(`g.${c}`).data([null]).join('g').attr('class', c);
    root.selectAll('p.view-notes').data([null]).join('p').attr('class', 'view-notes');
    root.selectAll('p.view-hint').data([null]).join('p').attr('class', 'view-hint')
      .text('Hover or tap a row for its numbers, a vector cell for its element.');
  }

  function queryPicker(root, data) {
    // Every token of the input (specials included); for new tokens only the
    // options that changed are rewritten (512 of them at the longest).
    const select = root.select('select.nv-query-select');
    if (select.node().blTokens !== data.tokens) {
      select.selectAll('option').data(data.tokens).join('option')
        .each(function (t, i) { setAll(this, { value: i, '#text': `${i}: ${t}` }); });
      select.node().blTokens = data.tokens;
    }
    select.property('value', String(data.query)).on('change', (ev) => onQuery(Number(ev.target.value)));
    root.select('button.nv-prev').property('disabled', data.query <= 0).on('click', () => onQuery(data.query - 1));
    root.select('button.nv-next').property('disabled', data.query >= data.tokens.length - 1).on('click', () => onQuery(data.query + 1));
  }

  function titles(svg, data, g) {
    const qH = Math.max(6, Math.min(14, g.rowH));
    svg.select('g.qrow').selectAll('text').data([
      { t: 'query q', x: g.x.k, y: 12, a: 'start', w: 600 },
      { t: clip(data.queryLabel, g.chars), x: g.labelW, y: 22 + qH / 2, a: 'end', w: 700 },
    ]).join('text').attr('x', (t) => t.x).attr('y', (t) => t.y).attr('dy', '0.35em').attr('font-size', 11)
      .attr('text-anchor', (t) => t.a).attr('font-weight', (t) => t.w).attr('fill', st.theme.fg).text((t) => t.t);
    const vecY = g.y.rows - 8;
    const numY = g.y.numbers - 8;
    const heads = [
      { t: 'key k', x: g.x.k, y: vecY },
      // (the short title where the strip is narrower than the long one)
      { t: g.compact || g.stripW + 10 < textWidth('q × k (element-wise)', 11) ? 'q × k' : 'q × k (element-wise)', x: g.x.p, y: vecY },
      // each number column right-aligned over its numbers
      ...(g.compact ? [] : numberColumns(data).map((c, i) => ({ t: c.abbr, x: g.x.nums[i] + g.num - 8, y: numY, a: 'end' }))),
      { t: 'softmax', x: g.x.soft, y: numY },
    ];
    if (data.norms) heads.push({ t: '‖α f(x)‖', x: g.x.norm, y: numY });
    // (the full names of abbreviated columns: the notes, the table, a row's tooltip)
    svg.select('g.heads').selectAll('text').data(heads).join('text').attr('class', 'col-title')
      .attr('x', (t) => t.x).attr('y', (t) => t.y).attr('font-size', 11).attr('font-weight', 600)
      .attr('text-anchor', (t) => t.a || null).attr('fill', st.theme.fg).text((t) => t.t);
  }

  function notesOf(data, scales, g) {
    const pct = (x) => `${(100 * x).toFixed(1)}%`;
    const stride = strideNote(g.step, 'a row');
    return [
      ...(data.notes || []),
      ...(stride ? [stride] : []),
      `Vectors have d = ${data.d} elements, one cell each (orange < 0 < blue).`,
      `q and k colours saturate at ±${scales.qk.limit.toFixed(2)}, the 98th percentile of |q|, |k| (${pct(scales.qk.clipped)} of elements beyond; largest ${scales.qk.max.toFixed(2)}).`,
      `q × k colours saturate at ±${scales.prod.limit.toFixed(2)}, the 98th percentile of |q × k| (${pct(scales.prod.clipped)} beyond; largest ${scales.prod.max.toFixed(2)}).`,
      'Softmax bars use a fixed 0–1 scale.',
    ];
  }

  function textAlternative(root, data) {
    const order = data.rows.map((j, r) => r).sort((a, b) => data.weights[b] - data.weights[a]).slice(0, 10);
    const cols = numberColumns(data);
    linksTable(root, {
      summary: `Table: the ${order.length} keys query “${data.queryLabel}” attends to most`,
      columns: [{ key: 'k', title: 'key' }, ...cols.map((c, i) => ({ key: `c${i}`, title: c.name, fmt: scoreText })), { key: 'w', title: 'softmax', fmt }],
      rows: order.map((r) => ({ k: `${data.rows[r]}: ${data.labels[r]}`, ...Object.fromEntries(cols.map((c, i) => [`c${i}`, c.values[r]])), w: data.weights[r] })),
    });
  }

  /** What an export adds around the stage, as last drawn (export.js). */
  view.exportContext = () => exported;
  view.theme = function (t) { if (!arguments.length) return st.theme; st.theme = t; return view; };
  view.size = function (b) { if (!arguments.length) return box; box = { width: b.width, height: b.height || null, screen: b.screen || null }; return view; };
  /** Kept for callers of the old API. */
  view.width = function (w) { if (!arguments.length) return box.width; box = { width: w, height: null }; return view; };
  view.onQuery = function (f) { if (!arguments.length) return onQuery; onQuery = f; return view; };
  return view;
}

/** Attention (or the norms, in their mode) of layer s.layer: [H][T][T]. */
function srcOf(run, s) {
  const per = s.mode === 'norm' && run.norms ? run.norms : run.attn;
  return per && per[s.layer] ? per[s.layer] : null;
}

/** The key that query q's row of all heads together gives the most. */
function strongestKey(layer, H, T, q) {
  let best = 0;
  let top = -Infinity;
  for (let k = 0; k < T; k++) {
    let sum = 0;
    for (let h = 0; h < H; h++) sum += layer[(h * T + q) * T + k];
    if (sum > top) { top = sum; best = k; }
  }
  return best;
}

function whyNote(run, s, head, query, shown) {
  const src = srcOf(run, s);
  if (!src) return null;
  const best = strongestHead(src, run.H, run.T, query, s.key);
  return headReason({
    layer: s.layer, head, best, value: src[(head * run.T + query) * run.T + s.key],
    query: `${query} (${shown[query]})`, key: `${s.key} (${shown[s.key]})`,
    what: s.mode === 'norm' && run.norms ? '‖α f(x)‖' : 'attention',
  });
}

/** The scores of query `query` of one head from run.scores (protocol.js
 *  withScores: every query's rows; a snapshot's: the one it shows):
 *  {terms: [{name, abbr, about, row[T]}], score[T] (NaN: masked), window}. */
function scoresRow(run, layer, head, query) {
  const sc = run.scores;
  if (!sc || sc.layer !== layer || sc.head !== head || (sc.query !== null && sc.query !== query)) {
    throw new Error(`the scores of layer ${layer}, head ${head} are missing`);
  }
  const T = run.T;
  const rowOf = (a) => (sc.query === null ? a.subarray(query * T, (query + 1) * T) : a);
  return { terms: sc.terms.map((t) => ({ ...t, row: rowOf(t.values) })), score: rowOf(sc.scores), window: sc.window };
}

/** What the score adds up from and why, in words (the engine's own
 *  sentences, src/model/encoder_family.c), what is masked, and the softmax. */
function scoreNotes(sc, { T, d, masked, switchedOff }) {
  const t = sc.terms;
  const named = (x) => (x.abbr !== x.name ? `${x.name} (${x.abbr})` : x.name);
  const notes = [t.length === 1
    ? `Each key's score is ${named(t[0])}: ${t[0].about} (d = ${d}).`
    : `Each key's score is the sum of ${t.length} terms: ${t.map((x) => `${named(x)}, ${x.about}`).join('; ')} (d = ${d}).`];
  notes.push(`q × k: q and k (as the model uses them) multiplied element by element; the cells add up to q · k, which ${t[0].abbr} divides by its scale.`);
  if (sc.window >= 0) {
    notes.push(`This layer attends within a sliding window: keys more than ${sc.window} tokens from the query are masked (left out of the softmax, weight exactly 0)${masked ? `; ${masked} of the ${T} keys here` : ''}.`);
  }
  notes.push(switchedOff
    ? 'This head is switched off: the model multiplies its probabilities by 0 after the softmax, so its attention row (the softmax column) is 0; the scores are those it computes before that.'
    : `The softmax of the scores over ${masked ? `the ${T - masked} keys left in` : `all ${T} keys`} is exactly this head's attention row: the softmax column, the heatmap's numbers.`);
  return notes;
}

/** The registry entry (views/index.js): what the page controller needs. */
/** The Neuron view's export: one row, the query token's attention
 *  (softmax) over the shown keys, or its value-weighted norms with
 *  mode=norm; then, when the run holds the head's scores (run.scores), one
 *  row per term of the score and one of the score (their sum), each with
 *  its own "what" (masked keys: empty in CSV, null in JSON). */
function neuronBlocks({ s, run, H, T, axis, src }) {
  const head = s.head === 'mean' ? 0 : s.head;
  const query = Math.min(s.query, T - 1);
  const keep = axis.members.map((m) => m[0]);
  const row = headMatrix(src[s.layer], H, T, head).subarray(query * T, query * T + T);
  let values = keep.map((j) => row[j]);
  if (s.mode !== 'norm' && s.hide && s.renorm) {
    const sum = values.reduce((a, b) => a + b, 0) || 1;
    values = values.map((v) => v / sum);
  }
  const blocks = [{ layer: s.layer, head, query, rows: [runLabels(run)[query]], cols: axis.labels, values }];
  const sc = run.scores;
  if (sc && sc.layer === s.layer && sc.head === head && (sc.query === null || sc.query === query)) {
    const part = (a, what) => ({
      layer: s.layer, head, query, what, rows: [runLabels(run)[query]], cols: axis.labels,
      values: keep.map((j) => a[sc.query === null ? query * T + j : j]),
    });
    blocks.push(...sc.terms.map((t) => part(t.values, `score term ${t.name}: ${t.about}`)),
      part(sc.scores, `score (the softmax's input${sc.terms.length > 1 ? `: ${sc.terms.map((t) => t.abbr).join(' + ')}` : ''})`));
  }
  return blocks;
}

export const descriptor = {
  id: 'neuron',
  label: 'Neuron view (q · k details)',
  size: ({ K }) => neuronFrame(K), // the embed frame (layout.js)
  controls: { layer: true, head: true, mean: false, words: false, mode: true },
  shown: (run, s) => shownMatrices(run, s, { words: false, blocks: neuronBlocks }),
  snapshot: { layers: 'shown', heads: 'shown', draws: 'heads', qk: true, scores: true }, // what a snapshot holds (lib/snapshot.js)
  query: true, // the state's query token is this view's: the controller keeps it in range
  // scores: the shown head's scores and terms (src/analysis/scores.c), asked of the run
  needs: (s) => ({ norms: s.mode === 'norm', qk: true, scores: [s.layer, s.head === 'mean' ? 0 : s.head] }),
  create: (ctx) => neuronView().onQuery((q) => ctx.update({ query: q })),
  // key: the key of the cell it was opened from, when that chart showed all
  // heads at once (mean heatmap, rollout): the notes say why this head.
  params: [{
    key: 'key', def: null, expect: 'a token number',
    parse: (raw) => (/^\d{1,4}$/.test(raw) ? Number(raw) : null),
    format: (v) => String(v),
    within: (v, { T }) => (v < T ? null : `key ${v} is past the last token (${T - 1})`),
  }],
  /** Opening the view from another: it explains a single head. From a cell
   *  of all heads (at.allHeads) it opens on the head of the layer that gives
   *  the cell the most; from a row (no key) on that row's strongest key. */
  enter(s, at) {
    const src = at && at.run ? srcOf(at.run, s) : null;
    if (at && at.allHeads && src && at.query < at.run.T) {
      const { H, T } = at.run;
      const key = at.key !== null && at.key < T ? at.key : strongestKey(src, H, T, at.query);
      return { patch: { head: strongestHead(src, H, T, at.query, key).head, key } };
    }
    if (s.head === 'mean') return { patch: { head: 0, key: null }, note: 'The neuron view explains a single head; showing head 0 (pick another in “Head”).' };
    return { patch: { key: null } };
  },
  prepare(run, s, { axis }) {
    const { H, T } = run;
    if (!run.q || !run.q[s.layer] || !run.k || !run.k[s.layer]) throw new Error('query/key vectors of this layer are missing');
    const head = s.head === 'mean' ? 0 : s.head;
    const query = Math.min(s.query, T - 1);
    const shownTokens = shownTokensOf(run);
    // q, k and q × k for the strips (a snapshot's q/k are 8-bit)
    const cols = neuronColumns(run.q[s.layer], run.k[s.layer], H, T, run.d, head, query);
    const sc = scoresRow(run, s.layer, head, query);
    const keep = axis.members.map((m) => m[0]);
    // the softmax column: the head's attention row, the heatmap's numbers
    const row = headMatrix(run.attn[s.layer], H, T, head).subarray(query * T, (query + 1) * T);
    let weights = keep.map((j) => row[j]);
    if (s.hide && s.renorm) {
      const sum = weights.reduce((a, b) => a + b, 0) || 1;
      weights = weights.map((w) => w / sum);
    }
    let norms = null;
    if (s.mode === 'norm' && run.norms) {
      const off = (head * T + query) * T;
      norms = keep.map((j) => run.norms[s.layer][off + j]);
    }
    const terms = sc.terms.map((t) => ({ name: t.name, abbr: t.abbr, about: t.about, values: keep.map((j) => t.row[j]) }));
    const masked = sc.score.reduce((n, v) => n + (Number.isNaN(v) ? 1 : 0), 0);
    const switchedOff = !!(run.mask && run.mask.some(([l, h]) => l === s.layer && h === head));
    const why = s.key !== null && s.key < T ? whyNote(run, s, head, query, shownTokens) : null;
    return {
      labels: axis.labels, rows: keep, query, queryLabel: shownTokens[query], tokens: shownTokens, d: run.d,
      cols, terms, score: keep.map((j) => sc.score[j]), weights, norms, window: sc.window,
      title: `Neuron view — layer ${s.layer}, head ${head}: how query “${shownTokens[query]}” (token ${query}) attends`,
      notes: [
        ...(why ? [why] : []),
        ...scoreNotes(sc, { T, d: run.d, masked, switchedOff }),
        ...(s.hide ? [`${templateSpecials(run).join('/') || 'special'} rows hidden; softmax column ${s.renorm ? 'renormalized over the rows shown' : 'not renormalized'}.`] : []),
        ...(norms ? ['‖α f(x)‖: the same weight times the length of the value vector it moves (Kobayashi et al. 2020).'] : []),
      ],
    };
  },
};
