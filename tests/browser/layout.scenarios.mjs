// layout.scenarios.mjs — the views where issue 8 found them broken: in
// embeds of 720×560 and 360×480 with a 64-token input (no clipping, no
// scroll bars), on a 390×844 phone (no sideways page scroll, stacked neuron
// view, all 12 heads, a tap shows a value, tooltips do not linger), exports
// with their context, the heatmap by keyboard, and the A/B boundary.
// Values are checked against Hugging Face attention (tests/web/fixtures/minilm-pair.json).

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { scenario, ready, clickAndRedraw, inspectSvg, exportSvg, texts, touchTap, fx, SHOTS } from './harness.mjs';

const VIEWS = ['heatmap', 'head', 'model', 'neuron', 'overview', 'rollout'];
const PAIR = { text: fx.text, text_b: fx.text_b };
const firstB = fx.type_ids.indexOf(1);
// 64 tokens with [CLS] and [SEP] (checked below against the page's count).
const TEXT64 = 'The quick brown fox jumps over the lazy dog while the curious students in the old library quietly read '
  + 'books about ancient history, modern physics, and the strange habits of migrating birds that cross oceans every '
  + 'autumn without ever getting lost on the way home, because they follow the stars and the magnetic field of the earth today.';

// A 64-token pair ([CLS] A [SEP] B [SEP]), checked the same way.
const PAIR64 = {
  text: 'The quick brown fox jumps over the lazy dog while the curious students in the old library quietly read books '
    + 'about ancient history, modern physics, and the strange habits of migrating birds that cross oceans every autumn.',
  text_b: 'It was sleeping soundly, and nobody in the quiet house noticed the storm outside, late at night.',
};

async function open(page, base, params = {}) {
  await page.goto(`${base}?${new URLSearchParams(params)}`);
  await ready(page);
}

/** Scroll sizes of the document and the view, and what pokes out of the frame. */
function fit(page) {
  return page.evaluate(() => {
    const d = document.documentElement;
    const v = document.getElementById('view');
    const out = [];
    for (const el of v.querySelectorAll('.stage, .view-title, .view-info, .hv-bar, .nv-bar, .ov-bar, svg text')) {
      const r = el.getBoundingClientRect();
      if (r.width === 0 && r.height === 0) continue;
      if (r.right > innerWidth + 0.5 || r.bottom > innerHeight + 0.5 || r.left < -0.5) out.push(`${el.className.baseVal ?? el.className} ${el.textContent.slice(0, 20)} ${Math.round(r.right)}x${Math.round(r.bottom)}`);
    }
    const cap = document.getElementById('embed-caption').getBoundingClientRect();
    return {
      docW: d.scrollWidth, docH: d.scrollHeight, vw: innerWidth, vh: innerHeight,
      viewSW: v.scrollWidth, viewCW: v.clientWidth, viewSH: v.scrollHeight, viewCH: v.clientHeight,
      captionBottom: cap.bottom, out, tokens: document.getElementById('token-info').textContent,
    };
  });
}

for (const [width, height] of [[720, 560], [360, 480]]) {
  scenario(`embed fit ${width}x${height}: every view with 64 tokens, no clipping, no scroll bars`, async ({ page, base, shot }) => {
    const inputs = [
      ...VIEWS.map((view) => ({ text: TEXT64, view })),
      // A pair in norm mode: the head view's pair filter, the boundary and
      // the neuron view's norm column need room too.
      ...VIEWS.map((view) => ({ ...PAIR64, view, mode: 'norm' })),
    ];
    for (const params of inputs) {
      const { view } = params;
      await open(page, base, { ...params, embed: '1' });
      const f = await fit(page);
      assert.match(f.tokens, /^64 tokens/, 'the input has 64 tokens');
      assert.ok(f.docW <= width && f.docH <= height, `${view}: document ${f.docW}x${f.docH} in a ${width}x${height} frame`);
      assert.ok(f.viewSW <= f.viewCW && f.viewSH <= f.viewCH, `${view}: view scrolls (${f.viewSW}x${f.viewSH} in ${f.viewCW}x${f.viewCH})`);
      assert.ok(f.captionBottom <= height + 0.5, `${view}: caption ends at ${f.captionBottom}`);
      assert.deepEqual(f.out, [], `${view}: drawn outside the frame`);
      await shot(page, `embed-${width}x${height}-${view}${params.text_b ? '-pair-norm' : ''}`);
    }
  }, { viewport: { width, height } });
}

