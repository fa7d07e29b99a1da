// views.scenarios.mjs — what each view draws, checked against Hugging Face
// tokens and attention (tests/web/fixtures/minilm-pair.json); controls,
// keyboard use, permalinks, embeds, export, and text that must stay inert.
// Each scenario starts in a fresh profile from a URL that sets up what it
// needs (see harness.mjs).

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {
  scenario, ready, settled, typeText, clickAndRedraw, canvasColours, inspectSvg, exportSvg, texts, fx, SHOTS,
} from './harness.mjs';
import { launchChromium } from './server.mjs';
import { headColour } from '../../web/js/views/palette.js';

const firstSep = fx.tokens.indexOf('[SEP]');
const tokensA = fx.tokens.slice(0, firstSep + 1); // [CLS] A [SEP] alone tokenizes the same
const PAIR = { text: fx.text, text_b: fx.text_b };

/** Open the page with these URL parameters and wait for the first drawing. */
async function open(page, base, params = {}) {
  await page.goto(`${base}?${new URLSearchParams(params)}`);
  await ready(page);
}

scenario('typed sentence: heatmap labels are the Hugging Face tokens, both axes', async ({ page, base, shot }) => {
  await open(page, base);
  await typeText(page, '#text-a', fx.text);
  assert.deepEqual(await texts(page, '.row-label'), tokensA);
  assert.deepEqual(await texts(page, '.col-label'), tokensA);
  assert.match(await page.textContent('#view'), /Each row of attention weights sums to 1/);
  await shot(page, 'heatmap-sentence');
});

scenario('typing with the keyboard re-runs the model (debounced) and redraws', async ({ page, base }) => {
  await open(page, base, { text: fx.text });
  await page.click('#text-a');
  await page.keyboard.press('End');
  await page.keyboard.type(' Zebras!', { delay: 20 });
  await ready(page);
  const labels = await texts(page, '.row-label');
  assert.deepEqual(labels.slice(-4), ['zebra', '##s', '!', '[SEP]']);
});

scenario('sentence pair: labels equal HF tokens; mean over heads equals HF head mean', async ({ page, base, shot }) => {
  await open(page, base);
  await page.fill('#text-a', fx.text);
  await typeText(page, '#text-b', fx.text_b);
  assert.deepEqual(await texts(page, '.row-label'), fx.tokens);
  await page.selectOption('#head', 'mean');
  await ready(page);
  assert.match(await page.textContent('.view-title'), /mean of heads/);
  // Hover cell (query 8 "cat", key 0 "[CLS]") and compare with HF (quantized default model: loose tolerance).
  const box = await page.$eval('rect.hm-hit', (r) => { const b = r.getBoundingClientRect(); return { x: b.x, y: b.y, w: b.width }; });
  const cell = box.w / fx.T;
  await page.mouse.move(box.x + cell * 0.5, box.y + cell * 8.5);
  const tip = await page.textContent('#tooltip');
  const shown = Number(tip.match(/attention: ([0-9.]+)/)[1]);
  const ref = fx.head_mean[0][8 * fx.T + 0];
  assert.ok(Math.abs(shown - ref) < 0.03, `tooltip ${shown} vs HF ${ref}`);
  assert.match(tip, /cat → \[CLS\]/);
  await shot(page, 'heatmap-pair-mean');
});

scenario('hide [CLS]/[SEP] with renormalization', async ({ page, base }) => {
  await open(page, base, { ...PAIR, head: 'mean' });
  await clickAndRedraw(page, '#hide');
  const labels = await texts(page, '.row-label');
  assert.deepEqual(labels, fx.tokens.filter((t) => t !== '[CLS]' && t !== '[SEP]'));
  assert.match(await page.textContent('#view'), /renormalized to sum to 1/);
  await clickAndRedraw(page, '#renorm');
  assert.match(await page.textContent('#view'), /not renormalized/);
  await clickAndRedraw(page, '#renorm');
  await clickAndRedraw(page, '#hide');
});

scenario('merge subwords into words', async ({ page, base }) => {
  await open(page, base, PAIR);
  await clickAndRedraw(page, '#words');
  const labels = await texts(page, '.row-label');
  assert.ok(labels.includes('unbelievably') && labels.includes('soundly'), labels.join(' '));
  assert.equal(labels.length, fx.tokens.length - 4 - 1);
  await clickAndRedraw(page, '#words');
});

