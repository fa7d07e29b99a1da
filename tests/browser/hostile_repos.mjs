// hostile_repos.mjs — the crafted Hugging Face repositories of issue 31
// ("Hostile tokenizers and configs"), one per finding, for the page's
// browser scenarios against the fake Hub (hostile.scenarios.mjs) and for
// checking them natively. Each is made here from the tiny random checkpoints
// already committed (tests/fixtures/families/, tests/fixtures/hub/): the
// tokenizer.json or config.json edited as JSON, and the safetensors file
// rewritten by hand where a tensor must change. No torch, no network.
//
//   node tests/browser/hostile_repos.mjs OUT_DIR    writes each repository as a folder
//                                                  (OUT_DIR/<name>/), for `bertlens convert`
//
// hostileRepos() -> [{id, name, finding, files: {name: Buffer}, text?}]:
// `text` is the input that makes the finding bite (the model's first run);
// without one, loading the file is enough.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const FAMILIES = path.join(ROOT, 'tests', 'fixtures', 'families');
const TINY_MLM = path.join(ROOT, 'tests', 'fixtures', 'hub', 'tiny-mlm');

const folder = (dir) => Object.fromEntries(fs.readdirSync(dir).map((f) => [f, fs.readFileSync(path.join(dir, f))]));
const json = (buf) => JSON.parse(buf.toString('utf8'));
const bytes = (obj) => Buffer.from(JSON.stringify(obj));

/** A safetensors file: {header (name -> {dtype, shape, data_offsets}), data}. */
export function readSafetensors(buf) {
  const n = Number(buf.readBigUInt64LE(0));
  return { header: JSON.parse(buf.subarray(8, 8 + n).toString('utf8')), data: buf.subarray(8 + n) };
}

/** Write tensors [{name, dtype, shape, bytes}] (in that order) as a safetensors file. */
export function writeSafetensors(tensors, metadata = { format: 'pt' }) {
  const header = { __metadata__: metadata };
  let at = 0;
  for (const t of tensors) {
    header[t.name] = { dtype: t.dtype, shape: t.shape, data_offsets: [at, at + t.bytes.length] };
    at += t.bytes.length;
  }
  let head = Buffer.from(JSON.stringify(header));
  head = Buffer.concat([head, Buffer.alloc((8 - (head.length % 8)) % 8, 0x20)]);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(head.length));
  return Buffer.concat([len, head, ...tensors.map((t) => t.bytes)]);
}

/** The tensors of a safetensors file, in the order of their offsets. */
function tensorsOf(buf) {
  const { header, data } = readSafetensors(buf);
  return Object.entries(header).filter(([k]) => k !== '__metadata__')
    .sort((a, b) => a[1].data_offsets[0] - b[1].data_offsets[0])
    .map(([name, h]) => ({ name, dtype: h.dtype, shape: h.shape, bytes: Buffer.from(data.subarray(...h.data_offsets)) }));
}

/** n small pseudo-random float32 values (|x| < 0.05), as a Buffer. */
function smallFloats(n, seed) {
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    let x = Math.imul((i + seed) ^ 0x9e3779b9, 0x85ebca6b) >>> 0;
    x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35) >>> 0;
    out[i] = ((x >>> 8) / 16777216 - 0.5) * 0.1;
  }
  return Buffer.from(out.buffer);
}

/** A family fixture with its tokenizer.json edited by edit(t) (in place). */
function withTokenizer(family, edit) {
  const files = folder(path.join(FAMILIES, family));
  const t = json(files['tokenizer.json']);
  edit(t);
  return { ...files, 'tokenizer.json': bytes(t) };
}

// A text of `words` short words (the findings that grow with the text).
const wordsText = (words) => Array.from({ length: words }, (_, i) => ['the', 'cat', 'sat', 'on', 'a', 'mat'][i % 6]).join(' ');