scenario('phone 390x844: no view scrolls the page sideways; stacked neuron view; 12 heads; legend inside', async ({ page, base, shot }) => {
  for (const view of VIEWS) {
    await open(page, base, { ...PAIR, view, mode: view === 'neuron' ? 'norm' : 'attn' });
    const w = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(w <= 390, `${view}: page is ${w} px wide`);
    await shot(page, `phone-${view}`);
  }
  // Neuron view: two bands, titles apart, numbers inside the screen.
  await open(page, base, { ...PAIR, view: 'neuron', mode: 'norm' });
  assert.equal(await page.getAttribute('.nv-stage', 'data-layout'), 'stacked');
  const boxes = await page.$$eval('.col-title', (ts) => ts.map((t) => { const r = t.getBoundingClientRect(); return { t: t.textContent, l: r.left, r: r.right, y: r.top, b: r.bottom }; }));
  for (let i = 0; i < boxes.length; i++) {
    for (let j = i + 1; j < boxes.length; j++) {
      const a = boxes[i];
      const b = boxes[j];
      const overlap = a.l < b.r && b.l < a.r && a.y < b.b && b.y < a.b;
      assert.ok(!overlap, `column titles "${a.t}" and "${b.t}" overlap`);
    }
  }
  const numbers = await page.$$eval('.nv-row text.soft, .nv-row text.norm, .nv-row text.term', (ts) => ts.map((t) => t.getBoundingClientRect().right));
  assert.equal(numbers.length, 3 * fx.T);
  assert.ok(Math.max(...numbers) <= 390, `numbers end at ${Math.max(...numbers)} px`);
  // Model view: all 12 head labels inside the screen.
  await open(page, base, { ...PAIR, view: 'model' });
  const heads = await page.$$eval('.head-label', (ts) => ts.map((t) => t.getBoundingClientRect().right));
  assert.equal(heads.length, 12);
  assert.ok(Math.max(...heads) <= 390, `head labels end at ${Math.max(...heads)}`);
  // Heatmap: the colour legend is inside the screen.
  await open(page, base, { ...PAIR, view: 'heatmap' });
  const legend = await page.$eval('.hm-svg g.legend', (g) => g.getBoundingClientRect().right);
  assert.ok(legend <= 390, `legend ends at ${legend}`);
  // A matrix too wide for the phone scrolls inside its own box; its row
  // labels stay visible when it is scrolled.
  await open(page, base, { text: Array(10).fill('The quick brown fox jumps over the lazy dog near the river bank.').join(' '), view: 'heatmap' });
  const box = await page.$eval('.hm-scroll', (el) => ({ sw: el.scrollWidth, cw: el.clientWidth, doc: document.documentElement.scrollWidth }));
  assert.ok(box.sw > box.cw, `the matrix scrolls in its box (${box.sw} in ${box.cw})`);
  assert.ok(box.doc <= 390, `page stays ${box.doc} px wide`);
  await page.$eval('.hm-scroll', (el) => { el.scrollLeft = el.scrollWidth; el.dispatchEvent(new Event('scroll')); });
  const seen = await page.evaluate(() => {
    const b = document.querySelector('.hm-scroll').getBoundingClientRect();
    const ls = [...document.querySelectorAll('.hm-svg .row-label')].map((t) => t.getBoundingClientRect());
    return { inside: ls.filter((r) => r.left >= b.left - 0.5 && r.right <= b.right + 0.5).length, all: ls.length };
  });
  assert.ok(seen.all > 0 && seen.inside === seen.all, `row labels visible after scrolling: ${seen.inside} of ${seen.all}`);
  await shot(page, 'phone-heatmap-long-scrolled');
}, { viewport: { width: 390, height: 844 } });

