// app.js — the page's composition root: one store (page/store.js) holds the
// reader's question; feature controllers (page/*.js) handle intents and
// subscribe to it; the views come from the registry (views/index.js).
// All user text, URL values and bundle metadata reach the page as text only
// (textContent / d3 .text()), never as HTML.
//
//   keystroke -> toolbar (intent) -> store.update -> subscribers:
//     toolbar.applyChrome · url (no model yet) · runs.onState
//       -> scheduler -> worker run -> runs keep/isCurrent -> drawing.draw
//       -> view chart -> drawn: token line, url.afterPaint, page 'ready'

import { DEFAULTS } from './page/state.js';
import { VIEW_LIST } from './views/index.js';
import { createStore } from './page/store.js';
import { fail } from './page/notices.js';
import { createUrlSync } from './page/url.js';
import { createDrawing } from './page/draw.js';
import { createRuns } from './page/runs.js';
import { createModels } from './page/models.js';
import { createShare } from './page/share.js';
import { createToolbar } from './page/toolbar.js';
import { createViewCtx } from './page/view_ctx.js';
import { createBoot } from './page/boot.js';

// Every part gets the page (its siblings, filled in below) and asks it at
// call time, so the parts need not import one another.
const page = { store: createStore(DEFAULTS) };
page.url = createUrlSync({ snapshotMode: () => page.boot.snapshotMode() });
page.runs = createRuns(page);
page.models = createModels(page);
page.drawing = createDrawing(page);
page.share = createShare(page);
page.toolbar = createToolbar(page);
page.abl = page.toolbar.abl;
page.spans = page.toolbar.spans;
page.boot = createBoot(page);
const ctx = createViewCtx(page);
page.views = Object.fromEntries(VIEW_LIST.map((v) => [v.id, v.create(ctx)]));

// What follows a change of the question, in order.
page.store.subscribe((s) => page.toolbar.applyChrome(s));
page.store.subscribe((s) => { if (!page.models.info()) page.url.sync(s, null); }); // drawn views: draw.js
page.store.subscribe((s, prev, why) => page.runs.onState(s, prev, why));

page.boot.main().catch((e) => fail('fatal', `Unexpected error: ${e.message}`));
