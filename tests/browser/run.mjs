#!/usr/bin/env node
// Browser tests of the built site (dist/, from `make site`) in headless
// Chromium through playwright-core.
//
//   node tests/browser/run.mjs            every scenario
//   node tests/browser/run.mjs offline    only scenarios whose name contains "offline"
//   BROWSER_JOBS=1 node tests/browser/run.mjs    one scenario at a time (default 2)
//
// Loads every tests/browser/*.scenarios.mjs (sorted by name); each registers
// scenarios with harness.mjs's scenario(). Each scenario runs in its own
// fresh Chromium profile against its own server (see harness.mjs for what it
// gets and what fails it). Screenshots go to build/screenshots/.

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { scenarios, runScenario, DIST } from './harness.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const filter = process.argv[2] || '';
const jobs = Math.max(1, Number(process.env.BROWSER_JOBS) || 2);

if (!fs.existsSync(path.join(DIST, 'index.html'))) {
  console.error('dist/ is missing: run `make site` first.');
  process.exit(1);
}
{
  // Testing yesterday's dist/ proves little: say so loudly.
  const built = fs.statSync(path.join(DIST, 'index.html')).mtimeMs;
  const newer = [];
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (fs.statSync(p).mtimeMs > built) newer.push(path.relative(path.join(HERE, '..', '..'), p));
    }
  };
  walk(path.join(HERE, '..', '..', 'web'));
  if (newer.length) console.log(`WARNING: dist/ is older than ${newer.slice(0, 3).join(', ')}${newer.length > 3 ? ', …' : ''}: run \`make site\` first.\n`);
}
for (const f of fs.readdirSync(HERE).filter((n) => n.endsWith('.scenarios.mjs')).sort()) {
  await import(pathToFileURL(path.join(HERE, f)).href);
}
const chosen = scenarios.filter((s) => s.name.toLowerCase().includes(filter.toLowerCase()));
if (chosen.length === 0) {
  console.error(`no scenario matches "${filter}" (${scenarios.length} registered)`);
  process.exit(1);
}

const t0 = Date.now();
const results = new Array(chosen.length);
let next = 0;
async function worker() {
  while (next < chosen.length) {
    const i = next++;
    const r = await runScenario(chosen[i]);
    results[i] = r;
    if (r.ok) console.log(`ok   ${r.name} (${r.ms} ms)`);
    else console.log(`FAIL ${r.name} (${r.ms} ms)\n     ${String(r.error?.stack || r.error).split('\n').slice(0, 8).join('\n     ')}`);
  }
}
await Promise.all(Array.from({ length: Math.min(jobs, chosen.length) }, worker));

const failed = results.filter((r) => !r.ok);
console.log(`\nbrowser scenarios: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
for (const r of failed) console.log(`  FAIL ${r.name}`);
console.log(`${chosen.length - failed.length} passed, ${failed.length} failed`);
process.exit(failed.length ? 1 : 0);
