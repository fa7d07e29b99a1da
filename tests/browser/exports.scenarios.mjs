// exports.scenarios.mjs — every export of every view (issue 32 item 4): for
// each view of the registry (views/index.js VIEW_LIST), Export SVG, Export
// PNG, Export CSV and Export JSON each give a file that is not empty and is
// well formed (SVG: parsed, nothing active in it, text drawn; PNG: its
// signature and a size; CSV: blocks of rows as wide as their header; JSON:
// parsed, blocks of rows as wide as their columns), with no error notice.
// The Predictions view (HTML cards: its export redraws them) and the Corpus
// view (run here on a few lines) included. The model: a tiny BERT with its
// masked-LM head (tests/fixtures/mlm/bert, converted by build/bertlens), so
// the Predictions view has words to export; the Predictions view's exports
// are also taken for the other families' heads.
//
//   make site build/bertlens && node tests/browser/run.mjs "exports"
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { scenario, ready, typeText, inspectSvg, SHOTS } from './harness.mjs';
import { download, mlmBundle as headBundle, MLM_REFS } from './page_vs_cli.mjs';
import { VIEW_LIST } from '../../web/js/views/index.js';

const REFS = MLM_REFS;


/** RFC 4180 rows of a CSV text. */
function csvRows(text) {
  const rows = [];
  let row = [], field = '', quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') { field += '"'; i++; } else if (ch === '"') quoted = false; else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') { row.push(field); field = ''; } else if (ch === '\n') { row.push(field.replace(/\r$/, '')); rows.push(row); row = []; field = ''; } else field += ch;
  }
  if (field || row.length) { row.push(field); rows.push(row); }
  return rows;
}

const noError = async (page, what) => {
  const err = await page.$$eval('#notices .notice.error, #notices .notice.warn', (els) => els.map((e) => e.textContent).filter((t) => /export/i.test(t)));
  assert.deepEqual(err, [], `${what}: a notice`);
};

/** Every export of the view shown: checked, and what they hold returned. */
async function exportAll(page, view) {
  const got = {};
  const svgFile = await download(page, '#export-svg');
  assert.ok(svgFile.bytes.length > 0, `${view}: SVG file empty`);
  assert.match(svgFile.name, /\.svg$/);
  const svg = await inspectSvg(page, svgFile.bytes.toString('utf8'));
  assert.ok(svg.wellFormed, `${view}: SVG well formed`);
  assert.equal(svg.unsafe, 0, `${view}: nothing active in the SVG`);
  assert.ok(svg.texts.length > 1, `${view}: SVG with text`);
  got.svg = svg;
  await noError(page, `${view} SVG`);
  const png = await download(page, '#export-png');
  fs.writeFileSync(path.join(SHOTS, `exports-${view}-export.png`), png.bytes); // to look at
  assert.match(png.name, /\.png$/);
  assert.ok(png.bytes.length > 100, `${view}: PNG file of ${png.bytes.length} bytes`);
  assert.equal(png.bytes.subarray(0, 8).toString('hex'), '89504e470d0a1a0a', `${view}: PNG signature`);
  assert.ok(png.bytes.readUInt32BE(16) > 0 && png.bytes.readUInt32BE(20) > 0, `${view}: PNG size`);
  await noError(page, `${view} PNG`);
  const csv = await download(page, '#export-csv');
  assert.match(csv.name, /\.csv$/);
  const text = csv.bytes.toString('utf8');
  assert.ok(text.trim().length > 0, `${view}: CSV empty`);
  // blocks separated by an empty line; each row as wide as its block's header
  const blocks = text.split(/\r\n\r\n|\r\n$/).filter((b) => b.trim());
  for (const b of blocks) {
    const rows = csvRows(b);
    assert.ok(rows.length >= 2, `${view}: a CSV block of ${rows.length} rows`);
    for (const r of rows) assert.equal(r.length, rows[0].length, `${view}: CSV row ${JSON.stringify(r).slice(0, 80)} vs header of ${rows[0].length}`);
  }
  got.csv = blocks.map(csvRows);
  await noError(page, `${view} CSV`);
  const json = await download(page, '#export-json');
  assert.match(json.name, /\.json$/);
  const j = JSON.parse(json.bytes.toString('utf8'));
  assert.equal(j.view, view);
  assert.ok(Array.isArray(j.blocks) && j.blocks.length > 0, `${view}: JSON blocks`);
  for (const b of j.blocks) {
    assert.equal(b.values.length, b.rows.length, `${view}: JSON rows`);
    for (const r of b.values) assert.equal(r.length, b.cols.length, `${view}: JSON row width`);
  }
  got.json = j;
  await noError(page, `${view} JSON`);
  return got;
}

