// watchdog.test.mjs — the model worker's watchdog (issue 31 item 4):
// web/js/engine/watchdog.js's deadlines, engine.js ending a worker that
// traps, throws, keeps gigabytes or stops answering (with a stand-in
// Worker and short limits), and worker.js marking a wasm trap as fatal.
// The page's side (a fresh worker, the model restored, the notice) is
// tests/browser/hostile.scenarios.mjs.
import test from 'node:test';
import assert from 'node:assert/strict';
import { LIMITS, workOf, deadlineMs, forwardFlops } from '../../web/js/engine/watchdog.js';
import { Engine, EngineCrash, MEMORY_GROWTH_LIMIT } from '../../web/js/engine/engine.js';
import { startWorker } from '../../tools/wasm_node.mjs';
import { WORKER_PROTOCOL } from '../../web/js/lib/protocol.js';

// blw_info_json's config of all-MiniLM-L6-v2, and of tests/fixtures/hub/tiny-mlm
const MINILM = { n_layers: 6, n_heads: 12, hidden: 384, intermediate: 1536, max_positions: 512, vocab_size: 30522 };
const TINY = { n_layers: 2, n_heads: 4, hidden: 32, intermediate: 64, max_positions: 128, vocab_size: 5000 };

test('deadlines: the floor for tiny work, more for more work, none for init', () => {
  const tiny = deadlineMs(workOf('run', { request: { a: 'the cat sat on the mat.' } }, { model: TINY }));
  assert.ok(tiny >= LIMITS.floorMs && tiny < LIMITS.floorMs + 100, `tiny model, short text: ${tiny} ms`);
  assert.equal(deadlineMs(workOf('init', {})), 0, 'init fetches and compiles: no deadline');
  // all-MiniLM-L6-v2 at 512 tokens: one forward is 13.3 GFLOP (the wasm
  // engine's 0.6 s on one server thread), and both rollouts 3.2 more; a
  // pair with embeddings runs three forwards
  const long = 'word '.repeat(600);
  assert.ok(Math.abs(forwardFlops(MINILM, 512) - 16.5e9) < 0.1e9, `${forwardFlops(MINILM, 512)}`);
  const one = deadlineMs(workOf('run', { request: { a: long } }, { model: MINILM }));
  const three = deadlineMs(workOf('run', { request: { a: long, b: long, embed: true } }, { model: MINILM }));
  assert.ok(one > 20 * 600 && three > 2.5 * (one - LIMITS.floorMs), `${one} ms, with embeddings ${three} ms`);
  // the first run after a load lays the encoder's 10.6 M weights out (0.95 s)
  const first = deadlineMs(workOf('run', { request: { a: 'a' } }, { model: MINILM, laidOut: false }));
  assert.ok(first > LIMITS.floorMs + 20000, `first run: ${first} ms`);
  // tokens are bounded by the model's positions, text by its bytes
  const huge = workOf('run', { request: { a: 'x'.repeat(100000) } }, { model: TINY });
  assert.equal(huge.flops, forwardFlops(TINY, 128));
  assert.equal(huge.text, 100000);
  // bytes: a 360 MB bundle
  assert.ok(deadlineMs(workOf('load', { bytes: new ArrayBuffer(1 << 20) })) > LIMITS.floorMs);
  assert.equal(workOf('load_converted', {}, { hint: { bytes: 360e6 } }).bytes, 360e6);
  assert.equal(workOf('load_stream', { size: 5e6 }, { hint: { bytes: 5e6 } }).bytes, 5e6);
});

/** A stand-in Worker: the test answers (or not) what the engine posts. */
function fakeWorker() {
  const w = {
    posted: [], terminated: false, onmessage: null, onerror: null,
    postMessage(msg) { w.posted.push(msg); if (w.auto) w.auto(msg); },
    terminate() { w.terminated = true; },
    reply(msg) { w.onmessage({ data: msg }); },
  };
  return w;
}

const SHORT = { ...LIMITS, floorMs: 60, graceMs: 10 };

function engineWith(w, crashes) {
  return new Engine('worker.js', { makeWorker: () => w, limits: SHORT, onCrash: (c) => crashes.push(c) });
}

