// scores.test.mjs — every head's pre-softmax scores and their terms
// (`bertlens attend --scores`, blw_scores; src/analysis/scores.c) against Hugging
// Face, every family: tests/fixtures/scores/make.py ran each checkpoint
// (the families' tiny random ones, the tiny BERT, a DistilBERT) on a pair of
// texts and recorded the attention and, term by term, what the model adds
// into the scores its softmax takes. Each checkpoint is converted to f32 and
// run on the same texts; for every layer, head and query:
//   - softmax of the scores (masked keys left out) is HF's attention row
//     (max |d| <= 1e-5), and the keys the scores leave out (null / NaN) are
//     exactly those HF masks (probability exactly 0: ModernBERT's window);
//   - the terms are named as bertlens names them, in HF's order, each equal
//     to HF's (1e-5 relative), and they add up to the scores (1e-5 relative);
//   - leaving a term out of a two- or three-term family breaks the softmax
//     comparison (the check can fail).
//
//   BERTLENS_BACKEND=native|asan|wasm node --test tests/scores.test.mjs
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { BIN, IS_WASM, QUICK, ROOT, loadWasm, nativeTest } from './lib/backend.mjs';
import { floats, loadBundle, putString, wasmError } from '../tools/wasm_node.mjs';

const FIX = path.join(ROOT, 'tests/fixtures/scores');
const INDEX = JSON.parse(fs.readFileSync(path.join(FIX, 'index.json'), 'utf8'));
const TOL = 1e-5;
const KEEP_ATTN = 1, KEEP_QK_ALL = 16;
// the names bertlens gives each term (bl_score_info: name, abbr)
const NAMES = {
  'q·k/√d': 'q·k/√d', bias: 'relative position bias',
  c2c: 'content-to-content', c2p: 'content-to-position', p2c: 'position-to-content',
};
// asan: the families whose scores are made by the family hooks, and BERT
const MODELS = QUICK ? INDEX.models.filter((m) => ['bert', 'mpnet', 'deberta-v2', 'modernbert'].includes(m.name)) : INDEX.models;

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bertlens-scores-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

function convert(ref, dtype = 'f32') {
  const out = path.join(tmp, `${ref.name}.${dtype}.blb`);
  if (fs.existsSync(out)) return out;
  const r = spawnSync(BIN, ['convert', path.join(ROOT, ref.checkpoint), out, '--dtype', dtype], { encoding: 'utf8' });
  assert.equal(r.status, 0, `convert ${ref.name}: ${r.stderr}`);
  return out;
}

/** The reference arrays of one model: attn [L][H][T][T], terms [{abbr, values}]. */
function reference(ref) {
  const bin = fs.readFileSync(path.join(FIX, ref.bin));
  const arr = (e) => new Float32Array(bin.buffer.slice(bin.byteOffset + e.offset, bin.byteOffset + e.offset + 4 * e.shape.reduce((a, b) => a * b, 1)));
  return { attn: arr(ref.attn), terms: ref.terms.map((t) => ({ abbr: t.abbr, values: arr(t) })) };
}

/** What the engine gives for every layer and head of the reference's texts:
 *  {tokens, attn, scores, terms: [{name, abbr, about, values}]}, every array
 *  flat [L][H][T][T] with NaN where masked. */
