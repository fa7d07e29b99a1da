// run_plan.js — what a run must hold for a question and whether the run the
// store holds answers it (pure: no DOM, no store of its own; page/runs.js
// plans and executes runs with it, the other controllers ask currentFor).

import { makeLikeRequest, makeAnalyzeRequest, withAnalysis, makeQkRequest, withQk, resultCovers, mergeNeeds, makePredictRequest, predictKey, makeScoresRequest, withScores } from '../lib/protocol.js';
import { comparing } from '../lib/compare.js';
import { compareKey } from '../engine/compare_runs.js';
import { snapshotCovers } from '../lib/snapshot.js';
import { viewById, VIEW_LIST } from '../views/index.js';
import { runKeyOf } from './store.js';

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
export const HELD = [
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
export const PARTS = [...AFTER, ...VIEW_LIST.flatMap((v) => v.runParts || [])];

/** What the run must hold for question s: the view's needs, and the
 *  comparison when one is shown (compare view, or heads switched off). */
export function needsOf(s) {
  const n = viewById(s.view).needs(s);
  return comparing(s) ? mergeNeeds(n, { embed: true, compare: compareKey(s) }) : n;
}

/** The run the store holds when it answers question s (else null). */
export function currentFor(store, s = store.get()) {
  const { last: run, key } = store.run();
  if (!run || key !== runKeyOf(s)) return null;
  const v = viewById(s.view);
  if (run.snapshot && !(v.snapshot && snapshotCovers(run.snapshot, s, v.snapshot).ok)) return null;
  const needs = run.snapshot ? v.needs(s) : needsOf(s);
  if (!resultCovers(run, needs, s.layer)) return null;
  // a view's own kinds of data (descriptor.runParts): a snapshot's are its spec's to judge (above)
  return run.snapshot || PARTS.every((p) => !needs[p.need] || p.covered(run, needs[p.need], s)) ? run : null;
}
