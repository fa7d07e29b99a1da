// delivery.scenarios.mjs — getting the page and the model to the user: the
// first download with progress, offline use, the one-file page, download
// and bundle errors, browsers that cannot run the engine, switching models.
// Each scenario starts in a fresh profile (see harness.mjs).

import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { createHash } from 'node:crypto';
import { serve, cspFromNetlify } from './server.mjs';
import { pathToFileURL } from 'node:url';
import { scenario, ready, settled, typeText, clickAndRedraw, canvasColours, texts, fx, ROOT, DIST, SHOTS, DEFAULT_MODEL, DEFAULT_GZ, reEscape } from './harness.mjs';

// The published default model (models/index.json), as the page names it.
const DEF_NAME = reEscape(DEFAULT_MODEL.name);
const DEF_FILE = (hash) => reEscape(DEFAULT_MODEL.file).replace(/\\\.blb\\\.gz$/, `\\.${hash}\\.blb\\.gz`);
const DEF_MB = reEscape((DEFAULT_MODEL.bytes / 1048576).toFixed(1));
const LISTED = JSON.parse(fs.readFileSync(path.join(ROOT, 'models', 'index.json'), 'utf8')).models.map((m) => m.id);

async function open(page, base, params = {}) {
  await page.goto(`${base}?${new URLSearchParams(params)}`);
  await ready(page);
}

/** Record every text the progress line shows (window.__progress). */
const recordProgress = (page) => page.addInitScript(() => {
  window.__progress = [];
  new MutationObserver(() => {
    const el = document.getElementById('progress-text');
    const bar = document.getElementById('progress');
    if (el && bar && !bar.hidden && el.textContent !== window.__progress.at(-1)) window.__progress.push(el.textContent);
  }).observe(document, { subtree: true, childList: true, characterData: true, attributes: true });
});

scenario('first load: default model downloads with progress and the heatmap appears', async ({ page, base }) => {
  await recordProgress(page);
  await page.goto(base);
  await ready(page);
  const progress = await page.evaluate(() => window.__progress);
  assert.ok(progress.some((t) => new RegExp(`^Downloading .+: [0-9.]+ (KB|MB) of ${DEF_MB} MB \\(\\d+%\\)$`).test(t)), progress.join(' | '));
  assert.ok(progress.some((t) => t.endsWith('(100%)')), 'progress reaches 100%');
  assert.equal(await page.isVisible('#progress'), false, 'progress bar hidden when done');
  const info = await page.textContent('#model-info');
  assert.match(info, /6 layers × 12 heads/);
  assert.ok((await page.$$('.row-label')).length > 3);
  assert.ok(await canvasColours(page, 'canvas.hm-cells') > 5, 'heatmap canvas is drawn');
});

scenario('damaged bundles give an error message and the page stays usable', async ({ page, base, shot }) => {
  await open(page, base);
  const gz = fs.readFileSync(DEFAULT_GZ);
  const raw = zlib.gunzipSync(gz);
  const bad = Buffer.from(raw);
  for (let i = 0; i < 64; i++) bad[Math.floor(bad.length / 2) + i] ^= 0x5a; // flip bytes inside tensor data
  // Files on disk (a path reaches the browser without copying 23 MB through the driver).
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bertlens-files-'));
  const loadFile = async ({ name, buffer }) => {
    fs.writeFileSync(path.join(dir, name), buffer);
    await page.evaluate(() => { document.body.dataset.state = 'loading'; });
    await page.setInputFiles('#file-input', path.join(dir, name));
  };
  await loadFile({ name: 'damaged.blb', mimeType: 'application/octet-stream', buffer: bad });
  assert.equal(await settled(page), 'error');
  assert.match(await page.textContent('.notice.error'), /Could not load damaged\.blb: .+/);
  await shot(page, 'damaged-bundle');
  const badGz = Buffer.from(gz.subarray(0, 4000));
  await loadFile({ name: 'cut.blb.gz', mimeType: 'application/gzip', buffer: badGz });
  assert.equal(await settled(page), 'error');
  assert.match(await page.textContent('.notice.error'), /Could not load cut\.blb\.gz/);
  // Still usable: the previous model answers the next edit.
  await typeText(page, '#text-a', 'Still working after a bad file.');
  assert.deepEqual((await texts(page, '.row-label')).slice(1, 3), ['still', 'working']);
  // A good plain .blb dropped by the user loads.
  await loadFile({ name: 'mine.blb', mimeType: 'application/octet-stream', buffer: raw });
  await ready(page);
  assert.match(await page.textContent('#model-info'), /mine\.blb/);
  fs.rmSync(dir, { recursive: true, force: true });
});

