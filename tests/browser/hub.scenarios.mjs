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
import zlib from 'node:zlib';
import { scenario, ready, settled, typeText, ROOT, DEFAULT_MODEL } from './harness.mjs';
import { serve, netlifyHeaders } from './server.mjs';
import { startFakeHub, generatedSafetensors } from './fake_hub.mjs';
import { BIN, download, sameAttention as sameAttentionAs } from './page_vs_cli.mjs';
import { peakOf, settle, MB } from './memory_probe.mjs';

const TINY = path.join(ROOT, 'tests', 'fixtures', 'hub', 'tiny-mlm');
const SITE = path.join(ROOT, 'build', 'hub-site');
const TEXT = 'the capital of france is [MASK].';
const ID = 'bertlens-test/tiny-mlm';
// Chromium reports refused requests on the console; these scenarios make them on purpose.
const EXPECTED_ERRORS = /Failed to load resource|Access-Control-Allow-Origin|CORS policy|Content Security Policy|net::ERR_/;

// issue 33: a EuroBERT checkpoint (tests/fixtures/families/eurobert: Llama-style,
// byte-level tokenizer.json, no vocab.txt) from the Hub, once for the three new families.
const EURO = path.join(ROOT, 'tests', 'fixtures', 'families', 'eurobert');
const EURO_ID = 'bertlens-test/eurobert-tiny';
const folderFiles = (dir) => Object.fromEntries(fs.readdirSync(dir).map((f) => [f, fs.readFileSync(path.join(dir, f))]));

const tinyFiles = () => Object.fromEntries(fs.readdirSync(TINY).map((f) => [f, fs.readFileSync(path.join(TINY, f))]));

let shared = null;
/** The fake Hub, a stray origin outside the CSP, and the site built for
 *  them (once per run of this file). */
