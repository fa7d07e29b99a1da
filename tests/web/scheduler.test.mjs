// scheduler.test.mjs — web/js/engine/scheduler.js: latest wins, nothing lost.
import test from 'node:test';
import assert from 'node:assert/strict';
import { RunScheduler } from '../../web/js/engine/scheduler.js';

/** A page-like harness: `state` changes; each run returns its input after
 *  the test resolves it. */
function harness(opts = {}) {
  const h = { state: 'a', started: [], kept: [], drawn: [], errors: [], pending: [] };
  let clock = 0;
  const timers = {
    queue: [],
    setTimeout(fn, ms) { const t = { fn, at: clock + ms, live: true }; this.queue.push(t); return t; },
    clearTimeout(t) { if (t) t.live = false; },
  };
  h.tick = (ms) => {
    clock += ms;
    for (const t of timers.queue.splice(0)) {
      if (!t.live) continue;
      if (t.at <= clock) t.fn(); else timers.queue.push(t);
    }
  };
  h.advance = (ms) => { clock += ms; };
  h.s = new RunScheduler({
    request: () => (h.state === null ? null : { input: h.state }),
    execute: (job) => new Promise((resolve, reject) => {
      h.started.push(job.input);
      h.pending.push({ job, resolve, reject, t: clock });
    }),
    keep: (r) => h.kept.push(r),
    isCurrent: (r) => r === `out:${h.state}`,
    deliver: (r) => h.drawn.push(r),
    fail: (e, job) => h.errors.push(`${job.input}:${e.message}`),
    timers,
    now: () => clock,
    ...opts,
  });
  // Finish the oldest run in flight.
  h.finish = async (err = null) => {
    const p = h.pending.shift();
    if (err) p.reject(new Error(err)); else p.resolve(`out:${p.job.input}`);
    await new Promise((r) => setImmediate(r));
  };
  return h;
}

test('a lone input runs at once (leading edge), drawn once', async () => {
  const h = harness();
  h.s.schedule();
  h.tick(0);
  assert.deepEqual(h.started, ['a'], 'no debounce wait when nothing is in flight and no input came just before');
  await h.finish();
  assert.deepEqual(h.drawn, ['out:a']);
});

test('typing fast: the first key runs at once, the rest of the burst becomes one run of the last input', async () => {
  const h = harness();
  for (const c of ['b', 'bc', 'bcd']) { h.state = c; h.s.schedule(); h.tick(10); }
  assert.deepEqual(h.started, ['b'], 'the keys after the first wait while its run is in flight');
  h.tick(100);
  assert.deepEqual(h.started, ['b'], 'still one run in flight');
  await h.finish();
  assert.deepEqual(h.drawn, [], 'the superseded result is not drawn');
  assert.deepEqual(h.started, ['b', 'bcd'], 'the inputs between are skipped');
  await h.finish();
  assert.deepEqual(h.drawn, ['out:bcd']);
});

test('input within the delay of the last input is debounced even when no run is in flight', async () => {
  const h = harness();
  h.s.schedule(); h.tick(0);
  h.advance(5);
  await h.finish(); // the run took 5 ms: the delay is minDelay (8 ms)
  assert.equal(h.s.lastMs, 5);
  h.state = 'b'; h.s.schedule(); // 5 ms after the last input
  h.tick(0);
  assert.deepEqual(h.started, ['a'], 'not at once');
  h.tick(7);
  assert.deepEqual(h.started, ['a']);
  h.tick(1);
  assert.deepEqual(h.started, ['a', 'b'], 'after minDelay');
  await h.finish();
  h.advance(20);
  h.state = 'c'; h.s.schedule(); h.tick(0); // quiet for longer than the delay: at once again
  assert.deepEqual(h.started, ['a', 'b', 'c']);
});

test('a key held down while long runs go: never more than one run in flight and one wanted', async () => {
  const h = harness();
  h.s.lastMs = 1000; // runs take a second: the delay is the 250 ms cap
  for (let i = 0; i < 40; i++) { h.state = `k${i}`; h.s.schedule(); h.tick(30); }
  assert.deepEqual(h.started, ['k0'], '1.2 s of keys: only the first started');
  assert.equal(h.s.again, false, 'each key pushes the debounce back');
  h.tick(250);
  assert.equal(h.s.again, true, 'the last key, once its delay passed, is wanted after the run in flight');
  assert.deepEqual(h.started, ['k0']);
  await h.finish();
  assert.deepEqual(h.started, ['k0', 'k39']);
  await h.finish();
  assert.deepEqual(h.drawn, ['out:k39']);
  assert.equal(h.s.runs, 2);
});

test('overlapping requests: one run in flight, the superseded result is kept but not drawn, the latest is drawn', async () => {
  const h = harness();
  h.s.schedule(0); h.tick(0);
  assert.deepEqual(h.started, ['a']);
  for (const c of ['b', 'c', 'd']) { h.state = c; h.s.schedule(0); h.tick(0); }
  assert.deepEqual(h.started, ['a'], 'no second run while one is in flight');
  await h.finish();
  assert.deepEqual(h.kept, ['out:a']);
  assert.deepEqual(h.drawn, [], 'the stale result is not drawn');
  assert.deepEqual(h.started, ['a', 'd'], 'the newest input runs next, the ones between are skipped');
  await h.finish();
  assert.deepEqual(h.drawn, ['out:d']);
  assert.equal(h.s.inFlight, false);
});

test('no lost final state: input that changes without a new schedule() is caught by isCurrent', async () => {
  const h = harness();
  h.s.schedule(0); h.tick(0);
  h.state = 'z'; // e.g. state changed by a path that did not schedule
  await h.finish();
  assert.deepEqual(h.drawn, []);
  assert.deepEqual(h.started, ['a', 'z']);
  await h.finish();
  assert.deepEqual(h.drawn, ['out:z']);
});

test('errors: the newest run\'s error is reported; a superseded run\'s error is not, and the newest still runs', async () => {
  const h = harness();
  h.s.schedule(0); h.tick(0);
  h.state = 'b'; h.s.schedule(0); h.tick(0);
  await h.finish('boom a');
  assert.deepEqual(h.errors, [], 'superseded error dropped');
  assert.deepEqual(h.started, ['a', 'b']);
  await h.finish('boom b');
  assert.deepEqual(h.errors, ['b:boom b']);
  assert.equal(h.s.inFlight, false);
  h.state = 'c'; h.s.schedule(0); h.tick(0); // usable after an error
  await h.finish();
  assert.deepEqual(h.drawn, ['out:c']);
});

test('request() returning null starts nothing; the delay follows the last run, clamped', async () => {
  const h = harness();
  h.state = null;
  h.s.schedule(0); h.tick(0);
  assert.deepEqual(h.started, []);
  assert.equal(h.s.inFlight, false);
  h.state = 'a';
  h.s.schedule(0); h.tick(0);
  h.advance(1000);
  await h.finish();
  assert.equal(h.s.lastMs, 1000);
  h.state = 'b';
  h.s.schedule(); // idle: would start at once…
  h.state = 'c';
  h.s.schedule(); // …but a second input before it did: debounced
  h.tick(249);
  assert.deepEqual(h.started, ['a'], 'waits the 250 ms cap');
  h.tick(1);
  assert.deepEqual(h.started, ['a', 'c']);
});
