// nonfinite.test.mjs — inf and NaN in bundles and checkpoints (issue 31):
//
//  - one +inf q4 scale made the forward pass loop forever (blk_weight_pack's
//    group_scale, src/kernels/kernels_pack.c: a sum of NaNs is never small enough), and
//    q4/q8 scales that are finite but huge overflow a float when multiplied
//    out, so the same loop hung on a bundle the loader must accept: the
//    forward pass now ends on any weights, whatever numbers it then gives;
//  - the loader checks every float a bundle holds finite (f32 and f16
//    values, q8/q4/QN block scales, f32 metadata) and names the tensor;
//  - the converter refuses a checkpoint tensor holding inf or NaN, and a
//    weight that float16 cannot hold when asked for f16 (it wrote +inf).
//
//   node --test tests/nonfinite.test.mjs                         build/bertlens
//   BERTLENS_BACKEND=asan node --test tests/nonfinite.test.mjs   build/asan/bertlens
//   BERTLENS_BACKEND=wasm node --test tests/nonfinite.test.mjs   build/wasm/bertlens.js, the page's converter
// Bundles: tests/fuzz/bundle/tiny-q8.blb (committed) and build/models/tiny-bert.{q4,q10}.blb
// (make test-models), edited with tests/lib/bundle_edit.mjs; checkpoints: tests/fixtures/tiny-bert.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { BACKEND, BIN, ROOT, WASM_JS, loadWasm, missing, nativeTest, wasmTest } from './lib/backend.mjs';
import { DTYPES, META, elements, qnScaleHighOffset, readBundle, scaleOffset, writeBundle } from './lib/bundle_edit.mjs';
import { loadBytes, wasmError } from '../tools/wasm_node.mjs';

const OUT = path.join(ROOT, 'build/nonfinite');
fs.mkdirSync(OUT, { recursive: true });
const TINY_Q8 = path.join(ROOT, 'tests/fuzz/bundle/tiny-q8.blb');
const TINY_Q4 = path.join(ROOT, 'build/models/tiny-bert.q4.blb');
const TINY_Q10 = path.join(ROOT, 'build/models/tiny-bert.q10.blb');
const CHECKPOINT = path.join(ROOT, 'tests/fixtures/tiny-bert');
const FLT_MAX = 3.4028234663852886e38;

// ------------------------------------------------------------- bundles
/** The bundle of file with edit(parts) applied (tests/lib/bundle_edit.mjs). */
function edited(file, edit) {
  const b = readBundle(fs.readFileSync(file));
  edit(b);
  return writeBundle(b);
}
const tensor = (b, name) => b.tensors.find((t) => t.name === name) ?? assert.fail(`no tensor ${name}`);

/** Tensor `name` re-stored as f16 (every value 1.0), then `value` (a half's bits) at element i. */
function asF16(b, name, i, value) {
  const t = tensor(b, name);
  t.dtype = DTYPES.f16;
  t.data = Buffer.alloc(2 * elements(t));
  for (let k = 0; k < elements(t); k++) t.data.writeUInt16LE(k === i ? value : 0x3c00, 2 * k);
}

