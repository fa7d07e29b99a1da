// ablation_bar.js — the page's head-ablation line (index.html #ablation):
// the "Switch heads off" mode toggle (while it is on, a click or tap on a
// head in the model view or the heads overview switches that head off or
// on instead of opening it), "whole layer" and "all but this head" for the
// open head, one line saying what is off and what it does to the sentence
// embedding, and a reset. Text only (textContent).
//
//   const bar = ablationBar(document.getElementById('ablation'), { update });
//   bar.render({ state, L, H, run });      // after every draw
//   bar.on                                 // the mode toggle's state

import { describeMask, toggleLayer, allBut } from '../lib/compare.js';

export function ablationBar(el, { update }) {
  const make = (tag, cls, text) => {
    const n = document.createElement(tag);
    n.className = cls;
    if (text) n.textContent = text;
    if (tag === 'button') n.type = 'button';
    el.append(n);
    return n;
  };
  const toggle = make('button', 'abl-toggle', 'Switch heads off');
  toggle.setAttribute('aria-pressed', 'false');
  toggle.title = 'While pressed, a click or tap on a head in the model view or the heads overview switches it off or on';
  const layer = make('button', 'abl-layer', 'Whole layer');
  const allBut1 = make('button', 'abl-allbut', 'All but this head');
  const summary = make('span', 'abl-summary');
  summary.setAttribute('aria-live', 'polite');
  const reset = make('button', 'abl-reset', 'Reset');
  const bar = { on: false, last: null };
  toggle.addEventListener('click', () => {
    bar.on = !bar.on;
    toggle.setAttribute('aria-pressed', String(bar.on));
    document.body.classList.toggle('ablating', bar.on);
    if (bar.last) bar.render(bar.last);
  });
  const head = () => { const s = bar.last.state; return s.head === 'mean' ? 0 : s.head; };
  layer.addEventListener('click', () => { const { state: s, L, H } = bar.last; update({ ablate: toggleLayer(s.ablate, s.layer, L, H) }); });
  allBut1.addEventListener('click', () => { const { state: s, L, H } = bar.last; update({ ablate: allBut(s.layer, head(), L, H) }); });
  reset.addEventListener('click', () => update({ ablate: '' }));

  bar.render = (last) => {
    bar.last = last;
    const { state: s, L, H, run } = last;
    el.hidden = !L || s.embed;
    if (el.hidden) return;
    const off = describeMask(s.ablate, L, H);
    layer.textContent = `Whole layer ${s.layer}`;
    allBut1.textContent = `All but ${s.layer}:${head()}`;
    layer.hidden = allBut1.hidden = !bar.on;
    reset.hidden = !s.ablate;
    let text = off || (bar.on ? 'Click or tap heads in the model view or the heads overview to switch them off.' : '');
    const c = run && run.compare;
    if (off && c && c.kind === 'ablate' && c.emb) {
      text += c.emb.pairA !== undefined
        ? ` · similarity of the two sentences (encoded alone) ${c.emb.pairA.toFixed(4)} → ${c.emb.pairB.toFixed(4)}`
        : ` · sentence embedding's cosine to the unablated one ${c.emb.self.toFixed(4)}`;
    }
    summary.textContent = text;
    summary.dataset.cosine = c && c.emb ? String(c.emb.pairB ?? c.emb.self) : '';
  };
  return bar;
}
