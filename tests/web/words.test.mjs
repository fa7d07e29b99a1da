// words.test.mjs — word level (Clark et al.'s rule) on Hugging Face
// tokenizations: tests/fixtures/tokenizer/uncased.jsonl.gz holds
// BertTokenizerFast's ids, offsets and word ids for every line of
// tests/corpus/tokenizer.jsonl. With offsets, a word is a whitespace-free
// stretch of the text minus its leading / trailing punctuation, so
// "didn't" (three HF word ids) is one word.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import zlib from 'node:zlib';
import { wordGroups, mergeMatrix, tokenAxis, isPunctToken } from '../../web/js/lib/data.js';

const root = new URL('../../', import.meta.url);
const corpus = fs.readFileSync(new URL('tests/corpus/tokenizer.jsonl', root), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l).text);
const rows = zlib.gunzipSync(fs.readFileSync(new URL('tests/fixtures/tokenizer/uncased.jsonl.gz', root))).toString('utf8')
  .split('\n').filter(Boolean).map((l) => JSON.parse(l));

/** Tokens rebuilt from the text and HF offsets / word ids ("##" for a
 *  piece that continues the same HF word). */
function tokensOf(text, r) {
  return r.offsets.map(([a, b], i) => {
    if (r.word_ids[i] === null) return i === 0 ? '[CLS]' : '[SEP]';
    const cont = i > 0 && r.word_ids[i - 1] === r.word_ids[i] && r.type_ids[i - 1] === r.type_ids[i];
    return (cont ? '##' : '') + text.slice(a, b).toLowerCase();
  });
}

const PUNCT = /[\p{P}!-/:-@[-`{-~]/u;

/** Expected units of a plain ASCII text: per whitespace-separated chunk,
 *  each leading / trailing punctuation character alone, the middle as one. */
function expectedUnits(text) {
  const out = [];
  for (const chunk of text.split(/\s+/).filter(Boolean)) {
    const cs = [...chunk.toLowerCase()];
    let a = 0;
    let b = cs.length;
    while (a < b && PUNCT.test(cs[a])) a++;
    while (b > a && PUNCT.test(cs[b - 1])) b--;
    out.push(...cs.slice(0, a));
    if (a < b) out.push(cs.slice(a, b).join(''));
    out.push(...cs.slice(b));
  }
  return out;
}

test('"didn\'t": three Hugging Face word ids, one word with offsets', () => {
  const i = corpus.findIndex((t) => t.includes("didn't"));
  const r = rows[i];
  const tokens = tokensOf(corpus[i], r);
  const k = tokens.indexOf('didn');
  assert.deepEqual(tokens.slice(k, k + 3), ['didn', "'", 't']);
  assert.equal(new Set(r.word_ids.slice(k, k + 3)).size, 3, 'HF gives three word ids');
  const byIds = wordGroups(tokens, r.type_ids, r.word_ids.map((w) => (w === null ? -1 : w)));
  assert.ok(!byIds.some((g) => g.label === "didn't"), 'word ids alone keep it apart');
  const groups = wordGroups(tokens, r.type_ids, r.word_ids.map((w) => (w === null ? -1 : w)), r.offsets);
  const g = groups.find((x) => x.label === "didn't");
  assert.ok(g, 'one word');
  assert.deepEqual(g.members, [k, k + 1, k + 2]);
  // The sentence's full stop and semicolon stay words of their own.
  assert.ok(groups.some((x) => x.label === ';') && groups.some((x) => x.label === '.'));
});

test('every plain ASCII corpus line: words are the text\'s whitespace-separated words, punctuation at their edges apart', () => {
  let checked = 0;
  let contractions = 0;
  for (let i = 0; i < corpus.length; i++) {
    const text = corpus[i];
    const r = rows[i];
    if (!/^[\x20-\x7e]+$/.test(text) || r.truncated || r.type_ids.includes(1)) continue;
    if (/\[(cls|sep|unk|pad|mask)\]/i.test(text)) continue; // special tokens written in the text
    const tokens = tokensOf(text, r);
    const ids = r.word_ids.map((w) => (w === null ? -1 : w));
    const groups = wordGroups(tokens, r.type_ids, ids, r.offsets);
    const labels = groups.filter((g) => !g.special).map((g) => g.label);
    assert.deepEqual(labels, expectedUnits(text), `line ${i + 1}: ${text.slice(0, 80)}`);
    // Every token in exactly one group, in order.
    assert.deepEqual(groups.flatMap((g) => g.members), tokens.map((_, j) => j));
    contractions += groups.filter((g) => /\w'\w/.test(g.label)).length;
    checked++;
  }
  assert.ok(checked > 300, `${checked} lines checked`);
  assert.ok(contractions > 0, 'contractions seen');
});

test('BERT punctuation rule for tokens', () => {
  for (const t of ['.', "'", '(', '—', '¿', '...', '$', '`']) assert.ok(isPunctToken(t), t);
  for (const t of ['a', "don't", '1', '', '[SEP]'.slice(1, 4)]) assert.ok(!isPunctToken(t), t);
});

test('Clark et al.\'s rule on a merged word: TO the word = sum over its pieces, FROM it = mean over its pieces', () => {
  const i = corpus.findIndex((t) => t.includes("didn't"));
  const r = rows[i];
  const tokens = tokensOf(corpus[i], r);
  const T = tokens.length;
  const wordIds = r.word_ids.map((w) => (w === null ? -1 : w));
  // A row-stochastic matrix with distinct values.
  const m = new Float32Array(T * T);
  for (let a = 0; a < T; a++) {
    let s = 0;
    for (let b = 0; b < T; b++) { m[a * T + b] = 1 + ((a * 7 + b * 13) % 11); s += m[a * T + b]; }
    for (let b = 0; b < T; b++) m[a * T + b] /= s;
  }
  const axis = tokenAxis({ T, tokens, typeIds: r.type_ids, wordIds, offsets: r.offsets }, { words: true });
  const w = axis.labels.indexOf("didn't");
  const v = axis.labels.indexOf('fox');
  const K = axis.K;
  const out = axis.transform(m);
  const k = tokens.indexOf('didn');
  const fox = tokens.indexOf('fox');
  const to = m[fox * T + k] + m[fox * T + k + 1] + m[fox * T + k + 2];
  const from = (m[k * T + fox] + m[(k + 1) * T + fox] + m[(k + 2) * T + fox]) / 3;
  assert.ok(Math.abs(out[v * K + w] - to) < 1e-6, 'to the word: sum');
  assert.ok(Math.abs(out[w * K + v] - from) < 1e-6, 'from the word: mean');
  for (let a = 0; a < K; a++) {
    let s = 0;
    for (let b = 0; b < K; b++) s += out[a * K + b];
    assert.ok(Math.abs(s - 1) < 1e-5, 'rows still sum to 1');
  }
  assert.equal(mergeMatrix(m, T, wordGroups(tokens, r.type_ids, wordIds, r.offsets)).length, K * K);
});
