// worker_held.js — part of the engine worker (web/js/worker.js lists its
// parts): 'like', 'analyze', 'qk' and 'scores' read the last run, still in
// the wasm state, without a new forward pass; each is refused (heldRun) when
// a newer run replaced that run.
/* global handle, P, mod, info, lastT, lastFlags, heldRun, likeDistances, analyzeState, queriesKeys, floats, lastError */

// Distances to another head from the last run's attention, still in the
// wasm heap (read in place, not copied).
handle('like', ({ request }) => {
  const { runId, like } = request;
  heldRun(runId);
  const t0 = performance.now();
  const out = likeDistances(info.config.n_layers, info.config.n_heads, lastT, like);
  out.ms = performance.now() - t0;
  return [out, [out.dist.buffer]];
});

// The analysis (ANALYSIS.HEADS or ROLLOUT) of the last run: a tab that needs
// an analysis the run did not compute gets it without running the model again.
handle('analyze', ({ request }) => {
  const { runId, analysis } = request;
  heldRun(runId);
  if (!(analysis >= P.ANALYSIS.HEADS && analysis <= P.ANALYSIS.ROLLOUT)) throw new Error(`no analysis level ${analysis}`);
  const t0 = performance.now();
  const transfer = [];
  const out = analyzeState(analysis, lastFlags, info.config.n_layers, lastT, transfer);
  return [{ ...out, runId, ms: performance.now() - t0 }, transfer];
});

// Every layer's queries and keys of the last run (every run keeps them):
// the neuron view gets them without running the model again.
handle('qk', ({ request }) => {
  const { runId } = request;
  heldRun(runId);
  const t0 = performance.now();
  const transfer = [];
  const H = info.config.n_heads;
  const out = queriesKeys(info.config.n_layers, H, lastT, info.config.hidden / H, transfer);
  if (!out.q) throw new Error('the state holds no queries and keys');
  return [{ ...out, runId, ms: performance.now() - t0 }, transfer];
});

// One head's pre-softmax scores and the terms they add up from (src/analysis/scores.c
// through blw_scores), from the q/k every run keeps: the neuron view asks
// for the head it shows. {runId, layer, head, window, scores, terms: [{name,
// abbr, about, values}], ms}, every array [T][T], NaN where masked.
handle('scores', ({ request }) => {
  const { runId, layer, head } = request;
  heldRun(runId);
  const t0 = performance.now();
  const pj = mod._blw_score_terms_json(layer);
  if (!pj) throw new Error(lastError(`no scores for layer ${layer}`));
  const about = JSON.parse(mod.UTF8ToString(pj));
  const p = mod._blw_scores(layer, head);
  if (!p) throw new Error(lastError(`no scores for layer ${layer}, head ${head}`));
  const n = lastT * lastT;
  const all = floats(p, (about.terms.length + 1) * n); // scores, then each term
  const scores = all.slice(0, n);
  const terms = about.terms.map((t, k) => ({ name: t.name, abbr: t.abbr, about: t.about, values: all.slice((k + 1) * n, (k + 2) * n) }));
  return [{ runId, layer, head, window: about.window, scores, terms, ms: performance.now() - t0 }, [scores.buffer, ...terms.map((t) => t.values.buffer)]];
});
