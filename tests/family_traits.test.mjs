// family_traits.test.mjs — every family src/families/family.c lists is handled
// (issue 33, docs/adding-a-family.md): a family is a row of traits, and a
// trait a row declares must be implemented where it matters.
//
//   1. Each trait value a row sets (BLI_POS_ROTARY, BLI_NORM_RMS, ...; or a
//      yes/no trait such as .final_norm = 1) is read by the blocks that
//      implement it: the encoder, the loader, the converter (HANDLERS below,
//      by file). A row that declares a value no block reads fails here.
//   2. Every model_type the table runs has a checkpoint against Hugging Face:
//      a folder of tests/fixtures/families/ of that model_type in
//      families.test.mjs's FAMILIES (BERT and DistilBERT: build/models, the
//      encoder and predict tests).
//   3. No enum value of family.h is left without a handler.
//
// Reads the sources as text: no build needed, every backend the same.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { ROOT } from './lib/backend.mjs';

// a source by its file name, in whichever folder of src/ it lives
const SOURCES = new Map(fs.readdirSync(path.join(ROOT, 'src'), { recursive: true }).map((f) => [path.basename(f), f]));
const srcPath = (f) => SOURCES.get(f) ?? f;
const src = (f) => fs.readFileSync(path.join(ROOT, 'src', srcPath(f)), 'utf8');
const LOADER = ['bundle_family.c'];

// trait field -> { value or 'yes': files, each of which must read it }
const HANDLERS = {
  // the position blocks (encoder_family.c), their keys (loader), config keys and tensors (converter)
  positions: {
    BLI_POS_BUCKETS: ['encoder_family.c', ...LOADER, 'convert_rel.c', 'convert.c'],
    BLI_POS_DISENTANGLED: ['encoder_family.c', ...LOADER, 'convert_rel.c', 'convert.c'],
    BLI_POS_ROTARY: ['encoder_family.c', ...LOADER, 'convert_rel.c', 'cli_info.c'],
  },
  pad_positions: { BLI_PAD_CONFIG: ['convert_family.c'], BLI_PAD_ONE: ['convert_family.c'] },
  sliding: { yes: ['bundle_family.c', 'convert_rel.c'] },
  types: {
    BLI_TYPES_CONFIG_OR_NONE: ['bundle_family.c', 'convert_config.c'],
    BLI_TYPES_NONE: ['bundle_family.c', 'convert_config.c'],
  },
  project: { BLI_PROJ_IF_NARROW: ['convert_family.c'], BLI_PROJ_ALWAYS: ['convert_family.c', 'bundle_family.c'] },
  embed_default: { yes: ['convert_family.c'] },
  layer_groups: { yes: ['convert_family.c', 'bundle_family.c'] },
  no_emb_norm: { yes: ['encoder.c', 'convert_rel.c'] },
  layer: { BLI_LAYER_PRE_NORM: ['encoder.c'] },
  norm: { BLI_NORM_RMS: ['encoder_family.c'] },
  first_norm: { yes: ['encoder.c', 'convert_rel.c'] },
  final_norm: { yes: ['encoder_family.c', 'bundle_family.c', 'convert.c'] },
  ffn: { BLI_FFN_GATED: ['encoder_family.c', 'bundle_family.c', 'convert.c'] },
  absent_biases: { yes: ['convert_rel.c'] },
  act_key: { yes: ['convert_config.c'] },
  eps_key: { yes: ['convert_config.c'] },
  eps_default: { yes: ['convert_config.c'] },
  must_be_false: { yes: ['convert_family.c'] },
  prefixes: { yes: ['convert_family.c'] },
  names: { yes: ['convert_family.c'] },
  layer_src: { yes: ['convert_family.c'] },
  layer_names: { yes: ['convert_family.c'] },
  fused_qkv: { yes: ['convert_rel.c'] },
  fused_ffn: { yes: ['convert_rel.c'] },
  fused_ffn_gate_first: { yes: ['convert_rel.c'] },
  about: { yes: ['cli_info.c'] },
  // the heads (convert_head.c: the masked-LM head's config, the task heads' recipes)
  head_gelu: { yes: ['convert_head.c'] },
  head_act_key: { yes: ['convert_head.c'] },
  head_tied_legacy: { yes: ['convert_head.c'] },
  head_no_biases: { yes: ['convert_head.c'] },
  seq_head: { yes: ['convert_head.c'] },
  token_head: { yes: ['convert_head.c'] },
  qa_head: { yes: ['convert_head.c'] },
  distil_seq_head: { yes: ['convert_head.c'] },
};

