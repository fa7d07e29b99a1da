// worker_heap.js — part of the engine worker (web/js/worker.js lists its
// parts; tools/worker_source.mjs joins them into one classic script). What
// every message handler shares: the module, the loaded model, the run the
// wasm state still holds, and copying in and out of the wasm heap.
/* exported P, mod, info, runCount, lastT, lastFlags, cstring, lastError, floats, putLayers, loadBytes, loaded, setMask, heldRun, embeddingNow, rerunHeld, maskedWords */

let P = null; // WORKER_PROTOCOL from the page ('init')
let mod = null; // the Emscripten module
let info = null; // the loaded model (blw_info_json)
let runCount = 0; // runId of the last run (its attention is still in the wasm heap)
let lastT = 0; // its token count
let lastFlags = 0; // its KEEP flags (whether its norms are in the state)

function cstring(s) {
  const n = mod.lengthBytesUTF8(s) + 1;
  const p = mod._malloc(n);
  mod.stringToUTF8(s, p, n);
  return p;
}

function lastError(fallback) {
  const p = mod._blw_error();
  const msg = p ? mod.UTF8ToString(p) : '';
  return msg || fallback;
}

function floats(ptr, n) {
  // Copy out of the wasm heap once (HEAPF32 may be replaced when memory grows).
  // Pointers are unsigned: the one-thread build's heap reaches 4 GB, and a
  // pointer past 2 GiB comes back from wasm negative (hence >>> here and
  // wherever the worker indexes the heap itself).
  return mod.HEAPF32.slice(ptr >>> 2, (ptr >>> 2) + n);
}

/** Copy per-layer Float32Arrays into one _malloc'ed block (caller frees). */
function putLayers(layers) {
  const n = layers.reduce((s, a) => s + a.length, 0);
  const p = mod._malloc(n * 4);
  if (!p) throw new Error('out of memory copying attention');
  let at = p >>> 2;
  for (const a of layers) { mod.HEAPF32.set(a, at); at += a.length; }
  return p;
}

function loadBytes(bytes) {
  const p = mod._malloc(bytes.length);
  if (!p) throw new Error(`Out of memory allocating ${bytes.length} bytes for the model.`);
  mod.HEAPU8.set(bytes, p >>> 0);
  return mod._blw_load(p, bytes.length); // takes ownership of p
}

/** What a load answers, from blw_load's return code: {info} of the new
 *  model, or {error, restored} (blw_load validates before replacing: the
 *  model loaded before, if any, is still loaded). */
function loaded(rc) {
  if (rc !== 0) return { error: lastError('the bundle could not be loaded'), restored: info !== null };
  info = JSON.parse(mod.UTF8ToString(mod._blw_info_json()));
  return { info };
}

/** The head mask of a request ([[layer, head], ...] or null) into the wasm
 *  state: every run sets it, so a run without one is unmasked. */
function setMask(mask, L, H) {
  let p = 0;
  if (mask && mask.length) {
    p = mod._malloc(L * H);
    if (!p) throw new Error('out of memory for the head mask');
    mod.HEAPU8.fill(0, p >>> 0, (p >>> 0) + L * H);
    for (const [l, h] of mask) {
      if (!(Number.isInteger(l) && Number.isInteger(h) && l >= 0 && l < L && h >= 0 && h < H)) {
        mod._free(p);
        throw new Error(`there is no layer ${l}, head ${h} to switch off (this model has ${L} layers × ${H} heads)`);
      }
      mod.HEAPU8[(p >>> 0) + l * H + h] = 1;
    }
  }
  const n = mod._blw_set_head_mask(p);
  if (p) mod._free(p);
  if (n < 0) throw new Error(lastError('the head mask could not be set'));
}

/** Requests that read the run the state still holds (like, analyze, qk)
 *  are refused when run runId is no longer that run. */
function heldRun(runId) {
  if (!info || runId !== runCount) throw new Error('stale: the model ran again since');
}

function embeddingNow() {
  const p = mod._blw_embedding();
  if (!p) throw new Error(lastError('no sentence embedding'));
  return floats(p, info.config.hidden);
}

/** Run texts a, b again into the state (the held run's texts, with the head
 *  mask the state has), keeping the final hidden states, and every layer's
 *  when `hidden`: the run the page holds is the same numbers again. */
function rerunHeld(a, b, { hidden = false, flags = lastFlags } = {}) {
  const pa = cstring(a), pb = b ? cstring(b) : 0;
  try {
    mod._blw_set_final(1);
    if (mod._blw_run(pa, pb, flags | P.KEEP.QK_ALL | (hidden ? P.KEEP.HIDDEN : 0), -1) < 0) throw new Error(lastError('the model run failed'));
  } finally {
    mod._free(pa);
    if (pb) mod._free(pb);
  }
}

/** The masked-LM head's top k at token `positions` of the run in the state
 *  (and at every mask token when `masks`; no positions and no masks: every
 *  token), with `was` pairs [position, id] whose probability and rank are
 *  reported (src/wasm/wasm_predict.c blw_predict_json_was): the JSON's pointer,
 *  0 when the run kept no final hidden states. */
function maskedWords(positions, k, masks, was = []) {
  const n = positions.length;
  const p = mod._malloc(Math.max(1, n + 2 * was.length) * 4);
  try {
    if (n) mod.HEAP32.set(positions, p >>> 2);
    if (was.length) mod.HEAP32.set(was.flat(), (p >>> 2) + n);
    return mod._blw_predict_json_was(n ? p : 0, n, k, masks ? 1 : 0, was.length ? p + 4 * n : 0, was.length);
  } finally {
    mod._free(p);
  }
}