scenario('phone: a tap on a heatmap cell shows its value; the neuron view is a separate button; tooltips do not linger', async ({ page, base, context, shot }) => {
  await open(page, base, { ...PAIR, view: 'heatmap', layer: fx.layers[1], head: 4 });
  const cdp = await context.newCDPSession(page);
  await cdp.send('Emulation.setTouchEmulationEnabled', { enabled: true, maxTouchPoints: 1 });
  await page.$eval('rect.hm-hit', (r) => r.scrollIntoView({ block: 'center' }));
  const at = await page.$eval('rect.hm-hit', (r) => { const b = r.getBoundingClientRect(); return { x: b.x, y: b.y, w: b.width }; });
  const cell = at.w / fx.T;
  const [qi, kj] = [9, 3];
  const x = at.x + (kj + 0.5) * cell;
  const y = at.y + (qi + 0.5) * cell;
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: [{ x, y }] });
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
  await page.waitForFunction(() => /query \d+, key \d+/.test(document.querySelector('.view-info .info-text').textContent));
  const info = await page.textContent('.view-info .info-text');
  const m = /: attention (-?\d+\.\d+) \(query (\d+), key (\d+)\)/.exec(info);
  assert.ok(m, `info line: ${info}`);
  assert.deepEqual([Number(m[2]), Number(m[3])], [qi, kj]);
  const ref = fx.attentions[1][(4 * fx.T + qi) * fx.T + kj];
  assert.ok(Math.abs(Number(m[1]) - ref) < 0.03, `tapped value ${m[1]} vs HF ${ref}`);
  assert.equal(await page.url().includes('view=heatmap'), true, 'a tap does not leave the heatmap');
  assert.ok(await page.isVisible('#tooltip'), 'the tap also shows the tooltip');
  await shot(page, 'phone-heatmap-tap');
  // A tap elsewhere hides the tooltip; so does scrolling.
  const title = await page.$eval('.view-title', (t) => { const r = t.getBoundingClientRect(); return { x: r.x + 5, y: r.y + 5 }; });
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: [title] });
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
  await page.waitForFunction(() => document.getElementById('tooltip').hidden);
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: [{ x, y }] });
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
  await page.waitForFunction(() => !document.getElementById('tooltip').hidden);
  await page.evaluate(() => window.scrollBy(0, 40));
  await page.waitForFunction(() => document.getElementById('tooltip').hidden);
  // The visible button opens the neuron view for that row.
  const btn = page.locator('.view-info button.info-action');
  assert.match(await btn.textContent(), new RegExp(`Explain query ${qi}`));
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await btn.click();
  await ready(page);
  assert.equal(await page.$eval('#neuron-query', (s) => s.value), String(qi));
  // A tap on a neuron-view row: its numbers in the info line and the tooltip;
  // then the view changes and the tooltip is gone.
  await page.$eval('.nv-stage', (el) => el.scrollIntoView({ block: 'center' }));
  const row = await page.$$eval('.nv-row text.soft', (ts) => { const r = ts[5].getBoundingClientRect(); return { x: r.x - 20, y: r.y + r.height / 2 }; });
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: [row] });
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
  await page.waitForFunction(() => !document.getElementById('tooltip').hidden);
  assert.match(await page.textContent('.view-info .info-text'), new RegExp(`→ ${fx.tokens[5].replace(/[#[\]]/g, '.')} · q·k/√d = `));
  await clickAndRedraw(page, '#view-tabs [data-view="heatmap"]');
  assert.equal(await page.$eval('#tooltip', (t) => t.hidden), true);
}, { viewport: { width: 390, height: 844 } });