/** Every crafted repository (see the top of this file). */
export function hostileRepos() {
  const repos = [];
  const add = (name, finding, files, text) => repos.push({ id: `evil/${name}`, name, finding, files, ...(text ? { text } : {}) });

  // (a) A TemplateProcessing that names $A twice: the output was sized for
  // one copy of each sequence, and every copy wrote all of A.
  add('template-twice', 'a TemplateProcessing naming $A twice', withTokenizer('albert', (t) => {
    const s = t.post_processor.single;
    t.post_processor.single = [s[0], s[1], s[1], s[2]];
  }), wordsText(100));

  // (b) A post-processor Sequence of two TemplateProcessing: the second
  // template's pieces went after the first's (the count never reset),
  // past their array, while the file loads.
  add('template-sequence', 'a post_processor Sequence of two TemplateProcessing', withTokenizer('albert', (t) => {
    t.post_processor = { type: 'Sequence', processors: [t.post_processor, JSON.parse(JSON.stringify(t.post_processor))] };
  }));

  // (c) DeBERTa-v2 with position_buckets 64 and max_relative_positions 34:
  // the log buckets jump, and the relative rows written (128 at 40 tokens)
  // outrun the rows allocated (79). rel_embeddings gets the 2 × 64 rows
  // such a config has.
  {
    const files = folder(path.join(FAMILIES, 'deberta-v2'));
    const config = { ...json(files['config.json']), position_buckets: 64, max_relative_positions: 34 };
    const tensors = tensorsOf(files['model.safetensors']).map((t) => {
      if (t.name !== 'encoder.rel_embeddings.weight') return t;
      const shape = [2 * config.position_buckets, t.shape[1]];
      return { ...t, shape, bytes: smallFloats(shape[0] * shape[1], 31) };
    });
    add('deberta-buckets', 'a DeBERTa-v2 config with position_buckets 64 and max_relative_positions 34',
      { ...files, 'config.json': bytes(config), 'model.safetensors': writeSafetensors(tensors) }, wordsText(40));
  }

  // (d) A normalizer Sequence that doubles the text 27 times (Replace
  // "a" -> "aa"): 2^27 times the input, gigabytes from a 2 KB file.
  add('normalizer-doubling', 'a normalizer Sequence doubling the text (Replace "a" -> "aa" × 27)', withTokenizer('albert', (t) => {
    t.normalizer = { type: 'Sequence', normalizers: Array.from({ length: 27 }, () => ({ type: 'Replace', pattern: { String: 'a' }, content: 'aa' })) };
  }), 'a cat and a bat');

  // (e) One +inf weight. The converter refuses it ("contains NaN or
  // infinity": src/convert/convert_quant.c checks every source value), so no Hub
  // repository can put an infinite scale into the page's q8 bundle; the
  // forward pass that never ends comes from a bundle file with an +inf
  // scale (infScaleBundle below).
  {
    const files = folder(TINY_MLM);
    const tensors = tensorsOf(files['model.safetensors']).map((t) => {
      if (t.name !== 'bert.encoder.layer.0.attention.self.query.weight') return t;
      const b = Buffer.from(t.bytes);
      b.writeFloatLE(Infinity, 4 * 5);
      return { ...t, bytes: b };
    });
    add('inf-weight', 'a checkpoint with one +inf weight', { ...files, 'model.safetensors': writeSafetensors(tensors) }, 'the capital of france is paris.');
  }

  // (f) A Unigram vocabulary with one 100 KB piece: the lattice costs
  // characters × longest piece (a 100 KB text matching it: seconds).
  const LONG = 100000;
  add('unigram-long-piece', 'a Unigram tokenizer with one 100 KB piece', withTokenizer('albert', (t) => {
    const v = t.model.vocab;
    v[v.length - 1] = [`\u2581${'x'.repeat(LONG - 1)}`, -20];
  }), 'x'.repeat(LONG));

  // (g) 1,500 added tokens of 64 characters, matched one by one at every
  // position of the text (100,000 characters: seconds). They share a
  // 60-character prefix with the text, so each comparison runs long.
  add('added-tokens', '1,500 added tokens of 64 characters', withTokenizer('albert', (t) => {
    const code = (i) => i.toString(26).padStart(4, '0').replace(/[0-9]/g, (d) => 'qrstuvwxyz'[d]);
    for (let i = 0; i < 1500; i++) {
      t.added_tokens.push({ id: 1000 + i, content: `${'y'.repeat(60)}${code(i)}`, single_word: false, lstrip: false, rstrip: false, normalized: false, special: false });
    }
  }), 'y'.repeat(LONG));

  // (h) A Split pre-tokenizer with a 50,000-character String pattern,
  // searched for at every position of the text.
  add('split-pattern', 'a Split pre-tokenizer with a 50,000-character String pattern', withTokenizer('albert', (t) => {
    const split = { type: 'Split', pattern: { String: `${'z'.repeat(49999)}!` }, behavior: 'Isolated', invert: false };
    t.pre_tokenizer = { type: 'Sequence', pretokenizers: [split, ...t.pre_tokenizer.pretokenizers] };
  }), 'z'.repeat(LONG));

  return repos;
}

