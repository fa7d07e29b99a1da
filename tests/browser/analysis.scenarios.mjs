// analysis.scenarios.mjs — the heads overview and the rollout view (issue
// 10) in the browser. Figures are checked against the numpy references of
// tests/fixtures/analyze/ (computed from Hugging Face attention in fp32; the
// page runs the f16 "exact" bundle here, so a small tolerance), classes
// where the reference is not within reach of a threshold, the "heads like
// this one" distances against Jensen–Shannon distances computed here from
// the Hugging Face attention of tests/web/fixtures/minilm-pair.json.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { scenario, ready, settled, typeText, fx, ROOT, exportSvg } from './harness.mjs';

const FIX = path.join(ROOT, 'tests/fixtures/analyze');
const index = JSON.parse(fs.readFileSync(path.join(FIX, 'index.json'), 'utf8'));
const bin = fs.readFileSync(path.join(FIX, 'analyze.bin'));
const CASE = (name) => index.cases.find((c) => c.name === name);
const MODEL = 'minilm-l6-f16';
const FEATURES = ['entropy', 'cls', 'sep', 'punct', 'prev', 'self', 'next', 'segment', 'confidence'];
const CLASSES = ['vertical', 'diagonal', 'vertical+diagonal', 'block', 'heterogeneous'];
const TOL = 5e-3; // f16 weights against the fp32 reference
const TH = index.thresholds;

function refArray(c, name) {
  const e = c.arrays[name];
  const n = e.shape.reduce((a, b) => a * b, 1);
  return new Float32Array(bin.buffer.slice(bin.byteOffset + e.offset, bin.byteOffset + e.offset + n * 4));
}

async function open(page, base, params) {
  await page.goto(`${base}?${new URLSearchParams({ model: MODEL, ...params })}`);
  await ready(page);
}

async function download(page, sel) {
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click(sel)]);
  return fs.readFileSync(await dl.path(), 'utf8');
}

/** The overview's exported features: [{layer, head, class, ...features}]. */
async function exportedHeads(page) {
  const j = JSON.parse(await download(page, '#export-json'));
  assert.equal(j.view, 'overview');
  const b = j.blocks[0];
  return b.rows.map((r, i) => {
    const [, l, h] = r.match(/layer (\d+) head (\d+)/);
    const o = { layer: Number(l), head: Number(h) };
    b.cols.forEach((c, k) => { o[c.split(' ')[0]] = b.values[i][k]; }); // "class (0 vertical, …)" -> class
    return o;
  });
}

/** Glyphs drawn: [{layer, head, cls}] in drawing order. */
const glyphs = (page) => page.$$eval('g.ov-head', (gs) => gs.map((g) => ({
  layer: Number(g.dataset.layer), head: Number(g.dataset.head), cls: g.dataset.class, label: g.getAttribute('aria-label'),
})));

async function checkOverview(page, c, tag) {
  const got = await exportedHeads(page);
  assert.equal(got.length, c.heads.length);
  let worst = 0;
  let agree = 0;
  let compared = 0;
  got.forEach((h, k) => {
    const r = c.heads[k];
    assert.equal(h.layer, r.layer);
    assert.equal(h.head, r.head);
    for (const f of FEATURES) {
      if (r[f] === null) { assert.ok(h[f] === null || Number.isNaN(h[f]), `${tag} L${r.layer}H${r.head} ${f} should be undefined`); continue; }
      const d = Math.abs(h[f] - r[f]) / (f === 'entropy' ? Math.max(1, Math.abs(r[f])) : 1);
      worst = Math.max(worst, d);
      assert.ok(d <= TOL, `${tag} L${r.layer}H${r.head} ${f}: page ${h[f]}, numpy ${r[f]}`);
    }
    // Classes: only where the reference is clear of every threshold.
    const near = (x, t) => Math.abs(x - t) < 0.01;
    if (near(r.V, TH.vertical_min) || near(r.D, TH.diagonal_min) || (c.pair && near(r.segment ?? 0, TH.block_min))) return;
    compared++;
    if (CLASSES[h.class] === r.class) agree++;
  });
  assert.equal(agree, compared, `${tag}: classes agree for ${agree} of ${compared} heads clear of the thresholds`);
  const drawn = await glyphs(page);
  assert.equal(drawn.length, 72);
  for (const g of drawn) assert.equal(g.cls, CLASSES[got[g.layer * 12 + g.head].class], 'glyph colour class = exported class');
  console.log(`#   ${tag}: worst feature difference ${worst.toExponential(2)}; classes agree on ${agree} of ${compared} heads clear of the thresholds`);
}

