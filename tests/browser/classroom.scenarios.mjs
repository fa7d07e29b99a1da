// classroom.scenarios.mjs — the page made for showing (issue 26): the
// presentation mode on 1280×720 and 1366×768 projectors (every view of the
// registry with its chart and legend on screen for a 40-token input, arrow
// keys stepping layer, head and token), the normal page at 1280×720 (an
// 11-token pair's heatmap and legend in view after one scroll, the
// Layer/Head controls still on screen), Back within the page, a phone's
// first screen, and the keyboard's way in (skip link, focus in the view).

import assert from 'node:assert/strict';
import { scenario, ready, clickAndRedraw } from './harness.mjs';
import { VIEW_LIST } from '../../web/js/views/index.js';

// 40 tokens with [CLS] and [SEP] (checked against the page's count).
const TEXT40 = 'The quick brown fox jumps over the lazy dog while the curious students in the old library quietly read '
  + 'books about ancient history, modern physics, and the strange habits of birds that cross the sea.';
// An 11-token pair: [CLS] the cat sat . [SEP] it was tired . [SEP]
const PAIR11 = { text: 'The cat sat.', text_b: 'It was tired.' };

async function open(page, base, params) {
  await page.goto(`${base}?${new URLSearchParams(params)}`);
  await ready(page);
}

const tokenCount = (page) => page.evaluate(() => Number(/^(\d+) tokens/.exec(document.getElementById('token-info').textContent)?.[1]));

/** Rectangles of the drawn chart (every svg/canvas of the view), its colour
 *  legend(s) and the window. */
function chartBoxes(page) {
  return page.evaluate(() => {
    const rect = (el) => { const r = el.getBoundingClientRect(); return { top: r.top, left: r.left, bottom: r.bottom, right: r.right, w: r.width, h: r.height }; };
    const view = document.getElementById('view');
    const marks = [...view.querySelectorAll('svg, canvas')].filter((e) => {
      const r = e.getBoundingClientRect();
      return r.width > 1 && r.height > 1 && !e.closest('.view-alt, .view-notes, .view-hint');
    });
    const legends = [...view.querySelectorAll('rect.legend-bar, g.legend, svg.hv-swatches, g.scales g.scale')].filter((e) => e.getBoundingClientRect().width > 0);
    // What the view shows besides (a view drawn in HTML, as the predictions), not the visually hidden notes.
    const parts = [...view.children].filter((e) => {
      const r = e.getBoundingClientRect();
      return r.width > 1 && r.height > 1 && !e.matches('.view-alt, .view-notes, .view-hint');
    });
    return {
      marks: marks.map((e) => ({ what: `${e.tagName}.${e.getAttribute('class') || ''}`, ...rect(e) })),
      parts: parts.map((e) => ({ what: `${e.tagName}.${e.className}`, ...rect(e) })),
      legends: legends.map(rect), vw: document.documentElement.clientWidth, vh: innerHeight,
    };
  });
}

const inside = (r, vw, vh) => r.top >= -0.5 && r.left >= -0.5 && r.bottom <= vh + 0.5 && r.right <= vw + 0.5;

for (const [width, height] of [[1280, 720], [1366, 768]]) {
  scenario(`classroom: presentation ${width}x${height}, every view's chart and legend on screen for 40 tokens`, async ({ page, base, shot }) => {
    for (const v of VIEW_LIST) {
      const params = { text: TEXT40, view: v.id, layer: '2', head: '3', present: '1' };
      if (v.id === 'compare') params.ablate = '2:3'; // a comparison to draw: head 2:3 switched off
      await open(page, base, params);
      assert.equal(await tokenCount(page), 40, 'the input is 40 tokens');
      assert.ok(await page.evaluate(() => document.body.classList.contains('present')), `${v.id}: presentation mode on`);
      const { marks, parts, legends, vw, vh } = await chartBoxes(page);
      assert.ok(parts.length > 0, `${v.id}: something drawn`);
      for (const m of [...marks, ...parts]) assert.ok(inside(m, vw, vh), `${v.id}: ${m.what} ${JSON.stringify(m)} inside ${vw}x${vh}`);
      for (const l of legends) assert.ok(inside(l, vw, vh), `${v.id}: legend ${JSON.stringify(l)} inside ${vw}x${vh}`);
      // A chart (svg/canvas) comes with its colour legend or head key.
      if (marks.length) assert.ok(legends.length > 0, `${v.id}: has a colour legend`);
      // The page itself does not scroll.
      const over = await page.evaluate(() => document.documentElement.scrollHeight - innerHeight);
      assert.ok(over <= 1, `${v.id}: the page scrolls by ${over} px`);
      // Only the controls the view uses are in the bar.
      const shown = await page.evaluate(() => ['layer-ctl', 'head-ctl', 'mode', 'view-tabs'].filter((id) => document.getElementById(id).getClientRects().length > 0));
      assert.deepEqual(shown, ['layer-ctl', 'head-ctl', 'mode'].filter((id, i) => [v.controls.layer, v.controls.head, v.controls.mode][i]), `${v.id}: bar`);
      await shot(page, `classroom-present-${width}-${v.id}`);
    }
  }, { viewport: { width, height }, timeout: 400000 });
}

