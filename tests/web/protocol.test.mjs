// protocol.test.mjs — web/js/lib/protocol.js against src/bertlens.h, and the
// worker's use of it.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { workerSource } from '../../tools/worker_source.mjs';
import { KEEP, ANALYSIS, PROTOCOL_VERSION, WORKER_PROTOCOL, makeRunRequest, makeAnalyzeRequest, withAnalysis, makeQkRequest, withQk, makeScoresRequest, withScores, mergeNeeds, resultCovers, checkResult } from '../../web/js/lib/protocol.js';

const root = new URL('../../', import.meta.url);
const read = (p) => fs.readFileSync(new URL(p, root), 'utf8');

test('KEEP mirrors the BL_KEEP_* enum of src/bertlens.h', () => {
  const h = read('src/bertlens.h');
  const found = {};
  for (const m of h.matchAll(/\bBL_KEEP_([A-Z_]+)\s*=\s*1\s*<<\s*(\d+)/g)) found[m[1]] = 1 << Number(m[2]);
  assert.ok(Object.keys(found).length >= 3, 'parsed the enum');
  assert.deepEqual(found, { ...KEEP });
});

test('worker.js and engine.js write no flag values of their own', () => {
  const worker = workerSource(new URL('web', root).pathname); // worker.js with its parts
  const engine = read('web/js/engine/engine.js');
  for (const src of [worker, engine]) assert.doesNotMatch(src, /KEEP_[A-Z]+\s*=\s*\d/);
  const v = worker.match(/WORKER_PROTOCOL_VERSION\s*=\s*(\d+)/);
  assert.ok(v, 'worker states its protocol version');
  assert.equal(Number(v[1]), PROTOCOL_VERSION);
  assert.deepEqual(structuredClone(WORKER_PROTOCOL), { version: PROTOCOL_VERSION, KEEP: { ...KEEP }, ANALYSIS: { ...ANALYSIS } });
});

test('makeRunRequest: one object, flags from needs', () => {
  assert.deepEqual(makeRunRequest({ a: 'hi' }), { a: 'hi', b: null, flags: KEEP.ATTN, qkLayer: -1, analysis: ANALYSIS.NONE });
  // q/k: every layer's, so a layer switch needs no new run
  const r = makeRunRequest({ a: 'x', b: 'y', needs: { norms: true, qk: true, analysis: ANALYSIS.ROLLOUT } });
  assert.equal(r.flags, KEEP.ATTN | KEEP.NORMS | KEEP.QK_ALL);
  assert.equal(r.qkLayer, -1);
  assert.equal(r.analysis, ANALYSIS.ROLLOUT);
  assert.equal(makeRunRequest({ a: 'x', b: '' }).b, null);
  assert.throws(() => makeRunRequest({ a: 5 }), /text a/);
  assert.deepEqual(mergeNeeds({ norms: true }, { analysis: ANALYSIS.HEADS }, null), { norms: true, qk: false, analysis: ANALYSIS.HEADS, like: null, embed: false, compare: null, predict: null, scores: null });
  // Head ablation and embeddings: only when asked; heads checked.
  const m = makeRunRequest({ a: 'x', needs: { embed: true }, mask: [[0, 3], [2, 5]] });
  assert.deepEqual(m.mask, [[0, 3], [2, 5]]);
  assert.equal(m.embed, true);
  assert.equal('mask' in makeRunRequest({ a: 'x', mask: [] }), false);
  assert.throws(() => makeRunRequest({ a: 'x', mask: [[0, -1]] }), /not a \[layer, head\] pair/);
  // "Heads like this one": the head the distances are to, only when asked.
  assert.deepEqual(makeRunRequest({ a: 'x', needs: { analysis: ANALYSIS.HEADS, like: [1, 2] } }).like, [1, 2]);
  assert.equal('like' in makeRunRequest({ a: 'x', needs: { like: null } }), false);
  assert.throws(() => makeRunRequest({ a: 'x', needs: { like: [1, -1] } }), /not a \[layer, head\] pair/);
});

function fakeResult(over = {}) {
  const T = 3; const L = 2; const H = 2; const d = 4;
  const per = (n) => Array.from({ length: L }, () => new Float32Array(n));
  return {
    tokens: ['[CLS]', 'a', '[SEP]'], typeIds: [0, 0, 0], wordIds: [-1, 0, -1], offsets: null, nA: 3, truncated: false,
    T, L, H, d, attn: per(H * T * T), norms: null, q: null, k: null, flags: KEEP.ATTN,
    analysis: null, rollout: null, rolloutNorm: null, like: null, mask: null, embeddings: null, runId: 1, ms: 1, ...over,
  };
}

