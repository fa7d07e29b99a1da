// tools/inline_page.mjs: modules bundled into one script behave like the
// modules themselves; unsupported syntax stops the build; pages keep no
// reference to another file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleModules, inlinePage, transformModule, scriptSafe, jsonSafe } from '../../tools/inline_page.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

const files = {
  'js/main.js': [
    "import { twice, NAME as label } from './lib/math.js';",
    'import {',
    '  Counter,',
    '  gen,',
    "} from './lib/more.js';",
    "import * as M from './lib/math.js';",
    "import './lib/side.js';",
    "export { twice as double } from './lib/math.js';",
    'const c = new Counter();',
    'c.add(); c.add();',
    'export const result = { a: twice(21), label, n: c.n, g: [...gen()], ns: M.twice(2), side: globalThis.__side };',
    "export async function later() { return 'async ok'; }",
  ].join('\n'),
  'js/lib/math.js': "export function twice(x) { return 2 * x; }\nconst NAME = 'math';\nexport { NAME };\n",
  'js/lib/more.js': [
    "import { twice } from './math.js';",
    'export class Counter { constructor() { this.n = 0; } add() { this.n = twice(this.n) + 1; } }',
    'export function* gen() { yield 1; yield 2; }',
    'const NAME = "private to more.js";',
  ].join('\n'),
  'js/lib/side.js': 'globalThis.__side = (globalThis.__side || 0) + 1;\n',
};
const read = (rel) => {
  if (!(rel in files)) throw new Error(`no ${rel}`);
  return files[rel];
};

/** Run a bundle and return the registry of its modules. */
function runBundle(code) {
  delete globalThis.__side;
  return new Function(`${code}\nreturn __bl;`)();
}

test('a bundle behaves like the modules: named, renamed, namespace, side-effect imports, re-exports', async () => {
  const code = bundleModules('js/main.js', read);
  const bl = runBundle(code);
  assert.deepEqual(Object.keys(bl), ['js/lib/math.js', 'js/lib/more.js', 'js/lib/side.js', 'js/main.js'], 'dependencies first');
  const main = bl['js/main.js'];
  assert.deepEqual(main.result, { a: 42, label: 'math', n: 3, g: [1, 2], ns: 4, side: 1 });
  assert.equal(main.double(5), 10);
  assert.equal(await main.later(), 'async ok');
  assert.deepEqual(Object.keys(bl['js/lib/more.js']).sort(), ['Counter', 'gen'], 'only exported names are visible');
  assert.throws(() => { main.result = 1; }, TypeError, 'the module object is frozen');
  assert.doesNotMatch(code, /^\s*(import|export)\b/m, 'no module syntax left');
});

test('each module is evaluated once and keeps its own scope', () => {
  const bl = runBundle(bundleModules('js/main.js', (rel) => (rel === 'js/lib/side.js' ? 'const NAME = 1; globalThis.__side = (globalThis.__side || 0) + 1;' : read(rel))));
  assert.equal(bl['js/main.js'].result.side, 1);
});

test('unsupported syntax and cycles stop the bundle with the module named', () => {
  const one = (src) => () => transformModule('js/x.js', src);
  assert.throws(one('export default 3;'), /js\/x\.js: export default/);
  assert.throws(one('export let n = 1;'), /export let\/var/);
  assert.throws(one("export * from './y.js';"), /export \*/);
  assert.throws(one("const m = await import('./y.js');"), /dynamic import/);
  assert.throws(one('const u = import.meta.url;'), /import\.meta/);
  assert.throws(one("import d3 from 'd3';"), /only relative imports/);
  assert.throws(one("import def from './y.js';"), /default imports/);
  assert.throws(one('export const { a, b } = obj;'), /destructuring/);
  const cyc = { 'a.js': "import { b } from './b.js'; export const a = 1;", 'b.js': "import { a } from './a.js'; export const b = 2;" };
  assert.throws(() => bundleModules('a.js', (r) => cyc[r]), /import cycle: a\.js -> b\.js -> a\.js/);
  assert.throws(() => bundleModules('a.js', () => { throw new Error('ENOENT'); }), /a\.js: cannot read it/);
});

test('text inside a <script> element cannot close it', () => {
  assert.equal(scriptSafe('const s = "</script><b>";'), 'const s = "<\\/script><b>";');
  assert.equal(new Function(`return ${scriptSafe('"</SCRIPT>"')};`)(), '</SCRIPT>', 'same string in JS');
  assert.throws(() => scriptSafe('x = "<!--";', 'js/x.js'), /js\/x\.js.*<!--/);
  const json = jsonSafe(JSON.stringify({ t: '</script><!-- <b>' }));
  assert.doesNotMatch(json, /</);
  assert.deepEqual(JSON.parse(json), { t: '</script><!-- <b>' });
});

test('inlinePage: stylesheet, icon, classic and module scripts inline; data blocks at the end of <body>', () => {
  const html = '<!doctype html><html><head><link rel="icon" href="icon.svg" type="image/svg+xml">'
    + '<link rel="stylesheet" href="a.css"><script src="drop.js"></script><script src="lib.js"></script>'
    + '<script type="module" src="js/main.js"></script></head><body><p>hi</p>\n</body></html>';
  const page = inlinePage(html, {
    read: (rel) => ({ 'icon.svg': Buffer.from('<svg/>'), 'a.css': 'p { color: red }', 'lib.js': 'var lib = "</script>";' }[rel] ?? read(rel)),
    dropScripts: ['drop.js'],
    dataBlocks: [{ id: 'data-1', type: 'application/json', text: '{"a":"<b>"}' }, { id: 'bytes', type: 'application/octet-stream', text: 'AAEC' }],
  });
  assert.match(page, /<link rel="icon" href="data:image\/svg\+xml;base64,PHN2Zy8\+">/);
  assert.match(page, /<style>\np \{ color: red \}\n<\/style>/);
  assert.doesNotMatch(page, /drop\.js|src=|stylesheet/);
  assert.match(page, /<script>\nvar lib = "<\\\/script>";\n<\/script>/);
  assert.match(page, /<script type="module">\nconst __bl = /);
  assert.match(page, /<p>hi<\/p>\n\n?<script type="application\/json" id="data-1">\{"a":"\\u003cb>"\}<\/script>\n<script type="application\/octet-stream" id="bytes">AAEC<\/script>\n<\/body>/);
  assert.throws(() => inlinePage('<body><img src="x.png"></body>', { read }), /a reference is left: src="x.png"/);
  assert.throws(() => inlinePage('<body></body>', { read, dataBlocks: [{ id: 'a b', type: 'x', text: '' }] }), /bad data block id/);
});

test('the real page modules bundle (web/js/app.js and everything it imports)', () => {
  const code = bundleModules('js/app.js', (rel) => fs.readFileSync(path.join(ROOT, 'web', rel), 'utf8'));
  assert.doesNotThrow(() => new Function(code), 'the bundle parses as a script');
  for (const m of ['js/app.js', 'js/page/state.js', 'js/engine/bundles.js', 'js/engine/engine.js', 'js/engine/assets.js']) assert.ok(code.includes(`__bl["${m}"] = (() => {`), m);
});
