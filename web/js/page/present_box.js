// present_box.js — presentation mode's arithmetic (page/present.js is the
// controller): the label scale, the box a presented view lays itself out
// in, the arrow keys' steps and their hint. No store; only presentViewBox
// reads the window.

/** Label scale of the presentation for a window of w x h CSS px: 1 on a
 *  small screen, up to 1.6 on a large one (about 1.28 at 1280 x 720). The
 *  view lays itself out for the box divided by this factor, so what fits
 *  the box still fits the window once scaled. */
export function presentScale(w, h) {
  return Math.round(100 * Math.max(1, Math.min(1.6, w / 1000, h / 560))) / 100;
}

/** The box (CSS px, before scaling) a presented view may use: the window
 *  below the bar, less the view's padding, divided by the scale. */
export function presentBox({ winW, winH, barBottom, padX, padY, scale }) {
  return {
    width: Math.max(200, Math.floor(winW / scale - padX)),
    height: Math.max(160, Math.floor((winH - barBottom) / scale - padY - 2)),
  };
}

/** What the arrow keys do in view v (its descriptor): [left/right, up/down,
 *  shift+left/right] as words, for the bar's hint. */
export function keyHint(v) {
  const c = v.controls;
  const parts = [];
  if (v.query) parts.push('← → token');
  else if (c.head) parts.push('← → head');
  if (c.layer) parts.push('↑ ↓ layer');
  if (v.query && c.head) parts.push('Shift+← → head');
  parts.push('Esc leaves');
  return parts.join(' · ');
}

/** The store patch an arrow key asks for in presentation mode, or null.
 *  s: the state; v: the view's descriptor; L, H: the model's layers and
 *  heads; members: the raw tokens of each shown token (draw.js axisOf),
 *  for views with a query token. Steps stop at the ends (no wrap). */
export function stepPatch(key, { shift = false } = {}, s, v, { L, H, members = null }) {
  const c = v.controls;
  const dir = key === 'ArrowLeft' || key === 'ArrowUp' ? -1 : key === 'ArrowRight' || key === 'ArrowDown' ? 1 : 0;
  if (!dir) return null;
  const horizontal = key === 'ArrowLeft' || key === 'ArrowRight';
  if (!horizontal) {
    if (!c.layer) return null;
    const layer = Math.max(0, Math.min(L - 1, s.layer + dir));
    return layer === s.layer ? null : { layer };
  }
  if (v.query && !shift) {
    if (!members || !members.length) return null;
    const at = members.findIndex((m) => m.includes(s.query));
    const i = Math.max(0, Math.min(members.length - 1, (at < 0 ? 0 : at) + dir));
    const query = members[i][0];
    return query === s.query ? null : { query };
  }
  if (!c.head) return null;
  const order = [...Array(H).keys(), ...(c.mean ? ['mean'] : [])];
  const at = Math.max(0, order.indexOf(s.head));
  const head = order[Math.max(0, Math.min(order.length - 1, at + dir))];
  return head === s.head ? null : { head };
}

/** The box the presented view lays itself out in (draw.js), the label
 *  scale set on the page as a side effect. */
export function presentViewBox(viewEl) {
  const scale = presentScale(window.innerWidth, window.innerHeight);
  document.body.style.setProperty('--present-scale', String(scale));
  const cs = getComputedStyle(viewEl);
  const bar = document.querySelector('nav.controls').getBoundingClientRect();
  return presentBox({
    winW: document.documentElement.clientWidth,
    winH: window.innerHeight,
    barBottom: Math.max(0, bar.bottom),
    padX: parseFloat(cs.paddingLeft) + parseFloat(cs.paddingRight),
    padY: parseFloat(cs.paddingTop) + parseFloat(cs.paddingBottom),
    scale,
  });
}
