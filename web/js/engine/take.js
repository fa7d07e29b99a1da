// take.js — a model taken into the engine by the worker itself (issue 36):
// the page sends one 'take' request (worker_take.js) naming where the model
// is, and hears progress events and one result. Here, run inside the worker
// (tools/worker_source.mjs joins this module into it), is everything
// between: the Hub's files fetched (hub.js), the checkpoint converted by
// rows (convert.js, the converter's calls made in place, not posted), the
// bundle kept in Cache Storage (hub_cache.js, bundles_store.js) and loaded
// by the engine in place. No DOM.
//
// takeModel(req, io) -> the result the page gets:
//   req {kind: 'hub', spec, endpoint, keep}   a Hub id (hub.js parseHubId's
//        spec; endpoint: models/index.json hub.endpoint): the kept copy of
//        its commit, else downloaded and converted; offline, the newest
//        kept copy of that id and revision
//   req {kind: 'checkpoint', files: [{name, file}], folder, own, dtype, keep}
//        a checkpoint folder's files (names relative to the folder; own:
//        its config's _name_or_path), converted to dtype (q8, falling back)
//   req {kind: 'converted', key}   a converted copy this browser keeps
//   keep false: nothing is written to Cache Storage (a notebook frame).
// io: {call(fn, args, bytes) (the converter: worker_conv.js), fatal(e) (an
//   error the engine cannot go on after: passed on, not answered as a
//   failure, worker.js), loadStream(stream,
//   size) and loadConverted(gen) (the engine's load: {info} or {error,
//   restored}), current() (this take is still the latest load),
//   progress({label, done, total}), events (the worker's global, for the
//   CSP's refusals)}.
// The result: {load ({info} | {error, restored}) or failed ({message,
// detail}) or superseded: true, and what the page says of the model:
// from, commit, dtype, fellBack, tensors, cv, notes: [{text, detail}],
// bytes (a converted bundle this browser could not keep, for saving)}.

import { openHubCheckpoint, HubError } from './hub.js';
import { findKeptHub, storeKeptHub, evictKeptHub } from './hub_cache.js';
import { convertChoosing, heldBytes } from './convert.js';
import { storeConverted, findConverted, dropConverted } from './bundles_store.js';
import { metaStrings } from './bundle_meta.js';
import { convertedName, convertedKey } from '../lib/model_names.js';
import { formatBytes } from './bundles_errors.js';

/** Progress events at most this many steps per stage: a load is a few
 *  dozen messages, whatever the model's size (the page shows a bar, not
 *  every chunk). */
export const PROGRESS_STEPS = 16;

/** progress(phase, label, done, total, of, taking) passes on only a
 *  phase's first event and the next of its PROGRESS_STEPS steps of `of`
 *  (the stage's fraction done; phases may take turns: a checkpoint's
 *  checksum and its tensors). taking: what the engine is about to load
 *  ({cv} or {commit}), so the page knows which kept copy to drop should
 *  the engine die of it. */
export function stepper(post) {
  const steps = new Map(); // phase -> its last step passed on
  return (name, label, done = 0, total = 0, of = total > 0 ? done / total : 0, taking = null) => {
    const s = Math.floor(Math.min(1, of) * PROGRESS_STEPS);
    if (steps.has(name) && s <= steps.get(name)) return;
    steps.set(name, s);
    post(taking ? { label, done, total, taking } : { label, done, total });
  };
}

/** Watch for connect-src refusals while fn runs: a fetch the CSP blocks
 *  fails like a network error, so the event is the only witness. */
async function underCsp(events, endpoint, fn) {
  const blocked = [];
  const on = (e) => { if (/^connect-src/.test(e.effectiveDirective || e.violatedDirective || '')) blocked.push(e.blockedURI); };
  const can = events && typeof events.addEventListener === 'function';
  if (can) events.addEventListener('securitypolicyviolation', on);
  try {
    return await fn();
  } catch (e) {
    await new Promise((r) => setTimeout(r, 0)); // the event is queued after the fetch's failure
    if (blocked.length && e instanceof HubError && (e.code === 'network' || e.code === 'cut')) {
      let host = String(blocked[0]);
      try { host = new URL(host).host; } catch { /* 'blocked' or a bare origin */ }
      // A refused redirect is reported by the URL before it (browsers hide
      // where a cross-origin redirect went).
      const where = host === new URL(endpoint).host
        ? `the host the Hugging Face Hub redirected the download to (the browser does not say which; the request was ${blocked[0]})`
        : host;
      throw new HubError('csp', `This site's security policy (Content-Security-Policy) does not allow the page to connect to ${where}. `
        + 'The policy lists only the Hub\'s known hosts (see the README); this one is new or not the Hub\'s. Please tell whoever runs the site.', `connect-src refused ${blocked[0]}`);
    }
    throw e;
  } finally {
    if (can) events.removeEventListener('securitypolicyviolation', on);
  }
}

