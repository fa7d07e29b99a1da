// embed_pool.test.mjs — bl_embed, the library's sentence embedding, as a
// third party calls it (build/embed_example) and as both front ends use it:
// held against the pooling redone here from the CLI's final hidden states
// (`bertlens test-attend --hidden`: mean over tokens, then L2 norm, in
// double), and against `bertlens embed`, which must print the same floats.
//
//   make build/embed_example build/bertlens && node --test tests/c/embed_pool.test.mjs
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { BIN, nativeTest as test } from '../lib/backend.mjs';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const EXAMPLE = path.join(ROOT, 'build/embed_example');
const BUNDLE = path.join(ROOT, 'build/models/tiny-bert.f32.blb');
const TEXTS = ['The cat sat on the mat.', 'Pooling: every token, [CLS] and [SEP] too!'];

const run = (cmd, args) => {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 1 << 28 });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout;
};

test('bl_embed is the normalized mean of the final hidden states, and `bertlens embed` prints it',
  { skip: !fs.existsSync(BUNDLE) && 'no tiny-bert.f32.blb (make test-models)' }, () => {
    const cliLines = run(BIN, ['embed', BUNDLE, ...TEXTS]).trim().split('\n').map((l) => JSON.parse(l));
    TEXTS.forEach((text, k) => {
      const lib = JSON.parse(run(EXAMPLE, [BUNDLE, text]));
      const hid = JSON.parse(run(BIN, ['test-attend', '--hidden', BUNDLE, text])).hidden;
      const fin = hid[hid.length - 1][0]; // [1][T][hidden]
      const H = fin[0].length, T = fin.length;
      assert.equal(lib.embedding.length, H);
      const mean = Array.from({ length: H }, (_, i) => fin.reduce((s, row) => s + row[i], 0) / T);
      const norm = Math.max(Math.hypot(...mean), 1e-12);
      let maxd = 0;
      for (let i = 0; i < H; i++) maxd = Math.max(maxd, Math.abs(lib.embedding[i] - mean[i] / norm));
      assert.ok(maxd < 1e-6, `text ${k}: max |bl_embed - reference| ${maxd}`);
      assert.deepEqual(cliLines[k].tokens, lib.tokens);
      assert.deepEqual(cliLines[k].embedding, lib.embedding, `text ${k}: bertlens embed and bl_embed differ`);
    });
  });
