// export_data.js — the numbers on screen as CSV and JSON, and the standalone
// HTML file (viewer page + snapshot). No DOM; tested by
// tests/web/export_data.test.mjs.
//
// What "on screen" means is each view's own (its descriptor's shown(), in
// web/js/views/: the heatmap one K x K matrix, the head view one per shown
// head, ...), on the same data.js transforms the views draw ([CLS]/[SEP]
// hidden and rows renormalized or not, subwords merged): shownMatrices.
// CSV: one block per matrix, blocks separated by an empty line; a block's
// first row is "layer L head H <what>" (or the block's own name: a view's
// descriptor.shown may name its blocks, views/index.js) then the column
// labels, each next row a row label then its values. Fields with a comma, quote or line break are
// quoted (RFC 4180). Values: 6 significant digits. Text cells that a
// spreadsheet would run as a formula (starting =, +, -, @, TAB, CR) start
// with ' instead (csvText).

import { tokenAxis, headMatrix, spanAxis } from './data.js';

/** The matrices a view shows for a run and a page state, in the form its
 *  descriptor gives (views/index.js `shown`: a view owns its export):
 *  how = {blocks({s, run, L, H, T, axis, src, block}) -> blocks (block(layer,
 *  head): that head's K x K matrix on the shown axis), words (false: the
 *  view never merges subwords), span (a span is one unit, as drawn)}. */
export function shownMatrices(run, s, how) {
  const { L, H, T } = run;
  const src = s.mode === 'norm' ? run.norms : run.attn;
  if (!src) throw new Error(`the run holds no ${s.mode === 'norm' ? 'norms' : 'attention'}`);
  const what = `${s.mode === 'norm' ? 'value-weighted norm' : 'attention'}${s.ablate ? ` (heads ${s.ablate} switched off)` : ''}`;
  const words = !!s.words && how.words !== false;
  let axis = tokenAxis(run, { words, hideSpecials: s.hide, renorm: s.renorm });
  // A span (shift-click, views with controls.span) is one unit, as drawn.
  if (s.span && how.span) axis = spanAxis(axis, s.span.filter((t) => t < T));
  const block = (layer, head) => {
    if (!src[layer]) throw new Error(`layer ${layer} is not in this run`);
    return { layer, head, rows: axis.labels, cols: axis.labels, values: Array.from(axis.transform(headMatrix(src[layer], H, T, head))) };
  };
  const blocks = how.blocks({ s, run, L, H, T, axis, src, block });
  return {
    view: s.view, mode: s.mode, what, hide: s.hide, renorm: s.renorm, words,
    text: s.text, text_b: s.text_b || '', tokens: run.tokens.slice(), blocks, ablate: s.ablate || '',
  };
}

const num = (v) => String(Number(Number(v).toPrecision(6)));

function csvField(x) {
  const t = String(x);
  return /[",\r\n]/.test(t) ? `"${t.replace(/"/g, '""')}"` : t;
}

/** A CSV cell holding text (a token label, a block's name). A spreadsheet
 *  runs a cell that starts with =, +, -, @, TAB or CR as a formula
 *  (=HYPERLINK(…) from a snapshot link's token, say): such text gets a
 *  leading ' so it stays text — a label "-" or "-5" too. Values are written
 *  by csvNumber and stay numbers (-0.5 is not prefixed). */
export function csvText(x) {
  const t = String(x);
  return csvField(/^[=+\-@\t\r]/.test(t) ? `'${t}` : t);
}

const csvNumber = (v) => (Number.isNaN(v) ? '' : csvField(num(v))); // (a masked key's score)

/** CSV text of shownMatrices(). */
export function toCSV(shown) {
  const out = [];
  for (const b of shown.blocks) {
    const name = b.name ?? `layer ${b.layer} head ${b.head}${b.query !== undefined ? ` query ${b.query}` : ''} ${b.what || shown.what}`;
    out.push([name, ...b.cols].map(csvText).join(','));
    const C = b.cols.length;
    b.rows.forEach((r, i) => out.push([csvText(r), ...b.values.slice(i * C, i * C + C).map(csvNumber)].join(',')));
    out.push('');
  }
  return out.join('\r\n');
}

/** JSON text of shownMatrices(): every block's values as rows of numbers
 *  (a block's name and extra fields, and the shown's extra fields, when a
 *  view gives them; text and tokens are left out when it has none). */
export function toJSON(shown, model = {}) {
  const blocks = shown.blocks.map((b) => {
    const C = b.cols.length;
    return {
      ...(b.name !== undefined ? { name: b.name } : {}),
      ...(b.layer !== undefined ? { layer: b.layer } : {}), ...(b.head !== undefined ? { head: b.head } : {}),
      ...(b.query !== undefined ? { query: b.query } : {}), ...(b.what ? { values_are: b.what } : {}), ...(b.extra || {}),
      rows: b.rows, cols: b.cols,
      values: b.rows.map((_, i) => b.values.slice(i * C, i * C + C).map((v) => Number(num(v)))),
    };
  });
  return JSON.stringify({
    bertlens: 1, model: model.id || '', model_name: model.name || '',
    text: shown.text, text_b: shown.text_b, view: shown.view, mode: shown.mode, values_are: shown.what,
    hide_specials: shown.hide, renormalized: shown.hide ? shown.renorm : false, words_merged: shown.words,
    tokens: shown.tokens, ...(shown.ablate ? { heads_switched_off: shown.ablate } : {}), ...(shown.extra || {}), blocks,
  }, null, 1);
}

/** The viewer page (dist/viewer.html) with a snapshot inside: a
 *  <script type="application/json" id="bertlens-snapshot"> holding
 *  {"s": "<encodeSnapshot text>", "from": "<permalink of the live page>"}
 *  first thing in the head element. The snapshot text is
 *  base64url, and '<', '>' and '&' are escaped anyway, so nothing a user typed
 *  can close the script element. */
export function standaloneHtml(template, snapshotText, title = 'bertlens view', from = '') {
  if (!/^[A-Za-z0-9_-]+$/.test(snapshotText)) throw new Error('not a snapshot text');
  // Right after the opening head tag: the first one is the document's own
  // (inlined scripts further down may contain the text of any tag).
  const m = /<head(\s[^>]*)?>/i.exec(template);
  if (!m) throw new Error('the viewer page has no <head>');
  const i = m.index + m[0].length;
  const src = /^https?:\/\//.test(from) ? from : '';
  const json = JSON.stringify(src ? { s: snapshotText, from: src } : { s: snapshotText }).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026');
  const tag = `\n<script type="application/json" id="bertlens-snapshot">${json}</script>`;
  let page = template.slice(0, i) + tag + template.slice(i);
  const safeTitle = title.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  page = page.replace(/<title>[^<]*<\/title>/i, () => `<title>${safeTitle}</title>`);
  return page;
}

/** Read the snapshot text a page carries: #s=… in the fragment, else the
 *  bertlens-snapshot script element's JSON. null when there is none. */
export function snapshotTextOf(hash, scriptText) {
  const m = /(?:^#|&)s=([^&]*)/.exec(hash || '');
  if (m) return m[1];
  if (scriptText) {
    try {
      const o = JSON.parse(scriptText);
      if (o && typeof o.s === 'string') return o.s;
    } catch {
      return '!'; // damaged: decodeSnapshot reports it
    }
  }
  return null;
}
