// app.js — the page controller: URL state, model loading, running the model
// in the worker (debounced, latest input wins), and drawing the chosen view.
// All user text, URL values and bundle metadata reach the page as text only
// (textContent / d3 .text()), never as HTML.

import { serializeState, stateFromSnapshot, fitToModel, fitQuery, fitSpan, embedSnippet, DEFAULTS } from './state.js';
import { tokenAxis, spanAxis } from './data.js';
import { Engine, hasWasmSimd } from './engine.js';
import { makeRunRequest, makeLikeRequest, makeAnalyzeRequest, withAnalysis, makeQkRequest, withQk, resultCovers, mergeNeeds, ANALYSIS } from './protocol.js';
import { comparing, fitAblate, toggleHead, maskSet } from './compare.js';
import { Comparer, compareKey, LOCAL_MODEL } from './compare_runs.js';
import { ablationBar } from './ablation_bar.js';
import { spanBar } from './span_bar.js';
import { fetchIndex, loadListedBundle, loadFileBundle, formatBytes, base64ToBytes, storeConverted, findConverted } from './bundles.js';
import { convertCheckpoint, filesFromBrowser, checkpointFromDrop, gzipBytes } from './convert.js';
import { THEMES, viewBox } from './views/common.js';
import { VIEW_LIST, viewById, HEAD_VIEW_ID } from './views/index.js';
import { RunScheduler } from './scheduler.js';
import { stageToSVG, svgToPNG, download, titleLine } from './export.js';
import { ASSETS } from './assets.js';
import { parseStateAsync, permalinkSearch, proposeEmbedSize, MAX_PERMALINK } from './state.js';
import { decodeSnapshot, runFromSnapshot, snapshotCovers, snapshotFromRun, encodeSnapshot, MAX_TOKENS } from './snapshot.js';
import { pageSnapshotText, pageSnapshotSource, postHeightToParent, notifyHeight, wireEmbedEdit, offerModel, clearOffer } from './embed.js';
import { shownMatrices, toCSV, toJSON, standaloneHtml } from './export_data.js';

const d3 = globalThis.d3;
const $ = (id) => document.getElementById(id);

const app = {
  state: { ...DEFAULTS },
  models: [],
  entry: null, // listed model in use (null for a local file)
  localName: null, // name of a user's own bundle file in use
  info: null, // blw_info_json of the loaded model
  engine: null,
  run: null, // last worker result
  runKey: null, // inputs of app.run
  scheduler: null, // RunScheduler (scheduler.js), set below
  loadSeq: 0,
  loadingModel: 0, // loadSeq of a model load in progress (0: none)
  inputAt: 0,
  snap: null, // snapshot drawn without the model (snapshot mode), else null
  liveStarted: false, // the engine and model load were started
  spanTokens: null, // the tokens (joined) the span's positions refer to
};

// The views (views/index.js registry): one chart each; what a view needs,
// its controls and its data come from its descriptor.
const viewCtx = {
  update: (patch) => update(patch),
  openHead: (layer, head) => update({ view: HEAD_VIEW_ID, layer, head }),
  openNeuron: (i) => openNeuron(i),
  // Shift-click on a shown token: its raw tokens join or leave the span.
  toggleSpan: (shownIndex) => {
    const raw = app.axis ? app.axis.members[shownIndex] : [shownIndex];
    const cur = new Set(app.state.span || []);
    const allIn = raw.every((t) => cur.has(t));
    for (const t of raw) { if (allIn) cur.delete(t); else cur.add(t); }
    update({ span: cur.size ? [...cur].sort((a, b) => a - b) : null });
  },
  nHeads: () => app.info.config.n_heads,
  // Head ablation (ablation_bar.js): in its mode a click on a head switches
  // it off or on.
  ablating: () => abl.on,
  toggleAblate: (l, h) => update({ ablate: toggleHead(app.state.ablate, l, h, app.info.config.n_layers, app.info.config.n_heads) }),
  // A bundle file of the reader's as the second model of a comparison.
  compareWithFile: (file) => compareWithFile(file),
  // Views that can show one head the user picked elsewhere (tab order).
  viewsShowingOneHead: () => VIEW_LIST.filter((v) => v.controls.layer && v.axis !== false).map((v) => ({ id: v.id, label: v.label })),
};
const views = Object.fromEntries(VIEW_LIST.map((v) => [v.id, v.create(viewCtx)]));
const abl = ablationBar($('ablation'), { update: (patch) => update(patch) });
const spans = spanBar($('span-ctl'), $('view'), { update: (patch) => update(patch) });

// Comparisons (compare.js): the partner run, on this engine or on a second
// model's own worker, and the per-head distances computed in C.
const comparer = new Comparer({
  mainEngine: () => app.engine,
  async makeEngine() {
    const e = new Engine(absolute(ASSETS.worker));
    await e.init(ASSETS.glue && absolute(ASSETS.glue), ASSETS.wasm && absolute(ASSETS.wasm), ASSETS.wasmBinary?.());
    return e;
  },
  async loadModel(engine, id) {
    const entry = app.models.find((m) => m.id === id);
    if (!entry) throw new Error(`There is no model "${id}" in this site's list to compare with.`);
    let info = null;
    await loadListedBundle(entry, document.baseURI, () => {}, () => {}, {
      keep: app.entry ? [app.entry] : [],
      accept: async (buffer) => { // stored for next time only once the engine took it
        const res = await engine.load(buffer);
        if (res.error) throw new Error(`Could not load ${entry.name || id}: ${res.error}.`);
        info = res.info;
        return true;
      },
    });
    return info;
  },
  pageInfo: () => app.info,
});

async function compareWithFile(file) {
  if (!app.engine || !app.info) return;
  try {
    const buffer = await loadFileBundle(file);
    await comparer.useFile(file.name, async (engine) => {
      const res = await engine.load(buffer);
      if (res.error) throw new Error(`Could not load ${file.name}: ${res.error}.`);
      return res.info;
    });
    clearNotice('cmp-file');
  } catch (e) {
    notice('cmp-file', 'error', e.message);
    return;
  }
  if (app.run) app.run = { ...app.run, compare: null }; // a new second model: compare again
  update({ cmp: 'model', cmp_model: LOCAL_MODEL });
}

