// snapshot_scores.js — the scores a snapshot (snapshot.js) carries for a view
// whose snapshot spec says `scores: true` (the neuron view): the row it
// shows, one query of one head, of the pre-softmax scores and of each term
// they add up from (src/analysis/scores.c, through the worker's 'scores' answer), so
// an embed or a standalone file shows the model's own numbers without the
// model. Plain ES module, no DOM; names no view.
//
// In the snapshot's meta JSON, key "scores" (absent in snapshots of other
// views and in older ones):
//   {"layer": 0..L-1, "head": 0..H-1, "query": 0..T-1,
//    "window": -1 or the layer's half window,
//    "terms": [{"name", "abbr", "about"}, ... 1 to 3],
//    "rows": [[T numbers or null], ...]  the scores, then one row per term}
// or, with "query": null (written by python/bertlens's neuron_view, which
// has every query's vectors), every query's rows: each of "rows" holds T·T
// numbers, query by query, for T up to MAX_ALL_QUERIES tokens.
// Numbers keep 8 significant digits (a float32 has 7.2); null is a key the
// model masks out. A link is anyone's JSON: checkScores refuses any other
// type, range or count with a SnapshotError naming the field; the strings
// stay data (the view sets them as text, never as HTML).

import { FormatError as SnapshotError } from './bytes.js';

export const MAX_TERMS = 3; // BL_MAX_SCORE_TERMS (src/bertlens.h)
export const MAX_ALL_QUERIES = 128; // tokens up to which a snapshot may hold every query's scores
const MAX_TEXT = { name: 48, abbr: 16, about: 300 };

const isObj = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const isInt = (v, lo, hi) => Number.isInteger(v) && v >= lo && v <= hi;
const shown = (v) => {
  let t;
  try { t = JSON.stringify(v); } catch { t = undefined; }
  t = t === undefined ? String(v) : t;
  return t.length > 40 ? `${t.slice(0, 40)}…` : t;
};
const stored = (x) => (Number.isNaN(x) ? null : Number(x.toPrecision(8)));

/** The head and query a neuron-view state shows, for a run of T tokens. */
export function shownHeadQuery(state, T) {
  return { head: state.head === 'mean' ? 0 : state.head, query: Math.min(state.query, T - 1) };
}

/** The snapshot's scores of a live run's run.scores (protocol.js
 *  withScores) for page state `state`: the row of its query. */
export function scoresFromRun(sc, state, T) {
  const { head, query } = shownHeadQuery(state, T);
  if (!sc || sc.layer !== state.layer || sc.head !== head) throw new SnapshotError(`the run has no scores for layer ${state.layer}, head ${head}`);
  const row = (a) => Array.from(sc.query === null ? a.subarray(query * T, query * T + T) : a, stored);
  if (sc.query !== null && sc.query !== query) throw new SnapshotError(`the run has no scores for query ${query}`);
  return {
    layer: sc.layer, head: sc.head, query, window: sc.window,
    terms: sc.terms.map((t) => ({ name: t.name, abbr: t.abbr, about: t.about })),
    rows: [row(sc.scores), ...sc.terms.map((t) => row(t.values))],
  };
}

/** The meta JSON's "scores" checked field by field for a snapshot of T
 *  tokens, L layers, H heads: a clean copy, or a SnapshotError. */
export function checkScores(raw, T, L, H) {
  const bad = (field, v, want) => { throw new SnapshotError(`its scores' ${field} is ${shown(v)}, not ${want}`); };
  if (!isObj(raw)) bad('record', raw, 'an object');
  if (!isInt(raw.layer, 0, L - 1)) bad('layer', raw.layer, `a layer below ${L}`);
  if (!isInt(raw.head, 0, H - 1)) bad('head', raw.head, `a head below ${H}`);
  const all = raw.query === null;
  if (all && T > MAX_ALL_QUERIES) bad('query', raw.query, `a token index below ${T} (every query's scores are held up to ${MAX_ALL_QUERIES} tokens)`);
  if (!all && !isInt(raw.query, 0, T - 1)) bad('query', raw.query, `a token index below ${T}, or null`);
  const n = all ? T * T : T;
  if (!isInt(raw.window, -1, 1e6)) bad('window', raw.window, 'a half window (-1: none)');
  if (!Array.isArray(raw.terms) || raw.terms.length < 1 || raw.terms.length > MAX_TERMS) bad('terms', raw.terms, `a list of 1 to ${MAX_TERMS} terms`);
  const terms = raw.terms.map((t, i) => {
    if (!isObj(t)) bad(`terms[${i}]`, t, 'an object');
    for (const [k, max] of Object.entries(MAX_TEXT)) {
      if (typeof t[k] !== 'string' || !t[k] || t[k].length > max) bad(`terms[${i}].${k}`, t[k], `a text of 1 to ${max} characters`);
    }
    return { name: t.name, abbr: t.abbr, about: t.about };
  });
  if (!Array.isArray(raw.rows) || raw.rows.length !== terms.length + 1) bad('rows', raw.rows, `${terms.length + 1} rows (the scores, then each term)`);
  const rows = raw.rows.map((r, i) => {
    if (!Array.isArray(r) || r.length !== n) bad(`rows[${i}]`, r, `a row of ${n} numbers`);
    r.forEach((v, j) => { if (v !== null && !(typeof v === 'number' && Number.isFinite(v))) bad(`rows[${i}][${j}]`, v, 'a number or null'); });
    return r.slice();
  });
  const masked = rows[0].map((v) => v === null);
  rows.forEach((r, i) => r.forEach((v, j) => { if ((v === null) !== masked[j]) bad(`rows[${i}][${j}]`, v, masked[j] ? 'null (the key is masked)' : 'a number'); }));
  for (let q = 0; q < n; q += T) if (masked.slice(q, q + T).every(Boolean)) bad('rows[0]', rows[0], 'rows with a key left in');
  return { layer: raw.layer, head: raw.head, query: raw.query, window: raw.window, terms, rows };
}

/** run.scores as protocol.js withScores has it, from a checked snapshot
 *  record: one query's row (query set) or every query's (query null), NaN
 *  where masked. */
export function scoresRun(o) {
  const row = (r) => Float32Array.from(r, (v) => (v === null ? NaN : v));
  return {
    layer: o.layer, head: o.head, query: o.query, window: o.window, scores: row(o.rows[0]),
    terms: o.terms.map((t, k) => ({ ...t, values: row(o.rows[k + 1]) })),
  };
}

/** Does snapshot o hold the scores state s shows? {ok: true} or {ok:
 *  false, why}, why completing "It does not hold …". */
export function scoresCovers(o, s) {
  const { head, query } = shownHeadQuery(s, o.T);
  const sc = o.scores;
  if (sc && sc.layer === s.layer && sc.head === head && (sc.query === null || sc.query === query)) return { ok: true };
  return { ok: false, why: `the scores of query ${query} for layer ${s.layer}, head ${head}` };
}
