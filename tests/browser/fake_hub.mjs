// fake_hub.mjs — a local stand-in for the Hugging Face Hub, for the page's
// Hub loader (web/js/engine/hub.js; tests/browser/hub.scenarios.mjs). Two
// servers on 127.0.0.1, each its own origin:
//
//   hub  GET /{owner}/{name}/resolve/{revision}/{file}   the documented layout
//        revision: 'main' or the repository's commit (else 404 RevisionNotFound)
//        small files: 200, ETag, x-repo-commit
//        weights (*.safetensors, *.bin): 302 to the cdn origin, with
//        x-repo-commit, X-Linked-Size and X-Linked-Etag, as the Hub answers
//        unknown repository: 401 + X-Error-Code: RepositoryNotFound (anonymous)
//        gated repository:   401 + X-Error-Code: GatedRepo
//        missing file:       404 + X-Error-Code: EntryNotFound
//   cdn  GET /{n}/{sha256}   the weights: Range (one range, 206 + Content-Range, 416
//        past the end), ETag; a repository with cut: true has its weights'
//        connection closed half-way; one with noRange: true ignores Range
//        (200, the whole file).
//
// Both answer CORS as the Hub does (Access-Control-Allow-Origin: *, the
// X-Error-Code / x-repo-commit / ETag / Content-Range headers exposed;
// preflights answered), except repositories with cors: false. A repository
// with redirect: URL sends its weights there instead (an origin the page's
// CSP does not allow). Files are Buffers, or {size, slice(start, end)} for
// large generated ones (never held whole).

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { serve, netlifyHeaders } from './server.mjs';

const EXPOSE = 'X-Repo-Commit, X-Error-Code, X-Error-Message, ETag, Content-Range, Accept-Ranges, Content-Length, X-Linked-Size, X-Linked-Etag';
const LFS = /\.(safetensors|bin)$/;

const cors = (on = true) => (on ? {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Expose-Headers': EXPOSE,
} : {});

function listen(handler) {
  const server = http.createServer(handler);
  const sockets = new Set();
  server.on('connection', (s) => { sockets.add(s); s.on('close', () => sockets.delete(s)); });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => {
    resolve({
      origin: `http://127.0.0.1:${server.address().port}`,
      close: () => new Promise((r) => { for (const s of sockets) s.destroy(); server.close(() => r()); }),
    });
  }));
}

const sizeOf = (f) => (Buffer.isBuffer(f) ? f.length : f.size);
const sliceOf = (f, a, b) => (Buffer.isBuffer(f) ? f.subarray(a, b) : f.slice(a, b));

/** A file's sha256 (the Hub's LFS ETag); generated files hash their slices. */
function sha256Of(f) {
  const h = createHash('sha256');
  const n = sizeOf(f);
  for (let a = 0; a < n; a += 16 << 20) h.update(sliceOf(f, a, Math.min(n, a + (16 << 20))));
  return h.digest('hex');
}

/** Write bytes [a, b) of f, 1 MB at a time with back-pressure; cut: stop
 *  half-way and destroy the connection. */
async function send(res, f, a, b, cut) {
  const stopAt = cut ? a + Math.floor((b - a) / 2) : b;
  for (let p = a; p < stopAt; p += 1 << 20) {
    const chunk = sliceOf(f, p, Math.min(stopAt, p + (1 << 20)));
    if (!res.write(chunk)) await new Promise((r) => res.once('drain', r));
    if (res.destroyed) return;
  }
  if (cut) res.destroy();
  else res.end();
}

/** Start the fake Hub. repos: {id: {files: {name: bytes}, commit?, gated?,
 *  cut?, noRange?, cors?, redirect?}}. Resolves to {endpoint, cdn, requests, close()}. */
