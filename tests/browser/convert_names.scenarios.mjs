// convert_names.scenarios.mjs — what a checkpoint converted in the page is
// called and which one is saved (issue 32 item 4), and the converter's
// dtype choice:
//   - two folders both called "ckpt", of different _name_or_path: each is
//     named, listed, kept and saved by its _name_or_path (never the folder
//     alone; a folder without one adds its weights' sha256), neither
//     replaces the other, after a reload too; "Save converted model" saves
//     the model shown, not the last converted; JSON exports carry the name;
//   - the page converts to q8, q10, f16 or f32 as `bertlens convert --dtype`
//     does (the same bytes); where q8 or q10 cannot hold the model (hidden
//     48: rows not whole blocks of 32) it converts to f16 and says so;
//   - a folder whose tokenizer.json and tokenizer_config.json disagree
//     (tests/fixtures/tok_settings) is refused with the setting named.
//
//   make site build/bertlens && node tests/browser/run.mjs "convert-names"
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { scenario, ready, settled, typeText, ROOT } from './harness.mjs';
import { BIN, run, download } from './page_vs_cli.mjs';
import { bertCheckpoint } from '../lib/tiny_checkpoint.mjs';
import { TOK_CASES, tokCaseFolder } from '../lib/tok_settings.mjs';

const VOCAB = fs.readFileSync(path.join(ROOT, 'tests/fixtures/tiny-bert/vocab.txt'), 'utf8');

/** A folder root/<sub>/ckpt holding a tiny BERT (opts: bertCheckpoint's). */
function ckpt(root, sub, opts) {
  return bertCheckpoint(path.join(root, sub, 'ckpt'), VOCAB, opts);
}

/** The directory picker given dir (its files, under the folder's name), converted in dtype. */
async function convert(page, dir, dtype = 'q8') {
  if (dtype !== 'q8' || await page.$('#convert-dtype')) await page.selectOption('#convert-dtype', dtype); // (q8: the default)
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await page.setInputFiles('#checkpoint-input', dir, { timeout: 120000 });
  return settled(page);
}

const options = (page) => page.$$eval('#model-select option', (o) => o.map((x) => x.textContent));
const chosen = (page) => page.$eval('#model-select', (s) => s.selectedOptions[0].textContent);
const cli = (dir, out, ...args) => { run(BIN, ['convert', dir, out, ...args]); return fs.readFileSync(out); };
const sameBytes = (saved, want, what) => assert.ok(Buffer.compare(zlib.gunzipSync(saved.bytes), want) === 0, `${what}: saved bundle = bertlens convert's`);

scenario('convert-names: two "ckpt" folders are named, kept and saved by their _name_or_path; Save saves the model shown', async ({ page, base, shot }) => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'bertlens-names-'));
  const a = ckpt(root, 'a', { config: { _name_or_path: 'org/model-a' }, seed: 1 });
  const b = ckpt(root, 'b', { config: { _name_or_path: 'org/model-b' }, seed: 2 });
  const c = ckpt(root, 'c', { seed: 3 }); // no _name_or_path
  const shaC = crypto.createHash('sha256').update(fs.readFileSync(path.join(c, 'model.safetensors'))).digest('hex');
  await page.goto(`${base}?view=heatmap&text=The+cat+sat.`);
  await ready(page);
  assert.equal(await convert(page, a), 'ready');
  assert.equal(await chosen(page), 'converted: org/model-a (q8)');
  assert.match(await page.textContent('#model-info'), /^org\/model-a \(converted\)/);
  // the JSON export names it
  const j = JSON.parse((await download(page, '#export-json')).bytes.toString('utf8'));
  assert.equal(j.model_name, 'org/model-a');
  assert.equal(await convert(page, b), 'ready');
  assert.equal(await chosen(page), 'converted: org/model-b (q8)');
  assert.ok((await options(page)).includes('converted: org/model-a (q8)'), `the first is still offered: ${await options(page)}`);
  await shot(page, 'convert-names-two');
  // Save: the model shown (B), by its name
  let saved = await download(page, '#save-converted');
  assert.equal(saved.name, 'org_model-b.q8.blb.gz');
  sameBytes(saved, cli(b, path.join(root, 'b.blb'), '--name', 'org/model-b'), 'B');
  // after a reload both are kept; A chosen and shown, Save saves A, not B (the last converted)
  await page.reload();
  await ready(page);
  const opts = await options(page);
  assert.ok(opts.includes('converted: org/model-a (q8)') && opts.includes('converted: org/model-b (q8)'), `kept: ${opts}`);
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  const valueA = await page.$eval('#model-select', (s) => [...s.options].find((o) => o.textContent === 'converted: org/model-a (q8)').value);
  await page.selectOption('#model-select', valueA);
  await ready(page);
  assert.match(await page.textContent('#model-info'), /^org\/model-a \(converted\)/);
  saved = await download(page, '#save-converted');
  assert.equal(saved.name, 'org_model-a.q8.blb.gz', 'the model shown');
  sameBytes(saved, cli(a, path.join(root, 'a.blb'), '--name', 'org/model-a'), 'A');
  // a folder with no _name_or_path: its folder and weights' hash, not "ckpt" alone
  assert.equal(await convert(page, c), 'ready');
  const nameC = `ckpt-${shaC.slice(0, 8)}`;
  assert.equal(await chosen(page), `converted: ${nameC} (q8)`);
  saved = await download(page, '#save-converted');
  assert.equal(saved.name, `${nameC}.q8.blb.gz`);
  sameBytes(saved, cli(c, path.join(root, 'c.blb')), 'C (the CLI names it by its folder)');
  const jc = JSON.parse((await download(page, '#export-json')).bytes.toString('utf8'));
  assert.equal(jc.model_name, nameC);
  // a listed model shown: nothing converted to save
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await page.selectOption('#model-select', 'minilm-l6-q10');
  await ready(page);
  assert.equal(await page.isVisible('#save-converted'), false, 'no Save for a listed model');
  fs.rmSync(root, { recursive: true, force: true });
}, { viewport: { width: 1280, height: 720 }, timeout: 300000 });

