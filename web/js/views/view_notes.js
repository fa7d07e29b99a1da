// view_notes.js — the sentences views add about what they show, as plain
// functions (no DOM; tests/web/views_notes.test.mjs): which head the neuron
// view opens on from a cell of all heads (a mean-of-heads heatmap, rollout),
// the note that only every n-th token is labelled, and what an empty view
// says instead of empty axes.

/** The head of one layer that gives query q's row the most to key k.
 *  layer: Float32Array [H][T][T] (attention or norms). Ties: the lower head.
 *  Returns {head, value}. */
export function strongestHead(layer, H, T, q, k) {
  if (!(q >= 0 && q < T && k >= 0 && k < T)) throw new RangeError(`cell ${q} → ${k} not in 0..${T - 1}`);
  let head = 0;
  let value = -Infinity;
  for (let h = 0; h < H; h++) {
    const v = layer[(h * T + q) * T + k];
    if (v > value) { value = v; head = h; }
  }
  return { head, value };
}

const f3 = (v) => (Number.isFinite(v) ? v.toFixed(3) : String(v));

/** The neuron view's sentence on why it shows `head` for the cell query →
 *  key: the chosen head, or the one the reader picked and the strongest. */
export function headReason({ layer, head, best, value, query, key, what = 'weight' }) {
  const cell = `query ${query} → key ${key}`;
  if (head === best.head) {
    return `Layer ${layer} head ${head}: the head that gives this cell (${cell}) the most ${what} (${f3(best.value)}); pick another in “Head”.`;
  }
  return `Layer ${layer} head ${head} gives this cell (${cell}) ${what} ${f3(value)}; head ${best.head} gives it the most (${f3(best.value)}).`;
}

const ordinal = (n) => {
  const t = n % 100;
  if (t >= 11 && t <= 13) return `${n}th`;
  return `${n}${{ 1: 'st', 2: 'nd', 3: 'rd' }[n % 10] || 'th'}`;
};

/** A chart that labels only every step-th token says so. what: what to
 *  point at for a token's name ("a cell", "a row"). */
export function strideNote(step, what = 'a cell') {
  if (!(step > 1)) return null;
  return `Every ${ordinal(step)} token labelled; hover ${what} for its token.`;
}

/** What a view says when nothing is left to draw: the text has no words
 *  (blank or whitespace only: the run is the special tokens alone, hidden or
 *  not), or no token is left on the axis. Null when there is something to
 *  draw. Special tokens typed in the text are words of the text (data.js
 *  isTypedSpecial), so "[CLS] [SEP]" typed still draws.
 *  wordIds: the run's; shown: tokens left on the axis; hide: specials hidden. */
export function emptySentence({ wordIds, shown, hide }) {
  const words = Array.from(wordIds || []).some((w) => w >= 0);
  if (!words) {
    return hide
      ? 'Nothing to show: the text has no words (it is empty or only spaces) and the special tokens it leaves are hidden. Type a sentence in the text box, for example “The cat sat on the mat.”'
      : 'Nothing to show: the text has no words (it is empty or only spaces), only the special tokens the model adds. Type a sentence in the text box, for example “The cat sat on the mat.”';
  }
  if (shown === 0) return 'Nothing to show: no token is left to draw. Type a sentence in the text box, or show the hidden tokens.';
  return null;
}
