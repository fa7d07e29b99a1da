#!/usr/bin/env node
// build_site.mjs — assemble the static site in dist/ from web/, the wasm
// build, D3 and the model bundles.
//
//   node tools/build_site.mjs            (run by `make site` after `make wasm`)
//
// JS, CSS, D3 and wasm files get content hashes in their names (and every
// relative import is rewritten to the hashed name, dependencies first), so
// they can be cached forever; index.html, sw.js, favicon.svg and models/ keep
// stable names. The service worker receives the list of hashed shell files.
// Bundles are hard-linked into dist/models/ (copied if linking fails).

import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { inlinePage } from './inline_page.mjs';
import { workerSource } from './worker_source.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const WEB = path.join(ROOT, 'web');
const DIST = path.join(ROOT, process.env.DIST_DIR || 'dist');
// Everything is written to OUT first and moved into place at the end, so a
// failed build leaves the previous dist/ whole, and a server reading dist/
// (make serve, browser tests) never sees a half-written one.
const OUT = `${DIST}.tmp-${process.pid}`;
const WASM_DIR = path.resolve(ROOT, process.env.WASM_DIR || path.join('build', 'wasm'));
// The relaxed-SIMD builds (Makefile, make wasm-relaxed); RELAXED_DIR empty:
// none (the Makefile says so when clang-19 is not installed).
// Another WASM_DIR (tests) and no RELAXED_DIR: none either.
const RELAXED_REL = process.env.RELAXED_DIR ?? (process.env.WASM_DIR ? '' : path.join('build', 'wasm-relaxed'));
const RELAXED_DIR = RELAXED_REL === '' ? null : path.resolve(ROOT, RELAXED_REL);
const D3 = path.join(ROOT, 'node_modules', 'd3', 'dist', 'd3.min.js');
const MODELS = path.join(ROOT, 'models');
// MODELS_INDEX: another model list (tests: a hub.endpoint of a local fake Hub).
const INDEX_FILE = path.resolve(ROOT, process.env.MODELS_INDEX || path.join('models', 'index.json'));

const hash = (buf) => createHash('sha256').update(buf).digest('hex').slice(0, 10);
const shell = []; // dist-relative paths the service worker pre-caches

function die(msg) {
  console.error(`build_site: ${msg}`);
  process.exit(1);
}

// The Content-Security-Policy: one source, netlify.toml's header for "/*"
// (which tools/serve.py and the browser tests send too). Every built page
// also carries it as a <meta>, so a host that sends no header (GitHub
// Pages, a plain file server, a file opened from disk) still gets it:
// the same directives less those a <meta> cannot carry (frame-ancestors,
// report-uri, report-to, sandbox). tests/web/build_site.test.mjs checks
// that they agree.
function headerPolicy() {
  const toml = fs.readFileSync(path.join(ROOT, 'netlify.toml'), 'utf8');
  const m = toml.match(/for = "\/\*"\s*\[headers\.values\][^[]*?Content-Security-Policy = "([^"]+)"/);
  if (!m) die('netlify.toml has no Content-Security-Policy for "/*"');
  return m[1];
}
const META_IGNORES = new Set(['frame-ancestors', 'report-uri', 'report-to', 'sandbox']);

/** The policy with connect-src allowing the Hub the model list names
 *  (hub.endpoint, web/js/engine/hub.js): netlify.toml lists the real Hub
 *  and the hosts it redirects downloads to, so the published site's policy
 *  is netlify.toml's exactly; another endpoint (a mirror, the tests' fake
 *  Hub) adds its origin and those of hub.redirects. Returns [policy, added]. */
function withHubOrigins(policy, hub) {
  if (!hub || hub.endpoint === undefined) return [policy, []];
  const origin = (u, what) => {
    let x;
    try { x = new URL(u); } catch { die(`models/index.json: ${what} ${JSON.stringify(u)} is not a URL`); }
    if (!/^https?:$/.test(x.protocol)) die(`models/index.json: ${what} ${JSON.stringify(u)} is not http(s)`);
    return x.origin;
  };
  const want = [origin(hub.endpoint, 'hub.endpoint'), ...(hub.redirects || []).map((u) => origin(u, 'hub.redirects'))];
  const dirs = policy.split(';').map((d) => d.trim()).filter(Boolean);
  const i = dirs.findIndex((d) => d.split(/\s+/)[0] === 'connect-src');
  if (i < 0) die('netlify.toml\'s policy has no connect-src');
  const have = new Set(dirs[i].split(/\s+/).slice(1));
  const added = want.filter((o, k) => !have.has(o) && want.indexOf(o) === k);
  if (!added.length) return [policy, []];
  dirs[i] = `${dirs[i]} ${added.join(' ')}`;
  return [dirs.join('; '), added];
}

