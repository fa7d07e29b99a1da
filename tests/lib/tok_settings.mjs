// tok_settings.mjs — the crafted checkpoint folders of
// tests/fixtures/tok_settings/cases.json (make.py): a base folder (tiny-bert
// with the tokenizer files transformers writes for it, or a family fixture)
// with its tokenizer.json and tokenizer_config.json patched. Shared by
// tests/tok_settings.test.mjs and tests/browser/convert_names.scenarios.mjs.
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const FIX = path.join(ROOT, 'tests/fixtures/tok_settings');

export const TOK_CASES = JSON.parse(fs.readFileSync(path.join(FIX, 'cases.json'), 'utf8')).cases;

/** make.py's patch: {dotted.path: value, null deletes}. */
export function patchJson(obj, p) {
  const out = structuredClone(obj);
  for (const [where, value] of Object.entries(p)) {
    const keys = where.split('.');
    const last = keys.pop();
    const o = keys.reduce((x, k) => x[k], out);
    if (value === null) delete o[last]; else o[last] = value;
  }
  return out;
}

/** Case c's checkpoint folder, written (afresh) at dir; returns dir. */
export function tokCaseFolder(c, dir) {
  fs.rmSync(dir, { recursive: true, force: true });
  if (c.base === 'bert') {
    fs.cpSync(path.join(ROOT, 'tests/fixtures/tiny-bert'), dir, { recursive: true });
    for (const f of ['tokenizer.json', 'tokenizer_config.json']) fs.copyFileSync(path.join(FIX, 'bert', f), path.join(dir, f));
  } else fs.cpSync(path.join(ROOT, 'tests/fixtures/families', c.base), dir, { recursive: true });
  for (const [f, p] of [['tokenizer.json', c.tokenizer_json], ['tokenizer_config.json', c.tokenizer_config]]) {
    fs.writeFileSync(path.join(dir, f), JSON.stringify(patchJson(JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')), p)));
  }
  return dir;
}