/** What the run must hold for state s: the view's needs, and the
 *  comparison when one is shown (compare view, or heads switched off). */
function needsOf(s) {
  const n = viewById(s.view).needs(s);
  return comparing(s) ? mergeNeeds(n, { embed: true, compare: compareKey(s) }) : n;
}

/** The heads switched off in state s, as [[layer, head], ...]. */
function maskOf(s) {
  return app.info ? fitAblate(s.ablate, app.info.config.n_layers, app.info.config.n_heads).heads : [];
}
const currentView = () => viewById(app.state.view);

// ---------------------------------------------------------------- notices

function notice(key, kind, text, detail = '') {
  const box = $('notices');
  let el = box.querySelector(`[data-key="${key}"]`);
  if (!el) {
    el = document.createElement('div');
    el.dataset.key = key;
    const msg = document.createElement('span');
    msg.className = 'msg';
    const close = document.createElement('button');
    close.type = 'button';
    close.setAttribute('aria-label', 'Dismiss');
    close.textContent = '×';
    close.addEventListener('click', () => el.remove());
    el.append(msg, close);
    box.append(el);
  }
  el.className = `notice ${kind}`;
  const msg = el.querySelector('.msg');
  msg.textContent = text;
  if (detail) { // the browser's own words, in small print
    const small = document.createElement('small');
    small.className = 'detail';
    small.textContent = detail;
    msg.append(document.createElement('br'), small);
  }
}

function clearNotice(key) {
  const el = $('notices').querySelector(`[data-key="${key}"]`);
  if (el) el.remove();
}

let noticeCount = 0;
function notices(list, kind = 'warn') {
  for (const text of list) notice(`n${noticeCount++}`, kind, text);
}

// A draw that will make the page 'ready' when it has drawn is under way
// (draw). A plain redraw (resize) that replaces it before it has drawn —
// sliced drawings span several tasks, a head view at 512 tokens ~0.1 s —
// cancels it, so the redraw must make the page ready in its place, or the
// page would stay 'loading'.
let readyOwed = false;

function setPageState(s) {
  readyOwed = false; // whatever set the state now, no earlier draw owes 'ready' any more
  document.body.dataset.state = s;
}

function fail(key, message, detail = '') {
  notice(key, 'error', message, detail);
  setPageState('error');
}

// ------------------------------------------------------------------- setup

function absolute(path) {
  return new URL(path, document.baseURI).href;
}

async function main() {
  const parsed = await parseStateAsync(location.search);
  app.state = parsed.state;
  if (!new URLSearchParams(location.search).has('theme') && matchMedia('(prefers-color-scheme: dark)').matches) {
    app.state.theme = 'dark';
  }
  notices(parsed.notices);
  buildViewTabs();
  applyChrome();
  $('text-a').value = app.state.text;
  $('text-b').value = app.state.text_b;
  wireControls();
  if (app.state.embed) { postHeightToParent(preferredHeight); wireEmbedEdit(); }
  if (await startFromSnapshot()) return; // drawn from the snapshot; the model loads on request
  await startLive();
}

/** Start the engine and load the model the state names. */
async function startLive() {
  app.liveStarted = true;
  registerServiceWorker();

  if (!hasWasmSimd()) {
    fail('simd', 'This browser lacks WebAssembly SIMD (128-bit vector instructions), which bertlens needs. '
      + 'Please use a current version of Chrome, Edge, Firefox or Safari (16.4 or later).');
    return;
  }
  try {
    app.engine = new Engine(absolute(ASSETS.worker));
    const { simd } = await app.engine.init(ASSETS.glue && absolute(ASSETS.glue), ASSETS.wasm && absolute(ASSETS.wasm), ASSETS.wasmBinary?.());
    if (!simd) notice('simd', 'warn', 'This build of the model runs without SIMD; it will be slower.');
  } catch (e) {
    fail('engine', `The model engine could not start: ${e.message}`);
    return;
  }
  try {
    app.models = await fetchIndex(absolute('models/index.json'));
  } catch (e) {
    fail('index', `${e.message} You can still open a bundle file of your own.`, e.detail);
    return;
  }
  let entry = app.models.find((m) => m.id === app.state.model);
  if (app.state.model && !entry) {
    notice('model-param', 'warn', `Unknown model "${app.state.model}"; using the default model.`);
    app.state.model = '';
  }
  entry = entry || app.models.find((m) => m.default) || app.models[0];
  const kept = await findConverted();
  if (kept) app.converted = { name: kept.name, bytes: null, active: false };
  fillModelPicker(entry);
  await useListedModel(entry);
}

function registerServiceWorker() {
  if (!('serviceWorker' in navigator) || !window.isSecureContext) return;
  navigator.serviceWorker.register(absolute('sw.js')).catch(() => {
    // No offline support (e.g. private mode); the page works the same online.
  });
}

// ------------------------------------------------------------ snapshot mode

/** Draw from the snapshot the page carries, if any (true when it did). */
async function startFromSnapshot() {
  const text = pageSnapshotText();
  if (text === null) return false;
  let snap;
  try {
    snap = await decodeSnapshot(text);
  } catch (e) {
    notice('snapshot', 'error', `${e.message} Using the model instead.`);
    return false;
  }
  // Every field of the snapshot's state is checked (type, then range) before
  // use; a wrong one means the snapshot was made by hand or damaged: the model.
  const checked = stateFromSnapshot(snap.state, snap);
  if (checked.problems.length) {
    notice('snapshot', 'error', `This view's snapshot cannot be used: in its settings, ${checked.problems.slice(0, 3).join('; ')}${checked.problems.length > 3 ? '; …' : ''}. Using the model instead.`);
    return false;
  }
  app.state = { ...checked.state, embed: app.state.embed };
  snap.state = app.state; // what snapshotCovers compares with: the checked state
  $('text-a').value = app.state.text;
  $('text-b').value = app.state.text_b;
  app.snap = snap;
  app.info = { config: { n_layers: snap.L, n_heads: snap.H, hidden: snap.H * snap.d }, meta: {} };
  app.run = runFromSnapshot(snap);
  app.runKey = runKeyOf(app.state);
  keepSpanFor(app.run);
  afterModelLoaded();
  d3.select('#model-select').selectAll('option').data([snap.model]).join('option')
    .attr('value', (m) => m.id || '').text((m) => m.name || m.id || 'model');
  $('model-info').textContent = `${snap.model.name || snap.model.id || 'Model'} · this view is a snapshot (8-bit numbers stored with it); the model is not loaded`;
  return true;
}

