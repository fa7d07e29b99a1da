// worker.test.mjs — web/js/worker.js speaking web/js/lib/protocol.js with the
// real wasm build, in Node (no browser): the page's request object goes in,
// the result shape is checked, and the analysis and rollouts it returns are
// compared with the numpy references of tests/fixtures/analyze/ (f32 bundle,
// Hugging Face attention). Needs build/wasm/bertlens.js (make wasm) and
// build/models/all-minilm-l6-v2.f32.blb (make test-models), as in `make test`.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { loadFactory, ROOT, DEFAULT_WASM_JS, startWorker, wasmBinaryOf } from '../../tools/wasm_node.mjs';
import { WORKER_PROTOCOL, ANALYSIS, KEEP, makeRunRequest, checkResult } from '../../web/js/lib/protocol.js';

const FIX = path.join(ROOT, 'tests/fixtures/analyze');
const index = JSON.parse(fs.readFileSync(path.join(FIX, 'index.json'), 'utf8'));
const bin = fs.readFileSync(path.join(FIX, 'analyze.bin'));
const BUNDLE = path.join(ROOT, index.bundle);
const FEATURES = ['entropy', 'cls', 'sep', 'punct', 'prev', 'self', 'next', 'segment', 'confidence'];

for (const f of [DEFAULT_WASM_JS, BUNDLE]) {
  if (!fs.existsSync(f)) throw new Error(`${path.relative(ROOT, f)} is missing: run make wasm test-models first`);
}

function refArray(c, name) {
  const e = c.arrays[name];
  const n = e.shape.reduce((a, b) => a * b, 1);
  return new Float32Array(bin.buffer.slice(bin.byteOffset + e.offset, bin.byteOffset + e.offset + n * 4));
}

test('a worker refuses a page speaking another protocol version', async () => {
  const send = startWorker();
  const r = await send('init', { glueUrl: null, wasmUrl: 'x.wasm', wasmBinary: wasmBinaryOf(), protocol: { ...WORKER_PROTOCOL, version: 999 } });
  assert.equal(r.ok, false);
  assert.match(r.error, /disagree on the protocol/);
});

