// neuron_terms.test.mjs — what the neuron view (views/neuron.js prepare)
// makes of a run's scores (protocol.js withScores) and what its exports
// (lib/export_data.js) carry, on Hugging Face's own scores and attention
// (tests/fixtures/scores/, make.py there): a DeBERTa (three terms and their
// sum) and a ModernBERT sliding-window layer (masked keys). The engine's
// numbers against these are tests/scores.test.mjs's; the page's against the
// CLI, tests/browser/neuron_terms.scenarios.mjs's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { descriptor as neuron } from '../../web/js/views/neuron.js';
import { numberColumns } from '../../web/js/views/neuron_rows.js';
import { tokenAxis } from '../../web/js/lib/data.js';
import { toCSV, toJSON } from '../../web/js/lib/export_data.js';
import { viewById } from '../../web/js/views/index.js';

const shownMatrices = (run, s) => viewById(s.view).shown(run, s); // (the view's own export)

const FIX = path.join(path.dirname(new URL(import.meta.url).pathname), '../fixtures/scores');
const INDEX = JSON.parse(fs.readFileSync(path.join(FIX, 'index.json'), 'utf8'));
const NAMES = { 'q·k/√d': 'q·k/√d', c2c: 'content-to-content', c2p: 'content-to-position', p2c: 'position-to-content' };

/** A page run of fixture model `name` with the scores of (layer, head)
 *  attached as the worker's answer would be. */
function runOf(name, layer, head, window = -1) {
  const ref = INDEX.models.find((m) => m.name === name);
  const bin = fs.readFileSync(path.join(FIX, ref.bin));
  const arr = (e) => new Float32Array(bin.buffer.slice(bin.byteOffset + e.offset, bin.byteOffset + e.offset + 4 * e.shape.reduce((a, b) => a * b, 1)));
  const { T, n_layers: L, n_heads: H } = ref;
  const n = H * T * T;
  const attnAll = arr(ref.attn);
  const attn = Array.from({ length: L }, (_, l) => attnAll.slice(l * n, (l + 1) * n));
  const d = 8;
  const zeros = () => Array.from({ length: L }, () => new Float32Array(H * T * d));
  const one = (a) => a.slice((layer * H + head) * T * T, (layer * H + head + 1) * T * T);
  const terms = ref.terms.map((t) => ({ name: NAMES[t.abbr], abbr: t.abbr, about: `what ${t.abbr} adds`, values: one(arr(t)) }));
  const scores = new Float32Array(T * T);
  for (const t of terms) t.values.forEach((v, i) => { scores[i] += v; });
  return {
    ref, run: {
      tokens: ref.tokens, typeIds: ref.type_ids, wordIds: ref.tokens.map((_, i) => (i === 0 || i === T - 1 ? -1 : i)), T, L, H, d,
      attn, norms: null, q: zeros(), k: zeros(), mask: null, scores: { layer, head, query: null, window, scores, terms },
    },
  };
}

const state = { view: 'neuron', layer: 1, head: 2, query: 4, key: null, mode: 'attn', hide: false, renorm: true, words: false, text: 'a', text_b: 'b' };

test('DeBERTa: one column per term, then their sum; the softmax column is the attention row; the note names each term', () => {
  const { run } = runOf('deberta-v2', 1, 2);
  const data = neuron.prepare(run, state, { axis: tokenAxis(run, {}) });
  const { T } = run;
  const row = run.attn[1].subarray((2 * T + 4) * T, (2 * T + 5) * T);
  assert.deepEqual(data.weights, Array.from(row), 'the softmax column is the attention row, value for value');
  assert.deepEqual(numberColumns(data).map((c) => c.abbr), ['c2c', 'c2p', 'p2c', 'score']);
  // softmax of the score column is the attention row (HF's scores, HF's attention)
  const m = Math.max(...data.score);
  const e = data.score.map((v) => Math.exp(v - m));
  const sum = e.reduce((a, b) => a + b, 0);
  e.forEach((v, j) => assert.ok(Math.abs(v / sum - row[j]) < 1e-6, `key ${j}`));
  const notes = data.notes.join(' ');
  assert.match(notes, /Each key's score is the sum of 3 terms: content-to-content \(c2c\), what c2c adds; content-to-position \(c2p\), what c2p adds; position-to-content \(p2c\), what p2c adds/);
  assert.match(notes, /q × k: .* add up to q · k, which c2c divides by its scale/);
  assert.match(notes, /The softmax of the scores over all \d+ keys is exactly this head's attention row/);
  assert.doesNotMatch(notes, /masked|switched off/);
});

test('ModernBERT sliding-window layer: masked keys are NaN in every column, their weight 0, and the note says why', () => {
  const { run } = runOf('modernbert', 1, 2, 8);
  const data = neuron.prepare(run, { ...state, query: 1 }, { axis: tokenAxis(run, {}) });
  assert.deepEqual(numberColumns(data).map((c) => c.abbr), ['q·k/√d'], 'one term: no separate sum');
  const masked = data.score.map((v) => Number.isNaN(v));
  assert.ok(masked.some(Boolean) && !masked.every(Boolean));
  data.weights.forEach((w, j) => assert.equal(w === 0, masked[j], `key ${j}: weight ${w}, masked ${masked[j]}`));
  masked.forEach((x, j) => assert.equal(x, Math.abs(j - 1) > 8, `key ${j}: masked exactly outside the window`));
  const notes = data.notes.join(' ');
  assert.match(notes, /sliding window: keys more than 8 tokens from the query are masked \(left out of the softmax, weight exactly 0\); \d+ of the \d+ keys here/);
  assert.match(notes, new RegExp(`The softmax of the scores over the ${masked.filter((x) => !x).length} keys left in is exactly this head's attention row`));
  // a switched-off head: its attention row is 0, and the note says so
  const off = { ...run, mask: [[1, 2]], attn: run.attn.map((a, l) => (l === 1 ? new Float32Array(a.length) : a)) };
  const offNotes = neuron.prepare(off, { ...state, query: 1 }, { axis: tokenAxis(off, {}) }).notes.join(' ');
  assert.match(offNotes, /This head is switched off: the model multiplies its probabilities by 0 after the softmax/);
  assert.throws(() => neuron.prepare(run, { ...state, head: 3 }, { axis: tokenAxis(run, {}) }), /scores of layer 1, head 3 are missing/);
});

test('exports carry each term and the score; a masked key is empty in CSV, null in JSON', () => {
  const { run } = runOf('modernbert', 1, 2, 8);
  const shown = shownMatrices(run, { ...state, query: 1 });
  assert.deepEqual(shown.blocks.map((b) => b.what), [undefined, 'score term q·k/√d: what q·k/√d adds', 'score (the softmax\'s input)']);
  const T = run.T;
  const json = JSON.parse(toJSON(shown));
  const scores = json.blocks[2].values[0];
  scores.forEach((v, j) => assert.equal(v === null, Math.abs(j - 1) > 8, `key ${j}`));
  assert.equal(json.blocks[2].values_are, 'score (the softmax\'s input)');
  const csv = toCSV(shown).split('\r\n');
  const scoreLine = csv.find((l, i) => csv[i - 1] && csv[i - 1].startsWith('layer 1 head 2 query 1 score (the softmax'));
  const fields = scoreLine.split(',').slice(1);
  assert.equal(fields.length, T);
  fields.forEach((f, j) => assert.equal(f === '', Math.abs(j - 1) > 8, `CSV key ${j}: "${f}"`));
  // a run without the head's scores exports the attention row alone
  assert.equal(shownMatrices({ ...run, scores: null }, { ...state, query: 1 }).blocks.length, 1);
});