scenario('head view: token columns, coloured lines, head toggles, pair filter', async ({ page, base, shot }) => {
  await open(page, base, { ...PAIR, head: 'mean' });
  await page.selectOption('#head', '0');
  await ready(page);
  await clickAndRedraw(page, '#view-tabs [data-view="head"]');
  assert.deepEqual(await texts(page, '.hv-stage g.left text'), fx.tokens);
  assert.deepEqual(await texts(page, '.hv-stage g.right text'), fx.tokens);
  assert.equal((await page.$$('.hv-swatches g.swatch')).length, 12);
  const all = Number(await page.getAttribute('.hv-stage', 'data-lines'));
  assert.ok(all > 0);
  assert.ok(await canvasColours(page, 'canvas.hv-lines') > 5, 'lines drawn in several head colours');
  await shot(page, 'head-all');
  await clickAndRedraw(page, '.hv-filter [data-filter="ab"]');
  const ab = Number(await page.getAttribute('.hv-stage', 'data-lines'));
  assert.ok(ab > 0 && ab < all, `A->B lines ${ab} of ${all}`);
  assert.match(page.url(), /filter=ab/);
  await clickAndRedraw(page, '.hv-filter [data-filter="all"]');
  await page.dblclick('.hv-swatches g.swatch[data-head="3"]');
  await ready(page);
  const pressed = await page.$$eval('.hv-swatches g.swatch', (gs) => gs.filter((g) => g.getAttribute('aria-pressed') === 'true').map((g) => g.dataset.head));
  assert.deepEqual(pressed, ['3']);
  assert.match(page.url(), /heads=3/);
  // Hover a query token: only its lines remain.
  await page.hover('.hv-stage g.left g.tok:nth-of-type(9)');
  const focused = Number(await page.getAttribute('.hv-stage', 'data-lines'));
  assert.ok(focused > 0 && focused <= fx.T, `focused lines ${focused}`);
  await shot(page, 'head-solo-hover');
  await page.mouse.move(5, 5);
  await page.click('.hv-swatches g.swatch[data-head="5"]');
  await ready(page);
  assert.match(page.url(), /heads=3%2C5|heads=3,5/);
});

scenario('head view: hovering a token shows a bar per head beside each token of the other column, as Hugging Face attends', async ({ page, base, shot }) => {
  await page.setViewportSize({ width: 1280, height: 720 });
  await open(page, base, { ...PAIR, view: 'head', layer: fx.layers[0] });
  const bars = () => page.$$eval('g.hv-headbars path.hv-bar', (ps) => ps.map((p) => ({ head: Number(p.dataset.head), top: Number(p.dataset.top), fill: p.getAttribute('fill'), n: (p.getAttribute('d').match(/M/g) || []).length })));
  assert.deepEqual(await bars(), [], 'no bars before a token is focused');
  const T = fx.T;
  const H = fx.H;
  const att = fx.attentions[0]; // [H][T][T], Hugging Face, layer fx.layers[0]
  for (const [side, q] of [['left', 8], ['right', 3]]) {
    await page.hover(`.hv-stage g.${side} g.tok:nth-of-type(${q + 1})`);
    const got = await bars();
    assert.equal(await page.getAttribute('g.hv-headbars', 'data-side'), side === 'left' ? 'right' : 'left');
    assert.deepEqual(got.map((b) => b.head), Array.from({ length: H }, (_, h) => h), 'one bar chart per head shown');
    for (const b of got) {
      assert.equal(b.fill, headColour(b.head), `head ${b.head} in its own colour`);
      // The tallest bar of each head sits at the token that head attends to most (from the query) or that attends most to the key.
      const row = Array.from({ length: T }, (_, t) => (side === 'left' ? att[(b.head * T + q) * T + t] : att[(b.head * T + t) * T + q]));
      const best = row.indexOf(Math.max(...row));
      assert.ok(row[b.top] >= row[best] - 1e-3, `${side} ${q}, head ${b.head}: tallest bar at ${b.top} (${row[b.top]}), Hugging Face's largest at ${best} (${row[best]})`);
    }
    if (side === 'left') await shot(page, 'head-bars-1280');
  }
  await page.mouse.move(5, 5);
  assert.deepEqual(await bars(), [], 'the bars go with the hover');
});

