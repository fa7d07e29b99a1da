// What the views say about what they show (issue 26 item 5): the head the
// neuron view opens on from a cell of all heads (mean heatmap, rollout), the
// label-stride note, and the sentence of an empty view. Checked against
// Hugging Face's attention (tests/web/fixtures/minilm-pair.json).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { strongestHead, headReason, strideNote, emptySentence } from '../../web/js/views/view_notes.js';
import { descriptor as neuron } from '../../web/js/views/neuron.js';
import { heatmapLayout } from '../../web/js/views/layout.js';
import { tokenAxis } from '../../web/js/lib/data.js';

const fx = JSON.parse(readFileSync(new URL('./fixtures/minilm-pair.json', import.meta.url)));
const { T, H, d } = fx;
const L3 = fx.layers.indexOf(fx.qk_layer);
const attn = [];
attn[fx.qk_layer] = Float32Array.from(fx.attentions[L3]);
const q = []; q[fx.qk_layer] = Float32Array.from(fx.queries);
const k = []; k[fx.qk_layer] = Float32Array.from(fx.keys);
const run = { tokens: fx.tokens, typeIds: fx.type_ids, wordIds: fx.word_ids, T, H, d, L: 6, attn, q, k };
const hf = (h, i, j) => fx.attentions[L3][(h * T + i) * T + j]; // HF's weight, as read from the JSON
const state = { view: 'heatmap', layer: fx.qk_layer, head: 'mean', query: 0, key: null, mode: 'attn', hide: false, renorm: true, words: false };

test('from a mean cell, the neuron view opens on the head that gives the cell the most (every cell of HF layer 3)', () => {
  let notZero = 0;
  for (let i = 0; i < T; i++) {
    for (let j = 0; j < T; j++) {
      const { patch } = neuron.enter(state, { query: i, key: j, run, allHeads: true });
      let top = -1;
      for (let h = 0; h < H; h++) top = Math.max(top, hf(h, i, j));
      assert.equal(hf(patch.head, i, j), top, `cell ${i} → ${j}: head ${patch.head}`);
      assert.equal(patch.key, j);
      if (patch.head !== 0) notZero++;
    }
  }
  assert.ok(notZero > T, `most cells' strongest head is not head 0 (${notZero})`);
});

test('from a row (no key): the row\'s strongest key of all heads, and its strongest head', () => {
  const { patch } = neuron.enter(state, { query: 5, key: null, run, allHeads: true });
  const sums = Array.from({ length: T }, (_, j) => { let s = 0; for (let h = 0; h < H; h++) s += hf(h, 5, j); return s; });
  assert.equal(patch.key, sums.indexOf(Math.max(...sums)));
  assert.equal(patch.head, strongestHead(attn[fx.qk_layer], H, T, 5, patch.key).head);
});

test('from one head (not all heads), the head is kept and no key is held', () => {
  assert.deepEqual(neuron.enter({ ...state, head: 7 }, { query: 3, key: 4, run, allHeads: false }).patch, { key: null });
});

// The scores of one head, as the page attaches them (protocol.js
// withScores): BERT's one term, q·k/√d of HF's q, k (a stand-in: the
// engine's are tests/scores.test.mjs's).
function withScores(r, layer, head) {
  const m = T * d;
  const s = new Float32Array(T * T);
  for (let i = 0; i < T; i++) for (let j = 0; j < T; j++) {
    let dot = 0;
    for (let c = 0; c < d; c++) dot += r.q[layer][head * m + i * d + c] * r.k[layer][head * m + j * d + c];
    s[i * T + j] = dot / Math.sqrt(d);
  }
  return { ...r, scores: { layer, head, query: null, window: -1, scores: s, terms: [{ name: 'q·k/√d', abbr: 'q·k/√d', about: 'the dot product over √d', values: s }] } };
}

