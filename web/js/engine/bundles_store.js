// bundles_store.js — keeping bundles in this browser (Cache Storage), so a
// second visit works offline: the cache of listed models (bundles.js
// decides what stays in it) and the one bundle converted in this page.

import { rawText } from './bundles_errors.js';

export const BUNDLE_CACHE = 'bertlens-bundles-v1';

export const NOT_STORED = 'This browser does not let this page keep the model (for example inside another site\'s frame, in private browsing, '
  + 'or with site data blocked), so it will be downloaded again next time.';

/** The bundle cache, or null with a note saying why it cannot be used
 *  (storage disabled: everything still works, only not offline). */
export async function openCache(note) {
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

// Bundles converted in this page (web/js/engine/convert.js) are kept like the
// published ones, in their own cache, so the model list's download cache
// never evicts them and a reload can reopen them. One entry per model
// (its key: page/model_names.js convertedKey, the model's name, the sha256
// of its weights and the dtype), so two checkpoints that share a folder name
// never replace each other; at most MAX_CONVERTED are kept (the oldest goes).
// A copy kept before keys existed (converted/bundle.blb) is still offered.
export const CONVERTED_CACHE = 'bertlens-converted-v1';
const CONVERTED_URL = 'converted/bundle.blb';
export const MAX_CONVERTED = 4;
const convertedUrl = (key) => new URL(key ? `converted/${encodeURIComponent(key)}.blb` : CONVERTED_URL, pageHref()).href;

// The page's address, which kept copies are keyed under: the worker
// (engine/take.js) keeps and finds them for the page, and its own location
// is its script's, so the page's 'take' request names the page's.
let pageAddress = null;
export function setPageHref(href) { pageAddress = href; }
export const pageHref = () => pageAddress || globalThis.location.href;

const PUT_SLICE = 4 << 20; // a bundle goes to Cache Storage by slices (no copy of it whole)

/** A bundle as a stream of slices for Cache Storage: bundle is a
 *  Uint8Array or {size, read(start, end, into) -> Promise<Uint8Array>}
 *  (the converter's bundle in the worker, convert.js {hold}). One slice at
 *  a time (highWaterMark 0: the next is read when the cache asks for it,
 *  having taken the one before). Slices read out of the worker go round two
 *  buffers: a buffer that crossed threads is freed only by a garbage
 *  collection, so a new one per slice would pile up the bundle's size
 *  (measured: +70 MB for a 90 MB bundle). A slice is refilled two pulls
 *  after it was handed over, long taken by then. */
export function sliceStream(bundle) {
  const whole = bundle instanceof Uint8Array;
  const size = whole ? bundle.length : bundle.size;
  const read = whole ? async (a, b) => bundle.subarray(a, b) : bundle.read;
  let at = 0, k = 0;
  const ring = [null, null];
  return new ReadableStream({
    async pull(c) {
      if (at >= size) return c.close();
      const end = Math.min(size, at + PUT_SLICE);
      const buf = ring[k % 2];
      const slice = await read(at, end, buf && buf.byteLength >= end - at ? new Uint8Array(buf, 0, end - at) : null);
      ring[k++ % 2] = whole ? null : slice.buffer;
      c.enqueue(slice);
      at = end;
      return undefined;
    },
  }, { highWaterMark: 0 });
}

/** Keep a converted bundle (a Uint8Array, or the converter's {size,
 *  read}: sliceStream), with its name, size and dtype, under key; true when
 *  kept, else note(text, detail) hears why not. The oldest beyond
 *  MAX_CONVERTED go. */
export async function storeConverted(name, bundle, note = () => {}, { key = '', dtype = '' } = {}) {
  if (!globalThis.caches) {
    note(NOT_STORED, 'no Cache Storage in this context');
    return false;
  }
  try {
    const cache = await caches.open(CONVERTED_CACHE);
    const size = bundle instanceof Uint8Array ? bundle.length : bundle.size;
    await cache.put(convertedUrl(key), new Response(sliceStream(bundle), {
      headers: {
        'Content-Type': 'application/octet-stream', 'x-bertlens-name': encodeURIComponent(name), 'x-bertlens-size': String(size),
        'x-bertlens-key': encodeURIComponent(key), 'x-bertlens-dtype': dtype, 'x-bertlens-stored': new Date().toISOString(),
      },
    }));
    const all = await listConverted();
    for (const old of all.slice(MAX_CONVERTED)) await dropConverted(old.key);
    return true;
  } catch (e) {
    note(/quota/i.test(rawText(e)) || (e && e.name === 'QuotaExceededError')
      ? 'There is not enough room in this browser to keep the converted model; save it as a file to use it again.'
      : NOT_STORED, rawText(e));
    return false;
  }
}

/** Forget a kept converted bundle (key; '' or none: the copy kept before
 *  keys existed) — one the engine refused or that stopped it
 *  (page/models.js). */
export async function dropConverted(key = '') {
  try {
    if (globalThis.caches) await (await caches.open(CONVERTED_CACHE)).delete(convertedUrl(key));
  } catch { /* nothing kept, or no storage */ }
}

function describeKept(hit) {
  const name = decodeURIComponent(hit.headers.get('x-bertlens-name') || 'converted');
  // size: stored with it (none in copies kept before it was); stream():
  // the body, for engine.load({stream, size}), read once
  const size = Number(hit.headers.get('x-bertlens-size'));
  return {
    name,
    key: decodeURIComponent(hit.headers.get('x-bertlens-key') || ''),
    dtype: hit.headers.get('x-bertlens-dtype') || '',
    stored: hit.headers.get('x-bertlens-stored') || '',
    size: Number.isSafeInteger(size) && size > 0 ? size : 0,
    stream: () => hit.body,
    bytes: async () => new Uint8Array(await hit.arrayBuffer()),
  };
}

/** The kept converted bundle of key (none: the newest kept):
 *  {name, key, dtype, stored, size, stream(), bytes()} or null. */
export async function findConverted(key) {
  try {
    if (!globalThis.caches) return null;
    const cache = await caches.open(CONVERTED_CACHE);
    if (key === undefined) {
      const all = await listConverted();
      return all.length ? findConverted(all[0].key) : null;
    }
    const hit = await cache.match(convertedUrl(key));
    return hit ? describeKept(hit) : null;
  } catch {
    return null;
  }
}

/** Every kept converted bundle: [{name, key, dtype, stored, size}], newest first. */
export async function listConverted() {
  try {
    if (!globalThis.caches) return [];
    const cache = await caches.open(CONVERTED_CACHE);
    const out = [];
    for (const req of typeof cache.keys === 'function' ? await cache.keys() : []) {
      const hit = await cache.match(req);
      if (hit) { const { stream, bytes, ...d } = describeKept(hit); out.push(d); }
    }
    return out.sort((a, b) => (a.stored < b.stored ? 1 : a.stored > b.stored ? -1 : 0));
  } catch {
    return [];
  }
}
