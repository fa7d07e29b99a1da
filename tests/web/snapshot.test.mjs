// Snapshots (web/js/lib/snapshot.js): 8-bit values within 1/255 of Hugging Face's
// numbers (tests/web/fixtures/minilm-pair.json), what each view's snapshot
// holds, and clear errors for damaged or unknown snapshots.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  encodeSnapshot, decodeSnapshot, snapshotFromRun as fromRunWith, packSnapshot, unpackSnapshot, runFromSnapshot,
  snapshotCovers as coversWith, snapshotPlan as planWith, SnapshotError, MAX_TOKENS, MAX_SNAPSHOT_FLOATS, snapshotFloats,
} from '../../web/js/lib/snapshot.js';
import { deflateRaw, toBase64Url, crc32 } from '../../web/js/lib/bytes.js';
import { withMeta } from './snapshot_meta.mjs';
import { headMatrix, neuronColumns, tokenAxis } from '../../web/js/lib/data.js';
import { gunzipSync } from 'node:zlib';
import { viewById } from '../../web/js/views/index.js';

// What a snapshot holds is the view's to say (its descriptor's snapshot spec).
const specOf = (s) => viewById(s.view).snapshot;
const snapshotCovers = (o, s) => coversWith(o, s, specOf(s));
const snapshotPlan = (s, L, H) => planWith(s, L, H, specOf(s));
const snapshotFromRun = (run, s, model) => fromRunWith(run, s, model, specOf(s));

const fx = JSON.parse(readFileSync(new URL('./fixtures/minilm-pair.json', import.meta.url)));
const { T, H, d } = fx;
// A two-layer run made of the fixture's HF layers 0 and 3 (layer 1 here = HF
// layer 3, whose q/k vectors the fixture also holds).
const hfAttn = [Float32Array.from(fx.attentions[0]), Float32Array.from(fx.attentions[1])];
// Stand-in norms with a range unlike attention's: HF attention times 1 + key index.
const norms = hfAttn.map((a) => a.map((v, i) => v * (1 + (i % T))));
const run = {
  tokens: fx.tokens, typeIds: fx.type_ids, wordIds: fx.word_ids, T, L: 2, H, d, truncated: false,
  attn: hfAttn, norms, q: [null, Float32Array.from(fx.queries)], k: [null, Float32Array.from(fx.keys)],
};
const base = { view: 'heatmap', layer: 1, head: 4, mode: 'attn', query: 0, hide: false, renorm: true, words: false, filter: 'all', heads: null, theme: 'light', text: fx.text, text_b: fx.text_b, model: 'minilm-l6-q8' };
const model = { id: 'minilm-l6-q8', name: 'all-MiniLM-L6-v2 (q8)', bytes: 24726521 };

// The neuron view's scores of the head it shows (protocol.js withScores),
// as the worker attaches them: a stand-in made of the fixture's HF q, k as
// BERT's one term, q·k/√d (tests/scores.test.mjs holds the engine's).
function withHeadScores(r, layer, head) {
  const { T: n, d: dd } = r;
  const q = r.q[layer].subarray(head * n * dd, (head + 1) * n * dd), k = r.k[layer].subarray(head * n * dd, (head + 1) * n * dd);
  const s = new Float32Array(n * n);
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) {
    let dot = 0;
    for (let c = 0; c < dd; c++) dot += q[i * dd + c] * k[j * dd + c];
    s[i * n + j] = dot / Math.sqrt(dd);
  }
  return { ...r, scores: { layer, head, query: null, window: -1, scores: s, terms: [{ name: 'q·k/√d', abbr: 'q·k/√d', about: "the query's dot product with the key, over √d", values: s.slice() }] } };
}

async function roundTrip(state, r = run) {
  if (state.view === 'neuron' && r.q && !r.scores) r = withHeadScores(r, state.layer, state.head === 'mean' ? 0 : state.head);
  const text = await encodeSnapshot(snapshotFromRun(r, state, model));
  assert.match(text, /^[A-Za-z0-9_-]+$/);
  return { text, snap: await decodeSnapshot(text) };
}

