// present.js — presentation mode (present=1, the "Present" button): one view
// fills the window with its labels scaled up, under a compact bar holding
// only the controls its descriptor declares (views/index.js `controls`);
// the arrow keys step through layers and heads (in a view with a query
// token, through the tokens), Escape leaves. Full screen is asked for when
// the reader presses "Present" and the browser allows it; nothing depends on
// it. The state's `present` is written through the store like every other
// parameter (state.js parses and writes it).

import { VIEW_LIST, viewById } from '../views/index.js';

const $ = (id) => document.getElementById(id);

/** Label scale of the presentation for a window of w x h CSS px: 1 on a
 *  small screen, up to 1.6 on a large one (about 1.28 at 1280 x 720). The
 *  view lays itself out for the box divided by this factor, so what fits
 *  the box still fits the window once scaled. */
export function presentScale(w, h) {
  return Math.round(100 * Math.max(1, Math.min(1.6, w / 1000, h / 560))) / 100;
}

/** The box (CSS px, before scaling) a presented view may use: the window
 *  below the bar, less the view's padding, divided by the scale. */
export function presentBox({ winW, winH, barBottom, padX, padY, scale }) {
  return {
    width: Math.max(200, Math.floor(winW / scale - padX)),
    height: Math.max(160, Math.floor((winH - barBottom) / scale - padY - 2)),
  };
}

/** What the arrow keys do in view v (its descriptor): [left/right, up/down,
 *  shift+left/right] as words, for the bar's hint. */
export function keyHint(v) {
  const c = v.controls;
  const parts = [];
  if (v.query) parts.push('← → token');
  else if (c.head) parts.push('← → head');
  if (c.layer) parts.push('↑ ↓ layer');
  if (v.query && c.head) parts.push('Shift+← → head');
  parts.push('Esc leaves');
  return parts.join(' · ');
}

/** The store patch an arrow key asks for in presentation mode, or null.
 *  s: the state; v: the view's descriptor; L, H: the model's layers and
 *  heads; members: the raw tokens of each shown token (draw.js axisOf),
 *  for views with a query token. Steps stop at the ends (no wrap). */
export function stepPatch(key, { shift = false } = {}, s, v, { L, H, members = null }) {
  const c = v.controls;
  const dir = key === 'ArrowLeft' || key === 'ArrowUp' ? -1 : key === 'ArrowRight' || key === 'ArrowDown' ? 1 : 0;
  if (!dir) return null;
  const horizontal = key === 'ArrowLeft' || key === 'ArrowRight';
  if (!horizontal) {
    if (!c.layer) return null;
    const layer = Math.max(0, Math.min(L - 1, s.layer + dir));
    return layer === s.layer ? null : { layer };
  }
  if (v.query && !shift) {
    if (!members || !members.length) return null;
    const at = members.findIndex((m) => m.includes(s.query));
    const i = Math.max(0, Math.min(members.length - 1, (at < 0 ? 0 : at) + dir));
    const query = members[i][0];
    return query === s.query ? null : { query };
  }
  if (!c.head) return null;
  const order = [...Array(H).keys(), ...(c.mean ? ['mean'] : [])];
  const at = Math.max(0, order.indexOf(s.head));
  const head = order[Math.max(0, Math.min(order.length - 1, at + dir))];
  return head === s.head ? null : { head };
}

const typing = (el) => el instanceof Element && (el.closest('input, textarea, select, [contenteditable="true"]') !== null);

/** page: {store, models, runs}; members(): the shown tokens' raw tokens of
 *  the last run (view_ctx / draw.js axisOf). */
