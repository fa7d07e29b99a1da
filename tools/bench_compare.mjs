#!/usr/bin/env node
// bench_compare.mjs — what a head-ablation click costs (issue 12 target:
// recompute after a click <= 100 ms at 32 tokens). Two measurements:
//
//   wasm (Node)  the work of one click, in the same process as its peer: set
//                the mask, one forward of 32 tokens (q8 bundle, the
//                page's flags), the sentence embedding, and the 72 heads
//                compared in C (blw_head_compare), against a plain forward;
//                alternating, median of N
//   page         headless Chromium on dist/ (localhost): click on a
//                thumbnail in the model view's "Switch heads off" mode ->
//                ablation line and view redrawn (the page's state 'ready'),
//                32-token sentence and a 16 + 16-token pair (a pair also
//                re-embeds its two sentences alone: three forwards)
//
//   model view   the same page at 512 tokens (the model's limit): what the
//   at 512       model view's redraw costs (body data-render-ms) after an
//                ablation click (new run: every thumbnail pooled again),
//                after "hide [CLS]/[SEP]" (same run, another axis: pooled
//                again), and after a window resize (same thumbnails, new
//                size: painted from the view's cache)
//
// Usage: node tools/bench_compare.mjs [--runs N] [--wasm build/wasm/bertlens.js] [--only page|model512]
// Called by tools/bench.mjs (make bench) as a child script.

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createModule, loadBundle, putString } from './wasm_node.mjs';
import { serve, cspFromNetlify, launchChromium } from '../tests/browser/server.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const opt = (name, def) => { const i = argv.indexOf(name); return i >= 0 ? argv[i + 1] : def; };
const RUNS = Number(opt('--runs', '15'));
const WASM_JS = path.resolve(opt('--wasm', path.join(ROOT, 'build/wasm/bertlens.js')));
const Q8 = path.join(ROOT, 'models/all-minilm-l6-v2.q8.blb.gz');
// 30 words -> 32 tokens with [CLS] and [SEP] (the page bench's sentence).
const TEXT32 = 'the quick brown fox jumps over the lazy dog while the small cat sleeps on a warm mat near the door and the old man reads his book in the';
const PAIR = ['the quick brown fox jumps over the lazy dog while the small cat sleeps on a', 'warm mat near the door and the old man reads his book in the garden'];

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
const f1 = (x) => x.toFixed(1);

// ------------------------------------------------------------ wasm in Node
async function wasmBench() {
  const M = await createModule(WASM_JS, { print: () => {}, printErr: () => {} });
  loadBundle(M, Q8);
  const L = 6; const H = 12;
  const p = putString(M, TEXT32);
  const mask = M._malloc(L * H);
  const out = M._malloc(L * H * 8);
  let T = M._blw_run(p, 0, 1, -1);
  if (T !== 32) throw new Error(`expected 32 tokens, got ${T}`);
  const base = M._malloc(L * H * T * T * 4); // the unmasked run's attention (the page keeps it)
  for (let l = 0; l < L; l++) M.HEAPF32.copyWithin((base >> 2) + l * H * T * T, M._blw_attention(l) >> 2, (M._blw_attention(l) >> 2) + H * T * T);
  const plain = () => { M._blw_set_head_mask(0); M._blw_run(p, 0, 1, -1); };
  const click = (k) => {
    M.HEAPU8.fill(0, mask, mask + L * H);
    M.HEAPU8[mask + (k % (L * H))] = 1;
    M._blw_set_head_mask(mask);
    T = M._blw_run(p, 0, 1, -1);
    M._blw_embedding();
    for (let l = 0; l < L; l++) M._blw_head_compare(base + l * H * T * T * 4, T * T, M._blw_attention(l), H, T, out + l * H * 8);
  };
  for (let i = 0; i < 3; i++) { plain(); click(i); }
  const a = []; const b = [];
  for (let i = 0; i < RUNS * 2; i++) {
    let t0 = performance.now(); plain(); a.push(performance.now() - t0);
    t0 = performance.now(); click(i); b.push(performance.now() - t0);
  }
  console.log(`wasm in Node, 32 tokens, q8 (median of ${RUNS * 2}, alternating):`);
  console.log(`  plain forward                                   ${f1(median(a))} ms`);
  console.log(`  click: mask + forward + embedding + 72 heads JS ${f1(median(b))} ms  (ratio ${(median(b) / median(a)).toFixed(2)})`);
}

