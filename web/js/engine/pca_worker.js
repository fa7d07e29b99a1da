// pca_worker.js — the joint query/key map's projection off the main thread
// (issue 25 item 2): a module worker that runs lib/corpus_pca.js's pca2 (the
// one implementation; same numbers as in Node's tests) on the points it is
// sent and answers {id, xy, axes, variance, total} (xy transferred), or
// {id, error}. The Corpus view (views/corpus_qk.js) starts it with
// new Worker(ASSETS.pca, {type: 'module'}) (engine/assets.js; the built
// site's hashed name, tools/build_site.mjs); imported elsewhere (Node's
// tests), the module installs nothing.
//
//   message in:  {id, points Float32Array [n][d], n, d}
//   message out: {id, xy Float32Array [n][2], axes [[d],[d]], variance [2], total} | {id, error}

import { pca2 } from '../lib/corpus_pca.js';

/** One request's answer (also what Node's tests call). */
export function pcaAnswer(msg) {
  const { id, points, n, d } = msg || {};
  if (!(points instanceof Float32Array) || !Number.isInteger(n) || !Number.isInteger(d) || n < 0 || d <= 0 || points.length < n * d) {
    return { id, error: 'pca worker: points must be a Float32Array of n x d numbers' };
  }
  return { id, ...pca2(points, n, d) };
}

const inWorker = typeof WorkerGlobalScope !== 'undefined' && globalThis instanceof WorkerGlobalScope;
if (inWorker) {
  globalThis.onmessage = (ev) => {
    let out;
    try { out = pcaAnswer(ev.data); } catch (e) { out = { id: ev.data?.id, error: String(e?.message || e) }; }
    globalThis.postMessage(out, out.xy ? [out.xy.buffer] : []);
  };
}
