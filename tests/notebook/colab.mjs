#!/usr/bin/env node
// colab.mjs — Colab as a front end for a show() output, imitated from its
// documented output API (no Colab here: no network). run_notebook.py runs a
// cell with a stand-in google.colab module in the kernel, so show() takes its
// Colab path, writes the output's HTML as it arrives and starts this:
//
//   - a host page (http://127.0.0.1:S) shows the output in an iframe of
//     another origin (http://localhost:S), as Colab shows each output in a
//     frame of its own: the output's HTML alone, no other output's page;
//   - that frame has a google.colab shim: kernel.proxyPort(port, {cache})
//     resolves to the URL of a small reverse proxy (another local port) that
//     forwards requests unchanged to the kernel's 127.0.0.1:port, as Colab's
//     proxy reaches the runtime's ports; output.setIframeHeight(h) sizes the
//     host's iframe;
//   - every request to the kernel's own port is aborted (the browser cannot
//     reach a Colab runtime's 127.0.0.1), and every one off this machine.
//
// Passes when the output is 'ready' with the expected tokens shown, the model
// came through the proxy, the page's snapshot went back through it to the
// kernel (204: run_notebook.py then finds it in the cell's second output), and
// the host's frame was sized to the output; then again through a proxy that
// answers CORS itself with '*' (the loader's requests carry the proxy's
// cookies first, then none). Writes DIR/FILE.html.done at its end: the
// notebook's last cell waits for it, keeping the kernel (and its server) up
// as a user's would be. Screenshot: SHOT.
//
//   node tests/notebook/colab.mjs DIR FILE.html SHOT.png TOKENS_JSON
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { serve, launchChromium } from '../browser/server.mjs';

const [dir, file, shot, tokensJson] = process.argv.slice(2);
const tokens = JSON.parse(tokensJson);
const output = fs.readFileSync(path.join(dir, file), 'utf8');
const cfg = JSON.parse(/var cfg = (\{.*?\});\n/.exec(output)[1]);
const kernelPort = cfg.live.colab.port;

/** Colab's proxy to the runtime, imitated: forwards every request as it came
 *  (method, path, headers: Host and Origin are the browser's) to 127.0.0.1:port.
 *  With corsStar, it answers CORS itself as some proxies do (Allow-Origin *,
 *  which a browser refuses for a request with cookies). */
function reverseProxy(port, { corsStar = false } = {}) {
  const log = [];
  const server = http.createServer((req, res) => {
    const up = http.request({ host: '127.0.0.1', port, method: req.method, path: req.url, headers: req.headers }, (r) => {
      log.push(`${req.method} ${req.url.split('/').slice(2).join('/')} ${r.statusCode}`); // (the secret path left out)
      const headers = { ...r.headers };
      if (corsStar) {
        headers['access-control-allow-origin'] = '*';
        delete headers['access-control-allow-credentials'];
      }
      res.writeHead(r.statusCode, headers);
      r.pipe(res);
    });
    up.on('error', (e) => { log.push(`${req.method} ${req.url} ${e.message}`); res.writeHead(502); res.end(); });
    req.pipe(up);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({
    url: `http://localhost:${server.address().port}/`, log,
    close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }),
  })));
}

/** The output frame (Colab's JS API for outputs as documented:
 *  google.colab.kernel.proxyPort, google.colab.output.setIframeHeight, then
 *  the output's HTML) and a host page showing it from another origin. */
function writePages(srv, proxy, tag) {
  const shim = `window.google = { colab: {
  kernel: { accessAllowed: true, proxyPort: function (port, opts) {
    window.__proxyCalls = (window.__proxyCalls || []).concat([[port, opts]]);
    return port === ${kernelPort} ? Promise.resolve(${JSON.stringify(proxy.url)}) : Promise.reject(new Error('no server on port ' + port));
  } },
  output: { setIframeHeight: function (h, autoResize, opts) {
    window.parent.postMessage({ colabHeight: Number(h), autoResize: !!autoResize, maxHeight: opts && opts.maxHeight }, '*');
  } } } };`;
  const frameFile = file.replace(/\.html$/, `-${tag}-frame.html`);
  fs.writeFileSync(path.join(dir, frameFile), `<!doctype html><html><head><meta charset=utf-8><script>${shim}</script></head><body>${output}</body></html>`);
  const hostFile = file.replace(/\.html$/, `-${tag}-host.html`);
  const frameUrl = srv.url.replace('127.0.0.1', 'localhost') + frameFile;
  fs.writeFileSync(path.join(dir, hostFile), `<!doctype html><html><head><meta charset=utf-8></head><body style="margin:0">
<iframe id="out" src="${frameUrl}" style="width:100%;height:150px;border:0;display:block"></iframe>
<script>
window.heights = [];
addEventListener('message', function (e) {
  var f = document.getElementById('out');
  if (e.source !== f.contentWindow || !e.data || typeof e.data.colabHeight !== 'number') return;
  window.heights.push(e.data.colabHeight);
  f.style.height = Math.min(e.data.colabHeight, e.data.maxHeight || Infinity) + 'px';
});
</script></body></html>`);
  return `${srv.url}${hostFile}`;
}

