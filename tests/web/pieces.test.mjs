// pieces.test.mjs — token labels, word merging, hidden specials and the A/B
// boundary for tokenizers whose pieces are not WordPiece's (web/js/lib/tokens.js,
// data.js tokenAxis). Runs are built from Hugging Face's own output for the
// corpus (tests/fixtures/hf_tokenizers/NAME.jsonl.gz: ids, offsets, word ids,
// type ids) with token strings from the family's tokenizer.json, so the page
// logic meets exactly the pieces AutoTokenizer makes; the reference for a
// word's label is the text itself at the word's offsets.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import zlib from 'node:zlib';
import { tokenAxis } from '../../web/js/lib/data.js';
import { WORD_START, pieceBytes, tokenLabel, tokenSegments, wordLabel } from '../../web/js/lib/tokens.js';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const DIR = path.join(ROOT, 'tests/fixtures/hf_tokenizers');
const lines = (s) => s.split('\n').filter((l) => l.length);
const corpus = lines(fs.readFileSync(path.join(DIR, 'corpus.jsonl'), 'utf8')).map((l) => JSON.parse(l));

/** Runs of family kind as the worker sends them: pieces from tokenizer.json, the rest from Hugging Face. */
function runs(kind, pieces) {
  const tj = JSON.parse(fs.readFileSync(path.join(DIR, kind, 'tokenizer.json'), 'utf8'));
  const str = [];
  const v = tj.model.vocab;
  if (Array.isArray(v)) v.forEach(([s], i) => { str[i] = s; });
  else for (const [s, i] of Object.entries(v)) str[i] = s;
  const specials = new Set();
  for (const a of tj.added_tokens) { str[a.id] = a.content; if (a.special) specials.add(a.id); }
  const rows = lines(zlib.gunzipSync(fs.readFileSync(path.join(DIR, `${kind}.jsonl.gz`))).toString('utf8')).map((l) => JSON.parse(l));
  return rows.map((r, i) => ({
    text: corpus[i].text, textB: corpus[i].text_pair || '', T: r.ids.length, tokens: r.ids.map((id) => str[id]),
    typeIds: r.type_ids, wordIds: r.word_ids.map((w) => (w === null ? -1 : w)), offsets: r.offsets, pieces,
    special: r.ids.map((id) => (specials.has(id) ? 1 : 0)), ids: r.ids, truncated: r.truncated,
  }));
}

/** Where B starts in a run whose type ids are all 0: after the first run of
 *  the template's specials (no word id; an <unk> typed in A has one) that follows text A. */
function firstB(run) {
  let i = 1;
  while (i < run.T && run.wordIds[i] >= 0) i++;
  while (i + 1 < run.T && run.wordIds[i + 1] < 0) i++;
  return i;
}

test('byte-level and SentencePiece pieces are labelled as the text spells them', () => {
  assert.equal(tokenLabel('Ġthe', 'byte-level'), `${WORD_START}the`);
  assert.equal(tokenLabel('the', 'byte-level'), 'the');
  assert.equal(tokenLabel('Ċ', 'byte-level'), '⏎');
  assert.equal(tokenLabel('ĠcafÃ©', 'byte-level'), `${WORD_START}café`);
  assert.equal(tokenLabel('▁the', 'metaspace'), `${WORD_START}the`);
  assert.equal(tokenLabel('##ing', 'wordpiece'), '##ing');
  assert.equal(tokenLabel('<s>', 'byte-level', true), '<s>');
  // an emoji cut across two byte-level pieces is whole again in its word
  const bytes = [...new TextEncoder().encode(' 😀')];
  const pieces = [bytes.slice(0, 3), bytes.slice(3)].map((b) => [...b].map((x) => {
    for (let c = 0; c < 400; c++) if (pieceBytes(String.fromCodePoint(c))[0] === x && pieceBytes(String.fromCodePoint(c)).length === 1) return String.fromCodePoint(c);
    return '?';
  }).join(''));
  assert.equal(wordLabel(pieces, 'byte-level'), '😀');
});

