// corpus_run.js — a corpus run in the page (issue 25): the inputs go to the
// model worker in small batches (engine/worker_corpus.js, src/wasm/wasm_corpus.c),
// one batch at a time, so the page stays responsive, shows progress after
// each batch and can stop between two. The forward pass of each input runs
// on the worker's threads (the pthreads build: every core the page was given).
// No DOM: tests/web/corpus_run.test.mjs drives it in Node.
//
//   const run = await runCorpus(call, lines, {topN, qk: {layer, head}, onProgress, signal})
//   call(type, args) -> Promise    engine.call, or the Node worker's send
//   lines    the inputs as the CLI reads them: strings ('a' or 'a\tb') or
//            Uint8Array (one line's bytes); line numbers are 1-based indices
//   run      {result (the CLI's JSON), qk: null | {n, dh, seen, vectors [n][2][dh],
//             meta [n][4] (text, position, id, kind: wasm_corpus.c)},
//             cancelled, seconds, perSecond, threads}

export const CORPUS_BATCH = 8; // inputs per worker message: Cancel waits at most this many
export const QK_MAX_TOKENS = 20000; // tokens of the q/k map kept (the rest are counted, not kept)

function joinBatch(lines) {
  if (lines.every((l) => typeof l === 'string')) return lines.join('\n');
  const enc = new TextEncoder();
  const parts = lines.map((l) => (typeof l === 'string' ? enc.encode(l) : l));
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length + 1, 0) - 1);
  let at = 0;
  parts.forEach((p, i) => { if (i) out[at++] = 10; out.set(p, at); at += p.length; });
  return out;
}

/** Append the q/k of a batch to the kept ones (at most QK_MAX_TOKENS tokens). */
function keepQk(acc, qk) {
  if (!qk) return acc;
  acc ??= { n: 0, dh: qk.dh, seen: 0, vectors: [], meta: [] };
  acc.seen += qk.n;
  const take = Math.min(qk.n, QK_MAX_TOKENS - acc.n);
  if (take > 0) {
    acc.vectors.push(qk.vectors.subarray(0, take * 2 * qk.dh));
    acc.meta.push(qk.meta.subarray(0, take * 4));
    acc.n += take;
  }
  return acc;
}

function flatten(acc) {
  if (!acc) return null;
  const cat = (parts, T) => {
    const out = new T(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) { out.set(p, at); at += p.length; }
    return out;
  };
  return { n: acc.n, dh: acc.dh, seen: acc.seen, vectors: cat(acc.vectors, Float32Array), meta: cat(acc.meta, Int32Array) };
}

export async function runCorpus(call, lines, { topN = 10, qk = null, onProgress = () => {}, signal = null,
  batch = CORPUS_BATCH, now = () => globalThis.performance.now() } = {}) {
  const begin = await call('corpus-begin', { topN, qkLayer: qk ? qk.layer : -1, qkHead: qk ? qk.head : 0 });
  const t0 = now();
  let at = 0, analysed = 0, kept = null, cancelled = false;
  try {
    while (at < lines.length) {
      if (signal?.aborted) { cancelled = true; break; }
      const part = lines.slice(at, at + batch);
      const r = await call('corpus-add', { lines: joinBatch(part), firstLine: at + 1 });
      at += part.length;
      analysed += r.done;
      kept = keepQk(kept, r.qk);
      const s = (now() - t0) / 1000;
      onProgress({ done: at, total: lines.length, analysed, seconds: s, perSecond: s > 0 ? analysed / s : 0 });
    }
    const result = await call('corpus-result', {});
    const seconds = (now() - t0) / 1000;
    return { result, qk: flatten(kept), cancelled, seconds, perSecond: seconds > 0 ? analysed / seconds : 0,
      threads: begin.threads, done: at, total: lines.length };
  } finally {
    await call('corpus-end', {}).catch(() => {});
  }
}
