// engine.js — main-thread side of worker.js: promise-based calls and the
// SIMD check. What a run asks for and returns is web/js/lib/protocol.js.

import { WORKER_PROTOCOL, checkResult } from '../lib/protocol.js';
import { ASSETS } from './assets.js';
import { LIMITS, workOf, deadlineMs, formatMs } from './watchdog.js';


// (module (func (result v128) i32.const 0 i8x16.splat)) — validates only
// where the engine implements wasm SIMD128.
const SIMD_PROBE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version
  0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7b, // type: () -> v128
  0x03, 0x02, 0x01, 0x00, // one function of type 0
  0x0a, 0x08, 0x01, 0x06, 0x00, 0x41, 0x00, 0xfd, 0x0f, 0x0b, // body
]);

export function hasWasmSimd() {
  try {
    return typeof WebAssembly === 'object' && WebAssembly.validate(SIMD_PROBE);
  } catch {
    return false;
  }
}

/** The model worker died: a wasm trap, an error it threw outside a
 *  message, no answer before its deadline (watchdog.js), or memory it
 *  cannot give back. kind: 'trap' | 'error' | 'hang' | 'memory'; reason:
 *  what happened, in words that follow "the model engine" (the message is
 *  that sentence); during: the message it was handling ('conv', 'run', …);
 *  ms: the deadline missed (hang). Every call in flight rejects with it,
 *  and every later one. */
export class EngineCrash extends Error {
  constructor(kind, reason, { during = '', ms = 0, detail = '' } = {}) {
    const doing = DOING[during] || (during ? `while answering '${during}'` : '');
    super(`the model engine ${reason}${doing ? ` ${doing}` : ''}`);
    Object.assign(this, { name: 'EngineCrash', kind, reason, during, doing, ms, detail });
  }
}

const DOING = {
  conv: 'while converting the checkpoint',
  load: 'while loading the model', load_stream: 'while loading the model', load_converted: 'while loading the model', take: 'while loading the model',
  run: 'while running the model', qk: 'while reading queries and keys', analyze: 'while analysing the heads',
  like: 'while comparing heads', compare: 'while comparing runs', predict: 'while predicting words',
  'corpus-add': 'while running the corpus',
};

// A failed message after which the worker's wasm memory grew by more than
// this is answered by a fresh worker: wasm memory never shrinks, and a file
// that asked for gigabytes (a tokenizer.json whose normalizer doubles the
// text, issue 31) would otherwise keep them until the page is closed.
export const MEMORY_GROWTH_LIMIT = 512 << 20;

export class Engine {
  /** opts: onCrash(EngineCrash) (once, before the calls in flight are
   *  rejected), makeWorker(url) (tests: a stand-in), limits (watchdog.js LIMITS). */
  constructor(workerUrl, { onCrash = null, makeWorker = (url) => new Worker(url), limits = LIMITS } = {}) {
    this.worker = makeWorker(workerUrl);
    this.nextId = 1;
    this.pending = new Map(); // id -> {resolve, reject, type, ms, timer, started}, in the order sent
    this.dead = null; // the EngineCrash that ended this worker
    this.onCrash = onCrash;
    this.limits = limits;
    // what the deadlines need to know (watchdog.js workOf's ctx)
    this.model = null; // config of the model the worker holds
    this.laidOut = false; // its weights laid out by a first run
    this.lastT = 0; // tokens of the last run
    this.memory = 0; // the worker's wasm memory after its last answer
    this.worker.onmessage = (ev) => {
      const m = ev.data || {};
      if (m.progress && !('ok' in m)) this.heard(m.id, m.progress);
      else this.answer(m);
    };
    this.worker.onerror = (ev) => {
      if (ev && typeof ev.preventDefault === 'function') ev.preventDefault(); // said in a notice, not on the console
      this.crash('error', `failed (${(ev && ev.message) || 'an error in its worker'})`);
    };
    this.worker.onmessageerror = () => this.crash('error', 'sent a message the page could not read');
  }

  /** A progress event of call id ('take'): to its onProgress. */
  heard(id, progress) {
    const p = this.pending.get(id);
    if (p && !this.dead && p.onProgress) p.onProgress(progress);
  }

