// head_tokens.js — the head view's token columns (head.js): queries left,
// keys right, one row per token, and what a reader does with them. Hover (or
// keyboard focus) isolates a token's lines, a click freezes them, shift-click
// adds the token to the span; each column is one tab stop, arrow keys move
// (Left/Right: to the other column), Enter or Space freeze, Escape unfreezes.
//
// headTokens(st, redraw): st is the chart's shared state (head.js: focus,
// frozen, kbd, cur, theme, on.span); redraw(sc) restyles both columns and
// repaints the lines. Returns {column(sc, side), tokenState(sc, side)}.

import { tooltip, clip, setAll } from './common.js';
import { inputKind } from './head_chrome.js';

/** Was this focus given by the keyboard? (A click or a tap focuses the row
 *  too, but then the keyboard's hints would only cover the neighbours.) */
function byKeyboard(node) {
  try { return node.matches(':focus-visible'); } catch { return true; }
}

export function headTokens(st, redraw) {
  const sideName = (side) => (side === 'left' ? 'query' : 'key');
  const isFrozen = (side, i) => st.frozen && st.focus && st.focus.side === side && st.focus.index === i;

  /** Strongest shown weight between the focused token and token idx (0..1). */
  function weightFor(sc, side, idx) {
    if (!st.focus || st.focus.side === side) return 0;
    const { K, mats, vmax } = sc.data;
    let w = 0;
    for (const h of sc.sel) {
      const v = st.focus.side === 'left' ? mats[h][st.focus.index * K + idx] : mats[h][idx * K + st.focus.index];
      if (v > w) w = v;
    }
    return w / vmax;
  }

  function toggleFreeze(sc, side, i) {
    if (isFrozen(side, i)) st.frozen = false;
    else { st.focus = { side, index: i }; st.frozen = true; }
    redraw(sc);
  }

  /** The tokenizer's own pieces of row i, when its label spells them otherwise ("Ġthe"). */
  const pieces = (sc, i) => (sc.data.raw && sc.data.raw[i] !== sc.data.labels[i] ? [`pieces: ${sc.data.raw[i]}`] : []);

  function showTip(sc, node, side, d) {
    const r = node.getBoundingClientRect();
    tooltip.show({ clientX: side === 'left' ? r.left : r.right, clientY: r.bottom }, [
      `${sideName(side)} ${d.i}: ${d.l}`, ...pieces(sc, d.i),
      isFrozen(side, d.i) ? 'Enter: unfreeze' : 'Enter: freeze this token · arrows: move',
    ], node);
    sc.info.set(`${sideName(side)} ${d.i}: ${d.l}${isFrozen(side, d.i) ? ' (frozen)' : ''}`);
  }

  /** Keyboard on a token: arrows move (Left/Right: other column), Enter or
   *  Space freeze, Escape unfreezes. */
  function tokenKey(sc, side, node, ev, d) {
    const K = sc.data.K;
    if (ev.key === 'Enter' || ev.key === ' ') {
      ev.preventDefault();
      toggleFreeze(sc, side, d.i);
      showTip(sc, node, side, d);
      return;
    }
    if (ev.key === 'Escape') { if (st.frozen) { st.frozen = false; redraw(sc); } return; }
    const moves = { ArrowDown: Math.min(K - 1, d.i + 1), ArrowUp: Math.max(0, d.i - 1), Home: 0, End: K - 1 };
    let to = moves[ev.key];
    let toSide = side;
    if (ev.key === 'ArrowLeft' || ev.key === 'ArrowRight') { toSide = ev.key === 'ArrowLeft' ? 'left' : 'right'; to = d.i; }
    if (to === undefined) return;
    ev.preventDefault();
    st.kbd[toSide] = to;
    tokenState(sc, toSide);
    const next = sc.svg.select(`g.${toSide}`).selectAll('g.tok').filter((t) => t.i === to).node();
    if (next && next !== node) next.focus();
  }

  /** One token column (queries left, keys right): rows joined once per
   *  drawing, their events bound once per row (they read the current
   *  scene, cur), then their state (tokenState). */
  function column(sc, side) {
    const { data, lay, svg } = sc;
    const anchor = side === 'left' ? 'end' : 'start';
    const g = svg.select(`g.${side}`);
    setAll(g.node(), { transform: `translate(${side === 'left' ? lay.xL - 4 : lay.xR + 4},${lay.top})` });
    g.selectAll('g.tok').data(data.labels.map((l, i) => ({ l, i })), (d) => d.i)
      .join((enter) => {
        const r = enter.append('g').attr('class', 'tok').attr('role', 'button');
        r.append('rect');
        r.append('text').attr('class', 'token-label');
        tokenEvents(r, side);
        return r;
      })
      .each(function (d) {
        setAll(this, { transform: `translate(0,${d.i * lay.rowH})`, 'aria-label': `${sideName(side)} ${d.i}: ${d.l}` });
        setAll(this.firstChild, {
          x: anchor === 'end' ? -lay.labelW : 0, y: 1, width: lay.labelW, height: Math.max(1, lay.rowH - 2), rx: 3,
        });
        setAll(this.lastChild, {
          x: anchor === 'end' ? -4 : 4, y: lay.rowH / 2, dy: '0.35em', 'text-anchor': anchor, 'font-size': lay.font,
          fill: st.theme.fg, '#text': d.i % lay.step === 0 ? clip(d.l, lay.chars) : '',
        });
      });
    tokenState(sc, side);
  }

  /** What hover, focus and freezing change in a column: tab stop, pressed
   *  state, the weight tint, the frozen outline, the bold focused label. */
  function tokenState(sc, side) {
    const K = sc.data.K;
    const stop = Math.min(st.kbd[side], K - 1);
    sc.svg.select(`g.${side}`).selectAll('g.tok').each(function (d) {
      const fr = isFrozen(side, d.i);
      setAll(this, { tabindex: d.i === stop ? 0 : -1, 'aria-pressed': String(fr) });
      setAll(this.firstChild, {
        fill: sc.tint, 'fill-opacity': 0.85 * Math.min(1, weightFor(sc, side, d.i)),
        stroke: fr ? st.theme.fg : 'none', 'stroke-dasharray': fr ? '3 2' : null,
      });
      setAll(this.lastChild, { 'font-weight': st.focus && st.focus.side === side && st.focus.index === d.i ? 700 : 400 });
    });
  }

  /** A row's events, bound once when it is created; they act on the scene
   *  drawn last (cur). */
  function tokenEvents(rows, side) {
    rows
      .on('focus', function (ev, d) {
        st.kbd[side] = d.i;
        if (!st.frozen) { st.focus = { side, index: d.i }; redraw(st.cur); } else tokenState(st.cur, side);
        if (byKeyboard(this)) showTip(st.cur, this, side, d);
      })
      .on('blur', (ev) => {
        tooltip.hide();
        const next = ev.relatedTarget;
        const stays = next && next.closest && next.closest('g.tok') && st.cur.stage.node().contains(next);
        if (!st.frozen && !stays) { st.focus = null; redraw(st.cur); }
      })
      .on('keydown', function (ev, d) { tokenKey(st.cur, side, this, ev, d); })
      .on('mouseenter', (ev, d) => {
        if (!st.frozen) { st.focus = { side, index: d.i }; redraw(st.cur); }
        // A finger has no hover: the tap that follows freezes, and the info
        // line says so; a tooltip would only cover the neighbours.
        if (inputKind() === 'touch') return;
        tooltip.show(ev, [`${sideName(side)} ${d.i}: ${d.l}`, ...pieces(st.cur, d.i), st.frozen ? 'click: unfreeze' : 'click: freeze this token']);
      })
      .on('mouseleave', () => {
        tooltip.hide();
        if (!st.frozen) { st.focus = null; redraw(st.cur); }
      })
      .on('click', (ev, d) => {
        if (ev.shiftKey) { st.on.span(d.i); return; } // shift-click: add to / remove from the span
        toggleFreeze(st.cur, side, d.i);
        st.cur.info.set(`${sideName(side)} ${d.i}: ${d.l}${isFrozen(side, d.i) ? ' (frozen: only its lines are drawn)' : ''}`);
      });
  }

  return { column, tokenState };
}
