// protocol.js — the one description of what the page asks the model worker
// for and what comes back. The page imports it (engine.js, app.js); the
// worker is a classic script (it loads the Emscripten glue with
// importScripts, and in the one-file page it is a Blob), so it cannot import
// a module: engine.js hands it WORKER_PROTOCOL, plain data, with the 'init'
// message, and worker.js takes every flag value from there. The KEEP values
// mirror BL_KEEP_* in src/bertlens.h (tests/web/protocol.test.mjs parses
// the header and checks).
//
// A run request (makeRunRequest):
//   {a, b, flags, qkLayer, analysis}
//   a, b      the texts (b null: single sentence)
//   flags     KEEP.* bits for blw_run (KEEP.ATTN always; a view that needs
//             q/k gets KEEP.QK_ALL: every layer's, so a layer switch is
//             answered from the result, without running the model again)
//   qkLayer   the layer whose q/k KEEP.QK keeps (-1: not asked; the page
//             never asks for one layer, the worker still serves it)
//   analysis  ANALYSIS.NONE | HEADS (blw_analyze_json: per-head features and
//             classes) | ROLLOUT (the same plus every layer's rollout
//             matrix, and the norm-based one when flags has KEEP.NORMS)
//   like      (only when asked) [layer, head]: the result's `like` holds the
//             Jensen–Shannon distance of every head to that one (the heads
//             overview's "heads like this one"), computed in the worker
//             (src/analysis/analyze.c bl_head_compare)
//   mask      (only when set) [[layer, head], ...]: heads switched off for
//             this run (blw_set_head_mask; Hugging Face's head_mask meaning)
//   embed     (only when asked) the result's `embeddings` holds the
//             sentence-transformers embedding of each text encoded on its
//             own: [A] for one sentence, [A, B] for a pair
// A compare request (makeCompareRequest) hands the worker two runs'
// attention, aligned by the page (compare.js), and gets per-head
// Jensen–Shannon distances and max |Δ| computed in C.
// The result (checkResult): see RESULT_FIELDS. Each result has a runId; a
// like request (makeLikeRequest) asks the worker for the distances to
// another head from the attention of its last run, if that run is runId
// (else it refuses and the page runs the model again). An analyze request
// (makeAnalyzeRequest) likewise asks for the analysis (HEADS or ROLLOUT) of
// that last run, so a tab that needs one does not run the model again; the
// page merges the answer into its run (withAnalysis). A q/k request
// (makeQkRequest) does the same for every layer's queries and keys (the
// neuron view), which the worker keeps in the state of every run, and a
// scores request (makeScoresRequest) for one head's pre-softmax scores and
// the terms they add up from (src/analysis/scores.c), which the neuron view shows:
// asked when it is shown or its layer, head or run changes, never per run.

export const PROTOCOL_VERSION = 8;

/** BL_KEEP_* of src/bertlens.h. */
export const KEEP = Object.freeze({ ATTN: 1, NORMS: 2, QK: 4, HIDDEN: 8, QK_ALL: 16 });

export const ANALYSIS = Object.freeze({ NONE: 0, HEADS: 1, ROLLOUT: 2 });

/** Plain data the worker receives at init (structured-clone safe). */
export const WORKER_PROTOCOL = Object.freeze({ version: PROTOCOL_VERSION, KEEP, ANALYSIS });

/** What a view asks of the engine, e.g. {norms: true, qk: true,
 *  analysis: ANALYSIS.HEADS}; several needs merge to the widest. */
export function mergeNeeds(...list) {
  const out = { norms: false, qk: false, analysis: ANALYSIS.NONE, like: null, embed: false, compare: null, predict: null, scores: null };
  const known = new Set(Object.keys(out));
  for (const n of list) {
    if (!n) continue;
    // a view's own kinds of data (descriptor.runParts, page/run_plan.js) pass through
    for (const key of Object.keys(n)) if (!known.has(key)) out[key] = out[key] || n[key] || null;
    out.embed = out.embed || !!n.embed;
    out.compare = out.compare || n.compare || null;
    out.norms = out.norms || !!n.norms;
    out.qk = out.qk || !!n.qk;
    out.analysis = Math.max(out.analysis, n.analysis || ANALYSIS.NONE);
    out.like = out.like || n.like || null;
    out.predict = out.predict || n.predict || null;
    out.scores = out.scores || n.scores || null;
  }
  return out;
}

