// npy.test.mjs — `bertlens attend --npy DIR` writes the same arrays as the JSON
// output, as NumPy .npy files (read back here by a parser written from the
// .npy format description, and by numpy itself when python3 has it).
//
//   node --test tests/npy.test.mjs       (the native CLI; skipped on the other backends)
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BIN, testOn } from './lib/backend.mjs';

const test = testOn('native'); // not under ASan: make test-asan never ran it

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const BUNDLE = path.join(ROOT, 'models/all-minilm-l6-v2.q8.blb.gz');
const TEXT = 'The cat sat on the mat because it was warm.';
const TEXT_B = 'Was it?';

function run(args) {
  const r = spawnSync(BIN, args, { encoding: 'utf8', maxBuffer: 1 << 28 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

// .npy version 1.0: "\x93NUMPY", major, minor, u16 LE header length, a Python
// dict literal header, then the raw data.
function readNpy(file) {
  const b = fs.readFileSync(file);
  assert.deepEqual([...b.subarray(0, 6)], [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59], `${file}: magic`);
  assert.equal(b[6], 1, `${file}: format version 1.x`);
  const hlen = b.readUInt16LE(8);
  const header = b.subarray(10, 10 + hlen).toString('latin1');
  assert.equal((10 + hlen) % 64, 0, `${file}: data aligned to 64 bytes`);
  assert.match(header, /'descr': '<f4'/);
  assert.match(header, /'fortran_order': False/);
  const shape = header.match(/'shape': \(([^)]*)\)/)[1].split(',').filter((s) => s.trim()).map(Number);
  const n = shape.reduce((x, y) => x * y, 1);
  assert.equal(b.length, 10 + hlen + 4 * n, `${file}: size matches the shape`);
  const data = new Float32Array(b.buffer.slice(b.byteOffset + 10 + hlen, b.byteOffset + b.length));
  return { shape, data };
}

const flat = (a) => Float32Array.from(a.flat(Infinity));

function tmpdir() { return fs.mkdtempSync(path.join(os.tmpdir(), 'bertlens-npy-')); }

test('attend --npy writes the JSON output\'s arrays, bit for bit', () => {
  const json = run(['attend', '--qk', '--norms', BUNDLE, TEXT, TEXT_B]);
  assert.equal(json.status, 0, json.stderr);
  const ref = JSON.parse(json.stdout);
  const dir = path.join(tmpdir(), 'out'); // created by bertlens
  const r = run(['attend', '--qk', '--norms', '--npy', dir, BUNDLE, TEXT, TEXT_B]);
  assert.equal(r.status, 0, r.stderr);
  const index = JSON.parse(fs.readFileSync(path.join(dir, 'tokens.json'), 'utf8'));
  assert.deepEqual(JSON.parse(r.stdout), index, 'stdout repeats tokens.json');
  assert.deepEqual(index.tokens, ref.tokens);
  assert.deepEqual(index.layers, ref.layers);
  assert.equal(index.truncated, false);
  assert.equal(index.ids.length, ref.tokens.length);
  assert.ok(index.type_ids.includes(1), 'the pair\'s second segment has type id 1');
  const T = ref.tokens.length, NH = ref.attentions[0].length, d = ref.queries[0][0][0].length;
  for (const [kind, key, cols] of [['attention', 'attentions', T], ['norms', 'norms', T], ['queries', 'queries', d],
    ['keys', 'keys', d]]) {
    assert.equal(index.files[kind].length, ref.layers.length, kind);
    ref.layers.forEach((l, i) => {
      const file = index.files[kind][i];
      assert.equal(file, `${kind}_L${l}.npy`);
      const a = readNpy(path.join(dir, file));
      assert.deepEqual(a.shape, [NH, T, cols], `${file} shape`);
      assert.deepEqual(a.data, flat(ref[key][i]), `${file} equals the JSON output`);
    });
  }
  assert.deepEqual(fs.readdirSync(dir).filter((f) => f.endsWith('.tmp')), [], 'no temporary files left');
});

test('numpy reads the files', { skip: spawnSync('python3', ['-c', 'import numpy']).status !== 0 && 'no numpy' }, () => {
  const dir = tmpdir();
  const r = run(['attend', '--layer', '2', '--npy', dir, BUNDLE, TEXT]);
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(fs.readdirSync(dir).sort(), ['attention_L2.npy', 'tokens.json'], '--layer 2: that layer only');
  const py = spawnSync('python3', ['-c', `
import json, sys, numpy as np
d = sys.argv[1]
a = np.load(d + '/attention_L2.npy')
t = json.load(open(d + '/tokens.json'))
print(json.dumps({"shape": a.shape, "dtype": str(a.dtype), "rowsum": float(np.abs(a.sum(-1) - 1).max()), "T": len(t["tokens"])}))
`, dir], { encoding: 'utf8' });
  assert.equal(py.status, 0, py.stderr);
  const got = JSON.parse(py.stdout);
  assert.equal(got.dtype, 'float32');
  assert.deepEqual(got.shape, [12, got.T, got.T]);
  assert.ok(got.rowsum < 1e-5, `attention rows sum to 1 (${got.rowsum})`);
});

test('attend --npy into a directory that cannot be made: a clear error, nothing written', () => {
  const base = tmpdir();
  const dir = path.join(base, 'missing-parent', 'out');
  const r = run(['attend', '--npy', dir, BUNDLE, TEXT]);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /cannot create .*missing-parent\/out/);
  assert.equal(r.stdout, '');
  assert.deepEqual(fs.readdirSync(base), []);
});