for (const name of ['short', 'pair']) {
  scenario(`heads overview (${name === 'pair' ? 'a pair' : 'one sentence'}): 72 glyphs, features and classes as numpy`, async ({ page, base, shot }) => {
    const c = CASE(name);
    await open(page, base, { text: c.text, ...(c.text_pair ? { text_b: c.text_pair } : {}), view: 'overview' });
    assert.match(await page.textContent('#token-info'), new RegExp(`^${c.T} tokens`));
    await checkOverview(page, c, name);
    // SVG export: one circle per head, the class key and the notes.
    const svg = await exportSvg(page);
    assert.equal((svg.match(/<circle/g) || []).length, 72 + 5 + 2, 'glyphs + class key + the two circles of the size key');
    assert.match(svg, /Classes after Kovaleva/);
    if (c.pair) assert.ok(await page.$('select.ov-rank option[value="segment"]'), 'pairs rank by own segment');
    else assert.equal(await page.$('select.ov-rank option[value="segment"]'), null);
    await shot(page, `overview-${name}`);
  });
}

scenario('heads overview: rank and filter ("heads that attend to the previous token"), in the URL', async ({ page, base, shot }) => {
  const c = CASE('medium');
  await open(page, base, { text: c.text, view: 'overview' });
  await page.selectOption('select.ov-rank', 'prev');
  await ready(page);
  await page.$eval('input.ov-min', (el) => { el.value = '0.4'; el.dispatchEvent(new Event('input')); el.dispatchEvent(new Event('change')); });
  await ready(page);
  await page.waitForFunction(() => location.search.includes('rank=prev') && location.search.includes('min=0.4'));
  const drawn = await glyphs(page);
  const prev = (g) => c.heads[g.layer * 12 + g.head].prev;
  const expect = c.heads.filter((h) => h.prev >= 0.4);
  const clear = c.heads.filter((h) => Math.abs(h.prev - 0.4) > TOL);
  assert.ok(expect.length > 0 && expect.length < 72, `the reference has ${expect.length} such heads`);
  for (const h of clear) {
    const shown = drawn.some((g) => g.layer === h.layer && g.head === h.head);
    assert.equal(shown, h.prev >= 0.4, `L${h.layer}H${h.head} prev ${h.prev}`);
  }
  for (let i = 1; i < drawn.length; i++) assert.ok(prev(drawn[i - 1]) >= prev(drawn[i]) - TOL, 'sorted by prev, largest first');
  assert.match(await page.textContent('.ov-count'), new RegExp(`^${drawn.length} of 72 heads`));
  await shot(page, 'overview-prev');
  // The URL alone restores it (fresh page).
  const url = page.url();
  await page.goto(url);
  await ready(page);
  assert.equal((await glyphs(page)).length, drawn.length);
  assert.equal(await page.$eval('select.ov-rank', (s) => s.value), 'prev');
});

