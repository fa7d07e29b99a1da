// worker.js — runs the bertlens WebAssembly module off the main thread, so
// the page never freezes while the model loads or runs. Classic worker: the
// Emscripten glue (MODULARIZE, factory createBertlens) is loaded with
// importScripts.
//
// Messages in:  {id, type: 'init'|'load'|'run'|'like', ...}   (see engine.js)
// Messages out: {id, ok: true, result} or {id, ok: false, error}
// The run request and its result: web/js/protocol.js. This classic worker
// cannot import that module; 'init' brings its WORKER_PROTOCOL (the KEEP_*
// flag values and analysis levels), so no flag value is written here.
/* global createBertlens, importScripts */

const WORKER_PROTOCOL_VERSION = 3; // protocol.js PROTOCOL_VERSION this file speaks
let P = null; // WORKER_PROTOCOL from the page

let mod = null;
let info = null;
let runCount = 0; // runId of the last run (its attention is still in the wasm heap)
let lastT = 0; // its token count

/** Jensen–Shannon distance (base 2, in [0, 1]) between two heads' attention
 *  maps a, b [T][T], mean over rows: the same sum as views/overview.js
 *  jsDistance (a classic worker cannot import it; tests/web/worker.test.mjs
 *  checks the two agree). */
function jsDistance(a, b, T) {
  let total = 0;
  for (let i = 0; i < T; i++) {
    let js = 0;
    const o = i * T;
    for (let j = 0; j < T; j++) {
      const p = a[o + j];
      const q = b[o + j];
      const m = 0.5 * (p + q);
      if (p > 0) js += p * Math.log2(p / m);
      if (q > 0) js += q * Math.log2(q / m);
    }
    total += Math.sqrt(Math.max(0, 0.5 * js));
  }
  return total / T;
}

/** {of: [layer, head], dist: Float64Array [L][H]} from per-layer attention
 *  ([H][T][T] each; attnOf(l) returns layer l's). */
function likeDistances(attnOf, L, H, T, [layer, head]) {
  if (layer >= L || head >= H) throw new Error(`there is no layer ${layer}, head ${head} to compare the heads with`);
  const n = T * T;
  const ref = attnOf(layer).slice(head * n, (head + 1) * n);
  const dist = new Float64Array(L * H);
  for (let l = 0; l < L; l++) {
    const a = attnOf(l);
    for (let h = 0; h < H; h++) dist[l * H + h] = (l === layer && h === head) ? 0 : jsDistance(ref, a.subarray(h * n, (h + 1) * n), T);
  }
  return { of: [layer, head], dist };
}

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
  return mod.HEAPF32.slice(ptr >> 2, (ptr >> 2) + n);
}

function loadBytes(bytes) {
  const p = mod._malloc(bytes.length);
  if (!p) throw new Error(`Out of memory allocating ${bytes.length} bytes for the model.`);
  mod.HEAPU8.set(bytes, p);
  return mod._blw_load(p, bytes.length); // takes ownership of p
}

