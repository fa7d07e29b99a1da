// checks.mjs — table-driven tests: a test body calls check(ok, what) for each
// figure; every check is counted and every failed one kept with its
// description, and the test fails at its end listing them all, so one run
// shows each figure that is off (as the kernels, encoder, shapes and fidelity
// tests want), not only the first.
//
//   checkedTest('matmul: SIMD vs scalar', () => { check(err <= TOL, `T=${T}: ${err} > ${TOL}`); });
import assert from 'node:assert/strict';
import { test } from 'node:test';

let current = null;

/** Counts a check of the running checkedTest; a false ok records what
 *  (a string, or a function giving it). Returns ok. */
export function check(ok, what) {
  if (!current) throw new Error('check() outside a checkedTest()');
  current.n++;
  if (!ok) current.failed.push(typeof what === 'function' ? what() : what);
  return ok;
}

/** node:test's test(name, [options], fn) whose body uses check(); test is
 *  the test function to register with (e.g. nativeTest of tests/lib/backend.mjs). */
export function checkedTest(name, opts, fn, register = test) {
  if (typeof opts === 'function') [opts, fn] = [{}, opts];
  return register(name, opts, async (t) => {
    const mine = (current = { n: 0, failed: [] });
    try {
      await fn(t);
    } finally {
      current = null;
    }
    t.diagnostic(`${mine.n} checks, ${mine.failed.length} failed`);
    assert.ok(mine.failed.length === 0, `${mine.failed.length} of ${mine.n} checks failed:\n  ${mine.failed.join('\n  ')}`);
  });
}
