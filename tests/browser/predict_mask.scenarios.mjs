// predict_mask.scenarios.mjs — after a click masks a word, the Predictions
// view reports that word's rank in the prediction at its position (the
// model no longer sees it), as Hugging Face ranks it on the edited text
// (tests/fixtures/mlm/was.json, was.py), for the masked-LM head of every
// family; "Unmask" puts the word back; a selection made on one text (a
// position asked with "?", a masked word, a heatmap cell) does not carry
// over to a new text.
//
//   make site build/bertlens && node tests/browser/run.mjs "predict-mask"
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { scenario, ready, typeText, ROOT } from './harness.mjs';
import { mlmBundle as headBundle, MLM_REFS } from './page_vs_cli.mjs';
import { tokenLabel, guessPieces } from '../../web/js/lib/tokens.js';

const REFS = MLM_REFS;
const WAS = JSON.parse(fs.readFileSync(path.join(ROOT, 'tests/fixtures/mlm/was.json'), 'utf8'));


const redraw = async (page, act) => {
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await act();
  await ready(page);
};
const params = (page) => page.evaluate(() => Object.fromEntries(new URLSearchParams(location.search)));

scenario('predict-mask: a masked word\'s own rank (Hugging Face\'s), Unmask puts it back, in every family', async ({ page, base, shot }) => {
  await page.goto(`${base}?view=predict`);
  await ready(page);
  for (const w of WAS.families) {
    await redraw(page, () => page.setInputFiles('#file-input', headBundle(w.family)));
    await typeText(page, '#text-a', w.text);
    // a click on the word masks it
    await redraw(page, () => page.click(`.pv-tok:nth-child(${w.position + 1}) button.pv-word`));
    assert.equal(await page.inputValue('#text-a'), w.masked_text, `${w.family}: the edited text`);
    const line = await page.textContent(`.pv-card[data-index="${w.position}"] .pv-actual`);
    const rank = Number(await page.getAttribute(`.pv-card[data-index="${w.position}"] .pv-actual`, 'data-rank'));
    console.log(`#   ${w.family}: ${line} (Hugging Face: rank ${w.rank}, p ${w.prob.toExponential(2)})`);
    // the word as every view labels it (a byte-level "Ġof" reads "␣of")
    const label = tokenLabel(w.token, guessPieces([w.token]));
    assert.match(line, new RegExp(`^The masked-out word “${label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}”: probability .*, rank ${w.rank}\\.$`), `${w.family}: ${line}`);
    assert.equal(rank, w.rank);
    if (w.family === 'bert' || w.family === 'deberta-v3') await shot(page, `predict-mask-${w.family}`);
    // Unmask: the text as it was, no card at the position
    await redraw(page, () => page.click(`.pv-card[data-index="${w.position}"] button.pv-unmask`));
    assert.equal(await page.inputValue('#text-a'), w.text, `${w.family}: unmasked`);
    assert.equal(await page.$(`.pv-card[data-index="${w.position}"]`), null);
    assert.equal((await params(page)).was, undefined, 'was= gone');
    // masked again, the word's own button in the strip puts it back too
    await redraw(page, () => page.click(`.pv-tok:nth-child(${w.position + 1}) button.pv-word`));
    await redraw(page, () => page.click(`.pv-tok:nth-child(${w.position + 1}) button.pv-mask`));
    assert.equal(await page.inputValue('#text-a'), w.text, `${w.family}: put back from the strip`);
  }
}, { viewport: { width: 1280, height: 720 }, timeout: 400000 });

scenario('predict-mask: selections of tokens (a position asked, a masked word, a heatmap cell) do not carry over to a new text', async ({ page, base, shot }) => {
  const w = WAS.families.find((f) => f.family === 'bert');
  await page.goto(`${base}?view=predict`);
  await ready(page);
  await redraw(page, () => page.setInputFiles('#file-input', headBundle('bert')));
  await typeText(page, '#text-a', w.text);
  await redraw(page, () => page.click(`.pv-tok:nth-child(${w.position + 1}) button.pv-word`)); // "of" masked
  await redraw(page, () => page.click('.pv-tok:nth-child(2) button.pv-ask')); // "?" on "the"
  let p = await params(page);
  assert.equal(p.mask, '1');
  assert.match(p.was, /^3:\d+:of$/);
  assert.ok(await page.$('.pv-card[data-index="1"]'), 'a card for the position asked');
  // a new text: no position asked, no word recorded; the mask typed in it is the mask token itself
  await typeText(page, '#text-a', 'Dogs [MASK] at night.');
  p = await params(page);
  assert.equal(p.mask, undefined, 'mask= dropped');
  assert.equal(p.was, undefined, 'was= dropped');
  assert.deepEqual(await page.$$eval('.pv-card', (cs) => cs.map((c) => c.dataset.index)), ['2']);
  assert.match(await page.textContent('.pv-card[data-index="2"] .pv-actual'), /^The mask token itself/);
  assert.equal(await page.$('button.pv-unmask'), null);
  await shot(page, 'predict-mask-new-text');
  // the heatmap: a cell chosen, then a new text
  await redraw(page, () => page.click('#view-tabs button[data-view="heatmap"]'));
  await page.focus('rect.hm-hit');
  await redraw(page, () => page.keyboard.press('ArrowRight'));
  assert.ok((await params(page)).cell, 'a cell chosen');
  await typeText(page, '#text-a', 'Cats sleep all day long.');
  assert.equal((await params(page)).cell, undefined, 'cell= dropped with the new text');
}, { viewport: { width: 1280, height: 720 }, timeout: 300000 });

scenario('predict-mask: on a 390 px phone the masked word\'s line and Unmask fit, no sideways scrolling', async ({ page, base, shot }) => {
  const w = WAS.families.find((f) => f.family === 'deberta-v3');
  await page.goto(`${base}?view=predict`);
  await ready(page);
  await redraw(page, () => page.setInputFiles('#file-input', headBundle('deberta-v3')));
  await typeText(page, '#text-a', w.text);
  await redraw(page, () => page.click(`.pv-tok:nth-child(${w.position + 1}) button.pv-word`));
  const b = await page.$eval('button.pv-unmask', (e) => { const r = e.getBoundingClientRect(); return { left: r.left, right: r.right }; });
  assert.ok(b.left >= 0 && b.right <= 390, `Unmask inside the window: ${JSON.stringify(b)}`);
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= innerWidth + 1), 'no sideways scrolling');
  await page.$eval('.pv-card', (e) => e.scrollIntoView());
  await shot(page, 'predict-mask-phone');
}, { viewport: { width: 390, height: 844 }, timeout: 120000 });
