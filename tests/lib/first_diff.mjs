// first_diff.mjs — line-by-line comparison of tokenizer output with Hugging
// Face rows, reporting the first field and position that differ. Shared by
// tests/tokenizer.test.mjs and tests/hf_tokenizer.test.mjs.
import assert from 'node:assert/strict';

/** The fields of a tokenizer row compared, in this order. */
export const TOKEN_FIELDS = ['ids', 'type_ids', 'offsets', 'word_ids', 'truncated'];

/** null when got has want's fields, else where the first difference is:
 *  the field, the index, the token there, and both values (width characters). */
export function firstDiff(got, want, { fields = TOKEN_FIELDS, width = 300 } = {}) {
  if (!got || got.error !== undefined) return `error: ${got ? got.error : 'no output'}`;
  for (const f of fields) {
    const g = JSON.stringify(got[f]), w = JSON.stringify(want[f]);
    if (g === w) continue;
    let k = 0;
    if (Array.isArray(got[f]) && Array.isArray(want[f]))
      while (k < want[f].length && JSON.stringify(got[f][k]) === JSON.stringify(want[f][k])) k++;
    return `${f} differs at [${k}] (token ${JSON.stringify((got.tokens || [])[k])}):\n` +
      `       got  ${String(g).slice(0, width)}\n       want ${String(w).slice(0, width)}`;
  }
  return null;
}

/** Asserts that diffAt(k) is null for k in 0..n-1 (diffAt: the description
 *  of line k's difference, its line named). Fails with the count and the
 *  first `show` descriptions; returns the summary line of a pass. */
export function assertAllLinesMatch(what, n, diffAt, show = 10) {
  const shown = [];
  let bad = 0;
  for (let k = 0; k < n; k++) {
    const why = diffAt(k);
    if (why && bad++ < show) shown.push(why);
  }
  if (bad) assert.fail(`${what}: ${bad}/${n} lines differ from Hugging Face\n` + shown.map((s) => `  ${s}`).join('\n'));
  return `${what}: ${n}/${n} lines identical to Hugging Face`;
}
