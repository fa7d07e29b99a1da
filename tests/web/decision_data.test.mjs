// decision_data.test.mjs — the Decision view's pure parts
// (web/js/views/decision_data.js, its descriptor in decision.js): its URL
// parameters, the record it draws from the worker's answer, the export, and
// the snapshot that carries the record (lib/snapshot.js view_data) so an
// embed draws Hugging Face's probabilities and torch's attributions
// (tests/fixtures/heads/refs.json, tests/fixtures/explain/refs-heads.json)
// with no model; a snapshot's record is anyone's JSON and is checked field
// by field.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { encodeSnapshot, decodeSnapshot, snapshotFromRun, packSnapshot, runFromSnapshot, snapshotCovers } from '../../web/js/lib/snapshot.js';
import { withMeta } from './snapshot_meta.mjs';
import { toCSV, toJSON } from '../../web/js/lib/export_data.js';
import { mergeNeeds, makeDecisionRequest, makeDecisionHeadsRequest, checkDecision } from '../../web/js/lib/protocol.js';
import { viewById } from '../../web/js/views/index.js';
import { parseState, stateFromSnapshot, DEFAULTS } from '../../web/js/page/state.js';
import { decisionRecord, checkRecord, shownDecision, scaleOf, scoreMax, PARAMS, NO_HEAD_LINE } from '../../web/js/views/decision_data.js';

const REFS = JSON.parse(readFileSync(new URL('../fixtures/heads/refs.json', import.meta.url)));
const XREFS = JSON.parse(readFileSync(new URL('../fixtures/explain/refs-heads.json', import.meta.url)));
const X = XREFS.cases.find((c) => c.family === 'bert' && c.name === 'seq');
const CK = REFS.checkpoints.find((c) => c.family === 'bert' && c.name === 'seq');
const C = CK.cases.find((c) => JSON.stringify(c.texts) === JSON.stringify(X.texts));
const T = X.ids.length;
const L = 2, H = 2;
const v = viewById('decision');
const tokens = X.ids.map((id) => `t${id}`);

// the worker's answer (engine/worker_decision.js) with HF's and torch's numbers
const answer = {
  runId: 1, kind: 'sequence-classification', hasMlm: false, ms: 1,
  head: { head: 'sequence-classification', problem_type: 'single_label_classification', labels: CK.labels, tokens, ids: X.ids, logits: C.logits[0], probs: C.probs[0], label: X.label },
  words: null, lens: null, explainError: null,
  explain: { ids: X.ids, tokens, position: X.position, target: X.target, label: X.label, method: 'grad-input', steps: 32, scores: X.grad_input, logit: X.logit, delta: X.delta, sum: X.grad_input.reduce((a, b) => a + b, 0), prob: C.probs[0][X.target] },
};
const state = { ...DEFAULTS, view: 'decision', text: X.texts[0], text_b: '', model: 'tiny-seq' };
const key = 'grad-input/32/-1/-1';
const run = {
  tokens, typeIds: tokens.map(() => 0), wordIds: tokens.map((_, i) => (i === 0 || i === T - 1 ? -1 : i - 1)), offsets: null,
  T, L, H, d: 16, truncated: false, runId: 1,
  attn: [new Float32Array(H * T * T), new Float32Array(H * T * T)], norms: null, q: null, k: null,
  decision: { ...answer, key },
};

test('parameters: method, steps, target, at parse and round-trip through the URL', () => {
  const s = parseState('view=decision&method=ig&steps=8&target=2&at=3').state;
  assert.deepEqual([s.method, s.steps, s.target, s.at], ['ig', 8, 2, 3]);
  const bad = parseState('view=decision&method=lime&steps=0&target=x');
  assert.deepEqual([bad.state.method, bad.state.steps, bad.state.target], ['grad-input', 32, -1]);
  assert.equal(bad.notices.length, 3);
  assert.deepEqual(PARAMS.map((p) => p.key), ['method', 'steps', 'target', 'at']);
  // what the view asks of the worker, passed through mergeNeeds (a comparison merges needs)
  const n = mergeNeeds(v.needs(s), { embed: true });
  assert.deepEqual(n.decision, { method: 'ig', steps: 8, target: 2, position: 3 });
  assert.throws(() => makeDecisionRequest(1, { a: 'x', method: 'shap' }), /method/);
  assert.throws(() => makeDecisionRequest(1, { a: 'x', steps: 1000 }), /steps/);
  assert.throws(() => makeDecisionHeadsRequest(1, { a: 'x', kind: 'none', position: 0, target: 0, layer: 0 }), /kind/);
  assert.throws(() => checkDecision({ runId: 1, kind: 'sequence-classification', head: null, explain: null }), /malformed/);
});

