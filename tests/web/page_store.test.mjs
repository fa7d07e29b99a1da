// page_store.test.mjs — the page's store (web/js/page/store.js): the question
// and what answers it (model, run and its provenance, snapshot, pending
// work, notices), written only through update() and dispatch().
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createStore, runKeyOf } from '../../web/js/page/store.js';

test('a run kept is the store\'s, with its provenance; a new model forgets it', () => {
  const store = createStore({ text: 'a', text_b: '', ablate: '' });
  assert.equal(store.run().last, null);
  const live = { T: 3 };
  store.dispatch({ type: 'run', run: live, key: runKeyOf(store.get()) });
  assert.deepEqual(store.run(), { last: live, key: runKeyOf(store.get()), provenance: 'live' });
  const snap = { T: 3, snapshot: {} };
  store.dispatch({ type: 'run', run: snap, key: 'k' });
  assert.equal(store.run().provenance, 'snapshot');
  store.dispatch({ type: 'forget' });
  assert.deepEqual(store.run(), { last: null, key: null, provenance: null });
});

test('an input that stopped the engine is blocked until a live run of any input is kept', () => {
  const store = createStore({ text: 'boom', text_b: '', ablate: '' });
  store.dispatch({ type: 'block' });
  assert.equal(store.pending().blocked, runKeyOf(store.get()));
  store.dispatch({ type: 'run', run: { snapshot: {} }, key: 'k' }); // a snapshot's run lifts nothing
  assert.equal(store.pending().blocked, runKeyOf(store.get()));
  store.dispatch({ type: 'run', run: {}, key: 'k' });
  assert.equal(store.pending().blocked, null);
});

test('listeners hear their action after the reducer, with the part before it; the question has its own subscribers', () => {
  const store = createStore({ layer: 0 });
  const heard = [];
  store.on('model', (a, prev) => heard.push(['model', prev.model.info, store.model().info]));
  store.on('draw', (a) => heard.push(['draw', a.run]));
  store.subscribe((s, prev, why) => heard.push(['question', prev.layer, s.layer, why]));
  const info = { config: { n_layers: 2 } };
  store.dispatch({ type: 'model', patch: { info } });
  store.dispatch({ type: 'draw', run: 7 }); // a request: the reducer leaves the store as it is
  store.update({ layer: 1 }, { typed: true });
  assert.deepEqual(heard, [['model', null, info], ['draw', 7], ['question', 0, 1, { typed: true }]]);
  assert.equal(store.model().info, info);
});

test('notices: keyed, keyless ones each their own, cleared by key; a page state set clears a draw owing "ready"', () => {
  const store = createStore({});
  store.notice('load', 'error', 'Could not load x.');
  store.notice('load', 'warn', 'Again.');
  store.noticeList(['one', 'two']);
  assert.deepEqual([...store.notices().values()].map((n) => [n.kind, n.text]), [['warn', 'Again.'], ['warn', 'one'], ['warn', 'two']]);
  store.clearNotice('load');
  assert.equal(store.notices().has('load'), false);
  store.dispatch({ type: 'pending', patch: { readyOwed: true } });
  store.fail('run', 'The model could not run.');
  assert.equal(store.pageState(), 'error');
  assert.equal(store.pending().readyOwed, false);
  assert.equal(store.notices().get('run').kind, 'error');
});
