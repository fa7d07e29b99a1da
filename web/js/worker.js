// worker.js — runs the bertlens WebAssembly module off the main thread, so
// the page never freezes while the model loads or runs. Classic worker: the
// Emscripten glue (MODULARIZE, factory createBertlens) is loaded with
// importScripts.
//
// Messages in:  {id, type: 'init'|'load'|'load_stream'|'load_converted'|'take'|'run'|'conv'|'like'|'analyze'|'qk'|'scores'|'compare'|'predict'|'decision'|'decision-heads', ...}   (see engine.js)
// Messages out: {id, ok: true, result, memory} or {id, ok: false, error, fatal, memory};
// before its answer, a handler may send {id, progress} events ('take')
// (fatal: the engine cannot go on, e.g. a wasm trap; memory: the wasm
// memory's bytes; both for engine.js's watchdog)
// The run request and its result: web/js/lib/protocol.js. This classic worker
// cannot import that module; 'init' brings its WORKER_PROTOCOL (the KEEP_*
// flag values and analysis levels), so no flag value is written here.
//
// This file only dispatches. Each message's handler is a part in
// web/js/engine/worker_*.js that registers itself with handle(type, fn);
// a new message is a new part and one line in WORKER_PARTS. A handler
// returns its result, or [result, transfer] to transfer buffers. The parts
// are classic scripts sharing this global scope: tools/worker_source.mjs
// puts them in place of the importScripts line below (the built site, the
// one-file page and the Node tests all run the joined source).
/* global importScripts, mod */

const WORKER_PROTOCOL_VERSION = 8; // protocol.js PROTOCOL_VERSION this file speaks

const handlers = Object.create(null);
/** Register the handler of message `type` (one per type). */
function handle(type, fn) {
  if (handlers[type]) throw new Error(`two handlers for the worker message ${type}`);
  handlers[type] = fn;
}

const WORKER_PARTS = [
  'engine/worker_heap.js', // the state the handlers share, the wasm heap
  'engine/worker_reads.js', // what is read from the run the state holds
  'engine/worker_init.js', // init, load
  'engine/worker_run.js', // run
  'engine/worker_held.js', // like, analyze, qk, scores
  'engine/worker_compare.js', // compare
  'engine/worker_conv.js', // conv
  'engine/worker_predict.js', // predict
  'engine/worker_decision.js', // decision, decision-heads (the Decision view)
  'engine/worker_corpus.js', // corpus-begin, corpus-add, corpus-result, corpus-end
  'engine/worker_take.js', // take (a model fetched, converted, kept and loaded here)
];
// Plain ES modules the parts use (joined in by tools/worker_source.mjs, each
// in its own scope; a part reaches one as workerModule(path)).
const WORKER_MODULES = ['engine/take.js'];
importScripts(...WORKER_PARTS); // WORKER_PARTS

/** An error the engine cannot go on after: a wasm trap (memory access out
 *  of bounds, unreachable, …), an Emscripten abort, the wasm stack
 *  exhausted. The heap may be half-written, so the page ends this worker
 *  and starts a fresh one (engine.js, the watchdog). */
function fatal(e) {
  const wasm = typeof WebAssembly === 'object' && WebAssembly.RuntimeError && e instanceof WebAssembly.RuntimeError;
  const msg = String((e && e.message) || e);
  return wasm || /^Aborted\(/.test(msg) || (e instanceof RangeError && /call stack/i.test(msg));
}

/** The wasm memory's size (engine.js restarts a worker whose failed
 *  message left it gigabytes larger: wasm memory never shrinks). */
const memoryNow = () => (mod && mod.HEAPU8 ? mod.HEAPU8.length : 0);

self.onmessage = async (ev) => {
  const { id, type, ...args } = ev.data;
  try {
    if (!Object.hasOwn(handlers, type)) throw new Error(`the model worker has no message ${type}`);
    let out = await handlers[type](args, { progress: (p) => self.postMessage({ id, progress: p }) });
    let transfer = [];
    if (Array.isArray(out)) [out, transfer] = out;
    self.postMessage({ id, ok: true, result: out, memory: memoryNow() }, transfer);
  } catch (e) {
    // during: what it was doing, where a message does several things ('take' converting: 'conv')
    self.postMessage({ id, ok: false, error: String((e && e.message) || e), fatal: fatal(e), memory: memoryNow(), ...(e && e.during ? { during: e.during } : {}) });
  }
};
