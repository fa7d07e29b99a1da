// bench_families.mjs — each encoder family's forward time against a BERT of
// the same shape (part of `make bench`; issue 21).
//
//   node tools/bench_families.mjs [--tokens 48] [--runs 50] [--bin build/bertlens]
//
// For every checkpoint of tests/fixtures/families/ (tiny random models, see
// make.py there) the f32 bundle is timed by `bertlens bench` (one thread,
// median of --runs forwards, attention kept) next to a random BERT of the
// same layers, heads, hidden, intermediate and vocabulary, made here as a
// checkpoint folder and converted the same way; the two runs alternate so
// that both see the same machine load. One line per family. A family the
// converter refuses is listed as refused.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const args = process.argv.slice(2);
const opt = (name, dflt) => (args.includes(name) ? args[args.indexOf(name) + 1] : dflt);
const T = Number(opt('--tokens', 48));
const RUNS = Number(opt('--runs', 50));
const BIN = opt('--bin', process.env.BERTLENS_BIN || path.join(ROOT, 'build/bertlens'));
const FIX = path.join(ROOT, 'tests/fixtures/families');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bertlens-bench-families-'));

function run(argv) {
  const r = spawnSync(BIN, argv, { encoding: 'utf8', maxBuffer: 1 << 26 });
  return { ok: r.status === 0, out: r.stdout, err: r.stderr };
}

/** The shape `bertlens info` prints. */
function shape(bundle) {
  const info = run(['info', bundle]).out;
  const num = (re) => Number(info.match(re)[1]);
  return { L: num(/^layers\s+(\d+)/m), NH: num(/^heads\s+(\d+)/m), H: num(/^hidden\s+(\d+)/m),
    I: num(/^intermediate\s+(\d+)/m), V: num(/^vocab\s+(\d+)/m), P: num(/^max positions\s+(\d+)/m),
    family: (info.match(/^family\s+(\S+)/m) || [, 'bert'])[1].replace(/,$/, '') };
}

/** A random BERT checkpoint folder of this shape (weights ~ N(0, 0.15), fixed seed). */
function bertLike(s, dir) {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ model_type: 'bert', architectures: ['BertModel'],
    num_hidden_layers: s.L, num_attention_heads: s.NH, hidden_size: s.H, intermediate_size: s.I, vocab_size: s.V,
    max_position_embeddings: s.P, type_vocab_size: 2, layer_norm_eps: 1e-12, hidden_act: 'gelu' }));
  const words = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'];
  for (let i = words.length; i < s.V; i++) words.push(`w${i}`);
  fs.writeFileSync(path.join(dir, 'vocab.txt'), words.join('\n') + '\n');
  const t = { 'embeddings.word_embeddings.weight': [s.V, s.H], 'embeddings.position_embeddings.weight': [s.P, s.H],
    'embeddings.token_type_embeddings.weight': [2, s.H], 'embeddings.LayerNorm.weight': [s.H], 'embeddings.LayerNorm.bias': [s.H] };
  for (let l = 0; l < s.L; l++) {
    const p = `encoder.layer.${l}.`;
    for (const m of ['attention.self.query', 'attention.self.key', 'attention.self.value', 'attention.output.dense'])
      t[`${p}${m}.weight`] = [s.H, s.H], t[`${p}${m}.bias`] = [s.H];
    t[`${p}intermediate.dense.weight`] = [s.I, s.H], t[`${p}intermediate.dense.bias`] = [s.I];
    t[`${p}output.dense.weight`] = [s.H, s.I], t[`${p}output.dense.bias`] = [s.H];
    for (const n of ['attention.output.LayerNorm', 'output.LayerNorm']) t[`${p}${n}.weight`] = [s.H], t[`${p}${n}.bias`] = [s.H];
  }
  const header = {};
  let off = 0;
  for (const [name, dims] of Object.entries(t)) {
    const n = dims.reduce((a, b) => a * b, 1);
    header[name] = { dtype: 'F32', shape: dims, data_offsets: [off, off + 4 * n] };
    off += 4 * n;
  }
  const data = new Float32Array(off / 4);
  let seed = 12345;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32 - 0.5) * 0.5;
  for (const [name, e] of Object.entries(header)) {
    const a = data.subarray(e.data_offsets[0] / 4, e.data_offsets[1] / 4);
    const one = name.endsWith('LayerNorm.weight');
    for (let i = 0; i < a.length; i++) a[i] = one ? 1 + 0.1 * rnd() : rnd();
  }
  let h = Buffer.from(JSON.stringify(header));
  h = Buffer.concat([h, Buffer.alloc((8 - (h.length % 8)) % 8, 0x20)]);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(h.length));
  fs.writeFileSync(path.join(dir, 'model.safetensors'), Buffer.concat([len, h, Buffer.from(data.buffer)]));
}

/** Median ms of one forward of n tokens, one thread. */
function bench(bundle, n) {
  const r = run(['--threads', '1', 'bench', '--tokens', String(n), '--runs', String(RUNS), '--warmup', '5', bundle]);
  if (!r.ok) throw new Error(`bench ${bundle}: ${r.err}`);
  return JSON.parse(r.out.trim().split('\n').pop()).median_ms;
}

console.log(`\n== encoder families vs a BERT of the same shape (f32, one thread, ${RUNS} runs, median)`);
try {
  const fams = fs.readdirSync(FIX).filter((f) => f.endsWith('.ref.json')).map((f) => f.slice(0, -9)).sort();
  for (const fam of fams) {
    const b = path.join(tmp, `${fam}.blb`);
    const c = run(['convert', path.join(FIX, fam), b, '--dtype', 'f32']);
    if (!c.ok) {
      console.log(`${fam.padEnd(12)} refused: ${c.err.trim().split('\n').pop().slice(0, 120)}`);
      continue;
    }
    const s = shape(b);
    const dir = path.join(tmp, `bert-like-${fam}`);
    bertLike({ ...s, P: Math.max(s.P, T) }, dir);
    const bb = path.join(tmp, `bert-like-${fam}.blb`);
    const cb = run(['convert', dir, bb, '--dtype', 'f32']);
    if (!cb.ok) throw new Error(`convert the BERT of ${fam}'s shape: ${cb.err}`);
    const n = Math.min(T, s.P);
    const fm = [], bm = [];
    for (let k = 0; k < 3; k++) fm.push(bench(b, n)), bm.push(bench(bb, n)); // alternating
    const med = (a) => a.sort((x, y) => x - y)[1];
    const f = med(fm), r = med(bm);
    console.log(`${fam.padEnd(12)} ${s.L} layers x ${s.NH} heads, hidden ${s.H}, ${n} tokens: ` +
      `${f.toFixed(3)} ms vs BERT ${r.toFixed(3)} ms (x${(f / r).toFixed(2)})`);
  }
} finally {
  fs.rmSync(tmp, { recursive: true, force: true });
}
