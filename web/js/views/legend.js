// legend.js — the legend lines every view is given (env.lines, views/index.js):
// what the values are (attention or value-weighted norms), what hiding
// [CLS]/[SEP], switched-off heads, word level and a span change. Each view's
// prepare() decides which of them it shows, beside its own notes.

import { maskSet } from '../lib/compare.js';

/** The lines for state s drawn by view descriptor v, with the model's
 *  config ({n_layers, n_heads}, or null) and the token axis drawn. */
export function legendLines(s, v, config, axis) {
  const lines = [];
  if (s.mode === 'attn') {
    lines.push('Rows are queries (the token attending), columns are keys (attended to). Each row of attention weights sums to 1.');
  } else {
    lines.push('Value-weighted norms ‖α f(x)‖ (Kobayashi et al. 2020): weight × length of the value vector moved. Rows do not sum to 1.');
  }
  if (s.hide) {
    // the model's own specials as its tokenizer spells them (<s>/</s> for RoBERTa)
    const names = axis && axis.hidden && axis.hidden.length ? axis.hidden.join('/') : '[CLS]/[SEP]';
    lines.push(s.renorm
      ? `${names} hidden; every row renormalized to sum to 1 over the tokens shown.`
      : `${names} hidden, not renormalized: a row now sums to 1 minus what went to the hidden tokens.`);
  }
  if (s.ablate && config) {
    const off = maskSet(s.ablate, config.n_layers, config.n_heads);
    if (v.controls.head && s.head !== 'mean' && off.has(`${s.layer}/${s.head}`)) lines.push(`Layer ${s.layer}, head ${s.head} is switched off (head ablation): its attention probabilities are multiplied by 0, so its attention is all zeros${v.query ? '; q · k and the softmax below are what it computes before that' : ''}.`);
    else if (off.size) lines.push(`${off.size} head${off.size > 1 ? 's are' : ' is'} switched off (ablate=${s.ablate}): every view shows the ablated model.`);
  }
  if (s.words && v.controls.words) lines.push('Word level (Clark et al. 2019): attention to a word is the sum over its pieces, attention from a word the mean over its pieces, so rows still sum to 1. The words are the tokenizer\'s own (Hugging Face\'s word_ids()): BERT splits “didn\'t” into three, SentencePiece keeps “old.” whole.');
  if (axis && axis.spanLabel) lines.push(`Span ${axis.spanLabel} (shift-click tokens, or tap them after “Select span”, to add or remove them): its row is the attention from the span and its column the attention to the span, each summed over its tokens.`);
  return lines;
}
