// threads.test.mjs — the forward pass split over threads (src/base/threads.c,
// bl_state_set_threads) gives bit for bit the results of one thread:
// attention, value-weighted norms, queries/keys and every layer's hidden
// states, f32/q8/q4 bundles, with and without masked heads, at token counts
// that leave threads without rows (7) or split rows unevenly (13, 130, 301).
//
//   node --test tests/threads.test.mjs                         native (build/bertlens)
//   BERTLENS_BACKEND=wasm node --test tests/threads.test.mjs   wasm (tests/lib/backend.mjs)
//
// wasm: the pthreads build (build/wasm/bertlens-mt.js) at 1, 2 and 3 threads
// against the single-threaded build (build/wasm/bertlens.js): every float
// identical. native: build/bertlens test-attend --threads 1, 2, 3 (JSON
// with %.9g, which round-trips f32): identical output. How close one thread
// is to Hugging Face is tests/encoder.test.mjs's business (run on both
// builds by make test-wasm). The analyses that follow a run on the same
// pool (bl_analyze: head features, both rollouts) are checked the same way.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { ROOT, createModule, loadBundle, putInts, putString, wasmError } from '../tools/wasm_node.mjs';
import { BIN, needs } from './lib/backend.mjs';

// the pthreads build against the single-threaded one: what the wasm run is for
const WASM_ONLY = needs('wasm'), NATIVE_ONLY = needs('native');
const ST = path.join(ROOT, 'build/wasm/bertlens.js');
const MT = path.join(ROOT, 'build/wasm/bertlens-mt.js');
const BUNDLES = ['f32', 'q8', 'q4'].map((d) => path.join(ROOT, `build/models/all-minilm-l6-v2.${d}.blb`));
const KEEP_ALL = 1 | 2 | 8 | 16; // BL_KEEP_ATTN | NORMS | HIDDEN | QK_ALL (bertlens.h)
const L = 6, H = 12; // all-MiniLM-L6-v2
const MASK = [[1, 3], [1, 4], [4, 0]]; // layer:head pairs ablated in the masked case

/** Reproducible ids: [CLS] ordinary words [SEP], a pair's type ids from the middle on. */
function ids(T) {
  const out = [101];
  let x = 7;
  for (let i = 1; i < T - 1; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    out.push(2000 + ((x >>> 8) % 27000));
  }
  out.push(102);
  return { ids: out, types: out.map((_, i) => (i > T / 2 ? 1 : 0)) };
}

for (const f of [...BUNDLES]) {
  if (!fs.existsSync(f)) throw new Error(`${path.relative(ROOT, f)} is missing: run make test-models`);
}

// ------------------------------------------------------------------ wasm

/** Everything one forward keeps, as bytes: [name, Uint8Array][]. */
function wasmRun(M, { ids: tok, types }, masked) {
  const T = tok.length;
  const mask = new Uint8Array(L * H);
  if (masked) for (const [l, h] of MASK) mask[l * H + h] = 1;
  const pm = M._malloc(mask.length);
  M.HEAPU8.set(mask, pm);
  assert.equal(M._blw_set_head_mask(pm), masked ? MASK.length : 0);
  M._free(pm);
  const pi = putInts(M, tok), pt = putInts(M, types);
  const r = M._blw_forward_ids(pi, pt, T, KEEP_ALL, 2);
  M._free(pi);
  M._free(pt);
  assert.equal(r, T, wasmError(M));
  const bytes = (p, n) => {
    assert.ok(p, 'result missing');
    return new Uint8Array(M.HEAPU8.buffer, p, n * 4).slice();
  };
  const out = [];
  for (let l = 0; l < L; l++) {
    out.push([`attention ${l}`, bytes(M._blw_attention(l), H * T * T)]);
    out.push([`norms ${l}`, bytes(M._blw_norms(l), H * T * T)]);
    out.push([`queries ${l}`, bytes(M._blw_layer_queries(l), T * 384)], [`keys ${l}`, bytes(M._blw_layer_keys(l), T * 384)]);
  }
  for (let l = 0; l <= L; l++) out.push([`hidden ${l}`, bytes(M._blw_hidden(l), T * 384)]);
  return out;
}

function sameBytes(got, want, what) {
  assert.equal(got.length, want.length);
  for (let i = 0; i < got.length; i++) {
    const [name, a] = got[i];
    const b = want[i][1];
    if (!Buffer.from(a.buffer).equals(Buffer.from(b.buffer))) {
      const fa = new Float32Array(a.buffer), fb = new Float32Array(b.buffer);
      let k = 0;
      while (k < fa.length && Object.is(fa[k], fb[k])) k++;
      assert.fail(`${what}: ${name} differs first at float ${k}: ${fa[k]} vs ${fb[k]} (one thread)`);
    }
  }
}

test('wasm: the pthreads build at 1, 2 and 3 threads equals the single-threaded build bit for bit', { skip: WASM_ONLY }, async () => {
  for (const f of [ST, MT]) if (!fs.existsSync(f)) throw new Error(`${path.relative(ROOT, f)} is missing: run make wasm`);
  const st = await createModule(ST);
  // Workers for 3 threads (2 beside the caller); unref'd by createModule
  const mt = await createModule(MT, { pthreadPoolSize: 2 });
  assert.equal(st._blw_threaded(), 0);
  assert.equal(mt._blw_threaded(), 1);
  assert.equal(st._blw_set_threads(4), 1, 'the single-threaded build runs one thread whatever is asked');
  for (const bundle of BUNDLES) {
    loadBundle(st, bundle);
    loadBundle(mt, bundle);
    const Ts = bundle.includes('.q8.') ? [7, 13, 130, 301] : [7, 130];
    for (const T of Ts) {
      for (const masked of [false, true]) {
        if (masked && T !== 130) continue;
        const input = ids(T);
        const want = wasmRun(st, input, masked);
        for (const n of [1, 2, 3]) {
          assert.equal(mt._blw_set_threads(n), n, wasmError(mt));
          assert.equal(mt._blw_threads(), n);
          sameBytes(wasmRun(mt, input, masked), want, `${path.basename(bundle)} T=${T}${masked ? ' masked' : ''} ${n} threads`);
        }
      }
    }
  }
});