scenario('classroom: presentation keys — arrows step head and layer (token in the neuron view), Escape leaves; the Present button enters', async ({ page, base }) => {
  await open(page, base, { text: 'The cat sat on the mat.', view: 'heatmap', layer: '1', head: '2' });
  await clickAndRedraw(page, '#present');
  const state = () => page.evaluate(() => Object.fromEntries(new URLSearchParams(location.search)));
  const press = async (key) => {
    await page.evaluate(() => { document.body.dataset.state = 'loading'; });
    await page.keyboard.press(key);
    await ready(page);
    return state();
  };
  assert.equal((await state()).present, '1', 'present=1 in the URL');
  assert.ok(await page.evaluate(() => document.body.classList.contains('present')));
  // The labels are scaled; the pointer still finds its cell (row 2 "cat", column 5 "the").
  assert.ok(await page.evaluate(() => Number(getComputedStyle(document.getElementById('view')).zoom) > 1), 'the view is scaled up');
  const hit = await page.$eval('rect.hm-hit', (e) => { const b = e.getBoundingClientRect(); return { x: b.x, y: b.y, w: b.width, h: b.height }; });
  await page.mouse.move(hit.x + (5.5 * hit.w) / 9, hit.y + (2.5 * hit.h) / 9);
  await page.waitForFunction(() => !document.getElementById('tooltip').hidden);
  assert.match(await page.textContent('#tooltip'), /^cat → the/);
  await page.mouse.move(2, 700);
  let s = await press('ArrowRight');
  assert.equal(s.head, '3');
  s = await press('ArrowLeft');
  s = await press('ArrowLeft');
  assert.equal(s.head, '1');
  s = await press('ArrowDown');
  assert.equal(s.layer, '2');
  s = await press('ArrowUp');
  s = await press('ArrowUp');
  assert.equal(s.layer, '0');
  assert.match(await page.textContent('.view-title'), /layer 0, head 1/);
  // The bar's view menu opens another view, still presented.
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await page.selectOption('#present-view', 'head');
  await ready(page);
  s = await state();
  assert.equal(s.view, 'head');
  assert.equal(s.present, '1');
  // The neuron view: left/right step the query token, Shift the head.
  await open(page, base, { text: 'The cat sat on the mat.', view: 'neuron', layer: '1', head: '2', present: '1' });
  s = await press('ArrowRight');
  assert.equal(s.query, '1');
  s = await press('ArrowRight');
  assert.equal(s.query, '2');
  s = await press('Shift+ArrowRight');
  assert.equal(s.head, '3');
  s = await press('ArrowDown');
  assert.equal(s.layer, '2');
  // Escape leaves.
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await page.keyboard.press('Escape');
  await ready(page);
  assert.equal((await state()).present, undefined, 'present= gone from the URL');
  assert.equal(await page.evaluate(() => document.body.classList.contains('present')), false);
  assert.ok(await page.isVisible('#text-a'), 'the page is back');
}, { viewport: { width: 1280, height: 720 } });

scenario('classroom: 1280x720 page — an 11-token pair\'s heatmap and legend in view after one scroll, Layer/Head still on screen', async ({ page, base, shot }) => {
  await open(page, base, { ...PAIR11, view: 'heatmap' });
  assert.equal(await tokenCount(page), 11);
  // One scroll: the view's top to the top of the window (below the bar).
  await page.evaluate(() => document.getElementById('view').scrollIntoView({ block: 'start' }));
  await page.waitForTimeout(100);
  const r = await page.evaluate(() => {
    const rect = (el) => { const b = el.getBoundingClientRect(); return { top: b.top, bottom: b.bottom, left: b.left, right: b.right }; };
    return {
      stage: rect(document.querySelector('#view .hm-scroll')),
      legend: rect(document.querySelector('#view rect.legend-bar')),
      layer: rect(document.getElementById('layer')),
      head: rect(document.getElementById('head')),
      scrollY, vh: innerHeight, vw: document.documentElement.clientWidth,
    };
  });
  assert.ok(r.scrollY > 0, 'the page scrolled');
  for (const k of ['stage', 'legend', 'layer', 'head']) assert.ok(inside(r[k], r.vw, r.vh), `${k} ${JSON.stringify(r[k])} on screen (${r.vw}x${r.vh})`);
  // The controls do not cover the chart.
  assert.ok(r.layer.bottom <= r.stage.top && r.head.bottom <= r.stage.top, 'controls above the chart');
  await page.screenshot({ path: 'build/screenshots/classroom-1280-scrolled.png' });
}, { viewport: { width: 1280, height: 720 } });