test('run requests through worker.js: result shape, flags, analysis and rollouts as numpy', async () => {
  const send = startWorker();
  const init = await send('init', { glueUrl: null, wasmUrl: 'x.wasm', wasmBinary: wasmBinaryOf(), protocol: WORKER_PROTOCOL });
  assert.equal(init.ok, true, init.error);
  const bytes = fs.readFileSync(BUNDLE);
  const load = await send('load', { bytes: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) });
  assert.equal(load.ok, true, load.error);
  assert.ok(load.result.info.config.n_layers > 0);

  // Plain run: attention only.
  const c = index.cases.find((x) => x.name === 'pair');
  const plain = await send('run', { request: makeRunRequest({ a: c.text, b: c.text_pair }) });
  assert.equal(plain.ok, true, plain.error);
  checkResult(plain.result);
  assert.deepEqual(plain.result.tokens, c.tokens);
  assert.equal(plain.result.norms, null);
  assert.equal(plain.result.analysis, null);
  assert.equal(plain.result.flags, KEEP.ATTN);

  // Norms, q/k (every layer's), analysis with both rollouts.
  const req = makeRunRequest({ a: c.text, b: c.text_pair, needs: { norms: true, qk: true, analysis: ANALYSIS.ROLLOUT } });
  const full = await send('run', { request: req });
  assert.equal(full.ok, true, full.error);
  const r = checkResult(full.result);
  assert.equal(r.flags & KEEP.QK_ALL, KEEP.QK_ALL);
  assert.equal(r.q.length, r.L);
  assert.ok(r.q.every((x) => x) && r.k.every((x) => x), 'q/k of every layer');
  assert.equal(r.analysis.pair, true);
  let worst = 0;
  r.analysis.heads.forEach((h, k) => {
    const ref = c.heads[k];
    assert.equal(h.class, ref.class, `L${ref.layer}H${ref.head} class`);
    for (const f of FEATURES) {
      if (ref[f] === null) { assert.equal(h[f], null); continue; }
      worst = Math.max(worst, Math.abs(h[f] - ref[f]));
    }
  });
  assert.ok(worst <= 1e-5, `features within 1e-5 of numpy (worst ${worst})`);
  console.log(`# worker.js features: worst |difference| from numpy ${worst.toExponential(2)}`);
  const T = c.T;
  for (const [name, got] of [['rollout', r.rollout], ['rollout_norm', r.rolloutNorm]]) {
    const ref = refArray(c, name);
    let w = 0;
    got.forEach((m, l) => { for (let i = 0; i < T * T; i++) w = Math.max(w, Math.abs(m[i] - ref[l * T * T + i])); });
    assert.equal(got.length, r.L, `${name}: one matrix per layer`);
    assert.ok(w <= 1e-5, `${name} within 1e-5 of numpy (worst ${w})`);
    console.log(`# worker.js ${name}: worst |difference| from numpy ${w.toExponential(2)}`);
  }
  // Heads only: no rollout copied out; without norms no norm-based rollout.
  const heads = await send('run', { request: makeRunRequest({ a: c.text, needs: { analysis: ANALYSIS.HEADS } }) });
  assert.equal(heads.ok, true, heads.error);
  assert.equal(heads.result.rollout, null);
  assert.equal(heads.result.analysis.pair, false);
  const noNorm = await send('run', { request: makeRunRequest({ a: c.text, needs: { analysis: ANALYSIS.ROLLOUT } }) });
  assert.equal(noNorm.result.rolloutNorm, null);
  assert.equal(noNorm.result.rollout.length, r.L);
});

// q/k of every layer from one run (KEEP.QK_ALL, what the neuron view asks
// for, so a layer switch needs no new run): bit for bit the one-layer runs
// (KEEP.QK, one run per layer), and within TOL_QK_REL of Hugging Face's
// (tests/fixtures/encoder, f32 bundle).
const ENC = path.join(ROOT, 'tests/fixtures/encoder');
const TOL_QK_REL = 1e-5; // max |d| / max |ref|, as tests/encoder.test.mjs

test('q/k of every layer in one run equal the one-layer runs and Hugging Face\'s', async () => {
  const encIndex = JSON.parse(fs.readFileSync(path.join(ENC, 'index.json'), 'utf8'));
  const c = encIndex.cases.find((x) => x.model === 'minilm' && x.name === 'pair');
  const encBin = fs.readFileSync(path.join(ENC, c.bin));
  const ref = (name) => {
    const e = c.arrays[name];
    return new Float32Array(encBin.buffer.slice(encBin.byteOffset + e.offset, encBin.byteOffset + e.offset + e.shape.reduce((a, b) => a * b, 1) * 4));
  };
  const send = startWorker();
  assert.equal((await send('init', { glueUrl: null, wasmUrl: 'x.wasm', wasmBinary: wasmBinaryOf(), protocol: WORKER_PROTOCOL })).ok, true);
  const bytes = fs.readFileSync(BUNDLE);
  assert.equal((await send('load', { bytes: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) })).ok, true);
  const all = await send('run', { request: makeRunRequest({ a: c.text, b: c.text_pair, needs: { qk: true } }) });
  assert.equal(all.ok, true, all.error);
  const r = checkResult(all.result);
  assert.equal(r.T, c.T);
  const per = r.H * r.T * r.d;
  const hf = { q: ref('queries'), k: ref('keys') };
  let worst = 0;
  for (let l = 0; l < r.L; l++) {
    const one = await send('run', { request: { a: c.text, b: c.text_pair, flags: KEEP.ATTN | KEEP.QK, qkLayer: l, analysis: ANALYSIS.NONE } });
    assert.equal(one.ok, true, one.error);
    const o = checkResult(one.result);
    assert.ok(o.q.every((x, i) => (i === l) === (x !== null)), `a one-layer run keeps layer ${l} only`);
    for (const key of ['q', 'k']) {
      assert.deepEqual(r[key][l], o[key][l], `${key} of layer ${l}: every-layer run = one-layer run`);
      const want = hf[key].subarray(l * per, (l + 1) * per);
      let d = 0; let m = 0;
      for (let i = 0; i < per; i++) { d = Math.max(d, Math.abs(r[key][l][i] - want[i])); m = Math.max(m, Math.abs(want[i])); }
      worst = Math.max(worst, d / m);
    }
  }
  assert.ok(worst <= TOL_QK_REL, `q/k within ${TOL_QK_REL} of Hugging Face (relative; worst ${worst})`);
  console.log(`# worker.js q/k of every layer: = one-layer runs; worst max|d|/max|ref| from HF ${worst.toExponential(2)}`);
});

