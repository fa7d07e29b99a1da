// boot.js — how the page starts: the state from the URL, the controls, then
// either a snapshot the page carries (drawn without the model, which loads
// on request) or the live start (engine, model list, the named model).

import { parseStateAsync, stateFromSnapshot } from './state.js';
import { formatBytes } from '../engine/bundles.js';
import { decodeSnapshot, runFromSnapshot, snapshotCovers, LINK_LIMITS, FILE_LIMITS } from '../lib/snapshot.js';
import { ASSETS } from '../engine/assets.js';
import { pageSnapshotText, pageSnapshotSource, offerModel, clearOffer, startEmbed, pageNotebook, startNotebook } from './embed.js';
import { notice, notices, fail, setPageState } from './notices.js';
import { textKey } from './draw.js';
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

/** page: {store, toolbar, models, runs, drawing, share}. */
export function createBoot(page) {
  let snap = null; // the snapshot drawn without the model (snapshot mode), else null
  let liveStarted = false; // the engine and model load were started

  async function main() {
    const parsed = await parseStateAsync(location.search || (pageNotebook() ? pageNotebook().search : ''));
    let s = parsed.state;
    if (!new URLSearchParams(location.search).has('theme') && matchMedia('(prefers-color-scheme: dark)').matches) {
      s = { ...s, theme: 'dark' };
    }
    page.store.start(withSpanOf(s));
    notices(parsed.notices);
    page.toolbar.buildViewTabs();
    page.toolbar.applyChrome(page.store.get());
    page.toolbar.showText(page.store.get());
    page.toolbar.wire();
    if (s.embed) startEmbed(page.share.preferredHeight);
    if (pageNotebook()) startNotebook(pageNotebook());
    if (await startFromSnapshot()) return; // drawn from the snapshot; the model loads on request
    await startLive();
  }

  async function startLive() {
    liveStarted = true;
    if (!pageNotebook()) registerServiceWorker(); // (a notebook output's frame has no address of its own)
    await page.models.start();
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
    const s = { ...checked.state, embed: page.store.get().embed };
    // A view drawn from analyses of the attention (heads overview, rollout)
    // on a page without the analyses module (ASSETS.analyses: only the
    // viewer has it) runs live, as it would without the snapshot.
    const need = mergeNeeds(viewById(s.view).needs(s));
    if (!ASSETS.analyses && ASSETS.engine !== false && (need.analysis !== ANALYSIS.NONE || need.like)) return false;
    decoded.state = s; // what snapshotCovers compares with: the checked state
    snap = decoded;
    page.store.start(withSpanOf(s));
    page.toolbar.showText(s);
    d3.select('#model-select').selectAll('option').data([snap.model]).join('option')
      .attr('value', (m) => m.id || '').text((m) => m.name || m.id || 'model');
    $('model-info').textContent = `${snap.model.name || snap.model.id || 'Model'} · this view is a snapshot (8-bit numbers stored with it); the model is not loaded`;
    page.runs.useRun(runFromSnapshot(snap), s);
    page.models.fromSnapshot(snap);
    if (pageNotebook() && pageNotebook().static) hideTabsWithout(snap, s);
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
    const s = page.store.get();
    const run = page.runs.currentFor(s);
    if (run) { page.drawing.draw(run); return; }
    if (liveStarted) return; // the model is on its way; then everything runs live
    if (await analysesStep(s)) return;
    setPageState('needs-model');
    const covers = snapshotCovers(snap, s, viewById(s.view).snapshot);
    const why = covers.ok ? 'the analyses this view draws (this page computes them with the model)' : covers.why;
    let bytes = snap.model.bytes;
    // viewer.html (standalone export) has no engine; a static notebook output no model
    const canLoad = ASSETS.engine !== false && !(pageNotebook() && pageNotebook().static);
    if (canLoad && location.protocol !== 'file:') {
      try {
        const list = await page.models.listed();
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
    const run = page.runs.last();
    if (!ASSETS.analyses || !run || !run.snapshot || !v.snapshot || !snapshotCovers(snap, s, v.snapshot).ok) return false;
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
      if (page.runs.last() !== run) return true; // (another step took over)
      page.runs.useRun(next, page.store.get());
    } catch (e) {
      notice('analyses', 'error', `The analyses could not be computed from the snapshot: ${e.message}`);
      return false;
    }
    const now = page.runs.currentFor(page.store.get());
    if (now) page.drawing.draw(now);
    else if (page.store.get() !== s) return snapshotStep().then(() => true);
    return !!now;
  }

  return {
    main,
    snapshotStep,
    snapshotMode: () => snap !== null,
    snapshot: () => snap,
    /** The model took over: live from now on. */
    goLive() { snap = null; clearOffer(); },
  };
}
