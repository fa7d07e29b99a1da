// security.scenarios.mjs — the page against hostile responses, links and
// files (issue 23): a captive portal answering the model URL, a raw bundle
// planted in place of the listed .gz, snapshot links with wrong-typed state
// or a memory bomb, a gzip bomb dropped on the page, and the CSP every
// built page carries. Each scenario starts in a fresh profile (harness.mjs).

import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { pathToFileURL } from 'node:url';
import { scenario, ready, settled, canvasColours, texts, fx, ROOT, DIST, DEFAULT_MODEL, DEFAULT_GZ, reEscape } from './harness.mjs';

const DEF_NAME = reEscape(DEFAULT_MODEL.name);
const { encodeSnapshot } = await import(pathToFileURL(path.join(ROOT, 'web', 'js', 'lib', 'snapshot.js')).href);
const RESOURCE_ERRORS = /Failed to load resource/;

const bundleCached = (page) => page.evaluate(async () => {
  const out = [];
  for (const name of await caches.keys()) {
    if (!name.startsWith('bertlens-bundles')) continue;
    for (const req of await (await caches.open(name)).keys()) out.push(new URL(req.url).pathname);
  }
  return out;
});

scenario('captive portal: the model URL first answers a web page (200), then the real file: the first visit says so, the second draws the model', async ({ page, base, context, shot }) => {
  let portal = true;
  // context.route: the service worker's requests too (it controls the page
  // soon after the first load).
  await context.route('**/models/*.blb.gz', (r) => (portal
    ? r.fulfill({ status: 200, contentType: 'text/html; charset=utf-8', body: '<!DOCTYPE html><html><head><title>Hotel WiFi</title></head><body><form>Accept the terms to get online</form></body></html>' })
    : r.continue()));
  await page.goto(`${base}?text=${encodeURIComponent('The portal has gone.')}`);
  assert.equal(await settled(page), 'error');
  const msg = await page.textContent('.notice.error .msg');
  assert.match(msg, new RegExp(`^The server sent a web page instead of the model ${DEF_NAME}, so it was not used\\. This happens on networks that ask you to sign in first`));
  assert.deepEqual(await bundleCached(page), [], 'the web page was not stored as the model');
  await shot(page, 'security-captive-portal');
  // The network is fine again: the same browser's next visit draws the model.
  portal = false;
  await page.goto(`${base}?text=${encodeURIComponent('The portal has gone.')}`);
  await ready(page);
  assert.deepEqual((await texts(page, '.row-label')).slice(1, 4), ['the', 'portal', 'has']);
  assert.ok(await canvasColours(page, 'canvas.hm-cells') > 5, 'the heatmap is drawn');
  assert.equal((await bundleCached(page)).length, 1, 'the real file is stored once the engine took it');
}, { allowConsoleErrors: RESOURCE_ERRORS });

scenario('a raw .blb served in place of the listed .blb.gz is refused by the integrity check; the true plain bytes pass', async ({ page, base, context }) => {
  // Another real bundle, plain: it passes its own CRCs and would load.
  const planted = path.join(ROOT, 'build', 'models', 'all-minilm-l6-v2.q8.blb');
  assert.ok(fs.existsSync(planted), `${path.relative(ROOT, planted)} is missing: run \`make test-models\``);
  let body = fs.readFileSync(planted);
  await context.route('**/models/*.blb.gz', (r) => r.fulfill({ status: 200, contentType: 'application/octet-stream', body }));
  await page.goto(base);
  assert.equal(await settled(page), 'error');
  assert.match(await page.textContent('.notice.error .msg'),
    new RegExp(`^The server sent something that is not the model ${DEF_NAME} \\(a plain bundle whose contents differ from what this site lists\\), so it was not used\\.`));
  assert.deepEqual(await bundleCached(page), []);
  // The listed model's own bytes, inflated (a server that adds
  // Content-Encoding: gzip hands the page these): checked against
  // inflated_sha256 and used.
  body = zlib.gunzipSync(fs.readFileSync(DEFAULT_GZ));
  await page.goto(base);
  await ready(page);
  assert.match(await page.textContent('#model-info'), new RegExp(`weights ${DEFAULT_MODEL.dtype}`));
});

/** A heatmap snapshot of the fixture's pair (layer 0, every head) for the
 *  6-layer × 12-head default model, with its state replaced by `state`. */
async function snapshotLink(base, state) {
  const { T, H, d } = fx;
  const n = T * T;
  const attn = Array.from({ length: H }, (_, h) => ({ layer: 0, head: h, data: Float32Array.from(fx.attentions[0].slice(h * n, h * n + n)) }));
  const text = await encodeSnapshot({
    T, L: 6, H, d, state, model: { id: DEFAULT_MODEL.id, name: DEFAULT_MODEL.name, bytes: DEFAULT_MODEL.bytes },
    tokens: fx.tokens, typeIds: fx.type_ids, wordIds: fx.word_ids, truncated: false, attn, norms: [], qk: null,
  });
  return `${base}?${new URLSearchParams({ text: fx.text, text_b: fx.text_b, view: 'heatmap' })}#s=${text}`;
}

