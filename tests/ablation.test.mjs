// ablation.test.mjs — head ablation and sentence embeddings against Hugging Face.
//
//   node --test tests/ablation.test.mjs                          the native CLI
//   BERTLENS_BACKEND=wasm node --test tests/ablation.test.mjs    the wasm module (tests/lib/backend.mjs)
//
// References: tests/fixtures/ablation/ (tests/fixtures/ablation/make.py:
// BertModel eager fp32 with forward hooks multiplying the masked heads'
// attention probabilities by 0, transformers 5 having no head_mask argument).
// Bundles: build/models/all-minilm-l6-v2.f32.blb (make test-models) held to
// the f32 bars; the published default (models/index.json) gets
// its figures printed and the embedding cosine bar of the default model.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { floats, loadBundle, putString, wasmError } from '../tools/wasm_node.mjs';
import { BIN, loadWasm as createModule, testOn, wasmTest } from './lib/backend.mjs';
import { cosine } from './lib/parity.mjs';

const TOL_F32_ATTN_MAX = 1e-5;     // attention probabilities, max |d|
const MIN_F32_EMB_COSINE = 0.999999;
const MIN_DEF_EMB_COSINE = 0.995;  // the quantized default model's bar (tests/encoder.test.mjs)

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const FIX = path.join(ROOT, 'tests/fixtures/ablation');
const F32 = path.join(ROOT, 'build/models/all-minilm-l6-v2.f32.blb');
const DEF = path.join(ROOT, 'models', JSON.parse(fs.readFileSync(path.join(ROOT, 'models/index.json'), 'utf8')).models.find((m) => m.default).file);
const TINY = path.join(ROOT, 'build/models/tiny-bert.f32.blb'); // 2 layers, 4 heads: quick to load

const index = JSON.parse(fs.readFileSync(path.join(FIX, 'index.json'), 'utf8'));
const bin = fs.readFileSync(path.join(FIX, 'ablation.bin'));
const L = index.layers, NH = index.heads;
function ref(e) {
  const n = e.shape.reduce((a, b) => a * b, 1);
  return new Float32Array(bin.buffer.slice(bin.byteOffset + e.offset, bin.byteOffset + e.offset + n * 4));
}
const flagsOf = (c) => (c.ablate ? ['--ablate', c.ablate] : c.keep ? ['--keep', c.keep] : []);

