// worker.test.mjs — web/js/worker.js speaking web/js/protocol.js with the
// real wasm build, in Node (no browser): the page's request object goes in,
// the result shape is checked, and the analysis and rollouts it returns are
// compared with the numpy references of tests/fixtures/analyze/ (f32 bundle,
// Hugging Face attention). Needs build/wasm/bertlens.js (make wasm) and
// build/models/all-minilm-l6-v2.f32.blb (make test-models), as in `make test`.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { loadFactory, ROOT, DEFAULT_WASM_JS } from '../../tools/wasm_node.mjs';
import { WORKER_PROTOCOL, ANALYSIS, KEEP, makeRunRequest, checkResult } from '../../web/js/protocol.js';

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

/** worker.js in this realm: send(type, args) -> its reply. */
function startWorker() {
  const factory = loadFactory(DEFAULT_WASM_JS);
  const replies = new Map();
  const self = { postMessage: (msg) => replies.get(msg.id)(msg) };
  const src = fs.readFileSync(path.join(ROOT, 'web/js/worker.js'), 'utf8');
  new Function('self', 'importScripts', 'createBertlens', src)(self, () => { throw new Error('no importScripts here'); }, factory);
  let id = 0;
  return (type, args) => new Promise((resolve) => {
    const n = ++id;
    replies.set(n, resolve);
    self.onmessage({ data: { id: n, type, ...args } });
  });
}

const wasmBinary = () => {
  const b = fs.readFileSync(DEFAULT_WASM_JS.replace(/\.js$/, '.wasm'));
  return b.buffer.slice(b.byteOffset, b.byteOffset + b.length);
};

test('a worker refuses a page speaking another protocol version', async () => {
  const send = startWorker();
  const r = await send('init', { glueUrl: null, wasmUrl: 'x.wasm', wasmBinary: wasmBinary(), protocol: { ...WORKER_PROTOCOL, version: 999 } });
  assert.equal(r.ok, false);
  assert.match(r.error, /disagree on the protocol/);
});

test('run requests through worker.js: result shape, flags, analysis and rollouts as numpy', async () => {
  const send = startWorker();
  const init = await send('init', { glueUrl: null, wasmUrl: 'x.wasm', wasmBinary: wasmBinary(), protocol: WORKER_PROTOCOL });
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

  // Norms, q/k of layer 2, analysis with both rollouts.
  const req = makeRunRequest({ a: c.text, b: c.text_pair, needs: { norms: true, qk: true, analysis: ANALYSIS.ROLLOUT }, layer: 2 });
  const full = await send('run', { request: req });
  assert.equal(full.ok, true, full.error);
  const r = checkResult(full.result);
  assert.equal(r.qkLayer, 2);
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

// "Heads like this one" (heads overview): the worker computes the
// Jensen–Shannon distances. Checked against the entropy form of the same
// distance, JSD(p, q) = H(m) − (H(p) + H(q)) / 2 with m = (p + q) / 2 in bits,
// written here from the definition, on the run's own attention; and against
// views/overview.js distancesTo (what the page computed before).
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
  const { distancesTo } = await import('../../web/js/views/overview.js');
  const { makeLikeRequest, resultCovers } = await import('../../web/js/protocol.js');
  const send = startWorker();
  assert.equal((await send('init', { glueUrl: null, wasmUrl: 'x.wasm', wasmBinary: wasmBinary(), protocol: WORKER_PROTOCOL })).ok, true);
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
    const page = distancesTo(r.attn, r.L, r.H, r.T, layer, head);
    let worst = 0;
    for (let l = 0; l < r.L; l++) {
      for (let h = 0; h < r.H; h++) {
        const k = l * r.H + h;
        assert.equal(like.dist[k], page[k], `L${l}H${h}: as overview.js`);
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
