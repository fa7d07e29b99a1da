// compare.js (view) — two runs of the model compared head by head: the same
// input with heads switched off, a minimal pair, or two models (web/js/
// lib/compare.js says which run is A, the "original", and which B, named by
// what changed: "heads off", "edited text", "other model"; and how they are
// aligned). compare_text.js writes what the view says in words.
//
//   - the choice of B and its inputs (second text, second model)
//   - what A and B are, how their tokens were aligned, and the sentence
//     embedding figures (one sentence: cosine of A's and B's embeddings; a
//     pair: the cosine of its two texts encoded separately, in A and in B)
//   - a layer × head grid coloured by Jensen–Shannon distance (computed in C,
//     src/analysis/analyze.c bl_head_compare); switched-off heads crossed; click
//     selects the head drawn below
//   - the difference B − A of one head (or the layer's mean) as a
//     diverging heatmap with its legend, and the most changed heads ranked.
//     It opens on the most changed head (largest max |Δ| of the heads on in
//     both runs; cmp_head=auto) and says so; a head picked in the grid
//     (cmp_head=picked) stays, unless it is switched off. No difference at
//     all is said in words, not drawn as a flat map.
//
// data = {title, notes[], kind, models[{id, name}], cmp {text, text_b, model},
//         L, H, layer, head, error | null, lines[] (A, B, alignment,
//         embeddings), K, labels[K], diff Float32Array[K*K] | null, js, maxAbs
//         Float64Array[L*H] | null, off Set('l/h'), ranked [{l, h, js, maxAbs,
//         off}] | null, names {A, B}, shown {layer, head, auto}, choice (a
//         sentence), flat (the shown difference is zero), sync (a patch the
//         view applies once drawn: the state follows the head it opened on)}

import { THEMES, tooltip, drawLegendBar, clip, exportable, cellMarks, SVG_MAX_CELLS, infoLine, linksTable, exportContext, sizeCanvas, chromeHeight } from './common.js';
import { CMP_KINDS, parseAblate, headDifference, maskSet, mostChanged, runNames, legendFormat, formatSmall, NO_DIFFERENCE } from '../lib/compare.js';
import { compareLines, choiceLine, KIND_LABEL } from './compare_text.js';
import { compareKey, LOCAL_MODEL } from '../engine/compare_runs.js';

const d3 = globalThis.d3;


