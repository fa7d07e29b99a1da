#!/usr/bin/env node
// bench.mjs — `make bench`: the bertlens wasm encoder against onnxruntime-web,
// both single-threaded WebAssembly in this one Node process.
//
//   node tools/bench.mjs [--runs N] [--warmup N] [--T 16,128,512] [--quick]
//                        [--no-ort] [--no-children] [--json FILE] [--wasm DIR]
//
// What it measures, in order:
//   1. cold start of the default model: bundle bytes already in memory ->
//      wasm instance -> blw_load -> first blw_run of a short sentence with
//      attention kept (what the web worker does before the first picture);
//      the same for onnxruntime-web (session from bytes + first run). Each
//      in a fresh child process with V8's default (browser-like) tiering;
//      the timed rows below run with every wasm function optimized up front
//      (--no-liftoff, set at start-up) so warm-up covers the steady state;
//   2. blw_forward_ids at T = 16, 128, 512 for every bundle found: 'attn'
//      (every layer's attention and the final hidden states copied into JS)
//      against onnxruntime-web on the exported ONNX model with the same
//      token ids, which returns the same: f32 bundle vs ORT fp32, q8 bundle
//      vs ORT dynamic int8 (per channel); 'page' (attention kept, the final
//      hidden states skipped: blw_set_final(0), as the page's worker runs)
//      and 'none' (no extras), bertlens alone;
//   3. the native CLI (build/bertlens bench --stdin, a child process that
//      times bl_forward itself) against the wasm module on the same ids,
//      runs alternating, f32 and q8 bundles, attention kept;
//   4. the relaxed-SIMD build (build/wasm-relaxed, `make wasm-relaxed`: the
//      module the page loads where relaxed SIMD validates) against the plain
//      SIMD build, f32, q8 and q10 bundles (--relaxed-only: this section
//      alone), when it exists and this V8 runs it
//      (WebAssembly.validate on a one-instruction relaxed module; Node 20
//      needs --experimental-wasm-relaxed-simd, which the bench sets, as
//      browsers enable it by default since Chrome 114);
//   5. tokenizer and page benchmarks of the other helpers, as child
//      processes, when their scripts exist.
//
// FLOP count (a multiply-add is 2 FLOPs), per layer, T tokens, hidden H,
// feed-forward width I:
//   Q, K, V, output projections   4 * 2*T*H*H
//   feed-forward (two matmuls)    2 * 2*T*H*I
//   attention QK^T and A.V        2 * 2*T*T*H   (all heads together: d_head*heads = H)
//   FLOPs = n_layers * (8*T*H^2 + 4*T*H*I + 4*T^2*H)
// Embedding lookup, LayerNorm, softmax, GELU and bias adds are not counted.
// all-MiniLM-L6-v2 (6 layers, H=384, I=1536): 0.34 GFLOP at T=16,
// 2.87 GFLOP at T=128, 13.29 GFLOP at T=512.
//
// The ONNX files come from `python3 tools/export_onnx.py` (tools/onnx/, not
// committed); without them only the bertlens half runs.

import { existsSync, readFileSync, readdirSync, writeFileSync, mkdirSync, statSync } from 'node:fs';
import { spawn, spawnSync } from 'node:child_process';
import { dirname, join, basename, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { createHash } from 'node:crypto';
import os from 'node:os';
import v8 from 'node:v8';
import { createModule, floats, loadBytes, loadFactory, putString, wasmError } from './wasm_node.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const rel = (p) => relative(ROOT, p) || '.';

// ------------------------------------------------------------------ options

function parseArgs(argv) {
  const o = { runs: 30, warmup: 3, Ts: [16, 128, 512], ort: true, children: true, json: join(ROOT, 'build/bench/results.json'),
    wasm: join(ROOT, 'build/wasm'), native: join(ROOT, 'build/bertlens'), relaxed: join(ROOT, 'build/wasm-relaxed') };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const val = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--runs') o.runs = parseInt(val(), 10);
    else if (a === '--warmup') o.warmup = parseInt(val(), 10);
    else if (a === '--T') o.Ts = val().split(',').map((s) => parseInt(s, 10));
    else if (a === '--quick') { o.runs = 5; o.warmup = 1; o.Ts = [16, 128]; }
    else if (a === '--no-ort') o.ort = false;
    else if (a === '--no-children') o.children = false;
    else if (a === '--no-native') o.native = null;
    else if (a === '--only') o.only = val(); // time only bundles whose file name contains this
    else if (a === '--relaxed') o.relaxed = val(); // the relaxed-SIMD build (make wasm-relaxed) to time against --wasm
    else if (a === '--no-relaxed') o.relaxed = null;
    else if (a === '--relaxed-only') o.relaxedOnly = true; // only section 4 (relaxed SIMD vs SIMD128)
    else if (a === '--cpu-time') o.cpuTime = true; // runs timed by CPU time (timeInterleaved)
    else if (a === '--native') o.native = val(); // the native CLI to time against wasm
    else if (a === '--json') o.json = val();
    else if (a === '--wasm') o.wasm = val(); // directory with bertlens.js + bertlens.wasm (compare builds)
    else if (a === '--cold') o.cold = val(); // internal: one cold-start measurement in this fresh process
    else if (a === '-h' || a === '--help') {
      console.log('usage: node tools/bench.mjs [--runs N] [--warmup N] [--T 16,128,512] [--quick] [--no-ort] [--no-children] [--json FILE] [--wasm DIR]');
      console.log('       [--native BIN | --no-native] [--relaxed DIR | --no-relaxed | --relaxed-only] [--only NAME_PART] [--cpu-time]');
      console.log('       (--cold bertlens|ort: one cold start, used by the bench itself in child processes)');
      process.exit(0);
    } else throw new Error(`unknown option ${a}`);
  }
  if (!(o.runs >= 1) || !(o.warmup >= 0) || o.Ts.some((t) => !(t >= 2))) throw new Error('bad --runs/--warmup/--T');
  return o;
}

