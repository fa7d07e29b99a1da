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

/** The [[headers]] rules of netlify.toml: [{for, values}] in file order.
 *  Reads only the subset of TOML that file uses (for = "…", Key = "…"). */
export function netlifyHeaders(root) {
  const rules = [];
  let rule = null;
  for (const raw of fs.readFileSync(path.join(root, 'netlify.toml'), 'utf8').split('\n')) {
    const line = raw.trim();
    if (line === '[[headers]]') { rule = { for: null, values: {} }; rules.push(rule); continue; }
    if (/^\[/.test(line) && line !== '[headers.values]') { rule = null; continue; }
    const m = line.match(/^([A-Za-z-]+)\s*=\s*"([^"]*)"$/);
    if (!rule || !m) continue;
    if (m[1] === 'for') rule.for = m[2];
    else rule.values[m[1]] = m[2];
  }
  return rules.map((r) => ({ ...r, re: new RegExp(`^${r.for.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`) }));
}

/** Headers netlify.toml gives the URL path p (later rules win). */
export function headersFor(rules, p) {
  const out = {};
  for (const r of rules) if (r.re.test(p)) Object.assign(out, r.values);
  return out;
}

export function cspFromNetlify(root) {
  const text = fs.readFileSync(path.join(root, 'netlify.toml'), 'utf8');
  const m = text.match(/Content-Security-Policy\s*=\s*"([^"]+)"/);
  if (!m) throw new Error('netlify.toml has no Content-Security-Policy');
  return m[1];
}

/** Start serving dir; resolves to {url, close, requests}. With netlify
 *  (rules from netlifyHeaders), each response carries the headers those
 *  rules give its path, as the published site would; else csp, if given. */
export function serve(dir, { csp = null, port = 0, netlify = null } = {}) {
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
      if (netlify) Object.assign(headers, headersFor(netlify, url.pathname));
      else if (csp) headers['Content-Security-Policy'] = csp;
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

// Profiles go to memory (/dev/shm) where it is writable and roomy (a
// container's is often 64 MB): a fresh profile writes the model bundles to
// its HTTP cache and Cache Storage (30-100 MB per scenario, with fsync),
// which a CI machine's disk makes slow for nothing. $BROWSER_PROFILES
// overrides the folder.
const PROFILES = process.env.BROWSER_PROFILES || (() => {
  try {
    fs.accessSync('/dev/shm', fs.constants.W_OK);
    const st = fs.statfsSync('/dev/shm');
    if (st.bavail * st.bsize >= 2 ** 31) return '/dev/shm';
  } catch { /* no /dev/shm */ }
  return os.tmpdir();
})();

/** Debian's Chromium ($CHROMIUM to override) headless, in a fresh profile
 *  directory, with the flags that keep it off the network. Resolves to
 *  {context, profile}; remove `profile` when done. */
export async function launchChromium(options = {}) {
  const profile = fs.mkdtempSync(path.join(PROFILES, 'bertlens-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--no-first-run', '--disable-quic', '--disable-sync'],
    viewport: { width: 1280, height: 900 },
    ...options,
  });
  return { context, profile };
}
