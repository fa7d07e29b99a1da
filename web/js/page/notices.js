// notices.js — what the page tells the reader: keyed notices (text only,
// never HTML) and the page state on <body data-state> (loading, ready,
// error, needs-model) that the browser tests and embeds wait for.

const box = () => document.getElementById('notices');

export function notice(key, kind, text, detail = '') {
  let el = box().querySelector(`[data-key="${key}"]`);
  if (!el) {
    el = document.createElement('div');
    el.dataset.key = key;
    const msg = document.createElement('span');
    msg.className = 'msg';
    const close = document.createElement('button');
    close.type = 'button';
    close.setAttribute('aria-label', 'Dismiss');
    close.textContent = '×';
    close.addEventListener('click', () => el.remove());
    el.append(msg, close);
    box().append(el);
  }
  el.className = `notice ${kind}`;
  const msg = el.querySelector('.msg');
  msg.textContent = text;
  if (detail) { // the browser's own words, in small print
    const small = document.createElement('small');
    small.className = 'detail';
    small.textContent = detail;
    msg.append(document.createElement('br'), small);
  }
}

export function clearNotice(key) {
  const el = box().querySelector(`[data-key="${key}"]`);
  if (el) el.remove();
}

let noticeCount = 0;
/** Notices without a key of their own (each stays until dismissed). */
export function notices(list, kind = 'warn') {
  for (const text of list) notice(`n${noticeCount++}`, kind, text);
}

// A draw that will make the page 'ready' when it has drawn is under way
// (page/draw.js). A plain redraw (resize) that replaces it before it has
// drawn — sliced drawings span several tasks, a head view at 512 tokens
// ~0.1 s — cancels it, so the redraw must make the page ready in its place,
// or the page would stay 'loading'.
export const readyOwed = { value: false };

export function setPageState(s) {
  readyOwed.value = false; // whatever set the state now, no earlier draw owes 'ready' any more
  document.body.dataset.state = s;
}

export function fail(key, message, detail = '') {
  notice(key, 'error', message, detail);
  setPageState('error');
}