// "Heads like this one" (heads overview): the worker computes the
// Jensen–Shannon distances in C (bl_head_compare). Checked against the
// entropy form of the same distance, JSD(p, q) = H(m) − (H(p) + H(q)) / 2
// with m = (p + q) / 2 in bits, written here from the definition, on the
// run's own attention (numpy's, on Hugging Face attention, further below).
function entropyFormDistance(a, b, T) {
  const h = (x) => (x > 0 ? -x * Math.log2(x) : 0);
  let total = 0;
  for (let i = 0; i < T; i++) {
    let hm = 0; let hp = 0; let hq = 0;
    for (let j = 0; j < T; j++) {
      const p = a[i * T + j];
      const q = b[i * T + j];
      hm += h((p + q) / 2); hp += h(p); hq += h(q);
    }
    total += Math.sqrt(Math.max(0, hm - (hp + hq) / 2));
  }
  return total / T;
}

test('like requests: the worker returns every head\'s JS distance to the chosen one, from the run or from its last run', async () => {
  const { makeLikeRequest, resultCovers } = await import('../../web/js/lib/protocol.js');
  const send = startWorker();
  assert.equal((await send('init', { glueUrl: null, wasmUrl: 'x.wasm', wasmBinary: wasmBinaryOf(), protocol: WORKER_PROTOCOL })).ok, true);
  const bytes = fs.readFileSync(BUNDLE);
  assert.equal((await send('load', { bytes: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) })).ok, true);
  const c = index.cases.find((x) => x.name === 'pair-medium');
  const needs = { analysis: ANALYSIS.HEADS, like: [2, 5] };
  const res = await send('run', { request: makeRunRequest({ a: c.text, b: c.text_pair, needs }) });
  assert.equal(res.ok, true, res.error);
  const r = checkResult(res.result);
  assert.deepEqual(r.like.of, [2, 5]);
  assert.ok(resultCovers(r, needs, 0));
  assert.ok(!resultCovers(r, { ...needs, like: [0, 1] }, 0), 'distances to another head are not covered');
  const n = r.T * r.T;
  const check = (like, [layer, head]) => {
    const ref = r.attn[layer].subarray(head * n, (head + 1) * n);
    let worst = 0;
    for (let l = 0; l < r.L; l++) {
      for (let h = 0; h < r.H; h++) {
        const k = l * r.H + h;
        const want = l === layer && h === head ? 0 : entropyFormDistance(ref, r.attn[l].subarray(h * n, (h + 1) * n), r.T);
        worst = Math.max(worst, Math.abs(like.dist[k] - want));
      }
    }
    assert.ok(worst < 1e-6, `entropy form: worst ${worst}`);
    assert.equal(like.dist[layer * r.H + head], 0);
    assert.ok(Math.min(...like.dist.filter((_, k) => k !== layer * r.H + head)) > 0.01, 'other heads differ');
    return worst;
  };
  const w1 = check(r.like, [2, 5]);
  // Another head, from the attention the worker still holds (no new run).
  const again = await send('like', { request: makeLikeRequest(r.runId, [4, 0]) });
  assert.equal(again.ok, true, again.error);
  assert.deepEqual(again.result.of, [4, 0]);
  const w2 = check(again.result, [4, 0]);
  console.log(`# worker.js like distances: worst |difference| from the entropy form ${Math.max(w1, w2).toExponential(2)}`);
  assert.equal((await send('like', { request: makeLikeRequest(r.runId, [6, 0]) })).ok, false, 'no layer 6');
  // After another run, the old run's distances are refused.
  const next = await send('run', { request: makeRunRequest({ a: 'Another text.' }) });
  assert.equal(next.result.runId, r.runId + 1);
  assert.equal(next.result.like, null);
  const stale = await send('like', { request: makeLikeRequest(r.runId, [0, 0]) });
  assert.equal(stale.ok, false);
  assert.match(stale.error, /stale/);
});

