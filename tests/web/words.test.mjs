// words.test.mjs — "Merge subwords into words" and token labels, for every
// family's tokenizer, against Hugging Face (tests/fixtures/words/words.json.gz,
// made by tests/fixtures/words/make.py: AutoTokenizer on each folder of
// tests/fixtures/families/, BertTokenizerFast on all-MiniLM-L6-v2 and
// tiny-bert; tests/word_ids.test.mjs checks that the engine gives these very
// tokens and word ids).
//
// A run is built as the worker sends it (tokens, type ids, word ids with -1
// for the template's specials, nA, offsets, pieces, the model's special
// flags). Merged words must be Hugging Face's words (word_to_tokens: one
// unit per word of each sequence of a pair), never stretches of touching
// offsets (DeBERTa-v3's and ModernBERT's offsets include the space before a
// word, so a whole sentence touched: one "word"). Token labels must show a
// word start by a visible mark (not a thin space), a lone marker piece as
// that mark, never an empty label.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import zlib from 'node:zlib';
import { wordGroups, mergeMatrix, tokenAxis } from '../../web/js/lib/data.js';
import { WORD_START, pairTemplate, rawNote, runLabels, templateSpecials, tokenLabel, wordLabel } from '../../web/js/lib/tokens.js';

const REF = JSON.parse(zlib.gunzipSync(fs.readFileSync(new URL('../fixtures/words/words.json.gz', import.meta.url))).toString('utf8'));
const NAMES = Object.keys(REF.tokenizers);

/** The run the worker sends for row r of tokenizer tk (worker_run.js). */
function runOf(tk, r) {
  const T = r.ids.length;
  const b = r.sequence_ids.indexOf(1);
  return {
    T, tokens: r.tokens, typeIds: r.type_ids, wordIds: r.word_ids.map((w) => (w === null ? -1 : w)),
    nA: b < 0 ? T : b, offsets: r.offsets, pieces: tk.pieces, special: r.special,
  };
}

const MARKS = /[\u0120\u2581\u2009]/; // Ġ, ▁, and the thin space that stood for them

test('the corpus has what the checks need, for every tokenizer', () => {
  assert.ok(NAMES.includes('deberta-v2') && NAMES.includes('modernbert') && NAMES.includes('minilm'));
  for (const name of NAMES) {
    const rows = REF.tokenizers[name].rows;
    assert.ok(rows.some((r) => r.text_pair !== undefined), `${name}: pairs`);
    assert.ok(rows.some((r) => r.words.some(([, a, e]) => e - a > 1)), `${name}: words of several pieces`);
  }
  for (const name of ['roberta', 'modernbert', 'xlm-roberta', 'deberta-v2', 'albert']) {
    assert.ok(REF.tokenizers[name].rows.some((r) => r.tokens.includes('\u0120') || r.tokens.includes('\u2581')), `${name}: a lone marker piece`);
  }
});

