// decision_draw.js — the parts the Decision view (decision.js) draws, each
// into a D3 selection: the head's output per kind, the tokens coloured by
// attribution with its legend, and the head-effects grid. Every token,
// label and word goes in as text (.text()), never as HTML.

import { tooltip, drawLegendBar, headColour } from './common.js';
import { pct, num, tokenLabels, scoreMax, scaleOf, METHOD_NAMES } from './decision_data.js';

const d3 = globalThis.d3;

/** Black or white, whichever reads on background colour c. */
function inkOn(c) {
  const { r, g, b } = d3.rgb(c);
  const lin = (v) => { const x = v / 255; return x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4; };
  return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b) > 0.35 ? '#111' : '#fff';
}

/** Probability bars: rows [{name, p, strong}]. */
function bars(sel, rows, theme) {
  const ol = sel.append('ol').attr('class', 'dv-probs').style('margin', '4px 0').style('max-width', '40em').style('padding-left', '0').style('list-style', 'none');
  const max = Math.max(1e-9, ...rows.map((r) => r.p));
  for (const r of rows) {
    const li = ol.append('li').attr('class', 'dv-prob').attr('data-label', r.name).attr('data-prob', r.p)
      .style('display', 'grid').style('grid-template-columns', 'minmax(4em, 10em) 1fr 4.5em').style('gap', '8px').style('align-items', 'center').style('min-height', '22px');
    li.append('span').attr('class', 'dv-prob-label').text(r.name).style('font-weight', r.strong ? '600' : null)
      .style('overflow', 'hidden').style('text-overflow', 'ellipsis').style('white-space', 'nowrap');
    li.append('span').attr('aria-hidden', 'true').style('display', 'block').style('height', '10px').style('background', 'rgba(127,127,127,0.15)')
      .append('span').style('display', 'block').style('height', '100%').style('width', `${(100 * r.p / max).toFixed(1)}%`).style('background', theme.accent);
    li.append('span').attr('class', 'dv-prob-value').style('text-align', 'right').style('font-variant-numeric', 'tabular-nums').text(pct(r.p));
  }
}

