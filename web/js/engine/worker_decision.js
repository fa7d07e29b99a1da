// worker_decision.js — part of the engine worker (web/js/worker.js lists its
// parts): what the held run's model decides and why (the Decision view).
//   'decision'        the head's output and the tokens' attributions:
//                     the task head's (src/wasm/wasm_predict.c blw_task_json:
//                     sequence / token classification, question answering),
//                     else the masked-LM head's words at the blanks and the
//                     logit lens there (blw_predict_json, blw_lens_json), and
//                     grad-input or integrated gradients for one target
//                     (src/wasm/wasm_explain.c blw_explain_json)
//   'decision-heads'  one layer of the head-effects grid: for each head h of
//                     that layer, p_target with every head − p_target with
//                     head (layer, h) switched off too (on top of the heads
//                     the page switched off), as `bertlens explain --heads`.
//                     One message per layer, so the page shows progress
//                     between layers and cancels by not asking for the next
//                     (a worker busy in one C call cannot hear a cancel).
// 'decision' reads the run the state holds (heldRun); both leave the state
// holding the page's run again when it held it before: its other views read it.
/* global handle, mod, info, runCount, cstring, lastError, heldRun, setMask, rerunHeld, maskedWords */

/** BL_TASK_* of src/bertlens.h (blw_task_kind). */
const TASK_KINDS = ['none', 'sequence-classification', 'token-classification', 'question-answering'];

/** A JSON answer of the C API (a pointer), or throw its error. */
function jsonOf(p, what) {
  if (!p) throw new Error(lastError(what));
  return JSON.parse(mod.UTF8ToString(p));
}

/** The task head's output for the run in the state (b: its second text). */
function taskNow(b) {
  const pb = b ? cstring(b) : 0;
  try {
    return jsonOf(mod._blw_task_json(pb), 'the task head could not run');
  } finally {
    if (pb) mod._free(pb);
  }
}

/** The masked-LM head's top k at `positions` and every mask token, with
 *  `was` pairs [position, id] (the id whose probability is reported). */
function wordsNow(positions, k, was = []) {
  return jsonOf(maskedWords(positions, k, true, was), 'no predictions');
}

/** The logit lens (blw_lens_json_at) at token positions `at` only. */
function lensAt(at, k) {
  const p = mod._malloc(at.length * 4);
  try {
    mod.HEAP32.set(at, p >>> 2);
    return jsonOf(mod._blw_lens_json_at(p, at.length, k), 'no logit lens');
  } finally {
    mod._free(p);
  }
}

/** The probability of the target (`bertlens explain`'s "prob") for the run
 *  in the state: kind's head, target {position, target, end}. */
function targetProb(kind, t, b) {
  if (kind === 'masked-lm') {
    const w = wordsNow([t.position], 1, [[t.position, t.target]]);
    const at = w.positions.find((q) => q.index === t.position);
    return at ? at.token_prob : NaN;
  }
  const out = taskNow(b);
  if (kind === 'question-answering') return out.start_probs[t.position] * out.end_probs[t.target];
  if (kind === 'token-classification') return out.positions[t.position].probs[t.target];
  return out.probs ? out.probs[t.target] : out.value;
}

handle('decision', ({ request }) => {
  const { runId, a, b = null, method = 'grad-input', steps = 32, target = -1, position = -1, k = 5 } = request;
  heldRun(runId);
  const t0 = performance.now();
  const kind = TASK_KINDS[mod._blw_task_kind()] || 'none';
  const hasMlm = mod._blw_has_head() === 1;
  const base = { runId: runCount, kind: kind === 'none' && hasMlm ? 'masked-lm' : kind, hasMlm };
  if (kind === 'none' && !hasMlm) return { ...base, head: null, words: null, lens: null, explain: null, explainError: null, ms: performance.now() - t0 };
  rerunHeld(a, b, { hidden: true }); // attributions and the lens read every layer's hidden states
  let head = null, words = null, lens = null, explain = null, explainError = null;
  if (kind !== 'none') head = taskNow(b);
  else {
    words = wordsNow(position >= 0 ? [position] : [], k);
    const at = words.positions.map((q) => q.index); // the blanks (and the position asked)
    lens = at.length ? lensAt(at, k).layers : [];
  }
  const p = mod._blw_explain_json(method === 'ig' ? 1 : 0, steps, position, target, 0);
  if (p) explain = JSON.parse(mod.UTF8ToString(p));
  else explainError = lastError('no attribution');
  rerunHeld(a, b); // the state holds the page's run again (as it was: no hidden states)
  return { ...base, head, words, lens, explain, explainError, ms: performance.now() - t0 };
});

handle('decision-heads', ({ request }) => {
  const { runId, a, b = null, kind, position, target, layer, mask = [] } = request;
  if (!info) throw new Error('No model is loaded.');
  // Each head's run is made here from the texts and mask, so the page's run
  // need not be the one the state holds (a comparison may have run the
  // model since); when it is, the state holds it again afterwards.
  const held = runId === runCount;
  const t0 = performance.now();
  const L = info.config.n_layers, H = info.config.n_heads;
  if (!(Number.isInteger(layer) && layer >= 0 && layer < L)) throw new Error(`there is no layer ${layer} (this model has ${L})`);
  const t = { position, target };
  const off = (extra) => setMask(extra ? [...mask, extra] : mask, L, H);
  let effects;
  try {
    off(null);
    rerunHeld(a, b, { flags: 0 });
    const all = targetProb(kind, t, b);
    effects = Array.from({ length: H }, (_, h) => {
      if (mask.some(([l, hh]) => l === layer && hh === h)) return 0; // already off: switching it off changes nothing
      off([layer, h]);
      rerunHeld(a, b, { flags: 0 });
      return all - targetProb(kind, t, b);
    });
  } finally {
    setMask(mask, L, H); // the page's heads off again, and its run back in the state
    if (held) rerunHeld(a, b);
    else runCount++; // the state holds none of the page's runs now: reads of them are refused
  }
  return { runId: runCount, layer, effects, ms: performance.now() - t0 };
});
