// hub.scenarios.mjs — models by their Hugging Face Hub id (issue 22 item 4),
// against a local fake Hub (fake_hub.mjs: the documented resolve layout, a
// 302 of the weights to a third origin, Range, x-repo-commit, CORS, 401/404
// answers with X-Error-Code, a connection cut half-way). The site is built
// once for this file into build/hub-site with hub.endpoint naming the fake
// Hub (tools/build_site.mjs MODELS_INDEX: its CSP adds exactly the fake
// Hub's two origins) and served with netlify.toml's headers, that policy in
// place of the published one. Each scenario has a fresh profile.

import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { scenario, ready, settled, typeText, ROOT, DEFAULT_MODEL } from './harness.mjs';
import { serve, netlifyHeaders } from './server.mjs';
import { startFakeHub } from './fake_hub.mjs';

const TINY = path.join(ROOT, 'tests', 'fixtures', 'hub', 'tiny-mlm');
const SITE = path.join(ROOT, 'build', 'hub-site');
const BIN = path.join(ROOT, 'build', 'bertlens');
const TEXT = 'the capital of france is [MASK].';
const ID = 'bertlens-test/tiny-mlm';
// Chromium reports refused requests on the console; these scenarios make them on purpose.
const EXPECTED_ERRORS = /Failed to load resource|Access-Control-Allow-Origin|CORS policy|Content Security Policy|net::ERR_/;

const tinyFiles = () => Object.fromEntries(fs.readdirSync(TINY).map((f) => [f, fs.readFileSync(path.join(TINY, f))]));

let shared = null;
/** The fake Hub, a stray origin outside the CSP, and the site built for
 *  them (once per run of this file). */
function setup() {
  shared ||= (async () => {
    const files = tinyFiles();
    const stray = await serve(fs.mkdtempSync(path.join(os.tmpdir(), 'bertlens-stray-')));
    const gpt2 = { ...files, 'config.json': Buffer.from(JSON.stringify({ ...JSON.parse(files['config.json']), model_type: 'gpt2', architectures: ['GPT2LMHeadModel'] })) };
    const hub = await startFakeHub({
      [ID]: { files },
      'bertlens-test/gated': { files, gated: true },
      'bertlens-test/bin-only': { files: { 'config.json': files['config.json'], 'vocab.txt': files['vocab.txt'], 'pytorch_model.bin': Buffer.alloc(4096, 7) } },
      'bertlens-test/gpt2-like': { files: gpt2 },
      'bertlens-test/cut': { files, cut: true },
      'bertlens-test/no-cors': { files, cors: false },
      'bertlens-test/elsewhere': { files, redirect: stray.url.replace(/\/$/, '') },
    });
    const index = JSON.parse(fs.readFileSync(path.join(ROOT, 'models', 'index.json'), 'utf8'));
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bertlens-hub-index-'));
    fs.writeFileSync(path.join(tmp, 'index.json'), JSON.stringify({ ...index, hub: { endpoint: hub.endpoint, redirects: [hub.cdn] } }));
    execFileSync(process.execPath, [path.join(ROOT, 'tools', 'build_site.mjs')], {
      env: { ...process.env, MODELS_INDEX: path.join(tmp, 'index.json'), DIST_DIR: path.relative(ROOT, SITE) }, stdio: 'pipe',
    });
    const meta = fs.readFileSync(path.join(SITE, 'index.html'), 'utf8').match(/http-equiv="Content-Security-Policy" content="([^"]+)"/)[1];
    const policy = `${meta.replace(/&#39;/g, "'").replace(/&quot;/g, '"').replace(/&amp;/g, '&')}; frame-ancestors *`;
    const rules = netlifyHeaders(ROOT).map((r) => (r.values['Content-Security-Policy'] ? { ...r, values: { ...r.values, 'Content-Security-Policy': policy } } : r));
    const site = await serve(SITE, { netlify: rules });
    // The same checkpoint converted by the CLI: the attention reference.
    const native = path.join(tmp, 'tiny-mlm.blb');
    const conv = spawnSync(BIN, ['convert', TINY, native, '--name', ID], { encoding: 'utf8' });
    if (conv.status !== 0) throw new Error(`bertlens convert: ${conv.stderr}`);
    return { hub, site: site.url, policy, native, stray: stray.url };
  })();
  return shared;
}

/** The page's layer/head heatmap (JSON export) vs `bertlens attend`. */
async function sameAttention(page, bundle, layer, head) {
  await page.selectOption('#layer', String(layer));
  await page.selectOption('#head', String(head));
  await ready(page);
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#export-json')]);
  const j = JSON.parse(fs.readFileSync(await dl.path(), 'utf8'));
  const ref = JSON.parse(execFileSync(BIN, ['attend', '--layer', String(layer), bundle, TEXT], { encoding: 'utf8' }));
  assert.deepEqual(j.tokens, ref.tokens);
  let worst = 0;
  ref.attentions[0][head].forEach((row, i) => row.forEach((v, k) => { worst = Math.max(worst, Math.abs(v - j.blocks[0].values[i][k])); }));
  assert.ok(worst < 5e-4, `layer ${layer} head ${head}: max |shown - bertlens attend| ${worst}`); // q8: SIMD vs native kernels
  return worst;
}

const weightAnswers = (hub) => hub.requests.filter((r) => r.startsWith('cdn GET')).length;