for (const name of NAMES) {
  test(`${name}: merged words are Hugging Face's words (word_ids per sequence), specials alone`, () => {
    const tk = REF.tokenizers[name];
    let multi = 0;
    tk.rows.forEach((r, k) => {
      const run = runOf(tk, r);
      const axis = tokenAxis(run, { words: true });
      const where = `${name} line ${k + 1} ${JSON.stringify(r.text.slice(0, 50))}${r.text_pair !== undefined ? ` + ${JSON.stringify(r.text_pair)}` : ''}`;
      // Hugging Face's words, and each token the template added, in token order
      const want = [];
      r.words.forEach(([, a, e]) => want.push(Array.from({ length: e - a }, (_, i) => a + i)));
      r.word_ids.forEach((w, i) => { if (w === null) want.push([i]); });
      want.sort((x, y) => x[0] - y[0]);
      assert.deepEqual(axis.members, want, where);
      // hidden specials: exactly the words remain
      const words = tokenAxis(run, { words: true, hideSpecials: true });
      assert.equal(words.K, r.words.length, where);
      // a word's segment is its sequence
      words.members.forEach((m, u) => {
        const seq = r.sequence_ids[m[0]];
        assert.equal(words.segs[u], seq === 1 ? 'B' : 'A', where);
      });
      multi += r.words.filter(([, a, e]) => e - a > 1).length;
    });
    assert.ok(multi > 10, `${name}: ${multi} words of several pieces`);
  });

  test(`${name}: word labels spell the word, never empty; token labels show word starts, never empty`, () => {
    const tk = REF.tokenizers[name];
    for (const r of tk.rows) {
      const run = runOf(tk, r);
      const where = `${name}: ${JSON.stringify(r.text.slice(0, 50))}`;
      const words = tokenAxis(run, { words: true, hideSpecials: true });
      words.labels.forEach((l, u) => {
        assert.ok(l.length > 0 && /\S/.test(l), `${where}: empty label for ${JSON.stringify(words.raw[u])}`);
        assert.ok(!MARKS.test(l), `${where}: a marker in word ${JSON.stringify(l)}`);
      });
      // byte-level BPE has no normalizer: a word reads as the text at Hugging Face's word_to_chars
      if (tk.pieces === 'byte-level' && !r.truncated) {
        r.words.forEach(([seq, , , c0, c1], u) => {
          const src = seq === 1 ? r.text_pair : r.text;
          const text = src.slice(c0, c1).trim();
          // (one that starts with a combining mark, byte-level BPE's word of its own, is shown on a dotted circle)
          if (/^[^\p{Cc}\p{Cf}\s]/u.test(text)) assert.equal(words.labels[u], /^\p{M}/u.test(text) ? `\u25cc${text}` : text, where);
        });
      }
      const labels = runLabels(run);
      assert.deepEqual(labels, tokenAxis(run).labels, 'one labelling');
      r.tokens.forEach((t, i) => {
        const l = labels[i];
        assert.ok(l.length > 0 && /\S/.test(l), `${where}: empty label for token ${JSON.stringify(t)}`);
        if (r.special[i]) { assert.equal(l, t); return; }
        assert.ok(!MARKS.test(l), `${where}: ${JSON.stringify(t)} labelled ${JSON.stringify(l)}`);
        if (tk.pieces === 'wordpiece') assert.equal(l, t, 'WordPiece labels are the pieces ("##" marks a continuation)');
        else {
          const starts = t.startsWith(tk.pieces === 'byte-level' ? '\u0120' : '\u2581');
          assert.equal(l.startsWith(WORD_START), starts, `${where}: ${JSON.stringify(t)} -> ${JSON.stringify(l)}`);
          if (t === '\u0120' || t === '\u2581') assert.equal(l, WORD_START, 'a lone marker piece is the mark');
        }
      });
      // the labels of a byte-level text read as the text: the mark where its spaces are
      // (a typed mask token is shown as it is, without the space its lstrip takes)
      if (tk.pieces === 'byte-level' && r.text_pair === undefined && !r.truncated && /^[ -~]+$/.test(r.text) && !r.text.includes(tk.mask)) {
        const body = labels.filter((_, i) => r.word_ids[i] !== null).join('');
        assert.equal(body, r.text.replaceAll(' ', WORD_START), where);
      }
    }
  });
}

test('"The cat sat": word starts read as marks, not spaces ("␣c at ␣s at" is two words)', () => {
  for (const name of ['roberta', 'modernbert', 'deberta-v2', 'xlm-roberta', 'albert']) {
    const tk = REF.tokenizers[name];
    const r = tk.rows.find((x) => x.text.startsWith('The cat sat on the mat'));
    const labels = runLabels(runOf(tk, r));
    const i = r.tokens.indexOf(tk.pieces === 'byte-level' ? '\u0120c' : '\u2581c');
    assert.deepEqual(labels.slice(i, i + 4), [`${WORD_START}c`, 'at', `${WORD_START}s`, 'at'], name);
    assert.ok(!/\s/.test(WORD_START), 'the mark is not a space');
    const words = tokenAxis(runOf(tk, r), { words: true, hideSpecials: true }).labels;
    assert.deepEqual(words.slice(1, 3), ['cat', 'sat'], name);
  }
});

test('labels of single pieces: marks, whitespace signs, invisible characters, specials; the raw piece for tooltips', () => {
  assert.equal(tokenLabel('Ġthe', 'byte-level'), '␣the');
  assert.equal(tokenLabel('Ġ', 'byte-level'), '␣');
  assert.equal(tokenLabel('ĠĠ', 'byte-level'), '␣␣');
  assert.equal(tokenLabel('▁', 'metaspace'), '␣');
  assert.equal(tokenLabel('▁the', 'metaspace'), '␣the');
  assert.equal(tokenLabel('Ċ', 'byte-level'), '⏎');
  assert.equal(tokenLabel('ĉ', 'byte-level'), '⇥');
  assert.equal(tokenLabel('âĢį', 'byte-level'), 'U+200D', 'a zero-width joiner alone');
  assert.equal(tokenLabel('Ìģ', 'byte-level'), '\u25cc\u0301', 'an accent alone, on a dotted circle');
  assert.equal(tokenLabel('Âł', 'byte-level'), 'U+00A0', 'a no-break space');
  assert.equal(tokenLabel('##ing', 'wordpiece'), '##ing');
  assert.equal(tokenLabel('<mask>', 'byte-level', true), '<mask>');
  assert.equal(wordLabel(['Ġ'], 'byte-level'), '␣', 'a word of one space (the second of two)');
  assert.equal(wordLabel(['Ċ', 'Ċ'], 'byte-level'), '⏎⏎');
  assert.equal(wordLabel(['▁'], 'metaspace'), '␣');
  assert.equal(wordLabel(['Ġun', 'bel', 'ie'], 'byte-level'), 'unbelie');
  assert.equal(wordLabel(['un', '##bel'], 'wordpiece'), 'unbel');
  assert.equal(rawNote('Ġthe', '␣the'), 'piece “Ġthe”');
  assert.equal(rawNote('the', 'the'), '');
});

