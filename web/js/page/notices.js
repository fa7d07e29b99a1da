// notices.js — what the page tells the reader, drawn from the store: keyed
// notices (text only, never HTML; store.notice / clearNotice / noticeList)
// and the page state on <body data-state> (loading, ready, error,
// needs-model; store.setPageState) that the browser tests and embeds wait
// for. The reader's × dismisses a notice (store.clearNotice).

const box = () => document.getElementById('notices');

function show(store, key, { kind, text, detail }) {
  let el = box().querySelector(`[data-key="${CSS.escape(key)}"]`);
  if (!el) {
    el = document.createElement('div');
    el.dataset.key = key;
    const msg = document.createElement('span');
    msg.className = 'msg';
    const close = document.createElement('button');
    close.type = 'button';
    close.setAttribute('aria-label', 'Dismiss');
    close.textContent = '×';
    close.addEventListener('click', () => store.clearNotice(key));
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

/** The notices box and the page state follow the store. */
export function createNotices(store) {
  const follow = () => {
    const now = store.notices();
    for (const el of box().querySelectorAll('.notice[data-key]')) if (!now.has(el.dataset.key)) el.remove();
  };
  store.on('notice', (a) => show(store, a.key, store.notices().get(a.key)));
  store.on('notices', (a, prev) => {
    for (const [key, n] of store.notices()) if (!prev.notices.has(key)) show(store, key, n);
  });
  store.on('clear-notice', follow);
  store.on('page-state', (a) => { document.body.dataset.state = a.state; });
}
