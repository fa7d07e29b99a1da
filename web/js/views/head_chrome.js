// head_chrome.js — what the head view (head.js) draws around its lines:
// the page of elements it fills (title, bar, stage, notes, hint), the heads'
// colour key (click a swatch to toggle a head, double-click or Shift+Enter
// to show it alone), the sentence-pair filter, the pruning slider's
// skeleton, the dashed A/B boundary across both token columns, and the
// hints, worded for the input in use (inputKind: touch or mouse).
// st: the chart's shared state (head.js: theme, box, on.heads, on.filter).

import { headColour, tooltip, infoLine } from './common.js';
import { swatchLayout } from './layout.js';
import { pairBoundary } from '../lib/data.js';

const d3 = globalThis.d3;
const FILTER_LABELS = [['all', 'All'], ['aa', 'A→A'], ['ab', 'A→B'], ['ba', 'B→A'], ['bb', 'B→B']];
const LONG_PRESS_MS = 550; // a touch held this long on a swatch shows that head alone

// The pointer the reader used last ('touch', 'pen', 'mouse'), else what the
// screen offers: a coarse pointer is a finger.
let lastPointer = null;
if (typeof window !== 'undefined') {
  window.addEventListener('pointerdown', (ev) => { lastPointer = ev.pointerType || lastPointer; }, { capture: true, passive: true });
}

/** 'touch' or 'mouse': how the reader points, for the hints' words. */
export function inputKind() {
  if (lastPointer) return lastPointer === 'mouse' ? 'mouse' : 'touch';
  const mm = typeof window !== 'undefined' && window.matchMedia;
  return mm && mm('(pointer: coarse)').matches ? 'touch' : 'mouse';
}

const HINTS = {
  touch: 'Tap a token to isolate its lines and see each head\'s share beside the other tokens (tap it again to release); tap a head\'s swatch to toggle it, hold a swatch to show that head alone.',
  mouse: 'Hover a token to isolate its lines and see each head\'s share beside the other tokens; click to freeze, shift-click several to sum them as one span; click a head swatch to toggle it, double-click it (or Shift+Enter) to show it alone. Keyboard: Tab to a column, arrows move, Enter freezes.',
};

export function renderChrome(root) {
  root.classed('bl-headview', true);
  root.selectAll('div.view-title').data([null]).join('div').attr('class', 'view-title');
  const bar = root.selectAll('div.hv-bar').data([null]).join('div').attr('class', 'hv-bar');
  bar.selectAll('svg.hv-swatches').data([null]).join('svg').attr('class', 'hv-swatches');
  bar.selectAll('div.hv-filter').data([null]).join('div').attr('class', 'hv-filter segmented')
    .attr('role', 'group').attr('aria-label', 'Sentence pair filter');
  const prune = bar.selectAll('label.hv-prune').data([null]).join((e) => {
    const l = e.append('label').attr('class', 'hv-prune');
    l.append('span').text('Links carrying ');
    l.append('input').attr('type', 'range').attr('min', 50).attr('max', 100).attr('step', 5)
      .attr('aria-label', 'Share of each row\'s mass the lines drawn carry (percent)').style('width', '90px').style('vertical-align', 'middle');
    l.append('output').style('display', 'inline-block').style('min-width', '2.6em').style('text-align', 'right');
    l.append('span').text(' of each row');
    return l;
  });
  prune.attr('title', 'Draw only the strongest links of each query that together carry this share of its row (100 %: every link above a small floor).');
  infoLine(root);
  const scroller = root.selectAll('div.hv-scroll').data([null]).join('div').attr('class', 'hv-scroll');
  const stage = scroller.selectAll('div.hv-stage').data([null]).join('div').attr('class', 'hv-stage stage');
  stage.selectAll('canvas.hv-lines').data([null]).join('canvas').attr('class', 'hv-lines');
  const svg = stage.selectAll('svg.hv-svg').data([null]).join('svg').attr('class', 'hv-svg');
  svg.selectAll('g.pair').data([null]).join('g').attr('class', 'pair');
  svg.selectAll('g.left').data([null]).join('g').attr('class', 'left');
  svg.selectAll('g.right').data([null]).join('g').attr('class', 'right');
  root.selectAll('p.view-notes').data([null]).join('p').attr('class', 'view-notes');
  root.selectAll('p.view-hint').data([null]).join('p').attr('class', 'view-hint')
    .attr('data-input', inputKind()).text(HINTS[inputKind()]);
}

const pressed = { timer: 0, long: false }; // a touch held on a swatch

