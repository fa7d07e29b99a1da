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
    return { size: raw.length, buffer: await gunzipIfNeeded(raw, { bundle: true }) };
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

// The largest bundle this page takes. The engine keeps the whole inflated
// bundle in its WebAssembly memory (4 GB at most in the one-thread build,
// 2 GB in the threaded one) beside the buffers of a run, so 2 GiB is
// already more than it could hold; nothing larger is worth unpacking.
export const MAX_BUNDLE_BYTES = 2 ** 31;
// src/bundle.h: an inflated bundle starts "BERTLENS", and its u64
// file_size at offset 16 is the whole file's length.
const MAGIC = [0x42, 0x45, 0x52, 0x54, 0x4c, 0x45, 0x4e, 0x53];
const SIZE_END = 24; // bytes needed to read magic and file_size
const GZIP_SLICE = 64 << 10; // compressed bytes handed to the decompressor at a time (gunzipIfNeeded)

const hasMagic = (u8) => u8.length >= MAGIC.length && MAGIC.every((b, i) => u8[i] === b);

/** file_size from a bundle's first 24 bytes (a Number, exact up to 2^53,
 *  larger values stay larger than any cap), or null when the bytes do not
 *  start like a bundle. */
export function declaredSize(head) {
  if (head.length < SIZE_END || !hasMagic(head)) return null;
  return Number(new DataView(head.buffer, head.byteOffset, SIZE_END).getBigUint64(16, true));
}

/** Decompress gzip bytes (or return them unchanged if they are not gzip).
 *  Unpacking stops early, with a DeliveryError whose detail starts "size:",
 *  once the output passes MAX_BUNDLE_BYTES and, with bundle: true (every
 *  model the page loads), once it does not start like a bundle or passes
 *  the file_size its header declares: a few MB of gzip cannot become
 *  gigabytes in memory. Damaged gzip: a DeliveryError whose detail starts
 *  "gzip:". */
export async function gunzipIfNeeded(u8, { bundle = false } = {}) {
  if (!isGzip(u8)) return u8.buffer.byteLength === u8.length ? u8.buffer : u8.slice().buffer;
  if (typeof DecompressionStream !== 'function') {
    throw new DeliveryError('This browser is too old to unpack a compressed (.gz) model. Please use a current version of Chrome, Edge, Firefox or Safari, or open an uncompressed .blb file.', 'no DecompressionStream');
  }
  let reader;
  try {
    // The compressed bytes go in by slices of GZIP_SLICE (64 KB), each written only
    // when the unpacked side has been read: one slice unpacks to at most
    // ~1032 times its size (deflate's limit), so memory stays bounded
    // before the checks below can stop a bomb. A whole 2 MB file handed
    // over at once let the browser unpack ~600 MB before the first read.
    const ds = new DecompressionStream('gzip');
    reader = ds.readable.getReader();
    const writer = ds.writable.getWriter();
    (async () => {
      for (let i = 0; i < u8.length; i += GZIP_SLICE) await writer.write(u8.subarray(i, i + GZIP_SLICE));
      await writer.close();
    })().catch(() => {}); // a failure reaches the reader (damaged gzip) or comes from its cancel (stopped)
  } catch (e) {
    throw new DeliveryError('the file is damaged or cut short: its compressed data could not be unpacked', `gzip: ${rawText(e)}`);
  }
  const parts = [];
  let n = 0;
  let cap = MAX_BUNDLE_BYTES;
  let head = new Uint8Array(0); // the first SIZE_END bytes, until they are known
  const stop = async (message, detail) => {
    await reader.cancel().catch(() => {});
    throw new DeliveryError(message, `size: ${detail}`);
  };
  for (;;) {
    let step;
    try {
      step = await reader.read();
    } catch (e) {
      throw new DeliveryError('the file is damaged or cut short: its compressed data could not be unpacked', `gzip: ${rawText(e)}`);
    }
    if (step.done) break;
    const chunk = step.value;
    if (bundle && head && head.length < SIZE_END) {
      const grown = new Uint8Array(Math.min(SIZE_END, head.length + chunk.length));
      grown.set(head);
      grown.set(chunk.subarray(0, grown.length - head.length), head.length);
      head = grown;
      if (head.length >= MAGIC.length && !hasMagic(head)) {
        await stop('the file is not a bertlens bundle: its unpacked bytes do not start with “BERTLENS”', 'no BERTLENS magic after gzip');
      }
      if (head.length === SIZE_END) {
        const declared = declaredSize(head);
        head = null;
        if (declared > MAX_BUNDLE_BYTES) {
          await stop(`the file is too large: its header says it unpacks to ${formatBytes(declared)}, more than the ${formatBytes(MAX_BUNDLE_BYTES)} this page can hold`,
            `header file_size ${declared}, page maximum ${MAX_BUNDLE_BYTES}`);
        }
        cap = declared;
      }
    }
    n += chunk.length;
    if (n > cap) {
      await stop(head === null
        ? `the file is too large: it unpacks to more than the ${formatBytes(cap)} its header declares (a damaged file or a decompression bomb), so unpacking stopped`
        : `the file is too large: it unpacks to more than ${formatBytes(cap)}, more than this page can hold, so unpacking stopped`,
      `more than ${cap} bytes unpacked`);
    }
    parts.push(chunk);
  }
  const out = new Uint8Array(n);
  let off = 0;
  for (const p of parts) { out.set(p, off); off += p.length; }
  return out.buffer;
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
    const buf = new Uint8Array(await res.arrayBuffer()); // (no stream to stop early: browsers without one)
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
    if (loaded > MAX_BUNDLE_BYTES) { // no bundle is this large: a server that never stops
      await reader.cancel().catch(() => {});
      throw new DeliveryError(`The server sent more than ${formatBytes(MAX_BUNDLE_BYTES)} for the model, more than any model this page can hold, so the download was stopped. `
        + 'Reload the page to try again.', `more than ${MAX_BUNDLE_BYTES} bytes received`);
    }
    progress(loaded, total);
  }
  const out = new Uint8Array(loaded);
  let off = 0;
  for (const c of chunks) { out.set(c, off); off += c.length; }
  return out;
}

