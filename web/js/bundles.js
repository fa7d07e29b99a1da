// bundles.js — getting model bundles into memory: the model index, downloads
// with progress, the Cache Storage copy of the last used bundle (so a second
// visit works offline), checksum, and gzip decompression with the browser's
// DecompressionStream.
//
// Every failure reaches the user as a DeliveryError: .message is a sentence
// for anyone (what happened, what to do), .detail the browser's own words
// (the page shows them in small print).

export const BUNDLE_CACHE = 'bertlens-bundles-v1';

export class DeliveryError extends Error {
  constructor(message, detail = '') {
    super(message);
    this.name = 'DeliveryError';
    this.detail = detail;
  }
}

const rawText = (e) => (e && (e.message || String(e))) || '';
const isOffline = () => globalThis.navigator && navigator.onLine === false;
const fromFile = () => globalThis.location && location.protocol === 'file:';
const FROM_FILE = 'This page was opened as a file, and browsers do not let such a page download the model. '
  + 'Open bertlens.html from the same folder instead (it has the model built in), or run “make serve” and open http://127.0.0.1:8000/.';

/** The sentence for a failed request of `what` (e.g. "the model list"). */
function networkFailure(what, e, { cachedHint = '' } = {}) {
  if (fromFile()) return new DeliveryError(FROM_FILE, rawText(e));
  if (isOffline()) {
    return new DeliveryError(`Could not download ${what}: this device is offline${cachedHint}. `
      + 'Connect to the internet and reload the page; after one complete visit bertlens also works offline.', rawText(e));
  }
  return new DeliveryError(`Could not download ${what}: the connection to the server failed. `
    + 'Check the internet connection and reload the page.', rawText(e));
}

function httpFailure(what, status, url) {
  const detail = `HTTP ${status} for ${url}`;
  if (status === 404 || status === 410) {
    return new DeliveryError(`The server does not have ${what} (it answered “not found”). The site may be in the middle of an update: `
      + 'reload the page in a minute. If it keeps happening, the site needs to be rebuilt — please tell whoever runs it.', detail);
  }
  if (status >= 500) {
    return new DeliveryError(`The server had a problem sending ${what}. This is usually temporary: reload the page in a minute.`, detail);
  }
  return new DeliveryError(`The server refused to send ${what}. Reload the page; if it keeps happening, please tell whoever runs the site.`, detail);
}

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

const unpackedEarly = new Map(); // inline element id -> Promise<{size, buffer}>

/** One-file page: start decoding and unpacking the default inline bundle
 *  now, while the engine starts in its worker (loadListedBundle takes the
 *  result; any failure there is reported by decoding again). */
export function unpackInlineEarly() {
  const list = inlineText('bertlens-models');
  if (list === null) return;
  const models = JSON.parse(list).models || [];
  const entry = models.find((m) => m.default) || models[0];
  if (!entry || !entry.inline || unpackedEarly.has(entry.inline)) return;
  unpackedEarly.set(entry.inline, (async () => {
    const raw = base64ToBytes(inlineText(entry.inline));
    return { size: raw.length, buffer: await gunzipIfNeeded(raw) };
  })());
}

export async function fetchIndex(url = 'models/index.json') {
  const inline = inlineText('bertlens-models');
  if (inline !== null) return listedModels(JSON.parse(inline));
  let res;
  try {
    res = await fetch(url, { cache: 'no-cache' });
  } catch (e) {
    throw networkFailure('the list of models', e, { cachedHint: ' and this browser has no copy from an earlier visit' });
  }
  if (!res.ok) throw httpFailure('the list of models', res.status, url);
  let idx;
  try {
    idx = await res.json();
  } catch (e) {
    throw new DeliveryError('The list of models on the server is damaged, so no model can be chosen. Please tell whoever runs the site.',
      `models/index.json is not valid JSON: ${rawText(e)}`);
  }
  return listedModels(idx);
}

function listedModels(idx) {
  if (!idx || !Array.isArray(idx.models) || idx.models.length === 0) {
    throw new DeliveryError('The list of models on the server is empty, so there is no model to load. Please tell whoever runs the site.', 'models/index.json lists no model');
  }
  return idx.models.filter((m) => m && typeof m.id === 'string' && typeof m.file === 'string');
}

function isGzip(u8) {
  return u8.length >= 2 && u8[0] === 0x1f && u8[1] === 0x8b;
}

