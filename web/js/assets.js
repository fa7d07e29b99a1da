// assets.js — where the engine comes from. tools/build_site.mjs replaces
// this file: with the content-hashed names for dist/, and with other
// versions for the one-file pages.
//   engine      false: no engine at all (viewer.html draws only snapshots)
//   worker      URL of the worker script (a blob: URL in bertlens.html)
//   glue        URL of the Emscripten glue, or null when the worker's own
//               source already contains it (bertlens.html)
//   wasm        URL of the wasm binary, or null with wasmBinary
//   wasmBinary  null, or a function returning the binary as an ArrayBuffer
export const ASSETS = {
  engine: true,
  worker: 'js/worker.js',
  glue: 'wasm/bertlens.js',
  wasm: 'wasm/bertlens.wasm',
  wasmBinary: null,
};
