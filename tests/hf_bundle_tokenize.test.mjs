// hf_bundle_tokenize.test.mjs — bundles that carry their checkpoint's
// tokenizer.json (bundle.h format version 2): `bertlens convert` keeps the
// file whole, and `bertlens tokenize --jsonl` (native) or blw_tokenize_json
// (wasm) on the bundle gives exactly what Hugging Face's AutoTokenizer gave
// (tests/fixtures/hf_tokenizers/NAME.jsonl.gz: ids, type ids, offsets, word
// ids, truncated at the tokenizer's model_max_length) for every family.
//
//   node --test tests/hf_bundle_tokenize.test.mjs                        native CLI
//   BERTLENS_BACKEND=wasm node --test tests/hf_bundle_tokenize.test.mjs  build/wasm/bertlens.js
//   BERTLENS_BACKEND=asan ...                                            every 5th line
//
// The checkpoint around each trained tokenizer is a tiny random BERT made
// here (weights do not matter to tokenizing): config.json with vocab_size =
// the tokenizer's and model_max_length + 2 positions (as RoBERTa's 514 / 512).
// Also checked: version 1 bundles still load; bundles whose tokenizer.json
// lies about its length, is broken JSON, or sits in a version 1 header are
// refused with a reason; `info` names the tokenizer and its specials; a folder
// with only vocab.json + merges.txt or a SentencePiece .model is refused with
// the command that writes a tokenizer.json.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { test } from 'node:test';
import { BIN, IS_WASM, QUICK, loadWasm, needs } from './lib/backend.mjs';
import { loadBytes, putString, wasmError } from '../tools/wasm_node.mjs';
import { tinyCheckpoint } from './lib/tiny_checkpoint.mjs';

const nativeTest = (name, fn) => test(name, { skip: needs('native', 'asan') }, fn);
const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const DIR = path.join(ROOT, 'tests/fixtures/hf_tokenizers');
const OUT = path.join(ROOT, 'build/hf-bundle-test');
const KINDS = ['roberta', 'modernbert', 'xlmr', 'albert', 'debertav3', 'mpnet'];
const FIELDS = ['ids', 'type_ids', 'offsets', 'word_ids', 'truncated'];
const splitLines = (s) => s.split('\n').filter((l) => l.length); // U+2028 etc. are data
const corpus = splitLines(fs.readFileSync(path.join(DIR, 'corpus.jsonl'), 'utf8'));

/** A checkpoint folder around family kind's tokenizer files; files: which ones. */
function folder(kind, name = kind, files = ['tokenizer.json', 'tokenizer_config.json']) {
  const tokJson = fs.readFileSync(path.join(DIR, kind, 'tokenizer.json'));
  const tc = JSON.parse(fs.readFileSync(path.join(DIR, kind, 'tokenizer_config.json'), 'utf8'));
  const dir = tinyCheckpoint(path.join(OUT, name), tokJson, { positions: Math.min(tc.model_max_length + 2, 8192) });
  fs.rmSync(path.join(dir, 'tokenizer.json'));
  for (const f of files) fs.copyFileSync(path.join(DIR, kind, f), path.join(dir, f));
  return { dir, tc };
}

const cli = (args, input) => spawnSync(BIN, args, { input, maxBuffer: 1 << 30, encoding: 'utf8' });

/** Convert family kind's folder into build/hf-bundle-test/KIND.blb (once per run). */
const bundles = {};
function bundle(kind) {
  if (bundles[kind]) return bundles[kind];
  const { dir, tc } = folder(kind);
  const out = path.join(OUT, `${kind}.blb`);
  const r = cli(['convert', dir, out, '--dtype', 'f32', '--name', `test/${kind}`, '--license', 'MIT']);
  assert.equal(r.status, 0, `convert ${kind}: ${r.stderr}`);
  return (bundles[kind] = { file: out, tc, log: r.stderr + r.stdout });
}

function firstDiff(got, want) {
  if (!got || got.error !== undefined) return `error: ${got ? got.error : 'no output'}`;
  for (const f of FIELDS) {
    const g = JSON.stringify(got[f]), w = JSON.stringify(want[f]);
    if (g === w) continue;
    let k = 0;
    while (Array.isArray(want[f]) && k < want[f].length && JSON.stringify(got[f][k]) === JSON.stringify(want[f][k])) k++;
    return `${f} differs at [${k}] (token ${JSON.stringify((got.tokens || [])[k])}): got ${g.slice(0, 160)} want ${w.slice(0, 160)}`;
  }
  return null;
}

