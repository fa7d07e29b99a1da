// family_page.mjs — what the scenarios that convert a family's checkpoint
// folder in the page share (families.scenarios.mjs, words.scenarios.mjs): a
// fresh copy of fixture folders, and the conversion through the page's
// folder picker ("Convert a model folder…").
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { ready, ROOT } from './harness.mjs';
import { download } from './page_vs_cli.mjs';

/** A fresh folder named `name` holding the files of each fixture folder
 *  of `from` (relative to tests/fixtures/, later ones win): {root, dir}. */
export function checkpointCopy(name, ...from) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'bertlens-fam-'));
  const dir = path.join(root, name);
  for (const f of from) fs.cpSync(path.join(ROOT, 'tests/fixtures', f), dir, { recursive: true });
  return { root, dir };
}

/** A fresh copy of tests/fixtures/families/<family>. */
export const checkpoint = (family) => checkpointCopy(family, `families/${family}`);

/** Convert dir in the page (the directory picker) to dtype (the converter's
 *  choice beside it; q8 its default); returns the saved bundle's bytes. */
export async function convertInPage(page, base, dir, dtype = 'q8') {
  await page.goto(`${base}?view=heatmap`);
  await ready(page);
  if (dtype !== 'q8') await page.selectOption('#convert-dtype', dtype);
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await page.setInputFiles('#checkpoint-input', dir, { timeout: 120000 });
  await ready(page);
  // (named by its folder and its weights' hash: its config.json has no _name_or_path, lib/model_names.js)
  assert.match(await page.textContent('#notices'), new RegExp(`Converted ${path.basename(dir)}-[0-9a-f]{8} in this page`));
  if (dtype !== 'q8') assert.match(await page.textContent('#notices'), new RegExp(`in this page \\(\\d+ tensors, ${dtype}\\)`), `converted to ${dtype}`);
  return zlib.gunzipSync((await download(page, '#save-converted')).bytes);
}
