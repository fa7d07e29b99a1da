// decision.scenarios.mjs — the Decision view (web/js/views/decision.js) in
// fresh profiles, on the task-head checkpoints of tests/fixtures/heads
// (assembled as tests/heads.test.mjs does: the head's files, the family's
// encoder shard and trained tokenizer) converted in the page to f32:
//   - a sequence classifier shows Hugging Face's label and probabilities
//     (tests/fixtures/heads/refs.json, within 1e-5) and torch.autograd's
//     attributions, grad-input and IG (tests/fixtures/explain/refs-heads.json,
//     within 1e-3 max|score| + 1e-5); the JSON export holds the same numbers;
//   - the head-effects grid shows a progress bar, can be cancelled, then
//     fills with `bertlens explain --heads`'s numbers (the page's bundle
//     bytes, native CLI); a cell opens that head in the heatmap; reachable
//     with the keyboard (Tab, Enter);
//   - a token classifier draws a label per token as coloured spans; a click
//     on a token explains its label (torch's numbers);
//   - a QA model highlights Hugging Face's answer span in the context;
//   - the embed code and the standalone file redraw the view with the model
//     files unreachable;
//   - the default model (no head) says which heads the view shows, at 1280
//     and 390 px wide;
//   - every family's sequence classifier converts and shows HF's probabilities
//     and attributions (NomicBERT, GTE, EuroBERT: grad-input, IG and the head
//     grid as `bertlens explain` on the page's bytes).
//
//   make site build/bertlens && node tests/browser/run.mjs "decision"
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { scenario, ready, typeText, openAsStranger, ROOT } from './harness.mjs';
import { download } from './page_vs_cli.mjs';
import { convertInPage } from './family_page.mjs';
import { tokenLabel } from '../../web/js/lib/tokens.js';

const BIN = path.join(ROOT, 'build/bertlens');
const HEADS = path.join(ROOT, 'tests/fixtures/heads');
const REFS = JSON.parse(fs.readFileSync(path.join(HEADS, 'refs.json'), 'utf8'));
const XREFS = JSON.parse(fs.readFileSync(path.join(ROOT, 'tests/fixtures/explain/refs-heads.json'), 'utf8'));

/** A fresh checkpoint folder named `<family>-<name>` (tests/heads.test.mjs's assembly). */
function checkpointOf(family, name) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'bertlens-dec-'));
  const dir = path.join(root, `${family}-${name}`);
  fs.cpSync(path.join(HEADS, family, name), dir, { recursive: true });
  fs.copyFileSync(path.join(HEADS, family, 'encoder.safetensors'), path.join(dir, 'encoder.safetensors'));
  const tok = path.join(ROOT, REFS.tokenizer[family]);
  for (const f of fs.readdirSync(tok)) if (f !== 'config.json' && f !== 'model.safetensors') fs.copyFileSync(path.join(tok, f), path.join(dir, f));
  return { root, dir };
}

const refOf = (family, name, texts) => {
  const ck = REFS.checkpoints.find((k) => k.family === family && k.name === name);
  return { ck, c: ck.cases.find((k) => JSON.stringify(k.texts) === JSON.stringify(texts)) };
};
const xrefOf = (family, name) => XREFS.cases.find((k) => k.family === family && k.name === name);