/** The one request object the page sends for a run. q/k (needs.qk) are
 *  every layer's (all-MiniLM-L6-v2 at 512 tokens: 9.4 MB). */
export function makeRunRequest({ a, b = null, needs = {}, mask = null }) {
  if (typeof a !== 'string') throw new TypeError('run request: text a must be a string');
  if (b !== null && typeof b !== 'string') throw new TypeError('run request: text b must be a string or null');
  const n = mergeNeeds(needs);
  let flags = KEEP.ATTN;
  if (n.norms) flags |= KEEP.NORMS;
  if (n.qk) flags |= KEEP.QK_ALL;
  if (n.like) checkHead(n.like);
  if (mask !== null && !Array.isArray(mask)) throw new TypeError('run request: mask must be a list of [layer, head] pairs');
  if (mask) mask.forEach(checkHead);
  return {
    a, b: b || null, flags, qkLayer: -1, analysis: n.analysis,
    ...(n.like ? { like: [...n.like] } : {}),
    ...(mask && mask.length ? { mask: mask.map(([l, h]) => [l, h]) } : {}),
    ...(n.embed ? { embed: true } : {}),
  };
}

/** Two runs' attention compared head by head in the worker (C): a, b per
 *  layer Float32Array [H][K][K], aligned to the same K tokens or words. */
export function makeCompareRequest(a, b, H, K) {
  if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length || !a.length) throw new TypeError('compare request: two lists of layers of one length');
  const n = H * K * K;
  if (![...a, ...b].every((x) => x instanceof Float32Array && x.length === n)) throw new RangeError(`compare request: every layer must be ${H} × ${K} × ${K} floats`);
  return { a, b, H, K };
}

function checkHead(h) {
  if (!Array.isArray(h) || h.length !== 2 || !h.every((x) => Number.isInteger(x) && x >= 0)) {
    throw new RangeError(`"heads like this one": ${JSON.stringify(h)} is not a [layer, head] pair`);
  }
}

/** The distances of every head to head [layer, head] from the attention of
 *  the worker's run runId (a result's runId). */
export function makeLikeRequest(runId, like) {
  checkHead(like);
  if (!Number.isInteger(runId)) throw new TypeError('like request: runId must be an integer');
  return { runId, like: [...like] };
}

/** The analysis (ANALYSIS.HEADS or ROLLOUT) of the worker's run runId,
 *  from the attention it still holds. */
export function makeAnalyzeRequest(runId, analysis) {
  if (!Number.isInteger(runId)) throw new TypeError('analyze request: runId must be an integer');
  if (analysis !== ANALYSIS.HEADS && analysis !== ANALYSIS.ROLLOUT) throw new RangeError(`analyze request: no analysis level ${analysis}`);
  return { runId, analysis };
}

/** Run `run` with the answer to an analyze request for it merged in
 *  (analysis, rollout, rolloutNorm), checked as a whole result. */
export function withAnalysis(run, out) {
  if (!out || out.runId !== run.runId) throw new Error('the analysis is not of this run');
  return checkResult({ ...run, analysis: out.analysis, rollout: out.rollout, rolloutNorm: out.rolloutNorm });
}

/** Every layer's queries and keys of the worker's run runId, which it keeps
 *  in its state whether or not the run asked for them. */
export function makeQkRequest(runId) {
  if (!Number.isInteger(runId)) throw new TypeError('q/k request: runId must be an integer');
  return { runId };
}

/** Run `run` with the answer to a q/k request for it merged in (q, k),
 *  checked as a whole result. */
export function withQk(run, out) {
  if (!out || out.runId !== run.runId) throw new Error('the queries and keys are not of this run');
  return checkResult({ ...run, q: out.q, k: out.k });
}

/** One head's scores and their terms ([layer, head]) of the worker's run
 *  runId, from the queries and keys its state keeps (blw_scores). */
export function makeScoresRequest(runId, [layer, head]) {
  if (!Number.isInteger(runId)) throw new TypeError('scores request: runId must be an integer');
  checkHead([layer, head]);
  return { runId, layer, head };
}

