// present.js — presentation mode (present=1, the "Present" button): one view
// fills the window with its labels scaled up, under a compact bar holding
// only the controls its descriptor declares (views/index.js `controls`);
// the arrow keys step through layers and heads (in a view with a query
// token, through the tokens), Escape leaves. Full screen is asked for when
// the reader presses "Present" and the browser allows it; nothing depends on
// it. The state's `present` is written through the store like every other
// parameter (state.js parses and writes it).

import { VIEW_LIST, viewById } from '../views/index.js';
import { keyHint, stepPatch } from './present_box.js';
import { membersOf } from './shown.js';

export { presentScale, presentBox, keyHint, stepPatch } from './present_box.js';

const $ = (id) => document.getElementById(id);

const typing = (el) => el instanceof Element && (el.closest('input, textarea, select, [contenteditable="true"]') !== null);

/** Presentation mode on the store; a view with a query token steps through
 *  the shown tokens (their raw tokens, as a click maps them: shown.js). */
export function createPresent(store) {
  let fullByUs = false; // the full screen was asked for by "Present"

  function enter() {
    store.update({ present: true });
    const el = document.documentElement;
    if (el.requestFullscreen && !document.fullscreenElement && document.fullscreenEnabled) {
      fullByUs = true;
      el.requestFullscreen({ navigationUI: 'hide' }).catch(() => { fullByUs = false; }); // refused: the window will do
    }
  }

  function leave() {
    if (store.get().present) store.update({ present: false });
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
    const s = store.get();
    if (!s.present || s.embed || ev.defaultPrevented || ev.altKey || ev.ctrlKey || ev.metaKey) return;
    if (ev.key === 'Escape') { leave(); return; }
    if (typing(ev.target) || !store.model().info) return;
    const v = viewById(s.view);
    const { n_layers: L, n_heads: H } = store.model().info.config;
    const patch = stepPatch(ev.key, { shift: ev.shiftKey }, s, v, { L, H, members: v.query ? membersOf(store) : null });
    if (!patch) return;
    ev.preventDefault();
    store.update(patch);
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
      if (!full && fullByUs) { fullByUs = false; if (store.get().present) store.update({ present: false }); }
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

  return { wire, apply, enter, leave };
}
