// corpus_parse.js — a corpus file or pasted text into the inputs of a corpus
// run (issue 25): lines as `bertlens corpus` reads them ('a' or 'a\tb'), the
// input's line in the source, and the lines that could not be read, each
// with its reason. No DOM (tests/web/corpus_parse.test.mjs).
//
//   .txt (and pasted text)  one input per line; a TAB starts sentence B, as
//                           in the CLI (so .tsv is the same)
//   .csv                    first column the text, second (if any) the pair;
//                           "quoted" fields with "" and newlines inside; a
//                           header row text[,text_pair] is skipped
//   .jsonl                  one {"text", "text_pair"} object per line
// txt/tsv lines go to the engine as they are: empty lines and the like are
// skipped there with the CLI's reasons. csv/jsonl rows are checked here.
//
// parseCorpus(name, text) -> {lines: [string], source: [line], bad: [{line, reason}], format}

const flat = (s) => String(s).replace(/[\t\r\n]+/g, ' '); // one line, no TAB: A stays A

/** One input line from a text and an optional pair. */
export function inputLine(text, pair) {
  return pair === undefined || pair === null || pair === '' ? flat(text) : `${flat(text)}\t${flat(pair)}`;
}

function parseTxt(text) {
  const lines = text.split('\n');
  if (lines.length && lines.at(-1) === '') lines.pop(); // a last newline ends the last line
  return { lines: lines.map((l) => l.replace(/\r$/, '')), source: lines.map((_, i) => i + 1), bad: [] };
}

/** CSV rows (RFC 4180: "" inside quotes, newlines in quoted fields), each
 *  with its first line number; a quote left open is a bad row. */
export function csvRows(text) {
  const rows = [];
  let row = [], field = '', quoted = false, line = 1, start = 1, wasQuoted = false;
  const endField = () => { row.push(field); field = ''; wasQuoted = false; };
  const endRow = () => { endField(); rows.push({ line: start, fields: row }); row = []; };
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"') {
        if (text[i + 1] === '"') { field += '"'; i++; } else quoted = false;
      } else {
        if (ch === '\n') line++;
        field += ch;
      }
    } else if (ch === '"' && field === '' && !wasQuoted) { quoted = true; wasQuoted = true; }
    else if (ch === ',') endField();
    else if (ch === '\n') { if (field.endsWith('\r')) field = field.slice(0, -1); endRow(); line++; start = line; }
    else field += ch;
  }
  if (quoted) rows.push({ line: start, fields: null, reason: 'a quoted field is not closed' });
  else if (field !== '' || row.length) { if (field.endsWith('\r')) field = field.slice(0, -1); endRow(); }
  return rows;
}

function parseCsv(text) {
  const out = { lines: [], source: [], bad: [] };
  const rows = csvRows(text);
  rows.forEach((r, k) => {
    if (!r.fields) { out.bad.push({ line: r.line, reason: r.reason }); return; }
    const [a = '', b = ''] = r.fields;
    if (k === 0 && /^text$/i.test(a.trim()) && (r.fields.length < 2 || /^text_?(pair|b)$/i.test(b.trim()))) return; // header
    if (!a.trim()) { out.bad.push({ line: r.line, reason: 'no text in the first column' }); return; }
    out.lines.push(inputLine(a, b));
    out.source.push(r.line);
  });
  return out;
}

function parseJsonl(text) {
  const out = { lines: [], source: [], bad: [] };
  text.split('\n').forEach((raw, i) => {
    const l = raw.trim();
    if (!l) return;
    let o;
    try { o = JSON.parse(l); } catch (e) { out.bad.push({ line: i + 1, reason: `not JSON: ${e.message}` }); return; }
    if (!o || typeof o !== 'object' || Array.isArray(o)) { out.bad.push({ line: i + 1, reason: 'not a JSON object' }); return; }
    if (typeof o.text !== 'string' || !o.text.trim()) { out.bad.push({ line: i + 1, reason: 'no "text" string' }); return; }
    if (o.text_pair !== undefined && o.text_pair !== null && typeof o.text_pair !== 'string') {
      out.bad.push({ line: i + 1, reason: '"text_pair" is not a string' });
      return;
    }
    out.lines.push(inputLine(o.text, o.text_pair));
    out.source.push(i + 1);
  });
  return out;
}

/** The format of a file name: 'txt' (also .tsv and pasted text), 'csv', 'jsonl'. */
export function corpusFormat(name = '') {
  const ext = /\.([a-z0-9]+)$/i.exec(name)?.[1]?.toLowerCase();
  return ext === 'csv' ? 'csv' : ext === 'jsonl' || ext === 'ndjson' ? 'jsonl' : 'txt';
}

export function parseCorpus(name, text) {
  const format = corpusFormat(name);
  const body = String(text).replace(/^\uFEFF/, ''); // a byte-order mark is not text
  const out = format === 'csv' ? parseCsv(body) : format === 'jsonl' ? parseJsonl(body) : parseTxt(body);
  return { ...out, format };
}
