// neuron_rows.js — the neuron view's key rows (neuron.js): per key its
// label, each term of its score and their sum (numberColumns below; a
// masked key says so), the softmax bar and value (and ‖α f(x)‖), written
// where they changed, those in the window first and the rest in later
// frames; and what hovering or tapping a row (or a vector cell) tells.
//
// keyRows(st): st is the chart's shared state (neuron.js: theme, picked —
// the key token tapped last). Returns {rows(svg, data, g, top), settle(),
// wireRows(root, svg, data, g)}.

import { tooltip, fmt, clip, infoLine, setAll } from './common.js';
import { softmaxBar } from '../lib/data.js';

const d3 = globalThis.d3;

/** The number columns before the softmax: each term of the score, then
 *  their sum when there are several ({name, abbr, values[R], sum}). */
export function numberColumns(data) {
  const cols = data.terms.map((t) => ({ name: t.name, abbr: t.abbr, values: t.values, sum: false }));
  if (cols.length > 1) cols.push({ name: `score (${data.terms.map((t) => t.abbr).join(' + ')})`, abbr: 'score', values: data.score, sum: true });
  return cols;
}

/** A score or term as shown: 2 decimals in the view, 3 in the table;
 *  a masked key says so. */
export const scoreText = (v, digits = 3) => (Number.isNaN(v) ? 'masked' : v.toFixed(digits));

const NORM_COLOUR = '#8f5bd6';

// Key rows written in the redraw itself: all of them up to SYNC_ROWS, else
// those in the window (and a quarter of a window around it); the others
// ROWS_PER_FRAME a frame, from the second frame after it (the first lays out
// the rows in the window). Chromium lays out ~0.065 ms per changed SVG text
// (measured at 512 keys): 3 numbers x 512 rows were ~100 ms in one frame.
const SYNC_ROWS = 128;
const ROWS_PER_FRAME = 48;

