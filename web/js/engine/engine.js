// engine.js — main-thread side of worker.js: promise-based calls and the
// SIMD check. What a run asks for and returns is web/js/lib/protocol.js.

import { WORKER_PROTOCOL, checkResult } from '../lib/protocol.js';
import { ASSETS } from './assets.js';

const LOAD_PIECE = 4 << 20; // bytes per 'load_chunk' of a streamed bundle

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

export class Engine {
  constructor(workerUrl) {
    this.worker = new Worker(workerUrl);
    this.nextId = 1;
    this.pending = new Map();
    this.worker.onmessage = (ev) => {
      const { id, ok, result, error } = ev.data;
      const p = this.pending.get(id);
      if (!p) return;
      this.pending.delete(id);
      if (ok) p.resolve(result); else p.reject(new Error(error));
    };
    this.worker.onerror = (ev) => {
      const err = new Error(`The model worker failed: ${ev.message || 'unknown error'}`);
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
    };
  }

  call(type, args = {}, transfer = []) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, type, ...args }, transfer);
    });
  }

  /** Start the engine: glueUrl null when the glue is part of the worker's
   *  own source; wasmBinary (an ArrayBuffer, transferred) instead of
   *  fetching wasmUrl. The worker picks the pthreads build (ASSETS.mt) when
   *  the page is cross-origin isolated, else the single-threaded one.
   *  Resolves to {simd, threads, threaded}; <html data-engine-threads>
   *  says how many threads the model runs on. */
  async init(glueUrl, wasmUrl, wasmBinary = null) {
    const mt = ASSETS.mt && typeof document !== 'undefined'
      ? Object.fromEntries(Object.entries(ASSETS.mt).map(([k, v]) => [k, new URL(v, document.baseURI).href]))
      : null;
    const out = await this.call('init', { glueUrl, wasmUrl, wasmBinary, protocol: WORKER_PROTOCOL, mt }, wasmBinary ? [wasmBinary] : []);
    if (typeof document !== 'undefined') document.documentElement.dataset.engineThreads = String(out.threads);
    return out;
  }

  /** Hand a bundle to the worker: a decompressed bundle (ArrayBuffer,
   *  transferred); {converted: true}: the one the converter holds in the
   *  worker (convert.js {hold: true}; gen: its conversion), taken in place; {stream, size}: a
   *  ReadableStream of size bytes (a kept copy in Cache Storage), fed in
   *  pieces so it is never whole in JS. Resolves to {info}, or {error,
   *  restored} (restored: the model loaded before is still loaded). */
  load(src) {
    if (src instanceof ArrayBuffer) return this.call('load', { bytes: src }, [src]);
    if (src && src.converted) return this.call('load_converted', { gen: src.gen });
    if (src && src.stream) return this.loadStream(src.stream, src.size);
    return Promise.reject(new Error('nothing to load'));
  }

  async loadStream(stream, size) {
    // A byte stream (Cache Storage's bodies) is read into one reused
    // buffer (BYOB), another chunk by chunk, and copied into pieces of
    // LOAD_PIECE bytes for the worker, which hands each piece's buffer back
    // for the next: buffers that crossed threads are freed only by a
    // garbage collection, so new ones would pile up the bundle's size.
    let reader, byob = false;
    try {
      reader = stream.getReader({ mode: 'byob' });
      byob = true;
    } catch {
      reader = stream.getReader();
    }
    let at = 0; // bytes sent
    let left = new Uint8Array(0); // of the last chunk, not yet copied (default reader)
    let scratch = new ArrayBuffer(1 << 20); // what a BYOB read fills (reused)
    const more = () => new Error(`it has more than the ${size} bytes stored`);
    try {
      await this.call('load_begin', { size });
      let ended = false;
      let spare = null; // the last piece's buffer, back from the worker
      while (!ended) {
        const n = Math.min(LOAD_PIECE, size - at);
        const piece = spare && spare.byteLength === n ? spare : new ArrayBuffer(n);
        spare = null;
        let filled = 0;
        while (filled < piece.byteLength) {
          if (byob) { // into the reused scratch, then copied (see hub_range.js BodyReader.take)
            const { done, value } = await reader.read(new Uint8Array(scratch, 0, Math.min(scratch.byteLength, piece.byteLength - filled)));
            if (value) {
              scratch = value.buffer;
              new Uint8Array(piece, filled, value.byteLength).set(value);
              filled += value.byteLength;
            }
            if (done) { ended = true; break; }
          } else {
            if (!left.length) {
              const { done, value } = await reader.read();
              if (done) { ended = true; break; }
              left = value;
            }
            const k = Math.min(left.length, piece.byteLength - filled);
            new Uint8Array(piece, filled, k).set(left.subarray(0, k));
            filled += k;
            left = left.subarray(k);
          }
        }
        if (filled) {
          const bytes = filled === piece.byteLength ? piece : piece.slice(0, filled);
          spare = (await this.call('load_chunk', { offset: at, bytes }, [bytes])).buffer;
          at += filled;
        }
        if (at === size && !ended) { // the stream must end here
          if (left.length) throw more();
          const { done, value } = await reader.read(byob ? new Uint8Array(1) : undefined);
          if (!done || (value && value.byteLength)) throw more();
          ended = true;
        }
      }
    } catch (e) {
      reader.cancel().catch(() => {});
      const { restored } = await this.call('load_abort').catch(() => ({ restored: false }));
      return { error: `the kept copy could not be read (${String((e && e.message) || e)})`, restored };
    }
    return this.call('load_end');
  }

  /** One call of the converter in the worker (web/js/engine/convert.js drives
   *  it): bytes (a Uint8Array, its buffer transferred) go to the heap. */
  conv(fn, args = [], bytes = null) {
    return this.call('conv', { fn, args, bytes }, bytes ? [bytes.buffer] : []);
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

  /** Two runs' attention compared head by head in C (request from
   *  protocol.js makeCompareRequest): {js, maxAbs, ms}, Float64Array [L][H]. */
  compare(request) { return this.call('compare', { request }); }

  /** The masked-LM head's top-k words at token positions of the held run
   *  ({runId, a, b, positions (null: every token), k}): {runId, hasHead,
   *  k, positions: [{index, token, token_prob, token_rank, top: [{id,
   *  token, prob}]}], ms} (engine/worker_predict.js). */
  predict(request) { return this.call('predict', { request }); }
}
