// convert_rows.test.mjs — the page's converter (web/js/engine/convert.js in
// the worker) feeds large 2-D tensors in chunks of rows ('tensor_rows',
// src/convert/convert_quant.c bli_conv_tensor_rows), so a bert-large embedding
// matrix is never whole in JS nor in the wasm heap. With the chunk size
// forced small, every 2-D tensor of these checkpoints goes by rows (the
// last chunk shorter than the others), and the bundle must be the bytes of
// `bertlens convert` (native, the whole-tensor path) and of the worker's
// whole-tensor path, with the same log lines (max|err|, rel.rms), for f32,
// f16 and bf16 sources and f32 / f16 / q8 / q4 bundles.
//
//   BERTLENS_BACKEND=wasm node --test tests/convert_rows.test.mjs
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { BIN, IS_WASM, ROOT, needs } from './lib/backend.mjs';

const OUT = path.join(ROOT, 'build/convert-rows-test');
const PYTHON = process.env.PYTHON || 'python3';
const SMALL = 1000; // source bytes per chunk: 7 rows of 64 f32, 15 of 64 f16 / bf16

const CASES = [
  { dir: 'tiny-bert', dtype: 'q8' }, // F32 source
  { dir: 'tiny-bert', dtype: 'f16' },
  { dir: 'tiny-bert', dtype: 'f32' },
  { dir: 'tiny-bert', dtype: 'q4', embed: 'f16' },
  { dir: 'bert-cased', dtype: 'q8' }, // F16 source
  { dir: 'multilingual', dtype: 'q8' }, // BF16 source
  { dir: 'multilingual', dtype: 'q10', embed: 'q8', byRows: 3 }, // a QN dtype goes whole, the three q8 embedding matrices by rows
];

if (IS_WASM) {
  const { workerConverter, folderEntries } = await import('../tools/wasm_node.mjs');
  const { convertCheckpoint } = await import('../web/js/engine/convert.js');
  const { WORKER_PROTOCOL } = await import('../web/js/lib/protocol.js');
  fs.mkdirSync(OUT, { recursive: true });
  const gen = spawnSync(PYTHON, ['tools/make_random_bert.py', OUT, '--family', 'bert-cased', '--family', 'multilingual'], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(gen.status, 0, gen.stderr);
  fs.cpSync(path.join(ROOT, 'tests/fixtures/tiny-bert'), path.join(OUT, 'tiny-bert'), { recursive: true });
  const { call } = await workerConverter(WORKER_PROTOCOL);
  const tensorLines = (log) => log.filter((l) => l.startsWith('[tensor] '));

  test('tensors converted by rows give the bytes and log lines of the whole-tensor path (native CLI and wasm)', { timeout: 120000 }, async () => {
    const haveCli = fs.existsSync(BIN);
    for (const c of CASES) {
      const dir = path.join(OUT, c.dir), what = `${c.dir} ${c.dtype}${c.embed ? ` embed ${c.embed}` : ''}`;
      const opts = { name: c.dir, dtype: c.dtype, ...(c.embed ? { embedDtype: c.embed } : {}) };
      const whole = await convertCheckpoint(call, folderEntries(dir), { ...opts, byRows: false });
      const calls = [];
      const counting = (fn, args, bytes) => { calls.push({ fn, args, n: bytes ? bytes.length : 0 }); return call(fn, args, bytes); };
      const rows = await convertCheckpoint(counting, folderEntries(dir), { ...opts, chunkBytes: SMALL });
      const chunks = calls.filter((x) => x.fn === 'tensor_rows');
      const tensorsByRows = new Set(chunks.map((x) => x.args[0]));
      assert.ok(c.byRows ? tensorsByRows.size === c.byRows : tensorsByRows.size >= 10, `${what}: ${tensorsByRows.size} tensors went by rows`);
      assert.ok(chunks.every((x) => x.n <= SMALL || x.args[2] === 1), `${what}: a chunk over ${SMALL} bytes of more than one row`);
      // the word embeddings (5000 or more rows) in many chunks, the last one shorter
      const perTensor = new Map();
      for (const x of chunks) perTensor.set(x.args[0], [...(perTensor.get(x.args[0]) || []), x.args[2]]);
      const most = [...perTensor.values()].sort((a, b) => b.length - a.length)[0];
      assert.ok(most.length > 100 && most.at(-1) < most[0], `${what}: ${most.length} chunks of ${most[0]} rows`);
      assert.ok(Buffer.from(rows.bytes).equals(Buffer.from(whole.bytes)), `${what}: by rows != whole tensors`);
      assert.deepEqual(tensorLines(rows.log), tensorLines(whole.log), `${what}: log lines`);
      if (haveCli) {
        const out = path.join(OUT, `native-${c.dir}-${c.dtype}-${c.embed || ''}.blb`);
        const r = spawnSync(BIN, ['convert', dir, out, '--dtype', c.dtype, '--name', c.dir, ...(c.embed ? ['--embed-dtype', c.embed] : [])], { encoding: 'utf8' });
        assert.equal(r.status, 0, r.stderr);
        assert.ok(fs.readFileSync(out).equals(Buffer.from(rows.bytes)), `${what}: by rows != bertlens convert`);
        // (the CLI logs in the bundle's order, the page in the checkpoint's)
        const native = r.stderr.split('\n').filter((l) => l.startsWith('[tensor] ')).sort();
        assert.deepEqual(tensorLines(rows.log).sort(), native, `${what}: log lines vs bertlens convert`);
      }
      console.log(`# ${what}: ${tensorsByRows.size} tensors by rows in ${chunks.length} chunks, ${rows.bytes.length} bytes = ${haveCli ? 'bertlens convert and ' : ''}the whole-tensor path`);
    }
  });

  test('the converter keeps its bundle in the worker: read by slices, refused out of bounds', async () => {
    const dir = path.join(OUT, 'tiny-bert');
    const whole = await convertCheckpoint(call, folderEntries(dir), { name: 'tiny-bert' });
    const held = await convertCheckpoint(call, folderEntries(dir), { name: 'tiny-bert', hold: true });
    assert.equal(held.size, whole.bytes.length);
    const parts = [];
    for (let at = 0; at < held.size; at += 65536) parts.push(await held.read(at, Math.min(held.size, at + 65536)));
    assert.ok(Buffer.concat(parts).equals(Buffer.from(whole.bytes)), 'the slices are the bundle');
    await assert.rejects(held.read(held.size - 10, held.size + 1), /no converted bundle bytes/);
    await assert.rejects(held.read(-1, 10), /no converted bundle bytes/);
    await held.release();
    await assert.rejects(held.read(0, 10), /no converted bundle bytes/, 'released');
  });

  test('rows out of order are refused with a reason', async () => {
    const dir = path.join(OUT, 'tiny-bert');
    let fed = 0;
    const skipping = (fn, args, bytes) => {
      if (fn === 'tensor_rows' && ++fed === 2) args = [args[0], args[1] + 1, ...args.slice(2)]; // a gap after the first chunk
      return call(fn, args, bytes);
    };
    await assert.rejects(convertCheckpoint(skipping, folderEntries(dir), { name: 'tiny-bert', chunkBytes: SMALL }), /rows 4\.\.\+3 out of order \(next is row 3 of 512\)/);
    const again = await convertCheckpoint(call, folderEntries(dir), { name: 'tiny-bert', chunkBytes: SMALL });
    assert.ok(again.bytes.length > 0, 'it converts after the refusal');
  });
} else test('the converter by rows (wasm)', { skip: needs('wasm', 'wasm-mt') }, () => {});
