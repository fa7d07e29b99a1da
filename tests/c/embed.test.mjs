// embed.test.mjs — the static library as a third party uses it: build/embed_example
// (tests/c/embed_example.c, compiled against only bertlens.h + build/libbertlens.a)
// must print the same attention as the CLI (`bertlens attend`) for the same text.
//
//   make build/embed_example build/bertlens && node --test tests/c/embed.test.mjs
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { BIN, nativeTest as test } from '../lib/backend.mjs';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const EXAMPLE = path.join(ROOT, 'build/embed_example');
const BUNDLE = path.join(ROOT, 'build/models/tiny-bert.f32.blb');
const TEXT = 'Embedding bertlens: "one header", one archive\\.';

test('embed_example prints the CLI\'s attention', { skip: !fs.existsSync(BUNDLE) && 'no tiny-bert.f32.blb (make test-models)' }, () => {
  const e = spawnSync(EXAMPLE, [BUNDLE, TEXT], { encoding: 'utf8' });
  assert.equal(e.status, 0, e.stderr);
  const got = JSON.parse(e.stdout);
  const c = spawnSync(BIN, ['attend', BUNDLE, TEXT], { encoding: 'utf8', maxBuffer: 1 << 28 });
  assert.equal(c.status, 0, c.stderr);
  const cli = JSON.parse(c.stdout);
  assert.deepEqual(got.tokens, cli.tokens);
  assert.equal(got.rows.length, cli.attentions.length);
  got.rows.forEach((row, l) => assert.deepEqual(row, cli.attentions[l][0][0], `layer ${l}, head 0, row 0`));
});

test('embed_example reports a missing bundle', () => {
  const e = spawnSync(EXAMPLE, [path.join(ROOT, 'no-such.blb'), 'x'], { encoding: 'utf8' });
  assert.equal(e.status, 1);
  assert.match(e.stderr, /cannot read/);
});

test('every bl_ symbol of libbertlens.a is declared in bertlens.h (internal names use blk_/bli_)', () => {
  const nm = spawnSync('nm', ['-g', '--defined-only', path.join(ROOT, 'build/libbertlens.a')], { encoding: 'utf8' });
  assert.equal(nm.status, 0, nm.stderr);
  const header = fs.readFileSync(path.join(ROOT, 'src/bertlens.h'), 'utf8');
  const declared = new Set([...header.matchAll(/\b(bl_[a-z0-9_]+)\s*\(/g)].map((m) => m[1]));
  const symbols = [...nm.stdout.matchAll(/^[0-9a-f]+ [A-Z] (\w+)$/gm)].map((m) => m[1]);
  assert.ok(symbols.length > 50, `nm listed ${symbols.length} symbols`);
  const stray = symbols.filter((n) => n.startsWith('bl_') && !declared.has(n));
  assert.deepEqual(stray, [], 'public-prefixed symbols missing from bertlens.h');
  assert.ok(symbols.some((n) => n.startsWith('blk_')) && symbols.some((n) => n.startsWith('bli_')));
});
