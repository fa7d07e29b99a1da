// scheduler.js — "latest wins" scheduling of model runs (plain module, no
// DOM; tests/web/scheduler.test.mjs).
//
// Input arrives faster than the model runs. A lone input starts a run at
// once (leading edge: nothing in flight, no timer pending and no input
// within the last delay), so one keystroke does not wait out a debounce
// that is only there for bursts. Input that follows within the delay, or
// arrives while a run is in flight, is debounced (the delay follows how
// long runs take: short inputs feel instant, long ones do not queue up
// work). At most one run is in flight; while one is, the scheduler
// remembers only that another is wanted. The job is built when the
// run starts (request()), so it always reflects the newest state. A run
// whose result is superseded by newer input is kept (keep) but not drawn;
// the newest one is drawn (deliver) — or its error reported (fail) — and
// nothing wanted last is ever dropped.
//
//   const s = new RunScheduler({
//     request: () => job | null,        // null: nothing to run now
//     execute: (job) => Promise<result>,
//     keep: (result, job) => {},        // every finished run (optional)
//     isCurrent: (result, job) => bool, // still what the state asks for?
//     deliver: (result, job) => {},     // the run to draw
//     fail: (error, job) => {},         // the newest run failed
//   });
//   s.schedule();     // input: at once when idle, else debounced
//   s.schedule(0);    // at once (next tick)

export class RunScheduler {
  constructor({ request, execute, deliver, fail, keep = () => {}, isCurrent = () => true,
    minDelay = 8, maxDelay = 250, timers = globalThis, now = () => globalThis.performance.now() }) {
    Object.assign(this, { request, execute, deliver, fail, keep, isCurrent, minDelay, maxDelay, timers, now });
    this.lastMs = 30; // how long the last run took (ms)
    this.inFlight = false;
    this.again = false;
    this.timer = 0;
    this.timerDue = false; // a timer is pending
    this.lastInput = -Infinity; // when schedule() without a delay was last called
    this.runs = 0; // runs started (for tests and the page's data attributes)
  }

  /** Input wants a run. Without `delay`: at once (next tick) when the
   *  scheduler is idle — no run in flight, no timer pending, no input within
   *  the last delay — else debounced by the last run's duration, clamped to
   *  [minDelay, maxDelay]. With `delay`: after that many ms. A newer call
   *  replaces a pending timer. */
  schedule(delay) {
    const wait = Math.max(this.minDelay, Math.min(this.maxDelay, this.lastMs));
    let ms = delay;
    if (ms === undefined || ms === null) {
      const t = this.now();
      const idle = !this.inFlight && !this.timerDue && t - this.lastInput >= wait;
      this.lastInput = t;
      ms = idle ? 0 : wait;
    }
    this.timers.clearTimeout(this.timer);
    this.timerDue = true;
    this.timer = this.timers.setTimeout(() => { this.timerDue = false; this.start(); }, ms);
  }

  /** Start a run now, or mark that one is wanted after the one in flight. */
  async start() {
    if (this.inFlight) { this.again = true; return; }
    const job = this.request();
    if (job === null || job === undefined) return;
    this.inFlight = true;
    this.again = false;
    this.runs++;
    const t0 = this.now();
    let result;
    try {
      result = await this.execute(job);
    } catch (e) {
      this.inFlight = false;
      if (this.again) { this.again = false; this.start(); return; } // superseded: run the newest
      this.fail(e, job);
      return;
    } finally {
      this.lastMs = this.now() - t0;
    }
    this.inFlight = false;
    this.keep(result, job);
    if (this.again || !this.isCurrent(result, job)) {
      this.again = false;
      this.start();
      return;
    }
    this.deliver(result, job);
  }
}