scenario('head view on a touch screen: a tap freezes a token with no keyboard text; holding a swatch shows that head alone; hints speak of taps', async ({ base }) => {
  const { context, profile } = await launchChromium({ viewport: { width: 1280, height: 720 }, hasTouch: true });
  try {
    const page = context.pages()[0] || await context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await open(page, base, { ...PAIR, view: 'head' });
    const tok = '.hv-stage g.left g.tok:nth-of-type(9)';
    await page.tap(tok);
    await page.waitForFunction((sel) => document.querySelector(sel).getAttribute('aria-pressed') === 'true', tok);
    const tip = await page.evaluate(() => { const t = document.getElementById('tooltip'); return t && !t.hidden ? t.textContent : ''; });
    assert.doesNotMatch(tip, /Enter|arrows|Space/, `a tap shows keyboard text: "${tip}"`);
    assert.equal(tip, '', 'no tooltip over the neighbours after a tap');
    assert.match(await page.textContent('#view .view-info'), /query 8: .* \(frozen: only its lines are drawn\)/);
    assert.equal(await page.evaluate(() => document.activeElement.matches(':focus-visible')), false, 'no keyboard focus ring after a tap');
    assert.ok(await page.$$eval('g.hv-headbars path.hv-bar', (p) => p.length) === fx.H, 'the tapped token shows the heads\' bars');
    const hint = await page.textContent('#view .view-hint');
    assert.match(hint, /Tap a token/);
    assert.doesNotMatch(hint, /Hover|double-click/);
    await page.screenshot({ path: path.join(SHOTS, 'head-touch-tap-1280.png') });
    // Hold a swatch: only that head. (A double tap would toggle it twice.)
    const sw = await page.$('.hv-swatches g.swatch[data-head="4"]');
    const b = await sw.boundingBox();
    const cdp = await context.newCDPSession(page);
    const at = [{ x: b.x + b.width / 2, y: b.y + b.height / 2 }];
    await page.evaluate(() => { document.body.dataset.state = 'loading'; });
    await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: at });
    await page.waitForTimeout(800);
    await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
    await ready(page);
    assert.match(page.url(), /heads=4(&|$)/);
    const pressed = await page.$$eval('.hv-swatches g.swatch', (gs) => gs.filter((g) => g.getAttribute('aria-pressed') === 'true').map((g) => g.dataset.head));
    assert.deepEqual(pressed, ['4'], 'the long press left one head on (the click after it toggled nothing)');
    assert.deepEqual(errors, []);
  } finally {
    await context.close().catch(() => {});
    fs.rmSync(profile, { recursive: true, force: true });
  }
});

scenario('head view by keyboard: tokens take focus, arrows move, Enter/Space freeze and unfreeze', async ({ page, base, shot }) => {
  await open(page, base, { ...PAIR, view: 'head', heads: '3,5' });
  const lines = async () => Number(await page.getAttribute('.hv-stage', 'data-lines'));
  const active = () => page.evaluate(() => {
    const a = document.activeElement;
    const tok = a && a.closest && a.closest('g.tok');
    if (!tok) return null;
    return { side: tok.parentNode.getAttribute('class'), label: tok.getAttribute('aria-label'), pressed: tok.getAttribute('aria-pressed'),
      stroke: getComputedStyle(tok.querySelector('rect')).stroke };
  });
  const all = await lines();
  // From the last head swatch, Tab through the pair filter to the query column.
  await page.focus('.hv-swatches g.swatch[data-head="11"]');
  let a = null;
  for (let i = 0; i < 20 && !a; i++) { await page.keyboard.press('Tab'); a = await active(); }
  assert.ok(a, 'a token is reachable with Tab');
  assert.equal(a.side, 'left');
  assert.equal(a.label, `query 0: ${fx.tokens[0]}`);
  assert.equal(a.stroke, 'rgb(37, 99, 235)', 'focused token shows the accent focus ring');
  assert.ok(await lines() < all, 'focusing a token isolates its lines');
  for (let i = 0; i < 8; i++) await page.keyboard.press('ArrowDown');
  a = await active();
  assert.equal(a.label, `query 8: ${fx.tokens[8]}`);
  const isolated = await lines();
  assert.ok(isolated > 0 && isolated <= 2 * fx.T, `lines of query 8: ${isolated}`);
  await page.keyboard.press(' ');
  assert.equal((await active()).pressed, 'true', 'Space freezes');
  await shot(page, 'head-keyboard-frozen');
  // Tab to the key column: the frozen query keeps its lines.
  await page.keyboard.press('Tab');
  a = await active();
  assert.equal(a.side, 'right');
  assert.equal(await lines(), isolated);
  assert.equal(await page.getAttribute('.hv-stage g.left g.tok:nth-of-type(9)', 'aria-pressed'), 'true');
  // Back to the query column (its tab stop stayed on query 8); Enter unfreezes.
  await page.keyboard.press('Shift+Tab');
  assert.equal((await active()).label, `query 8: ${fx.tokens[8]}`);
  await page.keyboard.press('Enter');
  assert.equal((await active()).pressed, 'false', 'Enter unfreezes');
  await page.keyboard.press('ArrowRight');
  assert.equal((await active()).label, `key 8: ${fx.tokens[8]}`, 'ArrowRight moves to the key column');
  await page.keyboard.press('Tab');
  await page.keyboard.press('Tab');
  assert.equal(await active(), null);
  assert.equal(await lines(), all, 'leaving the tokens shows every line again');
});

