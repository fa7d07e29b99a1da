// Model delivery (web/js/engine/bundles.js) against hostile responses: a captive
// portal's page, a raw bundle planted in place of the listed .gz, a cached
// copy the engine refuses, and gzip bombs. Cache Storage and fetch are
// stand-ins here (Node has neither); the browser scenario
// tests/browser/security.scenarios.mjs runs the same cases with the engine.
import { test, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import { createHash } from 'node:crypto';
import { loadListedBundle, gunzipIfNeeded, declaredSize, DeliveryError, MAX_BUNDLE_BYTES, BUNDLE_CACHE } from '../../web/js/engine/bundles.js';

const sha = (b) => createHash('sha256').update(b).digest('hex');

/** A stand-in bundle: the 96-byte header of src/format/bundle.h (magic, version,
 *  alignment, file_size) and `size - 96` bytes of a pattern. Only its first
 *  24 bytes matter to bundles.js; the engine stand-in compares bytes. */
function fakeBundle(size = 4096, declared = size) {
  const b = Buffer.alloc(size);
  b.write('BERTLENS', 0, 'latin1');
  b.writeUInt32LE(1, 8);
  b.writeUInt32LE(64, 12);
  b.writeBigUInt64LE(BigInt(declared), 16);
  for (let i = 96; i < size; i++) b[i] = (i * 7) & 0xff;
  return b;
}

const plain = fakeBundle();
const gz = zlib.gzipSync(plain);
const BASE = 'https://bertlens.test/';
const entry = { id: 'm', name: 'test model', file: 'm.blb.gz', bytes: gz.length, sha256: sha(gz), inflated_sha256: sha(plain) };
const URL_ = `${BASE}models/m.blb.gz`;

// Cache Storage stand-in: one cache, entries as bytes + headers.
let store;
const cache = {
  async match(u) {
    const e = store.get(typeof u === 'string' ? u : u.url);
    return e ? new Response(e.body, { headers: e.headers }) : undefined;
  },
  async put(u, res) { store.set(u, { body: new Uint8Array(await res.arrayBuffer()), headers: Object.fromEntries(res.headers) }); },
  async delete(u) { return store.delete(typeof u === 'string' ? u : u.url); },
  async keys() { return [...store.keys()].map((url) => ({ url })); },
};
globalThis.caches = { open: async (name) => { assert.equal(name, BUNDLE_CACHE); return cache; } };

// fetch stand-in: answers from a queue of bodies (status 200).
let answers;
let fetched;
globalThis.fetch = async (url) => {
  fetched.push(url);
  const body = answers.shift();
  if (body === undefined) throw new TypeError('Failed to fetch');
  return new Response(body, { status: 200 });
};

beforeEach(() => { store = new Map(); answers = []; fetched = []; });

/** An engine stand-in: takes the bundle when its bytes are the real ones. */
function engine() {
  const seen = [];
  return {
    seen,
    accept: async (buffer) => {
      const u8 = new Uint8Array(buffer);
      seen.push(u8);
      return Buffer.compare(Buffer.from(u8), plain) === 0;
    },
  };
}

const CAPTIVE = '<!DOCTYPE html><html><head><title>Sign in to Hotel WiFi</title></head><body>Accept the terms</body></html>';

test('captive portal: an HTML page with status 200 is refused in words, never cached; the next visit loads the real file', async () => {
  answers = [CAPTIVE, gz];
  const e1 = engine();
  await assert.rejects(loadListedBundle(entry, BASE, () => {}, () => {}, { accept: e1.accept }), (e) => {
    assert.ok(e instanceof DeliveryError);
    assert.match(e.message, /^The server sent a web page instead of the model test model, so it was not used\. .*sign in/);
    assert.match(e.detail, /Sign in to Hotel WiFi|DOCTYPE/);
    return true;
  });
  assert.equal(e1.seen.length, 0, 'the page never reached the engine');
  assert.equal(store.size, 0, 'nothing was cached');
  // Second visit: the real file arrives, the engine takes it, it is cached.
  const e2 = engine();
  assert.equal(await loadListedBundle(entry, BASE, () => {}, () => {}, { accept: e2.accept }), true);
  assert.equal(e2.seen.length, 1);
  assert.deepEqual([...store.keys()], [URL_]);
  assert.equal(sha(store.get(URL_).body), entry.sha256);
  // Third visit: from the cache, no download.
  const e3 = engine();
  assert.equal(await loadListedBundle(entry, BASE, () => {}, () => {}, { accept: e3.accept }), true);
  assert.equal(fetched.length, 2);
});

test('other non-model answers (a JSON error, plain text) are refused as "not the model"', async () => {
  for (const body of ['{"error":"blocked by policy"}', 'Access denied', new Uint8Array(5000)]) {
    answers = [body];
    await assert.rejects(loadListedBundle(entry, BASE, () => {}, () => {}, { accept: engine().accept }),
      /The server sent something that is not the model test model \(neither a compressed nor a plain bertlens bundle\)/);
    assert.equal(store.size, 0);
  }
});

test('a raw .blb planted in place of the listed .blb.gz fails the integrity check', async () => {
  const planted = fakeBundle(8192); // passes its own checks, not the listed model
  answers = [planted];
  const e = engine();
  await assert.rejects(loadListedBundle(entry, BASE, () => {}, () => {}, { accept: e.accept }),
    /The server sent something that is not the model test model \(a plain bundle whose contents differ from what this site lists\)/);
  assert.equal(e.seen.length, 0);
  assert.equal(store.size, 0);
  // Without the index's inflated_sha256 a plain bundle cannot be checked: refused too.
  answers = [planted];
  const { inflated_sha256: _, ...noInflated } = entry;
  await assert.rejects(loadListedBundle(noInflated, BASE, () => {}, () => {}, { accept: e.accept }), /cannot be checked/);
  // The real plain bytes (a server adding Content-Encoding: gzip) pass.
  answers = [plain];
  assert.equal(await loadListedBundle(entry, BASE, () => {}, () => {}, { accept: engine().accept }), true);
});

test('a gzip file with other contents fails the SHA-256 check', async () => {
  const other = zlib.gzipSync(fakeBundle(4096 + 64));
  answers = [Buffer.concat([other, Buffer.alloc(Math.max(0, gz.length - other.length))])];
  await assert.rejects(loadListedBundle(entry, BASE, () => {}, () => {}, { accept: engine().accept }),
    /arrived damaged \(its contents differ from what this site lists\)/);
  assert.equal(store.size, 0);
});

test('cached only after the engine took it; an engine refusal or error evicts the stored copy', async () => {
  // The engine refuses a download: nothing stored.
  answers = [gz];
  assert.equal(await loadListedBundle(entry, BASE, () => {}, () => {}, { accept: async () => false }), false);
  assert.equal(store.size, 0);
  // A newer load took over (null): neither stored nor evicted.
  answers = [gz];
  assert.equal(await loadListedBundle(entry, BASE, () => {}, () => {}, { accept: async () => null }), null);
  assert.equal(store.size, 0);
  // Stored once taken; then the engine refuses the stored copy: evicted.
  answers = [gz];
  await loadListedBundle(entry, BASE, () => {}, () => {}, { accept: async () => true });
  assert.equal(store.size, 1);
  assert.equal(await loadListedBundle(entry, BASE, () => {}, () => {}, { accept: async () => false }), false);
  assert.equal(store.size, 0, 'evicted after the engine refused it');
  // An engine that throws: evicted too, and the error goes on.
  answers = [gz];
  await loadListedBundle(entry, BASE, () => {}, () => {}, { accept: async () => true });
  await assert.rejects(loadListedBundle(entry, BASE, () => {}, () => {}, { accept: async () => { throw new Error('engine crashed'); } }), /engine crashed/);
  assert.equal(store.size, 0);
});

test('a poisoned copy an older page stored under the right tag is checked again, evicted and replaced', async () => {
  store.set(URL_, { body: new TextEncoder().encode(CAPTIVE), headers: { 'x-bertlens-sha256': entry.sha256 } });
  answers = [gz];
  const e = engine();
  assert.equal(await loadListedBundle(entry, BASE, () => {}, () => {}, { accept: e.accept }), true);
  assert.equal(fetched.length, 1, 'downloaded again');
  assert.equal(sha(store.get(URL_).body), entry.sha256, 'the real file replaced it');
});

// ------------------------------------------------------------- inflate caps

/** A gzip stream that inflates to a bundle header declaring `declared`
 *  bytes followed by `blocks` MiB of zeros: the same 1 MiB deflate block
 *  (full flush: it refers to nothing before it) repeated, so a 3 GiB bomb
 *  is ~3 MB. Its trailer is wrong (CRC 0): nothing should read that far. */
function bomb(declared, blocks) {
  const head = zlib.deflateRawSync(fakeBundle(96, declared), { finishFlush: zlib.constants.Z_FULL_FLUSH });
  const zeros = zlib.deflateRawSync(Buffer.alloc(1 << 20), { finishFlush: zlib.constants.Z_FULL_FLUSH });
  const parts = [Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]), head];
  for (let i = 0; i < blocks; i++) parts.push(zeros);
  parts.push(Buffer.from([0x03, 0x00]), Buffer.alloc(8));
  return new Uint8Array(Buffer.concat(parts));
}

