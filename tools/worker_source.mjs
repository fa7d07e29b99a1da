// worker_source.mjs — the engine worker as one classic script: web/js/worker.js
// (the dispatcher) with its parts (web/js/engine/worker_*.js, listed in its
// WORKER_PARTS) put in place of its `importScripts(...WORKER_PARTS)` line,
// preceded by the plain ES modules it lists in WORKER_MODULES (and what
// they import), each in a scope of its own: a part reaches a module's
// exports as workerModule('engine/convert.js'). So the worker runs the
// page's own converter driver, Hub reader and Cache Storage code (issue
// 36: conversion and loading live in the worker), not a copy of them.
// Used by tools/build_site.mjs (the site and the one-file page) and
// tools/wasm_node.mjs (the Node tests), so every worker runs the same text.
import fs from 'node:fs';
import path from 'node:path';

const LINE = /^importScripts\(\.\.\.WORKER_PARTS\);.*$/m;
const IMPORT = /^import\s*\{([^}]*)\}\s*from\s*'(\.{1,2}\/[^']+)';[ \t]*$/gm;
const EXPORT_LIST = /^export\s*\{([^}]*)\};[ \t]*$/gm;
const EXPORT_DECL = /^export\s+((?:async\s+)?function\*?|class|const|let)\s+([A-Za-z_$][\w$]*)/gm;

/** One ES module (web-relative path rel) as a classic-script function body
 *  returning its exports; its relative imports (named ones only: the
 *  worker's modules use no others) added to `deps`. */
function moduleBody(jsDir, rel, deps) {
  const src = fs.readFileSync(path.join(jsDir, rel), 'utf8');
  const names = [];
  let body = src.replace(IMPORT, (m, list, spec) => {
    const dep = path.posix.normalize(path.posix.join(path.posix.dirname(rel), spec));
    deps.push(dep);
    const binds = list.split(',').map((s) => s.trim()).filter(Boolean).map((s) => s.replace(/\s+as\s+/, ': '));
    return `const { ${binds.join(', ')} } = workerModule(${JSON.stringify(dep)});`;
  });
  body = body.replace(EXPORT_LIST, (m, list) => {
    for (const s of list.split(',').map((x) => x.trim()).filter(Boolean)) {
      const [local, as = local] = s.split(/\s+as\s+/);
      names.push(as === local ? local : `${as}: ${local}`);
    }
    return '';
  });
  body = body.replace(EXPORT_DECL, (m, kind, name) => { names.push(name); return `${kind} ${name}`; });
  if (/^\s*(import|export)\b/m.test(body)) throw new Error(`web/js/${rel}: an import or export the worker's joiner does not take (named ones only)`);
  return `'use strict';\n${body}\nreturn { ${names.join(', ')} };`;
}

/** The modules of WORKER_MODULES and their imports, as one block defining workerModule(rel). */
function modulesBlock(jsDir, roots) {
  const defs = new Map();
  const todo = [...roots];
  while (todo.length) {
    const rel = todo.shift();
    if (defs.has(rel)) continue;
    if (!/^(engine|lib)\/[a-z_]+\.js$/.test(rel)) throw new Error(`web/js/worker.js: module ${rel} is not engine/*.js or lib/*.js`);
    const deps = [];
    defs.set(rel, moduleBody(jsDir, rel, deps));
    todo.push(...deps);
  }
  const entries = [...defs].map(([rel, body]) => `// ---- module ${rel}\n${JSON.stringify(rel)}: () => {\n${body}\n},`).join('\n');
  return `const workerModuleDefs = {\n${entries}\n};\nconst workerModuleDone = Object.create(null);\n`
    + 'function workerModule(rel) { return workerModuleDone[rel] || (workerModuleDone[rel] = workerModuleDefs[rel]()); }\n';
}

/** The joined source. webDir: the folder holding js/worker.js. */
export function workerSource(webDir) {
  const jsDir = path.join(webDir, 'js');
  const main = fs.readFileSync(path.join(jsDir, 'worker.js'), 'utf8');
  const list = main.match(/const WORKER_PARTS = \[([^\]]*)\];/);
  if (!list || !LINE.test(main)) throw new Error('web/js/worker.js: no WORKER_PARTS list or importScripts(...WORKER_PARTS) line');
  const parts = [...list[1].matchAll(/'([^']+)'/g)].map((m) => m[1]);
  for (const p of parts) if (!/^engine\/worker_[a-z_]+\.js$/.test(p)) throw new Error(`web/js/worker.js: part ${p} is not engine/worker_*.js`);
  const mods = main.match(/const WORKER_MODULES = \[([^\]]*)\];/);
  const modules = mods ? modulesBlock(jsDir, [...mods[1].matchAll(/'([^']+)'/g)].map((m) => m[1])) : '';
  const text = parts.map((p) => `// ---- ${p}\n${fs.readFileSync(path.join(jsDir, p), 'utf8')}`).join('\n');
  return main.replace(LINE, () => `${modules}${text}`);
}
