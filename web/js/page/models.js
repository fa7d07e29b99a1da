// models.js — every way a model arrives goes through one loadModel(source):
//   {kind: 'listed', entry}        a models/index.json entry (download/cache)
//   {kind: 'file', file}           the reader's own bundle file (.blb[.gz])
//   {kind: 'checkpoint', files, dtype}  a Hugging Face checkpoint folder (a
//                                  promise of its File list), converted in
//                                  the worker to dtype (q8 unless asked;
//                                  engine/convert.js convertChoosing falls back
//                                  to f16 where q8 cannot be used)
// A checkpoint, a converted copy kept and a Hub model are one request each
// to the model worker (engine.take: engine/take.js fetches, converts, keeps
// and loads there) answered by progress steps and one result.
//   {kind: 'converted', key}       a converted copy this browser keeps
//                                  (engine/bundles_store.js, one per model)
//   {kind: 'hub', spec}            a Hugging Face Hub model by id (hub_load.js;
//                                  spec from engine/hub.js parseHubId)
// Each source only says how its bytes reach the engine and what the page
// then uses; the sequence (latest load wins), progress, errors, the engine
// load and what follows (fit the state, the picker, the info line) are one.

import { fitToConfig } from './state.js';
import { Engine, hasWasmSimd } from '../engine/engine.js';
import { fetchIndex, loadListedBundle, loadFileBundle, formatBytes, storeConverted, findConverted, dropConverted, listConverted } from '../engine/bundles.js';
import { filesFromBrowser, gzipBytes } from '../engine/convert.js';
import { nameOrPath, configEntry, bundleFileName } from '../lib/model_names.js';
import { findKeptHub } from '../engine/hub_cache.js';
import { download } from './export.js';
import { ASSETS } from '../engine/assets.js';
import { takeHub, hubNote } from './hub_load.js';
import { addHubDialog } from './hub_dialog.js';
import { listKeptHub } from '../engine/hub_cache.js';
import { parseHubId } from '../engine/hub.js';
import { againSourceOf, sourceName, untrusted, crashNotice } from './engine_restart.js';
import { pageNotebook, notebookFiles, clearOffer } from './embed.js';

const d3 = globalThis.d3;
const $ = (id) => document.getElementById(id);
const absolute = (p) => new URL(p, document.baseURI).href;

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

/** A progress step ({label, done, total}: the worker's 'take' events):
 *  the bar with bytes, or the label alone where there are none. */
function showStep({ label, done, total }) {
  if (total > 0 || done > 0) return showProgress(label, done, total);
  $('progress').hidden = false;
  $('progress-bar').removeAttribute('value');
  $('progress-text').textContent = label;
  return undefined;
}