function maxDiff(a, b) {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

test('heatmap snapshot: every head of the layer within 0.5/255 of HF attention; the mean within 1/255 of torch mean', async () => {
  const { text, snap } = await roundTrip(base);
  assert.equal(snap.attn.length, H);
  assert.equal(snap.norms.length, 0);
  assert.equal(snap.qk, null);
  assert.deepEqual(snap.tokens, fx.tokens);
  assert.deepEqual(snap.typeIds, fx.type_ids);
  assert.deepEqual(snap.wordIds, fx.word_ids);
  assert.equal(snap.state.text, fx.text);
  assert.equal(snap.state.text_b, fx.text_b);
  assert.deepEqual(snap.model, model);
  const r = runFromSnapshot(snap);
  assert.equal(r.attn[0], null);
  for (let h = 0; h < H; h++) {
    const diff = maxDiff(headMatrix(r.attn[1], H, T, h), headMatrix(hfAttn[1], H, T, h));
    assert.ok(diff <= 0.5 / 255 + 1e-7, `head ${h}: ${diff}`);
  }
  const mean = headMatrix(r.attn[1], H, T, 'mean');
  assert.ok(maxDiff(mean, fx.head_mean[1]) <= 1 / 255, 'mean of heads');
  console.log(`# heatmap snapshot, ${T} tokens, ${H} heads: ${text.length} characters`);
});

test('norm-mode snapshot: per-block scale keeps every value within max/510', async () => {
  const { snap } = await roundTrip({ ...base, view: 'head', mode: 'norm' });
  assert.equal(snap.attn.length, 0);
  assert.equal(snap.norms.length, H);
  const r = runFromSnapshot(snap);
  for (let h = 0; h < H; h++) {
    const ref = headMatrix(norms[1], H, T, h);
    const max = ref.reduce((m, v) => Math.max(m, v), 0);
    assert.ok(max > 1, 'the stand-in norms exceed 1');
    assert.ok(maxDiff(headMatrix(r.norms[1], H, T, h), ref) <= (max * 0.5) / 255 * (1 + 1e-6), `head ${h}`);
  }
});

test('model-view snapshot holds every layer and head', async () => {
  const { snap } = await roundTrip({ ...base, view: 'model' });
  assert.equal(snap.attn.length, 2 * H);
  const r = runFromSnapshot(snap);
  for (let l = 0; l < 2; l++) assert.ok(maxDiff(r.attn[l], hfAttn[l]) <= 0.5 / 255 + 1e-7, `layer ${l}`);
  assert.equal(snapshotCovers(snap, { ...base, view: 'model' }).ok, true);
  assert.equal(snapshotCovers(snap, { ...base, view: 'heatmap', layer: 0, head: 'mean' }).ok, true);
});

test('neuron snapshot: q/k within half a step of HF, softmax column from stored attention within 1/255', async () => {
  const head = 7;
  const { snap } = await roundTrip({ ...base, view: 'neuron', head, query: 5 });
  assert.equal(snap.attn.length, 1);
  assert.ok(snap.qk && snap.qk.layer === 1 && snap.qk.head === head);
  const m = T * d;
  const refQ = fx.queries.slice(head * m, head * m + m);
  const refK = fx.keys.slice(head * m, head * m + m);
  for (const [got, ref, what] of [[snap.qk.q, refQ, 'q'], [snap.qk.k, refK, 'k']]) {
    for (let t = 0; t < T; t++) {
      const row = ref.slice(t * d, t * d + d);
      const step = Math.max(...row.map(Math.abs)) / 127;
      const diff = maxDiff(got.subarray(t * d, t * d + d), row);
      assert.ok(diff <= step / 2 + 1e-6, `${what} token ${t}: ${diff} > ${step / 2}`);
    }
  }
  const r = runFromSnapshot(snap);
  const att = headMatrix(r.attn[1], H, T, head);
  for (let query = 0; query < T; query++) {
    for (let j = 0; j < T; j++) {
      const ref = fx.qk_attention[(head * T + query) * T + j];
      assert.ok(Math.abs(att[query * T + j] - ref) <= 1 / 255, `attention ${query},${j}`);
    }
  }
  // q . k from the 8-bit vectors still ranks the keys like HF's attention row.
  assert.equal(r.q[0], null, 'only the snapshot layer\'s q/k');
  const cols = neuronColumns(r.q[1], r.k[1], H, T, d, head, 5);
  const hfRow = fx.qk_attention.slice((head * T + 5) * T, (head * T + 6) * T);
  const argmax = (a) => a.indexOf(Math.max(...a));
  assert.equal(argmax(cols.softmax), argmax(hfRow));
  assert.ok(maxDiff(cols.softmax, hfRow) < 0.05, 'softmax of 8-bit q/k is close');
  // The scores of the row shown, to 8 significant digits (the others: the model).
  const want = withHeadScores(run, 1, head).scores;
  assert.equal(r.scores.query, 5);
  assert.deepEqual(r.scores.terms.map((t) => t.name), ['q·k/√d']);
  for (const got of [r.scores.scores, r.scores.terms[0].values]) {
    assert.equal(got.length, T);
    for (let j = 0; j < T; j++) assert.ok(Math.abs(got[j] - want.scores[5 * T + j]) <= 1e-7 * Math.max(1, Math.abs(want.scores[5 * T + j])), `score of key ${j}`);
  }
});

test('neuron snapshot scores: a masked key stays null; damaged scores are refused naming the field', async () => {
  const state = { ...base, view: 'neuron', head: 3, query: 2 };
  const live = withHeadScores(run, 1, 3);
  live.scores.scores[2 * T + 6] = NaN; // a key the model masks out (ModernBERT's window)
  live.scores.terms[0].values[2 * T + 6] = NaN;
  live.scores.window = 4;
  const { snap } = await roundTrip(state, live);
  const r = runFromSnapshot(snap);
  assert.ok(Number.isNaN(r.scores.scores[6]) && Number.isNaN(r.scores.terms[0].values[6]));
  assert.equal(r.scores.window, 4);
  const packed = packSnapshot(snapshotFromRun(live, state, model));
  for (const [edit, re] of [
    [(m) => { m.scores.rows[1][6] = 1; }, /rows\[1\]\[6\] is 1, not null/],
    [(m) => { m.scores.rows.pop(); }, /rows is .*not 2 rows/],
    [(m) => { m.scores.rows[0][0] = 'x'; }, /rows\[0\]\[0\] is "x", not a number or null/],
    [(m) => { m.scores.terms[0].name = 'x'.repeat(49); }, /terms\[0\]\.name/],
    [(m) => { m.scores.terms[0].about = 5; }, /terms\[0\]\.about is 5/],
    [(m) => { m.scores.terms = []; }, /terms is \[\], not a list of 1 to 3 terms/],
    [(m) => { m.scores.query = T; }, new RegExp(`query is ${T}, not a token index below ${T}`)],
    // every query's rows (query null, as python/bertlens writes them) must hold T·T numbers each
    [(m) => { m.scores.query = null; }, new RegExp(`rows\\[0\\] is .*not a row of ${T * T} numbers`)],
    [(m) => { m.scores.layer = 2; }, /layer is 2, not a layer below 2/],
    [(m) => { m.scores = 'x'; }, /record is "x", not an object/],
  ]) {
    await assert.rejects(decodeSnapshot(await withMeta(packed, (m) => { edit(m); return m; })), (e) => e instanceof SnapshotError && re.test(e.message), String(re));
  }
});

test('what a snapshot covers: head changes within the layer yes; other layers, modes, views, text no', async () => {
  const { snap } = await roundTrip(base);
  assert.equal(snapshotCovers(snap, base).ok, true);
  assert.equal(snapshotCovers(snap, { ...base, head: 11 }).ok, true);
  assert.equal(snapshotCovers(snap, { ...base, head: 'mean', hide: true, words: true }).ok, true);
  assert.equal(snapshotCovers(snap, { ...base, view: 'head', filter: 'ab' }).ok, true);
  for (const [patch, word] of [[{ layer: 0 }, 'layer 0'], [{ mode: 'norm' }, 'norms'], [{ view: 'model' }, 'every layer'],
    [{ view: 'neuron' }, 'query/key'], [{ text: 'Other text.' }, 'text'], [{ text_b: '' }, 'text']]) {
    const c = snapshotCovers(snap, { ...base, ...patch });
    assert.equal(c.ok, false, JSON.stringify(patch));
    assert.ok(c.why.includes(word), `${c.why} mentions ${word}`);
  }
  const neuron = (await roundTrip({ ...base, view: 'neuron', head: 2 })).snap;
  assert.equal(snapshotCovers(neuron, { ...base, view: 'neuron', head: 2 }).ok, true);
  // it holds the scores of the query it shows; another query's need the model
  const other = snapshotCovers(neuron, { ...base, view: 'neuron', head: 2, query: 9 });
  assert.equal(other.ok, false);
  assert.match(other.why, /scores of query 9 for layer 1, head 2/);
  assert.equal(snapshotCovers(neuron, { ...base, view: 'neuron', head: 3 }).ok, false);
  assert.equal(snapshotCovers(neuron, { ...base, view: 'heatmap', head: 2 }).ok, true);
  assert.equal(snapshotCovers(neuron, { ...base, view: 'heatmap', head: 'mean' }).ok, false);
  assert.deepEqual(snapshotPlan({ ...base, view: 'neuron', mode: 'norm', head: 'mean' }, 6, 12), { attn: [[1, 0]], norms: [[1, 0]], qk: [1, 0] });
});

test('inputs longer than 64 tokens are refused with a reason', () => {
  const long = { ...run, T: MAX_TOKENS + 1, tokens: new Array(MAX_TOKENS + 1).fill('a') };
  assert.throws(() => snapshotFromRun(long, base, model), (e) => e instanceof SnapshotError && /at most 64/.test(e.message));
  assert.throws(() => snapshotFromRun({ ...run, q: null }, { ...base, view: 'neuron' }, model), /query\/key/);
  assert.throws(() => snapshotFromRun(run, { ...base, view: 'compare' }, model), /no snapshot form/);
});

test('damaged, cut, foreign and unknown-version snapshots give a clear error', async () => {
  const { text } = await roundTrip(base);
  const expectErr = async (s, re) => {
    await assert.rejects(decodeSnapshot(s), (e) => {
      assert.ok(e instanceof SnapshotError, e.stack);
      assert.match(e.message, /^(This view's snapshot cannot be read: |The snapshot)/);
      assert.match(e.message, re);
      return true;
    });
  };
  await expectErr('', /empty/);
  await expectErr(text.slice(0, Math.floor(text.length / 2)), /cut|decompress|ends early|checksum/);
  const mid = Math.floor(text.length / 2);
  const flipped = text.slice(0, mid) + (text[mid] === 'A' ? 'B' : 'A') + text.slice(mid + 1);
  await expectErr(flipped, /checksum|decompress|ends early|unexpected|JSON|not a bertlens/);
  await expectErr('%%%not-base64', /base64url/);
  await expectErr(toBase64Url(await deflateRaw(new TextEncoder().encode('hello world, not a snapshot'))), /not a bertlens snapshot/);
  const packed = packSnapshot(snapshotFromRun(run, base, model));
  packed[3] = 3;
  await expectErr(toBase64Url(await deflateRaw(packed)), /version 3/);
  // A valid CRC over a wrong body is still caught by the layout checks.
  const bad = packSnapshot(snapshotFromRun(run, base, model)).slice(0, -4);
  bad[4] = 200; // T above 64
  const withCrc = new Uint8Array(bad.length + 4);
  withCrc.set(bad);
  new DataView(withCrc.buffer).setUint32(bad.length, crc32(bad), true);
  assert.throws(() => unpackSnapshot(withCrc), /1 to 64 tokens/);
});

test('crc32 matches the IEEE check value', () => {
  assert.equal(crc32(new TextEncoder().encode('123456789')), 0xcbf43926);
});

test('meta values of the wrong type are cleaned, not trusted', async () => {
  const o = snapshotFromRun(run, base, model);
  o.model = { id: 5, name: { toString: 1 }, bytes: 'lots' };
  const back = await decodeSnapshot(await encodeSnapshot(o));
  assert.deepEqual(back.model, { id: '', name: '', bytes: 0 });
  assert.deepEqual(back.tokens, fx.tokens);
});

test('a small snapshot text that inflates to more than 16 MB is refused', async () => {
  const bomb = toBase64Url(await deflateRaw(new Uint8Array(17 << 20)));
  assert.ok(bomb.length < 40000, `${bomb.length}`);
  await assert.rejects(decodeSnapshot(bomb), /expands to more than/);
});

/** The amplification link of issue 23: 64 tokens, 255 layers × 255 heads,
 *  one all-zero attention block and one norm block in every layer. */
async function amplifier() {
  const T64 = 64;
  const zero = new Float32Array(T64 * T64);
  const blocks = Array.from({ length: 255 }, (_, l) => ({ layer: l, head: 0, data: zero }));
  const o = {
    T: T64, L: 255, H: 255, d: 1, state: { ...base, view: 'model' }, model,
    tokens: Array.from({ length: T64 }, (_, i) => `t${i}`), typeIds: new Array(T64).fill(0), wordIds: Array.from({ length: T64 }, (_, i) => i),
    truncated: false, attn: blocks, norms: blocks, qk: null,
  };
  return encodeSnapshot(o);
}

test('amplification: a 4.5 KB link naming one head in each of 255 layers × 255 heads is refused within a memory budget', async () => {
  const text = await amplifier();
  assert.ok(text.length < 6000, `${text.length} characters`);
  // (what it would cost: 2 modes × 255 layers × 255 heads × 64² floats)
  assert.equal(2 * 255 * 255 * 64 * 64 * 4, 2130739200);
  globalThis.gc?.();
  const before = process.memoryUsage();
  let refused = null;
  try {
    const snap = await decodeSnapshot(text);
    runFromSnapshot(snap); // main: allocates 2 GiB here (or throws RangeError)
  } catch (e) {
    refused = e;
  }
  const after = process.memoryUsage();
  const grew = Math.max(after.arrayBuffers - before.arrayBuffers, 0);
  console.log(`# amplification link: ${text.length} characters; arrayBuffers +${(grew / 1048576).toFixed(1)} MB, rss +${((after.rss - before.rss) / 1048576).toFixed(1)} MB`);
  assert.ok(refused instanceof SnapshotError, `refused with a SnapshotError, not ${refused}`);
  assert.match(refused.message, /^This view's snapshot cannot be read: drawing it would take \d+ MB of memory, more than the 32 MB a snapshot may use\.$/);
  assert.ok(grew < 64 << 20, `arrayBuffers grew by ${grew} bytes`);
});

test('memory budget: the floats a snapshot materializes are counted per named layer; q/k count too; real snapshots fit', async () => {
  assert.equal(MAX_SNAPSHOT_FLOATS, 8388608);
  // A model view of BERT-large (24 × 16) at 64 tokens fits: 1.6 M floats.
  const blocks = (L, H) => Array.from({ length: L * H }, (_, i) => ({ layer: Math.floor(i / H), head: i % H }));
  assert.equal(snapshotFloats({ T: 64, H: 16, d: 64, attn: blocks(24, 16) }), 24 * 16 * 4096);
  // Layers named twice count once; norms add their own layers; q/k 2·H·T·d.
  assert.equal(snapshotFloats({ T: 10, H: 3, d: 4, attn: [{ layer: 2, head: 0 }, { layer: 2, head: 1 }], norms: [{ layer: 0, head: 0 }], qk: {} }), 2 * 3 * 100 + 2 * 3 * 10 * 4);
  // The live fixtures' snapshots decode as before (every view).
  for (const view of ['heatmap', 'model', 'neuron']) {
    const { snap } = await roundTrip({ ...base, view, mode: 'norm' });
    assert.ok(snapshotFloats(snap) <= MAX_SNAPSHOT_FLOATS);
    runFromSnapshot(snap);
  }
  // Past the budget only with its q/k: one layer of 255 heads at 64 tokens
  // (1.0 M floats) and q/k of d = 255 (8.3 M).
  const o = {
    T: 64, L: 1, H: 255, d: 255, state: base, model, tokens: new Array(64).fill('x'), typeIds: new Array(64).fill(0), wordIds: new Array(64).fill(0), truncated: false,
    attn: [{ layer: 0, head: 0, data: new Float32Array(64 * 64) }], norms: [], qk: { layer: 0, head: 0, q: new Float32Array(64 * 255), k: new Float32Array(64 * 255) },
  };
  assert.ok(snapshotFloats({ ...o, qk: null }) <= MAX_SNAPSHOT_FLOATS);
  assert.ok(snapshotFloats(o) > MAX_SNAPSHOT_FLOATS);
  await assert.rejects(decodeSnapshot(await encodeSnapshot(o)), /more than the 32 MB/);
  assert.throws(() => runFromSnapshot(o), /more than the 32 MB/);
});

// Word merging from a snapshot: words are the tokenizer's word ids (Hugging
// Face's word_ids(), "didn't" is three words for BERT), which a snapshot
// carries, so it groups as the live run; its offsets travel too.
// Tokens, type ids, word ids and offsets: BertTokenizerFast's, from
// tests/fixtures/tokenizer/uncased.jsonl.gz (line 0 of the tokenizer corpus).
test('snapshot offsets and word ids: "merge subwords into words" groups like the live run, with or without offsets', async () => {
  const root = new URL('../../', import.meta.url);
  const text = JSON.parse(readFileSync(new URL('tests/corpus/tokenizer.jsonl', root), 'utf8').split('\n')[0]).text;
  const hf = JSON.parse(gunzipSync(readFileSync(new URL('tests/fixtures/tokenizer/uncased.jsonl.gz', root))).toString('utf8').split('\n')[0]);
  assert.match(text, /didn't/);
  const n = hf.ids.length;
  const tokens = hf.offsets.map(([a, b], i) => (hf.word_ids[i] === null ? (i === 0 ? '[CLS]' : '[SEP]')
    : (i > 0 && hf.word_ids[i - 1] === hf.word_ids[i] ? '##' : '') + text.slice(a, b).toLowerCase()));
  const uniform = new Float32Array(n * n).fill(1 / n);
  const live = {
    tokens, typeIds: hf.type_ids, wordIds: hf.word_ids.map((w) => (w === null ? -1 : w)), offsets: hf.offsets,
    T: n, L: 1, H: 1, d: 4, truncated: false, attn: [uniform], norms: null, q: null, k: null,
  };
  const state = { ...base, layer: 0, head: 0, words: true, text, text_b: '' };
  const snap = snapshotFromRun(live, state, model);
  const back = await decodeSnapshot(await encodeSnapshot(snap));
  assert.deepEqual(back.offsets, hf.offsets);
  const labels = (r) => tokenAxis(r, { words: true }).labels;
  const liveLabels = labels(live);
  assert.ok(!liveLabels.includes("didn't") && liveLabels.includes('didn'), liveLabels.join(' | '));
  assert.equal(liveLabels.length, new Set(hf.word_ids.filter((w) => w !== null)).size + 2, 'one label per Hugging Face word, [CLS] and [SEP]');
  assert.deepEqual(labels(runFromSnapshot(back)), liveLabels);
  assert.deepEqual(tokenAxis(runFromSnapshot(back), { words: true }).members, tokenAxis(live, { words: true }).members);
  // A snapshot written before offsets existed (no "offsets" in its meta) groups the same.
  const old = await decodeSnapshot(await encodeSnapshot({ ...snap, offsets: null }));
  assert.equal(old.offsets, null);
  assert.deepEqual(labels(runFromSnapshot(old)), liveLabels);
  // Offsets that are not T pairs are refused with a reason.
  for (const bad of [hf.offsets.slice(1), hf.offsets.map(([a, b], i) => (i === 3 ? [b + 1, b] : [a, b])), hf.offsets.map(() => 'x')]) {
    await assert.rejects(decodeSnapshot(await encodeSnapshotUnchecked({ ...snap, offsets: bad })), /token offsets are not T pairs/);
  }
});

/** The text form of a snapshot object, skipping packSnapshot's own checks
 *  (a damaged snapshot from elsewhere): its meta written as given. */
async function encodeSnapshotUnchecked(o) {
  return withMeta(packSnapshot({ ...o, offsets: null }), (meta) => ({ ...meta, offsets: o.offsets }));
}
