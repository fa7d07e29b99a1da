// file_notice.js — a classic script, so it runs where the page's modules
// cannot: opened from a file:// URL, dist/index.html cannot load its modules,
// the model list or the engine (browsers refuse them to file pages). Instead
// of a dead page it says what to do. The one-file page (bertlens.html) has
// no such limit and leaves this script out.
(function () {
  'use strict';
  if (location.protocol !== 'file:') return;
  function show() {
    var box = document.getElementById('notices');
    if (!box) return;
    var el = document.createElement('div');
    el.className = 'notice error';
    el.dataset.key = 'file';
    var msg = document.createElement('span');
    msg.className = 'msg';
    msg.append('This page was opened as a file, and browsers do not let a page opened that way load the model. '
      + 'Open ');
    var a = document.createElement('a');
    a.href = 'bertlens.html' + location.search;
    a.textContent = 'bertlens.html';
    msg.append(a, ' instead (in the same folder; it works from a file, even offline), '
      + 'or run “make serve” in the bertlens folder and open http://127.0.0.1:8000/.');
    el.append(msg);
    box.append(el);
    // The controls could do nothing here: hide them.
    var dead = document.querySelectorAll('.model-pick, .inputs, .controls, #mode-help, .actions');
    for (var i = 0; i < dead.length; i++) dead[i].style.display = 'none';
    document.body.dataset.state = 'error';
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', show);
  else show();
}());
