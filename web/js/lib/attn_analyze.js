// attn_analyze.js — the analyses of a run that has attention but no model
// (a snapshot drawn by the viewer page: a notebook output of python/bertlens,
// a standalone export): the heads overview's features, classes and "heads
// like this one", and the rollouts, computed by the engine's own C
// (src/analysis/analyze.c through src/wasm/wasm_attn.c, build/wasm/analyze.wasm: a
// standalone module of ~42 KB with no glue), so they are the numbers a live
// run gets for the same matrices. Plain ES module, no DOM; tested by
// tests/web/notebook_analyses.test.mjs against `bertlens analyze`.

const enc = new TextEncoder();

/** An analyzer of the module's bytes (an ArrayBuffer or a typed array):
 *  {analyze(run, rollout), like(run, [layer, head])}. */
export async function createAttnAnalyzer(bytes) {
  let memory = null;
  const { instance } = await WebAssembly.instantiate(bytes, {
    env: { emscripten_notify_memory_growth: () => {} }, // (views are made anew after every call)
  });
  const x = instance.exports;
  memory = x.memory;
  if (x._initialize) x._initialize();
  const heap = () => new Uint8Array(memory.buffer);
  const f32 = () => new Float32Array(memory.buffer);
  const cString = (p) => {
    const h = heap();
    let e = p;
    while (h[e]) e++;
    return new TextDecoder().decode(h.subarray(p, e));
  };
  const fail = (what) => new Error(`${what}: ${cString(x.blw_attn_error())}`);
  const alloc = (n) => {
    const p = x.malloc(Math.max(1, n));
    if (!p) throw new Error('out of memory for the analyses');
    return p;
  };

  /** {analysis, rollout, rolloutNorm} of a run ({T, L, H, attn: [L] of
   *  Float32Array [H][T][T], norms (or null), tokens, special, typeIds}),
   *  as the worker answers an analyze request (worker_reads.js
   *  analyzeState): analysis = {pair, heads: [{layer, head, entropy, …,
   *  class}]}; with rollout, every layer's rollout [T][T] (and the
   *  norm-based one when the run holds every layer's norms). */
  function analyze(run, rollout = true) {
    const { T, L, H } = run;
    const n = H * T * T;
    if (!run.attn || run.attn.some((a) => !a)) throw new Error('the analyses need the attention of every layer');
    const withNorms = rollout && run.norms && run.norms.every((a) => a);
    const toks = run.tokens.map((t) => enc.encode(String(t).replace(/\0/g, '')));
    const tokBytes = toks.reduce((s, b) => s + b.length + 1, 0);
    const ptrs = [];
    try {
      const pa = alloc(L * n * 4); ptrs.push(pa);
      const pn = withNorms ? alloc(L * n * 4) : 0; if (pn) ptrs.push(pn);
      const pt = alloc(tokBytes); ptrs.push(pt);
      const ps = alloc(T); ptrs.push(ps);
      const pg = alloc(T * 4); ptrs.push(pg);
      for (let l = 0; l < L; l++) {
        f32().set(run.attn[l], (pa >>> 2) + l * n);
        if (pn) f32().set(run.norms[l], (pn >>> 2) + l * n);
      }
      let at = pt;
      for (const b of toks) { heap().set(b, at); heap()[at + b.length] = 0; at += b.length + 1; }
      const special = run.special || [];
      for (let t = 0; t < T; t++) heap()[ps + t] = special[t] ? 1 : 0;
      new Int32Array(memory.buffer, pg, T).set(Array.from(run.typeIds || new Array(T).fill(0), Number));
      const pj = x.blw_attn_analyze(pa, pn, L, H, T, pt, ps, pg, rollout ? 1 : 0);
      if (!pj) throw fail('the analysis failed');
      const analysis = JSON.parse(cString(pj));
      delete analysis.tokens; // (the run's own tokens are in the run)
      const layers = (norm) => Array.from({ length: L }, (_, l) => {
        const pr = x.blw_attn_rollout(norm, l);
        if (!pr) throw fail(`no rollout for layer ${l}`);
        return new Float32Array(memory.buffer, pr, T * T).slice();
      });
      return { analysis, rollout: rollout ? layers(0) : null, rolloutNorm: withNorms ? layers(1) : null };
    } finally {
      ptrs.forEach((p) => x.free(p));
    }
  }

  /** {of: [layer, head], dist: Float64Array [L][H]}: the Jensen–Shannon
   *  distance of every head of the run to that one (worker_reads.js
   *  likeDistances' answer). */
  function like(run, [layer, head]) {
    const { T, L, H } = run;
    if (layer >= L || head >= H) throw new Error(`there is no layer ${layer}, head ${head} to compare the heads with`);
    const n = T * T;
    const ptrs = [];
    try {
      const pa = alloc(n * 4); ptrs.push(pa);
      const pb = alloc(H * n * 4); ptrs.push(pb);
      const po = alloc(H * 4); ptrs.push(po);
      f32().set(run.attn[layer].subarray(head * n, head * n + n), pa >>> 2);
      const dist = new Float64Array(L * H);
      for (let l = 0; l < L; l++) {
        f32().set(run.attn[l], pb >>> 2);
        if (x.blw_attn_compare(pa, pb, H, T, po) !== 0) throw fail('the heads could not be compared');
        new Float32Array(memory.buffer, po, H).forEach((v, h) => { dist[l * H + h] = v; });
      }
      dist[layer * H + head] = 0;
      return { of: [layer, head], dist };
    } finally {
      ptrs.forEach((p) => x.free(p));
    }
  }

  return { analyze, like };
}
