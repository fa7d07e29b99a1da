// corpus_export.js — a corpus run's result as files: JSON with the fields of
// `bertlens corpus` (the result is that JSON), CSV with one row per head
// (layer, head, the seven means, the five class shares) and one row per top
// link, text cells through export_data.js csvText (the formula guard).
// No DOM (tests/web/corpus_export.test.mjs).
import { csvText } from './export_data.js';

export const CORPUS_FEATURES = Object.freeze(['entropy', 'cls', 'sep', 'punct', 'prev', 'self', 'next']);
export const CORPUS_CLASSES = Object.freeze(['vertical', 'diagonal', 'vertical+diagonal', 'block', 'heterogeneous']);
const LINK_FIELDS = ['text', 'line', 'query', 'key', 'weight', 'query_token', 'key_token'];

/** The CLI's JSON text of a result (its fields, in its order). */
export function corpusJSON(r) {
  const heads = r.heads.map((h) => ({
    layer: h.layer, head: h.head, ...Object.fromEntries(CORPUS_FEATURES.map((f) => [f, h[f]])),
    class_fractions: Object.fromEntries(CORPUS_CLASSES.map((c) => [c, h.class_fractions[c]])),
    top: h.top.map((x) => Object.fromEntries(LINK_FIELDS.map((f) => [f, x[f]]))),
  }));
  return `${JSON.stringify({ texts: r.texts, tokens: r.tokens, skipped: r.skipped.map(({ line, reason }) => ({ line, reason })),
    skipped_lines: r.skipped_lines ?? r.skipped.length, heads })}\n`;
}

const num = (v) => (v === null || v === undefined ? '' : String(v));

/** CSV: a row per head (record "head") and a row per top link (record
 *  "link"), one header; the link columns after the head's. */
export function corpusCSV(r) {
  const cols = ['record', 'layer', 'head', ...CORPUS_FEATURES, ...CORPUS_CLASSES.map((c) => `class_${c}`), ...LINK_FIELDS.map((f) => `top_${f}`)];
  const rows = [cols.map(csvText).join(',')];
  for (const h of r.heads) {
    const base = [h.layer, h.head];
    rows.push(['head', ...base, ...CORPUS_FEATURES.map((f) => num(h[f])), ...CORPUS_CLASSES.map((c) => num(h.class_fractions[c])), ...LINK_FIELDS.map(() => '')].join(','));
    for (const x of h.top) {
      rows.push(['link', ...base, ...CORPUS_FEATURES.map(() => ''), ...CORPUS_CLASSES.map(() => ''),
        x.text, x.line, x.query, x.key, x.weight, csvText(x.query_token), csvText(x.key_token)].join(','));
    }
  }
  return `${rows.join('\n')}\n`;
}
