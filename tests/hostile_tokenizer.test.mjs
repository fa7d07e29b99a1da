// hostile_tokenizer.test.mjs — crafted tokenizer.json files (issue 31): what
// the tokenizer.json pipeline (src/text/hf_tok*.c) loads it runs as Hugging Face
// does, in bounded time and memory; what it cannot run within its limits it
// refuses at load, naming the limit.
//
//   node --test tests/hostile_tokenizer.test.mjs          build/hf_tok_host (tests/c/hf_tok_host.c)
//   BERTLENS_BACKEND=asan node --test ...                 build/asan/hf_tok_host
//
// The files and Hugging Face's output for them come from
// tests/fixtures/hostile_tok/make_hostile.py (manifest.json, refs.jsonl.gz;
// the large files gzipped, unpacked here into build/hostile_tok/). Each
// stands for one finding: a template naming $A twice and a post-processor
// Sequence of two templates (heap overflows), a normalizer that doubles the
// text 27 times (3.2 GB), a 100 KB Unigram piece (11.9 s), WordPiece's
// max_input_chars_per_word (0: [UNK] for every word; 1,000,000: 2.8 s),
// 1,500 added tokens of 64 characters (5.6 s), a 50,000-character Split
// pattern (1.0 s).
//
// Bounds, from the host's own getrusage (--stats): 100 KB of text through
// every accepted file (hostile or real: tests/fixtures/hf_tokenizers) in
// < 1 s CPU; loading it in < 1 s CPU and < 64 MB of peak resident memory
// beyond the file's size. Under ASan (10x slower, its own allocator) the
// same runs go through the sanitizer with the time bounds scaled by 10 and
// the memory bound skipped.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { BIN as CLI, IS_ASAN, ROOT, host, nativeTest as test } from './lib/backend.mjs';
import { firstDiff } from './lib/first_diff.mjs';

const FIX = path.join(ROOT, 'tests/fixtures/hostile_tok');
const OUT = path.join(ROOT, 'build/hostile_tok');
const BIN = host('hf_tok_host');
const MANIFEST = JSON.parse(fs.readFileSync(path.join(FIX, 'manifest.json'), 'utf8'));
const REFS = zlib.gunzipSync(fs.readFileSync(path.join(FIX, 'refs.jsonl.gz'))).toString('utf8')
  .split('\n').filter((l) => l.length).map((l) => JSON.parse(l));
const REAL = path.join(ROOT, 'tests/fixtures/hf_tokenizers');

const TEXT_BYTES = 100_000;
const SLOW = IS_ASAN ? 10 : 1;      // time bounds under ASan
const CPU_S = 1.0 * SLOW;           // 100 KB of text; loading a file
const LOAD_EXTRA_MB = 64;           // peak memory of a load beyond the file's size

/** The file NAME of the manifest, unpacked into build/hostile_tok/ when gzipped. */
function fileOf(name) {
  if (!MANIFEST[name].gz) return path.join(FIX, `${name}.json`);
  const src = path.join(FIX, `${name}.json.gz`), dst = path.join(OUT, `${name}.json`);
  if (!fs.existsSync(dst) || fs.statSync(dst).mtimeMs < fs.statSync(src).mtimeMs) {
    fs.mkdirSync(OUT, { recursive: true });
    fs.writeFileSync(dst, zlib.gunzipSync(fs.readFileSync(src)));
  }
  return dst;
}

function run(file, lines, { maxLen = 0, stats = false } = {}) {
  const args = [...(stats ? ['--stats'] : []), file, String(maxLen)];
  const r = spawnSync(BIN, args, { input: lines.join('\n') + '\n', maxBuffer: 1 << 30 });
  if (r.error && r.error.code !== 'EPIPE') // EPIPE: it refused the file before reading stdin
    assert.fail(`cannot run ${BIN} (make ${path.relative(ROOT, BIN)}): ${r.error.message}`);
  return { status: r.status, signal: r.signal, stderr: String(r.stderr || ''), out: String(r.stdout || '').split('\n').filter((l) => l) };
}

/** 100 KB of bulk repeated, as one JSON line. */
const bulkLine = (bulk) => JSON.stringify(bulk.repeat(Math.ceil(TEXT_BYTES / bulk.length)).slice(0, TEXT_BYTES));

// ------------------------------------------------------------ refusals
for (const [name, { expect }] of Object.entries(MANIFEST)) {
  if (expect === 'accept') continue;
  test(`${name}: refused at load, naming the limit (/${expect}/)`, () => {
    const r = run(fileOf(name), ['"a"']);
    assert.ok(r.status === 1 && new RegExp(expect).test(r.stderr),
      `${name}: exit ${r.status} (signal ${r.signal}), stderr ${JSON.stringify(r.stderr.slice(0, 400))}`);
  });
}

// The normalizers' output bound (bli_hfnorm_growth) relies on facts of the
// Unicode tables: checked over every code point.
test('the Unicode facts behind the normalizer bound hold for every code point', () => {
  const r = spawnSync(BIN, ['--facts'], { encoding: 'utf8' });
  assert.equal(r.status, 0, `${BIN} --facts: ${r.stderr || r.error}`);
});

