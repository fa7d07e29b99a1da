// runs.js — running the model for the state's question: what a run must
// hold (the view's needs, a comparison), whether the last run still answers
// the question (decided once per cycle), and the scheduler (scheduler.js,
// latest input wins) that plans, executes and delivers runs to the drawing.

import { Engine } from '../engine/engine.js';
import { makeRunRequest, makeLikeRequest, makeAnalyzeRequest, withAnalysis, makeQkRequest, withQk, resultCovers, mergeNeeds, ANALYSIS, makePredictRequest, predictKey, makeScoresRequest, withScores } from '../lib/protocol.js';
import { comparing, fitAblate, maskSet } from '../lib/compare.js';
import { Comparer, compareKey, LOCAL_MODEL } from '../engine/compare_runs.js';
import { loadListedBundle, loadFileBundle } from '../engine/bundles.js';
import { snapshotCovers } from '../lib/snapshot.js';
import { viewById, VIEW_LIST } from '../views/index.js';
import { RunScheduler } from '../engine/scheduler.js';
import { ASSETS } from '../engine/assets.js';
import { notice, clearNotice, fail, setPageState } from './notices.js';

const absolute = (p) => new URL(p, document.baseURI).href;

// What a run may be given besides what the model computes as it runs, one
// row per kind of data a view may need (its descriptor's needs(s) names
// the kind). HELD: read from the run the worker still holds (no new run
// when that is all that is missing: at 512 tokens a run is ~0.2-0.4 s
// before any analysis); if the worker ran the model since, it runs again.
// AFTER: asked once the run is there; a row with rerun runs the model again
// when the worker no longer holds it. A view with a kind of data of its own
// adds its rows as descriptor.runParts (views/index.js), nothing here.
//   need       the needs field that asks for it
//   covered(run, need, s, held)   whether the run has it
//   ask(engine, run, need, job)   the worker's answer
//   into(run, out, need)          the run with it
//   ms         the <body data-*> the worker's time goes to (tests print it)
const HELD = [
  { need: 'qk', ms: 'qkMs', covered: (run, need, s, held) => resultCovers(run, { ...held, qk: true }, s.layer),
    ask: (engine, run) => engine.qk(makeQkRequest(run.runId)), into: withQk },
  { need: 'analysis', ms: 'analyzeMs', covered: (run, need, s, held) => resultCovers(run, { ...held, analysis: need }, s.layer),
    ask: (engine, run, need) => engine.analyze(makeAnalyzeRequest(run.runId, need)), into: withAnalysis },
  { need: 'like', ms: 'likeMs', covered: (run, need, s, held) => resultCovers(run, { ...held, like: need }, s.layer),
    ask: (engine, run, need) => engine.like(makeLikeRequest(run.runId, need)), into: (run, like) => ({ ...run, like }) },
];
const AFTER = [
  { need: 'scores', rerun: true, covered: (run, need) => resultCovers(run, { scores: need }), // (the neuron view's head)
    ask: (engine, run, need) => engine.scores(makeScoresRequest(run.runId, need)), into: withScores },
  { need: 'predict', rerun: true, ms: 'predictMs', // the masked-LM head reads the run the worker holds
    job: (need, s) => ({ ...need, a: s.text, b: s.text_b || null }),
    covered: (run, need) => !!(run.predict && run.predict.key === predictKey(need)),
    ask: (engine, run, need) => engine.predict(makePredictRequest(run.runId, need)),
    into: (run, out, need) => ({ ...run, predict: { ...out, key: predictKey(need) } }) },
];
const PARTS = [...AFTER, ...VIEW_LIST.flatMap((v) => v.runParts || [])];

/** The inputs a run answers: the texts and the heads switched off. */
export const runKeyOf = (s) => JSON.stringify([s.text, s.text_b, s.ablate]);