test('engine: a message with no answer before its deadline ends the worker; every call in flight and later rejects', async () => {
  const w = fakeWorker();
  const crashes = [];
  const e = engineWith(w, crashes);
  const t0 = Date.now();
  const run = e.call('run', { request: { a: 'x' } });
  const queued = e.call('qk', { request: {} });
  const err = await run.catch((x) => x);
  assert.ok(err instanceof EngineCrash, String(err));
  assert.equal(err.kind, 'hang');
  assert.match(err.message, /^the model engine gave no answer within 0\.1 s \(its limit for this work\) while running the model$/);
  assert.ok(Date.now() - t0 >= SHORT.floorMs, 'not before the deadline');
  assert.equal((await queued.catch((x) => x)), err, 'the queued call rejects too');
  assert.equal(w.terminated, true);
  assert.deepEqual(crashes, [err], 'onCrash once');
  assert.equal(await e.call('run', { request: { a: 'y' } }).catch((x) => x), err, 'later calls reject at once');
  assert.equal(w.posted.length, 2, 'nothing posted to a dead worker');
});

test('engine: a message queued behind another starts its clock when that one is answered', async () => {
  const w = fakeWorker();
  const crashes = [];
  const e = engineWith(w, crashes);
  // each answer takes 45 ms of the worker's time (< 60 ms), the second one
  // 90 ms after both were sent: it was not late, it waited its turn
  w.auto = (msg) => setTimeout(() => w.reply({ id: msg.id, ok: true, result: msg.id, memory: 0 }), 45 * msg.id);
  const [a, b] = await Promise.all([e.call('run', { request: { a: 'x' } }), e.call('run', { request: { a: 'y' } })]);
  assert.deepEqual([a, b], [1, 2]);
  assert.deepEqual(crashes, []);
  assert.equal(w.terminated, false);
});

test('engine: a wasm trap (fatal answer) ends the worker at once; onCrash hears before the callers', async () => {
  const w = fakeWorker();
  const order = [];
  const e = new Engine('worker.js', { makeWorker: () => w, limits: SHORT, onCrash: (c) => order.push(`onCrash ${c.kind}`) });
  const conv = e.call('conv', { fn: 'finish', args: [] }).catch((x) => { order.push('caller'); return x; });
  w.reply({ id: 1, ok: false, error: 'memory access out of bounds', fatal: true, memory: 64 << 20 });
  const err = await conv;
  assert.equal(err.kind, 'trap');
  assert.equal(err.message, 'the model engine crashed (memory access out of bounds) while converting the checkpoint');
  assert.deepEqual(order, ['onCrash trap', 'caller']);
  assert.equal(w.terminated, true);
});

test('engine: a failed message that left gigabytes of wasm memory ends the worker (memory is given back); a plain failure does not', async () => {
  const w = fakeWorker();
  const crashes = [];
  const e = engineWith(w, crashes);
  const init = e.call('init', {});
  w.reply({ id: 1, ok: true, result: { simd: true }, memory: 64 << 20 });
  await init;
  const small = e.call('run', { request: { a: 'x' } });
  w.reply({ id: 2, ok: false, error: 'No model is loaded.', memory: 64 << 20 });
  assert.equal((await small.catch((x) => x)).message, 'No model is loaded.');
  assert.deepEqual(crashes, []);
  const big = e.call('run', { request: { a: 'aaaa' } });
  w.reply({ id: 3, ok: false, error: 'tokenizer: out of memory', memory: (64 << 20) + MEMORY_GROWTH_LIMIT + (1 << 20) });
  const err = await big.catch((x) => x);
  assert.equal(err.kind, 'memory');
  assert.match(err.message, /^the model engine kept 0\.6 GB of memory after failing \(tokenizer: out of memory\) while running the model$/);
  assert.equal(w.terminated, true);
});

test('engine: an error thrown in the worker outside a message (onerror) ends it', async () => {
  const w = fakeWorker();
  const crashes = [];
  const e = engineWith(w, crashes);
  const p = e.call('load', { bytes: new ArrayBuffer(8) });
  let prevented = false;
  w.onerror({ message: 'Uncaught RuntimeError: unreachable', preventDefault: () => { prevented = true; } });
  const err = await p.catch((x) => x);
  assert.equal(err.kind, 'error');
  assert.equal(err.message, 'the model engine failed (Uncaught RuntimeError: unreachable) while loading the model');
  assert.ok(prevented);
  assert.equal(crashes.length, 1);
});

