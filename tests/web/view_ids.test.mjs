// Views own what they show, export and keep (issue 36 item 3): no file of
// the page outside web/js/views/ compares the state's view with a view's id
// or names one beside the word "view" — a new view touches its own file and
// the registry (views/index.js) only. A guard over the source text.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { VIEW_IDS } from '../../web/js/views/index.js';

const WEB = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'web', 'js');

function sources(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'views' ? [] : sources(p);
    return e.name.endsWith('.js') ? [p] : [];
  });
}

/** Lines (comments left out) that name a view id as a string on a line about `view`. */
export function viewIdLines(text, ids = VIEW_IDS) {
  const quoted = new RegExp(`(['"\`])(${ids.join('|')})\\1`);
  return text.split('\n').map((l, i) => [i + 1, l]).filter(([, l]) => {
    const code = l.replace(/\/\/.*$/, '').replace(/^\s*\*.*$/, '');
    return /(^|[^'"\w])views?\b(?!['"])/.test(code) && quoted.test(code); // (the word view as code, not a state key 'view')
  });
}

test('the guard sees a view id compared with the state\'s view, and only that', () => {
  assert.equal(viewIdLines("if (s.view === 'neuron') x();").length, 1);
  assert.equal(viewIdLines("const v = { view: 'heatmap' };").length, 1);
  assert.equal(viewIdLines("p.set('head', String(state.head));").length, 0);
  assert.equal(viewIdLines("// s.view === 'neuron' in a comment").length, 0);
  assert.equal(viewIdLines("const KEYS = ['view', 'layer', 'head'];").length, 0);
});

test('no view id outside web/js/views/ (the registry included there)', () => {
  const found = [];
  for (const f of sources(WEB)) {
    for (const [n, l] of viewIdLines(fs.readFileSync(f, 'utf8'))) found.push(`${path.relative(WEB, f)}:${n}: ${l.trim()}`);
  }
  assert.deepEqual(found, []);
});
