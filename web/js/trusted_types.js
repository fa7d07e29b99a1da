// trusted_types.js — the one Trusted Types policy of bertlens, a classic
// script. The Content-Security-Policy (netlify.toml, and the <meta> that
// tools/build_site.mjs writes into every page) says
// require-trusted-types-for 'script'; trusted-types default: a browser that
// supports it then refuses every string handed to an HTML or script sink
// (innerHTML, eval, script.src, new Worker(url), importScripts(url)…) unless
// this policy turns it into a trusted value. The code never writes HTML or
// script text, so the policy makes only script URLs, and only the site's
// own (same origin, or a blob: this origin made — the one-file page's
// engine worker): the model worker, the service worker, the Emscripten
// glue and its pthread workers. Anything else is refused.
//
// Loaded first by the page (index.html) and appended by build_site to every
// worker script (worker.js, bertlens-mt.worker.js), whose policy is their
// own: workers started from a URL get the CSP header of their response,
// blob: workers the page's.
(function () {
  'use strict';
  var tt = self.trustedTypes;
  if (!tt || typeof tt.createPolicy !== 'function' || tt.defaultPolicy) return;
  tt.createPolicy('default', {
    createScriptURL: function (url) {
      var u = new URL(url, self.location.href);
      // blob: URLs are made by this page (a browser loads only its own as
      // a worker script); a file:// page's own origin is opaque.
      if (u.protocol === 'blob:' || u.origin === self.location.origin) return url;
      throw new TypeError('bertlens loads scripts only from its own site, not from ' + u.origin);
    },
  });
}());
