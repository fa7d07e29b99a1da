// app.js — the page's composition root: one store (page/store.js) holds
// what the page is showing (the reader's question; the model, the run and
// its provenance, pending work, notices); feature controllers (page/*.js)
// read it and dispatch, none calls another; the views come from the
// registry (views/index.js). What follows what is declared here, once.
// All user text, URL values and bundle metadata reach the page as text only
// (textContent / d3 .text()), never as HTML.
//
//   keystroke -> toolbar -> store.update -> subscribers:
//     toolbar.applyChrome · url (no model yet) · runs.onState
//       -> scheduler -> worker run -> dispatch 'run' (kept) -> dispatch 'draw'
//       -> drawing.draw -> view chart -> dispatch 'drawn': hide control,
//          url.afterPaint, embed caption; page state 'ready'

import { DEFAULTS } from './page/state.js';
import { VIEW_LIST } from './views/index.js';
import { createStore } from './page/store.js';
import { createNotices } from './page/notices.js';
import { createUrlSync } from './page/url.js';
import { createDrawing } from './page/draw.js';
import { createRuns } from './page/runs.js';
import { createModels } from './page/models.js';
import { createShare } from './page/share.js';
import { createToolbar } from './page/toolbar.js';
import { createPresent } from './page/present.js';
import { createViewCtx } from './page/view_ctx.js';
import { createBoot } from './page/boot.js';
import { ablationBar } from './page/ablation_bar.js';
import { spanBar } from './page/span_bar.js';
import { embedDrawn, notebookDrawn } from './page/embed.js';
import { snapshotText } from './page/shown.js';

const $ = (id) => document.getElementById(id);
const store = createStore(DEFAULTS);
createNotices(store);
const update = (patch) => store.update(patch);
const bars = { abl: ablationBar($('ablation'), { update }), spans: spanBar($('span-ctl'), $('view'), { update }) };
const url = createUrlSync(store);
const runs = createRuns(store);
const models = createModels(store);
const toolbar = createToolbar(store);
const present = createPresent(store);
const ctx = createViewCtx(store, { abl: bars.abl });
const charts = Object.fromEntries(VIEW_LIST.map((v) => [v.id, v.create(ctx)]));
const drawing = createDrawing(store, { charts, bars });
const share = createShare(store, { charts });
const boot = createBoot(store);

// What follows a change of the question, in order.
store.subscribe((s, prev, why) => { if (why.auto) url.follow(s, prev); }); // no reader's change: replaces the history entry
store.subscribe((s) => { toolbar.applyChrome(s); present.apply(s); });
store.subscribe((s) => { if (!store.model().info) url.sync(s, null); }); // drawn views: 'drawn' below
store.subscribe((s, prev, why) => runs.onState(s, prev, why));

// What follows an action.
store.on('started', () => {
  toolbar.buildViewTabs();
  toolbar.applyChrome(store.get());
  present.apply(store.get());
  toolbar.showText(store.get());
  toolbar.wire();
  present.wire();
  url.wire();
});
store.on('model', (a, prev) => { const { info } = store.model(); if (info && info !== prev.model.info) toolbar.modelShape(info.config); });
store.on('forget', () => runs.forget());
store.on('run', (a) => { if (!a.run.snapshot) models.ran(); });
store.on('draw', (a) => drawing.draw(a.run, { keepState: !!a.keepState }));
store.on('redraw', () => runs.redraw());
store.on('drawn', ({ run, state: s }) => {
  toolbar.showSpecials(run); // "Hide <s>/</s>": the specials this model's template adds
  url.afterPaint(s, run);
  embedDrawn(s);
  notebookDrawn((limits) => snapshotText(store, limits));
});
store.on('snapshot-step', () => boot.snapshotStep());
store.on('start-live', (a) => models.start().then(() => a.done(null), a.done));
store.on('load', (a) => models.loadModel(a.source));
store.on('pick', (a) => models.pick(a.value));
store.on('save-converted', () => models.saveConverted());
store.on('compare-file', (a) => runs.compareWithFile(a.file).then(a.done));
store.on('export', (a) => share.exportAs(a.kind));
store.on('share', (a) => share.share(a.kind));

boot.main().catch((e) => store.fail('fatal', `Unexpected error: ${e.message}`));
