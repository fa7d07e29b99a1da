// worker_source.mjs — the engine worker as one classic script: web/js/worker.js
// (the dispatcher) with its parts (web/js/engine/worker_*.js, listed in its
// WORKER_PARTS) put in place of its `importScripts(...WORKER_PARTS)` line.
// Used by tools/build_site.mjs (the site and the one-file page) and
// tools/wasm_node.mjs (the Node tests), so every worker runs the same text.
import fs from 'node:fs';
import path from 'node:path';

const LINE = /^importScripts\(\.\.\.WORKER_PARTS\);.*$/m;

/** The joined source. webDir: the folder holding js/worker.js. */
export function workerSource(webDir) {
  const jsDir = path.join(webDir, 'js');
  const main = fs.readFileSync(path.join(jsDir, 'worker.js'), 'utf8');
  const list = main.match(/const WORKER_PARTS = \[([^\]]*)\];/);
  if (!list || !LINE.test(main)) throw new Error('web/js/worker.js: no WORKER_PARTS list or importScripts(...WORKER_PARTS) line');
  const parts = [...list[1].matchAll(/'([^']+)'/g)].map((m) => m[1]);
  for (const p of parts) if (!/^engine\/worker_[a-z_]+\.js$/.test(p)) throw new Error(`web/js/worker.js: part ${p} is not engine/worker_*.js`);
  const text = parts.map((p) => `// ---- ${p}\n${fs.readFileSync(path.join(jsDir, p), 'utf8')}`).join('\n');
  return main.replace(LINE, () => text);
}
