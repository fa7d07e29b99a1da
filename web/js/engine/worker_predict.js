// worker_predict.js — part of the engine worker (web/js/worker.js lists its
// parts): 'predict', the masked-LM head's top-k words at token positions of
// the last run (src/wasm_predict.c blw_predict_json). A run made without the
// final hidden states (the page skips them when no view reads them) is run
// again on the same texts, mask and flags, so it stays the held run.
/* global handle, P, mod, runCount, lastFlags, cstring, lastError, heldRun */

handle('predict', ({ request }) => {
  const { runId, a, b = null, positions = null, masked = false, k = 5, was = [] } = request;
  heldRun(runId);
  const t0 = performance.now();
  if (mod._blw_has_head() !== 1) return { runId, hasHead: false, k, maskToken: null, positions: [], ids: [], ms: performance.now() - t0 };
  // positions null and not masked: every token; else those and (masked) the
  // mask tokens; was: [position, id] of masked words, whose rank is given
  const ask = () => {
    const n = positions ? positions.length : 0;
    const p = mod._malloc(Math.max(1, n + 2 * was.length) * 4);
    try {
      if (n) mod.HEAP32.set(positions, p >>> 2);
      if (was.length) mod.HEAP32.set(was.flat(), (p >>> 2) + n);
      return mod._blw_predict_json_was(n ? p : 0, n, k, masked || (positions && !n) ? 1 : 0, was.length ? p + 4 * n : 0, was.length);
    } finally {
      mod._free(p);
    }
  };
  let out = ask();
  if (!out) { // no final hidden states in the held run: the same run again, with them
    const pa = cstring(a), pb = b ? cstring(b) : 0;
    try {
      mod._blw_set_final(1);
      if (mod._blw_run(pa, pb, lastFlags | P.KEEP.QK_ALL /* as 'run' keeps */, -1) < 0) throw new Error(lastError('the model run failed'));
    } finally {
      mod._free(pa);
      if (pb) mod._free(pb);
    }
    out = ask();
  }
  if (!out) throw new Error(lastError('no predictions'));
  const res = JSON.parse(mod.UTF8ToString(out));
  return { runId: runCount, hasHead: true, k, maskToken: res.mask_token, positions: res.positions, ids: res.ids, ms: performance.now() - t0 };
});
