// snapshot.js — a view and the numbers it draws, small enough for a URL
// fragment (#s=…) or a standalone HTML file, so an embed draws at once
// without the model. Plain ES module, no DOM; tested by
// tests/web/snapshot.test.mjs against Hugging Face numbers.
//
import { FormatError as SnapshotError, crc32, toBase64Url, fromBase64Url, deflateRaw, inflateRaw, Writer, Reader } from './bytes.js';
import { snapshotPlan } from './snapshot_plan.js';
import { predictFromRun, checkPredict, predictRun } from './snapshot_predict.js';
import { scoresFromRun, checkScores, scoresRun } from './snapshot_scores.js';
import { PIECE_STYLES } from './tokens.js';

export { snapshotPlan, snapshotCovers } from './snapshot_plan.js';

// ---------------------------------------------------------------- format
// The text form is base64url (RFC 4648 §5, no padding) of the deflate-raw
// (RFC 1951) compression of the binary snapshot below; readers accept text
// forms up to 1 MiB that inflate to at most 16 MiB, and whose blocks fit
// the memory budget MAX_SNAPSHOT_FLOATS (below). All integers are
// little-endian.
//
//   offset  size        field
//   0       3           magic "BLS"
//   3       1           version = 1 (anything else but 2, below: "unknown version" error)
//   4       1           T   tokens, [CLS]/[SEP] included, 1..MAX_TOKENS (64)
//   5       1           L   layers of the model       1..255
//   6       1           H   heads per layer           1..255
//   7       1           d   head width (q/k length)   1..255
//   8       4           M   byte length of the meta JSON
//   12      M           meta: UTF-8 JSON object (see below)
//   12+M    2           A   number of attention blocks
//           2·A         A × (u8 layer, u8 head), each layer < L, head < H,
//                       no pair twice
//           A·T·T       per block, row-major [query][key]: u8 round(α·255)
//                       (α is in [0, 1]; decoded as u8 / 255)
//   …       2           N   number of norm blocks
//           2·N         N × (u8 layer, u8 head)
//           4·N         N × f32 scale s = the block's largest value (> 0,
//                       or 0 for an all-zero block)
//           N·T·T       per block: u8 round(v / s · 255) (decoded u8 · s / 255)
//   …       1           Q   1 if q/k vectors follow, else 0
//           2           (if Q) u8 layer, u8 head
//           2·T·(4+d)   (if Q) T query vectors then T key vectors, each an
//                       f32 scale c = max|x| / 127 then d × i8 round(x / c)
//                       (decoded i8 · c)
//   …       4           CRC-32 (IEEE 802.3, as in zip/png) of every byte
//                       before it
//   end                 no byte may follow
//
// meta JSON: {"state": {view, layer, head, mode, query, hide, renorm, words,
//   filter, heads, theme, text, text_b, model},
//   "model": {"id", "name", "bytes"}, "tokens": [T strings],
//   "type_ids": [T × 0|1], "word_ids": [T × int, -1 for specials],
//   "truncated": bool, "offsets": [T × [start, end]]}
// predict (optional; written since 2026-11 for views whose spec says
// `predict: true`): the masked-LM words drawn, checked by snapshot_predict.js.
// offsets (optional; written since 2026-11): each token's character span in
// its own segment's text, as the live run has them ([0, 0] for specials), so
// "merge subwords into words" groups exactly as on the live page ("didn't"
// is one word). A snapshot without them still decodes: words then follow the
// word ids ("didn't" is three). Present but not T pairs of integers
// 0 <= start <= end: a SnapshotError.
// pieces, special, n_a (optional; written since 2026-11): how the tokenizer's
// pieces spell words (one of tokens.js PIECE_STYLES), each token's flag of
// the model's special vocabulary (T × bool) and the index of sentence B's
// first token (an integer 0..T; RoBERTa's pairs have type ids all 0), as the
// live run has them, so a byte-level "ĊĊ" reads "⏎⏎" and a typed "<mask>"
// stays a word of its own. Without them (older snapshots) the page guesses
// from the token strings (tokens.js guessPieces) and the type ids. Present
// but of another kind: a SnapshotError.
// scores (optional; written since 2026-11 for views whose spec says
// `scores: true`): the row of pre-softmax scores and their terms the neuron
// view shows (one query of one head), checked by snapshot_scores.js.
// Version 2 is the same but for T, two bytes (u16 at offset 4; L, H, d and
// M follow one byte later): written only above MAX_TOKENS tokens, for the
// notebook outputs of python/bertlens (up to MAX_FILE_TOKENS = 1,024). A
// reader takes such long snapshots only where it asks for FILE_LIMITS
// (below): a page started by a notebook output. Links and embeds keep
// LINK_LIMITS, whatever the version.
// causal (optional; written by python/bertlens for a decoder's attention):
// true when every weight above the diagonal is a masked 0 (no query sees a
// later key), so views can draw those cells as masked. Present but not a
// boolean: a SnapshotError.
// partial (optional; written by python/bertlens for include_layers /
// include_heads): the blocks are a selection of the model's heads, not every
// head of its first L layers, so what mixes every head through the layers
// (the rollout: a spec with `whole`, snapshot_plan.js) is not drawn from it.
// Present but not a boolean: a SnapshotError.
// Rounding error: attention within 0.5/255 of the model's value; a norm
// within s·0.5/255; q/k within c/2. Bad input throws SnapshotError with a
// sentence a reader understands; nothing here aborts the page.
//
// What a snapshot holds, and whether it holds what a state asks for, is the
// view's to say: snapshot_plan.js (snapshotPlan, snapshotCovers).

