// corpus_cell.test.mjs — the heatmap's selected cell as page state (issue 25
// item 2: a Corpus example opens the heatmap on its exact query/key cell):
// cell=Q,K is parsed, checked and serialized by the page's state
// (web/js/page/state.js through the heatmap descriptor's params), a
// snapshot's cell past its tokens is refused, and the cell is drawn on the
// shown token that holds each raw position (words, span).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseState, serializeState, stateFromSnapshot, DEFAULTS } from '../../web/js/page/state.js';
import { shownCell } from '../../web/js/views/heatmap.js';

test('cell=Q,K parses to [Q, K] and a permalink keeps it', () => {
  const { state, notices } = parseState('?view=heatmap&layer=1&head=2&query=4&cell=4,7');
  assert.deepEqual(notices, []);
  assert.deepEqual(state.cell, [4, 7]);
  const back = new URLSearchParams(serializeState(state));
  assert.equal(back.get('cell'), '4,7');
  assert.deepEqual(parseState(back).state.cell, [4, 7]);
  assert.equal(DEFAULTS.cell, null);
  assert.equal(new URLSearchParams(serializeState({ ...DEFAULTS })).get('cell'), null, 'no cell, no cell=');
});

test('a malformed cell= falls back to none, with a notice', () => {
  for (const raw of ['4', '4,7,1', '-1,2', 'a,b', '4,%3Cb%3E', '1e3,2', '123456,1', '']) {
    const { state, notices } = parseState(`?cell=${raw}`);
    assert.equal(state.cell, null, raw);
    assert.ok(notices.some((n) => n.includes('cell=')), `notice for cell=${raw}: ${notices.join(' | ')}`);
  }
});

test('a snapshot\'s cell past its tokens is refused', () => {
  const dims = { L: 2, H: 2, T: 10 };
  assert.deepEqual(stateFromSnapshot({ ...DEFAULTS, cell: [3, 9] }, dims).problems, []);
  const { problems } = stateFromSnapshot({ ...DEFAULTS, cell: [3, 10] }, dims);
  assert.ok(problems.some((p) => /cell/.test(p)), problems.join(' | '));
});

test('the cell is drawn on the shown tokens that hold its raw positions', () => {
  const words = { members: [[0], [1, 2], [3], [4, 5, 6], [7]] }; // words mode: pieces grouped
  assert.deepEqual(shownCell(words, [2, 5]), { i: 1, j: 3 });
  assert.deepEqual(shownCell(words, [0, 7]), { i: 0, j: 4 });
  const hidden = { members: [[1], [2], [3]] }; // specials hidden: 0 and 4 not shown
  assert.equal(shownCell(hidden, [0, 2]), null);
  assert.equal(shownCell(hidden, [2, 4]), null);
  assert.equal(shownCell(hidden, null), null);
});
