// corpus_chart.js — the Corpus view's results (issue 25 item 2), drawn from
// a corpus run's result (the JSON of `bertlens corpus`): Kovaleva-style
// stacked bars of the pattern-class shares per layer, the head grid coloured
// and ranked by a mean feature, and the chosen head's strongest links in
// context. SVG (at most a few hundred marks); text goes in with .text().
//
// drawResults(box, r, o): o = {theme, width, feature, head: {layer, head},
//   onFeature(f), onHead(layer, head), onExample(link), context(link) ->
//   Promise<{a, b, q: [start, end, inB], k: [start, end, inB]} | null>}

import { CORPUS_FEATURES, CORPUS_CLASSES } from '../lib/corpus_export.js';
import { classColour } from './palette.js';

const FEATURE_TEXT = {
  entropy: 'entropy (spread of attention)', cls: 'attention to [CLS]', sep: 'attention to [SEP]', punct: 'attention to punctuation',
  prev: 'attention to the previous token', self: 'attention to itself', next: 'attention to the next token',
};
const f3 = (v) => (v === null || v === undefined ? '—' : Number(v).toFixed(3));

/** Per layer: the mean over its heads of each class share. */
export function layerShares(r) {
  const L = 1 + Math.max(...r.heads.map((h) => h.layer));
  return Array.from({ length: L }, (_, l) => {
    const hs = r.heads.filter((h) => h.layer === l);
    return Object.fromEntries(CORPUS_CLASSES.map((c) => [c, hs.reduce((s, h) => s + (h.class_fractions[c] || 0), 0) / hs.length]));
  });
}

/** Heads ranked by a feature, highest first (nulls last). */
export function rankHeads(r, f) {
  return [...r.heads].sort((a, b) => (b[f] ?? -Infinity) - (a[f] ?? -Infinity) || a.layer - b.layer || a.head - b.head);
}

function section(box, cls, title) {
  const s = box.append('section').attr('class', `cp-section ${cls}`);
  s.append('h3').attr('class', 'cp-h').text(title);
  return s;
}

/** The width a section is laid out at (its column of the results grid). */
const sectionWidth = (s, o) => s.node().clientWidth || o.width;

function classChart(s, r, o) {
  const shares = layerShares(r);
  const w = Math.max(240, Math.min(sectionWidth(s, o), 640)), rowH = 22, left = 64, top = 6;
  const svg = s.append('svg').attr('class', 'cp-bars').attr('width', w).attr('height', top + shares.length * rowH + 4)
    .attr('role', 'img').attr('aria-label', `Stacked bars of the pattern classes of ${shares.length} layers`);
  const x = d3.scaleLinear().domain([0, 1]).range([left, w - 8]);
  shares.forEach((sh, l) => {
    const g = svg.append('g').attr('transform', `translate(0,${top + l * rowH})`);
    g.append('text').attr('x', left - 6).attr('y', rowH / 2 + 4).attr('text-anchor', 'end').attr('fill', o.theme.fg)
      .style('font', o.theme.font).text(`layer ${l}`);
    let at = 0;
    for (const c of CORPUS_CLASSES) {
      const v = sh[c];
      g.append('rect').attr('class', 'cp-bar').attr('data-class', c).attr('x', x(at)).attr('y', 2)
        .attr('width', Math.max(0, x(at + v) - x(at))).attr('height', rowH - 5).attr('fill', classColour(c))
        .append('title').text(`layer ${l}: ${c} ${(100 * v).toFixed(1)} %`);
      at += v;
    }
  });
  const legend = s.append('div').attr('class', 'cp-legend');
  for (const c of CORPUS_CLASSES) {
    const item = legend.append('span').attr('class', 'cp-legend-item');
    item.append('span').attr('class', 'cp-swatch').style('background', classColour(c));
    item.append('span').text(c);
  }
}