/** Convert family/name in the page (f32), open the Decision view on texts. */
async function decisionOn(page, base, family, name, texts) {
  const { root, dir } = checkpointOf(family, name);
  let bytes;
  try {
    bytes = await convertInPage(page, base, dir, 'f32');
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await page.click('#view-tabs button[data-view="decision"]');
  await ready(page);
  if (texts[1] !== undefined) await typeText(page, '#text-b', texts[1]);
  await typeText(page, '#text-a', texts[0]);
  return bytes;
}

const probsOf = (page) => page.$$eval('.dv-prob', (li) => li.map((e) => [e.dataset.label, Number(e.dataset.prob)]));
const scoresOf = (page) => page.$$eval('.dv-tok', (t) => t.map((e) => Number(e.dataset.score)));

function within(got, want, what) {
  assert.equal(got.length, want.length, `${what}: one score per token`);
  const tol = 1e-3 * Math.max(...want.map(Math.abs)) + 1e-5;
  const worst = Math.max(...got.map((v, i) => Math.abs(v - want[i])));
  assert.ok(worst <= tol, `${what}: max |page - torch| ${worst} > ${tol}`);
  return worst;
}

/** Select a value and wait for the redraw. */
async function choose(page, sel, value) {
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await page.selectOption(sel, value);
  await ready(page);
}

scenario('decision: a sequence classifier converted in the page shows HF\'s probabilities and torch\'s attributions; export; head grid with progress, Cancel, keyboard', async ({ page, base, shot }) => {
  const x = xrefOf('bert', 'seq');
  const { ck, c } = refOf('bert', 'seq', x.texts);
  const bytes = await decisionOn(page, base, 'bert', 'seq', x.texts);
  const probs = await probsOf(page);
  assert.deepEqual(probs.map((p) => p[0]), ck.labels);
  const dp = Math.max(...probs.map((p, i) => Math.abs(p[1] - c.probs[0][i])));
  assert.ok(dp <= 1e-5, `max |page - HF| probability ${dp}`);
  assert.match(await page.textContent('.dv-pred'), new RegExp(`Predicted label: ${x.label}`));
  const gi = within(await scoresOf(page), x.grad_input, 'grad-input');
  // the text alternative holds the numbers too
  assert.equal(await page.$$eval('details.view-alt tbody tr', (r) => r.length), x.ids.length);
  await shot(page, 'decision-seq-1280');
  // integrated gradients with the refs' steps
  await choose(page, '#dv-method', 'ig');
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await page.fill('#dv-steps', String(XREFS.steps));
  await page.dispatchEvent('#dv-steps', 'change');
  await ready(page);
  assert.match(page.url(), /method=ig/);
  assert.match(page.url(), new RegExp(`steps=${XREFS.steps}`));
  const ig = within(await scoresOf(page), x.ig, 'IG');
  // the JSON export: the probabilities and the IG scores shown
  const j = JSON.parse((await download(page, '#export-json')).bytes.toString('utf8'));
  const pb = j.blocks.find((b) => /label probabilities/.test(b.name));
  assert.ok(Math.max(...pb.values.map((r, i) => Math.abs(r[0] - c.probs[0][i]))) <= 1e-5, 'exported probabilities');
  const ab = j.blocks.find((b) => /^attribution/.test(b.name));
  within(ab.values.map((r) => r[0]), x.ig, 'exported IG');
  assert.equal(ab.method, 'ig');
  // another target label: the picker, in the URL
  await choose(page, '#dv-target', '2');
  assert.match(page.url(), /target=2/);
  assert.match(await page.textContent('.dv-attr h3'), new RegExp(ck.labels[2]));
  await choose(page, '#dv-target', '-1');
  await choose(page, '#dv-method', 'grad-input');

  // head effects: a progress bar and Cancel (pressed before the first layer is back)
  const seen = await page.evaluate(() => {
    document.querySelector('.dv-start').click();
    const had = !!document.querySelector('progress.dv-progress');
    document.querySelector('.dv-cancel').click();
    return had;
  });
  assert.ok(seen, 'a progress bar while it runs');
  await page.waitForFunction(() => /cancelled after 1 of/.test(document.querySelector('.dv-heads')?.textContent || ''));
  assert.equal(await page.$$eval('.dv-cell', (c) => c.filter((e) => e.dataset.effect !== undefined && e.dataset.effect !== '').length), 2, 'one layer of two heads computed');
  await shot(page, 'decision-grid-cancelled');
  const part = JSON.parse((await download(page, '#export-json')).bytes.toString('utf8')).blocks.find((b) => /^head effects/.test(b.name));
  assert.ok(part && part.values.length === 1 && part.layers_computed === 1 && part.layers === 2, 'the export carries the cancelled grid\'s first layer and says so');
  // the keyboard reaches the button; Enter computes the whole grid
  let focused = '';
  for (let i = 0; i < 120 && focused !== 'dv-start'; i++) {
    await page.keyboard.press('Tab');
    focused = await page.evaluate(() => document.activeElement?.className || '');
  }
  assert.equal(focused, 'dv-start', 'Tab reaches "Compute head effects"');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.querySelectorAll('.dv-cell[data-effect]').length === 4 && !document.querySelector('progress.dv-progress'));
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'bertlens-dec-')), 'seq.blb');
  fs.writeFileSync(file, bytes);
  const cli = JSON.parse(spawnSync(BIN, ['explain', '--heads', file, ...x.texts], { encoding: 'utf8' }).stdout);
  const cells = await page.$$eval('.dv-cell', (c) => c.map((e) => [Number(e.dataset.layer), Number(e.dataset.head), Number(e.dataset.effect)]));
  const dh = Math.max(...cells.map(([l, h, v]) => Math.abs(v - cli.heads[l][h])));
  assert.ok(dh <= 1e-5, `head effects: max |page - bertlens explain --heads| ${dh}`);
  const jh = JSON.parse((await download(page, '#export-json')).bytes.toString('utf8')).blocks.find((b) => /^head effects/.test(b.name));
  assert.ok(jh && jh.values.length === 2, 'the export carries the grid');
  await shot(page, 'decision-grid');
  // in "Switch heads off" mode a cell switches that head off (Compare's ablation) and the view runs again
  await page.click('.abl-toggle');
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await page.click('.dv-cell[data-layer="0"][data-head="1"]');
  await ready(page);
  assert.match(decodeURIComponent(page.url()), /ablate=0:1/);
  const offProbs = await probsOf(page);
  const cliOff = JSON.parse(spawnSync(BIN, ['explain', '--ablate', '0:1', file, ...x.texts], { encoding: 'utf8' }).stdout);
  assert.ok(Math.abs(offProbs[cliOff.target][1] - cliOff.prob) <= 1e-5, `the output with the head off is the CLI's (${offProbs[cliOff.target][1]} vs ${cliOff.prob})`);
  within(await scoresOf(page), cliOff.scores, 'grad-input with the head off');
  await page.click('.dv-start');
  await page.waitForFunction(() => document.querySelectorAll('.dv-cell[data-effect]').length === 4 && !document.querySelector('progress.dv-progress'));
  const offCell = await page.$eval('.dv-cell[data-layer="0"][data-head="1"]', (e) => [e.getAttribute('aria-label'), Number(e.dataset.effect)]);
  assert.match(offCell[0], /switched off/);
  assert.equal(offCell[1], 0, 'a head already off changes nothing');
  await page.click('.abl-toggle');
  // a click picks a head; its two actions: switch it off in Compare (with the head already off), open it in the heatmap
  await page.click('.dv-cell[data-layer="1"][data-head="0"]');
  assert.match(await page.textContent('.dv-picked'), /Layer 1, head 0/);
  assert.equal(await page.evaluate(() => document.activeElement?.className), 'dv-open', 'the keyboard lands on the first action');
  assert.match(page.url(), /view=decision/, 'a pick alone stays in the view');
  await shot(page, 'decision-grid-picked');
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await page.click('.dv-compare-off');
  await ready(page);
  const u = decodeURIComponent(page.url());
  assert.match(u, /view=compare/);
  assert.match(u, /ablate=0:1,1:0/);
  await page.goBack();
  await ready(page);
  await page.click('.dv-start'); // back in the Decision view: its run is new, the grid computed again
  await page.waitForFunction(() => document.querySelectorAll('.dv-cell[data-effect]').length === 4 && !document.querySelector('progress.dv-progress'));
  await page.click('.dv-cell[data-layer="1"][data-head="0"]');
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await page.click('.dv-open');
  await ready(page);
  assert.match(page.url(), /view=heatmap/);
  assert.match(page.url(), /layer=1/);
  console.log(`#   probabilities |Δ| ${dp.toExponential(2)}; grad-input |Δ| ${gi.toExponential(2)}, IG |Δ| ${ig.toExponential(2)}; head effects vs CLI ${dh.toExponential(2)}`);
  fs.rmSync(path.dirname(file), { recursive: true, force: true });
});

