// Snapshots of the Predictions view (issue 22 item 5): the masked-LM words it
// shows travel in the snapshot (web/js/lib/snapshot_predict.js), so an embed
// or a standalone file draws them with no model; every field is checked on
// read (a link is anyone's JSON). The words are Hugging Face's
// (tests/fixtures/mlm/refs.json, AutoModelForMaskedLM on the tiny BERT).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  encodeSnapshot, decodeSnapshot, snapshotFromRun, packSnapshot, runFromSnapshot, snapshotCovers, snapshotPlan, SnapshotError,
} from '../../web/js/lib/snapshot.js';
import { withMeta } from './snapshot_meta.mjs';
import { resultCovers } from '../../web/js/lib/protocol.js';
import { viewById } from '../../web/js/views/index.js';
import { stateFromSnapshot } from '../../web/js/page/state.js';

const REFS = JSON.parse(readFileSync(new URL('../fixtures/mlm/refs.json', import.meta.url)));
const CASE = REFS.families.find((f) => f.family === 'bert').cases[0]; // "The capital of France is [MASK]."
const T = CASE.tokens.length;
const MASK = CASE.tokens.indexOf('[MASK]');
const ASK = CASE.tokens.indexOf('capital');
const v = viewById('predict');
// run.predict as the worker answers it (engine/worker_predict.js), with HF's words.
const hfPos = (i) => {
  const p = CASE.positions[i];
  const id = CASE.ids[i];
  const at = p.top_ids.indexOf(id);
  return {
    index: i, token: CASE.tokens[i], token_prob: p.token_prob,
    token_rank: at >= 0 ? at + 1 : 1 + p.top_probs.length + i, // (refs hold no rank: a stand-in past the top)
    top: p.top_ids.map((tid, r) => ({ id: tid, token: p.top_tokens[r], prob: p.top_probs[r] })),
  };
};
const L = 2;
const H = 2;
const run = {
  tokens: CASE.tokens, typeIds: CASE.tokens.map(() => 0), wordIds: CASE.tokens.map((_, i) => (i === 0 || i === T - 1 ? -1 : i - 1)),
  T, L, H, d: 16, truncated: false,
  attn: [new Float32Array(H * T * T), new Float32Array(H * T * T)], norms: null, q: null, k: null,
  predict: { runId: 1, hasHead: true, k: 5, maskToken: '[MASK]', positions: [hfPos(ASK), hfPos(MASK)], ms: 1, key: `${ASK}/m/5` },
};
const state = { view: 'predict', layer: 0, head: 0, mode: 'attn', query: 0, hide: false, renorm: true, words: false, filter: 'all', heads: null, theme: 'light', text: CASE.texts[0], text_b: '', model: 'tiny-mlm', mask: String(ASK) };

test('round trip: the Predictions view\'s snapshot holds HF\'s words and draws them with no model', async () => {
  assert.ok(v.snapshot, 'the Predictions view has a snapshot form');
  const text = await encodeSnapshot(snapshotFromRun(run, state, { id: 'tiny-mlm' }, v.snapshot));
  const snap = await decodeSnapshot(text);
  assert.deepEqual(snapshotPlan(state, L, H, v.snapshot), { attn: [], norms: [], qk: null }, 'no attention is stored');
  assert.equal(snap.attn.length, 0);
  assert.equal(snap.state.mask, String(ASK), 'mask= travels in the state');
  assert.deepEqual(stateFromSnapshot(snap.state, snap).problems, []);
  const r = runFromSnapshot(snap);
  assert.deepEqual(r.predict.positions, [hfPos(ASK), hfPos(MASK)], 'every word, id and probability as HF gave it');
  assert.equal(r.predict.maskToken, '[MASK]');
  assert.equal(r.predict.positions[1].top[0].id, CASE.positions[MASK].top_ids[0]);
  // what the page asks before drawing (runs.js currentFor)
  assert.deepEqual(snapshotCovers(snap, state, v.snapshot), { ok: true });
  assert.ok(resultCovers(r, v.needs(state), state.layer), 'the snapshot run answers the view\'s needs');
  const other = { ...state, mask: '' };
  assert.equal(snapshotCovers(snap, other, v.snapshot).ok, false, 'other asked positions need the model');
  assert.equal(snapshotCovers(snap, { ...state, text: 'New text.' }, v.snapshot).ok, false);
  const data = v.prepare(r, state);
  assert.equal(data.snapshot, true, 'the view knows it draws a snapshot (masking off)');
  assert.deepEqual(data.preds.map((p) => p.top[0].token), [CASE.positions[ASK].top_tokens[0], CASE.positions[MASK].top_tokens[0]]);
  // again from the snapshot (share.js re-encodes a snapshot run)
  const again = await decodeSnapshot(await encodeSnapshot({ ...snap, state }));
  assert.deepEqual(again.predict, snap.predict);
});

test('a model without a head: the snapshot says so and holds no words', async () => {
  const none = { ...run, predict: { runId: 1, hasHead: false, k: 5, maskToken: null, positions: [], ms: 0 } };
  const snap = await decodeSnapshot(await encodeSnapshot(snapshotFromRun(none, { ...state, mask: '' }, {}, v.snapshot)));
  const data = v.prepare(runFromSnapshot(snap), snap.state);
  assert.equal(data.hasHead, false);
});