/** Bundle bytes with the `which`-th block scale of tensor `name` (q8 or q4:
 *  src/format/bundle.h, the float32 scales after the values) set to `value`, and
 *  the tensor's, table's and header's CRCs made good again: a bundle the
 *  loader takes as intact. */
export function withScale(bundle, name, value, which = 0) {
  const b = Buffer.from(bundle);
  const tableOff = Number(b.readBigUInt64LE(40)), tableSize = Number(b.readBigUInt64LE(48)), dataOff = Number(b.readBigUInt64LE(56));
  let p = tableOff, found = false;
  for (let i = 0, n = b.readUInt32LE(76); i < n; i++) {
    const len = b.readUInt32LE(p);
    const tname = b.toString('utf8', p + 4, p + 4 + len);
    p += 4 + len;
    const dtype = b.readUInt32LE(p), dims = b.readUInt32LE(p + 4);
    p += 8;
    let count = 1;
    for (let d = 0; d < dims; d++, p += 8) count *= Number(b.readBigUInt64LE(p));
    const off = dataOff + Number(b.readBigUInt64LE(p)), nbytes = Number(b.readBigUInt64LE(p + 8));
    p += 16;
    if (tname === name) {
      if (dtype !== 2 && dtype !== 3) throw new Error(`${name} is not q8 or q4 (dtype ${dtype})`);
      b.writeFloatLE(value, off + (dtype === 2 ? count : count / 2) + 4 * which);
      b.writeUInt32LE(zlib.crc32(b.subarray(off, off + nbytes)), p);
      found = true;
    }
    p += 4;
  }
  if (!found) throw new Error(`no tensor ${name}`);
  b.writeUInt32LE(zlib.crc32(b.subarray(tableOff, tableOff + tableSize)), 84);
  b.writeUInt32LE(zlib.crc32(b.subarray(0, 92)), 92);
  return b;
}

/** Finding (e) as the engine meets it: the tiny BERT (tests/fixtures/hub)
 *  converted to q4 by `bin convert`, with one +inf block scale in the
 *  first feed-forward output; its forward pass never ended (wasm, any
 *  input; natively from ~70 tokens). Written to `out`. */
export function infScaleBundle(bin, out) {
  const r = spawnSync(bin, ['convert', TINY_MLM, out, '--dtype', 'q4', '--name', 'inf-scale'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`bertlens convert: ${r.stderr}`);
  fs.writeFileSync(out, withScale(fs.readFileSync(out), 'encoder.layer.0.output.dense.weight', Infinity));
  return out;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const out = process.argv[2];
  if (!out) {
    console.error('usage: node tests/browser/hostile_repos.mjs OUT_DIR');
    process.exit(2);
  }
  for (const r of hostileRepos()) {
    const dir = path.join(out, r.name);
    fs.mkdirSync(dir, { recursive: true });
    for (const [f, b] of Object.entries(r.files)) fs.writeFileSync(path.join(dir, f), b);
    if (r.text) fs.writeFileSync(path.join(out, `${r.name}.text`), r.text);
    console.log(`${dir}: ${r.finding}`);
  }
}