scenario('model view: every layer x head thumbnail; click opens the heatmap', async ({ page, base, shot }) => {
  await open(page, base, PAIR);
  await clickAndRedraw(page, '#view-tabs [data-view="model"]');
  assert.equal((await page.$$('.layer-label')).length, 6);
  assert.equal((await page.$$('.head-label')).length, 12);
  assert.ok(await canvasColours(page, 'canvas.mv-thumbs') > 20);
  await shot(page, 'model');
  const box = await page.$eval('rect.mv-hit', (r) => { const b = r.getBoundingClientRect(); return { x: b.x, y: b.y, w: b.width, h: b.height }; });
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await page.mouse.click(box.x + (box.w / 12) * 5.5, box.y + (box.h / 6) * 2.5);
  await ready(page);
  assert.equal(await page.$eval('#layer', (s) => s.value), '2');
  assert.equal(await page.$eval('#head', (s) => s.value), '5');
  assert.match(await page.textContent('.view-title'), /Heatmap — layer 2, head 5/);
});

scenario('model view by keyboard: Tab to the grid, arrows move the highlight, Enter opens it', async ({ page, base, shot }) => {
  await open(page, base, { ...PAIR, layer: 2, head: 5 });
  await page.focus('#view-tabs [data-view="model"]');
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await page.keyboard.press('Enter');
  await ready(page);
  let onGrid = false;
  for (let i = 0; i < 40 && !onGrid; i++) {
    await page.keyboard.press('Tab');
    onGrid = await page.evaluate(() => !!document.activeElement && document.activeElement.classList.contains('mv-hit'));
  }
  assert.ok(onGrid, 'the thumbnail grid is reachable with Tab');
  const boxOf = (sel) => page.$eval(sel, (r) => [r.getAttribute('visibility'), r.getAttribute('x'), r.getAttribute('y')]);
  const start = await boxOf('rect.mv-focus');
  const current = await boxOf('rect.mv-current');
  assert.deepEqual(start, ['visible', current[1], current[2]], 'the highlight starts on the open head (layer 2, head 5)');
  for (const k of ['ArrowDown', 'ArrowDown', 'ArrowRight', 'ArrowRight', 'ArrowRight', 'ArrowUp']) await page.keyboard.press(k);
  assert.match(await page.getAttribute('rect.mv-hit', 'aria-label'), /layer 3, head 8/);
  assert.match(await page.textContent('#tooltip'), /layer 3, head 8/);
  await shot(page, 'model-keyboard');
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await page.keyboard.press('Enter');
  await ready(page);
  assert.equal(await page.$eval('#layer', (s) => s.value), '3');
  assert.equal(await page.$eval('#head', (s) => s.value), '8');
  assert.match(await page.textContent('.view-title'), /Heatmap — layer 3, head 8/);
  await page.selectOption('#layer', '2');
  await ready(page);
  await page.selectOption('#head', '5');
  await ready(page);
});

