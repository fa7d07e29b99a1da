// tokens.js — token strings as the page shows them. A tokenizer's pieces
// spell words in one of three ways (the run's `pieces`, from the engine's
// bl_tokenizer_pieces):
//   'wordpiece'   BERT, MPNet: a continuing piece starts with "##"
//   'byte-level'  RoBERTa, ModernBERT (GPT-2's byte alphabet): every byte is
//                 one character, "Ġ" (U+0120) is a space, so a word-start
//                 piece is "Ġthe"; a piece may hold only part of a
//                 character's UTF-8 bytes
//   'metaspace'   XLM-R, ALBERT, DeBERTa-v3 (SentencePiece): "▁" (U+2581)
//                 starts a word
// A word start is shown with a leading thin space (U+2009) rather than the
// marker; whitespace a piece holds is shown with a visible sign; the raw
// piece stays available for tooltips. Nothing here touches the DOM.

export const PIECE_STYLES = ['wordpiece', 'byte-level', 'metaspace'];
export const WORD_START = '\u2009';
const METASPACE = '\u2581';

// GPT-2's bytes_to_unicode: printable Latin-1 bytes stand for themselves,
// the other 68 bytes (controls, space, DEL, NBSP, soft hyphen) for
// U+0100 + their rank.
const BYTE_OF = new Map();
{
  let n = 0;
  for (let b = 0; b < 256; b++) {
    const printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
    BYTE_OF.set(String.fromCodePoint(printable ? b : 256 + n++), b);
  }
}
const utf8 = new TextEncoder();
const decoder = new TextDecoder('utf-8'); // not fatal: a cut character becomes U+FFFD

/** The bytes a byte-level piece stands for (a character outside the
 *  alphabet, as in an added token, stands for its own UTF-8). */
export function pieceBytes(piece) {
  const out = [];
  for (const ch of piece) {
    const b = BYTE_OF.get(ch);
    if (b !== undefined) out.push(b);
    else out.push(...utf8.encode(ch));
  }
  return out;
}

/** How a run's pieces spell words when the run does not say (a snapshot
 *  stores only the token strings): byte-level if a piece starts with "Ġ",
 *  SentencePiece if one starts with "▁", and in both cases none with "##"
 *  (a WordPiece vocabulary may hold a Maltese "Ġ" word, never both). */
export function guessPieces(tokens) {
  if (tokens.some((t) => t.startsWith('##') && t.length > 2)) return 'wordpiece';
  if (tokens.some((t) => t.startsWith('\u0120')) || byteSpelled(tokens)) return 'byte-level';
  if (tokens.some((t) => t.startsWith(METASPACE))) return 'metaspace';
  return 'wordpiece';
}

/** Non-ASCII text whose every piece is in GPT-2's byte alphabet and whose
 *  bytes, joined, are valid UTF-8 ("à¸łà¸²" is Thai): byte-level pieces. */
function byteSpelled(tokens) {
  if (!tokens.some((t) => /[^\x00-\x7f]/.test(t))) return false;
  if (!tokens.every((t) => [...t].every((ch) => BYTE_OF.has(ch)))) return false;
  let text;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(tokens.flatMap((t) => pieceBytes(t))));
  } catch {
    return false;
  }
  // multi-byte characters, and no control characters ("đ" is byte 0x11)
  return /[^\x00-\x7f]/.test(text) && !/[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/.test(text);
}

/** Visible signs for whitespace other than a plain space. */
const visible = (s) => s.replace(/\r\n|[\n\r]/g, '⏎').replace(/\t/g, '⇥');

/** What a piece says: its text (markers decoded) and whether it starts a word. */
function spell(piece, style) {
  if (style === 'byte-level') {
    const text = decoder.decode(Uint8Array.from(pieceBytes(piece)));
    return { text, start: /^\s/.test(text) };
  }
  if (style === 'metaspace') return { text: piece.replaceAll(METASPACE, ' '), start: piece.startsWith(METASPACE) };
  return { text: piece, start: !piece.startsWith('##') };
}

/** A token's label: a word start as a leading thin space, whitespace visible.
 *  Specials and WordPiece tokens are shown as they are ("[CLS]", "##ing"). */
export function tokenLabel(piece, style = 'wordpiece', special = false) {
  if (special || style === 'wordpiece' || !PIECE_STYLES.includes(style)) return piece;
  const { text, start } = spell(piece, style);
  if (!start) return visible(text);
  const rest = text.replace(/^ /, '');
  return rest.length && !/^\s/.test(rest) ? WORD_START + visible(rest) : visible(text);
}

/** The label of a word made of pieces (in order): the pieces joined as the
 *  text spells them (byte-level bytes decoded together, so a character cut
 *  across two pieces is whole again), without the word-start marker. */
export function wordLabel(pieces, style = 'wordpiece') {
  if (style === 'byte-level') {
    const bytes = pieces.flatMap((p) => pieceBytes(p));
    return visible(decoder.decode(Uint8Array.from(bytes)).trim());
  }
  if (style === 'metaspace') return visible(pieces.join('').replaceAll(METASPACE, ' ').trim());
  return pieces.map((p) => (p.startsWith('##') && p.length > 2 ? p.slice(2) : p)).join('');
}

/** 'A' or 'B' for every token. BERT's template gives B type id 1; templates
 *  whose type ids are all 0 (RoBERTa's <s> A </s></s> B </s>) say where B
 *  starts by nA, the index of its first token (the engine's n_a). */
export function tokenSegments(typeIds, nA = null) {
  const ids = Array.from(typeIds);
  if (ids.some((t) => t === 1) || !Number.isInteger(nA) || nA >= ids.length) return ids.map((t) => (t === 1 ? 'B' : 'A'));
  return ids.map((_, i) => (i >= nA ? 'B' : 'A'));
}

/** Is token i a special token the model's template added (<s>, </s>,
 *  [CLS], [SEP]: no word id)? What "hide specials" hides. A special token
 *  typed in the text ([MASK], <mask>, or [UNK] for an unknown character)
 *  is text: it stays, a word of its own (isTypedSpecial). */
export function isSpecialToken(run, i) {
  return run.wordIds[i] < 0;
}

/** A token of the model's special vocabulary that came from the text (the
 *  run's `special` flags, from the bundle's tokenizer). */
export function isTypedSpecial(run, i) {
  return !!(run.special && run.special[i]) && run.wordIds[i] >= 0;
}