scenario('decision: a token classifier draws coloured label spans; a click explains that token (torch); a QA model highlights HF\'s answer', async ({ page, base, shot }) => {
  const x = xrefOf('bert', 'token');
  const { ck, c } = refOf('bert', 'token', x.texts);
  await decisionOn(page, base, 'bert', 'token', x.texts);
  const spans = await page.$$eval('.dv-span', (s) => s.map((e) => [e.dataset.label, getComputedStyle(e).backgroundColor]));
  assert.equal(spans.length, c.ids.length);
  const argmax = (p) => p.reduce((k, v, i) => (v > p[k] ? i : k), 0);
  assert.deepEqual(spans.map((s) => s[0]), c.probs.map((p) => ck.labels[argmax(p)]), 'each token\'s label is HF\'s');
  const coloured = spans.filter((s) => s[0] !== 'O');
  assert.ok(coloured.length && coloured.every((s) => s[1] !== 'rgba(0, 0, 0, 0)'), 'labelled tokens are coloured');
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await page.click(`.dv-span[data-index="${x.position}"]`);
  await ready(page);
  assert.match(page.url(), new RegExp(`at=${x.position}`));
  within(await scoresOf(page), x.grad_input, `grad-input at token ${x.position}`);
  await shot(page, 'decision-token');

  const q = xrefOf('bert', 'qa');
  const r = refOf('bert', 'qa', q.texts);
  await decisionOn(page, base, 'bert', 'qa', q.texts);
  const mark = await page.$eval('mark.dv-answer', (m) => ({ text: m.textContent, start: Number(m.dataset.start), end: Number(m.dataset.end) }));
  assert.deepEqual([mark.start, mark.end], [r.c.span.start, r.c.span.end], 'HF\'s best span');
  assert.equal(mark.text.trim(), r.c.span.text.trim());
  within(await scoresOf(page), q.grad_input, 'QA grad-input');
  await shot(page, 'decision-qa');
});