const handlers = {
  // glueUrl null: the glue is already part of this worker's source (the
  // one-file page builds the worker from a Blob of glue + this file).
  // wasmBinary: the module's bytes, when there is no URL to fetch them from.
  async init({ glueUrl, wasmUrl, wasmBinary, protocol }) {
    if (!protocol || protocol.version !== WORKER_PROTOCOL_VERSION) {
      throw new Error(`the page and the model worker disagree on the protocol (page ${protocol && protocol.version}, worker ${WORKER_PROTOCOL_VERSION}); reload the page`);
    }
    P = protocol;
    if (glueUrl) importScripts(glueUrl);
    if (typeof createBertlens !== 'function') throw new Error('the engine script (Emscripten glue) did not load');
    mod = await createBertlens({
      ...(wasmBinary ? { wasmBinary } : {}),
      locateFile: (path) => (path.endsWith('.wasm') ? wasmUrl : path),
      print: () => {},
      printErr: (s) => console.warn('[bertlens wasm]', s),
    });
    return { simd: mod._blw_simd() === 1 };
  },

  load({ bytes }) {
    const u8 = new Uint8Array(bytes);
    if (loadBytes(u8) !== 0) {
      // blw_load validates before replacing: the previous model, if any, is still loaded.
      return { error: lastError('the bundle could not be loaded'), restored: info !== null };
    }
    info = JSON.parse(mod.UTF8ToString(mod._blw_info_json()));
    return { info };
  },

  run({ request }) {
    if (!info) throw new Error('No model is loaded.');
    const { a, b, flags, qkLayer, analysis, like } = request;
    const { KEEP, ANALYSIS } = P;
    const t0 = performance.now();
    const pa = cstring(a);
    const pb = b ? cstring(b) : 0;
    let T;
    try {
      T = mod._blw_run(pa, pb, flags, qkLayer);
    } finally {
      mod._free(pa);
      if (pb) mod._free(pb);
    }
    runCount++;
    lastT = T;
    if (T < 0) throw new Error(lastError('the model run failed'));
    const tok = JSON.parse(mod.UTF8ToString(mod._blw_tokens_json()));
    if (tok.error) throw new Error(tok.error);
    const L = info.config.n_layers;
    const H = info.config.n_heads;
    const d = info.config.hidden / H;
    const transfer = [];
    const grab = (fn) => {
      const out = [];
      for (let l = 0; l < L; l++) {
        const p = fn(l);
        if (!p) return null;
        const arr = floats(p, H * T * T);
        transfer.push(arr.buffer);
        out.push(arr);
      }
      return out;
    };
    const attn = flags & KEEP.ATTN ? grab((l) => mod._blw_attention(l)) : null;
    const norms = flags & KEEP.NORMS ? grab((l) => mod._blw_norms(l)) : null;
    let q = null;
    let k = null;
    if (flags & KEEP.QK) {
      const pq = mod._blw_queries();
      const pk = mod._blw_keys();
      if (pq && pk) {
        q = floats(pq, H * T * d);
        k = floats(pk, H * T * d);
        transfer.push(q.buffer, k.buffer);
      }
    }
    // Analyses (src/analyze.c): features per head; rollout per layer as
    // floats (blw_rollout), not through JSON.
    let heads = null;
    let rollout = null;
    let rolloutNorm = null;
    if (analysis >= ANALYSIS.HEADS) {
      // 2: compute the rollouts for blw_rollout below; 0: features only.
      const p = mod._blw_analyze_json(analysis >= ANALYSIS.ROLLOUT ? 2 : 0);
      if (!p) throw new Error(lastError('the analysis failed'));
      heads = JSON.parse(mod.UTF8ToString(p));
      if (heads.error) throw new Error(heads.error);
      delete heads.tokens; // the run's own tokens are in the result
      if (analysis >= ANALYSIS.ROLLOUT) {
        const layers = (norm) => {
          const out = [];
          for (let l = 0; l < L; l++) {
            const p = mod._blw_rollout(norm, l);
            if (!p) throw new Error(lastError(`no rollout for layer ${l}`));
            const arr = floats(p, T * T);
            transfer.push(arr.buffer);
            out.push(arr);
          }
          return out;
        };
        rollout = layers(0);
        if (flags & KEEP.NORMS) rolloutNorm = layers(1);
      }
    }
    const likeOut = like && attn ? likeDistances((l) => attn[l], L, H, T, like) : null;
    if (likeOut) transfer.push(likeOut.dist.buffer);
    const result = {
      tokens: tok.tokens, typeIds: tok.type_ids, offsets: tok.offsets,
      wordIds: tok.word_ids.map((w) => (w === null ? -1 : w)), // JSON null (special) -> -1
      nA: tok.n_a, truncated: !!tok.truncated, T, L, H, d, attn, norms, q, k,
      qkLayer: flags & KEEP.QK ? qkLayer : -1, flags,
      analysis: heads, rollout, rolloutNorm, like: likeOut, runId: runCount, ms: performance.now() - t0,
    };
    return [result, transfer];
  },

  // Distances to another head from the last run's attention, still in the
  // wasm heap (read in place, not copied); refused when a newer run replaced it.
  like({ request }) {
    const { runId, like } = request;
    if (!info || runId !== runCount) throw new Error('stale: the model ran again since');
    const L = info.config.n_layers;
    const H = info.config.n_heads;
    const T = lastT;
    const attnOf = (l) => {
      const p = mod._blw_attention(l);
      if (!p) throw new Error(`no attention for layer ${l}`);
      return mod.HEAPF32.subarray(p >> 2, (p >> 2) + H * T * T);
    };
    const t0 = performance.now();
    const out = likeDistances(attnOf, L, H, T, like);
    out.ms = performance.now() - t0;
    return [out, [out.dist.buffer]];
  },
};

self.onmessage = async (ev) => {
  const { id, type, ...args } = ev.data;
  try {
    let out = await handlers[type](args);
    let transfer = [];
    if (Array.isArray(out)) [out, transfer] = out;
    self.postMessage({ id, ok: true, result: out }, transfer);
  } catch (e) {
    self.postMessage({ id, ok: false, error: String((e && e.message) || e) });
  }
};
