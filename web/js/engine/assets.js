// assets.js — where the engine comes from. tools/build_site.mjs replaces
// this file: with the content-hashed names for dist/, and with other
// versions for the one-file pages.
//   engine      false: no engine at all (viewer.html draws only snapshots)
//   worker      URL of the worker script (a blob: URL in bertlens.html)
//   glue        URL of the Emscripten glue, or null when the worker's own
//               source already contains it (bertlens.html)
//   wasm        URL of the wasm binary, or null with wasmBinary
//   wasmBinary  null, or a function returning the binary as an ArrayBuffer
//   mt          the pthreads build {glue, wasm, worker} (worker: the glue's
//               bertlens-mt.worker.js), used when the page is cross-origin
//               isolated; absent: one thread only (the one-file pages)
//   pca         URL of the Corpus view's PCA module worker
//               (engine/pca_worker.js); absent: the PCA runs in slices on
//               the main thread (the one-file pages)
//   analyses    absent, or a function returning the bytes of
//               build/wasm/analyze.wasm (viewer.html): a snapshot's
//               attention then gets the heads overview's and the rollout's
//               analyses without the model (lib/attn_analyze.js)
export const ASSETS = {
  engine: true,
  worker: 'js/worker.js',
  glue: 'wasm/bertlens.js',
  wasm: 'wasm/bertlens.wasm',
  wasmBinary: null,
  mt: { glue: 'wasm/bertlens-mt.js', wasm: 'wasm/bertlens-mt.wasm', worker: 'wasm/bertlens-mt.worker.js' },
  pca: 'js/engine/pca_worker.js',
};
