// bundles.js — getting model bundles into memory: the model index, downloads
// with progress, the Cache Storage copy of the last used bundle (so a second
// visit works offline), checksum, and gzip decompression with the browser's
// DecompressionStream.

export const BUNDLE_CACHE = 'bertlens-bundles-v1';

// The one-file page (dist/bertlens.html, tools/build_site.mjs) carries the
// model list in <script type="application/json" id="bertlens-models"> and
// each listed bundle as base64 in the element its entry names (entry.inline).
function inlineText(id) {
  const el = globalThis.document ? document.getElementById(id) : null;
  return el ? el.textContent : null;
}

/** Base64 text -> Uint8Array. */
export function base64ToBytes(text) {
  const clean = text.replace(/\s+/g, '');
  if (typeof Uint8Array.fromBase64 === 'function') return Uint8Array.fromBase64(clean);
  const bin = atob(clean);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

export async function fetchIndex(url = 'models/index.json') {
  const inline = inlineText('bertlens-models');
  if (inline !== null) return listedModels(JSON.parse(inline));
  const res = await fetch(url, { cache: 'no-cache' });
  if (!res.ok) throw new Error(`Could not read the model list (${url}: HTTP ${res.status}).`);
  let idx;
  try {
    idx = await res.json();
  } catch {
    throw new Error('The model list (models/index.json) is not valid JSON.');
  }
  return listedModels(idx);
}

function listedModels(idx) {
  if (!idx || !Array.isArray(idx.models) || idx.models.length === 0) throw new Error('The model list is empty.');
  return idx.models.filter((m) => m && typeof m.id === 'string' && typeof m.file === 'string');
}

function isGzip(u8) {
  return u8.length >= 2 && u8[0] === 0x1f && u8[1] === 0x8b;
}

/** Decompress gzip bytes (or return them unchanged if they are not gzip). */
export async function gunzipIfNeeded(u8) {
  if (!isGzip(u8)) return u8.buffer.byteLength === u8.length ? u8.buffer : u8.slice().buffer;
  if (typeof DecompressionStream !== 'function') throw new Error('This browser cannot decompress gzip (no DecompressionStream); use a plain .blb file.');
  try {
    const stream = new Blob([u8]).stream().pipeThrough(new DecompressionStream('gzip'));
    return await new Response(stream).arrayBuffer();
  } catch (e) {
    throw new Error(`The bundle is damaged: gzip data could not be decompressed (${e.message || e}).`);
  }
}

async function sha256Hex(u8) {
  if (!globalThis.crypto || !crypto.subtle) return null;
  const h = new Uint8Array(await crypto.subtle.digest('SHA-256', u8));
  return Array.from(h, (b) => b.toString(16).padStart(2, '0')).join('');
}

async function openCache() {
  try {
    return globalThis.caches ? await caches.open(BUNDLE_CACHE) : null;
  } catch {
    return null; // e.g. storage disabled: everything still works, just not offline
  }
}

/** Read a response body while reporting progress(loaded, total). */
async function readWithProgress(res, total, progress) {
  if (!res.body || !res.body.getReader) {
    const buf = new Uint8Array(await res.arrayBuffer());
    progress(buf.length, buf.length);
    return buf;
  }
  const reader = res.body.getReader();
  const chunks = [];
  let loaded = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    loaded += value.length;
    progress(loaded, total);
  }
  const out = new Uint8Array(loaded);
  let off = 0;
  for (const c of chunks) { out.set(c, off); off += c.length; }
  return out;
}

/** Bytes of a listed model: from the cache if present and intact, else
 *  downloaded (progress(loaded, total, fromCache)). Keeps only this bundle in
 *  the cache afterwards. Returns the decompressed ArrayBuffer. */
export async function loadListedBundle(entry, baseUrl, progress = () => {}) {
  if (entry.inline) {
    const text = inlineText(entry.inline);
    if (text === null) throw new Error(`This page lists ${entry.name || entry.file} as built in, but it is not there.`);
    const raw = base64ToBytes(text);
    progress(raw.length, raw.length, true);
    return gunzipIfNeeded(raw);
  }
  const url = new URL(`models/${entry.file}`, baseUrl).href;
  const cache = await openCache();
  let raw = null;
  if (cache) {
    const hit = await cache.match(url);
    // The cached copy was checked when it was stored; it is only reused if
    // the index still names the same content (else: a newer model, download).
    if (hit && (hit.headers.get('x-bertlens-sha256') || '') === (entry.sha256 || '')) {
      raw = new Uint8Array(await hit.arrayBuffer());
      progress(raw.length, raw.length, true);
    } else if (hit) {
      await cache.delete(url);
    }
  }
  if (!raw) {
    let res;
    try {
      res = await fetch(url, { cache: 'no-store' });
    } catch (e) {
      throw new Error(`Download of ${entry.name || entry.file} failed: ${e.message || e}. Check the connection and try again.`);
    }
    if (!res.ok) throw new Error(`Download of ${entry.name || entry.file} failed: HTTP ${res.status}.`);
    const total = Number(entry.bytes) || Number(res.headers.get('content-length')) || 0;
    try {
      raw = await readWithProgress(res, total, (l, t) => progress(l, t, false));
    } catch (e) {
      throw new Error(`Download of ${entry.name || entry.file} was interrupted: ${e.message || e}.`);
    }
    // A server that adds Content-Encoding: gzip makes the browser hand over
    // the decompressed bundle; its hash cannot match, and blw_load still
    // checks the bundle's own checksums, so only gzip bytes are compared.
    if (entry.sha256 && isGzip(raw)) {
      const sum = await sha256Hex(raw);
      if (sum && sum !== entry.sha256) throw new Error(`The downloaded bundle ${entry.file} is damaged (SHA-256 does not match models/index.json).`);
    }
    if (cache) {
      try {
        for (const req of await cache.keys()) if (req.url !== url) await cache.delete(req);
        await cache.put(url, new Response(raw, {
          headers: { 'Content-Type': 'application/octet-stream', 'x-bertlens-sha256': entry.sha256 || '' },
        }));
      } catch {
        // Quota or private mode: the app works, only not offline.
      }
    }
  }
  return gunzipIfNeeded(raw);
}

/** Bytes of a user's own file (.blb or .blb.gz). */
export async function loadFileBundle(file) {
  const u8 = new Uint8Array(await file.arrayBuffer());
  if (u8.length === 0) throw new Error(`${file.name} is empty.`);
  return gunzipIfNeeded(u8);
}

export function formatBytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MB`;
}
