// The two local servers (tests/browser/server.mjs for the tests, tools/serve.py
// for `make serve`) send the headers netlify.toml gives each path, so what
// passes here behaves the same when published.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve, netlifyHeaders, headersFor } from '../browser/server.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const PATHS = ['/', '/index.html', '/sw.js', '/bertlens.html', '/viewer.html', '/models/index.json',
  '/models/m.0123456789ab.blb.gz', '/js/app.0123456789.js', '/wasm/bertlens.0123456789.wasm', '/css/app.0123456789.css'];
const NAMES = ['content-security-policy', 'cache-control', 'content-disposition', 'content-type', 'x-content-type-options',
  'cross-origin-opener-policy', 'cross-origin-embedder-policy'];

function site() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bertlens-serve-'));
  for (const p of PATHS) {
    const f = path.join(dir, p === '/' ? 'index.html' : p);
    fs.mkdirSync(path.dirname(f), { recursive: true });
    fs.writeFileSync(f, 'x');
  }
  return dir;
}

async function headersOf(base) {
  const out = {};
  for (const p of PATHS) {
    const res = await fetch(new URL(p.slice(1), base));
    assert.equal(res.status, 200, p);
    out[p] = Object.fromEntries(NAMES.map((n) => [n, (res.headers.get(n) || '').replace(/;\s*charset=utf-8$/i, '')]));
  }
  return out;
}

test('netlify.toml rules: site CSP everywhere, one-file pages as downloads, immutable hashed files', () => {
  const rules = netlifyHeaders(ROOT);
  const h = (p) => headersFor(rules, p);
  for (const p of PATHS) assert.match(h(p)['Content-Security-Policy'], /script-src 'self' 'wasm-unsafe-eval'/, p);
  assert.equal(h('/bertlens.html')['Content-Disposition'], 'attachment; filename=bertlens.html');
  assert.equal(h('/index.html')['Content-Disposition'], undefined);
  assert.equal(h('/wasm/bertlens.0123456789.wasm')['Content-Type'], 'application/wasm');
  assert.match(h('/js/app.0123456789.js')['Cache-Control'], /immutable/);
  assert.equal(h('/models/index.json')['Cache-Control'], 'no-cache');
  assert.equal(h('/models/m.0123456789ab.blb.gz')['Content-Encoding'], undefined, 'bundles keep their gzip bytes');
  // cross-origin isolation (the threaded engine) for the page and what it loads
  for (const p of PATHS) {
    assert.equal(h(p)['Cross-Origin-Opener-Policy'], 'same-origin', p);
    assert.equal(h(p)['Cross-Origin-Embedder-Policy'], 'require-corp', p);
  }
});

test('tools/serve.py and tests/browser/server.mjs send the same headers', async (t) => {
  const dir = site();
  const node = await serve(dir, { netlify: netlifyHeaders(ROOT) });
  const port = 20000 + (process.pid % 20000);
  const py = spawn('python3', [path.join(ROOT, 'tools', 'serve.py'), dir, String(port)], { stdio: ['ignore', 'pipe', 'pipe'] });
  t.after(async () => {
    py.kill();
    await node.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  await new Promise((resolve, reject) => {
    py.stdout.on('data', (d) => { if (/serving/.test(String(d))) resolve(); });
    py.on('exit', (code) => reject(new Error(`serve.py exited with ${code}`)));
  });
  const fromNode = await headersOf(node.url);
  const fromPy = await headersOf(`http://127.0.0.1:${port}/`);
  assert.deepEqual(fromPy, fromNode);
  assert.equal(fromNode['/bertlens.html']['content-disposition'], 'attachment; filename=bertlens.html');
  assert.equal(fromNode['/wasm/bertlens.0123456789.wasm']['content-type'], 'application/wasm');
  assert.equal(fromPy['/']['cross-origin-embedder-policy'], 'require-corp');
  assert.equal(fromPy['/index.html']['cross-origin-opener-policy'], 'same-origin');
});
