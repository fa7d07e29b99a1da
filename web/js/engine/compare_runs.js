// compare_runs.js — runs the comparison of compare.js for the page: the
// partner run (same input unmasked, a second text, or a second model in its
// own worker), the alignment, and the per-head distances computed in C by
// the worker ('compare' message). The page attaches the result to its run
// as run.compare (protocol.js resultCovers checks its key).
//
//   const c = new Comparer({ mainEngine: () => engine, makeEngine, loadModel, pageInfo: () => info });
//   run.compare = await c.compare(spec, pageRun, pageMask);
//
// A failure (a model that cannot load, a model of another shape) becomes
// run.compare.error, a sentence the compare view shows; the page's own run
// and views are unaffected.

import { makeRunRequest, makeCompareRequest } from '../lib/protocol.js';
import { partnerOf, sides, alignRuns, embeddingFigures, rankChanges } from '../lib/compare.js';

/** The key of what a comparison in state s depends on (page run included). */
export function compareKey(s) {
  const p = partnerOf(s);
  return JSON.stringify([s.text, s.text_b || '', s.model, s.ablate, p.kind, p.text, p.text_b, p.model]);
}

/** cmp_model value of a bundle file the reader chose (not in any URL). */
export const LOCAL_MODEL = 'local';

export class Comparer {
  /** mainEngine() -> the page's Engine; makeEngine() -> a started Engine
   *  for a second model; loadModel(engine, id) -> its blw_info (throws
   *  with a sentence); pageInfo() -> the page model's blw_info. */
  constructor({ mainEngine, makeEngine, loadModel, pageInfo }) {
    Object.assign(this, { mainEngine, makeEngine, loadModel, pageInfo });
    this.partners = new Map(); // run key -> partner run (a few kept)
    this.second = null; // {id, engine, info} of the second model
  }

  /** Forget every partner run (the page's model changed). */
  reset() {
    this.partners.clear();
    if (this.second) this.second.engine.worker.terminate();
    this.second = null;
  }

  /** The engine (and its model info) a partner on model id runs on. */
  async engineFor(kind, id) {
    if (kind !== 'model') return { engine: this.mainEngine(), info: this.pageInfo() };
    if (!id) throw new Error('Choose a second model to compare with.');
    if (this.second && this.second.id === id && !this.second.engine.dead) return this.second;
    if (id === LOCAL_MODEL) throw new Error('The second model was a bundle file of your own, which a link cannot carry: choose the file again ("Bundle file…").');
    return this.useModel(id, (engine) => this.loadModel(engine, id));
  }

  /** A bundle file as the second model (loadModel for its bytes). */
  async useFile(name, load) {
    this.partners.clear();
    const second = await this.useModel(LOCAL_MODEL, load);
    second.name = name;
    return second;
  }

  /** Start a second engine and load a model into it with load(engine) ->
   *  info; refused unless it has the page model's shape. */
  async useModel(id, load) {
    if (this.second) this.second.engine.worker.terminate();
    this.second = null;
    const engine = await this.makeEngine();
    let info;
    try {
      info = await load(engine);
    } catch (e) {
      engine.worker.terminate();
      throw e;
    }
    const a = this.pageInfo().config;
    const b = info.config;
    if (a.n_layers !== b.n_layers || a.n_heads !== b.n_heads || a.hidden !== b.hidden) {
      engine.worker.terminate();
      throw new Error(`The second model has ${b.n_layers} layers × ${b.n_heads} heads (hidden ${b.hidden}) and this one ${a.n_layers} × ${a.n_heads} (hidden ${a.hidden}): heads can only be compared between models of the same shape.`);
    }
    this.second = { id, engine, info };
    return this.second;
  }

  async partnerRun(p, mask) {
    const key = JSON.stringify([p.kind === 'model' ? p.model : '', p.text, p.text_b, p.masked ? mask : null]);
    if (this.partners.has(key)) return this.partners.get(key);
    const { engine } = await this.engineFor(p.kind, p.model);
    const heads = p.masked && mask ? mask : null;
    const run = await engine.run(makeRunRequest({ a: p.text, b: p.text_b || null, needs: { embed: true }, mask: heads }));
    if (this.partners.size >= 6) this.partners.delete(this.partners.keys().next().value);
    this.partners.set(key, run);
    return run;
  }

  /** The comparison for state s: {key, kind, A, B, align, js, maxAbs,
   *  ranked, emb, ms} or {key, kind, error}. pageMask: the page's
   *  switched-off heads [[l, h], ...]; off: their Set of 'l/h'. */
  async compare(s, pageRun, pageMask, off) {
    const key = compareKey(s);
    const p = partnerOf(s);
    const t0 = performance.now();
    if (p.kind === 'text' && !p.text.trim()) return { key, kind: p.kind, error: 'Type the second text of the minimal pair above to compare with it.' };
    let partner = p.kind === 'ablate' && !(pageMask && pageMask.length) ? pageRun : null; // nothing off: the same run
    try {
      if (!partner) partner = await this.partnerRun(p, pageMask);
    } catch (e) {
      return { key, kind: p.kind, error: e.message };
    }
    const { A, B } = sides(p.kind, pageRun, partner);
    const align = alignRuns(A, B);
    const out = { key, kind: p.kind, A, B, align, js: null, maxAbs: null, ranked: null, emb: embeddingFigures(A, B) };
    if (align.how) {
      const layers = [...Array(A.L).keys()];
      const req = makeCompareRequest(layers.map((l) => align.mats(A, l)), layers.map((l) => align.mats(B, l)), A.H, align.K);
      const r = await this.mainEngine().compare(req);
      out.js = r.js;
      out.maxAbs = r.maxAbs;
      out.compareMs = r.ms;
      out.ranked = rankChanges(r.js, r.maxAbs, A.L, A.H, off);
    }
    out.ms = performance.now() - t0;
    return out;
  }
}