function setup() {
  shared ||= (async () => {
    const files = tinyFiles();
    const big = bertRepo({ layers: LAYERS, hidden: 1024, heads: 16, inter: 4096, vocab: 30522 });
    const stray = await serve(fs.mkdtempSync(path.join(os.tmpdir(), 'bertlens-stray-')));
    const gpt2 = { ...files, 'config.json': Buffer.from(JSON.stringify({ ...JSON.parse(files['config.json']), model_type: 'gpt2', architectures: ['GPT2LMHeadModel'] })) };
    const tiny = { files };
    const hub = await startFakeHub({
      [ID]: tiny,
      'bertlens-test/gated': { files, gated: true },
      'bertlens-test/bin-only': { files: { 'config.json': files['config.json'], 'vocab.txt': files['vocab.txt'], 'pytorch_model.bin': Buffer.alloc(4096, 7) } },
      'bertlens-test/gpt2-like': { files: gpt2 },
      'bertlens-test/cut': { files, cut: true },
      'bertlens-test/no-cors': { files, cors: false },
      'bertlens-test/elsewhere': { files, redirect: stray.url.replace(/\/$/, '') },
      [BIG_ID]: { files: big },
      [DEEP_ID]: { files: bertRepo({ layers: 24, hidden: 32, heads: 4, inter: 64, vocab: 300 }) },
      [EURO_ID]: { files: folderFiles(EURO) },
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
    const euro = path.join(tmp, 'eurobert.blb');
    const conv2 = spawnSync(BIN, ['convert', EURO, euro, '--name', EURO_ID], { encoding: 'utf8' });
    if (conv2.status !== 0) throw new Error(`bertlens convert: ${conv2.stderr}`);
    return { hub, euro, tinyBlob: tiny.lfs['model.safetensors'].key, site: site.url, policy, native, stray: stray.url, bigSize: big['model.safetensors'].size };
  })();
  return shared;
}

/** The page's layer/head heatmap vs `bertlens attend` (page_vs_cli.mjs); q8:
 *  the page's panels vs the CLI's int16 copy (families.scenarios' bound). */
const sameAttention = (page, bundle, layer, head) => sameAttentionAs(page, { bundle, texts: [TEXT], layer, head, tol: 5e-4 });

// The tiny model's weight downloads only: the other hub scenarios share this
// fake Hub and may run at the same time (their requests land in the same log).
const weightGets = ({ hub, tinyBlob }) => hub.requests.filter((r) => r.startsWith(`cdn GET /${tinyBlob}`));

scenario('hub: ?hub= converts the model from the (fake) Hub and draws it; a reload uses the kept copy; offline it still loads', async ({ page, context, shot }) => {
  const env = await setup();
  const { site, native } = env;
  const before = weightGets(env).length;
  // Every progress line shown, for the per-file progress check below.
  await page.addInitScript(() => {
    window.progressSeen = [];
    document.addEventListener('DOMContentLoaded', () => {
      const el = document.getElementById('progress-text');
      new MutationObserver(() => window.progressSeen.push(el.textContent)).observe(el, { childList: true, characterData: true, subtree: true });
    });
  });
  await page.goto(`${site}?hub=${encodeURIComponent(ID)}&view=heatmap&text=${encodeURIComponent(TEXT)}`);
  await ready(page);
  assert.match(await page.textContent('#model-info'), /^bertlens-test\/tiny-mlm \(Hugging Face Hub, [0-9a-f]{7}\) · 2 layers × 4 heads, hidden 32/);
  assert.match(await page.textContent('#notices'), /Converted bertlens-test\/tiny-mlm from the Hugging Face Hub in this page \(\d+ tensors, q8\)/);
  assert.match(page.url(), /[?&]hub=bertlens-test%2Ftiny-mlm(&|$)/);
  await shot(page, 'hub-loaded');
  // "Save converted model" saves the model shown, by its Hub id: the bytes `bertlens convert --name ID` writes
  const saved = await download(page, '#save-converted');
  assert.equal(saved.name, 'bertlens-test_tiny-mlm.q8.blb.gz');
  assert.ok(Buffer.compare(zlib.gunzipSync(saved.bytes), fs.readFileSync(native)) === 0, 'saved Hub model = bertlens convert output');
  const seen = await page.evaluate(() => window.progressSeen);
  const size = fs.statSync(path.join(TINY, 'model.safetensors')).size;
  assert.ok(seen.some((t) => /^Downloading bertlens-test\/tiny-mlm: model\.safetensors \(converted: tensor \d+ of \d+\): [\d.]+ KB of 736\.6 KB \(\d+%\)$/.test(t)),
    `per-file progress: ${seen.slice(0, 12).join(' | ')}`);
  assert.equal(size, 754280);
  const worst = Math.max(await sameAttention(page, native, 1, 2), await sameAttention(page, native, 0, 0));
  console.log(`#   Hub model in the page: attention vs bertlens attend max |d| ${worst.toExponential(2)}`);
  // The Predictions view (issue 22 item 3), where this build has it: the
  // top word at [MASK] is Hugging Face's (tests/fixtures/hub/make.py).
  const ref = JSON.parse(fs.readFileSync(path.join(ROOT, 'tests', 'fixtures', 'hub', 'reference.json'), 'utf8')).texts[0];
  assert.equal(ref.text, TEXT);
  if (await page.$('#view-tabs button[data-view="predict"]')) {
    await page.evaluate(() => { document.body.dataset.state = 'loading'; });
    await page.click('#view-tabs button[data-view="predict"]');
    await ready(page);
    const at = ref.positions[0];
    const top = await page.$eval(`.pv-card[data-index="${at.index}"] .pv-top li .pv-word-label`, (e) => e.textContent.trim());
    assert.equal(top, at.top[0].token, 'top-1 at [MASK] vs Hugging Face');
    console.log(`#   Predictions view: top-1 at [MASK] "${top}" = Hugging Face's`);
    await page.evaluate(() => { document.body.dataset.state = 'loading'; });
    await page.click('#view-tabs button[data-view="heatmap"]');
    await ready(page);
  } else {
    console.log('#   this build has no Predictions view: top-1 at [MASK] not checked');
  }
  // model.safetensors: its size and first bytes, its head, then the file
  // once (hashed and converted on the way)
  const ranges = weightGets(env).slice(before).map((r) => r.match(/Range: bytes=(\d+)-(\d+)/).slice(1).map(Number));
  const bytes = ranges.reduce((s, [a, b]) => s + b - a + 1, 0);
  assert.ok(ranges.length <= 4 && bytes < size + 64 * 1024, `${bytes} bytes in ${ranges.length} answers for a ${size}-byte file`);
  // Reload: same commit, the kept copy; no weight is downloaded again.
  const mid = weightGets(env).length;
  await page.reload();
  await ready(page);
  assert.match(await page.textContent('#notices'), /bertlens-test\/tiny-mlm at commit [0-9a-f]{7}: the copy kept in this browser/);
  assert.equal(weightGets(env).length, mid, `no weights downloaded for the kept commit: ${weightGets(env).slice(before).join(' | ')}`);
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
    ['bertlens-test/elsewhere', /security policy \(Content-Security-Policy\) does not allow the page to connect to the host the Hugging Face Hub redirected the download to/],
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
  // ?hub= naming a model that cannot be had: the list's model, and why.
  await page.goto(`${site}?hub=bertlens-test/gated&view=heatmap`);
  await ready(page);
  assert.equal((await page.textContent('#model-info')).split(' · ')[0], listed);
  assert.match(await page.textContent('#notices'), /Could not load bertlens-test\/gated from the Hugging Face Hub: .*does not take tokens.*Showing .* instead\./);
  // Nothing of the failed loads is kept.
  const kept = await page.evaluate(async () => (await (await caches.open('bertlens-hub-v1')).keys()).map((r) => r.url));
  assert.deepEqual(kept, []);
}, { allowConsoleErrors: EXPECTED_ERRORS });

// ------------------------------------------------------------------ memory
// A bert-large-wide checkpoint (hidden 1024, 16 heads, intermediate 4096,
// vocabulary 30522; HUB_MEMORY_LAYERS layers, 24 by default: bert-large
// itself, the case, 1.3 GB of f32 converted in about 30 s; 4 for a
// quick look), generated in fake_hub.mjs slice by slice. The page's peak memory is its renderer process's VmHWM (the page,
// its model worker and the wasm memory live there), reset just before the
// load (/proc/PID/clear_refs), against the converted bundle's size.
const LAYERS = Number(process.env.HUB_MEMORY_LAYERS) || 24;
const BIG_ID = `bertlens-test/bert-large-shaped-${LAYERS}`;
const DEEP_ID = 'bertlens-test/deep-tiny-24'; // 24 layers, hidden 32: the message count's model

/** A BERT checkpoint of random weights (fake_hub.mjs generatedSafetensors,
 *  made slice by slice as it is read) with a word-piece vocabulary. */
export function bertRepo({ layers, hidden: H, heads, inter: I, vocab: V }) {
  const t = [
    ['embeddings.word_embeddings.weight', [V, H]], ['embeddings.position_embeddings.weight', [512, H]],
    ['embeddings.token_type_embeddings.weight', [2, H]], ['embeddings.LayerNorm.weight', [H]], ['embeddings.LayerNorm.bias', [H]],
  ];
  for (let l = 0; l < layers; l++) {
    const p = `encoder.layer.${l}.`;
    for (const n of ['query', 'key', 'value']) t.push([`${p}attention.self.${n}.weight`, [H, H]], [`${p}attention.self.${n}.bias`, [H]]);
    t.push([`${p}attention.output.dense.weight`, [H, H]], [`${p}attention.output.dense.bias`, [H]],
      [`${p}attention.output.LayerNorm.weight`, [H]], [`${p}attention.output.LayerNorm.bias`, [H]],
      [`${p}intermediate.dense.weight`, [I, H]], [`${p}intermediate.dense.bias`, [I]],
      [`${p}output.dense.weight`, [H, I]], [`${p}output.dense.bias`, [H]], [`${p}output.LayerNorm.weight`, [H]], [`${p}output.LayerNorm.bias`, [H]]);
  }
  const vocab = ['[PAD]', ...Array.from({ length: 99 }, (_, i) => `[unused${i}]`), '[UNK]', '[CLS]', '[SEP]', '[MASK]'];
  for (let i = vocab.length; i < V; i++) vocab.push(`w${i}`);
  const config = { architectures: ['BertModel'], model_type: 'bert', hidden_size: H, num_hidden_layers: layers, num_attention_heads: heads, intermediate_size: I,
    hidden_act: 'gelu', max_position_embeddings: 512, type_vocab_size: 2, vocab_size: V, layer_norm_eps: 1e-12, pad_token_id: 0 };
  return {
    'config.json': Buffer.from(JSON.stringify(config)),
    'vocab.txt': Buffer.from(`${vocab.join('\n')}\n`),
    'model.safetensors': generatedSafetensors(t.map(([name, shape]) => ({ name, shape }))),
  };
}

/** Load id (BIG_ID unless named) through the Hub dialog and wait for it to be drawn. */
async function loadBig(page, id = BIG_ID, shape = `${LAYERS} layers × 16 heads, hidden 1024`) {
  await page.click('#open-hub');
  await page.fill('#hub-id', id);
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await page.keyboard.press('Enter');
  await ready(page);
  assert.match(await page.textContent('#model-info'), new RegExp(shape));
}

// Issue 36: a Hub load is one request to the model worker, answered by a
// few progress events and one result (engine/take.js), not a conversation
// of converter calls. Every message between the page and its engine worker
// is counted (the page's Worker wrapped before the page starts), from the
// dialog's Enter to the model drawn: the load, and the run that draws it.
const countMessages = () => {
  const W = window.Worker;
  const log = window.engineMessages = { on: false, out: [], in: [] };
  window.Worker = class extends W {
    constructor(url, opts) {
      super(url, opts);
      if (/pca/.test(String(url))) return; // the Corpus view's own worker
      this.addEventListener('message', (e) => { if (log.on) log.in.push(e.data && e.data.progress ? 'progress' : 'answer'); });
    }

    postMessage(m, t) {
      if (log.on) log.out.push(m && m.type);
      return super.postMessage(m, t);
    }
  };
};
const MESSAGE_BAR = 50;

scenario('hub: a 24-layer model from the Hub is one request to the worker: at most 50 messages, counted; its kept copy too', async ({ page }) => {
  const { site } = await setup();
  await page.addInitScript(countMessages);
  await page.goto(`${site}?view=heatmap`);
  await ready(page);
  const counted = async (what) => {
    await page.evaluate(() => { const l = window.engineMessages; l.on = true; l.out = []; l.in = []; });
    await loadBig(page, DEEP_ID, '24 layers × 4 heads, hidden 32');
    const m = await page.evaluate(() => { const l = window.engineMessages; l.on = false; return { out: l.out, in: l.in }; });
    const kinds = {};
    for (const t of m.out) kinds[t] = (kinds[t] || 0) + 1;
    const progress = m.in.filter((x) => x === 'progress').length;
    console.log(`#   ${what}: ${m.out.length + m.in.length} messages page<->worker (to the worker: ${JSON.stringify(kinds)}; back: ${m.in.length - progress} answers, ${progress} progress events)`);
    assert.ok(m.out.length + m.in.length <= MESSAGE_BAR, `${what}: ${m.out.length + m.in.length} messages (bar ${MESSAGE_BAR}): to the worker ${JSON.stringify(kinds)}`);
    return m;
  };
  const conv = await counted('converted from the Hub');
  assert.equal(conv.out.filter((t) => t === 'take').length, 1, 'one request');
  assert.match(await page.textContent('#notices'), /Converted bertlens-test\/deep-tiny-24 from the Hugging Face Hub in this page/);
  // the kept copy: streamed from Cache Storage into the engine by the worker itself
  await page.reload();
  await ready(page);
  await counted('the kept copy');
  assert.match(await page.textContent('#notices'), /deep-tiny-24 at commit [0-9a-f]{7}: the copy kept in this browser/);
}, { allowConsoleErrors: EXPECTED_ERRORS });

const report = (what, m, bundle) => console.log(`#   ${what}: renderer RSS before ${MB(m.before)}, peak ${MB(m.peak)}: +${MB(m.inc)} = ${(m.inc / bundle).toFixed(2)}x the bundle `
  + `(wasm memory ${MB(m.wasm0)} -> ${MB(m.wasm1)}, main-thread JS heap ${m.js >= 0 ? '+' : ''}${MB(m.js)}); after ${MB(m.after)}`);

// Issue 22's bar: the page's peak memory while loading stays under 1.5x the
// converted bundle. Measured as the renderer's peak RSS over its RSS just
// before the load (the page, its model worker and the wasm memory live in
// that process), for the conversion from the Hub and for the kept copy.
const MEMORY_BAR = 1.5;

scenario('hub: memory while loading a bert-large-wide checkpoint from the Hub (peak renderer memory vs the bundle)', async ({ page, profile }) => {
  const { site, bigSize } = await setup();
  await page.goto(`${site}?view=heatmap`);
  await ready(page);
  const conv = await peakOf(page, profile, () => loadBig(page));
  const bundle = await page.evaluate(async () => {
    const c = await caches.open('bertlens-hub-v1');
    const [k] = await c.keys();
    return (await (await c.match(k)).blob()).size;
  });
  console.log(`#   ${BIG_ID}: checkpoint ${MB(bigSize)}, bundle ${MB(bundle)} (q8)`);
  report('converted from the Hub', conv, bundle);
  // The same bundle from the kept copy (no conversion), streamed from
  // Cache Storage into the engine, in a fresh page with the default model.
  await page.goto('about:blank');
  await settle(profile);
  await page.goto(`${site}?view=heatmap`);
  await ready(page);
  const kept = await peakOf(page, profile, () => loadBig(page));
  report('the kept copy (no conversion)', kept, bundle);
  assert.match(await page.textContent('#notices'), /the copy kept in this browser/);
  // The kept copy streams into the engine, which takes it in place: under
  // the bar with room (0.88x measured, 0.98x for 24 layers). The conversion
  // holds the bundle once too, but ~50 MB come on top whatever the model's
  // size (the download the browser buffers ahead of the converter, the
  // converter's chunks): 1.14x for bert-large's 24 layers, the issue's
  // case (what make test runs), held to the bar; 1.57x for 4 layers
  // (HUB_MEMORY_LAYERS=4), held to 2x (5.8x before the bundle stayed in the
  // worker). docs/page.md has the numbers.
  assert.ok(kept.inc <= MEMORY_BAR * bundle, `kept copy: peak +${MB(kept.inc)} for a ${MB(bundle)} bundle (bar ${MEMORY_BAR}x)`);
  const convBar = LAYERS >= 12 ? MEMORY_BAR : 2;
  assert.ok(conv.inc <= convBar * bundle, `conversion: peak +${MB(conv.inc)} for a ${MB(bundle)} bundle (bar ${convBar}x)`);
}, { timeout: 600000, allowConsoleErrors: EXPECTED_ERRORS });

scenario('hub: ?hub= converts a EuroBERT checkpoint (issue 33) from the (fake) Hub: bertlens convert\'s bytes, Hugging Face\'s tokens, the CLI\'s attention', async ({ page, shot }) => {
  const { site, euro } = await setup();
  const ref = JSON.parse(fs.readFileSync(path.join(ROOT, 'tests', 'browser', 'families.ref.json'), 'utf8')).eurobert;
  await page.goto(`${site}?hub=${encodeURIComponent(EURO_ID)}&view=heatmap&text=${encodeURIComponent(ref.text)}&text_b=${encodeURIComponent(ref.text_b)}`);
  await ready(page);
  assert.match(await page.textContent('#model-info'), /^bertlens-test\/eurobert-tiny \(Hugging Face Hub, [0-9a-f]{7}\) · 3 layers × 4 heads, hidden 32/);
  assert.match(await page.textContent('#notices'), /Converted bertlens-test\/eurobert-tiny from the Hugging Face Hub in this page \(\d+ tensors, q8\)/);
  const saved = await download(page, '#save-converted');
  assert.ok(Buffer.compare(zlib.gunzipSync(saved.bytes), fs.readFileSync(euro)) === 0, 'saved Hub model = bertlens convert output');
  assert.match(await page.textContent('#token-info'), new RegExp(`^${ref.tokens.length} tokens`));
  let worst = 0;
  for (const [layer, head] of [[0, 0], [2, 3]]) {
    worst = Math.max(worst, await sameAttentionAs(page, { bundle: euro, texts: [ref.text, ref.text_b], layer, head, tol: 5e-4 }));
  }
  console.log(`#   EuroBERT from the Hub: ${ref.tokens.length} tokens, attention vs bertlens attend max |d| ${worst.toExponential(2)}`);
  await page.evaluate(() => window.scrollTo(0, 0)); // (the export button scrolled the page: the toolbar sticks)
  await shot(page, 'hub-eurobert');
}, { allowConsoleErrors: EXPECTED_ERRORS });
