// worker_predict.js — part of the engine worker (web/js/worker.js lists its
// parts): 'predict', the masked-LM head's top-k words at token positions of
// the last run (src/wasm/wasm_predict.c blw_predict_json). A run made without the
// final hidden states (the page skips them when no view reads them) is run
// again on the same texts, mask and flags, so it stays the held run.
/* global handle, mod, runCount, lastError, heldRun, rerunHeld, maskedWords */

handle('predict', ({ request }) => {
  const { runId, a, b = null, positions = null, masked = false, k = 5, was = [] } = request;
  heldRun(runId);
  const t0 = performance.now();
  if (mod._blw_has_head() !== 1) return { runId, hasHead: false, k, maskToken: null, positions: [], ids: [], ms: performance.now() - t0 };
  // positions null and not masked: every token; else those and (masked) the
  // mask tokens; was: [position, id] of masked words, whose rank is given
  const ask = () => maskedWords(positions || [], k, masked || (positions && !positions.length), was);
  let out = ask();
  if (!out) { // no final hidden states in the held run: the same run again, with them
    rerunHeld(a, b);
    out = ask();
  }
  if (!out) throw new Error(lastError('no predictions'));
  const res = JSON.parse(mod.UTF8ToString(out));
  return { runId: runCount, hasHead: true, k, maskToken: res.mask_token, positions: res.positions, ids: res.ids, ms: performance.now() - t0 };
});
