// families_rel.test.mjs — what tests/families.test.mjs (every layer's
// attention within 1e-5 of Hugging Face, every dtype) leaves out of the
// families with relative or rotary positions (mpnet, deberta-v2, modernbert;
// src/model/encoder_family.h, src/convert/convert_rel.c):
//   - ModernBERT's two config forms (the Hub's global_rope_theta /
//     local_rope_theta / global_attn_every_n_layers and newer transformers'
//     layer_types / rope_parameters) give the same model, and each key moves
//     the layers it names;
//   - a sliding layer's keys beyond the window are exactly 0, a global
//     layer's never;
//   - token type ids are ignored, as Hugging Face ignores them there;
//   - 1 and 3 threads give the same bits;
//   - configs it does not run are refused with the reason; `bertlens info`
//     names the family and what sets it apart.
// Checkpoints: tests/fixtures/families/<family>/ (make.py); converted by the
// native CLI, run by its test-attend.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after } from 'node:test';
import { BIN, ROOT, nativeTest as test } from './lib/backend.mjs';

const FIX = path.join(ROOT, 'tests/fixtures/families');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bertlens-families-rel-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

function convert(dir, name) {
  const out = path.join(tmp, `${name}.blb`);
  const r = spawnSync(BIN, ['convert', dir, out, '--dtype', 'f32'], { encoding: 'utf8' });
  return { out, status: r.status, stderr: r.stderr };
}

/** A copy of fixture `family` with config.json changed by edit(cfg). */
function variant(family, name, edit) {
  const dir = path.join(tmp, name);
  fs.cpSync(path.join(FIX, family), dir, { recursive: true });
  const cfg = JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8'));
  edit(cfg);
  fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify(cfg));
  return dir;
}

/** Every layer's attention [L][H][T][T] (nested arrays) of ids/types. */
function attend(bundle, ids, types, extra = []) {
  const r = spawnSync(BIN, [...extra, 'test-attend', '--ids', ids.join(','), '--types', types.join(','), bundle],
    { encoding: 'utf8', maxBuffer: 1 << 28 });
  assert.equal(r.status, 0, `test-attend ${path.basename(bundle)}: ${r.stderr}`);
  return JSON.parse(r.stdout).attentions;
}

const ref = (family) => JSON.parse(fs.readFileSync(path.join(FIX, `${family}.ref.json`), 'utf8'));
const longest = (family) => ref(family).cases.reduce((a, c) => (c.T > a.T ? c : a));
const maxDiff = (a, b) => {
  const x = a.flat(Infinity), y = b.flat(Infinity);
  assert.equal(x.length, y.length);
  return x.reduce((m, v, i) => Math.max(m, Math.abs(v - y[i])), 0);
};

const bundles = {};
const bundle = (family) => {
  if (!bundles[family]) {
    const b = convert(path.join(FIX, family), family);
    assert.equal(b.status, 0, `convert ${family}: ${b.stderr}`);
    bundles[family] = b.out;
  }
  return bundles[family];
};

test('modernbert: the Hub\'s config keys and transformers\' layer_types / rope_parameters make the same model', () => {
  const c = longest('modernbert');
  const zeros = c.ids.map(() => 0);
  const base = attend(bundle('modernbert'), c.ids, zeros);
  const hub = (g, l, every) => (cfg) => {
    delete cfg.layer_types;
    delete cfg.rope_parameters;
    Object.assign(cfg, { global_rope_theta: g, local_rope_theta: l, global_attn_every_n_layers: every });
  };
  const same = convert(variant('modernbert', 'mb-hub', hub(160000, 10000, 2)), 'mb-hub');
  assert.equal(same.status, 0, same.stderr);
  assert.deepEqual(attend(same.out, c.ids, zeros), base, 'Hub-form config: other attention');
  // local_rope_theta moves the sliding layer 1 (and what follows it), not
  // the global layer 0 before it; global_rope_theta moves layer 0
  const local = convert(variant('modernbert', 'mb-local', hub(160000, 500, 2)), 'mb-local');
  const a = attend(local.out, c.ids, zeros);
  assert.deepEqual(a[0], base[0]);
  assert.ok(maxDiff(a[1], base[1]) > 1e-3, 'local_rope_theta ignored');
  const glob = convert(variant('modernbert', 'mb-global', hub(500, 10000, 2)), 'mb-global');
  assert.ok(maxDiff(attend(glob.out, c.ids, zeros)[0], base[0]) > 1e-3, 'global_rope_theta ignored');
  // every 3rd layer global: layer 2 becomes a sliding layer (zeros), in both forms
  const every3 = convert(variant('modernbert', 'mb-every3', hub(160000, 10000, 3)), 'mb-every3');
  const types3 = convert(variant('modernbert', 'mb-types3', (cfg) => {
    cfg.layer_types = ['full_attention', 'sliding_attention', 'sliding_attention'];
    delete cfg.global_attn_every_n_layers;
  }), 'mb-types3');
  assert.equal(types3.status, 0, types3.stderr);
  const e3 = attend(every3.out, c.ids, zeros);
  assert.deepEqual(attend(types3.out, c.ids, zeros), e3);
  assert.ok(e3[2].flat(Infinity).filter((p) => p === 0).length > 0, 'layer 2 should be a sliding layer');
  // a layer pattern the encoder's rule cannot express is refused
  const odd = convert(variant('modernbert', 'mb-odd', (cfg) => {
    cfg.layer_types = ['sliding_attention', 'full_attention', 'full_attention'];
  }), 'mb-odd');
  assert.notEqual(odd.status, 0);
  assert.match(odd.stderr, /layer_types\[0\] is 'sliding_attention'/);
});