/** Decompress gzip bytes (or return them unchanged if they are not gzip). */
export async function gunzipIfNeeded(u8) {
  if (!isGzip(u8)) return u8.buffer.byteLength === u8.length ? u8.buffer : u8.slice().buffer;
  if (typeof DecompressionStream !== 'function') {
    throw new DeliveryError('This browser is too old to unpack a compressed (.gz) model. Please use a current version of Chrome, Edge, Firefox or Safari, or open an uncompressed .blb file.', 'no DecompressionStream');
  }
  try {
    const stream = new Blob([u8]).stream().pipeThrough(new DecompressionStream('gzip'));
    return await new Response(stream).arrayBuffer();
  } catch (e) {
    throw new DeliveryError('the file is damaged or cut short: its compressed data could not be unpacked', `gzip: ${rawText(e)}`);
  }
}

async function sha256Hex(u8) {
  if (!globalThis.crypto || !crypto.subtle) return null;
  const h = new Uint8Array(await crypto.subtle.digest('SHA-256', u8));
  return Array.from(h, (b) => b.toString(16).padStart(2, '0')).join('');
}

const NOT_STORED = 'This browser does not let this page keep the model (for example inside another site\'s frame, in private browsing, '
  + 'or with site data blocked), so it will be downloaded again next time.';

/** The bundle cache, or null with a note saying why it cannot be used
 *  (storage disabled: everything still works, only not offline). */
