// neuron_terms.scenarios.mjs — issue 32 item 2: the neuron view shows the
// model's own arithmetic in every family. A RoBERTa, XLM-R, ALBERT, DeBERTa,
// MPNet and ModernBERT checkpoint folder (tests/fixtures/families/) converted
// in the page as families.scenarios does, and BERT through the default
// model; for a few layers, heads and queries (ModernBERT on an input longer
// than its window, on its sliding-window layer):
//   - the softmax column IS the heatmap's row for that layer, head and query
//     (max |d| <= 1e-6 over the values the rows hold, data-softmax; the
//     numbers shown, 3 decimals, within rounding);
//   - one column per term, named as the engine names them (bl_score_terms),
//     and the view's JSON export of them (and of their sum) equal to
//     `bertlens attend --scores` on the same bundle bytes (q8: the page's
//     wasm vs the native CLI, families.scenarios' bound), masked keys null
//     and shown as "masked" exactly where the CLI has null;
//   - the note names what is added; no "softmax(q · k / √d) ... is exactly".
// Screenshots of DeBERTa (3 terms + sum) at 1280x720 and 390 px wide: the
// columns must fit (nothing past the stage, no sideways scroll on a phone).

import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { scenario, ready, typeText, clickAndRedraw, ROOT, DEFAULT_GZ, texts } from './harness.mjs';
import { BIN, run, download } from './page_vs_cli.mjs';
import { convertInPage as convertFolderInPage } from './family_page.mjs';

// The page's wasm against the native CLI on the same q8 (q10: the default
// model) bundle: the kernels differ as families.scenarios.mjs says (its TOL,
// 5e-4, bounds the attention probabilities), and the logits carry that
// difference before the softmax damps it (a probability moves by at most
// p(1 - p) <= 1/4 of its logit's change): relative to max(1, |score|),
// measured 5e-7 to 1.45e-3 here (the deepest: ALBERT layer 2, BERT layer 4).
const TOL = 3e-3;
const TEXT = 'The unbelievable cat sat on the warm mat near the door.';
const TEXT_B = 'Nobody believed it, but the cat stayed there all day long.';

/** Convert fixture folder `family` in the page (the directory picker): the
 *  bundle the page converted, as saved, beside `bertlens convert`'s. */
async function convertInPage(page, base, family) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'bertlens-nt-'));
  const dir = path.join(root, family);
  fs.cpSync(path.join(ROOT, 'tests/fixtures/families', family), dir, { recursive: true });
  const bundle = path.join(root, 'page.blb');
  fs.writeFileSync(bundle, await convertFolderInPage(page, base, dir)); // (family_page.mjs: the saved bundle, unzipped)
  return { root, bundle };
}

async function pick(page, layer, head, query) {
  await page.selectOption('#layer', String(layer));
  await ready(page);
  await page.selectOption('#head', String(head));
  await ready(page);
  if (query !== undefined) {
    await page.selectOption('#neuron-query', String(query));
    await ready(page);
  }
}

