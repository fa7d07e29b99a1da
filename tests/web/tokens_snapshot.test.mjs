// A snapshot keeps how the run's pieces spell words, its special-token flags
// and its A/B boundary (web/js/lib/snapshot.js pieces, special, n_a), so a
// RoBERTa snapshot reads as the live run does: byte-level newlines and tabs
// shown as signs, a typed <mask> a word of its own, sentence B where the
// pair template puts it (RoBERTa's type ids are all 0). Tokens, offsets,
// word ids and what each piece decodes to are Hugging Face's
// (fixtures/roberta-ws-pair.json, made by fixtures/make_roberta_ws_pair.py).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  encodeSnapshot, decodeSnapshot, snapshotFromRun, packSnapshot, unpackSnapshot, runFromSnapshot, SnapshotError,
} from '../../web/js/lib/snapshot.js';
import { tokenAxis } from '../../web/js/lib/data.js';
import { crc32 } from '../../web/js/lib/bytes.js';
import { viewById } from '../../web/js/views/index.js';
import { checkResult, KEEP } from '../../web/js/lib/protocol.js';

const fx = JSON.parse(readFileSync(new URL('./fixtures/roberta-ws-pair.json', import.meta.url)));
const T = fx.tokens.length;
const H = 2;
// attention values do not matter here: uniform rows
const attn = [new Float32Array(H * T * T).fill(1 / T)];
const live = {
  tokens: fx.tokens, typeIds: fx.type_ids, wordIds: fx.word_ids, offsets: fx.offsets, nA: fx.n_a, truncated: false,
  pieces: 'byte-level', special: fx.special.map((f) => (f ? 1 : 0)), // as the engine sends them
  T, L: 1, H, d: 4, attn, norms: null, q: null, k: null,
};
const state = { view: 'heatmap', layer: 0, head: 0, mode: 'attn', query: 0, hide: false, renorm: true, words: false, filter: 'all', heads: null, theme: 'light', text: fx.text, text_b: fx.text_b, model: 'roberta-tiny' };
const spec = viewById('heatmap').snapshot;
const visible = (s) => s.replace(/\n/g, '⏎').replace(/\t/g, '⇥');

async function fromSnapshot(run = live) {
  return runFromSnapshot(await decodeSnapshot(await encodeSnapshot(snapshotFromRun(run, state, { id: 'roberta-tiny' }, spec))));
}

test('RoBERTa snapshot: token labels, segments and specials as the live run has them', async () => {
  const snap = await fromSnapshot();
  for (const opts of [{}, { words: true }, { hideSpecials: true }, { words: true, hideSpecials: true }]) {
    const a = tokenAxis(live, opts);
    const b = tokenAxis(snap, opts);
    assert.deepEqual(b.labels, a.labels, JSON.stringify(opts));
    assert.deepEqual(b.segs, a.segs, JSON.stringify(opts));
    assert.deepEqual(b.special, a.special, JSON.stringify(opts));
  }
  const ax = tokenAxis(snap);
  // every piece reads as Hugging Face decodes it (whitespace made visible)
  fx.decoded.forEach((d, i) => assert.equal(ax.labels[i], visible(d), `token ${i} ${fx.tokens[i]}`));
  assert.ok(!ax.labels.some((l) => /[ĊĉĠ]/.test(l)));
  // sentence B starts where Hugging Face's sequence ids say
  assert.deepEqual(ax.segs, fx.tokens.map((_, i) => (i >= fx.n_a ? 'B' : 'A')));
  // hide specials hides <s> and </s>, keeps the typed <mask>
  const hidden = tokenAxis(snap, { hideSpecials: true });
  assert.deepEqual(hidden.hidden.sort(), ['</s>', '<s>']);
  assert.ok(hidden.labels.includes('<mask>'));
  // words: the typed <mask> is a word of its own, not glued to "a" and "here"
  const words = tokenAxis(snap, { words: true, hideSpecials: true });
  assert.deepEqual(words.labels.slice(-3), ['a', '<mask>', 'here']);
});

