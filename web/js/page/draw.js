// draw.js — drawing the chosen view from a run (the store's 'draw'
// action): what is shown (shown.js: the question with what the run decides
// derived, never written back), the token axis, the legend, the chart, and
// what a drawn view writes itself (the token line, timings, the page
// state); then it dispatches 'drawn' (the URL, the embed caption, the hide
// control follow: app.js). The legend's prose is the views' (views/legend.js).

import { templateSpecials } from '../lib/tokens.js';
import { THEMES, viewBox, emptyView } from '../views/common.js';
import { emptySentence } from '../views/view_notes.js';
import { viewById } from '../views/index.js';
import { legendLines } from '../views/legend.js';
import { pageNotebook } from './embed.js';
import { shownState, axisOf } from './shown.js';
import { presentViewBox } from './present_box.js';

const d3 = globalThis.d3;
const $ = (id) => document.getElementById(id);

/** The height (CSS px) a view on the page has on screen once scrolled to:
 *  the window below the sticky controls, less the view's padding. A view may
 *  grow its chart up to it (views/layout.js heatmapLayout screen). */
function screenHeight(viewEl) {
  const nav = document.querySelector('nav.controls');
  const bar = nav && getComputedStyle(nav).position === 'sticky' ? nav.getBoundingClientRect().height : 0;
  document.documentElement.style.setProperty('--controls-h', `${Math.ceil(bar)}px`); // the page's scroll padding (app.css)
  const cs = getComputedStyle(viewEl);
  return Math.max(200, window.innerHeight - bar - parseFloat(cs.paddingTop) - parseFloat(cs.paddingBottom));
}

/** The drawing. charts: the views' charts by id (app.js); bars: the
 *  ablation and span bars drawn with each view (ablation_bar.js, span_bar.js). */
export function createDrawing(store, { charts, bars }) {
  let drawSeq = 0; // the latest draw: an earlier one's late end changes nothing
  let shownBefore = false; // a view was drawn before (the first one takes no focus)

  /** Draw the current view from run (a run the state's question is current
   *  for: the caller decided). A plain redraw (window resize) passes
   *  keepState so it leaves the page state ('loading', 'error') alone,
   *  unless it replaces a draw still under way that was to make it 'ready'. */
  function draw(run, { keepState = false } = {}) {
    const { state: s, notes } = shownState(store.get(), run);
    for (const [key, text] of notes) store.notice(key, 'warn', text);
    // A draw that will make the page 'ready' when it has drawn is under way
    // (readyOwed). A plain redraw (resize) that replaces it before it has
    // drawn — sliced drawings span several tasks, a head view at 512 tokens
    // ~0.1 s — cancels it, so the redraw must make the page ready in its
    // place, or the page would stay 'loading'.
    if (!keepState) store.dispatch({ type: 'pending', patch: { readyOwed: true } });
    else if (store.pending().readyOwed) keepState = false; // it replaces a draw that was to make the page ready
    const t0 = performance.now();
    const seq = ++drawSeq;
    let pending;
    try {
      pending = drawView(run, s);
    } catch (e) {
      store.fail('draw', `Could not draw the ${s.view} view: ${e.message}`);
      return;
    }
    // A view that spreads its work over several tasks (views/common.js
    // sliced) returns a promise: the page is ready when it has drawn.
    if (pending && typeof pending.then === 'function') {
      pending.then((finished) => {
        if (seq === drawSeq && finished !== false) drawn(run, s, t0, keepState);
      }, (e) => {
        if (seq === drawSeq) store.fail('draw', `Could not draw the ${s.view} view: ${e.message}`);
      });
      return;
    }
    drawn(run, s, t0, keepState);
  }

  /** What follows a drawn view: the token line, the URL, timings, the page state. */
  function drawn(run, s, t0, keepState) {
    store.clearNotice('draw');
    const nA = Number.isInteger(run.nA) ? run.nA : run.typeIds.filter((t) => t === 0).length; // RoBERTa's pairs: type ids all 0
    // Blank (or whitespace-only) input still runs: say why only the specials ([CLS]/[SEP], <s>/</s>) show.
    const blank = run.wordIds && !run.wordIds.some((w) => w >= 0) ? ` · no words in the text: only ${templateSpecials(run).join(' and ')} are shown; type a sentence` : '';
    $('token-info').textContent = `${run.T} tokens${s.text_b ? ` (A: ${nA}, B: ${run.T - nA})` : ''} · ${run.snapshot ? 'drawn from the snapshot\'s 8-bit numbers, without the model' : `model ran in ${run.ms.toFixed(0)} ms`}${blank}`;
    store.dispatch({ type: 'drawn', run, state: s }); // the hide control, the URL, the embed caption (app.js)
    const ms = performance.now() - t0;
    document.body.dataset.renderMs = ms.toFixed(1);
    document.body.dataset.runMs = run.ms.toFixed(1);
    const { inputAt } = store.pending();
    if (inputAt) document.body.dataset.inputToReadyMs = (performance.now() - inputAt).toFixed(1);
    if (!performance.getEntriesByName('bl-first-ready').length) performance.mark('bl-first-ready');
    // A plain redraw (resize) keeps the page state: it may come while a run or
    // a model load for newer input is on its way, or after an error.
    if (!keepState && !store.pending().loading) store.setPageState('ready');
  }

  function drawView(run, s) {
    const v = viewById(s.view);
    const root = d3.select('#view');
    const switched = root.attr('data-view') !== s.view;
    // Nothing left to draw (no words, or only specials hidden): a view of the
    // text says what to type instead of drawing empty axes (view_notes.js).
    const axis = axisOf(run, s);
    const empty = Object.values(v.controls).some(Boolean) ? emptySentence({ wordIds: run.wordIds, shown: axis.K, hide: s.hide }) : null;
    // Focus that was in the old view (Enter on a heatmap cell), or was lost
    // with the element clicked, moves into the view that opens.
    const focusIn = switched && shownBefore && (root.node().contains(document.activeElement) || document.activeElement === document.body);
    if (switched || (!empty && root.attr('data-empty'))) {
      root.selectAll('*').remove();
      root.attr('class', 'view').attr('data-view', s.view).attr('data-empty', null);
    }
    // Presentation mode: the window below its bar, the labels scaled (present.js).
    const box = s.present && !s.embed ? presentViewBox($('view'))
      : viewBox($('view'), { embed: s.embed, below: s.embed ? $('embed-caption').offsetHeight : 0 });
    if (!s.embed && !s.present) box.screen = pageNotebook() ? pageNotebook().screen : screenHeight($('view'));
    shownBefore = true;
    if (focusIn) $('view').focus({ preventScroll: true });
    if (empty) {
      emptyView(root, empty);
      bars.abl.render({ state: s, L: run.L, H: run.H, run });
      bars.spans.render({ state: s, canSpan: !!v.controls.span });
      return null;
    }
    const lines = legendLines(s, v, store.model().info?.config, axis);
    const env = {
      axis,
      src: s.mode === 'norm' ? run.norms : run.attn,
      lines,
      valueName: s.mode === 'norm' ? '‖α f(x)‖' : 'attention',
      modeWord: s.mode === 'norm' ? 'value-weighted norms' : 'attention',
      models: store.model().list,
      cmpFileName: store.model().compareFile,
      ablating: () => bars.abl.on,
    };
    const pending = charts[s.view].theme(THEMES[s.theme]).size(box)(root, v.prepare(run, s, env));
    bars.abl.render({ state: s, L: run.L, H: run.H, run });
    bars.spans.render({ state: s, canSpan: !!v.controls.span });
    return pending;
  }

  return { draw };
}