export function compareView() {
  let theme = THEMES.light;
  let box = { width: 720, height: null };
  let onUpdate = () => {};
  let onFile = () => {};

  let exported = exportContext(); // what an export adds (its last drawing)

  function view(root, data) {
    tooltip.hide();
    skeleton(root);
    root.select('.view-title').text(data.title);
    controls(root, data);
    root.select('.cmp-lines').selectAll('p').data(data.error ? [{ text: data.error, full: null }] : data.lines).join('p')
      .attr('class', data.error ? 'cmp-error' : null).attr('title', (t) => t.full).text((t) => t.text);
    // No difference at all: said in words (data.choice), no flat pictures.
    const hasDiff = !data.error && !!data.js && !(data.best && data.best.none);
    root.select('.cmp-body').style('display', hasDiff ? null : 'none');
    root.select('details.view-alt').style('display', hasDiff ? null : 'none');
    if (hasDiff) {
      const info = infoLine(root); // (once: each call hides its button)
      const a = grid(root, data, info);
      const b = diffMap(root, data, info);
      place(root, a, b);
      ranking(root, data);
    }
    // Opened on the most changed head: the page's layer and head follow it
    // (once; then the reader's choices stand).
    if (data.sync) setTimeout(() => onUpdate(data.sync), 0);
    root.select('p.view-notes').text(data.notes.join(' '));
    exported = exportContext({ notes: [...data.lines.map((t) => t.full || t.text), ...(data.choice ? [data.choice] : []), ...data.notes] });
  }

  function skeleton(root) {
    if (!root.select('.cmp-bar').empty()) return;
    root.append('div').attr('class', 'view-title');
    const bar = root.append('div').attr('class', 'cmp-bar hv-bar');
    const kl = bar.append('label').text('Compare with ');
    kl.append('select').attr('class', 'cmp-kind').attr('aria-label', 'Compare with');
    const tl = bar.append('div').attr('class', 'cmp-texts');
    tl.append('label').text('Second text ').append('input').attr('type', 'text').attr('class', 'cmp-text').attr('maxlength', 20000)
      .attr('spellcheck', 'false').attr('aria-label', 'Second text of the minimal pair');
    tl.append('label').text(' its sentence B ').append('input').attr('type', 'text').attr('class', 'cmp-text-b').attr('maxlength', 20000)
      .attr('spellcheck', 'false').attr('aria-label', 'Sentence B of the second text (for pairs)');
    const mc = bar.append('div').attr('class', 'cmp-model-ctl');
    mc.append('label').text('Second model ').append('select').attr('class', 'cmp-model').attr('aria-label', 'Second model');
    mc.append('button').attr('type', 'button').attr('class', 'cmp-file-btn').text('Bundle file…')
      .attr('title', 'Compare with a bundle of your own (.blb or .blb.gz) of the same shape, e.g. a fine-tuned model')
      .on('click', () => mc.select('input.cmp-file').node().click());
    mc.append('input').attr('type', 'file').attr('class', 'cmp-file').attr('accept', '.blb,.gz').property('hidden', true)
      .on('change', (ev) => { const f = ev.target.files && ev.target.files[0]; if (f) onFile(f); ev.target.value = ''; });
    root.append('div').attr('class', 'cmp-lines');
    infoLine(root);
    // One stage (exports take one): the grid, and beside or below it the
    // difference (canvas cells + SVG labels), placed by place().
    const st = root.append('div').attr('class', 'cmp-body').style('max-width', '100%').style('overflow', 'auto')
      .append('div').attr('class', 'stage cmp-stage');
    st.append('svg').attr('class', 'cmp-grid');
    st.append('canvas').attr('class', 'cmp-cells');
    st.append('svg').attr('class', 'cmp-diff');
    root.append('p').attr('class', 'view-notes');
    root.append('p').attr('class', 'view-hint')
      .text('The difference opens on the most changed head. Click or tap another head in the grid to see its difference; switch heads off in the model view or the heads overview ("Switch heads off").');
  }

  function controls(root, data) {
    const kindSel = root.select('select.cmp-kind');
    kindSel.selectAll('option').data(CMP_KINDS).join('option').attr('value', (k) => k).text((k) => KIND_LABEL[k]);
    // A minimal pair starts from the page's own text, to be edited.
    kindSel.property('value', data.kind).on('change', (ev) => onUpdate({
      cmp: ev.target.value, cmp_head: 'auto', ...(ev.target.value === 'text' && !data.cmp.text ? { cmp_text: data.page.text, cmp_text_b: data.page.text_b } : {}),
    }));
    const texts = root.select('.cmp-texts').style('display', data.kind === 'text' ? null : 'none');
    for (const [cls, key] of [['cmp-text', 'text'], ['cmp-text-b', 'text_b']]) {
      const input = texts.select(`input.${cls}`);
      if (document.activeElement !== input.node()) input.property('value', data.cmp[key]);
      input.on('input', (ev) => onUpdate({ [`cmp_${key}`]: ev.target.value, cmp_head: 'auto' }));
    }
    const ms = root.select('.cmp-model-ctl').style('display', data.kind === 'model' ? null : 'none').select('select');
    const opts = [{ id: '', name: 'choose a model' }, ...data.models];
    ms.selectAll('option').data(opts, (m) => m.id).join('option').attr('value', (m) => m.id).text((m) => m.name || m.id);
    ms.property('value', data.cmp.model || '').on('change', (ev) => onUpdate({ cmp_model: ev.target.value, cmp_head: 'auto' }));
  }

  function grid(root, data, info) {
    const { L, H, js, off } = data;
    const cell = Math.max(18, Math.min(34, Math.floor((Math.min(box.width, 520) - 40) / H)));
    const left = 34;
    const top = 36;
    const W = Math.max(left + H * cell + 4, 300);
    const Hh = top + L * cell + 46;
    const vmax = Math.max(1e-6, d3.max(js));
    const colour = (v) => theme.seq(Math.min(1, v / vmax));
    const svg = root.select('svg.cmp-grid').attr('width', W).attr('height', Hh).attr('font-size', 10).attr('fill', theme.fg);
    svg.selectAll('text.cmp-sub').data([`Jensen–Shannon distance per head (${data.names.B} against ${data.names.A})`]).join('text').attr('class', 'cmp-sub')
      .attr('x', 0).attr('y', 12).attr('font-size', 12).attr('font-weight', 600).text((t) => t);
    svg.selectAll('text.cmp-l').data(d3.range(L)).join('text').attr('class', 'cmp-l').attr('x', left - 4)
      .attr('y', (l) => top + l * cell + cell / 2).attr('dy', '0.35em').attr('text-anchor', 'end').text((l) => `L${l}`);
    svg.selectAll('text.cmp-h').data(d3.range(H)).join('text').attr('class', 'cmp-h').attr('y', top - 5)
      .attr('x', (h) => left + h * cell + cell / 2).attr('text-anchor', 'middle').text((h) => `${h}`);
    const heads = d3.range(L * H).map((k) => ({ l: Math.floor(k / H), h: k % H, v: js[k], m: data.maxAbs[k], off: off.has(`${Math.floor(k / H)}/${k % H}`) }));
    const say = (d) => `Layer ${d.l}, head ${d.h}: ${d.off ? 'switched off · ' : ''}JS distance ${formatSmall(d.v)}, max |Δ| ${formatSmall(d.m)}`;
    const shown = (d) => d.l === data.shown.layer && (data.shown.head === 'mean' || d.h === data.shown.head);
    const pick = (d) => onUpdate({ layer: d.l, head: d.h, cmp_head: 'picked' });
    const g = svg.selectAll('g.cmp-head').data(heads, (d) => `${d.l}/${d.h}`).join((e) => {
      const n = e.append('g').attr('class', 'cmp-head').attr('tabindex', -1).attr('role', 'button');
      n.append('rect');
      n.append('path').attr('class', 'cmp-x');
      return n;
    });
    g.attr('transform', (d) => `translate(${left + d.h * cell},${top + d.l * cell})`)
      .attr('data-layer', (d) => d.l).attr('data-head', (d) => d.h).attr('data-js', (d) => d.v.toFixed(6)).attr('data-off', (d) => (d.off ? 1 : null))
      .attr('aria-label', say);
    g.select('rect').attr('x', 1).attr('y', 1).attr('width', cell - 2).attr('height', cell - 2)
      .attr('fill', (d) => (d.off ? theme.grid : colour(d.v)))
      .attr('stroke', (d) => (shown(d) ? theme.fg : 'none')).attr('stroke-width', 2);
    g.attr('data-shown', (d) => (shown(d) ? 1 : null));
    g.select('path.cmp-x').attr('d', (d) => (d.off ? `M4,4L${cell - 4},${cell - 4}M${cell - 4},4L4,${cell - 4}` : null))
      .attr('stroke', theme.muted).attr('stroke-width', 1.5);
    g.on('click', (ev, d) => pick(d))
      .on('keydown', (ev, d) => {
        if (ev.key === 'Enter' || ev.key === ' ') { ev.preventDefault(); pick(d); return; }
        // Arrows move the focus over the grid (one tab stop), Enter selects.
        const to = { ArrowLeft: [d.l, d.h - 1], ArrowRight: [d.l, d.h + 1], ArrowUp: [d.l - 1, d.h], ArrowDown: [d.l + 1, d.h] }[ev.key];
        if (!to) return;
        ev.preventDefault();
        const [l, h] = [Math.max(0, Math.min(L - 1, to[0])), Math.max(0, Math.min(H - 1, to[1]))];
        const next = g.filter((x) => x.l === l && x.h === h);
        g.attr('tabindex', -1);
        next.attr('tabindex', 0).node().focus();
        info.set(say(next.datum()));
      })
      .on('mouseenter mousemove', (ev, d) => tooltip.show(ev, [say(d)]))
      .on('mouseleave', () => tooltip.hide());
    const at = { l: data.shown.layer, h: data.shown.head === 'mean' ? 0 : data.shown.head };
    g.attr('tabindex', (d) => (d.l === at.l && d.h === at.h ? 0 : -1));
    const lg = svg.selectAll('g.legend').data([null]).join('g').attr('class', 'legend').attr('transform', `translate(${left},${top + L * cell + 24})`);
    drawLegendBar(lg, { interp: (t) => theme.seq(t), domain: [0, vmax], title: 'JS distance', id: 'cmpjs', width: Math.min(160, H * cell), format: legendFormat(vmax) });
    lg.selectAll('g.legend-axis text, text.legend-title').attr('fill', theme.fg);
    lg.selectAll('g.legend-axis line, g.legend-axis path').attr('stroke', theme.muted);
    const cur = heads.find((d) => d.l === at.l && d.h === at.h);
    const best = data.best && !data.best.none ? data.best : null;
    const jump = best && cur && (data.shown.head === 'mean' || best.l !== cur.l || best.h !== cur.h)
      ? { label: `Show the most changed head, ${best.l}:${best.h}`, run: () => onUpdate({ layer: best.l, head: best.h, cmp_head: 'auto' }) } : null;
    if (cur) info.set(data.shown.head === 'mean' ? `Layer ${data.shown.layer}, mean of heads` : say(cur), jump);
    return { W, H: Hh };
  }

  function diffMap(root, data, info) {
    const { K, diff } = data;
    const label = (i) => data.labels[i];
    const longest = d3.max(data.labels, (l) => Math.min(14, l.length)) || 4;
    const left = Math.min(150, 10 + longest * 6.5);
    const top = left + 22;
    const avail = Math.max(160, Math.min(box.width, 640) - left - 10);
    // A box with a height (presentation mode, embeds): the map fits below the view's chrome.
    const availH = box.height ? box.height - chromeHeight(root.node(), root.select('.cmp-stage').node()) - top - 60 : Infinity;
    const cell = Math.max(2, Math.min(26, Math.floor(avail / Math.max(1, K)), Math.floor(availH / Math.max(1, K))));
    const side = cell * K;
    const W = left + side + 10;
    const Hh = top + side + 60;
    const peak = d3.max(diff, (v) => Math.abs(v)) || 0;
    const m = Math.max(NO_DIFFERENCE, peak);
    const colour = (v) => theme.div(Math.max(-1, Math.min(1, v / m)) * 0.5 + 0.5);
    const canvas = root.select('canvas.cmp-cells').style('visibility', data.flat ? 'hidden' : null).node();
    const ctx = sizeCanvas(canvas, side, side);
    for (let i = 0; i < K; i++) for (let j = 0; j < K; j++) { ctx.fillStyle = colour(diff[i * K + j]); ctx.fillRect(j * cell, i * cell, cell, cell); }
    exportable(canvas, () => (K * K > SVG_MAX_CELLS ? { node: null, note: `Difference cells (${K} × ${K}) are an embedded PNG image.` } : {
      node: cellMarks('cmp-cells', (put) => { for (let i = 0; i < K; i++) for (let j = 0; j < K; j++) put(j * cell, i * cell, cell, cell, colour(diff[i * K + j])); }),
      note: `Difference cells: ${K * K} vector rectangles.`,
    }));
    const svg = root.select('svg.cmp-diff').attr('width', W).attr('height', Hh).attr('font-size', Math.min(11, Math.max(7, cell - 2))).attr('fill', theme.fg);
    const { A: nA, B: nB } = data.names;
    svg.selectAll('text.cmp-sub').data([`Difference ${nB} − ${nA}, layer ${data.shown.layer}, ${data.shown.head === 'mean' ? 'mean of heads' : `head ${data.shown.head}`}`,
      data.flat ? `no difference: this head attends exactly as in the ${nA}` : `(attention; blue: ${nB} higher, orange: ${nA} higher)`])
      .join('text').attr('class', 'cmp-sub').attr('x', 0).attr('y', (t, i) => 12 + i * 14).attr('font-size', (t, i) => (i ? 11 : 12))
      .attr('font-weight', (t, i) => (i ? 400 : 600)).text((t) => t);
    const step = Math.max(1, Math.ceil(9 / cell));
    const shown = d3.range(K).filter((i) => i % step === 0);
    svg.selectAll('text.cmp-row').data(shown).join('text').attr('class', 'cmp-row').attr('x', left - 4)
      .attr('y', (i) => top + i * cell + cell / 2).attr('dy', '0.35em').attr('text-anchor', 'end').text((i) => clip(label(i), 14));
    svg.selectAll('text.cmp-col').data(shown).join('text').attr('class', 'cmp-col')
      .attr('transform', (i) => `translate(${left + i * cell + cell / 2},${top - 4}) rotate(-90)`).attr('dy', '0.35em').text((i) => clip(label(i), 14));
    svg.selectAll('rect.cmp-hit').data([null]).join('rect').attr('class', 'cmp-hit').attr('x', left).attr('y', top)
      .attr('width', side).attr('height', side).attr('fill', 'transparent')
      .on('pointermove click', (ev) => {
        const [x, y] = d3.pointer(ev);
        const i = Math.floor((y - top) / cell);
        const j = Math.floor((x - left) / cell);
        if (i < 0 || j < 0 || i >= K || j >= K) return;
        const t = `${label(i)} → ${label(j)}: ${nB} − ${nA} ${diff[i * K + j] < 0 ? '−' : '+'}${formatSmall(Math.abs(diff[i * K + j]))} (query ${i}, key ${j})`;
        if (ev.type === 'click') info.set(t); else tooltip.show(ev, [t]);
      })
      .on('pointerleave', () => tooltip.hide());
    const lg = svg.selectAll('g.legend').data([null]).join('g').attr('class', 'legend').attr('transform', `translate(${Math.min(left, 20)},${top + side + 30})`);
    lg.style('display', data.flat ? 'none' : null); // no difference: said above, no scale of nothing
    drawLegendBar(lg, { interp: theme.div, domain: [-m, m], title: `${nB} − ${nA} (attention)`, id: 'cmpdiff', width: Math.min(200, Math.max(120, side)), format: legendFormat(m) });
    lg.selectAll('g.legend-axis text, text.legend-title').attr('fill', theme.fg).attr('font-size', 10);
    lg.selectAll('g.legend-axis line, g.legend-axis path').attr('stroke', theme.muted);
    return { W, H: Hh, left, top };
  }

  /** The grid (a) and the difference (b) side by side when they fit the
   *  width, else stacked; the stage takes their extent. */
  function place(root, a, b) {
    const gap = 24;
    const beside = a.W + gap + b.W <= box.width;
    const x = beside ? a.W + gap : 0;
    const y = beside ? 0 : a.H + 8;
    root.select('svg.cmp-diff').style('left', `${x}px`).style('top', `${y}px`);
    root.select('canvas.cmp-cells').style('left', `${x + b.left}px`).style('top', `${y + b.top}px`);
    root.select('.cmp-stage').style('width', `${Math.max(a.W, x + b.W)}px`).style('height', `${Math.max(a.H, y + b.H)}px`);
  }

  function ranking(root, data) {
    const rows = data.ranked.filter((d) => !d.off).slice(0, 12);
    linksTable(root, {
      summary: `Most changed heads (Jensen–Shannon distance, mean over rows; ${data.ranked.filter((d) => d.off).length} switched off not ranked)`,
      columns: [{ key: 'n', title: '#' }, { key: 'lh', title: 'layer:head' }, { key: 'js', title: 'JS distance', fmt: formatSmall }, { key: 'maxAbs', title: 'max |Δ|', fmt: formatSmall }],
      rows: rows.map((d, k) => ({ n: k + 1, lh: `${d.l}:${d.h}`, js: d.js, maxAbs: d.maxAbs })),
    });
    const det = root.select('details.view-alt');
    if (!det.classed('cmp-opened')) det.classed('cmp-opened', true).property('open', true); // open once; the reader may close it
  }

  view.exportContext = () => exported;
  view.theme = function (t) { if (!arguments.length) return theme; theme = t; return view; };
  view.size = function (b) { if (!arguments.length) return box; box = { width: b.width, height: b.height || null }; return view; };
  view.onUpdate = function (f) { onUpdate = f; return view; };
  view.onFile = function (f) { onFile = f; return view; };
  return view;
}