export async function startFakeHub(repos) {
  const requests = []; // 'hub GET /a/b/resolve/main/config.json Range: …'
  const blobs = new Map(); // 'k/sha256' (k: the repository's number) -> {file, repo}
  for (const [k, [id, repo]] of Object.entries(repos).entries()) {
    repo.commit = repo.commit || createHash('sha1').update(id).digest('hex');
    repo.lfs = {};
    for (const [name, f] of Object.entries(repo.files)) {
      if (!LFS.test(name)) continue;
      const sha = sha256Of(f);
      repo.lfs[name] = { sha, key: `${k}/${sha}` };
      blobs.set(`${k}/${sha}`, { file: f, repo });
    }
  }
  let cdnOrigin = '';
  const cdn = await listen((req, res) => {
    requests.push(`cdn ${req.method} ${req.url}${req.headers.range ? ` Range: ${req.headers.range}` : ''}`);
    const key = new URL(req.url, 'http://x').pathname.slice(1);
    const blob = blobs.get(key);
    const allow = cors(!blob || blob.repo.cors !== false);
    if (req.method === 'OPTIONS') {
      res.writeHead(204, { ...allow, 'Access-Control-Allow-Headers': 'Range', 'Access-Control-Allow-Methods': 'GET, HEAD' });
      return res.end();
    }
    if (!blob) { res.writeHead(404, allow); return res.end('no such blob'); }
    const { file, repo } = blob;
    const size = sizeOf(file);
    const head = { ...allow, 'Content-Type': 'application/octet-stream', ETag: `"${key.split('/')[1]}"`, 'Accept-Ranges': 'bytes' };
    const m = repo.noRange ? null : /^bytes=(\d+)-(\d*)$/.exec(req.headers.range || '');
    let a = 0, b = size;
    if (m) {
      a = Number(m[1]);
      b = m[2] ? Math.min(size, Number(m[2]) + 1) : size;
      if (a >= size || a >= b) {
        res.writeHead(416, { ...head, 'Content-Range': `bytes */${size}` });
        return res.end();
      }
      res.writeHead(206, { ...head, 'Content-Range': `bytes ${a}-${b - 1}/${size}`, 'Content-Length': b - a });
    } else {
      res.writeHead(200, { ...head, 'Content-Length': size });
    }
    if (req.method === 'HEAD') return res.end();
    send(res, file, a, b, repo.cut && b - a > 65536).catch(() => res.destroy()); // (probes of a few bytes pass)
  });
  cdnOrigin = cdn.origin;
  const hub = await listen((req, res) => {
    requests.push(`hub ${req.method} ${req.url}${req.headers.range ? ` Range: ${req.headers.range}` : ''}`);
    const url = new URL(req.url, 'http://x');
    const m = /^\/([^/]+)\/([^/]+)\/resolve\/([^/]+)\/(.+)$/.exec(url.pathname);
    const id = m ? `${decodeURIComponent(m[1])}/${decodeURIComponent(m[2])}` : '';
    const repo = m ? repos[id] : null;
    const allow = cors(!repo || repo.cors !== false);
    if (req.method === 'OPTIONS') {
      res.writeHead(204, { ...allow, 'Access-Control-Allow-Headers': 'Range', 'Access-Control-Allow-Methods': 'GET, HEAD' });
      return res.end();
    }
    const error = (status, code, message) => {
      res.writeHead(status, { ...allow, 'Content-Type': 'application/json', 'X-Error-Code': code, 'X-Error-Message': message });
      res.end(JSON.stringify({ error: message }));
    };
    if (!m) return error(404, 'EntryNotFound', 'not a resolve URL');
    if (!repo) return error(401, 'RepositoryNotFound', 'Repository not found');
    if (repo.gated) return error(401, 'GatedRepo', `Access to model ${id} is restricted. You must have access to it and be authenticated to access it. Please log in.`);
    const rev = decodeURIComponent(m[3]);
    if (rev !== 'main' && rev !== repo.commit) return error(404, 'RevisionNotFound', `Invalid rev id: ${rev}`);
    const name = decodeURIComponent(m[4]);
    const f = repo.files[name];
    if (!f) return error(404, 'EntryNotFound', `${name} does not exist on "${rev}"`);
    const common = { ...allow, 'X-Repo-Commit': repo.commit };
    if (repo.lfs[name]) {
      const { sha, key } = repo.lfs[name];
      res.writeHead(302, {
        ...common,
        Location: `${repo.redirect || cdnOrigin}/${key}?X-Signature=fake&response-content-disposition=${encodeURIComponent(`inline; filename="${name}"`)}`,
        'X-Linked-Size': sizeOf(f),
        'X-Linked-Etag': `"${sha}"`,
      });
      return res.end();
    }
    res.writeHead(200, { ...common, 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': f.length, ETag: `"${createHash('sha1').update(f).digest('hex')}"` });
    res.end(req.method === 'HEAD' ? undefined : f);
  });
  return {
    endpoint: hub.origin,
    cdn: cdnOrigin,
    requests,
    close: async () => { await hub.close(); await cdn.close(); },
  };
}

/** A safetensors file of float32 tensors, generated slice by slice (never
 *  held whole): tensors [{name, shape}] in order; every value is a small
 *  pseudo-random float derived from its index (finite, |x| < 0.05). */
export function generatedSafetensors(tensors) {
  const header = {};
  let off = 0;
  for (const t of tensors) {
    const n = t.shape.reduce((a, b) => a * b, 1) * 4;
    header[t.name] = { dtype: 'F32', shape: t.shape, data_offsets: [off, off + n] };
    off += n;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - ((8 + json.length) % 8)) % 8);
  const head = Buffer.alloc(8 + json.length);
  head.writeBigUInt64LE(BigInt(json.length), 0);
  head.write(json, 8, 'latin1');
  const size = head.length + off;
  return {
    size,
    slice(a, b) {
      const out = Buffer.alloc(b - a);
      if (a < head.length) head.copy(out, 0, a, Math.min(b, head.length));
      // values: word i of the data part (aligned to 4 from head.length, a multiple of 8)
      const from = Math.max(a, head.length);
      if (from >= b) return out;
      const w0 = Math.floor((from - head.length) / 4), w1 = Math.ceil((b - head.length) / 4);
      const words = new Float32Array(w1 - w0);
      for (let w = w0; w < w1; w++) {
        let x = Math.imul(w ^ 0x9e3779b9, 0x85ebca6b) >>> 0;
        x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35) >>> 0;
        words[w - w0] = ((x >>> 8) / 16777216 - 0.5) * 0.1;
      }
      const bytes = Buffer.from(words.buffer);
      const skip = from - head.length - 4 * w0;
      bytes.copy(out, from - a, skip, skip + (b - from));
      return out;
    },
  };
}

