// A converted bundle kept in Cache Storage by slices (engine/bundles_store.js):
// the bytes stored are the bundle's, read out of the converter a slice at a
// time through two reused buffers (never a whole copy), with its size, so a
// later load streams it back; a browser that keeps nothing says why.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { sliceStream, storeConverted, findConverted, NOT_STORED } from '../../web/js/engine/bundles_store.js';

const SIZE = 9 * (1 << 20) + 12345; // two whole 4 MB slices and a short one

/** The converter's {size, read(start, end, into)}: fills `into` when given
 *  (as the worker does), counts the buffers it had to make. */
function heldBundle(bytes) {
  const made = new Set();
  return {
    made,
    size: bytes.length,
    read: async (a, b, into) => {
      const out = into || new Uint8Array(b - a);
      if (!into) made.add(out.buffer);
      out.set(bytes.subarray(a, b));
      await new Promise((r) => setImmediate(r)); // a message round trip
      return out;
    },
  };
}

async function drain(stream) {
  const parts = [];
  for (const reader = stream.getReader(); ;) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(Buffer.from(value)); // taken before the next pull, as Cache Storage takes it
  }
  return Buffer.concat(parts);
}

test('sliceStream gives the bundle\'s bytes, from a Uint8Array or read out of the converter through two buffers', async () => {
  const bytes = new Uint8Array(randomBytes(SIZE));
  assert.ok(Buffer.from(bytes).equals(await drain(sliceStream(bytes))));
  const held = heldBundle(bytes);
  assert.ok(Buffer.from(bytes).equals(await drain(sliceStream(held))));
  assert.equal(held.made.size, 2, 'slices go round two buffers');
});

/** A stand-in for the browser's Cache Storage: one cache; put() reads the
 *  body as the browser does, copying each chunk out as it takes it (a data
 *  pipe), not holding on to the chunk's buffer. */
function fakeCaches({ refuse = null } = {}) {
  const store = new Map();
  return {
    store,
    open: async () => ({
      put: async (url, res) => {
        if (refuse) throw refuse;
        store.set(url, { body: await drain(res.body), headers: res.headers });
      },
      match: async (url) => {
        const e = store.get(typeof url === 'string' ? url : url.url);
        return e ? new Response(e.body, { headers: e.headers }) : undefined;
      },
      keys: async () => [...store.keys()].map((url) => new Request(url)),
      delete: async (url) => store.delete(url),
    }),
  };
}

test('storeConverted keeps the converter\'s bundle by slices with its size; findConverted streams it back', async (t) => {
  const saved = { caches: globalThis.caches, location: globalThis.location };
  t.after(() => Object.assign(globalThis, saved));
  globalThis.location = { href: 'http://localhost/bertlens/' };
  const bytes = new Uint8Array(randomBytes(SIZE));
  globalThis.caches = fakeCaches();
  const notes = [];
  assert.equal(await storeConverted('my-model', heldBundle(bytes), (text) => notes.push(text)), true);
  assert.deepEqual(notes, []);
  const kept = await findConverted();
  assert.equal(kept.name, 'my-model');
  assert.equal(kept.size, SIZE);
  assert.ok(Buffer.from(bytes).equals(await drain(kept.stream())));
  // No Cache Storage, or a full one: false, and a sentence why.
  delete globalThis.caches;
  assert.equal(await storeConverted('x', bytes, (text) => notes.push(text)), false);
  assert.equal(notes.pop(), NOT_STORED);
  globalThis.caches = fakeCaches({ refuse: Object.assign(new Error('quota'), { name: 'QuotaExceededError' }) });
  assert.equal(await storeConverted('x', heldBundle(bytes), (text) => notes.push(text)), false);
  assert.match(notes.pop(), /not enough room in this browser to keep the converted model; save it as a file/);
});

test('converted models are kept one per key: two "ckpt" folders of different weights do not replace each other; the oldest beyond MAX_CONVERTED go', async (t) => {
  const { listConverted, MAX_CONVERTED } = await import('../../web/js/engine/bundles_store.js');
  const saved = { caches: globalThis.caches, location: globalThis.location };
  t.after(() => Object.assign(globalThis, saved));
  globalThis.location = { href: 'http://localhost/bertlens/' };
  globalThis.caches = fakeCaches();
  const a = new Uint8Array(randomBytes(1000)), b = new Uint8Array(randomBytes(2000));
  assert.equal(await storeConverted('ckpt-aaaaaaaa', a, () => {}, { key: 'ckpt-aaaaaaaa|aa…|q8', dtype: 'q8' }), true);
  await new Promise((r) => setTimeout(r, 5));
  assert.equal(await storeConverted('ckpt-bbbbbbbb', b, () => {}, { key: 'ckpt-bbbbbbbb|bb…|q8', dtype: 'q8' }), true);
  const kept = await listConverted();
  assert.deepEqual(kept.map((k) => [k.name, k.size, k.dtype]), [['ckpt-bbbbbbbb', 2000, 'q8'], ['ckpt-aaaaaaaa', 1000, 'q8']], 'both, newest first');
  assert.ok(Buffer.from(a).equals(await drain((await findConverted('ckpt-aaaaaaaa|aa…|q8')).stream())));
  assert.equal((await findConverted()).name, 'ckpt-bbbbbbbb', 'no key: the newest');
  for (let i = 0; i < MAX_CONVERTED; i++) {
    await new Promise((r) => setTimeout(r, 5));
    await storeConverted(`m${i}`, a, () => {}, { key: `m${i}`, dtype: 'f32' });
  }
  const names = (await listConverted()).map((k) => k.name);
  assert.equal(names.length, MAX_CONVERTED);
  assert.ok(!names.includes('ckpt-aaaaaaaa') && !names.includes('ckpt-bbbbbbbb'), `the oldest went: ${names}`);
});