/** The head's output: D the record, labels the token labels, run the run. */
export function drawOutput(sel, D, { labels, word, run, s, theme, onAt }) {
  const box = sel.append('section').attr('class', 'dv-output').attr('data-kind', D.kind);
  box.append('h3').attr('class', 'dv-h').style('font-size', '1rem').style('margin', '4px 0').text('What the model outputs');
  if (D.seq) {
    if (D.seq.problem === 'regression') box.append('p').attr('class', 'dv-value').text(`Predicted value: ${num(D.seq.value)}`);
    else {
      bars(box, D.labels.map((name, i) => ({ name, p: D.seq.probs[i], strong: i === D.seq.pred })), theme);
      box.append('p').attr('class', 'dv-pred').style('margin', '4px 0').text(`Predicted label: ${D.labels[D.seq.pred]}${D.seq.problem === 'multi' ? ' (multi-label: each probability is a sigmoid of its own)' : ''}`);
    }
  }
  if (D.token) {
    const pred = tokenLabels(D);
    const strip = box.append('div').attr('class', 'dv-spans').attr('role', 'group').attr('aria-label', 'Tokens with their predicted labels: activate one to explain its label')
      .style('display', 'flex').style('flex-wrap', 'wrap').style('gap', '4px 3px');
    pred.forEach((c, t) => {
      const name = D.labels[c];
      const plain = /^O$/i.test(name);
      const col = plain ? 'transparent' : headColour(c);
      const b = strip.append('button').attr('type', 'button').attr('class', 'dv-span').attr('data-index', t).attr('data-label', name)
        .attr('aria-pressed', D.attr && D.attr.position === t ? 'true' : 'false')
        .attr('aria-label', `${labels[t]}: ${name} (${pct(D.token.probs[t][c])})`)
        .style('font', 'inherit').style('display', 'inline-flex').style('flex-direction', 'column').style('align-items', 'center')
        .style('padding', '2px 6px').style('border-radius', '4px').style('cursor', 'pointer')
        .style('border', D.attr && D.attr.position === t ? `2px solid ${theme.fg}` : `1px solid ${theme.grid}`)
        .style('background', col).style('color', plain ? theme.fg : inkOn(col))
        .on('click', () => onAt(t));
      b.append('span').text(labels[t]);
      b.append('small').attr('class', 'dv-span-label').style('font-size', '0.75em').text(name);
    });
  }
  if (D.qa) {
    const sp = D.qa.span;
    box.append('p').attr('class', 'dv-question').style('margin', '4px 0').text(`Question: ${s.text}`);
    const ctx = box.append('p').attr('class', 'dv-context').style('margin', '4px 0').style('line-height', '1.6');
    const text = s.text_b || '';
    const off = run.offsets;
    if (sp && off && off[sp.start] && off[sp.end]) {
      const from = off[sp.start][0], to = off[sp.end][1];
      ctx.append('span').text(text.slice(0, from));
      ctx.append('mark').attr('class', 'dv-answer').attr('data-start', sp.start).attr('data-end', sp.end)
        .style('background', theme.accent).style('color', '#fff').style('padding', '0 2px').text(text.slice(from, to));
      ctx.append('span').text(text.slice(to));
    } else ctx.text(text);
    box.append('p').attr('class', 'dv-pred').style('margin', '4px 0').text(sp ? `Answer: “${sp.text}” (tokens ${sp.start}–${sp.end}, p = ${pct(sp.prob)})` : 'The model finds no answer span in the context.');
  }
  if (D.mlm) {
    if (!D.mlm.blanks.length) box.append('p').attr('class', 'dv-empty').text(`No blank in the text: type ${D.mlm.mask || 'the mask token'} where the model should guess.`);
    for (const b of D.mlm.blanks) {
      box.append('h4').attr('class', 'dv-blank').style('margin', '6px 0 2px').text(`Position ${b.index}: the model's guesses`);
      bars(box, b.top.map((e, r) => ({ name: word(e.token), p: e.prob, strong: r === 0 })), theme);
    }
    const at = D.attr ? D.attr.position : D.mlm.blanks.length ? D.mlm.blanks[0].index : -1;
    const rows = D.mlm.lens.filter((l) => l.index === at);
    if (rows.length) {
      box.append('h4').attr('class', 'dv-h').style('margin', '8px 0 2px').text(`Layer by layer at position ${at} (logit lens: the head applied to each layer's output)`);
      const table = box.append('table').attr('class', 'dv-lens').style('border-collapse', 'collapse').style('font-variant-numeric', 'tabular-nums');
      const head = table.append('thead').append('tr');
      ['layer', '1st', '2nd', '3rd'].forEach((t) => head.append('th').attr('scope', 'col').style('text-align', 'left').style('padding', '1px 8px 1px 0').text(t));
      const body = table.append('tbody');
      for (const l of rows) {
        const tr = body.append('tr').attr('data-layer', l.layer);
        tr.append('th').attr('scope', 'row').style('text-align', 'left').style('padding-right', '8px').text(l.layer);
        for (const e of l.top.slice(0, 3)) tr.append('td').style('padding', '1px 8px 1px 0').text(`${word(e.token)} ${pct(e.prob)}`);
      }
    }
  }
}