scenario('heatmap by keyboard: one tab stop, arrows move, the value is announced', async ({ page, base, shot }) => {
  await open(page, base, { ...PAIR, view: 'heatmap', layer: fx.layers[0], head: 2 });
  let onHeatmap = false;
  for (let i = 0; i < 60 && !onHeatmap; i++) {
    await page.keyboard.press('Tab');
    onHeatmap = await page.evaluate(() => document.activeElement?.classList?.contains('hm-hit'));
  }
  assert.ok(onHeatmap, 'Tab reaches the heatmap');
  assert.equal(await page.getAttribute('.view-info', 'aria-live'), 'polite');
  for (const k of ['ArrowRight', 'ArrowRight', 'ArrowDown', 'ArrowDown', 'ArrowDown']) await page.keyboard.press(k);
  const info = await page.textContent('.view-info .info-text');
  const m = /: attention (-?\d+\.\d+) \(query 3, key 2\)/.exec(info);
  assert.ok(m, `announced: ${info}`);
  const ref = fx.attentions[0][(2 * fx.T + 3) * fx.T + 2];
  assert.ok(Math.abs(Number(m[1]) - ref) < 0.03, `${m[1]} vs HF ${ref}`);
  assert.ok(info.startsWith(`${fx.tokens[3]} → ${fx.tokens[2]}`), info);
  await page.keyboard.press('End');
  assert.match(await page.textContent('.view-info .info-text'), new RegExp(`\\(query 3, key ${fx.T - 1}\\)`));
  await shot(page, 'heatmap-keyboard');
  // Tab leaves the matrix in one step (one tab stop).
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement?.classList?.contains('hm-hit')), false);
  // Enter opens the neuron view for the row.
  await page.focus('rect.hm-hit');
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await page.keyboard.press('Enter');
  await ready(page);
  assert.equal(await page.$eval('#view', (v) => v.dataset.view), 'neuron');
  assert.equal(await page.$eval('#neuron-query', (s) => s.value), '3', 'the row of the selected cell');
  // Every view has a text alternative: a table of its strongest links.
  for (const view of VIEWS) {
    await clickAndRedraw(page, `#view-tabs [data-view="${view}"]`);
    const rows = await page.$$eval('details.view-alt tbody tr', (trs) => trs.length);
    assert.ok(rows >= 1, `${view}: table of links`);
  }
  const hmRows = await (async () => {
    await clickAndRedraw(page, '#view-tabs [data-view="heatmap"]');
    return page.$$eval('details.view-alt tbody tr', (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
  })();
  const w = hmRows.map((r) => Number(r[2]));
  for (let i = 1; i < w.length; i++) assert.ok(w[i - 1] >= w[i], 'heaviest first');
});

scenario('pair boundary in heatmap and head view, also with [CLS]/[SEP] hidden', async ({ page, base, shot }) => {
  await open(page, base, { ...PAIR, view: 'heatmap' });
  assert.equal(Number(await page.getAttribute('.hm-svg g.pair', 'data-boundary')), firstB);
  assert.equal((await page.$$('.hm-svg line.pair-boundary')).length, 2);
  await clickAndRedraw(page, '#hide');
  assert.equal(Number(await page.getAttribute('.hm-svg g.pair', 'data-boundary')), firstB - 2);
  const labels = await texts(page, '.hm-svg .row-label');
  assert.equal(labels[firstB - 2], fx.tokens[firstB], 'the line sits before the first B token');
  await shot(page, 'heatmap-boundary-hidden');
  await clickAndRedraw(page, '#view-tabs [data-view="head"]');
  assert.equal(Number(await page.getAttribute('.hv-svg g.pair', 'data-boundary')), firstB - 2);
  assert.equal((await page.$$('.hv-svg line.pair-boundary')).length, 2);
  await shot(page, 'head-boundary-hidden');
  await open(page, base, { text: fx.text, view: 'heatmap' });
  assert.equal((await page.$$('.hm-svg line.pair-boundary')).length, 0, 'no boundary without sentence B');
});

