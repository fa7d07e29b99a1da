// test_count.test.mjs — make test's one line of totals (tools/test_count.mjs):
// the node:test reporter counts what node's own summary counts (tests and
// subtests, not suites; skips apart; failures), and the total sums every
// runner's line and fails when any failed.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const TOOL = path.join(ROOT, 'tools', 'test_count.mjs');

test('the reporter counts as node does, and the total sums the runners', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bl-count-'));
  try {
    const counts = path.join(dir, 'counts.jsonl');
    fs.writeFileSync(path.join(dir, 'x.test.mjs'), [
      "import { test, describe } from 'node:test';",
      "test('passes', () => {});",
      "test('skipped', { skip: 'why' }, () => {});",
      "test('todo', { todo: true }, () => {});",
      "test('fails', () => { throw new Error('no'); });",
      "test('parent', async (t) => { await t.test('child', () => {}); });",
      "describe('suite', () => { test('inside', () => {}); });",
    ].join('\n'));
    const env = { ...process.env, BERTLENS_COUNTS: counts, BERTLENS_SUITE: 'probe' };
    delete env.NODE_TEST_CONTEXT; // a run of its own, not a child of this one
    const r = spawnSync(process.execPath, ['--test', '--test-reporter=tap', '--test-reporter-destination=stdout',
      `--test-reporter=${TOOL}`, '--test-reporter-destination=stdout', 'x.test.mjs'], { cwd: dir, env, encoding: 'utf8' });
    assert.equal(r.status, 1, 'a failing test fails the run');
    const tap = Object.fromEntries([...r.stdout.matchAll(/^# (pass|fail|skipped|todo) (\d+)$/gm)].map((m) => [m[1], Number(m[2])]));
    const line = JSON.parse(fs.readFileSync(counts, 'utf8').trim());
    assert.deepEqual(line, { suite: 'probe', pass: tap.pass, fail: tap.fail, skip: tap.skipped + tap.todo });
    assert.deepEqual(line, { suite: 'probe', pass: 4, fail: 1, skip: 2 });

    const add = spawnSync(process.execPath, [TOOL, 'add', 'browser', '7'], { env, encoding: 'utf8' });
    assert.equal(add.status, 0);
    const total = spawnSync(process.execPath, [TOOL, 'total'], { env, encoding: 'utf8' });
    assert.equal(total.status, 1, 'a total with a failure fails');
    assert.equal(total.stdout.trim(), 'tests: 11 passed, 1 failed, 2 skipped — probe 4 (1 failed), browser 7');

    fs.writeFileSync(counts, '{"suite":"native","pass":3,"fail":0,"skip":1}\n{"suite":"native","pass":2,"fail":0,"skip":0}\n');
    const ok = spawnSync(process.execPath, [TOOL, 'total'], { env, encoding: 'utf8' });
    assert.equal(ok.status, 0);
    assert.equal(ok.stdout.trim(), 'tests: 5 passed, 0 failed, 1 skipped — native 5');
    assert.notEqual(spawnSync(process.execPath, [TOOL, 'add', 'x', 'many'], { env }).status, 0, 'a count that is not a number is refused');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
