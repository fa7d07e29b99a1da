// page_vs_cli.mjs — what the scenarios that check the page against the
// native CLI share (convert, families, hub): running a tool, taking a
// download, and the attention of one layer and head as the page shows it
// (its JSON export) against `bertlens attend` on the same bundle.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ready, ROOT } from './harness.mjs';

export const BIN = path.join(ROOT, 'build', 'bertlens');

/** tests/fixtures/mlm/refs.json: the masked-LM families and their Hugging Face references. */
export const MLM_REFS = JSON.parse(fs.readFileSync(path.join(ROOT, 'tests/fixtures/mlm/refs.json'), 'utf8'));

/** cmd args in the repository root; its result, or an error with its stderr. */
export function run(cmd, args) {
  const r = spawnSync(cmd, args, { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.stderr}`);
  return r;
}

/** An f32 bundle with the masked-LM head of tests/fixtures/mlm/<family>,
 *  converted by the CLI (with the family's trained tokenizer beside it
 *  where the fixture holds none, as tests/predict.test.mjs does). */
export function mlmBundle(family) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bertlens-mlm-'));
  let src = path.join(ROOT, 'tests/fixtures/mlm', family);
  if (MLM_REFS.tokenizer[family]) {
    fs.cpSync(src, path.join(dir, 'src'), { recursive: true });
    fs.cpSync(path.join(ROOT, MLM_REFS.tokenizer[family]), path.join(dir, 'src'), { recursive: true });
    src = path.join(dir, 'src');
  }
  const out = path.join(dir, `${family}.blb`);
  run(BIN, ['convert', src, out, '--dtype', 'f32', '--name', `tiny-${family}`]);
  return out;
}

/** Click sel and take the download it starts: {name, bytes}. */
export async function download(page, sel) {
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click(sel)]);
  return { name: dl.suggestedFilename(), bytes: fs.readFileSync(await dl.path()) };
}

/** Layer `layer`, head `head` as the page's heatmap shows it (its JSON
 *  export): {tokens, values [T][T]}. */
export async function shownHead(page, layer, head) {
  await page.selectOption('#layer', String(layer));
  await page.selectOption('#head', String(head));
  await ready(page);
  const j = JSON.parse((await download(page, '#export-json')).bytes.toString('utf8'));
  assert.equal(j.blocks[0].layer, layer);
  assert.equal(j.blocks[0].head, head);
  return { tokens: j.tokens, values: j.blocks[0].values };
}

/** The largest |shown - want| of two T x T matrices (same size asserted). */
export function worstCell(shown, want) {
  assert.equal(shown.length, want.length, 'tokens');
  let worst = 0;
  want.forEach((row, i) => row.forEach((v, k) => { worst = Math.max(worst, Math.abs(v - shown[i][k])); }));
  return worst;
}

/** Layer `layer`, head `head` of the page's heatmap against
 *  `bertlens attend --layer` on bundle for texts [text, text_b?]: the same
 *  tokens, every weight within tol. Returns the largest difference. */
export async function sameAttention(page, { bundle, texts, layer, head, tol }) {
  const { tokens, values } = await shownHead(page, layer, head);
  const ref = JSON.parse(run(BIN, ['attend', '--layer', String(layer), bundle, ...texts.filter((t) => t != null)]).stdout);
  assert.deepEqual(tokens, ref.tokens);
  const worst = worstCell(values, ref.attentions[0][head]);
  assert.ok(worst < tol, `layer ${layer} head ${head}: max |shown - bertlens attend| ${worst}`);
  return worst;
}