scenario('browser without wasm SIMD gets a clear message', async ({ base, context }) => {
  const p2 = await context.newPage();
  await p2.addInitScript(() => { WebAssembly.validate = () => false; });
  await p2.goto(base);
  assert.equal(await settled(p2), 'error');
  assert.match(await p2.textContent('.notice.error'), /lacks WebAssembly SIMD/);
  await p2.close();
});

scenario('offline after exactly one visit: the service worker and the cached bundle draw the view', async ({ page, base, srv, context, shot }) => {
  await open(page, base, { text: 'Offline works.' });
  // The first visit must leave everything the default model needs in the
  // caches: wait until the service worker controls this page.
  await page.waitForFunction(() => !!navigator.serviceWorker.controller, null, { timeout: 30000 });
  const cached = await page.evaluate(async () => {
    const out = [];
    for (const name of await caches.keys()) for (const req of await (await caches.open(name)).keys()) out.push(new URL(req.url).pathname);
    return out;
  });
  for (const re of [/^\/index\.html$/, /^\/models\/index\.json$/, /^\/wasm\/bertlens(-relaxed)?\.[0-9a-f]{10}\.wasm$/, /^\/wasm\/bertlens(-relaxed)?\.[0-9a-f]{10}\.js$/,
    /^\/js\/worker\.[0-9a-f]{10}\.js$/, /^\/js\/app\.[0-9a-f]{10}\.js$/, /^\/vendor\/d3\.[0-9a-f]{10}\.min\.js$/, /^\/css\/app\.[0-9a-f]{10}\.css$/,
    new RegExp(`^/models/${DEF_FILE('[0-9a-f]{12}')}$`)]) {
    assert.ok(cached.some((p) => re.test(p)), `cached after one visit: ${re} (${cached.join(' ')})`);
  }
  // Fetching the one-file page through the service worker (a download) must
  // not replace the stored app page.
  const other = await context.newPage();
  await Promise.all([other.waitForEvent('download'), other.goto(`${base}bertlens.html`).catch(() => {})]);
  await other.close();
  const online = srv.requests.length;
  // Offline twice over: the browser's own switch, and no server at all.
  await context.setOffline(true);
  await srv.close();
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await page.reload();
  await ready(page);
  assert.deepEqual((await texts(page, '.row-label')).slice(-3), ['works', '.', '[SEP]']);
  assert.ok(await canvasColours(page, 'canvas.hm-cells') > 5, 'heatmap drawn offline');
  assert.match(await page.textContent('#model-info'), /6 layers × 12 heads/);
  assert.equal(srv.requests.length, online, 'nothing reached the server while offline');
  await shot(page, 'offline-reload');
});

// Download and storage errors: a sentence anyone understands and what to
// do, the browser's own words in small print; the page stays usable.
const bundleGz = () => fs.readFileSync(DEFAULT_GZ);
async function downloadError(page, base, { message, detail, shotName }) {
  await page.goto(base);
  assert.equal(await settled(page), 'error');
  const text = await page.$eval('.notice.error .msg', (el) => el.firstChild.textContent);
  assert.match(text, message);
  if (detail) assert.match(await page.textContent('.notice.error .msg small.detail'), detail);
  assert.equal(await page.isVisible('#progress'), false);
  assert.ok(await page.isEnabled('#open-file'), 'a local bundle can still be opened');
  if (shotName) await page.screenshot({ path: path.join(SHOTS, `${shotName}.png`), fullPage: true });
}
const RESOURCE_ERRORS = /Failed to load resource|ERR_CONNECTION_RESET|ERR_INTERNET_DISCONNECTED/;