export const SNAPSHOT_VERSION = 1;
export const SNAPSHOT_VERSION_LONG = 2; // T in two bytes (above MAX_TOKENS tokens)
export const MAX_TOKENS = 64;
export const MAX_FILE_TOKENS = 1024;
const MAGIC = [0x42, 0x4c, 0x53]; // "BLS"
const MAX_TEXT = 1 << 20; // longest accepted text form (characters)
const MAX_INFLATED = 16 << 20; // largest accepted binary snapshot (bytes)
// Memory budget of a snapshot being drawn: runFromSnapshot lays a layer out
// as the live run does, H·T² floats per mode for every layer a block names
// (missing heads zero), plus H·T·d floats for q and for k. Those floats
// (snapshotFloats) may not pass 2^23 = 8,388,608, i.e. 32 MiB; the decoded
// blocks add at most as much again (each lies inside a named layer), so a
// snapshot never costs more than 64 MiB. A model view of BERT-large (24
// layers × 16 heads) at 64 tokens needs 1.6 M floats; a 4.5 KB link naming
// one head in each of 255 layers × 255 heads, in both modes, would need 532 M
// (2 GiB) and is refused before anything is allocated.
export const MAX_SNAPSHOT_FLOATS = 1 << 23;

// What a reader accepts: a link or embed (the default), or a notebook
// output's data block, which carries up to 1,024 tokens in at most 3 MB
// (python/bertlens checks the same bounds before writing): 2^25 floats
// (128 MiB) drawn, as many 8-bit values inflated (32 MiB, plus the meta).
export const LINK_LIMITS = Object.freeze({ tokens: MAX_TOKENS, floats: MAX_SNAPSHOT_FLOATS, inflated: MAX_INFLATED, text: MAX_TEXT });
export const FILE_LIMITS = Object.freeze({ tokens: MAX_FILE_TOKENS, floats: 1 << 25, inflated: (1 << 25) + (1 << 20), text: 4 << 20 });

// Damaged input: a FormatError (bytes.js) under the name the callers know.
export { SnapshotError };

const q255 = (v) => Math.max(0, Math.min(255, Math.round(v * 255)));

// ----------------------------------------------------------------- encode

