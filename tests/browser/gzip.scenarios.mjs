// gzip.scenarios.mjs — a .blb.gz cut inside its gzip trailer is refused by the
// page (issue 9). The last 8 bytes of a gzip file are its CRC-32 and length;
// byte 9 from the end is the deflate stream's last byte. The page inflates with
// Chromium's DecompressionStream through bundles.js's gunzipIfNeeded: every cut
// of 1..9 bytes must end in a DeliveryError, the whole file must inflate.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { scenario, ready, DIST } from './harness.mjs';

scenario('gzip: a bundle cut inside its trailer is refused', async ({ page, base }) => {
  await page.goto(base);
  await ready(page);
  const mod = fs.readdirSync(path.join(DIST, 'js', 'engine')).find((n) => /^bundles\.[0-9a-f]+\.js$/.test(n));
  assert.ok(mod, 'dist/js/engine/bundles.<hash>.js');
  const plain = Buffer.alloc(200000);
  for (let i = 0; i < plain.length; i++) plain[i] = (i * 2654435761) >>> 24; // not trivially compressible
  const gz = zlib.gzipSync(plain, { level: 9 });
  const results = await page.evaluate(async ({ url, gz, n }) => {
    const { gunzipIfNeeded } = await import(url);
    const out = [];
    for (let cut = 0; cut <= 9; cut++) {
      const bytes = new Uint8Array(gz.slice(0, gz.length - cut));
      try {
        const buf = await gunzipIfNeeded(bytes);
        out.push({ cut, ok: true, n: buf.byteLength });
      } catch (e) {
        out.push({ cut, ok: false, name: e.name, message: e.message, detail: e.detail });
      }
    }
    return out;
  }, { url: `${base}js/engine/${mod}`, gz: Array.from(gz), n: plain.length });
  assert.deepEqual(results[0], { cut: 0, ok: true, n: plain.length });
  for (const r of results.slice(1)) {
    assert.equal(r.ok, false, `cut ${r.cut}: accepted (${r.n} bytes)`);
    assert.equal(r.name, 'DeliveryError', `cut ${r.cut}: ${r.name} ${r.message}`);
    assert.match(r.message, /damaged or cut short/);
  }
  console.log(`    Chromium DecompressionStream on a cut trailer: ${results[1].detail}`);
});
