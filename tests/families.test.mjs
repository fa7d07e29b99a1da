// families.test.mjs — every encoder family against Hugging Face: tiny random
// checkpoints (tests/fixtures/families/<family>/, made by make.py with
// transformers) are converted by `bertlens convert` and run on the ids of
// make.py's inputs; every layer's attention must be within 1e-5 of the model
// run eagerly in float32 (f32 bundles), the last hidden state within 1e-4,
// and every quantized dtype must convert and stay within its bar.
//
//   BERTLENS_BACKEND=native|wasm node --test tests/families.test.mjs
//
// The bundles are converted by the native CLI (build/bertlens) in both
// backends; wasm then loads them in build/wasm/bertlens.js. The tests of the
// CLI itself (refusals, info, attend --ids, text in) run on native only.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { BIN, IS_WASM, QUICK, ROOT, loadWasm, nativeTest } from './lib/backend.mjs';
import { floats, loadBundle, putInts, wasmError } from '../tools/wasm_node.mjs';

const FIX = path.join(ROOT, 'tests/fixtures/families');
// The families bertlens runs: every one of make.py's (what the converter
// refuses, and why, is tests/families_rel.test.mjs's and the decoder test's below).
const FAMILIES = ['roberta', 'xlm-roberta', 'camembert', 'electra', 'albert', 'mpnet', 'deberta-v2', 'deberta-v2-buckets', 'modernbert', 'nomic-bert', 'gte', 'eurobert'];
const TOL_ATTN = 1e-5;   // f32: attention probabilities, max |d|
const TOL_HIDDEN = 1e-4; // f32: last hidden state, max |d|
// Quantized bundles: max |d| of the attention over every case (measured on
// these checkpoints: f16 <= 4.9e-4, q10 <= 2.9e-3, q8 <= 1.4e-2, q4 <= 0.23).
const QUANT = { f16: 2e-3, q10: 0.01, q8: 0.04, q4: 0.35 };
// q8-low: the q8 bundle with `--low-memory` (native): its q8 matrices
// re-laid out in place, as the page's engine always does (wasm runs q8 so).
const DTYPES = [...(QUICK ? ['f32', 'q8'] : ['f32', ...Object.keys(QUANT)]), ...(IS_WASM ? [] : ['q8-low'])];
QUANT['q8-low'] = QUANT.q8;

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bertlens-families-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

function convert(family, dtype) {
  const out = path.join(tmp, `${family}.${dtype}.blb`);
  const r = spawnSync(BIN, ['convert', path.join(FIX, family), out, '--dtype', dtype], { encoding: 'utf8' });
  return { out, status: r.status, stderr: r.stderr };
}

function reference(family) {
  const ref = JSON.parse(fs.readFileSync(path.join(FIX, `${family}.ref.json`), 'utf8'));
  const bin = fs.readFileSync(path.join(FIX, ref.bin));
  const arr = (e) => {
    const n = e.shape.reduce((a, b) => a * b, 1);
    return new Float32Array(bin.buffer.slice(bin.byteOffset + e.offset, bin.byteOffset + e.offset + 4 * n));
  };
  for (const c of ref.cases) c.attnRef = arr(c.attn), c.hiddenRef = arr(c.hidden);
  return ref;
}

// run(bundle, case) -> { attn: [L][NH][T][T] flat, hidden: [T][H] flat }
let wasm = null;
async function engine() {
  if (!IS_WASM) {
    return (bundle, c, ref, low) => {
      const r = spawnSync(BIN, [...(low ? ['--low-memory'] : []), 'test-attend', '--hidden', '--ids', c.ids.join(','), '--types', c.type_ids.join(','),
        bundle], { encoding: 'utf8', maxBuffer: 1 << 28 });
      assert.equal(r.status, 0, `test-attend ${path.basename(bundle)}: ${r.stderr}`);
      const j = JSON.parse(r.stdout);
      return { attn: Float32Array.from(j.attentions.flat(Infinity)), hidden: Float32Array.from(j.hidden[ref.n_layers].flat(Infinity)) };
    };
  }
  wasm ||= await loadWasm();
  const M = wasm;
  return (bundle, c, ref) => {
    loadBundle(M, bundle);
    const T = c.T, { n_layers: L, n_heads: NH, hidden: H } = ref;
    const ids = putInts(M, c.ids), types = putInts(M, c.type_ids);
    try {
      assert.equal(M._blw_forward_ids(ids, types, T, 1 | 8, -1), T, wasmError(M));
      const attn = new Float32Array(L * NH * T * T);
      for (let l = 0; l < L; l++) attn.set(floats(M, M._blw_attention(l), NH * T * T), l * NH * T * T);
      return { attn, hidden: floats(M, M._blw_hidden(L), T * H) };
    } finally {
      M._free(ids);
      M._free(types);
    }
  };
}

