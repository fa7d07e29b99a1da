// word_ids.test.mjs — the engine's word ids are Hugging Face's word_ids(),
// for every family's tokenizer, on single texts and pairs. The page merges
// subwords into words by these ids ("Merge subwords into words",
// web/js/lib/data.js wordGroups), so they must be the tokenizer's own.
//
// Reference: tests/fixtures/words/words.json.gz (tests/fixtures/words/make.py:
// AutoTokenizer on each folder of tests/fixtures/families/, BertTokenizerFast
// on all-MiniLM-L6-v2 and tests/fixtures/tiny-bert; a corpus of contractions,
// numbers, URLs, code, odd whitespace, many scripts, emoji, typed mask tokens,
// a long line and pairs). Each family folder is converted with `bertlens
// convert` (its tokenizer.json rides in the bundle); BERT's bundles are the
// test models (build/models, tools/make_models.py --test).
//
//   node --test tests/word_ids.test.mjs                          native CLI, tokenize --jsonl
//   BERTLENS_BACKEND=wasm node --test tests/word_ids.test.mjs    build/wasm/bertlens.js, blw_tokenize_json
//   BERTLENS_BACKEND=asan ...                                    under the sanitizers
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { test } from 'node:test';
import { BIN, IS_WASM, ROOT, loadWasm, missing } from './lib/backend.mjs';
import { loadBytes, putString, wasmError } from '../tools/wasm_node.mjs';
import { assertAllLinesMatch, firstDiff } from './lib/first_diff.mjs';

const REF = JSON.parse(zlib.gunzipSync(fs.readFileSync(path.join(ROOT, 'tests/fixtures/words/words.json.gz'))).toString('utf8'));
const OUT = path.join(ROOT, 'build/word-ids-test');
const FIELDS = ['ids', 'tokens', 'type_ids', 'word_ids', 'offsets', 'truncated'];
const cli = (args, input) => spawnSync(BIN, args, { input, maxBuffer: 1 << 28, encoding: 'utf8' });

/** The bundle whose tokenizer is NAME's: a family folder converted here, or a BERT test model. */
function bundleOf(name) {
  if (name === 'minilm') return path.join(ROOT, 'build/models/all-minilm-l6-v2.q8.blb');
  if (name === 'tiny-bert') return path.join(ROOT, 'build/models/tiny-bert.f32.blb');
  const out = path.join(OUT, `${name}.blb`);
  fs.mkdirSync(OUT, { recursive: true });
  const r = cli(['convert', path.join(ROOT, 'tests/fixtures/families', name), out, '--dtype', 'f32', '--name', `test/${name}`, '--license', 'MIT']);
  assert.equal(r.status, 0, `convert ${name}: ${r.stderr}`);
  return out;
}

/** The engine's tokenization of every row: native `tokenize --jsonl`, or wasm blw_tokenize_json. */
async function tokenize(file, rows, maxLength) {
  if (!IS_WASM) {
    const input = rows.map((r) => JSON.stringify({ text: r.text, ...(r.text_pair !== undefined ? { text_pair: r.text_pair } : {}), max_length: maxLength })).join('\n') + '\n';
    const r = cli(['tokenize', '--jsonl', file], input);
    assert.equal(r.status, 0, r.stderr);
    return r.stdout.split('\n').filter((l) => l.length).map((l) => JSON.parse(l));
  }
  const M = await loadWasm();
  assert.equal(loadBytes(M, fs.readFileSync(file)), 0, wasmError(M));
  return rows.map((r) => {
    const pa = putString(M, r.text);
    const pb = r.text_pair !== undefined ? putString(M, r.text_pair) : 0;
    const out = JSON.parse(M.UTF8ToString(M._blw_tokenize_json(pa, pb, maxLength)));
    M._free(pa);
    if (pb) M._free(pb);
    return out;
  });
}

for (const [name, tk] of Object.entries(REF.tokenizers)) {
  const skip = name === 'minilm' ? missing(path.join(ROOT, 'build/models/all-minilm-l6-v2.q8.blb'))
    : name === 'tiny-bert' ? missing(path.join(ROOT, 'build/models/tiny-bert.f32.blb')) : false;
  test(`${name} (${tk.pieces}): word ids, ids, offsets are Hugging Face's on ${tk.rows.length} texts and pairs`, { skip }, async () => {
    const got = await tokenize(bundleOf(name), tk.rows, tk.max_length);
    assert.equal(got.length, tk.rows.length);
    assertAllLinesMatch(name, tk.rows.length, (k) => {
      const why = firstDiff(got[k], tk.rows[k], { fields: FIELDS });
      return why && `line ${k + 1} ${JSON.stringify(tk.rows[k].text.slice(0, 60))}: ${why}`;
    });
    // the corpus reaches what the check is for: pairs (word ids restart in B),
    // a piece that holds only the word-start marker, a typed mask token
    assert.ok(tk.rows.some((r) => r.text_pair !== undefined && r.word_ids.includes(0, r.sequence_ids.indexOf(1))), 'a pair');
    assert.ok(tk.rows.some((r) => r.tokens.includes(tk.mask)), 'the mask token typed');
  });
}
