// The Predictions view's record of the words it masked (was=,
// web/js/lib/predict_was.js): parsed and written back, refused when
// malformed, and masking then unmasking a token gives the text back exactly,
// also where the tokenizer's offsets take in the space before a word
// (DeBERTa-v3, ModernBERT: offsets as Hugging Face's tokenizers give them).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseWas, formatWas, wasPairs, tokenSpan, maskPatch, unmaskPatch } from '../../web/js/lib/predict_was.js';

test('was= round trip; malformed values are refused', () => {
  const list = [{ at: 3, id: 1015, word: 'of' }, { at: 7, id: 12, word: 'a,b:c é' }];
  const raw = formatWas(list);
  assert.equal(raw, '3:1015:of,7:12:a%2Cb%3Ac%20%C3%A9');
  assert.deepEqual(parseWas(raw), list);
  assert.deepEqual(wasPairs(raw), [[3, 1015], [7, 12]]);
  assert.deepEqual(parseWas(''), []);
  for (const bad of ['3', '3:1', 'x:1:a', '3:1:', '3:1:a,3:2:b', '5:1:a,3:2:b', '3:99999999999:a', '3:1:%E0%A4%A', Array(65).fill(0).map((_, i) => `${i}:1:a`).join(',')]) {
    assert.equal(parseWas(bad), null, bad);
  }
});

// "The capital of France": tokens with offsets as BERT's and DeBERTa-v3's tokenizers give them
const TEXT = 'The capital of France';
const bert = { offsets: [[0, 0], [0, 3], [4, 11], [12, 14], [15, 21], [0, 0]], nA: 6 };
const deberta = { offsets: [[0, 0], [0, 3], [3, 11], [11, 14], [14, 21], [0, 0]], nA: 6 }; // "▁capital" takes in the space

test('masking a token and putting it back gives the text back, its space kept', () => {
  for (const [name, run] of [['bert', bert], ['deberta', deberta]]) {
    const s = { text: TEXT, text_b: '', was: '' };
    assert.deepEqual(tokenSpan(run, s, 3), { key: 'text', text: TEXT, from: 12, to: 14 }, name);
    assert.equal(tokenSpan(run, s, 0), null, `${name}: a special token has no characters`);
    const m = maskPatch(run, s, 3, '[MASK]', 1015);
    assert.equal(m.text, 'The capital [MASK] France', name);
    assert.equal(m.was, '3:1015:of');
    // the next run has the mask at 3: its offsets cover "[MASK]" (with the space for DeBERTa)
    const after = { offsets: run.offsets.map((o, i) => (i === 3 ? [name === 'bert' ? 12 : 11, 18] : i === 4 ? [name === 'bert' ? 19 : 18, 25] : o)), nA: 6 };
    const u = unmaskPatch(after, { ...s, ...m }, 3);
    assert.deepEqual(u, { text: TEXT, was: '' }, name);
    assert.equal(unmaskPatch(after, { ...s, ...m }, 2), null, 'nothing was masked at 2');
  }
});

test('a token of sentence B is masked in text_b', () => {
  const run = { offsets: [[0, 0], [0, 2], [0, 0], [0, 5], [0, 0]], nA: 3 };
  const m = maskPatch(run, { text: 'Hi', text_b: 'there', was: '1:5:Hi' }, 3, '<mask>', 77);
  assert.deepEqual(m, { text_b: '<mask>', was: '1:5:Hi,3:77:there' });
});
