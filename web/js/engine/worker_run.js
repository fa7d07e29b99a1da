// worker_run.js — part of the engine worker (web/js/worker.js lists its
// parts): the 'run' message, one forward pass on text (head mask,
// embeddings when asked) and everything the request asks to copy out.
/* global handle, P, mod, info, runCount, lastT, lastFlags, cstring, lastError, floats, setMask, embeddingNow, queriesKeys, analyzeState, likeDistances */

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

handle('run', ({ request }) => {
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
    pieces: tok.pieces, special: tok.special, // how pieces spell words, the model's specials (lib/tokens.js)
    ...an, like: likeOut, runId, ms: performance.now() - t0,
    mask: mask ? mask.map(([l, h]) => [l, h]) : null, embeddings: embOut,
  };
  return [result, transfer];
});