// ------------------------------------------------------------------ numbers

const BL_KEEP_ATTN = 1; // bertlens.h
const BL_KEEP_HIDDEN = 8;
const FLAG_ROWS = [
  { name: 'attn', flags: BL_KEEP_ATTN, ort: true }, // every layer's attention and the final hidden states, as ORT
  { name: 'page', flags: BL_KEEP_ATTN, final: false }, // the page's run: attention, no final hidden states (blw_set_final(0))
  { name: 'none', flags: 0 },
];

function flops(cfg, T) {
  const H = cfg.hidden, I = cfg.intermediate;
  return cfg.n_layers * (8 * T * H * H + 4 * T * H * I + 4 * T * T * H);
}

function stats(ms) {
  const s = [...ms].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)]; // nearest rank
  return { n: s.length, median: s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2,
    p90: q(0.9), min: s[0] };
}

// The same ids for both engines: [CLS] w1 .. w_{T-2} [SEP], the words drawn
// from the ordinary-word part of the BERT vocabulary by a fixed LCG (speed
// does not depend on which words they are; the sequence is reproducible).
function tokenIds(T) {
  const ids = new Int32Array(T);
  let x = 12345;
  for (let i = 0; i < T; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    ids[i] = 2000 + ((x >>> 8) % 27000);
  }
  ids[0] = 101; // [CLS]
  ids[T - 1] = 102; // [SEP]
  return ids;
}

// Time several engines on the same input, alternating one run of each, so
// that load from other processes hits all of them alike and the ratio
// stays fair on a busy machine. Also returns the share of the wall time
// this process was on a CPU (near 100% = nobody else competed).
// A function that resolves to a number reports its own time in ms (the
// native CLI times its forward pass itself, without the pipe round trip).
// A null entry keeps its place in the results (stats null) and is not run.
// gapMs: idle time before each timed run (bench_threads: other engines' pools
// spin for a while after their runs), not counted in the run's time.
// --cpu-time: each run timed by this process's CPU time (user + system)
// instead of the wall clock: on a machine shared with other jobs a run that
// waits for a core is not counted (one-thread rows only; GC threads count).
let CPU_TIME = false;
const cpuMs = () => { const c = process.cpuUsage(); return (c.user + c.system) / 1e3; };
async function timeInterleaved(fns, warmup, runs, gapMs = 0) {
  for (let i = 0; i < warmup; i++) for (const fn of fns) if (fn) await fn();
  const ms = fns.map(() => []);
  const c0 = process.cpuUsage(), w0 = performance.now();
  for (let i = 0; i < runs; i++) {
    for (let j = 0; j < fns.length; j++) {
      if (!fns[j]) continue;
      if (gapMs) await new Promise((r) => setTimeout(r, gapMs));
      const t0 = CPU_TIME ? cpuMs() : performance.now();
      const own = await fns[j]();
      ms[j].push(typeof own === 'number' ? own : (CPU_TIME ? cpuMs() : performance.now()) - t0);
    }
  }
  const c = process.cpuUsage(c0), wall = performance.now() - w0;
  return { stats: ms.map((m) => (m.length ? stats(m) : null)), cpuShare: (c.user + c.system) / 1e3 / wall };
}

const f1 = (x) => (x == null ? '-' : x.toFixed(1));
const f2 = (x) => (x == null ? '-' : x.toFixed(2));

function table(header, rows) {
  const cells = [header, ...rows.map((r) => r.map((c) => String(c)))];
  const w = header.map((_, j) => Math.max(...cells.map((r) => r[j].length)));
  const line = (r) => '| ' + r.map((c, j) => (j < 3 ? c.padEnd(w[j]) : c.padStart(w[j]))).join(' | ') + ' |';
  return [line(header), '|' + w.map((n, j) => (j < 3 ? '-'.repeat(n + 2) : '-'.repeat(n + 1) + ':')).join('|') + '|',
    ...cells.slice(1).map(line)].join('\n');
}

// ----------------------------------------------------------------- bertlens

