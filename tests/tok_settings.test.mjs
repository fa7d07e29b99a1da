// tok_settings.test.mjs — a checkpoint's tokenizer settings written twice,
// in tokenizer.json and in tokenizer_config.json (or left to the tokenizer
// class's default): where transformers (which builds its tokenizer from
// tokenizer_config.json) and the tokenizers library (which runs
// tokenizer.json) tokenize alike, the converted bundle gives those tokens;
// where they differ, the converter refuses the folder naming the setting
// (src/convert/convert_tok_agree.c). Crafted folders and both libraries' tokens:
// tests/fixtures/tok_settings/cases.json (make.py, transformers 5.24). Also
// WordPiece's max_input_chars_per_word 0: every word [UNK], as tokenizer.json
// says (issue 32).
//
//   node --test tests/tok_settings.test.mjs                        bertlens convert + tokenize (native)
//   BERTLENS_BACKEND=asan node --test tests/tok_settings.test.mjs  the same under ASan
//   BERTLENS_BACKEND=wasm node --test tests/tok_settings.test.mjs  the page's converter (wasm): the same refusals, the CLI's bytes
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { BIN, IS_WASM, ROOT } from './lib/backend.mjs';
import { TOK_CASES, tokCaseFolder } from './lib/tok_settings.mjs';

const CASES = TOK_CASES;
const OUT = path.join(ROOT, 'build/tok_settings');

/** Case k's checkpoint folder under build/tok_settings/. */
const folder = (c, k) => tokCaseFolder(c, path.join(OUT, `case${k}`));

const cli = (args) => spawnSync(BIN, args, { encoding: 'utf8', maxBuffer: 1 << 26 });

test('cases.json: each refusal is where transformers and tokenizers differ, each bundle where they agree (but max_input_chars_per_word)', () => {
  for (const c of CASES) {
    const agree = JSON.stringify(c.transformers) === JSON.stringify(c.tokenizers);
    if (c.refuse) assert.ok(!agree, `${c.name}: refused though both libraries agree`);
    else if (!/max_input_chars_per_word/.test(c.name)) assert.ok(agree, `${c.name}: accepted though they differ`);
  }
  assert.ok(CASES.filter((c) => c.refuse).length >= 15 && CASES.filter((c) => !c.refuse).length >= 8);
});

CASES.forEach((c, k) => {
  test(`${c.refuse ? 'refused' : 'converted'}: ${c.name}`, { skip: IS_WASM && 'the page\'s converter: below' }, () => {
    const dir = folder(c, k);
    const out = path.join(OUT, `case${k}.blb`);
    const r = cli(['convert', dir, out, '--dtype', 'f32']);
    if (c.refuse) {
      assert.equal(r.status, 1, `${c.name}: converted, not refused`);
      assert.match(r.stderr, new RegExp(c.refuse), r.stderr);
      assert.match(r.stderr, /no bundle can tokenize as both|clean_text/, 'says why');
      assert.ok(!/Sanitizer|Segmentation|Aborted/.test(r.stderr), r.stderr);
      return;
    }
    assert.equal(r.status, 0, r.stderr);
    c.texts.forEach((t, i) => {
      const got = JSON.parse(cli(['tokenize', out, t]).stdout).tokens;
      assert.deepEqual(got, c.tokens[i], `${c.name}: ${JSON.stringify(t)}`);
    });
  });
});

test('max_input_chars_per_word 0 in a BERT tokenizer.json: "hello world" is [UNK] [UNK] (issue 32)', { skip: IS_WASM && 'native' }, () => {
  const k = CASES.findIndex((c) => /max_input_chars_per_word 0/.test(c.name));
  const out = path.join(OUT, 'maxchars0.blb');
  assert.equal(cli(['convert', folder(CASES[k], k), out, '--dtype', 'f32']).status, 0);
  assert.deepEqual(JSON.parse(cli(['tokenize', out, 'hello world']).stdout).tokens, ['[CLS]', '[UNK]', '[UNK]', '[SEP]']);
});

test('the page\'s converter (wasm, engine/convert.js) refuses the same folders with the same reason, and writes the CLI\'s bytes for the others', { skip: !IS_WASM && 'needs BERTLENS_BACKEND=wasm' }, async () => {
  const { workerConverter, folderEntries } = await import('../tools/wasm_node.mjs');
  const { convertCheckpoint } = await import('../web/js/engine/convert.js');
  const { WORKER_PROTOCOL } = await import('../web/js/lib/protocol.js');
  const { call } = await workerConverter(WORKER_PROTOCOL);
  for (const [k, c] of CASES.entries()) {
    const dir = folder(c, k);
    const conv = convertCheckpoint(call, folderEntries(dir), { name: `case${k}`, dtype: 'f32' }, () => {});
    if (c.refuse) {
      await assert.rejects(conv, (e) => new RegExp(c.refuse).test(e.message), c.name);
      continue;
    }
    const { bytes } = await conv;
    const out = path.join(OUT, `case${k}.cli.blb`);
    assert.equal(cli(['convert', dir, out, '--dtype', 'f32', '--name', `case${k}`]).status, 0);
    assert.ok(Buffer.from(bytes).equals(fs.readFileSync(out)), `${c.name}: the page's bundle differs from the CLI's`);
  }
});