test('checkResult accepts the shape and names what is wrong', () => {
  assert.ok(checkResult(fakeResult()));
  assert.ok(checkResult(fakeResult({ rollout: [new Float32Array(9), new Float32Array(9)], analysis: { pair: false, heads: new Array(4).fill({}) } })));
  assert.throws(() => checkResult(fakeResult({ attn: [new Float32Array(3)] })), /"attn"/);
  assert.throws(() => checkResult(fakeResult({ rollout: [new Float32Array(9)] })), /"rollout"/);
  const r = fakeResult(); delete r.analysis;
  assert.throws(() => checkResult(r), /lacks "analysis"/);
  assert.throws(() => checkResult(null), /no result/);
});

test('resultCovers: what a run kept versus what a view needs', () => {
  const r = fakeResult();
  assert.ok(resultCovers(r, {}, 0));
  assert.ok(!resultCovers(r, { norms: true }, 0));
  assert.ok(!resultCovers(r, { analysis: ANALYSIS.HEADS }, 0));
  const r2 = fakeResult({ analysis: { heads: [] }, rollout: [], rolloutNorm: null, norms: [] });
  assert.ok(resultCovers(r2, { analysis: ANALYSIS.ROLLOUT }, 0));
  assert.ok(!resultCovers(r2, { analysis: ANALYSIS.ROLLOUT, norms: true }, 0));
  // q/k: one array per layer, null where not kept (KEEP.QK: one layer)
  const one = fakeResult({ q: [null, new Float32Array(24)], k: [null, new Float32Array(24)] });
  assert.ok(checkResult(one));
  assert.ok(resultCovers(one, { qk: true }, 1));
  assert.ok(!resultCovers(one, { qk: true }, 0));
  const all = fakeResult({ q: [new Float32Array(24), new Float32Array(24)], k: [new Float32Array(24), new Float32Array(24)] });
  assert.ok(resultCovers(all, { qk: true }, 0) && resultCovers(all, { qk: true }, 1));
  assert.throws(() => checkResult(fakeResult({ q: new Float32Array(24), k: new Float32Array(24) })), /"q"/);
  assert.throws(() => checkResult(fakeResult({ q: [null, null], k: [null, null] })), /"q"/);
  assert.throws(() => checkResult(fakeResult({ q: [new Float32Array(24)], k: [new Float32Array(24)] })), /"q"/);
  const r3 = fakeResult({ analysis: { pair: false, heads: new Array(4).fill({}) }, like: { of: [1, 0], dist: new Float64Array(4) } });
  assert.ok(checkResult(r3));
  assert.ok(resultCovers(r3, { analysis: ANALYSIS.HEADS, like: [1, 0] }, 0));
  assert.ok(!resultCovers(r3, { analysis: ANALYSIS.HEADS, like: [1, 1] }, 0));
  assert.ok(!resultCovers(r2, { analysis: ANALYSIS.HEADS, like: [1, 0] }, 0));
  assert.throws(() => checkResult(fakeResult({ like: { of: [0, 0], dist: new Float64Array(3) } })), /"like"/);
  // Embeddings: one per text encoded alone; the page's comparison by key.
  const r4 = fakeResult({ embeddings: [new Float32Array(4)], mask: [[0, 1]] });
  assert.ok(checkResult(r4));
  assert.ok(resultCovers(r4, { embed: true }, 0));
  assert.ok(!resultCovers(r, { embed: true }, 0));
  assert.throws(() => checkResult(fakeResult({ embeddings: [new Float32Array(4), new Float32Array(4)] })), /"embeddings"/);
  assert.ok(!resultCovers(r4, { compare: 'k1' }, 0));
  assert.ok(resultCovers({ ...r4, compare: { key: 'k1' } }, { compare: 'k1' }, 0));
  assert.ok(!resultCovers({ ...r4, compare: { key: 'k0' } }, { compare: 'k1' }, 0));
});