/** The snapshot object of a live run (see web/js/worker.js for `run`) and the
 *  page state, for snapshotPlan(state, L, H, spec), spec the view's snapshot
 *  spec. model: {id, name, bytes}. Throws SnapshotError when the run is too
 *  long (limits: LINK_LIMITS, or a notebook output's FILE_LIMITS) or lacks
 *  the data. */
export function snapshotFromRun(run, state, model = {}, spec = null, limits = LINK_LIMITS) {
  const { T, L, H, d } = run;
  if (T > limits.tokens) throw new SnapshotError(`the input has ${T} tokens; snapshots hold at most ${limits.tokens}`);
  const plan = snapshotPlan(state, L, H, spec);
  const n = T * T;
  const take = (src, what) => plan[what].map(([l, h]) => {
    if (!src || !src[l]) throw new SnapshotError(`the run has no ${what === 'attn' ? 'attention' : 'norms'} for layer ${l}`);
    return { layer: l, head: h, data: src[l].subarray(h * n, h * n + n) };
  });
  let qk = null;
  if (plan.qk) {
    const [l, h] = plan.qk;
    if (!run.q || !run.q[l] || !run.k || !run.k[l]) throw new SnapshotError(`the run has no query/key vectors for layer ${l}`);
    const m = T * d;
    qk = { layer: l, head: h, q: run.q[l].subarray(h * m, h * m + m), k: run.k[l].subarray(h * m, h * m + m) };
  }
  return {
    T, L, H, d,
    state: pickState(state, spec),
    model: { id: model.id || state.model || '', name: model.name || '', bytes: Number(model.bytes) || 0 },
    tokens: run.tokens.slice(), typeIds: Array.from(run.typeIds), wordIds: Array.from(run.wordIds),
    offsets: run.offsets && run.offsets.length === T ? run.offsets.map(([a, b]) => [a, b]) : null,
    truncated: !!run.truncated,
    pieces: PIECE_STYLES.includes(run.pieces) ? run.pieces : null,
    special: run.special && run.special.length === T ? Array.from(run.special, (f) => !!f) : null,
    nA: Number.isInteger(run.nA) && run.nA >= 0 && run.nA <= T ? run.nA : null,
    causal: run.causal === true,
    attn: take(run.attn, 'attn'), norms: take(run.norms, 'norms'), qk,
    predict: spec && spec.predict ? predictFromRun(run.predict, state) : null,
    scores: spec && spec.scores ? scoresFromRun(run.scores, state, T) : null,
    viewData: spec && spec.data ? viewDataOf(spec.data.fromRun, run, state) : null,
  };
}

// ablate: the heads switched off in the run the numbers come from (compare.js).
const STATE_KEYS = ['view', 'layer', 'head', 'mode', 'query', 'hide', 'renorm', 'words', 'filter', 'heads', 'theme', 'text', 'text_b', 'model', 'ablate', 'mask'];
// (and the view's own parameters its spec names: spec.state)
function pickState(s, spec = null) {
  const o = {};
  for (const k of [...STATE_KEYS, ...((spec && spec.state) || [])]) if (s[k] !== undefined) o[k] = s[k];
  return o;
}

/** A view's own data for its snapshot (spec.data.fromRun): plain JSON, at
 *  most MAX_VIEW_DATA characters; the view checks it when it reads it back
 *  (spec.data.covers, the view's drawing). */
const MAX_VIEW_DATA = 1 << 20;
function viewDataOf(fromRun, run, state) {
  let o;
  try {
    o = fromRun(run, state);
  } catch (e) {
    throw new SnapshotError(String((e && e.message) || e));
  }
  if (!o || typeof o !== 'object' || Array.isArray(o) || JSON.stringify(o).length > MAX_VIEW_DATA) throw new SnapshotError('the view\'s data does not fit a snapshot');
  return o;
}

