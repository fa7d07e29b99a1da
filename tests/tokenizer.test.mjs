// Tokenizer vs Hugging Face: every corpus line must give exactly the ids,
// type ids, offsets (UTF-16), word ids and truncated flag that
// BertTokenizerFast gave (tests/fixtures/tokenizer/*.jsonl.gz, made by
// tests/fixtures/tokenizer/make.py from tests/corpus/tokenizer.jsonl).
//
//   node --test tests/tokenizer.test.mjs                          $BIN tokenize --jsonl (build/bertlens)
//   BERTLENS_BACKEND=wasm node --test tests/tokenizer.test.mjs    build/wasm/bertlens.js, blw_tokenize_json
//   BERTLENS_BACKEND=asan ...                                     build/asan/bertlens, quick
//
// Variants and their bundles:
//   uncased  build/models/all-minilm-l6-v2.q8.blb, else models/all-minilm-l6-v2.q8.blb.gz
//   cased    $BERTLENS_CASED_BUNDLE or build/models/all-minilm-l6-v2-cased.q8.blb
//            (tools/convert.py --cased of the same checkpoint; `make test-models`)
// BERTLENS_QUICK: every k-th corpus line (~300 lines, all categories) for sanitizer runs.
// Also checked: invalid UTF-8 (CLI argv / raw bytes into wasm) is a clear
// error, and a bad jsonl line gives {"error"} without stopping the stream.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import zlib from 'node:zlib';
import { loadBundle, putString } from '../tools/wasm_node.mjs';
import { BIN, ENGINE, IS_WASM, QUICK, ROOT, loadWasm, nativeTest, wasmTest } from './lib/backend.mjs';
import { assertAllLinesMatch, firstDiff } from './lib/first_diff.mjs';

const MODE = ENGINE;

function firstExisting(...cands) {
  return cands.find((p) => p && fs.existsSync(p));
}
const VARIANTS = [
  {
    name: 'uncased',
    bundle: firstExisting(path.join(ROOT, 'build/models/all-minilm-l6-v2.q8.blb'),
      path.join(ROOT, 'models/all-minilm-l6-v2.q8.blb.gz')),
  },
  {
    name: 'cased',
    bundle: firstExisting(process.env.BERTLENS_CASED_BUNDLE,
      path.join(ROOT, 'build/models/all-minilm-l6-v2-cased.q8.blb')),
  },
];

// ---------------------------------------------------------------- data
const splitLines = (s) => s.split('\n').filter((l) => l.length); // not /\r?\n|\u2028/: those are data
const corpus = splitLines(fs.readFileSync(path.join(ROOT, 'tests/corpus/tokenizer.jsonl'), 'utf8'));
const pick = QUICK ? Math.max(1, Math.ceil(corpus.length / 300)) : 1;
const index = corpus.map((_, i) => i).filter((i) => i % pick === 0);

function fixture(name) {
  const gz = fs.readFileSync(path.join(ROOT, `tests/fixtures/tokenizer/${name}.jsonl.gz`));
  const rows = splitLines(zlib.gunzipSync(gz).toString('utf8')).map((l) => JSON.parse(l));
  if (rows.length !== corpus.length) throw new Error(`${name} fixture has ${rows.length} rows, corpus ${corpus.length}`);
  return rows;
}

// null if identical, else a description of the first difference
function compare(variant, i, got, want) {
  const where = `${variant} line ${i + 1} ${corpus[i].slice(0, 120)}`;
  const why = firstDiff(got, want);
  if (why) return `${where}\n     ${why}`;
  if (!Array.isArray(got.tokens) || got.tokens.length !== got.ids.length) return `${where}: tokens/ids lengths differ`;
  return null;
}

function check(variant, outputs) {
  const want = fixture(variant);
  console.log(assertAllLinesMatch(`${MODE} ${variant}`, index.length, (k) => compare(variant, index[k], outputs[k], want[index[k]]), 15));
}

// -------------------------------------------------------------- native
function runNative(bundle, lines) {
  const r = spawnSync(BIN, ['tokenize', '--jsonl', bundle], { input: lines.join('\n') + '\n', maxBuffer: 1 << 30 });
  if (r.status !== 0) throw new Error(`${BIN} tokenize --jsonl exited ${r.status}: ${r.stderr}`);
  const out = splitLines(r.stdout.toString('utf8'));
  if (out.length !== lines.length) throw new Error(`expected ${lines.length} output lines, got ${out.length}`);
  return out.map((l) => JSON.parse(l));
}