scenario('classroom: Back returns to the previous view, layer and head within the page; typing does not add entries', async ({ page, base }) => {
  await open(page, base, { text: 'The cat sat on the mat.', view: 'heatmap', layer: '0', head: '0' });
  const at = () => page.evaluate(() => Object.fromEntries(new URLSearchParams(location.search)));
  const length0 = await page.evaluate(() => history.length);
  await clickAndRedraw(page, '#view-tabs button[data-view="head"]');
  assert.equal((await at()).view, 'head');
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await page.selectOption('#layer', '3');
  await ready(page);
  assert.equal((await at()).layer, '3');
  // Typing replaces the entry (no new one per keystroke).
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await page.fill('#text-a', 'The dog sat on the mat.');
  await ready(page);
  assert.equal(await page.evaluate(() => history.length), length0 + 2, 'two entries: view, layer');
  const back = async () => {
    await page.evaluate(() => { document.body.dataset.state = 'loading'; });
    await page.goBack();
    await ready(page);
    return at();
  };
  let s = await back();
  assert.equal(s.view, 'head');
  assert.equal(s.layer, '0');
  assert.equal(await page.$eval('#layer', (e) => e.value), '0', 'the Layer control follows');
  s = await back();
  assert.equal(s.view, 'heatmap');
  assert.equal(await page.getAttribute('#view', 'data-view'), 'heatmap');
  assert.ok(page.url().startsWith(base), 'still on the page');
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await page.goForward();
  await ready(page);
  assert.equal(await page.getAttribute('#view', 'data-view'), 'head');
  // A view that moves the layer/head by itself once drawn (the compare view
  // opening on its most changed head) makes one entry, not two: Back leaves it.
  await open(page, base, { text: 'The cat sat on the mat.', view: 'heatmap', layer: '0', head: '0', ablate: '2:3' });
  const length1 = await page.evaluate(() => history.length);
  await clickAndRedraw(page, '#view-tabs button[data-view="compare"]');
  await page.waitForFunction(() => new URLSearchParams(location.search).get('view') === 'compare' && new URLSearchParams(location.search).get('layer') !== '0');
  await ready(page);
  assert.equal(await page.evaluate(() => history.length), length1 + 1, 'one entry for the compare view');
  s = await back();
  assert.equal(s.view, 'heatmap');
  assert.equal(s.layer, '0');
}, { viewport: { width: 1280, height: 720 } });

scenario('classroom: a 390x844 phone\'s first screen shows the view', async ({ page, base, shot }) => {
  for (const view of ['heatmap', 'head', 'model']) {
    await open(page, base, { ...PAIR11, view });
    const r = await page.evaluate(() => {
      const m = [...document.querySelectorAll('#view svg, #view canvas')].map((e) => e.getBoundingClientRect()).filter((b) => b.width > 1 && b.height > 1);
      return { top: Math.min(...m.map((b) => b.top)), scrollY, docW: document.documentElement.scrollWidth };
    });
    assert.equal(r.scrollY, 0);
    assert.ok(r.top < 844 - 100, `${view}: the chart starts at ${r.top} px, inside the first screen`);
    assert.ok(r.docW <= 390, `${view}: no sideways scroll`);
    await shot(page, `classroom-phone-${view}`);
  }
}, { viewport: { width: 390, height: 844 } });

scenario('classroom: the skip link is the first Tab stop and puts the focus in the view; Enter that opens another view moves the focus into it', async ({ page, base }) => {
  await open(page, base, { text: 'The cat sat on the mat.', view: 'heatmap' });
  await page.keyboard.press('Tab');
  const first = await page.evaluate(() => ({ id: document.activeElement.id, text: document.activeElement.textContent, visible: document.activeElement.getBoundingClientRect().top >= 0 }));
  assert.deepEqual(first, { id: 'skip-link', text: 'Skip to the view', visible: true });
  await page.keyboard.press('Enter');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'view');
  // The next Tab goes to the heatmap itself, inside the view.
  await page.keyboard.press('Tab');
  assert.ok(await page.evaluate(() => document.getElementById('view').contains(document.activeElement) && document.activeElement.id !== 'view'), 'Tab from the view reaches the chart');
  // Enter on the heatmap opens the neuron view: the focus follows into it.
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Enter');
  await ready(page);
  assert.equal(await page.getAttribute('#view', 'data-view'), 'neuron');
  assert.ok(await page.evaluate(() => document.getElementById('view').contains(document.activeElement)), `focus in the view, not on ${await page.evaluate(() => document.activeElement.tagName)}`);
}, { viewport: { width: 1280, height: 720 } });