scenario('exports carry title, legend and head key, and no page instructions', async ({ page, base }) => {
  await open(page, base, { ...PAIR, view: 'heatmap', layer: fx.layers[1], head: 'mean' });
  const model = await page.$eval('#model-select', (s) => s.selectedOptions[0].textContent.split(' — ')[0]);
  const instructions = /hover|click|tap|double-click|arrow keys|press /i;
  for (const view of VIEWS) {
    if (view !== 'heatmap') await clickAndRedraw(page, `#view-tabs [data-view="${view}"]`);
    const text = await exportSvg(page);
    const svg = await inspectSvg(page, text);
    assert.ok(svg.wellFormed);
    assert.equal(svg.unsafe, 0);
    const title = svg.title;
    assert.equal(svg.shownTitle, title, 'the title line is drawn in the image, not only in <title>');
    assert.ok(title.startsWith(`bertlens · ${model} · ${view} view`), `${view}: title line "${title}"`);
    if (view !== 'model') assert.ok(title.includes(`layer ${fx.layers[1]}`), title);
    if (view === 'heatmap') assert.ok(title.includes('mean of heads'), title);
    assert.ok(title.includes('attention') && title.includes('“The unbelievably'), title);
    const all = svg.texts.join('\n');
    assert.ok(!instructions.test(all), `${view}: instructions in the export: ${all.match(instructions)}`);
    if (view === 'heatmap' || view === 'model') assert.ok(svg.texts.some((t) => /^attention/.test(t)), `${view}: legend title`);
    if (view === 'neuron') {
      assert.ok(svg.texts.some((t) => t.startsWith('q, k (clip ±')), 'q, k scale');
      assert.ok(svg.texts.some((t) => t === 'softmax (fixed 0–1)'), 'softmax scale');
      assert.ok(all.includes('98th percentile'), 'where colours clip');
    }
    if (view === 'head') {
      const key = svg.keyFills;
      assert.equal(key.length, 12, 'head colour key: 12 swatches');
      assert.equal(new Set(key).size, 12);
    }
    fs.writeFileSync(path.join(SHOTS, `export-context-${view}.svg`), text);
  }
  // Text typed by the user is text in the export, escaped.
  await open(page, base, { text: '<b>bold</b> & "quotes"', view: 'heatmap' });
  const t = await exportSvg(page);
  assert.ok(t.includes('“&lt;b&gt;bold&lt;/b&gt; &amp; "quotes"”') || t.includes('“&lt;b&gt;bold&lt;/b&gt; &amp; &quot;quotes&quot;”'), 'escaped text in the title');
  assert.equal((await inspectSvg(page, t)).unsafe, 0);
});

scenario('phone: a tapped cell\'s info line is shown whole (two lines, not cut) and the tap does not move the matrix', async ({ page, base, context, shot }) => {
  await open(page, base, { ...PAIR, view: 'heatmap', layer: fx.layers[1], head: 4 });
  const cdp = await context.newCDPSession(page);
  await cdp.send('Emulation.setTouchEmulationEnabled', { enabled: true, maxTouchPoints: 1 });
  await page.$eval('rect.hm-hit', (r) => r.scrollIntoView({ block: 'center' }));
  const before = await page.$eval('rect.hm-hit', (r) => { const b = r.getBoundingClientRect(); return { x: b.x, y: b.y, w: b.width }; });
  const cell = before.w / fx.T;
  const [qi, kj] = [17, 3]; // "sleeping" → "##bel": long labels
  const pt = { x: before.x + (kj + 0.5) * cell, y: before.y + (qi + 0.5) * cell };
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: [pt] });
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
  await page.waitForFunction(() => /query \d+, key \d+/.test(document.querySelector('.view-info .info-text').textContent));
  const info = await page.$eval('.view-info .info-text', (t) => ({
    text: t.textContent, sw: t.scrollWidth, cw: t.clientWidth, sh: t.scrollHeight, ch: t.clientHeight,
  }));
  assert.match(info.text, new RegExp(`^${fx.tokens[qi]} → ${fx.tokens[kj]}: attention \\d\\.\\d+ \\(query ${qi}, key ${kj}\\)$`));
  assert.ok(info.sw <= info.cw && info.sh <= info.ch + 1, `the info line is cut: ${JSON.stringify(info)}`);
  assert.ok(await page.isVisible('.view-info button.info-action'), 'the neuron-view button is still there');
  const after = await page.$eval('rect.hm-hit', (r) => r.getBoundingClientRect().y);
  assert.ok(Math.abs(after - before.y) < 1, `the matrix moved ${after - before.y} px on the tap`);
  await shot(page, 'phone-heatmap-tap-info');
}, { viewport: { width: 390, height: 844 } });

