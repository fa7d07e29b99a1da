// words.scenarios.mjs — issue 32 item 3 in the page, per family: each
// checkpoint folder of tests/fixtures/families/ converted in the page (fresh
// profile), and the default BERT (all-MiniLM-L6-v2):
//   - "Merge subwords into words" gives Hugging Face's words of a pair
//     (word_ids() per sentence; tests/fixtures/words/words.json.gz, made by
//     tests/fixtures/words/make.py), not stretches of touching offsets;
//   - token labels show a word start by a visible ␣ (the pieces of "cat sat"
//     read "␣c at ␣s at"), a lone "Ġ"/"▁" piece as ␣, never an empty label;
//   - the hide control names the model's own specials ("Hide <s>/</s>"), the
//     Sentence B hint its pair template ("<s> A </s></s> B </s>"), the
//     convert button no family ("Convert a model folder…").
// And, with a masked-LM checkpoint of RoBERTa, DeBERTa-v3 and ModernBERT
// (tests/fixtures/mlm/ with the family's tokenizer), at desktop and phone
// width: the Predictions view labels its tokens and guesses as the heatmap
// and head view do (the raw piece in the tooltip); screenshots of the
// heatmap, head, model and Predictions views.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import zlib from 'node:zlib';
import path from 'node:path';
import { scenario, ready, typeText, clickAndRedraw, ROOT } from './harness.mjs';
import { download } from './page_vs_cli.mjs';
import { checkpoint, checkpointCopy, convertInPage } from './family_page.mjs';

const REF = JSON.parse(zlib.gunzipSync(fs.readFileSync(path.join(ROOT, 'tests/fixtures/words/words.json.gz'))).toString('utf8')).tokenizers;
const MARK = '\u2423'; // ␣, web/js/lib/tokens.js WORD_START
const MARKER = /^[\u0120\u2581]/; // byte-level Ġ, SentencePiece ▁

/** The heatmap's row labels (its JSON export: every label, also where the chart thins them out). */
const heatmapLabels = async (page) => JSON.parse((await download(page, '#export-json')).bytes.toString('utf8')).blocks[0].rows;

/** Hugging Face's units of row r with words merged: each template special,
 *  and each word as the text at its characters (word_to_chars). */
function hfWords(r) {
  const out = [];
  r.tokens.forEach((t, i) => {
    if (r.word_ids[i] === null) out.push(t);
    const w = r.words.find((x) => x[1] === i);
    if (w) out.push((w[0] === 1 ? r.text_pair : r.text).slice(w[3], w[4]).trim());
  });
  return out;
}

/** The label a token of an ASCII text must have: its word-start marker as ␣. */
const wantLabel = (r, i) => (r.word_ids[i] === null || r.special[i] ? r.tokens[i] : r.tokens[i].replace(MARKER, MARK));

async function openFamily(page, base, name) {
  if (name === 'minilm') { // the page's default model, BERT's WordPiece
    await page.goto(`${base}?view=heatmap`);
    await ready(page);
    return null;
  }
  const { root, dir } = checkpoint(name);
  await convertInPage(page, base, dir);
  return root;
}

for (const name of ['roberta', 'xlm-roberta', 'modernbert', 'deberta-v2', 'albert', 'electra', 'mpnet', 'minilm']) {
  scenario(`words: ${name} merges Hugging Face's words of a pair, labels show word starts, names its specials`, async ({ page, base, shot }) => {
    const tk = REF[name];
    const root = await openFamily(page, base, name);
    assert.equal((await page.textContent('#open-checkpoint')).trim(), 'Convert a model folder…');
    const pair = tk.rows.find((r) => r.text === 'How old are you?');
    await typeText(page, '#text-a', pair.text);
    await typeText(page, '#text-b', pair.text_pair);
    // tokens: every label visible, a lone marker piece as ␣, the specials as they are
    const labels = await heatmapLabels(page);
    assert.equal(labels.length, pair.tokens.length, 'Hugging Face\'s tokens');
    labels.forEach((l, i) => {
      assert.ok(/\S/.test(l) && !/[\u0120\u2581\u2009]/.test(l), `token ${i} ${JSON.stringify(pair.tokens[i])} labelled ${JSON.stringify(l)}`);
      assert.equal(l, wantLabel(pair, i), `token ${i} ${JSON.stringify(pair.tokens[i])}`);
    });
    if (tk.pieces !== 'wordpiece') assert.ok(pair.tokens.some((t) => t === '\u0120' || t === '\u2581'), 'a lone marker piece in the pair');
    // the hide control names the template's specials
    const specials = [...new Set(pair.tokens.filter((_, i) => pair.word_ids[i] === null))];
    assert.equal((await page.textContent('#hide-ctl')).trim(), `Hide ${specials.join('/')}`);
    // the Sentence B hint: the model's pair template (Hugging Face's tokens of "A", "B")
    const t = tk.template;
    const template = t.tokens.map((x, i) => (t.sequence_ids[i] === null ? x : t.sequence_ids[i] ? 'B' : 'A'))
      .map((x, i, xs) => (i && !(t.sequence_ids[i] === null && t.sequence_ids[i - 1] === null) ? ' ' : '') + x).join('');
    assert.equal(await page.textContent('#pair-template'), template);
    // words merged: Hugging Face's, sentence by sentence
    await clickAndRedraw(page, '#words');
    const words = await heatmapLabels(page);
    const want = hfWords(pair);
    const fold = (xs) => (tk.pieces === 'byte-level' ? xs : xs.map((x) => x.toLowerCase())); // normalizers lower-case
    assert.deepEqual(fold(words), fold(want), `words of ${JSON.stringify(pair.text)} + ${JSON.stringify(pair.text_pair)}`);
    await shot(page, `words-${name}-pair-merged`);
    await clickAndRedraw(page, '#hide');
    assert.equal((await heatmapLabels(page)).length, pair.words.length, 'with the specials hidden, one row per word');
    await clickAndRedraw(page, '#hide');
    await clickAndRedraw(page, '#words');
    // "The cat sat": the pieces read ␣c at ␣s at, not four words
    const cat = tk.rows.find((r) => r.text.startsWith('The cat sat on the mat'));
    await typeText(page, '#text-b', '');
    await typeText(page, '#text-a', cat.text);
    const catLabels = await heatmapLabels(page);
    assert.deepEqual(catLabels, cat.tokens.map((_, i) => wantLabel(cat, i)));
    if (tk.pieces !== 'wordpiece') assert.ok(catLabels.some((l) => l.startsWith(MARK)), 'word starts marked');
    console.log(`#   ${name}: ${pair.tokens.length} tokens, ${want.length} units with words merged, ${labels.filter((l) => l === MARK).length} lone marker(s); Hide ${specials.join('/')}`);
    if (root) fs.rmSync(root, { recursive: true, force: true });
  }, { timeout: 300000 });
}

