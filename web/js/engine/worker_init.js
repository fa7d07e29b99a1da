// worker_init.js — part of the engine worker (web/js/worker.js lists its
// parts): the 'init' message (start the wasm module, threaded when the page
// can) and 'load' (hand a decompressed bundle to blw_load), or the same
// read from a stream: 'load_stream' {stream, size} (and worker_take.js's
// kept copies, streamIn), so a kept bundle goes into the heap without a
// whole copy of it in JS.
/* global createBertlens, importScripts, handle, loadEpoch, WORKER_PROTOCOL_VERSION, P, mod, info, lastError, loadBytes, loaded */

/** Threads for the pthreads build: one per core (navigator.hardwareConcurrency),
 *  at most the pool of Workers the glue started (Makefile MT_POOL) + this one. */
function threadCount() {
  const cores = (self.navigator && self.navigator.hardwareConcurrency) || 1;
  const pool = (mod.PThread && mod.PThread.unusedWorkers && mod.PThread.unusedWorkers.length) || 0;
  return Math.max(1, Math.min(cores, pool + 1));
}

/** The pthreads build needs SharedArrayBuffer, which a browser gives only
 *  to a cross-origin isolated page (COOP + COEP headers, docs/page.md, "Threads");
 *  an embed in another site's page, a host without those headers or the
 *  one-file page (no mt files) get the single-threaded build. */
const canThread = (mt) => !!(mt && mt.glue && self.crossOriginIsolated === true && typeof SharedArrayBuffer === 'function');

/** Relaxed SIMD (f32x4.relaxed_madd, Chrome 114+): validated on a
 *  one-function module before anything is fetched, so a browser without it
 *  never downloads the relaxed build.
 *  (module (func (param v128 v128 v128) (result v128)
 *    local.get 0 local.get 1 local.get 2 f32x4.relaxed_madd)) */
const RELAXED_PROBE = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 8, 1, 96, 3, 123, 123, 123, 1, 123, 3, 2, 1, 0,
  10, 13, 1, 11, 0, 32, 0, 32, 1, 32, 2, 253, 133, 2, 11]);
function relaxedSimd() {
  try {
    return typeof WebAssembly === 'object' && WebAssembly.validate(RELAXED_PROBE) === true;
  } catch {
    return false;
  }
}

async function startModule(glueUrl, wasmUrl, wasmBinary, mt) {
  if (glueUrl) importScripts(glueUrl);
  if (typeof createBertlens !== 'function') throw new Error('the engine script (Emscripten glue) did not load');
  return createBertlens({
    ...(wasmBinary ? { wasmBinary } : {}),
    locateFile: (path) => (path.endsWith('.wasm') ? wasmUrl : mt && path.endsWith('.worker.js') ? mt.worker : path),
    ...(mt ? { mainScriptUrlOrBlob: glueUrl } : {}), // what the pthread Workers load
    print: () => {},
    printErr: (s) => console.warn('[bertlens wasm]', s),
  });
}

// glueUrl null: the glue is already part of this worker's source (the
// one-file page builds the worker from a Blob of glue + this file).
// wasmBinary: the module's bytes, when there is no URL to fetch them from.
// mt: {glue, wasm, worker} of the pthreads build, used when canThread(mt).
// relaxed: the relaxed-SIMD builds {glue, wasm, mt?} (ASSETS.relaxed), used
// instead of the plain ones when this browser validates relaxed SIMD; a
// relaxed build that fails to start falls back to the plain one.
handle('init', async ({ glueUrl, wasmUrl, wasmBinary, protocol, mt, relaxed }) => {
  if (!protocol || protocol.version !== WORKER_PROTOCOL_VERSION) {
    throw new Error(`the page and the model worker disagree on the protocol (page ${protocol && protocol.version}, worker ${WORKER_PROTOCOL_VERSION}); reload the page`);
  }
  P = protocol;
  const useRelaxed = !!(relaxed && relaxed.glue && relaxed.wasm && relaxedSimd());
  const builds = useRelaxed
    ? [{ glueUrl: relaxed.glue, wasmUrl: relaxed.wasm, wasmBinary: null, mt: relaxed.mt || null, relaxed: true }]
    : [];
  builds.push({ glueUrl, wasmUrl, wasmBinary, mt, relaxed: false });
  let threads = 1, isRelaxed = false;
  for (const b of builds) {
    threads = 1;
    if (canThread(b.mt)) {
      try {
        mod = await startModule(b.mt.glue, b.mt.wasm, null, b.mt);
        threads = mod._blw_set_threads(threadCount());
        if (threads < 1) throw new Error(lastError('no threads'));
      } catch (e) {
        console.warn('[bertlens] the threaded engine did not start, using one thread:', String((e && e.message) || e));
        mod = null;
        threads = 1;
      }
    }
    if (!mod) {
      try {
        mod = await startModule(b.glueUrl, b.wasmUrl, b.wasmBinary, null);
      } catch (e) {
        if (!b.relaxed) throw e;
        console.warn('[bertlens] the relaxed-SIMD engine did not start, using the plain one:', String((e && e.message) || e));
        mod = null;
      }
    }
    if (mod) {
      isRelaxed = b.relaxed;
      break;
    }
  }
  return { simd: mod._blw_simd() === 1, threads, threaded: mod._blw_threaded() === 1, relaxed: isRelaxed };
});

