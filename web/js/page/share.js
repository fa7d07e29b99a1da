// share.js — what leaves the page: images (SVG/PNG), links and embed code,
// standalone HTML files and the numbers (CSV/JSON). Everything is made from
// what is shown: the store's question with what the current run decides
// (shown.js shownNow), and the model the store shows.

import { serializeState, embedSnippet, permalinkSearch, MAX_PERMALINK } from './state.js';
import { formatBytes, base64ToBytes } from '../engine/bundles.js';
import { THEMES } from '../views/common.js';
import { viewById } from '../views/index.js';
import { stageToSVG, svgToPNG, download, titleLine } from './export.js';
import { MAX_TOKENS } from '../lib/snapshot.js';
import { toCSV, toJSON, standaloneHtml } from '../lib/export_data.js';
import { shownNow, frameFor, snapshotText } from './shown.js';
import { runLabels } from '../lib/tokens.js';

const $ = (id) => document.getElementById(id);

function viewFileName(s) {
  const c = viewById(s.view).controls;
  return `bertlens-${s.view}${c.layer ? `-layer${s.layer}` : ''}${c.head ? `-head${s.head}` : ''}-${s.mode}`;
}

/** The viewer page (dist/viewer.html) that a standalone file is made of:
 *  built into the one-file page (#bertlens-viewer, base64), else fetched. */
async function viewerTemplate() {
  const inline = document.getElementById('bertlens-viewer');
  if (inline) return new TextDecoder().decode(base64ToBytes(inline.textContent));
  if (location.protocol === 'file:') throw new Error('this page was opened from a file and has no viewer built in; open bertlens.html, or export from the bertlens site');
  const res = await fetch(new URL('viewer.html', document.baseURI).href);
  if (!res.ok) throw new Error(`the viewer page could not be fetched (HTTP ${res.status})`);
  return res.text();
}

/** What leaves the page, of the store's question and model; charts: the
 *  views' charts by id (their export context, their own results). */
