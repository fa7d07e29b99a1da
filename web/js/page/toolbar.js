// toolbar.js — the page's controls: each turns a reader's action into an
// intent (a store patch, or a call on a feature controller: models, share)
// and follows the state back (applyChrome, the store's first subscriber).
// Also the view tabs (one per registered view), the layer/head choices of
// the loaded model, drag and drop, and a redraw on resize.

import { checkpointFromDrop } from '../engine/convert.js';
import { VIEW_LIST, VIEW_PARAMS, viewById } from '../views/index.js';
import { ablationBar } from './ablation_bar.js';
import { spanBar } from './span_bar.js';
import { notice } from './notices.js';
import { createPresent } from './present.js';
import { shownState, axisOf, textKey } from './draw.js';
import { parseStateAsync, fitToModel } from './state.js';
import { pairTemplate, templateSpecials } from '../lib/tokens.js';

const d3 = globalThis.d3;
const $ = (id) => document.getElementById(id);

const hasFiles = (e) => e.dataTransfer && Array.from(e.dataTransfer.types || []).includes('Files');

/** page: {store, models, runs, share, drawing}. */
export function createToolbar(page) {
  const update = (patch) => page.store.update(patch);
  // A change no reader made (why.auto, view_ctx.js) replaces the history entry.
  page.store.subscribe((s, prev, why) => { if (why.auto) page.url.follow(s, prev); });
  const abl = ablationBar($('ablation'), { update });
  const spans = spanBar($('span-ctl'), $('view'), { update });
  // Presentation mode; a view with a query token steps through the shown
  // tokens (their raw tokens, as a click maps them: draw.js axisOf).
  const present = createPresent(page, {
    members() {
      const run = page.runs.last();
      return run ? axisOf(run, shownState(page.store.get(), run).state).members : null;
    },
  });

  /** One tab per registered view (index.html's buttons, if any, are reused). */
  function buildViewTabs() {
    d3.select('#view-tabs').selectAll('button')
      .data(VIEW_LIST, function (v) { return v ? v.id : this.dataset.view; })
      .join('button')
      .attr('type', 'button')
      .attr('data-view', (v) => v.id)
      .text((v) => v.label);
  }

  /** The controls follow state s (the store's subscriber). */
  function applyChrome(s) {
    const c = viewById(s.view).controls;
    document.body.dataset.theme = s.theme;
    document.body.classList.toggle('embed', s.embed);
    present.apply(s);
    $('embed-caption').hidden = !s.embed;
    $('theme-toggle').textContent = s.theme === 'dark' ? 'Light theme' : 'Dark theme';
    $('theme-toggle').setAttribute('aria-pressed', String(s.theme === 'dark'));
    d3.selectAll('#view-tabs button').attr('aria-pressed', function () { return String(this.dataset.view === s.view); });
    d3.selectAll('#mode button').attr('aria-pressed', function () { return String(this.dataset.mode === s.mode); });
    $('hide').checked = s.hide;
    $('renorm').checked = s.renorm;
    $('renorm').disabled = !s.hide;
    $('renorm-ctl').classList.toggle('disabled', !s.hide);
    $('words').checked = s.words;
    $('words').disabled = !c.words;
    $('layer').disabled = !c.layer;
    $('layer-ctl').classList.toggle('disabled', !c.layer);
    d3.selectAll('#mode button').property('disabled', !c.mode);
    $('head').disabled = !c.head;
    $('head-ctl').classList.toggle('disabled', !c.head);
    if (page.models.info()) {
      $('layer').value = String(s.layer);
      $('head').value = String(s.head);
      const meanOpt = $('head').querySelector('option[value="mean"]');
      if (meanOpt) meanOpt.disabled = !c.mean;
    }
    // A text changed by other than typing (a view masking a word) shows in
    // the boxes; while typing they already hold it.
    if ($('text-a').value !== s.text) $('text-a').value = s.text;
    if ($('text-b').value !== (s.text_b || '')) $('text-b').value = s.text_b || '';
    $('mode-help').textContent = s.mode === 'norm'
      ? 'Showing ‖α f(x)‖: each attention weight times the length of the value vector it actually mixes in (Kobayashi et al. 2020) — a large weight on a near-zero vector, often [SEP], counts for little.'
      : 'Showing attention weights α: how much each query token (row) takes from each key token (column); every row sums to 1. Switch to norms to weigh them by what is actually moved.';
  }

  /** The hide control names the special tokens the model's template adds
   *  to run ("Hide <s>/</s>" for a RoBERTa), what it hides; the Sentence B
   *  hint the model's pair template ("<s> A </s></s> B </s>"), once per
   *  model, from its own tokenizer (the engine's tokens of "A", "B"). */
  let templateFor = null; // the model info the hint was asked for
  function showSpecials(run) {
    const names = templateSpecials(run);
    $('hide-names').textContent = names.length ? names.join('/') : 'special tokens';
    const info = page.models.info();
    const engine = page.models.engine();
    if (!info || !engine || templateFor === info) return;
    templateFor = info;
    engine.call('corpus-tokens', { a: 'A', b: 'B' }).then((t) => {
      if (templateFor === info) $('pair-template').textContent = pairTemplate(t.tokens, t.word_ids);
    }).catch(() => { templateFor = null; }); // asked again after the next run
  }

  /** The layer and head choices of a model of config's shape. */
  function modelShape(config) {
    d3.select('#layer').selectAll('option').data(d3.range(config.n_layers)).join('option')
      .attr('value', (l) => l).text((l) => `${l}`);
    d3.select('#head').selectAll('option').data([...d3.range(config.n_heads), 'mean']).join('option')
      .attr('value', (h) => h).text((h) => (h === 'mean' ? 'mean of all heads' : `${h}`));
  }

  /** The text boxes show state s (at the start). */
  function showText(s) {
    $('text-a').value = s.text;
    $('text-b').value = s.text_b;
  }

  /** Back or Forward within the page: the entry's state (its URL) goes to
   *  the store; the model, the embed flag, presentation mode (a mode of the
   *  window, entered and left by the reader: Back after leaving it must not
   *  bring it back) and (unless the entry names one) the theme stay as they
   *  are. The entry's address is then rewritten to what is shown (url.js). */
  async function restore() {
    const search = location.search;
    const { state } = await parseStateAsync(search);
    if (search !== location.search) return; // another entry meanwhile
    const cur = page.store.get();
    const info = page.models.info();
    let s = info ? fitToModel(state, { layers: info.config.n_layers, heads: info.config.n_heads }).state : state;
    s = { ...s, model: cur.model, embed: cur.embed, present: cur.present, theme: new URLSearchParams(search).has('theme') ? s.theme : cur.theme };
    if (s.span) s.spanOf = textKey(s);
    page.url.adopt(s);
    if (s.text !== cur.text || s.text_b !== cur.text_b) showText(s);
    update(s);
  }

  function wire() {
    // A span stays with the text it was chosen on (draw.js shownState); the
    // views' other selections of tokens (params with perText: a cell, the
    // positions asked or masked in the Predictions view) name positions of
    // the old tokens, so a new text drops them.
    const onText = () => {
      const cur = page.store.get();
      const text = $('text-a').value, textB = $('text-b').value;
      const patch = { text, text_b: textB };
      if (text !== cur.text || textB !== (cur.text_b || '')) {
        for (const p of VIEW_PARAMS) if (p.perText && cur[p.key] !== p.def) patch[p.key] = p.def;
      }
      page.store.update(patch, { typed: true });
    };
    $('text-a').addEventListener('input', onText);
    $('text-b').addEventListener('input', onText);
    // The skip link moves the focus (not only the scroll) into the view, and
    // leaves the address (a snapshot's #s=) alone.
    $('skip-link').addEventListener('click', (e) => {
      e.preventDefault();
      $('view').focus();
      $('view').scrollIntoView({ block: 'start' });
    });
    present.wire();
    window.addEventListener('popstate', () => { restore().catch(() => {}); });
    d3.selectAll('#view-tabs button').on('click', function () {
      const v = viewById(this.dataset.view);
      const patch = { view: v.id };
      const entered = v.enter ? v.enter(page.store.get()) : null;
      if (entered) {
        Object.assign(patch, entered.patch);
        if (entered.note) notice(`enter-${v.id}`, 'info', entered.note);
      }
      update(patch);
    });
    d3.selectAll('#mode button').on('click', function () { update({ mode: this.dataset.mode }); });
    $('layer').addEventListener('change', (e) => update({ layer: Number(e.target.value) }));
    $('head').addEventListener('change', (e) => update({ head: e.target.value === 'mean' ? 'mean' : Number(e.target.value) }));
    $('hide').addEventListener('change', (e) => update({ hide: e.target.checked }));
    $('renorm').addEventListener('change', (e) => update({ renorm: e.target.checked }));
    $('words').addEventListener('change', (e) => update({ words: e.target.checked }));
    $('theme-toggle').addEventListener('click', () => update({ theme: page.store.get().theme === 'dark' ? 'light' : 'dark' }));
    $('model-select').addEventListener('change', (e) => page.models.pick(e.target.value));
    $('open-checkpoint').addEventListener('click', () => $('checkpoint-input').click());
    $('checkpoint-input').addEventListener('change', (e) => {
      const files = Array.from(e.target.files || []);
      if (files.length) page.models.loadModel({ kind: 'checkpoint', files: Promise.resolve(files), dtype: $('convert-dtype').value });
      e.target.value = '';
    });
    $('save-converted').addEventListener('click', () => page.models.saveConverted());
    $('open-file').addEventListener('click', () => $('file-input').click());
    $('file-input').addEventListener('change', (e) => {
      const f = e.target.files && e.target.files[0];
      if (f) page.models.loadModel({ kind: 'file', file: f });
      e.target.value = '';
    });
    // Drag and drop a bundle (or a Hugging Face folder) anywhere on the page.
    let depth = 0;
    window.addEventListener('dragenter', (e) => { if (hasFiles(e)) { depth++; $('drop-overlay').hidden = false; } });
    window.addEventListener('dragleave', () => { depth = Math.max(0, depth - 1); if (!depth) $('drop-overlay').hidden = true; });
    window.addEventListener('dragover', (e) => { if (hasFiles(e)) e.preventDefault(); });
    window.addEventListener('drop', (e) => {
      if (!hasFiles(e)) return;
      e.preventDefault();
      depth = 0;
      $('drop-overlay').hidden = true;
      const checkpoint = checkpointFromDrop(e.dataTransfer); // a Hugging Face folder: convert it
      if (checkpoint) return page.models.loadModel({ kind: 'checkpoint', files: checkpoint, dtype: $('convert-dtype').value });
      const f = e.dataTransfer.files[0];
      if (f) page.models.loadModel({ kind: 'file', file: f });
    });
    for (const kind of ['svg', 'png']) $(`export-${kind}`).addEventListener('click', () => page.share.exportView(kind));
    $('copy-link').addEventListener('click', () => page.share.share('link'));
    $('copy-embed').addEventListener('click', () => page.share.share('embed'));
    for (const kind of ['html', 'csv', 'json']) $(`export-${kind}`).addEventListener('click', () => page.share.exportData(kind));
    let resizeTimer = 0;
    window.addEventListener('resize', () => {
      clearTimeout(resizeTimer);
      resizeTimer = setTimeout(() => {
        const run = page.runs.currentFor(page.store.get());
        if (run && !page.runs.busy()) page.drawing.draw(run, { keepState: true });
      }, 150);
    });
  }

  return { buildViewTabs, applyChrome, modelShape, showSpecials, showText, wire, abl, spans, present };
}