/** The site built for a fake Hub (tools/build_site.mjs into ROOT/dirName,
 *  with hub.endpoint naming it: its CSP adds exactly the Hub's two origins)
 *  and served with netlify.toml's headers, that policy in place of the
 *  published one. Resolves to {url, policy, close()}. */
export async function hubSite(hub, root, dirName) {
  const index = JSON.parse(fs.readFileSync(path.join(root, 'models', 'index.json'), 'utf8'));
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bertlens-hub-index-'));
  fs.writeFileSync(path.join(tmp, 'index.json'), JSON.stringify({ ...index, hub: { endpoint: hub.endpoint, redirects: [hub.cdn] } }));
  execFileSync(process.execPath, [path.join(root, 'tools', 'build_site.mjs')], {
    env: { ...process.env, MODELS_INDEX: path.join(tmp, 'index.json'), DIST_DIR: dirName }, stdio: 'pipe',
  });
  fs.rmSync(tmp, { recursive: true, force: true });
  const site = path.join(root, dirName);
  const meta = fs.readFileSync(path.join(site, 'index.html'), 'utf8').match(/http-equiv="Content-Security-Policy" content="([^"]+)"/)[1];
  const policy = `${meta.replace(/&#39;/g, "'").replace(/&quot;/g, '"').replace(/&amp;/g, '&')}; frame-ancestors *`;
  const rules = netlifyHeaders(root).map((r) => (r.values['Content-Security-Policy'] ? { ...r, values: { ...r.values, 'Content-Security-Policy': policy } } : r));
  const srv = await serve(site, { netlify: rules });
  return { url: srv.url, policy, close: () => srv.close() };
}