/** The tokens coloured by attribution, its legend and its sums. */
export function drawAttribution(sel, D, { labels, theme, onAt, clickable }) {
  const box = sel.append('section').attr('class', 'dv-attr');
  const a = D.attr;
  box.append('h3').attr('class', 'dv-h').style('font-size', '1rem').style('margin', '10px 0 4px')
    .text(a ? `Which tokens pushed it there: ${METHOD_NAMES[D.method]}${D.method === 'ig' ? ` (${D.steps} steps)` : ''} for “${a.label}”` : 'Which tokens pushed it there');
  if (!a) {
    box.append('p').attr('class', 'dv-attr-none').text(D.attrError ? `No attribution: ${D.attrError}.` : 'No attribution.');
    return;
  }
  const max = scoreMax(a.scores);
  const strip = box.append('div').attr('class', 'dv-tokens').attr('role', 'group').attr('aria-label', 'Tokens coloured by attribution (the table below lists the numbers)')
    .style('display', 'flex').style('flex-wrap', 'wrap').style('gap', '3px 2px');
  a.scores.forEach((v, t) => {
    const col = theme.div(scaleOf(v, max));
    const el = strip.append(clickable ? 'button' : 'span').attr('class', 'dv-tok').attr('data-index', t).attr('data-score', v)
      .attr('aria-label', `${labels[t]}: ${num(v)}`)
      .style('font', 'inherit').style('padding', '2px 5px').style('border-radius', '3px').style('border', t === a.position ? `2px solid ${theme.fg}` : '1px solid transparent')
      .style('background', col).style('color', inkOn(col)).style('cursor', clickable ? 'pointer' : 'default')
      .text(labels[t])
      .on('pointerenter', (ev) => tooltip.show(ev, [`${labels[t]} (position ${t})`, `attribution ${num(v)}`]))
      .on('pointerleave', () => tooltip.hide());
    if (clickable) el.attr('type', 'button').on('click', () => onAt(t));
  });
  const svg = box.append('svg').attr('class', 'dv-legend').attr('width', 430).attr('height', 56).attr('role', 'img').style('max-width', '100%')
    .attr('aria-label', `colour scale: orange pulls away from “${a.label}”, blue pushes towards it, from ${num(-max)} to ${num(max)}`);
  drawLegendBar(svg.append('g').attr('transform', 'translate(10,24)').style('color', theme.fg).style('fill', theme.fg),
    { interp: theme.div, domain: [-max || -1, max || 1], width: 220, title: 'attribution: − away from the target, + towards it', id: 'dv-attr', format: '.2~g' });
  box.append('p').attr('class', 'dv-sums').style('margin', '4px 0').style('font-size', '0.92em')
    .text(`Target logit ${num(a.logit)}, probability ${pct(a.prob)}. Sum of the scores ${num(a.sum)}; logit minus the baseline's (pad tokens): ${num(a.delta)}${D.method === 'ig' ? ' (integrated gradients add up to it, up to the step error)' : ''}.`);
}

