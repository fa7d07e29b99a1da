// url.js — the address bar follows what is shown: the plain form at once
// when short, the compressed permalink (state.js permalinkSearch) after.
// An embed in another page, a snapshot link and a page opened from a file
// keep their URL as given; a frame made from text (about:srcdoc, a notebook
// output) has none. Another view, layer or head is a new history
// entry (pushState), so Back goes back within the page; everything else
// (typing above all) replaces the current entry. Back and Forward give the
// entry's state to the store (restore, on popstate).

import { serializeState, permalinkSearch, MAX_PERMALINK, parseStateAsync, fitToModel } from './state.js';
import { textKey } from './shown.js';

/** What makes a history entry of its own: the view, layer and head. */
export const entryKeyOf = (s) => JSON.stringify([s.view, s.layer, s.head]);

/** The address bar of the store's question. */
export function createUrlSync(store) {
  let syncSeq = 0;
  let due = null; // [state, run] of the sync awaiting a painted frame
  let entryKey = null; // entryKeyOf the state the current history entry holds (null: none written yet)

  /** Now: s as shown, run (or null) for the text the model used. */
  function sync(s, run) {
    if (s.embed && window.self !== window.top) return; // keep an embed's URL as given
    if (store.snapshot() || location.protocol === 'file:') return; // keep a snapshot link as given
    if (location.protocol === 'about:') return; // a frame made from text (a notebook output) has no address to write
    const seq = ++syncSeq;
    const key = entryKeyOf(s);
    let push = entryKey !== null && key !== entryKey; // the first write of this sync makes a new entry
    const write = (url) => {
      if (push) history.pushState(null, '', url);
      else history.replaceState(null, '', url);
      push = false;
      entryKey = key;
    };
    // At once when the plain form is short (it is then usually the final one);
    // the compressed form follows when it is shorter.
    const plain = `${location.pathname}?${serializeState(s)}`;
    if (plain.length < 2000 && !(run && run.truncated)) write(plain);
    permalinkSearch(s, { run, maxChars: MAX_PERMALINK - location.href.split('?')[0].length - 1 }).then(({ search }) => {
      if (seq !== syncSeq) return;
      const url = `${location.pathname}?${search}`;
      if (push || url !== `${location.pathname}${location.search}`) write(url);
    });
  }

  /** s follows prev without the reader asking (why.auto): the entry that
   *  holds prev, if written, becomes s's, so s replaces it. */
  function follow(s, prev) {
    if (entryKey !== null && entryKey === entryKeyOf(prev)) entryKey = entryKeyOf(s);
  }

  /** The state s came from the history entry now shown (Back, Forward): it
   *  is that entry's, not a new one. */
  function adopt(s) {
    entryKey = entryKeyOf(s);
    syncSeq++; // a sync under way was for the entry left
    due = null;
    delete document.body.dataset.urlPending;
  }

  /** After a redraw, once its frame is painted: history.replaceState can
   *  block the page for tens of ms (4–48 ms a call measured in headless
   *  Chromium during an ablation click), more than the model view takes to
   *  draw. One update per frame however many redraws; body[data-url-pending]
   *  is set until it is done (the browser tests wait for it). */
  function afterPaint(s, run) {
    const first = !due;
    due = [s, run];
    if (!first) return;
    document.body.dataset.urlPending = '1';
    const go = () => {
      if (!due) return;
      const [ds, drun] = due;
      due = null;
      delete document.body.dataset.urlPending;
      sync(ds, drun);
    };
    requestAnimationFrame(() => setTimeout(go, 0));
    setTimeout(go, 200); // no frames in a hidden tab
  }

  /** Back or Forward within the page: the entry's state (its URL) goes to
   *  the store; the model, the embed flag, presentation mode (a mode of the
   *  window, entered and left by the reader: Back after leaving it must not
   *  bring it back) and (unless the entry names one) the theme stay as they
   *  are. The entry's address is then rewritten to what is shown. */
  async function restore() {
    const search = location.search;
    const { state } = await parseStateAsync(search);
    if (search !== location.search) return; // another entry meanwhile
    const cur = store.get();
    const info = store.model().info;
    let s = info ? fitToModel(state, { layers: info.config.n_layers, heads: info.config.n_heads }).state : state;
    s = { ...s, model: cur.model, embed: cur.embed, present: cur.present, theme: new URLSearchParams(search).has('theme') ? s.theme : cur.theme };
    if (s.span) s.spanOf = textKey(s);
    adopt(s);
    store.update(s); // (the text boxes follow: toolbar.js applyChrome)
  }

  function wire() {
    window.addEventListener('popstate', () => { restore().catch(() => {}); });
  }

  return { sync, afterPaint, follow, wire };
}
