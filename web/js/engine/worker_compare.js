// worker_compare.js — part of the engine worker (web/js/worker.js lists its
// parts): 'compare', two runs' attention compared head by head in C. a and b
// are per-layer Float32Arrays [H][K][K] (already aligned by the page), any
// model's.
/* global handle, mod, putLayers, compareHeads */

handle('compare', ({ request }) => {
  if (!mod) throw new Error('the model engine has not started');
  const { a, b, H, K } = request;
  const L = a.length;
  if (!L || b.length !== L || a.some((x, l) => x.length !== H * K * K || b[l].length !== H * K * K)) {
    throw new Error('the two runs to compare differ in shape');
  }
  const t0 = performance.now();
  const pa = putLayers(a);
  let pb = 0;
  const out = { js: new Float64Array(L * H), maxAbs: new Float64Array(L * H) };
  try {
    pb = putLayers(b);
    compareHeads(pa, K * K, pb, L * H, K, out, 0);
  } finally {
    mod._free(pa);
    if (pb) mod._free(pb);
  }
  out.ms = performance.now() - t0;
  return [out, [out.js.buffer, out.maxAbs.buffer]];
});
