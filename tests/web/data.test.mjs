// Data the views derive, checked against Hugging Face reference outputs
// (tests/web/fixtures/minilm-pair.json, written by tests/web/make_fixture.py).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  headMatrix, headMean, segments, pairAllows, wordGroups, mergeMatrix, selectTokens,
  tokenAxis, rowSums, neuronColumns, poolMatrix, softmax, maxOf,
  pairBoundary, strongestLinks, softmaxBar, clipRange,
} from '../../web/js/lib/data.js';
import { headLines, rowShareThresholds } from '../../web/js/lib/lines.js';

const fx = JSON.parse(readFileSync(new URL('./fixtures/minilm-pair.json', import.meta.url)));
const { T, H, d } = fx;
const layer0 = Float32Array.from(fx.attentions[0]);
const run = {
  tokens: fx.tokens, typeIds: fx.type_ids, wordIds: fx.word_ids, T, H, d, L: 1, attn: [layer0],
};

function close(a, b, tol, what) {
  assert.ok(Math.abs(a - b) <= tol, `${what}: ${a} vs ${b}`);
}

test('head mean equals torch mean over heads', () => {
  for (let li = 0; li < fx.layers.length; li++) {
    const m = headMean(Float32Array.from(fx.attentions[li]), H, T);
    const ref = fx.head_mean[li];
    assert.equal(m.length, T * T);
    for (let i = 0; i < m.length; i++) close(m[i], ref[i], 1e-6, `layer ${fx.layers[li]} cell ${i}`);
    const viaHead = headMatrix(Float32Array.from(fx.attentions[li]), H, T, 'mean');
    assert.deepEqual(viaHead, m);
  }
});

test('single head slice: rows are the HF rows and sum to 1', () => {
  const h5 = headMatrix(layer0, H, T, 5);
  for (let j = 0; j < T; j++) close(h5[3 * T + j], Math.fround(fx.attentions[0][5 * T * T + 3 * T + j]), 0, 'slice');
  for (const s of rowSums(h5, T)) close(s, 1, 1e-5, 'row sum');
  assert.throws(() => headMatrix(layer0, H, T, H));
});

test('segments follow token type ids', () => {
  const segs = segments(fx.type_ids);
  const firstB = fx.tokens.indexOf('[SEP]') + 1;
  assert.equal(segs[firstB - 1], 'A');
  assert.equal(segs[firstB], 'B');
  assert.equal(segs.filter((s) => s === 'B').length, fx.type_ids.filter((t) => t === 1).length);
});

test('pair filters split every line into exactly one of A->A, A->B, B->A, B->B', () => {
  const segs = segments(fx.type_ids);
  const mats = [headMatrix(layer0, H, T, 0), headMatrix(layer0, H, T, 7)];
  const all = headLines(mats, T, segs, { minWeight: 0 });
  assert.equal(all.length, 2 * T * T);
  const parts = ['aa', 'ab', 'ba', 'bb'].map((f) => headLines(mats, T, segs, { filter: f, minWeight: 0 }));
  assert.equal(parts.reduce((s, p) => s + p.length, 0), all.length);
  for (const l of parts[1]) assert.ok(segs[l.i] === 'A' && segs[l.j] === 'B');
  for (const l of parts[2]) assert.ok(segs[l.i] === 'B' && segs[l.j] === 'A');
  assert.equal(pairAllows('bb', 'B', 'B'), true);
  assert.equal(pairAllows('bb', 'A', 'B'), false);
  assert.throws(() => pairAllows('xx', 'A', 'A'));
});

test('head lines: threshold, focus and cap keep the heaviest lines', () => {
  const segs = segments(fx.type_ids);
  const m = headMatrix(layer0, H, T, 2);
  const thr = headLines([m], T, segs, { minWeight: 0.1 });
  let expected = 0;
  for (const v of m) if (v >= 0.1) expected++;
  assert.equal(thr.length, expected);
  const focus = headLines([m], T, segs, { minWeight: 0, focus: { side: 'left', index: 4 } });
  assert.equal(focus.length, T);
  assert.ok(focus.every((l) => l.i === 4));
  const capped = headLines([m], T, segs, { minWeight: 0, maxLines: 10 });
  assert.equal(capped.length, 10);
  const sorted = Array.from(m).sort((a, b) => b - a);
  close(capped[9].w, sorted[9], 0, 'tenth heaviest');
});