  answer({ id, ok, result, error, fatal, memory, during }) {
    const p = this.pending.get(id);
    if (!p || this.dead) return;
    this.pending.delete(id);
    clearTimeout(p.timer);
    const grew = Number.isFinite(memory) && memory - this.memory;
    if (Number.isFinite(memory)) this.memory = memory;
    if (fatal) {
      this.crash('trap', `crashed (${error})`, { during: during || p.type, detail: error });
      p.reject(this.dead);
      return;
    }
    if (!ok && grew > MEMORY_GROWTH_LIMIT) {
      this.crash('memory', `kept ${(memory / 1073741824).toFixed(1)} GB of memory after failing (${error})`,
        { during: p.type, detail: error });
      p.reject(this.dead);
      return;
    }
    this.learn(p.type, ok ? result : null);
    this.startClock();
    if (ok) p.resolve(result); else p.reject(new Error(error));
  }

  /** What an answer tells the deadlines of the next messages. */
  learn(type, result) {
    if (type === 'take' && result) result = result.load; // the load it ended with
    if (!result) return;
    if (result.info) { this.model = result.info.config; this.laidOut = false; }
    if (type === 'run' && Number.isInteger(result.T)) { this.laidOut = true; this.lastT = result.T; }
  }

  /** The clock of the oldest message not answered yet: the worker answers
   *  in order, so a message queued behind another has not started. */
  startClock() {
    const first = this.pending.values().next().value;
    if (!first || first.started || !first.ms) return;
    first.started = true;
    first.timer = setTimeout(() => {
      // an answer may already be queued behind this timer: a last look first
      first.timer = setTimeout(() => this.crash('hang', `gave no answer within ${formatMs(first.ms)} (its limit for this work)`,
        { during: first.type, ms: first.ms }), this.limits.graceMs);
    }, first.ms);
  }

  /** End this worker: every call in flight rejects with the EngineCrash,
   *  and onCrash hears of it once. */
  crash(kind, message, opts = {}) {
    if (this.dead) return;
    const oldest = this.pending.values().next().value;
    this.dead = new EngineCrash(kind, message, { during: oldest ? oldest.type : '', ...opts });
    try { this.worker.terminate(); } catch { /* gone already */ }
    // onCrash first: what it decides holds when the calls in flight hear of it
    if (this.onCrash) this.onCrash(this.dead);
    for (const p of this.pending.values()) { clearTimeout(p.timer); p.reject(this.dead); }
    this.pending.clear();
  }

