// relaxed.scenarios.mjs — the relaxed-SIMD engine (Makefile wasm-relaxed):
// Chromium validates relaxed SIMD, so the page's worker loads
// bertlens-relaxed-mt (cross-origin isolated) or bertlens-relaxed (not
// isolated) and draws the attention the SIMD128 build draws, within the f32
// tolerance (the fused multiply-add rounds once where mul + add rounded
// twice); a browser where relaxed SIMD does not validate never asks for a
// relaxed file (the server's request log).

import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { scenario, ready, fx, DIST, ROOT } from './harness.mjs';
import { serve, cspFromNetlify, netlifyHeaders } from './server.mjs';
import { shownHead } from './page_vs_cli.mjs';

// The exact model: f32 kernels throughout, where relaxed_madd runs.
const MODEL = 'minilm-l6-f16';
const HEADS = [[0, 0], [3, 7], [5, 11]]; // [layer, head]
const TOL = 1e-5; // TOL_F32_ATTN_MAX of tests/encoder.test.mjs
const QUERY = new URLSearchParams({ text: fx.text, text_b: fx.text_b, model: MODEL, view: 'heatmap' });

// A browser without relaxed SIMD, where WebAssembly.validate refuses a module
// with a relaxed-SIMD opcode (0xfd then 0x100..0x113 as LEB128: 0x80..0x93
// 0x02): put at the top of the engine worker's script and of the service
// worker's, the two places that test it.
const NO_RELAXED = `(() => {
  const validate = WebAssembly.validate;
  WebAssembly.validate = (b) => {
    const u = ArrayBuffer.isView(b) ? new Uint8Array(b.buffer, b.byteOffset, b.byteLength) : new Uint8Array(b);
    for (let i = 0; i + 2 < u.length; i++) if (u[i] === 0xfd && u[i + 1] >= 0x80 && u[i + 1] <= 0x93 && u[i + 2] === 0x02) return false;
    return validate(b);
  };
})();
`;

/** dist/ as a browser without relaxed SIMD sees it: a folder of links to
 *  dist/'s files but the two scripts above, patched. */
function distWithoutRelaxed() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bertlens-norelaxed-'));
  let patched = 0;
  const walk = (rel) => {
    for (const e of fs.readdirSync(path.join(DIST, rel), { withFileTypes: true })) {
      const r = path.join(rel, e.name);
      if (e.isDirectory()) {
        fs.mkdirSync(path.join(dir, r));
        walk(r);
      } else if (r === 'sw.js' || /^js\/worker\.[0-9a-f]+\.js$/.test(r)) {
        fs.writeFileSync(path.join(dir, r), NO_RELAXED + fs.readFileSync(path.join(DIST, r), 'utf8'));
        patched++;
      } else fs.symlinkSync(path.join(DIST, r), path.join(dir, r));
    }
  };
  walk('');
  assert.equal(patched, 2, 'sw.js and the engine worker patched');
  return dir;
}

const WASM = /^\/wasm\/(bertlens(?:-relaxed)?(?:-mt)?)\.[0-9a-f]+\.wasm$/;
/** The engine modules a server was asked for, by name (bertlens-relaxed-mt, ...), sorted. */
const modulesAsked = (srv) => [...new Set(srv.requests.map((p) => p.match(WASM)?.[1]).filter(Boolean))].sort();

/** Which build the page runs, its threads, and the heads' attention (JSON
 *  export); after the service worker is installed (its pre-cache fetched). */
async function seen(page) {
  const info = await page.evaluate(() => ({
    simd: document.documentElement.dataset.engineSimd,
    threads: Number(document.documentElement.dataset.engineThreads),
    isolated: self.crossOriginIsolated,
  }));
  const heads = [];
  for (const [l, h] of HEADS) heads.push(await shownHead(page, l, h));
  await page.evaluate(() => navigator.serviceWorker.ready);
  return { ...info, heads };
}

/** max |a - b| over the heads; the tokens must be the same. */
function maxDiff(a, b) {
  let mx = 0;
  a.heads.forEach((ha, i) => {
    const hb = b.heads[i];
    assert.deepEqual(ha.tokens, hb.tokens);
    assert.equal(ha.values.length, fx.T);
    ha.values.forEach((row, q) => row.forEach((v, k) => { mx = Math.max(mx, Math.abs(v - hb.values[q][k])); }));
  });
  return mx;
}

scenario('relaxed: Chromium runs the relaxed-SIMD engine and draws the SIMD128 engine\'s attention; without relaxed SIMD it never fetches it', async ({ page, base, srv, context, shot }) => {
  // 1. Relaxed SIMD validates (Chromium 114+), cross-origin isolated: the
  // relaxed pthreads module runs; the service worker pre-caches the relaxed kind.
  await page.goto(`${base}?${QUERY}`);
  await ready(page);
  const relaxedMt = await seen(page);
  assert.equal(relaxedMt.isolated, true);
  assert.equal(relaxedMt.simd, 'relaxed', '<html data-engine-simd>');
  assert.equal(relaxedMt.threads, Math.min(os.availableParallelism(), 8));
  assert.deepEqual(modulesAsked(srv), ['bertlens-relaxed', 'bertlens-relaxed-mt'], 'relaxed modules only (the page\'s and the service worker\'s pre-cache)');
  await shot(page, 'relaxed-isolated');

  // 2. The same site where relaxed SIMD does not validate (another origin: a
  // fresh service worker): the SIMD128 modules, and not one request for a relaxed file.
  const dir = distWithoutRelaxed();
  const plain = await serve(dir, { netlify: netlifyHeaders(ROOT) });
  try {
    const p2 = await context.newPage();
    await p2.goto(`${plain.url}?${QUERY}`);
    await ready(p2);
    const plainMt = await seen(p2);
    assert.equal(plainMt.isolated, true);
    assert.equal(plainMt.simd, 'simd128');
    assert.equal(plainMt.threads, relaxedMt.threads);
    assert.deepEqual(plain.requests.filter((p) => /relaxed/.test(p)), [], 'no relaxed file requested');
    assert.deepEqual(modulesAsked(plain), ['bertlens', 'bertlens-mt']);
    await shot(p2, 'relaxed-unavailable');
    const dMt = maxDiff(relaxedMt, plainMt);
    console.log(`    relaxed-mt vs simd128-mt attention, ${HEADS.length} heads x ${fx.T}x${fx.T}: max|d| ${dMt.toExponential(2)}`);
    assert.ok(dMt <= TOL, `relaxed vs plain attention max|d| ${dMt} > ${TOL}`);

    // 3. Not isolated (a server without COOP/COEP): the single-threaded relaxed module.
    const st = await serve(DIST, { csp: cspFromNetlify(ROOT) });
    try {
      const p3 = await context.newPage();
      await p3.goto(`${st.url}?${QUERY}`);
      await ready(p3);
      const relaxedSt = await seen(p3);
      assert.equal(relaxedSt.isolated, false);
      assert.equal(relaxedSt.simd, 'relaxed');
      assert.equal(relaxedSt.threads, 1);
      assert.ok(modulesAsked(st).every((m) => m.startsWith('bertlens-relaxed')), modulesAsked(st).join(' '));
      const dSt = maxDiff(relaxedSt, plainMt);
      console.log(`    relaxed (1 thread) vs simd128-mt attention: max|d| ${dSt.toExponential(2)}`);
      assert.ok(dSt <= TOL, `relaxed (1 thread) vs plain attention max|d| ${dSt} > ${TOL}`);
    } finally {
      await st.close();
    }
  } finally {
    await plain.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}, { timeout: 300000 });