test('the neuron view says why it shows its head, and what the strongest is when another is picked', () => {
  const i = 4; const j = 9;
  const best = neuron.enter(state, { query: i, key: j, run, allHeads: true }).patch;
  const axis = tokenAxis(run, {});
  const s = { ...state, view: 'neuron', head: best.head, query: i, key: j };
  const notes = neuron.prepare(withScores(run, fx.qk_layer, best.head), s, { axis }).notes.join(' ');
  assert.match(notes, new RegExp(`Layer ${fx.qk_layer} head ${best.head}: the head that gives this cell \\(query ${i} .* → key ${j} .*\\) the most attention \\(${hf(best.head, i, j).toFixed(3)}\\)`));
  const other = (best.head + 1) % H;
  const notes2 = neuron.prepare(withScores(run, fx.qk_layer, other), { ...s, head: other }, { axis }).notes.join(' ');
  assert.match(notes2, new RegExp(`Layer ${fx.qk_layer} head ${other} gives this cell .* attention ${hf(other, i, j).toFixed(3)}; head ${best.head} gives it the most`));
  assert.doesNotMatch(neuron.prepare(withScores(run, fx.qk_layer, best.head), { ...s, key: null }, { axis }).notes.join(' '), /gives this cell/);
});

test('strongestHead: ties go to the lower head; a cell outside the matrix is refused', () => {
  const m = new Float32Array(3 * 2 * 2); m[(1 * 2 + 0) * 2 + 1] = 0.5; m[(2 * 2 + 0) * 2 + 1] = 0.5;
  assert.deepEqual(strongestHead(m, 3, 2, 0, 1), { head: 1, value: 0.5 });
  assert.throws(() => strongestHead(m, 3, 2, 0, 2), RangeError);
  assert.match(headReason({ layer: 1, head: 2, best: { head: 2, value: 0.5 }, value: 0.5, query: 0, key: 1 }), /^Layer 1 head 2: the head that gives this cell/);
});

test('stride note: the heatmap at 512 tokens labels every 4th token and says so', () => {
  const g = heatmapLayout({ K: 512, longestLabel: 8, width: 1200, height: null });
  assert.ok(g.step > 1, `step ${g.step}`);
  assert.equal(strideNote(g.step), `Every ${g.step === 2 ? '2nd' : g.step === 3 ? '3rd' : `${g.step}th`} token labelled; hover a cell for its token.`);
  assert.equal(strideNote(4), 'Every 4th token labelled; hover a cell for its token.');
  assert.equal(strideNote(2, 'a row'), 'Every 2nd token labelled; hover a row for its token.');
  assert.equal(strideNote(1), null);
  assert.equal(heatmapLayout({ K: 12, longestLabel: 8, width: 1200, height: null }).step, 1);
});

test('empty views: no words, or only specials hidden, gives a sentence saying what to type', () => {
  assert.match(emptySentence({ wordIds: [-1, -1], shown: 2, hide: false }), /no words.*only the special tokens.*Type a sentence/);
  assert.match(emptySentence({ wordIds: [-1, -1], shown: 0, hide: true }), /no words.*hidden\. Type a sentence/);
  assert.match(emptySentence({ wordIds: [-1, 0, -1], shown: 0, hide: true }), /no token is left/);
  // Special tokens typed in the text are its words: "[CLS] [SEP]" typed, hidden specials, still draws.
  const typed = { tokens: ['[CLS]', '[CLS]', '[SEP]', '[SEP]'], typeIds: [0, 0, 0, 0], wordIds: [-1, 0, 1, -1], special: [1, 1, 1, 1], T: 4 };
  assert.equal(emptySentence({ wordIds: typed.wordIds, shown: tokenAxis(typed, { hideSpecials: true }).K, hide: true }), null);
  assert.equal(emptySentence({ wordIds: fx.word_ids, shown: T, hide: false }), null);
});

test('the Predictions view with no words (empty or only spaces) asks for a sentence; with words, for a mask', async () => {
  const { emptyLine } = await import('../../web/js/views/predictions.js');
  // the run of whitespace-only text: [CLS] [SEP] only (word ids -1), as the engine tokenizes it
  const blank = { tokens: ['[CLS]', '[SEP]'], wordIds: [-1, -1] };
  assert.match(emptyLine(blank, '[MASK]'), /no words yet .* Type a sentence with \[MASK\]/);
  assert.match(emptyLine({ tokens: fx.tokens, wordIds: fx.word_ids }, '<mask>'), /^No masked token yet: type <mask> in the text, or click a word/);
  assert.match(emptyLine({ tokens: ['[CLS]'] }, '[MASK]'), /^No masked token yet/, 'a snapshot without word ids');
});