test('a snapshot without pieces, special flags or n_a (older links) still loads, with the guess', async () => {
  const old = { ...live };
  delete old.pieces;
  delete old.special;
  delete old.nA;
  const snap = await fromSnapshot(old);
  assert.equal(snap.snapshot.pieces, null);
  assert.equal(snap.snapshot.special, null);
  assert.equal(tokenAxis(snap).labels[1], 'the');
});

test('pieces, special flags and n_a are checked on read', () => {
  const o = snapshotFromRun(live, state, {}, spec);
  const bad = [
    [{ pieces: 'sentencepiece' }, /piece style/],
    [{ special: fx.special.slice(1) }, /special-token flags/],
    [{ special: fx.special.map(() => 1) }, /special-token flags/],
    [{ nA: T + 1 }, /sentence B start/],
    [{ nA: 1.5 }, /sentence B start/],
  ];
  for (const [change, re] of bad) {
    // packSnapshot checks before writing; a crafted meta is checked on read
    assert.throws(() => packSnapshot({ ...o, ...change }), (e) => e instanceof SnapshotError && re.test(e.message));
    const packed = packSnapshot(o);
    const ml = new DataView(packed.buffer).getUint32(8, true);
    const meta = JSON.parse(new TextDecoder().decode(packed.subarray(12, 12 + ml)));
    const key = { nA: 'n_a' }[Object.keys(change)[0]] || Object.keys(change)[0];
    meta[key] = Object.values(change)[0];
    const mb = new TextEncoder().encode(JSON.stringify(meta));
    const body = new Uint8Array(12 + mb.length + packed.length - 4 - 12 - ml);
    body.set(packed.subarray(0, 12));
    new DataView(body.buffer).setUint32(8, mb.length, true);
    body.set(mb, 12);
    body.set(packed.subarray(12 + ml, packed.length - 4), 12 + mb.length);
    assert.throws(() => unpackSnapshot(withCrc(body)), (e) => e instanceof SnapshotError && re.test(e.message));
  }
});

function withCrc(body) {
  const out = new Uint8Array(body.length + 4);
  out.set(body);
  new DataView(out.buffer).setUint32(body.length, crc32(body), true);
  return out;
}

test('a RoBERTa pair (type ids all 0) carries two sentence embeddings through the worker protocol', () => {
  // found by families.scenarios.mjs: the compare view's run of a RoBERTa pair was refused
  const r = {
    ...live, flags: KEEP.ATTN, analysis: null, rollout: null, rolloutNorm: null, like: null, mask: null, runId: 1, ms: 1,
    embeddings: [new Float32Array(4), new Float32Array(4)],
  };
  assert.equal(checkResult(r), r);
  assert.throws(() => checkResult({ ...r, embeddings: [new Float32Array(4)] }), /"embeddings"/);
  // a single text (n_a = T) has one
  assert.equal(checkResult({ ...r, nA: T, embeddings: [new Float32Array(4)] }).nA, T);
});

test('compare view: a RoBERTa run reads as words (HF decoding), its counts name <s>/</s>, not [CLS]/[SEP]', async () => {
  const { alignRuns } = await import('../../web/js/lib/compare.js');
  const { compareLines } = await import('../../web/js/views/compare_text.js');
  // same tokens: aligned by token, labels as HF decodes each piece
  const same = alignRuns(live, { ...live });
  assert.deepEqual(same.labelsA, fx.decoded.map(visible));
  // B without its last word: different token and word counts, no alignment
  const cut = (a) => a.slice(0, -2).concat(a.slice(-1));
  const B = { ...live, tokens: cut(fx.tokens), typeIds: cut(fx.type_ids), wordIds: cut(fx.word_ids), offsets: cut(fx.offsets), special: cut(live.special), T: T - 1, attn: [new Float32Array(H * (T - 1) * (T - 1))] };
  const align = alignRuns(live, B);
  assert.equal(align.how, null);
  const st = { ...state, cmp: 'text', cmp_text: fx.text, cmp_text_b: 'a<mask>' };
  const lines = compareLines({ kind: 'text', A: live, B, align, emb: null }, st, (m) => m).map((l) => l.text).join(' ');
  assert.match(lines, /words \(with <s>\/<\/s>\)/);
  assert.doesNotMatch(lines, /\[CLS\]/);
});