// ------------------------------------------------------------ the page
async function pageBench() {
  const DIST = path.join(ROOT, 'dist');
  if (!fs.existsSync(path.join(DIST, 'index.html'))) { console.log('page: skipped (dist/ is missing: make site)'); return; }
  const srv = await serve(DIST, { csp: cspFromNetlify(ROOT) });
  const { context, profile } = await launchChromium({ viewport: { width: 1280, height: 900 } });
  await context.route('**/*', (r) => (new URL(r.request().url()).hostname === '127.0.0.1' ? r.continue() : r.abort()));
  const page = await context.newPage();
  const ready = () => page.waitForFunction(() => document.body.dataset.state === 'ready', null, { timeout: 120000 });
  const rows = [];
  try {
    for (const [name, a, b] of [['sentence, 32 tokens', TEXT32, ''], ['pair, 16 + 16 tokens', PAIR[0], PAIR[1]]]) {
      await page.goto(`${srv.url}?${new URLSearchParams({ text: a, text_b: b, view: 'model', ablate: '0:0' })}`);
      await ready();
      const T = await page.evaluate(() => Number(/(\d+) tokens/.exec(document.getElementById('token-info').textContent)[1]));
      await page.click('#ablation .abl-toggle');
      // Time from the click event to the page state 'ready', both in the page.
      await page.evaluate(() => {
        document.addEventListener('click', () => { window.blT0 = performance.now(); window.blT1 = 0; }, true);
        new MutationObserver(() => { if (document.body.dataset.state === 'ready' && !window.blT1) window.blT1 = performance.now(); })
          .observe(document.body, { attributes: true, attributeFilter: ['data-state'] });
      });
      const ms = [];
      const parts = { run: [], compare: [], draw: [] }; // the page's own figures (body data-*)
      for (let i = 0; i < RUNS + 2; i++) {
        await page.$eval('rect.mv-hit', (r) => r.scrollIntoView({ block: 'center' }));
        const box = await (await page.$('rect.mv-hit')).boundingBox();
        const l = 1 + (i % 5); const h = i % 12; // toggles another head each time (0:0 stays off)
        await page.evaluate(() => { document.body.dataset.state = 'loading'; window.blT1 = 0; });
        await page.mouse.click(box.x + (h + 0.5) * (box.width / 12), box.y + (l + 0.5) * (box.height / 6));
        await ready();
        await page.waitForFunction(() => window.blT1 > 0);
        if (i < 2) continue;
        ms.push(await page.evaluate(() => window.blT1 - window.blT0));
        const d = await page.evaluate(() => ({ ...document.body.dataset }));
        parts.run.push(Number(d.runMs)); parts.compare.push(Number(d.compareMs)); parts.draw.push(Number(d.renderMs));
      }
      rows.push([`${name} (T = ${T})`, ms, parts]);
    }
  } finally {
    await context.close();
    fs.rmSync(profile, { recursive: true, force: true });
    await srv.close();
  }
  console.log(`page (headless Chromium), ablation click -> redrawn, median of ${RUNS} (min–max):`);
  for (const [name, ms, p] of rows) {
    console.log(`  ${name.padEnd(32)} ${f1(median(ms))} ms  (${f1(Math.min(...ms))}–${f1(Math.max(...ms))})`
      + `; of which worker run ${f1(median(p.run))}, comparison ${f1(median(p.compare))}, drawing ${f1(median(p.draw))}`);
  }
}

