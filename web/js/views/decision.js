// decision.js — the Decision view: what the model's head decides and why.
// For a bundle with a task head (src/model/task_head.c) it shows the head's output
// (label probabilities; a label per token; the answer in the context), for
// a masked-LM bundle its guesses at each blank and layer by layer (the logit
// lens); then the tokens coloured by attribution (gradient × input or
// integrated gradients of the target's logit, src/explain*.c, the same
// numbers `bertlens explain` prints), with a method switch and a target
// picker (the URL's method=, steps=, target=, at=), and on request the L × H
// grid of head effects, one layer per worker message, with a progress bar
// and Cancel; a click on a cell picks that head, and two buttons open it in
// the heatmap or switch it off in Compare; when "Switch heads off" is on, the
// click switches it off (or on) at once. A model with neither head says which
// heads it could show and how to load one.
//
// Data: the descriptor's runParts row asks the worker (engine/worker_decision.js,
// lib/protocol.js makeDecisionRequest) once the run is there; the view draws
// one record (decision_data.js), which a snapshot carries as its view data
// (snapshot.js view_data; snapshot spec `data`), so an embed draws it
// without the model. The head-effects grid, once complete, is kept with the
// run it was computed for (run.decision.heads): exports and snapshots carry it.

import { THEMES, tooltip, infoLine, exportContext, linksTable } from './common.js';
import { runLabels, tokenLabel, piecesOf } from '../lib/tokens.js';
import { fitAblate } from '../lib/compare.js';
import { makeDecisionRequest, makeDecisionHeadsRequest, checkDecision, checkDecisionHeads, decisionKey } from '../lib/protocol.js';
import {
  PARAMS, NO_HEAD_LINE, METHOD_NAMES, KIND_NAMES, decisionNeed, decisionRecord, checkRecord, recordForSnapshot, recordCovers,
  shownDecision, headline, targetOf, num,
} from './decision_data.js';
import { drawOutput, drawAttribution, drawGrid } from './decision_draw.js';

export const SNAPSHOT_LINE = 'This view is a snapshot: its numbers were stored with it and the model is not loaded, so another method, target or the head effects (which run the model) are not available here. Open it in bertlens, or load the model, to change them.';

/** The record a run's decision draws (cached on it), or null. */
function recordOf(run, s) {
  if (run.decision) {
    const key = decisionKey(decisionNeed(s));
    if (!run.decision.record || run.decision.record.key !== key) run.decision.record = { ...decisionRecord(run.decision, s), key };
    run.decision.record.heads = run.decision.heads || null; // (the grid, once computed on request)
    return run.decision.record;
  }
  if (run.viewData) return checkRecord(run.viewData, run);
  return null;
}