scenario('download error: connection reset says the connection failed', async ({ page, base }) => {
  await page.route('**/models/*.blb.gz', (r) => r.abort('connectionreset'));
  await downloadError(page, base, {
    message: new RegExp(`^Could not download the model ${DEF_NAME} \\(${DEF_MB} MB\\): the connection to the server failed\\. Check the internet connection and reload the page\\.$`),
    detail: /Failed to fetch/,
  });
}, { allowConsoleErrors: RESOURCE_ERRORS });

scenario('download error: offline with no stored model says so and what to do', async ({ page, base, context }) => {
  await page.route('**/models/*.blb.gz', async (r) => {
    await context.setOffline(true);
    await r.abort('internetdisconnected');
  });
  await downloadError(page, base, {
    message: /this device is offline and the model is not stored in this browser yet\. Connect to the internet and reload the page; after one complete visit bertlens also works offline\./,
    shotName: 'error-offline',
  });
}, { allowConsoleErrors: RESOURCE_ERRORS });

scenario('download error: HTTP 404 for the bundle says the server does not have it', async ({ page, base }) => {
  await page.route('**/models/*.blb.gz', (r) => r.fulfill({ status: 404, contentType: 'text/plain', body: 'not found' }));
  await downloadError(page, base, {
    message: new RegExp(`^The server does not have the model ${DEF_NAME} \\(it answered “not found”\\)\\. .*reload the page in a minute`),
    detail: new RegExp(`^HTTP 404 for http://127\\.0\\.0\\.1:\\d+/models/${DEF_FILE('[0-9a-f]{12}')}$`),
    shotName: 'error-404',
  });
}, { allowConsoleErrors: RESOURCE_ERRORS });

scenario('download error: HTTP 500 says the server had a problem', async ({ page, base }) => {
  await page.route('**/models/*.blb.gz', (r) => r.fulfill({ status: 500, contentType: 'text/plain', body: 'oops' }));
  await downloadError(page, base, { message: /^The server had a problem sending the model .*usually temporary/, detail: /HTTP 500/ });
}, { allowConsoleErrors: RESOURCE_ERRORS });

scenario('download error: a changed byte fails the SHA-256 check and the bundle is not used', async ({ page, base }) => {
  const bad = Buffer.from(bundleGz());
  bad[bad.length >> 1] ^= 0x01;
  await page.route('**/models/*.blb.gz', (r) => r.fulfill({ status: 200, contentType: 'application/octet-stream', body: bad }));
  await downloadError(page, base, {
    message: new RegExp(`^The model ${DEF_NAME} arrived damaged \\(its contents differ from what this site lists\\), so it was not used\\. Reload the page`),
    detail: /^SHA-256 [0-9a-f]{64}, models\/index\.json lists [0-9a-f]{64}$/,
    shotName: 'error-damaged',
  });
});

scenario('download error: a download cut short says it stopped before it was complete', async ({ page, base }) => {
  const gz = bundleGz();
  await page.route('**/models/*.blb.gz', (r) => r.fulfill({ status: 200, contentType: 'application/octet-stream', body: gz.subarray(0, 1 << 20) }));
  await downloadError(page, base, { message: new RegExp(`stopped before it was complete \\(1\\.0 MB of ${DEF_MB} MB\\)\\. Reload the page`), detail: new RegExp(`^1048576 of ${gz.length} bytes$`) });
});

scenario('download error: damaged gzip from a list without checksums says it could not be unpacked', async ({ page, base }) => {
  const gz = bundleGz();
  await page.route('**/models/index.json', async (r) => {
    const res = await r.fetch();
    const index = await res.json();
    for (const m of index.models) { delete m.sha256; delete m.bytes; }
    await r.fulfill({ response: res, json: index });
  });
  await page.route('**/models/*.blb.gz', (r) => r.fulfill({ status: 200, contentType: 'application/octet-stream', body: gz.subarray(0, 200000) }));
  await downloadError(page, base, { message: new RegExp(`^The model ${DEF_NAME} arrived damaged \\(it could not be unpacked\\)`), detail: /^gzip: / });
});

