// state.js — the whole page state and its URL form. Plain ES module (no DOM),
// tested by tests/web/state.test.mjs.
//
// ?text=..&text_b=..&model=..&view=heatmap|head|model|neuron&layer=..&head=N|mean
//  &mode=attn|norm&query=..&theme=light|dark&embed=1&hide=1&renorm=0&words=1
//  &filter=all|aa|ab|ba|bb&heads=0,3,7
// Layers, heads and token positions count from 0, like Hugging Face.
// Anything unknown or out of range falls back to its default and yields a
// human-readable notice; the page shows the notices.

export const VIEWS = ['heatmap', 'head', 'model', 'neuron'];
export const MODES = ['attn', 'norm'];
export const THEMES = ['light', 'dark'];
export const FILTERS = ['all', 'aa', 'ab', 'ba', 'bb'];
export const MAX_TEXT_CHARS = 20000;

export const DEFAULTS = Object.freeze({
  text: 'The cat sat on the mat because it was tired.',
  text_b: '',
  model: '', // '' = the index's default model
  view: 'heatmap',
  layer: 0,
  head: 0, // integer or 'mean'
  mode: 'attn',
  query: 0,
  theme: 'light',
  embed: false,
  hide: false,
  renorm: true,
  words: false,
  filter: 'all',
  heads: null, // null = every head; else sorted array of head indices
});

const KNOWN = new Set(Object.keys(DEFAULTS));

function parseIndex(raw) {
  if (!/^\d{1,4}$/.test(raw)) return null;
  return Number(raw);
}

function parseBool(raw) {
  if (raw === '1' || raw === 'true') return true;
  if (raw === '0' || raw === 'false') return false;
  return null;
}

function short(v) {
  const s = String(v);
  return s.length > 40 ? `${s.slice(0, 40)}…` : s;
}

/** Parse a query string (or URLSearchParams) into {state, notices}. Only the
 *  syntax is checked here; ranges that depend on the model are checked by
 *  fitToModel once the model is known. */
export function parseState(search) {
  const params = search instanceof URLSearchParams ? search : new URLSearchParams(search);
  const state = { ...DEFAULTS };
  const notices = [];
  const bad = (key, raw, why) => notices.push(`Ignored ${key}=${short(raw)} (${why}); using ${key}=${describe(DEFAULTS[key])}.`);

  for (const [key, raw] of params) {
    if (!KNOWN.has(key)) {
      notices.push(`Ignored unknown URL parameter "${short(key)}".`);
      continue;
    }
    switch (key) {
      case 'text':
      case 'text_b':
        if (raw.length > MAX_TEXT_CHARS) {
          state[key] = raw.slice(0, MAX_TEXT_CHARS);
          notices.push(`${key} was cut to ${MAX_TEXT_CHARS} characters.`);
        } else state[key] = raw;
        break;
      case 'model':
        if (/^[A-Za-z0-9._-]{1,100}$/.test(raw)) state.model = raw;
        else bad(key, raw, 'not a model id');
        break;
      case 'view':
      case 'mode':
      case 'theme':
      case 'filter': {
        const allowed = { view: VIEWS, mode: MODES, theme: THEMES, filter: FILTERS }[key];
        if (allowed.includes(raw)) state[key] = raw;
        else bad(key, raw, `expected one of ${allowed.join(', ')}`);
        break;
      }
      case 'layer':
      case 'query': {
        const n = parseIndex(raw);
        if (n === null) bad(key, raw, 'not a whole number');
        else state[key] = n;
        break;
      }
      case 'head':
        if (raw === 'mean') state.head = 'mean';
        else {
          const n = parseIndex(raw);
          if (n === null) bad(key, raw, 'not a whole number or "mean"');
          else state.head = n;
        }
        break;
      case 'embed':
      case 'hide':
      case 'renorm':
      case 'words': {
        const b = parseBool(raw);
        if (b === null) bad(key, raw, 'expected 1 or 0');
        else state[key] = b;
        break;
      }
      case 'heads': {
        if (raw === 'all' || raw === '') { state.heads = null; break; }
        const parts = raw.split(',').map(parseIndex);
        if (parts.some((p) => p === null)) bad(key, raw, 'expected a comma-separated list of head numbers');
        else state.heads = [...new Set(parts)].sort((a, b) => a - b);
        break;
      }
      default:
        break;
    }
  }
  return { state, notices };
}

function describe(v) {
  if (v === null) return 'all';
  if (v === true) return '1';
  if (v === false) return '0';
  if (v === '') return '(default)';
  return String(v);
}

/** Check the model-dependent ranges. Returns {state, notices}; the input is
 *  not modified. */
export function fitToModel(state, { layers, heads }) {
  const s = { ...state };
  const notices = [];
  if (s.layer >= layers) {
    notices.push(`Layer ${s.layer} does not exist (this model has layers 0–${layers - 1}); showing layer 0.`);
    s.layer = 0;
  }
  if (s.head !== 'mean' && s.head >= heads) {
    notices.push(`Head ${s.head} does not exist (this model has heads 0–${heads - 1}); showing head 0.`);
    s.head = 0;
  }
  if (s.heads) {
    const ok = s.heads.filter((h) => h < heads);
    if (ok.length !== s.heads.length) notices.push(`Ignored head numbers ≥ ${heads} in heads=.`);
    s.heads = ok.length && ok.length < heads ? ok : null;
  }
  return { state: s, notices };
}

/** Check the query token against the number of shown tokens. */
export function fitQuery(state, nTokens) {
  if (state.query < nTokens) return { state, notices: [] };
  return {
    state: { ...state, query: 0 },
    notices: [`Query token ${state.query} does not exist (${nTokens} tokens shown); using token 0.`],
  };
}

/** URL query string for a state. text, model, view, layer, head and mode are
 *  always written (a permalink should not depend on today's defaults); the
 *  rest only when they differ from the default. */
export function serializeState(state) {
  const p = new URLSearchParams();
  p.set('text', state.text);
  if (state.text_b) p.set('text_b', state.text_b);
  if (state.model) p.set('model', state.model);
  p.set('view', state.view);
  p.set('layer', String(state.layer));
  p.set('head', String(state.head));
  p.set('mode', state.mode);
  if (state.query !== DEFAULTS.query) p.set('query', String(state.query));
  if (state.theme !== DEFAULTS.theme) p.set('theme', state.theme);
  if (state.embed) p.set('embed', '1');
  if (state.hide) p.set('hide', '1');
  if (!state.renorm) p.set('renorm', '0');
  if (state.words) p.set('words', '1');
  if (state.filter !== DEFAULTS.filter) p.set('filter', state.filter);
  if (state.heads) p.set('heads', state.heads.join(','));
  return p.toString();
}

/** The <iframe> snippet that embeds a state (embed=1 forced). The URL is
 *  attribute-escaped so the snippet is safe to paste. */
export function embedSnippet(baseUrl, state, { width = 720, height = 560 } = {}) {
  const url = `${baseUrl}?${serializeState({ ...state, embed: true })}`;
  const esc = url.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  return `<iframe src="${esc}" width="${width}" height="${height}" style="border:0" title="bertlens attention view" loading="lazy"></iframe>`;
}
