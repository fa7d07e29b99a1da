// views/index.js — the view registry: every view the page offers, in tab
// order. Adding a view is its own file, web/js/views/<view>.js exporting a
// `descriptor`, and one line in VIEW_LIST below (its import beside it).
// Nothing else changes: the page (app.js, page/*.js) names no view; tabs,
// controls, runs, legend, URL parameters, exports and embed sizes all come
// from the descriptor:
//
//   id            the URL's view= value
//   label         the tab's text
//   size({K, L, H, d})  the embed frame {width, height} (CSS px) that shows
//                 K tokens of a model with L layers, H heads, head width d
//   controls      which page controls apply: {layer, head, mean (the "mean
//                 of all heads" choice), words, mode}
//   needs(s)      what the run must hold (protocol.js needs: {norms, qk,
//                 analysis}) for state s
//   create(ctx)   the chart (a function (root, data) with .theme(), .size(box)
//                 and .exportContext(): {notes, keys} an export adds around
//                 the stage, of its last drawing); ctx (page/view_ctx.js) =
//                 {update(patch), openHead(layer, head), openNeuron(shownIndex),
//                 toggleSpan(shownIndex), nHeads(), ablating(),
//                 toggleAblate(layer, head), compareWithout(layer, head) (the
//                 ablation comparison with that head off too),
//                 compareWithFile(file) (-> true once loaded),
//                 viewsShowingOneHead(), engineCall(type, args) (a model worker
//                 message: the corpus view runs the model itself)}
//   prepare(run, s, env)  the chart's data (title and legend notes
//                 included: the view decides which of the page's legend
//                 lines it shows); env = {axis (data.js tokenAxis), src (attn or
//                 norms per layer), lines (the page's legend lines), valueName,
//                 modeWord, models (models/index.json entries), ablating()
//                 (the "Switch heads off" mode is on), cmpFileName}; a run
//                 may carry run.compare (compare_runs.js) when needs() asked
//                 for {compare: key}
//   snapshot      whether a snapshot (snapshot.js) can hold what it draws
//                 (spec.data {fromRun, covers}: a record of the view's own,
//                 the snapshot's view_data; spec.state: its params kept)
//   shown(run, s, chart) optional: the numbers an export (CSV/JSON) holds,
//                 the view's own (no file outside views/ knows a view's
//                 export): lib/export_data.js shownMatrices(run, s, how) with
//                 the view's blocks, or a form of its own (blocks may carry a
//                 name and extra fields); chart: the view's chart (create's),
//                 for a view that keeps results of its own (the Corpus view);
//                 a view without it has no CSV/JSON export
//   runParts      optional: kinds of data of the view's own that a run is
//                 given after it ran, as rows of page/run_plan.js's table ({need
//                 (the needs() field that asks for it), covered(run, need),
//                 ask(engine, run, need) (a worker message), into(run, out,
//                 need), rerun (run the model again when the worker no longer
//                 holds the run)}): a new kind needs no edit of the page
//   (Export SVG/PNG take the element of class "stage" the chart draws: its
//   SVG, canvases and HTML, page/export.js)
//   enter(s)      optional: {patch, note} when the view is opened from the tabs
//   query         optional: the view uses the state's query token
//   axis          optional: false when it draws no token axis of its own
//   params        optional: its own URL parameters [{key, def, parse(raw) ->
//                 value | null, expect, perText}] (state.js adds them to the
//                 state; perText: a selection of token positions, which a
//                 new text typed drops back to def, page/toolbar.js)

import { descriptor as heatmap } from './heatmap.js';
import { descriptor as head } from './head.js';
import { descriptor as model } from './model.js';
import { descriptor as neuron } from './neuron.js';
import { descriptor as overview } from './overview.js';
import { descriptor as rollout } from './rollout.js';
import { descriptor as predict } from './predictions.js';
import { descriptor as decision } from './decision.js';
import { descriptor as compare } from './compare.js';
import { descriptor as corpus } from './corpus.js';

export const VIEW_LIST = Object.freeze([
  heatmap,
  head,
  model,
  neuron,
  overview,
  rollout,
  predict,
  decision,
  compare,
  corpus,
]);

export const VIEW_IDS = Object.freeze(VIEW_LIST.map((v) => v.id));

/** URL parameters views add to the page state (state.js). */
export const VIEW_PARAMS = Object.freeze(VIEW_LIST.flatMap((v) => v.params || []));

/** The view a click on a head elsewhere (model view, heads overview) opens. */
export const HEAD_VIEW_ID = 'heatmap';

/** The view that compares a run with the same run with heads switched off
 *  (the Decision view's head grid sends a head there). */
export const ABLATION_VIEW_ID = 'compare';

const byId = new Map(VIEW_LIST.map((v) => [v.id, v]));

/** The descriptor of a view id (throws for an unknown id). */
export function viewById(id) {
  const v = byId.get(id);
  if (!v) throw new Error(`unknown view "${id}"`);
  return v;
}

/** The embed frame (CSS px) in which `view` shows nTokens tokens, from its
 *  descriptor. opts: {layers, heads, d} of the model (defaults: MiniLM-L12,
 *  12 x 12, d = 32). */
export function preferredSize(view, nTokens, { layers = 12, heads = 12, d = 32 } = {}) {
  return viewById(view).size({ K: Math.max(1, nTokens), L: layers, H: heads, d });
}
