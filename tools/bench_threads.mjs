#!/usr/bin/env node
// bench_threads.mjs — part of `make bench`: the forward pass on 2 threads
// against 1, and against onnxruntime-web on 2 threads, in one Node process.
//
//   node tools/bench_threads.mjs [--runs N] [--warmup N] [--T 16,128,512] [--threads 2] [--gap MS] [--no-ort] [--json FILE]
//
// Engines, one run of each in turn within a row (tools/bench.mjs
// timeInterleaved), so load from other processes hits them alike:
//   st    build/wasm/bertlens.js, the single-threaded build (what embeds run)
//   mt1   build/wasm/bertlens-mt.js on 1 thread (the cost of the pthreads build itself)
//   mtN   build/wasm/bertlens-mt.js on N threads (N - 1 Workers: Node's worker_threads)
//   ortN  onnxruntime-web, wasm backend, numThreads N, SIMD (its own worker_threads)
//   natN  build/bertlens bench --stdin --threads N, a child process timing
//         bl_forward itself: the native CLI as people run it (its default is
//         one thread per core), against mtN on the same thread count
// --gap MS: idle time before each timed run (default 0). Measured
// 2026-11-25 at 128 tokens: with 30 ms, native×2 fell from 24–29 to 15–20
// ms (the previous engine's pool, onnxruntime-web's above all, spins for a
// while after its run and shared the cores), but the wasm engines turned
// erratic (mt×2 25–41 ms instead of 24–28: on this VM an idle core clocks
// down), so back to back is the default.
// Bundles: the published q8 (models/) vs ORT int8, and build/models' f32 vs
// ORT fp32 when present; then a bert-base-shaped q8 bundle (12 layers x 12
// heads x 768, random weights: tools/make_random_bert.py, converted by the
// native CLI into build/shapes/) at 128 and 512 tokens, bertlens alone, for
// issue 35's bar: a forward with every layer's attention in <= 700 ms on 2
// threads at 512 tokens (its ids: tokenIds folded into its 5000-word vocabulary). Attention of every layer kept (BL_KEEP_ATTN), as
// the page asks, and copied into JS with the final hidden states, as ORT
// returns them (tools/bench.mjs forwardOut). Ratios are of medians; "cpu" is this process's CPU time
// (all its threads) over wall time for the row; the load average (1 min)
// before and after each row says how busy the machine was.
import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join, basename, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import os from 'node:os';
import v8 from 'node:v8';
import { bundleBytes } from './wasm_node.mjs';
import { machineLine, Bertlens, NativeBench, timeInterleaved, tokenIds, loadOrt, ortSession, ortFeeds, table, f1, f2, baseShapeBundle } from './bench.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const rel = (p) => relative(ROOT, p) || '.';
const NATIVE = join(ROOT, 'build/bertlens');

function parseArgs(argv) {
  const o = { runs: 20, warmup: 3, Ts: [16, 128, 512], threads: 2, gap: 0, ort: true, json: join(ROOT, 'build/bench/threads.json') };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const val = () => argv[++i];
    if (a === '--runs') o.runs = parseInt(val(), 10);
    else if (a === '--warmup') o.warmup = parseInt(val(), 10);
    else if (a === '--T') o.Ts = val().split(',').map((x) => parseInt(x, 10));
    else if (a === '--threads') o.threads = parseInt(val(), 10);
    else if (a === '--gap') o.gap = parseInt(val(), 10);
    else if (a === '--no-ort') o.ort = false;
    else if (a === '--json') o.json = val();
    else throw new Error(`unknown option ${a}`);
  }
  if (!(o.runs >= 1) || !(o.threads >= 2) || !(o.gap >= 0)) throw new Error('bad --runs / --threads / --gap');
  return o;
}