scenario('heads overview: click selects a head, its buttons open it in the other views; arrows move, Enter opens the heatmap', async ({ page, base }) => {
  await open(page, base, { text: fx.text, text_b: fx.text_b, view: 'overview' });
  await page.click('g.ov-head[data-layer="3"][data-head="7"]');
  await page.waitForFunction(() => location.search.includes('layer=3') && location.search.includes('head=7'));
  await ready(page);
  assert.match(await page.textContent('.view-info .info-text'), /^layer 3, head 7: /);
  await page.click('button.ov-open:has-text("Head view")');
  await ready(page);
  assert.match(page.url(), /view=head&layer=3/);
  await open(page, base, { text: fx.text, view: 'overview', layer: '2', head: '5' });
  // Keyboard: one tab stop (the open head), arrows move, Enter opens.
  assert.deepEqual(await page.$$eval('g.ov-head[tabindex="0"]', (gs) => gs.map((x) => `${x.dataset.layer}/${x.dataset.head}`)), ['2/5']);
  await page.focus('g.ov-head[tabindex="0"]');
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowDown');
  assert.match(await page.textContent('.view-info .info-text'), /^layer 3, head 6: /);
  await page.keyboard.press('Enter');
  await ready(page);
  const u = new URL(page.url());
  assert.deepEqual([u.searchParams.get('view'), u.searchParams.get('layer'), u.searchParams.get('head')], ['heatmap', '3', '6']);
  assert.match(await page.textContent('.view-title'), /layer 3, head 6/);
});

/** Mean over rows of the base-2 Jensen–Shannon distance of two maps. */
function jsd(a, b, T) {
  let total = 0;
  for (let i = 0; i < T; i++) {
    let s = 0;
    for (let j = 0; j < T; j++) {
      const p = a[i][j];
      const q = b[i][j];
      const m = (p + q) / 2;
      if (p > 0) s += p * Math.log2(p / m);
      if (q > 0) s += q * Math.log2(q / m);
    }
    total += Math.sqrt(Math.max(0, s / 2));
  }
  return total / T;
}

scenario('heads overview: "heads like this one" ranks by Jensen–Shannon distance (Hugging Face attention)', async ({ page, base, shot }) => {
  const [l0, l1] = fx.layers; // the fixture holds these two layers' attention
  await open(page, base, { text: fx.text, text_b: fx.text_b, view: 'overview', layer: String(l0), head: '2', rank: 'like', min: '1' });
  const drawn = await glyphs(page);
  assert.equal(drawn.length, 72);
  assert.deepEqual([drawn[0].layer, drawn[0].head], [l0, 2], 'the open head comes first (distance 0)');
  const dist = drawn.map((g) => Number(g.label.match(/JS distance (-?[\d.]+)/)[1]));
  for (let i = 1; i < dist.length; i++) assert.ok(dist[i] >= dist[i - 1], 'nearest first');
  const T = fx.T;
  const att = (l, h) => {
    const flat = fx.attentions[fx.layers.indexOf(l)]; // [H][T][T] flattened
    return Array.from({ length: T }, (_, i) => flat.slice((h * T + i) * T, (h * T + i + 1) * T));
  };
  let worst = 0;
  for (const g of drawn) {
    if (g.layer !== l0 && g.layer !== l1) continue;
    const ref = jsd(att(l0, 2), att(g.layer, g.head), fx.T);
    const d = Math.abs(ref - dist[drawn.indexOf(g)]);
    worst = Math.max(worst, d);
    assert.ok(d < 5e-3, `L${g.layer}H${g.head}: page ${dist[drawn.indexOf(g)]}, reference ${ref}`);
  }
  console.log(`#   JS distances of 24 heads: worst difference from the Hugging Face reference ${worst.toExponential(2)}`);
  await shot(page, 'overview-like');
});

/** The rollout view's exported matrix (JSON export). */
async function exportedRollout(page) {
  const j = JSON.parse(await download(page, '#export-json'));
  assert.equal(j.view, 'rollout');
  return j.blocks[0].values.flat();
}