/** Run `run` with the answer to a scores request for it attached as
 *  run.scores (the page's, like run.predict: not a field of the worker's
 *  result): {layer, head, query: null (every query's row; a snapshot holds
 *  one), window (keys farther than it from the query are masked; -1: none),
 *  scores: Float32Array [T][T] (NaN where masked), terms: [{name, abbr,
 *  about, values: Float32Array [T][T]}]}, adding up to the scores. */
export function withScores(run, out) {
  if (!out || out.runId !== run.runId) throw new Error('the scores are not of this run');
  const n = run.T * run.T;
  const ok = (a) => a instanceof Float32Array && a.length === n;
  if (!ok(out.scores) || !Array.isArray(out.terms) || !out.terms.length
    || !out.terms.every((t) => typeof t.name === 'string' && typeof t.abbr === 'string' && typeof t.about === 'string' && ok(t.values))) {
    throw new Error('the model worker\'s scores are malformed');
  }
  const { layer, head, window, scores, terms } = out;
  return { ...run, scores: { layer, head, query: null, window, scores, terms } };
}

/** The masked-LM head's top-k words at `positions` and, when `masked`, at
 *  every mask token (positions null and not masked: every token) of the
 *  worker's run runId, whose texts are a and b (engine/worker_predict.js).
 *  was: [[position, id]] of words the page masked: at such a position (still
 *  the mask token) the probability and rank given are those of the word id
 *  that was there (src/wasm/wasm_predict.c blw_predict_json_was). */
export function makePredictRequest(runId, { a, b = null, positions = null, masked = false, k = 5, was = [] }) {
  if (!Number.isInteger(runId)) throw new TypeError('predict request: runId must be an integer');
  if (positions !== null && !(Array.isArray(positions) && positions.every((i) => Number.isInteger(i) && i >= 0))) throw new RangeError('predict request: positions must be token indices');
  if (!Number.isInteger(k) || k < 1 || k > 100) throw new RangeError('predict request: k must be 1..100');
  if (!(Array.isArray(was) && was.every((p) => Array.isArray(p) && p.length === 2 && p.every((i) => Number.isInteger(i) && i >= 0 && i < 2 ** 31)))) throw new RangeError('predict request: was must be [position, id] pairs');
  return { runId, a, b, positions: positions ? [...positions] : null, masked: !!masked, k, was: was.map((p) => [...p]) };
}

/** What a predict need ({positions, k, was}) is known by in run.predict.key. */
export const predictKey = (p) => `${p.positions ? p.positions.join(',') : '*'}/${p.masked ? 'm' : ''}/${p.k}/${(p.was || []).map((w) => w.join(':')).join(',')}`;

/** Does a result hold everything `needs` asks for (at `layer`)? */
export function resultCovers(run, needs, layer) {
  const n = mergeNeeds(needs);
  if (!run) return false;
  if (n.norms ? !run.norms : !run.attn) return false; // (a snapshot may hold only the one shown)
  if (n.qk && !(run.q && run.q[layer] && run.k && run.k[layer])) return false;
  if (n.analysis >= ANALYSIS.HEADS && !run.analysis) return false;
  if (n.analysis >= ANALYSIS.ROLLOUT && (!run.rollout || (n.norms && !run.rolloutNorm))) return false;
  if (n.like && !(run.like && run.like.of[0] === n.like[0] && run.like.of[1] === n.like[1])) return false;
  if (n.embed && !run.embeddings) return false;
  // compare: the key (compare_runs.js compareKey) of the comparison the page
  // attaches to its run (run.compare), not part of the worker's result.
  if (n.compare && !(run.compare && run.compare.key === n.compare)) return false;
  // predict: the masked-LM head's words ({positions, k}), which the page
  // asks of the held run (makePredictRequest) and attaches as run.predict.
  if (n.predict && !(run.predict && run.predict.key === predictKey(n.predict))) return false;
  // scores: [layer, head] of the one head whose scores the page attaches
  // (withScores; a snapshot's hold one query's row: snapshotCovers checks it)
  if (n.scores && !(run.scores && run.scores.layer === n.scores[0] && run.scores.head === n.scores[1])) return false;
  return true;
}