async function main() {
  const opt = parseArgs(process.argv.slice(2));
  v8.setFlagsFromString('--no-liftoff'); // as tools/bench.mjs: steady state, both engines
  const N = opt.threads;
  const load = () => os.loadavg()[0];
  console.log(`bench_threads — node ${process.version}, ${machineLine()}, ` +
    `load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  const st = join(ROOT, 'build/wasm/bertlens.js'), mt = join(ROOT, 'build/wasm/bertlens-mt.js');
  for (const f of [st, mt]) if (!existsSync(f)) throw new Error(`${rel(f)} missing: make wasm`);
  const bundles = [
    { path: join(ROOT, 'models/all-minilm-l6-v2.q8.blb.gz'), ort: 'int8', onnx: join(ROOT, 'tools/onnx/all-minilm-l6-v2.int8.onnx') },
    { path: join(ROOT, 'build/models/all-minilm-l6-v2.f32.blb'), ort: 'fp32', onnx: join(ROOT, 'tools/onnx/all-minilm-l6-v2.f32.onnx') },
  ].filter((b) => existsSync(b.path));
  const base = baseShapeBundle();
  if (base) bundles.push({ path: base, ort: '-', onnx: '', Ts: opt.Ts.filter((T) => T >= 128), alone: true });

  let ort = null;
  if (opt.ort && bundles.some((b) => existsSync(b.onnx))) {
    ort = await loadOrt();
    if (ort) ort.env.wasm.numThreads = N; // before any session exists
  }
  if (!ort) console.log('note: onnxruntime-web or tools/onnx/*.onnx missing (python3 tools/export_onnx.py): ORT columns skipped');
  else console.log(`onnxruntime-web ${ort.env.versions?.web ?? '?'}: wasm backend, numThreads ${N}, SIMD`);
  console.log(`${opt.runs} timed runs after ${opt.warmup} warm-up(s) per engine and row, engines alternating; medians in ms`);

  const rows = [], printed = [];
  for (const bd of bundles) {
    const bytes = bundleBytes(bd.path);
    const e = { st: await Bertlens.threaded(st, 1), mt1: await Bertlens.threaded(mt, 1), mtN: await Bertlens.threaded(mt, N) };
    for (const b of Object.values(e)) b.load(bytes);
    if (e.mtN.M._blw_set_threads(N) !== N || e.mt1.M._blw_set_threads(1) !== 1) throw new Error('blw_set_threads failed');
    const session = ort && existsSync(bd.onnx) ? await ortSession(ort, readFileSync(bd.onnx)) : null;
    const native = existsSync(NATIVE) && !bd.alone ? new NativeBench(NATIVE, bd.path, true, N) : null;
    const vocab = e.st.info.config.vocab_size;
    for (const T of bd.Ts || opt.Ts) {
      const ids = tokenIds(T).map((x) => (x < vocab ? x : 1000 + (x % (vocab - 1000))));
      for (const b of Object.values(e)) b.setIds(ids);
      const feeds = session ? ortFeeds(ort, ids) : null;
      // forwardOut: the run, then every layer's attention and the final hidden
      // states copied into JS, as onnxruntime-web returns them (tools/bench.mjs)
      const fns = [() => e.st.forwardOut(), () => e.mtN.forwardOut(), () => e.mt1.forwardOut()];
      fns.push(session ? () => session.run(feeds) : null);
      if (native) fns.push(() => native.run(T));
      const runs = T >= 512 ? Math.max(5, Math.round(opt.runs / 2)) : opt.runs;
      const l0 = load();
      const { stats, cpuShare } = await timeInterleaved(fns, opt.warmup, runs, opt.gap);
      const l1 = load();
      const [s, m, m1, o, nat] = stats.map((x) => x?.median ?? null);
      const row = { bundle: basename(bd.path), T, runs, st: s, mtN: m, mt1: m1, ortN: o, speedup: s / m, speedupSameBuild: m1 / m,
        vsOrt: o ? o / m : null, natN: nat, natVsMt: nat ? m / nat : null, cpuShare, load: [l0, l1], min: stats.map((x) => x?.min ?? null) };
      rows.push(row);
      const line = [row.bundle, bd.ort, T, f1(s), f1(m1), f1(m), f2(row.speedup), f2(row.speedupSameBuild), o ? f1(o) : '-',
        o ? f2(row.vsOrt) : '-', nat ? f1(nat) : '-', nat ? f2(row.natVsMt) : '-', (100 * cpuShare).toFixed(0), `${l0.toFixed(1)}→${l1.toFixed(1)}`];
      printed.push(line);
      console.log(`  ${line.join('  ')}`);
    }
    native?.close();
  }
  const b512 = rows.find((r) => r.bundle === basename(base || '') && r.T === 512);
  if (b512) console.log(`\nbert-base-shaped q8, 512 tokens, every layer's attention: wasm on ${N} threads ${f1(b512.mtN)} ms `
    + `(issue 35: <= 700 ms on 2 threads: ${N === 2 ? (b512.mtN <= 700 ? 'met' : 'MISSED') : 'not 2 threads'}), 1 thread ${f1(b512.st)} ms`);
  console.log(`\n== ${N} threads vs 1 (bertlens) and vs onnxruntime-web on ${N} threads`);
  console.log(table(['bundle', 'ORT', 'T', 'st ms', 'mt×1 ms', `mt×${N} ms`, `st/mt×${N}`, `mt×1/mt×${N}`, `ORT×${N} ms`,
    `ORT×${N}/mt×${N}`, `native×${N} ms`, `mt×${N}/native×${N}`, 'cpu %', 'load'], printed));
  console.log(`st = single-threaded build; mt×k = pthreads build on k threads; native×${N} = build/bertlens on ${N} threads ` +
    `(its own timing of bl_forward, no copy into JS); ratios > 1: the engine after the slash is faster. ` +
    `cpu % = CPU time of all this process's threads / wall time (ideal with ${N} threads busy: ~${100 * N} for the mt×${N} runs, ` +
    `100 for the others, so the row mixes them${opt.gap ? `; the wall time includes the ${opt.gap} ms idle gap before each run` : ''}); load = 1-minute load average before→after the row (above the core count: ` +
    'other processes competed for the cores and the ratios understate what an idle machine gives).');
  if (opt.json) {
    mkdirSync(dirname(opt.json), { recursive: true });
    writeFileSync(opt.json, JSON.stringify({ when: new Date().toISOString(), threads: N, cores: os.cpus().length, rows }, null, 1));
    console.log(`results: ${rel(opt.json)}`);
  }
}

main().then(() => process.exit(0), (e) => {
  console.error(`bench_threads: ${e.stack || e.message}`);
  process.exit(1);
});
