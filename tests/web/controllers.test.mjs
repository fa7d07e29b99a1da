// controllers.test.mjs — the page's controllers read the store and dispatch;
// none calls another (issue 36). Parses web/js/page/*.js (comments and
// string contents removed) and fails when
//   - any file takes or reads a shared `page` object (`page.x`, a `page`
//     parameter): every controller gets the store and nothing that holds
//     the other controllers;
//   - a controller (a module exporting a create* factory) imports another
//     controller module (pure helpers, the store, constants: fine);
//   - a controller reaches another controller's instance by its name
//     (`runs.`, `models.`, `drawing.`, …: the names app.js gives them) or a
//     factory takes one as a parameter.
// The wiring of what follows what lives in app.js, outside page/, and is
// the only place that calls controllers.
//
// BERTLENS_PAGE_DIR=<dir> runs the same checks on another copy of the
// folder (e.g. main's, to see them fail there).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const DIR = process.env.BERTLENS_PAGE_DIR ? path.resolve(process.env.BERTLENS_PAGE_DIR) : path.join(ROOT, 'web/js/page');

/** Source with comments removed and string/template text blanked (the
 *  code inside ${…} kept), so words in prose and messages do not count. */
export function codeOf(src) {
  let out = '';
  let i = 0;
  const stack = []; // open template literals: brace depth at their ${
  let depth = 0;
  const n = src.length;
  const regexOk = () => { // may a / here start a regular expression?
    const t = out.replace(/\s+$/, '');
    return !t || /[(,=:[!&|?{};+\-*%<>~^]$/.test(t) || /\b(return|typeof|case|in|of|new|delete|void|throw)$/.test(t);
  };
  while (i < n) {
    const c = src[i];
    const d = src[i + 1];
    if (c === '/' && d === '/') { while (i < n && src[i] !== '\n') i++; continue; }
    if (c === '/' && d === '*') { const e = src.indexOf('*/', i + 2); i = e < 0 ? n : e + 2; out += ' '; continue; }
    if (c === '\'' || c === '"') {
      const q = c;
      i++;
      while (i < n && src[i] !== q) { if (src[i] === '\\') i++; i++; }
      i++;
      out += `${q}${q}`;
      continue;
    }
    if (c === '`' || (c === '}' && stack.length && stack[stack.length - 1] === depth)) {
      if (c === '}') stack.pop();
      else out += '`';
      i++;
      // template text up to its end or the next ${
      while (i < n && src[i] !== '`') {
        if (src[i] === '\\') { i += 2; continue; }
        if (src[i] === '$' && src[i + 1] === '{') { stack.push(depth); i += 2; out += '${'; break; }
        i++;
      }
      if (src[i] === '`') { out += '`'; i++; }
      continue;
    }
    if (c === '/' && regexOk()) { // a regular expression literal
      i++;
      let cls = false;
      while (i < n && (src[i] !== '/' || cls)) {
        if (src[i] === '\\') i++;
        else if (src[i] === '[') cls = true;
        else if (src[i] === ']') cls = false;
        i++;
      }
      i++;
      out += '/re/';
      continue;
    }
    if (c === '{') depth++;
    if (c === '}') depth--;
    out += c;
    i++;
  }
  return out;
}

/** The page folder's files: {name, code, imports: [module file names], factories: [{name, params}]}. */
export function readPage(dir) {
  return fs.readdirSync(dir).filter((f) => f.endsWith('.js')).sort().map((name) => {
    const src = fs.readFileSync(path.join(dir, name), 'utf8');
    const code = codeOf(src);
    const imports = [...src.matchAll(/^\s*(?:import|export)\s[^;]*?from\s+'\.\/([\w.-]+\.js)'/gm)].map((m) => m[1]);
    const factories = [...code.matchAll(/export\s+(?:async\s+)?function\s+(create\w+)\s*\(([^)]*)\)/g)]
      .map((m) => ({ name: m[1], params: m[2].split(',').map((p) => p.replace(/[{}\s]/g, '').split('=')[0]).filter(Boolean) }));
    return { name, code, imports, factories };
  });
}

/** The name a controller instance goes by (app.js): createRuns -> runs,
 *  createDrawing -> drawing, createUrlSync -> url, createViewCtx -> ctx. */
const INSTANCE = { createUrlSync: ['url', 'urlSync'], createViewCtx: ['ctx', 'viewCtx'] };
const instanceNames = (factory) => INSTANCE[factory] || [factory[6].toLowerCase() + factory.slice(7)];

/** Every breach of the rules above, as sentences. */
export function breaches(files) {
  const out = [];
  const controllers = files.filter((f) => f.factories.length && f.name !== 'store.js'); // (the store is what they share)
  const byFile = new Map(controllers.map((f) => [f.name, f]));
  for (const f of files) {
    const reads = [...f.code.matchAll(/(?<![\w.$])page\s*\??\.\s*(\w+)/g)];
    for (const m of reads) out.push(`${f.name}: reads the shared page object (page.${m[1]})`);
    for (const fac of f.factories) if (fac.params.includes('page')) out.push(`${f.name}: ${fac.name} takes the shared page object`);
  }
  for (const f of controllers) {
    for (const imp of f.imports) {
      if (imp !== f.name && byFile.has(imp)) out.push(`${f.name}: imports the controller ${imp}`);
    }
    const others = controllers.filter((g) => g !== f).flatMap((g) => g.factories.flatMap((fac) => instanceNames(fac.name).map((n) => [n, g.name])));
    for (const [n, owner] of others) {
      const calls = [...f.code.matchAll(new RegExp(`(?<![\\w.$])${n}\\s*\\??\\.\\s*\\w+`, 'g'))];
      if (calls.length) out.push(`${f.name}: calls the controller ${owner} (${n}.…) ${calls.length}×`);
      for (const fac of f.factories) if (fac.params.includes(n)) out.push(`${f.name}: ${fac.name} takes the controller ${owner} (${n})`);
    }
  }
  return out;
}

/** Calls through the shared page object to a controller (page.runs.x(…), page.models.x…). */
export const sidewaysCalls = (files) => files.reduce((k, f) => k + [...f.code.matchAll(/(?<![\w.$])page\s*\.\s*(?!store\b)\w+\s*\.\s*\w+/g)].length, 0);

test('the guard reads code, not prose: comments, strings and regular expressions do not count', () => {
  const code = codeOf('// page.runs.last()\nconst a = \'page.models.info()\'; /* runs.forget() */ const t = `x ${page.boot.snapshot()} y page.toolbar`; const r = /page\\.x/g; page.url.sync(a / 2);');
  assert.deepEqual([...code.matchAll(/page\.\w+/g)].map((m) => m[0]), ['page.boot', 'page.url']);
  const files = [
    { name: 'a.js', code: codeOf('export function createA(store, { runs }) { runs.last(); }'), imports: ['b.js'], factories: [{ name: 'createA', params: ['store', 'runs'] }] },
    { name: 'b.js', code: codeOf('export function createRuns(page) { page.models.info(); }'), imports: [], factories: [{ name: 'createRuns', params: ['page'] }] },
  ];
  const found = breaches(files);
  assert.ok(found.some((b) => b.startsWith('a.js: imports the controller b.js')), found.join('\n'));
  assert.ok(found.some((b) => b.startsWith('a.js: calls the controller b.js (runs.…)')), found.join('\n'));
  assert.ok(found.some((b) => b.startsWith('a.js: createA takes the controller b.js (runs)')), found.join('\n'));
  assert.ok(found.some((b) => b.startsWith('b.js: reads the shared page object (page.models)')), found.join('\n'));
  assert.ok(found.some((b) => b.startsWith('b.js: createRuns takes the shared page object')), found.join('\n'));
  assert.equal(sidewaysCalls(files), 1);
});

test('no controller in web/js/page calls another, and none gets a shared page object', () => {
  const files = readPage(DIR);
  const controllers = files.filter((f) => f.factories.length && f.name !== 'store.js').map((f) => f.name);
  // the page's controllers are found (a guard that finds none checks nothing)
  for (const c of ['runs.js', 'models.js', 'draw.js', 'toolbar.js', 'boot.js', 'share.js', 'url.js', 'view_ctx.js']) assert.ok(controllers.includes(c), `${c} is not seen as a controller`);
  const found = breaches(files);
  assert.deepEqual(found, [], `${found.length} breaches (${sidewaysCalls(files)} calls through page.<controller>):\n${found.join('\n')}`);
});

test('every controller factory takes the store first', () => {
  for (const f of readPage(DIR).filter((g) => g.name !== 'store.js')) {
    for (const fac of f.factories) assert.equal(fac.params[0], 'store', `${f.name}: ${fac.name}(${fac.params.join(', ')})`);
  }
});
