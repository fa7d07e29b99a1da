// registry.test.mjs — web/js/views/index.js: every view is a complete
// descriptor, the controller names none, and the state knows every view.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { VIEW_LIST, VIEW_IDS, VIEW_PARAMS, viewById, HEAD_VIEW_ID } from '../../web/js/views/index.js';
import { VIEWS, DEFAULTS, parseState, serializeState } from '../../web/js/page/state.js';
import { mergeNeeds } from '../../web/js/lib/protocol.js';

const read = (p) => fs.readFileSync(new URL(`../../${p}`, import.meta.url), 'utf8');

test('every descriptor has what the controller asks for', () => {
  assert.ok(VIEW_LIST.length >= 4);
  assert.equal(new Set(VIEW_IDS).size, VIEW_IDS.length, 'ids are unique');
  for (const v of VIEW_LIST) {
    assert.match(v.id, /^[a-z]+$/, v.id);
    assert.equal(typeof v.label, 'string');
    for (const k of ['layer', 'head', 'mean', 'words', 'mode']) assert.equal(typeof v.controls[k], 'boolean', `${v.id}.controls.${k}`);
    for (const f of ['needs', 'create', 'prepare']) assert.equal(typeof v[f], 'function', `${v.id}.${f}`);
    // false, or the spec of what its snapshot holds (lib/snapshot.js)
    if (v.snapshot !== false) {
      assert.ok((v.snapshot.layers === 'none' && v.snapshot.predict === true) // the predicted words only (snapshot_predict.js)
        // the view's own record only (snapshot.js view_data): it makes it and judges it
        || (v.snapshot.layers === 'none' && typeof v.snapshot.data?.fromRun === 'function' && typeof v.snapshot.data?.covers === 'function')
        || (['shown', 'all'].includes(v.snapshot.layers) && ['shown', 'all'].includes(v.snapshot.heads)
        && ['head', 'heads'].includes(v.snapshot.draws)), `${v.id}.snapshot: ${JSON.stringify(v.snapshot)}`);
    }
    // needs() gives protocol needs for both modes
    for (const mode of ['attn', 'norm']) {
      const n = mergeNeeds(v.needs({ ...DEFAULTS, view: v.id, mode }));
      assert.ok(n && typeof n.norms === 'boolean');
    }
    assert.equal(viewById(v.id), v);
  }
  assert.ok(VIEW_IDS.includes(HEAD_VIEW_ID));
  assert.throws(() => viewById('nope'), /unknown view/);
});

test('the state accepts exactly the registered views', () => {
  assert.deepEqual([...VIEWS], [...VIEW_IDS]);
  for (const id of VIEW_IDS) assert.equal(parseState(`view=${id}`).state.view, id);
  const bad = parseState('view=sideways');
  assert.equal(bad.state.view, DEFAULTS.view);
  assert.match(bad.notices[0], /view=sideways/);
});

test('view parameters round-trip through the URL and reject bad values', () => {
  for (const p of VIEW_PARAMS) {
    assert.ok(p.key in DEFAULTS, p.key);
    assert.equal(DEFAULTS[p.key], p.def);
    assert.ok(!serializeState(DEFAULTS).includes(`${p.key}=`), `${p.key} at its default is not written`);
  }
  if (VIEW_PARAMS.some((p) => p.key === 'rank')) {
    const s = parseState('view=overview&rank=prev&min=0.5').state;
    assert.equal(s.rank, 'prev');
    assert.equal(s.min, 0.5);
    const again = parseState(serializeState(s)).state;
    assert.equal(again.rank, 'prev');
    assert.equal(again.min, 0.5);
    const bad = parseState('rank=<b>x</b>&min=-1');
    assert.equal(bad.state.rank, DEFAULTS.rank);
    assert.equal(bad.state.min, DEFAULTS.min);
    assert.equal(bad.notices.length, 2);
  }
});

test('app.js names no view', () => {
  const app = read('web/js/app.js');
  const ids = VIEW_IDS.map((id) => `'${id}'`);
  const hits = app.split('\n').filter((line) => /view\s*[!=]==\s*'/.test(line) || ids.some((q) => line.includes(`view: ${q}`)));
  assert.deepEqual(hits, []);
  assert.doesNotMatch(app, /from '\.\/views\/(heatmap|head|model|neuron|overview|rollout)\.js'/);
});