// A tab that needs an analysis the run did not compute (rollout, heads
// overview) asks the worker for the analysis of the run it still holds: the
// same numbers as a run that asked for it, without running the model again.
test('analyze requests: the analysis of the last run equals the one computed with a run; refused once stale', async () => {
  const { makeAnalyzeRequest, makeLikeRequest, withAnalysis, resultCovers } = await import('../../web/js/lib/protocol.js');
  const send = startWorker();
  assert.equal((await send('init', { glueUrl: null, wasmUrl: 'x.wasm', wasmBinary: wasmBinaryOf(), protocol: WORKER_PROTOCOL })).ok, true);
  const bytes = fs.readFileSync(BUNDLE);
  assert.equal((await send('load', { bytes: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) })).ok, true);
  const c = index.cases.find((x) => x.name === 'pair');
  for (const norms of [false, true]) {
    const needs = { norms, analysis: ANALYSIS.ROLLOUT };
    const full = checkResult((await send('run', { request: makeRunRequest({ a: c.text, b: c.text_pair, needs }) })).result);
    const plain = checkResult((await send('run', { request: makeRunRequest({ a: c.text, b: c.text_pair, needs: { norms } }) })).result);
    assert.equal(plain.analysis, null);
    assert.ok(!resultCovers(plain, needs, 0));
    for (const level of [ANALYSIS.HEADS, ANALYSIS.ROLLOUT]) {
      const res = await send('analyze', { request: makeAnalyzeRequest(plain.runId, level) });
      assert.equal(res.ok, true, res.error);
      const got = withAnalysis(plain, res.result);
      assert.deepEqual(got.analysis, full.analysis, 'features and classes as the run computed them');
      if (level === ANALYSIS.HEADS) {
        assert.equal(got.rollout, null);
        continue;
      }
      assert.ok(resultCovers(got, needs, 0));
      assert.deepEqual(got.rollout, full.rollout, 'rollout bit for bit');
      if (norms) assert.deepEqual(got.rolloutNorm, full.rolloutNorm, 'norm-based rollout bit for bit');
      else assert.equal(got.rolloutNorm, null, 'no norms kept: no norm-based rollout');
    }
    assert.equal((await send('analyze', { request: { runId: plain.runId, analysis: ANALYSIS.NONE } })).ok, false, 'no level 0');
    const still = await send('like', { request: makeLikeRequest(plain.runId, [0, 0]) });
    assert.equal(still.ok, true, 'the analyses ran no model: the worker still holds the run');
    await send('run', { request: makeRunRequest({ a: 'Another text.' }) });
    const stale = await send('analyze', { request: makeAnalyzeRequest(plain.runId, ANALYSIS.ROLLOUT) });
    assert.equal(stale.ok, false);
    assert.match(stale.error, /stale/);
  }
});