/** Snapshot mode: draw when the snapshot holds the view, else offer the model. */
async function snapshotStep() {
  if (runIsCurrent()) { draw(); return; }
  if (app.liveStarted) return; // the model is on its way; then everything runs live
  setPageState('needs-model');
  const { why } = snapshotCovers(app.snap, app.state);
  let bytes = app.snap.model.bytes;
  const canLoad = ASSETS.engine !== false; // viewer.html (standalone export) has no engine
  if (canLoad && location.protocol !== 'file:') {
    try {
      if (!app.models.length) app.models = await fetchIndex(absolute('models/index.json'));
      const entry = app.models.find((m) => m.id === app.state.model) || app.models.find((m) => m.default);
      if (entry && entry.bytes) bytes = entry.bytes;
    } catch { /* keep the snapshot's figure */ }
  }
  offerModel(why, `Load the model${bytes ? ` (${formatBytes(bytes)})` : ''}`, canLoad ? () => {
    setPageState('loading');
    startLive().catch((e) => fail('fatal', `Unexpected error: ${e.message}`));
  } : null, canLoad ? '' : pageSnapshotSource());
}

/** One tab per registered view (index.html's buttons, if any, are reused). */
function buildViewTabs() {
  d3.select('#view-tabs').selectAll('button')
    .data(VIEW_LIST, function (v) { return v ? v.id : this.dataset.view; })
    .join('button')
    .attr('type', 'button')
    .attr('data-view', (v) => v.id)
    .text((v) => v.label);
}

function applyChrome() {
  const s = app.state;
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
  const headOff = !c.head;
  $('head').disabled = headOff;
  $('head-ctl').classList.toggle('disabled', headOff);
  if (app.info) {
    $('layer').value = String(s.layer);
    $('head').value = String(s.head);
    const meanOpt = $('head').querySelector('option[value="mean"]');
    if (meanOpt) meanOpt.disabled = !c.mean;
  }
  $('mode-help').textContent = s.mode === 'norm'
    ? 'Showing ‖α f(x)‖: each attention weight times the length of the value vector it actually mixes in (Kobayashi et al. 2020) — a large weight on a near-zero vector, often [SEP], counts for little.'
    : 'Showing attention weights α: how much each query token (row) takes from each key token (column); every row sums to 1. Switch to norms to weigh them by what is actually moved.';
}

/** The model picker: every listed model (and the user's file in use). With
 *  no model loaded (e.g. after a failed download) a first line says so, and
 *  choosing any listed model, the failed one included, starts its load.
 *  pending: the listed entry whose load is under way, shown as chosen. */
function fillModelPicker(pending = null) {
  const sel = d3.select('#model-select');
  const opts = app.models.map((m) => ({ value: m.id, label: `${m.name || m.id}${m.bytes ? ` — ${formatBytes(m.bytes)}` : ''}` }));
  // A converted checkpoint in use is a local bundle (localName); kept but not
  // in use, the list offers it again.
  if (app.localName) opts.push({ value: '__local__', label: app.converted?.active ? `converted: ${app.converted.name}` : `file: ${app.localName}` });
  if (app.converted && !app.converted.active) opts.push({ value: '__converted__', label: `converted: ${app.converted.name}` });
  const current = app.localName ? '__local__' : (app.entry && app.info ? app.entry.id : (pending ? pending.id : ''));
  if (!current && opts.length) opts.unshift({ value: '', label: 'No model loaded — choose one' });
  sel.selectAll('option').data(opts, (o) => o.value).join('option')
    .attr('value', (o) => o.value).text((o) => o.label);
  sel.property('value', current);
}

function wireControls() {
  const onText = () => {
    app.state.text = $('text-a').value;
    app.state.text_b = $('text-b').value;
    app.inputAt = performance.now();
    setPageState('loading');
    scheduleRun();
  };
  $('text-a').addEventListener('input', onText);
  $('text-b').addEventListener('input', onText);
  d3.selectAll('#view-tabs button').on('click', function () {
    const v = viewById(this.dataset.view);
    const patch = { view: v.id };
    const entered = v.enter ? v.enter(app.state) : null;
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
  $('theme-toggle').addEventListener('click', () => update({ theme: app.state.theme === 'dark' ? 'light' : 'dark' }));
  $('model-select').addEventListener('change', (e) => {
    const entry = app.models.find((m) => m.id === e.target.value);
    if (entry) useListedModel(entry);
    else if (e.target.value === '__converted__') useConverted();
  });
  $('open-checkpoint').addEventListener('click', () => $('checkpoint-input').click());
  $('checkpoint-input').addEventListener('change', (e) => {
    const files = Array.from(e.target.files || []);
    if (files.length) useCheckpoint(Promise.resolve(files));
    e.target.value = '';
  });
  $('save-converted').addEventListener('click', saveConverted);
  $('open-file').addEventListener('click', () => $('file-input').click());
  $('file-input').addEventListener('change', (e) => {
    const f = e.target.files && e.target.files[0];
    if (f) useFile(f);
    e.target.value = '';
  });
  // Drag and drop a bundle anywhere on the page.
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
    if (checkpoint) return useCheckpoint(checkpoint);
    const f = e.dataTransfer.files[0];
    if (f) useFile(f);
  });
  $('export-svg').addEventListener('click', () => exportView('svg'));
  $('export-png').addEventListener('click', () => exportView('png'));
  $('copy-link').addEventListener('click', () => share('link'));
  $('copy-embed').addEventListener('click', () => share('embed'));
  $('export-html').addEventListener('click', () => exportData('html'));
  $('export-csv').addEventListener('click', () => exportData('csv'));
  $('export-json').addEventListener('click', () => exportData('json'));
  let resizeTimer = 0;
  window.addEventListener('resize', () => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => { if (runIsCurrent() && !app.scheduler.inFlight) draw({ keepState: true }); }, 150);
  });
}

