#!/usr/bin/env node
// Browser tests of the built site (dist/, from `make site`) in headless
// Chromium through playwright-core.
//
//   node tests/browser/run.mjs            every scenario
//   node tests/browser/run.mjs offline    only scenarios whose name contains "offline"
//   BROWSER_JOBS=1 node tests/browser/run.mjs    one scenario at a time (default 2)
//
// Each run writes every scenario's time and page loads, slowest first, to
// build/browser-timings.txt (and build/browser-timings.json).
//
// Loads every tests/browser/*.scenarios.mjs (sorted by name); each registers
// scenarios with harness.mjs's scenario(). Each scenario runs in its own
// fresh Chromium profile against its own server (see harness.mjs for what it
// gets and what fails it). Screenshots go to build/screenshots/.

import { add } from '../../tools/test_count.mjs';
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
    if (r.ok) console.log(`ok   ${r.name} (${r.ms} ms, ${r.loads} page loads, ${r.shots} screenshots)`);
    else {
      console.log(`FAIL ${r.name} (${r.ms} ms)\n     ${String(r.error?.stack || r.error).split('\n').slice(0, 8).join('\n     ')}`);
      // (what the page logged: a page that never became ready may say why there)
      if (r.consoleErrors?.length) console.log(`     console errors seen: ${r.consoleErrors.slice(-5).map((e) => e.slice(0, 300)).join('\n       ')}`);
    }
  }
}
await Promise.all(Array.from({ length: Math.min(jobs, chosen.length) }, worker));

const failed = results.filter((r) => !r.ok);
const wall = (Date.now() - t0) / 1000;
const sum = results.reduce((a, r) => a + r.ms, 0) / 1000;
const shots = results.reduce((a, r) => a + r.shots, 0);
const shotSum = results.reduce((a, r) => a + r.shotMs, 0) / 1000;
{
  // Where the time went: each scenario's time and page loads, slowest first.
  const byTime = [...results].sort((a, b) => b.ms - a.ms);
  const out = path.join(HERE, '..', '..', 'build');
  fs.mkdirSync(out, { recursive: true });
  fs.writeFileSync(path.join(out, 'browser-timings.txt'),
    `# ${results.length} scenarios, ${jobs} job(s): ${wall.toFixed(1)} s wall, ${sum.toFixed(1)} s summed (${shots} screenshots: ${shotSum.toFixed(1)} s); ms, page loads, screenshots, name (slowest first)\n`
    + byTime.map((r) => `${String(r.ms).padStart(7)} ${String(r.loads).padStart(3)} ${String(r.shots).padStart(3)} ${r.ok ? '' : 'FAIL '}${r.name}`).join('\n') + '\n');
  fs.writeFileSync(path.join(out, 'browser-timings.json'), `${JSON.stringify(Object.fromEntries(byTime.map((r) => [r.name, r.ms])), null, 1)}\n`);
}
console.log(`\nbrowser scenarios: ${wall.toFixed(1)} s (${sum.toFixed(1)} s summed over ${jobs} job(s), ${shots} screenshots ${shotSum.toFixed(1)} s); times: build/browser-timings.txt`);
for (const r of failed) console.log(`  FAIL ${r.name}`);
console.log(`${chosen.length - failed.length} passed, ${failed.length} failed`);
add('browser', chosen.length - failed.length, failed.length); // make test's one line of totals (tools/test_count.mjs)
process.exit(failed.length ? 1 : 0);
