// What a model converted in the page is called and kept by
// (web/js/lib/model_names.js), and the metadata strings read out of a
// bundle by slices (web/js/engine/bundle_meta.js) against `bertlens info`'s
// reading of the same bundles (build/models, converted by build/bertlens).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { nameOrPath, configEntry, convertedName, convertedKey, bundleFileName } from '../../web/js/lib/model_names.js';
import { metaStrings } from '../../web/js/engine/bundle_meta.js';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..');

test('a converted model is named by _name_or_path, else its folder and weights hash; never the folder alone', () => {
  assert.equal(nameOrPath('{"_name_or_path": " org/model-a ", "hidden_size": 4}'), 'org/model-a');
  assert.equal(nameOrPath('{"hidden_size": 4}'), '');
  assert.equal(nameOrPath('{"_name_or_path": 3}'), '');
  assert.equal(nameOrPath('not json'), '');
  assert.equal(configEntry([{ name: 'vocab.txt' }, { name: 'config.json' }, { name: '0_Transformer/config.json' }]).name, '0_Transformer/config.json');
  const sha = 'ab12cd34ef'.padEnd(64, '0');
  assert.equal(convertedName({ nameOrPath: 'org/model-a', folder: 'ckpt', sha }), 'org/model-a');
  assert.equal(convertedName({ folder: 'ckpt', sha }), 'ckpt-ab12cd34');
  assert.notEqual(convertedName({ folder: 'ckpt', sha }), convertedName({ folder: 'ckpt', sha: 'ff'.repeat(32) }));
  assert.equal(convertedName({}), 'checkpoint');
  assert.notEqual(convertedKey('m', sha, 'q8'), convertedKey('m', sha, 'f32'));
  assert.equal(bundleFileName('org/model-a', 'q8'), 'org_model-a.q8.blb.gz');
  assert.equal(bundleFileName('/home/me/runs/ckpt', 'f16', false), 'home_me_runs_ckpt.f16.blb');
  assert.equal(bundleFileName('', 'q8'), 'model.q8.blb.gz');
});

test('metaStrings reads source.* by slices, past the vocabulary (STRARR) and tokenizer.json (BYTES)', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bertlens-meta-'));
  const bundles = [path.join(ROOT, 'build/models/tiny-bert.q8.blb')];
  const rob = path.join(dir, 'roberta.blb');
  const r = spawnSync(path.join(ROOT, 'build/bertlens'), ['convert', path.join(ROOT, 'tests/fixtures/families/roberta'), rob, '--dtype', 'f32', '--name', 'my/roberta'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  bundles.push(rob);
  for (const f of bundles) {
    const bytes = new Uint8Array(fs.readFileSync(f));
    const reads = [];
    const read = async (a, b) => { reads.push(b - a); return bytes.slice(a, b); };
    const got = await metaStrings(read, ['source.name', 'source.sha256', 'weights.dtype']);
    const info = spawnSync(path.join(ROOT, 'build/bertlens'), ['info', f], { encoding: 'utf8' }).stdout;
    assert.match(info, new RegExp(`source\\.sha256 +${got['source.sha256']}`), `${f}: ${JSON.stringify(got)}`);
    assert.match(got['source.sha256'], /^[0-9a-f]{64}$/);
    assert.equal(got['weights.dtype'], f === rob ? 'f32' : 'q8');
    if (f === rob) assert.equal(got['source.name'], 'my/roberta');
    assert.ok(reads.length <= 4, `${reads.length} reads`);
  }
  fs.rmSync(dir, { recursive: true, force: true });
});
