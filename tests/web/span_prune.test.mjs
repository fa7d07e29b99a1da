// span_prune.test.mjs — span selection (data.js spanAxis) and head-view
// pruning (rowShareThresholds, headLines share) on Hugging Face attention
// (tests/web/fixtures/minilm-pair.json).
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { tokenAxis, spanAxis, headMatrix, segments } from '../../web/js/lib/data.js';
import { rowShareThresholds, headLines } from '../../web/js/lib/lines.js';

const fx = JSON.parse(fs.readFileSync(new URL('./fixtures/minilm-pair.json', import.meta.url), 'utf8'));
const { T, H } = fx;
const run = { T, tokens: fx.tokens, typeIds: fx.type_ids, wordIds: fx.word_ids.map((w) => (w === null ? -1 : w)), offsets: null };
const m = headMatrix(Float32Array.from(fx.attentions[1]), H, T, 4);

test('span: its row sums the rows of its tokens (attention FROM the span), its column sums their columns (TO the span)', () => {
  const span = [2, 3, 4];
  const ax = spanAxis(tokenAxis(run, {}), span);
  assert.equal(ax.K, T - 2);
  assert.equal(ax.spanIndex, 2);
  assert.equal(ax.labels[2], `[${fx.tokens.slice(2, 5).join(' ')}]`);
  const out = ax.transform(m);
  const K = ax.K;
  const rawOf = (u) => ax.members[u];
  for (let a = 0; a < K; a++) {
    for (let b = 0; b < K; b++) {
      let ref = 0;
      for (const i of rawOf(a)) for (const j of rawOf(b)) ref += m[i * T + j];
      assert.ok(Math.abs(out[a * K + b] - ref) < 1e-6, `[${a}][${b}]`);
    }
  }
  // From the span: rows summed, so its row sums to the span's size.
  let rs = 0;
  for (let b = 0; b < K; b++) rs += out[2 * K + b];
  assert.ok(Math.abs(rs - 3) < 1e-5);
  assert.equal(spanAxis(tokenAxis(run, {}), null).K, T);
  assert.equal(spanAxis(tokenAxis(run, {}), [999]).K, T, 'tokens beyond the input: no span');
});

test('span with words merged and specials hidden: whole units join, order kept', () => {
  const base = tokenAxis(run, { words: true, hideSpecials: true });
  const un = base.labels.indexOf('unbelievably');
  const raw = base.members[un][1]; // one piece of the word
  const ax = spanAxis(base, [raw, base.members[un + 1][0]]);
  assert.equal(ax.K, base.K - 1);
  assert.deepEqual(ax.members[un], [...base.members[un], ...base.members[un + 1]]);
  assert.equal(ax.labels[un], `[unbelievably ${base.labels[un + 1]}]`);
});

test('pruning: per row, the strongest links carrying the share, no more', () => {
  for (const share of [0.5, 0.9, 0.99, 1]) {
    const thr = rowShareThresholds(m, T, share);
    for (let i = 0; i < T; i++) {
      const row = Array.from(m.subarray(i * T, (i + 1) * T));
      const total = row.reduce((a, b) => a + b, 0);
      const kept = row.filter((v) => v >= thr[i]);
      const keptSum = kept.reduce((a, b) => a + b, 0);
      assert.ok(keptSum >= share * total * (1 - 1e-5), `row ${i} share ${share}: kept ${keptSum} of ${total}`);
      // Without the weakest kept value the share is not reached (minimal).
      const less = row.filter((v) => v > thr[i]).reduce((a, b) => a + b, 0);
      assert.ok(less < share * total * (1 - 1e-6) || share === 1, `row ${i}: minimal`);
    }
  }
  const segs = segments(fx.type_ids);
  const all = headLines([m], T, segs, { minWeight: 0 });
  const p90 = headLines([m], T, segs, { share: 0.9 });
  const p50 = headLines([m], T, segs, { share: 0.5 });
  assert.ok(p50.length < p90.length && p90.length < all.length, `${p50.length} < ${p90.length} < ${all.length}`);
  const thr = rowShareThresholds(m, T, 0.9);
  for (const l of p90) assert.ok(l.w >= thr[l.i]);
  assert.deepEqual(rowShareThresholds(new Float32Array(4), 2, 0.9), Float32Array.from([Infinity, Infinity]));
});

test('CSV/JSON export of a heatmap with a span holds the span-merged matrix', async () => {
  const { viewById } = await import('../../web/js/views/index.js');
  const shownMatrices = (run, s) => viewById(s.view).shown(run, s); // (the view's own export)
  const r = { ...run, L: 2, H, attn: fx.attentions.map((a) => Float32Array.from(a)), norms: null };
  const s = { view: 'heatmap', mode: 'attn', layer: 1, head: 4, words: false, hide: false, renorm: true, span: [2, 3, 4], text: fx.text, text_b: fx.text_b };
  const shown = shownMatrices(r, s);
  const ax = spanAxis(tokenAxis(run, {}), [2, 3, 4]);
  assert.deepEqual(shown.blocks[0].rows, ax.labels);
  assert.deepEqual(shown.blocks[0].values, Array.from(ax.transform(m)));
});
