// corpus_parse.test.mjs — web/js/lib/corpus_parse.js: the corpus files the
// Corpus view takes (issue 25 item 2) into the lines `bertlens corpus` reads.
import test from 'node:test';
import assert from 'node:assert/strict';
import { parseCorpus, csvRows, corpusFormat } from '../../web/js/lib/corpus_parse.js';

test('format from the file name', () => {
  assert.deepEqual(['a.txt', 'b.TSV', 'c.csv', 'd.jsonl', 'e.ndjson', ''].map(corpusFormat), ['txt', 'txt', 'csv', 'jsonl', 'jsonl', 'txt']);
});

test('txt / tsv: lines as the CLI reads them, CRLF, a TAB before B, empty lines kept for the engine to skip', () => {
  const r = parseCorpus('x.tsv', '\uFEFFOne.\r\nTwo?\tYes.\r\n\r\nlast');
  assert.deepEqual(r.lines, ['One.', 'Two?\tYes.', '', 'last']);
  assert.deepEqual(r.source, [1, 2, 3, 4]);
  assert.deepEqual(r.bad, []);
  assert.deepEqual(parseCorpus('p.txt', 'a\nb\n').lines, ['a', 'b']);
});

test('csv: quotes, doubled quotes, commas and newlines in a field, header, bad rows listed', () => {
  const text = 'text,text_pair\n"He said ""hi"", then left.",Fine\nplain,\n"multi\nline",b\n,orphan\n"open, never closed\n';
  const rows = csvRows(text);
  assert.deepEqual(rows[1], { line: 2, fields: ['He said "hi", then left.', 'Fine'] });
  assert.deepEqual(rows[3], { line: 4, fields: ['multi\nline', 'b'] });
  const r = parseCorpus('c.csv', text);
  assert.deepEqual(r.lines, ['He said "hi", then left.\tFine', 'plain', 'multi line\tb']);
  assert.deepEqual(r.source, [2, 3, 4]);
  assert.deepEqual(r.bad, [{ line: 6, reason: 'no text in the first column' }, { line: 7, reason: 'a quoted field is not closed' }]);
});

test('jsonl: text and text_pair; TABs and newlines inside stay in their sentence; bad lines listed', () => {
  const text = [
    '{"text": "A\\tB", "text_pair": "C\\nD"}',
    '{"text": "solo"}',
    'not json',
    '[1]',
    '{"text_pair": "x"}',
    '{"text": "t", "text_pair": 3}',
    '',
  ].join('\n');
  const r = parseCorpus('d.jsonl', text);
  assert.deepEqual(r.lines, ['A B\tC D', 'solo']);
  assert.deepEqual(r.source, [1, 2]);
  assert.deepEqual(r.bad.map((b) => b.line), [3, 4, 5, 6]);
  assert.match(r.bad[0].reason, /^not JSON/);
  assert.equal(r.bad[1].reason, 'not a JSON object');
  assert.equal(r.bad[2].reason, 'no "text" string');
  assert.equal(r.bad[3].reason, '"text_pair" is not a string');
});