function hasFiles(e) {
  return e.dataTransfer && Array.from(e.dataTransfer.types || []).includes('Files');
}

// ----------------------------------------------------------- model loading

function showProgress(label, loaded, total) {
  $('progress').hidden = false;
  const bar = $('progress-bar');
  if (total > 0) {
    const pct = Math.min(100, (100 * loaded) / total);
    bar.value = pct;
    $('progress-text').textContent = `${label}: ${formatBytes(loaded)} of ${formatBytes(total)} (${pct.toFixed(0)}%)`;
  } else {
    bar.removeAttribute('value');
    $('progress-text').textContent = `${label}: ${formatBytes(loaded)}`;
  }
}

/** A model load (listed or file) starts: returns its sequence number. While
 *  it runs the page stays 'loading' (a redraw of the old model is not the
 *  render for the current input). */
function startModelLoad() {
  const seq = ++app.loadSeq;
  app.loadingModel = seq;
  setPageState('loading');
  return seq;
}

function endModelLoad(seq) {
  if (app.loadingModel === seq) app.loadingModel = 0;
}

async function useListedModel(entry) {
  const seq = startModelLoad();
  clearNotice('load');
  const label = `Downloading ${entry.name || entry.id}`;
  showProgress(label, 0, Number(entry.bytes) || 0);
  let ok;
  try {
    // The bundle is stored for the next visit only once the engine took it
    // (accept true); an engine's refusal (false) evicts any stored copy.
    ok = await loadListedBundle(entry, document.baseURI, (loaded, total, cached) => {
      const from = cached === 'inline' ? `Unpacking ${entry.name || entry.id}, built into this page`
        : cached ? `Loading ${entry.name || entry.id} from this browser's cache` : label;
      if (seq === app.loadSeq) showProgress(from, loaded, total);
    }, (text, detail) => notice('storage', 'info', text, detail), {
      accept: async (buffer) => {
        if (seq !== app.loadSeq) return null;
        $('progress-text').textContent = `Loading ${entry.name || entry.id} into the model engine…`;
        if (await loadIntoEngine(buffer, seq, `${entry.name || entry.id}`)) return true;
        return seq === app.loadSeq ? false : null;
      },
    });
  } catch (e) {
    if (seq !== app.loadSeq) return;
    endModelLoad(seq);
    $('progress').hidden = true;
    fail('load', e.message, e.detail);
    fillModelPicker(); // back to the model in use, or "no model loaded"
    return;
  }
  if (!ok || seq !== app.loadSeq) return;
  app.entry = entry;
  app.localName = null;
  if (app.converted) app.converted.active = false;
  app.state.model = entry.id;
  fillModelPicker();
  afterModelLoaded();
}

async function useFile(file) {
  if (!app.engine) { // snapshot mode: the engine has not started
    notice('load', 'warn', `To open ${file.name}, first load the model with the button above; this page shows a snapshot and has not started the model engine.`);
    return;
  }
  const seq = startModelLoad();
  clearNotice('load');
  showProgress(`Reading ${file.name}`, 0, file.size);
  let buffer;
  try {
    buffer = await loadFileBundle(file);
  } catch (e) {
    if (seq !== app.loadSeq) return;
    endModelLoad(seq);
    $('progress').hidden = true;
    fail('load', `Could not load ${file.name}: ${e.message}.`, e.detail);
    return;
  }
  if (seq !== app.loadSeq) return;
  const ok = await loadIntoEngine(buffer, seq, file.name);
  if (!ok) return;
  app.entry = null;
  app.localName = file.name;
  if (app.converted) app.converted.active = false;
  fillModelPicker();
  notice('local', 'info', `Using your bundle ${file.name}. Links and embeds name only models from the list, so they will open with the list's model.`);
  afterModelLoaded();
}

// ------------------------------------------------- converted checkpoints
// A Hugging Face BERT folder becomes a bundle in the model worker
// (web/js/convert.js, src/convert.c), is kept in Cache Storage
// (bundles.js storeConverted), loaded like a bundle file, and can be saved.

async function useCheckpoint(filesPromise) {
  if (!app.engine) {
    notice('load', 'warn', 'To convert a checkpoint, first load the model with the button above; this page shows a snapshot and has not started the model engine.');
    return;
  }
  const seq = startModelLoad();
  clearNotice('load');
  let name = 'checkpoint';
  let res;
  try {
    const { folder, entries } = filesFromBrowser(await filesPromise);
    name = folder || name;
    showProgress(`Converting ${name}`, 0, 0);
    res = await convertCheckpoint((fn, args, bytes) => app.engine.conv(fn, args, bytes), entries, { name }, (p) => {
      if (seq !== app.loadSeq) return;
      const bar = $('progress-bar');
      if (p.stage === 'tensor') {
        bar.value = (100 * p.done) / p.total;
        const last = (p.lines.find((l) => l.startsWith('[tensor] ')) || '').replace(/^\[tensor\] +/, '');
        $('progress-text').textContent = `Converting ${name}: tensor ${p.done} of ${p.total}${last ? ` — ${last}` : ''}`;
      } else if (p.stage === 'hash' && p.total) {
        bar.value = (100 * p.done) / p.total;
        $('progress-text').textContent = `Reading ${name} (checksum): ${formatBytes(p.done)} of ${formatBytes(p.total)}`;
      }
    });
  } catch (e) {
    if (seq !== app.loadSeq) return;
    endModelLoad(seq);
    $('progress').hidden = true;
    fail('load', `Could not convert ${name}: ${e.message}.`);
    return;
  }
  if (seq !== app.loadSeq) return;
  app.converted = { name, bytes: null, active: false };
  await storeConverted(name, res.bytes, (text, detail) => {
    app.converted.bytes = res.bytes.slice(); // not kept by the browser: keep a copy for saving
    notice('storage', 'info', text, detail);
  });
  $('progress-text').textContent = `Loading ${name} into the model engine…`;
  if (!await loadIntoEngine(res.bytes.buffer, seq, name)) return;
  markConvertedInUse();
  const nt = res.log.filter((l) => l.startsWith('[tensor] ') && !l.includes(' skipped ')).length;
  notice('local', 'info', `Converted ${name} in this page (${nt} tensors, q8). `
    + 'It is kept in this browser: choose it in the model list after a reload, or save it as a bundle file. '
    + 'Links and embeds name only models from the list.');
  afterModelLoaded();
}

