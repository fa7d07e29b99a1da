// state.js — the whole page state and its URL form. Plain ES module (no DOM),
// tested by tests/web/state.test.mjs.

import { deflateRaw, inflateRaw, toBase64Url, fromBase64Url } from '../lib/bytes.js';
import { VIEW_IDS, VIEW_PARAMS } from '../views/index.js';
import { parseHubId } from '../engine/hub.js';
import { tokenSegments } from '../lib/tokens.js';
import { fitAblate } from '../lib/compare.js';

/** 0 (text A) or 1 (text B) per token: type ids, or n_a where the pair
 *  template's type ids are all 0 (RoBERTa's <s> A </s></s> B </s>). */
const segIds = (run) => tokenSegments(run.typeIds, run.nA).map((g) => (g === 'B' ? 1 : 0));
//
// ?text=..&text_b=..&model=..&view=heatmap|head|model|neuron&layer=..&head=N|mean
//  &mode=attn|norm&query=..&theme=light|dark&embed=1&hide=1&renorm=0&words=1
//  &present=1 (presentation mode: page/present.js)
//  plus the views' own parameters (views/*.js descriptor.params): rank=, min=
//  (heads overview), keep=, filter=all|aa|ab|ba|bb, heads=0,3,7 (head view),
//  span=3,4 (heatmap, head view), ablate=, cmp=… (compare)
// or, instead of text/text_b, ?z=<compressed texts> (see permalinkSearch):
//   z = base64url (RFC 4648 §5, no padding) of deflate-raw (RFC 1951) of the
//   UTF-8 JSON array [text, text_b]. Permalinks use z when it is shorter
//   than the plain text=/text_b= pair; plain ?text= links keep working.
//   A permalink holds only the text the model uses (cut at the end of its
//   last token when the input was truncated) and is never longer than
//   MAX_PERMALINK characters.
// Layers, heads and token positions count from 0, like Hugging Face.
// Anything unknown or out of range falls back to its default and yields a
// human-readable notice; the page shows the notices.

// The views and their own URL parameters come from the registry
// (views/index.js): a view's descriptor.params = [{key, def, parse(raw) ->
// value | null, expect}] (e.g. the heads overview's rank= and min=), and
// optionally none (raw values that mean def), fit(value, {layers, heads}) ->
// {value, notice} (the model's ranges) and within(value, {L, H, T}) ->
// problem | null (a snapshot's ranges).
export const VIEWS = VIEW_IDS;
export const MODES = ['attn', 'norm'];
export const THEMES = ['light', 'dark'];
export const MAX_TEXT_CHARS = 20000;
export const MAX_PERMALINK = 6000;

export const DEFAULTS = Object.freeze({
  text: 'The cat sat on the mat because it was tired.',
  text_b: '',
  model: '', // '' = the index's default model
  hub: '', // a Hugging Face Hub model, OWNER/NAME[@REV] (page/hub_load.js); wins over model
  view: VIEW_IDS[0], // the registry's first view (views/index.js)
  layer: 0,
  head: 0, // integer or 'mean'
  mode: 'attn',
  query: 0,
  theme: 'light',
  embed: false,
  present: false, // presentation mode (page/present.js): one view fills the window
  hide: false,
  renorm: true,
  words: false,
  ...Object.fromEntries(VIEW_PARAMS.map((p) => [p.key, p.def])),
});
const VIEW_PARAM = new Map(VIEW_PARAMS.map((p) => [p.key, p]));

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
      case 'hub':
        try {
          state.hub = parseHubId(raw).spec;
        } catch {
          bad(key, raw, 'not a Hugging Face model id, OWNER/NAME[@REVISION]');
        }
        break;
      case 'view':
      case 'mode':
      case 'theme': {
        const allowed = { view: VIEWS, mode: MODES, theme: THEMES }[key];
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
      case 'present':
      case 'hide':
      case 'renorm':
      case 'words': {
        const b = parseBool(raw);
        if (b === null) bad(key, raw, 'expected 1 or 0');
        else state[key] = b;
        break;
      }
      default: {
        const vp = VIEW_PARAM.get(key);
        if (!vp) break;
        if (vp.none && vp.none.includes(raw)) { state[key] = vp.def; break; }
        const v = vp.parse(raw);
        if (v === null) bad(key, raw, `expected ${vp.expect}`);
        else state[key] = v;
        break;
      }
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
  for (const vp of VIEW_PARAMS) {
    if (!vp.fit || s[vp.key] === vp.def) continue;
    const fit = vp.fit(s[vp.key], { layers, heads });
    s[vp.key] = fit.value;
    if (fit.notice) notices.push(fit.notice);
  }
  return { state: s, notices };
}