/** Tokenize the corpus lines idx through the bundle: native CLI or wasm. */
async function tokenizeAll(file, idx) {
  if (!IS_WASM) {
    const r = cli(['tokenize', '--jsonl', file], idx.map((i) => corpus[i]).join('\n') + '\n');
    assert.equal(r.status, 0, r.stderr);
    return splitLines(r.stdout).map((l) => JSON.parse(l));
  }
  const M = await loadWasm();
  assert.equal(loadBytes(M, fs.readFileSync(file)), 0, wasmError(M));
  return idx.map((i) => {
    const o = JSON.parse(corpus[i]);
    const pa = putString(M, o.text), pb = o.text_pair ? putString(M, o.text_pair) : 0;
    const out = JSON.parse(M.UTF8ToString(M._blw_tokenize_json(pa, pb, o.max_length || 0)));
    M._free(pa);
    if (pb) M._free(pb);
    return out;
  });
}

for (const kind of KINDS) {
  test(`${kind}: a converted bundle tokenizes the corpus exactly as AutoTokenizer`, async () => {
    const { file } = bundle(kind);
    const rows = splitLines(zlib.gunzipSync(fs.readFileSync(path.join(DIR, `${kind}.jsonl.gz`))).toString('utf8'))
      .map((l) => JSON.parse(l));
    assert.equal(rows.length, corpus.length);
    // C strings end at NUL: the wasm entry point cannot be given those lines
    let idx = corpus.map((_, i) => i).filter((i) => !QUICK || i % 5 === 0);
    if (IS_WASM) idx = idx.filter((i) => !corpus[i].includes('\\u0000'));
    const got = await tokenizeAll(file, idx);
    assert.equal(got.length, idx.length);
    const bad = [];
    idx.forEach((i, k) => {
      const why = firstDiff(got[k], rows[i]);
      if (why) bad.push(`line ${i + 1} ${corpus[i].slice(0, 80)}\n     ${why}`);
    });
    assert.equal(bad.length, 0, `${bad.length}/${idx.length} lines differ from Hugging Face:\n${bad.slice(0, 5).join('\n')}`);
    // the corpus reaches the limit: truncation at model_max_length is exercised
    assert.ok(idx.some((i) => rows[i].truncated), 'no truncated line in the corpus');
  });
}