function checkSizes(o, limits = LINK_LIMITS) {
  const { T, L, H, d } = o;
  const ok = (v, lo, hi) => Number.isInteger(v) && v >= lo && v <= hi;
  if (!ok(T, 1, limits.tokens)) throw new SnapshotError(`a snapshot holds 1 to ${limits.tokens} tokens, not ${T}`);
  if (!ok(L, 1, 255) || !ok(H, 1, 255) || !ok(d, 1, 255)) throw new SnapshotError('layers, heads and head width must be 1 to 255');
  if (o.tokens.length !== T || o.typeIds.length !== T || o.wordIds.length !== T) throw new SnapshotError('token lists do not have T entries');
  if (o.offsets != null) {
    const pair = (p) => Array.isArray(p) && p.length === 2 && Number.isInteger(p[0]) && Number.isInteger(p[1]) && p[0] >= 0 && p[0] <= p[1];
    if (!Array.isArray(o.offsets) || o.offsets.length !== T || !o.offsets.every(pair)) {
      throw new SnapshotError('its token offsets are not T pairs of character positions');
    }
  }
  if (o.pieces != null && !PIECE_STYLES.includes(o.pieces)) throw new SnapshotError(`its piece style is not one of ${PIECE_STYLES.join(', ')}`);
  if (o.special != null && (!Array.isArray(o.special) || o.special.length !== T || !o.special.every((f) => typeof f === 'boolean'))) {
    throw new SnapshotError('its special-token flags are not T true/false values');
  }
  if (o.nA != null && !(Number.isInteger(o.nA) && o.nA >= 0 && o.nA <= T)) throw new SnapshotError('its sentence B start is not a token position');
}

/** The floats runFromSnapshot allocates for a snapshot: H·T² per layer named
 *  by an attention block, the same for norms, 2·H·T·d for q/k (qk: whether
 *  q/k vectors are present; default: o.qk). */
export function snapshotFloats({ T, H, d, attn = [], norms = [], qk = null }, hasQk = !!qk) {
  const layers = (blocks) => new Set(blocks.map((b) => b.layer)).size;
  return (layers(attn) + layers(norms)) * H * T * T + (hasQk ? 2 * H * T * d : 0);
}

function checkBudget(o, hasQk, limits = LINK_LIMITS) {
  const n = snapshotFloats(o, hasQk);
  if (n > limits.floats) {
    throw new SnapshotError(`drawing it would take ${Math.ceil((n * 4) / 1048576)} MB of memory, more than the ${(limits.floats * 4) / 1048576} MB a snapshot may use`);
  }
}

function writeBlocks(w, blocks) {
  w.u16(blocks.length);
  for (const b of blocks) { w.u8(b.layer); w.u8(b.head); }
}

/** Binary form (before compression) of a snapshot object: version 1, or 2
 *  above MAX_TOKENS tokens (limits: FILE_LIMITS then). */
