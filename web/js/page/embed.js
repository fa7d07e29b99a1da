// embed.js — embed mode and the page side of snapshots: reading a snapshot
// the page carries, the "Load the model" choice, the embed's caption and its
// height message to the host page. The formats live in snapshot.js,
// state.js and export_data.js (no DOM there).
//
// Height message (embed mode inside a frame): whenever the page's height
// changes, it posts to its parent
//     {type: 'bertlens:height', height: <CSS px, integer>}
// A host page that allows a script can fit its frames with
//     addEventListener('message', (e) => { if (e.data && e.data.type === 'bertlens:height')
//       for (const f of document.querySelectorAll('iframe')) if (f.contentWindow === e.source) f.style.height = `${e.data.height}px`; });

import { snapshotTextOf } from '../lib/export_data.js';
import { serializeState } from './state.js';
import { viewById } from '../views/index.js';
import { FILE_LIMITS } from '../lib/snapshot.js';

/** The snapshot text this page carries (URL fragment or the standalone
 *  file's script element), or null. */
export function pageSnapshotText() {
  const el = document.getElementById('bertlens-snapshot');
  return snapshotTextOf(location.hash, el ? el.textContent : null);
}

/** A notebook output's options (python/bertlens puts them into the page it
 *  shows in an iframe, as <script type="application/json"
 *  id="bertlens-notebook">), or null on any other page:
 *    static  true when the output draws only the snapshot it carries (no
 *            model can be loaded); false for show(), whose page runs the
 *            model the kernel handed it and sends each drawing's snapshot to
 *            the output (notebookDrawn), which the notebook keeps
 *    screen  the height (CSS px) a view may grow to, instead of the window's
 *            (the output's frame is fitted to the page, so the window's
 *            height would follow the view's)
 *    search  the page state as URL parameters (a frame made from text has
 *            no address of its own)
 *    model   show()'s model, whose files the kernel sends (notebookFiles):
 *            'bundle' (a .blb or .blb.gz) or 'checkpoint' (a Hugging Face
 *            folder, converted in the page); '' for a static output */
let notebookOpts;
export function pageNotebook() {
  if (notebookOpts !== undefined) return notebookOpts;
  const el = document.getElementById('bertlens-notebook');
  let o = null;
  try {
    o = el ? JSON.parse(el.textContent) : null;
  } catch {
    o = null;
  }
  const screen = o && Number.isFinite(o.screen) ? Math.max(200, Math.min(4000, o.screen)) : 640;
  notebookOpts = o && typeof o === 'object'
    ? { static: o.static === true, screen, search: typeof o.search === 'string' ? o.search : '', model: ['bundle', 'checkpoint'].includes(o.model) ? o.model : '' } : null;
  return notebookOpts;
}

/** A notebook output: the body's classes (app.css hides what a notebook
 *  output has no use for: links to this frame, the file pickers, and with a
 *  static output the text boxes). */
export function startNotebook(opts) {
  document.body.classList.add('notebook');
  if (opts.static) document.body.classList.add('notebook-static');
}

/** A live notebook output's model files: asks the output around the page
 *  for them ({type: 'bertlens:files?'}), which answers {type:
 *  'bertlens:files', folder, files: [{name, blob}]} (posted, not written
 *  into the page: a bundle is tens of MB). Resolves to File objects named
 *  as in a dropped folder (convert.js filesFromBrowser). */
export function notebookFiles() {
  return new Promise((resolve, reject) => {
    const take = (e) => {
      if (e.source !== window.parent || !e.data || e.data.type !== 'bertlens:files') return;
      window.removeEventListener('message', take);
      const { folder, files } = e.data;
      if (!Array.isArray(files) || !files.every((f) => f && typeof f.name === 'string' && f.blob instanceof Blob)) {
        reject(new Error('the notebook sent no model files'));
        return;
      }
      resolve(files.map((f) => Object.assign(new File([f.blob], f.name), { relPath: `${folder}/${f.name}` })));
    };
    window.addEventListener('message', take);
    window.parent.postMessage({ type: 'bertlens:files?' }, '*');
  });
}

/** After a redraw in a live notebook output: its snapshot (or null when the
 *  view has none: snapshotText()) to the output around the page. */
export function notebookDrawn(snapshotText) {
  const nb = pageNotebook();
  if (!nb || nb.static || window.parent === window) return;
  snapshotText(FILE_LIMITS).then((text) => {
    if (text) window.parent.postMessage({ type: 'bertlens:snapshot', text }, '*');
  }, () => {});
}

