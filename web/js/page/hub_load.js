// hub_load.js — a model named by its Hugging Face Hub id, for models.js's
// {kind: 'hub'} source: the kept copy of the same commit when this browser
// has one, else the checkpoint read from the Hub (engine/hub.js) through the
// in-page converter (engine/convert.js), with per-file progress; offline,
// the newest kept copy of that id and revision. Errors name what happened in
// a sentence (HubError messages); the id and server words stay text.

import { hubEndpoint, openHubCheckpoint, HubError, DEFAULT_ENDPOINT } from '../engine/hub.js';
import { findKeptHub, storeKeptHub, evictKeptHub } from '../engine/hub_cache.js';
import { convertChoosing } from '../engine/convert.js';
import { formatBytes } from '../engine/bundles.js';
import { notice } from './notices.js';

/** hub.endpoint of the model list (models/index.json, or the one-file
 *  page's inline copy); the default when there is none. */
export async function hubIndexEndpoint(indexUrl) {
  try {
    const inline = document.getElementById('bertlens-models');
    if (inline) return hubEndpoint(JSON.parse(inline.textContent));
    const res = await fetch(indexUrl, { cache: 'no-cache' });
    return res.ok ? hubEndpoint(await res.json()) : DEFAULT_ENDPOINT;
  } catch {
    return DEFAULT_ENDPOINT;
  }
}

/** Watch for connect-src refusals while fn runs: a fetch the page's CSP
 *  blocks fails like a network error, so the event is the only witness. */
async function underCsp(endpoint, fn) {
  const blocked = [];
  const on = (e) => { if (/^connect-src/.test(e.effectiveDirective || e.violatedDirective || '')) blocked.push(e.blockedURI); };
  document.addEventListener('securitypolicyviolation', on);
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
    document.removeEventListener('securitypolicyviolation', on);
  }
}

/** The bundle of Hub model spec (parseHubId's): {source, size, commit,
 *  from: 'kept' | 'hub' | 'offline', tensors, keep(), evict(), drop()}.
 *  source is what engine.load takes: the kept copy as a stream, or the
 *  converted bundle the worker holds (never a whole copy in JS); drop()
 *  lets it go unloaded. call: the converter (engine.conv); show(text,
 *  done, total): progress. */
export async function hubBundle({ spec, endpoint, call, show }) {
  const { id, revision } = spec;
  // One progress line: the file being read (bytes of its total) and, once
  // converting, the tensors done.
  const line = { file: '', done: 0, total: 0, tensors: '' };
  const report = () => show(`Downloading ${id}: ${line.file}${line.tensors}`, line.done, line.total);
  let ckpt;
  let kept = null;
  try {
    ckpt = await underCsp(endpoint, () => openHubCheckpoint({
      endpoint,
      spec,
      known: async (commit) => !!(kept = await findKeptHub(id, { commit })),
      wants: (name) => call('wants', [name]),
      progress: ({ file, done, total }) => { Object.assign(line, { file, done, total }); report(); },
    }));
  } catch (e) {
    if (e instanceof HubError && e.code === 'network') { // offline (or the Hub unreachable): a kept copy will do
      const copy = await findKeptHub(id, { revision });
      if (copy) return { ...keptSource(copy), from: 'offline', evict: () => evictKeptHub(id, copy.commit) };
    }
    throw e;
  }
  const keepAs = { id, revision, commit: ckpt.commit };
  if (kept) return { ...keptSource(kept), from: 'kept', evict: () => evictKeptHub(id, ckpt.commit) };
  show(`Downloading ${id} (${formatBytes(ckpt.weightBytes)} of weights)`, 0, ckpt.weightBytes);
  let res, got;
  try {
    // q8, or f16 where q8 cannot hold the model (convert.js convertChoosing)
    got = await underCsp(endpoint, () => convertChoosing(call, ckpt.entries, { name: id, hold: true }, (p) => {
      if (p.stage === 'tensor') { line.tensors = ` (converted: tensor ${p.done} of ${p.total})`; report(); }
    }));
    res = got.res;
  } catch (e) {
    if (e instanceof HubError) throw e;
    throw new HubError('convert', `${id} could not be converted: ${e.message}.`);
  } finally {
    ckpt.close();
  }
  const tensors = res.log.filter((l) => l.startsWith('[tensor] ') && !l.includes(' skipped ')).length;
  return {
    ...keepAs,
    source: { converted: true, gen: res.gen, size: res.size },
    size: res.size,
    from: 'hub',
    tensors,
    dtype: got.dtype,
    fellBack: got.fellBack,
    // stored by slices read out of the worker, before the engine takes the
    // bundle (it rewrites the q8 bytes in place once it owns them)
    keep: () => storeKeptHub(keepAs, { size: res.size, read: res.read }),
    evict: () => evictKeptHub(id, ckpt.commit),
    drop: () => res.release(),
  };
}

/** A kept copy (hub_cache.js findKeptHub) as hubBundle's result: streamed
 *  into the engine, never read whole here. */
function keptSource(copy) {
  const { response, ...rest } = copy;
  return {
    ...rest,
    source: { stream: response.body, size: copy.size },
    keep: async () => '',
    drop: () => response.body.cancel().catch(() => {}),
  };
}

/** models.js's take() for {kind: 'hub', spec}: the bundle to accept(source,
 *  name) (the engine's load: engine.js load(source)), stored for the next
 *  visit before the engine takes it, evicted if the engine refuses it. live(): this load is
 *  still the latest; call: the converter; show(text, done, total). */
export async function takeHub(src, accept, { live, call, show, indexUrl }) {
  const { spec } = src;
  show(`Asking the Hugging Face Hub for ${spec.spec}`, 0, 0);
  let got;
  try {
    got = await hubBundle({
      spec,
      endpoint: await hubIndexEndpoint(indexUrl),
      call,
      show: (text, done, total) => { if (live()) show(text, done, total); },
    });
  } catch (e) {
    throw Object.assign(new Error(`Could not load ${spec.spec} from the Hugging Face Hub: ${e.message}`), { detail: e.detail });
  }
  if (!live()) {
    await got.drop();
    return false;
  }
  src.got = got;
  const stored = got.from === 'hub' ? await got.keep() : '';
  if (stored) notice('storage', 'info', `${spec.id} could not be kept in this browser, so it will be downloaded again next time.`, stored);
  document.getElementById('progress-text').textContent = `Loading ${spec.spec} into the model engine…`;
  const ok = await accept(got.source, spec.spec);
  if (ok === false) await got.evict();
  return ok;
}

/** The info line for a Hub model now in use (got: takeHub's src.got). */
export function hubNote(spec, got) {
  if (got.from === 'offline') {
    return `${globalThis.navigator && navigator.onLine === false ? 'Offline' : 'The Hugging Face Hub could not be reached'}: `
      + `using the copy of ${spec.spec} this browser kept (${got.stored ? got.stored.slice(0, 10) : 'earlier'}).`;
  }
  if (got.from === 'kept') return `${spec.spec} at commit ${got.commit.slice(0, 7)}: the copy kept in this browser.`;
  return `Converted ${spec.spec} from the Hugging Face Hub in this page (${got.tensors} tensors, ${got.dtype || 'q8'}); it is kept in this browser for next time, offline too.`;
}