/** The <meta> form of a policy; replace: {directive: value} overrides (the
 *  one-file pages' inline scripts and styles, by hash). */
function metaPolicy(policy, replace = {}) {
  const out = [];
  for (const d of policy.split(';').map((x) => x.trim()).filter(Boolean)) {
    const name = d.split(/\s+/)[0].toLowerCase();
    if (META_IGNORES.has(name)) continue;
    out.push(name in replace ? `${name} ${replace[name]}` : d);
  }
  return out.join('; ');
}

/** html with the policy as the first <meta> after <meta charset>. */
function withCsp(html, policy, what) {
  const tag = '<meta charset="utf-8">';
  if (!html.includes(tag)) die(`${what} has no ${tag} to put the Content-Security-Policy after`);
  const attr = policy.replace(/&/g, '&amp;').replace(/"/g, '&quot;');
  return html.replace(tag, () => `${tag}\n<meta http-equiv="Content-Security-Policy" content="${attr}">`);
}

/** 'sha256-…' sources for every inline script (classic or module; data
 *  blocks with another type never run) and every <style> of a page. */
function inlineHashes(html) {
  const h = (text) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
  const scripts = [...html.matchAll(/<script(?:\s+type="(?:module|text\/javascript)")?>([\s\S]*?)<\/script>/g)].map((m) => h(m[1]));
  const styles = [...html.matchAll(/<style>([\s\S]*?)<\/style>/g)].map((m) => h(m[1]));
  return { scripts, styles };
}

function hashedName(rel, content) {
  const ext = rel.endsWith('.min.js') ? '.min.js' : path.extname(rel);
  return `${rel.slice(0, -ext.length)}.${hash(content)}${ext}`;
}

function emit(rel, content, { hashed = true, inShell = true } = {}) {
  const out = hashed ? hashedName(rel, content) : rel;
  const abs = path.join(OUT, out);
  fs.mkdirSync(path.dirname(abs), { recursive: true });
  fs.writeFileSync(abs, content);
  if (inShell) shell.push(out);
  return out;
}

// Two engine builds (Makefile): one thread, and pthreads (-mt, with the
// glue's bertlens-mt.worker.js), which the page uses when cross-origin
// isolated. The one-file pages (bertlens.html, viewer.html; the notebook
// package's assets) carry only the single-threaded SIMD128 one: the relaxed
// build would add 0.9 MB of base64 for a gain on f32 bundles only, and their
// built-in model is the q10 default (docs/performance.md, "Relaxed SIMD").
// analyze.wasm: the analyses of a snapshot's attention, for viewer.html (Makefile).
const WASM_FILES = ['bertlens.js', 'bertlens.wasm', 'bertlens-mt.js', 'bertlens-mt.wasm', 'bertlens-mt.worker.js', 'analyze.wasm'];
for (const f of WASM_FILES.map((n) => path.join(WASM_DIR, n))) {
  if (!fs.existsSync(f)) die(`${path.relative(ROOT, f)} is missing: run \`make wasm\` first.`);
}
if (!fs.existsSync(D3)) die('node_modules/d3 is missing: run `npm ci`.');

// Refuse a wasm build older than the C it is built from (a failed or skipped
// `make wasm` must not ship yesterday's engine), and an empty one.
const SRC = path.join(ROOT, 'src');
// what the Makefile builds the wasm from: every .c and .h but the CLI's and the fuzzers'
const SOURCES = fs.readdirSync(SRC, { recursive: true }).filter((f) => /\.(c|h)$/.test(f) && !/^(cli|fuzz)\//.test(f));
/** The sources newer than the oldest of built (files). */
const newerThan = (built) => {
  const oldest = Math.min(...built.map((f) => fs.statSync(f).mtimeMs));
  return SOURCES.filter((f) => fs.statSync(path.join(SRC, f)).mtimeMs > oldest);
};
{
  const built = WASM_FILES.map((f) => path.join(WASM_DIR, f));
  for (const f of built) if (fs.statSync(f).size === 0) die(`${path.relative(ROOT, f)} is empty: run \`make wasm\`.`);
  const newer = newerThan(built);
  if (newer.length) die(`the wasm build in ${path.relative(ROOT, WASM_DIR)}/ is older than src/${newer.join(', src/')}: run \`make wasm\` (and fix it if it fails).`);
}

// The relaxed-SIMD builds go out beside the plain ones: only a browser that
// validates relaxed SIMD fetches them (web/js/engine/worker_init.js) or
// pre-caches them (sw.js ENGINE). Missing: the site carries the plain engine
// only; present but stale or empty: refused, as the plain build is.
const RELAXED_FILES = ['bertlens.js', 'bertlens.wasm', 'bertlens-mt.js', 'bertlens-mt.wasm', 'bertlens-mt.worker.js'];
const relaxedBuilt = RELAXED_DIR && RELAXED_FILES.every((f) => fs.existsSync(path.join(RELAXED_DIR, f)));
if (RELAXED_DIR && !relaxedBuilt) {
  console.log(`build_site: no relaxed-SIMD build in ${path.relative(ROOT, RELAXED_DIR)}/ (make wasm-relaxed; needs clang-19 and lld-19): the site carries the SIMD128 engine only`);
} else if (relaxedBuilt) {
  const built = RELAXED_FILES.map((f) => path.join(RELAXED_DIR, f));
  for (const f of built) if (fs.statSync(f).size === 0) die(`${path.relative(ROOT, f)} is empty: run \`make wasm-relaxed\`.`);
  const newer = newerThan(built);
  if (newer.length) die(`the relaxed-SIMD build in ${path.relative(ROOT, RELAXED_DIR)}/ is older than src/${newer.join(', src/')}: run \`make wasm-relaxed\`.`);
}

fs.rmSync(OUT, { recursive: true, force: true });
fs.mkdirSync(OUT, { recursive: true });
process.on('exit', (code) => { if (code !== 0) fs.rmSync(OUT, { recursive: true, force: true }); });

// Worker scripts end with the Trusted Types policy (web/js/trusted_types.js:
// a worker started from a URL has the CSP of its own response, so its
// importScripts / new Worker need the policy too; it only has to exist
// before the first message, which is when they run).
const TRUSTED = fs.readFileSync(path.join(WEB, 'js', 'trusted_types.js'), 'utf8');
const withPolicy = (src) => `${src}\n${TRUSTED}`;
const INDEX = JSON.parse(fs.readFileSync(INDEX_FILE, 'utf8'));
const [POLICY, HUB_ADDED] = withHubOrigins(headerPolicy(), INDEX.hub);
if (HUB_ADDED.length) console.log(`build_site: connect-src also allows ${HUB_ADDED.join(' ')} (hub.endpoint of ${path.relative(ROOT, INDEX_FILE)}; not the published policy)`);

// 1. Third-party and compiled assets.
const d3Out = emit('vendor/d3.min.js', fs.readFileSync(D3));
// The engine's modules are not in the shell: the service worker pre-caches
// one kind, the relaxed-SIMD one where relaxed SIMD validates, else the
// SIMD128 one (sw.js ENGINE), so a browser gets the engine it runs only.
const engineFiles = { simd128: [], relaxed: [] };
const engineFile = (kind, rel, content) => {
  const out = emit(rel, content, { inShell: false });
  engineFiles[kind].push(out);
  return out;
};
const wasmOut = engineFile('simd128', 'wasm/bertlens.wasm', fs.readFileSync(path.join(WASM_DIR, 'bertlens.wasm')));
const glueOut = engineFile('simd128', 'wasm/bertlens.js', fs.readFileSync(path.join(WASM_DIR, 'bertlens.js')));
const mtOut = {
  glue: engineFile('simd128', 'wasm/bertlens-mt.js', fs.readFileSync(path.join(WASM_DIR, 'bertlens-mt.js'))),
  wasm: engineFile('simd128', 'wasm/bertlens-mt.wasm', fs.readFileSync(path.join(WASM_DIR, 'bertlens-mt.wasm'))),
  worker: engineFile('simd128', 'wasm/bertlens-mt.worker.js', withPolicy(fs.readFileSync(path.join(WASM_DIR, 'bertlens-mt.worker.js'), 'utf8'))),
};
const relaxedOut = relaxedBuilt ? (() => {
  const put = (rel, content) => engineFile('relaxed', rel, content);
  const read = (f) => fs.readFileSync(path.join(RELAXED_DIR, f));
  return {
    glue: put('wasm/bertlens-relaxed.js', read('bertlens.js')),
    wasm: put('wasm/bertlens-relaxed.wasm', read('bertlens.wasm')),
    mt: {
      glue: put('wasm/bertlens-relaxed-mt.js', read('bertlens-mt.js')),
      wasm: put('wasm/bertlens-relaxed-mt.wasm', read('bertlens-mt.wasm')),
      worker: put('wasm/bertlens-relaxed-mt.worker.js', withPolicy(read('bertlens-mt.worker.js').toString('utf8'))),
    },
  };
})() : null;
const cssOut = emit('css/app.css', fs.readFileSync(path.join(WEB, 'css', 'app.css')));

// 2. JS modules: hash leaves first, rewriting relative imports to hashed names.
const IMPORT_RE = /(\bfrom\s*|\bimport\s*\(?\s*)(['"])(\.{1,2}\/[^'"]+)\2/g;
const done = new Map(); // web-relative path -> dist-relative hashed path
const visiting = new Set();
const overrides = new Map(); // web-relative path -> generated source

function buildModule(rel) {
  if (done.has(rel)) return done.get(rel);
  if (visiting.has(rel)) die(`import cycle through ${rel}`);
  visiting.add(rel);
  const src = overrides.get(rel) ?? fs.readFileSync(path.join(WEB, rel), 'utf8');
  const out = src.replace(IMPORT_RE, (m, pre, q, spec) => {
    const depRel = path.posix.normalize(path.posix.join(path.posix.dirname(rel), spec));
    if (!fs.existsSync(path.join(WEB, depRel)) && !overrides.has(depRel)) die(`${rel} imports missing ${spec}`);
    const depOut = buildModule(depRel);
    let relOut = path.posix.relative(path.posix.dirname(rel), depOut);
    if (!relOut.startsWith('.')) relOut = `./${relOut}`;
    return `${pre}${q}${relOut}${q}`;
  });
  visiting.delete(rel);
  const written = emit(rel, out);
  done.set(rel, written);
  return written;
}

const workerOut = emit('js/worker.js', withPolicy(workerSource(WEB)));
const pcaOut = buildModule('js/engine/pca_worker.js'); // the Corpus view's module worker (its imports hashed too)
overrides.set('js/engine/assets.js', `// Generated by tools/build_site.mjs.\nexport const ASSETS = ${JSON.stringify({ engine: true, worker: workerOut, glue: glueOut, wasm: wasmOut, wasmBinary: null, mt: mtOut, ...(relaxedOut ? { relaxed: relaxedOut } : {}), pca: pcaOut }, null, 2)};\n`);
const appOut = buildModule('js/app.js');

// 3. Pages with stable names.
let html = fs.readFileSync(path.join(WEB, 'index.html'), 'utf8');
const fileNoticeOut = emit('js/file_notice.js', fs.readFileSync(path.join(WEB, 'js', 'file_notice.js')));
const trustedOut = emit('js/trusted_types.js', TRUSTED);
for (const [from, to] of [['js/trusted_types.js', trustedOut], ['js/file_notice.js', fileNoticeOut], ['vendor/d3.min.js', d3Out], ['css/app.css', cssOut], ['js/app.js', appOut]]) {
  if (!html.includes(`"${from}"`)) die(`index.html does not reference ${from}`);
  html = html.replace(`"${from}"`, `"${to}"`);
}
html = withCsp(html, metaPolicy(POLICY), 'index.html');
emit('index.html', html, { hashed: false });
emit('favicon.svg', fs.readFileSync(path.join(WEB, 'favicon.svg')), { hashed: false });

// 4. Models: the index and every listed bundle. A bundle is published under
// a name carrying its sha256 (name.<12 hex>.blb.gz), so it can be cached as
// immutable: a rebuilt model gets a new URL. dist/models/index.json names
// the published file; the sha256 and bytes are checked here and in the page.
const index = INDEX;
fs.mkdirSync(path.join(OUT, 'models'), { recursive: true });
let bundleBytes = 0;
const published = [];
const sourceOf = new Map(); // published file name -> models/ path
for (const m of index.models) {
  const from = path.join(MODELS, m.file);
  if (!fs.existsSync(from)) die(`models/index.json lists ${m.file}, which is missing`);
  const bytes = fs.readFileSync(from);
  const sha = createHash('sha256').update(bytes).digest('hex');
  if (m.sha256 && sha !== m.sha256) die(`${m.file}: sha256 ${sha}, index says ${m.sha256} (run make models)`);
  if (m.bytes && bytes.length !== m.bytes) die(`${m.file}: ${bytes.length} bytes, index says ${m.bytes}`);
  // inflated_sha256: the sha256 of the plain bundle, for a server that sends
  // the .gz with Content-Encoding: gzip (the browser then hands the page
  // the inflated bytes, which web/js/engine/bundles.js checks against it).
  const inflated = m.file.endsWith('.gz') ? createHash('sha256').update(zlib.gunzipSync(bytes)).digest('hex') : sha;
  const file = m.file.replace(/(\.blb(\.gz)?)$/, `.${sha.slice(0, 12)}$1`);
  const to = path.join(OUT, 'models', file);
  try { fs.linkSync(from, to); } catch { fs.copyFileSync(from, to); }
  bundleBytes += bytes.length;
  published.push({ ...m, file, sha256: sha, bytes: bytes.length, inflated_sha256: inflated });
  sourceOf.set(file, from);
}
const indexOut = JSON.stringify({ ...index, models: published }, null, 2);
fs.writeFileSync(path.join(OUT, 'models', 'index.json'), indexOut);

// 5. The service worker pre-caches the shell and the model list, so one
// visit (which also stores the bundle, bundles.js) is enough to work offline,
// and viewer.html (written below), so "export standalone HTML" works offline.
const version = hash(shell.join('\n') + JSON.stringify(engineFiles) + html + indexOut);
let sw = fs.readFileSync(path.join(WEB, 'sw.js'), 'utf8');
sw = sw.replace(/const VERSION = '[^']*';/, `const VERSION = '${version}';`)
  .replace(/const SHELL = \[[^\]]*\];/, `const SHELL = ${JSON.stringify(['./', ...shell, 'models/index.json', 'viewer.html'])};`)
  .replace(/const ENGINE = \{[^}]*\};/, `const ENGINE = ${JSON.stringify(engineFiles)};`);
if (!sw.includes(version)) die('sw.js: VERSION placeholder not found');
if (!sw.includes(JSON.stringify(engineFiles))) die('sw.js: ENGINE placeholder not found');
emit('sw.js', sw, { hashed: false, inShell: false });

// 6. One-file pages, everything inline (tools/inline_page.mjs):
//   bertlens.html — the page, CSS, D3, the modules, the engine (worker =
//     glue + worker.js started from a Blob; wasm as base64, handed over as
//     wasmBinary) and the default model (base64 gzip): works opened from
//     file:// with no network at all.
//   viewer.html — the same page without the engine and the model: the
//     template that "export standalone HTML" fills with a snapshot
//     (<script type="application/json" id="bertlens-snapshot">); its ASSETS
//     say engine: false. bertlens.html carries a copy as base64 in
//     #bertlens-viewer (a page opened from file:// cannot fetch it).
const sourceHtml = fs.readFileSync(path.join(WEB, 'index.html'), 'utf8');
function onePage(assetsModule, dataBlocks) {
  const read = (rel) => {
    if (rel === 'js/engine/assets.js') return assetsModule;
    if (rel === 'vendor/d3.min.js') return fs.readFileSync(D3, 'utf8');
    if (rel === 'favicon.svg') return fs.readFileSync(path.join(WEB, rel));
    return fs.readFileSync(path.join(WEB, rel), 'utf8');
  };
  let page;
  try {
    page = inlinePage(sourceHtml, { read, dropScripts: ['js/file_notice.js'], dataBlocks });
  } catch (e) {
    return die(e.message);
  }
  // Everything is inline here: scripts and styles allowed by their hashes,
  // the engine worker from a blob: (it inherits this policy).
  const { scripts, styles } = inlineHashes(page);
  return withCsp(page, metaPolicy(POLICY, {
    'script-src': `${scripts.join(' ')} 'wasm-unsafe-eval'`,
    'style-src': styles.join(' ') || "'none'",
    'worker-src': 'blob:',
  }), 'the one-file page');
}
const defaultModel = published.find((m) => m.default) || published[0];
const oneFileAssets = `// Generated by tools/build_site.mjs for the one-file page: the worker is
// the Emscripten glue + worker.js from a Blob, the wasm comes as base64.
import { base64ToBytes, unpackInlineEarly } from './bundles.js';
const text = (id) => document.getElementById(id).textContent;
// Unpack the built-in model while the engine starts (the page's first
// await), not after.
setTimeout(unpackInlineEarly, 0);
export const ASSETS = {
  engine: true,
  worker: URL.createObjectURL(new Blob([text('bertlens-engine-glue'), '\\n', text('bertlens-engine-worker')], { type: 'text/javascript' })),
  glue: null,
  wasm: null,
  wasmBinary: () => base64ToBytes(text('bertlens-engine-wasm')).buffer,
};
`;
// viewer.html first: bertlens.html carries it (base64, #bertlens-viewer), so
// "Download HTML" works there too, where a file:// page cannot fetch it.
// It carries the analyses module (build/wasm/analyze.wasm, base64): the
// heads overview and the rollout of a snapshot's attention, without the model.
const viewer = onePage(`// Generated by tools/build_site.mjs for viewer.html: no engine, no model;
// the page draws from an inline snapshot (#bertlens-snapshot).
import { base64ToBytes } from './bundles.js';
export const ASSETS = {
  engine: false, worker: null, glue: null, wasm: null, wasmBinary: null,
  analyses: () => base64ToBytes(document.getElementById('bertlens-analyze-wasm').textContent),
};
`, [
  { id: 'bertlens-analyze-wasm', type: 'application/octet-stream', text: fs.readFileSync(path.join(WASM_DIR, 'analyze.wasm')).toString('base64') },
]);
const oneFile = onePage(oneFileAssets, [
  { id: 'bertlens-viewer', type: 'application/octet-stream', text: Buffer.from(viewer, 'utf8').toString('base64') },
  { id: 'bertlens-models', type: 'application/json', text: JSON.stringify({ ...index, models: [{ ...defaultModel, inline: 'bertlens-bundle-0' }] }) },
  { id: 'bertlens-engine-glue', type: 'text/plain', text: fs.readFileSync(path.join(WASM_DIR, 'bertlens.js'), 'utf8') },
  { id: 'bertlens-engine-worker', type: 'text/plain', text: withPolicy(workerSource(WEB)) },
  { id: 'bertlens-engine-wasm', type: 'application/octet-stream', text: fs.readFileSync(path.join(WASM_DIR, 'bertlens.wasm')).toString('base64') },
  { id: 'bertlens-bundle-0', type: 'application/octet-stream', text: fs.readFileSync(sourceOf.get(defaultModel.file)).toString('base64') },
]);
emit('bertlens.html', oneFile, { hashed: false, inShell: false });
emit('viewer.html', viewer, { hashed: false, inShell: false });

const total = shell.reduce((s, f) => s + fs.statSync(path.join(OUT, f)).size, 0);

// Into place: dist/ -> dist.old-<pid>, OUT -> dist/, then drop the old one.
const old = `${DIST}.old-${process.pid}`;
if (fs.existsSync(DIST)) fs.renameSync(DIST, old);
fs.renameSync(OUT, DIST);
fs.rmSync(old, { recursive: true, force: true });
const mb = (n) => (n / 1048576).toFixed(1);
const kb = (files) => (files.reduce((s, f) => s + fs.statSync(path.join(DIST, f)).size, 0) / 1024).toFixed(0);
console.log(`build_site: dist/ ready — ${shell.length} shell files (${(total / 1024).toFixed(0)} KB), `
  + `engine SIMD128 ${engineFiles.simd128.length} files (${kb(engineFiles.simd128)} KB), `
  + (engineFiles.relaxed.length ? `relaxed SIMD ${engineFiles.relaxed.length} files (${kb(engineFiles.relaxed)} KB; each browser fetches one kind), ` : 'no relaxed-SIMD engine, ')
  + `${index.models.length} bundle(s) (${mb(bundleBytes)} MB), sw version ${version}; `
  + `bertlens.html ${mb(oneFile.length)} MB, viewer.html ${(viewer.length / 1024).toFixed(0)} KB`);
