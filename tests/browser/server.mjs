// server.mjs — in-process static server for dist/ used by the browser tests
// and tools/bench_page.mjs. Same rules as tools/serve.py: 127.0.0.1 only,
// .wasm as application/wasm, .gz bundles as application/octet-stream with no
// Content-Encoding, and the Content-Security-Policy from netlify.toml.
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

const TYPES = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.mjs': 'text/javascript', '.css': 'text/css',
  '.json': 'application/json', '.wasm': 'application/wasm', '.svg': 'image/svg+xml', '.png': 'image/png',
  '.gz': 'application/octet-stream', '.blb': 'application/octet-stream',
};

export function cspFromNetlify(root) {
  const text = fs.readFileSync(path.join(root, 'netlify.toml'), 'utf8');
  const m = text.match(/Content-Security-Policy\s*=\s*"([^"]+)"/);
  if (!m) throw new Error('netlify.toml has no Content-Security-Policy');
  return m[1];
}

/** Start serving dir; resolves to {url, close, requests}. */
export function serve(dir, { csp = null, port = 0 } = {}) {
  const requests = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    requests.push(url.pathname);
    let rel = decodeURIComponent(url.pathname);
    if (rel.endsWith('/')) rel += 'index.html';
    const file = path.join(dir, path.normalize(rel));
    if (!file.startsWith(path.resolve(dir))) { res.writeHead(403); res.end(); return; }
    fs.stat(file, (err, st) => {
      if (err || !st.isFile()) { res.writeHead(404, { 'Content-Type': 'text/plain' }); res.end('not found'); return; }
      const headers = {
        'Content-Type': TYPES[path.extname(file)] || 'application/octet-stream',
        'Content-Length': st.size,
        'Cache-Control': 'no-cache',
        'X-Content-Type-Options': 'nosniff',
      };
      if (csp) headers['Content-Security-Policy'] = csp;
      res.writeHead(200, headers);
      fs.createReadStream(file).pipe(res);
    });
  });
  return new Promise((resolve) => {
    server.listen(port, '127.0.0.1', () => {
      const { port: p } = server.address();
      resolve({
        url: `http://127.0.0.1:${p}/`,
        requests,
        close: () => new Promise((r) => { server.closeAllConnections?.(); server.close(() => r()); }),
      });
    });
  });
}

/** Debian's Chromium ($CHROMIUM to override) headless, in a fresh profile
 *  directory, with the flags that keep it off the network. Resolves to
 *  {context, profile}; remove `profile` when done. */
export async function launchChromium(options = {}) {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'bertlens-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--no-first-run', '--disable-quic', '--disable-sync'],
    viewport: { width: 1280, height: 900 },
    ...options,
  });
  return { context, profile };
}