class Bertlens {
  // the pthreads build (or any module file) with a pool for `threads` threads (threads - 1 Workers)
  static async threaded(js, threads) {
    const b = new Bertlens();
    b.M = await createModule(js, threads > 1 ? { pthreadPoolSize: threads - 1 } : {});
    return b;
  }
  static async create(factory, wasmBinary) {
    const b = new Bertlens();
    b.M = await factory({ wasmBinary, print: () => {}, printErr: (s) => process.stderr.write(s + '\n') });
    return b;
  }
  get heapBytes() { return this.M.HEAPU8.length; }
  error() { return wasmError(this.M); }
  load(bytes) {
    if (loadBytes(this.M, bytes) !== 0) throw new Error(`blw_load: ${this.error()}`);
    this.info = JSON.parse(this.M.UTF8ToString(this.M._blw_info_json()));
    return this.info;
  }
  run(text, flags) {
    const p = putString(this.M, text);
    const T = this.M._blw_run(p, 0, flags, 0);
    this.M._free(p);
    if (T < 0) throw new Error(`blw_run: ${this.error()}`);
    return T;
  }
  // Copy ids into the heap once; forward(flags) then reruns on them.
  setIds(ids) {
    const M = this.M;
    if (this.idsPtr) { M._free(this.idsPtr); M._free(this.typesPtr); }
    this.T = ids.length;
    this.idsPtr = M._malloc(4 * ids.length);
    this.typesPtr = M._malloc(4 * ids.length);
    M.HEAP32.set(ids, this.idsPtr >> 2);
    M.HEAP32.fill(0, this.typesPtr >> 2, (this.typesPtr >> 2) + ids.length);
  }
  forward(flags) {
    const T = this.M._blw_forward_ids(this.idsPtr, this.typesPtr, this.T, flags, 0);
    if (T !== this.T) throw new Error(`blw_forward_ids returned ${T}: ${this.error()}`);
  }
  // forward, then copy what the ONNX export returns (every layer's attention,
  // the final hidden states) out of the wasm heap into JS arrays, as
  // onnxruntime-web hands its outputs over: the same work on both sides.
  forwardOut() {
    this.forward(BL_KEEP_ATTN);
    const c = this.info.config, T = this.T, out = [];
    const copy = (ptr, n) => new Float32Array(this.M.HEAPF32.buffer, ptr, n).slice(); // a memcpy
    for (let l = 0; l < c.n_layers; l++) out.push(copy(this.M._blw_attention(l), c.n_heads * T * T));
    out.push(copy(this.M._blw_hidden(c.n_layers), T * c.hidden));
    return out;
  }
  floats(ptr, n) { return ptr ? floats(this.M, ptr, n) : null; }
}

// ------------------------------------------------------------- native CLI

// build/bertlens bench --stdin: one child per bundle; run(T) asks for one
// forward pass of T tokens (the same ids as tokenIds(T)) and resolves to the
// time the child measured around bl_forward.
class NativeBench {
  constructor(bin, bundlePath, flags, threads = 1) {
    // one thread by default, as the single-threaded wasm build it alternates
    // with (--threads: src/cli/cli.c; bench_threads passes N for its mt×N peer)
    this.child = spawn(bin, ['--threads', String(threads), 'bench', '--stdin', '--flags', flags ? 'attn' : 'none', bundlePath],
      { stdio: ['pipe', 'pipe', 'inherit'] });
    this.waiting = [];
    this.buf = '';
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', (d) => {
      this.buf += d;
      let nl;
      while ((nl = this.buf.indexOf('\n')) >= 0) {
        const line = this.buf.slice(0, nl);
        this.buf = this.buf.slice(nl + 1);
        this.waiting.shift()?.resolve(JSON.parse(line));
      }
    });
    this.child.on('exit', (code) => { for (const w of this.waiting.splice(0)) w.reject(new Error(`native bench exited (${code})`)); });
  }
  async run(T) {
    const r = await new Promise((resolve, reject) => { this.waiting.push({ resolve, reject }); this.child.stdin.write(`${T}\n`); });
    this.simd = r.simd;
    return r.ms;
  }
  close() { this.child.stdin.end(); }
}

// -------------------------------------------------------------------- ORT

async function loadOrt() {
  const dist = join(ROOT, 'node_modules/onnxruntime-web/dist/');
  if (!existsSync(join(dist, 'ort-wasm-simd-threaded.wasm'))) return null;
  // In Node the package resolves to dist/ort.node.min.mjs, which imports the
  // wasm glue dist/ort-wasm-simd-threaded.mjs and reads
  // dist/ort-wasm-simd-threaded.wasm from wasmPaths: local files, no network.
  const ort = await import(pathToFileURL(join(ROOT, 'node_modules/onnxruntime-web/dist/ort.node.min.mjs')).href);
  ort.env.wasm.numThreads = 1; // single thread like bertlens (no worker threads)
  ort.env.wasm.simd = true;
  ort.env.wasm.proxy = false;
  ort.env.wasm.wasmPaths = pathToFileURL(dist).href;
  ort.env.logLevel = 'error';
  return ort;
}

// What blw_forward_ids gets: token ids and type ids (one unpadded sequence,
// no attention mask). The export returns last_hidden_state and every layer's
// attention (tools/export_onnx.py), as bertlens does with BL_KEEP_ATTN.
function ortFeeds(ort, ids) {
  const T = ids.length;
  const big = BigInt64Array.from(ids, (v) => BigInt(v));
  return {
    input_ids: new ort.Tensor('int64', big, [1, T]),
    token_type_ids: new ort.Tensor('int64', new BigInt64Array(T), [1, T]),
  };
}

async function ortSession(ort, bytes) {
  return ort.InferenceSession.create(bytes, { executionProviders: ['wasm'], graphOptimizationLevel: 'all' });
}

// ------------------------------------------------------------------- main

function findBundles() {
  const out = [];
  const notes = [];
  for (const d of ['f32', 'q8', 'q4']) {
    const p = join(ROOT, `build/models/all-minilm-l6-v2.${d}.blb`);
    if (existsSync(p)) out.push({ path: p, bytes: () => new Uint8Array(readFileSync(p)) });
    else notes.push(`skipped ${rel(p)} (missing: make test-models)`);
  }
  const mdir = join(ROOT, 'models');
  const gz = existsSync(mdir) ? readdirSync(mdir).filter((f) => f.endsWith('.blb.gz')).sort() : [];
  if (!gz.length) notes.push('skipped models/*.blb.gz (none found)');
  for (const f of gz) {
    const p = join(mdir, f);
    out.push({ path: p, bytes: () => new Uint8Array(gunzipSync(readFileSync(p))) });
  }
  return { bundles: out, notes };
}

