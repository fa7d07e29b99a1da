// boot.js — how the page starts: the question from the URL (dispatched as
// 'started': the controls follow, app.js), then either a snapshot the page
// carries (drawn without the model, which loads on request) or the live
// start ('start-live': the engine, the model list, the named model). In
// snapshot mode the runs come from the snapshot (snapshotStep, on the
// store's 'snapshot-step').

import { parseStateAsync, stateFromSnapshot, fitToConfig } from './state.js';
import { formatBytes, fetchIndex } from '../engine/bundles.js';
import { decodeSnapshot, runFromSnapshot, snapshotCovers, LINK_LIMITS, FILE_LIMITS } from '../lib/snapshot.js';
import { ASSETS } from '../engine/assets.js';
import { pageSnapshotText, pageSnapshotSource, offerModel, startEmbed, pageNotebook, startNotebook } from './embed.js';
import { textKey, preferredHeight } from './shown.js';
import { currentFor } from './run_plan.js';
import { runKeyOf } from './store.js';
import { viewById } from '../views/index.js';
import { mergeNeeds, ANALYSIS } from '../lib/protocol.js';
import { createAttnAnalyzer } from '../lib/attn_analyze.js';

const d3 = globalThis.d3;
const $ = (id) => document.getElementById(id);

function registerServiceWorker() {
  if (!('serviceWorker' in navigator) || !window.isSecureContext) return;
  navigator.serviceWorker.register(new URL('sw.js', document.baseURI).href).catch(() => {
    // No offline support (e.g. private mode); the page works the same online.
  });
}

/** A span read with its text (URL, snapshot) belongs to that text. */
const withSpanOf = (s) => (s.span ? { ...s, spanOf: textKey(s) } : s);