  /** Post message `type`; its answer resolves (or rejects with the
   *  worker's error). hint: work the caller knows of beyond the message
   *  itself (watchdog.js workOf), for its deadline. */
  call(type, args = {}, transfer = [], hint = null, onProgress = null) {
    if (this.dead) return Promise.reject(this.dead);
    const id = this.nextId++;
    const ms = deadlineMs(workOf(type, args, { model: this.model, laidOut: this.laidOut, lastT: this.lastT, hint }), this.limits);
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, type, ms, timer: 0, started: false, onProgress });
      this.worker.postMessage({ id, type, ...args }, transfer);
      this.startClock();
    });
  }

  /** Start the engine: glueUrl null when the glue is part of the worker's
   *  own source; wasmBinary (an ArrayBuffer, transferred) instead of
   *  fetching wasmUrl. The worker picks the pthreads build (ASSETS.mt) when
   *  the page is cross-origin isolated, else the single-threaded one; and
   *  the relaxed-SIMD builds (ASSETS.relaxed) instead of the plain ones when
   *  the browser validates relaxed SIMD (the worker tests it before fetching).
   *  Resolves to {simd, threads, threaded, relaxed}; <html data-engine-threads>
   *  says how many threads the model runs on, data-engine-simd which build
   *  ('relaxed' or 'simd128'). */
  async init(glueUrl, wasmUrl, wasmBinary = null) {
    const urls = (o) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, v && typeof v === 'object' ? urls(v) : new URL(v, document.baseURI).href]));
    const page = typeof document !== 'undefined';
    const mt = ASSETS.mt && page ? urls(ASSETS.mt) : null;
    const relaxed = ASSETS.relaxed && page ? urls(ASSETS.relaxed) : null;
    const out = await this.call('init', { glueUrl, wasmUrl, wasmBinary, protocol: WORKER_PROTOCOL, mt, relaxed }, wasmBinary ? [wasmBinary] : []);
    if (page) {
      document.documentElement.dataset.engineThreads = String(out.threads);
      document.documentElement.dataset.engineSimd = out.relaxed ? 'relaxed' : 'simd128';
    }
    return out;
  }

  /** Hand a bundle to the worker: a decompressed bundle (ArrayBuffer,
   *  transferred); {converted: true}: the one the converter holds in the
   *  worker (convert.js {hold: true}; gen: its conversion), taken in place; {stream, size}: a
   *  ReadableStream of size bytes (a kept copy in Cache Storage), read by
   *  the worker so it is never whole in JS. Resolves to {info}, or {error,
   *  restored} (restored: the model loaded before is still loaded). */
  load(src) {
    if (src instanceof ArrayBuffer) return this.call('load', { bytes: src }, [src]);
    if (src && src.converted) return this.call('load_converted', { gen: src.gen }, [], { bytes: src.size || 0 });
    if (src && src.stream) return this.loadStream(src.stream, src.size);
    return Promise.reject(new Error('nothing to load'));
  }

  /** The stream goes to the worker (transferred), which reads it into
   *  the heap itself (worker_init.js streamIn): one message, whatever the size. */
  loadStream(stream, size) {
    return this.call('load_stream', { stream, size }, [stream], { bytes: Number(size) || 0 })
      .catch((e) => ({ error: this.dead ? this.dead.message : String((e && e.message) || e), restored: false }));
  }

  /** A model taken into the engine by the worker in one request
   *  (engine/take.js: a Hub id, a checkpoint's files, a kept converted
   *  copy; worker_take.js): onProgress({label, done, total}) hears a few
   *  dozen steps; resolves to take.js's result ({load: {info} | {error,
   *  restored}, ...} or {failed} or {superseded}). The page's address goes
   *  with it: kept copies are keyed under it. */
  take(request, onProgress = () => {}) {
    const page = typeof location === 'object' && location ? location.href : '';
    return this.call('take', { request, page }, [], null, onProgress);
  }

  /** One call of the converter in the worker (web/js/engine/convert.js drives
   *  it): bytes (a Uint8Array, its buffer transferred) go to the heap. */
  conv(fn, args = [], bytes = null, hint = null) {
    return this.call('conv', { fn, args, bytes }, bytes ? [bytes.buffer] : [], hint);
  }

  /** Run the model: request from protocol.js makeRunRequest; the result is
   *  checked against protocol.js RESULT_FIELDS. */
  async run(request) { return checkResult(await this.call('run', { request })); }

  /** Distances of every head to one head, from the worker's last run
   *  (request from protocol.js makeLikeRequest): {of, dist, ms}; rejects
   *  when the worker ran the model again since. */
  like(request) { return this.call('like', { request }); }

  /** The analysis of the worker's last run (protocol.js
   *  makeAnalyzeRequest); rejects ('stale') when it ran again since. */
  analyze(request) { return this.call('analyze', { request }); }

  /** Every layer's queries and keys of the worker's last run (protocol.js
   *  makeQkRequest): {runId, q, k, ms}; rejects ('stale') when it ran again since. */
  qk(request) { return this.call('qk', { request }); }

  /** One head's scores and their terms from the worker's last run
   *  (protocol.js makeScoresRequest): {runId, layer, head, window, scores,
   *  terms, ms}; rejects ('stale') when it ran again since. */
  scores(request) { return this.call('scores', { request }); }

  /** Two runs' attention compared head by head in C (request from
   *  protocol.js makeCompareRequest): {js, maxAbs, ms}, Float64Array [L][H]. */
  compare(request) { return this.call('compare', { request }); }

  /** The masked-LM head's top-k words at token positions of the held run
   *  ({runId, a, b, positions (null: every token), k}): {runId, hasHead,
   *  k, positions: [{index, token, token_prob, token_rank, top: [{id,
   *  token, prob}]}], ms} (engine/worker_predict.js). */
  predict(request) { return this.call('predict', { request }); }
}
