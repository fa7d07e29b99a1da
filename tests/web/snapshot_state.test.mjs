// The state a snapshot carries (web/js/page/state.js stateFromSnapshot): every
// field checked by type and range before the page uses it. A snapshot link
// is anyone's JSON: "heads": 5 used to throw "state.heads.join is not a
// function" and leave a dead page (issue 23 item 4).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { stateFromSnapshot, DEFAULTS } from '../../web/js/page/state.js';
import { viewById } from '../../web/js/views/index.js';
import { encodeSnapshot, decodeSnapshot, snapshotFromRun } from '../../web/js/lib/snapshot.js';

const fx = JSON.parse(readFileSync(new URL('./fixtures/minilm-pair.json', import.meta.url)));
const DIMS = { L: 6, H: 12, T: 20 };
const good = {
  view: 'heatmap', layer: 2, head: 'mean', mode: 'norm', query: 3, hide: true, renorm: false, words: true, filter: 'ab',
  heads: [1, 4], theme: 'dark', text: 'A cat.', text_b: 'A dog.', model: 'minilm-l6-q8', ablate: '1:2', span: [2, 3], keep: 0.5,
};

test('a sound state passes whole, every field as written; embed never comes from the snapshot', () => {
  const { state, problems } = stateFromSnapshot({ ...good, embed: true }, DIMS);
  assert.deepEqual(problems, []);
  assert.deepEqual(state, { ...DEFAULTS, ...good, embed: false });
  // A page state as the page writes it (every key, defaults included) passes too.
  assert.deepEqual(stateFromSnapshot({ ...DEFAULTS, text: 'x' }, DIMS), { state: { ...DEFAULTS, text: 'x' }, problems: [] });
});

// Wrong values per field: each must be refused, naming the field.
const WRONG = {
  text: [7, null, true, ['a'], { a: 1 }],
  text_b: [0, false, [], {}],
  model: [1, 'a b', '<script>', '../x', 'x'.repeat(101), []],
  view: ['evil', 3, null, ['heatmap'], 'HEATMAP'],
  layer: ['0', -1, 1.5, 6, 99, 1e9, null, true, [0], NaN, Infinity],
  head: ['3', -1, 12, 2.5, 'all', null, false, [0]],
  mode: ['attention', 1, null],
  query: ['1', -2, 20, 0.5, null],
  hide: ['yes', 1, 0, null, 'true', []],
  renorm: ['0', 0, {}],
  words: [1, 'false'],
  filter: ['zz', 1, null],
  heads: [5, '1,2', [1, 'x'], [1, -1], [12], [0.5], { 0: 1 }, true],
  theme: ['blue', 0],
  ablate: [5, ['1:2'], 'nonsense'],
  span: ['2,3', 5, [1, 'a'], [25], [-1]],
  keep: ['0.5', true, 5, [1]],
};

test('every field with a wrong type or out of range is refused, named, and no state is returned', () => {
  let cases = 0;
  for (const [key, values] of Object.entries(WRONG)) {
    for (const v of values) {
      const { state, problems } = stateFromSnapshot({ ...good, [key]: v }, DIMS);
      assert.equal(state, null, `${key} = ${JSON.stringify(v)} accepted`);
      assert.equal(problems.length, 1, `${key} = ${JSON.stringify(v)}: ${problems.join(' | ')}`);
      assert.match(problems[0], new RegExp(`^${key}\\b`), `${key} = ${JSON.stringify(v)}: ${problems[0]}`);
      cases++;
    }
  }
  assert.ok(cases > 80, `${cases} cases`);
});

test('a state that is not an object, or lacks the fields a snapshot always has, is refused', () => {
  for (const raw of [null, 5, 'heatmap', [good], undefined]) assert.deepEqual(stateFromSnapshot(raw, DIMS).problems, ['its state is not an object']);
  const { text: _t, view: _v, ...lacking } = good;
  assert.deepEqual(stateFromSnapshot(lacking, DIMS).problems, ['it has no text', 'it has no view']);
  // Fields this page does not know are ignored (a newer page may add some).
  assert.deepEqual(stateFromSnapshot({ ...good, future: { x: 1 }, __proto__: { polluted: 1 } }, DIMS).problems, []);
  assert.equal({}.polluted, undefined);
});

test('several wrong fields are all reported', () => {
  const { problems } = stateFromSnapshot({ ...good, heads: 5, hide: 'yes', layer: 9 }, DIMS);
  assert.deepEqual(problems, ['hide is "yes", not true or false', 'heads is 5, not a list of whole numbers', 'layer 9 is not one of its 6 layers']);
});

test('the snapshot a live run writes decodes to a state that passes', async () => {
  const { T, H, d } = fx;
  const run = {
    tokens: fx.tokens, typeIds: fx.type_ids, wordIds: fx.word_ids, T, L: 2, H, d, truncated: false,
    attn: [Float32Array.from(fx.attentions[0]), Float32Array.from(fx.attentions[1])], norms: null, q: null, k: null,
  };
  const page = { ...DEFAULTS, view: 'heatmap', layer: 1, head: 4, text: fx.text, text_b: fx.text_b, model: 'minilm-l6-q8', embed: true };
  const snap = await decodeSnapshot(await encodeSnapshot({ ...snapshotFromRun(run, page, {}, viewById(page.view).snapshot), state: page }));
  const { state, problems } = stateFromSnapshot(snap.state, snap);
  assert.deepEqual(problems, []);
  assert.deepEqual(state, { ...page, embed: false });
  // The same snapshot with "heads": 5 decodes (the numbers are sound) and
  // its state is refused, not thrown on.
  const bad = await decodeSnapshot(await encodeSnapshot({ ...snapshotFromRun(run, page, {}, viewById(page.view).snapshot), state: { ...page, heads: 5 } }));
  assert.deepEqual(stateFromSnapshot(bad.state, bad).problems, ['heads is 5, not a list of whole numbers']);
});