/** The head the difference shows: with cmp_head=auto (and whenever the
 *  state's head is switched off) the most changed one (lib/compare.js
 *  mostChanged), else the state's layer and head. sync: the patch that makes
 *  the page's layer and head follow an automatic choice (null when they do). */
function shownHead(c, s, off) {
  const best = mostChanged(c.js, c.maxAbs, c.A.L, c.A.H, off);
  const offPicked = s.head !== 'mean' && off.has(`${s.layer}/${s.head}`) ? { l: s.layer, h: s.head } : null;
  if (best && !best.none && (s.cmp_head !== 'picked' || offPicked)) {
    const shown = { layer: best.l, head: best.h, auto: true, offPicked: s.cmp_head === 'picked' ? offPicked : null };
    const sync = s.layer !== best.l || s.head !== best.h || s.cmp_head !== 'picked' ? { layer: best.l, head: best.h, cmp_head: 'picked' } : null;
    return { shown, best, sync };
  }
  return { shown: { layer: s.layer, head: s.head, auto: false, offPicked: null }, best, sync: null };
}

/** The registry entry (views/index.js). Its params are the page's
 *  comparison state (compare.js). */
export const descriptor = {
  id: 'compare',
  label: 'Compare',
  size: () => ({ width: 720, height: 900 }), // the embed frame
  controls: { layer: true, head: true, mean: true, words: false, mode: false },
  snapshot: false,
  axis: false,
  params: [
    { key: 'ablate', def: '', parse: parseAblate, expect: 'heads as layer:head or layer:* (whole layer), comma-separated, e.g. 3:5,4:*' },
    { key: 'cmp', def: 'ablate', parse: (raw) => (CMP_KINDS.includes(raw) ? raw : null), expect: `one of ${CMP_KINDS.join(', ')}` },
    { key: 'cmp_text', def: '', parse: (raw) => (raw.length <= 20000 ? raw : null), expect: 'a text of at most 20,000 characters' },
    { key: 'cmp_text_b', def: '', parse: (raw) => (raw.length <= 20000 ? raw : null), expect: 'a text of at most 20,000 characters' },
    { key: 'cmp_model', def: '', parse: (raw) => (/^[A-Za-z0-9._-]{1,100}$/.test(raw) ? raw : null), expect: 'a model id' },
    // auto: the difference shows the most changed head (and the page's layer
    // and head follow it); picked: the layer and head the reader chose.
    { key: 'cmp_head', def: 'auto', parse: (raw) => (raw === 'auto' || raw === 'picked' ? raw : null), expect: 'auto or picked' },
  ],
  /** Opened from its tab: on the most changed head. */
  enter: () => ({ patch: { cmp_head: 'auto' } }),
  needs: (s) => ({ embed: true, compare: compareKey(s) }),
  // A bundle file of the reader's, once loaded, is the second model.
  create: (ctx) => compareView().onUpdate((patch) => ctx.update(patch))
    .onFile(async (file) => { if (await ctx.compareWithFile(file)) ctx.update({ cmp: 'model', cmp_model: LOCAL_MODEL }); }),
  prepare(run, s, env) {
    const c = run.compare;
    const L = run.L;
    const H = run.H;
    const modelName = (id) => (id === LOCAL_MODEL ? `your bundle file ${env.cmpFileName || ''}`.trim()
      : (env.models || []).find((m) => m.id === id)?.name || id || 'the default model');
    const base = {
      title: `Compare — ${runNames(c ? c.kind : s.cmp).B} against the ${runNames(c ? c.kind : s.cmp).A}, ${L} layers × ${H} heads`,
      kind: c ? c.kind : s.cmp, names: runNames(c ? c.kind : s.cmp), L, H, layer: s.layer, head: s.head,
      models: [...(env.models || []).map((m) => ({ id: m.id, name: m.name || m.id })),
        ...(env.cmpFileName ? [{ id: LOCAL_MODEL, name: `file: ${env.cmpFileName}` }] : [])],
      cmp: { text: s.cmp_text, text_b: s.cmp_text_b, model: s.cmp_model },
      page: { text: s.text, text_b: s.text_b || '' },
      notes: ['Jensen–Shannon distance (base 2, 0 = the same map, 1 = nothing in common) per query row, mean over rows; computed in C (src/analysis/analyze.c). A switched-off head\'s attention is all zeros: it is crossed out and not ranked.'],
      lines: [], error: null, js: null,
    };
    if (!c || c.error) return { ...base, error: c ? c.error : 'No comparison yet.' };
    const lines = compareLines(c, s, modelName);
    if (!c.js) return { ...base, lines };
    const K = c.align.K;
    const off = maskSet(s.ablate, L, H);
    const { shown, best, sync } = shownHead(c, s, off);
    const diff = headDifference(c.align.mats(c.A, shown.layer), c.align.mats(c.B, shown.layer), H, K, shown.head);
    const flat = !(diff.reduce((m, v) => Math.max(m, Math.abs(v)), 0) > NO_DIFFERENCE);
    const labels = c.align.labelsA.map((t, i) => (t === c.align.labelsB[i] ? t : `${t}/${c.align.labelsB[i]}`));
    const choice = choiceLine(c.kind, shown, best);
    return {
      ...base, lines: [...lines, { text: choice, full: null }], choice, K, labels, diff, flat, js: c.js, maxAbs: c.maxAbs,
      ranked: c.ranked, off, best, shown, sync,
    };
  },
  /** Export (CSV/JSON): per head JS distance and max |Δ|, then the difference shown. */
  shown(run, s) {
    const c = run.compare;
    if (!c || c.error || !c.js) throw new Error(c && c.error ? c.error : 'there is no head-by-head difference to export');
    const L = run.L;
    const H = run.H;
    const K = c.align.K;
    const labels = c.align.labelsA.map((t, i) => (t === c.align.labelsB[i] ? t : `${t}/${c.align.labelsB[i]}`));
    const diff = headDifference(c.align.mats(c.A, s.layer), c.align.mats(c.B, s.layer), H, K, s.head);
    const rows = [];
    for (let l = 0; l < L; l++) for (let h = 0; h < H; h++) rows.push(`layer ${l} head ${h}`);
    return {
      view: 'compare', mode: 'attn', what: `B − A (${c.kind}${s.ablate ? `, ablate=${s.ablate}` : ''})`, hide: false, renorm: false, words: c.align.how === 'words',
      text: s.text, text_b: s.text_b || '', tokens: run.tokens.slice(), ablate: s.ablate || '',
      blocks: [
        { layer: 'all', head: 'all', rows, cols: ['js_distance', 'max_abs_diff'], values: rows.flatMap((_, k) => [c.js[k], c.maxAbs[k]]) },
        { layer: s.layer, head: s.head, rows: labels, cols: labels, values: Array.from(diff) },
      ],
    };
  },
};