scenario('neuron view: q, k, q×k, q·k/√d, softmax; q·k/√d and softmax match HF', async ({ page, base, shot }) => {
  await open(page, base, { ...PAIR, layer: 2, head: 5 });
  await page.selectOption('#layer', String(fx.qk_layer));
  await ready(page);
  await clickAndRedraw(page, '#view-tabs [data-view="neuron"]');
  const head = 5;
  const query = 8;
  await page.selectOption('#head', String(head));
  await ready(page);
  await page.selectOption('#neuron-query', String(query));
  await ready(page);
  const titles = await texts(page, '.col-title');
  assert.deepEqual(titles, ['key k', 'q × k (element-wise)', 'q·k/√d', 'softmax']);
  assert.deepEqual(await texts(page, '.nv-row .key-label'), fx.tokens);
  const soft = (await texts(page, '.nv-row text.soft')).map(Number);
  const scaled = (await texts(page, '.nv-row text.term')).map(Number);
  const m = fx.T * fx.d;
  for (let j = 0; j < fx.T; j++) {
    const ref = fx.qk_attention[(head * fx.T + query) * fx.T + j];
    assert.ok(Math.abs(soft[j] - ref) < 0.03, `key ${j}: softmax ${soft[j]} vs HF ${ref}`);
    let dot = 0; // HF's q . k (the q10 model's is within rounding of it)
    for (let c = 0; c < fx.d; c++) dot += fx.queries[head * m + query * fx.d + c] * fx.keys[head * m + j * fx.d + c];
    assert.ok(Math.abs(dot / Math.sqrt(fx.d) - scaled[j]) < 0.05, `key ${j}: q·k/√d ${scaled[j]} vs HF ${(dot / Math.sqrt(fx.d)).toFixed(3)}`);
  }
  assert.ok(await canvasColours(page, 'canvas.nv-k') > 10);
  assert.ok(await canvasColours(page, 'canvas.nv-p') > 10);
  assert.ok(await page.isVisible('#neuron-query'), 'the query control is visible');
  await shot(page, 'neuron');
});

/** The neuron view's key rows as numbers: [{scaled, soft}] (BERT: one
 *  term, q·k/√d, the score itself). */
const neuronRows = (page) => page.$$eval('.nv-row', (rows) => rows.map((r) => ({
  scaled: Number(r.querySelector('text.term').textContent),
  soft: Number(r.querySelector('text.soft').textContent),
})));

/** Every row shows one head's numbers: the softmax column is the softmax
 *  of the score column (numbers as shown, 2 and 3 decimals). A row left
 *  from the previous head or layer breaks it. */
function sameHead(rows, d, what) {
  const m = Math.max(...rows.map((r) => r.scaled));
  const e = rows.map((r) => Math.exp(r.scaled - m));
  const sum = e.reduce((a, b) => a + b, 0);
  rows.forEach((r, j) => {
    assert.ok(Math.abs(e[j] / sum - r.soft) < 0.01, `${what}: row ${j} softmax ${r.soft} vs ${(e[j] / sum).toFixed(3)} from the score column`);
  });
}

scenario('neuron view, 300 tokens: a layer or head switch runs the model no more; every row is redrawn, those out of the window in the next frames; export holds them all', async ({ page, base }) => {
  const long = Array(20).fill('The old lighthouse keeper counted ships while the storm rolled over the quiet harbour town.').join(' ');
  await open(page, base, { text: long, view: 'neuron', layer: 0, head: 0, query: 5 });
  const T = Number((await page.textContent('#token-info')).match(/^(\d+) tokens/)[1]);
  assert.ok(T > 250, `${T} tokens: more rows than are written in the redraw itself`);
  const runMs = await page.evaluate(() => document.body.dataset.runMs);
  for (const [sel, value] of [['#layer', '3'], ['#head', '7'], ['#layer', '5']]) {
    await page.evaluate(() => { document.body.dataset.state = 'loading'; });
    await page.selectOption(sel, value);
    await ready(page);
    assert.equal(await page.evaluate(() => document.body.dataset.runMs), runMs, `${sel} ${value}: no new model run (q/k of every layer kept; the head's scores read from them)`);
    await page.evaluate(() => new Promise((r) => { let n = 12; const f = () => (--n ? requestAnimationFrame(f) : r()); requestAnimationFrame(f); }));
    const rows = await neuronRows(page);
    assert.equal(rows.length, T);
    sameHead(rows, fx.d, `${sel} ${value}`);
  }
  assert.match(await page.textContent('.view-title'), /layer 5, head 7/);
  // Export in the same task as a switch, before any later frame: it holds
  // every row's new numbers.
  const [dl] = await Promise.all([page.waitForEvent('download'), page.evaluate(() => {
    const head = document.getElementById('head');
    head.value = '2';
    head.dispatchEvent(new Event('change', { bubbles: true }));
    document.getElementById('export-svg').click();
  })]);
  const svg = fs.readFileSync(await dl.path(), 'utf8');
  const col = (cls) => [...svg.matchAll(new RegExp(`<text[^>]*class="${cls}"[^>]*>([^<]*)</text>`, 'g'))].map((m) => Number(m[1]));
  const exported = col('term').map((scaled, j) => ({ scaled, soft: col('soft')[j] }));
  assert.equal(exported.length, T, 'every key row in the export');
  sameHead(exported, fx.d, 'export');
});

