// load_stream.test.mjs — the two ways a bundle reaches the engine without a
// whole copy of it in JS (issue 22's memory bar): engine.js load({stream,
// size}) hands a ReadableStream (a kept copy in Cache Storage) to the
// worker, which reads it into the heap ('load_stream', worker_init.js
// streamIn: the same reader as a 'take' of a kept copy), and
// load({converted: true, gen}) hands the bundle the converter holds in the
// worker to the engine in place ('load_converted', blw_conv_load). The
// model so loaded runs as the same bundle loaded from an ArrayBuffer;
// every bad stream (cut, failing, too long, over 2 GB, a size its header
// does not declare, a corrupted byte) is refused with a reason and the
// model loaded before stays loaded and runs. Real wasm build, in Node
// (web/js/worker.js through tools/wasm_node.mjs). Needs build/wasm/bertlens.js
// and build/models/ (make wasm test-models).
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT, DEFAULT_WASM_JS, startWorker, wasmBinaryOf, folderEntries } from '../../tools/wasm_node.mjs';
import { WORKER_PROTOCOL, makeRunRequest } from '../../web/js/lib/protocol.js';
import { Engine } from '../../web/js/engine/engine.js';
import { convertCheckpoint } from '../../web/js/engine/convert.js';

const A = path.join(ROOT, 'build/models/tiny-bert.q8.blb');
const B = path.join(ROOT, 'build/models/all-minilm-l6-v2.q8.blb');
for (const f of [DEFAULT_WASM_JS, A, B]) {
  if (!fs.existsSync(f)) throw new Error(`${path.relative(ROOT, f)} is missing: run make wasm test-models first`);
}
const TEXT = 'The capital of France is Paris.';

/** engine.js's Engine over worker.js run here (no Worker thread). */
async function engineHere() {
  const send = startWorker();
  const eng = Object.create(Engine.prototype);
  eng.call = async (type, args = {}) => {
    const r = await send(type, args);
    if (!r.ok) throw new Error(r.error);
    return r.result;
  };
  await eng.call('init', { glueUrl: null, wasmUrl: 'x.wasm', wasmBinary: wasmBinaryOf(), protocol: WORKER_PROTOCOL });
  return eng;
}

const bufferOf = (b) => b.buffer.slice(b.byteOffset, b.byteOffset + b.length);

/** A stream of bytes in pieces of the given sizes (cycled); after `cutAt`
 *  bytes it ends early (cut: 'close') or fails (cut: 'error'). */
function streamOf(bytes, sizes = [1000, 70000, 3], { cutAt = Infinity, cut = 'close', type } = {}) {
  let at = 0, i = 0;
  return new ReadableStream({
    type, // 'bytes': a byte stream, read with a BYOB reader (as Cache Storage's bodies)
    pull(c) {
      if (at >= Math.min(bytes.length, cutAt)) {
        if (cut === 'error' && at < bytes.length) c.error(new Error('connection lost'));
        else {
          c.close();
          c.byobRequest?.respond(0); // a pending BYOB read ends with the stream
        }
        return;
      }
      const end = Math.min(bytes.length, cutAt, at + sizes[i++ % sizes.length]);
      c.enqueue(new Uint8Array(bytes.subarray(at, end))); // a fresh buffer, as a network read's
      at = end;
    },
  });
}

/** What a run of TEXT gives: its tokens and every layer's attention. */
async function runOf(eng) {
  const r = await eng.call('run', { request: makeRunRequest({ a: TEXT }) });
  return { tokens: r.tokens, L: r.L, attn: Buffer.concat(r.attn.map((a) => Buffer.from(a.buffer, a.byteOffset, a.byteLength))) };
}