// ------------------------------------------------ the model view at 512
async function modelView512() {
  const DIST = path.join(ROOT, 'dist');
  if (!fs.existsSync(path.join(DIST, 'index.html'))) { console.log('model view at 512: skipped (dist/ is missing: make site)'); return; }
  const srv = await serve(DIST, { csp: cspFromNetlify(ROOT) });
  const { context, profile } = await launchChromium({ viewport: { width: 1280, height: 900 } });
  await context.route('**/*', (r) => (new URL(r.request().url()).hostname === '127.0.0.1' ? r.continue() : r.abort()));
  const page = await context.newPage();
  const ready = () => page.waitForFunction(() => document.body.dataset.state === 'ready' && !document.body.dataset.urlPending, null, { timeout: 120000 });
  const n = Math.max(3, Math.min(RUNS, 7));
  const rows = [];
  let T = 0;
  try {
    const long = Array.from({ length: 20 }, () => TEXT32).join(' '); // 600 words: truncated to 512 tokens
    await page.goto(`${srv.url}?${new URLSearchParams({ text: long, view: 'model', ablate: '0:0' })}`);
    await ready();
    T = await page.evaluate(() => Number(/(\d+) tokens/.exec(document.getElementById('token-info').textContent)[1]));
    const drawMs = () => page.evaluate(() => Number(document.body.dataset.renderMs));
    // Ablation click: a new run, then the redraw.
    await page.click('#ablation .abl-toggle');
    const click = { total: [], run: [], draw: [] };
    for (let i = 0; i < n + 1; i++) {
      await page.$eval('rect.mv-hit', (r) => r.scrollIntoView({ block: 'center' }));
      const box = await (await page.$('rect.mv-hit')).boundingBox();
      const l = 1 + (i % 5); const h = i % 12;
      const t0 = Date.now();
      await page.evaluate(() => { document.body.dataset.state = 'loading'; });
      await page.mouse.click(box.x + (h + 0.5) * (box.width / 12), box.y + (l + 0.5) * (box.height / 6));
      await ready();
      if (i === 0) continue;
      click.total.push(Date.now() - t0);
      click.run.push(await page.evaluate(() => Number(document.body.dataset.runMs)));
      click.draw.push(await drawMs());
    }
    await page.click('#ablation .abl-toggle');
    // Hide [CLS]/[SEP] on and off: the same run on another axis.
    const hide = [];
    for (let i = 0; i < n + 1; i++) {
      await page.evaluate(() => { document.body.dataset.state = 'loading'; });
      await page.click('#hide');
      await ready();
      if (i) hide.push(await drawMs());
    }
    // Resize: the same thumbnails at another size (the page redraws 150 ms after the last resize event).
    const resize = [];
    for (let i = 0; i < n + 1; i++) {
      await page.evaluate(() => { window.blDrawn = 0; new MutationObserver((m, o) => { window.blDrawn = 1; o.disconnect(); }).observe(document.body, { attributes: true, attributeFilter: ['data-render-ms'] }); });
      await page.setViewportSize({ width: i % 2 ? 1280 : 1180, height: 900 });
      await page.waitForFunction(() => window.blDrawn === 1, null, { timeout: 30000 });
      if (i) resize.push(await drawMs());
    }
    rows.push([`ablation click (new run)`, click.draw, `click -> redrawn ${f1(median(click.total))} ms, worker run ${f1(median(click.run))} ms`]);
    rows.push(['hide [CLS]/[SEP] (same run, new axis)', hide, '']);
    rows.push(['window resize (same thumbnails)', resize, '']);
  } finally {
    await context.close();
    fs.rmSync(profile, { recursive: true, force: true });
    await srv.close();
  }
  console.log(`model view at ${T} tokens (headless Chromium, 6 x 12 thumbnails at 1280 px), its redraw (data-render-ms), median of ${n} (min–max):`);
  for (const [name, ms, tail] of rows) console.log(`  ${name.padEnd(40)} ${f1(median(ms))} ms  (${f1(Math.min(...ms))}–${f1(Math.max(...ms))})${tail ? `; ${tail}` : ''}`);
}

const only = opt('--only', '');
if (!only) await wasmBench();
if (!only || only === 'page') await pageBench();
if (!only || only === 'model512') await modelView512();