scenario('decision snapshot: the embed code and the standalone file redraw it with the model files unreachable', async ({ page, base, shot }) => {
  const x = xrefOf('bert', 'seq');
  await decisionOn(page, base, 'bert', 'seq', x.texts);
  await page.click('.dv-start');
  await page.waitForFunction(() => document.querySelectorAll('.dv-cell[data-effect]').length === 4 && !document.querySelector('progress.dv-progress'));
  const live = { probs: await probsOf(page), scores: await scoresOf(page) };
  await openAsStranger(page, async (p, what) => {
    await p.waitForSelector('.dv-prob');
    const got = { probs: await probsOf(p), scores: await scoresOf(p) };
    assert.deepEqual(got.probs.map((q) => q[0]), live.probs.map((q) => q[0]), `${what}: labels`);
    got.probs.forEach((q, i) => assert.ok(Math.abs(q[1] - live.probs[i][1]) < 1e-6, `${what}: probability ${i}`));
    got.scores.forEach((v, i) => assert.ok(Math.abs(v - live.scores[i]) < 1e-6, `${what}: score ${i}`));
    assert.equal(await p.$$eval('.dv-cell[data-effect]', (c) => c.length), 4, `${what}: the head grid`);
    assert.match(await p.textContent('.dv-snapshot'), /snapshot/);
    assert.ok(await p.$eval('#dv-method', (sel) => sel.disabled), `${what}: the method switch is off`);
    await shot(p, `decision-snapshot-${what.split(' ')[0]}`);
  });
});

for (const [w, h] of [[1280, 720], [390, 844]]) {
  scenario(`decision: the default model (no head) says which heads the view shows, ${w} px`, async ({ page, base, shot }) => {
    await page.goto(`${base}?view=decision`);
    await ready(page);
    const t = await page.textContent('.dv-nohead');
    assert.match(t, /no task head and no masked-language-model head/);
    assert.match(t, /ForSequenceClassification.*Convert a model folder/s);
    const over = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(over <= 0, `no sideways scroll (${over} px)`);
    await shot(page, `decision-nohead-${w}`);
  }, { viewport: { width: w, height: h } });
}

// The families of rotary post-norm layers with gated blocks (NomicBERT, GTE)
// and of pre-norm RMSNorm layers (EuroBERT), which the reverse-mode pass
// used to refuse (src/model/backward.c): their attributions, grad-input and IG,
// are checked against `bertlens explain` on the page's own bundle bytes
// (and torch's where refs-heads.json has the same text), and so is their
// head grid (GTE's grad-input is LayerNorm noise: no positions or token
// types, so the embedding norm's input is e_t; IG carries its check).
const ROTARY_RMS = new Set(['nomic-bert', 'gte', 'eurobert']);