/** The http(s) permalink a standalone file was exported from, or ''. */
export function pageSnapshotSource() {
  const el = document.getElementById('bertlens-snapshot');
  try {
    const from = el ? JSON.parse(el.textContent).from : '';
    return typeof from === 'string' && /^https?:\/\//.test(from) ? from : '';
  } catch {
    return '';
  }
}

let heightWatch = null;
let sendHeight = () => {};
/** In embed mode inside a frame, post the page's preferred height to the
 *  parent now and whenever it changes. preferred() gives the height the
 *  shown view asks for (0 if unknown: then the document's height is sent);
 *  notices shown above the view are added to it. */
export function postHeightToParent(preferred = () => 0) {
  if (window.parent === window || heightWatch) return;
  let last = -1;
  sendHeight = () => {
    const want = preferred();
    const notes = document.getElementById('notices');
    const h = Math.ceil(want > 0 ? want + (notes ? notes.offsetHeight : 0)
      : Math.max(document.documentElement.scrollHeight, document.body.scrollHeight));
    if (h === last) return;
    last = h;
    window.parent.postMessage({ type: 'bertlens:height', height: h }, '*');
  };
  heightWatch = new ResizeObserver(() => sendHeight());
  heightWatch.observe(document.body);
  sendHeight();
}

/** Embed mode (embed=1): the height message (preferred() as for
 *  postHeightToParent) and the caption's "Edit text" button. */
export function startEmbed(preferred) {
  postHeightToParent(preferred);
  wireEmbedEdit();
}

/** After a redraw of state s: an embed's caption (what is shown, a link to
 *  the full page) and its height, posted again if it changed. */
export function embedDrawn(s) {
  const c = viewById(s.view).controls;
  const text = s.text_b ? `“${s.text}” / “${s.text_b}”` : `“${s.text}”`;
  document.getElementById('embed-text').textContent = `${text} · ${s.view}${c.layer ? ` · layer ${s.layer}` : ''}${c.head ? ` · head ${s.head}` : ''}`;
  document.getElementById('embed-open').href = `${location.pathname}?${serializeState({ ...s, embed: false })}`;
  if (s.embed) sendHeight();
}

/** Embed mode: the caption's "Edit text" button shows the text boxes (an
 *  embed otherwise shows only its view). */
export function wireEmbedEdit() {
  const btn = document.getElementById('embed-edit');
  const inputs = document.querySelector('.inputs');
  if (!btn || !inputs) return;
  btn.addEventListener('click', () => {
    inputs.style.display = 'grid';
    btn.hidden = true;
    document.getElementById('text-a').focus();
  });
}

/** Show (or update) the visible choice to download the model. why: what the
 *  snapshot lacks; label: e.g. "Load the model (24 MB)"; onAccept runs once.
 *  Without onAccept (a page with no engine) the choice is a link to href, the
 *  live page the snapshot came from, if any. */
export function offerModel(why, label, onAccept, href = '') {
  const box = document.getElementById('notices');
  let el = document.getElementById('model-offer');
  if (!el) {
    el = document.createElement('div');
    el.id = 'model-offer';
    el.className = 'notice info model-offer';
    const msg = document.createElement('span');
    msg.className = 'msg';
    const btn = document.createElement('button');
    btn.type = 'button';
    btn.id = 'load-model';
    el.append(msg, btn);
    box.prepend(el);
  }
  el.querySelector('.msg').textContent = onAccept
    ? `This view was drawn without the model, from 8-bit numbers stored with it. It does not hold ${why}; that needs the model. `
    : `This file holds only the view it shows; it does not hold ${why}. `;
  const btn = el.querySelector('button');
  btn.textContent = label;
  if (!onAccept) {
    btn.hidden = true;
    if (!href) return;
    // A standalone file cannot load the model: offer the live page instead.
    let a = el.querySelector('a');
    if (!a) {
      a = document.createElement('a');
      a.target = '_blank';
      a.rel = 'noopener';
      el.insertBefore(a, btn);
    }
    a.href = href;
    a.textContent = 'Open it in bertlens to explore further ↗';
    return;
  }
  btn.onclick = () => {
    btn.disabled = true;
    el.remove();
    onAccept();
  };
}

export function clearOffer() {
  const el = document.getElementById('model-offer');
  if (el) el.remove();
}