test('gzip bomb: 3 GiB of output from a header declaring 4 KB stops at once, "too large", within a memory budget', async () => {
  const gzBomb = bomb(4096, 3072);
  assert.ok(gzBomb.length < 4 << 20, `${gzBomb.length} bytes of gzip`);
  const before = process.memoryUsage().arrayBuffers;
  const t0 = performance.now();
  await assert.rejects(gunzipIfNeeded(gzBomb, { bundle: true }), (e) => {
    assert.ok(e instanceof DeliveryError);
    assert.match(e.message, /^the file is too large: it unpacks to more than the 4\.0 KB its header declares/);
    assert.match(e.detail, /^size: /);
    return true;
  });
  const ms = performance.now() - t0;
  const grew = process.memoryUsage().arrayBuffers - before;
  console.log(`# 3 GiB bomb (${(gzBomb.length / 1048576).toFixed(1)} MB gzip) refused in ${ms.toFixed(0)} ms, arrayBuffers +${(grew / 1048576).toFixed(1)} MB`);
  assert.ok(grew < 64 << 20, `arrayBuffers grew ${grew} bytes`); // stopped early: memory, not time, is the bar
});

test('a header declaring more than the page maximum is refused before unpacking on; a non-bundle stops after 8 bytes', async () => {
  assert.equal(MAX_BUNDLE_BYTES, 2 ** 31);
  await assert.rejects(gunzipIfNeeded(bomb(2 ** 40, 4), { bundle: true }), /the file is too large: its header says it unpacks to 1024\.0 GB, more than the 2\.0 GB this page can hold/);
  await assert.rejects(gunzipIfNeeded(bomb(MAX_BUNDLE_BYTES + 1, 4), { bundle: true }), /too large/);
  const notBundle = zlib.gzipSync(Buffer.alloc(1 << 20, 0x41));
  await assert.rejects(gunzipIfNeeded(new Uint8Array(notBundle), { bundle: true }), /not a bertlens bundle: its unpacked bytes do not start with “BERTLENS”/);
  // Without bundle: true it is plain gzip (up to MAX_BUNDLE_BYTES).
  assert.equal((await gunzipIfNeeded(new Uint8Array(notBundle))).byteLength, 1 << 20);
});