const tensorCount = (log) => log.filter((l) => l.startsWith('[tensor] ') && !l.includes(' skipped ')).length;

/** The model of req into the engine (see the top of this file). */
export async function takeModel(req, io) {
  try {
    if (req.kind === 'hub') return await takeHub(req, io);
    if (req.kind === 'checkpoint') return await takeCheckpoint(req, io);
    if (req.kind === 'converted') return await takeConverted(req, io);
    return { failed: { message: `no way to take a model of kind ${String(req.kind)}`, detail: '' } };
  } catch (e) {
    if (e && e.superseded) return { superseded: true };
    throw e;
  }
}

const superseded = () => Object.assign(new Error('a newer load replaced this one'), { superseded: true });

/** The converter, checked between its calls: a newer load stops this one. */
function converter(io) {
  return (fn, args, bytes, hint) => {
    if (!io.current()) throw superseded();
    return io.call(fn, args, bytes, hint);
  };
}

async function takeHub({ spec, endpoint, keep = true }, io) {
  const { id, revision } = spec;
  const progress = stepper(io.progress);
  const call = converter(io);
  // One progress line: the file being read (bytes of its total) and, once
  // converting, the tensors done; steps by the weights downloaded.
  const line = { file: '', done: 0, total: 0, tensors: '' };
  let weightBytes = 0, before = 0; // the weight files' bytes; of the files before this one
  const sizes = new Map();
  const report = () => {
    const label = `Downloading ${id}: ${line.file}${line.tensors}`;
    if (!sizes.has(line.file)) return progress('files', label, line.done, line.total, 0);
    return progress('weights', label, line.done, line.total, weightBytes ? (before + line.done) / weightBytes : 0);
  };
  progress('ask', `Asking the Hugging Face Hub for ${spec.spec}`);
  const fromKept = async (copy, from, commit) => {
    const { response, ...rest } = copy;
    progress('load', `Loading ${spec.spec} into the model engine…`, 0, 0, 0, { commit: rest.commit });
    if (!io.current()) { response.body.cancel().catch(() => {}); throw superseded(); }
    const load = await io.loadStream(response.body, copy.size);
    if (load.error) await evictKeptHub(id, commit);
    return { load, from, commit: rest.commit, stored: rest.stored };
  };
  let ckpt, kept = null;
  try {
    try {
      ckpt = await underCsp(io.events, endpoint, () => openHubCheckpoint({
        endpoint,
        spec,
        known: async (commit) => !!(kept = await findKeptHub(id, { commit })),
        wants: (name) => call('wants', [name]),
        progress: ({ file, done, total }) => {
          if (file !== line.file && sizes.has(line.file)) before += sizes.get(line.file);
          Object.assign(line, { file, done, total });
          report();
        },
      }));
    } catch (e) {
      if (e instanceof HubError && e.code === 'network') { // offline (or the Hub unreachable): a kept copy will do
        const copy = await findKeptHub(id, { revision });
        if (copy) return await fromKept(copy, 'offline', copy.commit);
      }
      throw e;
    }
    if (kept) return await fromKept(kept, 'kept', ckpt.commit);
    weightBytes = ckpt.weightBytes;
    for (const e of ckpt.entries) if (e.fills) sizes.set(e.name, e.size);
    progress('start', `Downloading ${id} (${formatBytes(weightBytes)} of weights)`, 0, weightBytes);
    let got;
    try {
      // q8, or f16 where q8 cannot hold the model (convert.js convertChoosing)
      got = await underCsp(io.events, endpoint, () => convertChoosing(call, ckpt.entries, { name: id, hold: true }, (p) => {
        if (p.stage === 'tensor') { line.tensors = ` (converted: tensor ${p.done} of ${p.total})`; report(); }
      }));
    } catch (e) {
      if (e instanceof HubError || e.superseded || io.fatal(e)) throw e;
      throw new HubError('convert', `${id} could not be converted: ${e.message}.`);
    } finally {
      ckpt.close();
    }
    const { res } = got;
    const keepAs = { id, revision, commit: ckpt.commit };
    const notes = [];
    // kept by slices of the converter's bundle before the engine takes it
    // (it rewrites the q8 bytes in place once it owns them)
    if (keep) {
      progress('store', `Keeping ${spec.spec} in this browser…`);
      const problem = await storeKeptHub(keepAs, { size: res.size, read: res.read });
      if (problem) notes.push({ text: `${id} could not be kept in this browser, so it will be downloaded again next time.`, detail: problem });
    }
    if (!io.current()) { await res.release(); throw superseded(); }
    progress('load', `Loading ${spec.spec} into the model engine…`, 0, 0, 0, { commit: ckpt.commit });
    const load = await io.loadConverted(res.gen, res.size);
    if (load.error && keep) await evictKeptHub(id, ckpt.commit);
    return { load, from: 'hub', commit: ckpt.commit, tensors: tensorCount(res.log), dtype: got.dtype, fellBack: got.fellBack, notes };
  } catch (e) {
    if (e && (e.superseded || io.fatal(e))) throw e;
    return { failed: { message: e.message, detail: e.detail || '' } };
  }
}

