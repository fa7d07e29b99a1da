// corpus_export.test.mjs — web/js/lib/corpus_export.js: the Corpus view's
// JSON and CSV hold the fields of `bertlens corpus` (issue 25 item 2), its
// values unchanged, text cells through the formula guard. Reference: the CLI
// (build/bertlens, build/models/tiny-bert.f32.blb: make test-models).
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { corpusJSON, corpusCSV, CORPUS_FEATURES, CORPUS_CLASSES } from '../../web/js/lib/corpus_export.js';
import { csvRows } from '../../web/js/lib/corpus_parse.js';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const BIN = path.join(ROOT, 'build/bertlens');
const BUNDLE = path.join(ROOT, 'build/models/all-minilm-l6-v2.f32.blb');
const CORPUS = path.join(ROOT, 'tests/fixtures/corpus_cmd/corpus.txt');

const cliText = () => {
  const r = spawnSync(BIN, ['corpus', '--top', '3', BUNDLE, CORPUS], { maxBuffer: 1 << 26 });
  assert.equal(r.status, 0, r.stderr.toString());
  return r.stdout.toString();
};

test('JSON export: the CLI\'s fields and values, byte-equal once parsed', () => {
  const text = cliText();
  const ref = JSON.parse(text);
  const out = corpusJSON({ ...ref, extra: 1, heads: ref.heads.map((h) => ({ ...h, pageOnly: true })) });
  assert.deepEqual(JSON.parse(out), ref);
  assert.deepEqual(Object.keys(JSON.parse(out).heads[0]), Object.keys(ref.heads[0]));
});

test('CSV export: a row per head and per top link with the CLI\'s numbers; tokens guarded against formulas', () => {
  const ref = JSON.parse(cliText());
  const rows = csvRows(corpusCSV(ref)).map((r) => r.fields);
  const head = rows[0];
  const col = (name) => head.indexOf(name);
  const heads = rows.filter((r) => r[0] === 'head');
  const links = rows.filter((r) => r[0] === 'link');
  assert.equal(heads.length, ref.heads.length);
  assert.equal(links.length, ref.heads.reduce((n, h) => n + h.top.length, 0));
  heads.forEach((r, i) => {
    const h = ref.heads[i];
    assert.equal(Number(r[col('layer')]), h.layer);
    for (const f of CORPUS_FEATURES) assert.equal(r[col(f)] === '' ? null : Number(r[col(f)]), h[f], f);
    for (const c of CORPUS_CLASSES) assert.equal(Number(r[col(`class_${c}`)]), h.class_fractions[c], c);
  });
  const all = ref.heads.flatMap((h) => h.top);
  let guarded = 0;
  links.forEach((r, i) => {
    const x = all[i];
    for (const f of ['text', 'line', 'query', 'key', 'weight']) assert.equal(Number(r[col(`top_${f}`)]), x[f], f);
    for (const f of ['query_token', 'key_token']) {
      const t = r[col(`top_${f}`)];
      if (/^[=+\-@]/.test(x[f])) { assert.equal(t, `'${x[f]}`); guarded++; } else assert.equal(t, x[f]);
    }
  });
  console.log(`# ${guarded} token cells guarded against formulas`);
});
