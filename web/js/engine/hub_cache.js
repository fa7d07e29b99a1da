// hub_cache.js — bundles converted from Hugging Face Hub models (hub.js),
// kept in Cache Storage so a second visit, offline too, needs no download.
// One entry per repository and commit, under a made-up same-origin URL
// (hub-bundles/OWNER/NAME/COMMIT.blb), with the id, the revision asked for,
// the commit and the bundle's size in its headers. Only a complete bundle is
// stored, so a cut download leaves nothing behind. Neither way holds the
// bundle whole in JS: it is written from slices read out of the worker,
// and read back as a stream the engine takes piece by piece
// (engine.js load({stream, size})), which checks that the stream has the
// size stored beside it and the size the bundle's header declares; the
// engine then checks every CRC (src/format/bundle.c) as it loads it, and a copy it
// refuses is evicted (hub_load.js). No sha256 here: hashing a bert-large
// bundle in the page (crypto.subtle copies its input) would add its whole
// size to the page's peak memory. At most MAX_KEPT models are kept (the
// oldest goes first).

import { sliceStream, pageHref } from './bundles_store.js';

export const HUB_CACHE = 'bertlens-hub-v1';
const MAX_KEPT = 3;
const H = { id: 'x-bertlens-hub-id', revision: 'x-bertlens-hub-revision', commit: 'x-bertlens-hub-commit', size: 'x-bertlens-size', stored: 'x-bertlens-stored' };
const MAX_SIZE = 0x7fffffff; // the engine loads bundles up to 2 GB

const base = () => new URL('.', pageHref()).href; // the page's folder (the worker keeps copies for the page)
const keyOf = (id, commit) => new URL(`hub-bundles/${id.split('/').map(encodeURIComponent).join('/')}/${encodeURIComponent(commit || 'unversioned')}.blb`, base()).href;

async function open() {
  if (!globalThis.caches || !globalThis.location || !/^https?:$/.test(new URL(pageHref()).protocol)) return null;
  try {
    return await caches.open(HUB_CACHE);
  } catch {
    return null;
  }
}

const describe = (res, req) => ({
  key: req.url,
  id: res.headers.get(H.id) || '',
  revision: res.headers.get(H.revision) || '',
  commit: res.headers.get(H.commit) || '',
  stored: res.headers.get(H.stored) || '',
});

/** Every kept Hub model: [{key, id, revision, commit, stored}], newest first. */
export async function listKeptHub() {
  const cache = await open();
  if (!cache) return [];
  const out = [];
  try {
    for (const req of await cache.keys()) {
      const res = await cache.match(req);
      if (res) out.push(describe(res, req));
    }
  } catch {
    return [];
  }
  return out.sort((a, b) => (a.stored < b.stored ? 1 : -1));
}

/** The kept bundle of id at commit (or, commit null, the newest kept for id
 *  at revision): {id, revision, commit, stored, size, response} (response:
 *  its unread Response, for engine.load({stream: response.body, size})); a
 *  copy without a plausible stored size is evicted (null). */
export async function findKeptHub(id, { commit = null, revision = 'main' } = {}) {
  const cache = await open();
  if (!cache) return null;
  const kept = (await listKeptHub()).filter((k) => k.id === id && (commit ? k.commit === commit : k.revision === revision || k.commit === revision));
  for (const k of kept) {
    try {
      const res = await cache.match(k.key);
      if (!res) continue;
      const size = Number(res.headers.get(H.size));
      if (!(Number.isSafeInteger(size) && size >= 24 && size <= MAX_SIZE) || !res.body) {
        res.body?.cancel().catch(() => {});
        await cache.delete(k.key);
        continue;
      }
      return { ...k, size, response: res };
    } catch {
      await cache.delete(k.key).catch(() => {});
    }
  }
  return null;
}

/** Keep a bundle as the one of id at commit (asked for as revision):
 *  bundle, a Uint8Array or {size, read(start, end) -> Promise<Uint8Array>}
 *  (the converter's, in the worker: read by slices). The same id's other
 *  copies of that revision and the oldest beyond MAX_KEPT go. Resolves to
 *  '' or the reason it could not be kept. */
export async function storeKeptHub({ id, revision, commit }, bundle) {
  const size = bundle instanceof Uint8Array ? bundle.length : bundle.size;
  const cache = await open();
  if (!cache) return 'no Cache Storage here';
  try {
    const key = keyOf(id, commit);
    for (const k of await listKeptHub()) if (k.id === id && k.revision === revision && k.key !== key) await cache.delete(k.key);
    const body = sliceStream(bundle); // the engine checks every byte of a kept copy (CRCs) when it loads it
    await cache.put(key, new Response(body, {
      headers: {
        'Content-Type': 'application/octet-stream',
        [H.id]: id, [H.revision]: revision, [H.commit]: commit || '', [H.size]: String(size), [H.stored]: new Date().toISOString(),
      },
    }));
    const all = await listKeptHub();
    for (const k of all.slice(MAX_KEPT)) await cache.delete(k.key);
    return '';
  } catch (e) {
    return (e && (e.message || String(e))) || 'refused';
  }
}

export async function evictKeptHub(id, commit) {
  const cache = await open();
  if (cache) await cache.delete(keyOf(id, commit)).catch(() => {});
}