/** A listed model: from the cache if present and intact, else downloaded
 *  (progress(loaded, total, from) with from false: network, true: Cache
 *  Storage, 'inline': built into the page), checked, unpacked and handed to
 *  accept(buffer) — the engine's load: true when the engine took it, false
 *  when it refused it, null when nobody wants it any more (a newer load
 *  began). Only bytes the engine took are stored in the cache (keeping just
 *  this bundle afterwards); any failure evicts a stored copy, so a bad
 *  response can never be reused. Returns accept's answer (without accept:
 *  the unpacked ArrayBuffer, stored as soon as it is unpacked); throws a
 *  DeliveryError. note(text, detail) hears of problems that do not stop the
 *  load (the model could not be stored for next time). keep: other entries
 *  whose stored copies stay (a second model loaded to compare with). */
export async function loadListedBundle(entry, baseUrl, progress = () => {}, note = () => {}, { keep = [], accept = null } = {}) {
  const name = entry.name || entry.file;
  const what = `the model ${name}`;
  const hand = async (buffer, store, evict) => {
    await null; // the last progress report is handled before accept starts (observers run in between)
    let ok;
    try {
      ok = accept ? await accept(buffer) : buffer;
    } catch (e) {
      await evict();
      throw e;
    }
    if (ok === false) await evict();
    else if (ok) await store();
    return ok;
  };
  if (entry.inline) {
    const early = unpackedEarly.get(entry.inline);
    unpackedEarly.delete(entry.inline); // its buffer goes to the engine (transferred): use it once
    if (early) {
      const { size, buffer } = await early.catch(() => ({ size: 0, buffer: null }));
      if (buffer) {
        progress(size, size, 'inline');
        return hand(buffer, async () => {}, async () => {});
      }
    }
    const text = inlineText(entry.inline);
    if (text === null) throw new DeliveryError(`This page should have ${what} built in, but it is missing: the file is incomplete. Download bertlens.html again.`, `no #${entry.inline}`);
    const raw = base64ToBytes(text);
    progress(raw.length, raw.length, 'inline');
    return hand(await unpackListed(raw, what), async () => {}, async () => {});
  }
  const url = new URL(`models/${entry.file}`, baseUrl).href;
  const cache = await openCache(note);
  const evict = async () => { if (cache) await cache.delete(url).catch(() => {}); };
  let raw = null;
  let cached = false;
  if (cache) {
    const hit = await cache.match(url).catch(() => null);
    // Reused only if the index still names the same content (else: a newer
    // model, download) and the bytes still match it (a copy stored by an
    // older page, or changed on disk, is checked like a download).
    if (hit && (hit.headers.get('x-bertlens-sha256') || '') === (entry.sha256 || '')) {
      raw = new Uint8Array(await hit.arrayBuffer());
      if (await listedProblem(raw, entry, what)) {
        await evict();
        raw = null;
      } else {
        cached = true;
        progress(raw.length, raw.length, true);
      }
    } else if (hit) {
      await evict();
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
      if (e instanceof DeliveryError) throw e;
      throw new DeliveryError(`The download of ${what} stopped before it was complete${isOffline() ? ' (this device went offline)' : ''}. `
        + 'Reload the page to try again.', rawText(e));
    }
    const problem = await listedProblem(raw, entry, what);
    if (problem) throw problem;
  }
  const store = async () => {
    if (!cache || cached) return;
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
  };
  let buffer;
  try {
    buffer = await unpackListed(raw, what);
  } catch (e) {
    await evict(); // the next visit downloads a fresh copy
    throw e;
  }
  return hand(buffer, store, evict);
}