/** The page's bundle bytes through `bertlens explain ARGS`. */
function cliExplain(bytes, args, texts) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bertlens-dec-'));
  const file = path.join(dir, 'm.blb');
  fs.writeFileSync(file, bytes);
  try {
    const r = spawnSync(BIN, ['explain', ...args, file, ...texts], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    return JSON.parse(r.stdout);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

scenario('decision: every family\'s sequence classifier, converted in the page, shows HF\'s probabilities and attributions (torch\'s where refs exist, else the CLI\'s)', async ({ page, base, shot }) => {
  const done = [];
  for (const ck of REFS.checkpoints.filter((k) => k.name === 'seq')) {
    const c = ck.cases[0];
    const bytes = await decisionOn(page, base, ck.family, 'seq', c.texts);
    const probs = await probsOf(page);
    assert.deepEqual(probs.map((p) => p[0]), ck.labels, ck.family);
    const dp = Math.max(...probs.map((p, i) => Math.abs(p[1] - c.probs[0][i])));
    assert.ok(dp <= 1e-5, `${ck.family}: max |page - HF| probability ${dp}`);
    const x = xrefOf(ck.family, 'seq');
    const torch = x && JSON.stringify(x.texts) === JSON.stringify(c.texts);
    let more = '';
    if (ROTARY_RMS.has(ck.family)) {
      assert.equal(await page.$('.dv-attr-none'), null, `${ck.family}: attributions, no refusal`);
      const gi = within(await scoresOf(page), cliExplain(bytes, [], c.texts).scores, `${ck.family} grad-input vs CLI`);
      if (torch) within(await scoresOf(page), x.grad_input, `${ck.family} grad-input vs torch`);
      await choose(page, '#dv-method', 'ig');
      await page.evaluate(() => { document.body.dataset.state = 'loading'; });
      await page.fill('#dv-steps', String(XREFS.steps));
      await page.dispatchEvent('#dv-steps', 'change');
      await ready(page);
      const ig = within(await scoresOf(page), cliExplain(bytes, ['--method', 'ig', '--steps', String(XREFS.steps)], c.texts).scores, `${ck.family} IG vs CLI`);
      if (torch) within(await scoresOf(page), x.ig, `${ck.family} IG vs torch`);
      if (ck.family === 'eurobert') await shot(page, 'decision-family-eurobert-ig');
      await choose(page, '#dv-method', 'grad-input');
      await page.click('.dv-start');
      const L = x.heads.length, NH = x.heads[0].length;
      await page.waitForFunction((n) => document.querySelectorAll('.dv-cell[data-effect]').length === n && !document.querySelector('progress.dv-progress'), L * NH);
      const cli = cliExplain(bytes, ['--heads'], c.texts);
      const cells = await page.$$eval('.dv-cell', (e) => e.map((d) => [Number(d.dataset.layer), Number(d.dataset.head), Number(d.dataset.effect)]));
      const dh = Math.max(...cells.map(([l, h, v]) => Math.abs(v - cli.heads[l][h])));
      assert.ok(dh <= 1e-5, `${ck.family} head effects: max |page - CLI| ${dh}`);
      if (ck.family === 'nomic-bert') await shot(page, 'decision-family-nomic-bert');
      more = ` (vs CLI: grad-input ${gi.toExponential(1)}, IG ${ig.toExponential(1)}, heads ${dh.toExponential(1)})`;
    } else if (torch) within(await scoresOf(page), x.grad_input, `${ck.family} grad-input`);
    else assert.equal((await scoresOf(page)).length, c.ids.length, `${ck.family}: a score per token`);
    if (ck.family === 'deberta-v3') await shot(page, 'decision-family-deberta');
    done.push(`${ck.family} ${dp.toExponential(1)}${more}`);
  }
  console.log(`#   ${done.join(', ')}`);
});

scenario('decision at 390 px: a classifier\'s view fits the phone width', async ({ page, base, shot }) => {
  const x = xrefOf('roberta', 'seq');
  await decisionOn(page, base, 'roberta', 'seq', x.texts);
  within(await scoresOf(page), x.grad_input, 'roberta grad-input');
  const over = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(over <= 0, `no sideways scroll (${over} px)`);
  await shot(page, 'decision-seq-390');
  // the dark theme: the same numbers, the grid drawn
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await page.click('#theme-toggle');
  await ready(page);
  within(await scoresOf(page), x.grad_input, 'roberta grad-input, dark');
  await page.click('.dv-start');
  await page.waitForFunction(() => document.querySelectorAll('.dv-cell[data-effect]').length === 4 && !document.querySelector('progress.dv-progress'));
  await shot(page, 'decision-seq-390-dark');
  // SVG and PNG exports draw the stage: the labels and the grid are in them
  const svg = (await download(page, '#export-svg')).bytes.toString('utf8');
  assert.match(svg, /^<\?xml|^<svg/);
  for (const label of REFS.checkpoints.find((k) => k.family === 'roberta' && k.name === 'seq').labels) assert.ok(svg.includes(label), `the SVG names ${label}`);
  const png = (await download(page, '#export-png')).bytes;
  assert.deepEqual([...png.subarray(1, 4)], [0x50, 0x4e, 0x47], 'a PNG');
  fs.writeFileSync(path.join(ROOT, 'build/screenshots/decision-export.png'), png);
}, { viewport: { width: 390, height: 844 } });

scenario('decision: a masked-LM\'s guesses at the blank and its logit lens (HF\'s top words at every layer), attributions as torch', async ({ page, base, shot }) => {
  const MREFS = JSON.parse(fs.readFileSync(path.join(ROOT, 'tests/fixtures/explain/refs.json'), 'utf8'));
  const lensRef = REFS.lens.find((l) => l.family === 'bert');
  const x = MREFS.families.find((f) => f.family === 'bert').cases.find((c) => JSON.stringify(c.texts) === JSON.stringify(lensRef.texts));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bertlens-dec-'));
  const file = path.join(dir, 'tiny-mlm.blb');
  const conv = spawnSync(BIN, ['convert', path.join(ROOT, 'tests/fixtures/mlm/bert'), file, '--dtype', 'f32', '--name', 'tiny-mlm'], { encoding: 'utf8' });
  assert.equal(conv.status, 0, conv.stderr);
  await page.goto(`${base}?view=decision`);
  await ready(page);
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await page.setInputFiles('#file-input', file);
  await ready(page);
  await typeText(page, '#text-b', x.texts[1]);
  await typeText(page, '#text-a', x.texts[0]);
  // the CLI's lens names HF's top ids at every layer; the page shows the CLI's words
  const cli = JSON.parse(spawnSync(BIN, ['predict', '--layers', '--top', '5', file, ...x.texts], { encoding: 'utf8' }).stdout);
  const rows = await page.$$eval('table.dv-lens tbody tr', (tr) => tr.map((r) => [Number(r.dataset.layer), [...r.querySelectorAll('td')].map((td) => td.textContent)]));
  assert.equal(rows.length, lensRef.layers.length, 'a row per layer');
  for (const [layer, cells] of rows) {
    const want = lensRef.layers.find((l) => l.layer === layer).positions.find((p) => p.index === x.position);
    const mine = cli.layers.find((l) => l.layer === layer).positions.find((p) => p.index === x.position).top;
    assert.deepEqual(mine.map((e) => e.id), want.top_ids, `layer ${layer}: the CLI's top ids are HF's`);
    cells.forEach((c, r) => assert.ok(c.startsWith(`${tokenLabel(mine[r].token, 'wordpiece')} `), `layer ${layer} #${r + 1}: ${c} vs ${mine[r].token}`));
  }
  within(await scoresOf(page), x.grad_input, 'masked-LM grad-input');
  assert.equal(await page.$$eval('.dv-blank', (b) => b.length), 1);
  await shot(page, 'decision-mlm');
  // another of the top words as the target: the picker, in the URL; the CLI's numbers for that word
  const second = await page.$eval('#dv-target', (sel) => sel.options[2].value);
  await choose(page, '#dv-target', second);
  assert.match(page.url(), new RegExp(`target=${second}`));
  const cliT = JSON.parse(spawnSync(BIN, ['explain', '--target', second, file, ...x.texts], { encoding: 'utf8' }).stdout);
  assert.equal(cliT.target, Number(second));
  within(await scoresOf(page), cliT.scores, `grad-input for word id ${second}`);
  fs.rmSync(dir, { recursive: true, force: true });
});