// The engine now holds the converted model: it is a local bundle, not a listed one.
function markConvertedInUse() {
  app.entry = null;
  app.localName = `${app.converted.name} (converted)`;
  app.converted.active = true;
  app.state.model = '';
  fillModelPicker();
  $('save-converted').hidden = false;
}

async function convertedBytes() {
  if (app.converted && app.converted.bytes) return app.converted.bytes;
  const kept = await findConverted();
  return kept ? kept.bytes() : null;
}

async function useConverted() {
  const seq = startModelLoad();
  clearNotice('load');
  const bytes = await convertedBytes();
  if (seq !== app.loadSeq) return;
  if (!bytes) {
    endModelLoad(seq);
    fail('load', 'The converted model is no longer kept in this browser; convert the folder again.');
    app.converted = null;
    fillModelPicker();
    return;
  }
  const copy = bytes.slice(); // the engine takes its buffer
  if (!await loadIntoEngine(copy.buffer, seq, app.converted.name)) return;
  markConvertedInUse();
  afterModelLoaded();
}

async function saveConverted() {
  const bytes = await convertedBytes();
  if (!bytes) return fail('load', 'There is no converted model to save.');
  const gz = await gzipBytes(bytes);
  const base = (app.converted.name || 'model').replace(/[^\w.-]+/g, '_');
  download(new Blob([gz || bytes], { type: 'application/octet-stream' }), `${base}.q8.blb${gz ? '.gz' : ''}`);
}

async function loadIntoEngine(buffer, seq, name) {
  let res;
  try {
    res = await app.engine.load(buffer);
  } catch (e) {
    res = { error: e.message, restored: false };
  }
  if (seq !== app.loadSeq) return false;
  endModelLoad(seq);
  $('progress').hidden = true;
  if (res.error) {
    const tail = res.restored ? ' The previous model is still loaded.' : '';
    fail('load', `Could not load ${name}: ${res.error}.${tail}`);
    if (!res.restored) { app.info = null; app.run = null; app.entry = null; app.localName = null; }
    fillModelPicker();
    return false;
  }
  app.info = res.info;
  comparer.reset(); // its runs were of the previous model
  app.snap = null; // live from now on
  clearOffer();
  app.run = null;
  app.runKey = null;
  return true;
}

function afterModelLoaded() {
  const c = app.info.config;
  const fit = fitToModel(app.state, { layers: c.n_layers, heads: c.n_heads });
  app.state = fit.state;
  notices(fit.notices);
  const ab = fitAblate(app.state.ablate, c.n_layers, c.n_heads);
  app.state = { ...app.state, ablate: ab.text };
  notices(ab.notices);
  d3.select('#layer').selectAll('option').data(d3.range(c.n_layers)).join('option')
    .attr('value', (l) => l).text((l) => `${l}`);
  d3.select('#head').selectAll('option').data([...d3.range(c.n_heads), 'mean']).join('option')
    .attr('value', (h) => h).text((h) => (h === 'mean' ? 'mean of all heads' : `${h}`));
  const meta = app.info.meta || {};
  const bits = [
    app.entry ? app.entry.name : app.localName,
    `${c.n_layers} layers × ${c.n_heads} heads, hidden ${c.hidden}`,
    app.info.dtype ? `weights ${app.info.dtype}` : null,
    // A listed model's index entry is curated; a bundle's own metadata may
    // name only a local path (e.g. a test conversion), so the entry wins.
    (app.entry && app.entry.source) || meta['source.name'] ? `from ${(app.entry && app.entry.source) || meta['source.name']}` : null,
    (app.entry && app.entry.license) || meta['source.license'] ? `licence ${(app.entry && app.entry.license) || meta['source.license']}` : null,
    meta['fidelity.attn_max'] ? `attention within ${meta['fidelity.attn_max']} of full precision` : null,
  ].filter(Boolean);
  $('model-info').textContent = bits.join(' · ');
  // The converter measured this on held-out texts (src/bundle.h, fidelity.*).
  $('model-info').title = meta['fidelity.attn_max']
    ? `On the converter's held-out texts, no attention weight shown differs from the full-precision (fp32) model's by more than ${meta['fidelity.attn_max']}; the key each row attends to most agrees in at least ${meta['fidelity.argmax'] || '?'} % of rows.`
    : '';
  applyChrome();
  scheduleRun(0);
}

// ------------------------------------------------------------- model runs

function runKeyOf(s) {
  return JSON.stringify([s.text, s.text_b, s.ablate]);
}

function runIsCurrent() {
  const s = app.state;
  if (!app.run || app.runKey !== runKeyOf(s)) return false;
  const v = viewById(s.view);
  if (app.run.snapshot && !(v.snapshot && snapshotCovers(app.run.snapshot, s).ok)) return false;
  return resultCovers(app.run, app.run.snapshot ? v.needs(s) : needsOf(s), s.layer);
}

/** Model runs, latest input wins (scheduler.js): the job is built from the
 *  state when the run starts; a result that newer input superseded is kept
 *  but not drawn. */