function nativeErrors(bundle) {
  // Invalid UTF-8 can only reach the CLI through argv: let the shell write the bytes.
  const cases = [
    ['ab\\377cd', 'text A', 'byte 2'],
    ['ok', 'text B', 'byte 1', 'x\\300\\257'], // overlong '/'
    ['\\355\\240\\200', 'text A', 'byte 0'],      // UTF-16 surrogate
    ['abc\\342\\202', 'text A', 'byte 3'],       // truncated sequence
    ['\\364\\220\\200\\200', 'text A', 'byte 0'], // above U+10FFFF
  ];
  for (const [a, which, at, b] of cases) {
    const script = `exec "$BIN" tokenize "$BUNDLE" "$(printf '${a}')"` + (b ? ` "$(printf '${b}')"` : '');
    const r = spawnSync('/bin/sh', ['-c', script], { env: { ...process.env, BIN, BUNDLE: bundle } });
    const err = r.stderr.toString();
    assert.ok(r.status === 1 && /invalid UTF-8/.test(err) && err.includes(which) && err.includes(at),
      `invalid UTF-8 ${a} ${b || ''}: status ${r.status}, stderr ${JSON.stringify(err)}`);
  }
  // A bad jsonl line is reported in place and the stream goes on.
  const r = spawnSync(BIN, ['tokenize', '--jsonl', bundle], { input: '{"text": 5}\n"\\ud800"\nnot json\n"fine"\n' });
  const out = splitLines(r.stdout.toString()).map((l) => JSON.parse(l));
  assert.ok(r.status === 0 && out.length === 4 && out.slice(0, 3).every((o) => typeof o.error === 'string') &&
      JSON.stringify(out[3].tokens) === '["[CLS]","fine","[SEP]"]',
    `jsonl error lines: status ${r.status} output ${JSON.stringify(out)}`);
}

// ---------------------------------------------------------------- wasm
function wasmCall(M, a, b, maxLen) {
  const put = (s) => (s === null || s === undefined ? 0 : putString(M, s));
  const pa = put(a), pb = put(b);
  const out = M.UTF8ToString(M._blw_tokenize_json(pa, pb, maxLen));
  M._free(pa);
  if (pb) M._free(pb);
  return JSON.parse(out);
}

function runWasm(M, lines) {
  return lines.map((l) => {
    const o = JSON.parse(l);
    // C strings end at NUL: pass U+0001 instead. Both are removed by the
    // clean-up and have the same UTF-16 length, so every output is unchanged.
    const nul = (s) => (typeof s === 'string' ? s.replaceAll('\0', '\x01') : s);
    return wasmCall(M, nul(o.text), nul(o.text_pair), o.max_length || 0);
  });
}

function wasmErrors(M) {
  const cases = [[[0x61, 0x62, 0xff, 0x63], 'byte 2'], [[0xc0, 0xaf], 'byte 0'], [[0x61, 0xed, 0xa0, 0x80], 'byte 1'],
    [[0x61, 0x62, 0x63, 0xe2, 0x82], 'byte 3']];
  for (const [bytes, at] of cases) {
    const p = M._malloc(bytes.length + 1);
    M.HEAPU8.set([...bytes, 0], p);
    const out = JSON.parse(M.UTF8ToString(M._blw_tokenize_json(p, 0, 0)));
    M._free(p);
    assert.ok(typeof out.error === 'string' && /invalid UTF-8/.test(out.error) && out.error.includes(at),
      `wasm invalid UTF-8 ${bytes}: ${JSON.stringify(out)}`);
  }
}

// ---------------------------------------------------------------- tests
const lines = index.map((i) => corpus[i]);
const noBundle = (v) => `${v.name}: no bundle found (make test-models builds build/models/all-minilm-l6-v2-cased.q8.blb)`;
let M = null;
const wasm = async () => (M ||= await loadWasm());

for (const v of VARIANTS) {
  test(`${MODE} ${v.name}: ${lines.length} corpus lines give Hugging Face's ids, type ids, offsets, word ids${QUICK ? ' (quick)' : ''}`, async () => {
    assert.ok(v.bundle, noBundle(v));
    if (IS_WASM) {
      const M = await wasm();
      loadBundle(M, v.bundle);
      check(v.name, runWasm(M, lines));
    } else {
      check(v.name, runNative(v.bundle, lines));
    }
  });
}

nativeTest('native: invalid UTF-8 and bad jsonl lines give clear errors', () => {
  assert.ok(VARIANTS[0].bundle, noBundle(VARIANTS[0]));
  nativeErrors(VARIANTS[0].bundle);
});

wasmTest('wasm: invalid UTF-8 gives a clear error', async () => {
  assert.ok(VARIANTS[0].bundle, noBundle(VARIANTS[0]));
  const M = await wasm();
  loadBundle(M, VARIANTS[0].bundle);
  wasmErrors(M);
});
