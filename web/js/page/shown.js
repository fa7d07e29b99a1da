// shown.js — what is shown, derived from the store (pure: the store is
// only read). What a run decides is never written back into the question:
// the span kept for the text it was chosen on, the query token within the
// run (shownState); the token axis a view draws (axisOf); the embed frame
// and the snapshot of what is drawn.

import { tokenAxis, spanAxis } from '../lib/data.js';
import { fitQuery, fitSpan, proposeEmbedSize } from './state.js';
import { viewById } from '../views/index.js';
import { snapshotFromRun, encodeSnapshot, LINK_LIMITS } from '../lib/snapshot.js';
import { currentFor } from './run_plan.js';

/** The texts a span's positions were chosen on (state.spanOf). */
export const textKey = (s) => JSON.stringify([s.text, s.text_b]);

/** What is drawn for state s from run: s with the span kept only for the
 *  texts it was chosen on (other text, other tokens) and cut to the run's
 *  tokens, and the query token (views that use one) within the run.
 *  Returns {state, notes: [[key, text]]}; the store's state is unchanged. */
export function shownState(s, run) {
  const { spanOf, ...shown } = s;
  const notes = [];
  if (shown.span && spanOf !== undefined && spanOf !== textKey(s)) shown.span = null;
  const f = fitSpan(shown, run.T);
  for (const text of f.notices) notes.push(['span', text]);
  let out = f.state;
  if (viewById(s.view).query) {
    const q = fitQuery(out, run.T);
    for (const text of q.notices) notes.push(['query', text]);
    out = q.state;
  }
  return { state: out, notes };
}

/** The token axis view s draws of run (data.js): words, hidden specials,
 *  the span as one row and column. */
export function axisOf(run, s) {
  const v = viewById(s.view);
  const axis = tokenAxis(run, { words: s.words && v.controls.words, hideSpecials: s.hide, renorm: s.renorm });
  return v.controls.span && s.span ? spanAxis(axis, s.span.filter((t) => t < run.T)) : axis;
}

/** The raw tokens of each shown token of the last run (a click, the
 *  presentation's arrow keys), or null before any run. */
export function membersOf(store) {
  const run = store.run().last;
  return run ? axisOf(run, shownState(store.get(), run).state).members : null;
}

/** {s: the question as shown, run: the run it is drawn from or null}. */
export function shownNow(store) {
  const s = store.get();
  const run = currentFor(store, s);
  return { s: run ? shownState(s, run).state : s, run };
}

/** The embed frame view s asks for (its descriptor's size; a generous one
 *  when it names none), for the tokens of the last run. */
export function frameFor(store, s) {
  const last = store.run().last;
  const info = store.model().info;
  const c = info ? info.config : { n_layers: 6, n_heads: 12 };
  const K = last ? axisOf(last, shownState(s, last).state).K : 16;
  const v = viewById(s.view);
  return v.size ? v.size({ K, L: c.n_layers, H: c.n_heads, d: last ? last.d : 32 })
    : proposeEmbedSize(s.view, K, { L: c.n_layers, H: c.n_heads });
}

/** The frame height the drawn view asks for (0 when unknown). */
export function preferredHeight(store) {
  if (!store.run().last || !store.model().info) return 0;
  const size = frameFor(store, store.get());
  return size && size.height > 0 ? size.height : 0;
}

/** The snapshot of what is drawn (null above limits.tokens tokens: a link's
 *  LINK_LIMITS, a notebook output's FILE_LIMITS, lib/snapshot.js). */
export async function snapshotText(store, limits = LINK_LIMITS) {
  const { s, run } = shownNow(store);
  if (!run || !viewById(s.view).snapshot) return null;
  if (run.snapshot) return encodeSnapshot({ ...run.snapshot, state: { ...s } }, limits);
  if (run.T > limits.tokens) return null;
  return encodeSnapshot(snapshotFromRun(run, s, store.model().entry || {}, viewById(s.view).snapshot, limits), limits);
}