test('head lines equal the plain definition (every candidate, stable sort by weight, cut) with caps, ties, filters, focus and pruning', () => {
  // The plain definition headLines once was: one object per candidate,
  // then a stable sort of all of them when there are more than maxLines.
  const plain = (mats, K, segs, { filter = 'all', focus = null, minWeight = 0.01, maxLines = 20000, share = 1 }) => {
    const out = [];
    mats.forEach((m, h) => {
      if (!m) return;
      const thr = share < 1 ? rowShareThresholds(m, K, share) : null;
      for (let i = 0; i < K; i++) {
        for (let j = 0; j < K; j++) {
          if (focus && (focus.side === 'left' ? focus.index !== i : focus.index !== j)) continue;
          const w = m[i * K + j];
          if (thr ? (w < thr[i] || w <= 0) : w < minWeight) continue;
          if (!pairAllows(filter, segs[i], segs[j])) continue;
          out.push({ head: h, i, j, w });
        }
      }
    });
    if (out.length > maxLines) { out.sort((a, b) => b.w - a.w); out.length = maxLines; }
    return out;
  };
  const segs = segments(fx.type_ids);
  const mats = Array.from({ length: H }, (_, h) => (h % 3 === 1 ? null : headMatrix(layer0, H, T, h)));
  // Ties across heads and bins: a copy of head 0 rounded to 2 decimals.
  mats[1] = Float32Array.from(mats[0], (v) => Math.round(v * 100) / 100);
  const cases = [
    { minWeight: 0 }, { minWeight: 0.02, maxLines: 50 }, { minWeight: 0, maxLines: 1 }, { minWeight: 0.01, maxLines: 7 },
    { filter: 'ab', minWeight: 0, maxLines: 40 }, { focus: { side: 'right', index: 3 }, minWeight: 0, maxLines: 9 },
    { focus: { side: 'left', index: T - 1 }, minWeight: 0.001 }, { focus: { side: 'left', index: T }, minWeight: 0 },
    { share: 0.6, maxLines: 100 }, { share: 0.9, filter: 'ba' }, { minWeight: 0.05, maxLines: 0 },
  ];
  for (const opts of cases) {
    assert.deepEqual(headLines(mats, T, segs, opts), plain(mats, T, segs, opts), JSON.stringify(opts));
  }
  const thresholds = mats.map((m) => m && rowShareThresholds(m, T, 0.6));
  assert.deepEqual(headLines(mats, T, segs, { share: 0.6, maxLines: 100, thresholds }), plain(mats, T, segs, { share: 0.6, maxLines: 100 }), 'thresholds given');
});

test('word groups rebuild the words of the original texts', () => {
  const groups = wordGroups(fx.tokens, fx.type_ids, fx.word_ids);
  const words = (s) => s.toLowerCase().match(/\w+|[^\w\s]/g);
  const expected = ['[CLS]', ...words(fx.text), '[SEP]', ...words(fx.text_b), '[SEP]'];
  assert.deepEqual(groups.map((g) => g.label), expected);
  const unb = groups.find((g) => g.label === 'unbelievably');
  assert.deepEqual(unb.members.map((i) => fx.tokens[i]), ['un', '##bel', '##ie', '##va', '##bly']);
  assert.equal(groups.filter((g) => g.special).length, 3);
});

test('word merging: mean over query pieces, sum over key pieces, rows still sum to 1', () => {
  const m = headMatrix(layer0, H, T, 4);
  const groups = wordGroups(fx.tokens, fx.type_ids, fx.word_ids);
  const G = groups.length;
  const w = mergeMatrix(m, T, groups);
  assert.equal(w.length, G * G);
  for (const s of rowSums(w, G)) close(s, 1, 1e-5, 'merged row sum');
  const a = groups.findIndex((g) => g.label === 'unbelievably');
  const b = groups.findIndex((g) => g.label === 'soundly');
  let ref = 0;
  for (const i of groups[a].members) for (const j of groups[b].members) ref += m[i * T + j];
  ref /= groups[a].members.length;
  close(w[a * G + b], ref, 1e-6, 'unbelievably -> soundly');
});