function sha(bytes) { return createHash('sha256').update(bytes).digest('hex'); }

function childBench(script, args) {
  const p = join(ROOT, script);
  if (!existsSync(p)) { console.log(`${script}: skipped (not present)`); return { script, status: 'skipped' }; }
  console.log(`\n== ${script}`);
  const r = spawnSync(process.execPath, [p, ...args], { cwd: ROOT, stdio: 'inherit' });
  const status = r.error ? `error: ${r.error.message}` : r.status === 0 ? 'ok' : `exit ${r.status ?? r.signal}`;
  if (status !== 'ok') console.log(`${script}: ${status}`);
  return { script, status };
}

const COLD_SENTENCE = 'The quick brown fox jumps over the lazy dog.';
const COLD_REPS = 3;

// One cold start in this (fresh) process; prints one JSON line with the
// step times. Bytes are read from disk before the clock starts.
async function coldChild(engine, wasmDir) {
  if (engine === 'bertlens') {
    // the page's default model (models/index.json)
    const model = join(ROOT, 'models', JSON.parse(readFileSync(join(ROOT, 'models/index.json'), 'utf8')).models.find((m) => m.default).file);
    const factory = loadFactory(join(wasmDir, 'bertlens.js'));
    const wasmBinary = new Uint8Array(readFileSync(join(wasmDir, 'bertlens.wasm')));
    const gz = readFileSync(model);
    const t0 = performance.now();
    const bytes = new Uint8Array(gunzipSync(gz));
    const t1 = performance.now();
    const b = await Bertlens.create(factory, wasmBinary);
    const t2 = performance.now();
    b.load(bytes);
    const t3 = performance.now();
    const T = b.run(COLD_SENTENCE, BL_KEEP_ATTN);
    const t4 = performance.now();
    b.run(COLD_SENTENCE, BL_KEEP_ATTN); // state exists now: the forward pass alone, still baseline-compiled code
    const t5 = performance.now();
    const attn = b.floats(b.M._blw_attention(0), T * T);
    if (!attn || Math.abs(attn.slice(0, T).reduce((x, y) => x + y, 0) - 1) > 1e-3) throw new Error('no attention after blw_run');
    return { model: basename(model), gunzip: t1 - t0, instantiate: t2 - t1, load: t3 - t2, first: t4 - t3, total: t4 - t1,
      second: t5 - t4,
      steps: [['gunzip', 'gunzip (node zlib; not in total)'], ['instantiate', 'compile + instantiate wasm'],
        ['load', 'blw_load'], ['first', `first blw_run (T=${T}, attention kept; builds the state)`],
        ['total', 'total to first attention'], ['second', 'second blw_run (not in total)']] };
  }
  const model = join(ROOT, 'tools/onnx/all-minilm-l6-v2.int8.onnx');
  const bytes = readFileSync(model);
  const t0 = performance.now();
  const ort = await loadOrt();
  const s = await ortSession(ort, bytes);
  const t1 = performance.now();
  await s.run(ortFeeds(ort, tokenIds(12)));
  const t2 = performance.now();
  await s.run(ortFeeds(ort, tokenIds(12)));
  const t3 = performance.now();
  return { model: basename(model), session: t1 - t0, first: t2 - t1, total: t2 - t0, second: t3 - t2,
    steps: [['session', 'import + InferenceSession.create (runtime compile included)'], ['first', 'first run (T=12)'],
      ['total', 'total to first output'], ['second', 'second run (not in total)']] };
}

// (module (func (param v128 v128 v128) (result v128)
//   local.get 0 local.get 1 local.get 2 f32x4.relaxed_madd))
const RELAXED_PROBE = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 8, 1, 96, 3, 123, 123, 123, 1, 123, 3, 2, 1, 0,
  10, 13, 1, 11, 0, 32, 0, 32, 1, 32, 2, 253, 133, 2, 11]);
const relaxedSimd = () => WebAssembly.validate(RELAXED_PROBE);

// The f32, q8 and q10 bundles in build/models, else the published ones.
function bundlePath(d) {
  const p = join(ROOT, `build/models/all-minilm-l6-v2.${d}.blb`);
  return existsSync(p) ? p : join(ROOT, `models/all-minilm-l6-v2.${d}.blb.gz`);
}
const readBundle = (p) => (p.endsWith('.gz') ? new Uint8Array(gunzipSync(readFileSync(p))) : new Uint8Array(readFileSync(p)));

