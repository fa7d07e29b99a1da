// page_vs_cli.mjs — what the scenarios that check the page against the
// native CLI share (convert, families, hub): running a tool, taking a
// download, and the attention of one layer and head as the page shows it
// (its JSON export) against `bertlens attend` on the same bundle.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ready, ROOT } from './harness.mjs';

export const BIN = path.join(ROOT, 'build', 'bertlens');

/** cmd args in the repository root; its result, or an error with its stderr. */
export function run(cmd, args) {
  const r = spawnSync(cmd, args, { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.stderr}`);
  return r;
}

/** Click sel and take the download it starts: {name, bytes}. */
export async function download(page, sel) {
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click(sel)]);
  return { name: dl.suggestedFilename(), bytes: fs.readFileSync(await dl.path()) };
}

/** Layer `layer`, head `head` of the page's heatmap (JSON export) against
 *  `bertlens attend --layer` on bundle for texts [text, text_b?]: the same
 *  tokens, every weight within tol. Returns the largest difference. */
export async function sameAttention(page, { bundle, texts, layer, head, tol }) {
  await page.selectOption('#layer', String(layer));
  await page.selectOption('#head', String(head));
  await ready(page);
  const j = JSON.parse((await download(page, '#export-json')).bytes.toString('utf8'));
  assert.equal(j.blocks[0].layer, layer);
  assert.equal(j.blocks[0].head, head);
  const shown = j.blocks[0].values;
  const ref = JSON.parse(run(BIN, ['attend', '--layer', String(layer), bundle, ...texts.filter((t) => t != null)]).stdout);
  assert.deepEqual(j.tokens, ref.tokens);
  const want = ref.attentions[0][head];
  assert.equal(shown.length, want.length, 'tokens');
  let worst = 0;
  want.forEach((row, i) => row.forEach((v, k) => { worst = Math.max(worst, Math.abs(v - shown[i][k])); }));
  assert.ok(worst < tol, `layer ${layer} head ${head}: max |shown - bertlens attend| ${worst}`);
  return worst;
}
