// harness.mjs — what every browser scenario shares. A scenario file
// (tests/browser/*.scenarios.mjs) registers scenarios:
//
//   import { scenario, ready, fx } from './harness.mjs';
//   scenario('what it shows', async ({ page, base, shot }) => {
//     await page.goto(base);
//     await ready(page);
//     await shot(page, 'name');            // build/screenshots/name.png
//   }, { viewport: { width: 390, height: 844 } });
//
// and tests/browser/run.mjs runs them. Each scenario gets:
//   context        a persistent Chromium context in a NEW, empty profile
//   page           a page in it, watched (console errors, page errors, dialogs)
//   base           http://127.0.0.1:PORT/ serving dist/ (its own server, sending the
//                  headers of netlify.toml: CSP, caching, types; opts.csp false: none)
//   srv            that server: srv.requests lists every path asked for
//   base2, srv2    with opts.secondOrigin: a second 127.0.0.1 port (another
//                  origin) serving dist/, or the directory opts.secondOrigin names
//   shot(page, n)  full-page screenshot to build/screenshots/<n>.png, for a
//                  person to look at; BROWSER_SHOTS=0: none (.ci/run sets it:
//                  one costs 0.3-1.7 s, with the redraw its resize causes, a
//                  sixth of the family scenarios' time); a failed scenario's
//                  page is kept whatever the setting, as failed-<scenario>.png
//   consoleErrors, dialogs, outside   what was seen so far (a scenario may
//                  filter consoleErrors for errors it provoked on purpose)
//   profile        the profile directory
// Afterwards the scenario fails if any request tried to leave 127.0.0.1
// (such requests are aborted), if a console error or page error was logged
// (opts.allowConsoleErrors: true, or a RegExp of errors to accept), or if a
// dialog opened (opts.allowDialogs). opts.network = 'none' blocks (and
// counts as a failure) every http(s)/ws request, localhost included — for
// pages opened from file:// that must need no network at all. The context
// is closed and the profile removed whatever happened.
//
// opts: { viewport, secondOrigin, allowConsoleErrors, allowDialogs, network,
//         csp (false: serve without a Content-Security-Policy), timeout (ms) }

import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { serve, netlifyHeaders, launchChromium } from './server.mjs';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const DIST = path.join(ROOT, 'dist');
export const SHOTS = path.join(ROOT, 'build', 'screenshots');
const SHOTS_ON = process.env.BROWSER_SHOTS !== '0';

/** The published default model: its models/index.json entry, and its file. */
export const DEFAULT_MODEL = JSON.parse(fs.readFileSync(path.join(ROOT, 'models', 'index.json'), 'utf8')).models.find((m) => m.default);
export const DEFAULT_GZ = path.join(ROOT, 'models', DEFAULT_MODEL.file);
/** A string as a literal inside a RegExp. */
export const reEscape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Hugging Face reference for the default model's pair (tokens, attention). */
export const fx = JSON.parse(fs.readFileSync(path.join(ROOT, 'tests', 'web', 'fixtures', 'minilm-pair.json'), 'utf8'));

export const scenarios = [];

/** Register a scenario (see the top of this file). */
export function scenario(name, fn, opts = {}) {
  if (scenarios.some((s) => s.name === name)) throw new Error(`two scenarios named "${name}"`);
  scenarios.push({ name, fn, opts });
}

// ------------------------------------------------------------------ helpers

/** Wait until the page is no longer 'loading' (and its URL follows the
 *  redraw: app.js updates it once the frame is painted); returns the state. */
export async function settled(page, timeout = 90000) {
  try {
    await page.waitForFunction(() => document.body && document.body.dataset.state && document.body.dataset.state !== 'loading'
      && !document.body.dataset.urlPending, null, { timeout });
  } catch (e) {
    // Say where the page stood (a page that never becomes ready is a bug to find, not only a time-out).
    const where = await page.evaluate(() => JSON.stringify({
      url: location.href.slice(0, 300), data: { ...document.body.dataset },
      notices: document.getElementById('notices')?.innerText.slice(0, 800),
      progress: document.getElementById('progress')?.hidden === false ? document.getElementById('progress').innerText.slice(0, 200) : null,
      tokenInfo: document.getElementById('token-info')?.textContent, view: document.getElementById('view')?.dataset.view,
    })).catch((err) => `(the page could not say: ${err.message})`);
    const message = `${e.message}\n     the page: ${where}`;
    if (typeof e.stack === 'string') e.stack = e.stack.replace(e.message, message); // (run.mjs prints the stack)
    e.message = message;
    throw e;
  }
  return page.evaluate(() => document.body.dataset.state);
}

/** Wait for 'ready'; an error state throws with the page's notices. */
export async function ready(page) {
  const s = await settled(page);
  if (s !== 'ready') {
    const msg = await page.evaluate(() => document.getElementById('notices')?.innerText ?? document.body.innerText);
    throw new Error(`page state ${s}: ${msg}`);
  }
}

