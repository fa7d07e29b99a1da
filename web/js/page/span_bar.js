// span_bar.js — the page's token-span control (index.html #span-ctl), for
// readers with no shift key (phones, tablets): a "Select span" toggle and a
// "Clear span" button. While the toggle is pressed, a click or tap on a token
// of a view that has spans (its descriptor's controls.span: heatmap row and
// column labels and cells, head-view tokens) counts as a shift-click, so the
// token joins or leaves the span, and the view's own click (open the neuron
// view, freeze a token) does not happen. Clicks on anything else in the view
// are left alone. Text only.
//
//   const bar = spanBar(document.getElementById('span-ctl'), document.getElementById('view'), { update });
//   bar.render({ state, canSpan });   // after every draw
//   bar.on                            // the toggle's state

/** What a token is in the views that have spans: where a tap in span mode
 *  becomes a shift-click. */
const TOKEN_TARGETS = 'text.row-label, text.col-label, rect.hm-hit, g.tok, g.tok *';

export function spanBar(el, viewEl, { update }) {
  const make = (tag, cls, text) => {
    const n = document.createElement(tag);
    n.className = cls;
    n.type = 'button';
    n.textContent = text;
    el.append(n);
    return n;
  };
  const toggle = make('button', 'span-toggle', 'Select span');
  toggle.setAttribute('aria-pressed', 'false');
  toggle.title = 'While pressed, a click or tap on a token adds it to the span or takes it out (the same as shift-click)';
  const clear = make('button', 'span-clear', 'Clear span');
  const bar = { on: false, last: null };
  const setOn = (on) => {
    bar.on = on;
    toggle.setAttribute('aria-pressed', String(on));
    document.body.classList.toggle('spanning', on);
  };
  toggle.addEventListener('click', () => setOn(!bar.on));
  clear.addEventListener('click', () => update({ span: null }));

  // Capture phase on the view: the tap is turned into a shift-click on the
  // same element before the view's own listeners see it.
  viewEl.addEventListener('click', (ev) => {
    if (!bar.on || ev.shiftKey || !ev.isTrusted || !(ev.target instanceof Element) || !ev.target.closest(TOKEN_TARGETS)) return;
    ev.stopPropagation();
    ev.preventDefault();
    ev.target.dispatchEvent(new MouseEvent('click', {
      bubbles: true, cancelable: true, composed: true, view: window, detail: ev.detail,
      clientX: ev.clientX, clientY: ev.clientY, screenX: ev.screenX, screenY: ev.screenY, button: ev.button, shiftKey: true,
    }));
  }, true);

  bar.render = ({ state, canSpan }) => {
    bar.last = { state, canSpan };
    el.hidden = !canSpan || state.embed;
    if (el.hidden && bar.on) setOn(false);
    clear.hidden = !(state.span && state.span.length);
  };
  return bar;
}
