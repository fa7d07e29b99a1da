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

// A bundle converted in this page (web/js/engine/convert.js) is kept like the
// published ones, in its own cache (one entry: the last conversion), so the
// model list's download cache never evicts it and a reload can reopen it.
export const CONVERTED_CACHE = 'bertlens-converted-v1';
const CONVERTED_URL = 'converted/bundle.blb';

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

/** Keep the converted bundle (a Uint8Array, or the converter's {size,
 *  read}: sliceStream), with its size; true when kept, else
 *  note(text, detail) hears why not. */
export async function storeConverted(name, bundle, note = () => {}) {
  if (!globalThis.caches) {
    note(NOT_STORED, 'no Cache Storage in this context');
    return false;
  }
  try {
    const cache = await caches.open(CONVERTED_CACHE);
    const size = bundle instanceof Uint8Array ? bundle.length : bundle.size;
    await cache.put(new URL(CONVERTED_URL, globalThis.location.href).href, new Response(sliceStream(bundle), {
      headers: { 'Content-Type': 'application/octet-stream', 'x-bertlens-name': encodeURIComponent(name), 'x-bertlens-size': String(size) },
    }));
    return true;
  } catch (e) {
    note(/quota/i.test(rawText(e)) || (e && e.name === 'QuotaExceededError')
      ? 'There is not enough room in this browser to keep the converted model; save it as a file to use it again.'
      : NOT_STORED, rawText(e));
    return false;
  }
}

/** Forget the kept converted bundle (one the engine refused or that
 *  stopped it: page/models.js). */
export async function dropConverted() {
  try {
    if (globalThis.caches) await (await caches.open(CONVERTED_CACHE)).delete(new URL(CONVERTED_URL, globalThis.location.href).href);
  } catch { /* nothing kept, or no storage */ }
}

/** The kept converted bundle: {name, size, stream(), bytes()} or null. */
export async function findConverted() {
  try {
    if (!globalThis.caches) return null;
    const cache = await caches.open(CONVERTED_CACHE);
    const hit = await cache.match(new URL(CONVERTED_URL, globalThis.location.href).href);
    if (!hit) return null;
    const name = decodeURIComponent(hit.headers.get('x-bertlens-name') || 'converted');
    // size: stored with it (none in copies kept before it was); stream():
    // the body, for engine.load({stream, size}), read once
    const size = Number(hit.headers.get('x-bertlens-size'));
    return {
      name,
      size: Number.isSafeInteger(size) && size > 0 ? size : 0,
      stream: () => hit.body,
      bytes: async () => new Uint8Array(await hit.arrayBuffer()),
    };
  } catch {
    return null;
  }
}