let wasm = null;
async function scoresOf(bundle, ref, extra = []) {
  const { n_layers: L, n_heads: H, T } = ref;
  if (!IS_WASM) {
    const r = spawnSync(BIN, ['attend', '--scores', ...extra, bundle, ref.text, ref.text_b], { encoding: 'utf8', maxBuffer: 1 << 28 });
    assert.equal(r.status, 0, `attend --scores ${ref.name}: ${r.stderr}`);
    const j = JSON.parse(r.stdout);
    // [layer][head][query][key], as "attentions"
    const L1 = extra.includes('--layer') ? 1 : L;
    for (const a of [j.scores, ...j.score_terms.map((t) => t.values)]) {
      assert.deepEqual([a.length, a[0].length, a[0][0].length, a[0][0][0].length], [L1, H, T, T], 'shape [layer][head][query][key]');
    }
    const flat = (a) => Float64Array.from(a.flat(Infinity), (x) => (x === null ? NaN : x));
    return {
      tokens: j.tokens, attn: flat(j.attentions), scores: flat(j.scores),
      terms: j.score_terms.map((t) => ({ name: t.name, abbr: t.abbr, about: t.about, values: flat(t.values) })),
    };
  }
  wasm ||= await loadWasm();
  const M = wasm;
  loadBundle(M, bundle);
  const a = putString(M, ref.text), b = putString(M, ref.text_b);
  try {
    assert.equal(M._blw_run(a, b, KEEP_ATTN | KEEP_QK_ALL, -1), T, wasmError(M));
  } finally {
    M._free(a);
    M._free(b);
  }
  const tokens = JSON.parse(M.UTF8ToString(M._blw_tokens_json())).tokens;
  const info = JSON.parse(M.UTF8ToString(M._blw_score_terms_json(0)));
  const n = info.terms.length, TT = T * T;
  const attn = new Float64Array(L * H * TT), scores = new Float64Array(L * H * TT);
  const terms = info.terms.map((t) => ({ ...t, values: new Float64Array(L * H * TT) }));
  // layers out of order: DeBERTa's relative rows are of the layer asked for
  for (const l of [...Array(L).keys()].reverse()) {
    attn.set(floats(M, M._blw_attention(l), H * TT), l * H * TT);
    for (let h = 0; h < H; h++) {
      const p = M._blw_scores(l, h);
      assert.ok(p, wasmError(M));
      const got = floats(M, p, (n + 1) * TT);
      const at = (l * H + h) * TT;
      scores.set(got.subarray(0, TT), at);
      terms.forEach((t, k) => t.values.set(got.subarray((k + 1) * TT, (k + 2) * TT), at));
    }
  }
  return { tokens, attn, scores, terms };
}

/** max |softmax(scores row) - want row| over every row (NaN keys left out,
 *  where want must be exactly 0); -1 when a masked key has weight. */
function softmaxDiff(scores, want, T) {
  let worst = 0;
  for (let r = 0; r < scores.length / T; r++) {
    const o = r * T;
    let max = -Infinity;
    for (let j = 0; j < T; j++) if (!Number.isNaN(scores[o + j])) max = Math.max(max, scores[o + j]);
    let sum = 0;
    for (let j = 0; j < T; j++) if (!Number.isNaN(scores[o + j])) sum += Math.exp(scores[o + j] - max);
    for (let j = 0; j < T; j++) {
      const p = Number.isNaN(scores[o + j]) ? 0 : Math.exp(scores[o + j] - max) / sum;
      if (Number.isNaN(scores[o + j]) && want[o + j] !== 0) return -1;
      worst = Math.max(worst, Math.abs(p - want[o + j]));
    }
  }
  return worst;
}

/** max |a - b| / max(1, |b|), NaN only where both are NaN (else Infinity). */
function relDiff(a, b) {
  assert.equal(a.length, b.length);
  let worst = 0;
  for (let i = 0; i < a.length; i++) {
    if (Number.isNaN(a[i]) || Number.isNaN(b[i])) {
      if (!(Number.isNaN(a[i]) && Number.isNaN(b[i]))) return Infinity;
      continue;
    }
    worst = Math.max(worst, Math.abs(a[i] - b[i]) / Math.max(1, Math.abs(b[i])));
  }
  return worst;
}

const sumOf = (terms) => terms.reduce((acc, t) => acc.map((x, i) => x + t.values[i]), new Float64Array(terms[0].values.length));

for (const ref of MODELS) {
  test(`${ref.name}: scores and terms as Hugging Face's, softmax = its attention`, async () => {
    const want = reference(ref);
    const got = await scoresOf(convert(ref), ref);
    const { T } = ref;
    assert.deepEqual(got.tokens, ref.tokens, 'the texts give Hugging Face\'s tokens');
    assert.deepEqual(got.terms.map((t) => t.abbr), want.terms.map((t) => t.abbr), 'the terms, in order');
    assert.deepEqual(got.terms.map((t) => t.name), want.terms.map((t) => NAMES[t.abbr]), 'the terms\' names');
    for (const t of got.terms) assert.ok(t.about.length > 20, `"${t.name}" says what it is`);
    const soft = softmaxDiff(got.scores, want.attn, T);
    const own = softmaxDiff(got.scores, got.attn, T);
    const masked = got.scores.filter(Number.isNaN).length;
    console.log(`  ${ref.name}: ${got.terms.length} term(s), softmax vs HF attention ${soft.toExponential(2)}, vs own ${own.toExponential(2)}, ${masked} masked`);
    assert.ok(soft >= 0 && soft <= TOL, `softmax(scores) vs Hugging Face's attention: ${soft}`);
    assert.ok(own >= 0 && own <= 1e-6, `softmax(scores) vs the engine's own attention: ${own}`);
    assert.equal(masked, ref.masked_keys, 'as many masked keys as Hugging Face masks');
    if (ref.masked_keys) assert.ok(got.terms.every((t) => t.values.filter(Number.isNaN).length === masked), 'every term masked there too');
    for (const [k, t] of got.terms.entries()) {
      const d = relDiff(t.values, want.terms[k].values);
      assert.ok(d <= TOL, `term ${t.name} vs Hugging Face's: ${d}`);
    }
    const add = relDiff(sumOf(got.terms), got.scores);
    assert.ok(add <= TOL, `the terms add up to the scores: ${add}`);
    // the comparison sees a term left out
    if (got.terms.length > 1) {
      for (const t of got.terms) {
        const less = got.scores.map((x, i) => x - t.values[i]);
        const d = softmaxDiff(less, want.attn, T);
        assert.ok(d > 1e-3, `without ${t.name} the softmax would still match (${d})`);
      }
    }
  });
}