// Texts of 7, ~130 and ~300 tokens (uneven row splits; 7: fewer row groups than threads).
const WORDS = 'the quick brown fox jumps over the lazy dog , while a small cat sleeps on the warm mat .';
const ANALYZE_TEXTS = [['Hello, world!', null], [Array(6).fill(WORDS).join(' '), 'and a second sentence.'], [Array(16).fill(WORDS).join(' '), null]];

/** blw_run then blw_analyze_json with rollouts: the features JSON and both
 *  rollouts of every layer, as bytes. */
function wasmAnalyze(M, [a, b]) {
  const pa = putString(M, a);
  const pb = b === null ? 0 : putString(M, b);
  const T = M._blw_run(pa, pb, 1 | 2, -1); // BL_KEEP_ATTN | NORMS
  M._free(pa);
  if (pb) M._free(pb);
  assert.ok(T > 0, wasmError(M));
  const pj = M._blw_analyze_json(2);
  assert.ok(pj, wasmError(M));
  const out = [['features', new TextEncoder().encode(M.UTF8ToString(pj))]];
  for (const norm of [0, 1]) {
    for (let l = 0; l < L; l++) out.push([`rollout${norm ? ' norm' : ''} ${l}`, new Uint8Array(M.HEAPU8.buffer, M._blw_rollout(norm, l), T * T * 4).slice()]);
  }
  return { T, out };
}

test('wasm: analyses (features, both rollouts) on 1, 2 and 3 threads equal the single-threaded build bit for bit', { skip: WASM_ONLY }, async () => {
  const st = await createModule(ST);
  const mt = await createModule(MT, { pthreadPoolSize: 2 });
  for (const bundle of [BUNDLES[0], BUNDLES[1]]) {
    loadBundle(st, bundle);
    loadBundle(mt, bundle);
    for (const text of ANALYZE_TEXTS) {
      const want = wasmAnalyze(st, text);
      for (const n of [1, 2, 3]) {
        assert.equal(mt._blw_set_threads(n), n, wasmError(mt));
        const got = wasmAnalyze(mt, text);
        sameBytes(got.out, want.out, `${path.basename(bundle)} T=${want.T} ${n} threads`);
      }
    }
  }
});

test('wasm: a thread count the pool cannot hold is refused and the state keeps running', { skip: WASM_ONLY }, async () => {
  const mt = await createModule(MT, { pthreadPoolSize: 1 });
  loadBundle(mt, BUNDLES[1]);
  const input = ids(20);
  assert.equal(mt._blw_set_threads(2), 2);
  const want = wasmRun(mt, input, false);
  assert.equal(mt._blw_set_threads(3), -1, 'only one Worker: 3 threads cannot start');
  assert.match(wasmError(mt), /could not start thread/);
  assert.equal(mt._blw_threads(), 2, 'the previous threads are restored');
  sameBytes(wasmRun(mt, input, false), want, 'after a refused thread count');
});

// ---------------------------------------------------------------- native

test('native: build/bertlens --threads 1, 2, 3 print the same numbers', { skip: NATIVE_ONLY }, () => {
  if (!fs.existsSync(BIN)) throw new Error(`${path.relative(ROOT, BIN)} is missing: run make native`);
  const run = (args) => {
    const r = spawnSync(BIN, args, { maxBuffer: 1 << 30, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    return r.stdout;
  };
  for (const bundle of BUNDLES) {
    for (const T of bundle.includes('.q8.') ? [13, 130] : [7]) {
      for (const masked of T === 13 ? [false, true] : [false]) { // (7 tokens: fewer row groups than threads)
        const { ids: tok, types } = ids(T);
        const args = ['test-attend', '--norms', '--qk', '--hidden', '--ids', tok.join(','), '--types', types.join(','),
          ...(masked ? ['--ablate', MASK.map(([l, h]) => `${l}:${h}`).join(',')] : []), bundle];
        const one = run(['--threads', '1', ...args]);
        assert.match(one, /"attentions"/);
        for (const n of ['2', '3']) {
          assert.ok(run(['--threads', n, ...args]) === one, `${path.basename(bundle)} T=${T}${masked ? ' masked' : ''}: --threads ${n} differs from --threads 1`);
        }
      }
    }
  }
  // bertlens analyze (features and both rollouts on the state's pool)
  for (const [a, b] of ANALYZE_TEXTS.slice(1)) {
    const args = ['analyze', BUNDLES[1], a, ...(b ? [b] : [])];
    const one = run(['--threads', '1', ...args]);
    assert.match(one, /"rollout"/);
    for (const n of ['2', '3']) assert.ok(run(['--threads', n, ...args]) === one, `analyze: --threads ${n} differs from --threads 1`);
  }
  // bad values: a message, exit 1
  for (const bad of ['x', '-1', '65', '']) {
    const r = spawnSync(BIN, ['--threads', bad, 'info', BUNDLES[0]], { encoding: 'utf8' });
    assert.equal(r.status, 1, `--threads ${bad}`);
    assert.match(r.stderr, /--threads takes a number of threads/);
  }
});