/** The head-effects grid: effects [L][H|null], progress {done, L, running}. */
export function drawGrid(sel, { L, H, effects, theme, progress, canRun, onStart, onCancel, onCell, onOpen, onCompareOff, picked, ablating, off }) {
  const box = sel.append('section').attr('class', 'dv-heads');
  box.append('h3').attr('class', 'dv-h').style('font-size', '1rem').style('margin', '12px 0 4px').text('Which heads it leans on');
  box.append('p').style('margin', '2px 0').style('font-size', '0.92em')
    .text(`Each cell: the target's probability with every head minus with that head switched off (${L} × ${H} runs of the model). ${ablating ? 'A click switches the head off or on (“Switch heads off” is on).' : 'A click picks the head: open it in the heatmap, or switch it off in Compare.'}`);
  const bar = box.append('div').attr('class', 'dv-run').style('display', 'flex').style('gap', '8px').style('align-items', 'center').style('flex-wrap', 'wrap');
  if (progress.running) {
    bar.append('progress').attr('class', 'dv-progress').attr('max', L).attr('value', progress.done).attr('aria-label', 'head effects computed');
    bar.append('span').attr('class', 'dv-progress-text').attr('role', 'status').text(`layer ${progress.done} of ${L}`);
    bar.append('button').attr('type', 'button').attr('class', 'dv-cancel').text('Cancel').on('click', onCancel);
  } else {
    const done = effects.every((r) => r);
    bar.append('button').attr('type', 'button').attr('class', 'dv-start').attr('disabled', canRun ? null : true)
      .text(done ? 'Compute again' : 'Compute head effects').on('click', onStart);
    if (progress.note) bar.append('span').attr('class', 'dv-progress-text').attr('role', 'status').text(progress.note);
  }
  if (!effects.some((r) => r)) return;
  const max = Math.max(1e-12, ...effects.flatMap((r) => (r ? r.map(Math.abs) : [])));
  const cell = Math.max(14, Math.min(28, Math.floor(300 / Math.max(H, 1))));
  const grid = box.append('div').attr('class', 'dv-grid').attr('role', 'group').attr('aria-label', 'Head effects, layer by head')
    .style('display', 'grid').style('grid-template-columns', `3em repeat(${H}, ${cell}px)`).style('gap', '1px').style('margin-top', '6px').style('font-size', '11px');
  grid.append('span');
  for (let h = 0; h < H; h++) grid.append('span').style('text-align', 'center').text(h);
  for (let l = 0; l < L; l++) {
    grid.append('span').style('text-align', 'right').style('padding-right', '4px').text(`L${l}`);
    for (let h = 0; h < H; h++) {
      const v = effects[l] ? effects[l][h] : null;
      const col = v === null ? 'transparent' : theme.div(scaleOf(v, max));
      const isOff = off.has(l * H + h);
      const isPicked = !!picked && picked.l === l && picked.h === h;
      grid.append('button').attr('type', 'button').attr('class', 'dv-cell').attr('data-layer', l).attr('data-head', h).attr('data-effect', v)
        .attr('aria-label', `layer ${l}, head ${h}: ${v === null ? 'not computed' : num(v)}${isOff ? ' (switched off)' : ''}`)
        .attr('title', `layer ${l}, head ${h}: ${v === null ? 'not computed' : num(v)}`)
        .style('width', `${cell}px`).style('height', `${cell}px`).style('padding', '0').style('cursor', 'pointer')
        .attr('aria-pressed', isPicked ? 'true' : null)
        .style('border', isOff ? `2px solid ${theme.fg}` : `1px solid ${theme.grid}`).style('background', col)
        .style('outline', isPicked ? `2px solid ${theme.fg}` : null).style('outline-offset', isPicked ? '1px' : null)
        .on('click', () => onCell(l, h));
    }
  }
  if (picked) { // the picked head's two actions
    const { l, h } = picked;
    const v = effects[l] ? effects[l][h] : null;
    const row = box.append('div').attr('class', 'dv-picked').style('display', 'flex').style('gap', '8px').style('align-items', 'center').style('flex-wrap', 'wrap').style('margin-top', '6px');
    row.append('span').attr('role', 'status').text(`Layer ${l}, head ${h}: ${v === null ? 'not computed' : num(v)}${off.has(l * H + h) ? ' (switched off)' : ''}`);
    row.append('button').attr('type', 'button').attr('class', 'dv-open').text('Open in the heatmap').on('click', () => onOpen(l, h));
    row.append('button').attr('type', 'button').attr('class', 'dv-compare-off').text('Switch it off in Compare').on('click', () => onCompareOff(l, h));
  }
  const svg = box.append('svg').attr('class', 'dv-legend').attr('width', 430).attr('height', 56).attr('role', 'img').style('max-width', '100%')
    .attr('aria-label', `colour scale of head effects from ${num(-max)} to ${num(max)}`);
  drawLegendBar(svg.append('g').attr('transform', 'translate(10,24)').style('color', theme.fg).style('fill', theme.fg),
    { interp: theme.div, domain: [-max, max], width: 220, title: 'effect on p(target) (+: the head helps it)', id: 'dv-heads', format: '.2~g' });
}