scenario('after a failed download the picker lists every model and switching to the other one works', async ({ page, base, context, shot }) => {
  // context.route: the service worker's requests too (it controls the page after the first load).
  await context.route(`**/models/${DEFAULT_MODEL.file.replace(/\.blb\.gz$/, '.*.blb.gz')}`, (r) => r.fulfill({ status: 404, contentType: 'text/plain', body: 'not found' }));
  await page.goto(`${base}?text=${encodeURIComponent('Pick another model.')}`);
  assert.equal(await settled(page), 'error');
  assert.match(await page.textContent('.notice.error'), new RegExp(`does not have the model ${DEF_NAME}`));
  const options = () => page.$$eval('#model-select option', (os) => os.map((o) => [o.value, o.textContent]));
  const listed = await options();
  assert.deepEqual(listed.map((o) => o[0]), ['', ...LISTED]);
  assert.match(listed[0][1], /No model loaded/);
  assert.equal(await page.$eval('#model-select', (s) => s.value), '');
  assert.ok(await page.isEnabled('#model-select'));
  await shot(page, 'failed-load-picker');
  // The other listed model loads and draws.
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await page.selectOption('#model-select', 'minilm-l6-f16');
  await ready(page);
  assert.match(await page.textContent('#model-info'), /all-MiniLM-L6-v2 \(f16, exact\) · 6 layers × 12 heads.*weights f16/);
  assert.deepEqual((await texts(page, '.row-label')).slice(1, 4), ['pick', 'another', 'model']);
  assert.deepEqual((await options()).map((o) => o[0]), LISTED);
  assert.equal(await page.$eval('#model-select', (s) => s.value), 'minilm-l6-f16');
  // A second failure keeps the model in use, and the picker says so.
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await page.selectOption('#model-select', DEFAULT_MODEL.id);
  assert.equal(await settled(page), 'error');
  assert.equal(await page.$eval('#model-select', (s) => s.value), 'minilm-l6-f16');
  // Once the server has the file again, picking it loads it.
  await context.unroute(`**/models/${DEFAULT_MODEL.file.replace(/\.blb\.gz$/, '.*.blb.gz')}`);
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await page.selectOption('#model-select', DEFAULT_MODEL.id);
  await ready(page);
  assert.match(await page.textContent('#model-info'), new RegExp(`weights ${DEFAULT_MODEL.dtype}`));
}, { allowConsoleErrors: RESOURCE_ERRORS });

scenario('storage refused: the model still loads, with a note that it will be downloaded again next time', async ({ page, base, shot }) => {
  await page.addInitScript(() => {
    if (window.caches) caches.open = () => Promise.reject(new DOMException('An attempt was made to break through the security policy of the user agent.', 'SecurityError'));
  });
  await open(page, base);
  const note = await page.textContent('.notice.info .msg');
  assert.match(note, /does not let this page keep the model .* so it will be downloaded again next time\./);
  assert.match(await page.textContent('.notice.info small.detail'), /security policy/);
  assert.ok(await canvasColours(page, 'canvas.hm-cells') > 5, 'the heatmap is drawn all the same');
  await shot(page, 'storage-refused');
});