/** Set a textarea and wait for the redraw. */
export async function typeText(page, sel, text) {
  // Mark the page busy first: the previous render's 'ready' must not count
  // as the redraw for this text (the run is debounced).
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await page.fill(sel, text);
  await ready(page);
}

export async function clickAndRedraw(page, sel) {
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await page.click(sel);
  await ready(page);
}

/** A touch tap (CDP touch events; the page needs touch emulation on) in the
 *  middle of the first element matching sel, scrolled into view first. */
export async function touchTap(page, cdp, sel) {
  await page.$eval(sel, (e) => e.scrollIntoView({ block: 'center' }));
  const b = await page.$eval(sel, (e) => { const r = e.getBoundingClientRect(); return { x: r.x + r.width / 2, y: r.y + r.height / 2 }; });
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: [b] });
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
}

/** Distinct colours in a canvas (0 = blank). */
export function canvasColours(page, sel) {
  return page.evaluate((s) => {
    const c = document.querySelector(s);
    if (!c || !c.width || !c.height) return 0;
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    const seen = new Set();
    for (let i = 0; i < d.length; i += 4 * 7) if (d[i + 3] > 0) seen.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
    return seen.size;
  }, sel);
}

/** Parse exported SVG markup: element counts, desc, well-formedness. In a
 *  blank page beside `page`: the app's own page refuses to parse markup
 *  from a string (its CSP requires Trusted Types). */
export async function inspectSvg(page, svg) {
  const blank = await page.context().newPage();
  try {
    return await parseSvgIn(blank, svg);
  } finally {
    await blank.close();
  }
}

function parseSvgIn(page, svg) {
  return page.evaluate((text) => {
    const doc = new DOMParser().parseFromString(text, 'image/svg+xml');
    const root = doc.documentElement;
    const count = (sel) => doc.querySelectorAll(sel).length;
    return {
      wellFormed: !doc.querySelector('parsererror') && root.localName === 'svg' && root.namespaceURI === 'http://www.w3.org/2000/svg',
      images: count('image'),
      hmCells: count('g.hm-cells rect'),
      lines: count('g.hv-lines line'),
      lineHeads: [...doc.querySelectorAll('g.hv-lines > g')].map((g) => g.getAttribute('data-head')),
      nvRects: count('g.nv-query rect') + count('g.nv-key rect') + count('g.nv-product rect'),
      unsafe: count('script, foreignObject, iframe, object, embed') + doc.getElementsByTagNameNS('http://www.w3.org/1999/xhtml', '*').length
        + [...doc.querySelectorAll('*')].filter((e) => [...e.attributes].some((a) => /^on/i.test(a.name))).length,
      title: doc.querySelector('svg > title')?.textContent,
      shownTitle: [...doc.querySelectorAll('g.export-title text')].map((e) => e.textContent).join(' '),
      keyFills: [...doc.querySelectorAll('svg.export-key g.swatch rect, svg[class="export-key"] rect')].map((r) => r.getAttribute('fill')),
      desc: doc.querySelector('svg > desc')?.textContent,
      texts: [...doc.querySelectorAll('text')].map((t) => t.textContent),
    };
  }, svg);
}

/** Click "Export SVG" and return the downloaded markup. */
export async function exportSvg(page) {
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#export-svg')]);
  return fs.readFileSync(await dl.path(), 'utf8');
}

export const texts = (page, sel) => page.$$eval(sel, (els) => els.map((e) => e.textContent));

// ------------------------------------------------------------------ running

function watch(page, seen) {
  if (seen.pages.has(page)) return page;
  seen.pages.add(page);
  page.on('console', (m) => { if (m.type() === 'error') seen.consoleErrors.push(`${m.text()} @ ${page.url()}`); });
  page.on('pageerror', (e) => seen.consoleErrors.push(`pageerror: ${e.message}`));
  page.on('dialog', (d) => { seen.dialogs.push(d.message()); d.dismiss().catch(() => {}); });
  page.on('load', () => { seen.loads++; });
  return page;
}

/** Run one registered scenario in its own profile; resolves to
 *  {name, ok, ms, loads (page loads in its profile's pages), shots and
 *  shotMs (screenshots by shot() and the time they took), consoleErrors
 *  (console and page errors seen), error}. Never throws. */
