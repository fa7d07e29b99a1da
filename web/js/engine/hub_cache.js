// hub_cache.js — bundles converted from Hugging Face Hub models (hub.js),
// kept in Cache Storage so a second visit, offline too, needs no download.
// One entry per repository and commit, under a made-up same-origin URL
// (hub-bundles/OWNER/NAME/COMMIT.blb), with the id, the revision asked for,
// the commit and the bundle's sha256 in its headers. As with the published
// bundles (bundles.js), a kept copy is checked against its sha256 before
// use and evicted when it does not match; only a complete bundle the engine
// took is stored, so a cut download leaves nothing behind. At most MAX_KEPT
// models are kept (the oldest goes first).

export const HUB_CACHE = 'bertlens-hub-v1';
const MAX_KEPT = 3;
const H = { id: 'x-bertlens-hub-id', revision: 'x-bertlens-hub-revision', commit: 'x-bertlens-hub-commit', sha: 'x-bertlens-sha256', stored: 'x-bertlens-stored' };

const base = () => `${globalThis.location.origin}${globalThis.location.pathname.replace(/[^/]*$/, '')}`;
const keyOf = (id, commit) => new URL(`hub-bundles/${id.split('/').map(encodeURIComponent).join('/')}/${encodeURIComponent(commit || 'unversioned')}.blb`, base()).href;

async function open() {
  if (!globalThis.caches || !globalThis.location || !/^https?:$/.test(location.protocol)) return null;
  try {
    return await caches.open(HUB_CACHE);
  } catch {
    return null;
  }
}

async function sha256Hex(u8) {
  if (!globalThis.crypto || !crypto.subtle) return '';
  const h = new Uint8Array(await crypto.subtle.digest('SHA-256', u8));
  return Array.from(h, (b) => b.toString(16).padStart(2, '0')).join('');
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
 *  at revision): {id, revision, commit, stored, bytes: Uint8Array}, checked
 *  against its sha256 (a damaged copy is evicted: null). */
export async function findKeptHub(id, { commit = null, revision = 'main' } = {}) {
  const cache = await open();
  if (!cache) return null;
  const kept = (await listKeptHub()).filter((k) => k.id === id && (commit ? k.commit === commit : k.revision === revision || k.commit === revision));
  for (const k of kept) {
    try {
      const res = await cache.match(k.key);
      if (!res) continue;
      const want = res.headers.get(H.sha) || '';
      const bytes = new Uint8Array(await res.arrayBuffer());
      const sum = await sha256Hex(bytes);
      if (!want || (sum && sum !== want)) { await cache.delete(k.key); continue; }
      return { ...k, bytes };
    } catch {
      await cache.delete(k.key).catch(() => {});
    }
  }
  return null;
}

/** Keep bytes as the bundle of id at commit (asked for as revision); the
 *  same id's other copies of that revision and the oldest beyond MAX_KEPT
 *  go. Resolves to '' or the reason it could not be kept. */
export async function storeKeptHub({ id, revision, commit }, bytes) {
  const cache = await open();
  if (!cache) return 'no Cache Storage here';
  try {
    const key = keyOf(id, commit);
    for (const k of await listKeptHub()) if (k.id === id && k.revision === revision && k.key !== key) await cache.delete(k.key);
    await cache.put(key, new Response(bytes, {
      headers: {
        'Content-Type': 'application/octet-stream',
        [H.id]: id, [H.revision]: revision, [H.commit]: commit || '', [H.sha]: await sha256Hex(bytes), [H.stored]: new Date().toISOString(),
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