function cli(args) {
  const r = spawnSync(BIN, args, { encoding: 'utf8', maxBuffer: 1 << 28 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

// ------------------------------------------------------------- engines
// run(bundle, case) -> { tokens, attn: Float32Array [L][H][T][T] }
// embed(bundle, case, texts) -> [{ tokens, embedding }]
const native = {
  run(bundle, c) {
    const r = cli(['attend', ...flagsOf(c), bundle, c.input.text, ...(c.input.text_pair ? [c.input.text_pair] : [])]);
    assert.equal(r.status, 0, r.stderr);
    const j = JSON.parse(r.stdout);
    return { tokens: j.tokens, attn: Float32Array.from(j.attentions.flat(3)) };
  },
  embed(bundle, c, texts) {
    const r = cli(['embed', ...flagsOf(c), bundle, ...texts]);
    assert.equal(r.status, 0, r.stderr);
    const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
    const out = lines.slice(0, texts.length);
    if (texts.length > 1) { // the cosine matrix is the embeddings' dot products
      const cos = lines[texts.length].cosine;
      for (let a = 0; a < texts.length; a++)
        for (let b = 0; b < texts.length; b++)
          assert.ok(Math.abs(cos[a][b] - cosine(out[a].embedding, out[b].embedding)) < 1e-6, 'cosine matrix');
    }
    return out;
  },
};

function wasmEngine(M) {
  let loaded = null;
  const load = (bundle) => {
    if (loaded !== bundle) loadBundle(M, bundle);
    loaded = bundle;
  };
  const setMask = (c) => {
    const m = M._malloc(L * NH);
    M.HEAPU8.set(c.mask.flat(), m);
    const n = M._blw_set_head_mask(m);
    M._free(m);
    assert.equal(n, c.mask.flat().reduce((a, b) => a + b, 0), `blw_set_head_mask: ${wasmError(M)}`);
  };
  const run1 = (a, b, flags) => {
    const pa = putString(M, a), pb = b ? putString(M, b) : 0;
    const T = M._blw_run(pa, pb, flags, 0);
    M._free(pa);
    if (pb) M._free(pb);
    assert.ok(T > 0, `blw_run: ${wasmError(M)}`);
    const tokens = JSON.parse(M.UTF8ToString(M._blw_tokens_json())).tokens;
    return { T, tokens };
  };
  return {
    M,
    run(bundle, c) {
      load(bundle);
      setMask(c);
      const { T, tokens } = run1(c.input.text, c.input.text_pair, 1);
      const attn = new Float32Array(L * NH * T * T);
      for (let l = 0; l < L; l++) attn.set(floats(M, M._blw_attention(l), NH * T * T), l * NH * T * T);
      return { tokens, attn };
    },
    embed(bundle, c, texts) {
      load(bundle);
      setMask(c);
      return texts.map((t) => {
        const { tokens } = run1(t, null, 0);
        return { tokens, embedding: floats(M, M._blw_embedding(), c.embeddings[0].embedding.shape[0]) };
      });
    },
  };
}

// ------------------------------------------------------------ comparison
function compare(engine, bundle, strict) {
  const figs = [];
  for (const c of index.cases) {
    const name = `${c.mask_name} / ${c.input.text_pair ? 'pair' : 'sentence'}`;
    const got = engine.run(bundle, c);
    assert.deepEqual(got.tokens, c.tokens, `${name}: tokens`);
    const T = c.tokens.length, per = NH * T * T;
    const want = ref(c.attn);
    let maxd = 0, rows = 0, agree = 0;
    for (let l = c.first_layer; l < L; l++)
      for (let h = 0; h < NH; h++) {
        const g = got.attn.subarray(l * per + h * T * T, l * per + (h + 1) * T * T);
        const w = want.subarray((l - c.first_layer) * per + h * T * T, (l - c.first_layer) * per + (h + 1) * T * T);
        if (c.mask[l][h]) assert.ok(g.every((x) => x === 0), `${name}: masked head ${l}:${h} not all zeros`);
        for (let i = 0; i < T * T; i++) maxd = Math.max(maxd, Math.abs(g[i] - w[i]));
        if (c.mask[l][h]) continue;
        for (let i = 0; i < T; i++) {
          let bg = 0, bw = 0;
          for (let j = 1; j < T; j++) {
            if (g[i * T + j] > g[i * T + bg]) bg = j;
            if (w[i * T + j] > w[i * T + bw]) bw = j;
          }
          rows++;
          agree += bg === bw;
        }
      }
    const texts = c.embeddings.map((e) => e.text);
    const embs = engine.embed(bundle, c, texts);
    let minCos = 1;
    embs.forEach((e, k) => {
      assert.deepEqual(e.tokens, c.embeddings[k].tokens, `${name}: embed tokens`);
      minCos = Math.min(minCos, cosine(e.embedding, ref(c.embeddings[k].embedding)));
    });
    figs.push({ name, maxd, argmax: agree / rows, minCos });
    console.log(`  ${name.padEnd(34)} attention max|d| ${maxd.toExponential(2)}  argmax ${(100 * agree / rows).toFixed(1)}%` +
      `  embedding cosine ${minCos.toFixed(7)}`);
    if (strict) {
      assert.ok(maxd <= TOL_F32_ATTN_MAX, `${name}: attention max |d| ${maxd} > ${TOL_F32_ATTN_MAX}`);
      assert.ok(minCos >= MIN_F32_EMB_COSINE, `${name}: embedding cosine ${minCos} < ${MIN_F32_EMB_COSINE}`);
    } else {
      assert.ok(minCos >= MIN_DEF_EMB_COSINE, `${name}: default-bundle embedding cosine ${minCos} < ${MIN_DEF_EMB_COSINE}`);
    }
  }
  return figs;
}

// --------------------------------------------------------------- tests
let wasm = null; // one module for both bundles
// natively, not under ASan (the 90 MB f32 bundle takes minutes there; make test-asan never ran these)
const nativeTest = testOn('native');
const engines = [['native', nativeTest, () => native], ['wasm', wasmTest, async () => (wasm ||= wasmEngine(await createModule()))]];

test('the references differ from the unmasked model for every mask', () => {
  for (const c of index.cases.filter((x) => x.ablate || x.keep)) {
    const base = index.cases.find((x) => !x.ablate && !x.keep && x.input.text === c.input.text);
    assert.ok(cosine(ref(c.embeddings[0].embedding), ref(base.embeddings[0].embedding)) < 0.99999, c.mask_name);
  }
});

for (const [name, test, make] of engines) {
  test(`${name}: f32 bundle vs Hugging Face with heads masked`, async () => {
    const e = await make();
    compare(e, F32, true);
  });
  test(`${name}: default bundle, figures (embedding cosine >= ${MIN_DEF_EMB_COSINE})`, async () => {
    const e = await make();
    compare(e, DEF, false);
  });
}

{
  wasmTest('wasm: mask and embedding calls refuse without a model or a run; a load starts unmasked', async () => {
    const M = await createModule();
    const m = M._malloc(L * NH);
    M.HEAPU8.fill(1, m, m + L * NH);
    assert.equal(M._blw_set_head_mask(m), -1);
    assert.match(wasmError(M), /no model/);
    loadBundle(M, F32);
    assert.equal(M._blw_embedding(), 0);
    assert.match(wasmError(M), /no run/);
    assert.equal(M._blw_set_head_mask(m), L * NH);
    assert.equal(M._blw_set_head_mask(0), 0);
    const layer = index.cases.find((c) => c.ablate === '3:*' && !c.input.text_pair);
    const none = index.cases.find((c) => !c.ablate && !c.keep && !c.input.text_pair);
    const hidden = none.embeddings[0].embedding.shape[0];
    const embed = () => {
      const p = putString(M, none.input.text);
      assert.ok(M._blw_run(p, 0, 0, 0) > 0, wasmError(M));
      M._free(p);
      return floats(M, M._blw_embedding(), hidden);
    };
    M.HEAPU8.fill(0, m, m + L * NH);
    M.HEAPU8.fill(1, m + 3 * NH, m + 4 * NH);
    assert.equal(M._blw_set_head_mask(m), NH);
    M._free(m);
    assert.ok(cosine(embed(), ref(layer.embeddings[0].embedding)) >= MIN_F32_EMB_COSINE, 'layer 3 masked');
    loadBundle(M, F32); // a new load: no mask
    assert.ok(cosine(embed(), ref(none.embeddings[0].embedding)) >= MIN_F32_EMB_COSINE, 'unmasked after load');
  });
}

{
  nativeTest('native: head specs are parsed strictly', () => {
    const bad = [
      ['2:0', /layer 2 out of range 0\.\.1/], ['0:4', /head 4 out of range 0\.\.3/], ['0:', /not a head/],
      ['a:1', /not a head/], ['0:1,', /not a head/], ['', /empty head list/], ['0:1:2', /not a head/],
      ['1:*x', /not a head/], ['-1:2', /not a head/], [' 1:2', /not a head/],
    ];
    for (const [spec, re] of bad)
      for (const opt of ['--ablate', '--keep']) {
        const r = cli(['attend', opt, spec, TINY, 'hi']);
        assert.equal(r.status, 1, `${opt} '${spec}' accepted`);
        assert.match(r.stderr, re, `${opt} '${spec}': ${r.stderr}`);
        assert.equal(r.stdout, '');
      }
    const both = cli(['embed', '--ablate', '0:1', '--keep', '0:2', TINY, 'hi']);
    assert.equal(both.status, 1);
    assert.match(both.stderr, /not both/);
  });

  nativeTest('native: embed truncates at the bundle\'s max_seq_length, else the model\'s positions (said)', () => {
    const long = Array.from({ length: 300 }, (_, i) => `word${i % 7}`).join(' ');
    const r = cli(['embed', F32, long]);
    assert.equal(r.status, 0, r.stderr);
    const j = JSON.parse(r.stdout);
    assert.equal(j.tokens.length, index.max_seq_length);
    assert.equal(j.tokens.at(-1), '[SEP]');
    assert.doesNotMatch(r.stderr, /no sentence\.max_seq_length/);
    assert.match(cli(['info', F32]).stdout, /sentence\.max_seq_length\s+256\n/); // written by tools/convert.py
    // the published default carries the key too (make_models)
    const q = cli(['embed', DEF, long]);
    assert.equal(q.status, 0, q.stderr);
    assert.equal(JSON.parse(q.stdout).tokens.length, 256);
    assert.doesNotMatch(q.stderr, /no sentence\.max_seq_length/);
    // a bundle without it (the tiny random BERT has no sentence_bert_config.json) says so
    const t = cli(['embed', TINY, 'The cat sat.']);
    assert.equal(t.status, 0, t.stderr);
    assert.match(t.stderr, /no sentence\.max_seq_length; truncating at the model's 512 tokens/);
  });
}