test('modernbert: a sliding layer\'s keys beyond the window are exactly 0, a global layer has none', () => {
  const r = ref('modernbert');
  const c = longest('modernbert');
  const cfg = JSON.parse(fs.readFileSync(path.join(FIX, 'modernbert/config.json'), 'utf8'));
  const half = cfg.local_attention / 2;
  assert.ok(c.T > 2 * half + 1, 'the input is longer than the window');
  const att = attend(bundle('modernbert'), c.ids, c.ids.map(() => 0));
  assert.equal(att.length, r.n_layers);
  att.forEach((layer, l) => {
    const sliding = cfg.layer_types[l] === 'sliding_attention';
    layer.forEach((head) => head.forEach((row, i) => row.forEach((p, j) => {
      if (sliding && Math.abs(i - j) > half) assert.equal(p, 0, `layer ${l} [${i}][${j}] beyond the window`);
      else assert.ok(p > 0, `layer ${l} [${i}][${j}] = ${p} inside the window`);
    })));
  });
});

test('mpnet, deberta-v2, modernbert ignore token type ids as Hugging Face does', () => {
  for (const family of ['mpnet', 'deberta-v2', 'modernbert']) {
    const c = ref(family).cases.find((x) => x.ids.filter((id, i) => i && id === x.ids[x.ids.length - 1]).length >= 2);
    assert.ok(c, `${family}: no pair case`);
    // the pair template's segment ids: 1 from the token after the first separator
    const sep = c.ids[c.ids.length - 1], second = c.ids.indexOf(sep) + 1;
    const types = c.ids.map((_, i) => (i >= second ? 1 : 0));
    const b = bundle(family);
    assert.deepEqual(attend(b, c.ids, types), attend(b, c.ids, c.ids.map(() => 0)), family);
  }
});

test('mpnet, deberta-v2, modernbert: 1 and 3 threads give the same bits', () => {
  for (const family of ['mpnet', 'deberta-v2', 'modernbert']) {
    const c = longest(family), zeros = c.ids.map(() => 0);
    assert.deepEqual(attend(bundle(family), c.ids, zeros, ['--threads', '3']),
      attend(bundle(family), c.ids, zeros, ['--threads', '1']), family);
  }
});

test('configs these families do not run are refused with the reason', () => {
  const cases = [
    ['deberta-v2', (cfg) => { cfg.share_att_key = false; }, /share_att_key false/],
    ['deberta-v2', (cfg) => { cfg.position_biased_input = true; }, /position_biased_input true/],
    ['deberta-v2', (cfg) => { cfg.conv_kernel_size = 3; }, /conv_kernel_size/],
    ['deberta-v2', (cfg) => { cfg.model_type = 'deberta'; }, /model_type 'deberta' .*DeBERTa v1/],
    ['modernbert', (cfg) => { cfg.norm_bias = true; }, /norm_bias true/],
    ['modernbert', (cfg) => { cfg.rope_parameters.sliding_attention.rope_type = 'yarn'; }, /rope_type 'yarn'/],
  ];
  cases.forEach(([family, edit, why], i) => {
    const b = convert(variant(family, `refused-${i}`, edit), `refused-${i}`);
    assert.notEqual(b.status, 0, `case ${i} converted`);
    assert.match(b.stderr, why);
  });
});

test('bertlens info names the family and what sets it apart', () => {
  const want = {
    mpnet: /family\s+mpnet, positions from 2 \(padding_idx 1\), relative position bias \(32 buckets, shared\)/,
    'deberta-v2': /family\s+deberta-v2, disentangled attention \(c2p\+p2c, 16 relative rows, log buckets\)/,
    modernbert: /family\s+modernbert, rotary positions, global attention every 2 layers, else a window of \+-8/,
  };
  for (const [family, re] of Object.entries(want)) {
    const r = spawnSync(BIN, ['info', bundle(family)], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, re);
  }
});
