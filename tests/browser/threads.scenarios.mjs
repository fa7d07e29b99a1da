// threads.scenarios.mjs — the threaded engine in the page: a cross-origin
// isolated page (COOP + COEP, netlify.toml) runs the pthreads build
// (bertlens-mt) and draws exactly what the single-threaded build draws on a
// page without those headers; on a host that sends no such headers the
// service worker adds them, so the second visit runs threaded; an embed in
// another site's (non-isolated) page runs one thread.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { scenario, ready, fx, DIST, ROOT } from './harness.mjs';
import { serve, cspFromNetlify } from './server.mjs';

const PAIR = { text: fx.text, text_b: fx.text_b, head: 'mean' };

/** What the engine and the heatmap look like on this page. */
function drawn(page) {
  return page.evaluate(() => {
    const c = document.querySelector('canvas.hm-cells');
    const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let h = 2166136261; // FNV-1a of every pixel
    for (let i = 0; i < px.length; i++) h = Math.imul(h ^ px[i], 16777619) >>> 0;
    return {
      isolated: self.crossOriginIsolated,
      threads: Number(document.documentElement.dataset.engineThreads),
      cores: navigator.hardwareConcurrency,
      pixels: `${c.width}x${c.height}:${h}`,
      links: document.querySelector('details.view-alt table')?.textContent ?? '',
      labels: [...document.querySelectorAll('.row-label')].map((e) => e.textContent),
    };
  });
}

/** The mean-of-heads value the heatmap's tooltip shows for (query, key). */
async function tooltipValue(page, q, k) {
  const box = await page.$eval('rect.hm-hit', (r) => { const b = r.getBoundingClientRect(); return { x: b.x, y: b.y, w: b.width }; });
  const cell = box.w / fx.T;
  await page.mouse.move(box.x + cell * (k + 0.5), box.y + cell * (q + 0.5));
  return Number((await page.textContent('#tooltip')).match(/attention: ([0-9.]+)/)[1]);
}

scenario('threads: a cross-origin isolated page runs the pthreads build and draws what one thread draws', async ({ page, base, srv, context, shot }) => {
  await page.goto(`${base}?${new URLSearchParams(PAIR)}`);
  await ready(page);
  const mt = await drawn(page);
  assert.equal(mt.isolated, true, 'netlify.toml headers make the page cross-origin isolated');
  assert.ok(srv.requests.some((p) => /^\/wasm\/bertlens(-relaxed)?-mt\.worker\.[0-9a-f]+\.js$/.test(p)), 'pthread Workers loaded (SIMD128 or relaxed-SIMD build)');
  assert.equal(mt.threads, Math.min(mt.cores, 8), `one thread per core (${mt.cores})`);
  assert.deepEqual(mt.labels, fx.tokens);
  const shown = await tooltipValue(page, 8, 0);
  assert.ok(Math.abs(shown - fx.head_mean[0][8 * fx.T]) < 0.03, `tooltip ${shown} vs Hugging Face ${fx.head_mean[0][8 * fx.T]}`);
  await shot(page, 'threads-isolated');

  // The same page from a server without COOP/COEP: not isolated, one thread.
  const plain = await serve(DIST, { csp: cspFromNetlify(ROOT) });
  try {
    const p2 = await context.newPage();
    await p2.goto(`${plain.url}?${new URLSearchParams(PAIR)}`);
    await ready(p2);
    const st = await drawn(p2);
    assert.equal(st.isolated, false);
    assert.equal(st.threads, 1);
    assert.equal(mt.pixels, st.pixels, 'heatmap pixels identical');
    assert.ok(mt.links.length > 100);
    assert.equal(mt.links, st.links, 'strongest-links table identical');
  } finally {
    await plain.close();
  }
});

scenario('threads: on a host without COOP/COEP the service worker isolates the second visit', async ({ page, context }) => {
  const plain = await serve(DIST, { csp: cspFromNetlify(ROOT) });
  try {
    const url = `${plain.url}?${new URLSearchParams(PAIR)}`;
    await page.goto(url);
    await ready(page);
    const first = await drawn(page);
    assert.equal(first.isolated, false, 'first visit: no headers, not isolated');
    assert.equal(first.threads, 1);
    await page.waitForFunction(() => navigator.serviceWorker.controller !== null, null, { timeout: 60000 });
    await page.evaluate(() => { document.body.dataset.state = 'loading'; });
    await page.reload();
    await ready(page);
    const second = await drawn(page);
    assert.equal(second.isolated, true, 'reload: the service worker added COOP/COEP');
    assert.equal(second.threads, Math.min(second.cores, 8));
    assert.equal(second.pixels, first.pixels, 'same heatmap');
    assert.equal(second.links, first.links);
  } finally {
    await plain.close();
  }
});

scenario('threads: an embed in another site\'s page (not isolated) runs the single-threaded build', async ({ page, base }) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bertlens-host-'));
  fs.writeFileSync(path.join(dir, 'post.html'), `<!doctype html><title>post</title><p>A blog post.</p>
<iframe src="${base}?${new URLSearchParams({ ...PAIR, embed: '1' }).toString().replace(/&/g, '&amp;')}" width="720" height="560"></iframe>`);
  const blog = await serve(dir); // another origin, no COOP/COEP of its own
  try {
    await page.goto(`${blog.url}post.html`);
    const frame = await (await page.waitForSelector('iframe')).contentFrame();
    await frame.waitForFunction(() => document.body && document.body.dataset.state === 'ready', null, { timeout: 90000 });
    const got = await frame.evaluate(() => ({ isolated: self.crossOriginIsolated, threads: document.documentElement.dataset.engineThreads }));
    assert.deepEqual(got, { isolated: false, threads: '1' });
    assert.equal(await page.evaluate(() => self.crossOriginIsolated), false);
  } finally {
    await blog.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
