// toolbar.js — the page's controls: each turns a reader's action into an
// intent (a store patch, or an action dispatched: 'load', 'pick',
// 'save-converted', 'export', 'share', 'redraw') and follows the state back
// (applyChrome, the store's first subscriber). Also the view tabs (one per
// registered view), the layer/head choices of the loaded model, drag and
// drop, and a redraw on resize.

import { checkpointFromDrop } from '../engine/convert.js';
import { VIEW_LIST, VIEW_PARAMS, viewById } from '../views/index.js';
import { pairTemplate, templateSpecials } from '../lib/tokens.js';

const d3 = globalThis.d3;
const $ = (id) => document.getElementById(id);

const hasFiles = (e) => e.dataTransfer && Array.from(e.dataTransfer.types || []).includes('Files');

/** The controls of the store's question. */
export function createToolbar(store) {
  const update = (patch) => store.update(patch);
  const load = (source) => store.dispatch({ type: 'load', source });

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
    if (store.model().info) {
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
    const { info, engine } = store.model();
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

  function wire() {
    // A span stays with the text it was chosen on (draw.js shownState); the
    // views' other selections of tokens (params with perText: a cell, the
    // positions asked or masked in the Predictions view) name positions of
    // the old tokens, so a new text drops them.
    const onText = () => {
      const cur = store.get();
      const text = $('text-a').value, textB = $('text-b').value;
      const patch = { text, text_b: textB };
      if (text !== cur.text || textB !== (cur.text_b || '')) {
        for (const p of VIEW_PARAMS) if (p.perText && cur[p.key] !== p.def) patch[p.key] = p.def;
      }
      store.update(patch, { typed: true });
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
    d3.selectAll('#view-tabs button').on('click', function () {
      const v = viewById(this.dataset.view);
      const patch = { view: v.id };
      const entered = v.enter ? v.enter(store.get()) : null;
      if (entered) {
        Object.assign(patch, entered.patch);
        if (entered.note) store.notice(`enter-${v.id}`, 'info', entered.note);
      }
      update(patch);
    });
    d3.selectAll('#mode button').on('click', function () { update({ mode: this.dataset.mode }); });
    $('layer').addEventListener('change', (e) => update({ layer: Number(e.target.value) }));
    $('head').addEventListener('change', (e) => update({ head: e.target.value === 'mean' ? 'mean' : Number(e.target.value) }));
    $('hide').addEventListener('change', (e) => update({ hide: e.target.checked }));
    $('renorm').addEventListener('change', (e) => update({ renorm: e.target.checked }));
    $('words').addEventListener('change', (e) => update({ words: e.target.checked }));
    $('theme-toggle').addEventListener('click', () => update({ theme: store.get().theme === 'dark' ? 'light' : 'dark' }));
    $('model-select').addEventListener('change', (e) => store.dispatch({ type: 'pick', value: e.target.value }));
    $('open-checkpoint').addEventListener('click', () => $('checkpoint-input').click());
    $('checkpoint-input').addEventListener('change', (e) => {
      const files = Array.from(e.target.files || []);
      if (files.length) load({ kind: 'checkpoint', files: Promise.resolve(files), dtype: $('convert-dtype').value });
      e.target.value = '';
    });
    $('save-converted').addEventListener('click', () => store.dispatch({ type: 'save-converted' }));
    $('open-file').addEventListener('click', () => $('file-input').click());
    $('file-input').addEventListener('change', (e) => {
      const f = e.target.files && e.target.files[0];
      if (f) load({ kind: 'file', file: f });
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
      if (checkpoint) return load({ kind: 'checkpoint', files: checkpoint, dtype: $('convert-dtype').value });
      const f = e.dataTransfer.files[0];
      if (f) load({ kind: 'file', file: f });
    });
    for (const kind of ['svg', 'png', 'html', 'csv', 'json']) $(`export-${kind}`).addEventListener('click', () => store.dispatch({ type: 'export', kind }));
    $('copy-link').addEventListener('click', () => store.dispatch({ type: 'share', kind: 'link' }));
    $('copy-embed').addEventListener('click', () => store.dispatch({ type: 'share', kind: 'embed' }));
    let resizeTimer = 0;
    window.addEventListener('resize', () => {
      clearTimeout(resizeTimer);
      resizeTimer = setTimeout(() => store.dispatch({ type: 'redraw' }), 150);
    });
  }

  return { buildViewTabs, applyChrome, modelShape, showSpecials, showText, wire };
}
