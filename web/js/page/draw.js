// draw.js — drawing the chosen view from a run: what is shown (the state
// with what the run decides derived, never written back), the token axis,
// the legend, the chart, and what follows a drawn view (the token line,
// the URL, timings, the page state). The legend's prose is the views'
// (views/legend.js).

import { tokenAxis, spanAxis } from '../lib/data.js';
import { templateSpecials } from '../lib/tokens.js';
import { fitQuery, fitSpan } from './state.js';
import { THEMES, viewBox, emptyView } from '../views/common.js';
import { emptySentence } from '../views/view_notes.js';
import { viewById } from '../views/index.js';
import { legendLines } from '../views/legend.js';
import { notice, clearNotice, fail, setPageState, readyOwed } from './notices.js';
import { embedDrawn, pageNotebook, notebookDrawn } from './embed.js';

const d3 = globalThis.d3;
const $ = (id) => document.getElementById(id);

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

/** The drawing. page: {store, views (charts by id), abl, spans, models,
 *  runs, url, toolbar (its present.box)}. */
export function createDrawing(page) {
  let drawSeq = 0; // the latest draw: an earlier one's late end changes nothing
  let shownBefore = false; // a view was drawn before (the first one takes no focus)

  /** Draw the current view from run (a run the state's question is current
   *  for: the caller decided). A plain redraw (window resize) passes
   *  keepState so it leaves the page state ('loading', 'error') alone,
   *  unless it replaces a draw still under way that was to make it 'ready'. */
  function draw(run, { keepState = false } = {}) {
    const { state: s, notes } = shownState(page.store.get(), run);
    for (const [key, text] of notes) notice(key, 'warn', text);
    if (!keepState) readyOwed.value = true;
    else if (readyOwed.value) keepState = false; // it replaces a draw that was to make the page ready
    const t0 = performance.now();
    const seq = ++drawSeq;
    let pending;
    try {
      pending = drawView(run, s);
    } catch (e) {
      fail('draw', `Could not draw the ${s.view} view: ${e.message}`);
      return;
    }
    // A view that spreads its work over several tasks (views/common.js
    // sliced) returns a promise: the page is ready when it has drawn.
    if (pending && typeof pending.then === 'function') {
      pending.then((finished) => {
        if (seq === drawSeq && finished !== false) drawn(run, s, t0, keepState);
      }, (e) => {
        if (seq === drawSeq) fail('draw', `Could not draw the ${s.view} view: ${e.message}`);
      });
      return;
    }
    drawn(run, s, t0, keepState);
  }

  /** What follows a drawn view: the token line, the URL, timings, the page state. */
  function drawn(run, s, t0, keepState) {
    clearNotice('draw');
    const nA = Number.isInteger(run.nA) ? run.nA : run.typeIds.filter((t) => t === 0).length; // RoBERTa's pairs: type ids all 0
    // Blank (or whitespace-only) input still runs: say why only the specials ([CLS]/[SEP], <s>/</s>) show.
    const blank = run.wordIds && !run.wordIds.some((w) => w >= 0) ? ` · no words in the text: only ${templateSpecials(run).join(' and ')} are shown; type a sentence` : '';
    page.toolbar.showSpecials(run); // "Hide <s>/</s>": the specials this model's template adds
    $('token-info').textContent = `${run.T} tokens${s.text_b ? ` (A: ${nA}, B: ${run.T - nA})` : ''} · ${run.snapshot ? 'drawn from the snapshot\'s 8-bit numbers, without the model' : `model ran in ${run.ms.toFixed(0)} ms`}${blank}`;
    page.url.afterPaint(s, run);
    embedDrawn(s);
    notebookDrawn(page.share.snapshotText);
    const ms = performance.now() - t0;
    document.body.dataset.renderMs = ms.toFixed(1);
    document.body.dataset.runMs = run.ms.toFixed(1);
    const inputAt = page.runs.inputAt();
    if (inputAt) document.body.dataset.inputToReadyMs = (performance.now() - inputAt).toFixed(1);
    if (!performance.getEntriesByName('bl-first-ready').length) performance.mark('bl-first-ready');
    // A plain redraw (resize) keeps the page state: it may come while a run or
    // a model load for newer input is on its way, or after an error.
    if (!keepState && !page.models.loading()) setPageState('ready');
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
    const box = s.present && !s.embed ? page.toolbar.present.box($('view'))
      : viewBox($('view'), { embed: s.embed, below: s.embed ? $('embed-caption').offsetHeight : 0 });
    if (!s.embed && !s.present) box.screen = pageNotebook() ? pageNotebook().screen : screenHeight($('view'));
    shownBefore = true;
    if (focusIn) $('view').focus({ preventScroll: true });
    if (empty) {
      emptyView(root, empty);
      page.abl.render({ state: s, L: run.L, H: run.H, run });
      page.spans.render({ state: s, canSpan: !!v.controls.span });
      return null;
    }
    const lines = legendLines(s, v, page.models.info()?.config, axis);
    const env = {
      axis,
      src: s.mode === 'norm' ? run.norms : run.attn,
      lines,
      valueName: s.mode === 'norm' ? '‖α f(x)‖' : 'attention',
      modeWord: s.mode === 'norm' ? 'value-weighted norms' : 'attention',
      models: page.models.list(),
      cmpFileName: page.runs.compareFileName(),
      ablating: () => page.abl.on,
    };
    const pending = page.views[s.view].theme(THEMES[s.theme]).size(box)(root, v.prepare(run, s, env));
    page.abl.render({ state: s, L: run.L, H: run.H, run });
    page.spans.render({ state: s, canSpan: !!v.controls.span });
    return pending;
  }

  return { draw };
}
