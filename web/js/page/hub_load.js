// hub_load.js — a model named by its Hugging Face Hub id, for models.js's
// {kind: 'hub'} source: one request to the model worker, which takes the
// kept copy of the same commit when this browser has one, else reads the
// checkpoint from the Hub (engine/hub.js) through the converter, keeps and
// loads it (engine/take.js), with per-file progress; offline, the newest
// kept copy of that id and revision. Errors name what happened in a
// sentence (HubError messages); the id and server words stay text.

import { hubEndpoint, DEFAULT_ENDPOINT } from '../engine/hub.js';
import { evictKeptHub } from '../engine/hub_cache.js';

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

/** models.js's take() for {kind: 'hub', spec}: one 'take' request to the
 *  worker (engine/take.js: the kept copy of the same commit, else the
 *  checkpoint downloaded, converted, kept and loaded there; offline, the
 *  newest kept copy), then accept({taken}, name) with the engine's load.
 *  src.got: what the page says of it (hubNote) and evict() (a copy that
 *  stopped the engine). live(): this load is still the latest; show(step):
 *  progress ({label, done, total}); keep: false where nothing may be kept;
 *  notice(key, kind, text, detail): the store's, for the storage notes. */
export async function takeHub(src, accept, { live, engine, show, indexUrl, keep = true, notice }) {
  const { spec } = src;
  show({ label: `Asking the Hugging Face Hub for ${spec.spec}`, done: 0, total: 0 });
  const endpoint = await hubIndexEndpoint(indexUrl);
  const got = await engine.take({ kind: 'hub', spec, endpoint, keep }, (step) => {
    // the copy the engine is about to take: evicted should the engine die of it (models.js recover)
    if (step.taking && live()) src.got = { commit: step.taking.commit, evict: () => evictKeptHub(spec.id, step.taking.commit) };
    if (live()) show(step);
  });
  if (got.superseded || !live()) return false;
  if (got.failed) throw Object.assign(new Error(`Could not load ${spec.spec} from the Hugging Face Hub: ${got.failed.message}`), { detail: got.failed.detail });
  for (const n of got.notes || []) notice('storage', 'info', n.text, n.detail);
  src.got = { ...got, evict: () => evictKeptHub(spec.id, got.commit) };
  return accept({ taken: got.load }, spec.spec);
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