test('q/k requests: every layer\'s queries and keys of the worker\'s last run, merged into that run and checked', () => {
  assert.deepEqual(makeQkRequest(3), { runId: 3 });
  assert.throws(() => makeQkRequest('3'), /runId/);
  const run = fakeResult({ runId: 4 });
  assert.ok(!resultCovers(run, { qk: true }, 0));
  const per = () => Array.from({ length: run.L }, () => new Float32Array(run.H * run.T * run.d));
  const out = { runId: 4, q: per(), k: per(), ms: 1 };
  const merged = withQk(run, out);
  assert.ok(resultCovers(merged, { qk: true }, 0) && resultCovers(merged, { qk: true }, run.L - 1));
  assert.equal(merged.attn, run.attn, 'the run\'s attention is kept, not copied');
  assert.equal(run.q, null, 'the run itself is not changed');
  assert.throws(() => withQk(run, { ...out, runId: 5 }), /not of this run/);
  assert.throws(() => withQk(run, { ...out, q: [new Float32Array(3)] }), /"q"/);
});

test('scores requests: one head\'s scores and terms of the worker\'s last run, attached to that run and checked', () => {
  assert.deepEqual(makeScoresRequest(3, [1, 0]), { runId: 3, layer: 1, head: 0 });
  assert.throws(() => makeScoresRequest('3', [1, 0]), /runId/);
  assert.throws(() => makeScoresRequest(3, [1, -1]), /not a \[layer, head\] pair/);
  assert.deepEqual(mergeNeeds({ qk: true, scores: [1, 2] }).scores, [1, 2]);
  assert.equal('scores' in makeRunRequest({ a: 'x', needs: { scores: [1, 2] } }), false, 'never asked of a run: of its held state');
  const run = fakeResult({ runId: 4 });
  assert.ok(!resultCovers(run, { scores: [1, 0] }, 1));
  const n = run.T * run.T;
  const term = (name, abbr) => ({ name, abbr, about: `the ${name}`, values: new Float32Array(n) });
  const out = { runId: 4, layer: 1, head: 0, window: -1, scores: new Float32Array(n), terms: [term('content-to-content', 'c2c'), term('content-to-position', 'c2p')], ms: 1 };
  const merged = withScores(run, out);
  assert.ok(resultCovers(merged, { scores: [1, 0] }, 1));
  assert.ok(!resultCovers(merged, { scores: [1, 1] }, 1), 'another head: asked again');
  assert.ok(!resultCovers(merged, { scores: [0, 0] }, 0), 'another layer: asked again');
  assert.equal(merged.scores.query, null, 'every query\'s row');
  assert.deepEqual(merged.scores.terms.map((t) => t.abbr), ['c2c', 'c2p']);
  assert.equal(merged.attn, run.attn, 'the run\'s attention is kept, not copied');
  assert.equal(run.scores, undefined, 'the run itself is not changed');
  assert.throws(() => withScores(run, { ...out, runId: 5 }), /not of this run/);
  assert.throws(() => withScores(run, { ...out, scores: new Float32Array(3) }), /malformed/);
  assert.throws(() => withScores(run, { ...out, terms: [] }), /malformed/);
  assert.throws(() => withScores(run, { ...out, terms: [{ ...term('x', 'x'), about: 3 }] }), /malformed/);
});

test('analyze requests: the analysis of the worker\'s last run, merged into that run and checked', () => {
  assert.deepEqual(makeAnalyzeRequest(3, ANALYSIS.ROLLOUT), { runId: 3, analysis: ANALYSIS.ROLLOUT });
  assert.throws(() => makeAnalyzeRequest(3, ANALYSIS.NONE), /no analysis level/);
  assert.throws(() => makeAnalyzeRequest('3', ANALYSIS.HEADS), /runId/);
  const run = fakeResult({ runId: 4 });
  assert.ok(!resultCovers(run, { analysis: ANALYSIS.ROLLOUT }, 0));
  const per = () => Array.from({ length: 2 }, () => new Float32Array(9));
  const out = { runId: 4, analysis: { pair: false, heads: new Array(4).fill({}) }, rollout: per(), rolloutNorm: null, ms: 1 };
  const merged = withAnalysis(run, out);
  assert.ok(resultCovers(merged, { analysis: ANALYSIS.ROLLOUT }, 0));
  assert.ok(!resultCovers(merged, { norms: true, analysis: ANALYSIS.ROLLOUT }, 0), 'no norm-based rollout without norms');
  assert.equal(merged.attn, run.attn, 'the run\'s attention is kept, not copied');
  assert.equal(run.analysis, null, 'the run itself is not changed');
  assert.throws(() => withAnalysis(run, { ...out, runId: 5 }), /not of this run/);
  assert.throws(() => withAnalysis(run, { ...out, rollout: [new Float32Array(9)] }), /"rollout"/);
});