// The neuron view needs every layer's queries and keys; the worker keeps
// them in the state of every run, so switching to it reads them instead of
// running the model again: the same numbers as a run that asked for them.
test('q/k requests: every layer\'s queries and keys of the last run equal a run that kept them; refused once stale', async () => {
  const { makeQkRequest, withQk, resultCovers } = await import('../../web/js/lib/protocol.js');
  const send = startWorker();
  assert.equal((await send('init', { glueUrl: null, wasmUrl: 'x.wasm', wasmBinary: wasmBinaryOf(), protocol: WORKER_PROTOCOL })).ok, true);
  const bytes = fs.readFileSync(BUNDLE);
  assert.equal((await send('load', { bytes: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) })).ok, true);
  const c = index.cases.find((x) => x.name === 'pair');
  const full = checkResult((await send('run', { request: makeRunRequest({ a: c.text, b: c.text_pair, needs: { qk: true } }) })).result);
  const plain = checkResult((await send('run', { request: makeRunRequest({ a: c.text, b: c.text_pair }) })).result);
  assert.equal(plain.q, null, 'a run that did not ask gets no q/k');
  for (let l = 0; l < plain.L; l++) assert.ok(!resultCovers(plain, { qk: true }, l));
  const res = await send('qk', { request: makeQkRequest(plain.runId) });
  assert.equal(res.ok, true, res.error);
  const got = withQk(plain, res.result);
  assert.equal(got.q.length, full.L);
  for (let l = 0; l < full.L; l++) {
    assert.ok(resultCovers(got, { qk: true }, l));
    assert.deepEqual(got.q[l], full.q[l], `queries of layer ${l} bit for bit`);
    assert.deepEqual(got.k[l], full.k[l], `keys of layer ${l} bit for bit`);
  }
  assert.deepEqual(got.attn, full.attn, 'keeping q/k in the state changes no attention');
  await send('run', { request: makeRunRequest({ a: 'Another text.' }) });
  const stale = await send('qk', { request: makeQkRequest(plain.runId) });
  assert.equal(stale.ok, false);
  assert.match(stale.error, /stale/);
});

// The neuron view's scores: one head's, read from the run the worker holds
// (its q/k) — the numbers `bertlens attend --scores` prints for that head,
// and their softmax the run's own attention row; refused once stale.
test('scores requests: one head\'s scores and terms of the held run, as attend --scores; refused once stale', async () => {
  const { makeScoresRequest, withScores, resultCovers } = await import('../../web/js/lib/protocol.js');
  const { spawnSync } = await import('node:child_process');
  const send = startWorker();
  assert.equal((await send('init', { glueUrl: null, wasmUrl: 'x.wasm', wasmBinary: wasmBinaryOf(), protocol: WORKER_PROTOCOL })).ok, true);
  const bytes = fs.readFileSync(BUNDLE);
  assert.equal((await send('load', { bytes: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) })).ok, true);
  const c = index.cases.find((x) => x.name === 'pair');
  const run = checkResult((await send('run', { request: makeRunRequest({ a: c.text, b: c.text_pair }) })).result);
  const [layer, head] = [3, 5];
  const res = await send('scores', { request: makeScoresRequest(run.runId, [layer, head]) });
  assert.equal(res.ok, true, res.error);
  const got = withScores(run, res.result);
  assert.ok(resultCovers(got, { scores: [layer, head] }, layer));
  const { T } = run;
  assert.deepEqual(got.scores.terms.map((t) => t.name), ['q·k/√d']);
  assert.equal(got.scores.window, -1);
  // softmax of every row is the run's attention row
  const att = run.attn[layer].subarray(head * T * T, (head + 1) * T * T);
  let worst = 0;
  for (let i = 0; i < T; i++) {
    const row = got.scores.scores.subarray(i * T, (i + 1) * T);
    const m = Math.max(...row);
    const e = Array.from(row, (x) => Math.exp(x - m));
    const sum = e.reduce((a, b) => a + b, 0);
    e.forEach((x, j) => { worst = Math.max(worst, Math.abs(x / sum - att[i * T + j])); });
  }
  assert.ok(worst <= 1e-6, `softmax(scores) vs attention ${worst}`);
  // the CLI's numbers for the same head (native build)
  const cli = spawnSync(path.join(ROOT, 'build/bertlens'), ['attend', '--scores', '--layer', String(layer), BUNDLE, c.text, c.text_pair], { encoding: 'utf8', maxBuffer: 1 << 26 });
  assert.equal(cli.status, 0, cli.stderr);
  const j = JSON.parse(cli.stdout);
  const cliScores = j.scores[0][head].flat();
  const cliTerm = j.score_terms[0].values[0][head].flat();
  for (let i = 0; i < T * T; i++) {
    assert.ok(Math.abs(got.scores.scores[i] - cliScores[i]) <= 1e-5 * Math.max(1, Math.abs(cliScores[i])), `score ${i}: ${got.scores.scores[i]} vs ${cliScores[i]}`);
    assert.ok(Math.abs(got.scores.terms[0].values[i] - cliTerm[i]) <= 1e-5 * Math.max(1, Math.abs(cliTerm[i])), `term ${i}`);
  }
  await send('run', { request: makeRunRequest({ a: 'Another text.' }) });
  const stale = await send('scores', { request: makeScoresRequest(run.runId, [layer, head]) });
  assert.equal(stale.ok, false);
  assert.match(stale.error, /stale/);
});