scenario('exports: every view of the registry gives a well-formed SVG, PNG, CSV and JSON file', async ({ page, base, shot }) => {
  // ablate=0:1: the compare view compares the model with head 0:1 off
  await page.goto(`${base}?view=heatmap&ablate=0:1`);
  await ready(page);
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await page.setInputFiles('#file-input', headBundle('bert'));
  await ready(page);
  await typeText(page, '#text-a', 'The capital of France is [MASK].');
  const seen = [];
  for (const v of VIEW_LIST) {
    await page.evaluate(() => { document.body.dataset.state = 'loading'; });
    await page.click(`#view-tabs button[data-view="${v.id}"]`);
    await ready(page);
    if (v.id === 'corpus') { // the view runs the model itself: a few lines first
      await page.fill('textarea.cp-text', 'The cat sat on the mat.\nDogs bark at night.\tThey always do.');
      await page.click('button.cp-run');
      await page.waitForFunction(() => document.querySelector('[data-corpus-state]')?.dataset.corpusState === 'done', null, { timeout: 120000 });
    }
    const got = await exportAll(page, v.id);
    if (v.id === 'predict') {
      // the cards, redrawn: the position's heading, its words and percentages
      assert.ok(got.svg.texts.some((t) => /^Position 6: \[MASK\]/.test(t)), `predict SVG: ${got.svg.texts.slice(0, 12)}`);
      assert.ok(got.svg.texts.some((t) => /^\d+\.\d %$/.test(t)), 'predict SVG: probabilities');
      const b = got.json.blocks[0];
      assert.equal(b.position, 6);
      assert.equal(b.token, '[MASK]');
      assert.equal(b.values.length, 6, 'top 5 and the actual token');
      assert.equal(got.json.model_name, 'tiny-bert', 'the bundle\'s own name');
    }
    if (v.id === 'corpus') {
      assert.equal(got.json.texts, 2);
      assert.equal(got.json.blocks[0].rows.length, 2 * 2, '2 layers x 2 heads');
      assert.ok(got.svg.texts.some((t) => t === 'vertical'), 'corpus SVG: the class legend');
      assert.ok(got.svg.texts.some((t) => /^layer 0$/.test(t)), 'corpus SVG: the class bars');
    }
    seen.push(v.id);
    await shot(page, `exports-${v.id}`);
  }
  assert.deepEqual(seen, VIEW_LIST.map((v) => v.id));
}, { viewport: { width: 1280, height: 720 }, timeout: 400000 });

scenario('exports: the Predictions view\'s four exports for the masked-LM head of every family', async ({ page, base }) => {
  await page.goto(`${base}?view=predict`);
  await ready(page);
  for (const fam of REFS.families) {
    const c = fam.cases[0];
    await page.evaluate(() => { document.body.dataset.state = 'loading'; });
    await page.setInputFiles('#file-input', headBundle(fam.family));
    await ready(page);
    await typeText(page, '#text-a', c.texts[0]);
    const mask = c.tokens.findIndex((t) => t === '[MASK]' || t === '<mask>');
    const got = await exportAll(page, 'predict');
    assert.ok(got.svg.texts.some((t) => t.startsWith(`Position ${mask}: ${c.tokens[mask]}`)), `${fam.family}: the card in the SVG`);
    const b = got.json.blocks[0];
    assert.equal(b.position, mask, fam.family);
    assert.equal(b.token, c.tokens[mask], fam.family);
    assert.equal(b.top[0].id, c.positions[mask].top_ids[0], `${fam.family}: top word vs Hugging Face`);
    assert.equal(got.csv[0][0][0], `position ${mask} ${c.tokens[mask]}: top 5 predictions`);
    console.log(`#   ${fam.family}: position ${mask} ${c.tokens[mask]}, top ${b.top[0].token}`);
  }
}, { viewport: { width: 1280, height: 720 }, timeout: 400000 });
