// store.js — what the page is showing, and the only thing that writes it.
// Two parts:
//
//   the question   the reader's (text, model, view, layer, head, mode, … as
//                  state.js parses it from the URL): store.get(), written by
//                  store.update(patch, why); subscribers run after every
//                  change, in order (store.subscribe).
//   the page       what answers it: the model shown, the current run and
//                  its provenance (live or snapshot), the snapshot drawn
//                  without the model, pending work (typed input, a model
//                  load, an input that stopped the engine), the notices and
//                  the page state. Read with store.model(), run(),
//                  snapshot(), pending(), notices(); written only by
//                  store.dispatch(action) (the reducer below); listeners of
//                  an action's type run after it (store.on).
//
// Controllers (page/*.js create*) read the store and dispatch; none calls
// another. What follows what (a run drawn, a model fitted, a load asked
// for) is declared once, as listeners, in app.js.
//
//   const store = createStore(DEFAULTS);
//   store.subscribe((s, prev, why) => {});   // every change of the question
//   store.update({ layer: 3 });              // one change
//   store.update({ text }, { typed: true }); // why: passed to subscribers
//   store.get()                              // the question now
//   store.dispatch({ type: 'run', run, key });   // the page's part
//   store.on('run', (action, prev) => {});      // after each such action
//
// Actions the reducer applies (others only reach their listeners):
//   model {patch}          the model shown: info (blw_info, or a snapshot's
//                          shape), engine, list, entry, name, local, compareFile
//   forget                 a new model: earlier runs are not of it
//   run {run, key}         a run kept (provenance: 'snapshot' when it came
//                          from one, else 'live'); key: runKeyOf its question
//   snapshot {snapshot}    the snapshot drawn without the model (null: live)
//   pending {patch}        inputAt (typed input), loading (a model load
//                          under way), blocked (runKeyOf an input that
//                          stopped the engine), readyOwed (a draw under way
//                          is to make the page 'ready': draw.js; any page
//                          state set since clears it)
//   block                  the question now asked stopped the engine
//   notice {key, kind, text, detail} / clear-notice {key} / notices {list, kind}
//   page-state {state}     body[data-state]: loading, ready, error, needs-model

const NO_MODEL = Object.freeze({ info: null, engine: null, list: [], entry: null, name: '', local: false, compareFile: '' });
const NO_RUN = Object.freeze({ last: null, key: null, provenance: null });
const NOT_PENDING = Object.freeze({ inputAt: 0, loading: false, blocked: null, readyOwed: false });

/** The runKeyOf a question: the inputs a run answers (texts, heads off). */
export const runKeyOf = (s) => JSON.stringify([s.text, s.text_b, s.ablate]);

let keyless = 0; // notices without a key of their own (each stays until dismissed)

function reduce(p, a, question) {
  switch (a.type) {
    case 'model': return { ...p, model: { ...p.model, ...a.patch } };
    case 'forget': return { ...p, run: NO_RUN };
    case 'run': return {
      ...p,
      run: { last: a.run, key: a.key, provenance: a.run.snapshot ? 'snapshot' : 'live' },
      pending: a.run.snapshot ? p.pending : { ...p.pending, blocked: null },
    };
    case 'snapshot': return { ...p, snapshot: a.snapshot };
    case 'pending': return { ...p, pending: { ...p.pending, ...a.patch } };
    case 'block': return { ...p, pending: { ...p.pending, blocked: runKeyOf(question) } };
    case 'notice': {
      const notices = new Map(p.notices);
      notices.set(a.key, { kind: a.kind, text: a.text, detail: a.detail || '' });
      return { ...p, notices };
    }
    case 'notices': {
      const notices = new Map(p.notices);
      for (const text of a.list) notices.set(`n${keyless++}`, { kind: a.kind || 'warn', text, detail: '' });
      return { ...p, notices };
    }
    case 'clear-notice': {
      if (!p.notices.has(a.key)) return p;
      const notices = new Map(p.notices);
      notices.delete(a.key);
      return { ...p, notices };
    }
    case 'page-state': return { ...p, pageState: a.state, pending: { ...p.pending, readyOwed: false } };
    default: return p;
  }
}

export function createStore(initial) {
  let state = { ...initial };
  let shown = { model: NO_MODEL, run: NO_RUN, snapshot: null, pending: NOT_PENDING, notices: new Map(), pageState: null };
  const subscribers = [];
  const listeners = new Map(); // action type -> [fn(action, prev: the page's part before it)]
  const store = {
    get: () => state,
    update(patch, why = {}) {
      const prev = state;
      state = { ...prev, ...patch };
      for (const fn of subscribers) fn(state, prev, why);
    },
    /** The question the page starts from (URL, snapshot): no subscriber
     *  runs, nothing is drawn yet. */
    start(s) { state = { ...s }; },
    subscribe(fn) { subscribers.push(fn); },
    model: () => shown.model,
    run: () => shown.run,
    snapshot: () => shown.snapshot,
    pending: () => shown.pending,
    notices: () => shown.notices,
    pageState: () => shown.pageState,
    dispatch(action) {
      const prev = shown;
      shown = reduce(shown, action, state);
      for (const fn of listeners.get(action.type) || []) fn(action, prev);
    },
    on(type, fn) {
      if (!listeners.has(type)) listeners.set(type, []);
      listeners.get(type).push(fn);
    },
    // Shorthands for the notices and the page state (actions above).
    notice: (key, kind, text, detail = '') => store.dispatch({ type: 'notice', key, kind, text, detail }),
    clearNotice: (key) => store.dispatch({ type: 'clear-notice', key }),
    noticeList: (list, kind = 'warn') => store.dispatch({ type: 'notices', list, kind }),
    setPageState: (s) => store.dispatch({ type: 'page-state', state: s }),
    fail(key, message, detail = '') {
      store.notice(key, 'error', message, detail);
      store.setPageState('error');
    },
  };
  return store;
}
