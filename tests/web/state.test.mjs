// URL state: parsing, bad values, model ranges, serialization round trips.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  parseState, serializeState, fitToModel, fitQuery, embedSnippet, DEFAULTS, MAX_TEXT_CHARS,
  parseStateAsync, permalinkSearch, usedText, compressTexts, proposeEmbedSize, MAX_PERMALINK,
} from '../../web/js/page/state.js';

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
  // A host column narrower than the frame (a phone) shrinks the frame.
  assert.match(snip.match(/style="([^"]*)"/)[1], /(^|;)max-width:100%(;|$)/);
});


// A stand-in for the tokenizer's output shape (tokens, type ids, word ids and
// UTF-16 offsets per segment, truncated to maxTokens like the engine): one
// token per whitespace-separated word. Only the permalink cutting is under
// test here; tests/browser/embeds.scenarios.mjs checks the real tokens.
function wordRun(text, textB = '', maxTokens = 512) {
  const words = (t) => [...t.matchAll(/\S+/g)].map((m) => [m.index, m.index + m[0].length]);
  let a = words(text);
  let b = textB ? words(textB) : [];
  const room = maxTokens - (textB ? 3 : 2);
  const truncated = a.length + b.length > room;
  while (a.length + b.length > room) { if (a.length >= b.length) a.pop(); else b.pop(); }
  const rows = [[0, -1, [0, 0]], ...a.map((o, i) => [0, i, o]), [0, -1, [0, 0]]];
  if (textB) rows.push(...b.map((o, i) => [1, i, o]), [1, -1, [0, 0]]);
  return { T: rows.length, typeIds: rows.map((r) => r[0]), wordIds: rows.map((r) => r[1]), offsets: rows.map((r) => r[2]), truncated };
}

function randomWords(n, seed = 7) {
  let x = seed;
  const rnd = () => { x = (x * 1103515245 + 12345) % 2147483648; return x / 2147483648; };
  const out = [];
  let len = 0;
  while (len < n) {
    const w = Array.from({ length: 3 + Math.floor(rnd() * 60) }, () => String.fromCharCode(0x4e00 + Math.floor(rnd() * 20000))).join('');
    out.push(w);
    len += w.length + 1;
  }
  return out.join(' ').slice(0, n);
}

test('short text stays a readable text= link; repetitive long text is compressed as z=', async () => {
  const short = await permalinkSearch({ ...DEFAULTS, text: 'The cat sat.' });
  assert.match(short.search, /^text=The\+cat\+sat\./);
  const long = 'the cat sat on the mat because it was tired and the dog did not. '.repeat(20);
  const { search, cut } = await permalinkSearch({ ...DEFAULTS, text: long, text_b: 'Another one.' });
  assert.equal(cut, null);
  assert.match(search, /^z=[A-Za-z0-9_-]+&/);
  assert.ok(search.length < serializeState({ ...DEFAULTS, text: long, text_b: 'Another one.' }).length / 3);
  const back = await parseStateAsync(`?${search}`);
  assert.deepEqual(back.notices, []);
  assert.equal(back.state.text, long);
  assert.equal(back.state.text_b, 'Another one.');
});

test('z= round-trips awkward text and keeps the other parameters plain', async () => {
  const s = { ...DEFAULTS, text: 'a&b=c?d#e <img src=x onerror=alert(1)> "q" ünïcödé 🙂 '.repeat(12), text_b: '+ %20\u0000', view: 'head', layer: 3, head: 'mean', hide: true };
  const { search } = await permalinkSearch(s);
  assert.ok(search.startsWith('z='));
  assert.match(search, /view=head&layer=3&head=mean/);
  const back = await parseStateAsync(search);
  assert.deepEqual(back.state, s);
  // parseStateAsync reads old plain links too.
  const old = await parseStateAsync('?text=Hello+world&view=model');
  assert.equal(old.state.text, 'Hello world');
  assert.equal(old.state.view, 'model');
});