// --layer N: DeBERTa's relative rows projected again for that layer (the
// forward pass leaves the last layer's), and a head switched off keeps the
// scores it computes (its probabilities are multiplied by 0 afterwards).
nativeTest('attend --scores --layer N is that layer of the full output; an ablated head keeps its scores', async () => {
  for (const name of ['deberta-v2', 'mpnet', 'modernbert']) {
    const ref = INDEX.models.find((m) => m.name === name);
    const bundle = convert(ref);
    const full = await scoresOf(bundle, ref);
    const { T, n_heads: H } = ref;
    const n = H * T * T;
    for (const layer of [0, 1]) {
      const one = await scoresOf(bundle, ref, ['--layer', String(layer)]);
      assert.deepEqual(Array.from(one.scores), Array.from(full.scores.subarray(layer * n, (layer + 1) * n)), `${name} layer ${layer}`);
      one.terms.forEach((t, k) => assert.deepEqual(Array.from(t.values), Array.from(full.terms[k].values.subarray(layer * n, (layer + 1) * n))));
    }
    const off = await scoresOf(bundle, ref, ['--ablate', '1:0']);
    const head = (a, l, h) => Array.from(a.subarray((l * H + h) * T * T, (l * H + h + 1) * T * T));
    assert.ok(head(off.attn, 1, 0).every((x) => x === 0), `${name}: the ablated head's attention is 0`);
    assert.deepEqual(head(off.scores, 1, 0), head(full.scores, 1, 0), `${name}: its scores are those it computes`);
  }
});

// A quantized bundle past 64 tokens makes q k^T on 13-bit integers
// (encoder.c bli_attn_product): the scores are made the same way.
nativeTest('q8 and q10 past 64 tokens: softmax(scores) is the engine\'s own attention', () => {
  const text = Array.from({ length: 12 }, (_, i) => `The ${['cat', 'dog', 'bird'][i % 3]} number ${i} sat on the mat.`).join(' ');
  for (const dtype of ['q8', 'q10']) {
    const bundle = path.join(ROOT, `build/models/all-minilm-l6-v2.${dtype}.blb`);
    if (!fs.existsSync(bundle)) { console.log(`  (no ${bundle}: make test-models)`); continue; }
    const r = spawnSync(BIN, ['attend', '--scores', '--layer', '3', bundle, text], { encoding: 'utf8', maxBuffer: 1 << 28 });
    assert.equal(r.status, 0, r.stderr);
    const j = JSON.parse(r.stdout);
    const T = j.tokens.length;
    assert.ok(T > 64, `${T} tokens`);
    const d = softmaxDiff(Float64Array.from(j.scores.flat(Infinity)), Float64Array.from(j.attentions.flat(Infinity)), T);
    console.log(`  all-MiniLM-L6-v2 ${dtype}, ${T} tokens: softmax(scores) vs attention ${d.toExponential(2)}`);
    assert.ok(d >= 0 && d <= 1e-6, `${dtype}: ${d}`);
  }
});

nativeTest('attend --scores refuses --npy, and its usage names it', () => {
  const ref = INDEX.models.find((m) => m.name === 'bert');
  const r = spawnSync(BIN, ['attend', '--scores', '--npy', tmp, convert(ref), 'hi'], { encoding: 'utf8' });
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /--scores prints JSON/);
  const u = spawnSync(BIN, [], { encoding: 'utf8' });
  assert.match(u.stderr + u.stdout, /attend .*\[--scores\]/);
});