const maxDiff = (a, b) => {
  assert.equal(a.length, b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
};

for (const family of FAMILIES) {
  test(`${family}: every layer's attention as Hugging Face's (${DTYPES.join(', ')})`, async () => {
    const ref = reference(family);
    const run = await engine();
    for (const dtype of DTYPES) {
      const b = convert(family, dtype === 'q8-low' ? 'q8' : dtype);
      assert.equal(b.status, 0, `convert ${family} --dtype ${dtype}: ${b.stderr}`);
      let worst = 0, worstHidden = 0;
      for (const c of ref.cases) {
        const got = run(b.out, c, ref, dtype === 'q8-low');
        worst = Math.max(worst, maxDiff(got.attn, c.attnRef));
        worstHidden = Math.max(worstHidden, maxDiff(got.hidden, c.hiddenRef));
      }
      console.log(`  ${family} ${dtype}: attention max|d| ${worst.toExponential(2)}, hidden max|d| ${worstHidden.toExponential(2)}`);
      if (dtype === 'f32') {
        assert.ok(worst <= TOL_ATTN, `${family} f32 attention max|d| ${worst} > ${TOL_ATTN}`);
        assert.ok(worstHidden <= TOL_HIDDEN, `${family} f32 hidden max|d| ${worstHidden} > ${TOL_HIDDEN}`);
      } else {
        assert.ok(worst <= QUANT[dtype], `${family} ${dtype} attention max|d| ${worst} > ${QUANT[dtype]}`);
      }
    }
  });
}

nativeTest('a decoder config is refused with the reason', () => {
  const dir = path.join(tmp, 'gpt2');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ model_type: 'gpt2', architectures: ['GPT2LMHeadModel'] }));
  fs.writeFileSync(path.join(dir, 'model.safetensors'), Buffer.alloc(16));
  const r = spawnSync(BIN, ['convert', dir, path.join(tmp, 'gpt2.blb')], { encoding: 'utf8' });
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /model_type 'gpt2' .*is a decoder: bertlens shows encoders/);
});

nativeTest('bertlens info names the family', () => {
  const b = convert('albert', 'f32');
  assert.equal(b.status, 0, b.stderr);
  const r = spawnSync(BIN, ['info', b.out], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /family\s+albert\b.*one layer group shared by 3 layers/);
});

nativeTest('attend --ids runs the model on ids (public command), as Hugging Face', () => {
  const ref = reference('xlm-roberta');
  const b = convert('xlm-roberta', 'f32');
  assert.equal(b.status, 0, b.stderr);
  const c = ref.cases[3]; // the pair
  const r = spawnSync(BIN, ['attend', '--ids', c.ids.join(','), '--types', c.type_ids.join(','), b.out],
    { encoding: 'utf8', maxBuffer: 1 << 26 });
  assert.equal(r.status, 0, r.stderr);
  const j = JSON.parse(r.stdout);
  assert.equal(j.tokens.length, c.T);
  const d = maxDiff(Float32Array.from(j.attentions.flat(Infinity)), c.attnRef);
  assert.ok(d <= TOL_ATTN, `attend --ids: max|d| ${d}`);
});

// Text in, through the tokenizer the bundle carries (the checkpoint's
// tokenizer.json): the ids Hugging Face's tokenizer gives, and its attention.
nativeTest('every family: text through the bundle\'s tokenizer gives Hugging Face\'s ids and attention', () => {
  for (const family of FAMILIES) {
    const ref = reference(family);
    const b = convert(family, 'f32');
    assert.equal(b.status, 0, `convert ${family}: ${b.stderr}`);
    const texts = ref.cases.filter((c) => c.text);
    assert.ok(texts.length >= 2, `${family}: make.py's text cases`);
    const lines = texts.map((c) => JSON.stringify(c.text_b ? { text: c.text, text_pair: c.text_b } : { text: c.text }));
    const tk = spawnSync(BIN, ['tokenize', '--jsonl', b.out], { input: lines.join('\n') + '\n', encoding: 'utf8' });
    assert.equal(tk.status, 0, `${family} tokenize: ${tk.stderr}`);
    const got = tk.stdout.trim().split('\n').map((l) => JSON.parse(l));
    for (const [k, c] of texts.entries()) {
      assert.deepEqual(got[k].ids, c.ids, `${family}: ids of ${JSON.stringify(c.text)}`);
      const r = spawnSync(BIN, ['attend', b.out, c.text, ...(c.text_b ? [c.text_b] : [])], { encoding: 'utf8', maxBuffer: 1 << 26 });
      assert.equal(r.status, 0, `${family} attend: ${r.stderr}`);
      const d = maxDiff(Float32Array.from(JSON.parse(r.stdout).attentions.flat(Infinity)), c.attnRef);
      assert.ok(d <= TOL_ATTN, `${family} attend TEXT: max|d| ${d}`);
    }
  }
});