async function takeCheckpoint({ files, folder = '', own = '', dtype = 'q8', keep = true }, io) {
  const progress = stepper(io.progress);
  const call = converter(io);
  let name = own || folder || 'checkpoint';
  const entries = files.map(({ name: n, file }) => ({
    name: n, size: file.size, read: async (a, b) => new Uint8Array(await file.slice(a, b).arrayBuffer()),
  }));
  let got, res, sha = '';
  progress('start', `Converting ${name}`);
  try {
    got = await convertChoosing(call, entries, { name, dtype, hold: true }, (p) => {
      if (p.stage === 'tensor') {
        const lastLine = (p.lines.find((l) => l.startsWith('[tensor] ')) || '').replace(/^\[tensor\] +/, '');
        progress('tensor', `Converting ${name}: tensor ${p.done} of ${p.total}${lastLine ? ` — ${lastLine}` : ''}`, p.done, p.total);
      } else if (p.stage === 'hash' && p.total) {
        progress('hash', `Reading ${name} (checksum)`, p.done, p.total);
      }
    });
    res = got.res;
    // never the folder alone: a folder without _name_or_path adds its weights' hash
    sha = (await metaStrings(res.read, ['source.sha256']))['source.sha256'] || '';
    name = convertedName({ nameOrPath: own, folder, sha });
  } catch (e) {
    if (e.superseded || io.fatal(e)) throw e; // (the engine goes: nothing to release)
    if (res) await res.release();
    return { failed: { message: `Could not convert ${name}: ${e.message}.`, detail: '' }, name };
  }
  const cv = { key: convertedKey(name, sha, got.dtype), name, dtype: got.dtype };
  const notes = [];
  let bytes = null;
  // kept in Cache Storage by slices of the converter's bundle, then taken
  // by the engine in place (which rewrites its q8 bytes, so it is kept first)
  const kept = keep && await storeConverted(cv.name, { size: res.size, read: res.read }, (text, detail) => notes.push({ text, detail }), { key: cv.key, dtype: cv.dtype });
  if (!kept) bytes = await heldBytes(res); // not kept by the browser: a copy for the page, for saving it as a file
  if (!io.current()) { await res.release(); throw superseded(); }
  progress('load', `Loading ${name} into the model engine…`, 0, 0, 0, { cv });
  const load = await io.loadConverted(res.gen, res.size);
  if (load.error && kept) await dropConverted(cv.key);
  return { load, cv, fellBack: got.fellBack, tensors: tensorCount(res.log), notes, bytes: load.error ? null : bytes, kept: !!kept };
}

async function takeConverted({ key }, io) {
  const kept = await findConverted(key);
  if (!kept) return { failed: { message: 'The converted model is no longer kept in this browser; convert the folder again.', detail: '' } };
  const cv = { key: kept.key, name: kept.name, dtype: kept.dtype };
  if (!io.current()) throw superseded();
  // streamed in, never whole here; a copy kept before its size was stored with it is read whole
  const load = kept.size ? await io.loadStream(kept.stream(), kept.size) : await io.loadBytes(await kept.bytes());
  return { load, cv };
}
