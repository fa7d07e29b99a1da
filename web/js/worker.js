// worker.js — runs the bertlens WebAssembly module off the main thread, so
// the page never freezes while the model loads or runs. Classic worker: the
// Emscripten glue (MODULARIZE, factory createBertlens) is loaded with
// importScripts.
//
// Messages in:  {id, type: 'init'|'load'|'run'|'conv'|'like'|'analyze'|'qk'|'compare', ...}   (see engine.js)
// Messages out: {id, ok: true, result} or {id, ok: false, error}
// The run request and its result: web/js/lib/protocol.js. This classic worker
// cannot import that module; 'init' brings its WORKER_PROTOCOL (the KEEP_*
// flag values and analysis levels), so no flag value is written here.
/* global createBertlens, importScripts */

const WORKER_PROTOCOL_VERSION = 7; // protocol.js PROTOCOL_VERSION this file speaks
let P = null; // WORKER_PROTOCOL from the page

let mod = null;
const CONV_BYTES = '\u0000bytes'; // convert.js BYTES
let info = null;
let runCount = 0; // runId of the last run (its attention is still in the wasm heap)
let lastT = 0; // its token count
let lastFlags = 0; // its KEEP flags (whether its norms are in the state)

/** Heads compared in C (src/analyze.c bl_head_compare through
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

/** Copy per-layer Float32Arrays into one _malloc'ed block (caller frees). */
function putLayers(layers) {
  const n = layers.reduce((s, a) => s + a.length, 0);
  const p = mod._malloc(n * 4);
  if (!p) throw new Error('out of memory copying attention');
  let at = p >>> 2;
  for (const a of layers) { mod.HEAPF32.set(a, at); at += a.length; }
  return p;
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

/** The model's max_seq_length (sentence-transformers truncation), else its positions. */
function maxSeqLength() {
  const v = Number(info.meta && info.meta['sentence.max_seq_length']);
  return Number.isInteger(v) && v > 0 ? v : info.config.max_positions;
}

/** The sentence embedding of one text on its own, as sentence-transformers
 *  computes it (truncated at max_seq_length): one forward of its tokens. */
function embedAlone(text, flags, qkLayer) {
  const pt = cstring(text);
  let tok;
  try {
    tok = JSON.parse(mod.UTF8ToString(mod._blw_tokenize_json(pt, 0, maxSeqLength())));
  } finally {
    mod._free(pt);
  }
  if (tok.error) throw new Error(tok.error);
  const T = tok.ids.length;
  const pi = mod._malloc(T * 8);
  try {
    mod.HEAP32.set(tok.ids, pi >>> 2);
    mod.HEAP32.set(tok.type_ids, (pi >>> 2) + T);
    mod._blw_set_final(1);
    if (mod._blw_forward_ids(pi, pi + T * 4, T, flags, qkLayer) < 0) throw new Error(lastError('the model run failed'));
  } finally {
    mod._free(pi);
  }
  return embeddingNow();
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
  // wherever worker.js indexes the heap itself).
  return mod.HEAPF32.slice(ptr >>> 2, (ptr >>> 2) + n);
}

function loadBytes(bytes) {
  const p = mod._malloc(bytes.length);
  if (!p) throw new Error(`Out of memory allocating ${bytes.length} bytes for the model.`);
  mod.HEAPU8.set(bytes, p >>> 0);
  return mod._blw_load(p, bytes.length); // takes ownership of p
}

/** Threads for the pthreads build: one per core (navigator.hardwareConcurrency),
 *  at most the pool of Workers the glue started (Makefile MT_POOL) + this one. */
function threadCount() {
  const cores = (self.navigator && self.navigator.hardwareConcurrency) || 1;
  const pool = (mod.PThread && mod.PThread.unusedWorkers && mod.PThread.unusedWorkers.length) || 0;
  return Math.max(1, Math.min(cores, pool + 1));
}

/** The pthreads build needs SharedArrayBuffer, which a browser gives only
 *  to a cross-origin isolated page (COOP + COEP headers, docs/page.md, "Threads");
 *  an embed in another site's page, a host without those headers or the
 *  one-file page (no mt files) get the single-threaded build. */
const canThread = (mt) => !!(mt && mt.glue && self.crossOriginIsolated === true && typeof SharedArrayBuffer === 'function');

async function startModule(glueUrl, wasmUrl, wasmBinary, mt) {
  if (glueUrl) importScripts(glueUrl);
  if (typeof createBertlens !== 'function') throw new Error('the engine script (Emscripten glue) did not load');
  return createBertlens({
    ...(wasmBinary ? { wasmBinary } : {}),
    locateFile: (path) => (path.endsWith('.wasm') ? wasmUrl : mt && path.endsWith('.worker.js') ? mt.worker : path),
    ...(mt ? { mainScriptUrlOrBlob: glueUrl } : {}), // what the pthread Workers load
    print: () => {},
    printErr: (s) => console.warn('[bertlens wasm]', s),
  });
}

/** Analyses (src/analyze.c) of the run in the wasm state, as the result's
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

const handlers = {
  // glueUrl null: the glue is already part of this worker's source (the
  // one-file page builds the worker from a Blob of glue + this file).
  // wasmBinary: the module's bytes, when there is no URL to fetch them from.
  // mt: {glue, wasm, worker} of the pthreads build, used when canThread(mt).
  async init({ glueUrl, wasmUrl, wasmBinary, protocol, mt }) {
    if (!protocol || protocol.version !== WORKER_PROTOCOL_VERSION) {
      throw new Error(`the page and the model worker disagree on the protocol (page ${protocol && protocol.version}, worker ${WORKER_PROTOCOL_VERSION}); reload the page`);
    }
    P = protocol;
    let threads = 1;
    if (canThread(mt)) {
      try {
        mod = await startModule(mt.glue, mt.wasm, null, mt);
        threads = mod._blw_set_threads(threadCount());
        if (threads < 1) throw new Error(lastError('no threads'));
      } catch (e) {
        console.warn('[bertlens] the threaded engine did not start, using one thread:', String((e && e.message) || e));
        mod = null;
        threads = 1;
      }
    }
    if (!mod) mod = await startModule(glueUrl, wasmUrl, wasmBinary, null);
    return { simd: mod._blw_simd() === 1, threads, threaded: mod._blw_threaded() === 1 };
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
    const { a, b, flags, qkLayer, analysis, like, mask = null, embed = false } = request;
    const { KEEP, ANALYSIS } = P;
    const t0 = performance.now();
    const L = info.config.n_layers;
    const H = info.config.n_heads;
    setMask(mask, L, H);
    // Embeddings of texts on their own (a pair's two sentences) run first,
    // so the state ends holding the requested run ('like' reads it).
    // The state keeps every layer's q/k whatever the request asks (9.4 MB at
    // 512 tokens for all-MiniLM-L6-v2): a later q/k request (the neuron
    // view) reads them instead of running the model again.
    const stateFlags = flags | KEEP.QK_ALL;
    const embeddings = embed && b ? [embedAlone(a, stateFlags, qkLayer), embedAlone(b, stateFlags, qkLayer)] : null;
    const pa = cstring(a);
    const pb = b ? cstring(b) : 0;
    let T;
    try {
      // Only this run's own embedding (or kept hidden states) reads the final
      // hidden states; without them the last layer stops after its attention.
      mod._blw_set_final(embed && !b || flags & KEEP.HIDDEN ? 1 : 0);
      T = mod._blw_run(pa, pb, stateFlags, qkLayer);
    } finally {
      mod._free(pa);
      if (pb) mod._free(pb);
    }
    const runId = ++runCount;
    lastT = T;
    lastFlags = flags;
    if (T < 0) throw new Error(lastError('the model run failed'));
    const tok = JSON.parse(mod.UTF8ToString(mod._blw_tokens_json()));
    if (tok.error) throw new Error(tok.error);
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
    // q/k: one array per layer (KEEP.QK_ALL), or only qkLayer's (KEEP.QK).
    const { q, k } = flags & (KEEP.QK | KEEP.QK_ALL) ? queriesKeys(L, H, T, d, transfer, flags & KEEP.QK_ALL ? -1 : qkLayer) : { q: null, k: null };
    const an = analysis >= ANALYSIS.HEADS ? analyzeState(analysis, flags, L, T, transfer) : { analysis: null, rollout: null, rolloutNorm: null };
    const likeOut = like && attn ? likeDistances(L, H, T, like) : null;
    if (likeOut) transfer.push(likeOut.dist.buffer);
    let embOut = embeddings;
    if (embed && !b) embOut = [T <= maxSeqLength() ? embeddingNow() : embedAlone(a, stateFlags, qkLayer)];
    if (embed && !b && T > maxSeqLength()) runCount++; // the state no longer holds this run
    const result = {
      tokens: tok.tokens, typeIds: tok.type_ids, offsets: tok.offsets,
      wordIds: tok.word_ids.map((w) => (w === null ? -1 : w)), // JSON null (special) -> -1
      nA: tok.n_a, truncated: !!tok.truncated, T, L, H, d, attn, norms, q, k, flags,
      ...an, like: likeOut, runId, ms: performance.now() - t0,
      mask: mask ? mask.map(([l, h]) => [l, h]) : null, embeddings: embOut,
    };
    return [result, transfer];
  },

  // One blw_conv_* call for web/js/engine/convert.js (the converter runs here, beside
  // the engine, so the converted bundle never needs a second module). Args:
  // numbers, strings (-> C strings) and CONV_BYTES, where the heap copy of
  // `bytes` goes. The result as convert.js's header describes it (the only
  // copy: Node tests call it through tools/wasm_node.mjs workerConverter).
  conv({ fn, args, bytes }) {
    if (!/^[a-z_]+$/.test(fn) || typeof mod[`_blw_conv_${fn}`] !== 'function') throw new Error(`no converter call ${fn}`);
    const ptrs = [];
    try {
      const a = args.map((x) => {
        if (x === CONV_BYTES) {
          const u8 = new Uint8Array(bytes);
          const p = mod._malloc(Math.max(1, u8.length));
          if (!p) throw new Error(`Out of memory for ${u8.length} bytes of the checkpoint.`);
          mod.HEAPU8.set(u8, p >>> 0);
          ptrs.push(p);
          return p;
        }
        if (typeof x !== 'string') return x;
        const p = cstring(x);
        ptrs.push(p);
        return p;
      });
      const r = mod[`_blw_conv_${fn}`](...a);
      const err = () => ({ error: lastError('the converter failed') });
      switch (fn) {
        case 'weight_name': return r ? mod.UTF8ToString(r) : err();
        case 'log': return mod.UTF8ToString(r);
        case 'source': return r ? { w: mod.HEAPF64[r >>> 3], off: mod.HEAPF64[(r >>> 3) + 1], n: mod.HEAPF64[(r >>> 3) + 2] } : err();
        case 'finish': {
          if (!r) return err();
          const out = mod.HEAPU8.slice(r >>> 0, (r >>> 0) + mod._blw_conv_size());
          return [out, [out.buffer]];
        }
        case 'hash': case 'free': return 0;
        default: return r < 0 ? err() : r;
      }
    } finally {
      for (const p of ptrs) mod._free(p);
    }
  },

  // Distances to another head from the last run's attention, still in the
  // wasm heap (read in place, not copied); refused when a newer run replaced it.
  like({ request }) {
    const { runId, like } = request;
    heldRun(runId);
    const t0 = performance.now();
    const out = likeDistances(info.config.n_layers, info.config.n_heads, lastT, like);
    out.ms = performance.now() - t0;
    return [out, [out.dist.buffer]];
  },

  // The analysis (ANALYSIS.HEADS or ROLLOUT) of the last run, from its
  // attention still in the wasm state: a tab that needs an analysis the run
  // did not compute gets it without running the model again. Refused when
  // a newer run replaced that run.
  analyze({ request }) {
    const { runId, analysis } = request;
    heldRun(runId);
    if (!(analysis >= P.ANALYSIS.HEADS && analysis <= P.ANALYSIS.ROLLOUT)) throw new Error(`no analysis level ${analysis}`);
    const t0 = performance.now();
    const transfer = [];
    const out = analyzeState(analysis, lastFlags, info.config.n_layers, lastT, transfer);
    return [{ ...out, runId, ms: performance.now() - t0 }, transfer];
  },

  // Every layer's queries and keys of the last run, still in the wasm state
  // (every run keeps them): the neuron view gets them without running the
  // model again. Refused when a newer run replaced that run.
  qk({ request }) {
    const { runId } = request;
    heldRun(runId);
    const t0 = performance.now();
    const transfer = [];
    const H = info.config.n_heads;
    const out = queriesKeys(info.config.n_layers, H, lastT, info.config.hidden / H, transfer);
    if (!out.q) throw new Error('the state holds no queries and keys');
    return [{ ...out, runId, ms: performance.now() - t0 }, transfer];
  },

  // Two runs' attention compared head by head, in C: a and b are per-layer
  // Float32Arrays [H][K][K] (already aligned by the page), any model's.
  compare({ request }) {
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