export function createShare(store, { charts }) {
  const notice = store.notice;
  const clearNotice = store.clearNotice;
  const shown = () => shownNow(store);
  /** The model's name for titles and exports: the store's, else the snapshot's. */
  const modelName = () => {
    const snap = store.snapshot();
    return store.model().name || (snap && (snap.model.name || snap.model.id)) || '';
  };

  async function exportView(kind) {
    // The view's stage: what it draws (views/index.js), SVG, canvases or HTML.
    const stage = document.querySelector('#view .stage');
    const { s } = shown();
    const v = viewById(s.view);
    if (!stage) {
      notice('export', 'warn', `The ${v.label.toLowerCase()} has nothing drawn to export yet.`);
      return;
    }
    const last = store.run().last;
    try {
      const model = modelName();
      const context = charts[s.view].exportContext();
      const heading = titleLine({ ...s, model, queryLabel: last && v.query ? runLabels(last)[Math.min(s.query, last.T - 1)] : null }, v, context.subject);
      const svg = stageToSVG(stage, { background: THEMES[s.theme].bg, title: heading, heading, context, theme: THEMES[s.theme] });
      if (kind === 'svg') download(new Blob([svg], { type: 'image/svg+xml' }), `${viewFileName(s)}.svg`);
      else download(await svgToPNG(svg, 2), `${viewFileName(s)}.png`);
      clearNotice('export');
    } catch (e) {
      notice('export', 'error', `Export failed: ${e.message}`);
    }
  }

  async function share(kind) {
    const base = `${location.origin}${location.pathname}`;
    const { s: shownS, run: cur } = shown();
    const s = { ...shownS, embed: false };
    const run = cur && !cur.snapshot ? cur : null;
    const last = store.run().last;
    if (kind === 'link') {
      // At once when the plain link is short; the compressed one may follow.
      const plain = `${base}?${serializeState(s)}`;
      if (plain.length < 2000 && !(run && run.truncated)) $('share-text').value = plain;
    }
    const { search, cut } = await permalinkSearch(s, { run, maxChars: MAX_PERMALINK - base.length - 1 });
    let text = `${base}?${search}`;
    const notes = [];
    if (cut) notes.push(`The text is too long for a link: it keeps the first ${cut.kept} of ${cut.of} ${cut.unit}.`);
    if (kind === 'embed') {
      let snap = null;
      try { snap = await snapshotText(store); } catch { snap = null; }
      const size = frameFor(store, s);
      text = embedSnippet(base, s, { width: size.width, height: size.height, search, snapshot: snap });
      if (!snap && last) {
        const { entry } = store.model();
        const mb = entry && entry.bytes ? ` (${formatBytes(entry.bytes)})` : '';
        notes.push(last.T > MAX_TOKENS
          ? `This input has ${last.T} tokens, more than the ${MAX_TOKENS} an instant embed holds: the embed is a normal link, and each reader's browser downloads the model${mb} to draw it.`
          : `The ${s.view} view has no instant (snapshot) form: the embed is a normal link, and each reader's browser downloads the model${mb} to draw it.`);
      }
    }
    $('share-box').hidden = false;
    $('share-label').textContent = kind === 'link' ? 'Link to this view' : 'Embed code (paste into a web page)';
    $('share-text').value = text;
    $('share-text').select();
    const tail = notes.length ? ` ${notes.join(' ')}` : '';
    try {
      await navigator.clipboard.writeText(text);
      notice('share', 'info', `${kind === 'link' ? 'Link copied to the clipboard.' : 'Embed code copied to the clipboard.'}${tail}`);
    } catch {
      notice('share', 'info', `Select the text below and copy it (the clipboard is not available here).${tail}`);
    }
    if (store.model().local) notice('share-local', 'warn', 'This view uses a bundle from a local file; the link opens the model from the list instead.');
  }

  /** Download the view as a standalone HTML file, or its numbers as CSV/JSON. */
  async function exportData(kind) {
    const { s, run } = shown();
    if (!run) {
      notice('export', 'warn', 'The view is not drawn yet; try again once it is.');
      return;
    }
    const v = viewById(s.view);
    const name = viewFileName(s);
    try {
      if (kind === 'html') {
        const snap = await snapshotText(store);
        if (!v.snapshot) throw new Error(`a standalone file cannot hold the ${v.label.toLowerCase()}; use a link instead`);
        if (!snap) throw new Error(`a standalone file holds inputs of up to ${MAX_TOKENS} tokens; this one has ${run.T}`);
        const template = await viewerTemplate();
        const base = `${location.origin}${location.pathname}`;
        const { search } = await permalinkSearch({ ...s, embed: false }, { run: run.snapshot ? null : run, maxChars: MAX_PERMALINK - base.length - 1 });
        const html = standaloneHtml(template, snap, `bertlens ${s.view} view: ${s.text}`, `${base}?${search}`);
        download(new Blob([html], { type: 'text/html' }), `${name}.html`);
      } else {
        if (!v.shown) throw new Error(`the ${v.label.toLowerCase()} has no numbers to export; save it as SVG or PNG`);
        const shownM = v.shown(run, s, charts[s.view]); // (the chart: a view that keeps its own results)
        const snap = store.snapshot();
        // a listed model's entry; else the model's own name (a converted or Hub model, a bundle file)
        const { entry, local, name: own } = store.model();
        const model = entry || (local ? { id: '', name: own } : snap ? snap.model : {});
        if (kind === 'csv') download(new Blob([toCSV(shownM)], { type: 'text/csv' }), `${name}.csv`);
        else download(new Blob([toJSON(shownM, model)], { type: 'application/json' }), `${name}.json`);
      }
      clearNotice('export');
    } catch (e) {
      notice('export', 'error', `Export failed: ${e.message}`);
    }
  }

  return {
    /** An image (svg, png) of the view, a standalone file (html) or its numbers (csv, json). */
    exportAs: (kind) => (kind === 'svg' || kind === 'png' ? exportView(kind) : exportData(kind)),
    share,
  };
}