const looksLikeHtml = (u8) => /^\s*<(!doctype|html|head|body|meta|title|!--|\?xml)/i.test(new TextDecoder('latin1').decode(u8.subarray(0, 256)));

/** Why the bytes received for a listed model are not that model (a
 *  DeliveryError), or null when they are. gzip bytes must have the sha256
 *  and size the index lists; plain bundle bytes (a server that added
 *  Content-Encoding: gzip makes the browser inflate them) the index's
 *  inflated_sha256. Anything else — a captive portal's web page, an error
 *  page sent with status 200, a raw bundle planted in place of the listed
 *  file — is refused before it can reach the engine or the cache. An index
 *  without checksums (a hand-made one) is trusted, as is everything where
 *  the browser has no SHA-256 (pages not served over https or localhost). */
async function listedProblem(raw, entry, what) {
  const What = `${what[0].toUpperCase()}${what.slice(1)}`;
  const notModel = (why, detail) => new DeliveryError(`The server sent something that is not ${what} (${why}), so it was not used. `
    + 'Reload the page to try again; if it keeps happening, something between you and the site (a sign-in page, a proxy or a filter) changes what it sends.', detail);
  if (looksLikeHtml(raw)) {
    return new DeliveryError(`The server sent a web page instead of ${what}, so it was not used. `
      + 'This happens on networks that ask you to sign in first (hotel or café Wi-Fi) or with a filter: open any other site to sign in, then reload this page.',
    `${raw.length} bytes starting ${JSON.stringify(new TextDecoder('latin1').decode(raw.subarray(0, 40)))}`);
  }
  const gz = isGzip(raw);
  if (!gz && !hasMagic(raw)) {
    return notModel('neither a compressed nor a plain bertlens bundle', `${raw.length} bytes, first ${Array.from(raw.subarray(0, 8), (b) => b.toString(16).padStart(2, '0')).join(' ')}`);
  }
  if (!entry.sha256) return null;
  if (gz && Number(entry.bytes) && raw.length < Number(entry.bytes)) {
    return new DeliveryError(`The download of ${what} stopped before it was complete (${formatBytes(raw.length)} of ${formatBytes(Number(entry.bytes))}). `
      + 'Reload the page to try again.', `${raw.length} of ${entry.bytes} bytes`);
  }
  const want = gz ? entry.sha256 : entry.inflated_sha256;
  if (!want) return notModel('a plain bundle where the site lists a compressed file, so it cannot be checked', `${raw.length} plain bytes; models/index.json lists no inflated_sha256`);
  const sum = await sha256Hex(raw);
  if (sum === null || sum === want) return null;
  if (gz) {
    return new DeliveryError(`${What} arrived damaged (its contents differ from what this site lists), so it was not used. `
      + 'Reload the page to download it again; if it keeps happening, something between you and the site (a proxy or filter) changes the file.',
    `SHA-256 ${sum}, models/index.json lists ${entry.sha256}`);
  }
  return notModel('a plain bundle whose contents differ from what this site lists', `SHA-256 ${sum}, models/index.json lists inflated_sha256 ${want}`);
}

/** gunzipIfNeeded for a listed model, with a sentence that says what to do. */
async function unpackListed(raw, what) {
  const What = `${what[0].toUpperCase()}${what.slice(1)}`;
  try {
    return await gunzipIfNeeded(raw, { bundle: true });
  } catch (e) {
    if (!(e instanceof DeliveryError)) throw e;
    if (e.detail.startsWith('size')) throw new DeliveryError(`${What} was not used: ${e.message}.`, e.detail);
    if (!e.detail.startsWith('gzip')) throw e;
    throw new DeliveryError(`${What} arrived damaged (it could not be unpacked), so it was not used. `
      + 'Reload the page to download it again.', e.detail);
  }
}

/** Bytes of a user's own file (.blb or .blb.gz). */
export async function loadFileBundle(file) {
  const u8 = new Uint8Array(await file.arrayBuffer());
  if (u8.length === 0) throw new DeliveryError('the file is empty', `${file.name}: 0 bytes`);
  return gunzipIfNeeded(u8, { bundle: true });
}

export function formatBytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  if (n < 1024 ** 3) return `${(n / (1024 * 1024)).toFixed(1)} MB`;
  return `${(n / 1024 ** 3).toFixed(1)} GB`;
}

// A bundle converted in this page (web/js/engine/convert.js) is kept like the
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