app.scheduler = new RunScheduler({
  request() {
    if (app.snap) { snapshotStep(); return null; }
    if (!app.info) return null;
    setPageState('loading');
    const s = app.state;
    const needs = needsOf(s);
    const key = runKeyOf(s);
    const mask = maskOf(s);
    const job = { key, request: makeRunRequest({ a: s.text, b: s.text_b || null, needs, mask }) };
    if (needs.compare) job.compare = { state: { ...s }, mask };
    // When all that is missing is what the worker can compute from the run
    // it still holds (every layer's q/k for the neuron view, the analysis a
    // tab asks for, the distances to another head for "heads like this
    // one"), the model does not run again: at 512 tokens a run is ~0.2-0.4 s
    // before any analysis.
    const run = app.run;
    const same = run && !run.snapshot && app.runKey === key && run.runId;
    const held = { ...needs, qk: false, analysis: ANALYSIS.NONE, like: null, compare: null };
    if (same && resultCovers(run, held, s.layer)) {
      if (needs.qk && !resultCovers(run, { ...held, qk: true }, s.layer)) job.qk = makeQkRequest(run.runId);
      if (needs.analysis && !resultCovers(run, { ...held, analysis: needs.analysis }, s.layer)) job.analyze = makeAnalyzeRequest(run.runId, needs.analysis);
      if (needs.like && !resultCovers(run, { ...held, like: needs.like }, s.layer)) job.like = makeLikeRequest(run.runId, needs.like);
      job.base = run; // only the comparison may be missing: no new page run
    }
    return job;
  },
  async execute(job) {
    let run = job.base || null;
    if (run && (job.qk || job.analyze || job.like)) {
      try {
        if (job.qk) {
          const out = await app.engine.qk(job.qk);
          document.body.dataset.qkMs = out.ms.toFixed(1); // worker time (tests print it)
          run = withQk(run, out);
        }
        if (job.analyze) {
          const out = await app.engine.analyze(job.analyze);
          document.body.dataset.analyzeMs = out.ms.toFixed(1); // worker time (tests print it)
          run = withAnalysis(run, out);
        }
        if (job.like) {
          const like = await app.engine.like(job.like);
          document.body.dataset.likeMs = like.ms.toFixed(1); // worker time (tests print it)
          run = { ...run, like };
        }
      } catch { run = null; /* the worker ran the model since: run it again */ }
    }
    if (!run) run = await app.engine.run(job.request);
    if (job.compare && !(run.compare && run.compare.key === compareKey(job.compare.state))) {
      const s = job.compare.state;
      const off = maskSet(s.ablate, run.L, run.H);
      run = { ...run, compare: await comparer.compare(s, run, job.compare.mask, off) };
      document.body.dataset.compareMs = run.compare.ms ? run.compare.ms.toFixed(1) : '';
    }
    return run;
  },
  keep(result, job) {
    app.run = result;
    app.runKey = job.key;
    clearNotice('run');
    keepSpanFor(result);
    if (viewById(app.state.view).query) {
      const q = fitQuery(app.state, result.T);
      app.state = q.state;
      notices(q.notices);
    }
    if (result.truncated) {
      notice('truncated', 'warn', `The text is too long for this model: it was truncated to ${result.T} tokens (the model's maximum, [CLS] and [SEP] included).`);
    } else clearNotice('truncated');
  },
  isCurrent: () => runIsCurrent(),
  deliver: () => draw(),
  fail: (e) => fail('run', `The model could not run on this text: ${e.message}`),
});

/** The span holds raw token positions: new tokens (the text changed) clear
 *  it; positions past the end (a span= in the URL) are dropped with a notice. */
function keepSpanFor(run) {
  const tokens = run.tokens.join('\u0000');
  if (app.state.span) {
    if (app.spanTokens !== null && app.spanTokens !== tokens) app.state = { ...app.state, span: null };
    else {
      const f = fitSpan(app.state, run.T);
      app.state = f.state;
      for (const text of f.notices) notice('span', 'warn', text);
    }
  }
  app.spanTokens = tokens;
}

/** A run for new input (no delay: at once when idle, else debounced by how
 *  long runs take; scheduler.js) or after `delay` ms (0: at once). */
function scheduleRun(delay) {
  app.scheduler.schedule(delay);
}

// ------------------------------------------------------------------ state

/** Change part of the state; re-run the model only when the change needs
 *  data the last run did not keep, else just redraw. */
function update(patch) {
  const prev = app.state;
  app.state = { ...prev, ...patch };
  if (app.run && viewById(app.state.view).query) {
    const q = fitQuery(app.state, app.run.T);
    app.state = q.state;
  }
  applyChrome();
  if (!app.info) { syncUrl(); return; }
  setPageState('loading');
  if (runIsCurrent()) draw();
  else scheduleRun(0);
}

/** The URL follows a redraw once its frame is painted: history.replaceState
 *  can block the page for tens of ms (4–48 ms a call measured in headless
 *  Chromium during an ablation click), more than the model view takes to
 *  draw. One update per frame however many redraws; body[data-url-pending]
 *  is set until it is done (the browser tests wait for it). */
let urlDue = false;
function syncUrlAfterPaint() {
  if (urlDue) return;
  urlDue = true;
  document.body.dataset.urlPending = '1';
  const run = () => {
    if (!urlDue) return;
    urlDue = false;
    delete document.body.dataset.urlPending;
    syncUrl();
  };
  requestAnimationFrame(() => setTimeout(run, 0));
  setTimeout(run, 200); // no frames in a hidden tab
}

let syncSeq = 0;
function syncUrl() {
  if (app.state.embed && window.self !== window.top) return; // keep an embed's URL as given
  if (app.snap || location.protocol === 'file:') return; // keep a snapshot link as given
  const seq = ++syncSeq;
  const run = runIsCurrent() ? app.run : null;
  // At once when the plain form is short (it is then usually the final one);
  // the compressed form follows when it is shorter.
  const plain = `${location.pathname}?${serializeState(app.state)}`;
  if (plain.length < 2000 && !(run && run.truncated)) history.replaceState(null, '', plain);
  permalinkSearch(app.state, { run, maxChars: MAX_PERMALINK - location.href.split('?')[0].length - 1 }).then(({ search }) => {
    if (seq !== syncSeq) return;
    const url = `${location.pathname}?${search}`;
    if (url !== `${location.pathname}${location.search}`) history.replaceState(null, '', url);
  });
}

function openNeuron(shownIndex) {
  const axis = app.axis;
  const raw = axis ? axis.members[shownIndex][0] : shownIndex;
  const v = VIEW_LIST.find((d) => d.query); // the view that explains one query
  const entered = v.enter ? v.enter(app.state) : null;
  update({ view: v.id, query: raw, ...(entered ? entered.patch : {}) });
}

// ------------------------------------------------------------------ drawing