scenario('norm mode in every view', async ({ page, base, shot }) => {
  await open(page, base, { ...PAIR, view: 'neuron', layer: fx.qk_layer, head: 5, query: 8 });
  await clickAndRedraw(page, '#mode [data-mode="norm"]');
  const norms = (await texts(page, '.nv-row text.norm')).map(Number);
  assert.equal(norms.length, fx.T, `${page.url()} ${await page.textContent('#notices')} ${await page.evaluate(() => [document.querySelectorAll('.nv-row').length, document.querySelectorAll('.nv-row rect').length, [...document.querySelectorAll('.col-title')].map((e) => e.textContent).join('|'), document.body.dataset.state])}`);
  assert.ok(norms.every((v) => v >= 0) && norms.some((v) => v > 0), norms.join(' '));
  assert.match(await page.textContent('.col-title:last-of-type'), /‖α f\(x\)‖/);
  for (const v of ['heatmap', 'head', 'model']) {
    await clickAndRedraw(page, `#view-tabs [data-view="${v}"]`);
    assert.match(await page.textContent('#view'), /‖α f\(x\)‖/);
    const canvas = { heatmap: 'canvas.hm-cells', head: 'canvas.hv-lines', model: 'canvas.mv-thumbs' }[v];
    assert.ok(await canvasColours(page, canvas) > 3, `${v} drawn in norm mode`);
    if (v !== 'head') assert.match(await page.textContent('#view'), /Rows do not sum to 1/);
  }
  assert.match(page.url(), /mode=norm/);
  await shot(page, 'model-norm');
  await clickAndRedraw(page, '#mode [data-mode="attn"]');
});

scenario('dark theme', async ({ page, base, shot }) => {
  await open(page, base, { ...PAIR, view: 'model' });
  await clickAndRedraw(page, '#view-tabs [data-view="heatmap"]');
  await clickAndRedraw(page, '#theme-toggle');
  assert.equal(await page.getAttribute('body', 'data-theme'), 'dark');
  assert.match(page.url(), /theme=dark/);
  await shot(page, 'heatmap-dark');
  await clickAndRedraw(page, '#view-tabs [data-view="head"]');
  // Keyboard: Enter on a focused head swatch toggles it.
  await page.focus('.hv-swatches g.swatch[data-head="5"]');
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await page.keyboard.press('Enter');
  await ready(page);
  assert.equal(await page.getAttribute('.hv-swatches g.swatch[data-head="5"]', 'aria-pressed'), 'false');
  await page.hover('.hv-stage g.right g.tok:nth-of-type(1)');
  await shot(page, 'head-dark-hover-key');
  await page.mouse.move(5, 5);
  await clickAndRedraw(page, '#view-tabs [data-view="heatmap"]');
  await clickAndRedraw(page, '#theme-toggle');
});

scenario('HTML typed as text stays inert', async ({ page, base, context, dialogs }) => {
  await open(page, base);
  const evil = '<img src=x onerror="window.__pwned=1;alert(1)"><script>window.__pwned=2</script>';
  await page.fill('#text-b', '');
  await typeText(page, '#text-a', evil);
  await page.waitForTimeout(300);
  assert.equal(await page.evaluate(() => document.querySelectorAll('img, script:not([src])').length), 0);
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  assert.deepEqual(dialogs, []);
  const labels = await texts(page, '.row-label');
  assert.ok(labels.includes('<') && labels.includes('script') && labels.includes('alert'), labels.join(' '));
  // The exported SVG carries the text as text nodes only.
  const svg = await inspectSvg(page, await exportSvg(page));
  assert.ok(svg.wellFormed);
  assert.equal(svg.unsafe, 0, 'no script, HTML or event-handler attribute in the exported SVG');
  assert.ok(svg.title.includes(evil), 'the title holds the typed text as text');
  assert.ok(svg.texts.includes('script') && svg.texts.includes('<'));
  // And as a URL parameter.
  const p2 = await context.newPage();
  await p2.goto(`${base}?text=${encodeURIComponent(evil)}&text_b=${encodeURIComponent('<svg onload=alert(2)>')}`);
  await ready(p2);
  assert.equal(await p2.evaluate(() => document.querySelectorAll('img, script:not([src])').length), 0);
  assert.equal(await p2.evaluate(() => window.__pwned), undefined);
  assert.deepEqual(dialogs, []);
  await p2.close();
});