// The relaxed-SIMD build against the plain one, one forward each in turn.
async function relaxedVsPlain(opt, factory, wasmBinary, results, note) {
  console.log(`\n== relaxed SIMD (${rel(opt.relaxed)}) vs SIMD128 (${rel(opt.wasm)}), attention kept, runs alternating`);
  const js = join(opt.relaxed, 'bertlens.js'), wasm = join(opt.relaxed, 'bertlens.wasm');
  if (!existsSync(js) || !existsSync(wasm)) { note(`${rel(opt.relaxed)} missing (make wasm-relaxed): relaxed section skipped`); return; }
  const src = join(ROOT, 'src'), newest = Math.max(...readdirSync(src, { recursive: true }).filter((f) => /\.[ch]$/.test(f)).map((f) => statSync(join(src, f)).mtimeMs));
  if (statSync(wasm).mtimeMs < newest) { note(`${rel(opt.relaxed)} is older than src/ (make wasm-relaxed): relaxed section skipped`); return; }
  if (!relaxedSimd()) { note('this V8 does not run relaxed SIMD: relaxed section skipped'); return; }
  const rFactory = loadFactory(js), rBinary = new Uint8Array(readFileSync(wasm));
  const rows = [];
  results.relaxed = [];
  for (const d of ['f32', 'q8', 'q10']) { // q10: the page's default
    const p = bundlePath(d);
    if (!existsSync(p) || (opt.only && !basename(p).includes(opt.only))) continue;
    const bytes = readBundle(p);
    const plain = await Bertlens.create(factory, wasmBinary), relaxed = await Bertlens.create(rFactory, rBinary);
    const cfg = plain.load(bytes).config;
    relaxed.load(bytes);
    for (const T of opt.Ts) {
      if (T > cfg.max_positions) continue;
      plain.setIds(tokenIds(T));
      relaxed.setIds(tokenIds(T));
      const runs = T >= 512 ? Math.min(opt.runs, 10) : opt.runs;
      const { stats: [a, b], cpuShare } = await timeInterleaved([() => plain.forward(BL_KEEP_ATTN),
        () => relaxed.forward(BL_KEEP_ATTN)], opt.warmup, runs);
      const row = { model: rel(p), dtype: d, T, runs, plainMedian: a.median, relaxedMedian: b.median, ratio: a.median / b.median, cpuShare };
      results.relaxed.push(row);
      const line = [basename(p), d, T, f1(a.median), f1(b.median), f2(row.ratio), (100 * cpuShare).toFixed(0)];
      rows.push(line);
      console.log(`  ${line.join('  ')}`);
    }
  }
  if (rows.length) {
    console.log(table(['model', 'dtype', 'T', 'SIMD128 median ms', 'relaxed median ms', 'ratio SIMD128/relaxed', 'cpu %'], rows));
    console.log('ratio > 1: the relaxed build is faster.');
  }
}

// Native CLI and wasm on the f32 and q8 bundles, one forward each in turn.
async function nativeVsWasm(opt, factory, wasmBinary, results, note) {
  console.log(`\n== native CLI (${rel(opt.native)} bench --stdin) vs wasm (blw_forward_ids), attention kept, runs alternating`);
  if (!existsSync(opt.native)) { note(`${rel(opt.native)} missing (make native): native section skipped`); return; }
  const rows = [];
  results.native = [];
  for (const d of ['f32', 'q8', 'q10']) { // q10: the page's default
    const p = bundlePath(d);
    if (!existsSync(p)) { note(`no ${d} bundle for the native section (make test-models)`); continue; }
    const bytes = readBundle(p);
    const b = await Bertlens.create(factory, wasmBinary);
    const cfg = b.load(bytes).config;
    const nat = new NativeBench(opt.native, p, BL_KEEP_ATTN);
    try {
      for (const T of opt.Ts) {
        if (T > cfg.max_positions) continue;
        b.setIds(tokenIds(T));
        // 512 tokens take ~1 s a run on this machine: fewer runs there
        const runs = T >= 512 ? Math.min(opt.runs, 10) : opt.runs;
        const { stats: [w, n], cpuShare } = await timeInterleaved([() => b.forward(BL_KEEP_ATTN), () => nat.run(T)],
          opt.warmup, runs);
        const row = { model: rel(p), dtype: d, T, runs, wasmMedian: w.median, wasmMin: w.min, nativeMedian: n.median,
          nativeMin: n.min, ratio: w.median / n.median, simd: nat.simd, cpuShare };
        results.native.push(row);
        const line = [basename(p), d, nat.simd, T, f1(w.median), f1(w.min), f1(n.median), f1(n.min), f2(row.ratio),
          (100 * cpuShare).toFixed(0)];
        rows.push(line);
        console.log(`  ${line.join('  ')}`);
      }
    } catch (e) {
      note(`native section: ${e.message}`);
    } finally {
      nat.close();
    }
  }
  if (rows.length) {
    console.log(table(['model', 'dtype', 'native kernels', 'T', 'wasm median ms', 'wasm min ms', 'native median ms',
      'native min ms', 'ratio wasm/native', 'cpu %'], rows));
    console.log('ratio > 1: the native CLI is faster; cpu % is this (wasm) process\'s share of the wall time.');
  }
}

// The CPU the figures come from: a VM's model name ("AMD EPYC") says little,
// and this project's machines have changed generation between sessions
// (AVX2-only Zen 1, AVX-512 Zen 4), which moves every absolute figure and
// the wasm/native ratio. Linux: family, model and the SIMD flags that matter.
function machineLine() {
  const cpus = os.cpus();
  let detail = '';
  try {
    const info = readFileSync('/proc/cpuinfo', 'utf8').split('\n\n')[0];
    const field = (k) => (info.match(new RegExp(`^${k}\\s*:\\s*(.*)$`, 'm')) || [])[1];
    const flags = new Set((field('flags') || '').split(/\s+/));
    const simd = ['sse4_1', 'avx2', 'fma', 'avx512f', 'avx512_vnni', 'avx_vnni'].filter((f) => flags.has(f));
    detail = ` (family ${field('cpu family')} model ${field('model')}, ${simd.join(' ') || 'no SIMD flags'})`;
  } catch { /* not Linux: the model name alone */ }
  return `${cpus[0]?.model ?? 'unknown cpu'}${detail}, ${cpus.length} cores`;
}