// Masked-LM checkpoints: the Predictions view labels as the other views do.
const MLM = [['roberta', 'hf_tokenizers/roberta', 'roberta'], ['deberta-v3', 'hf_tokenizers/debertav3', 'deberta-v2'], ['modernbert', 'hf_tokenizers/modernbert', 'modernbert']];
for (const [fam, tok, words] of MLM) {
  for (const width of [1280, 390]) {
    scenario(`words: ${fam} with its masked-LM head at ${width} px: Predictions, heatmap and head view label tokens alike`, async ({ page, base, shot }) => {
      const { root, dir } = checkpointCopy(`mlm-${fam}`, `mlm/${fam}`, tok);
      await convertInPage(page, base, dir);
      const text = `The cat sat on the ${REF[words].mask}.`;
      await typeText(page, '#text-a', text);
      const labels = await heatmapLabels(page);
      assert.ok(labels.some((l) => l.startsWith(MARK)), `word starts marked in ${JSON.stringify(labels)}`);
      assert.ok(!labels.some((l) => /[\u0120\u2581\u2009]/.test(l) || !/\S/.test(l)), JSON.stringify(labels));
      await shot(page, `words-${fam}-${width}-heatmap`);
      // the head view: the same labels (a thinned-out row shows none)
      await clickAndRedraw(page, '#view-tabs [data-view="head"]');
      const head = await page.$$eval('#view g.left g.tok text.token-label', (ts) => ts.map((t) => t.textContent));
      assert.equal(head.length, labels.length);
      head.forEach((l, i) => { if (l) assert.ok(labels[i].startsWith(l.replace(/…$/, '')), `head view row ${i}: ${l} / ${labels[i]}`); });
      await shot(page, `words-${fam}-${width}-head`);
      await clickAndRedraw(page, '#view-tabs [data-view="model"]');
      await shot(page, `words-${fam}-${width}-model`);
      // Predictions: the tokens as the heatmap labels them, the guesses too, raw pieces in tooltips
      await clickAndRedraw(page, '#view-tabs [data-view="predict"]');
      const strip = await page.$$eval('#view .pv-tokens button.pv-word, #view .pv-tokens button.pv-mask', (bs) => bs.map((b) => ({ text: b.textContent, title: b.getAttribute('title') })));
      assert.deepEqual(strip.map((b) => b.text), labels, 'the token strip reads as the heatmap');
      for (const b of strip) if (b.title) assert.equal(b.title.replace(/^piece “(.*)”$/, '$1').replace(MARKER, MARK), b.text);
      const guesses = await page.$$eval('#view .pv-word-label', (ss) => ss.map((s) => ({ text: s.textContent, title: s.getAttribute('title') })));
      assert.ok(guesses.length >= 5, 'the mask\'s top guesses');
      for (const g of guesses) {
        assert.ok(/\S/.test(g.text) && !/[\u0120\u2581\u2009]/.test(g.text), `guess ${JSON.stringify(g)}`);
        const piece = g.title ? g.title.replace(/^piece “(.*)”$/, '$1') : g.text;
        if (/^[\u0120\u2581]?[!-~]+$/.test(piece)) assert.equal(g.text, piece.replace(MARKER, MARK), `guess ${piece}`);
      }
      const heads = await page.$$eval('#view .pv-head', (hs) => hs.map((h) => h.textContent));
      assert.ok(heads.every((h) => !/[\u0120\u2581]/.test(h)), JSON.stringify(heads));
      await shot(page, `words-${fam}-${width}-predict`);
      console.log(`#   ${fam} ${width}px: ${labels.length} tokens; guesses ${guesses.map((g) => g.text).join(' ')}`);
      fs.rmSync(root, { recursive: true, force: true });
    }, { timeout: 300000, viewport: { width, height: width > 500 ? 900 : 844 } });
  }
}
