// worker_corpus.js — part of the engine worker (web/js/worker.js lists its
// parts): a corpus run (issue 25), batch by batch, on src/wasm/wasm_corpus.c.
//   'corpus-begin'  {topN, qkLayer, qkHead}  a new run (qkLayer -1: no q/k)
//   'corpus-add'    {lines, firstLine}       one batch: lines as the CLI reads
//                   them ('\n' between, TAB before sentence B); resolves to
//                   {done, ms, qk: null | {n, dh, vectors [n][2][dh], meta [n][4]}}
//   'corpus-result' {}                       the CLI's JSON, parsed
//   'corpus-end'    {}                       frees the run
//   'corpus-tokens' {a, b}                   one input's tokens and byte offsets
//                   (blw_tokenize_json), for its example in context
// The page sends the next batch only when one is done, so Cancel takes
// effect after at most one batch (web/js/engine/corpus_run.js).
/* global handle, mod, info, cstring, lastError, floats */

let corpusQk = null; // {layer, head} of the run, or null

handle('corpus-begin', ({ topN = 10, qkLayer = -1, qkHead = 0 }) => {
  if (!info) throw new Error('no model loaded');
  const threads = mod._blw_corpus_begin(topN, qkLayer, qkHead);
  if (threads < 0) throw new Error(lastError('the corpus run could not start'));
  corpusQk = qkLayer >= 0 ? { layer: qkLayer, head: qkHead } : null;
  return { threads };
});

handle('corpus-add', ({ lines, firstLine }) => {
  const t0 = performance.now();
  // lines: a string, or the bytes as read (a Uint8Array: invalid UTF-8 reaches
  // the tokenizer, which names it, as in the CLI)
  const bytes = typeof lines === 'string' ? null : lines;
  const p = bytes ? mod._malloc(bytes.length + 1) : cstring(lines);
  if (!p) throw new Error('out of memory for a corpus batch');
  if (bytes) mod.HEAPU8.set(bytes, p >>> 0);
  let done;
  try {
    done = mod._blw_corpus_add(p, bytes ? bytes.length : mod.lengthBytesUTF8(lines), firstLine);
  } finally {
    mod._free(p);
  }
  if (done < 0) throw new Error(lastError('the corpus run failed'));
  let qk = null;
  if (corpusQk) {
    const n = mod._blw_corpus_qk_count();
    const dh = info.config.hidden / info.config.n_heads;
    const mp = mod._blw_corpus_qk_meta() >>> 2;
    qk = { n, dh, vectors: n ? floats(mod._blw_corpus_qk_vectors(), n * 2 * dh) : new Float32Array(0), meta: mod.HEAP32.slice(mp, mp + n * 4) };
  }
  const out = { done, ms: performance.now() - t0, qk };
  return qk ? [out, [qk.vectors.buffer, qk.meta.buffer]] : out;
});

handle('corpus-result', () => {
  const p = mod._blw_corpus_json();
  if (!p) throw new Error(lastError('no corpus result'));
  return JSON.parse(mod.UTF8ToString(p));
});

handle('corpus-end', () => {
  mod._blw_corpus_end();
  corpusQk = null;
  return true;
});

handle('corpus-tokens', ({ a, b = null }) => {
  const pa = cstring(a), pb = b ? cstring(b) : 0;
  try {
    const p = mod._blw_tokenize_json(pa, pb, 0);
    if (!p) throw new Error(lastError('no tokens'));
    return JSON.parse(mod.UTF8ToString(p));
  } finally {
    mod._free(pa);
    if (pb) mod._free(pb);
  }
});
