#!/usr/bin/env node
// bench_wake.mjs — part of `make bench`: what a thread pool pays to wake.
// The page runs one forward pass per keystroke, after the reader paused: the
// pool's threads have slept (wasm: Atomics.wait in the Workers; native: a
// condition variable) and the cores may have clocked down. This times, for
// each engine, a run after IDLE ms of idle time and the run right after it
// (back to back, the pool awake), pair by pair, so load from other
// processes hits both alike; the wake cost is the median of (after idle −
// back to back), given in ms and as a share of the back-to-back run.
//
//   node tools/bench_wake.mjs [--pairs N] [--idle MS] [--T 128,512] [--json FILE]
//
// Engines: wasm×1 and wasm×2 (build/wasm/bertlens-mt.js on 1 and 2 threads,
// Node's worker_threads), native×1 and native×2 (build/bertlens bench
// --stdin, timing bl_forward itself). Bundle: the published q8 MiniLM, every
// layer's attention kept and copied out, as the page asks. Issue 35's bar:
// the wake cost under 10 % of the run at 512 tokens.
import { existsSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import os from 'node:os';
import v8 from 'node:v8';
import { bundleBytes } from './wasm_node.mjs';
import { machineLine, Bertlens, NativeBench, stats, tokenIds, table, f1 } from './bench.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const rel = (p) => relative(ROOT, p) || '.';

function parseArgs(argv) {
  const o = { pairs: 15, idle: 300, Ts: [128, 512], json: join(ROOT, 'build/bench/wake.json') };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const val = () => argv[++i];
    if (a === '--pairs') o.pairs = parseInt(val(), 10);
    else if (a === '--idle') o.idle = parseInt(val(), 10);
    else if (a === '--T') o.Ts = val().split(',').map((x) => parseInt(x, 10));
    else if (a === '--json') o.json = val();
    else throw new Error(`unknown option ${a}`);
  }
  if (!(o.pairs >= 3) || !(o.idle >= 0) || !o.Ts.every((t) => t >= 2 && t <= 512)) throw new Error('bad --pairs / --idle / --T');
  return o;
}

const median = (xs) => stats(xs).median;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function wasmEngine(js, threads, bytes) {
  const b = await Bertlens.threaded(js, threads);
  b.load(bytes);
  if (b.M._blw_set_threads(threads) !== threads) throw new Error(`blw_set_threads(${threads}) failed`);
  return b;
}

// one pair: IDLE ms asleep, a run, then a run at once; ms of each
async function pair(run, idle) {
  await sleep(idle);
  const t0 = performance.now();
  const a = await run();
  const t1 = performance.now();
  const b = await run();
  const t2 = performance.now();
  return [typeof a === 'number' ? a : t1 - t0, typeof b === 'number' ? b : t2 - t1];
}

async function main() {
  const opt = parseArgs(process.argv.slice(2));
  v8.setFlagsFromString('--no-liftoff');
  console.log(`bench_wake — node ${process.version}, ${machineLine()}, load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  const mt = join(ROOT, 'build/wasm/bertlens-mt.js'), native = join(ROOT, 'build/bertlens');
  const bundle = join(ROOT, 'models/all-minilm-l6-v2.q8.blb.gz');
  for (const f of [mt, native, bundle]) if (!existsSync(f)) throw new Error(`${rel(f)} missing: make wasm native`);
  const bytes = bundleBytes(bundle);
  const engines = [
    { name: 'wasm×1', e: await wasmEngine(mt, 1, bytes) },
    { name: 'wasm×2', e: await wasmEngine(mt, 2, bytes) },
    { name: 'native×1', nat: new NativeBench(native, bundle, true, 1) },
    { name: 'native×2', nat: new NativeBench(native, bundle, true, 2) },
  ];
  console.log(`${rel(bundle)}; ${opt.pairs} pairs per engine and length (${opt.idle} ms idle, a run, a run at once), ` +
    'engines taking turns pair by pair; medians in ms');
  const rows = [], printed = [];
  for (const T of opt.Ts) {
    const ids = tokenIds(T);
    for (const x of engines) if (x.e) x.e.setIds(ids);
    const runs = engines.map((x) => (x.e ? () => x.e.forwardOut() : () => x.nat.run(T)));
    for (const run of runs) { await run(); await run(); } // warm-up
    const got = engines.map(() => ({ idle: [], b2b: [], cost: [] }));
    const l0 = os.loadavg()[0];
    for (let i = 0; i < opt.pairs; i++) {
      for (let j = 0; j < engines.length; j++) {
        const [a, b] = await pair(runs[j], opt.idle);
        got[j].idle.push(a), got[j].b2b.push(b), got[j].cost.push(a - b);
      }
    }
    const l1 = os.loadavg()[0];
    engines.forEach((x, j) => {
      const idle = median(got[j].idle), b2b = median(got[j].b2b), cost = median(got[j].cost);
      const row = { engine: x.name, T, idle, b2b, cost, share: cost / b2b, load: [l0, l1] };
      rows.push(row);
      printed.push([x.name, T, f1(b2b), f1(idle), f1(cost), `${(100 * row.share).toFixed(1)} %`, `${l0.toFixed(1)}→${l1.toFixed(1)}`]);
    });
  }
  for (const x of engines) x.nat?.close();
  console.log(`\n== waking after ${opt.idle} ms idle`);
  console.log(table(['engine', 'T', 'back to back ms', 'after idle ms', 'wake cost ms', 'cost / run', 'load'], printed));
  console.log('wake cost = median over pairs of (the run after idle − the run right after it); cost / run: of the back-to-back run. ' +
    'Issue 35 asks for under 10 % at 512 tokens. load = 1-minute load average before→after the length (above the core count: ' +
    'other processes competed for the cores).');
  if (opt.json) {
    mkdirSync(dirname(opt.json), { recursive: true });
    writeFileSync(opt.json, JSON.stringify({ when: new Date().toISOString(), idle: opt.idle, cores: os.cpus().length, rows }, null, 1));
    console.log(`results: ${rel(opt.json)}`);
  }
}

main().then(() => process.exit(0), (e) => {
  console.error(`bench_wake: ${e.stack || e.message}`);
  process.exit(1);
});