/** Boxes of the elements matching sel: [{l, r, t, b, text}]. */
const boxesOf = (page, sel) => page.$$eval(sel, (els) => els.map((e) => {
  const r = e.getBoundingClientRect();
  return { l: r.left, r: r.right, t: r.top, b: r.bottom, text: e.textContent };
}));

function noOverlap(boxes, what) {
  for (let i = 0; i < boxes.length; i++) {
    for (let j = i + 1; j < boxes.length; j++) {
      const [a, b] = [boxes[i], boxes[j]];
      assert.ok(!(a.l < b.r - 0.5 && b.l < a.r - 0.5 && a.t < b.b - 0.5 && b.t < a.b - 0.5), `${what}: "${a.text}" and "${b.text}" overlap`);
    }
  }
}

scenario('phone 390x844: heads overview info line whole, a tap keeps the grid in place; ablation line in line with the view; compare view inside the screen', async ({ page, base, context, shot }) => {
  await open(page, base, { ...PAIR, view: 'overview', layer: '3', head: '7' });
  const cdp = await context.newCDPSession(page);
  await cdp.send('Emulation.setTouchEmulationEnabled', { enabled: true, maxTouchPoints: 1 });
  const whole = () => page.$eval('.view-info .info-text', (t) => ({ text: t.textContent, sw: t.scrollWidth, cw: t.clientWidth, sh: t.scrollHeight, ch: t.clientHeight }));
  let info = await whole();
  assert.match(info.text, /^layer 3, head 7: .* · own segment \d\.\d{3}$/, 'every feature, the pair\'s last');
  assert.ok(info.sw <= info.cw && info.sh <= info.ch + 1, `the info line is cut: ${JSON.stringify(info)}`);
  const gridY = () => page.$eval('g.ov-head[data-layer="0"][data-head="0"]', (g) => g.getBoundingClientRect().top + window.scrollY);
  const before = await gridY();
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await touchTap(page, cdp, 'g.ov-head[data-layer="5"][data-head="11"]');
  await ready(page);
  info = await whole();
  assert.match(info.text, /^layer 5, head 11: /);
  assert.ok(info.sw <= info.cw && info.sh <= info.ch + 1, `the info line is cut after a tap: ${JSON.stringify(info)}`);
  const after = await gridY();
  assert.ok(Math.abs(after - before) < 1, `the grid moved ${after - before} px on the tap`);
  const buttons = await boxesOf(page, '.view-info button');
  assert.ok(buttons.length >= 3 && buttons.every((b) => b.r <= 390 && b.l >= 0), `open-in buttons inside the screen: ${JSON.stringify(buttons)}`);
  await shot(page, 'phone-overview-info');
  // The ablation line starts where the view does, as the other bars.
  const toggle = (await boxesOf(page, '#ablation .abl-toggle'))[0];
  const title = (await boxesOf(page, '#view .view-title'))[0];
  assert.ok(Math.abs(toggle.l - title.l) < 1, `ablation line at ${toggle.l} px, view at ${title.l} px`);
  // Compare view with a head off: the ablation line and every drawing inside 390 px.
  await open(page, base, { ...PAIR, view: 'compare', ablate: '2:5' });
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth) <= 390, 'no sideways scroll');
  for (const sel of ['#ablation', '#ablation .abl-summary', '#ablation .abl-reset', 'svg.cmp-grid', 'canvas.cmp-cells', '.cmp-bar']) {
    for (const b of await boxesOf(page, sel)) assert.ok(b.r <= 390 + 0.5 && b.l >= -0.5, `${sel} spans ${b.l}..${b.r} px`);
  }
  await shot(page, 'phone-compare-ablate');
}, { viewport: { width: 390, height: 844 } });