export function decisionView() {
  let theme = THEMES.light;
  let act = { update() {}, cell() {}, open() {}, compareOff() {}, engine: null, ablating: () => false };
  let picked = null; // the grid's selected head {key, l, h}: its two actions are offered under the grid
  let exported = exportContext();
  let last = null; // {root, data}: the grid redraws itself as layers arrive
  let job = null; // the head-effects computation: {key, effects [L], done, running, cancel, note}

  function view(root, data) {
    last = { root, data };
    if (job && job.running && job.key !== data.gridKey) job.cancel = true; // another run or choice: its grid is no longer shown
    tooltip.hide();
    root.selectAll('div.view-title').data([null]).join('div').attr('class', 'view-title').text(data.title);
    infoLine(root).set(data.info);
    controls(root, data);
    const body = root.selectAll('div.dv-body').data([null]).join('div').attr('class', 'dv-body stage')
      .style('color', theme.fg).style('max-width', '100%');
    body.selectAll('*').remove();
    root.selectAll('details.view-alt').remove();
    const D = data.D;
    if (!D || D.kind === 'none') {
      body.append('p').attr('class', 'dv-nohead').style('max-width', '60em').text(NO_HEAD_LINE);
      exported = exportContext({ notes: [NO_HEAD_LINE] });
      root.selectAll('p.view-notes').remove();
      return;
    }
    if (data.snapshot) body.append('p').attr('class', 'dv-snapshot').text(SNAPSHOT_LINE);
    const onAt = (t) => { if (!data.snapshot) act.update({ at: t }); };
    drawOutput(body, D, { labels: data.labels, word: data.word, run: data.run, s: data.s, theme, onAt });
    drawAttribution(body, D, { labels: data.labels, theme, onAt, clickable: !data.snapshot && (D.kind === 'token-classification' || D.kind === 'masked-lm') });
    body.append('div').attr('class', 'dv-grid-box');
    grid();
    if (D.attr) {
      linksTable(root, {
        summary: 'Attribution of each token (table)',
        columns: [{ key: 't', title: 'position' }, { key: 'tok', title: 'token' }, { key: 'v', title: 'attribution', fmt: num }],
        rows: D.attr.scores.map((v, t) => ({ t, tok: data.labels[t], v })),
      });
    }
    root.selectAll('p.view-notes').data([null]).join('p').attr('class', 'view-notes').text(data.notes.join(' '));
    exported = exportContext({ notes: data.snapshot ? [...data.notes, SNAPSHOT_LINE] : data.notes });
  }

  /** The method switch and the target picker (outside the stage: not exported). */
  function controls(root, data) {
    const D = data.D;
    const box = root.selectAll('div.dv-controls').data([null]).join('div').attr('class', 'dv-controls')
      .style('display', 'flex').style('gap', '12px').style('flex-wrap', 'wrap').style('margin', '4px 0');
    // rebuilt only when what it offers changes: a redraw keeps the focused control in place
    const offer = !D || D.kind === 'none' ? '' : JSON.stringify([D.kind, D.labels, D.method === 'ig', data.snapshot, D.mlm && D.attr ? [D.attr.position, (D.mlm.blanks.find((b) => b.index === D.attr.position) || { top: [] }).top.map((e) => e.id)] : null]);
    if (box.attr('data-offer') === offer) {
      if (D) {
        box.select('#dv-method').property('value', D.method);
        box.select('#dv-target').property('value', String(data.s.target));
        box.select('#dv-steps').property('value', D.steps);
      }
      return;
    }
    box.attr('data-offer', offer);
    box.selectAll('*').remove();
    if (!D || D.kind === 'none') return;
    const pick = (label, id, options, value, on) => {
      const l = box.append('label').style('display', 'inline-flex').style('gap', '6px').style('align-items', 'center').text(label);
      const sel = l.append('select').attr('id', id).attr('disabled', data.snapshot ? true : null).on('change', (ev) => on(ev.target.value));
      sel.selectAll('option').data(options).join('option').attr('value', (o) => o.value).text((o) => o.text)
        .property('selected', (o) => String(o.value) === String(value));
    };
    pick('Attribution', 'dv-method', Object.entries(METHOD_NAMES).map(([value, text]) => ({ value, text })), D.method, (v) => act.update({ method: v }));
    if (D.method === 'ig') {
      box.append('label').style('display', 'inline-flex').style('gap', '6px').style('align-items', 'center').text('Steps')
        .append('input').attr('id', 'dv-steps').attr('type', 'number').attr('min', 1).attr('max', 256).attr('value', D.steps).style('width', '5em')
        .attr('disabled', data.snapshot ? true : null)
        .on('change', (ev) => { const n = Number(ev.target.value); if (Number.isInteger(n) && n >= 1 && n <= 256) act.update({ steps: n }); });
    }
    if (D.labels && D.seq && D.seq.problem !== 'regression') {
      pick('Target', 'dv-target', [{ value: -1, text: 'the predicted label' }, ...D.labels.map((text, value) => ({ value, text }))], data.s.target, (v) => act.update({ target: Number(v) }));
    } else if (D.labels && D.token) {
      pick('Target', 'dv-target', [{ value: -1, text: 'the predicted label' }, ...D.labels.map((text, value) => ({ value, text }))], data.s.target, (v) => act.update({ target: Number(v) }));
    } else if (D.mlm && D.attr) { // a masked-LM: one of the top words at the explained position
      const at = D.mlm.blanks.find((b) => b.index === D.attr.position);
      const words = at ? at.top.filter((e) => e.id !== undefined) : [];
      if (words.length) pick('Target', 'dv-target', [{ value: -1, text: 'the top word' }, ...words.map((e) => ({ value: e.id, text: data.word(e.token) }))], data.s.target, (v) => act.update({ target: Number(v) }));
    }
  }

  /** The head-effects grid of the drawn record (the job's layers so far). */
  function grid() {
    if (!last) return;
    const { root, data } = last;
    const D = data.D;
    const box = root.select('div.dv-grid-box');
    if (box.empty() || !D || D.kind === 'none') return;
    box.selectAll('*').remove();
    const { L, H } = data.run;
    const mine = job && job.key === data.gridKey ? job : null;
    const effects = D.heads || (mine ? mine.effects : new Array(L).fill(null));
    const off = new Set(fitAblate(data.s.ablate, L, H).heads.map(([l, h]) => l * H + h));
    drawGrid(box, {
      L, H, effects, theme, off, ablating: act.ablating(),
      progress: mine ? mine : { running: false, done: 0, note: storedNote(D.heads, L) || (data.snapshot ? (D.heads ? '' : 'not stored with this snapshot') : D.attr ? '' : 'needs an attribution target') },
      canRun: !data.snapshot && !!D.attr && !!act.engine,
      onStart: () => start(),
      onCancel: () => { if (job) job.cancel = true; },
      picked: picked && picked.key === data.gridKey ? picked : null,
      onCell: (l, h) => {
        if (act.ablating()) { act.cell(l, h); return; } // "Switch heads off": the click switches it
        picked = { key: data.gridKey, l, h };
        grid();
        const b = root.select('button.dv-open').node();
        if (b) b.focus(); // the keyboard lands on the first action
      },
      onOpen: (l, h) => act.open(l, h),
      onCompareOff: (l, h) => act.compareOff(l, h),
    });
  }

  /** Compute the head effects of the drawn run, one layer per message. */
  async function start() {
    const { data } = last;
    const { run, s, D } = data;
    if (!D.attr || (job && job.running)) return;
    const mine = { key: data.gridKey, effects: new Array(run.L).fill(null), done: 0, running: true, cancel: false, note: '' };
    job = mine;
    D.heads = null;
    run.decision.heads = null;
    grid();
    const mask = fitAblate(s.ablate, run.L, run.H).heads;
    try {
      for (let l = 0; l < run.L; l++) {
        if (mine.cancel || job !== mine) break;
        const request = makeDecisionHeadsRequest(run.runId, { a: s.text, b: s.text_b || null, kind: D.kind, position: D.attr.position, target: D.attr.target, layer: l, mask });
        const out = checkDecisionHeads(await act.engine('decision-heads', { request }), l, run.H);
        mine.effects[l] = out.effects;
        mine.done = l + 1;
        if (job === mine) grid();
      }
      mine.note = mine.cancel ? `cancelled after ${mine.done} of ${run.L} layers` : '';
      if (mine.done > 0 && job === mine) { // kept with its run, a cancelled grid's first layers too: exports and snapshots carry it
        run.decision.heads = mine.effects.map((r) => r || null);
        D.heads = run.decision.heads;
      }
    } catch (e) {
      mine.note = /stale/.test(String(e && e.message)) ? 'stopped: the model ran again on another input' : `stopped: ${e.message}`;
    }
    mine.running = false;
    if (job === mine) grid();
  }

  view.theme = (t) => { theme = t || THEMES.light; return view; };
  view.size = () => view;
  view.actions = (a) => { act = { ...act, ...a }; return view; };
  view.exportContext = () => exported;
  view.running = () => !!(job && job.running);
  return view;
}