/** The question fitted to a model of config's shape: its layers and heads,
 *  the views' parameters, the heads switched off. Returns {state, notices}. */
export function fitToConfig(state, c) {
  const fit = fitToModel(state, { layers: c.n_layers, heads: c.n_heads });
  const ab = fitAblate(fit.state.ablate, c.n_layers, c.n_heads);
  return { state: { ...fit.state, ablate: ab.text }, notices: [...fit.notices, ...ab.notices] };
}

/** Check the query token against the number of shown tokens. */
export function fitQuery(state, nTokens) {
  if (state.query < nTokens) return { state, notices: [] };
  return {
    state: { ...state, query: 0 },
    notices: [`Query token ${state.query} does not exist (${nTokens} tokens shown); using token 0.`],
  };
}

/** The span (span=, shift-click) fitted to nTokens tokens: positions past
 *  the end are dropped with a notice (none left: no span). */
export function fitSpan(state, nTokens) {
  const span = state.span;
  if (!span || !span.length) return { state, notices: [] };
  const kept = span.filter((t) => t < nTokens);
  if (kept.length === span.length) return { state, notices: [] };
  const gone = span.filter((t) => t >= nTokens);
  const which = `${gone.length === 1 ? 'Token' : 'Tokens'} ${gone.join(', ')} of the span ${gone.length === 1 ? 'does' : 'do'} not exist (${nTokens} tokens)`;
  return {
    state: { ...state, span: kept.length ? kept : null },
    notices: [kept.length ? `${which}; the span keeps ${kept.join(', ')}.` : `${which}; no span is shown.`],
  };
}

/** The page state a snapshot carries (its meta JSON's "state", written from
 *  a page state: strings, whole numbers, booleans, lists of whole numbers),
 *  checked field by field before the page uses any of it: each known field
 *  must have its type, then pass parseState's checks, and name a layer,
 *  head, query or span position inside the snapshot (L layers, H heads, T
 *  tokens). Returns {state, problems}: problems says in words what is wrong
 *  with each field ([] when none); the caller falls back to the model when
 *  there is any. Fields this page does not know are ignored; embed and
 *  present come from the page's own URL, never from the snapshot. */
export function stateFromSnapshot(raw, { L, H, T }) {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return { state: null, problems: ['its state is not an object'] };
  const problems = [];
  const shown = (v) => short(JSON.stringify(v) ?? String(v));
  const p = new URLSearchParams();
  const isIndex = (v) => Number.isInteger(v) && v >= 0 && v <= 9999;
  const isList = (v) => Array.isArray(v) && v.length <= 512 && v.every(isIndex);
  // What each field must be, as the URL text parseState then checks.
  const raws = {
    string: (v) => (typeof v === 'string' ? v : null),
    index: (v) => (isIndex(v) ? String(v) : null),
    head: (v) => (v === 'mean' || isIndex(v) ? String(v) : null),
    bool: (v) => (typeof v === 'boolean' ? (v ? '1' : '0') : null),
    list: (v) => (v === null ? '' : isList(v) ? v.join(',') : null),
    number: (v) => (typeof v === 'number' && Number.isFinite(v) ? String(v) : null),
  };
  const expect = { string: 'a text', index: 'a whole number', head: 'a whole number or "mean"', bool: 'true or false', list: 'a list of whole numbers', number: 'a number' };
  const kindOf = (key) => {
    if (['layer', 'query'].includes(key)) return 'index';
    if (key === 'head') return 'head';
    if (['hide', 'renorm', 'words'].includes(key)) return 'bool';
    const def = DEFAULTS[key];
    return def === null ? 'list' : typeof def === 'number' ? 'number' : 'string';
  };
  for (const key of ['text', 'view', 'layer', 'head', 'mode']) {
    if (!Object.hasOwn(raw, key)) problems.push(`it has no ${key}`);
  }
  for (const key of Object.keys(raw)) {
    if (!KNOWN.has(key) || key === 'embed' || key === 'present') continue;
    const kind = kindOf(key);
    const text = raws[kind](raw[key]);
    if (text === null) problems.push(`${key} is ${shown(raw[key])}, not ${expect[kind]}`);
    else if (raw[key] !== DEFAULTS[key]) p.set(key, text); // (a default: nothing to check)
  }
  const parsed = parseState(p);
  problems.push(...parsed.notices.map((n) => n.replace(/^Ignored /, '').replace(/; using .*$/, '').replace(/\.$/, '')));
  const s = parsed.state;
  if (Number.isInteger(s.layer) && s.layer >= L) problems.push(`layer ${s.layer} is not one of its ${L} layers`);
  if (s.head !== 'mean' && s.head >= H) problems.push(`head ${s.head} is not one of its ${H} heads`);
  for (const vp of VIEW_PARAMS) {
    const problem = vp.within && s[vp.key] !== vp.def ? vp.within(s[vp.key], { L, H, T }) : null;
    if (problem) problems.push(problem);
  }
  if (s.query >= T) problems.push(`query ${s.query} is not one of its ${T} tokens`);
  if (s.span && s.span.some((t) => t >= T)) problems.push(`span ${short(s.span.join(','))} names tokens past its ${T}`);
  return { state: problems.length ? null : s, problems };
}