export function packSnapshot(o, limits = LINK_LIMITS) {
  checkSizes(o, limits);
  const { T, d } = o;
  const n = T * T;
  const w = new Writer();
  MAGIC.forEach((b) => w.u8(b));
  if (T > MAX_TOKENS) { w.u8(SNAPSHOT_VERSION_LONG); w.u16(T); } else { w.u8(SNAPSHOT_VERSION); w.u8(T); }
  w.u8(o.L); w.u8(o.H); w.u8(d);
  const meta = new TextEncoder().encode(JSON.stringify({
    state: o.state, model: o.model, tokens: o.tokens, type_ids: o.typeIds, word_ids: o.wordIds, truncated: !!o.truncated,
    ...(o.offsets ? { offsets: o.offsets } : {}),
    ...(o.predict ? { predict: checkPredict(o.predict, T) } : {}),
    ...(o.pieces ? { pieces: o.pieces } : {}),
    ...(o.special ? { special: o.special } : {}),
    ...(o.nA != null ? { n_a: o.nA } : {}),
    ...(o.scores ? { scores: checkScores(o.scores, T, o.L, o.H) } : {}),
    ...(o.causal ? { causal: true } : {}),
    ...(o.partial ? { partial: true } : {}),
    ...(o.viewData ? { view_data: o.viewData } : {}),
  }));
  w.u32(meta.length);
  w.bytes(meta);
  writeBlocks(w, o.attn);
  for (const b of o.attn) for (let i = 0; i < n; i++) w.u8(q255(b.data[i]));
  writeBlocks(w, o.norms);
  const scales = o.norms.map((b) => { let m = 0; for (let i = 0; i < n; i++) if (b.data[i] > m) m = b.data[i]; return m; });
  scales.forEach((s) => w.f32(s));
  o.norms.forEach((b, k) => {
    const s = Math.fround(scales[k]);
    for (let i = 0; i < n; i++) w.u8(s > 0 ? q255(b.data[i] / s) : 0);
  });
  w.u8(o.qk ? 1 : 0);
  if (o.qk) {
    w.u8(o.qk.layer); w.u8(o.qk.head);
    for (const vecs of [o.qk.q, o.qk.k]) {
      for (let t = 0; t < T; t++) {
        let m = 0;
        for (let c = 0; c < d; c++) m = Math.max(m, Math.abs(vecs[t * d + c]));
        const sc = Math.fround(m / 127);
        w.f32(sc);
        for (let c = 0; c < d; c++) w.i8(sc > 0 ? Math.max(-127, Math.min(127, Math.round(vecs[t * d + c] / sc))) : 0);
      }
    }
  }
  const body = w.done();
  const out = new Uint8Array(body.length + 4);
  out.set(body);
  new DataView(out.buffer).setUint32(body.length, crc32(body), true);
  return out;
}

/** Text form (base64url of deflate-raw) of a snapshot object. */
export async function encodeSnapshot(o, limits = LINK_LIMITS) {
  return toBase64Url(await deflateRaw(packSnapshot(o, limits)));
}

// ----------------------------------------------------------------- decode

function readBlocks(r, L, H, what) {
  const count = r.u16(`${what} block count`);
  const seen = new Set();
  const out = [];
  for (let i = 0; i < count; i++) {
    const layer = r.u8(what);
    const head = r.u8(what);
    if (layer >= L || head >= H) throw new SnapshotError(`a ${what} block names layer ${layer} head ${head}, outside the model`);
    if (seen.has(layer * 256 + head)) throw new SnapshotError(`a ${what} block is listed twice`);
    seen.add(layer * 256 + head);
    out.push({ layer, head });
  }
  return out;
}

function cleanModel(m) {
  const o = m && typeof m === 'object' ? m : {};
  const bytes = Number(o.bytes);
  return {
    id: typeof o.id === 'string' ? o.id.slice(0, 100) : '',
    name: typeof o.name === 'string' ? o.name.slice(0, 200) : '',
    bytes: Number.isFinite(bytes) && bytes > 0 ? bytes : 0,
  };
}

/** Snapshot object of a binary snapshot (the inverse of packSnapshot, up
 *  to rounding), within limits (LINK_LIMITS or FILE_LIMITS). Throws
 *  SnapshotError on any damage. */