test('a streamed bundle runs as the same bundle loaded whole; bad streams are refused and the model before stays', async () => {
  const a = fs.readFileSync(A), b = fs.readFileSync(B);
  const eng = await engineHere();
  assert.ok((await eng.load(bufferOf(b))).info, 'B from an ArrayBuffer');
  const wantB = await runOf(eng);
  assert.ok((await eng.load(bufferOf(a))).info, 'A from an ArrayBuffer');
  const wantA = await runOf(eng);
  assert.notEqual(wantA.L, wantB.L);

  const got = await eng.load({ stream: streamOf(b), size: b.length });
  assert.ok(got.info, got.error);
  assert.equal(got.info.config.n_layers, wantB.L);
  assert.deepEqual(await runOf(eng), wantB, 'B streamed = B whole');

  const bytesStream = await eng.load({ stream: streamOf(b, [65536, 5], { type: 'bytes' }), size: b.length });
  assert.ok(bytesStream.info, bytesStream.error);
  assert.deepEqual(await runOf(eng), wantB, 'B from a byte stream = B whole');

  assert.ok((await eng.load({ stream: streamOf(a, [4 << 20]), size: a.length })).info, 'A streamed');
  const padded = Buffer.concat([b, Buffer.alloc(10)]);
  const corrupt = Buffer.from(b);
  corrupt[b.length - 100] ^= 0x55; // in the last tensor's data: its CRC no longer matches
  const bad = [
    ['a cut stream', { stream: streamOf(b, undefined, { cutAt: b.length >> 1 }), size: b.length }, new RegExp(`cut short \\(${b.length >> 1} of ${b.length} bytes\\)`)],
    ['a cut byte stream', { stream: streamOf(b, undefined, { cutAt: 12345, type: 'bytes' }), size: b.length }, new RegExp(`cut short \\(12345 of ${b.length} bytes\\)`)],
    ['a byte stream longer than its size', { stream: streamOf(b, undefined, { type: 'bytes' }), size: b.length - 7 }, new RegExp(`more than the ${b.length - 7} bytes stored`)],
    ['a failing stream', { stream: streamOf(b, undefined, { cutAt: 5000, cut: 'error' }), size: b.length }, /could not be read \(connection lost\)/],
    ['a stream longer than its size', { stream: streamOf(b), size: b.length - 1 }, new RegExp(`more than the ${b.length - 1} bytes stored`)],
    ['a bundle over 2 GB', { stream: streamOf(b), size: 3 * 2 ** 30 }, /3\.0 GB; the engine loads bundles up to 2 GB/],
    ['a size the header does not declare', { stream: streamOf(padded), size: padded.length }, new RegExp(`says it has ${b.length} bytes, not the ${padded.length} stored`)],
    ['not a bundle', { stream: streamOf(Buffer.alloc(100, 7)), size: 100 }, /not a bertlens bundle/],
    ['a corrupted byte', { stream: streamOf(corrupt), size: b.length }, /CRC|checksum/i],
    ['nothing converted', { converted: true }, /no converted bundle to load/],
  ];
  for (const [what, src, re] of bad) {
    const r = await eng.load(src);
    assert.ok(r.error, `${what}: refused`);
    assert.match(r.error, re, what);
    assert.equal(r.restored, true, `${what}: the model before is still loaded`);
    assert.deepEqual(await runOf(eng), wantA, `${what}: A still runs`);
  }
});

test('the converted bundle the worker holds becomes the model in place, and is then the converter\'s no more', async () => {
  const eng = await engineHere();
  const call = (fn, args, bytes) => eng.conv(fn, args, bytes); // engine.js, as the page calls it
  const dir = path.join(ROOT, 'tests/fixtures/tiny-bert');
  const whole = await convertCheckpoint(call, folderEntries(dir), { name: 'tiny-bert' });
  assert.ok((await eng.load(bufferOf(Buffer.from(whole.bytes)))).info);
  const want = await runOf(eng);
  assert.ok((await eng.load(bufferOf(fs.readFileSync(B)))).info, 'another model in between');

  const older = await convertCheckpoint(call, folderEntries(dir), { name: 'tiny-bert', hold: true });
  const held = await convertCheckpoint(call, folderEntries(dir), { name: 'tiny-bert', hold: true });
  const stale = await eng.load({ converted: true, gen: older.gen });
  assert.match(stale.error, /a newer conversion replaced this one/);
  assert.equal(stale.restored, true);
  await older.release(); // a no-op: it must not drop the newer one
  assert.equal((await held.read(0, 8)).length, 8, 'the newer conversion is still held');
  const got = await eng.load({ converted: true, gen: held.gen });
  assert.ok(got.info, got.error);
  assert.deepEqual(await runOf(eng), want, 'the converted bundle in place = the same bytes loaded whole');
  await assert.rejects(held.read(0, 8), /no converted bundle bytes/, 'the converter let it go');
  await held.release(); // nothing to free twice
  const again = await eng.load({ converted: true });
  assert.match(again.error, /no converted bundle to load/);
  assert.deepEqual(await runOf(eng), want, 'still the converted model');
});