/** URL query string for a state. text, model, view, layer, head and mode are
 *  always written (a permalink should not depend on today's defaults); the
 *  rest only when they differ from the default. */
export function serializeState(state) {
  const p = new URLSearchParams();
  p.set('text', state.text);
  if (state.text_b) p.set('text_b', state.text_b);
  if (state.model) p.set('model', state.model);
  if (state.hub) p.set('hub', state.hub);
  p.set('view', state.view);
  p.set('layer', String(state.layer));
  p.set('head', String(state.head));
  p.set('mode', state.mode);
  if (state.query !== DEFAULTS.query) p.set('query', String(state.query));
  if (state.theme !== DEFAULTS.theme) p.set('theme', state.theme);
  if (state.embed) p.set('embed', '1');
  if (state.present) p.set('present', '1');
  if (state.hide) p.set('hide', '1');
  if (!state.renorm) p.set('renorm', '0');
  if (state.words) p.set('words', '1');
  for (const vp of VIEW_PARAMS) if (state[vp.key] !== vp.def) p.set(vp.key, String(state[vp.key]));
  return p.toString();
}

/** The <iframe> snippet that embeds a state (embed=1 forced). The URL is
 *  attribute-escaped so the snippet is safe to paste. */
export function embedSnippet(baseUrl, state, { width = 720, height = 560, search = null, snapshot = null } = {}) {
  // search: a permalinkSearch result for the state (embed added here);
  // snapshot: encodeSnapshot text, carried in the fragment (never sent to a server).
  let query = serializeState({ ...state, embed: true, present: false });
  if (search !== null) {
    const p = new URLSearchParams(search);
    p.set('embed', '1');
    p.delete('present'); // an embed is never a presentation
    query = p.toString();
  }
  const url = `${baseUrl}?${query}${snapshot ? `#s=${snapshot}` : ''}`;
  const esc = url.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  // max-width: on a host column narrower than the proposed width (a phone)
  // the frame shrinks instead of widening the host page; the view lays
  // itself out for the box it gets.
  return `<iframe src="${esc}" width="${width}" height="${height}" style="border:0;max-width:100%" title="bertlens attention view" loading="lazy"></iframe>`;
}

/** A generous frame size (CSS px) for K shown tokens of a model with L
 *  layers and H heads, when a view names none of its own: "Copy embed code"
 *  asks the view's descriptor first (views/index.js preferredSize), so this
 *  knows no view (`view` is accepted for the callers' sake). Rows of 22 px
 *  (13 above 80 tokens) or L rows of H head cells, whichever is taller. */
export function proposeEmbedSize(view, K, { L = 6, H = 12 } = {}) {
  const clamp = (v, lo, hi) => Math.max(lo, Math.min(hi, Math.round(v)));
  const cell = clamp((720 - 50) / Math.max(1, H), 18, 96);
  return { width: 720, height: clamp(320 + Math.max(K * (K > 80 ? 13 : 22), L * cell), 480, 2000) };
}

// ------------------------------------------------------------- permalinks

/** The part of text the model used: with a truncated run, text up to the
 *  end of the last token of segment seg (0 = A, 1 = B); else the text. */
export function usedText(text, run, seg) {
  if (!run || !run.truncated || !run.offsets) return text;
  let end = -1;
  const segs = segIds(run);
  for (let i = 0; i < run.T; i++) {
    if (segs[i] === seg && run.wordIds[i] >= 0) end = Math.max(end, run.offsets[i][1]);
  }
  return end < 0 ? '' : text.slice(0, end);
}

/** z= value for two texts. */
export async function compressTexts(text, textB) {
  const bytes = new TextEncoder().encode(JSON.stringify([text, textB || '']));
  return toBase64Url(await deflateRaw(bytes));
}