for (const name of ['short', 'pair']) {
  scenario(`rollout (${name === 'pair' ? 'a pair' : 'one sentence'}): layers 0 and 5 as numpy; the attention / norm switch picks the norm-based rollout`, async ({ page, base, shot }) => {
    const c = CASE(name);
    const T = c.T;
    const raw = refArray(c, 'rollout');
    const norm = refArray(c, 'rollout_norm');
    let worst = 0;
    for (const layer of [0, 5]) {
      await open(page, base, { text: c.text, ...(c.text_pair ? { text_b: c.text_pair } : {}), view: 'rollout', layer: String(layer) });
      assert.match(await page.textContent('#view'), /Rollout: how much of each token/);
      for (const [mode, ref] of [['attn', raw], ['norm', norm]]) {
        if (mode === 'norm') {
          await page.click('#mode button[data-mode="norm"]');
          await ready(page);
          assert.match(page.url(), /mode=norm/);
          assert.match(await page.textContent('.view-title'), /norm-based rollout/);
        }
        const got = await exportedRollout(page);
        assert.equal(got.length, T * T);
        for (let i = 0; i < T * T; i++) {
          const d = Math.abs(got[i] - ref[layer * T * T + i]);
          worst = Math.max(worst, d);
          assert.ok(d <= TOL, `${name} layer ${layer} ${mode} [${Math.floor(i / T)}][${i % T}]: page ${got[i]}, numpy ${ref[layer * T * T + i]}`);
        }
      }
      await shot(page, `rollout-${name}-layer${layer}-norm`);
    }
    console.log(`#   rollout ${name}: worst difference from numpy ${worst.toExponential(2)}`);
  });
}

scenario('rollout and overview with 512 tokens draw; a bad rank in the URL falls back with a notice', async ({ page, base, shot }) => {
  const c = CASE('max512');
  await page.goto(`${base}?${new URLSearchParams({ text: c.text, view: 'rollout', layer: '5' })}`);
  await ready(page);
  assert.match(await page.textContent('#token-info'), /^512 tokens/);
  const withRollout = Number(await page.evaluate(() => document.body.dataset.runMs));
  await shot(page, 'rollout-512');
  // The same text in the heatmap: a run without the analysis (tab switch,
  // then new text so the run is fresh).
  await page.click('#view-tabs button[data-view="heatmap"]');
  await ready(page);
  await page.fill('#text-a', `${c.text} `);
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await page.dispatchEvent('#text-a', 'input');
  await ready(page);
  const plain = Number(await page.evaluate(() => document.body.dataset.runMs));
  console.log(`#   512 tokens in the worker: run with the analysis and the raw rollout ${withRollout.toFixed(0)} ms, plain run ${plain.toFixed(0)} ms`);
  // Back to the rollout: the run lacks the analysis, so the model runs again.
  await page.click('#view-tabs button[data-view="rollout"]');
  await ready(page);
  assert.match(await page.textContent('.view-title'), /^Rollout/);
  await page.goto(`${base}?${new URLSearchParams({ text: c.text, view: 'overview', rank: 'sideways' })}`);
  const s = await settled(page);
  assert.equal(s, 'ready');
  assert.match(await page.textContent('#notices'), /rank=sideways/);
  assert.equal((await glyphs(page)).length, 72);
  // "Heads like this one": the distances come from the worker (from the
  // run it still holds: no new model run), the main thread stays free.
  // Long tasks (> 50 ms) on the main thread are recorded while it switches.
  await page.evaluate(() => {
    window.__long = [];
    new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__long.push(e.duration); }).observe({ type: 'longtask' });
  });
  const runMs = await page.evaluate(() => document.body.dataset.runMs);
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await page.selectOption('select.ov-rank', 'like');
  await ready(page);
  assert.equal(await page.evaluate(() => document.body.dataset.runMs), runMs, 'no new model run for the distances');
  assert.equal((await glyphs(page))[0].layer, 0, 'the open head (layer 0, head 0) first');
  const ms = Number(await page.evaluate(() => document.body.dataset.renderMs));
  // Another open head: distances again, still without a run.
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await page.selectOption('#layer', '3');
  await ready(page);
  assert.equal(await page.evaluate(() => document.body.dataset.runMs), runMs, 'no new model run for another head');
  const first = (await glyphs(page))[0];
  assert.deepEqual([first.layer, first.head], [3, 0]);
  const long = await page.evaluate(() => window.__long);
  const likeMs = await page.evaluate(() => document.body.dataset.likeMs);
  console.log(`#   512 tokens, "heads like this one" (72 JS distances over 512 x 512, in the worker: ${likeMs} ms): drawn in ${ms.toFixed(0)} ms; `
    + `longest main-thread task during the two switches ${long.length ? Math.max(...long).toFixed(0) : '< 50'} ms`);
  await shot(page, 'overview-512-like');
  // The neuron view needs every layer's queries and keys, which this run did
  // not return: the worker reads them from the state it still holds.
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  const t0 = Date.now();
  await page.click('#view-tabs button[data-view="neuron"]');
  await ready(page);
  const switchMs = Date.now() - t0;
  assert.equal(await page.$eval('#view', (v) => v.dataset.view), 'neuron');
  assert.equal(await page.evaluate(() => document.body.dataset.runMs), runMs, 'no new model run for the queries and keys');
  const qkMs = await page.evaluate(() => document.body.dataset.qkMs);
  assert.ok(Number(qkMs) >= 0, 'the q/k came from a q/k request');
  console.log(`#   512 tokens, to the neuron view: q/k of the held run in the worker ${qkMs} ms, drawn ${switchMs} ms after the click`);
  await shot(page, 'neuron-512-held-run');
}, { timeout: 300000 });