const QUERY = 'encoder.layer.0.attention.self.query.weight';
/** [what, bundle file, edit, the loader's message]: each bundle's only fault is its edit. */
const REFUSED = [
  ['q8 block scale +inf', TINY_Q8, (b) => tensor(b, QUERY).data.writeFloatLE(Infinity, scaleOffset(tensor(b, QUERY), 5)),
    /tensor 'encoder\.layer\.0\.attention\.self\.query\.weight': block scale 5 of 32 is infinite or NaN/],
  ['q8 block scale NaN (word embedding)', TINY_Q8, (b) => {
    const t = tensor(b, 'embeddings.word_embeddings.weight');
    t.data.writeFloatLE(NaN, scaleOffset(t, 37));
  }, /tensor 'embeddings\.word_embeddings\.weight': block scale 37 of 38 is infinite or NaN/],
  ['LayerNorm weight -inf', TINY_Q8, (b) => tensor(b, 'embeddings.LayerNorm.weight').data.writeFloatLE(-Infinity, 4 * 31),
    /tensor 'embeddings\.LayerNorm\.weight': value 31 of 32 is infinite or NaN/],
  ['bias NaN', TINY_Q8, (b) => tensor(b, 'encoder.layer.0.output.dense.bias').data.writeFloatLE(NaN, 0),
    /tensor 'encoder\.layer\.0\.output\.dense\.bias': value 0 of 32 is infinite or NaN/],
  ['position embedding +inf', TINY_Q8, (b) => tensor(b, 'embeddings.position_embeddings.weight').data.writeFloatLE(Infinity, 4 * 100),
    /tensor 'embeddings\.position_embeddings\.weight': value 100 of 512 is infinite or NaN/],
  ['f16 value +inf', TINY_Q8, (b) => asF16(b, QUERY, 1000, 0x7c00),
    /tensor 'encoder\.layer\.0\.attention\.self\.query\.weight': value 1000 of 1024 is infinite or NaN/],
  ['f16 value NaN', TINY_Q8, (b) => asF16(b, 'embeddings.word_embeddings.weight', 3, 0xfe01),
    /tensor 'embeddings\.word_embeddings\.weight': value 3 of 1216 is infinite or NaN/],
  ['f32 metadata +inf (bert.ln_eps)', TINY_Q8, (b) => b.meta.find((e) => e.key === 'bert.ln_eps').value.writeFloatLE(Infinity),
    /metadata 'bert\.ln_eps': the f32 is infinite or NaN/],
  ['f32 metadata NaN (a key the loader does not read)', TINY_Q8, (b) => {
    const v = Buffer.alloc(4);
    v.writeFloatLE(NaN);
    b.meta.push({ key: 'test.gain', type: META.F32, value: v });
  }, /metadata 'test\.gain': the f32 is infinite or NaN/],
  ['q4 block scale +inf (the scale that hung the forward pass)', TINY_Q4, (b) => tensor(b, QUERY).data.writeFloatLE(Infinity, scaleOffset(tensor(b, QUERY), 0)),
    /tensor 'encoder\.layer\.0\.attention\.self\.query\.weight': block scale 0 of 128 is infinite or NaN/],
  ['q10 block scale (float16) +inf', TINY_Q10, (b) => {
    const t = tensor(b, 'encoder.layer.1.intermediate.dense.weight');
    t.data[qnScaleHighOffset(t, 511)] = 0x7c; // with its low byte 0: 0x7c00
    t.data[qnScaleHighOffset(t, 511) - elements(t) / 32] = 0;
  }, /tensor 'encoder\.layer\.1\.intermediate\.dense\.weight': block scale 511 of 512 is infinite or NaN/],
];

/** The refused bundles, written once: [what, file, message]; and each source re-written unedited. */
function writeRefused() {
  const out = [];
  REFUSED.forEach(([what, src, edit, re], i) => {
    if (!fs.existsSync(src)) return;
    const f = path.join(OUT, `refused-${i}.blb`);
    fs.writeFileSync(f, edited(src, edit));
    out.push([what, f, re]);
  });
  const controls = [...new Set(REFUSED.map((r) => r[1]))].filter((f) => fs.existsSync(f)).map((src, i) => {
    const f = path.join(OUT, `unedited-${i}.blb`);
    fs.writeFileSync(f, edited(src, () => {}));
    return f;
  });
  return { refused: out, controls };
}

/** tiny-bert q4 with every block scale of every q4 matrix at +-FLT_MAX: finite,
 *  so the loader takes it, but scale x nibble overflows a float. */
function hugeQ4() {
  const f = path.join(OUT, 'huge-q4.blb');
  fs.writeFileSync(f, edited(TINY_Q4, (b) => {
    for (const t of b.tensors) {
      if (t.dtype !== DTYPES.q4) continue;
      for (let i = 0; i < elements(t) / 32; i++) t.data.writeFloatLE(i % 3 ? FLT_MAX : -FLT_MAX, scaleOffset(t, i));
    }
  }));
  return f;
}

/** tiny-q8 with every f32 weight scaled by 1e30 and every q8 scale at FLT_MAX: inf activations. */
function hugeQ8() {
  const f = path.join(OUT, 'huge-q8.blb');
  fs.writeFileSync(f, edited(TINY_Q8, (b) => {
    for (const t of b.tensors) {
      if (t.dtype === DTYPES.q8) for (let i = 0; i < elements(t) / 32; i++) t.data.writeFloatLE(FLT_MAX, scaleOffset(t, i));
      if (t.dtype === DTYPES.f32) for (let i = 0; i < elements(t); i++) t.data.writeFloatLE(Math.max(-FLT_MAX, Math.min(FLT_MAX, t.data.readFloatLE(4 * i) * 1e30)), 4 * i);
    }
  }));
  return f;
}