scenario('hub: ?hub= converts the model from the (fake) Hub and draws it; a reload uses the kept copy; offline it still loads', async ({ page, context, shot }) => {
  const { hub, site, native } = await setup();
  const before = weightAnswers(hub);
  await page.goto(`${site}?hub=${encodeURIComponent(ID)}&view=heatmap&text=${encodeURIComponent(TEXT)}`);
  await ready(page);
  assert.match(await page.textContent('#model-info'), /^bertlens-test\/tiny-mlm \(Hugging Face Hub, [0-9a-f]{7}\) · 2 layers × 4 heads, hidden 32/);
  assert.match(await page.textContent('#notices'), /Converted bertlens-test\/tiny-mlm from the Hugging Face Hub in this page \(\d+ tensors, q8\)/);
  assert.match(page.url(), /[?&]hub=bertlens-test%2Ftiny-mlm(&|$)/);
  await shot(page, 'hub-loaded');
  const worst = Math.max(await sameAttention(page, native, 1, 2), await sameAttention(page, native, 0, 0));
  console.log(`#   Hub model in the page: attention vs bertlens attend max |d| ${worst.toExponential(2)}`);
  // model.safetensors: its size and first bytes, its head, then the file
  // once (hashed and converted on the way)
  const size = fs.statSync(path.join(TINY, 'model.safetensors')).size;
  const ranges = hub.requests.slice(before).filter((r) => r.startsWith('cdn GET')).map((r) => r.match(/Range: bytes=(\d+)-(\d+)/).slice(1).map(Number));
  const bytes = ranges.reduce((s, [a, b]) => s + b - a + 1, 0);
  assert.ok(ranges.length <= 4 && bytes < size + 64 * 1024, `${bytes} bytes in ${ranges.length} answers for a ${size}-byte file`);
  // Reload: same commit, the kept copy; no weight is downloaded again.
  const mid = weightAnswers(hub);
  await page.reload();
  await ready(page);
  assert.match(await page.textContent('#notices'), /bertlens-test\/tiny-mlm at commit [0-9a-f]{7}: the copy kept in this browser/);
  assert.equal(weightAnswers(hub), mid, 'no weights downloaded for the kept commit');
  // Offline: the page (service worker), the engine and the kept bundle.
  await context.setOffline(true);
  await page.reload();
  await ready(page);
  assert.match(await page.textContent('#model-info'), /^bertlens-test\/tiny-mlm \(Hugging Face Hub, [0-9a-f]{7}\) · 2 layers × 4 heads/);
  assert.match(await page.textContent('#notices'), /Offline: using the copy of bertlens-test\/tiny-mlm this browser kept/);
  await sameAttention(page, native, 1, 3);
  // The models menu offers it too.
  await context.setOffline(false);
  const options = await page.$$eval('#model-select option', (o) => o.map((x) => x.textContent));
  assert.ok(options.some((t) => /bertlens-test\/tiny-mlm/.test(t)), options.join(' | '));
}, { allowConsoleErrors: EXPECTED_ERRORS });

scenario('hub: every refusal says why in a sentence and the model loaded before stays usable', async ({ page, shot }) => {
  const { site } = await setup();
  await page.goto(`${site}?view=heatmap`);
  await ready(page);
  const listed = (await page.textContent('#model-info')).split(' · ')[0];
  assert.equal(listed, DEFAULT_MODEL.name);
  // The dialog by keyboard: Enter on the button, type, Enter.
  const viaDialog = async (id) => {
    await page.focus('#open-hub');
    await page.keyboard.press('Enter');
    assert.equal(await page.evaluate(() => document.activeElement.id), 'hub-id', 'the field has the focus');
    await page.fill('#hub-id', id);
    await page.evaluate(() => { document.body.dataset.state = 'loading'; });
    await page.keyboard.press('Enter');
  };
  // A malformed id: said inside the dialog, as text; Escape closes it.
  await page.focus('#open-hub');
  await page.keyboard.press('Enter');
  await page.fill('#hub-id', '<img src=x onerror=alert(1)>/x');
  await page.keyboard.press('Enter');
  assert.match(await page.textContent('#hub-dialog-error'), /“<img src=x onerror=alert\(1\)>\/x” is not a Hugging Face model id/);
  assert.equal(await page.$$eval('#hub-dialog img', (i) => i.length), 0);
  await page.keyboard.press('Escape');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'open-hub', 'the focus returns to the button');
  const cases = [
    ['bertlens-test/no-such-model', /no public model bertlens-test\/no-such-model: it was not found or is private/],
    ['bertlens-test/gated', /is a gated model.*needs a Hugging Face access token, and bertlens does not take tokens/],
    ['bertlens-test/bin-only', /has no model\.safetensors \(only pytorch_model\.bin.*safe_serialization=True/],
    ['bertlens-test/gpt2-like', /could not be converted: .*'gpt2'/],
    ['bertlens-test/cut', /download of model\.safetensors was cut off.*nothing of it was kept/],
    ['bertlens-test/no-cors', /Could not reach the Hugging Face Hub.*\(CORS\)/],
    ['bertlens-test/elsewhere', /security policy \(Content-Security-Policy\) does not allow the page to connect to 127\.0\.0\.1:\d+/],
  ];
  for (const [id, re] of cases) {
    await viaDialog(id);
    const state = await settled(page);
    const msg = await page.textContent('#notices');
    assert.equal(state, 'error', `${id}: ${msg}`);
    assert.match(msg, new RegExp(`Could not load ${id.replace('/', '\\/')} from the Hugging Face Hub: `), id);
    assert.match(msg, re, id);
    await shot(page, `hub-error-${id.split('/')[1]}`);
    // the model loaded before is still there and runs
    assert.equal((await page.textContent('#model-info')).split(' · ')[0], listed, id);
    await typeText(page, '#text-a', `${id} is refused.`);
  }
  // Nothing of the failed loads is kept.
  const kept = await page.evaluate(async () => (await (await caches.open('bertlens-hub-v1')).keys()).map((r) => r.url));
  assert.deepEqual(kept, []);
}, { allowConsoleErrors: EXPECTED_ERRORS });