/** Open the host page; the output must draw through the proxy and send its
 *  snapshot back through it. Returns what was shown. */
async function drawThrough(page, hostUrl, proxy) {
  const kept = page.waitForResponse((r) => r.url().startsWith(proxy.url) && r.url().includes('/snapshot/') && r.status() === 204, { timeout: 120000 });
  kept.catch(() => {});
  await page.goto(hostUrl);
  const out = await (await page.$('#out')).contentFrame();
  await out.waitForFunction(() => ['ready', 'error'].includes(document.querySelector('.bertlens-output')?.dataset.state), null, { timeout: 120000 });
  const state = await out.$eval('.bertlens-output', (e) => `${e.dataset.state} ${e.querySelector('.bertlens-note').textContent}`);
  console.log(`colab: ${hostUrl.split('/').pop()}: ${state}`);
  assert.ok(state.startsWith('ready'), `the output: ${state}`);
  await kept;
  const inner = await (await out.$('.bertlens-output iframe')).contentFrame();
  const shown = await inner.evaluate(() => ({
    view: document.getElementById('view').dataset.view,
    text: document.getElementById('view').textContent,
    tokenInfo: document.getElementById('token-info').textContent,
  }));
  assert.match(shown.tokenInfo, new RegExp(`^${tokens.length} tokens`), shown.tokenInfo);
  for (const t of tokens) assert.ok(shown.text.includes(t.replace(/^##/, '')), `token ${JSON.stringify(t)} not shown (${shown.view} view)`);
  const calls = await out.evaluate(() => window.__proxyCalls);
  assert.deepEqual(calls, [[kernelPort, { cache: false }]], 'proxyPort asked once for the kernel server\'s port, not cached in the notebook');
  assert.ok(proxy.log.some((l) => /^GET model\/[0-9a-f]+\/\S+ 200$/.test(l)), `the model came through the proxy: ${proxy.log.join('; ')}`);
  assert.ok(proxy.log.some((l) => /^POST snapshot\/bertlens-[0-9a-f]+ 204$/.test(l)), `the snapshot went back through it: ${proxy.log.join('; ')}`);
  // the host's frame follows the output (setIframeHeight)
  const outH = await out.evaluate(() => document.querySelector('.bertlens-output').getBoundingClientRect().height);
  await page.waitForFunction((h) => document.getElementById('out').getBoundingClientRect().height >= h - 4, outH, { timeout: 10000 }).catch(() => {});
  const fit = await page.evaluate(() => ({ heights: window.heights, frame: document.getElementById('out').getBoundingClientRect().height }));
  assert.ok(fit.heights.length > 0 && fit.frame >= outH - 4 && outH > 300, `Colab's frame ${fit.frame} px for an output of ${outH} px (asked: ${fit.heights.join(', ')})`);
  console.log(`colab: ${shown.view} view ready through the proxy, ${tokens.length} tokens shown; proxy: ${proxy.log.join('; ')}; frame ${Math.round(fit.frame)} px`);
  return shown;
}

const proxy = await reverseProxy(kernelPort);
const starProxy = await reverseProxy(kernelPort, { corsStar: true });
const srv = await serve(path.resolve(dir));
const { context, profile } = await launchChromium({ viewport: { width: 1100, height: 900 } });
let code = 1;
const blocked = [];
const outside = [];
try {
  await context.route('**/*', (route) => {
    const u = new URL(route.request().url());
    if (!/^https?:$/.test(u.protocol)) return route.continue();
    if (u.hostname !== '127.0.0.1' && u.hostname !== 'localhost') { outside.push(u.href); return route.abort(); }
    if (Number(u.port) === kernelPort) { blocked.push(u.pathname.split('/').slice(2).join('/')); return route.abort(); }
    return route.continue();
  });
  const page = context.pages()[0] || await context.newPage();
  page.on('pageerror', (e) => console.error(`colab: pageerror ${e.message}`));
  await drawThrough(page, writePages(srv, proxy, 'a'), proxy);
  fs.mkdirSync(path.dirname(shot), { recursive: true });
  await page.screenshot({ path: shot, fullPage: true });
  // A proxy that answers CORS itself ('*'): the request with cookies is
  // refused by the browser, the one without them passes.
  await drawThrough(page, writePages(srv, starProxy, 'b'), starProxy);
  assert.ok(starProxy.log.filter((l) => l.startsWith('GET model/')).length === 2, `with cookies, then without: ${starProxy.log.join('; ')}`);
  assert.deepEqual(blocked, [], 'no request to the kernel\'s own 127.0.0.1 port');
  assert.deepEqual(outside, [], 'no request off this machine');
  code = 0;
} catch (e) {
  console.error(`colab: FAIL ${e.message}${blocked.length ? `; blocked (kernel port): ${blocked.join(' ')}` : ''}`);
  try { await context.pages()[0]?.screenshot({ path: shot, fullPage: true }); } catch { /* (closed) */ }
} finally {
  await context.close().catch(() => {});
  await srv.close();
  await proxy.close();
  await starProxy.close();
  fs.rmSync(profile, { recursive: true, force: true });
  fs.writeFileSync(path.join(dir, `${file}.done`), String(code)); // (the notebook's last cell waits for it)
}
process.exit(code);