async function main() {
  const opt = parseArgs(process.argv.slice(2));
  CPU_TIME = !!opt.cpuTime;
  if (opt.cold) { console.log(JSON.stringify(await coldChild(opt.cold, opt.wasm))); return; }
  // Steady-state numbers: compile every wasm function with the optimizing
  // tier up front. With V8's default lazy tier-up, ORT's big module spends
  // seconds in baseline (Liftoff) code on a busy 2-core machine, which the
  // warm-up runs would not reliably cover. Same treatment for both engines.
  v8.setFlagsFromString('--no-liftoff');
  v8.setFlagsFromString('--experimental-wasm-relaxed-simd'); // Node 20; browsers ship it (section 4)
  const cpu = machineLine();
  console.log(`bertlens bench — node ${process.version}, ${cpu}, ` +
    `load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  console.log(`${opt.runs} timed runs after ${opt.warmup} warm-up run(s) per row; median and p90 (nearest rank) in ms${opt.cpuTime ? ' of CPU time (--cpu-time)' : ''}; ` +
    'single thread for both engines');
  const results = { when: new Date().toISOString(), node: process.version, cpu, opts: opt, cold: [], rows: [], notes: [] };
  const note = (s) => { console.log(`note: ${s}`); results.notes.push(s); };

  // ---- bertlens module
  const jsPath = join(opt.wasm, 'bertlens.js');
  const wasmPath = join(opt.wasm, 'bertlens.wasm');
  let factory = null, wasmBinary = null;
  if (!existsSync(jsPath) || !existsSync(wasmPath)) note(`${rel(opt.wasm)}/bertlens.{js,wasm} missing (make wasm): bertlens part skipped`);
  else {
    factory = loadFactory(jsPath);
    wasmBinary = new Uint8Array(readFileSync(wasmPath));
    const probe = await Bertlens.create(factory, wasmBinary);
    const need = ['_blw_load', '_blw_forward_ids', '_blw_run', '_blw_info_json', '_blw_error'];
    const missing = need.filter((f) => typeof probe.M[f] !== 'function');
    if (missing.length) { note(`wasm module lacks ${missing.join(', ')}: bertlens part skipped`); factory = null; }
    else {
      const head = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).stdout?.trim();
      results.wasm = { sha256: sha(wasmBinary), gitHead: head || null };
      console.log(`bertlens wasm: ${rel(wasmPath)} (${(wasmBinary.length / 1024).toFixed(0)} KiB, sha256 ` +
        `${results.wasm.sha256.slice(0, 12)}, tree at ${head || '?'}), SIMD128 ${probe.M._blw_simd && probe.M._blw_simd() ? 'on' : 'OFF'}`);
    }
  }

  // ---- ORT
  let ort = null;
  const onnx = { f32: join(ROOT, 'tools/onnx/all-minilm-l6-v2.f32.onnx'), q8: join(ROOT, 'tools/onnx/all-minilm-l6-v2.int8.onnx') };
  if (opt.ort) {
    const have = Object.values(onnx).every(existsSync);
    if (!have) {
      note('ONNX files missing (tools/onnx/all-minilm-l6-v2.{f32,int8}.onnx). To add the onnxruntime-web side run:\n' +
        '      pip install onnx onnxruntime && python3 tools/export_onnx.py\n' +
        '  then `make bench` again. Running the bertlens part only.');
    } else {
      ort = await loadOrt();
      if (!ort) note('node_modules/onnxruntime-web missing (npm ci): ORT part skipped');
      else console.log(`onnxruntime-web ${ort.env.versions?.web ?? '?'}: wasm backend, numThreads 1, SIMD`);
    }
  }

  const ortSess = {}; // dtype -> session, created once
  const getOrt = async (dtype) => {
    if (!ort || !onnx[dtype]) return null;
    if (!ortSess[dtype]) {
      const sess = await ortSession(ort, readFileSync(onnx[dtype]));
      if (!sess.outputNames.includes('attentions_0') || sess.inputNames.includes('attention_mask')) {
        note(`${rel(onnx[dtype])} is an older export (no attention outputs): run python3 tools/export_onnx.py again`);
        ort = null;
        return null;
      }
      ortSess[dtype] = sess;
    }
    return ortSess[dtype];
  };

  if (opt.relaxedOnly) {
    if (factory && opt.relaxed) await relaxedVsPlain(opt, factory, wasmBinary, results, note);
    console.log(`load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
    if (opt.json) {
      mkdirSync(dirname(opt.json), { recursive: true });
      writeFileSync(opt.json, JSON.stringify(results, null, 1));
    }
    return;
  }

  // ---- 1. cold start (default model), each in a fresh child process
  console.log(`\n== cold start: bytes in memory -> first attention ("${COLD_SENTENCE}"), ${COLD_REPS} fresh processes each`);
  const coldLines = [];
  for (const engine of ['bertlens', 'ort']) {
    if (engine === 'bertlens' && !factory) { note('bertlens cold start skipped (no wasm module)'); continue; }
    if (engine === 'ort' && !ort) continue;
    const reps = [];
    for (let r = 0; r < COLD_REPS; r++) {
      const c = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--cold', engine, '--wasm', opt.wasm], { cwd: ROOT, encoding: 'utf8' });
      const last = (c.stdout || '').trim().split('\n').pop();
      if (c.status !== 0 || !last?.startsWith('{')) { note(`${engine} cold start failed: ${(c.stderr || '').trim().slice(-300)}`); break; }
      reps.push(JSON.parse(last));
    }
    if (!reps.length) continue;
    results.cold.push({ engine, reps });
    const med = (k) => f1(stats(reps.map((x) => x[k])).median);
    const rng = (k) => `${f1(Math.min(...reps.map((x) => x[k])))}-${f1(Math.max(...reps.map((x) => x[k])))}`;
    for (const [k, what] of reps[0].steps) coldLines.push([what, engine === 'ort' ? 'ORT web' : 'bertlens', reps[0].model, med(k), rng(k)]);
  }
  if (coldLines.length) {
    console.log(table(['step', 'engine', 'model', 'median ms', 'range ms'], coldLines));
    console.log('(default V8 flags here, as in a browser: Liftoff code first, tier-up to TurboFan later; ' +
      'gunzip and second-run rows are not part of the total)');
  }

  // ---- 2. forward passes
  const { bundles: found, notes } = findBundles();
  const bundles = opt.only ? found.filter((b) => basename(b.path).includes(opt.only)) : found;
  notes.forEach(note);
  const header = ['model', 'dtype', 'flags', 'T', 'median ms', 'p90 ms', 'GFLOP/s', 'heap MB',
    'ORT', 'ORT median ms', 'ORT p90 ms', 'ORT GFLOP/s', 'ratio ORT/bl', 'cpu %'];
  const printed = [];
  const seen = new Map(); // sha -> path
  let cfg = null;
  const ortRunner = async (dtype, T) => {
    const s = await getOrt(dtype);
    if (!s) return null;
    const feeds = ortFeeds(ort, tokenIds(T));
    return () => s.run(feeds);
  };

  for (const bd of factory ? bundles : []) {
    const bytes = bd.bytes();
    const h = sha(bytes);
    if (seen.has(h)) { note(`${rel(bd.path)} is byte-identical to ${rel(seen.get(h))} once inflated: not timed twice`); continue; }
    seen.set(h, bd.path);
    // A fresh module per bundle, so "heap MB" is this model's peak alone.
    const b = await Bertlens.create(factory, wasmBinary);
    let info;
    try { info = b.load(bytes); } catch (e) { note(`${rel(bd.path)}: ${e.message}`); continue; }
    cfg = info.config;
    const dtype = info.dtype ?? info.meta?.['weights.dtype'] ?? '?';
    const ortDtype = dtype === 'f32' ? 'f32' : dtype === 'q8' ? 'q8' : null;
    for (const T of opt.Ts) {
      if (T > cfg.max_positions) { note(`${basename(bd.path)}: T=${T} > max_positions ${cfg.max_positions}, skipped`); continue; }
      b.setIds(tokenIds(T));
      const ortRun = ortDtype ? await ortRunner(ortDtype, T) : null;
      const gf = flops(cfg, T) / 1e9;
      // One flag set at a time: the module keeps one encoder state per flag
      // set, and switching flags rebuilds it (not a per-run cost).
      for (const fr of FLAG_ROWS) {
        // ORT always returns every layer's attention: compared on the row where
        // bertlens keeps it too, both handing attention + final hidden states to JS
        const withOrt = ortRun && fr.ort;
        const fns = [withOrt ? () => b.forwardOut() : () => b.forward(fr.flags)];
        if (withOrt) fns.push(ortRun);
        if (fr.final === false) b.M._blw_set_final(0);
        let timed;
        try { timed = await timeInterleaved(fns, opt.warmup, opt.runs); } finally { b.M._blw_set_final(1); }
        const { stats: [st, o], cpuShare } = timed;
        const row = {
          model: rel(bd.path), dtype, flags: fr.name, T, median: st.median, p90: st.p90, gflops: gf / (st.median / 1e3),
          heapMB: b.heapBytes / 2 ** 20,
          ort: o ? (ortDtype === 'f32' ? 'fp32' : 'int8') : null,
          ortMedian: o?.median ?? null, ortP90: o?.p90 ?? null, ortGflops: o ? gf / (o.median / 1e3) : null,
          ratio: o ? o.median / st.median : null, cpuShare, min: st.min, ortMin: o?.min ?? null,
        };
        results.rows.push(row);
        const line = [basename(bd.path), dtype, fr.name, T, f1(row.median), f1(row.p90), f2(row.gflops), f1(row.heapMB),
          row.ort ?? '-', f1(row.ortMedian), f1(row.ortP90), f2(row.ortGflops), f2(row.ratio), (100 * cpuShare).toFixed(0)];
        printed.push(line);
        console.log(`  ${line.join('  ')}`); // progress while the table fills
      }
    }
    // Heap after every T: the module's memory only grows, so this is the peak.
    const peak = b.heapBytes / 2 ** 20;
    for (const r of results.rows) if (r.model === rel(bd.path)) r.heapMB = peak;
    for (const l of printed) if (l[0] === basename(bd.path)) l[7] = f1(peak);

    // Same computation? Final hidden states against ORT at T=16 (f32 / q8 only).
    if (ortDtype && ort && typeof b.M._blw_hidden === 'function') {
      const ids = tokenIds(16);
      b.setIds(ids);
      b.forward(BL_KEEP_HIDDEN);
      const mine = b.floats(b.M._blw_hidden(cfg.n_layers), 16 * cfg.hidden);
      const theirs = (await (await getOrt(ortDtype)).run(ortFeeds(ort, ids))).last_hidden_state.data;
      if (mine) {
        let dot = 0, na = 0, nb = 0, mx = 0;
        for (let i = 0; i < mine.length; i++) {
          dot += mine[i] * theirs[i]; na += mine[i] ** 2; nb += theirs[i] ** 2;
          mx = Math.max(mx, Math.abs(mine[i] - theirs[i]));
        }
        const msg = `${basename(bd.path)} vs ORT ${ortDtype === 'f32' ? 'fp32' : 'int8'} final hidden, T=16: ` +
          `cosine ${(dot / Math.sqrt(na * nb)).toFixed(5)}, max|diff| ${mx.toExponential(2)}`;
        console.log(`  check: ${msg}`);
        results.notes.push(msg);
      }
    }
  }

  // ORT alone when no bertlens module/bundle could run.
  if (!printed.length && ort) {
    const ortCfg = { n_layers: 6, hidden: 384, intermediate: 1536 }; // all-MiniLM-L6-v2 config.json
    for (const dtype of ['f32', 'q8']) for (const T of opt.Ts) {
      const { stats: [o], cpuShare } = await timeInterleaved([await ortRunner(dtype, T)], opt.warmup, opt.runs);
      const gf = flops(ortCfg, T) / 1e9;
      const line = ['(no bertlens)', '-', '-', T, '-', '-', '-', '-', dtype === 'f32' ? 'fp32' : 'int8',
        f1(o.median), f1(o.p90), f2(gf / (o.median / 1e3)), '-', (100 * cpuShare).toFixed(0)];
      printed.push(line);
      results.rows.push({ model: null, T, ort: line[8], ortMedian: o.median, ortP90: o.p90, ortGflops: gf / (o.median / 1e3) });
      console.log(`  ${line.join('  ')}`);
    }
  }

  console.log('\n== forward pass (blw_forward_ids vs onnxruntime-web InferenceSession.run)');
  if (printed.length) console.log(table(header, printed));
  else console.log('(nothing ran)');
  if (cfg) console.log(`FLOPs/run = n_layers*(8*T*H^2 + 4*T*H*I + 4*T^2*H) with n_layers=${cfg.n_layers}, H=${cfg.hidden}, ` +
    `I=${cfg.intermediate}; heap MB = wasm memory size after all runs of that bundle (fresh module per bundle); ` +
    'ratio > 1: bertlens faster; bertlens and ORT runs alternate within a row; cpu % = CPU time of this ' +
    'process / wall time over the row (well below 100: other processes competed, numbers are noisy).');

  // ---- 3. native CLI vs wasm
  if (factory && opt.native) await nativeVsWasm(opt, factory, wasmBinary, results, note);

  // ---- 4. relaxed SIMD vs plain SIMD
  if (factory && opt.relaxed) await relaxedVsPlain(opt, factory, wasmBinary, results, note);

  // ---- 5. other helpers' benchmarks
  console.log('\n== tokenizer and page benchmarks');
  const quick = opt.runs < 30;
  if (!opt.children) console.log('skipped (--no-children)');
  else results.children = [
    childBench('tools/bench_tokenizer.mjs', ['--wasm', join(opt.wasm, 'bertlens.js'), ...(quick ? ['--mb', '0.25'] : [])]),
    childBench('tools/bench_page.mjs', quick ? ['--runs', '3'] : []),
    childBench('tools/bench_compare.mjs', ['--wasm', join(opt.wasm, 'bertlens.js'), ...(quick ? ['--runs', '5'] : [])]),
  ];

  if (opt.json) {
    mkdirSync(dirname(opt.json), { recursive: true });
    writeFileSync(opt.json, JSON.stringify(results, null, 1));
    console.log(`\nresults: ${rel(opt.json)}`);
  }
}

