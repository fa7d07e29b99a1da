#!/usr/bin/env node
// bench_analyze.mjs — the analysis at 512 tokens in wasm (src/analysis/analyze.c
// through blw_analyze_json): head features alone (blw_analyze_json(0)) and
// the two rollouts (blw_analyze_json(2) minus that), after one blw_run of a
// 512-token text with attention and norms kept. Given several builds it
// loads them all in one process and alternates them run by run, so their
// ratio holds on a busy machine. Median of 5.
// Usage: node tools/bench_analyze.mjs [build/wasm/bertlens.js ...]
import path from 'node:path';
import { ROOT, createModule, loadBundle, putString, wasmError } from './wasm_node.mjs';

const builds = process.argv.slice(2).length ? process.argv.slice(2) : [path.join(ROOT, 'build/wasm/bertlens.js')];
const BUNDLE = path.join(ROOT, 'build/models/all-minilm-l6-v2.f32.blb');
const TEXT32 = 'the quick brown fox jumps over the lazy dog while the small cat sleeps on a warm mat near the door and the old man reads his book in the';
const text = Array(18).fill(TEXT32).join(' '); // cut at 512 tokens
const RUNS = 5;

const mods = [];
for (const b of builds) {
  const M = await createModule(path.resolve(b));
  loadBundle(M, BUNDLE);
  const p = putString(M, text);
  const T = M._blw_run(p, 0, 3 /* KEEP_ATTN | KEEP_NORMS */, 0);
  M._free(p);
  if (T !== 512) throw new Error(`${b}: ${T < 0 ? wasmError(M) : `${T} tokens`}`);
  mods.push(M);
}
const times = builds.map(() => ({ features: [], rollouts: [] }));
for (let r = 0; r < RUNS; r++) {
  mods.forEach((M, k) => {
    let t0 = performance.now();
    if (!M._blw_analyze_json(0)) throw new Error(wasmError(M));
    const f = performance.now() - t0;
    t0 = performance.now();
    if (!M._blw_analyze_json(2)) throw new Error(wasmError(M));
    times[k].features.push(f);
    times[k].rollouts.push(performance.now() - t0 - f);
  });
}
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
console.log(`analysis at 512 tokens, wasm, median of ${RUNS} (ms)`);
builds.forEach((b, k) => console.log(`${b.padEnd(44)} features ${median(times[k].features).toFixed(1).padStart(7)}   both rollouts ${median(times[k].rollouts).toFixed(1).padStart(7)}`));
for (let k = 1; k < builds.length; k++) {
  console.log(`${builds[0]} / ${builds[k]}: features ${(median(times[0].features) / median(times[k].features)).toFixed(2)}x, rollouts ${(median(times[0].rollouts) / median(times[k].rollouts)).toFixed(2)}x`);
}