test('older snapshots (no predictions) still load; the Predictions view then needs the model', async () => {
  const heat = { ...state, view: 'heatmap', mask: '' };
  const snap = await decodeSnapshot(await encodeSnapshot(snapshotFromRun(run, heat, {}, viewById('heatmap').snapshot)));
  assert.equal(snap.predict, null);
  assert.equal(snapshotCovers(snap, heat, viewById('heatmap').snapshot).ok, true);
  const c = snapshotCovers(snap, { ...heat, view: 'predict' }, v.snapshot);
  assert.equal(c.ok, false);
  assert.match(c.why, /predictions/);
});

/** The text form of the good snapshot with its meta JSON's "predict" edited. */
async function withPredict(edit) {
  return withMeta(packSnapshot(snapshotFromRun(run, state, {}, v.snapshot)), (meta) => { edit(meta); return meta; });
}

const many = (n, f) => Array.from({ length: n }, (_, i) => f(i));
const HOSTILE = [
  ['record', (m) => { m.predict = 5; }],
  ['record', (m) => { m.predict = [1]; }],
  ['has_head', (m) => { m.predict.has_head = 'yes'; }],
  ['has_head', (m) => { m.predict.has_head = null; }],
  ['k', (m) => { m.predict.k = 0; }],
  ['k', (m) => { m.predict.k = 101; }],
  ['k', (m) => { m.predict.k = 2.5; }],
  ['k', (m) => { m.predict.k = '5'; }],
  ['mask_token', (m) => { m.predict.mask_token = 7; }],
  ['mask_token', (m) => { m.predict.mask_token = '<b>'.repeat(100); }],
  ['asked', (m) => { m.predict.asked = '2'; }],
  ['asked', (m) => { m.predict.asked = many(65, (i) => i); }],
  ['asked[0]', (m) => { m.predict.asked = [T]; }],
  ['asked[1]', (m) => { m.predict.asked = [3, 1]; }],
  ['positions', (m) => { m.predict.positions = {}; }],
  ['positions', (m) => { m.predict.positions = many(T + 1, () => m.predict.positions[0]); }],
  ['positions', (m) => { m.predict.has_head = false; }],
  ['positions[0]', (m) => { m.predict.positions[0] = 'x'; }],
  ['positions[0].index', (m) => { m.predict.positions[0].index = -1; }],
  ['positions[0].index', (m) => { m.predict.positions[0].index = 1e9; }],
  ['positions[1].index', (m) => { m.predict.positions[1].index = m.predict.positions[0].index; }],
  ['positions[0].token', (m) => { m.predict.positions[0].token = { a: 1 }; }],
  ['positions[0].token_prob', (m) => { m.predict.positions[0].token_prob = 1.5; }],
  ['positions[0].token_prob', (m) => { m.predict.positions[0].token_prob = '0.5'; }],
  ['positions[0].token_prob', (m) => { m.predict.positions[0].token_prob = null; }],
  ['positions[0].token_rank', (m) => { m.predict.positions[0].token_rank = 0; }],
  ['positions[0].token_rank', (m) => { m.predict.positions[0].token_rank = 2 ** 40; }],
  ['positions[0].top', (m) => { m.predict.positions[0].top = []; }],
  ['positions[0].top', (m) => { m.predict.positions[0].top = many(6, () => m.predict.positions[0].top[0]); }],
  ['positions[0].top', (m) => { m.predict.positions[0].top = many(100000, () => m.predict.positions[0].top[0]); }],
  ['positions[0].top[0]', (m) => { m.predict.positions[0].top[0] = null; }],
  ['positions[0].top[0].id', (m) => { m.predict.positions[0].top[0].id = -3; }],
  ['positions[0].top[0].id', (m) => { m.predict.positions[0].top[0].id = 1.5; }],
  ['positions[1].top[2].token', (m) => { m.predict.positions[1].top[2].token = 'x'.repeat(201); }],
  ['positions[0].top[0].prob', (m) => { m.predict.positions[0].top[0].prob = -0.1; }],
  ['positions[0].top[1].prob', (m) => { m.predict.positions[0].top[1].prob = 0.9; }],
];

test('hostile predictions are refused, naming the field', async () => {
  for (const [field, edit] of HOSTILE) {
    const text = await withPredict(edit);
    await assert.rejects(decodeSnapshot(text), (e) => {
      assert.ok(e instanceof SnapshotError, `${field}: ${e.message}`);
      assert.ok(e.message.includes(`predictions' ${field} is `), `${field}: ${e.message}`);
      return true;
    }, field);
  }
});

test('strings are data: a token that looks like HTML stays the same text', async () => {
  const evil = '<img src=x onerror=alert(1)>';
  const text = await withPredict((m) => { m.predict.positions[0].top[0].token = evil; m.predict.mask_token = '</script>'; });
  const snap = await decodeSnapshot(text);
  assert.equal(snap.predict.positions[0].top[0].token, evil);
  assert.equal(snap.predict.mask_token, '</script>');
});

test('the state\'s mask= is checked against the snapshot\'s tokens', () => {
  const dims = { L, H, T };
  assert.deepEqual(stateFromSnapshot({ ...state, mask: '2,5' }, dims).problems, []);
  assert.match(stateFromSnapshot({ ...state, mask: String(T) }, dims).problems.join(';'), /mask/);
  assert.match(stateFromSnapshot({ ...state, mask: 'a<b>' }, dims).problems.join(';'), /mask/);
  assert.match(stateFromSnapshot({ ...state, mask: [3] }, dims).problems.join(';'), /mask/);
});