test('a 20,000-character paste gives a permalink <= 6,000 characters holding exactly the used tokens', async () => {
  const sentence = 'Researchers measured how attention heads in small transformers route information between tokens. ';
  const text = sentence.repeat(Math.ceil(MAX_TEXT_CHARS / sentence.length)).slice(0, MAX_TEXT_CHARS);
  const run = wordRun(text);
  assert.equal(run.truncated, true);
  const used = usedText(text, run, 0);
  assert.ok(used.length < 5000 && text.startsWith(used));
  const url = `https://example.org/bertlens/?${(await permalinkSearch({ ...DEFAULTS, text }, { run })).search}`;
  assert.ok(url.length <= MAX_PERMALINK, `${url.length} characters`);
  const back = await parseStateAsync(new URL(url).search);
  assert.equal(back.state.text, used);
  assert.deepEqual(wordRun(back.state.text).offsets, run.offsets); // same tokens
});

test('incompressible long words: still <= 6,000 characters, cut at a token end, and the cut is reported', async () => {
  const text = randomWords(MAX_TEXT_CHARS);
  const run = wordRun(text, 'and a second text', 512);
  const { search, cut } = await permalinkSearch({ ...DEFAULTS, text, text_b: 'and a second text' }, { run });
  assert.ok(search.length <= MAX_PERMALINK, `${search.length}`);
  assert.ok(cut && cut.unit === 'tokens' && cut.kept > 0 && cut.kept < cut.of, JSON.stringify(cut));
  const back = (await parseStateAsync(search)).state;
  assert.ok(text.startsWith(back.text));
  const ends = run.offsets.filter((o, i) => run.typeIds[i] === 0 && run.wordIds[i] >= 0).map((o) => o[1]);
  assert.ok(ends.includes(back.text.length), 'cut falls on a token end');
  // Without a run the cut falls on a character, still within the limit.
  const noRun = await permalinkSearch({ ...DEFAULTS, text });
  assert.ok(noRun.search.length <= MAX_PERMALINK && noRun.cut.unit === 'characters');
});

test('a damaged z= falls back to the default text with a notice', async () => {
  const z = await compressTexts('hello there', '');
  const { state, notices } = await parseStateAsync(`z=${z.slice(0, -3)}&view=head`);
  assert.equal(state.text, DEFAULTS.text);
  assert.equal(state.view, 'head');
  assert.equal(notices.length, 1);
  assert.match(notices[0], /compressed text \(z=\)/);
  const bad = await parseStateAsync('z=!!!');
  assert.equal(bad.notices.length, 1);
});

test('snapshot embed snippet: fragment carries the snapshot, size as proposed, all escaped', async () => {
  const st = { ...DEFAULTS, text: '"><script>x</script>', view: 'head' };
  const { search } = await permalinkSearch(st);
  const size = proposeEmbedSize('head', 16);
  const snip = embedSnippet('https://example.org/b/', st, { ...size, search, snapshot: 'AbC-_9' });
  assert.match(snip, new RegExp(`^<iframe src="[^"<>]*" width="${size.width}" height="${size.height}"[^<>]*></iframe>$`));
  const url = new URL(snip.match(/src="([^"]*)"/)[1].replace(/&amp;/g, '&'));
  assert.equal(url.hash, '#s=AbC-_9');
  const back = await parseStateAsync(url.search);
  assert.equal(back.state.embed, true);
  assert.equal(back.state.text, st.text);
  assert.equal(back.state.view, 'head');
});

test('proposed embed sizes grow with the token count and cover the smallest embed', () => {
  for (const view of ['heatmap', 'head', 'neuron']) {
    const a = proposeEmbedSize(view, 8);
    const b = proposeEmbedSize(view, 64);
    assert.ok(b.height > a.height, view);
    assert.ok(a.width >= 360 && a.height >= 480, view);
  }
  // The 117-token head view needs far more than 560 px.
  assert.ok(proposeEmbedSize('head', 117).height > 1500);
});

test('a z= that inflates past 1 MB is refused with a notice', async () => {
  const { deflateRaw, toBase64Url } = await import('../../web/js/lib/bytes.js');
  const z = toBase64Url(await deflateRaw(new TextEncoder().encode(`["${'a'.repeat(2 << 20)}",""]`)));
  assert.ok(z.length < 6000);
  const { state, notices } = await parseStateAsync(`z=${z}`);
  assert.equal(state.text, DEFAULTS.text);
  assert.equal(notices.length, 1);
});