for (const [kind, pieces, exact] of [['roberta', 'byte-level', true], ['modernbert', 'byte-level', true], ['xlmr', 'metaspace', false], ['albert', 'metaspace', false], ['mpnet', 'wordpiece', false]]) {
  test(`${kind}: merged words read as the text at their offsets; specials hidden; B after the template's boundary`, () => {
    let words = 0, checked = 0;
    for (const run of runs(kind, pieces)) {
      const pair = run.textB.length > 0;
      if (pair) run.nA = run.typeIds.includes(1) ? run.typeIds.indexOf(1) : firstB(run);
      const axis = tokenAxis(run, { words: true, hideSpecials: true });
      // the template's specials are hidden (and named so); one typed in the text stays, in its
      // Hugging Face word (<mask> a word of its own, an <unk> inside a SentencePiece word in it)
      const seqOf = (i) => (run.typeIds.includes(1) ? run.typeIds[i] : pair && i >= run.nA ? 1 : 0);
      for (const m of axis.members) for (const i of m) {
        assert.ok(run.wordIds[i] >= 0, `${kind}: special ${run.tokens[i]} shown`);
        if (run.special[i]) assert.deepEqual(m, run.wordIds.map((w, j) => j).filter((j) => run.wordIds[j] === run.wordIds[i] && seqOf(j) === seqOf(i)), `${kind}: typed ${run.tokens[i]} not in its word`);
      }
      const template = [...new Set(run.tokens.filter((_, i) => run.wordIds[i] < 0))];
      assert.deepEqual(axis.hidden, template);
      assert.ok(template.every((t) => run.special[run.tokens.indexOf(t)]), `${kind}: ${template} are the tokenizer's specials`);
      axis.members.forEach((m, u) => {
        const seg = axis.segs[u];
        const src = seg === 'B' ? run.textB : run.text;
        if (pair && m.some((i) => (run.typeIds.includes(1) ? run.typeIds[i] === 1 : i >= run.nA) !== (seg === 'B'))) assert.fail(`${kind}: word ${axis.labels[u]} in segment ${seg}`);
        const slice = src.slice(run.offsets[m[0]][0], run.offsets[m.at(-1)][1]);
        words++;
        if (run.truncated) return; // its last piece may hold part of a character: that label has U+FFFD
        if (m.some((i) => run.special[i])) return; // a typed special ([UNK] for a long word) is shown as it is
        // a character that normalizes with the mark after it (e + U+0301 -> é) is not plain
        const next = src.slice(run.offsets[m.at(-1)][1], run.offsets[m.at(-1)][1] + 1);
        // a byte-level word of only controls or zero-width characters is labelled by its code points
        const word = slice.trim();
        if (exact && /^[\p{Cc}\p{Cf}]+$/u.test(word) && !/\s/.test(word)) {
          assert.equal(axis.labels[u], [...word].map((c) => `U+${c.codePointAt(0).toString(16).toUpperCase().padStart(4, '0')}`).join(' '));
          return;
        }
        // byte-level BPE has no normalizer: the label is the text; Unigram/WordPiece
        // normalize (NFKC, lower case): compare where the text is plain printable ASCII
        // (a word is the tokenizer's: "world," for SentencePiece, "world" "," for WordPiece)
        if (exact ? /\S/.test(slice) && !/\s/.test(word) : /^[\x20-\x7e]*$/.test(src) && /^[!-~]+$/.test(word) && !/\p{M}/u.test(next)) {
          checked++;
          // (a word that starts with a combining mark is shown on a dotted circle)
          const shown = /^\p{M}/u.test(word) ? `\u25cc${word}` : word;
          assert.equal(exact ? axis.labels[u] : axis.labels[u].toLowerCase(), exact ? shown : shown.toLowerCase(), `${kind}: word of tokens ${JSON.stringify(m.map((i) => run.tokens[i]))} in ${JSON.stringify(src.slice(0, 80))}`);
        }
      });
    }
    assert.ok(checked >= 300,  `${kind}: only ${checked} of ${words} words checked`);
  });
}

test('segments: type ids when the template has them, else the index where B starts', () => {
  assert.deepEqual(tokenSegments([0, 0, 0, 1, 1]), ['A', 'A', 'A', 'B', 'B']);
  assert.deepEqual(tokenSegments([0, 0, 0, 0, 0, 0], 3), ['A', 'A', 'A', 'B', 'B', 'B']);
  assert.deepEqual(tokenSegments([0, 0, 0], 3), ['A', 'A', 'A']);
  assert.deepEqual(tokenSegments([0, 0, 1, 1], 1), ['A', 'A', 'B', 'B']);
});

test('a truncated RoBERTa pair keeps the part of text B its tokens cover (permalinks)', async () => {
  const { usedText } = await import('../../web/js/page/state.js');
  const run = runs('roberta', 'byte-level').find((r) => r.textB && r.truncated && !r.special.at(-2) && r.offsets.at(-2)[1] > 0 && r.offsets.at(-2)[1] < r.textB.length);
  assert.ok(run, 'no truncated pair in the corpus');
  run.nA = firstB(run);
  const lastB = run.offsets.at(-2)[1]; // the last token of B before </s>
  assert.equal(usedText(run.textB, run, 1), run.textB.slice(0, lastB));
});

const N = 200; // every guess but whitespace-only texts ("\t" spells no byte-level evidence)
test('a run that does not say how its pieces spell words (a snapshot) is read the same', () => {
  for (const [kind, pieces] of [['roberta', 'byte-level'], ['xlmr', 'metaspace'], ['mpnet', 'wordpiece']]) {
    let same = 0;
    for (const run of runs(kind, pieces).filter((r) => !r.textB).slice(0, N)) {
      const { pieces: _, special: __, ...bare } = run; // a snapshot has neither
      const want = tokenAxis({ ...bare, pieces }, { words: true }).labels;
      assert.deepEqual(tokenAxis(bare, { words: true }).labels, want, `${kind}: ${run.text.slice(0, 60)}`);
      same++;
    }
    assert.equal(same, Math.min(N, runs(kind, pieces).filter((r) => !r.textB).length));
  }
});