test('a well-formed gzip bundle unpacks whole; declaredSize reads file_size', async () => {
  const out = new Uint8Array(await gunzipIfNeeded(new Uint8Array(gz)));
  assert.equal(Buffer.compare(Buffer.from(out), plain), 0);
  assert.equal(declaredSize(plain.subarray(0, 24)), 4096);
  assert.equal(declaredSize(Buffer.from('<html>...................')), null);
  // Declared size and real size equal: exactly at the cap is fine.
  const big = fakeBundle(3 << 20);
  assert.equal((await gunzipIfNeeded(new Uint8Array(zlib.gzipSync(big)))).byteLength, big.length);
  // A bundle longer than it declares (trailing bytes) is refused here too.
  await assert.rejects(gunzipIfNeeded(new Uint8Array(zlib.gzipSync(Buffer.concat([plain, Buffer.alloc(1)]))), { bundle: true }), /too large/);
});

test('a listed download that is a bomb (index without checksums) says too large', async () => {
  const { sha256: _a, inflated_sha256: _b, bytes: _c, ...unchecked } = entry;
  answers = [bomb(4096, 64)];
  await assert.rejects(loadListedBundle(unchecked, BASE, () => {}, () => {}, { accept: engine().accept }),
    /The model test model was not used: the file is too large: it unpacks to more than the 4\.0 KB its header declares/);
  assert.equal(store.size, 0);
});
