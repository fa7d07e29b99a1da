// BertNormalizer without accent stripping (a cased BERT, and lower-casing
// that keeps accents) vs Hugging Face's tokenizers: the pipeline's fast path
// for it (src/text/hf_tok_norm.c bert_no_strip: in place while no character
// grows, then in scratch; BertPreTokenizer's pieces as ranges of the
// normalized characters, hf_tok_pretok.c) must give exactly the ids, type
// ids, offsets (UTF-16), word ids and truncated flag tokenizers gives, on
// texts aimed at its edges (tests/fixtures/cased_wordpiece/texts.jsonl:
// controls before CJK, long ASCII after CJK, U+0130, capitals and emoji
// beyond the BMP, kept accents, spaces of every kind, typed specials; seeded
// random mixes) and on the tokenizer corpus (tests/fixtures/hf_tokenizers/).
// References: tests/fixtures/cased_wordpiece/make.py (transformers 5.24).
//
//   node --test tests/cased_wordpiece.test.mjs          build/hf_tok_host
//   BERTLENS_BACKEND=asan node --test ...               build/asan/hf_tok_host, every line
//
// The wasm backends skip it, as tests/hf_tokenizer.test.mjs does (the same C).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { ROOT, host, nativeTest as test } from './lib/backend.mjs';
import { assertAllLinesMatch, firstDiff } from './lib/first_diff.mjs';

const DIR = path.join(ROOT, 'tests/fixtures/cased_wordpiece');
const BIN = host('hf_tok_host');
const splitLines = (s) => s.split('\n').filter((l) => l.length);

const texts = splitLines(fs.readFileSync(path.join(DIR, 'texts.jsonl'), 'utf8'));
// the corpus lines as make.py's pair_only sent them: the texts, no max_length
const corpus = splitLines(fs.readFileSync(path.join(ROOT, 'tests/fixtures/hf_tokenizers/corpus.jsonl'), 'utf8'))
  .map((l) => JSON.parse(l))
  .map((o) => JSON.stringify(o.text_pair != null ? { text: o.text, text_pair: o.text_pair } : { text: o.text }));
const lines = [...texts, ...corpus];

for (const name of ['cased', 'lower_accents']) {
  test(`${name}: every line as Hugging Face's tokenizers`, () => {
    const want = splitLines(zlib.gunzipSync(fs.readFileSync(path.join(DIR, `${name}.jsonl.gz`))).toString('utf8'))
      .map((l) => JSON.parse(l));
    assert.equal(want.length, lines.length, `${name}: fixture has ${want.length} rows, expected ${lines.length}`);
    const r = spawnSync(BIN, [path.join(DIR, `${name}.json`), '512'], { input: lines.join('\n') + '\n',
      maxBuffer: 1 << 30 });
    if (r.error) assert.fail(`cannot run ${BIN} (make ${path.relative(ROOT, BIN)}): ${r.error.message}`);
    const out = splitLines(String(r.stdout));
    assert.ok(r.status === 0 && out.length === lines.length,
      `${name}: driver exited ${r.status} with ${out.length}/${lines.length} lines: ${String(r.stderr).slice(0, 300)}`);
    console.log(assertAllLinesMatch(name, lines.length, (k) => {
      const why = firstDiff(JSON.parse(out[k]), want[k], { width: 200 });
      return why && `${name} line ${k + 1} ${lines[k].slice(0, 100)}\n     ${why}`;
    }));
  });
}
