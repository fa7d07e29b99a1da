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
// A label shows the space a piece starts with as WORD_START, a visible mark
// ("Ġcat" and "▁cat" read "␣cat", so the pieces "Ġc at Ġs at" read
// "␣c at ␣s at", two words, not four), other whitespace with visible signs,
// and a piece that holds only a marker as the mark itself; the raw piece
// stays available for tooltips (rawNote). Nothing here touches the DOM.
export const PIECE_STYLES = ['wordpiece', 'byte-level', 'metaspace'];
export const WORD_START = '\u2423'; // ␣ OPEN BOX, the sign for a space
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

/** Visible signs for line breaks and tabs. */
const visible = (s) => s.replace(/\r\n|[\n\r]/g, '⏎').replace(/\t/g, '⇥');

/** A character's code point as it is written: "U+00A0". */
const codePoint = (c) => `U+${c.codePointAt(0).toString(16).toUpperCase().padStart(4, '0')}`;

/** Every whitespace character visible: a space as WORD_START, line breaks
 *  and tabs by their signs, other spaces (no-break, ideographic, thin) by
 *  their code points. */
const allVisible = (s) => visible(s).replace(/\s/gu, (c) => (c === ' ' ? WORD_START : codePoint(c)));

/** A string nothing of which shows (zero-width joiners, controls), or
 *  nothing at all: its characters' code points ("U+200D"). One that starts
 *  with a combining mark (the accent of an "e" in the piece before) gets
 *  the dotted circle it is shown on ("◌́"). */
function shown(label, text) {
  if (label.length && !/^[\p{Cf}\p{Cc}\p{Zl}\p{Zp}]*$/u.test(label)) return /^\p{M}/u.test(label) ? `\u25cc${label}` : label;
  return [...text].map(codePoint).join(' ') || '∅';
}

/** What a piece spells: byte-level bytes decoded, SentencePiece's "▁" as a space. */
function spell(piece, style) {
  if (style === 'byte-level') return decoder.decode(Uint8Array.from(pieceBytes(piece)));
  if (style === 'metaspace') return piece.replaceAll(METASPACE, ' ');
  return piece;
}

/** A token's label: byte-level and SentencePiece pieces with their spaces
 *  as WORD_START ("Ġthe", "▁the" -> "␣the"; a lone "Ġ" or "▁" -> "␣"),
 *  line breaks and tabs visible ("Ċ" -> "⏎"). Specials and WordPiece
 *  tokens are shown as they are ("[CLS]", "<s>", "##ing": a WordPiece label
 *  marks the word's continuation instead). */
export function tokenLabel(piece, style = 'wordpiece', special = false) {
  if (special || style === 'wordpiece' || !PIECE_STYLES.includes(style)) return piece;
  const text = spell(piece, style);
  return shown(allVisible(text), text);
}

/** The label of a word made of pieces (in order): the pieces joined as the
 *  text spells them (byte-level bytes decoded together, so a character cut
 *  across two pieces is whole again), without the space it starts with. A
 *  word of only whitespace (byte-level BPE makes one of the second of two
 *  spaces, of a line break) shows it (tokenLabel's signs), never as ''. */
export function wordLabel(pieces, style = 'wordpiece') {
  if (style === 'wordpiece' || !PIECE_STYLES.includes(style)) {
    return pieces.map((p) => (p.startsWith('##') && p.length > 2 ? p.slice(2) : p)).join('');
  }
  const spelled = style === 'byte-level'
    ? decoder.decode(Uint8Array.from(pieces.flatMap((p) => pieceBytes(p))))
    : pieces.join('').replaceAll(METASPACE, ' ');
  const word = spelled.trim();
  return word.length ? shown(visible(word), word) : shown(allVisible(spelled), spelled);
}

/** The tokenizer's own piece for a tooltip, when the label spells it
 *  otherwise: 'piece “Ġthe”', else ''. */
export function rawNote(piece, label) {
  return piece === label ? '' : `piece “${piece}”`;
}

/** How a run's pieces spell words: the engine says (run.pieces), a
 *  snapshot's run does not (guessPieces). */
export const piecesOf = (run) => run.pieces || guessPieces(run.tokens);

/** Labels of a run's tokens (tokenLabel), specials as they are: the
 *  template's (no word id) and the model's own typed in the text. */
export function runLabels(run) {
  const style = piecesOf(run);
  return run.tokens.map((t, i) => tokenLabel(t, style, isSpecialToken(run, i) || !!(run.special && run.special[i])));
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

/** The special tokens the template added to a run, each once, in order
 *  (['[CLS]', '[SEP]'], ['<s>', '</s>']). */
export function templateSpecials(run) {
  return [...new Set(run.tokens.filter((_, i) => isSpecialToken(run, i)))];
}

/** The pair template a tokenizer applies, from its tokens of the pair
 *  ("A", "B") and their word ids (null or -1 for the template's): each
 *  stretch of text as A or B, the specials as they are, those that touch
 *  written together: "[CLS] A [SEP] B [SEP]", "<s> A </s></s> B </s>". */
export function pairTemplate(tokens, wordIds) {
  const parts = [];
  tokens.forEach((t, i) => {
    const special = wordIds[i] === null || wordIds[i] < 0;
    if (special) parts.push({ t, special });
    else if (!parts.length || parts.at(-1).special) parts.push({ t: parts.some((p) => !p.special) ? 'B' : 'A', special });
  });
  return parts.map((p, i) => (i && !(p.special && parts[i - 1].special) ? ' ' : '') + p.t).join('');
}

/** A token of the model's special vocabulary that came from the text (the
 *  run's `special` flags, from the bundle's tokenizer). */
export function isTypedSpecial(run, i) {
  return !!(run.special && run.special[i]) && run.wordIds[i] >= 0;
}