// Comparing two runs (compare view, head ablation, heads overview): per-head
// Jensen–Shannon distance and max |Δ| in C (src/analysis/analyze.c bl_head_compare,
// wasm blw_head_compare), against numpy on Hugging Face attention
// (tests/fixtures/compare/, tests/fixtures/compare/make.py: unmasked vs
// masked runs of tests/fixtures/ablation/).
const CMP = JSON.parse(fs.readFileSync(path.join(ROOT, 'tests/fixtures/compare/index.json'), 'utf8'));
const ABL = path.join(ROOT, 'tests/fixtures/ablation');
const ablIndex = JSON.parse(fs.readFileSync(path.join(ABL, 'index.json'), 'utf8'));
const ablBin = fs.readFileSync(path.join(ABL, 'ablation.bin'));
const hfAttn = (e) => new Float32Array(ablBin.buffer.slice(ablBin.byteOffset + e.offset, ablBin.byteOffset + e.offset + e.shape.reduce((a, b) => a * b, 1) * 4));
const TOL_JS_SAME_INPUT = 1e-6; // the same float32 matrices: only the float32 result rounds
const TOL_JS_F32_RUN = 1e-5; // our f32 bundle's attention against HF's (max |Δ| 2.5e-6); measured 5.7e-7

test('blw_head_compare on Hugging Face attention equals numpy (JS distance, max |Δ|)', async () => {
  const { createModule } = await import('../../tools/wasm_node.mjs');
  const M = await createModule(DEFAULT_WASM_JS, { print: () => {}, printErr: () => {} });
  let worst = 0;
  for (const c of CMP.cases) {
    const A = hfAttn(c.a.attn);
    const [Lall, H, T] = c.a.attn.shape;
    const TT = T * T;
    const put = (x) => { const p = M._malloc(x.length * 4); M.HEAPF32.set(x, p >> 2); return p; };
    let pa; let pb; let n; let stride;
    if (c.like) {
      pa = put(A.subarray((c.like[0] * H + c.like[1]) * TT, (c.like[0] * H + c.like[1] + 1) * TT));
      pb = put(A); n = Lall * H; stride = 0;
    } else {
      pa = put(A.subarray(c.first_layer * H * TT)); pb = put(hfAttn(c.b.attn)); n = (Lall - c.first_layer) * H; stride = TT;
    }
    const po = M._malloc(n * 8);
    assert.equal(M._blw_head_compare(pa, stride, pb, n, T, po), 0);
    const out = new Float32Array(M.HEAPF32.buffer, po, 2 * n);
    const js = c.js.flat();
    const mx = c.max_abs.flat();
    for (let k = 0; k < n; k++) {
      worst = Math.max(worst, Math.abs(out[2 * k] - js[k]), Math.abs(out[2 * k + 1] - mx[k]));
    }
    if (!c.like) { // a masked head (all zeros) against its own map: sqrt(1/2)
      const [l, h] = c.mask.flatMap((row, li) => row.map((v, hi) => [li, hi, v])).find(([, , v]) => v);
      if (l >= c.first_layer) assert.ok(Math.abs(out[2 * ((l - c.first_layer) * H + h)] - Math.SQRT1_2) < 1e-6, `${c.mask_name}: masked head`);
    }
    M._free(pa); M._free(pb); M._free(po);
  }
  assert.ok(worst <= TOL_JS_SAME_INPUT, `worst ${worst}`);
  console.log(`# blw_head_compare vs numpy on HF attention (${CMP.cases.length} cases): worst |difference| ${worst.toExponential(2)}`);
  assert.equal(M._blw_head_compare(0, 0, 0, 1, 4, 0), -1, 'refuses NULL');
});