/** The rows of FAMILY_TRAITS: kind -> { field: value text }. */
function rows() {
  const text = src('family.c');
  const body = text.slice(text.indexOf('FAMILY_TRAITS['), text.indexOf('};', text.indexOf('FAMILY_TRAITS[')));
  const out = {};
  for (const part of body.split(/\n    \[(BLI_FAM_[A-Z0-9_]+)\] = \{/).slice(1).reduce((acc, x, i, a) => (i % 2 ? acc : [...acc, [x, a[i + 1]]]), [])) {
    const [kind, rest] = part;
    const fields = {};
    // top-level `.field = value` (values may hold nested braces: skip over them)
    let depth = 0, cur = '';
    for (const ch of rest) {
      if (ch === '{' || ch === '(') depth++;
      if (ch === '}' || ch === ')') depth--;
      if (ch === ',' && depth === 0) { add(cur); cur = ''; } else cur += ch;
      if (depth < 0) break;
    }
    add(cur);
    function add(s) {
      const m = /^\s*\.([a-z_0-9]+)\s*=\s*([\s\S]*?)\s*\}?\s*$/.exec(s);
      if (m) fields[m[1]] = m[2];
    }
    out[kind] = fields;
  }
  return out;
}

/** Does file f read trait `field` (tr->field, or ->field on the traits)? */
const reads = (f, field) => new RegExp(`(tr|traits\\([^)]*\\))->${field}\\b|s->tr->${field}\\b`).test(src(f));

test('the traits table parses: one row per BLI_FAM_* layout of family.h', () => {
  const r = rows();
  const layouts = [...src('family.h').matchAll(/\b(BLI_FAM_(?!N\b)[A-Z0-9_]+)\b/g)].map((m) => m[1]);
  for (const k of new Set(layouts)) assert.ok(r[k], `family.c has no traits row for ${k}`);
  assert.ok(Object.keys(r.BLI_FAM_MODERNBERT).includes('positions'), 'fields parsed');
});

test('every trait a family declares is read by the blocks that implement it', () => {
  const missing = [];
  for (const [kind, fields] of Object.entries(rows())) {
    for (const [field, value] of Object.entries(fields)) {
      if (field === 'kind') continue;
      const h = HANDLERS[field];
      assert.ok(h, `${kind}: trait .${field} has no handler list in this test (add it, and its block)`);
      const key = /^BLI_[A-Z_]+$/.test(value) ? value : 'yes';
      if (value === '0' || value === 'NULL') continue; // BERT's, the default
      const files = h[key];
      if (!files) { missing.push(`${kind}: .${field} = ${value}: no block handles this value`); continue; }
      for (const f of files) {
        const text = src(f);
        const ok = key === 'yes' ? reads(f, field) : text.includes(value) && reads(f, field);
        if (!ok) missing.push(`${kind}: .${field} = ${value}: src/${srcPath(f)} does not read it`);
      }
    }
  }
  assert.deepEqual(missing, []);
});

test('every value of a trait enum has a handler (family.h)', () => {
  const h = src('family.h');
  for (const [prefix, field] of [['BLI_POS_', 'positions'], ['BLI_PAD_', 'pad_positions'], ['BLI_TYPES_', 'types'],
    ['BLI_PROJ_', 'project'], ['BLI_LAYER_', 'layer'], ['BLI_NORM_', 'norm'], ['BLI_FFN_', 'ffn']]) {
    const values = [...h.matchAll(new RegExp(`\\b(${prefix}[A-Z_]+)\\b`, 'g'))].map((m) => m[1]);
    assert.ok(values.length >= 2, prefix);
    // the first of each enum is BERT's default, read everywhere by not being special
    for (const v of new Set(values.slice(1))) assert.ok(HANDLERS[field][v], `${v}: no handler in this test's list`);
  }
});

test('every family the table runs is checked against Hugging Face', () => {
  const table = [...src('family.c').matchAll(/\{"([a-z0-9_-]+)", (BLI_FAM_[A-Z0-9_]+)/g)].map((m) => m[1]);
  assert.ok(table.length >= 10);
  const famTest = fs.readFileSync(path.join(ROOT, 'tests/families.test.mjs'), 'utf8');
  const listed = JSON.parse(/const FAMILIES = (\[[^\]]*\])/.exec(famTest)[1].replace(/'/g, '"'));
  const dir = path.join(ROOT, 'tests/fixtures/families');
  const typeOf = (f) => JSON.parse(fs.readFileSync(path.join(dir, f, 'config.json'), 'utf8')).model_type;
  const tested = new Set(listed.map(typeOf));
  const elsewhere = new Set(['bert', 'distilbert']); // build/models: encoder, predict, fidelity tests
  for (const t of table) assert.ok(tested.has(t) || elsewhere.has(t), `model_type '${t}' is listed in src/families/family.c but no ` +
    'tests/fixtures/families/ checkpoint of it is in families.test.mjs FAMILIES');
  // and the list the converter prints names each of them
  const list = /bli_family_list\(void\) \{\s*return "([^"]+)"/.exec(src('family.c'))[1].split(', ');
  assert.deepEqual([...list].sort(), [...table].sort());
});
