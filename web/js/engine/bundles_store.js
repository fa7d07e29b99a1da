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