function legendLines(s) {
  const lines = [];
  if (s.mode === 'attn') {
    lines.push('Rows are queries (the token attending), columns are keys (attended to). Each row of attention weights sums to 1.');
  } else {
    lines.push('Value-weighted norms ‖α f(x)‖ (Kobayashi et al. 2020): weight × length of the value vector moved. Rows do not sum to 1.');
  }
  if (s.hide) {
    lines.push(s.renorm
      ? '[CLS]/[SEP] hidden; every row renormalized to sum to 1 over the tokens shown.'
      : '[CLS]/[SEP] hidden, not renormalized: a row now sums to 1 minus what went to the hidden tokens.');
  }
  if (s.ablate && app.info) {
    const c = app.info.config;
    const off = maskSet(s.ablate, c.n_layers, c.n_heads);
    const v = viewById(s.view);
    if (v.controls.head && s.head !== 'mean' && off.has(`${s.layer}/${s.head}`)) lines.push(`Layer ${s.layer}, head ${s.head} is switched off (head ablation): its attention probabilities are multiplied by 0, so its attention is all zeros${v.query ? '; q · k and the softmax below are what it computes before that' : ''}.`);
    else if (off.size) lines.push(`${off.size} head${off.size > 1 ? 's are' : ' is'} switched off (ablate=${s.ablate}): every view shows the ablated model.`);
  }
  if (s.words && viewById(s.view).controls.words) lines.push('Word level (Clark et al. 2019): attention to a word is the sum over its pieces, attention from a word the mean over its pieces, so rows still sum to 1. A word is the text between spaces (“didn\'t” is one), punctuation at its ends apart.');
  return lines;
}

/** Draw the current view from the last run. A plain redraw (window resize)
 *  passes keepState so it leaves the page state ('loading', 'error') alone,
 *  unless it replaces a draw still under way that was to make it 'ready'. */
function draw({ keepState = false } = {}) {
  const run = app.run;
  const s = app.state;
  if (!run || !runIsCurrent()) return; // a run for the current state is on its way
  if (!keepState) readyOwed = true;
  else if (readyOwed) keepState = false; // it replaces a draw that was to make the page ready
  const t0 = performance.now();
  const seq = ++drawSeq;
  let pending;
  try {
    pending = drawView(run, s);
  } catch (e) {
    fail('draw', `Could not draw the ${s.view} view: ${e.message}`);
    return;
  }
  // A view that spreads its work over several tasks (views/common.js
  // sliced) returns a promise: the page is ready when it has drawn.
  if (pending && typeof pending.then === 'function') {
    pending.then((finished) => {
      if (seq === drawSeq && finished !== false) drawn(run, s, t0, keepState);
    }, (e) => {
      if (seq === drawSeq) fail('draw', `Could not draw the ${s.view} view: ${e.message}`);
    });
    return;
  }
  drawn(run, s, t0, keepState);
}

let drawSeq = 0; // the latest draw(): an earlier one's late end changes nothing

/** What follows a drawn view: the token line, the URL, timings, the page state. */
function drawn(run, s, t0, keepState) {
  clearNotice('draw');
  const nA = run.typeIds.filter((t) => t === 0).length;
  // Blank (or whitespace-only) input still runs: say why only [CLS]/[SEP] show.
  const blank = run.wordIds && !run.wordIds.some((w) => w >= 0) ? ' · no words in the text: only [CLS] and [SEP] are shown; type a sentence' : '';
  $('token-info').textContent = `${run.T} tokens${s.text_b ? ` (A: ${nA}, B: ${run.T - nA})` : ''} · ${run.snapshot ? 'drawn from the snapshot\'s 8-bit numbers, without the model' : `model ran in ${run.ms.toFixed(0)} ms`}${blank}`;
  syncUrlAfterPaint();
  if (s.embed) notifyHeight();
  const ms = performance.now() - t0;
  document.body.dataset.renderMs = ms.toFixed(1);
  document.body.dataset.runMs = run.ms.toFixed(1);
  if (app.inputAt) document.body.dataset.inputToReadyMs = (performance.now() - app.inputAt).toFixed(1);
  if (!performance.getEntriesByName('bl-first-ready').length) performance.mark('bl-first-ready');
  const embedText = s.text_b ? `“${s.text}” / “${s.text_b}”` : `“${s.text}”`;
  const c = viewById(s.view).controls;
  $('embed-text').textContent = `${embedText} · ${s.view}${c.layer ? ` · layer ${s.layer}` : ''}${c.head ? ` · head ${s.head}` : ''}`;
  $('embed-open').href = `${location.pathname}?${serializeState({ ...s, embed: false })}`;
  // A plain redraw (resize) keeps the page state: it may come while a run or
  // a model load for newer input is on its way, or after an error.
  if (!keepState && !app.loadingModel) setPageState('ready');
}

function drawView(run, s) {
  const theme = THEMES[s.theme];
  const v = viewById(s.view);
  const root = d3.select('#view');
  if (root.attr('data-view') !== s.view) {
    root.selectAll('*').remove();
    root.attr('class', 'view').attr('data-view', s.view);
  }
  const box = viewBox($('view'), { embed: s.embed, below: s.embed ? $('embed-caption').offsetHeight : 0 });
  let axis = tokenAxis(run, { words: s.words && v.controls.words, hideSpecials: s.hide, renorm: s.renorm });
  const lines = legendLines(s);
  if (v.controls.span && s.span) {
    axis = spanAxis(axis, s.span.filter((t) => t < run.T));
    if (axis.spanLabel) lines.push(`Span ${axis.spanLabel} (shift-click tokens, or tap them after “Select span”, to add or remove them): its row is the attention from the span and its column the attention to the span, each summed over its tokens.`);
  }
  app.axis = axis;
  const env = {
    axis,
    src: s.mode === 'norm' ? run.norms : run.attn,
    lines,
    valueName: s.mode === 'norm' ? '‖α f(x)‖' : 'attention',
    modeWord: s.mode === 'norm' ? 'value-weighted norms' : 'attention',
    models: app.models,
    cmpFileName: comparer.second && comparer.second.id === LOCAL_MODEL ? comparer.second.name : '',
    ablating: () => abl.on,
  };
  const pending = views[s.view].theme(theme).size(box)(root, v.prepare(run, s, env));
  abl.render({ state: s, L: run.L, H: run.H, run });
  spans.render({ state: s, canSpan: !!v.controls.span });
  return pending;
}

