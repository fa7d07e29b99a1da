// URL state: parsing, bad values, model ranges, serialization round trips.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseState, serializeState, fitToModel, fitQuery, embedSnippet, DEFAULTS, MAX_TEXT_CHARS } from '../../web/js/state.js';

test('empty query gives the defaults and no notices', () => {
  const { state, notices } = parseState('');
  assert.deepEqual(state, { ...DEFAULTS });
  assert.deepEqual(notices, []);
});

test('a full permalink parses to the values it names', () => {
  const { state, notices } = parseState('?text=Hello+world&text_b=Bye%21&model=minilm-l6-q8&view=neuron&layer=3&head=mean&mode=norm&query=2&theme=dark&embed=1&hide=1&renorm=0&words=1&filter=ab&heads=3,1,3');
  assert.deepEqual(notices, []);
  assert.equal(state.text, 'Hello world');
  assert.equal(state.text_b, 'Bye!');
  assert.equal(state.model, 'minilm-l6-q8');
  assert.equal(state.view, 'neuron');
  assert.equal(state.layer, 3);
  assert.equal(state.head, 'mean');
  assert.equal(state.mode, 'norm');
  assert.equal(state.query, 2);
  assert.equal(state.theme, 'dark');
  assert.equal(state.embed, true);
  assert.equal(state.hide, true);
  assert.equal(state.renorm, false);
  assert.equal(state.words, true);
  assert.equal(state.filter, 'ab');
  assert.deepEqual(state.heads, [1, 3]);
});

test('bad values fall back to defaults, each with a notice', () => {
  const { state, notices } = parseState('view=sankey&layer=-1&head=x&mode=both&theme=pink&embed=yes&filter=ac&heads=1,a&model=../../etc&query=1e3&zzz=1');
  for (const key of ['view', 'layer', 'head', 'mode', 'theme', 'embed', 'filter', 'heads', 'model', 'query']) {
    assert.equal(JSON.stringify(state[key]), JSON.stringify(DEFAULTS[key]), key);
    assert.ok(notices.some((n) => n.includes(`${key}=`)), `notice for ${key}: ${notices.join(' | ')}`);
  }
  assert.ok(notices.some((n) => n.includes('"zzz"')));
  assert.equal(notices.length, 11);
});

test('overlong text is cut with a notice', () => {
  const { state, notices } = parseState(new URLSearchParams({ text: 'a'.repeat(MAX_TEXT_CHARS + 5) }));
  assert.equal(state.text.length, MAX_TEXT_CHARS);
  assert.equal(notices.length, 1);
});

test('model ranges: out-of-range layer/head fall back with notices', () => {
  const { state } = parseState('layer=6&head=12&heads=0,11,12');
  const fit = fitToModel(state, { layers: 6, heads: 12 });
  assert.equal(fit.state.layer, 0);
  assert.equal(fit.state.head, 0);
  assert.deepEqual(fit.state.heads, [0, 11]);
  assert.equal(fit.notices.length, 3);
  const ok = fitToModel({ ...state, layer: 5, head: 11, heads: null }, { layers: 6, heads: 12 });
  assert.deepEqual(ok.notices, []);
  assert.equal(ok.state.layer, 5);
  const q = fitQuery({ ...DEFAULTS, query: 9 }, 9);
  assert.equal(q.state.query, 0);
  assert.equal(q.notices.length, 1);
});

test('serialize -> parse round-trips, including awkward text', () => {
  const s = {
    ...DEFAULTS, text: 'a&b=c?d#e <img src=x onerror=alert(1)> "quoted" ünïcödé 🙂', text_b: '+ plus%20',
    model: 'tiny', view: 'head', layer: 2, head: 'mean', mode: 'norm', query: 4, theme: 'dark',
    hide: true, renorm: false, words: true, filter: 'ba', heads: [0, 5],
  };
  const back = parseState(serializeState(s));
  assert.deepEqual(back.notices, []);
  assert.deepEqual(back.state, s);
  const d = parseState(serializeState({ ...DEFAULTS }));
  assert.deepEqual(d.state, { ...DEFAULTS });
});

test('embed snippet is a single iframe with an escaped embed=1 URL', () => {
  const snip = embedSnippet('https://example.org/bertlens/', { ...DEFAULTS, text: '"><script>x</script>' });
  assert.match(snip, /^<iframe src="[^"<>]*" width="720" height="560"[^<>]*><\/iframe>$/);
  const src = snip.match(/src="([^"]*)"/)[1].replace(/&amp;/g, '&').replace(/&quot;/g, '"');
  const url = new URL(src);
  const { state } = parseState(url.search);
  assert.equal(state.embed, true);
  assert.equal(state.text, '"><script>x</script>');
});
