// rollout.js — attention rollout (Abnar & Zuidema 2020) of one layer as a
// heatmap. The C side computes it (src/analysis/analyze.c, bl_analyze; the worker
// copies it out with blw_rollout): Ã_l = ½ · mean over heads of A_l + ½ · I,
// R_0 = Ã_0, R_l = Ã_l · R_(l−1). The norm-based rollout uses the
// value-weighted norms summed over heads (rows normalized) in place of the
// mean attention. The page's attention / norm switch picks which one.
// Drawn with the heatmap chart (views/heatmap.js).

import { heatmapView } from './heatmap.js';
import { heatmapFrame } from './layout.js';
import { tokenAxis } from '../lib/data.js';
import { ANALYSIS } from '../lib/protocol.js';

export const ROLLOUT_LINE = 'Rollout: how much of each token\'s representation after this layer (row) traces back to each input token (column), following attention through every layer up to this one and counting the residual connection as half; each row sums to 1.';

function matrixOf(run, s) {
  const per = s.mode === 'norm' ? run.rolloutNorm : run.rollout;
  if (!per || !per[s.layer]) throw new Error(`the run holds no ${s.mode === 'norm' ? 'norm-based ' : ''}rollout`);
  return per[s.layer];
}

const kindOf = (s) => (s.mode === 'norm' ? 'norm-based rollout (‖α f(x)‖)' : 'rollout of attention weights');

/** The registry entry (views/index.js). */
export const descriptor = {
  id: 'rollout',
  label: 'Rollout',
  size: ({ K }) => heatmapFrame(K), // drawn as a heatmap
  controls: { layer: true, head: false, mean: false, words: true, mode: true },
  // a snapshot of every head's attention; the rollout comes from it (page/boot.js, lib/attn_analyze.js)
  snapshot: { layers: 'all', heads: 'all', draws: 'heads', whole: true },
  needs: (s) => ({ norms: s.mode === 'norm', analysis: ANALYSIS.ROLLOUT }),
  // No head is shown: the neuron view opens on the head of this layer that
  // gives the selected cell the most (neuron.js enter).
  create: (ctx) => heatmapView().onQuery((i, j) => ctx.openNeuron(i, j)),
  prepare(run, s, { axis, lines }) {
    const matrix = axis.transform(matrixOf(run, s));
    return {
      K: axis.K, labels: axis.labels, segs: s.text_b ? axis.segs : null, matrix, valueName: 'rollout',
      title: `Rollout — ${s.layer ? `layers 0 to ${s.layer}` : 'layer 0'} (${kindOf(s)})`,
      notes: [
        ROLLOUT_LINE,
        s.mode === 'norm'
          ? 'Norm-based: each layer mixes by the value-weighted norms ‖α f(x)‖ summed over heads, rows scaled to sum to 1, instead of the mean attention weight (Kobayashi et al. 2020).'
          : 'Raw: each layer mixes by the mean attention weight over heads (Abnar & Zuidema 2020). Switch to norms for the norm-based rollout.',
        ...lines.slice(1),
      ],
    };
  },
  /** Export (CSV/JSON): the rollout matrix shown (after merging / hiding). */
  shown(run, s) {
    const axis = tokenAxis(run, { words: s.words, hideSpecials: s.hide, renorm: s.renorm });
    return {
      view: 'rollout', mode: s.mode, what: s.mode === 'norm' ? 'norm-based rollout' : 'rollout',
      hide: s.hide, renorm: s.renorm, words: s.words, ablate: s.ablate || '', text: s.text, text_b: s.text_b || '', tokens: run.tokens.slice(),
      blocks: [{ layer: s.layer, head: 'all', rows: axis.labels, cols: axis.labels, values: Array.from(axis.transform(matrixOf(run, s))) }],
    };
  },
};
