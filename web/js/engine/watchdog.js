// watchdog.js — how long the model worker may take to answer a message
// before the page decides it has stopped (engine.js kills it and the page
// starts a fresh one: page/models.js). Plain module, no DOM
// (tests/web/watchdog.test.mjs); docs/page.md "The watchdog" has the figures.
//
// A message's deadline is FLOOR plus the time its work takes at rates well
// below the slowest device the page supports: on one thread of this
// project's 2-core test machine (AMD EPYC) the wasm engine does a forward
// pass of all-MiniLM-L6-v2 at 512 tokens (13.3 GFLOP) in 0.64 s (21
// GFLOP/s), lays its encoder's 10.6 M weights out on a first run in 0.95 s
// (11 M/s), and the tokenizers' budget is 100 KB of text in 1 s natively
// (issue 31). The rates below are 20-40 times slower, so a legitimate
// answer stays well inside its deadline, while a tiny model that loops
// forever is caught after FLOOR.
// A message the worker cannot have started (one queued behind another)
// has its clock started only when the one before it is answered.

export const LIMITS = {
  floorMs: 5000, // any message
  graceMs: 500, // after a deadline, for an answer already on its way
  flops: 0.5e9, // forward-pass arithmetic per second
  params: 0.5e6, // weights laid out per second (a model's first run)
  bytes: 10e6, // bundle or checkpoint bytes per second (checksums, copies, conversion)
  text: 20e3, // bytes of text per second through a tokenizer
};

const utf8Length = (s) => (typeof s === 'string' ? new TextEncoder().encode(s).length : 0);
const byteLength = (b) => (b && typeof b.byteLength === 'number' ? b.byteLength : 0);

/** Arithmetic of one forward pass of `config` (blw_info_json's config) at
 *  T tokens: the projections and feed-forward of every layer, the attention
 *  products, and two rollouts (T × T matrix products per layer). */
export function forwardFlops(config, T) {
  const { n_layers: L = 0, hidden: h = 0, intermediate: I = 0 } = config || {};
  return L * (2 * T * (4 * h * h + 2 * h * I) + 4 * T * T * h + 4 * T * T * T);
}

/** An upper bound of the tokens of texts a, b: no tokenizer makes more
 *  tokens than bytes (plus a few specials), and the model stops at its positions. */
function tokensOf(config, a, b) {
  const max = (config && config.max_positions) || 512;
  return Math.min(max, utf8Length(a) + utf8Length(b) + 8);
}

/** What message `type` with `args` asks of the worker: {flops, params,
 *  bytes, text} (rates in LIMITS), or null for no deadline ('init' fetches
 *  and compiles the engine over the network). ctx: {model (the config of
 *  the model the worker holds), laidOut (its weights laid out by a run
 *  already), lastT (tokens of the last run), hint (the caller's own work:
 *  a streamed or converted bundle's bytes)}. */
export function workOf(type, args = {}, ctx = {}) {
  const { model = null, laidOut = true, lastT = 0, hint = null } = ctx;
  const w = { flops: 0, params: 0, bytes: 0, text: 0 };
  const forward = (a, b, passes = 1) => {
    const T = tokensOf(model, a, b);
    w.flops += passes * forwardFlops(model, T);
    w.text += passes * (utf8Length(a) + utf8Length(b));
    if (!laidOut && model) w.params += (model.n_layers || 0) * (4 * model.hidden * model.hidden + 2 * model.hidden * model.intermediate);
  };
  switch (type) {
    case 'init': case 'take': return null; // (take: a download, as long as the network needs)
    case 'load': w.bytes += byteLength(args.bytes); break;
    case 'conv': w.bytes += byteLength(args.bytes); if (args.fn === 'read') w.bytes += Number(args.args && args.args[1]) || 0; break;
    case 'run': {
      const r = args.request || {};
      forward(r.a, r.b, r.embed ? 3 : 1); // a pair's embeddings run each sentence alone too
      break;
    }
    case 'like': case 'analyze': case 'qk': case 'compare':
      w.flops += forwardFlops(model, lastT || tokensOf(model, '', ''));
      break;
    case 'predict': // the masked-LM head over every token, for the whole vocabulary
      w.flops += forwardFlops(model, lastT) + 2 * lastT * ((model && model.hidden) || 0) * ((model && model.vocab_size) || 0);
      break;
    case 'decision': { // two runs, a forward and backward per attribution step (~3 passes), the lens
      const r = args.request || {};
      const passes = 2 + 3 * (r.method === 'ig' ? (r.steps || 32) + 1 : 1);
      w.flops += passes * forwardFlops(model, lastT) + 2 * (1 + ((model && model.n_layers) || 0)) * lastT * ((model && model.hidden) || 0) * ((model && model.vocab_size) || 0); // (the lens: at most every token)
      break;
    }
    case 'decision-heads': // one run per head of the layer, and two more
      w.flops += (((model && model.n_heads) || 0) + 3) * forwardFlops(model, lastT);
      break;
    case 'corpus-add': { // a batch of lines ('\n' between, TAB before B): a forward each
      const lines = typeof args.lines === 'string' ? args.lines.split('\n')
        : new TextDecoder().decode(args.lines || new Uint8Array(0)).split('\n');
      for (const line of lines) forward(line, '');
      break;
    }
    case 'corpus-tokens': w.text += utf8Length(args.a) + utf8Length(args.b); break;
    default: break;
  }
  if (hint) for (const k of Object.keys(w)) w[k] += Number(hint[k]) || 0;
  return w;
}

/** The deadline in ms for work w (workOf's), or 0 for none. */
export function deadlineMs(w, limits = LIMITS) {
  if (!w) return 0;
  const s = w.flops / limits.flops + w.params / limits.params + w.bytes / limits.bytes + w.text / limits.text;
  return Math.ceil(limits.floorMs + 1000 * s);
}

/** "5.5 s", "2 min 10 s": a deadline for the reader. */
export function formatMs(ms) {
  const s = ms / 1000;
  if (s < 60) return `${s < 10 ? s.toFixed(1) : Math.round(s)} s`;
  return `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
}
