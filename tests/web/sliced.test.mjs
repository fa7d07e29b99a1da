// views/common.js sliced: a drawing's steps spread over several tasks (the
// head and model views at 512 tokens), with the page waiting on its promise.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sliced } from '../../web/js/views/common.js';

/** Steps that each take about ms of busy time, logging their index. */
function* busySteps(n, ms, log) {
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    while (performance.now() - t0 < ms);
    log.push(i);
    yield;
  }
}

test('sliced runs every step in order, over several tasks, and resolves true', async () => {
  const log = [];
  const job = sliced(busySteps(12, 4, log), 10, 5);
  const atOnce = log.length;
  assert.ok(atOnce >= 1 && atOnce < 12, `the first slice runs at once and stops near its budget (${atOnce} steps)`);
  assert.equal(await job.done, true);
  assert.deepEqual(log, [...Array(12).keys()]);
});

test('cancel stops before the next step and resolves false; flush finishes at once', async () => {
  const log = [];
  const job = sliced(busySteps(20, 3, log), 6, 3);
  const n = log.length;
  job.cancel();
  assert.equal(await job.done, false);
  assert.equal(log.length, n, 'no step after cancel');
  const log2 = [];
  const job2 = sliced(busySteps(20, 3, log2), 6, 3);
  assert.ok(log2.length < 20);
  job2.flush();
  assert.equal(log2.length, 20, 'flush ran the rest in this task');
  assert.equal(await job2.done, true);
  job2.flush(); // a finished job: nothing left
  assert.equal(log2.length, 20);
});

test('a step that throws rejects the promise with its error', async () => {
  function* bad() { yield; throw new Error('step 2 failed'); }
  await assert.rejects(sliced(bad(), 1, 0).done, /step 2 failed/);
});