/** The models of the page: what it loads, into the store's model. */
export function createModels(store) {
  const { notice, clearNotice, fail, setPageState } = store;
  let engine = null;
  let engineUp = null; // a promise: the engine (re)started
  // The model the engine holds — {source (loadModel's), again (the source
  // that loads it again), name, proven (a run of it finished)} — and the
  // last proven one before it: what a fresh engine gets after a crash.
  let inUse = null;
  let before = null;
  let crashes = 0; // engines lost since the last finished run
  let booting = false; // start()'s load of a ?hub= model is under way
  let list = []; // models/index.json entries
  let entry = null; // listed model in use (null for a local bundle)
  let localName = null; // name of the reader's own (or converted) bundle in use
  let ownName = ''; // the model's own name (lib/model_names.js) for titles, exports and saved files
  // Converted models: the one in use {key, name, dtype} (null: the model in
  // use was not converted from a checkpoint), those this browser keeps
  // (bundles_store.js listConverted), and copies of those it could not keep
  // (key -> bytes, for saving as a file or loading again in this visit).
  let convertedInUse = null;
  let keptConverted = [];
  const unkept = new Map();
  const notConverted = () => { convertedInUse = null; };
  let info = null; // blw_info_json of the loaded model (or a snapshot's shape)
  let hubModel = null; // {spec, commit} of the Hub model in use
  let keptHub = []; // Hub models this browser keeps (hub_cache.js listKeptHub)
  let lastFailure = null; // the error of the last failed load
  let loadSeq = 0;
  let loading = 0; // loadSeq of a model load in progress (0: none)
  let loadingSource = null; // its source
  const current = (seq) => seq === loadSeq;

  /** The model shown, as the store holds it (after every change here). */
  function publish() {
    store.dispatch({ type: 'model', patch: {
      info, engine, list, entry, local: localName !== null,
      // its name for titles, exports and files ('' when unnamed): a listed
      // model's, else its own (_name_or_path, Hub id, the bundle's source.name: lib/model_names.js)
      name: entry ? (entry.name || entry.id) : (ownName || localName || ''),
    } });
  }
  const setLoading = (on) => { if (store.pending().loading !== on) store.dispatch({ type: 'pending', patch: { loading: on } }); };

  // How each source's bytes reach the engine (accept(buffer) -> bool), and
  // what the page uses once it took them.
  const SOURCES = {
    listed: {
      engineFirst: false,
      take({ entry: e }, seq, accept) {
        const name = e.name || e.id;
        const label = `Downloading ${name}`;
        showProgress(label, 0, Number(e.bytes) || 0);
        // The bundle is stored for the next visit only once the engine took it
        // (accept true); an engine's refusal (false) evicts any stored copy.
        return loadListedBundle(e, document.baseURI, (loaded, total, cached) => {
          const from = cached === 'inline' ? `Unpacking ${name}, built into this page`
            : cached ? `Loading ${name} from this browser's cache` : label;
          if (current(seq)) showProgress(from, loaded, total);
        }, (text, detail) => notice('storage', 'info', text, detail), {
          accept: async (buffer) => {
            if (!current(seq)) return null;
            $('progress-text').textContent = `Loading ${name} into the model engine…`;
            if (await accept(buffer, name)) return true;
            return current(seq) ? false : null;
          },
        });
      },
      use({ entry: e }) {
        entry = e;
        localName = null;
        ownName = '';
        hubModel = null;
        notConverted();
        return { model: e.id, hub: '' };
      },
    },
    file: {
      async take({ file }, seq, accept) {
        showProgress(`Reading ${file.name}`, 0, file.size);
        let buffer;
        try {
          buffer = await loadFileBundle(file);
        } catch (e) {
          throw Object.assign(new Error(`Could not load ${file.name}: ${e.message}.`), { detail: e.detail });
        }
        return current(seq) && accept(buffer, file.name);
      },
      use({ file }) {
        entry = null;
        localName = file.name;
        ownName = (info && info.meta && info.meta['source.name']) || file.name; // the name its converter gave it
        hubModel = null;
        notConverted();
        if (!pageNotebook()) notice('local', 'info', `Using your bundle ${file.name}. Links and embeds name only models from the list, so they will open with the list's model.`);
        return {};
      },
    },
    // A Hugging Face BERT folder becomes a bundle in the model worker
    // (convert.js, src/convert/convert.c), is kept in Cache Storage (bundles.js
    // storeConverted), loaded like a bundle file, and can be saved.
    checkpoint: {
      async take(src, seq, accept) {
        let name = 'checkpoint';
        let got;
        try {
          const { folder, entries } = filesFromBrowser(await src.files);
          // The model's own name (config.json _name_or_path) names it, and the
          // bundle (source.name, as `bertlens convert --name` would); else the folder.
          const cfg = configEntry(entries);
          const own = cfg ? nameOrPath(new TextDecoder().decode(await cfg.read(0, Math.min(cfg.size, 1 << 20)))) : '';
          name = own || folder || name;
          src.name = name;
          showStep({ label: `Converting ${name}`, done: 0, total: 0 });
          // one request: the worker converts (by rows), keeps and loads it (engine/take.js)
          got = await engine.take({
            kind: 'checkpoint', files: entries.map((e) => ({ name: e.name, file: e.file })), folder, own, dtype: src.dtype || 'q8',
            // (a notebook output's frame has no address to key a kept copy by; the kernel has the folder)
            keep: !pageNotebook(),
          }, (step) => {
            if (!current(seq)) return;
            if (step.taking) { src.cv = step.taking.cv; src.key = src.cv.key; } // (dropped should the engine die of it: recover)
            showStep(step);
          });
        } catch (e) {
          throw new Error(`Could not convert ${name}: ${e.message}.`);
        }
        if (got.superseded || !current(seq)) return false;
        if (got.failed) throw new Error(got.failed.message);
        const { cv } = got;
        src.cv = cv;
        src.key = cv.key;
        src.name = cv.name;
        src.fellBack = got.fellBack;
        src.tensors = got.tensors;
        for (const n of got.notes) notice('storage', 'info', n.text, n.detail);
        if (got.bytes) unkept.set(cv.key, got.bytes); // not kept by the browser: a copy here, for saving it as a file
        keptConverted = pageNotebook() ? [] : await listConverted();
        const ok = await accept({ taken: got.load }, cv.name);
        if (ok === false && current(seq)) { // refused (the worker dropped a kept copy): not offered again
          unkept.delete(cv.key);
          keptConverted = pageNotebook() ? [] : await listConverted();
        }
        return ok;
      },
      use(src) {
        const patch = useConverted(src.cv);
        if (src.fellBack) notice('convert-dtype', 'warn', src.fellBack.text);
        notice('local', 'info', `Converted ${src.cv.name} in this page (${src.tensors} tensors, ${src.cv.dtype}). `
          + (pageNotebook() ? 'Save it as a bundle file to load it faster next time.'
            : 'It is kept in this browser: choose it in the model list after a reload, or save it as a bundle file. '
            + 'Links and embeds name only models from the list.'));
        return patch;
      },
    },
    converted: {
      async take(src, seq, accept) {
        const gone = () => new Error('The converted model is no longer kept in this browser; convert the folder again.');
        const key = src.key !== undefined ? src.key : (keptConverted[0] && keptConverted[0].key);
        if (key !== undefined && unkept.has(key)) { // a copy this visit holds (the engine takes its buffer)
          src.cv = src.cv || { key, name: src.name || 'converted', dtype: src.dtype || '' };
          return accept(unkept.get(key).slice().buffer, src.cv.name);
        }
        const got = await engine.take({ kind: 'converted', key }, (step) => { if (current(seq)) showStep(step); });
        if (got.superseded || !current(seq)) return false;
        if (got.failed) throw gone();
        src.cv = got.cv;
        return accept({ taken: got.load }, got.cv.name); // streamed from Cache Storage into the engine in the worker
      },
      use: (src) => useConverted(src.cv),
    },
    // A Hugging Face Hub model: the kept copy of its commit, or downloaded
    // and converted (hub_load.js); kept for the next visit once the engine
    // took it (a refused one is evicted).
    hub: {
      take: (src, seq, accept) => takeHub(src, accept, {
        live: () => current(seq),
        engine,
        show: showStep,
        indexUrl: absolute('models/index.json'),
        keep: !pageNotebook(),
        notice,
      }),
      use(src) {
        const { spec, got } = src;
        entry = null;
        hubModel = { spec, commit: got.commit };
        localName = `${spec.spec} (Hugging Face Hub${got.commit ? `, ${got.commit.slice(0, 7)}` : ''})`;
        ownName = spec.spec; // its Hub id (and revision, when not main)
        notConverted();
        if (got.fellBack) notice('convert-dtype', 'warn', got.fellBack.text);
        notice('local', 'info', hubNote(spec, got));
        return { model: '', hub: spec.spec };
      },
    },
  };

  // The engine now holds converted model cv ({key, name, dtype}): a local
  // bundle, not a listed one.
  function useConverted(cv) {
    entry = null;
    hubModel = null;
    localName = `${cv.name} (converted)`;
    ownName = cv.name;
    convertedInUse = cv;
    return { model: '' };
  }

  /** The bundle bytes of the model shown, when it was converted in the page
   *  (from a checkpoint folder or the Hub): {bytes, name, dtype}, or null. */
  async function shownConvertedBytes() {
    if (convertedInUse) {
      const { key, name, dtype } = convertedInUse;
      if (unkept.has(key)) return { bytes: unkept.get(key), name, dtype };
      const kept = await findConverted(key);
      return kept ? { bytes: await kept.bytes(), name, dtype: dtype || kept.dtype } : null;
    }
    if (hubModel) {
      const kept = await findKeptHub(hubModel.spec.id, { commit: hubModel.commit || null });
      if (!kept) return null;
      const bytes = new Uint8Array(await kept.response.arrayBuffer());
      return { bytes, name: hubModel.spec.spec, dtype: (info && info.dtype) || 'q8' };
    }
    return null;
  }

  /** The engine takes buffer (a load of sequence seq): true when it did. */
  async function intoEngine(buffer, seq, name) {
    let res;
    try {
      res = buffer && buffer.taken ? buffer.taken : await engine.load(buffer); // (taken: loaded by the worker's 'take')
    } catch (e) {
      res = { error: e.message, restored: false };
    }
    if (!current(seq)) return false;
    loading = 0;
    setLoading(false);
    $('progress').hidden = true;
    if (res.error) {
      const tail = res.restored ? ' The previous model is still loaded.' : '';
      fail('load', `Could not load ${name}: ${res.error}.${tail}`);
      if (!res.restored) { info = null; entry = null; localName = null; store.dispatch({ type: 'forget' }); publish(); }
      fillPicker();
      return false;
    }
    info = res.info;
    store.dispatch({ type: 'forget' }); // its runs were of the previous model
    publish();
    if (store.snapshot()) { store.dispatch({ type: 'snapshot', snapshot: null }); clearOffer(); } // a snapshot drawn so far gives way to the model
    return true;
  }

  /** Load a model from any source (see the top of this file). While it
   *  loads the page stays 'loading' (a redraw of the old model is not the
   *  render for the current input); a newer load supersedes it. */
  async function loadModel(source, { proven = false, afterCrash = false } = {}) {
    const how = SOURCES[source.kind];
    if (source.kind !== 'listed' && !engineUp) { // snapshot mode: the engine has not started
      notice('load', 'warn', source.kind === 'file'
        ? `To open ${source.file.name}, first load the model with the button above; this page shows a snapshot and has not started the model engine.`
        : 'To convert a checkpoint, first load the model with the button above; this page shows a snapshot and has not started the model engine.');
      return;
    }
    const seq = ++loadSeq;
    loading = seq;
    setLoading(true);
    loadingSource = source;
    setPageState('loading');
    clearNotice('load');
    if (!afterCrash) clearNotice('engine'); // a new choice: the last crash is history
    let ok;
    try {
      const up = engineUp && await engineUp; // (a fresh one after a crash)
      if (!current(seq)) return false;
      if (!up) throw new Error('The model engine is not running; reload the page.');
      ok = await how.take(source, seq, (buffer, name) => intoEngine(buffer, seq, name));
    } catch (e) {
      if (!current(seq)) return;
      loading = 0;
      setLoading(false);
      $('progress').hidden = true;
      fail('load', e.message, e.detail);
      lastFailure = e;
      fillPicker(); // back to the model in use, or "no model loaded"
      return false;
    }
    if (!ok || !current(seq)) return false;
    const patch = how.use(source);
    if (inUse && inUse.proven) before = inUse;
    inUse = { source, again: againSourceOf(source), name: sourceName(source, convertedInUse && convertedInUse.name), proven };
    if (source.kind === 'hub') keptHub = await listKeptHub();
    fillPicker();
    loaded(patch);
    return true;
  }

  /** What follows a model's arrival: the store's model (the layer/head
   *  choices follow it: app.js), the question fitted to its layers and
   *  heads, the info line; then a run. */
  function loaded(patch = {}) {
    publish();
    const fit = fitToConfig({ ...store.get(), ...patch }, info.config);
    store.noticeList(fit.notices);
    // "Save converted model" saves the model shown: offered while it is one converted in the page
    $('save-converted').hidden = !(convertedInUse || hubModel);
    infoLine();
    store.update(fit.state);
  }

  function infoLine() {
    const c = info.config;
    const meta = info.meta || {};
    const source = (entry && entry.source) || meta['source.name'];
    const licence = (entry && entry.license) || meta['source.license'];
    const bits = [
      entry ? entry.name : localName,
      `${c.n_layers} layers × ${c.n_heads} heads, hidden ${c.hidden}`,
      info.dtype ? `weights ${info.dtype}` : null,
      // A listed model's index entry is curated; a bundle's own metadata may
      // name only a local path (e.g. a test conversion), so the entry wins.
      source ? `from ${source}` : null,
      licence ? `licence ${licence}` : null,
      meta['fidelity.attn_max'] ? `attention within ${meta['fidelity.attn_max']} of full precision` : null,
    ].filter(Boolean);
    $('model-info').textContent = bits.join(' · ');
    // The converter measured this on held-out texts (src/format/bundle.h, fidelity.*).
    $('model-info').title = meta['fidelity.attn_max']
      ? `On the converter's held-out texts, no attention weight shown differs from the full-precision (fp32) model's by more than ${meta['fidelity.attn_max']}; the key each row attends to most agrees in at least ${meta['fidelity.argmax'] || '?'} % of rows.`
      : '';
  }

  /** The model picker: every listed model (and the reader's bundle in use).
   *  With no model loaded (e.g. after a failed download) a first line says
   *  so, and choosing any listed model, the failed one included, starts its
   *  load. pending: the listed entry whose load is under way, shown chosen. */
  function fillPicker(pending = null) {
    const sel = d3.select('#model-select');
    const opts = list.map((m) => ({ value: m.id, label: `${m.name || m.id}${m.bytes ? ` — ${formatBytes(m.bytes)}` : ''}` }));
    // A converted checkpoint in use is a local bundle (localName); those kept
    // (or held this visit) but not in use, the list offers again, each by its
    // own name (lib/model_names.js: never the folder alone).
    if (localName) opts.push({ value: '__local__', label: convertedInUse ? `converted: ${convertedInUse.name} (${convertedInUse.dtype || '?'})` : `file: ${localName}` });
    const offered = new Set(convertedInUse ? [convertedInUse.key] : []);
    for (const k of keptConverted) {
      if (offered.has(k.key)) continue;
      offered.add(k.key);
      opts.push({ value: `__converted__${k.key}`, label: `converted: ${k.name}${k.dtype ? ` (${k.dtype})` : ''}` });
    }
    for (const k of keptHub) {
      if (hubModel && localName && k.id === hubModel.spec.id && k.commit === (hubModel.commit || '')) continue; // in use: __local__
      opts.push({ value: `__hub__${k.id}@${k.commit || k.revision}`, label: `Hub: ${k.id}${k.revision !== 'main' ? `@${k.revision}` : ''} (kept, ${k.commit ? k.commit.slice(0, 7) : 'offline copy'})` });
    }
    const chosen = localName ? '__local__' : (entry && info ? entry.id : (pending ? pending.id : ''));
    if (!chosen && opts.length) opts.unshift({ value: '', label: 'No model loaded — choose one' });
    sel.selectAll('option').data(opts, (o) => o.value).join('option')
      .attr('value', (o) => o.value).text((o) => o.label);
    sel.property('value', chosen);
  }

  /** A fresh engine (worker + wasm) as `engine`; engineUp resolves to it,
   *  or to null when it could not start (said in a notice). */
  function startEngine() {
    const e = new Engine(absolute(ASSETS.worker), { onCrash: (crash) => recover(e, crash) });
    engine = e;
    publish();
    engineUp = e.init(ASSETS.glue && absolute(ASSETS.glue), ASSETS.wasm && absolute(ASSETS.wasm), ASSETS.wasmBinary?.()).then(({ simd }) => {
      if (!simd) notice('simd', 'warn', 'This build of the model runs without SIMD; it will be slower.');
      return e;
    }, (err) => {
      fail('engine', `The model engine could not start: ${err.message}`);
      return null;
    });
    return engineUp;
  }

  /** The engine `dead` died (engine.js EngineCrash): a fresh one, and in
   *  it the model in use again — unless that model is what stopped the
   *  engine (it was loading, or no run of it had finished yet): then the
   *  model before it, or the list's default, and the copy of it this
   *  browser kept is dropped. One notice says what happened. engine.js
   *  calls this before the calls in flight hear of the crash, so what is
   *  decided here (the load in flight is superseded, the fresh engine is
   *  the one later loads wait for) holds when they do. */
  async function recover(dead, crash) {
    if (dead !== engine) return; // an engine replaced already
    const failedLoad = loading ? loadingSource : null;
    const firstRun = !failedLoad && inUse && !inUse.proven ? inUse : null;
    const culprit = failedLoad || (firstRun && firstRun.source);
    const what = failedLoad ? sourceName(failedLoad, failedLoad.cv && failedLoad.cv.name) : (inUse ? inUse.name : 'the model');
    const phase = failedLoad ? 'load' : (firstRun ? 'first-run' : (crash.during === 'run' ? 'run' : 'other'));
    let back = null; // {source, name, how, proven} for the fresh engine
    const again = (m, how) => ({ source: m.again, name: m.name, how, proven: m.proven });
    if (failedLoad && inUse) back = again(inUse, 'previous');
    else if (!culprit && inUse) back = again(inUse, 'same');
    else if (before) back = again(before, 'previous');
    else {
      const first = list.find((m) => m.default) || list[0];
      if (first && !(failedLoad && failedLoad.kind === 'listed' && failedLoad.entry === first)) {
        back = { source: { kind: 'listed', entry: first }, name: first.name || first.id, how: 'instead', proven: false };
      }
    }
    if (++crashes > 3) back = null; // it keeps dying: no more tries
    const startGoesOn = booting && failedLoad && failedLoad.kind === 'hub'; // start() loads the list's model next
    const dropped = !!(culprit && untrusted(culprit));
    // the input's own run (or what is read from it) stopped a model that
    // had run before: not that input again until it changes
    const blocked = back && back.how === 'same' && ['run', 'qk', 'analyze', 'like', 'compare', 'predict'].includes(crash.during);
    loadSeq++; // the load in flight, if any, went with the engine
    loading = 0;
    setLoading(false);
    info = null;
    inUse = null;
    if (!back) { entry = null; localName = null; hubModel = null; $('model-info').textContent = ''; }
    if (blocked) store.dispatch({ type: 'block' });
    store.dispatch({ type: 'forget' });
    publish();
    const text = crashNotice(crash, { phase, what, back: startGoesOn ? { how: 'boot' } : back, dropped, blocked });
    lastFailure = new Error(text); // (its reason quotes the engine's own words)
    if (culprit) { clearNotice('local'); clearNotice('truncated'); } // they spoke of the model that is gone
    if (!startGoesOn) notice('engine', 'error', text);
    setPageState('loading');
    showProgress('Restarting the model engine', 0, 0);
    const up = startEngine();
    if (dropped) {
      if (culprit.got) await culprit.got.evict(); // a Hub model is kept before the engine takes it
      if (culprit.kind === 'checkpoint' || culprit.kind === 'converted') {
        const key = culprit.cv ? culprit.cv.key : culprit.key;
        if (key !== undefined) { await dropConverted(key); unkept.delete(key); }
        if (convertedInUse && convertedInUse.key === key) convertedInUse = null;
        keptConverted = await listConverted();
        $('save-converted').hidden = true;
      }
      keptHub = await listKeptHub();
    }
    if (!await up || startGoesOn) return;
    $('progress').hidden = true;
    if (!back) {
      fillPicker();
      setPageState('error');
      return;
    }
    await loadModel(back.source, { proven: back.proven, afterCrash: true });
  }

  /** Start the engine and load the model the state names. */
  async function start() {
    if (!hasWasmSimd()) {
      fail('simd', 'This browser lacks WebAssembly SIMD (128-bit vector instructions), which bertlens needs. '
        + 'Please use a current version of Chrome, Edge, Firefox or Safari (16.4 or later).');
      return;
    }
    if (!await startEngine()) return;
    const nb = pageNotebook();
    if (nb && nb.model) { // show()'s model, its files from the notebook: a bundle, or a folder converted here
      fillPicker();
      if (nb.model === 'checkpoint') await loadModel({ kind: 'checkpoint', files: notebookFiles() });
      else {
        let file;
        try {
          [file] = await notebookFiles();
        } catch (e) {
          fail('load', `Could not load the notebook's model: ${e.message}.`);
          return;
        }
        await loadModel({ kind: 'file', file });
      }
      return;
    }
    try {
      list = await fetchIndex(absolute('models/index.json'));
      publish();
    } catch (e) {
      fail('index', `${e.message} You can still open a bundle file of your own.`, e.detail);
      return;
    }
    const wanted = store.get().model;
    let first = list.find((m) => m.id === wanted);
    if (wanted && !first) {
      notice('model-param', 'warn', `Unknown model "${wanted}"; using the default model.`); // the load names it
    }
    first = first || list.find((m) => m.default) || list[0];
    keptConverted = await listConverted();
    keptHub = await listKeptHub();
    addHubDialog((spec) => loadModel({ kind: 'hub', spec }));
    fillPicker(first);
    // ?hub=OWNER/NAME[@REV]: that model; if it cannot be had, the list's.
    const hub = store.get().hub;
    booting = true;
    const fromHub = hub && await loadModel({ kind: 'hub', spec: parseHubId(hub) });
    booting = false;
    if (fromHub) return;
    const why = hub && lastFailure; // said again once the list's model is shown
    await loadModel({ kind: 'listed', entry: first });
    if (why) notice('hub', 'warn', `${why.message} Showing ${first.name || first.id} instead.`, why.detail);
  }

  /** Save the model shown (converted in the page from a checkpoint or the
   *  Hub) as a bundle file named after its own name (lib/model_names.js). */
  async function saveConverted() {
    const got = await shownConvertedBytes();
    if (!got) return fail('load', 'The model shown was not converted in this page (or is no longer kept): there is no converted model to save.');
    const gz = await gzipBytes(got.bytes);
    download(new Blob([gz || got.bytes], { type: 'application/octet-stream' }), bundleFileName(got.name, got.dtype, !!gz));
    return undefined;
  }

  return {
    start,
    loadModel,
    /** Choose from the picker: a listed id, or the kept converted copy. */
    pick(value) {
      const e = list.find((m) => m.id === value);
      if (e) loadModel({ kind: 'listed', entry: e });
      else if (value.startsWith('__converted__')) {
        const k = keptConverted.find((x) => x.key === value.slice(13));
        loadModel({ kind: 'converted', key: value.slice(13), name: k ? k.name : undefined, dtype: k ? k.dtype : undefined });
      }
      else if (value.startsWith('__hub__')) loadModel({ kind: 'hub', spec: parseHubId(value.slice(7)) });
    },
    saveConverted,
    /** A run of the model in use finished (the store's 'run'): it works (a crash now keeps it). */
    ran() {
      crashes = 0;
      if (inUse) inUse.proven = true;
    },
  };
}