/** How the page starts, on the store. */
export function createBoot(store) {
  const { notice, fail, setPageState } = store;
  let liveStarted = false; // the engine and model load were started
  const snap = () => store.snapshot(); // the snapshot drawn without the model (snapshot mode), else null
  const useRun = (run, s) => store.dispatch({ type: 'run', run, key: runKeyOf(s) });
  const draw = (run) => store.dispatch({ type: 'draw', run });

  async function main() {
    const parsed = await parseStateAsync(location.search || (pageNotebook() ? pageNotebook().search : ''));
    let s = parsed.state;
    if (!new URLSearchParams(location.search).has('theme') && matchMedia('(prefers-color-scheme: dark)').matches) {
      s = { ...s, theme: 'dark' };
    }
    store.start(withSpanOf(s));
    store.noticeList(parsed.notices);
    store.dispatch({ type: 'started' }); // the controls (app.js)
    if (s.embed) startEmbed(() => preferredHeight(store));
    if (pageNotebook()) startNotebook(pageNotebook());
    if (await startFromSnapshot()) return; // drawn from the snapshot; the model loads on request
    await startLive();
  }

  async function startLive() {
    liveStarted = true;
    if (!pageNotebook()) registerServiceWorker(); // (a notebook output's frame has no address of its own)
    const err = await new Promise((done) => store.dispatch({ type: 'start-live', done })); // (models.js start)
    if (err) throw err;
  }

  /** Draw from the snapshot the page carries, if any (true when it did). */
  async function startFromSnapshot() {
    const text = pageSnapshotText();
    if (text === null) return false;
    let decoded;
    try {
      // (a notebook output's snapshot may hold up to 1,024 tokens: snapshot.js FILE_LIMITS)
      decoded = await decodeSnapshot(text, pageNotebook() ? FILE_LIMITS : LINK_LIMITS);
    } catch (e) {
      notice('snapshot', 'error', `${e.message} Using the model instead.`);
      return false;
    }
    // Every field of the snapshot's state is checked (type, then range) before
    // use; a wrong one means the snapshot was made by hand or damaged: the model.
    const checked = stateFromSnapshot(decoded.state, decoded);
    if (checked.problems.length) {
      notice('snapshot', 'error', `This view's snapshot cannot be used: in its settings, ${checked.problems.slice(0, 3).join('; ')}${checked.problems.length > 3 ? '; …' : ''}. Using the model instead.`);
      return false;
    }
    const s = { ...checked.state, embed: store.get().embed };
    // A view drawn from analyses of the attention (heads overview, rollout)
    // on a page without the analyses module (ASSETS.analyses: only the
    // viewer has it) runs live, as it would without the snapshot.
    const need = mergeNeeds(viewById(s.view).needs(s));
    if (!ASSETS.analyses && ASSETS.engine !== false && (need.analysis !== ANALYSIS.NONE || need.like)) return false;
    decoded.state = s; // what snapshotCovers compares with: the checked state
    const o = decoded;
    store.dispatch({ type: 'snapshot', snapshot: o });
    store.start(withSpanOf(s)); // (the text boxes follow the update below: toolbar.js applyChrome)
    d3.select('#model-select').selectAll('option').data([o.model]).join('option')
      .attr('value', (m) => m.id || '').text((m) => m.name || m.id || 'model');
    $('model-info').textContent = `${o.model.name || o.model.id || 'Model'} · this view is a snapshot (8-bit numbers stored with it); the model is not loaded`;
    // The snapshot's shape stands in for the model until it loads (the
    // layer/head choices follow it: app.js), and its run for the model's.
    store.dispatch({ type: 'model', patch: { info: { config: { n_layers: o.L, n_heads: o.H, hidden: o.H * o.d }, meta: {} } } });
    useRun(runFromSnapshot(o), s);
    const fit = fitToConfig(store.get(), store.model().info.config);
    store.noticeList(fit.notices);
    store.update(fit.state);
    if (pageNotebook() && pageNotebook().static) hideTabsWithout(o, s);
    return true;
  }

  /** A static notebook output can never load a model: only the tabs of views
   *  its snapshot draws are offered (what each view needs is its descriptor's
   *  snapshot spec; snapshot_plan.js snapshotCovers). */
  function hideTabsWithout(o, s) {
    d3.selectAll('#view-tabs button').each(function () {
      const v = viewById(this.dataset.view);
      this.hidden = !v.snapshot || !snapshotCovers(o, { ...s, view: v.id }, v.snapshot).ok;
    });
  }

  /** Snapshot mode, when a run is wanted: draw when the snapshot holds the
   *  view, else offer the model. */
  async function snapshotStep() {
    const s = store.get();
    const run = currentFor(store, s);
    if (run) { draw(run); return; }
    if (liveStarted) return; // the model is on its way; then everything runs live
    if (await analysesStep(s)) return;
    setPageState('needs-model');
    const covers = snapshotCovers(snap(), s, viewById(s.view).snapshot);
    const why = covers.ok ? 'the analyses this view draws (this page computes them with the model)' : covers.why;
    let bytes = snap().model.bytes;
    // viewer.html (standalone export) has no engine; a static notebook output no model
    const canLoad = ASSETS.engine !== false && !(pageNotebook() && pageNotebook().static);
    if (canLoad && location.protocol !== 'file:') {
      try {
        const list = store.model().list.length ? store.model().list : await fetchIndex(new URL('models/index.json', document.baseURI).href);
        const entry = list.find((m) => m.id === s.model) || list.find((m) => m.default);
        if (entry && entry.bytes) bytes = entry.bytes;
      } catch { /* keep the snapshot's figure */ }
    }
    offerModel(why, `Load the model${bytes ? ` (${formatBytes(bytes)})` : ''}`, canLoad ? () => {
      setPageState('loading');
      startLive().catch((e) => fail('fatal', `Unexpected error: ${e.message}`));
    } : null, canLoad ? '' : pageSnapshotSource());
  }

  /** Snapshot mode without the model, where the page carries the analyses
   *  module (ASSETS.analyses: viewer.html): a view that needs the analyses
   *  of attention the snapshot holds (the heads overview, the rollout) gets
   *  them computed from it (lib/attn_analyze.js: the engine's C). True when
   *  the snapshot's run now answers the state (and was drawn). */
  let analyzer = null;
  async function analysesStep(s) {
    const v = viewById(s.view);
    const run = store.run().last;
    if (!ASSETS.analyses || !run || !run.snapshot || !v.snapshot || !snapshotCovers(snap(), s, v.snapshot).ok) return false;
    const need = mergeNeeds(v.needs(s));
    if (need.analysis === ANALYSIS.NONE && !need.like) return false;
    try {
      setPageState('loading');
      analyzer = analyzer || createAttnAnalyzer(ASSETS.analyses());
      const an = await analyzer;
      let next = run;
      const rollout = need.analysis >= ANALYSIS.ROLLOUT;
      if ((need.analysis >= ANALYSIS.HEADS && !run.analysis) || (rollout && !run.rollout)) next = { ...next, ...an.analyze(run, rollout) };
      if (need.like) next = { ...next, like: an.like(run, need.like) };
      if (store.run().last !== run) return true; // (another step took over)
      useRun(next, store.get());
    } catch (e) {
      notice('analyses', 'error', `The analyses could not be computed from the snapshot: ${e.message}`);
      return false;
    }
    const now = currentFor(store);
    if (now) draw(now);
    else if (store.get() !== s) return snapshotStep().then(() => true);
    return !!now;
  }

  return { main, snapshotStep };
}