scenario('two listed models: switch with the picker and with ?model=', async ({ context, shot }) => {
  // A copy of dist/ whose index lists the published default bundle and a q4
  // bundle gzipped here (dist/ and models/index.json stay untouched).
  const q4Plain = path.join(ROOT, 'build', 'models', 'all-minilm-l6-v2.q4.blb');
  assert.ok(fs.existsSync(q4Plain), `${path.relative(ROOT, q4Plain)} is missing: run \`make test-models\``);
  const site = fs.mkdtempSync(path.join(os.tmpdir(), 'bertlens-two-models-'));
  let srv2 = null;
  try {
    // (not the one-file page, tens of MB: nobody opens it here)
    fs.cpSync(DIST, site, { recursive: true, filter: (f) => !f.endsWith(`${path.sep}bertlens.html`) });
    const gz = zlib.gzipSync(fs.readFileSync(q4Plain), { level: 6 });
    fs.writeFileSync(path.join(site, 'models', 'all-minilm-l6-v2.q4.blb.gz'), gz);
    const index = JSON.parse(fs.readFileSync(path.join(DIST, 'models', 'index.json'), 'utf8'));
    const def = index.models.find((m) => m.default);
    index.models = [def, {
      ...def, id: 'minilm-l6-q4', name: 'all-MiniLM-L6-v2 (q4)', file: 'all-minilm-l6-v2.q4.blb.gz', dtype: 'q4',
      bytes: gz.length, sha256: createHash('sha256').update(gz).digest('hex'), default: false,
    }];
    fs.writeFileSync(path.join(site, 'models', 'index.json'), JSON.stringify(index, null, 2));
    srv2 = await serve(site, { csp: cspFromNetlify(ROOT) });
    const cellsHash = (p) => p.$eval('canvas.hm-cells', (c) => c.toDataURL());
    const text = 'Two models read the same sentence.';

    const p2 = await context.newPage();
    await p2.goto(`${srv2.url}?text=${encodeURIComponent(text)}&layer=1&head=3`);
    await ready(p2);
    assert.deepEqual(await p2.$$eval('#model-select option', (os) => os.map((o) => o.value)), [DEFAULT_MODEL.id, 'minilm-l6-q4']);
    assert.match(await p2.textContent('#model-info'), new RegExp(`${DEF_NAME}.*weights ${DEFAULT_MODEL.dtype}`));
    const labels = await texts(p2, '.row-label');
    const defCells = await cellsHash(p2);
    // Picker -> q4: downloads with progress, reloads, redraws, keeps text and view.
    await p2.evaluate(() => { document.body.dataset.state = 'loading'; });
    await p2.selectOption('#model-select', 'minilm-l6-q4');
    await ready(p2);
    assert.match(await p2.textContent('#model-info'), /all-MiniLM-L6-v2 \(q4\) · 6 layers × 12 heads, hidden 384 · weights q4/);
    assert.equal(await p2.inputValue('#text-a'), text);
    assert.deepEqual(await texts(p2, '.row-label'), labels);
    assert.match(await p2.textContent('.view-title'), /Heatmap — layer 1, head 3/);
    assert.notEqual(await cellsHash(p2), defCells, 'the heatmap is redrawn from the q4 model');
    assert.match(p2.url(), /[?&]model=minilm-l6-q4(&|$)/);
    await p2.click('#copy-link');
    const link = await p2.inputValue('#share-text');
    assert.match(link, /[?&]model=minilm-l6-q4(&|$)/);
    await shot(p2, 'two-models-q4');
    // Back to the default with the picker, in another view. The window resizes just
    // before (a redraw for the resize must not end the model switch early).
    await clickAndRedraw(p2, '#view-tabs [data-view="head"]');
    await p2.setViewportSize({ width: 1200, height: 900 });
    await p2.evaluate(() => { document.body.dataset.state = 'loading'; });
    await p2.selectOption('#model-select', DEFAULT_MODEL.id);
    await ready(p2);
    assert.match(await p2.textContent('#model-info'), new RegExp(`weights ${DEFAULT_MODEL.dtype}`));
    assert.deepEqual(await texts(p2, '.hv-stage g.left text'), labels);
    assert.match(p2.url(), new RegExp(`[?&]model=${DEFAULT_MODEL.id}(&|$)`));
    await p2.close();

    // The permalink opens the q4 model directly, the same drawing as before.
    const p3 = await context.newPage();
    await p3.goto(link);
    await ready(p3);
    assert.equal(await p3.$eval('#model-select', (s) => s.value), 'minilm-l6-q4');
    assert.match(await p3.textContent('#model-info'), /weights q4/);
    assert.equal(await p3.inputValue('#text-a'), text);
    assert.deepEqual(await texts(p3, '.row-label'), labels);
    // And a hand-written ?model= link.
    await p3.goto(`${srv2.url}?model=minilm-l6-q4&view=model&text=${encodeURIComponent(text)}`);
    await ready(p3);
    assert.match(await p3.textContent('#model-info'), /weights q4/);
    assert.ok(await canvasColours(p3, 'canvas.mv-thumbs') > 20);
    assert.equal(await p3.textContent('#notices'), '', 'no notice for a listed model id');
    await p3.close();
  } finally {
    if (srv2) await srv2.close();
    fs.rmSync(site, { recursive: true, force: true });
  }
});