test('the specials a template adds and its pair template, as the page names them (Hide <s>/</s>, Sentence B)', () => {
  for (const name of NAMES) {
    const tk = REF.tokenizers[name];
    const pair = tk.rows.find((r) => r.text === 'How old are you?');
    const want = [...new Set(pair.tokens.filter((_, i) => pair.word_ids[i] === null))];
    assert.deepEqual(templateSpecials(runOf(tk, pair)), want, name);
    // Hugging Face's tokens of the pair ("A", "B"): each sentence as its letter
    const { tokens, sequence_ids: seq } = tk.template;
    const text = tokens.map((t, i) => (seq[i] === null ? t : seq[i] === 0 ? 'A' : 'B'));
    const ids = seq.map((q) => (q === null ? null : 0));
    const wantTemplate = { roberta: '<s> A </s></s> B </s>', modernbert: '[CLS] A [SEP] B [SEP]' }[name];
    if (wantTemplate) assert.equal(pairTemplate(text, ids), wantTemplate);
    assert.equal(pairTemplate(tokens, ids), pairTemplate(text, ids), `${name}: the pieces of A and B are A and B`);
  }
});

test('a snapshot run (no pieces, no special flags) is labelled and merged the same', () => {
  for (const name of NAMES) {
    const tk = REF.tokenizers[name];
    for (const r of tk.rows) {
      if (r.tokens.some((t, i) => r.special[i] && r.word_ids[i] !== null)) continue; // typed specials: the snapshot does not flag them
      const { pieces: _, special: __, ...bare } = runOf(tk, r);
      const live = runOf(tk, r);
      assert.deepEqual(tokenAxis(bare, { words: true }).members, tokenAxis(live, { words: true }).members, name);
      if (/[^\x00-\x7f]/.test(r.text + (r.text_pair || '')) || tk.pieces === 'wordpiece') continue; // the guess needs evidence
      assert.deepEqual(runLabels(bare), runLabels(live), `${name}: ${r.text.slice(0, 40)}`);
    }
  }
});

test('Clark et al.\'s rule on a merged word: TO the word = sum over its pieces, FROM it = mean over its pieces', () => {
  const tk = REF.tokenizers['deberta-v2'];
  const r = tk.rows.find((x) => x.text_pair === 'Nobody believed it.');
  const run = runOf(tk, r);
  const T = run.T;
  const m = new Float32Array(T * T);
  for (let a = 0; a < T; a++) {
    let s = 0;
    for (let b = 0; b < T; b++) { m[a * T + b] = 1 + ((a * 7 + b * 13) % 11); s += m[a * T + b]; }
    for (let b = 0; b < T; b++) m[a * T + b] /= s;
  }
  const axis = tokenAxis(run, { words: true });
  const w = axis.members.findIndex((g) => g.length > 1);
  const v = axis.members.findIndex((g, u) => u !== w && !axis.special[u]);
  assert.ok(w >= 0 && v >= 0);
  const K = axis.K;
  const out = axis.transform(m);
  const [j] = axis.members[v];
  const to = axis.members[w].reduce((s, k) => s + m[j * T + k], 0) / axis.members[v].length;
  const from = axis.members[w].reduce((s, k) => s + m[k * T + j], 0) / axis.members[w].length;
  assert.ok(Math.abs(out[v * K + w] - to) < 1e-6, 'to the word: sum');
  assert.ok(Math.abs(out[w * K + v] - from) < 1e-6, 'from the word: mean');
  for (let a = 0; a < K; a++) {
    let s = 0;
    for (let b = 0; b < K; b++) s += out[a * K + b];
    assert.ok(Math.abs(s - 1) < 1e-5, 'rows still sum to 1');
  }
  const groups = wordGroups(run.tokens, run.typeIds, run.wordIds, { pieces: run.pieces });
  assert.equal(mergeMatrix(m, T, groups).length, K * K);
});