/** The heatmap's text alternative: [{q, k, w}] of its strongest links. */
const linkRows = (page) => page.$$eval('details.view-alt tbody tr', (trs) => trs.map((tr) => {
  const td = [...tr.children].map((c) => c.textContent);
  return { q: td[0], k: td[1], w: Number(td[td.length - 1]) };
}));

scenario('span selection: shift-click tokens in the heatmap and the head view sums attention to / from them (Hugging Face)', async ({ page, base, shot }) => {
  const [l0] = fx.layers;
  const T = fx.T;
  await open(page, base, { text: fx.text, text_b: fx.text_b, view: 'heatmap', layer: String(l0), head: '4' });
  await page.click('text.row-label >> nth=2', { modifiers: ['Shift'] });
  await ready(page);
  await page.click('text.row-label >> nth=3', { modifiers: ['Shift'] });
  await ready(page);
  await page.waitForFunction(() => /span=2(%2C|,)3/.test(location.search));
  const labels = await page.$$eval('text.row-label', (ts) => ts.map((t) => t.textContent));
  assert.equal(labels.length, T - 1);
  assert.ok(labels[2].startsWith(`[${fx.tokens[2]}`), labels[2]);
  assert.match(await page.textContent('#view'), /its row is the attention from the span/);
  // The span-merged matrix from the Hugging Face attention: strongest links.
  const a = fx.attentions[0];
  const at = (i, j) => a[(4 * T + i) * T + j];
  const unit = (u) => (u < 2 ? [u] : u === 2 ? [2, 3] : [u + 1]);
  const ref = [];
  for (let x = 0; x < T - 1; x++) for (let y = 0; y < T - 1; y++) {
    let s = 0;
    for (const i of unit(x)) for (const j of unit(y)) s += at(i, j);
    ref.push({ x, y, s });
  }
  ref.sort((p, q) => q.s - p.s);
  const rows = await linkRows(page);
  assert.ok(rows.length >= 5);
  rows.forEach((r, n) => assert.ok(Math.abs(r.w - ref[n].s) < 0.01, `link ${n}: page ${r.w}, reference ${ref[n].s}`));
  assert.ok(rows.some((r) => r.q.startsWith('2: [') || r.k.startsWith('2: [')), 'the span is among the strongest links');
  await shot(page, 'span-heatmap');
  // The same span in the head view (URL state carries it).
  await page.click('#view-tabs button[data-view="head"]');
  await ready(page);
  const left = await page.$$eval('.hv-svg g.left g.tok', (gs) => gs.map((g) => g.getAttribute('aria-label')));
  assert.equal(left.length, T - 1);
  assert.match(left[2], /^query 2: \[/);
  // Shift-click the span again: it is cleared.
  await page.click('.hv-svg g.left g.tok >> nth=2', { modifiers: ['Shift'] });
  await ready(page);
  await page.waitForFunction(() => !location.search.includes('span='));
  assert.equal((await page.$$('.hv-svg g.left g.tok')).length, T);
  await shot(page, 'span-head-cleared');
});

scenario('head view pruning: the slider keeps the strongest links carrying a share of each row, in the URL; 512 tokens legible', async ({ page, base, shot }) => {
  await open(page, base, { text: fx.text, view: 'head', layer: '1' });
  const count = () => page.getAttribute('.hv-stage', 'data-lines').then(Number);
  const before = await count();
  await page.$eval('label.hv-prune input', (el) => { el.value = '50'; el.dispatchEvent(new Event('input')); el.dispatchEvent(new Event('change')); });
  await ready(page);
  await page.waitForFunction(() => location.search.includes('keep=0.5'));
  const half = await count();
  assert.ok(half > 0 && half < before, `${half} lines at 50 % vs ${before}`);
  assert.match(await page.textContent('#view'), /only the strongest links carrying 50 % of its row/);
  const c = CASE('max512');
  await page.goto(`${base}?${new URLSearchParams({ text: c.text, view: 'head', keep: '0.9' })}`);
  await ready(page);
  assert.match(await page.textContent('#token-info'), /^512 tokens/);
  const n512 = await count();
  assert.ok(n512 > 0 && n512 <= 12000, `${n512} lines for 512 tokens at 90 %`);
  console.log(`#   head view, 512 tokens, 12 heads, 90 % of each row: ${n512} lines`);
  await shot(page, 'head-512-prune90');
}, { timeout: 300000 });

scenario('span positions past the end of a URL are dropped with a notice; new text clears the span', async ({ page, base }) => {
  const T = fx.T;
  await open(page, base, { text: fx.text, text_b: fx.text_b, view: 'heatmap', layer: '0', head: '4', span: `2,3,${T + 3}` });
  assert.match(await page.textContent('#notices'), new RegExp(`Token ${T + 3} of the span does not exist \\(${T} tokens\\); the span keeps 2, 3\\.`));
  const labels = await page.$$eval('text.row-label', (ts) => ts.map((t) => t.textContent));
  assert.equal(labels.length, T - 1);
  assert.equal(labels[2], `[${fx.tokens[2]} ${fx.tokens[3]}]`);
  await page.waitForFunction(() => /span=2(%2C|,)3(&|$)/.test(location.search));
  // Other text, other tokens: the old positions mean nothing there.
  await typeText(page, '#text-a', 'A completely different sentence about rivers.');
  await page.waitForFunction(() => !location.search.includes('span='));
  const after = await page.$$eval('text.row-label', (ts) => ts.map((t) => t.textContent));
  assert.ok(!after.some((l) => l.startsWith('[') && l.includes(' ')), after.join(' '));
  assert.doesNotMatch(await page.textContent('#view'), /its row is the attention from the span/);
  // A new span on the new tokens works as before.
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await page.click('text.row-label >> nth=2', { modifiers: ['Shift'] });
  await ready(page);
  await page.waitForFunction(() => /span=2(&|$)/.test(location.search));
});

scenario('one-word input: overview, rollout, span and pruning still draw', async ({ page, base }) => {
  for (const params of [{ view: 'overview' }, { view: 'overview', rank: 'like' }, { view: 'rollout', mode: 'norm' },
    { view: 'heatmap', span: '1' }, { view: 'head', keep: '0.5', span: '0,1' }]) {
    await page.goto(`${base}?${new URLSearchParams({ text: 'Hi', ...params })}`);
    await ready(page);
    assert.match(await page.textContent('#token-info'), /^3 tokens/);
    assert.equal(await page.$eval('#notices', (n) => n.querySelectorAll('.notice.error').length), 0, JSON.stringify(params));
  }
  assert.equal((await page.$$('.hv-svg g.left g.tok')).length, 2, '[CLS] and hi as one span, then [SEP]');
});