export function createPresent(page, { members }) {
  let fullByUs = false; // the full screen was asked for by "Present"

  function enter() {
    page.store.update({ present: true });
    const el = document.documentElement;
    if (el.requestFullscreen && !document.fullscreenElement && document.fullscreenEnabled) {
      fullByUs = true;
      el.requestFullscreen({ navigationUI: 'hide' }).catch(() => { fullByUs = false; }); // refused: the window will do
    }
  }

  function leave() {
    if (page.store.get().present) page.store.update({ present: false });
    if (document.fullscreenElement && fullByUs) document.exitFullscreen().catch(() => {});
    fullByUs = false;
  }

  function toggleFull() {
    if (document.fullscreenElement) { document.exitFullscreen().catch(() => {}); return; }
    if (!document.documentElement.requestFullscreen) return;
    fullByUs = true;
    document.documentElement.requestFullscreen().catch(() => { fullByUs = false; });
  }

  function onKey(ev) {
    const s = page.store.get();
    if (!s.present || s.embed || ev.defaultPrevented || ev.altKey || ev.ctrlKey || ev.metaKey) return;
    if (ev.key === 'Escape') { leave(); return; }
    if (typing(ev.target) || !page.models.info()) return;
    const v = viewById(s.view);
    const { n_layers: L, n_heads: H } = page.models.info().config;
    const patch = stepPatch(ev.key, { shift: ev.shiftKey }, s, v, { L, H, members: v.query ? members() : null });
    if (!patch) return;
    ev.preventDefault();
    page.store.update(patch);
  }

  function wire() {
    // The bar's view menu: one entry per registered view; choosing one is a
    // click on its tab (what opening it implies stays the tab's).
    const menu = $('present-view');
    for (const v of VIEW_LIST) menu.append(new Option(v.label, v.id));
    menu.addEventListener('change', () => {
      const tab = document.querySelector(`#view-tabs button[data-view="${CSS.escape(menu.value)}"]`);
      if (tab) tab.click();
    });
    $('present').addEventListener('click', enter);
    $('present-exit').addEventListener('click', leave);
    $('present-full').addEventListener('click', toggleFull);
    window.addEventListener('keydown', onKey);
    document.addEventListener('fullscreenchange', () => {
      const full = !!document.fullscreenElement;
      $('present-full').setAttribute('aria-pressed', String(full));
      $('present-full').textContent = full ? 'Leave full screen' : 'Full screen';
      // Escape in full screen is the browser's: it ends the full screen that
      // "Present" began, and with it the presentation.
      if (!full && fullByUs) { fullByUs = false; if (page.store.get().present) page.store.update({ present: false }); }
    });
  }

  /** The chrome follows state s (toolbar.applyChrome): the body class, the
   *  controls the view does not use left out of the bar, the keys' hint. */
  function apply(s) {
    const on = s.present && !s.embed;
    document.body.classList.toggle('present', on);
    $('present-bar').hidden = !on;
    $('present').hidden = on;
    if (!on) { document.body.style.removeProperty('--present-scale'); return; }
    const v = viewById(s.view);
    const c = v.controls;
    $('present-view').value = s.view;
    $('layer-ctl').classList.toggle('na', !c.layer);
    $('head-ctl').classList.toggle('na', !c.head);
    $('mode').classList.toggle('na', !c.mode);
    $('words-ctl').classList.toggle('na', !c.words);
    $('present-keys').textContent = keyHint(v);
  }

  /** The box the presented view lays itself out in (draw.js), the label
   *  scale set on the view as a side effect. */
  function box(viewEl) {
    const scale = presentScale(window.innerWidth, window.innerHeight);
    document.body.style.setProperty('--present-scale', String(scale));
    const cs = getComputedStyle(viewEl);
    const bar = document.querySelector('nav.controls').getBoundingClientRect();
    return presentBox({
      winW: document.documentElement.clientWidth,
      winH: window.innerHeight,
      barBottom: Math.max(0, bar.bottom),
      padX: parseFloat(cs.paddingLeft) + parseFloat(cs.paddingRight),
      padY: parseFloat(cs.paddingTop) + parseFloat(cs.paddingBottom),
      scale,
    });
  }

  return { wire, apply, box, enter, leave };
}