test('hiding [CLS]/[SEP] with and without renormalization', () => {
  const m = headMatrix(layer0, H, T, 9);
  const keep = fx.word_ids.map((w, i) => (w >= 0 ? i : -1)).filter((i) => i >= 0);
  const raw = selectTokens(m, T, keep, false);
  const K = keep.length;
  assert.equal(K, T - 3);
  for (let a = 0; a < K; a++) {
    let special = 0;
    for (let j = 0; j < T; j++) if (fx.word_ids[j] < 0) special += m[keep[a] * T + j];
    close(rowSums(raw, K)[a], 1 - special, 1e-5, 'unrenormalized row = 1 - mass on specials');
    close(raw[a * K + 2], m[keep[a] * T + keep[2]], 0, 'value kept');
  }
  const ren = selectTokens(m, T, keep, true);
  for (const s of rowSums(ren, K)) close(s, 1, 1e-5, 'renormalized row sum');
  close(ren[0] / ren[1], raw[0] / raw[1], 1e-5, 'ratios kept');
  const axis = tokenAxis(run, { hideSpecials: true, renorm: true });
  assert.equal(axis.K, K);
  assert.ok(!axis.labels.includes('[CLS]') && !axis.labels.includes('[SEP]'));
  assert.deepEqual(axis.transform(m), ren);
});

test('token axis combines words and hiding', () => {
  const axis = tokenAxis(run, { words: true, hideSpecials: true, renorm: false });
  assert.equal(axis.labels[0], 'the');
  assert.ok(axis.labels.includes('unbelievably'));
  assert.equal(axis.K, axis.labels.length);
  const out = axis.transform(headMatrix(layer0, H, T, 0));
  assert.equal(out.length, axis.K * axis.K);
  const full = tokenAxis(run, {});
  const m = headMatrix(layer0, H, T, 0);
  assert.equal(full.transform(m), m, 'identity axis returns the matrix itself');
});

test('neuron view: softmax(q.k/sqrt(d)) from HF q/k equals the HF attention row', () => {
  const q = Float32Array.from(fx.queries);
  const k = Float32Array.from(fx.keys);
  const att = fx.qk_attention;
  let worst = 0;
  for (let h = 0; h < H; h++) {
    for (let i = 0; i < T; i++) {
      const c = neuronColumns(q, k, H, T, d, h, i);
      assert.equal(c.q.length, d);
      assert.equal(c.keys.length, T);
      assert.equal(c.scale, Math.sqrt(d));
      for (let j = 0; j < T; j++) {
        const dot = c.products[j].reduce((s, x) => s + x, 0);
        close(c.dots[j], dot, 1e-9, 'dot = sum of products');
        close(c.scaled[j], c.dots[j] / Math.sqrt(d), 1e-12, 'scaled');
        worst = Math.max(worst, Math.abs(c.softmax[j] - att[(h * T + i) * T + j]));
      }
    }
  }
  assert.ok(worst < 2e-5, `largest softmax difference ${worst}`);
  assert.throws(() => neuronColumns(q, k, H, T, d, 0, T));
});

test('softmax is stable for large inputs', () => {
  const s = softmax([1000, 1000, 999]);
  close(s[0], s[1], 0, 'equal');
  close(s.reduce((a, b) => a + b, 0), 1, 1e-12, 'sum');
});

test('thumbnail pooling keeps peaks and sizes', () => {
  const m = headMatrix(layer0, H, T, 1);
  const p = poolMatrix(m, T, 8);
  assert.equal(p.length, 64);
  close(maxOf(p), maxOf(m), 0, 'max survives max-pooling');
  // Every pooled cell is the largest of the cells mapped onto it (row i to
  // floor(i S / T), column j likewise), sizes that do and do not divide T.
  for (const S of [1, 3, 7, 8, T - 1]) {
    const q = poolMatrix(m, T, S);
    for (let y = 0; y < S; y++) {
      for (let x = 0; x < S; x++) {
        let want = 0;
        for (let i = 0; i < T; i++) for (let j = 0; j < T; j++) if (Math.floor((i * S) / T) === y && Math.floor((j * S) / T) === x) want = Math.max(want, m[i * T + j]);
        assert.equal(q[y * S + x], want, `S ${S} cell ${y},${x}`);
      }
    }
  }
  const up = poolMatrix(m, T, 44);
  close(up[0], m[0], 0, 'upsampled corner');
  close(up[44 * 44 - 1], m[T * T - 1], 0, 'upsampled far corner');
});