scenario('permalink reproduces the view', async ({ page, base, context }) => {
  await open(page, base);
  await page.fill('#text-a', fx.text);
  await typeText(page, '#text-b', fx.text_b);
  await clickAndRedraw(page, '#view-tabs [data-view="neuron"]');
  await page.selectOption('#layer', '4');
  await ready(page);
  await page.selectOption('#head', '7');
  await ready(page);
  await page.selectOption('#neuron-query', '3');
  await ready(page);
  await page.click('#copy-link');
  const link = await page.inputValue('#share-text');
  const title = await page.textContent('.view-title');
  const softs = await texts(page, '.nv-row text.soft');
  const p2 = await context.newPage();
  await p2.goto(link);
  await ready(p2);
  assert.equal(await p2.textContent('.view-title'), title);
  assert.deepEqual(await texts(p2, '.nv-row text.soft'), softs);
  assert.equal(await p2.inputValue('#text-b'), fx.text_b);
  await p2.close();
});

scenario('embed mode shows only the view; embed code is an iframe', async ({ page, base, context, shot }) => {
  await open(page, base, { ...PAIR, view: 'neuron', layer: 4, head: 7, query: 3 });
  await page.click('#copy-embed');
  await page.waitForFunction(() => document.getElementById('share-text').value !== ''); // the snapshot is compressed asynchronously
  const snippet = await page.inputValue('#share-text');
  assert.match(snippet, /^<iframe src="[^"]+embed=1[^"]*"[^>]*><\/iframe>$/);
  const src = snippet.match(/src="([^"]+)"/)[1].replace(/&amp;/g, '&');
  const host = await context.newPage();
  await host.setViewportSize({ width: 760, height: 600 });
  await host.goto(src);
  await ready(host);
  assert.equal(await host.isVisible('.topbar'), false);
  assert.equal(await host.isVisible('.inputs'), false);
  assert.equal(await host.isVisible('.controls'), false);
  assert.ok(await host.isVisible('#view .nv-stage'));
  assert.ok(await host.isVisible('#embed-open'));
  await shot(host, 'embed-neuron');
  await host.goto(`${base}?view=model&embed=1&text=${encodeURIComponent('Embedded model view.')}`);
  await ready(host);
  assert.ok(await host.isVisible('canvas.mv-thumbs'));
  await shot(host, 'embed-model');
  await host.close();
});

scenario('bad URL parameters fall back to defaults with a visible notice', async ({ base, context, shot }) => {
  const p2 = await context.newPage();
  await p2.goto(`${base}?view=sankey&layer=99&head=4&mode=x&model=nope`);
  await ready(p2);
  const notes = await p2.textContent('#notices');
  assert.match(notes, /view=sankey/);
  assert.match(notes, /mode=x/);
  assert.match(notes, /Layer 99 does not exist/);
  assert.match(notes, /Unknown model "nope"/);
  assert.match(await p2.textContent('.view-title'), /Heatmap — layer 0, head 4/);
  await shot(p2, 'bad-params');
  await p2.close();
});