scenario('heads overview legend: one row of keys at 1280 px, wrapped without overlap at 390 px; the open-in buttons share a line', async ({ page, base, shot }) => {
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 800 });
    await open(page, base, { ...PAIR, view: 'overview' });
    const keys = await boxesOf(page, '.ov-svg g.legend g.key');
    assert.deepEqual(keys.map((k) => k.text), ['vertical', 'diagonal', 'vertical+diagonal', 'block', 'heterogeneous', 'size: confidence']);
    noOverlap(keys, `legend at ${width} px`);
    const svg = (await boxesOf(page, '.ov-svg'))[0];
    assert.ok(keys.every((k) => k.r <= Math.min(width, svg.r) + 0.5), `legend inside the grid's width at ${width} px`);
    const rows = new Set(keys.map((k) => Math.round(k.t)));
    if (width === 1280) assert.equal(rows.size, 1, `one legend row at 1280 px: ${[...rows]}`);
    assert.ok(Math.max(...keys.map((k) => k.b)) <= svg.b + 0.5, 'the legend ends inside its SVG');
    const btns = await boxesOf(page, '.view-info button.ov-open');
    if (width === 1280) assert.equal(new Set(btns.map((b) => Math.round(b.t))).size, 1, 'open-in buttons on one line');
    await shot(page, `overview-legend-${width}`);
  }
}, { viewport: { width: 1280, height: 800 } });

scenario('touch spans: "Select span", then taps on two tokens, make the span a shift-click makes; "Clear span" empties it', async ({ page, base, context, shot }) => {
  const T = fx.T;
  const params = { ...PAIR, view: 'heatmap', layer: String(fx.layers[0]), head: '4' };
  const rows = () => page.$$eval('details.view-alt tbody tr', (trs) => trs.map((tr) => tr.textContent));
  // What shift-clicks on tokens 2 and 3 give (the span in the URL).
  await open(page, base, { ...params, span: '2,3' });
  const want = { labels: await texts(page, 'text.row-label'), rows: await rows() };
  assert.equal(want.labels.length, T - 1);
  await open(page, base, params);
  assert.ok(await page.isVisible('#span-ctl .span-toggle'), 'the toggle is offered');
  assert.equal(await page.isVisible('#span-ctl .span-clear'), false, 'nothing to clear yet');
  const cdp = await context.newCDPSession(page);
  await cdp.send('Emulation.setTouchEmulationEnabled', { enabled: true, maxTouchPoints: 1 });
  await touchTap(page, cdp, '#span-ctl .span-toggle');
  await page.waitForFunction(() => document.querySelector('#span-ctl .span-toggle').getAttribute('aria-pressed') === 'true');
  for (const nth of [2, 3]) {
    await page.evaluate(() => { document.body.dataset.state = 'loading'; });
    await touchTap(page, cdp, `text.row-label >> nth=${nth}`);
    await ready(page);
  }
  assert.equal(new URL(page.url()).searchParams.get('span'), '2,3');
  assert.equal(await page.$eval('#view', (v) => v.dataset.view), 'heatmap', 'a tap in span mode does not open the neuron view');
  assert.deepEqual(await texts(page, 'text.row-label'), want.labels);
  assert.deepEqual(await rows(), want.rows, 'the same span-summed links as the shift-click span');
  assert.match(await page.textContent('#view'), /or tap them after “Select span”/);
  await shot(page, 'phone-span-tapped');
  // The head view: a tapped token leaves the span (no freeze).
  await clickAndRedraw(page, '#view-tabs [data-view="head"]');
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await touchTap(page, cdp, '.hv-svg g.left g.tok >> nth=2');
  await ready(page);
  assert.equal(new URL(page.url()).searchParams.get('span'), null);
  assert.equal((await page.$$('.hv-svg g.left g.tok')).length, T);
  // Clear span: back to no span from any span.
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await touchTap(page, cdp, '.hv-svg g.left g.tok >> nth=5');
  await ready(page);
  assert.equal(new URL(page.url()).searchParams.get('span'), '5');
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await touchTap(page, cdp, '#span-ctl .span-clear');
  await ready(page);
  assert.equal(new URL(page.url()).searchParams.get('span'), null);
  // Views without spans do not offer it; leaving for one ends the mode.
  await clickAndRedraw(page, '#view-tabs [data-view="model"]');
  assert.equal(await page.isVisible('#span-ctl'), false);
  await clickAndRedraw(page, '#view-tabs [data-view="heatmap"]');
  assert.equal(await page.getAttribute('#span-ctl .span-toggle', 'aria-pressed'), 'false');
}, { viewport: { width: 390, height: 844 } });