test('SIMD probe: validates where wasm SIMD exists and depends on the v128 type', async () => {
  const { hasWasmSimd } = await import('../../web/js/engine/engine.js');
  // Node 20 implements wasm SIMD128, so the probe must validate here.
  assert.equal(hasWasmSimd(), true);
  // The same module claiming an i32 result is invalid: the probe really
  // exercises a SIMD instruction rather than validating trivially.
  const probe = new Uint8Array([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, 1, 5, 1, 0x60, 0, 1, 0x7f, 3, 2, 1, 0,
    0x0a, 8, 1, 6, 0, 0x41, 0, 0xfd, 0x0f, 0x0b]);
  assert.equal(WebAssembly.validate(probe), false);
  probe[14] = 0x7b;
  assert.equal(WebAssembly.validate(probe), true);
});

test('pair boundary: the first B token, with and without [CLS]/[SEP], with words merged', () => {
  const firstB = fx.type_ids.indexOf(1); // HF token type ids
  assert.equal(fx.tokens[firstB - 1], '[SEP]');
  const all = tokenAxis(run);
  assert.equal(pairBoundary(all.segs), firstB);
  const hidden = tokenAxis(run, { hideSpecials: true });
  const b = pairBoundary(hidden.segs);
  assert.equal(b, firstB - 2, '[CLS] and A\'s [SEP] are no longer shown');
  assert.equal(hidden.labels[b], fx.tokens[firstB], 'the same token starts B');
  assert.ok(hidden.labels.slice(0, b).every((l, i) => l === fx.tokens[i + 1]), 'A tokens before it');
  const words = tokenAxis(run, { words: true, hideSpecials: true });
  const bw = pairBoundary(words.segs);
  assert.equal(words.members[bw][0], firstB);
  assert.equal(pairBoundary(segments(fx.type_ids.map(() => 0))), -1, 'no pair, no boundary');
});

test('strongest links are the heaviest cells, heaviest first', () => {
  const m = headMatrix(layer0, H, T, 3);
  const top = strongestLinks(m, T, 10);
  assert.equal(top.length, 10);
  assert.equal(top[0].weight, maxOf(m));
  for (let i = 1; i < top.length; i++) assert.ok(top[i - 1].weight >= top[i].weight);
  for (const l of top) assert.equal(m[l.query * T + l.key], l.weight);
  const sorted = Array.from(m).sort((a, b) => b - a);
  assert.equal(top[9].weight, sorted[9]);
  // Ties keep reading order (row by row).
  const ties = strongestLinks(Float32Array.from([0.5, 0.2, 0.5, 0.5]), 2, 2);
  assert.deepEqual(ties.map((l) => [l.query, l.key]), [[0, 0], [1, 0]]);
  assert.equal(strongestLinks(new Float32Array(4), 2, 10).length, 4, 'never more links than cells');
});

test('softmax bars use a fixed 0..1 scale', () => {
  assert.equal(softmaxBar(0.228, 80), 0.228 * 80, 'a weight of 0.228 is 0.228 of the bar, whatever else is shown');
  assert.equal(softmaxBar(1, 80), 80);
  assert.equal(softmaxBar(1.2, 80), 80);
  assert.equal(softmaxBar(-0.1, 80), 0);
});

test('diverging scale range: the 98th percentile of |v| and the share it clips', () => {
  const v = Array.from({ length: 100 }, (_, i) => (i % 2 ? 1 : -1) * (i + 1)); // |v| = 1..100
  const r = clipRange(v);
  close(r.limit, 98.02, 1e-9, 'linear-interpolated 98th percentile');
  assert.equal(r.clipped, 0.02);
  assert.equal(r.max, 100);
  const cols = neuronColumns(Float32Array.from(fx.queries), Float32Array.from(fx.keys), H, T, d, 5, 8);
  const p = clipRange(cols.products.flat());
  assert.ok(p.limit > 0 && p.limit <= p.max);
});