scenario('export SVG and PNG', async ({ page, base }) => {
  await open(page, base, { ...PAIR, view: 'neuron', layer: 4, head: 7, query: 3 });
  await clickAndRedraw(page, '#view-tabs [data-view="heatmap"]');
  const svg = await exportSvg(page);
  assert.match(svg, /^<svg[^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  assert.ok(svg.includes('>unbelievably<') === false && svg.includes('>##bel<'), 'token labels are in the SVG');
  const hm = await inspectSvg(page, svg);
  assert.ok(hm.wellFormed);
  assert.equal(hm.hmCells, fx.T * fx.T, 'one <rect> per heatmap cell');
  assert.equal(hm.images, 0, 'no embedded image');
  assert.match(hm.desc, new RegExp(`Heatmap cells: ${fx.T * fx.T} vector rectangles`));
  assert.ok(!/url\((?!#|&quot;#)|href="(?!#|data:)|@import|<link/.test(svg), 'standalone: no external references');
  fs.writeFileSync(path.join(SHOTS, 'export-heatmap.svg'), svg);
  // Head view: the lines it draws, as <line>s grouped by head.
  await clickAndRedraw(page, '#view-tabs [data-view="head"]');
  const drawn = Number(await page.getAttribute('.hv-stage', 'data-lines'));
  const hvText = await exportSvg(page);
  const hv = await inspectSvg(page, hvText);
  assert.ok(hv.wellFormed);
  assert.ok(drawn > 0);
  assert.equal(hv.lines, drawn, 'one <line> per drawn head-view line');
  assert.equal(hv.images, 0);
  assert.ok(hv.texts.includes('##bel'), 'token labels in the head-view SVG');
  fs.writeFileSync(path.join(SHOTS, 'export-head.svg'), hvText);
  // Neuron view: q, k and q×k strips as cells; model view stays raster and says so.
  await clickAndRedraw(page, '#view-tabs [data-view="neuron"]');
  const nv = await inspectSvg(page, await exportSvg(page));
  assert.equal(nv.images, 0);
  assert.equal(nv.nvRects, (1 + 2 * fx.T) * fx.d);
  await clickAndRedraw(page, '#view-tabs [data-view="model"]');
  const mv = await inspectSvg(page, await exportSvg(page));
  assert.equal(mv.images, 1);
  assert.match(mv.desc, /Model-view thumbnails .* embedded PNG image/);
  await clickAndRedraw(page, '#view-tabs [data-view="heatmap"]');
  const [pngDl] = await Promise.all([page.waitForEvent('download'), page.click('#export-png')]);
  const png = fs.readFileSync(await pngDl.path());
  assert.deepEqual([...png.subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47]);
  assert.ok(png.length > 5000);
  fs.writeFileSync(path.join(SHOTS, 'export-heatmap.png'), png);
});

scenario('long text is truncated with a notice; head view stays bounded', async ({ page, base, shot }) => {
  await open(page, base);
  const long = Array.from({ length: 700 }, (_, i) => `word${i % 37}`).join(' ');
  await page.fill('#text-b', '');
  await typeText(page, '#text-a', long);
  assert.match(await page.textContent('#notices'), /truncated to 512 tokens/);
  assert.ok(await canvasColours(page, 'canvas.hm-cells') > 5);
  const labels = await texts(page, '.row-label');
  assert.ok(labels.length < 512 && labels.length >= 40, `${labels.length} row labels for 512 tokens`);
  await shot(page, 'heatmap-512');
  const big = await inspectSvg(page, await exportSvg(page));
  assert.equal(big.hmCells, 0);
  assert.equal(big.images, 1, '512 x 512 cells go in as one image');
  assert.match(big.desc, /Heatmap cells \(512 × 512\) are an embedded PNG image/);
  await clickAndRedraw(page, '#view-tabs [data-view="head"]');
  const nodes = await page.evaluate(() => document.querySelectorAll('#view *').length);
  assert.ok(nodes < 5000, `${nodes} DOM nodes in the head view`);
  await clickAndRedraw(page, '#view-tabs [data-view="model"]');
  assert.ok(await canvasColours(page, 'canvas.mv-thumbs') > 20);
  await shot(page, 'model-512');
  await clickAndRedraw(page, '#view-tabs [data-view="heatmap"]');
  await typeText(page, '#text-a', fx.text);
});

scenario('out-of-range query token falls back with a notice', async ({ base, context }) => {
  const p2 = await context.newPage();
  await p2.goto(`${base}?view=neuron&query=400&text=${encodeURIComponent('Short one.')}`);
  await ready(p2);
  assert.match(await p2.textContent('#notices'), /Query token 400 does not exist/);
  assert.equal(await p2.$eval('#neuron-query', (s) => s.value), '0');
  await p2.close();
});

scenario('blank input (only spaces) says why only [CLS] and [SEP] show; a sentence clears it', async ({ page, base, shot }) => {
  await open(page, base, { text: 'hello' });
  assert.doesNotMatch(await page.textContent('#token-info'), /no words/);
  await typeText(page, '#text-a', '     ');
  // Nothing to draw: the view says what to type instead of a [CLS]/[SEP] matrix (views_notes.scenarios).
  assert.deepEqual(await texts(page, '.row-label'), []);
  assert.match(await page.textContent('#view .view-empty'), /no words.*Type a sentence/);
  assert.match(await page.textContent('#token-info'), /^2 tokens · .*no words in the text: only \[CLS\] and \[SEP\] are shown/);
  await shot(page, 'heatmap-blank-input');
  await typeText(page, '#text-a', '!?');
  assert.deepEqual(await texts(page, '.row-label'), ['[CLS]', '!', '?', '[SEP]']);
  assert.doesNotMatch(await page.textContent('#token-info'), /no words/);
});
