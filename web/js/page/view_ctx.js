// view_ctx.js — what a view may ask of the page (views/index.js, ctx): its
// intents (store patches, opening another view, a second model for a
// comparison: the store's 'compare-file') and the little it may read from
// the store. Token positions of a click are mapped through the axis derived
// from the last run (shown.js axisOf).

import { toggleHead, withHeadOff } from '../lib/compare.js';
import { VIEW_LIST, HEAD_VIEW_ID, ABLATION_VIEW_ID } from '../views/index.js';
import { shownState, axisOf, textKey } from './shown.js';

/** What the views may ask; abl: the ablation bar (its mode: a click on a
 *  head switches it off or on). */
export function createViewCtx(store, { abl }) {
  // A patch sent while no event is being handled (a view following its own
  // choice once drawn, as the compare view opening on the most changed head)
  // is not the reader's: it makes no history entry of its own (url.js follow).
  const update = (patch) => store.update(patch, globalThis.event ? {} : { auto: true });
  /** The raw token positions of shown token i (a word, the span, a token). */
  const rawTokens = (i) => {
    const run = store.run().last;
    return run ? axisOf(run, shownState(store.get(), run).state).members[i] : [i];
  };
  const config = () => store.model().info.config;
  return {
    update,
    openHead: (layer, head) => update({ view: HEAD_VIEW_ID, layer, head }),
    // The view that explains one query, on the query's first raw token; j:
    // the key of the cell it was opened from (a chart of all heads, as the
    // mean heatmap or rollout, lets that view pick the head for the cell).
    openNeuron(i, j) {
      const v = VIEW_LIST.find((d) => d.query);
      const s = store.get();
      const query = rawTokens(i)[0];
      const from = VIEW_LIST.find((d) => d.id === s.view);
      const at = { query, key: Number.isInteger(j) ? rawTokens(j)[0] : null, run: store.run().last, allHeads: s.head === 'mean' || !(from && from.controls.head) };
      const entered = v.enter ? v.enter(s, at) : null;
      update({ view: v.id, query, ...(entered ? entered.patch : {}) });
    },
    // Shift-click on a shown token: its raw tokens join or leave the span,
    // which belongs to the text it is chosen on.
    toggleSpan(i) {
      const s = store.get();
      const run = store.run().last;
      const raw = rawTokens(i);
      const cur = new Set((run ? shownState(s, run).state.span : s.span) || []);
      const allIn = raw.every((t) => cur.has(t));
      for (const t of raw) { if (allIn) cur.delete(t); else cur.add(t); }
      update({ span: cur.size ? [...cur].sort((a, b) => a - b) : null, spanOf: textKey(s) });
    },
    nHeads: () => config().n_heads,
    // The model worker's messages (engine.call), for views that run the model themselves (corpus.js).
    engineCall: (type, args) => { const e = store.model().engine; if (!e) throw new Error('the model engine has not started'); return e.call(type, args); },
    // Head ablation (ablation_bar.js): in its mode a click on a head
    // switches it off or on.
    ablating: () => abl.on,
    toggleAblate: (l, h) => update({ ablate: toggleHead(store.get().ablate, l, h, config().n_layers, config().n_heads) }),
    // The ablation comparison with head (l, h) switched off (besides those already off).
    compareWithout: (l, h) => update({ view: ABLATION_VIEW_ID, cmp: 'ablate', ablate: withHeadOff(store.get().ablate, l, h, config().n_layers, config().n_heads) }),
    compareWithFile: (file) => new Promise((done) => store.dispatch({ type: 'compare-file', file, done })),
    // Views that can show one head the user picked elsewhere (tab order).
    viewsShowingOneHead: () => VIEW_LIST.filter((v) => v.controls.layer && v.axis !== false).map((v) => ({ id: v.id, label: v.label })),
  };
}