test('worker.js: masked runs, embeddings of each text alone, and the compare message against Hugging Face / numpy', async () => {
  const send = startWorker();
  assert.equal((await send('init', { glueUrl: null, wasmUrl: 'x.wasm', wasmBinary: wasmBinaryOf(), protocol: WORKER_PROTOCOL })).ok, true);
  const bytes = fs.readFileSync(BUNDLE);
  assert.equal((await send('load', { bytes: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) })).ok, true);
  const { makeCompareRequest } = await import('../../web/js/lib/protocol.js');
  const { cosine } = await import('../../web/js/lib/compare.js');
  let worstJs = 0; let worstMax = 0; let minCos = 1;
  for (const c of CMP.cases.filter((x) => !x.like)) {
    const abl = ablIndex.cases.find((x) => x.mask_name === c.mask_name && JSON.stringify(x.input) === JSON.stringify(c.input));
    const base = ablIndex.cases.find((x) => x.mask_name === 'none' && JSON.stringify(x.input) === JSON.stringify(c.input));
    const mask = c.mask.flatMap((row, l) => row.flatMap((v, h) => (v ? [[l, h]] : [])));
    const run = async (m) => {
      const r = await send('run', { request: makeRunRequest({ a: c.input.text, b: c.input.text_pair || null, needs: { embed: true }, mask: m }) });
      assert.equal(r.ok, true, r.error);
      return checkResult(r.result);
    };
    const A = await run(null);
    const B = await run(mask);
    assert.deepEqual(B.mask, mask);
    assert.equal(B.embeddings.length, c.input.text_pair ? 2 : 1);
    // Embeddings of each text alone, masked, against HF's.
    B.embeddings.forEach((e, k) => { minCos = Math.min(minCos, cosine(e, hfAttn(abl.embeddings[k].embedding))); });
    A.embeddings.forEach((e, k) => { minCos = Math.min(minCos, cosine(e, hfAttn(base.embeddings[k].embedding))); });
    // Masked heads are all zeros.
    for (const [l, h] of mask) assert.ok(B.attn[l].subarray(h * B.T * B.T, (h + 1) * B.T * B.T).every((v) => v === 0));
    const res = await send('compare', { request: makeCompareRequest(A.attn, B.attn, A.H, A.T) });
    assert.equal(res.ok, true, res.error);
    const js = c.js.flat();
    const mx = c.max_abs.flat();
    for (let k = 0; k < js.length; k++) {
      const g = c.first_layer * A.H + k;
      worstJs = Math.max(worstJs, Math.abs(res.result.js[g] - js[k]));
      worstMax = Math.max(worstMax, Math.abs(res.result.maxAbs[g] - mx[k]));
    }
    // Layers before the first masked one are untouched.
    for (let g = 0; g < c.first_layer * A.H; g++) assert.ok(res.result.js[g] < 1e-3 && res.result.maxAbs[g] < 1e-5, `head ${g} before the mask`);
  }
  console.log(`# worker.js compare vs numpy on HF (f32 bundle): JS distance worst |difference| ${worstJs.toExponential(2)}, max |Δ| ${worstMax.toExponential(2)}; embeddings cosine >= ${minCos.toFixed(7)}`);
  assert.ok(worstJs <= TOL_JS_F32_RUN, `JS distance worst ${worstJs}`);
  assert.ok(worstMax <= 1e-5, `max |Δ| worst ${worstMax}`);
  assert.ok(minCos >= 0.999999, `embedding cosine ${minCos}`);
  // Refusals: a head outside the model; runs of another shape.
  const bad = await send('run', { request: makeRunRequest({ a: 'x', mask: [[6, 0]] }) });
  assert.equal(bad.ok, false);
  assert.match(bad.error, /no layer 6, head 0/);
  const shape = await send('compare', { request: { a: [new Float32Array(4)], b: [new Float32Array(9)], H: 1, K: 2 } });
  assert.equal(shape.ok, false);
  assert.match(shape.error, /differ in shape/);
});

