// span_fit.test.mjs — state.js fitSpan: a span (span= in the URL, shift-click)
// fitted to the tokens of a run. The pair from the Hugging Face reference
// (tests/web/fixtures/minilm-pair.json) gives the token count.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { fitSpan, parseState, DEFAULTS } from '../../web/js/page/state.js';

const fx = JSON.parse(fs.readFileSync(new URL('./fixtures/minilm-pair.json', import.meta.url), 'utf8'));
const T = fx.tokens.length;

test('a span inside the tokens is kept as it is, without notice', () => {
  const s = { ...DEFAULTS, span: [2, 3] };
  const f = fitSpan(s, T);
  assert.equal(f.state, s);
  assert.deepEqual(f.notices, []);
  assert.deepEqual(fitSpan({ ...DEFAULTS, span: null }, T).notices, []);
});

test('positions past the last token are dropped with a notice naming them', () => {
  const { state } = parseState(`?text=${encodeURIComponent(fx.text)}&text_b=${encodeURIComponent(fx.text_b)}&span=2,3,${T},${T + 7}`);
  assert.deepEqual(state.span, [2, 3, T, T + 7]);
  const f = fitSpan(state, T);
  assert.deepEqual(f.state.span, [2, 3]);
  assert.deepEqual(f.notices, [`Tokens ${T}, ${T + 7} of the span do not exist (${T} tokens); the span keeps 2, 3.`]);
  assert.equal(state.span.length, 4, 'the input state is not changed');
  assert.equal(fitSpan(state, T + 8).notices.length, 0, 'all inside a longer input');
});

test('a span wholly past the end is removed', () => {
  const f = fitSpan({ ...DEFAULTS, span: [T + 1] }, T);
  assert.equal(f.state.span, null);
  assert.deepEqual(f.notices, [`Token ${T + 1} of the span does not exist (${T} tokens); no span is shown.`]);
});