/** Fields of a run result: [name, check]. attn/norms are one Float32Array
 *  [H][T][T] per layer; q/k one Float32Array [H][T][d] per layer, null for
 *  a layer whose q/k were not kept (KEEP.QK: all but qkLayer's);
 *  analysis {pair, heads: [{layer, head, entropy, cls, sep, punct, prev,
 *  self, next, segment, confidence, class}]} (src/analyze.h); rollout /
 *  rolloutNorm one Float32Array [T][T] per layer; like null or {of: [layer,
 *  head], dist: Float64Array [L][H]} (Jensen–Shannon distance, base 2, mean
 *  over rows, src/analysis/analyze.c bl_head_compare); mask the heads switched off
 *  (null: none); embeddings null or one Float32Array [hidden] per text
 *  encoded alone; runId the worker's count of runs. */
export const RESULT_FIELDS = Object.freeze([
  ['tokens', (v, r) => Array.isArray(v) && v.length === r.T],
  ['typeIds', (v, r) => Array.isArray(v) && v.length === r.T],
  ['wordIds', (v, r) => Array.isArray(v) && v.length === r.T],
  ['offsets', (v, r) => v === null || (Array.isArray(v) && v.length === r.T)],
  ['nA', (v, r) => Number.isInteger(v) && v >= 0 && v <= r.T],
  ['truncated', (v) => typeof v === 'boolean'],
  ['T', (v) => Number.isInteger(v) && v > 0],
  ['L', (v) => Number.isInteger(v) && v > 0],
  ['H', (v) => Number.isInteger(v) && v > 0],
  ['d', (v) => Number.isInteger(v) && v > 0],
  ['attn', (v, r) => perLayer(v, r.L, r.H * r.T * r.T)],
  ['norms', (v, r) => v === null || perLayer(v, r.L, r.H * r.T * r.T)],
  ['q', (v, r) => v === null || someLayers(v, r.L, r.H * r.T * r.d)],
  ['k', (v, r) => v === null || someLayers(v, r.L, r.H * r.T * r.d)],
  ['flags', (v) => Number.isInteger(v) && (v & KEEP.ATTN) !== 0],
  ['analysis', (v, r) => v === null || (Array.isArray(v.heads) && v.heads.length === r.L * r.H)],
  ['rollout', (v, r) => v === null || perLayer(v, r.L, r.T * r.T)],
  ['rolloutNorm', (v, r) => v === null || perLayer(v, r.L, r.T * r.T)],
  ['like', (v, r) => v === null || (Array.isArray(v.of) && v.of.length === 2 && v.dist instanceof Float64Array && v.dist.length === r.L * r.H)],
  ['mask', (v) => v === null || (Array.isArray(v) && v.every((p) => Array.isArray(p) && p.length === 2))],
  // a pair: B's tokens after n_a (RoBERTa's pairs have type ids all 0)
  ['embeddings', (v, r) => v === null || (Array.isArray(v) && v.length === (r.nA < r.T || r.typeIds.includes(1) ? 2 : 1) && v.every((e) => e instanceof Float32Array))],
  ['runId', (v) => Number.isInteger(v) && v > 0],
  ['ms', (v) => typeof v === 'number' && v >= 0],
]);

function perLayer(v, L, n) {
  return Array.isArray(v) && v.length === L && v.every((a) => a instanceof Float32Array && a.length === n);
}

/** One entry per layer, null or n floats, at least one not null. */
function someLayers(v, L, n) {
  return Array.isArray(v) && v.length === L && v.some((a) => a !== null)
    && v.every((a) => a === null || (a instanceof Float32Array && a.length === n));
}

/** Throw when a worker result does not have the shape above. */
export function checkResult(r) {
  if (!r || typeof r !== 'object') throw new Error('the model worker sent no result');
  for (const [name, ok] of RESULT_FIELDS) {
    if (!(name in r)) throw new Error(`the model worker's result lacks "${name}"`);
    if (!ok(r[name], r)) throw new Error(`the model worker's result has a malformed "${name}"`);
  }
  return r;
}

// ------------------------------------------------------------- decisions
// The Decision view asks the worker (engine/worker_decision.js) what the
// held run's head outputs and which tokens drove it ('decision'), and one
// layer at a time for the head-effects grid ('decision-heads'), so the page
// can show progress and stop between layers.

