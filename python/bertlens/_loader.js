// bertlens notebook output loader (python/bertlens/_loader.js). Runs inside
// one output's root element: finds the page it draws with (in this output, or
// another output of the same notebook that carried it: the page is shared),
// puts the output's snapshot into it, and shows it in an iframe. The page is
// the built viewer page (dist/viewer.html), gzip + base64. Mirrors the page's
// state onto the root's data-state (loading, ready, error, needs-model) and
// fits the frame to the page (and, on Colab, where each output is a frame of
// its own, that frame to the output: google.colab.output.setIframeHeight).
// Plain ES5-ish script, no imports; all text shown is set with textContent.
(function () {
  var cfg = __CONFIG__;
  var root = document.getElementById(cfg.id);
  if (!root || root.getAttribute('data-started')) return;
  root.setAttribute('data-started', '1');
  var note = root.querySelector('.bertlens-note');
  var frame = root.querySelector('iframe');
  function say(text) { note.textContent = text; note.hidden = !text; }
  function setState(s, text) { root.setAttribute('data-state', s); if (text !== undefined) say(text); fitColab(); }
  function fail(text) { setState('error', 'bertlens: ' + text); }
  var pages = window.__bertlensPages || (window.__bertlensPages = {});
  // Colab's output API, where this output is drawn by Colab (its documented
  // google.colab.output / google.colab.kernel in each output frame).
  var colab = window.google && window.google.colab;
  // Colab shows each output in a frame of its own: fit that frame to this
  // output (the height follows it from then on).
  function fitColab() {
    if (!colab || !colab.output || typeof colab.output.setIframeHeight !== 'function') return;
    try { colab.output.setIframeHeight(document.documentElement.scrollHeight, true, { maxHeight: cfg.maxHeight + 200 }); } catch (e) { /* (an older Colab) */ }
  }

  function decode(b64) {
    var bin = atob(b64.replace(/\s+/g, ''));
    var bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    if (typeof DecompressionStream !== 'function') return Promise.reject(new Error('this browser cannot decompress the page (no DecompressionStream)'));
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
    return new Response(stream).text();
  }
  // The page block: in this output, else in another output of this document
  // (outputs render in order, but a reopened notebook may render this one
  // first): waited for up to cfg.wait ms.
  function pageText() {
    if (pages[cfg.key]) return pages[cfg.key];
    var sel = 'script[data-bertlens-page="' + cfg.key + '"]';
    pages[cfg.key] = new Promise(function (resolve, reject) {
      var t0 = Date.now();
      (function look() {
        // (a block after this script may still be arriving while the document loads)
        var el = root.querySelector(sel) || (document.readyState !== 'loading' ? document.querySelector(sel) : null);
        if (el) { resolve(decode(el.textContent)); return; }
        if (Date.now() - t0 > cfg.wait) {
          delete pages[cfg.key];
          reject(new Error('the page this output draws with is in another output of the notebook, which is not '
            + 'shown here; run this cell again, or call bertlens.configure(assets="inline")'));
          return;
        }
        setTimeout(look, 100);
      })();
    });
    return pages[cfg.key];
  }
  // The page with this output's data blocks first thing in its head (the
  // page reads them at start: page/embed.js). JSON here holds no '<'.
  function withBlocks(html, blocks) {
    var m = /<head(\s[^>]*)?>/i.exec(html);
    if (!m) throw new Error('the page has no <head>');
    var at = m.index + m[0].length;
    var tags = blocks.map(function (b) {
      return '\n<script type="application/json" id="' + b[0] + '">' + b[1].replace(/</g, '\\u003c') + '<\/script>';
    }).join('');
    return html.slice(0, at) + tags + html.slice(at);
  }
  function follow() {
    var doc;
    try { doc = frame.contentDocument; } catch (e) { doc = null; }
    if (!doc || !doc.body) { setState('ready'); return; } // (a frame we cannot look into)
    var body = doc.body;
    var mirror = function () {
      var s = body.getAttribute('data-state') || 'loading';
      root.setAttribute('data-state', s);
      if (s === 'error') {
        var n = doc.getElementById('notices');
        say('bertlens: ' + ((n && n.textContent.trim()) || 'the view could not be drawn'));
      }
    };
    new MutationObserver(mirror).observe(body, { attributes: true, attributeFilter: ['data-state'] });
    mirror();
    if (cfg.fit) {
      // The body's own height (the root element's scrollHeight is never
      // less than the frame's, so the frame could only grow).
      var fit = function () {
        var h = Math.ceil(body.getBoundingClientRect().height + parseFloat(getComputedStyle(body).marginTop || 0)
          + parseFloat(getComputedStyle(body).marginBottom || 0));
        if (h > 0 && Math.abs(h - frame.offsetHeight) > 2) { frame.style.height = Math.min(h, cfg.maxHeight) + 'px'; fitColab(); }
      };
      new ResizeObserver(fit).observe(body);
      fit();
    }
  }
  // ---- a show() output: the model from the kernel, the page's engine on it
  var models = window.__bertlensModels || (window.__bertlensModels = {});
  function fetchFile(live, name) {
    var url = live.base + '/model/' + live.model + '/' + encodeURIComponent(name) + live.query;
    if (!models[url]) {
      models[url] = fetch(url, { credentials: live.credentials }).then(function (r) {
        if (!r.ok) throw new Error('the kernel answered ' + r.status);
        return r.blob();
      });
      models[url].catch(function () { delete models[url]; });
    }
    return models[url];
  }
  // The model's files (a bundle, or a checkpoint folder the page converts),
  // posted when the page asks for them: tens of MB, never written into it.
  function sendFiles(live) {
    window.addEventListener('message', function (e) {
      if (e.source !== frame.contentWindow || !e.data || e.data.type !== 'bertlens:files?') return;
      Promise.all(live.files.map(function (f) { return fetchFile(live, f.name); })).then(function (blobs) {
        frame.contentWindow.postMessage({ type: 'bertlens:files', folder: live.name,
          files: live.files.map(function (f, i) { return { name: f.name, blob: blobs[i] }; }) }, '*');
      }, function (err) { fail('the kernel did not send the checkpoint (' + err.message + '); run the cell again'); });
    });
  }
  // The page's snapshots go back to the kernel, which keeps the latest in the
  // cell's second output (one request at a time, the newest wins).
  function relaySnapshots(live) {
    var busy = false;
    var next = null;
    function send() {
      if (busy || next === null) return;
      var text = next;
      next = null;
      busy = true;
      fetch(live.base + '/snapshot/' + cfg.id + live.query, { method: 'POST', body: text, credentials: live.credentials,
        headers: { 'Content-Type': 'text/plain' } })
        .catch(function () {}).then(function () { busy = false; send(); });
    }
    window.addEventListener('message', function (e) {
      if (e.source !== frame.contentWindow || !e.data || e.data.type !== 'bertlens:snapshot') return;
      if (typeof e.data.text === 'string' && /^[A-Za-z0-9_-]+$/.test(e.data.text)) { next = e.data.text; send(); }
    });
  }
  // The snapshot the cell's second output keeps (it follows this output, so
  // it may not be in the document yet): waited for up to 3 s.
  function keptSnapshot() {
    var sel = 'script.bertlens-snapshot[data-for="' + cfg.id + '"]';
    return new Promise(function (resolve) {
      var t0 = Date.now();
      (function look() {
        var el = document.querySelector(sel);
        if (el) {
          var s = null;
          try { s = JSON.parse(el.textContent).s || null; } catch (e) { s = null; }
          resolve(s);
        } else if (Date.now() - t0 > 3000) resolve(null);
        else setTimeout(look, 50);
      })();
    });
  }
  // Where the output reaches the kernel's server: 127.0.0.1 (the browser on
  // the kernel's machine), or on Colab the URL google.colab.kernel.proxyPort
  // gives for the server's port (Colab's proxy to the runtime; its cookies,
  // if it asks for them, go with the requests), the secret path under it.
  function kernelAt(live) {
    var direct = Object.assign({}, live, { query: '', credentials: 'same-origin' });
    var kernel = live.colab && colab && colab.kernel;
    if (!kernel || typeof kernel.proxyPort !== 'function') return Promise.resolve(direct);
    if (kernel.accessAllowed === false) return Promise.reject(new Error('this notebook is not connected to its runtime'));
    return Promise.resolve(kernel.proxyPort(live.colab.port, { cache: false })).then(function (at) {
      var u = new URL(String(at), location.href);
      var base = u.origin + u.pathname.replace(/\/*$/, '/') + live.colab.path;
      return Object.assign({}, live, { base: base, query: u.search, credentials: 'include' });
    });
  }
  function startLive(live0) {
    var nb = cfg.notebook;
    var live = live0;
    // A page opened from a file (an nbconvert export) has no kernel: the
    // snapshot the notebook kept, drawn by the same page without a model.
    // (a bundle whole; of a checkpoint, its config.json: is the kernel there?)
    var first = live.kind === 'bundle' ? live.files[0].name : 'config.json';
    return pageText().then(function (html) {
      if (location.protocol === 'file:') throw new Error('no kernel');
      return kernelAt(live0).then(function (at) {
        live = at;
        return fetchFile(live, first).catch(function (e) {
          // A proxy that answers CORS itself with '*' refuses a request with
          // cookies: once more without them (and so from then on).
          if (live.credentials !== 'include') throw e;
          live = Object.assign({}, live, { credentials: 'omit' });
          return fetchFile(live, first);
        });
      }).then(function (blob) { return [html, blob]; });
    }).then(function (got) {
      relaySnapshots(live);
      sendFiles(live);
      return withBlocks(got[0], [['bertlens-notebook', JSON.stringify(Object.assign({}, nb, { model: live.kind }))]]);
    }, function (e) {
      if (!pages[cfg.key]) throw e; // (no page: pageText's own error)
      return keptSnapshot().then(function (kept) {
        if (!kept) {
          throw new Error(location.protocol === 'file:' ? 'this output was not drawn while the notebook ran, so it kept no snapshot to show here'
            : live0.colab ? 'the kernel\'s server did not answer through Colab\'s proxy (' + e.message + '): show() needs the runtime '
            + 'that made this output; run the cell again'
            : 'the kernel\'s server on 127.0.0.1 did not answer (' + e.message + '): show() needs the browser on the machine '
            + 'the kernel runs on, and the kernel that made this output; run the cell again');
        }
        return pageText().then(function (html) {
          var opts = { static: true, screen: nb.screen, search: '' };
          return withBlocks(html, [['bertlens-notebook', JSON.stringify(opts)], ['bertlens-snapshot', JSON.stringify({ s: kept })]]);
        });
      });
    });
  }
  function startStatic() {
    var blocks = [['bertlens-notebook', JSON.stringify(cfg.notebook)]];
    var snap = root.querySelector('script.bertlens-snapshot');
    if (snap) blocks.push(['bertlens-snapshot', snap.textContent]);
    return pageText().then(function (html) { return withBlocks(html, blocks); });
  }
  try {
    (cfg.live ? startLive(cfg.live) : startStatic()).then(function (page) {
      frame.addEventListener('load', follow, { once: true });
      frame.srcdoc = page;
      say('');
      fitColab();
    }).catch(function (e) { fail(e.message); });
  } catch (e) {
    fail(e.message);
  }
})();