/** build/shapes/bert-base-shape.q8.blb, made once (python3 + numpy, the
 *  native CLI); null when it cannot be made. */
function baseShapeBundle() {
  const NATIVE = join(ROOT, 'build/bertlens');
  const dir = join(ROOT, 'build/shapes'), ckpt = join(dir, 'bert-base-shape'), out = join(dir, 'bert-base-shape.q8.blb');
  const run = (cmd, args) => spawnSync(cmd, args, { cwd: ROOT, encoding: 'utf8' }).status === 0;
  if (!existsSync(join(ckpt, 'model.safetensors')) && !run(process.env.PYTHON || 'python3', ['tools/make_random_bert.py', dir, '--shape', 'bert-base-shape'])) return null;
  if (!existsSync(out) || statSync(out).mtimeMs < statSync(join(ckpt, 'model.safetensors')).mtimeMs) {
    if (!existsSync(NATIVE) || !run(NATIVE, ['convert', ckpt, out, '--dtype', 'q8', '--name', 'bertlens/bench-bert-base-shape', '--license', 'MIT'])) return null;
  }
  return out;
}

// tools/bench_threads.mjs reuses the engines and the timing loop.
export { baseShapeBundle, machineLine, Bertlens, NativeBench, stats, timeInterleaved, tokenIds, loadOrt, ortSession, ortFeeds, flops, table, f1, f2, BL_KEEP_ATTN };

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((e) => {
    console.error(`bench: ${e.stack || e.message}`);
    process.exit(1);
  });
}