const TEXT = 'the quick brown fox jumps over the lazy dog, again and again and again.';
// A forward pass of a tiny model takes milliseconds; one that hangs never ends.
const RUN_LIMIT_MS = 60_000;

const run = (argv, opts = {}) => spawnSync(BIN, argv, { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 26, timeout: RUN_LIMIT_MS, ...opts });
const ended = (r, what) => {
  assert.equal(r.signal, null, `${what}: killed by ${r.signal} (still running after ${RUN_LIMIT_MS / 1000} s: the forward pass hangs)`);
  assert.doesNotMatch(r.stderr, /Sanitizer|runtime error/, `${what}: ${r.stderr}`);
  assert.equal(r.status, 0, `${what}: exit status ${r.status}\n${r.stderr}`);
};

nativeTest(`${BACKEND}: the loader refuses every inf or NaN float of a bundle, naming where it is`, () => {
  const { refused, controls } = writeRefused();
  assert.ok(refused.length >= 9, 'the bundles to edit are there (tests/fuzz/bundle, make test-models)');
  for (const f of controls) {
    const r = run(['info', f]);
    assert.equal(r.status, 0, `${path.basename(f)} (unedited, written by bundle_edit.mjs) loads: ${r.stderr}`);
  }
  for (const [what, f, re] of refused) {
    const r = run(['info', f]);
    assert.equal(r.signal, null, `${what}: killed by ${r.signal}`);
    assert.equal(r.status, 1, `${what}: exit status ${r.status}\n${r.stdout}`);
    assert.match(r.stderr, re, what);
    assert.match(r.stderr, /a bundle's floats must be finite/, what);
    assert.doesNotMatch(r.stderr, /Sanitizer|runtime error/, what);
  }
});

nativeTest(`${BACKEND}: huge but finite weights (q4 and q8 scales at FLT_MAX, f32 x 1e30): every command ends`, { skip: missing(TINY_Q4) }, () => {
  const corpus = path.join(OUT, 'corpus.txt');
  fs.writeFileSync(corpus, `${TEXT}\n\nshort\tpair\n${TEXT}\n`);
  for (const f of [hugeQ4(), hugeQ8()]) {
    const name = path.basename(f);
    for (const argv of [['attend', '--norms', f, TEXT], ['attend', '--qk', f, TEXT, 'a pair'], ['analyze', f, TEXT], ['embed', f, TEXT, 'two'],
      ['corpus', f, corpus], ...(f.endsWith('q4.blb') ? [['bench', '--tokens', '4,68', '--runs', '1', f]] : [])]) {
      const r = run(argv);
      ended(r, `${name}: ${argv[0]}`);
      if (argv[0] !== 'bench') assert.match(r.stdout, /^\{"(tokens|texts)"/, `${name} ${argv[0]}: output`);
      // NaN and inf outputs are written as null: the output stays JSON (printf's "nan" broke it)
      if (argv[0] !== 'bench') {
        for (const line of r.stdout.split('\n').filter((l) => l)) {
          assert.doesNotThrow(() => JSON.parse(line), `${name} ${argv[0]}: not JSON: ${line.slice(0, 120)}`);
        }
      }
    }
  }
});

// ------------------------------------------------------------ converter
/** A copy of the tiny checkpoint with one value of `tensorName` set to v. */
function checkpointWith(name, tensorName, index, v) {
  const d = path.join(OUT, `ckpt-${name}`);
  fs.rmSync(d, { recursive: true, force: true });
  fs.cpSync(CHECKPOINT, d, { recursive: true });
  const f = path.join(d, 'model.safetensors');
  const b = fs.readFileSync(f);
  const n = Number(b.readBigUInt64LE(0));
  const h = JSON.parse(b.subarray(8, 8 + n).toString());
  b.writeFloatLE(v, 8 + n + h[tensorName].data_offsets[0] + 4 * index);
  fs.writeFileSync(f, b);
  return d;
}
const INF_WEIGHT = () => checkpointWith('inf', QUERY, 70, Infinity);
const INF_RE = /encoder\.layer\.0\.attention\.self\.query\.weight: contains NaN or infinity/;
const F16_WEIGHT = () => checkpointWith('f16', 'encoder.layer.1.output.dense.weight', 5, 1e5);
const F16_RE = /encoder\.layer\.1\.output\.dense\.weight: weight 100000 overflows float16 \(largest 65504\)/;

nativeTest(`${BACKEND}: convert refuses a checkpoint tensor holding inf, and a weight float16 cannot hold as f16`, () => {
  const out = path.join(OUT, 'converted.blb');
  const cases = [[INF_WEIGHT(), 'q4', INF_RE], [INF_WEIGHT(), 'f32', INF_RE], [F16_WEIGHT(), 'f16', F16_RE]];
  for (const [dir, dtype, re] of cases) {
    fs.rmSync(out, { force: true });
    const r = run(['convert', dir, out, '--dtype', dtype]);
    assert.equal(r.signal, null, `${dtype}: killed by ${r.signal}`);
    assert.equal(r.status, 1, `${dtype}: exit status ${r.status}\n${r.stderr}`);
    assert.match(r.stderr, re, dtype);
    assert.ok(!fs.existsSync(out) && !fs.existsSync(`${out}.tmp`), `${dtype}: left an output file behind`);
  }
  // 1e5 is a fine weight for every other dtype: its bundle loads
  const r = run(['convert', F16_WEIGHT(), out, '--dtype', 'q8']);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(run(['info', out]).status, 0);
});

// ----------------------------------------------------------------- wasm
wasmTest(`${BACKEND}: blw_load refuses every inf or NaN float of a bundle, naming where it is`, async () => {
  const { refused, controls } = writeRefused();
  assert.ok(refused.length >= 9, 'the bundles to edit are there (tests/fuzz/bundle, make test-models)');
  const M = await loadWasm();
  for (const f of controls) assert.equal(loadBytes(M, fs.readFileSync(f)), 0, `${path.basename(f)}: ${wasmError(M)}`);
  for (const [what, f, re] of refused) {
    assert.equal(loadBytes(M, fs.readFileSync(f)), -1, `${what}: loaded`);
    assert.match(wasmError(M), re, what);
  }
});

// The wasm forward pass runs in a child process: if it hangs, the child is
// killed at the limit and the test fails, instead of this process hanging.
const CHILD = `
import fs from 'node:fs';
import { loadWasm } from ${JSON.stringify(path.join(ROOT, 'tests/lib/backend.mjs'))};
import { loadBytes, putString, wasmError } from ${JSON.stringify(path.join(ROOT, 'tools/wasm_node.mjs'))};
const [file, text] = process.argv.slice(1);
const M = await loadWasm();
if (loadBytes(M, fs.readFileSync(file)) !== 0) throw new Error(wasmError(M));
const p = putString(M, text);
const T = M._blw_run(p, p, 3 /* KEEP_ATTN | KEEP_NORMS */, 0);
if (T <= 0) throw new Error(wasmError(M));
const a = M._blw_analyze_json(1);
if (!a) throw new Error(wasmError(M));
console.log('T=' + T);
process.exit(0);
`;

wasmTest(`${BACKEND}: huge but finite weights (q4 and q8 scales at FLT_MAX, f32 x 1e30): the forward pass ends`, { skip: missing(TINY_Q4, WASM_JS) }, () => {
  for (const f of [hugeQ4(), hugeQ8()]) {
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', CHILD, f, TEXT],
      { cwd: ROOT, encoding: 'utf8', timeout: RUN_LIMIT_MS, env: process.env });
    assert.equal(r.signal, null, `${path.basename(f)}: killed by ${r.signal} (still running after ${RUN_LIMIT_MS / 1000} s: the forward pass hangs)`);
    assert.equal(r.status, 0, `${path.basename(f)}: ${r.stderr}`);
    assert.match(r.stdout, /^T=\d+/m);
  }
});

wasmTest(`${BACKEND}: the page's converter refuses a checkpoint tensor holding inf, and a weight float16 cannot hold as f16`, async () => {
  const { workerConverter, folderEntries } = await import('../tools/wasm_node.mjs');
  const { convertCheckpoint } = await import('../web/js/engine/convert.js');
  const { WORKER_PROTOCOL } = await import('../web/js/lib/protocol.js');
  const { call } = await workerConverter(WORKER_PROTOCOL, WASM_JS);
  for (const byRows of [false, true]) {
    const opts = byRows ? { chunkBytes: 4096 } : { byRows: false };
    await assert.rejects(convertCheckpoint(call, folderEntries(INF_WEIGHT()), { name: 'inf', dtype: 'q4', ...opts }), INF_RE);
    await assert.rejects(convertCheckpoint(call, folderEntries(F16_WEIGHT()), { name: 'f16', dtype: 'f16', ...opts }), F16_RE);
  }
  const { bytes } = await convertCheckpoint(call, folderEntries(F16_WEIGHT()), { name: 'q8', dtype: 'q8' });
  assert.ok(bytes.length > 0);
});
