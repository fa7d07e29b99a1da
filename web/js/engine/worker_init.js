// worker_init.js — part of the engine worker (web/js/worker.js lists its
// parts): the 'init' message (start the wasm module, threaded when the page
// can) and 'load' (hand a decompressed bundle to blw_load).
/* global createBertlens, importScripts, handle, WORKER_PROTOCOL_VERSION, P, mod, info, lastError, loadBytes */

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
handle('init', async ({ glueUrl, wasmUrl, wasmBinary, protocol, mt }) => {
  if (!protocol || protocol.version !== WORKER_PROTOCOL_VERSION) {
    throw new Error(`the page and the model worker disagree on the protocol (page ${protocol && protocol.version}, worker ${WORKER_PROTOCOL_VERSION}); reload the page`);
  }
  P = protocol;
  let threads = 1;
  if (canThread(mt)) {
    try {
      mod = await startModule(mt.glue, mt.wasm, null, mt);
      threads = mod._blw_set_threads(threadCount());
      if (threads < 1) throw new Error(lastError('no threads'));
    } catch (e) {
      console.warn('[bertlens] the threaded engine did not start, using one thread:', String((e && e.message) || e));
      mod = null;
      threads = 1;
    }
  }
  if (!mod) mod = await startModule(glueUrl, wasmUrl, wasmBinary, null);
  return { simd: mod._blw_simd() === 1, threads, threaded: mod._blw_threaded() === 1 };
});

handle('load', ({ bytes }) => {
  const u8 = new Uint8Array(bytes);
  if (loadBytes(u8) !== 0) {
    // blw_load validates before replacing: the previous model, if any, is still loaded.
    return { error: lastError('the bundle could not be loaded'), restored: info !== null };
  }
  info = JSON.parse(mod.UTF8ToString(mod._blw_info_json()));
  return { info };
});
