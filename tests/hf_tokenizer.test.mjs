// tokenizer.json pipeline (src/text/hf_tok*.c) vs Hugging Face: for every kind of
// tokenizer in tests/fixtures/hf_tokenizers/ (trained there and saved through
// transformers' own classes by make_fixtures.py), every corpus line must give
// exactly the ids, type ids, offsets (UTF-16), word ids and truncated flag
// that AutoTokenizer gave (NAME.jsonl.gz). Truncation at the tokenizer's
// model_max_length (tokenizer_config.json) unless a line sets max_length.
//
//   node --test tests/hf_tokenizer.test.mjs          build/hf_tok_host (tests/c/hf_tok_host.c)
//   BERTLENS_BACKEND=asan node --test ...            build/asan/hf_tok_host, quick
//
// BERTLENS_QUICK: every 5th line (sanitizer runs). The wasm backends skip it
// (the page tokenizes through the same C, checked natively here). Also checked: a bad line or
// invalid UTF-8 gives {"error"} and the stream goes on; a tokenizer.json
// that is broken or asks for what is not supported is refused with a reason.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { QUICK, ROOT, host, nativeTest as test } from './lib/backend.mjs';
import { assertAllLinesMatch, firstDiff } from './lib/first_diff.mjs';

const DIR = path.join(ROOT, 'tests/fixtures/hf_tokenizers');
const BIN = host('hf_tok_host');

const KINDS = ['roberta', 'modernbert', 'xlmr', 'albert', 'debertav3', 'mpnet', 'bert', 'eurobert'];
// variants/NAME.json: the options these families leave unused (make_fixtures.py
// variant_specs), on every 3rd corpus line, max_length 512
const VARIANTS = ['bytelevel_prefix', 'bytelevel_ignore_merges', 'bpe_fallback', 'unigram_fallback', 'unigram_prepend',
  'deberta_old', 'wordpiece_mix', 'wordpiece_nfd', 'wordpiece_whitespace'];
const splitLines = (s) => s.split('\n').filter((l) => l.length); // U+2028 etc. are data

const corpus = splitLines(fs.readFileSync(path.join(DIR, 'corpus.jsonl'), 'utf8'));

function run(tokjson, maxLen, lines) {
  const r = spawnSync(BIN, [tokjson, String(maxLen)], { input: lines.join('\n') + '\n', maxBuffer: 1 << 30 });
  if (r.error && r.error.code !== 'EPIPE') // EPIPE: it refused the file before reading stdin
    assert.fail(`cannot run ${BIN} (make ${path.relative(ROOT, BIN)}): ${r.error.message}`);
  return { status: r.status, stderr: String(r.stderr || ''), out: splitLines(String(r.stdout || '')) };
}

// random.jsonl (make_fixtures.py random_corpus): random strings from pools of
// the characters where tokenizers' quirks live, for every file above
const randomLines = splitLines(fs.readFileSync(path.join(DIR, 'random.jsonl'), 'utf8'));
const fileOf = (kind) => (KINDS.includes(kind) ? path.join(DIR, kind, 'tokenizer.json') : path.join(DIR, 'variants', `${kind}.json`));

const jobs = [
  ...KINDS.map((kind) => ({
    kind, tokjson: path.join(DIR, kind, 'tokenizer.json'), fixture: path.join(DIR, `${kind}.jsonl.gz`),
    maxLen: JSON.parse(fs.readFileSync(path.join(DIR, kind, 'tokenizer_config.json'), 'utf8')).model_max_length,
    lines: corpus.map((_, i) => i),
  })),
  ...VARIANTS.map((kind) => ({
    kind, tokjson: path.join(DIR, 'variants', `${kind}.json`), fixture: path.join(DIR, 'variants', `${kind}.jsonl.gz`),
    maxLen: 512, lines: corpus.map((_, i) => i).filter((i) => i % 3 === 0),
  })),
  ...[...KINDS, ...VARIANTS].map((kind) => ({
    kind: `${kind} (random)`, tokjson: fileOf(kind), fixture: path.join(DIR, 'random', `${kind}.jsonl.gz`),
    maxLen: 512, lines: randomLines.map((_, i) => i), source: randomLines,
  })),
];
for (const { kind, tokjson, fixture, maxLen, lines, source = corpus } of jobs) {
  test(`${kind}: every line as Hugging Face's AutoTokenizer${QUICK ? ' (quick)' : ''}`, () => {
    const rows = splitLines(zlib.gunzipSync(fs.readFileSync(fixture)).toString('utf8')).map((l) => JSON.parse(l));
    assert.equal(rows.length, lines.length, `${kind}: fixture has ${rows.length} rows, expected ${lines.length}`);
    const want = [];
    lines.forEach((i, k) => { want[i] = rows[k]; });
    const index = lines.filter((i, k) => !QUICK || k % 5 === 0);
    const r = run(tokjson, maxLen, index.map((i) => source[i]));
    assert.ok(r.status === 0 && r.out.length === index.length,
      `${kind}: driver exited ${r.status} with ${r.out.length}/${index.length} lines: ${r.stderr.slice(0, 300)}`);
    console.log(assertAllLinesMatch(kind, index.length, (k) => {
      const i = index[k], why = firstDiff(JSON.parse(r.out[k]), want[i], { width: 200 });
      return why && `${kind} line ${i + 1} ${source[i].slice(0, 100)}\n     ${why}`;
    }));
  });
}