async function openCache(note) {
  if (!globalThis.caches) {
    note(NOT_STORED, 'no Cache Storage in this context');
    return null;
  }
  try {
    return await caches.open(BUNDLE_CACHE);
  } catch (e) {
    note(NOT_STORED, rawText(e));
    return null;
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
 *  downloaded (progress(loaded, total, from) with from false: network, true:
 *  Cache Storage, 'inline': built into the page). Keeps only this bundle in
 *  the cache afterwards. Returns the decompressed ArrayBuffer; throws a
 *  DeliveryError. note(text, detail) hears of problems that do not stop the
 *  load (the model could not be stored for next time). keep: other entries
 *  whose stored copies stay (a second model loaded to compare with). */
export async function loadListedBundle(entry, baseUrl, progress = () => {}, note = () => {}, { keep = [] } = {}) {
  const name = entry.name || entry.file;
  const what = `the model ${name}`;
  if (entry.inline) {
    const early = unpackedEarly.get(entry.inline);
    unpackedEarly.delete(entry.inline); // its buffer goes to the engine (transferred): use it once
    if (early) {
      const { size, buffer } = await early.catch(() => ({ size: 0, buffer: null }));
      if (buffer) {
        progress(size, size, 'inline');
        return buffer;
      }
    }
    const text = inlineText(entry.inline);
    if (text === null) throw new DeliveryError(`This page should have ${what} built in, but it is missing: the file is incomplete. Download bertlens.html again.`, `no #${entry.inline}`);
    const raw = base64ToBytes(text);
    progress(raw.length, raw.length, 'inline');
    return unpackListed(raw, what);
  }
  const url = new URL(`models/${entry.file}`, baseUrl).href;
  const cache = await openCache(note);
  let raw = null;
  let cached = false;
  if (cache) {
    const hit = await cache.match(url);
    // The cached copy was checked when it was stored; it is only reused if
    // the index still names the same content (else: a newer model, download).
    if (hit && (hit.headers.get('x-bertlens-sha256') || '') === (entry.sha256 || '')) {
      raw = new Uint8Array(await hit.arrayBuffer());
      cached = true;
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
      throw networkFailure(`${what}${entry.bytes ? ` (${formatBytes(Number(entry.bytes))})` : ''}`, e,
        { cachedHint: ' and the model is not stored in this browser yet' });
    }
    if (!res.ok) throw httpFailure(what, res.status, url);
    const total = Number(entry.bytes) || Number(res.headers.get('content-length')) || 0;
    try {
      raw = await readWithProgress(res, total, (l, t) => progress(l, t, false));
    } catch (e) {
      throw new DeliveryError(`The download of ${what} stopped before it was complete${isOffline() ? ' (this device went offline)' : ''}. `
        + 'Reload the page to try again.', rawText(e));
    }
    // A server that adds Content-Encoding: gzip makes the browser hand over
    // the decompressed bundle; its size and hash cannot match, and blw_load
    // still checks the bundle's own checksums, so only gzip bytes are compared.
    if (isGzip(raw) && Number(entry.bytes) && raw.length < Number(entry.bytes)) {
      throw new DeliveryError(`The download of ${what} stopped before it was complete (${formatBytes(raw.length)} of ${formatBytes(Number(entry.bytes))}). `
        + 'Reload the page to try again.', `${raw.length} of ${entry.bytes} bytes`);
    }
    if (entry.sha256 && isGzip(raw)) {
      const sum = await sha256Hex(raw);
      if (sum && sum !== entry.sha256) {
        throw new DeliveryError(`${what[0].toUpperCase()}${what.slice(1)} arrived damaged (its contents differ from what this site lists), so it was not used. `
          + 'Reload the page to download it again; if it keeps happening, something between you and the site (a proxy or filter) changes the file.',
        `SHA-256 ${sum}, models/index.json lists ${entry.sha256}`);
      }
    }
    if (cache) {
      try {
        const kept = new Set([url, ...keep.map((e) => new URL(`models/${e.file}`, baseUrl).href)]);
        for (const req of await cache.keys()) if (!kept.has(req.url)) await cache.delete(req);
        await cache.put(url, new Response(raw, {
          headers: { 'Content-Type': 'application/octet-stream', 'x-bertlens-sha256': entry.sha256 || '' },
        }));
      } catch (e) {
        note(/quota/i.test(rawText(e)) || (e && e.name === 'QuotaExceededError')
          ? 'There is not enough room in this browser to keep the model, so it will be downloaded again next time.'
          : NOT_STORED, rawText(e));
      }
    }
  }
  try {
    return await unpackListed(raw, what);
  } catch (e) {
    if (cached) await cache.delete(url).catch(() => {}); // the next visit downloads a fresh copy
    throw e;
  }
}

/** gunzipIfNeeded for a listed model, with a sentence that says what to do. */
async function unpackListed(raw, what) {
  try {
    return await gunzipIfNeeded(raw);
  } catch (e) {
    if (!(e instanceof DeliveryError) || !e.detail.startsWith('gzip')) throw e;
    throw new DeliveryError(`${what[0].toUpperCase()}${what.slice(1)} arrived damaged (it could not be unpacked), so it was not used. `
      + 'Reload the page to download it again.', e.detail);
  }
}

/** Bytes of a user's own file (.blb or .blb.gz). */
export async function loadFileBundle(file) {
  const u8 = new Uint8Array(await file.arrayBuffer());
  if (u8.length === 0) throw new DeliveryError('the file is empty', `${file.name}: 0 bytes`);
  return gunzipIfNeeded(u8);
}

export function formatBytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MB`;
}

// A bundle converted in this page (web/js/convert.js) is kept like the
// published ones, in its own cache (one entry: the last conversion), so the
// model list's download cache never evicts it and a reload can reopen it.
export const CONVERTED_CACHE = 'bertlens-converted-v1';
const CONVERTED_URL = 'converted/bundle.blb';

/** Keep the converted bundle; note(text, detail) hears why not. */
export async function storeConverted(name, u8, note = () => {}) {
  if (!globalThis.caches) return note(NOT_STORED, 'no Cache Storage in this context');
  try {
    const cache = await caches.open(CONVERTED_CACHE);
    await cache.put(new URL(CONVERTED_URL, globalThis.location.href).href, new Response(u8, {
      headers: { 'Content-Type': 'application/octet-stream', 'x-bertlens-name': encodeURIComponent(name) },
    }));
  } catch (e) {
    note(/quota/i.test(rawText(e)) || (e && e.name === 'QuotaExceededError')
      ? 'There is not enough room in this browser to keep the converted model; save it as a file to use it again.'
      : NOT_STORED, rawText(e));
  }
}

/** The kept converted bundle: {name, size, bytes()} or null. */
export async function findConverted() {
  try {
    if (!globalThis.caches) return null;
    const cache = await caches.open(CONVERTED_CACHE);
    const hit = await cache.match(new URL(CONVERTED_URL, globalThis.location.href).href);
    if (!hit) return null;
    const name = decodeURIComponent(hit.headers.get('x-bertlens-name') || 'converted');
    return { name, bytes: async () => new Uint8Array(await hit.arrayBuffer()) };
  } catch {
    return null;
  }
}