// ------------------------------------------------------------ export/share

async function exportView(kind) {
  const stage = document.querySelector('#view .stage');
  if (!stage) return;
  const s = app.state;
  const name = viewFileName(s);
  try {
    const model = app.entry ? (app.entry.name || app.entry.id) : (app.localName || (app.snap && (app.snap.model.name || app.snap.model.id)) || '');
    const heading = titleLine({ ...s, model, queryLabel: app.run && viewById(s.view).query ? app.run.tokens[Math.min(s.query, app.run.T - 1)] : null });
    const svg = stageToSVG(stage, { background: THEMES[s.theme].bg, title: heading, heading, context: $('view').blExportContext, theme: THEMES[s.theme] });
    if (kind === 'svg') download(new Blob([svg], { type: 'image/svg+xml' }), `${name}.svg`);
    else download(await svgToPNG(svg, 2), `${name}.png`);
  } catch (e) {
    notice('export', 'error', `Export failed: ${e.message}`);
  }
}

/** The frame height the drawn view asks for (0 when unknown). */
function preferredHeight() {
  const v = views[app.state.view];
  if (!app.run || !app.info || typeof v.preferredSize !== 'function') return 0;
  const c = app.info.config;
  const size = v.preferredSize({ K: app.axis ? app.axis.K : app.run.T, L: c.n_layers, H: c.n_heads, d: app.run.d });
  return size && size.height > 0 ? size.height : 0;
}

/** The snapshot of what is drawn (null above MAX_TOKENS tokens). */
async function currentSnapshotText() {
  const run = app.run;
  if (!run || !runIsCurrent() || !viewById(app.state.view).snapshot) return null;
  if (run.snapshot) return encodeSnapshot({ ...run.snapshot, state: { ...app.state } });
  if (run.T > MAX_TOKENS) return null;
  return encodeSnapshot(snapshotFromRun(run, app.state, app.entry || {}));
}

function viewFileName(s) {
  const c = viewById(s.view).controls;
  return `bertlens-${s.view}${c.layer ? `-layer${s.layer}` : ''}${c.head ? `-head${s.head}` : ''}-${s.mode}`;
}

async function share(kind) {
  const base = `${location.origin}${location.pathname}`;
  const s = { ...app.state, embed: false };
  const run = runIsCurrent() && !app.run.snapshot ? app.run : null;
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
    try { snap = await currentSnapshotText(); } catch { snap = null; }
    const v = views[s.view];
    const K = app.axis ? app.axis.K : (app.run ? app.run.T : 16);
    const c = app.info ? app.info.config : { n_layers: 6, n_heads: 12 };
    const size = (typeof v.preferredSize === 'function' && v.preferredSize({ K, L: c.n_layers, H: c.n_heads, d: app.run ? app.run.d : 32 }))
      || proposeEmbedSize(s.view, K, { L: c.n_layers, H: c.n_heads });
    text = embedSnippet(base, s, { width: size.width, height: size.height, search, snapshot: snap });
    if (!snap && app.run) {
      const mb = app.entry && app.entry.bytes ? ` (${formatBytes(app.entry.bytes)})` : '';
      notes.push(app.run.T > MAX_TOKENS
        ? `This input has ${app.run.T} tokens, more than the ${MAX_TOKENS} an instant embed holds: the embed is a normal link, and each reader's browser downloads the model${mb} to draw it.`
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
  if (app.localName) notice('share-local', 'warn', 'This view uses a bundle from a local file; the link opens the model from the list instead.');
}

/** The viewer page (dist/viewer.html) that a standalone file is made of:
 *  built into the one-file page (#bertlens-viewer, base64), else fetched. */
async function viewerTemplate() {
  const inline = document.getElementById('bertlens-viewer');
  if (inline) return new TextDecoder().decode(base64ToBytes(inline.textContent));
  if (location.protocol === 'file:') throw new Error('this page was opened from a file and has no viewer built in; open bertlens.html, or export from the bertlens site');
  const res = await fetch(absolute('viewer.html'));
  if (!res.ok) throw new Error(`the viewer page could not be fetched (HTTP ${res.status})`);
  return res.text();
}

/** Download the view as a standalone HTML file, or its numbers as CSV/JSON. */
async function exportData(kind) {
  const s = app.state;
  if (!runIsCurrent()) {
    notice('export', 'warn', 'The view is not drawn yet; try again once it is.');
    return;
  }
  const name = viewFileName(s);
  try {
    if (kind === 'html') {
      const snap = await currentSnapshotText();
      if (!viewById(s.view).snapshot) throw new Error(`a standalone file cannot hold the ${viewById(s.view).label.toLowerCase()}; use a link instead`);
      if (!snap) throw new Error(`a standalone file holds inputs of up to ${MAX_TOKENS} tokens; this one has ${app.run.T}`);
      const template = await viewerTemplate();
      const base = `${location.origin}${location.pathname}`;
      const { search } = await permalinkSearch({ ...s, embed: false }, { run: app.run.snapshot ? null : app.run, maxChars: MAX_PERMALINK - base.length - 1 });
      const html = standaloneHtml(template, snap, `bertlens ${s.view} view: ${s.text}`, `${base}?${search}`);
      download(new Blob([html], { type: 'text/html' }), `${name}.html`);
    } else {
      const shown = (viewById(s.view).shown || shownMatrices)(app.run, s);
      const model = app.entry || (app.snap ? app.snap.model : {});
      if (kind === 'csv') download(new Blob([toCSV(shown)], { type: 'text/csv' }), `${name}.csv`);
      else download(new Blob([toJSON(shown, model)], { type: 'application/json' }), `${name}.json`);
    }
    clearNotice('export');
  } catch (e) {
    notice('export', 'error', `Export failed: ${e.message}`);
  }
}

main().catch((e) => fail('fatal', `Unexpected error: ${e.message}`));
