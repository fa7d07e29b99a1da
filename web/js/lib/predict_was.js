// predict_was.js — the words the Predictions view masked (its was= URL
// parameter), so the page can say how the model ranks the word it no longer
// sees, and put it back ("Unmask"). Plain ES module, no DOM
// (tests/web/predict_was.test.mjs).
//
// was=AT:ID:WORD,... — AT the token position of the mask token that replaced
// the word, ID the word's token id (what the model would have had to
// predict), WORD the characters replaced (percent-encoded, so no ',' or ':'),
// at most 64 entries, positions increasing. The worker ranks ID at AT
// (src/wasm/wasm_predict.c blw_predict_json_was) only while the run has the mask
// token there; the parameter belongs to the text it was made on (views'
// params perText: typing a new text drops it, page/toolbar.js).

export const MAX_WAS = 64;
const MAX_WORD = 200;

/** was= value -> [{at, id, word}] ('' -> []), or null when malformed. */
export function parseWas(raw) {
  if (raw === '' || raw === undefined || raw === null) return [];
  const parts = String(raw).split(',');
  if (parts.length > MAX_WAS) return null;
  const out = [];
  for (const p of parts) {
    const m = /^(\d{1,4}):(\d{1,10}):([^,:]{0,600})$/.exec(p);
    if (!m) return null;
    const id = Number(m[2]);
    if (id >= 2 ** 31) return null;
    let word;
    try { word = decodeURIComponent(m[3]); } catch { return null; }
    if (!word || word.length > MAX_WORD) return null;
    if (out.length && Number(m[1]) <= out[out.length - 1].at) return null;
    out.push({ at: Number(m[1]), id, word });
  }
  return out;
}

/** [{at, id, word}] -> was= value (sorted by position, one per position). */
export function formatWas(list) {
  const byAt = new Map(list.map((e) => [e.at, e]));
  return [...byAt.values()].sort((a, b) => a.at - b.at).map((e) => `${e.at}:${e.id}:${encodeURIComponent(e.word)}`).join(',');
}

/** The [position, id] pairs of a was= value, for the worker. */
export const wasPairs = (raw) => (parseWas(raw) || []).map((e) => [e.at, e.id]);

/** The characters of token i in its text: {key: 'text' | 'text_b', text,
 *  from, to}, less a space before the word that some tokenizers' offsets
 *  take in (DeBERTa-v3, ModernBERT: masking it would glue the mask to the
 *  word before); null for a token with no characters (a special token). */
export function tokenSpan(run, s, i) {
  const off = run.offsets && run.offsets[i];
  if (!off || off[1] <= off[0]) return null;
  const inB = !!s.text_b && Number.isInteger(run.nA) && i >= run.nA;
  const text = inB ? s.text_b : s.text;
  let from = off[0];
  while (from < off[1] && /\s/.test(text[from])) from++;
  if (from >= off[1]) return null;
  return { key: inB ? 'text_b' : 'text', text, from, to: off[1] };
}

/** The patch that masks token i (id: its token id) of run: the text with its
 *  characters replaced by maskToken, and was= recording what was there;
 *  null when it cannot be masked. */
export function maskPatch(run, s, i, maskToken, id) {
  const sp = maskToken ? tokenSpan(run, s, i) : null;
  if (!sp) return null;
  const word = sp.text.slice(sp.from, sp.to);
  const patch = { [sp.key]: sp.text.slice(0, sp.from) + maskToken + sp.text.slice(sp.to) };
  if (Number.isInteger(id) && id >= 0 && word.length <= MAX_WORD) {
    const was = (parseWas(s.was) || []).filter((e) => e.at !== i);
    patch.was = formatWas([...was, { at: i, id, word }]);
  }
  return patch;
}

/** The patch that puts back the word masked at token i (a was= entry): the
 *  mask token's characters replaced by the word, the entry dropped. */
export function unmaskPatch(run, s, i) {
  const was = parseWas(s.was) || [];
  const e = was.find((x) => x.at === i);
  const sp = e ? tokenSpan(run, s, i) : null;
  if (!sp) return null;
  return {
    [sp.key]: sp.text.slice(0, sp.from) + e.word + sp.text.slice(sp.to),
    was: formatWas(was.filter((x) => x !== e)),
  };
}
