// compare_text.js — what the compare view (compare.js) says in words: the
// two runs by name ("original" and, by what changed, "heads off", "edited
// text" or "other model"), their texts (a pair's sentences kept apart,
// long ones shortened, the whole text in the tooltip), how they were
// aligned, the sentence-embedding figures, and which head is shown and why.
// Lines are {text, full}: full (or null) is the whole text of a shortened
// line, for its tooltip.

import { fmtSigned } from './common.js';
import { describeMask, runNames, pairText, shorten, formatSmall, NO_DIFFERENCE } from '../lib/compare.js';

/** The choice of B in the compare view's menu. */
export const KIND_LABEL = {
  ablate: 'the same text with heads off',
  text: 'an edited text (minimal pair)',
  model: 'another model',
};

const TEXT_MAX = 90; // characters of a text before it is shortened
/** The specials the run's template added, as its tokenizer spells them
 *  ("[CLS]/[SEP]", "<s>/</s>"). */
const specialsOf = (run) => [...new Set(run.tokens.filter((t, i) => run.wordIds[i] < 0))].join('/') || 'no special tokens';
const side = (run) => (run.mask && run.mask.length ? `, ${run.mask.length} heads off` : '');

/** A text, quoted and shortened: [shown, whole or null]. */
function quoted(text, textB) {
  const whole = `“${pairText(text, textB)}”`;
  const shown = `“${shorten(pairText(text, textB), TEXT_MAX)}”`;
  return [shown, shown === whole ? null : whole];
}

/** The lines above the grid: the two runs, the alignment, the embeddings. */
export function compareLines(c, s, modelName) {
  const names = runNames(c.kind);
  const lines = [];
  const { A, B, align, emb } = c;
  if (c.kind === 'ablate') {
    const [t, full] = quoted(s.text, s.text_b || '');
    const mask = describeMask(s.ablate, A.L, A.H) || 'no head switched off (switch heads off in the model view or the heads overview)';
    lines.push({ text: `Original: ${t}, every head on. Heads off: the same text with ${mask}.`, full });
  } else if (c.kind === 'text') {
    const [ta, fa] = quoted(s.text, s.text_b || '');
    const [tb, fb] = quoted(s.cmp_text, s.cmp_text_b || '');
    lines.push({ text: `Original: ${ta}${side(A)}`, full: fa });
    lines.push({ text: `Edited text: ${tb}${side(B)}`, full: fb });
  } else {
    lines.push({ text: `Original: ${modelName(s.model)}. Other model: ${modelName(s.cmp_model)}. Same text${side(A)}.`, full: null });
  }
  const say = (text) => lines.push({ text, full: null });
  if (!align.how && align.counts) {
    const { tokens, words } = align.counts;
    say(`No head-by-head difference: the ${names.A} has ${tokens[0]} tokens and ${words[0]} words (with ${specialsOf(A)}), the ${names.B} ${tokens[1]} tokens and ${words[1]} words; comparing heads cell by cell needs the same number of tokens or of words.`);
  } else if (!align.how) say(`No head-by-head difference: ${align.why}.`);
  else if (align.how === 'tokens') {
    say(align.same ? `Aligned by token position: both runs have the same ${align.K} tokens.`
      : `Aligned by token position (both have ${align.K} tokens); rows and columns are labelled ${names.A}/${names.B} where the tokens differ.`);
  } else say(`Aligned by words: the ${names.A} has ${A.T} tokens and the ${names.B} ${B.T}, both ${align.K} words (pieces merged, Clark et al.'s rule).`);
  if (emb) {
    if (emb.pairA !== undefined) {
      say(`Sentence embeddings, each sentence encoded alone: the similarity of the pair's two sentences (cosine) is ${emb.pairA.toFixed(4)} in the ${names.A} and ${emb.pairB.toFixed(4)} in the ${names.B} (change ${fmtSigned(emb.pairB - emb.pairA)}); the first sentence's embedding, ${names.A} vs ${names.B}: cosine ${emb.self.toFixed(4)}, the second's ${emb.selfB.toFixed(4)}.`);
    } else {
      say(`Sentence embedding, ${names.A} vs ${names.B}: cosine ${emb.self.toFixed(5)}.`);
    }
  }
  return lines;
}

/** Which head the difference shows, and why, in one sentence.
 *  shown: {layer, head, auto, offPicked}; best: lib/compare.js mostChanged. */
export function choiceLine(kind, shown, best) {
  const names = runNames(kind);
  if (!best) return 'Every head is switched off: there is no head to compare.';
  if (best.none) {
    const tiny = best.maxAbs > 0 ? ` (no weight moved by more than ${formatSmall(NO_DIFFERENCE)})` : '';
    return `No difference: every head that is on attends exactly as in the ${names.A}${tiny}, so there is no map to show.`;
  }
  const where = `layer ${best.l} head ${best.h}, max |Δ| = ${formatSmall(best.maxAbs)}`;
  if (shown.layer === best.l && shown.head === best.h) {
    const offNote = shown.offPicked ? ` Layer ${shown.offPicked.l} head ${shown.offPicked.h} is switched off, so it is not shown.` : '';
    return `Showing the largest change: ${where} (the largest max |${names.B} − ${names.A}| of the heads on in both runs).${offNote}`;
  }
  const what = shown.head === 'mean' ? `layer ${shown.layer}, mean of its heads` : `layer ${shown.layer} head ${shown.head}`;
  return `Showing ${what}, as picked. The largest change: ${where}.`;
}
