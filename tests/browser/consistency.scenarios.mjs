// consistency.scenarios.mjs — the page agrees with itself (issue 32 item 4):
// Back after presentation mode stays out of it and within the page; the
// pattern classes have one colour each, the same in the heads overview and
// in the Corpus view (views/palette.js CLASS_PALETTE); a selection made on
// one text (a heatmap cell, a position asked in the Predictions view) does
// not carry over to a new text.

import assert from 'node:assert/strict';
import { scenario, ready, clickAndRedraw, typeText } from './harness.mjs';

const params = (page) => page.evaluate(() => Object.fromEntries(new URLSearchParams(location.search)));
const presenting = (page) => page.evaluate(() => document.body.classList.contains('present'));

/** Back (or Forward), then the page redrawn for the entry it lands on. */
async function back(page) {
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await page.goBack();
  await ready(page);
}

scenario('consistency: after leaving presentation mode, Back neither re-enters it nor leaves the page', async ({ page, base, shot }) => {
  await page.goto(`${base}?view=heatmap&layer=1&head=0&text=The+cat+sat+on+the+mat.`);
  await ready(page);
  await clickAndRedraw(page, '#present');
  assert.equal(await presenting(page), true);
  for (const key of ['ArrowRight', 'ArrowRight']) { // head 1, head 2: an entry each
    await page.evaluate(() => { document.body.dataset.state = 'loading'; });
    await page.keyboard.press(key);
    await ready(page);
  }
  assert.equal((await params(page)).head, '2');
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await page.keyboard.press('Escape');
  await ready(page);
  assert.equal(await presenting(page), false, 'Escape leaves');
  await back(page);
  let p = await params(page);
  assert.equal(p.head, '1', 'Back: the head before');
  assert.equal(await presenting(page), false, 'Back does not re-enter presentation mode');
  assert.equal(p.present, undefined, 'nor does the address say so');
  await back(page);
  p = await params(page);
  assert.equal(p.view, 'heatmap', 'the next Back stays in the page');
  assert.equal(p.head, '0');
  assert.equal(await presenting(page), false);
  await shot(page, 'consistency-back-after-present');
  // Forward goes over the same entries, still not presented.
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await page.goForward();
  await ready(page);
  assert.equal((await params(page)).head, '1');
  assert.equal(await presenting(page), false);
}, { viewport: { width: 1280, height: 720 } });

/** 'rgb(r, g, b)' or '#rrggbb' -> '#rrggbb'. */
const hex = (c) => {
  const m = /^rgba?\((\d+),\s*(\d+),\s*(\d+)/.exec(c);
  return m ? `#${m.slice(1, 4).map((x) => Number(x).toString(16).padStart(2, '0')).join('')}` : c.toLowerCase();
};

scenario('consistency: each pattern class has one colour, the same in the heads overview and in the Corpus view', async ({ page, base, shot }) => {
  await page.goto(`${base}?view=overview&text=${encodeURIComponent('The cat sat on the mat because it was tired.')}&text_b=${encodeURIComponent('It slept all day.')}`);
  await ready(page);
  // the overview: each head's glyph, and the legend's key per class
  const overview = await page.evaluate(() => {
    const glyphs = [...document.querySelectorAll('g.ov-head')].map((g) => [g.dataset.class, getComputedStyle(g.querySelector('circle.ov-glyph')).fill]);
    const keys = [...document.querySelectorAll('g.legend g.key')].map((k) => [k.querySelector('text').textContent, getComputedStyle(k.querySelector('circle')).fill]);
    return { glyphs, keys };
  });
  const ov = new Map();
  for (const [c, fill] of [...overview.glyphs, ...overview.keys.filter(([t]) => !t.startsWith('size'))]) {
    if (ov.has(c)) assert.equal(ov.get(c), hex(fill), `overview: ${c} drawn in two colours`);
    ov.set(c, hex(fill));
  }
  assert.equal(ov.size, 5, `overview legend: ${[...ov.keys()]}`);
  await shot(page, 'consistency-classes-overview');
  // the Corpus view, run on a few lines: the stacked bars and their legend
  await page.click('#view-tabs button[data-view="corpus"]');
  await page.waitForSelector('textarea.cp-text');
  await page.fill('textarea.cp-text', 'The cat sat on the mat.\nDogs bark at night.\nShe read the old book twice.\tIt was long.');
  await page.click('button.cp-run');
  await page.waitForFunction(() => document.querySelector('[data-corpus-state]')?.dataset.corpusState === 'done', null, { timeout: 120000 });
  const corpus = await page.evaluate(() => ({
    swatches: [...document.querySelectorAll('.cp-legend-item')].map((i) => [i.textContent, getComputedStyle(i.querySelector('.cp-swatch')).backgroundColor]),
    bars: [...document.querySelectorAll('rect.cp-bar')].map((r) => [r.dataset.class, getComputedStyle(r).fill]),
  }));
  assert.equal(corpus.swatches.length, 5);
  for (const [c, colour] of [...corpus.swatches, ...corpus.bars]) {
    assert.equal(hex(colour), ov.get(c), `${c}: the Corpus view's ${hex(colour)}, the overview's ${ov.get(c)}`);
  }
  await shot(page, 'consistency-classes-corpus');
}, { viewport: { width: 1280, height: 720 } });