test('the record and the export hold HF\'s probabilities and torch\'s attributions', () => {
  const D = decisionRecord(answer, state);
  assert.deepEqual(D.seq.probs, C.probs[0]);
  assert.equal(CK.labels[D.seq.pred], X.label);
  assert.deepEqual(D.attr.scores, X.grad_input);
  const shown = v.shown(run, state);
  const csv = toCSV(shown);
  assert.match(csv, /^sequence classification: label probabilities,probability\r\nnegative,/);
  const j = JSON.parse(toJSON(shown, { id: 'tiny-seq' }));
  assert.deepEqual(j.blocks[0].values.map((r) => r[0]), C.probs[0].map((p) => Number(p.toPrecision(6))));
  const at = j.blocks.find((b) => b.name.startsWith('attribution'));
  assert.equal(at.target, X.target);
  at.values.forEach((r, t) => assert.ok(Math.abs(r[0] - X.grad_input[t]) <= 1e-5 * Math.abs(X.grad_input[t]) + 1e-12, 'six significant digits'));
  const none = { ...run, decision: { runId: 1, kind: 'none', hasMlm: false, head: null, explain: null, key } };
  assert.throws(() => v.shown(none, state), /no task head/);
  assert.equal(v.prepare(none, state).D.kind, 'none');
  assert.match(NO_HEAD_LINE, /ForSequenceClassification/);
});

test('the diverging scale is centred on 0', () => {
  assert.equal(scaleOf(0, 2), 0.5);
  assert.equal(scaleOf(2, 2), 1);
  assert.equal(scaleOf(-2, 2), 0);
  assert.equal(scaleOf(5, 0), 0.5);
  assert.equal(scoreMax([-3, 1]), 3);
});

test('snapshot round trip: the record (and a computed head grid) travel; an embed draws them with no model', async () => {
  const heads = [[0.25, -0.01], [0.002, 0.5]];
  const withGrid = { ...run, decision: { ...run.decision, heads } };
  const s = { ...state, method: 'grad-input' };
  const snap = await decodeSnapshot(await encodeSnapshot(snapshotFromRun(withGrid, s, { id: 'tiny-seq' }, v.snapshot)));
  assert.equal(snap.attn.length, 0, 'no attention is stored');
  assert.deepEqual(stateFromSnapshot(snap.state, snap).problems, []);
  assert.equal(snap.state.method, 'grad-input', 'the view\'s parameters travel in the state');
  assert.deepEqual(snapshotCovers(snap, s, v.snapshot), { ok: true });
  assert.equal(snapshotCovers(snap, { ...s, method: 'ig' }, v.snapshot).ok, false, 'another method needs the model');
  assert.equal(snapshotCovers(snap, { ...s, text: 'Other.' }, v.snapshot).ok, false);
  const r = runFromSnapshot(snap);
  const data = v.prepare(r, s);
  assert.equal(data.snapshot, true);
  assert.deepEqual(data.D.seq.probs, C.probs[0], 'HF\'s probabilities, exactly');
  assert.deepEqual(data.D.attr.scores, X.grad_input, 'torch\'s attributions, exactly');
  assert.deepEqual(data.D.heads, heads);
  const j = JSON.parse(toJSON(v.shown(r, s)));
  assert.ok(j.blocks.some((b) => b.name.startsWith('head effects')), 'the export of the embed has the grid');
});

test('a head grid cancelled part-way travels with its first layers; the export holds only those, and says so', async () => {
  const heads = [[0.25, -0.01], null];
  const s = { ...state, method: 'grad-input' };
  const snap = await decodeSnapshot(await encodeSnapshot(snapshotFromRun({ ...run, decision: { ...run.decision, heads } }, s, { id: 'tiny-seq' }, v.snapshot)));
  assert.deepEqual(snapshotCovers(snap, s, v.snapshot), { ok: true });
  const r = runFromSnapshot(snap);
  assert.deepEqual(v.prepare(r, s).D.heads, heads);
  const b = JSON.parse(toJSON(v.shown(r, s))).blocks.find((x) => x.name.startsWith('head effects'));
  assert.deepEqual(b.rows, ['layer 0']);
  assert.deepEqual(b.values, [[0.25, -0.01]]);
  assert.equal(b.layers_computed, 1);
  assert.equal(b.layers, 2);
});

test('a snapshot\'s record is checked field by field: a wrong one needs the model, its strings stay text', async () => {
  const packed = packSnapshot(snapshotFromRun(run, state, {}, v.snapshot));
  const cases = [
    [(d) => { d.kind = 'sentiment'; }, /kind/],
    [(d) => { d.seq.probs = [0.5, 2, 0.1]; }, /seq\.probs\[1\]/],
    [(d) => { d.attr.scores = d.attr.scores.slice(1); }, /attr\.scores/],
    [(d) => { d.labels = ['a'.repeat(500), 'b', 'c']; }, /labels\[0\]/],
    [(d) => { d.heads = [[1, 2]]; }, /heads/],
    [(d) => { d.heads = [null, [1, 2]]; }, /heads/],
    [(d) => { d.heads = [null, null]; }, /heads/],
    [(d) => { d.at = 99; }, /\bat\b/],
  ];
  for (const [edit, why] of cases) {
    const text = await withMeta(packed, (m) => { edit(m.view_data); return m; });
    const snap = await decodeSnapshot(text);
    const c = snapshotCovers(snap, state, v.snapshot);
    assert.equal(c.ok, false);
    assert.match(c.why, why);
  }
  const html = await withMeta(packed, (m) => { m.view_data.labels[0] = '<img src=x onerror=alert(1)>'; return m; });
  const D = checkRecord((await decodeSnapshot(html)).viewData, { T, L, H });
  assert.equal(D.labels[0], '<img src=x onerror=alert(1)>', 'kept as text (the view sets it with .text())');
  await assert.rejects(decodeSnapshot(await withMeta(packed, (m) => { m.view_data = [1, 2]; return m; })), /view data is not an object/);
});