export const DECISION_METHODS = Object.freeze(['grad-input', 'ig']);
/** Heads the worker reports (src/bertlens.h BL_TASK_*, or the masked-LM head). */
export const DECISION_KINDS = Object.freeze(['none', 'sequence-classification', 'token-classification', 'question-answering', 'masked-lm']);
export const MAX_IG_STEPS = 256;

const isIndex = (v) => Number.isInteger(v) && v >= -1 && v < 2 ** 31;

/** The head's output and the attribution of target `target` (a label
 *  index, or -1: the predicted one) at token `position` (token
 *  classification, masked-LM; -1: the default) by `method` ('grad-input' or
 *  'ig' with `steps` steps) for the worker's run runId, whose texts are a, b. */
export function makeDecisionRequest(runId, { a, b = null, method = 'grad-input', steps = 32, target = -1, position = -1, k = 5 }) {
  if (!Number.isInteger(runId)) throw new TypeError('decision request: runId must be an integer');
  if (typeof a !== 'string' || (b !== null && typeof b !== 'string')) throw new TypeError('decision request: texts a, b must be strings (b may be null)');
  if (!DECISION_METHODS.includes(method)) throw new RangeError(`decision request: method must be one of ${DECISION_METHODS.join(', ')}`);
  if (!Number.isInteger(steps) || steps < 1 || steps > MAX_IG_STEPS) throw new RangeError(`decision request: steps must be 1..${MAX_IG_STEPS}`);
  if (!isIndex(target) || !isIndex(position)) throw new RangeError('decision request: target and position must be indices or -1');
  if (!Number.isInteger(k) || k < 1 || k > 100) throw new RangeError('decision request: k must be 1..100');
  return { runId, a, b, method, steps, target, position, k };
}

/** One layer of head effects: p_target with every head minus p_target with
 *  head (layer, h) off too, for each h; kind, position, target: the
 *  decision's (its explain's target and position; question answering:
 *  position = the span's start, target = its end); mask: the heads the
 *  page switched off ([[layer, head]]). */
export function makeDecisionHeadsRequest(runId, { a, b = null, kind, position, target, layer, mask = [] }) {
  if (!Number.isInteger(runId)) throw new TypeError('decision-heads request: runId must be an integer');
  if (typeof a !== 'string' || (b !== null && typeof b !== 'string')) throw new TypeError('decision-heads request: texts a, b must be strings (b may be null)');
  if (!DECISION_KINDS.includes(kind) || kind === 'none') throw new RangeError(`decision-heads request: no head kind ${kind}`);
  if (![position, target, layer].every((v) => Number.isInteger(v) && v >= 0)) throw new RangeError('decision-heads request: position, target and layer must be indices');
  if (!Array.isArray(mask)) throw new TypeError('decision-heads request: mask must be a list of [layer, head] pairs');
  mask.forEach(checkHead);
  return { runId, a, b, kind, position, target, layer, mask: mask.map(([l, h]) => [l, h]) };
}

const isNums = (v, n) => Array.isArray(v) && (n === undefined || v.length === n) && v.every((x) => typeof x === 'number');

/** Throw when a 'decision' answer does not have its shape (worker_decision.js). */
export function checkDecision(out) {
  if (!out || typeof out !== 'object' || !Number.isInteger(out.runId)) throw new Error('the model worker sent no decision');
  if (!DECISION_KINDS.includes(out.kind)) throw new Error(`the model worker named no known head (${String(out.kind).slice(0, 40)})`);
  const e = out.explain;
  if (e !== null && !(e && isNums(e.scores) && Array.isArray(e.tokens) && e.tokens.length === e.scores.length && Number.isInteger(e.target) && Number.isInteger(e.position))) {
    throw new Error('the model worker\'s attribution is malformed');
  }
  const h = out.head;
  if (out.kind !== 'none' && out.kind !== 'masked-lm' && !(h && typeof h === 'object' && h.head === out.kind)) throw new Error('the model worker\'s head output is malformed');
  return out;
}

/** Throw when a 'decision-heads' answer is not one layer of H effects. */
export function checkDecisionHeads(out, layer, H) {
  if (!out || out.layer !== layer || !isNums(out.effects, H)) throw new Error(`the model worker's head effects for layer ${layer} are malformed`);
  return out;
}

/** What a decision need is known by in run.decision.key. */
export const decisionKey = (d) => `${d.method}/${d.steps}/${d.target}/${d.position}`;