/** [text, text_b] of a z= value; throws an Error with a reason. */
export async function expandTexts(z) {
  let arr;
  try {
    arr = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(await inflateRaw(fromBase64Url(z), 1 << 20)));
  } catch {
    throw new Error('the compressed text (z=) is damaged; was the link cut?');
  }
  if (!Array.isArray(arr) || arr.length !== 2 || arr.some((t) => typeof t !== 'string')) {
    throw new Error('the compressed text (z=) is not a pair of texts');
  }
  return arr;
}

/** parseState for any permalink, z= included: {state, notices}. A damaged
 *  z= falls back to the default text with a notice. */
export async function parseStateAsync(search) {
  const params = new URLSearchParams(search instanceof URLSearchParams ? search.toString() : search);
  const notices = [];
  const z = params.get('z');
  params.delete('z');
  if (z !== null) {
    try {
      const [a, b] = await expandTexts(z);
      params.set('text', a);
      if (b) params.set('text_b', b);
      else params.delete('text_b');
    } catch (e) {
      notices.push(`Ignored the link's text: ${e.message}`);
    }
  }
  const parsed = parseState(params);
  return { state: parsed.state, notices: [...notices, ...parsed.notices] };
}

/** Query string with the texts as z= (when shorter) or text=/text_b=. */
async function searchFor(state) {
  const plain = serializeState(state);
  const rest = new URLSearchParams(plain);
  rest.delete('text');
  rest.delete('text_b');
  const z = await compressTexts(state.text, state.text_b);
  const zipped = `z=${z}${rest.toString() ? `&${rest}` : ''}`;
  return zipped.length < plain.length ? zipped : plain;
}

/** Token end offsets per segment of a run: ends[seg] = sorted end offsets of
 *  that segment's word tokens. */
function tokenEnds(run, seg) {
  const ends = [];
  const segs = segIds(run);
  for (let i = 0; i < run.T; i++) if (segs[i] === seg && run.wordIds[i] >= 0) ends.push(run.offsets[i][1]);
  return ends;
}

/** Permalink query string (no '?') for a state: only the text the model used
 *  (run, when given, is the last run of exactly this text), compressed when
 *  shorter, and at most maxChars long. If even that is too long (text made
 *  of long, incompressible words), the text is cut at a token boundary and
 *  `cut` says how many of the used tokens remain ({search, cut: null|{kept,
 *  of}}). Without a run the cut falls on a character. */
export async function permalinkSearch(state, { run = null, maxChars = MAX_PERMALINK } = {}) {
  const used = { ...state, text: usedText(state.text, run, 0), text_b: state.text_b ? usedText(state.text_b, run, 1) : '' };
  const full = await searchFor(used);
  if (full.length <= maxChars) return { search: full, cut: null };
  // Too long: keep a fraction f of each text (in tokens when the run is
  // known, else in characters), the largest that fits.
  const endsA = run && run.offsets ? tokenEnds(run, 0) : null;
  const endsB = run && run.offsets ? tokenEnds(run, 1) : null;
  const cutTo = (text, ends, f) => {
    if (!ends) return text.slice(0, Math.floor(text.length * f));
    const k = Math.floor(ends.length * f);
    return k ? text.slice(0, ends[k - 1]) : '';
  };
  let lo = 0;
  let hi = 1;
  // A minimal pair's second text (compare view, cmp_text / cmp_text_b) is
  // not compressed: it is cut by the same fraction, in characters.
  const cmp = (f) => (used.cmp_text || used.cmp_text_b
    ? { cmp_text: cutTo(used.cmp_text || '', null, f), cmp_text_b: cutTo(used.cmp_text_b || '', null, f) } : {});
  let best = await searchFor({ ...used, text: '', text_b: '', ...cmp(0) });
  for (let it = 0; it < 16; it++) {
    const f = (lo + hi) / 2;
    const s = await searchFor({ ...used, text: cutTo(used.text, endsA, f), text_b: cutTo(used.text_b, endsB, f), ...cmp(f) });
    if (s.length <= maxChars) { lo = f; best = s; } else hi = f;
  }
  const of = endsA ? endsA.length + (endsB ? endsB.length : 0) : used.text.length + used.text_b.length;
  const kept = endsA
    ? Math.floor(endsA.length * lo) + (endsB ? Math.floor(endsB.length * lo) : 0)
    : Math.floor(used.text.length * lo) + Math.floor(used.text_b.length * lo);
  return { search: best, cut: { kept, of, unit: endsA ? 'tokens' : 'characters' } };
}