test('worker.js: a wasm trap in a handler is answered fatal, an ordinary error is not', async () => {
  const fake = async () => ({
    _blw_simd: () => 1, _blw_threaded: () => 0, HEAPU8: new Uint8Array(16),
    _blw_conv_log: () => { throw new WebAssembly.RuntimeError('memory access out of bounds'); },
    _blw_conv_size: () => { throw new Error('just an error'); },
    _blw_conv_finish: () => { throw new Error('Aborted(OOM)'); },
    _malloc: () => 8, _free: () => {}, UTF8ToString: () => '',
  });
  const send = startWorker({ factory: fake });
  assert.equal((await send('init', { glueUrl: null, wasmUrl: 'x.wasm', protocol: WORKER_PROTOCOL })).ok, true);
  const trap = await send('conv', { fn: 'log', args: [] });
  assert.deepEqual([trap.ok, trap.fatal, trap.error, trap.memory], [false, true, 'memory access out of bounds', 16]);
  const plain = await send('conv', { fn: 'size', args: [] });
  assert.deepEqual([plain.ok, plain.fatal], [false, false]);
  const abort = await send('conv', { fn: 'finish', args: [] });
  assert.equal(abort.fatal, true, 'an Emscripten abort');
});

test('after a crash: which source loads a model again, and the notice in each case', async () => {
  const { againSourceOf, sourceName, untrusted, crashNotice } = await import('../../web/js/page/engine_restart.js');
  const spec = { id: 'evil/x', spec: 'evil/x', revision: 'main' };
  assert.deepEqual(againSourceOf({ kind: 'hub', spec, got: {} }), { kind: 'hub', spec });
  assert.deepEqual(againSourceOf({ kind: 'checkpoint', files: Promise.resolve([]) }), { kind: 'converted' });
  const entry = { id: 'm', name: 'MiniLM' };
  assert.deepEqual(againSourceOf({ kind: 'listed', entry }), { kind: 'listed', entry, file: undefined });
  assert.equal(sourceName({ kind: 'listed', entry }), 'MiniLM');
  assert.equal(sourceName({ kind: 'hub', spec }), 'evil/x');
  assert.deepEqual(['hub', 'checkpoint', 'converted', 'listed', 'file'].map((kind) => untrusted({ kind })), [true, true, true, false, false]);
  const trap = new EngineCrash('trap', 'crashed (memory access out of bounds)', { during: 'conv' });
  assert.equal(crashNotice(trap, { phase: 'load', what: 'evil/x', back: { name: 'MiniLM', how: 'previous' }, dropped: true }),
    'Loading evil/x stopped the model engine: it crashed (memory access out of bounds) while converting the checkpoint. '
    + 'The engine was restarted with MiniLM, the model loaded before. Nothing of evil/x was kept in this browser.');
  const hang = new EngineCrash('hang', 'gave no answer within 5.1 s (its limit for this work)', { during: 'run', ms: 5100 });
  assert.equal(crashNotice(hang, { phase: 'first-run', what: 'evil/x', back: { name: 'MiniLM', how: 'instead' }, dropped: true }),
    'evil/x stopped the model engine on its first run: it gave no answer within 5.1 s (its limit for this work) while running the model. '
    + 'The engine was restarted with MiniLM instead. Nothing of evil/x was kept in this browser.');
  assert.equal(crashNotice(hang, { phase: 'run', what: 'MiniLM', back: { name: 'MiniLM', how: 'same' }, blocked: true }),
    'The model engine stopped on this input: it gave no answer within 5.1 s (its limit for this work) while running the model. '
    + 'The engine was restarted with MiniLM loaded again; edit the text to run the model again.');
  assert.match(crashNotice(trap, { phase: 'load', what: 'evil/x', back: { how: 'boot' } }), /\. The engine was restarted\.$/);
  assert.match(crashNotice(trap, { phase: 'other', what: 'MiniLM', back: { name: 'MiniLM', how: 'same' } }), /restarted with MiniLM loaded again\.$/);
  assert.match(crashNotice(trap, { phase: 'other', what: 'MiniLM', back: null }), /^The model engine stopped: .* The engine was restarted; choose a model to load\.$/);
});