function headGrid(s, r, o) {
  const pick = s.append('label').attr('class', 'cp-pick');
  pick.append('span').text('Colour and rank by the mean ');
  const sel = pick.append('select').attr('class', 'cp-feature').on('change', (ev) => o.onFeature(ev.target.value));
  sel.selectAll('option').data(CORPUS_FEATURES).join('option').attr('value', (d) => d).text((d) => FEATURE_TEXT[d])
    .property('selected', (d) => d === o.feature);
  const L = 1 + Math.max(...r.heads.map((h) => h.layer)), H = 1 + Math.max(...r.heads.map((h) => h.head));
  const vals = r.heads.map((h) => h[o.feature]).filter((v) => v !== null);
  const lo = Math.min(...vals), hi = Math.max(...vals);
  const cell = Math.max(14, Math.min(34, Math.floor((Math.min(sectionWidth(s, o), 640) - 64) / H)));
  const svg = s.append('svg').attr('class', 'cp-heads').attr('width', 60 + H * cell).attr('height', 18 + L * cell)
    .attr('role', 'grid').attr('aria-label', `${L} × ${H} heads coloured by ${FEATURE_TEXT[o.feature]}; Enter on a head shows its examples`);
  for (let h = 0; h < H; h++) {
    svg.append('text').attr('x', 60 + h * cell + cell / 2).attr('y', 12).attr('text-anchor', 'middle').attr('fill', o.theme.muted)
      .style('font', o.theme.font).text(h);
  }
  for (const hd of r.heads) {
    const v = hd[o.feature];
    const t = v === null || hi === lo ? 0 : (v - lo) / (hi - lo);
    const chosen = hd.layer === o.head.layer && hd.head === o.head.head;
    const g = svg.append('g').attr('class', 'cp-head').attr('tabindex', 0).attr('role', 'button')
      .attr('data-layer', hd.layer).attr('data-head', hd.head)
      .attr('aria-label', `layer ${hd.layer} head ${hd.head}: ${FEATURE_TEXT[o.feature]} ${f3(v)}`)
      .attr('aria-pressed', chosen ? 'true' : 'false')
      .on('click', () => o.onHead(hd.layer, hd.head))
      .on('keydown', (ev) => { if (ev.key === 'Enter' || ev.key === ' ') { ev.preventDefault(); o.onHead(hd.layer, hd.head); } });
    g.append('rect').attr('x', 60 + hd.head * cell + 1).attr('y', 18 + hd.layer * cell + 1).attr('width', cell - 2).attr('height', cell - 2)
      .attr('fill', v === null ? o.theme.grid : o.theme.seq(t)).attr('stroke', chosen ? o.theme.accent : 'none').attr('stroke-width', 3);
    g.append('title').text(`L${hd.layer} H${hd.head}: ${f3(v)}`);
  }
  for (let l = 0; l < L; l++) {
    svg.append('text').attr('x', 54).attr('y', 18 + l * cell + cell / 2 + 4).attr('text-anchor', 'end').attr('fill', o.theme.muted)
      .style('font', o.theme.font).text(`layer ${l}`);
  }
  const top = rankHeads(r, o.feature).slice(0, 5);
  const ol = s.append('ol').attr('class', 'cp-rank');
  ol.selectAll('li').data(top).join('li').text((d) => `L${d.layer} H${d.head}: ${f3(d[o.feature])}`);
}

function examples(s, r, o) {
  const hd = r.heads.find((h) => h.layer === o.head.layer && h.head === o.head.head) || r.heads[0];
  s.select('h3').text(`Strongest links of layer ${hd.layer}, head ${hd.head} (query → key; Enter opens the heatmap)`);
  if (!hd.top.length) { s.append('p').text('No links: no input had two ordinary tokens.'); return; }
  const ol = s.append('ol').attr('class', 'cp-ex-list');
  for (const x of hd.top) {
    const li = ol.append('li');
    const btn = li.append('button').attr('type', 'button').attr('class', 'cp-example')
      .attr('data-text', x.text).attr('data-query', x.query).attr('data-key', x.key)
      .on('click', () => o.onExample(x, hd));
    btn.append('span').attr('class', 'cp-w').text(`${x.weight.toFixed(3)} `);
    const ctx = btn.append('span').attr('class', 'cp-ctx').text(`${x.query_token} → ${x.key_token}`);
    o.context(x).then((c) => {
      if (!c) return;
      ctx.text('');
      const put = (str, from, to, marks) => {
        let at = from;
        for (const [a, b, cls] of marks.filter((m) => m[0] >= from && m[1] <= to).sort((m, n) => m[0] - n[0])) {
          if (a > at) ctx.append('span').text(str.slice(at, a));
          ctx.append('mark').attr('class', cls).text(str.slice(a, b));
          at = b;
        }
        if (at < to) ctx.append('span').text(str.slice(at, to));
      };
      const marksOf = (inB) => [c.q, c.k].filter((m) => m && !!m[2] === inB)
        .map((m) => [m[0], m[1], m === c.q ? 'cp-q' : 'cp-k']);
      put(c.a, 0, c.a.length, marksOf(false));
      if (c.b) { ctx.append('span').attr('class', 'cp-sep').text(' ‖ '); put(c.b, 0, c.b.length, marksOf(true)); }
    }).catch(() => {});
  }
}

export function drawResults(box, r, o) {
  box.selectAll('*').remove();
  if (!r || !r.heads.length) return;
  // the three sections exist before any is sized: the grid's columns are then
  // fixed, and each reads its own width (sectionWidth)
  const sc = [section(box, 'cp-classes', 'Pattern classes per layer (share of inputs, mean over the layer\'s heads)'),
    section(box, 'cp-grid', 'Heads across the corpus'), section(box, 'cp-examples', '')];
  classChart(sc[0], r, o);
  headGrid(sc[1], r, o);
  examples(sc[2], r, o);
}
