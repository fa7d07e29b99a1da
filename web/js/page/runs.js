// runs.js — running the model for the question: the scheduler
// (scheduler.js, latest input wins) that plans a run from the store (what
// it must hold: run_plan.js), executes it in the worker, keeps it in the
// store (dispatch 'run') and asks for it to be drawn (dispatch 'draw').

import { Engine } from '../engine/engine.js';
import { makeRunRequest, resultCovers, ANALYSIS } from '../lib/protocol.js';
import { fitAblate, maskSet } from '../lib/compare.js';
import { Comparer, compareKey, LOCAL_MODEL } from '../engine/compare_runs.js';
import { loadListedBundle, loadFileBundle } from '../engine/bundles.js';
import { RunScheduler } from '../engine/scheduler.js';
import { ASSETS } from '../engine/assets.js';
import { runKeyOf } from './store.js';
import { HELD, PARTS, needsOf, currentFor } from './run_plan.js';

const absolute = (p) => new URL(p, document.baseURI).href;

/** The runs of the model for the store's question. */
export function createRuns(store) {
  const info = () => store.model().info;
  const draw = (run) => store.dispatch({ type: 'draw', run });

  /** The heads switched off in state s, as [[layer, head], ...]. */
  function maskOf(s) {
    return info() ? fitAblate(s.ablate, info().config.n_layers, info().config.n_heads).heads : [];
  }

  // Comparisons (compare.js): the partner run, on this engine or on a second
  // model's own worker, and the per-head distances computed in C.
  const comparer = new Comparer({
    mainEngine: () => store.model().engine,
    async makeEngine() {
      const e = new Engine(absolute(ASSETS.worker));
      await e.init(ASSETS.glue && absolute(ASSETS.glue), ASSETS.wasm && absolute(ASSETS.wasm), ASSETS.wasmBinary?.());
      return e;
    },
    async loadModel(engine, id) {
      const entry = store.model().list.find((m) => m.id === id);
      if (!entry) throw new Error(`There is no model "${id}" in this site's list to compare with.`);
      let info = null;
      const inUse = store.model().entry;
      await loadListedBundle(entry, document.baseURI, () => {}, () => {}, {
        keep: inUse ? [inUse] : [],
        accept: async (buffer) => { // stored for next time only once the engine took it
          const res = await engine.load(buffer);
          if (res.error) throw new Error(`Could not load ${entry.name || id}: ${res.error}.`);
          info = res.info;
          return true;
        },
      });
      return info;
    },
    pageInfo: info,
  });

  /** A bundle file of the reader's as the second model of a comparison:
   *  true once its engine holds it (the view then asks for it). */
  async function compareWithFile(file) {
    if (!store.model().engine || !info()) return false;
    try {
      const buffer = await loadFileBundle(file);
      await comparer.useFile(file.name, async (engine) => {
        const res = await engine.load(buffer);
        if (res.error) throw new Error(`Could not load ${file.name}: ${res.error}.`);
        return res.info;
      });
      store.clearNotice('cmp-file');
    } catch (e) {
      store.notice('cmp-file', 'error', e.message);
      return false;
    }
    secondName();
    const { last, key } = store.run();
    if (last) store.dispatch({ type: 'run', run: { ...last, compare: null }, key }); // a new second model: compare again
    return true;
  }

  /** Model runs, latest input wins (scheduler.js): the job is built from the
   *  state when the run starts; a result that newer input superseded is kept
   *  but not drawn. */
  const scheduler = new RunScheduler({
    request() {
      if (store.snapshot()) { store.dispatch({ type: 'snapshot-step' }); return null; } // (boot.js)
      if (!info()) return null;
      const s = store.get();
      const key = runKeyOf(s);
      if (key === store.pending().blocked) { store.setPageState('error'); return null; } // the notice says why
      store.setPageState('loading');
      const needs = needsOf(s);
      const mask = maskOf(s);
      const job = { key, request: makeRunRequest({ a: s.text, b: s.text_b || null, needs, mask }) };
      if (needs.compare) job.compare = { state: { ...s }, mask };
      job.after = PARTS.filter((p) => needs[p.need]).map((p) => ({ part: p, need: p.job ? p.job(needs[p.need], s) : needs[p.need] }));
      // When all that is missing is what the worker can compute from the run
      // it still holds (HELD), the model does not run again.
      const { last: run, key: lastKey } = store.run();
      const same = run && !run.snapshot && lastKey === key && run.runId;
      const held = { ...needs, ...Object.fromEntries([...HELD, ...PARTS].map((p) => [p.need, null])), qk: false, analysis: ANALYSIS.NONE, compare: null };
      if (same && resultCovers(run, held, s.layer)) {
        job.held = HELD.filter((p) => needs[p.need] && !p.covered(run, needs[p.need], s, held)).map((p) => ({ part: p, need: needs[p.need] }));
        job.base = run; // only the comparison may be missing: no new page run
      }
      return job;
    },
    async execute(job) {
      const engine = store.model().engine;
      let run = job.base || null;
      const timed = (part, out) => { if (part.ms && out && Number.isFinite(out.ms)) document.body.dataset[part.ms] = out.ms.toFixed(1); }; // worker time (tests print it)
      if (run && job.held && job.held.length) {
        try {
          for (const { part, need } of job.held) {
            const out = await part.ask(engine, run, need, job);
            timed(part, out);
            run = part.into(run, out, need);
          }
        } catch { run = null; /* the worker ran the model since: run it again */ }
      }
      if (!run) run = await engine.run(job.request);
      for (const { part, need } of job.after) {
        if (part.covered(run, need)) continue;
        const ask = (r) => part.ask(engine, r, need, job);
        const out = part.rerun ? await ask(run).catch(async () => { run = await engine.run(job.request); return ask(run); }) : await ask(run);
        timed(part, out);
        run = part.into(run, out, need);
      }
      if (job.compare && !(run.compare && run.compare.key === compareKey(job.compare.state))) {
        const s = job.compare.state;
        const off = maskSet(s.ablate, run.L, run.H);
        run = { ...run, compare: await comparer.compare(s, run, job.compare.mask, off) };
        secondName();
        document.body.dataset.compareMs = run.compare.ms ? run.compare.ms.toFixed(1) : '';
      }
      return run;
    },
    keep(result, job) { // the result is kept; it never edits the question
      store.dispatch({ type: 'run', run: result, key: job.key });
      store.clearNotice('run');
      if (result.truncated) {
        store.notice('truncated', 'warn', `The text is too long for this model: it was truncated to ${result.T} tokens (the model's maximum, [CLS] and [SEP] included).`);
      } else store.clearNotice('truncated');
    },
    isCurrent: (result) => currentFor(store) === result,
    deliver: draw,
    // (an engine that died: models.js recover says so, and restarts it)
    fail: (e) => { if (e && e.name !== 'EngineCrash') store.fail('run', `The model could not run on this text: ${e.message}`); },
  });

  /** The second model's name in the store when it is a bundle file of the
   *  reader's (the compare view names it). */
  function secondName() {
    const name = comparer.second && comparer.second.id === LOCAL_MODEL ? comparer.second.name : '';
    if (store.model().compareFile !== name) store.dispatch({ type: 'model', patch: { compareFile: name } });
  }

  /** The store's subscriber: typing runs the model (debounced by how long
   *  runs take); any other change redraws when the last run still answers,
   *  else runs at once. */
  function onState(s, prev, why) {
    if (why.typed) {
      store.dispatch({ type: 'pending', patch: { inputAt: performance.now() } });
      store.setPageState('loading');
      scheduler.schedule();
      return;
    }
    if (!info()) return; // nothing to run yet (the URL still follows: url.js)
    store.setPageState('loading');
    const run = currentFor(store, s);
    if (run) draw(run);
    else scheduler.schedule(0);
  }

  return {
    onState,
    /** A new model (the store's 'forget'): comparisons were of the old one. */
    forget() { comparer.reset(); secondName(); },
    /** A plain redraw (window resize) of the current run, unless a run is on its way. */
    redraw() {
      const run = currentFor(store);
      if (run && !scheduler.inFlight) store.dispatch({ type: 'draw', run, keepState: true });
    },
    compareWithFile,
  };
}
