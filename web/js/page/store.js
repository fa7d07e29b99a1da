// store.js — the page's state (the question the reader asks: text, model,
// view, layer, head, mode, … as state.js parses it from the URL) and the
// only thing that writes it. Controls and views emit patches through
// update(); whatever follows a change (the toolbar, the URL, the run
// scheduler and the drawing) subscribes. What the page derives from the
// state and a run (a query token past the end, a span of other tokens) is
// computed when drawing (page/draw.js shownState), never written back.
//
//   const store = createStore(DEFAULTS);
//   store.subscribe((s, prev, why) => {});   // every change, in order
//   store.update({ layer: 3 });              // one change
//   store.update({ text }, { typed: true }); // why: passed to subscribers
//   store.get()                              // the state now

export function createStore(initial) {
  let state = { ...initial };
  const subscribers = [];
  return {
    get: () => state,
    update(patch, why = {}) {
      const prev = state;
      state = { ...prev, ...patch };
      for (const fn of subscribers) fn(state, prev, why);
    },
    /** The state the page starts from (URL, snapshot): no subscriber runs,
     *  nothing is drawn yet. */
    start(s) { state = { ...s }; },
    subscribe(fn) { subscribers.push(fn); },
  };
}