// ------------------------------------------------- Hugging Face's output
const byFile = new Map();
for (const row of REFS) byFile.set(row.file, [...(byFile.get(row.file) || []), row]);
for (const [name, rows] of byFile) {
  test(`${name}: every line as Hugging Face's tokenizers`, () => {
    const bad = [];
    for (const row of rows) { // one run per line: each has its own max_length
      const r = run(fileOf(name), [JSON.stringify(row.input)], { maxLen: row.max_length });
      assert.equal(r.status, 0, `${name}: exit ${r.status} (signal ${r.signal}): ${r.stderr.slice(0, 400)}`);
      const why = firstDiff(JSON.parse(r.out[0]), row.want, { width: 200 });
      if (why) bad.push(`${JSON.stringify(row.input).slice(0, 80)} (max_length ${row.max_length})\n     ${why}`);
    }
    assert.equal(bad.length, 0, `${name}: ${bad.length}/${rows.length} lines differ from Hugging Face\n  ${bad.join('\n  ')}`);
  });
}

// A bundle's own WordPiece (src/text/tokenizer.c, the bundle's
// tokenizer.max_chars_per_word) honours the limit as tokenizers does too:
// the same vocabulary and pipeline as wordpiece_zero.json and
// wordpiece_long.json, the same tokens (max_chars_per_word 0 was refused,
// above 1,000 capped).
for (const [file, maxChars] of [['wordpiece_zero', 0], ['wordpiece_long', 1_000_000]]) {
  test(`a WordPiece bundle with max_chars_per_word ${maxChars}: every line of ${file} as Hugging Face's tokenizers`, () => {
    fs.mkdirSync(OUT, { recursive: true });
    const bundle = path.join(OUT, `${file}.blb`);
    const g = spawnSync(process.env.PYTHON || 'python3', [path.join(FIX, 'wordpiece_bundle.py'), bundle, String(maxChars)],
      { encoding: 'utf8' });
    assert.equal(g.status, 0, `wordpiece_bundle.py: ${g.stderr}`);
    const rows = byFile.get(file);
    const r = spawnSync(CLI, ['tokenize', '--jsonl', bundle], { input: rows.map((x) => JSON.stringify(x.input)).join('\n') + '\n',
      encoding: 'utf8', maxBuffer: 1 << 28 });
    assert.equal(r.status, 0, `${CLI} tokenize: ${r.stderr}`);
    const out = r.stdout.split('\n').filter((l) => l).map((l) => JSON.parse(l));
    assert.equal(out.length, rows.length);
    rows.forEach((row, k) => {
      const why = firstDiff(out[k], row.want, { width: 200 });
      assert.equal(why, null, `${JSON.stringify(row.input).slice(0, 80)}: ${why}`);
    });
  });
}

// -------------------------------------------------- time and memory bounds
const real = fs.readdirSync(REAL).filter((d) => fs.existsSync(path.join(REAL, d, 'tokenizer.json')))
  .map((d) => [`real ${d}`, path.join(REAL, d, 'tokenizer.json'), null])
  .concat(fs.readdirSync(path.join(REAL, 'variants')).filter((f) => f.endsWith('.json'))
    .map((f) => [`variant ${f.slice(0, -5)}`, path.join(REAL, 'variants', f), null]));
const corpusText = fs.readFileSync(path.join(REAL, 'corpus.jsonl'), 'utf8').split('\n').filter((l) => l)
  .map((l) => { const o = JSON.parse(l); return typeof o === 'string' ? o : `${o.text} ${o.text_pair || ''}`; }).join(' ');
const files = Object.entries(MANIFEST).filter(([, m]) => m.expect === 'accept')
  .map(([name, m]) => [name, fileOf(name), m.bulk || 'hello world '])
  .concat(real.map(([n, f]) => [n, f, corpusText]));

for (const [name, file, bulk] of files) {
  test(`${name}: 100 KB of text in < ${CPU_S} s CPU; loads in < ${CPU_S} s${IS_ASAN ? '' : ` and < ${LOAD_EXTRA_MB} MB beyond its size`}`, () => {
    const line = bulkLine(bulk);
    const pair = JSON.stringify({ text: JSON.parse(line).slice(0, TEXT_BYTES / 2), text_pair: JSON.parse(line).slice(TEXT_BYTES / 2), max_length: 512 });
    for (const [what, input] of [['one text', line], ['a pair truncated to 512', pair]]) {
      const r = run(file, [input], { stats: true });
      assert.equal(r.status, 0, `${name}: exit ${r.status} (signal ${r.signal}): ${r.stderr.slice(0, 400)}`);
      assert.equal(r.out.length, 0, `${name} (${what}): ${r.out.join('\n').slice(0, 400)}`);
      const s = JSON.parse(r.stderr.trim().split('\n').at(-1));
      const msg = `${name} (${what}): ${JSON.stringify(s)}`;
      assert.ok(s.tokens > 0, msg);
      assert.ok(s.encode_cpu_s < CPU_S, `${msg}: ${s.encode_cpu_s} s to tokenize 100 KB`);
      assert.ok(s.load_cpu_s < CPU_S, `${msg}: ${s.load_cpu_s} s to load`);
      if (!IS_ASAN)
        assert.ok(s.load_rss_kb * 1024 < s.file_bytes + LOAD_EXTRA_MB * 2 ** 20,
          `${msg}: loading took ${(s.load_rss_kb / 1024).toFixed(1)} MB for a file of ${(s.file_bytes / 2 ** 20).toFixed(2)} MB`);
      console.log(`  ${msg}`);
    }
  });
}