export function unpackSnapshot(bytes, limits = LINK_LIMITS) {
  if (bytes.length < 16 || MAGIC.some((b, i) => bytes[i] !== b)) throw new SnapshotError('it is not a bertlens snapshot');
  const version = bytes[3];
  if (version !== SNAPSHOT_VERSION && version !== SNAPSHOT_VERSION_LONG) {
    throw new SnapshotError(`it has version ${version}; this page reads versions ${SNAPSHOT_VERSION} and ${SNAPSHOT_VERSION_LONG} (a newer bertlens may have made it)`);
  }
  const body = bytes.subarray(0, bytes.length - 4);
  const crc = new DataView(bytes.buffer, bytes.byteOffset + bytes.length - 4, 4).getUint32(0, true);
  if (crc32(body) !== crc) throw new SnapshotError('its checksum does not match (the link was cut or changed)');
  const r = new Reader(body);
  r.n = 4;
  const T = version === SNAPSHOT_VERSION_LONG ? r.u16('header') : r.u8('header');
  if (version === SNAPSHOT_VERSION_LONG && T <= MAX_TOKENS) throw new SnapshotError(`its version 2 header names ${T} tokens (version 2 is for more than ${MAX_TOKENS})`);
  const L = r.u8('header');
  const H = r.u8('header');
  const d = r.u8('header');
  const mlen = r.u32('header');
  let meta;
  try {
    meta = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(r.bytes(mlen, 'meta')));
  } catch (e) {
    if (e instanceof SnapshotError) throw e;
    throw new SnapshotError('its description is not valid JSON');
  }
  if (!meta || typeof meta !== 'object' || !meta.state || typeof meta.state !== 'object'
    || !Array.isArray(meta.tokens) || !Array.isArray(meta.type_ids) || !Array.isArray(meta.word_ids)) {
    throw new SnapshotError('its description lacks the state or the tokens');
  }
  const o = {
    T, L, H, d, state: meta.state, model: cleanModel(meta.model), tokens: meta.tokens.map(String),
    typeIds: meta.type_ids.map(Number), wordIds: meta.word_ids.map(Number), truncated: !!meta.truncated,
    offsets: meta.offsets === undefined ? null : meta.offsets,
    pieces: meta.pieces === undefined ? null : meta.pieces,
    special: meta.special === undefined ? null : meta.special,
    nA: meta.n_a === undefined ? null : meta.n_a,
    causal: meta.causal === undefined ? false : meta.causal,
    partial: meta.partial === undefined ? false : meta.partial,
  };
  if (typeof o.causal !== 'boolean') throw new SnapshotError('its causal flag is not true or false');
  if (typeof o.partial !== 'boolean') throw new SnapshotError('its partial flag is not true or false');
  checkSizes(o, limits);
  o.limits = limits; // (runFromSnapshot's budget)
  o.predict = meta.predict === undefined ? null : checkPredict(meta.predict, T);
  o.scores = meta.scores === undefined ? null : checkScores(meta.scores, T, L, H);
  // view_data (optional; a view's own record, spec.data): an object here, checked field by field by its view
  if (meta.view_data !== undefined && (!meta.view_data || typeof meta.view_data !== 'object' || Array.isArray(meta.view_data))) throw new SnapshotError('its view data is not an object');
  o.viewData = meta.view_data === undefined ? null : meta.view_data;
  const n = T * T;
  o.attn = readBlocks(r, L, H, 'attention');
  checkBudget(o, false, limits); // before any block is allocated (again as each part is known)
  for (const b of o.attn) {
    const raw = r.bytes(n, 'attention values');
    b.data = new Float32Array(n);
    for (let i = 0; i < n; i++) b.data[i] = raw[i] / 255;
  }
  o.norms = readBlocks(r, L, H, 'norm');
  checkBudget(o, false, limits);
  const scales = o.norms.map(() => r.f32('norm scales'));
  o.norms.forEach((b, k) => {
    const s = scales[k];
    if (!Number.isFinite(s) || s < 0) throw new SnapshotError('a norm scale is not a finite non-negative number');
    const raw = r.bytes(n, 'norm values');
    b.data = new Float32Array(n);
    for (let i = 0; i < n; i++) b.data[i] = (raw[i] * s) / 255;
  });
  o.qk = null;
  const hasQk = r.u8('q/k flag');
  if (hasQk > 1) throw new SnapshotError('its q/k flag is neither 0 nor 1');
  checkBudget(o, hasQk === 1, limits);
  if (hasQk) {
    const layer = r.u8('q/k');
    const head = r.u8('q/k');
    if (layer >= L || head >= H) throw new SnapshotError('its q/k vectors name a layer or head outside the model');
    const vec = () => {
      const out = new Float32Array(T * d);
      for (let t = 0; t < T; t++) {
        const sc = r.f32('q/k scales');
        if (!Number.isFinite(sc) || sc < 0) throw new SnapshotError('a q/k scale is not a finite non-negative number');
        for (let c = 0; c < d; c++) out[t * d + c] = r.i8('q/k values') * sc;
      }
      return out;
    };
    const q = vec();
    const k = vec();
    o.qk = { layer, head, q, k };
  }
  if (r.n !== body.length) throw new SnapshotError(`${body.length - r.n} unexpected bytes follow its data`);
  return o;
}

