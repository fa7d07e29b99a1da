// sw.js — service worker: keeps the app shell so a second visit works
// offline. The model bundle itself is cached by the page (bundles.js, cache
// BUNDLE_CACHE) and served from there by this worker too.
// tools/build_site.mjs fills in VERSION and SHELL (content-hashed files).
const VERSION = 'dev';
const SHELL = ['./', 'index.html'];
// The engine's modules, two kinds: installing pre-caches the kind this
// browser runs (the relaxed-SIMD one where relaxed SIMD validates, the same
// test as the engine worker's, web/js/engine/worker_init.js), so a browser
// without relaxed SIMD never fetches a relaxed file; a module of either kind
// fetched later (the worker's fallback) is kept once fetched.
const ENGINE = { simd128: [], relaxed: [] };
// (module (func (param v128 v128 v128) (result v128)
//   local.get 0 local.get 1 local.get 2 f32x4.relaxed_madd))
const RELAXED_PROBE = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 8, 1, 96, 3, 123, 123, 123, 1, 123, 3, 2, 1, 0,
  10, 13, 1, 11, 0, 32, 0, 32, 1, 32, 2, 253, 133, 2, 11]);
function engineFiles() {
  let relaxed = false;
  try {
    relaxed = ENGINE.relaxed.length > 0 && typeof WebAssembly === 'object' && WebAssembly.validate(RELAXED_PROBE) === true;
  } catch { /* no WebAssembly here: the SIMD128 files */ }
  return relaxed ? ENGINE.relaxed : ENGINE.simd128;
}
const SHELL_CACHE = `bertlens-shell-${VERSION}`;
const BUNDLE_CACHE = 'bertlens-bundles-v1';

// Cross-origin isolation for hosts that cannot send headers: every
// same-origin response this worker hands over carries COOP same-origin and
// COEP require-corp (unless the server sent its own), so from the second
// visit on (the first page load is not controlled yet) the page is
// cross-origin isolated and web/js/worker.js picks the threaded engine.
// In another site's iframe COOP does not apply and the frame stays
// non-isolated: one thread. Everything the page loads is same-origin, so
// require-corp blocks nothing.
const ISOLATION = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
};

function isolated(res) {
  // opaque, redirect and error responses cannot be rebuilt (nor need to be)
  if (!res || res.type !== 'basic' || !res.status || res.status === 206) return res;
  if (Object.keys(ISOLATION).every((k) => res.headers.has(k))) return res;
  const headers = new Headers(res.headers);
  for (const [k, v] of Object.entries(ISOLATION)) if (!headers.has(k)) headers.set(k, v);
  return new Response(res.body, { status: res.status, statusText: res.statusText, headers });
}

self.addEventListener('install', (event) => {
  event.waitUntil(caches.open(SHELL_CACHE).then((c) => c.addAll([...SHELL, ...engineFiles()])).then(() => self.skipWaiting()));
});

self.addEventListener('activate', (event) => {
  event.waitUntil((async () => {
    for (const key of await caches.keys()) {
      if (key.startsWith('bertlens-shell-') && key !== SHELL_CACHE) await caches.delete(key);
    }
    await self.clients.claim();
  })());
});

// Pages and the model list: network first (fresh when online), cache when
// offline. Hashed assets: cache first (their names change with their content).
// Bundles: whatever the page stored in BUNDLE_CACHE, else the network.
self.addEventListener('fetch', (event) => {
  const req = event.request;
  if (req.method !== 'GET') return;
  const url = new URL(req.url);
  if (url.origin !== self.location.origin) return;
  const path = url.pathname;
  if (path.endsWith('.blb.gz') || path.endsWith('.blb')) {
    event.respondWith(caches.open(BUNDLE_CACHE).then((c) => c.match(req)).then((hit) => hit || fetch(req)).then(isolated));
    return;
  }
  // Only the app page itself is kept as 'index.html' (any ?query): other
  // pages (bertlens.html, viewer.html) are stored under their own names.
  const scope = new URL(self.registration.scope).pathname;
  const appPage = req.mode === 'navigate' && (path === scope || path === `${scope}index.html`);
  if (req.mode === 'navigate' || path.endsWith('/models/index.json')) {
    event.respondWith((async () => {
      const cache = await caches.open(SHELL_CACHE);
      const key = appPage ? 'index.html' : req;
      try {
        const res = await fetch(req);
        if (res.ok && (appPage || path.endsWith('/models/index.json'))) await cache.put(key, res.clone());
        return isolated(res);
      } catch (e) {
        const hit = await cache.match(key, { ignoreSearch: req.mode === 'navigate' });
        if (hit) return isolated(hit);
        throw e;
      }
    })());
    return;
  }
  const engine = ENGINE.simd128.concat(ENGINE.relaxed).some((f) => path === `${scope}${f}`);
  event.respondWith(caches.open(SHELL_CACHE).then(async (c) => {
    const hit = await c.match(req);
    if (hit) return isolated(hit);
    const res = await fetch(req);
    if (engine && res.status === 200) await c.put(req, res.clone());
    return isolated(res);
  }));
});