/** What a grid cancelled part-way holds ('' for a whole or no grid). */
function storedNote(heads, L) {
  const k = heads ? heads.filter(Boolean).length : 0;
  return k > 0 && k < L ? `layers 0–${k - 1} of ${L} computed (cancelled before the rest)` : '';
}

/** The registry entry (views/index.js). */
export const descriptor = {
  id: 'decision',
  label: 'Decision',
  size: ({ K: n, L }) => ({ width: 640, height: Math.min(1200, 420 + 14 * n + (L || 12) * 18) }), // output, tokens, the grid's rows
  controls: { layer: false, head: false, mean: false, words: false, mode: false },
  axis: false,
  params: PARAMS,
  needs: (s) => ({ decision: decisionNeed(s) }),
  // what the worker adds to a run for this view (page/run_plan.js's table)
  runParts: [{
    need: 'decision', rerun: true, ms: 'decisionMs',
    job: (need, s) => ({ ...need, a: s.text, b: s.text_b || null }),
    covered: (run, need) => !!(run.decision && run.decision.key === decisionKey(need)),
    ask: (engine, run, need) => engine.call('decision', { request: makeDecisionRequest(run.runId, need) }).then(checkDecision),
    into: (run, out, need) => ({ ...run, decision: { ...out, key: decisionKey(need) } }),
  }],
  // a snapshot holds the drawn record (snapshot.js view_data) and the view's parameters
  snapshot: { layers: 'none', state: PARAMS.map((p) => p.key), data: { fromRun: (run, s) => recordForSnapshot(run, s), covers: recordCovers } },
  shown: (run, s) => shownDecision(recordOf(run, s), run, s),
  create(ctx) {
    const chart = decisionView().actions({
      update: (patch) => ctx.update(patch),
      engine: (type, args) => ctx.engineCall(type, args),
      ablating: () => !!(ctx.ablating && ctx.ablating()),
      cell: (l, h) => ctx.toggleAblate(l, h),
      open: (l, h) => ctx.openHead(l, h),
      compareOff: (l, h) => ctx.compareWithout(l, h),
    });
    return chart;
  },
  prepare(run, s) {
    const D = recordOf(run, s);
    const has = D && D.kind !== 'none';
    const kind = has ? KIND_NAMES[D.kind] : '';
    return {
      D, run, s, labels: runLabels(run), snapshot: !!run.snapshot,
      word: (piece) => tokenLabel(piece, piecesOf(run), !!(D && D.mlm && piece === D.mlm.mask)), // a guessed piece as a word ("Ġcat" reads "␣cat")
      gridKey: `${run.runId}/${decisionKey(decisionNeed(s))}/${s.ablate || ''}`,
      title: has ? `Decision — the ${kind} head: ${headline(D)}` : 'Decision — this model has no task head',
      info: !has || !D.attr ? ''
        : D.kind === 'question-answering' ? `${METHOD_NAMES[D.method]} for the answer span (tokens ${D.attr.position}–${D.attr.target}): its start logit plus its end logit`
          : D.kind === 'sequence-classification' ? `${METHOD_NAMES[D.method]} for the label “${D.attr.label}” (label ${targetOf(D)})`
            : D.kind === 'masked-lm' ? `${METHOD_NAMES[D.method]} for the word “${D.attr.label}” at position ${D.attr.position}`
              : `${METHOD_NAMES[D.method]} for the label “${D.attr.label}” (label ${targetOf(D)}) of token ${D.attr.position}`,
      notes: has ? ['Attributions are exact gradients of the target\'s logit with respect to each token\'s word embedding (summed over its dimensions), computed in the page by the same C engine as `bertlens explain`; integrated gradients start from pad tokens (special tokens kept).'] : [],
    };
  },
};
