// present.test.mjs — presentation mode's parts that need no browser
// (web/js/page/present.js, the present= URL parameter in page/state.js):
// the parameter's round trip, what the arrow keys ask for in each view of
// the registry, and the box a presented view gets.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseState, serializeState, embedSnippet, stateFromSnapshot, DEFAULTS } from '../../web/js/page/state.js';
import { stepPatch, keyHint, presentScale, presentBox } from '../../web/js/page/present.js';
import { VIEW_LIST, viewById } from '../../web/js/views/index.js';

test('present=1 round trip: parsed, written back, absent by default', () => {
  assert.equal(DEFAULTS.present, false);
  const { state, notices } = parseState('?text=Hi&view=model&present=1');
  assert.deepEqual(notices, []);
  assert.equal(state.present, true);
  const search = serializeState(state);
  assert.equal(new URLSearchParams(search).get('present'), '1');
  assert.deepEqual(parseState(search).state, state);
  assert.equal(new URLSearchParams(serializeState({ ...state, present: false })).has('present'), false);
  assert.equal(parseState('present=0').state.present, false);
});

test('a bad present= value falls back with a notice', () => {
  const { state, notices } = parseState('present=yes');
  assert.equal(state.present, false);
  assert.equal(notices.length, 1);
  assert.match(notices[0], /present=yes .*expected 1 or 0/);
});

test('an embed is never a presentation; a snapshot cannot switch it on', () => {
  const s = { ...DEFAULTS, present: true };
  const snippet = embedSnippet('https://x.test/', s);
  assert.match(snippet, /embed=1/);
  assert.doesNotMatch(snippet, /present/);
  assert.doesNotMatch(embedSnippet('https://x.test/', s, { search: 'text=a&present=1' }), /present/);
  const snap = stateFromSnapshot({ text: 'a', view: 'heatmap', layer: 0, head: 0, mode: 'attn', present: true }, { L: 2, H: 2, T: 3 });
  assert.deepEqual(snap.problems, []);
  assert.equal(snap.state.present, false);
});

const shape = { L: 6, H: 12 };

test('arrow keys: left/right step the head (then the mean where the view offers it), up/down the layer; stops at the ends', () => {
  for (const v of VIEW_LIST.filter((d) => !d.query)) {
    const s = { ...DEFAULTS, view: v.id, layer: 2, head: 5 };
    const right = stepPatch('ArrowRight', {}, s, v, shape);
    const down = stepPatch('ArrowDown', {}, s, v, shape);
    assert.deepEqual(right, v.controls.head ? { head: 6 } : null, `${v.id} right`);
    assert.deepEqual(stepPatch('ArrowLeft', {}, s, v, shape), v.controls.head ? { head: 4 } : null, `${v.id} left`);
    assert.deepEqual(down, v.controls.layer ? { layer: 3 } : null, `${v.id} down`);
    assert.deepEqual(stepPatch('ArrowUp', {}, s, v, shape), v.controls.layer ? { layer: 1 } : null, `${v.id} up`);
    if (v.controls.head) {
      const last = stepPatch('ArrowRight', {}, { ...s, head: 11 }, v, shape);
      assert.deepEqual(last, v.controls.mean ? { head: 'mean' } : null, `${v.id} past the last head`);
      assert.equal(stepPatch('ArrowLeft', {}, { ...s, head: 0 }, v, shape), null);
      if (v.controls.mean) assert.deepEqual(stepPatch('ArrowLeft', {}, { ...s, head: 'mean' }, v, shape), { head: 11 });
    }
    if (v.controls.layer) {
      assert.equal(stepPatch('ArrowDown', {}, { ...s, layer: 5 }, v, shape), null);
      assert.equal(stepPatch('ArrowUp', {}, { ...s, layer: 0 }, v, shape), null);
    }
    assert.equal(stepPatch('Enter', {}, s, v, shape), null);
  }
});

test('arrow keys in a view with a query token: left/right step the shown tokens (raw token of each), Shift the head', () => {
  const v = VIEW_LIST.find((d) => d.query);
  assert.ok(v, 'the registry has a view with a query token');
  // Shown tokens 0..3 with [CLS] hidden and words merged: raw tokens [1], [2, 3], [4], [5].
  const members = [[1], [2, 3], [4], [5]];
  const s = { ...DEFAULTS, view: v.id, layer: 1, head: 2, query: 3 };
  assert.deepEqual(stepPatch('ArrowRight', {}, s, v, { ...shape, members }), { query: 4 });
  assert.deepEqual(stepPatch('ArrowLeft', {}, s, v, { ...shape, members }), { query: 1 });
  assert.equal(stepPatch('ArrowRight', {}, { ...s, query: 5 }, v, { ...shape, members }), null);
  assert.deepEqual(stepPatch('ArrowLeft', {}, { ...s, query: 0 }, v, { ...shape, members }), { query: 1 }); // 0 not shown: to the first shown
  assert.deepEqual(stepPatch('ArrowRight', { shift: true }, s, v, { ...shape, members }), { head: 3 });
  assert.deepEqual(stepPatch('ArrowDown', {}, s, v, { ...shape, members }), { layer: 2 });
  assert.match(keyHint(v), /token/);
  assert.match(keyHint(viewById('heatmap')), /← → head · ↑ ↓ layer/);
});

test('the presented box: the window below the bar, in the view\'s own units; labels scaled 1..1.6', () => {
  assert.equal(presentScale(390, 844), 1);
  assert.equal(presentScale(1280, 720), 1.28);
  assert.equal(presentScale(1366, 768), 1.37);
  assert.equal(presentScale(3840, 2160), 1.6);
  const b = presentBox({ winW: 1280, winH: 720, barBottom: 40, padX: 24, padY: 12, scale: 1.28 });
  // Scaled back, the box and its padding stay inside the window below the bar.
  assert.ok((b.width + 24) * 1.28 <= 1280);
  assert.ok((b.height + 12) * 1.28 <= 720 - 40);
  assert.ok((b.width + 24 + 1) * 1.28 > 1280 - 2, 'the whole width is used');
});
