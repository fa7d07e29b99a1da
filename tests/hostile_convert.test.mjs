// hostile_convert.test.mjs — `bertlens convert` on issue 31's crafted
// tokenizer.json files (tests/fixtures/hostile_tok/, made by make_hostile.py
// with Hugging Face tokenizers' references): each inside a tiny BERT
// checkpoint (tests/lib/tiny_checkpoint.mjs). A file the tokenizer.json
// pipeline refuses is refused by the converter in the same words, whichever
// path would run it; an accepted one converts, and the bundle tokenizes every
// reference line as tokenizers does. BERT-shaped files (WordPiece,
// BertNormalizer, BertPreTokenizer) with a template of another shape or added
// tokens beyond the five specials were routed to the bundle's own WordPiece,
// which dropped both ($A twice became [CLS] $A [SEP]; added tokens refused for
// vocab_size), and limits only the pipeline has were skipped.
//
//   BERTLENS_BACKEND=native|asan node --test tests/hostile_convert.test.mjs
// (the page's converter, wasm: tests/hostile_wasm.test.mjs)
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { after } from 'node:test';
import { BIN, ROOT, nativeTest as test } from './lib/backend.mjs';
import { firstDiff } from './lib/first_diff.mjs';
import { tinyCheckpoint } from './lib/tiny_checkpoint.mjs';

const FIX = path.join(ROOT, 'tests/fixtures/hostile_tok');
const MANIFEST = JSON.parse(fs.readFileSync(path.join(FIX, 'manifest.json'), 'utf8'));
const refs = zlib.gunzipSync(fs.readFileSync(path.join(FIX, 'refs.jsonl.gz'))).toString('utf8')
  .split('\n').filter((l) => l).map((l) => JSON.parse(l));
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bertlens-hostile-convert-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

// A manifest entry's "converter" says when the converters accept what the
// pipeline refuses: exactly BERT's pipeline goes to the bundle's own
// WordPiece, under the bundle's limits (as tools/convert.py takes it).
const ROUTED = Object.fromEntries(Object.entries(MANIFEST).filter(([, m]) => m.converter).map(([n, m]) => [n, m.converter]));

function tokJson(name) {
  const f = path.join(FIX, `${name}.json${MANIFEST[name].gz ? '.gz' : ''}`);
  const b = fs.readFileSync(f);
  return MANIFEST[name].gz ? zlib.gunzipSync(b) : b;
}

for (const [name, { expect }] of Object.entries(MANIFEST)) {
  const refused = expect !== 'accept' && !ROUTED[name];
  test(`bertlens convert: ${name} ${ROUTED[name] || (refused ? `refused (/${expect}/)` : 'converted, tokenizes as Hugging Face')}`, () => {
    const dir = path.join(tmp, name), out = path.join(tmp, `${name}.blb`);
    tinyCheckpoint(dir, tokJson(name));
    const c = spawnSync(BIN, ['convert', dir, out, '--dtype', 'q8'], { encoding: 'utf8', timeout: 120_000 });
    if (refused) {
      assert.notEqual(c.status, 0, `${name}: converted instead of refused`);
      assert.match(c.stderr, new RegExp(expect), `${name}: refused, but not for its limit: ${c.stderr}`);
      return;
    }
    assert.equal(c.status, 0, `${name}: ${c.stderr}`);
    const rows = refs.filter((r) => r.file === name);
    if (!rows.length) return;
    const input = rows.map((r) => JSON.stringify({ ...r.input, max_length: r.max_length })).join('\n') + '\n';
    const t = spawnSync(BIN, ['tokenize', '--jsonl', out], { input, encoding: 'utf8', maxBuffer: 1 << 28 });
    assert.equal(t.status, 0, t.stderr);
    const got = t.stdout.split('\n').filter((l) => l).map((l) => JSON.parse(l));
    assert.equal(got.length, rows.length);
    rows.forEach((r, k) => {
      const why = firstDiff(got[k], r.want, { width: 200 });
      assert.equal(why, null, `${name}: ${JSON.stringify(r.input).slice(0, 80)}: ${why}`);
    });
  });
}