test('bad input lines give {"error"} and the stream goes on', () => {
  const r = run(path.join(DIR, 'roberta', 'tokenizer.json'), 512, ['{"text": 5}', '"\\ud800"', 'not json', '"fine"']);
  const out = r.out.map((l) => JSON.parse(l));
  assert.ok(r.status === 0 && out.length === 4 && out.slice(0, 3).every((o) => typeof o.error === 'string') &&
      out[3].ids[0] === 0 && out[3].ids.at(-1) === 2 && out[3].tokens.slice(1, -1).join('') === 'fine',
    `bad lines: status ${r.status} output ${JSON.stringify(out)}`);
});

test('broken or unsupported tokenizer.json files are refused with a reason', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bl-hftok-'));
  const base = JSON.parse(fs.readFileSync(path.join(DIR, 'roberta', 'tokenizer.json'), 'utf8'));
  const cases = [
    ['truncated file', JSON.stringify(base).slice(0, 5000), /JSON/],
    ['unknown model', JSON.stringify({ ...base, model: { type: 'WordLevel', vocab: {} } }), /WordLevel.*not supported/],
    ['unsupported regex', JSON.stringify({ ...base, pre_tokenizer: { type: 'Split', pattern: { Regex: '(a|b)*c' }, behavior: 'Isolated' } }), /regular expression.*not supported/],
    ['merge outside the vocabulary', JSON.stringify({ ...base, model: { ...base.model, merges: ['zzzq qqqz'] } }), /merge 0/],
    ['template special not defined', JSON.stringify({ ...base, post_processor: { type: 'TemplateProcessing', single: [{ SpecialToken: { id: '[X]', type_id: 0 } }], pair: [], special_tokens: {} } }), /\[X\] is not defined/],
    ['sparse vocabulary ids', JSON.stringify({ ...base, model: { ...base.model, vocab: { ...base.model.vocab, huge: 16000000 } } }), /ids run to 16000000/],
    ['added token id far past the vocabulary', JSON.stringify({ ...base, added_tokens: [{ id: 9000000, content: 'x' }] }), /added token 0/],
    ['bad charsmap', JSON.stringify({ ...base, normalizer: { type: 'Precompiled', precompiled_charsmap: 'AAAA////' } }), /charsmap/],
  ];
  for (const [name, text, re] of cases) {
    const f = path.join(tmp, 'tokenizer.json');
    fs.writeFileSync(f, text);
    const r = run(f, 512, ['"x"']);
    assert.ok(r.status === 1 && re.test(r.stderr), `${name}: status ${r.status}, stderr ${JSON.stringify(r.stderr)}`);
  }
  fs.rmSync(tmp, { recursive: true });
});

// Ids missing from a vocabulary (a gap the file leaves, as the fuzzer found:
// tests/fuzz/convert) are empty strings: the string pool once had no byte for
// them and overflowed (ASan: heap-buffer-overflow in vocab_build).
test('a vocabulary with missing ids loads and tokenizes', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bl-hftok-'));
  const base = JSON.parse(fs.readFileSync(path.join(DIR, 'roberta', 'tokenizer.json'), 'utf8'));
  const vocab = { ...base.model.vocab };
  let dropped = 0;
  for (const [s, id] of Object.entries(vocab)) if (id > 1000 && id % 7 === 0 && dropped < 200) { delete vocab[s]; dropped++; }
  const merges = base.model.merges.filter((m) => (Array.isArray(m) ? m : m.split(' ')).every((p) => p in vocab) &&
    (Array.isArray(m) ? m.join('') : m.replace(' ', '')) in vocab);
  const f = path.join(tmp, 'tokenizer.json');
  fs.writeFileSync(f, JSON.stringify({ ...base, model: { ...base.model, vocab, merges } }));
  const r = run(f, 512, ['"fine"', '{"text": "the cat sat", "text_pair": "on the mat"}']);
  fs.rmSync(tmp, { recursive: true });
  assert.equal(r.status, 0, r.stderr);
  const out = r.out.map((l) => JSON.parse(l));
  assert.equal(out.length, 2);
  for (const o of out) assert.ok(Array.isArray(o.ids) && o.ids[0] === 0 && o.ids.at(-1) === 2, JSON.stringify(o));
});