scenario('one-file page: dist/bertlens.html from file:// with all network blocked draws the view', async ({ page, shot }) => {
  const url = pathToFileURL(path.join(DIST, 'bertlens.html')).href;
  await recordProgress(page);
  await page.goto(url);
  await ready(page);
  const progress = await page.evaluate(() => window.__progress);
  assert.ok(progress.some((t) => new RegExp(`^Unpacking ${DEF_NAME}, built into this page: .*\\(100%\\)$`).test(t)), progress.join(' | '));
  assert.match(await page.textContent('#model-info'), /6 layers × 12 heads/);
  assert.ok((await page.$$('.row-label')).length > 3);
  assert.ok(await canvasColours(page, 'canvas.hm-cells') > 5, 'heatmap canvas is drawn');
  const files = await page.evaluate(() => performance.getEntriesByType('resource').map((r) => r.name).filter((n) => !/^(data|blob):/.test(n)));
  assert.deepEqual(files, [], 'the page reads no other file');
  await shot(page, 'one-file');
  // URL parameters work there too: the pair from the Hugging Face reference.
  await page.goto(`${url}?${new URLSearchParams({ text: fx.text, text_b: fx.text_b, layer: 1, head: 'mean' })}`);
  await ready(page);
  assert.deepEqual(await texts(page, '.row-label'), fx.tokens);
  assert.match(await page.textContent('.view-title'), /layer 1, mean of heads/);
  await shot(page, 'one-file-head');
  // "Download HTML" works from file:// too (the viewer is built into the
  // page): the standalone file opens from disk and draws the same tokens.
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#export-html')]);
  assert.equal(await page.$('.notice.error'), null, 'no export error');
  const html = fs.readFileSync(await dl.path(), 'utf8');
  assert.ok(html.includes('id="bertlens-snapshot"'));
  assert.ok(!html.includes('id="bertlens-engine-wasm"') && !html.includes('id="bertlens-viewer"'), 'no engine or model in the standalone file');
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'bertlens-onefile-export-')), 'standalone.html');
  fs.writeFileSync(file, html);
  const p2 = await page.context().newPage();
  await p2.goto(pathToFileURL(file).href);
  await ready(p2);
  assert.deepEqual(await texts(p2, '.row-label'), fx.tokens);
  assert.match(await p2.textContent('#token-info'), /drawn from the snapshot's 8-bit numbers/);
  await shot(p2, 'one-file-standalone-export');
  await p2.close();
  fs.rmSync(path.dirname(file), { recursive: true, force: true });
}, { network: 'none' });

scenario('dist/index.html opened from file:// says what to do instead of a dead page', async ({ page, shot }) => {
  await page.goto(pathToFileURL(path.join(DIST, 'index.html')).href);
  assert.equal(await settled(page, 10000), 'error');
  const msg = await page.textContent('.notice.error');
  assert.match(msg, /opened as a file/);
  assert.match(msg, /bertlens\.html/);
  assert.match(msg, /make serve/);
  assert.equal(await page.getAttribute('.notice.error a', 'href'), 'bertlens.html');
  await shot(page, 'index-from-file');
}, { network: 'none', allowConsoleErrors: /CORS|ERR_FAILED|Failed to load module/ });

scenario('the published bertlens.html is a download, not a page the site CSP would break', async ({ page, base, srv }) => {
  const [dl] = await Promise.all([page.waitForEvent('download'), page.goto(`${base}bertlens.html`).catch(() => {})]);
  assert.equal(dl.suggestedFilename(), 'bertlens.html');
  assert.equal(fs.statSync(await dl.path()).size, fs.statSync(path.join(DIST, 'bertlens.html')).size);
  assert.deepEqual(srv.requests, ['/bertlens.html']);
});
