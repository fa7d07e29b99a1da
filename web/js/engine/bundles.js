// bundles.js — getting model bundles into memory: the model index, downloads
// with progress, the Cache Storage copy of the last used bundle (so a second
// visit works offline), the one-file page's built-in bundle, and a user's
// own file. The pieces it stands on, one job each: bundles_errors.js (failures
// as sentences), bundles_gzip.js (bounded gunzip), bundles_check.js (are the
// bytes the listed model?), bundles_store.js (Cache Storage).
//
// Every failure reaches the user as a DeliveryError: .message is a sentence
// for anyone (what happened, what to do), .detail the browser's own words
// (the page shows them in small print).

import { DeliveryError, rawText, isOffline, networkFailure, httpFailure, formatBytes } from './bundles_errors.js';
import { gunzipIfNeeded, MAX_BUNDLE_BYTES } from './bundles_gzip.js';
import { listedProblem, unpackListed } from './bundles_check.js';
import { NOT_STORED, openCache } from './bundles_store.js';

export { DeliveryError, formatBytes } from './bundles_errors.js';
export { MAX_BUNDLE_BYTES, declaredSize, gunzipIfNeeded } from './bundles_gzip.js';
export { BUNDLE_CACHE, CONVERTED_CACHE, storeConverted, findConverted, dropConverted, listConverted } from './bundles_store.js';

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

/** Bytes of a user's own file (.blb or .blb.gz). */
export async function loadFileBundle(file) {
  const u8 = new Uint8Array(await file.arrayBuffer());
  if (u8.length === 0) throw new DeliveryError('the file is empty', `${file.name}: 0 bytes`);
  return gunzipIfNeeded(u8, { bundle: true });
}