/** Snapshot object of its text form, within limits (LINK_LIMITS, or
 *  FILE_LIMITS for a notebook output's). Throws SnapshotError (message: what
 *  is wrong, in words) for a damaged or unknown snapshot. */
export async function decodeSnapshot(text, limits = LINK_LIMITS) {
  if (typeof text !== 'string' || !text) throw new SnapshotError('The snapshot is empty.');
  if (text.length > limits.text) throw new SnapshotError('The snapshot is too long to be a bertlens snapshot.');
  try {
    const packed = fromBase64Url(text);
    let bytes;
    try {
      bytes = await inflateRaw(packed, limits.inflated);
    } catch (e) {
      if (e instanceof SnapshotError) throw e;
      throw new SnapshotError('it does not decompress (the link was cut or changed)');
    }
    return unpackSnapshot(bytes, limits);
  } catch (e) {
    if (e instanceof SnapshotError) {
      throw new SnapshotError(`This view's snapshot cannot be read: ${e.message.replace(/\.$/, '')}.`);
    }
    throw e;
  }
}

// ------------------------------------------------------------------- use

/** A run object (the shape of worker.js results) drawn from a snapshot:
 *  missing layers are null (nothing allocated), missing heads of a named
 *  layer are zero; ask snapshotCovers before drawing. Throws SnapshotError
 *  past MAX_SNAPSHOT_FLOATS. */
export function runFromSnapshot(o) {
  const { T, L, H, d } = o;
  checkBudget(o, !!o.qk, o.limits || LINK_LIMITS);
  const n = T * T;
  const fill = (blocks) => {
    if (!blocks.length) return null;
    const out = new Array(L).fill(null);
    for (const b of blocks) {
      if (!out[b.layer]) out[b.layer] = new Float32Array(H * n);
      out[b.layer].set(b.data, b.head * n);
    }
    return out;
  };
  let q = null;
  let k = null;
  if (o.qk) { // one layer's (one head's vectors in it)
    q = new Array(L).fill(null);
    k = new Array(L).fill(null);
    q[o.qk.layer] = new Float32Array(H * T * d);
    k[o.qk.layer] = new Float32Array(H * T * d);
    q[o.qk.layer].set(o.qk.q, o.qk.head * T * d);
    k[o.qk.layer].set(o.qk.k, o.qk.head * T * d);
  }
  const nA = o.nA != null ? o.nA : o.typeIds.filter((t) => t === 0).length;
  return {
    tokens: o.tokens, typeIds: o.typeIds, wordIds: o.wordIds, offsets: o.offsets || null, nA, truncated: o.truncated,
    ...(o.pieces ? { pieces: o.pieces } : {}), // else tokenAxis guesses from the tokens
    special: o.special || null,
    ...(o.causal ? { causal: true } : {}), // a decoder's attention (python/bertlens): keys after the query are masked
    // (a predictions-only snapshot holds no attention: L missing layers)
    T, L, H, d, attn: fill(o.attn) || (o.predict || o.viewData ? new Array(L).fill(null) : null), norms: fill(o.norms), q, k,
    ...(o.predict ? { predict: predictRun(o.predict) } : {}),
    ...(o.scores ? { scores: scoresRun(o.scores) } : {}),
    ...(o.viewData ? { viewData: o.viewData } : {}),
    ms: 0, snapshot: o,
  };
}