scenario('convert-names: the converter\'s dtype choice (q8, q10, f16, f32) as bertlens convert; hidden 48 falls back to f16 with a note', async ({ page, base, shot }) => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'bertlens-dtype-'));
  const d = ckpt(root, 'd', { config: { _name_or_path: 'tiny/d32' } });
  await page.goto(`${base}?view=heatmap&text=The+cat+sat.`);
  await ready(page);
  for (const dt of ['f32', 'f16', 'q10', 'q8']) {
    assert.equal(await convert(page, d, dt), 'ready', dt);
    assert.match(await page.textContent('#model-info'), new RegExp(`weights ${dt}`));
    assert.equal(await chosen(page), `converted: tiny/d32 (${dt})`);
    const saved = await download(page, '#save-converted');
    assert.equal(saved.name, `tiny_d32.${dt}.blb.gz`);
    sameBytes(saved, cli(d, path.join(root, `d-${dt}.blb`), '--name', 'tiny/d32', '--dtype', dt), dt);
    assert.equal(await page.$('.notice.warn'), null, `${dt}: no note`);
  }
  // hidden 48, 3 heads of 16: q8 and q10 cannot hold it
  const w = ckpt(root, 'w', { hidden: 48, heads: 3, intermediate: 96, config: { _name_or_path: 'tiny/h48' } });
  const r = spawnFail(BIN, ['convert', w, path.join(root, 'w-q8.blb')]);
  assert.match(r, /not a multiple of 32: cannot use q8/, 'bertlens convert refuses q8 for it');
  for (const dt of ['q8', 'q10']) {
    assert.equal(await convert(page, w, dt), 'ready', `${dt}: converted anyway`);
    const note = await page.textContent('#notices');
    assert.match(note, new RegExp(`${dt} cannot hold tiny/h48: last dimension 48 is not a multiple of 32: cannot use ${dt}\\. ${dt} stores weights in blocks of 32 numbers.*It was converted to f16 instead`), note);
    assert.match(await page.textContent('#model-info'), /weights f16/);
    assert.equal(await chosen(page), 'converted: tiny/h48 (f16)');
    const saved = await download(page, '#save-converted');
    assert.equal(saved.name, 'tiny_h48.f16.blb.gz');
    sameBytes(saved, cli(w, path.join(root, 'w-f16.blb'), '--name', 'tiny/h48', '--dtype', 'f16'), `${dt} -> f16`);
    if (dt === 'q8') await shot(page, 'convert-names-fallback');
  }
  fs.rmSync(root, { recursive: true, force: true });
}, { viewport: { width: 1280, height: 720 }, timeout: 300000 });

/** stderr of a command that must fail. */
function spawnFail(cmd, args) {
  try {
    run(cmd, args);
  } catch (e) {
    return e.message;
  }
  throw new Error(`${cmd} ${args.join(' ')} succeeded`);
}

scenario('convert-names: the page\'s converter refuses a folder whose tokenizer files disagree, naming the setting; follows them where they agree (max_input_chars_per_word 0: [UNK] [UNK])', async ({ page, base, shot }) => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'bertlens-toks-'));
  const pick = (re) => TOK_CASES.find((c) => re.test(c.name));
  await page.goto(`${base}?view=heatmap&text=${encodeURIComponent('hello world')}`);
  await ready(page);
  // refused: transformers would lowercase (BertTokenizer's default), tokenizer.json does not
  for (const c of [pick(/normalizer cased, do_lower_case absent/), pick(/^roberta add_prefix_space true/), pick(/^albert keep_accents/)]) {
    const dir = tokCaseFolder(c, path.join(root, c.base, 'ckpt'));
    assert.equal(await convert(page, dir, 'f32'), 'error', c.name);
    const text = await page.textContent('.notice.error');
    assert.match(text, /^Could not convert ckpt: /);
    assert.match(text, new RegExp(c.refuse), `${c.name}: ${text}`);
    assert.match(text, /no bundle can tokenize as both/);
    if (c.base === 'bert') await shot(page, 'convert-names-tokenizer-refused');
  }
  // converted as both libraries tokenize: a cased model, and WordPiece's 0 limit
  const cased = pick(/normalizer cased, do_lower_case false/);
  assert.equal(await convert(page, tokCaseFolder(cased, path.join(root, 'cased', 'ckpt')), 'f32'), 'ready');
  const tokens = async (text) => {
    await typeText(page, '#text-a', text);
    return JSON.parse((await download(page, '#export-json')).bytes.toString('utf8')).tokens;
  };
  assert.deepEqual(await tokens(cased.texts[0]), cased.tokens[0], 'cased: as transformers and tokenizers');
  const zero = pick(/max_input_chars_per_word 0/);
  assert.equal(await convert(page, tokCaseFolder(zero, path.join(root, 'zero', 'ckpt')), 'f32'), 'ready');
  assert.deepEqual(await tokens('hello world'), ['[CLS]', '[UNK]', '[UNK]', '[SEP]'], 'every word longer than 0 characters is [UNK]');
  fs.rmSync(root, { recursive: true, force: true });
}, { viewport: { width: 1280, height: 720 }, timeout: 300000 });
