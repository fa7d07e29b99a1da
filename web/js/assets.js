// assets.js — where the worker, the Emscripten glue and the wasm binary live.
// tools/build_site.mjs rewrites this file with the content-hashed names.
export const ASSETS = {
  worker: 'js/worker.js',
  glue: 'wasm/bertlens.js',
  wasm: 'wasm/bertlens.wasm',
};