/** The neuron view for layer, head, query against the heatmap and the CLI. */
async function checkHead(page, { bundle, layer, head, query, texts: tx, what }) {
  await clickAndRedraw(page, '#view-tabs [data-view="heatmap"]');
  await pick(page, layer, head);
  const hm = JSON.parse((await download(page, '#export-json')).bytes.toString('utf8'));
  const hmRow = hm.blocks[0].values[query];
  await clickAndRedraw(page, '#view-tabs [data-view="neuron"]');
  await pick(page, layer, head, query);
  assert.match(await page.textContent('.view-title'), new RegExp(`layer ${layer}, head ${head}: how query .* \\(token ${query}\\)`));
  // the softmax column is the heatmap's row
  const shown = await page.$$eval('.nv-row', (rows) => rows.map((r) => ({
    key: Number(r.dataset.key), w: Number(r.dataset.softmax), score: Number(r.dataset.score),
    soft: r.querySelector('text.soft').textContent,
    cells: [...r.querySelectorAll('text.term, text.score')].map((t) => t.textContent),
  })));
  assert.equal(shown.length, hmRow.length, 'every key a row');
  let worstSoft = 0;
  shown.forEach((r, j) => {
    assert.equal(r.key, j);
    worstSoft = Math.max(worstSoft, Math.abs(r.w - hmRow[j]));
    assert.ok(Math.abs(Number(r.soft) - hmRow[j]) <= 5e-4 + 1e-9, `${what}: key ${j} shows softmax ${r.soft}, the heatmap ${hmRow[j]}`);
  });
  assert.ok(worstSoft <= 1e-6, `${what}: softmax column vs heatmap row max |d| ${worstSoft}`);
  // the terms: named as the CLI names them, the export's numbers the CLI's
  const cli = JSON.parse(run(BIN, ['attend', '--scores', '--layer', String(layer), bundle, ...tx]).stdout);
  const names = cli.score_terms.map((t) => t.abbr);
  const cols = [...names, ...(names.length > 1 ? ['score'] : [])];
  const titles = await texts(page, '.col-title');
  assert.deepEqual(titles.slice(2, 2 + cols.length), cols, `${what}: one column per term${names.length > 1 ? ', then their sum' : ''}`);
  const ex = JSON.parse((await download(page, '#export-json')).bytes.toString('utf8'));
  assert.equal(ex.blocks.length, 1 + names.length + 1, 'the attention row, each term, the score');
  const want = [...cli.score_terms.map((t) => t.values[0][head][query]), cli.scores[0][head][query]];
  let worst = 0;
  ex.blocks.slice(1).forEach((b, k) => {
    assert.equal(b.query, query);
    b.values[0].forEach((v, j) => {
      const w = want[k][j];
      if (w === null || v === null) { assert.equal(v, w, `${what}: block ${k} key ${j} null where the CLI has null`); return; }
      worst = Math.max(worst, Math.abs(v - w) / Math.max(1, Math.abs(w)));
    });
  });
  assert.ok(worst <= TOL, `${what}: terms vs attend --scores max |d| ${worst}`);
  // the numbers shown: 2 decimals of the same, "masked" where null
  shown.forEach((r, j) => {
    const row = [...cli.score_terms.map((t) => t.values[0][head][query][j]), ...(names.length > 1 ? [cli.scores[0][head][query][j]] : [])];
    r.cells.forEach((c, k) => {
      if (row[k] === null) assert.equal(c, 'masked', `${what}: key ${j} masked`);
      else assert.ok(Math.abs(Number(c) - row[k]) <= 0.005 + TOL * Math.max(1, Math.abs(row[k])), `${what}: key ${j} column ${cols[k]} shows ${c}, the CLI ${row[k]}`);
    });
  });
  // the text alternative: the strongest keys with each term, the score, the softmax
  const th = await texts(page, '#view details.view-alt th');
  assert.deepEqual(th, ['key', ...cli.score_terms.map((t) => t.name), ...(names.length > 1 ? [th[names.length + 1]] : []), 'softmax']);
  if (names.length > 1) assert.match(th[names.length + 1], /^score \(/);
  const notes = await page.textContent('#view p.view-notes');
  assert.doesNotMatch(notes, /softmax\(q · k \/ √\d+\) over all/);
  for (const t of cli.score_terms) assert.ok(notes.includes(t.name) && notes.includes(t.about), `${what}: the note names ${t.name}`);
  assert.match(notes, /is exactly this head's attention row: the softmax column, the heatmap's numbers/);
  const masked = want[want.length - 1].filter((v) => v === null).length;
  return { worstSoft, worst, masked, notes };
}

const CASES = {
  roberta: [[1, 2, 4], [2, 0, 9]],
  'xlm-roberta': [[0, 1, 3]],
  albert: [[2, 3, 5]],
  'deberta-v2': [[1, 2, 6], [0, 3, 2]],
  mpnet: [[2, 1, 7]],
  modernbert: [[0, 3, 12], [1, 2, 1], [1, 0, 20]], // layer 1: a sliding-window layer (the screenshot's)
};

for (const [family, cases] of Object.entries(CASES)) {
  scenario(`neuron terms: ${family} — softmax column = heatmap row, term columns = attend --scores`, async ({ page, base, shot }) => {
    const { root, bundle } = await convertInPage(page, base, family);
    await typeText(page, '#text-a', TEXT);
    await typeText(page, '#text-b', TEXT_B);
    let masked = 0;
    for (const [layer, head, query] of cases) {
      const r = await checkHead(page, { bundle, layer, head, query, texts: [TEXT, TEXT_B], what: `${family} ${layer}:${head} query ${query}` });
      console.log(`#   ${family} layer ${layer} head ${head} query ${query}: softmax vs heatmap ${r.worstSoft.toExponential(2)}, terms vs CLI ${r.worst.toExponential(2)}, ${r.masked} masked`);
      masked += r.masked;
      if (family === 'modernbert' && layer === 1) assert.match(r.notes, /sliding window: keys more than \d+ tokens from the query are masked/);
    }
    if (family === 'modernbert') assert.ok(masked > 0, 'keys outside the window are shown masked');
    await shot(page, `neuron-terms-${family}`);
    if (family === 'deberta-v2') {
      for (const [w, h] of [[1280, 720], [390, 844]]) {
        await page.setViewportSize({ width: w, height: h });
        await page.waitForTimeout(300);
        await ready(page);
        const fit = await page.evaluate(() => {
          const stage = document.querySelector('.nv-stage').getBoundingClientRect();
          const out = [...document.querySelectorAll('.nv-svg text')].filter((t) => t.textContent && t.getBoundingClientRect().right > stage.right + 1).map((t) => t.textContent);
          return { out, sideways: document.documentElement.scrollWidth - window.innerWidth };
        });
        assert.deepEqual(fit.out, [], `${w} px: texts past the stage`);
        assert.ok(fit.sideways <= 0, `${w} px: the page scrolls ${fit.sideways} px sideways`);
        await shot(page, `neuron-terms-deberta-${w}`);
        // the numbers band's first rows, at full size
        const box = await page.evaluate(() => {
          const r = document.querySelector('.nv-stage').getBoundingClientRect();
          const t = [...document.querySelectorAll('.col-title')].find((e) => e.textContent === 'softmax').getBoundingClientRect();
          return { x: r.left + window.scrollX, y: t.top + window.scrollY - 10, width: Math.min(r.width, window.innerWidth), height: 260 };
        });
        await page.screenshot({ path: path.join(ROOT, 'build/screenshots', `neuron-terms-deberta-${w}-numbers.png`), clip: box, fullPage: true });
      }
    }
    fs.rmSync(root, { recursive: true, force: true });
  }, { timeout: 400000 });
}

scenario('neuron terms: BERT (the default model) — softmax column = heatmap row, q·k/√d = attend --scores', async ({ page, base, shot }) => {
  await page.goto(`${base}?view=heatmap`);
  await ready(page);
  await typeText(page, '#text-a', TEXT);
  await typeText(page, '#text-b', TEXT_B);
  for (const [layer, head, query] of [[0, 3, 2], [4, 7, 9]]) {
    const r = await checkHead(page, { bundle: DEFAULT_GZ, layer, head, query, texts: [TEXT, TEXT_B], what: `BERT ${layer}:${head} query ${query}` });
    console.log(`#   BERT layer ${layer} head ${head} query ${query}: softmax vs heatmap ${r.worstSoft.toExponential(2)}, q·k/√d vs CLI ${r.worst.toExponential(2)}`);
    assert.match(r.notes, /Each key's score is q·k\/√d: /);
  }
  await shot(page, 'neuron-terms-bert');
  // a switched-off head: its softmax column is its attention row, all 0;
  // its scores are still those it computes, and the note says so
  await page.goto(`${base}?${new URLSearchParams({ text: TEXT, text_b: TEXT_B, view: 'neuron', layer: 4, head: 7, query: 9, ablate: '4:7' })}`);
  await ready(page);
  const rows = await page.$$eval('.nv-row', (rs) => rs.map((r) => ({ w: Number(r.dataset.softmax), score: Number(r.dataset.score) })));
  assert.ok(rows.length > 10 && rows.every((r) => r.w === 0), 'the switched-off head\'s row is 0');
  const cli = JSON.parse(run(BIN, ['attend', '--scores', '--layer', '4', '--ablate', '4:7', DEFAULT_GZ, TEXT, TEXT_B]).stdout);
  rows.forEach((r, j) => assert.ok(Math.abs(r.score - cli.scores[0][7][9][j]) <= TOL * Math.max(1, Math.abs(cli.scores[0][7][9][j])), `key ${j}: score ${r.score}`));
  assert.match(await page.textContent('#view p.view-notes'), /This head is switched off: the model multiplies its probabilities by 0 after the softmax/);
  await shot(page, 'neuron-terms-bert-switched-off');
});