handle('load', ({ bytes }) => {
  loadEpoch++; // a take in flight (worker_take.js) loads nothing now
  return loaded(loadBytes(new Uint8Array(bytes)));
});

const MAX_BUNDLE = 0x7fffffff; // blw_load's int size
let incoming = null; // a streamed bundle: {p, size, at} (p: _malloc'ed, size bytes, at filled)

function dropIncoming() {
  if (incoming) mod._free(incoming.p);
  incoming = null;
}

/** Room for a streamed bundle of size bytes. */
function beginIncoming(size) {
  dropIncoming();
  if (!Number.isSafeInteger(size) || size < 24) throw new Error(`a bundle of ${size} bytes is not a bundle`);
  if (size > MAX_BUNDLE) throw new Error(`the bundle is ${(size / 1073741824).toFixed(1)} GB; the engine loads bundles up to 2 GB`);
  const p = mod._malloc(size);
  if (!p) throw new Error(`Out of memory allocating ${size} bytes for the model.`);
  incoming = { p: p >>> 0, size, at: 0 };
}

/** The streamed bundle, complete and of the size its header declares
 *  (src/format/bundle.h: "BERTLENS", u64 file_size at 16), to blw_load. */
function endIncoming() {
  const { p, size, at } = incoming;
  if (at !== size) {
    dropIncoming();
    return { error: `the bundle was cut short (${at} of ${size} bytes)`, restored: info !== null };
  }
  const head = new DataView(mod.HEAPU8.buffer, p, 24);
  const magic = String.fromCharCode(...mod.HEAPU8.subarray(p, p + 8));
  const declared = head.getBigUint64(16, true);
  if (magic !== 'BERTLENS' || declared !== BigInt(size)) {
    dropIncoming();
    return { error: magic !== 'BERTLENS' ? 'not a bertlens bundle' : `the bundle says it has ${declared} bytes, not the ${size} stored`, restored: info !== null };
  }
  incoming = null;
  return loaded(mod._blw_load(p, size)); // takes p (and frees it when it refuses the bundle)
}

/** The size bytes of stream (a kept copy's body) into the heap and to
 *  blw_load, never whole in JS: {info} or {error, restored} (the model
 *  loaded before is still loaded). A byte stream is read into one reused
 *  scratch buffer (a buffer a read hands back is freed only by a garbage
 *  collection). current(): this load is still the latest; when it is not
 *  the read stops and throws {superseded: true}. */
async function streamIn(stream, size, current) {
  try {
    beginIncoming(size);
  } catch (e) {
    stream.cancel().catch(() => {});
    return { error: e.message, restored: info !== null };
  }
  let reader, byob = false;
  try {
    reader = stream.getReader({ mode: 'byob' });
    byob = true;
  } catch {
    reader = stream.getReader();
  }
  let scratch = new ArrayBuffer(1 << 20);
  try {
    for (;;) {
      let value, done;
      if (byob) ({ done, value } = await reader.read(new Uint8Array(scratch)));
      else ({ done, value } = await reader.read());
      if (!current() || !incoming) throw Object.assign(new Error('a newer load replaced this one'), { superseded: true });
      if (value && value.byteLength) {
        if (value.byteLength > incoming.size - incoming.at) throw new Error(`it has more than the ${incoming.size} bytes stored`);
        mod.HEAPU8.set(value, incoming.p + incoming.at);
        incoming.at += value.byteLength;
        if (byob) scratch = value.buffer;
      }
      if (done) break;
    }
  } catch (e) {
    reader.cancel().catch(() => {});
    if (e.superseded) throw e;
    dropIncoming();
    return { error: `the kept copy could not be read (${String((e && e.message) || e)})`, restored: info !== null };
  }
  return endIncoming();
}

// A stream handed over by the page (transferred): engine.js load({stream, size}).
handle('load_stream', ({ stream, size }) => {
  const epoch = ++loadEpoch; // a take in flight (worker_take.js) loads nothing now
  return streamIn(stream, size, () => epoch === loadEpoch);
});