export function keyRows(st) {
  let later = null; // {frame, rest, write}: key rows still to write after the redraw

  /** The key rows (SVG: label, the score's terms and sum, softmax bar and value, ‖α f(x)‖):
   *  one group per key, kept while the key is shown, its attributes
   *  written only where they changed (setAll). A head or layer switch at
   *  512 keys then rewrites the numbers and bars, not 3,000 elements. */
  function rows(svg, data, g, top) {
    const { rowH } = g;
    const full = g.softW - 6;
    const nmax = data.norms ? d3.max(data.norms) || 1 : 1;
    const normBar = Math.max(20, Math.min(64, g.normW - 44));
    const barY = rowH > 6 ? 2 : 0;
    const barH = Math.max(1, rowH - (rowH > 6 ? 4 : 1));
    const cols = numberColumns(data);
    const nodes = svg.select('g.rows').selectAll('g.nv-row').data(data.rows, (j) => j)
      .join((enter) => {
        const e = enter.append('g').attr('class', 'nv-row');
        e.append('text').attr('class', 'key-label').attr('dy', '0.35em').attr('text-anchor', 'end');
        e.append('rect').attr('class', 'soft-bar').attr('rx', 2);
        e.append('text').attr('class', 'soft').attr('dy', '0.35em');
        return e;
      })
      .nodes();
    const write = (r) => {
      const row = nodes[r];
      const j = data.rows[r];
      const [label, bar, soft] = row.children;
      const yv = g.y.rows + r * rowH + rowH / 2;
      const yn = g.y.numbers + r * rowH + rowH / 2;
      const labelText = r % g.step === 0 ? clip(data.labels[r], g.chars) : '';
      const weight = j === data.query ? 700 : 400;
      // what the row shows, unrounded (the softmax column is the attention row)
      setAll(row, { 'data-key': j, 'data-softmax': data.weights[r], 'data-score': data.score[r] });
      setAll(label, { x: g.labelW, y: yv, fill: st.theme.fg, 'font-weight': weight, '#text': labelText });
      numberCells(row, g.compact ? 0 : cols.length).forEach((el, c) => { // (the compact form has no number columns)
        const v = cols[c].values[r];
        setAll(el, {
          class: cols[c].sum ? 'score' : 'term', 'data-col': c, x: g.x.nums[c] + g.num - 8, y: yn, dy: '0.35em', 'text-anchor': 'end',
          fill: Number.isNaN(v) ? st.theme.muted : st.theme.fg, '#text': g.numbers ? scoreText(v, 2) : '',
        });
      });
      setAll(bar, {
        x: g.x.soft, y: yn - rowH / 2 + barY, height: barH,
        width: Math.max(0.5, softmaxBar(data.weights[r], full)), fill: st.theme.accent,
      });
      setAll(soft, { x: g.x.soft + full + 4, y: yn, fill: st.theme.fg, '#text': g.numbers ? fmt(data.weights[r]) : '' });
      // Stacked layout: the numbers band has its own key labels.
      const label2 = optional(row, 'text', 'key-label2', g.stacked);
      if (label2) setAll(label2, { x: g.labelW, y: yn, dy: '0.35em', 'text-anchor': 'end', fill: st.theme.fg, 'font-weight': weight, '#text': labelText });
      const norm = data.norms ? data.norms[r] : null;
      const nb = optional(row, 'rect', 'norm-bar', norm !== null);
      const nt = optional(row, 'text', 'norm', norm !== null);
      if (nb) setAll(nb, { x: g.x.norm, y: yn - rowH / 2 + barY, height: barH, rx: 2, width: Math.max(0.5, (normBar * norm) / nmax), fill: NORM_COLOUR });
      if (nt) setAll(nt, { x: g.x.norm + normBar + 4, y: yn, dy: '0.35em', fill: st.theme.fg, '#text': g.numbers ? fmt(norm) : '' });
    };
    // The rows in the window now, in either band; the others in later
    // frames, the nearest below first.
    if (later) cancelAnimationFrame(later.frame);
    later = null;
    const R = nodes.length;
    const now = new Uint8Array(R);
    if (R <= SYNC_ROWS) now.fill(1);
    else {
      const h = globalThis.innerHeight || 800;
      for (const y0 of g.stacked ? [g.y.rows, g.y.numbers] : [g.y.rows]) {
        const from = Math.max(0, Math.floor((-h / 4 - top - y0) / rowH));
        const to = Math.min(R, Math.ceil((1.25 * h - top - y0) / rowH));
        now.fill(1, Math.min(from, R), Math.max(from, to));
      }
    }
    const rest = [];
    let first = now.indexOf(1);
    if (first < 0) first = 0;
    for (let r = 0; r < R; r++) if (now[r]) write(r);
    for (let r = first; r < R; r++) if (!now[r]) rest.push(r);
    for (let r = 0; r < first; r++) rest.push(r);
    if (rest.length) {
      later = { rest, write, frame: 0 };
      const step = () => {
        const batch = later.rest.splice(0, ROWS_PER_FRAME);
        batch.forEach(later.write);
        if (later.rest.length) later.frame = requestAnimationFrame(step);
        else later = null;
      };
      later.frame = requestAnimationFrame(() => { if (later) later.frame = requestAnimationFrame(step); });
    }
  }

  /** Write every key row still waiting for a frame (before an export). */
  function settle() {
    if (!later) return;
    cancelAnimationFrame(later.frame);
    later.rest.forEach(later.write);
    later = null;
  }

  /** A row's n number texts (none in the compact form: no x.nums), made or
   *  removed to match (a model with another number of terms). */
  function numberCells(row, n) {
    const cells = row.blNums || (row.blNums = []);
    while (cells.length > n) cells.pop().remove();
    while (cells.length < n) {
      const el = document.createElementNS('http://www.w3.org/2000/svg', 'text');
      row.appendChild(el);
      cells.push(el);
    }
    return cells;
  }

  /** A row's child of class cls, made when `want` and missing, removed when
   *  not wanted (null then). */
  function optional(row, tag, cls, want) {
    const made = row.blOptional || (row.blOptional = {});
    let el = made[cls] || null;
    if (want && !el) {
      el = made[cls] = document.createElementNS('http://www.w3.org/2000/svg', tag);
      el.setAttribute('class', cls);
      row.appendChild(el);
    } else if (!want && el) {
      el.remove();
      el = made[cls] = null;
    }
    return el;
  }

  function describeRow(data, rd) {
    const parts = [`${data.queryLabel} → ${rd.label}`];
    if (Number.isNaN(rd.score)) parts.push(`masked: more than ${data.window} tokens from the query, outside this layer's window`);
    else parts.push(...numberColumns(data).map((c) => `${c.sum ? 'score' : c.name} = ${scoreText(c.values[rd.r])}`));
    parts.push(`softmax = ${rd.w.toFixed(3)}`);
    if (rd.norm !== null && rd.norm !== undefined) parts.push(`‖α f(x)‖ = ${rd.norm.toFixed(3)}`);
    return parts;
  }

  function wireRows(root, svg, data, g) {
    const info = infoLine(root);
    const R = data.rows.length;
    const rowOf = (r) => ({
      r, j: data.rows[r], label: data.labels[r], score: data.score[r],
      w: data.weights[r], norm: data.norms ? data.norms[r] : null,
    });
    const at = (ev) => {
      const [px, py] = d3.pointer(ev, svg.node());
      let band = 'rows';
      let r = Math.floor((py - g.y.rows) / g.rowH);
      if (g.stacked && py >= g.y.numbers) { band = 'numbers'; r = Math.floor((py - g.y.numbers) / g.rowH); }
      return r >= 0 && r < R ? { r, px, band } : null;
    };
    const linesFor = (hit) => {
      const rd = rowOf(hit.r);
      const lines = describeRow(data, rd);
      if (hit.band === 'rows') {
        for (const [name, x0, arr] of [['k', g.x.k, data.cols.keys[rd.j]], ['q×k', g.x.p, data.cols.products[rd.j]]]) {
          const c = Math.floor((hit.px - x0) / g.cw);
          if (c >= 0 && c < data.d) lines.push(`${name}[${c}] = ${arr[c].toFixed(4)}  (q[${c}] = ${data.cols.q[c].toFixed(4)})`);
        }
      }
      return lines;
    };
    if (st.picked !== null) {
      const r = data.rows.indexOf(st.picked);
      info.set(describeRow(data, rowOf(r)).join(' · '));
    } else info.set(`Query ${data.query} (${data.queryLabel}): tap or hover a key row for its numbers.`);
    const bottom = g.stacked ? g.y.numbers + R * g.rowH : g.y.rows + R * g.rowH;
    svg.select('g.hit').selectAll('rect').data([null]).join('rect')
      .attr('x', 0).attr('y', g.y.rows).attr('width', g.W).attr('height', bottom - g.y.rows).attr('fill', 'transparent')
      .on('pointermove', (ev) => {
        if (ev.pointerType !== 'mouse') return;
        const hit = at(ev);
        if (hit) tooltip.show(ev, linesFor(hit));
      })
      .on('pointerleave', () => tooltip.hide())
      .on('click', (ev) => {
        const hit = at(ev);
        if (!hit) return;
        st.picked = data.rows[hit.r];
        info.set(describeRow(data, rowOf(hit.r)).join(' · '));
        tooltip.show(ev, linesFor(hit));
      });
  }

  return { rows, settle, wireRows };
}
