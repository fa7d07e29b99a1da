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
