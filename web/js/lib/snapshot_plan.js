// snapshot_plan.js — what a snapshot (snapshot.js) holds for a view, and
// whether a snapshot holds what a page state asks for. Plain ES module, no
// DOM; names no view: each view's descriptor says it (views/index.js).
//
// What a snapshot holds (snapshotPlan), for the mode it was taken in only
// (attention weights, or norms), is the view's to say: its descriptor's
// `snapshot` field (views/index.js), a spec {layers, heads, draws, qk}
// handed in by the page (this file names no view):
//   layers  'shown': the state's layer; 'all': every layer
//   heads   'all': every head of those layers; 'shown': the state's head
//           (head 0 for the mean of heads)
//   draws   what a drawing needs of them: 'head' the state's head (every
//           head of the layer for the mean), 'heads' every head stored
//   qk      true: also the q/k vectors of the state's layer and head, and
//           its attention in either mode (plus norms in norm mode)
//   whole   true: the drawing mixes every head of every layer up to the
//           state's (the rollout), so a snapshot of a selection of the
//           model's heads or layers (o.partial, python/bertlens include_*)
//           does not hold it
//   scores  true: also the row of pre-softmax scores and their terms of
//           the state's layer, head and query (snapshot_scores.js)
// e.g. the heatmap {layers: 'shown', heads: 'all', draws: 'head'}, the model
// view {layers: 'all', heads: 'all', draws: 'heads'}, the neuron view
// {layers: 'shown', heads: 'shown', draws: 'heads', qk: true, scores: true}; the
// Predictions view {layers: 'none', predict: true}: no attention, the
// masked-LM words shown (snapshot_predict.js). Anything
// else (another layer, the other mode, another view, new text) needs the
// model: snapshotCovers() says so and why.

import { FormatError as SnapshotError } from './bytes.js';
import { predictCovers } from './snapshot_predict.js';
import { scoresCovers } from './snapshot_scores.js';

/** A view's snapshot spec (above) checked: the spec, or a SnapshotError
 *  naming the view when it has none. */
function specOf(spec, view) {
  if (!spec || typeof spec !== 'object') throw new SnapshotError(`the ${view} view has no snapshot form`);
  return spec;
}

/** Which blocks a snapshot of this state holds: {attn: [[l,h]…], norms:
 *  [[l,h]…], qk: [l,h] | null}, for the view's snapshot spec. */
export function snapshotPlan(state, L, H, spec) {
  const sp = specOf(spec, state.view);
  const head = state.head === 'mean' ? 0 : state.head;
  if (sp.layers === 'none') return { attn: [], norms: [], qk: null }; // (predictions only)
  const layers = sp.layers === 'all' ? Array.from({ length: L }, (_, l) => l) : [state.layer];
  const blocks = layers.flatMap((l) => (sp.heads === 'all' ? Array.from({ length: H }, (_, h) => [l, h]) : [[l, head]]));
  if (sp.qk) return { attn: blocks, norms: state.mode === 'norm' ? blocks : [], qk: [state.layer, head] };
  return state.mode === 'norm' ? { attn: [], norms: blocks, qk: null } : { attn: blocks, norms: [], qk: null };
}

/** Does a snapshot hold what the state asks for, drawn by a view with
 *  snapshot spec `spec` (above)? {ok: true} or {ok: false, why}, why
 *  completing "It does not hold …". */
export function snapshotCovers(o, s, spec) {
  if (s.text !== o.state.text || (s.text_b || '') !== (o.state.text_b || '')) return { ok: false, why: 'numbers for new text (the text was changed)' };
  if ((s.ablate || '') !== (o.state.ablate || '')) return { ok: false, why: 'numbers with other heads switched off' };
  if (!spec || typeof spec !== 'object') return { ok: false, why: `the ${s.view} view` };
  if (spec.predict) return predictCovers(o, s);
  if (spec.whole && o.partial) return { ok: false, why: 'every head of the model\'s layers (it was given a selection of them)' };
  if (spec.data) return spec.data.covers(o, s); // a view's own record (snapshot.js view_data)
  const src = s.mode === 'norm' ? o.norms : o.attn;
  const have = new Set(src.map((b) => b.layer * 256 + b.head));
  const has = (l, h) => have.has(l * 256 + h);
  const modeWord = s.mode === 'norm' ? 'value-weighted norms' : 'attention weights';
  const allHeads = (l) => Array.from({ length: o.H }, (_, h) => h).every((h) => has(l, h));
  if (!Number.isInteger(s.layer) || s.layer >= o.L) return { ok: false, why: `layer ${s.layer}` };
  if (spec.qk) {
    const h = s.head === 'mean' ? 0 : s.head;
    if (!o.qk || o.qk.layer !== s.layer || o.qk.head !== h) return { ok: false, why: `query/key vectors for layer ${s.layer}, head ${h}` };
    if (!o.attn.some((b) => b.layer === s.layer && b.head === h)) return { ok: false, why: `attention for layer ${s.layer}, head ${h}` };
    if (s.mode === 'norm' && !has(s.layer, h)) return { ok: false, why: `value-weighted norms for layer ${s.layer}, head ${h}` };
    if (spec.scores) return scoresCovers(o, s);
    return { ok: true };
  }
  if (spec.layers === 'all') {
    for (let l = 0; l < o.L; l++) if (!allHeads(l)) return { ok: false, why: `the ${modeWord} of every layer and head` };
    return { ok: true };
  }
  if (spec.draws === 'head') {
    if (s.head === 'mean' ? allHeads(s.layer) : has(s.layer, s.head)) return { ok: true };
    return { ok: false, why: `${modeWord} for layer ${s.layer}, ${s.head === 'mean' ? 'all heads' : `head ${s.head}`}` };
  }
  if (allHeads(s.layer)) return { ok: true };
  return { ok: false, why: `${modeWord} for every head of layer ${s.layer}` };
}
