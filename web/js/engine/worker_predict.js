// worker_predict.js — part of the engine worker (web/js/worker.js lists its
// parts): 'predict', the masked-LM head's top-k words at token positions of
// the last run (src/wasm_predict.c blw_predict_json). A run made without the
// final hidden states (the page skips them when no view reads them) is run
// again on the same texts, mask and flags, so it stays the held run.
/* global handle, P, mod, runCount, lastFlags, cstring, lastError, heldRun */

handle('predict', ({ request }) => {
  const { runId, a, b = null, positions = null, masked = false, k = 5 } = request;
  heldRun(runId);
  const t0 = performance.now();
  if (mod._blw_has_head() !== 1) return { runId, hasHead: false, k, maskToken: null, positions: [], ms: performance.now() - t0 };
  // positions null and not masked: every token; else those and (masked) the mask tokens
  const ask = () => {
    if (!positions || !positions.length) return mod._blw_predict_json(0, 0, k, masked || positions ? 1 : 0);
    const p = mod._malloc(positions.length * 4);
    try {
      mod.HEAP32.set(positions, p >>> 2);
      return mod._blw_predict_json(p, positions.length, k, masked ? 1 : 0);
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
  return { runId: runCount, hasHead: true, k, maskToken: res.mask_token, positions: res.positions, ms: performance.now() - t0 };
});