test('worker.js picks the pthreads build only when cross-origin isolated, one thread per core', async () => {
  const MT_JS = path.join(ROOT, 'build/wasm/bertlens-mt.js');
  if (!fs.existsSync(MT_JS)) throw new Error('build/wasm/bertlens-mt.js is missing: run make wasm');
  const mtFactory = loadFactory(MT_JS);
  // its Workers must not keep this test process alive (tools/wasm_node.mjs)
  const factory = async (opts) => {
    const M = await mtFactory(opts);
    for (const w of M.PThread.unusedWorkers) w.unref();
    return M;
  };
  // the pthread Workers load the glue and worker files from these paths
  const mt = { glue: MT_JS, wasm: MT_JS.replace(/\.js$/, '.wasm'), worker: MT_JS.replace(/\.js$/, '.worker.js') };
  const mtBinary = wasmBinaryOf(MT_JS);
  // isolated, 2 cores: the mt build on 2 threads (its glue fetches nothing here: wasmBinary)
  const iso = startWorker({ factory: (o) => factory({ ...o, wasmBinary: mtBinary }), scope: { crossOriginIsolated: true, navigator: { hardwareConcurrency: 2 } } });
  const a = await iso('init', { glueUrl: null, wasmUrl: 'x.wasm', wasmBinary: null, protocol: WORKER_PROTOCOL, mt });
  assert.equal(a.ok, true, a.error);
  assert.deepEqual({ threads: a.result.threads, threaded: a.result.threaded }, { threads: 2, threaded: true });
  const bytes = fs.readFileSync(BUNDLE);
  assert.equal((await iso('load', { bytes: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) })).ok, true);
  const c = index.cases.find((x) => x.name === 'pair');
  const r = await iso('run', { request: makeRunRequest({ a: c.text, b: c.text_pair }) });
  assert.equal(r.ok, true, r.error);
  assert.deepEqual(checkResult(r.result).tokens, c.tokens);
  // not isolated (an embed in another site, a host without COOP/COEP): one thread, whatever mt says
  const plain = startWorker({ scope: { crossOriginIsolated: false, navigator: { hardwareConcurrency: 2 } } });
  const b = await plain('init', { glueUrl: null, wasmUrl: 'x.wasm', wasmBinary: wasmBinaryOf(), protocol: WORKER_PROTOCOL, mt });
  assert.equal(b.ok, true, b.error);
  assert.deepEqual({ threads: b.result.threads, threaded: b.result.threaded }, { threads: 1, threaded: false });
});