const GOOD_STATE = { view: 'heatmap', layer: 0, head: 3, mode: 'attn', query: 0, hide: false, renorm: true, words: false, filter: 'all', heads: null, theme: 'light', text: fx.text, text_b: fx.text_b, model: DEFAULT_MODEL.id };

scenario('snapshot links: a wrong-typed state falls back to the model with a notice; a good one draws without it', async ({ page, base, srv, shot }) => {
  // The same snapshot with a sound state draws at once, with no model download.
  await page.goto(await snapshotLink(base, GOOD_STATE));
  await ready(page);
  assert.match(await page.textContent('#model-info'), /this view is a snapshot/);
  assert.deepEqual(srv.requests.filter((p) => /\.blb/.test(p)), []);
  // heads: 5 (main: "state.heads.join is not a function", a dead page).
  for (const [bad, words] of [
    [{ heads: 5 }, /heads is 5, not a list of whole numbers/],
    [{ layer: '0' }, /layer is "0", not a whole number/],
    [{ hide: 'yes', text: 7 }, /text is 7, not a text; hide is "yes", not true or false|hide is "yes", not true or false.*text is 7/],
    [{ head: 40 }, /head 40 is not one of its 12 heads/],
  ]) {
    await page.goto('about:blank');
    await page.goto(await snapshotLink(base, { ...GOOD_STATE, ...bad }));
    await ready(page);
    const notes = await page.textContent('#notices');
    assert.match(notes, /This view's snapshot cannot be used: in its settings, /);
    assert.match(notes, words);
    assert.match(notes, /Using the model instead\./);
    assert.match(await page.textContent('#model-info'), new RegExp(`${DEF_NAME}.*weights ${DEFAULT_MODEL.dtype}`), 'the live model is loaded');
    assert.ok(await canvasColours(page, 'canvas.hm-cells') > 5, 'and draws');
    if (bad.heads) await shot(page, 'security-snapshot-wrong-type');
  }
});

scenario('snapshot link that would allocate 2 GiB: refused within its memory budget, the model draws instead', async ({ page, base, shot }) => {
  const T = 64;
  const zero = new Float32Array(T * T);
  const blocks = Array.from({ length: 255 }, (_, l) => ({ layer: l, head: 0, data: zero }));
  const text = await encodeSnapshot({
    T, L: 255, H: 255, d: 1, state: { ...GOOD_STATE, view: 'model' }, model: { id: DEFAULT_MODEL.id, name: '', bytes: 0 },
    tokens: Array.from({ length: T }, (_, i) => `t${i}`), typeIds: new Array(T).fill(0), wordIds: Array.from({ length: T }, (_, i) => i),
    truncated: false, attn: blocks, norms: blocks, qk: null,
  });
  assert.ok(text.length < 6000, `${text.length} characters`);
  await page.goto(`${base}#s=${text}`);
  await ready(page);
  assert.match(await page.textContent('#notices'), /This view's snapshot cannot be read: drawing it would take \d+ MB of memory, more than the 32 MB a snapshot may use\. Using the model instead\./);
  const heap = await page.evaluate(() => performance.memory ? performance.memory.usedJSHeapSize : 0);
  assert.ok(heap < 512 << 20, `JS heap ${heap}`);
  await shot(page, 'security-snapshot-budget');
});

scenario('a gzip bomb dropped on the page stops early as too large; the page stays usable', async ({ page, base, shot }) => {
  await page.goto(base);
  await ready(page);
  // 2 GiB of zeros after a bundle header declaring 4 KB: the same 1 MiB
  // deflate block (full flush) repeated; ~2 MB of gzip.
  const head = Buffer.alloc(96);
  head.write('BERTLENS', 0, 'latin1');
  head.writeBigUInt64LE(4096n, 16);
  const flush = { finishFlush: zlib.constants.Z_FULL_FLUSH };
  const zeros = zlib.deflateRawSync(Buffer.alloc(1 << 20), flush);
  const bomb = Buffer.concat([Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]), zlib.deflateRawSync(head, flush),
    ...new Array(2048).fill(zeros), Buffer.from([3, 0]), Buffer.alloc(8)]);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bertlens-bomb-'));
  try {
    fs.writeFileSync(path.join(dir, 'bomb.blb.gz'), bomb);
    await page.evaluate(() => { document.body.dataset.state = 'loading'; });
    const t0 = Date.now();
    await page.setInputFiles('#file-input', path.join(dir, 'bomb.blb.gz'));
    assert.equal(await settled(page), 'error');
    const ms = Date.now() - t0;
    assert.match(await page.textContent('.notice.error .msg'),
      /^Could not load bomb\.blb\.gz: the file is too large: it unpacks to more than the 4\.0 KB its header declares \(a damaged file or a decompression bomb\), so unpacking stopped\./);
    console.log(`     gzip bomb (${(bomb.length / 1048576).toFixed(1)} MB, 2 GiB inflated) refused in ${ms} ms`);
    // Stopped early is checked by memory, not by time (a loaded CI machine
    // makes any time bound flaky): 2 GiB unpacked would not fit this heap.
    const heap = await page.evaluate(() => performance.memory ? performance.memory.totalJSHeapSize : 0);
    assert.ok(heap < 512 << 20, `JS heap ${heap}`);
    await shot(page, 'security-gzip-bomb');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

// ------------------------------------------------------------------- CSP

/** Record CSP violations (window.__csp) from the first script on. */
const watchCsp = (page) => page.addInitScript(() => {
  window.__csp = [];
  document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(`${e.effectiveDirective} ${e.blockedURI} ${e.sample || ''}`.trim()));
});

/** What the page's policy allows: a string into innerHTML, a script URL of
 *  another origin into new Worker (both must throw), and whether it runs
 *  cross-origin isolated (threads). */
const probe = (page) => page.evaluate(async () => {
  const before = window.__csp.slice(); // the page's own: none expected
  const tries = {};
  try { document.createElement('div').innerHTML = '<img src=x onerror=alert(1)>'; tries.innerHTML = 'allowed'; } catch (e) { tries.innerHTML = e.name; }
  try { new Worker('https://evil.example/x.js'); tries.worker = 'allowed'; } catch (e) { tries.worker = e.name; }
  const meta = document.querySelector('meta[http-equiv="Content-Security-Policy"]');
  await new Promise((r) => setTimeout(r, 200)); // violation reports arrive in a later task
  return { tries, meta: meta && meta.content, isolated: self.crossOriginIsolated, violations: before, probes: window.__csp.slice(before.length) };
});

const CSP_VIOLATION = /requires 'TrustedHTML' assignment/; // the innerHTML probe's own report

scenario('CSP with Trusted Types: every view draws with no violation; HTML and foreign script URLs are refused (header and <meta>)', async ({ page, base }) => {
  await watchCsp(page);
  await page.goto(`${base}?text=${encodeURIComponent('The cat sat on the mat.')}`);
  await ready(page);
  for (const view of ['head', 'model', 'neuron', 'overview', 'rollout', 'heatmap']) {
    await page.evaluate(() => { document.body.dataset.state = 'loading'; });
    await page.click(`#view-tabs [data-view="${view}"]`);
    await ready(page);
  }
  const p = await probe(page);
  assert.deepEqual(p.tries, { innerHTML: 'TypeError', worker: 'TypeError' });
  assert.match(p.meta, /require-trusted-types-for 'script'; trusted-types default$/);
  assert.equal(p.isolated, true, 'the threaded engine (pthread workers under the policy) ran');
  assert.deepEqual(p.violations, [], 'the page itself broke no rule');
  assert.ok(p.probes.some((v) => /^require-trusted-types-for/.test(v)), `the innerHTML probe was reported: ${p.probes.join(' | ')}`);
}, { allowConsoleErrors: CSP_VIOLATION });

scenario('CSP <meta> alone (a host that sends no header) enforces the same policy', async ({ page, base }) => {
  await watchCsp(page);
  await page.goto(base);
  await ready(page);
  const p = await probe(page);
  assert.deepEqual(p.tries, { innerHTML: 'TypeError', worker: 'TypeError' });
  assert.deepEqual(p.violations, [], 'the page itself broke no rule');
}, { csp: false, allowConsoleErrors: CSP_VIOLATION });

scenario('one-file page from file:// under its hash-based CSP <meta>: draws, with no violation but the probes', async ({ page }) => {
  await watchCsp(page);
  await page.goto(pathToFileURL(path.join(DIST, 'bertlens.html')).href);
  await ready(page);
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await page.click('#view-tabs [data-view="neuron"]');
  await ready(page);
  const p = await probe(page);
  assert.match(p.meta, /script-src 'sha256-[^']+' .*'wasm-unsafe-eval'; worker-src blob:;.*require-trusted-types-for 'script'/);
  assert.deepEqual(p.tries, { innerHTML: 'TypeError', worker: 'TypeError' });
  assert.deepEqual(p.violations, [], 'the page itself broke no rule');
}, { network: 'none', allowConsoleErrors: CSP_VIOLATION });
