// test_count.mjs — one summary for every runner of `make test`.
//
// Each runner adds one line to build/test-counts.jsonl (or $BERTLENS_COUNTS)
// when it ends: {"suite", "pass", "fail", "skip"}.
//   - node:test files: this module is also a node:test reporter
//     (--test-reporter=./tools/test_count.mjs in the Makefile's NODE_TEST);
//     it counts every test and subtest (suites are not counted: their tests
//     are), and names the suite by BERTLENS_SUITE, else BERTLENS_BACKEND, else "web";
//   - the browser scenarios (tests/browser/run.mjs) and the notebook checks
//     call add() themselves, the fuzz-corpus replays through the command line;
//
//   node tools/test_count.mjs reset              empty the file (make test's first step)
//   node tools/test_count.mjs add SUITE PASS [FAIL [SKIP]]
//   node tools/test_count.mjs total              one line: the totals and each suite's
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
export const COUNTS = process.env.BERTLENS_COUNTS || path.join(ROOT, 'build', 'test-counts.jsonl');

export function add(suite, pass, fail = 0, skip = 0) {
  fs.mkdirSync(path.dirname(COUNTS), { recursive: true });
  fs.appendFileSync(COUNTS, JSON.stringify({ suite, pass, fail, skip }) + '\n');
}

// the node:test reporter: yields nothing (the TAP or spec reporter prints), adds one line at the end
export default async function* countTests(source) {
  const n = { pass: 0, fail: 0, skip: 0 };
  for await (const { type, data } of source) {
    if (type !== 'test:pass' && type !== 'test:fail') continue;
    if (data.details && data.details.type === 'suite') continue;
    if (type === 'test:fail') n.fail++;
    else if (data.skip !== undefined || data.todo !== undefined) n.skip++;
    else n.pass++;
  }
  add(process.env.BERTLENS_SUITE || process.env.BERTLENS_BACKEND || 'web', n.pass, n.fail, n.skip);
}

export function total(text) {
  const by = new Map();
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const r = JSON.parse(line);
    const s = by.get(r.suite) || { pass: 0, fail: 0, skip: 0 };
    for (const k of ['pass', 'fail', 'skip']) s[k] += Number(r[k]) || 0;
    by.set(r.suite, s);
  }
  const sum = (k) => [...by.values()].reduce((a, s) => a + s[k], 0);
  const parts = [...by].map(([name, s]) => `${name} ${s.pass}${s.fail ? ` (${s.fail} failed)` : ''}`);
  return { pass: sum('pass'), fail: sum('fail'), skip: sum('skip'),
    line: `tests: ${sum('pass')} passed, ${sum('fail')} failed, ${sum('skip')} skipped — ${parts.join(', ')}` };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [cmd, ...args] = process.argv.slice(2);
  if (cmd === 'reset') fs.rmSync(COUNTS, { force: true });
  else if (cmd === 'add' && args.length >= 2 && args.slice(1).every((a) => /^\d+$/.test(a))) add(args[0], ...args.slice(1).map(Number));
  else if (cmd === 'total') {
    const t = total(fs.existsSync(COUNTS) ? fs.readFileSync(COUNTS, 'utf8') : '');
    console.log(t.line);
    process.exit(t.fail ? 1 : 0);
  } else {
    console.error('usage: node tools/test_count.mjs reset | add SUITE PASS [FAIL [SKIP]] | total');
    process.exit(2);
  }
}
