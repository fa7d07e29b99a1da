// convert.scenarios.mjs — bring your own BERT (issue 13): a Hugging Face
// checkpoint folder given to the page (directory picker, or its files
// dropped) is converted in the page's worker (src/convert/convert.c in wasm), loaded,
// kept in Cache Storage and saved as .blb.gz. The saved bundle must hold the
// bytes `bertlens convert` writes for the same folder (itself checked against
// tools/convert.py by tests/convert.test.mjs), and the attention shown must be
// the one `bertlens attend` computes from that bundle.

import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { scenario, ready, settled, typeText, ROOT } from './harness.mjs';
import { BIN, run, download, sameAttention as sameAttentionAs } from './page_vs_cli.mjs';

const TEXT = 'The quick brown fox jumps over the lazy dog.';
// wasm vs the native CLI on q8 bundles: the SIMD q8 kernels take int16
// activations (tests/kernels.test.mjs TOL_MATMUL_Q8), the native ones f32.
const TOL = 5e-4;

/** A fresh folder holding checkpoint `family` (or a copy of tiny-bert). */
function checkpoint(family) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'bertlens-ckpt-'));
  if (family === 'tiny-bert') fs.cpSync(path.join(ROOT, 'tests/fixtures/tiny-bert'), path.join(root, 'tiny-bert'), { recursive: true });
  else run('python3', ['tools/make_random_bert.py', root, '--family', family]);
  return { root, dir: path.join(root, family) };
}

/** The page's layer/head heatmap vs `bertlens attend` on bundle (page_vs_cli.mjs). */
const sameAttention = (page, bundle, layer, head) => sameAttentionAs(page, { bundle, texts: [TEXT], layer, head, tol: TOL });

scenario('convert: a checkpoint folder from the directory picker is converted, shown, kept and saved', async ({ page, base, shot }) => {
  const { root, dir } = checkpoint('tiny-bert');
  const native = path.join(root, 'native.blb');
  run(BIN, ['convert', dir, native]);
  // its name: no _name_or_path in its config.json, so the folder and its weights' hash (lib/model_names.js)
  const name = `tiny-bert-${crypto.createHash('sha256').update(fs.readFileSync(path.join(dir, 'model.safetensors'))).digest('hex').slice(0, 8)}`;
  await page.goto(`${base}?view=heatmap`);
  await ready(page);
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await page.setInputFiles('#checkpoint-input', dir, { timeout: 120000 }); // slow when the machine is busy
  await ready(page);
  assert.match(await page.textContent('#notices'), new RegExp(`Converted ${name} in this page \\(37 tensors, q8\\)`));
  assert.match(await page.textContent('#model-info'), /2 layers × 4 heads/);
  assert.equal(await page.$eval('#model-select', (s) => s.selectedOptions[0].textContent), `converted: ${name} (q8)`);
  await typeText(page, '#text-a', TEXT);
  await shot(page, 'convert-tiny-bert');
  const worst = Math.max(await sameAttention(page, native, 1, 2), await sameAttention(page, native, 0, 0));
  console.log(`#   converted in the page: attention vs bertlens attend max |d| ${worst.toExponential(2)}`);
  // Saved: gzip of the very bytes `bertlens convert` writes.
  const saved = await download(page, '#save-converted');
  assert.equal(saved.name, `${name}.q8.blb.gz`);
  assert.ok(Buffer.compare(zlib.gunzipSync(saved.bytes), fs.readFileSync(native)) === 0, 'saved bundle = bertlens convert output');
  // Kept: after a reload the model list offers it, and it loads without the folder.
  await page.reload();
  await ready(page);
  const kept = await page.$$eval('#model-select option', (o) => o.map((x) => [x.value, x.textContent]));
  const option = kept.find(([, label]) => label === `converted: ${name} (q8)`);
  assert.ok(option && option[0].startsWith('__converted__'), `kept: ${JSON.stringify(kept)}`);
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await page.selectOption('#model-select', option[0]);
  await ready(page);
  assert.match(await page.textContent('#model-info'), new RegExp(`^${name} \\(converted\\) · 2 layers × 4 heads`));
  assert.equal(await page.$eval('#model-select', (s) => s.selectedOptions[0].textContent), `converted: ${name} (q8)`);
  await typeText(page, '#text-a', TEXT);
  await sameAttention(page, native, 1, 3);
  fs.rmSync(root, { recursive: true, force: true });
});

scenario('convert: dropped checkpoint files (sentence-transformers, sharded) convert; a .bin-only folder gets a clear message', async ({ page, base, shot }) => {
  await page.goto(`${base}?view=heatmap`);
  await ready(page);
  /** Drop these files on the page as a user would (a DataTransfer of Files). */
  const drop = async (files) => {
    await page.evaluate(() => { document.body.dataset.state = 'loading'; });
    const dt = await page.evaluateHandle((list) => {
      const t = new DataTransfer();
      for (const f of list) t.items.add(new File([Uint8Array.from(atob(f.b64), (ch) => ch.charCodeAt(0))], f.name));
      return t;
    }, files.map((f) => ({ name: path.basename(f), b64: fs.readFileSync(f).toString('base64') })));
    await page.dispatchEvent('body', 'drop', { dataTransfer: dt });
  };
  const { root, dir } = checkpoint('bge-e5-gte'); // three shards + index, gelu_new
  const native = path.join(root, 'native.blb');
  run(BIN, ['convert', dir, native, '--name', 'checkpoint']); // loose files carry no folder name
  await drop(fs.readdirSync(dir).map((f) => path.join(dir, f)));
  await ready(page);
  assert.match(await page.textContent('#model-info'), /2 layers × 2 heads/);
  await typeText(page, '#text-a', TEXT);
  await sameAttention(page, native, 1, 1);
  const saved = await download(page, '#save-converted');
  assert.ok(Buffer.compare(zlib.gunzipSync(saved.bytes), fs.readFileSync(native)) === 0, 'saved bundle = bertlens convert output');
  // pytorch_model.bin only: a message on how to get safetensors; the converted model stays usable.
  const bin = path.join(root, 'bin-only');
  fs.mkdirSync(bin);
  fs.copyFileSync(path.join(dir, 'config.json'), path.join(bin, 'config.json'));
  fs.copyFileSync(path.join(dir, 'vocab.txt'), path.join(bin, 'vocab.txt'));
  fs.writeFileSync(path.join(bin, 'pytorch_model.bin'), Buffer.alloc(1000));
  await drop(fs.readdirSync(bin).map((f) => path.join(bin, f)));
  assert.equal(await settled(page), 'error');
  assert.match(await page.textContent('.notice.error'), /Could not convert checkpoint: pytorch_model\.bin is the only weights file: bertlens reads safetensors.*safe_serialization=True/);
  await shot(page, 'convert-bin-only');
  await typeText(page, '#text-a', TEXT);
  await sameAttention(page, native, 0, 1);
  fs.rmSync(root, { recursive: true, force: true });
});
