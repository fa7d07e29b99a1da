#!/usr/bin/env node
// convert_memory.mjs — peak memory of converting and running the bert-base
// and bert-large shapes (random checkpoints of tools/make_random_bert.py,
// generated into build/mem/; nothing is committed), natively and in wasm.
//
//   node tools/convert_memory.mjs [bert-base-shape|bert-large-shape ...]
//
// Native: maximum resident set size (/usr/bin/time -v) of `bertlens convert`
// (q8 and f32) and of `bertlens attend` at 128 and 512 tokens.
// Wasm (what the page's worker holds): the module's linear memory after the
// conversion (src/convert/convert.c via web/js/engine/convert.js, reading the files slice by
// slice as the page reads File objects), and after loading the bundle and
// running 128 and 512 tokens with every layer's attention kept. Wasm memory
// only grows, so each figure is the peak so far.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createModule, ROOT, workerConverter, folderEntries } from './wasm_node.mjs';
import { convertCheckpoint } from '../web/js/engine/convert.js';
import { WORKER_PROTOCOL } from '../web/js/lib/protocol.js';

const OUT = path.join(ROOT, 'build/mem');
const BIN = path.join(ROOT, 'build/bertlens');
const MB = (n) => `${(n / 1048576).toFixed(0)} MB`;
const shapes = process.argv.slice(2).length ? process.argv.slice(2) : ['bert-base-shape', 'bert-large-shape'];

function peakRss(args) {
  const r = spawnSync('/usr/bin/time', ['-v', BIN, ...args], { encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'] });
  if (r.status !== 0) throw new Error(`${args.join(' ')}: ${r.stderr.slice(-2000)}`);
  return Number(r.stderr.match(/Maximum resident set size \(kbytes\): (\d+)/)[1]) * 1024;
}

const words = (n) => Array(n - 2).fill('the').join(' '); // n tokens with [CLS] and [SEP]

for (const shape of shapes) {
  const r = spawnSync('python3', [path.join(ROOT, 'tools/make_random_bert.py'), OUT, '--shape', shape], { stdio: 'inherit' });
  if (r.status !== 0) process.exit(1);
  const dir = path.join(OUT, shape);
  const ckpt = fs.statSync(path.join(dir, 'model.safetensors')).size;
  console.log(`${shape}: model.safetensors ${MB(ckpt)}`);
  for (const dt of ['q8', 'f32']) {
    const out = path.join(OUT, `${shape}.${dt}.blb`);
    const rss = peakRss(['convert', dir, out, '--dtype', dt]);
    console.log(`  native convert --dtype ${dt}: peak RSS ${MB(rss)} (bundle ${MB(fs.statSync(out).size)})`);
  }
  const q8 = path.join(OUT, `${shape}.q8.blb`);
  for (const T of [128, 512]) console.log(`  native attend q8, ${T} tokens: peak RSS ${MB(peakRss(['attend', q8, words(T)]))}`);

  // converted as the page does it (worker.js 'conv'), then loaded and run in that worker's module
  const { call, module: M } = await workerConverter(WORKER_PROTOCOL);
  const { bytes } = await convertCheckpoint(call, folderEntries(dir), { name: shape, dtype: 'q8' });
  console.log(`  wasm convert q8: linear memory ${MB(M.HEAPU8.length)} (bundle ${MB(bytes.length)})`);
  const p = M._malloc(bytes.length);
  M.HEAPU8.set(bytes, p);
  if (M._blw_load(p, bytes.length) !== 0) throw new Error(M.UTF8ToString(M._blw_error()));
  for (const T of [128, 512]) {
    const s = words(T), n = M.lengthBytesUTF8(s) + 1, ps = M._malloc(n);
    M.stringToUTF8(s, ps, n);
    const got = M._blw_run(ps, 0, 1, 0);
    M._free(ps);
    if (got !== T) throw new Error(`ran ${got} tokens, wanted ${T}`);
    console.log(`  wasm run q8, ${T} tokens (attention kept): linear memory ${MB(M.HEAPU8.length)}`);
  }
  // A fresh module: loading and running only (a page that opens a saved bundle).
  const M2 = await createModule();
  const p2 = M2._malloc(bytes.length);
  M2.HEAPU8.set(bytes, p2);
  M2._blw_load(p2, bytes.length);
  const s = words(512), n = M2.lengthBytesUTF8(s) + 1, ps = M2._malloc(n);
  M2.stringToUTF8(s, ps, n);
  M2._blw_run(ps, 0, 1, 0);
  console.log(`  wasm load + run q8, 512 tokens, no conversion: linear memory ${MB(M2.HEAPU8.length)}`);
}