export async function runScenario(s) {
  const { name, fn, opts } = s;
  const t0 = Date.now();
  const seen = { consoleErrors: [], dialogs: [], outside: [], pages: new WeakSet(), loads: 0, shots: 0, shotMs: 0 };
  const servers = [];
  let context = null;
  let profile = null;
  let error = null;
  try {
    if (!fs.existsSync(path.join(DIST, 'index.html'))) throw new Error('dist/ is missing: run `make site` first.');
    fs.mkdirSync(SHOTS, { recursive: true });
    // The headers the published site sends (netlify.toml), CSP included.
    const netlify = opts.csp === false ? [] : netlifyHeaders(ROOT);
    const srv = await serve(DIST, { netlify });
    servers.push(srv);
    let srv2 = null;
    if (opts.secondOrigin) {
      srv2 = await serve(typeof opts.secondOrigin === 'string' ? opts.secondOrigin : DIST, { netlify });
      servers.push(srv2);
    }
    ({ context, profile } = await launchChromium({ acceptDownloads: true, ...(opts.viewport ? { viewport: opts.viewport } : {}) }));
    const noNetwork = opts.network === 'none';
    await context.route('**/*', (route) => {
      const u = new URL(route.request().url());
      if (['http:', 'https:', 'ws:', 'wss:'].includes(u.protocol) && (noNetwork || u.hostname !== '127.0.0.1')) {
        seen.outside.push(u.href);
        return route.abort();
      }
      return route.continue();
    });
    context.on('page', (p) => watch(p, seen));
    const page = watch(context.pages()[0] || await context.newPage(), seen);
    const shot = async (p, n) => {
      if (!SHOTS_ON) return;
      const t = Date.now();
      await p.screenshot({ path: path.join(SHOTS, `${n}.png`), fullPage: true });
      seen.shots++;
      seen.shotMs += Date.now() - t;
    };
    const ctx = {
      context, page, profile, base: srv.url, srv, base2: srv2?.url, srv2, shot,
      consoleErrors: seen.consoleErrors, dialogs: seen.dialogs, outside: seen.outside,
    };
    const timeout = opts.timeout || 240000;
    let timer;
    const run = Promise.resolve().then(() => fn(ctx));
    run.catch(() => {}); // after a time-out, its late failure (context closed) is not news
    await Promise.race([
      run,
      new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`scenario timed out after ${timeout} ms`)), timeout); }),
    ]).finally(() => clearTimeout(timer));
    assert.deepEqual(seen.outside, [], noNetwork ? 'requests made with the network blocked' : 'requests that tried to leave 127.0.0.1');
    const allow = opts.allowConsoleErrors;
    const errs = allow === true ? [] : seen.consoleErrors.filter((e) => !(allow instanceof RegExp && allow.test(e)));
    assert.deepEqual(errs, [], 'console errors');
    if (!opts.allowDialogs) assert.deepEqual(seen.dialogs, [], 'dialogs');
  } catch (e) {
    error = e;
    // The page as the failure left it (screenshots on or off).
    const last = context?.pages().at(-1);
    if (last) {
      const file = path.join(SHOTS, `failed-${name.replace(/[^A-Za-z0-9]+/g, '-').slice(0, 80)}.png`);
      await last.screenshot({ path: file, fullPage: true, timeout: 10000 }).catch(() => {});
    }
  } finally {
    if (context) await context.close().catch(() => {});
    for (const srv of servers) await srv.close().catch(() => {});
    if (profile) fs.rmSync(profile, { recursive: true, force: true });
  }
  return { name, ok: !error, ms: Date.now() - t0, loads: seen.loads, shots: seen.shots, shotMs: seen.shotMs, consoleErrors: seen.consoleErrors, error };
}

/** Click "Copy link" / "Copy embed code" (sel) and return what it offers. */
export async function copied(page, sel) {
  await page.evaluate(() => { document.getElementById('share-text').value = ''; });
  await page.click(sel);
  await page.waitForFunction(() => document.getElementById('share-text').value !== '');
  return page.inputValue('#share-text');
}

/** What the page offers a reader who never visited: its instant embed
 *  ("Copy embed code", a snapshot in the link) and its "Download HTML"
 *  file, each opened in a fresh Chromium profile where the model files
 *  answer 404. check(p, what) runs on each page once it is ready ('embed',
 *  'standalone file'); a page error fails it. Returns {link, html, refused
 *  (the model requests answered 404)}. */
export async function openAsStranger(page, check) {
  const snip = await copied(page, '#copy-embed');
  const m = snip.match(/src="([^"]+)"/);
  assert.ok(m && m[1].includes('#s='), `an instant (snapshot) embed: ${snip.slice(0, 200)}`);
  const link = m[1].replace(/&amp;/g, '&');
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#export-html')]);
  const html = fs.readFileSync(await dl.path(), 'utf8');
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'bertlens-stranger-')), 'page.html');
  fs.writeFileSync(file, html);
  const { context, profile } = await launchChromium();
  const refused = [];
  await context.route(/\/models\/|\.blb/, (r) => { refused.push(r.request().url()); return r.fulfill({ status: 404, body: 'gone' }); });
  try {
    for (const [what, url] of [['embed', link], ['standalone file', pathToFileURL(file).href]]) {
      const p = await context.newPage();
      const errors = [];
      p.on('pageerror', (e) => errors.push(e.message));
      await p.goto(url);
      await ready(p);
      await check(p, what);
      assert.deepEqual(errors, [], what);
      await p.close();
    }
  } finally {
    await context.close();
    fs.rmSync(profile, { recursive: true, force: true });
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
  }
  return { link, html, refused };
}
