#!/usr/bin/env node
// trace_tasks.mjs — what the long tasks of a Chromium trace spend their time
// on. Reads a trace (the JSON written by bench_page.mjs --trace FILE, or
// saved from DevTools' Performance panel), finds the page's main thread
// (CrRendererMain with the most task time) and its tasks over --min ms
// (default 30), and prints for each:
//   - its events as a tree (function calls, timers, message events, GC,
//     style, layout, paint...), those over --show ms (default 1);
//   - the JS functions the sampling profiler saw in it, by self time and by
//     total time (samples of the trace's 'disabled-by-default-v8.cpu_profiler').
// Usage: node tools/trace_tasks.mjs TRACE.json [--min 30] [--show 1] [--top 15]

import fs from 'node:fs';

const args = process.argv.slice(2);
const opt = (k, d) => { const i = args.indexOf(k); return i >= 0 ? Number(args[i + 1]) : d; };
const file = args.find((a, i) => !a.startsWith('--') && !(i > 0 && args[i - 1].startsWith('--')));
if (!file) { console.error('usage: node tools/trace_tasks.mjs TRACE.json [--min 30] [--show 1] [--top 15]'); process.exit(1); }
const MIN = opt('--min', 30), SHOW = opt('--show', 1), TOP = opt('--top', 15);

const raw = JSON.parse(fs.readFileSync(file, 'utf8'));
const events = Array.isArray(raw) ? raw : raw.traceEvents;
const TASKS = new Set(['ThreadControllerImpl::RunTask', 'RunTask']);

// The main threads of renderers, and the one with the most task time.
const names = new Map(); // "pid:tid" -> thread name
for (const e of events) if (e.ph === 'M' && e.name === 'thread_name') names.set(`${e.pid}:${e.tid}`, e.args.name);
const taskTime = new Map();
for (const e of events) {
  if (e.ph !== 'X' || !TASKS.has(e.name)) continue;
  const k = `${e.pid}:${e.tid}`;
  if (names.get(k) === 'CrRendererMain') taskTime.set(k, (taskTime.get(k) || 0) + (e.dur || 0));
}
const main = [...taskTime].sort((a, b) => b[1] - a[1])[0]?.[0];
if (!main) { console.error('no CrRendererMain tasks in this trace'); process.exit(1); }
const [pid, tid] = main.split(':').map(Number);
const onMain = events.filter((e) => e.pid === pid && e.tid === tid && e.ph === 'X' && Number.isFinite(e.dur))
  .sort((a, b) => a.ts - b.ts || b.dur - a.dur);

// The sampling profiler's samples on the main thread: [ts, node id], nodes by id.
const nodes = new Map(); // id -> {name, parent}
const samples = [];
const profiles = new Map(); // profile id -> {start, t}
for (const e of events) {
  if (e.pid !== pid || e.name !== 'Profile' || e.tid !== tid) continue;
  profiles.set(e.id, { t: e.args.data.startTime });
}
for (const e of events) {
  if (e.pid !== pid || e.name !== 'ProfileChunk' || !profiles.has(e.id)) continue;
  const prof = profiles.get(e.id);
  const cp = e.args.data.cpuProfile || {};
  for (const n of cp.nodes || []) {
    const f = n.callFrame;
    const where = f.url ? `${f.url.replace(/^.*\//, '')}:${f.lineNumber + 1}` : '';
    nodes.set(`${e.id}/${n.id}`, { name: `${f.functionName || '(anonymous)'}${where ? ` ${where}` : ''}`, parent: n.parent ? `${e.id}/${n.parent}` : null });
  }
  const deltas = e.args.data.timeDeltas || [];
  (cp.samples || []).forEach((s, i) => { prof.t += deltas[i] || 0; samples.push([prof.t, `${e.id}/${s}`]); });
}
samples.sort((a, b) => a[0] - b[0]);

const ms = (us) => (us / 1000).toFixed(1);
const label = (e) => {
  const d = e.args?.data || {};
  const bits = [d.functionName, d.type, d.url && d.url.replace(/^.*\//, ''), d.lineNumber && `:${d.lineNumber}`].filter(Boolean);
  return `${e.name}${bits.length ? ` (${bits.join(' ')})` : ''}`;
};

// tasks over MIN ms, the outermost only (RunTask nests in ThreadControllerImpl::RunTask)
const long = onMain.filter((e) => TASKS.has(e.name) && e.dur >= MIN * 1000)
  .filter((e, i, all) => !all.some((o) => o !== e && o.ts <= e.ts && o.ts + o.dur >= e.ts + e.dur && (o.dur > e.dur || all.indexOf(o) < i)));
console.log(`main thread pid ${pid} tid ${tid}: ${onMain.filter((e) => TASKS.has(e.name)).length} tasks, ${long.length} over ${MIN} ms; `
  + `${samples.length} profiler samples`);
for (const t of long) {
  console.log(`\ntask at ${ms(t.ts)} ms: ${ms(t.dur)} ms`);
  // the tree: the events inside the task, nested by time
  const inside = onMain.filter((e) => e !== t && e.ts >= t.ts && e.ts + e.dur <= t.ts + t.dur);
  const stack = [];
  for (const e of inside) {
    while (stack.length && stack[stack.length - 1].ts + stack[stack.length - 1].dur <= e.ts) stack.pop();
    if (e.dur >= SHOW * 1000 && stack.length < 8) console.log(`  ${'  '.repeat(stack.length)}${ms(e.dur).padStart(6)}  ${label(e)}`);
    stack.push(e);
  }
  // the profiler's view of the same time
  const inTask = samples.filter(([ts]) => ts >= t.ts && ts <= t.ts + t.dur);
  if (!inTask.length) continue;
  const self = new Map(), total = new Map();
  let prev = t.ts;
  for (const [ts, id] of inTask) {
    const dt = ts - prev; prev = ts;
    const n = nodes.get(id);
    if (!n) continue;
    self.set(n.name, (self.get(n.name) || 0) + dt);
    const seen = new Set();
    for (let p = id; p; p = nodes.get(p)?.parent) {
      const nm = nodes.get(p)?.name;
      if (!nm || seen.has(nm)) continue;
      seen.add(nm);
      total.set(nm, (total.get(nm) || 0) + dt);
    }
  }
  const top = (m) => [...m].filter(([n]) => !/^\((root|program|idle)\)/.test(n) || m === self).sort((a, b) => b[1] - a[1]).slice(0, TOP);
  console.log(`  profiler, ${inTask.length} samples — self time:`);
  for (const [n, us] of top(self)) console.log(`    ${ms(us).padStart(6)}  ${n}`);
  console.log('  total time (with callees):');
  for (const [n, us] of top(total)) console.log(`    ${ms(us).padStart(6)}  ${n}`);
}
