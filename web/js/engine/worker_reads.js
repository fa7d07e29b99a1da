// worker_reads.js — part of the engine worker (web/js/worker.js lists its
// parts). What is read out of the run the wasm state holds, for the run
// message and for the messages that read that run again (like, analyze,
// qk): heads compared, queries and keys, the analyses.
/* global P, mod, floats, lastError */
/* exported compareHeads, likeDistances, queriesKeys, analyzeState */

/** Heads compared in C (src/analysis/analyze.c bl_head_compare through
 *  blw_head_compare): n heads of [T][T] at heap pointer pa (stride aStride
 *  floats; 0: the same head for all) against n heads at pb. Returns
 *  {js, maxAbs} (Float64Array [n] each: Jensen–Shannon distance, base 2,
 *  mean over rows; max |b − a|), written at js/maxAbs offset `at`. */
function compareHeads(pa, aStride, pb, n, T, out, at) {
  const po = mod._malloc(2 * n * 4);
  if (!po) throw new Error('out of memory comparing heads');
  try {
    if (mod._blw_head_compare(pa, aStride, pb, n, T, po) !== 0) throw new Error(lastError('the heads could not be compared'));
    const r = mod.HEAPF32.subarray(po >>> 2, (po >>> 2) + 2 * n);
    for (let k = 0; k < n; k++) { out.js[at + k] = r[2 * k]; out.maxAbs[at + k] = r[2 * k + 1]; }
  } finally {
    mod._free(po);
  }
}

/** {of: [layer, head], dist: Float64Array [L][H]}: the Jensen–Shannon
 *  distance of every head of the run in the wasm state to that one (the
 *  heads overview's "heads like this one"). */
function likeDistances(L, H, T, [layer, head]) {
  if (layer >= L || head >= H) throw new Error(`there is no layer ${layer}, head ${head} to compare the heads with`);
  const ref = mod._blw_attention(layer) + head * T * T * 4;
  const out = { js: new Float64Array(L * H), maxAbs: new Float64Array(L * H) };
  for (let l = 0; l < L; l++) {
    const p = mod._blw_attention(l);
    if (!p) throw new Error(`no attention for layer ${l}`);
    compareHeads(ref, 0, p, H, T, out, l * H);
  }
  out.js[layer * H + head] = 0;
  return { of: [layer, head], dist: out.js };
}

/** q and k of the state's run, every layer's (only < 0) or layer only's
 *  (null elsewhere and when not kept), copied out of the wasm heap; their
 *  buffers go on `transfer`. */
function queriesKeys(L, H, T, d, transfer, only = -1) {
  let q = new Array(L).fill(null);
  let k = new Array(L).fill(null);
  for (let l = 0; l < L; l++) {
    if (only >= 0 && l !== only) continue;
    const pq = mod._blw_layer_queries(l);
    const pk = mod._blw_layer_keys(l);
    if (!pq || !pk) continue;
    q[l] = floats(pq, H * T * d);
    k[l] = floats(pk, H * T * d);
    transfer.push(q[l].buffer, k[l].buffer);
  }
  if (!q.some((x) => x)) q = k = null;
  return { q, k };
}

/** Analyses (src/analysis/analyze.c) of the run in the wasm state, as the result's
 *  fields {analysis, rollout, rolloutNorm}: features and classes per head; with ANALYSIS.ROLLOUT every layer's rollout as floats
 *  (blw_rollout, not through JSON), and the norm-based one when the run
 *  kept norms (flags has KEEP.NORMS). Their buffers go on `transfer`. */
function analyzeState(analysis, flags, L, T, transfer) {
  const { KEEP, ANALYSIS } = P;
  const withRollout = analysis >= ANALYSIS.ROLLOUT;
  // 2: compute the rollouts for blw_rollout below; 0: features only.
  const p = mod._blw_analyze_json(withRollout ? 2 : 0);
  if (!p) throw new Error(lastError('the analysis failed'));
  const heads = JSON.parse(mod.UTF8ToString(p));
  if (heads.error) throw new Error(heads.error);
  delete heads.tokens; // the run's own tokens are in the result
  const layers = (norm) => {
    const out = [];
    for (let l = 0; l < L; l++) {
      const pr = mod._blw_rollout(norm, l);
      if (!pr) throw new Error(lastError(`no rollout for layer ${l}`));
      const arr = floats(pr, T * T);
      transfer.push(arr.buffer);
      out.push(arr);
    }
    return out;
  };
  const rollout = withRollout ? layers(0) : null;
  const rolloutNorm = withRollout && flags & KEEP.NORMS ? layers(1) : null;
  return { analysis: heads, rollout, rolloutNorm };
}
