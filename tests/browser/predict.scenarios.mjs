// predict.scenarios.mjs — the Predictions view (web/js/views/predictions.js)
// in a fresh profile: a bundle with a masked-LM head, converted here from
// tests/fixtures/mlm/bert by build/bertlens, loaded in the page; its top
// word at [MASK] against Hugging Face's (tests/fixtures/mlm/refs.json); a
// click on a word masks it and re-runs (top words as `bertlens predict`
// gives them); "?" keeps a position in mask= across a reload; the default
// model (no head) says how to get one. A snapshot ("Copy embed code", the
// standalone HTML) carries the words: opened in a fresh profile with the
// model files answering 404, it draws the same words and probabilities.
//
//   make site build/bertlens && node tests/browser/run.mjs "predictions"
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { scenario, ready, settled, typeText, openAsStranger, ROOT } from './harness.mjs';

const REFS = JSON.parse(fs.readFileSync(path.join(ROOT, 'tests/fixtures/mlm/refs.json'), 'utf8'));
const CASE = REFS.families.find((f) => f.family === 'bert').cases[0]; // "The capital of France is [MASK]."
const BIN = path.join(ROOT, 'build/bertlens');

function headBundle() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bertlens-mlm-'));
  const out = path.join(dir, 'tiny-mlm.blb');
  const r = spawnSync(BIN, ['convert', path.join(ROOT, 'tests/fixtures/mlm/bert'), out, '--dtype', 'f32', '--name', 'tiny-mlm'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`bertlens convert: ${r.stderr}`);
  return out;
}

/** The Predictions view with the tiny head bundle loaded and the case's text typed. */
async function predictWithHead(page, base) {
  await page.goto(`${base}?view=predict`);
  await ready(page);
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await page.setInputFiles('#file-input', headBundle());
  await ready(page);
  await typeText(page, '#text-a', CASE.texts[0]);
}

const topOf = (page, i) => page.$eval(`.pv-card[data-index="${i}"] .pv-top li .pv-word-label`, (e) => e.textContent.trim());

scenario('predictions: top word at [MASK] is Hugging Face\'s; a click masks a word and re-runs; mask= survives a reload', async ({ page, base, shot }) => {
  await page.goto(`${base}?view=predict`);
  await ready(page);
  // the default model has no head: a sentence says so and how to get one
  assert.match(await page.textContent('.pv-nohead'), /no masked-language-model head.*BertForMaskedLM/s);
  await shot(page, 'predict-no-head');
  const file = headBundle();
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await page.setInputFiles('#file-input', file);
  await ready(page);
  await typeText(page, '#text-a', CASE.texts[0]);
  const at = CASE.tokens.indexOf('[MASK]');
  const want = CASE.tokens.length && CASE.positions[at].top_ids[0];
  const top = await topOf(page, at);
  const cli = JSON.parse(spawnSync(BIN, ['predict', '--positions', String(at), file, CASE.texts[0]], { encoding: 'utf8' }).stdout);
  assert.equal(cli.positions[0].top[0].id, want, 'the CLI agrees with Hugging Face');
  assert.equal(top, cli.positions[0].top[0].token, 'top-1 at [MASK] vs Hugging Face');
  console.log(`#   [MASK] at ${at}: top-1 "${top}" = Hugging Face's (id ${want})`);
  await shot(page, 'predict-mask');
  // a click on "capital" masks it: the text changes and a card appears there
  const cap = CASE.tokens.indexOf('capital');
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await page.click(`.pv-tok:nth-child(${cap + 1}) button.pv-word`);
  await ready(page);
  const edited = await page.inputValue('#text-a');
  assert.equal(edited, 'The [MASK] of France is [MASK].');
  const two = JSON.parse(spawnSync(BIN, ['predict', '--positions', String(cap), file, edited], { encoding: 'utf8' }).stdout);
  assert.equal(await topOf(page, cap), two.positions[0].top[0].token, 'top-1 at the clicked word vs bertlens predict');
  // Enter on a focused word masks it too (keyboard)
  const fr = (await page.$$eval('.pv-tok button.pv-word, .pv-tok button.pv-mask', (els) => els.map((e) => e.textContent))).indexOf('france');
  await page.focus(`.pv-tok:nth-child(${fr + 1}) button.pv-word`);
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await page.keyboard.press('Enter');
  await ready(page);
  assert.equal(await page.inputValue('#text-a'), 'The [MASK] of [MASK] is [MASK].');
  // "?" on "is" shows its predictions unmasked and keeps the position in mask=
  const is = CASE.tokens.indexOf('is');
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await page.click(`.pv-tok:nth-child(${is + 1}) button.pv-ask`);
  await ready(page);
  assert.ok(await page.$(`.pv-card[data-index="${is}"]`), 'a card for the asked position');
  assert.match(page.url(), new RegExp(`[?&]mask=${is}(&|$)`));
  await shot(page, 'predict-asked');
  await page.goto(page.url());
  assert.equal(await settled(page), 'ready');
  assert.match(page.url(), new RegExp(`[?&]mask=${is}(&|$)`), 'mask= survives a reload');
});

scenario('predictions on a 390 px phone: no sideways scrolling, words reachable', async ({ page, base, shot }) => {
  await predictWithHead(page, base);
  const wide = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(wide <= 1, `the page scrolls sideways by ${wide} px`);
  const box = await page.$eval('.pv-card', (e) => e.getBoundingClientRect().right);
  assert.ok(box <= 390, `a card ends at ${box} px`);
  await shot(page, 'predict-phone');
}, { viewport: { width: 390, height: 844 } });

/** Every card's words and probabilities as drawn: [[index, [[word, prob]…]]…]. */
const cardsOf = (page) => page.$$eval('.pv-card', (cards) => cards.map((c) => [c.dataset.index,
  [...c.querySelectorAll('.pv-top li')].map((li) => [li.querySelector('.pv-word-label').textContent, li.querySelector('.pv-prob').textContent]),
  c.querySelector('.pv-actual').textContent]));


scenario('predictions snapshot: the embed code and the standalone file draw the same words with the model files unreachable', async ({ page, base, shot }) => {
  await predictWithHead(page, base);
  const cap = CASE.tokens.indexOf('capital');
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await page.click(`.pv-tok:nth-child(${cap + 1}) button.pv-ask`); // an asked position travels too (mask=)
  await ready(page);
  const live = await cardsOf(page);
  const at = CASE.tokens.indexOf('[MASK]');
  assert.deepEqual(live.map((c) => Number(c[0])), [cap, at]);
  assert.equal(live[1][1][0][0], CASE.positions[at].top_tokens[0], 'live top-1 at [MASK] is Hugging Face\'s');
  const { link, html, refused } = await openAsStranger(page, async (p, what) => {
    await p.waitForSelector('.pv-card');
    assert.deepEqual(await cardsOf(p), live, `${what}: the same words, probabilities, ranks`);
    assert.match(await p.textContent('.pv-snapshot'), /snapshot.*switched off/s, `${what}: says it is a snapshot`);
    assert.ok(await p.$eval('.pv-tok button.pv-word', (b) => b.disabled), `${what}: masking is off`);
    await shot(p, `predict-snapshot-${what.split(' ')[0]}`);
  });
  console.log(`#   ${live.length} cards drawn from a ${link.split('#s=')[1].length}-character snapshot and a ${(html.length / 1024).toFixed(0)} KB file; model requests refused: ${refused.length}`);
});