nativeTest('info names the tokenizer kind and the model\'s special tokens', () => {
  const want = { roberta: ['BPE', 'cls <s>', 'mask <mask>'], xlmr: ['Unigram', 'sep </s>'], mpnet: ['WordPiece', 'cls <s>', 'unk [UNK]'],
    modernbert: ['BPE', 'cls [CLS]', 'sep [SEP]'] };
  for (const [kind, words] of Object.entries(want)) {
    const r = cli(['info', bundle(kind).file]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /format v2/);
    assert.match(r.stdout, /tokenizer +\S+ \(the checkpoint's tokenizer\.json\), truncates at \d+ tokens/);
    const line = r.stdout.split('\n').filter((l) => /^(tokenizer|specials) /.test(l)).join('\n');
    for (const w of words) assert.ok(line.includes(w), `${kind}: ${JSON.stringify(w)} not in ${line}`);
  }
});

test('version 1 bundles still load and tokenize with WordPiece', async () => {
  const file = path.join(ROOT, 'models/all-minilm-l6-v2.q8.blb.gz');
  const bytes = zlib.gunzipSync(fs.readFileSync(file));
  assert.equal(bytes.readUInt32LE(8), 1);
  if (!IS_WASM) {
    const info = cli(['info', file]);
    assert.equal(info.status, 0, info.stderr);
    assert.match(info.stdout, /format v1\)/);
    assert.match(info.stdout, /tokenizer +WordPiece \(the bundle's vocabulary\)/);
    const r = cli(['tokenize', file, 'Hello, world!']);
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout).tokens, ['[CLS]', 'hello', ',', 'world', '!', '[SEP]']);
  } else {
    const M = await loadWasm();
    assert.equal(loadBytes(M, bytes), 0, wasmError(M));
    const p = putString(M, 'Hello, world!');
    assert.deepEqual(JSON.parse(M.UTF8ToString(M._blw_tokenize_json(p, 0, 0))).tokens, ['[CLS]', 'hello', ',', 'world', '!', '[SEP]']);
  }
});

// ------------------------------------------------------------ crafted bundles
/** Bundle bytes with the tokenizer.json value edited by f(meta, at, len) and the CRCs made right again. */
function crafted(kind, f) {
  const b = Buffer.from(fs.readFileSync(bundle(kind).file));
  const metaOff = Number(b.readBigUInt64LE(24)), metaSize = Number(b.readBigUInt64LE(32));
  const key = Buffer.from('tokenizer.json');
  const k = b.indexOf(Buffer.concat([Buffer.from([key.length, 0, 0, 0]), key, Buffer.from([5, 0, 0, 0])]), metaOff);
  assert.ok(k > 0 && k < metaOff + metaSize, 'no tokenizer.json entry');
  const at = k + 4 + key.length + 4;
  f(b, at, Number(b.readBigUInt64LE(at)), metaOff + metaSize - (at + 8));
  b.writeUInt32LE(zlib.crc32(b.subarray(metaOff, metaOff + metaSize)), 80);
  b.writeUInt32LE(zlib.crc32(b.subarray(0, 92)), 92);
  return b;
}

async function refusal(bytes) {
  if (!IS_WASM) {
    const f = path.join(OUT, 'crafted.blb');
    fs.writeFileSync(f, bytes);
    const r = cli(['info', f]);
    assert.notEqual(r.status, 0, 'loaded');
    assert.ok(!/Sanitizer|Segmentation|Aborted/.test(r.stderr), r.stderr);
    return r.stderr;
  }
  const M = await loadWasm();
  assert.equal(loadBytes(M, bytes), -1, 'loaded');
  return wasmError(M);
}

test('bundles with a lying or broken tokenizer.json are refused with a reason', async () => {
  const cases = [
    ['length past the section', (b, at, n, left) => b.writeBigUInt64LE(BigInt(left + 1), at), /'tokenizer\.json': \d+ bytes claimed, \d+ left in the metadata section/],
    ['length one byte long', (b, at, n) => b.writeBigUInt64LE(BigInt(n + 1), at), /metadata entry \d+: key length \d+ out of range/],
    ['length of 2^63', (b, at) => b.writeBigUInt64LE(1n << 63n, at), /bytes claimed/],
    ['length too short', (b, at, n) => b.writeBigUInt64LE(BigInt(n - 10), at), /metadata|JSON/],
    ['broken JSON', (b, at) => { b[at + 8] = 0x78; }, /tokenizer\.json in the bundle: .*JSON/],
    ['unsupported model', (b, at, n) => {
      const s = b.toString('latin1', at + 8, at + 8 + n), i = s.indexOf('"type":"BPE"') >= 0 ? s.indexOf('"type":"BPE"') : s.indexOf('"type": "BPE"');
      assert.ok(i >= 0);
      b.write(s[i + 7] === ' ' ? '"type": "XYZ"' : '"type":"XYZ"', at + 8 + i, 'latin1');
    }, /tokenizer\.json in the bundle: .*XYZ/],
    ['version 1 header', (b) => b.writeUInt32LE(1, 8), /type 5 \(bytes\) needs format version 2/],
    ['version 3 header', (b) => b.writeUInt32LE(3, 8), /unsupported bundle format version 3/],
  ];
  for (const [name, f, re] of cases) {
    const msg = await refusal(crafted('roberta', f));
    assert.match(msg, re, `${name}: ${msg}`);
  }
});

nativeTest('folders without a tokenizer.json are refused with the command that makes one', () => {
  const { dir } = folder('roberta', 'no-tokjson', []);
  fs.writeFileSync(path.join(dir, 'vocab.json'), '{}');
  fs.writeFileSync(path.join(dir, 'merges.txt'), '#version: 0.2\n');
  let r = cli(['convert', dir, path.join(OUT, 'x.blb')]);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /vocab\.json \+ merges\.txt .*AutoTokenizer\.from_pretrained\('DIR'\)\.save_pretrained\('DIR'\)/);
  fs.rmSync(path.join(dir, 'vocab.json'));
  fs.rmSync(path.join(dir, 'merges.txt'));
  fs.writeFileSync(path.join(dir, 'sentencepiece.bpe.model'), 'x');
  r = cli(['convert', dir, path.join(OUT, 'x.blb')]);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /sentencepiece\.bpe\.model \(a SentencePiece model\) without a tokenizer\.json.*save_pretrained/);
});

test('the page\'s converter (wasm, web/js/engine/convert.js) writes the same bundle as bertlens convert', { skip: IS_WASM ? false : 'needs BERTLENS_BACKEND=wasm' }, async () => {
  const { workerConverter, folderEntries } = await import('../tools/wasm_node.mjs');
  const { convertCheckpoint } = await import('../web/js/engine/convert.js');
  const { WORKER_PROTOCOL } = await import('../web/js/lib/protocol.js');
  const { call } = await workerConverter(WORKER_PROTOCOL);
  for (const kind of ['roberta', 'xlmr', 'mpnet']) {
    const want = fs.readFileSync(bundle(kind).file);
    const { bytes } = await convertCheckpoint(call, folderEntries(path.join(OUT, kind)),
      { name: `test/${kind}`, license: 'MIT', dtype: 'f32' }, () => {});
    assert.ok(Buffer.from(bytes).equals(want), `${kind}: the page's bundle differs from the CLI's`);
  }
});