export function swatches(root, data, sel, st) {
  const { H } = data;
  const { sw, W, H: h } = swatchLayout({ H, width: st.box.width });
  root.select('svg.hv-swatches').attr('width', W).attr('height', h)
    .attr('role', 'group').attr('aria-label', 'Heads (colour key)')
    .selectAll('g.swatch').data(d3.range(H)).join((enter) => {
      const g = enter.append('g').attr('class', 'swatch');
      g.append('rect');
      g.append('text');
      return g;
    })
    .attr('transform', (hd) => `translate(${hd * (sw + 4) + 2},2)`)
    .attr('data-head', (hd) => hd)
    .attr('role', 'button')
    .attr('tabindex', 0)
    .attr('aria-label', (hd) => `head ${hd}`)
    .attr('aria-keyshortcuts', 'Shift+Enter')
    .attr('aria-pressed', (hd) => String(sel.has(hd)))
    .on('keydown', (ev, hd) => {
      // Enter toggles, Shift+Enter (or Space with Shift) shows only this head.
      if (ev.key !== 'Enter' && ev.key !== ' ') return;
      ev.preventDefault();
      if (ev.shiftKey) { st.on.heads([hd]); return; }
      toggleHead(st, sel, hd);
    })
    .on('click', (ev, hd) => {
      if (pressed.long) { pressed.long = false; return; } // the end of a long press
      toggleHead(st, sel, hd);
    })
    .on('dblclick', (ev, hd) => { if (ev.sourceCapabilities && ev.sourceCapabilities.firesTouchEvents) return; st.on.heads([hd]); })
    // Touch: a long press shows only this head (a double tap would toggle twice).
    .on('pointerdown', (ev, hd) => {
      clearTimeout(pressed.timer);
      pressed.long = false;
      if (ev.pointerType === 'mouse') return;
      pressed.timer = setTimeout(() => { pressed.long = true; st.on.heads([hd]); }, LONG_PRESS_MS);
    })
    .on('pointerup pointercancel pointerleave', () => clearTimeout(pressed.timer))
    .on('contextmenu', (ev) => { if (inputKind() === 'touch') ev.preventDefault(); }) // a held finger opens no menu
    .on('mouseenter', (ev, hd) => tooltip.show(ev, [`head ${hd}${sel.has(hd) ? ' (shown)' : ' (hidden)'}`,
      inputKind() === 'touch' ? 'tap: toggle · hold: only this head' : 'click: toggle · double-click or Shift+Enter: only this head']))
    .on('mouseleave', () => tooltip.hide())
    .call((g) => g.select('rect').attr('width', sw).attr('height', sw).attr('rx', 4)
      .attr('fill', (hd) => headColour(hd)).attr('fill-opacity', (hd) => (sel.has(hd) ? 1 : 0.15))
      .attr('stroke', (hd) => headColour(hd)).attr('stroke-width', 1.5)
      .attr('stroke-dasharray', (hd) => (hd >= 12 ? '3 2' : null)))
    .call((g) => g.select('text').attr('x', sw / 2).attr('y', sw + 11).attr('text-anchor', 'middle')
      .attr('font-size', 10).attr('fill', st.theme.fg).text((hd) => hd));
}

function toggleHead(st, sel, h) {
  const next = new Set(sel);
  if (next.has(h)) next.delete(h); else next.add(h);
  st.on.heads([...next].sort((a, b) => a - b));
}

export function pairFilter(root, data, st) {
  // Only meaningful with two texts.
  root.select('div.hv-filter').style('display', data.hasPair ? null : 'none')
    .selectAll('button').data(FILTER_LABELS).join('button')
    .attr('type', 'button')
    .attr('data-filter', (d) => d[0])
    .attr('aria-pressed', (d) => String(d[0] === data.filter))
    .text((d) => d[1])
    .on('click', (ev, d) => st.on.filter(d[0]));
}

/** Dashed line before the first B token, across both token columns. */
export function boundary(svg, data, g, st) {
  const b = data.hasPair ? pairBoundary(data.segs) : -1;
  const y = g.top + b * g.rowH;
  svg.select('g.pair').attr('data-boundary', b)
    .selectAll('line.pair-boundary').data(b > 0 ? [[0, g.xL], [g.xR, g.xR + g.labelW + 4]] : []).join('line')
    .attr('class', 'pair-boundary').attr('x1', (d) => d[0]).attr('x2', (d) => d[1]).attr('y1', y).attr('y2', y)
    .attr('stroke', st.theme.fg).attr('stroke-width', 1.5).attr('stroke-dasharray', '4 3');
}