/** page: {store, models, drawing, boot}. */
export function createRuns(page) {
  let last = null; // the last run kept (worker result or snapshot run)
  let lastKey = null; // runKeyOf the state it ran for
  let inputAt = 0; // when the reader last typed
  let blocked = null; // runKeyOf an input that stopped the model engine: not run again (models.js recover)

  /** What the run must hold for state s: the view's needs, and the
   *  comparison when one is shown (compare view, or heads switched off). */
  function needsOf(s) {
    const n = viewById(s.view).needs(s);
    return comparing(s) ? mergeNeeds(n, { embed: true, compare: compareKey(s) }) : n;
  }

  /** The heads switched off in state s, as [[layer, head], ...]. */
  function maskOf(s) {
    const info = page.models.info();
    return info ? fitAblate(s.ablate, info.config.n_layers, info.config.n_heads).heads : [];
  }

  /** The last run when it answers state s (else null). */
  function currentFor(s) {
    const run = last;
    if (!run || lastKey !== runKeyOf(s)) return null;
    const v = viewById(s.view);
    if (run.snapshot && !(v.snapshot && snapshotCovers(run.snapshot, s, v.snapshot).ok)) return null;
    const needs = run.snapshot ? v.needs(s) : needsOf(s);
    if (!resultCovers(run, needs, s.layer)) return null;
    // a view's own kinds of data (descriptor.runParts): a snapshot's are its spec's to judge (above)
    return run.snapshot || PARTS.every((p) => !needs[p.need] || p.covered(run, needs[p.need], s)) ? run : null;
  }

  // Comparisons (compare.js): the partner run, on this engine or on a second
  // model's own worker, and the per-head distances computed in C.
  const comparer = new Comparer({
    mainEngine: () => page.models.engine(),
    async makeEngine() {
      const e = new Engine(absolute(ASSETS.worker));
      await e.init(ASSETS.glue && absolute(ASSETS.glue), ASSETS.wasm && absolute(ASSETS.wasm), ASSETS.wasmBinary?.());
      return e;
    },
    async loadModel(engine, id) {
      const entry = page.models.list().find((m) => m.id === id);
      if (!entry) throw new Error(`There is no model "${id}" in this site's list to compare with.`);
      let info = null;
      const inUse = page.models.entry();
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
    pageInfo: () => page.models.info(),
  });

  /** A bundle file of the reader's as the second model of a comparison:
   *  true once its engine holds it (the view then asks for it). */
  async function compareWithFile(file) {
    if (!page.models.engine() || !page.models.info()) return false;
    try {
      const buffer = await loadFileBundle(file);
      await comparer.useFile(file.name, async (engine) => {
        const res = await engine.load(buffer);
        if (res.error) throw new Error(`Could not load ${file.name}: ${res.error}.`);
        return res.info;
      });
      clearNotice('cmp-file');
    } catch (e) {
      notice('cmp-file', 'error', e.message);
      return false;
    }
    if (last) last = { ...last, compare: null }; // a new second model: compare again
    return true;
  }

  /** Model runs, latest input wins (scheduler.js): the job is built from the
   *  state when the run starts; a result that newer input superseded is kept
   *  but not drawn. */
  const scheduler = new RunScheduler({
    request() {
      if (page.boot.snapshotMode()) { page.boot.snapshotStep(); return null; }
      if (!page.models.info()) return null;
      const s = page.store.get();
      const key = runKeyOf(s);
      if (key === blocked) { setPageState('error'); return null; } // the notice says why
      setPageState('loading');
      const needs = needsOf(s);
      const mask = maskOf(s);
      const job = { key, request: makeRunRequest({ a: s.text, b: s.text_b || null, needs, mask }) };
      if (needs.compare) job.compare = { state: { ...s }, mask };
      job.after = PARTS.filter((p) => needs[p.need]).map((p) => ({ part: p, need: p.job ? p.job(needs[p.need], s) : needs[p.need] }));
      // When all that is missing is what the worker can compute from the run
      // it still holds (HELD), the model does not run again.
      const run = last;
      const same = run && !run.snapshot && lastKey === key && run.runId;
      const held = { ...needs, ...Object.fromEntries([...HELD, ...PARTS].map((p) => [p.need, null])), qk: false, analysis: ANALYSIS.NONE, compare: null };
      if (same && resultCovers(run, held, s.layer)) {
        job.held = HELD.filter((p) => needs[p.need] && !p.covered(run, needs[p.need], s, held)).map((p) => ({ part: p, need: needs[p.need] }));
        job.base = run; // only the comparison may be missing: no new page run
      }
      return job;
    },
    async execute(job) {
      const engine = page.models.engine();
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
        document.body.dataset.compareMs = run.compare.ms ? run.compare.ms.toFixed(1) : '';
      }
      return run;
    },
    keep(result, job) { // the result is kept; it never edits the question
      last = result;
      lastKey = job.key;
      blocked = null;
      page.models.ran();
      clearNotice('run');
      if (result.truncated) {
        notice('truncated', 'warn', `The text is too long for this model: it was truncated to ${result.T} tokens (the model's maximum, [CLS] and [SEP] included).`);
      } else clearNotice('truncated');
    },
    isCurrent: (result) => currentFor(page.store.get()) === result,
    deliver: (result) => page.drawing.draw(result),
    // (an engine that died: models.js recover says so, and restarts it)
    fail: (e) => { if (e && e.name !== 'EngineCrash') fail('run', `The model could not run on this text: ${e.message}`); },
  });

  /** The store's subscriber: typing runs the model (debounced by how long
   *  runs take); any other change redraws when the last run still answers,
   *  else runs at once. */
  function onState(s, prev, why) {
    if (why.typed) {
      inputAt = performance.now();
      setPageState('loading');
      scheduler.schedule();
      return;
    }
    if (!page.models.info()) return; // nothing to run yet (the URL still follows: url.js)
    setPageState('loading');
    const run = currentFor(s);
    if (run) page.drawing.draw(run);
    else scheduler.schedule(0);
  }

  return {
    onState,
    currentFor,
    /** The last run kept, current or not (token positions of clicks). */
    last: () => last,
    inputAt: () => inputAt,
    /** A run from elsewhere (a snapshot) for state s. */
    useRun(run, s) { last = run; lastKey = runKeyOf(s); },
    /** The input now asked for stopped the model engine: it is not run
     *  again (the page stays in its error state) until it changes. */
    block() { blocked = runKeyOf(page.store.get()); },
    /** A new model: earlier runs and comparisons were of the old one. */
    forget() { last = null; lastKey = null; comparer.reset(); },
    runNow: () => scheduler.schedule(0),
    busy: () => scheduler.inFlight,
    compareWithFile,
    compareFileName: () => (comparer.second && comparer.second.id === LOCAL_MODEL ? comparer.second.name : ''),
  };
}
