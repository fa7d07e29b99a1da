#!/usr/bin/env node
// jupyterlab.mjs — bertlens in JupyterLab, in a real browser: JupyterLab (from
// PyPI, in the venv given) serves a notebook on 127.0.0.1; headless Chromium
// opens it and runs every cell as a user would (Run All). Then:
//   - every output draws live (its root's data-state 'ready'), in the
//     notebook's own document (no shadow root);
//   - the page travels once per notebook (JupyterLab names its cells): the
//     viewer page in the first head_view output only, the engine page in
//     the first show() output only;
//   - a click reacts: the head_view output's "Model view" tab draws the
//     model view from its snapshot; in the show() output the model view tab
//     runs the engine again and the page is ready with the model view;
//   - the notebook saved by JupyterLab keeps show()'s snapshot of the view
//     last drawn (sent by the page to the kernel, written by update_display).
// Requests may go only to 127.0.0.1. Screenshots: build/screenshots/notebook-lab*.png.
//
//   node tests/notebook/jupyterlab.mjs VENV
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchChromium } from '../browser/server.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '..', '..');
const SHOTS = path.join(ROOT, 'build', 'screenshots');
const venv = path.resolve(process.argv[2] || path.join(ROOT, 'build', 'jlab', 'venv'));
const index = JSON.parse(fs.readFileSync(path.join(ROOT, 'models', 'index.json'), 'utf8'));
const DEFAULT = path.join(ROOT, 'models', index.models.find((m) => m.default).file);
const FIX = path.join(HERE, 'fixtures');

const freePort = () => new Promise((resolve) => {
  const s = net.createServer();
  s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
});

const cell = (source) => ({ cell_type: 'code', metadata: {}, execution_count: null, outputs: [], source });
const notebook = {
  nbformat: 4, nbformat_minor: 5, metadata: { kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' } },
  cells: [
    cell(`import json\nimport numpy as np\nimport bertlens\nFIX = ${JSON.stringify(FIX)}\nmeta = json.load(open(FIX + "/bert-pair.json"))\nattention = list(np.load(FIX + "/bert-pair.npy"))`),
    cell('bertlens.head_view(attention, meta["tokens"], sentence_b_start=meta["sentence_b_start"])'),
    cell('bertlens.model_view(attention, meta["tokens"])'),
    cell(`bertlens.show(${JSON.stringify(DEFAULT)}, "The cat sat on the mat.", view="heatmap")`),
  ],
};
notebook.cells.forEach((c, i) => { c.id = `cell-${i}`; });

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bertlens-lab-'));
fs.writeFileSync(path.join(dir, 'lab.ipynb'), JSON.stringify(notebook, null, 1));
const port = await freePort();
const token = Math.random().toString(36).slice(2) + Math.random().toString(36).slice(2);
const lab = spawn(path.join(venv, 'bin', 'jupyter'), ['lab', '--no-browser', `--port=${port}`, '--ip=127.0.0.1',
  `--IdentityProvider.token=${token}`, `--ServerApp.root_dir=${dir}`, '--LabApp.expose_app_in_browser=True',
  '--LabApp.news_url=None', '--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate',
  '--LabApp.extension_manager=readonly', ...(process.getuid && process.getuid() === 0 ? ['--allow-root'] : [])],
{ cwd: dir, env: { ...process.env, JUPYTER_CONFIG_DIR: path.join(dir, '.jupyter'), JUPYTER_DATA_DIR: path.join(dir, '.data'), PATH: `${path.join(venv, 'bin')}:${process.env.PATH}` }, stdio: ['ignore', 'pipe', 'pipe'] });
let labLog = '';
lab.stdout.on('data', (d) => { labLog += d; });
lab.stderr.on('data', (d) => { labLog += d; });

const { context, profile } = await launchChromium({ viewport: { width: 1280, height: 1000 } });
// The whole scenario within 8 minutes, whatever hangs.
const deadline = setTimeout(() => {
  console.error('FAIL JupyterLab: no end after 8 minutes');
  lab.kill('SIGKILL');
  context.close().finally(() => process.exit(1));
}, 8 * 60000);
const outside = [];
const errors = [];
let failed = null;
const t0 = Date.now();
const say = (m) => console.log(`${((Date.now() - t0) / 1000).toFixed(1).padStart(5)} s  ${m}`);
try {
  await context.route('**/*', (route) => {
    const u = new URL(route.request().url());
    if (/^(https?|wss?):$/.test(u.protocol) && u.hostname !== '127.0.0.1') { outside.push(u.href); return route.abort(); }
    return route.continue();
  });
  const page = context.pages()[0] || await context.newPage();
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  // JupyterLab's server up?
  for (let i = 0; ; i++) {
    try { if ((await fetch(`http://127.0.0.1:${port}/api?token=${token}`)).ok) break; } catch { /* not yet */ }
    if (i > 300) throw new Error(`JupyterLab did not start:\n${labLog.slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  say('JupyterLab is up');
  await page.goto(`http://127.0.0.1:${port}/lab/tree/lab.ipynb?token=${token}`);
  await page.waitForFunction(() => window.jupyterapp && document.querySelector('.jp-Notebook .jp-Cell'), null, { timeout: 120000 });
  // JupyterLab asks which kernel a notebook it has not run before should use: the Python one.
  const pick = await page.waitForSelector('.jp-Dialog button.jp-mod-accept', { timeout: 15000 }).catch(() => null);
  if (pick) await pick.click();
  // (and whether to hear Jupyter's news: no, which also takes its toast off the outputs)
  const news = await page.waitForSelector('.jp-toast-button:has-text("No"), .Toastify button:has-text("No")', { timeout: 5000 }).catch(() => null);
  if (news) await news.click().catch(() => {});
  await page.waitForFunction(() => /Idle/.test(document.querySelector('.jp-StatusBar-Widget, #jp-main-statusbar')?.textContent || ''), null, { timeout: 120000 }).catch(() => {});
  // (not awaited: the command's promise ends with the last cell)
  await page.evaluate(() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); });
  say('Run All');
  await page.waitForFunction(() => {
    const roots = [...document.querySelectorAll('.bertlens-output')];
    return roots.length === 3 && roots.every((r) => ['ready', 'error'].includes(r.dataset.state));
  }, null, { timeout: 180000 });
  const roots = await page.$$('.bertlens-output');
  for (const [i, r] of roots.entries()) {
    const st = await r.getAttribute('data-state');
    assert.equal(st, 'ready', `output ${i}: ${st}: ${await r.$eval('.bertlens-note', (e) => e.textContent)}`);
    assert.equal(await r.evaluate((e) => e.getRootNode() === document), true, 'the root is in the document, not a shadow root');
  }
  say('3 outputs ready');
  const carried = await page.$$eval('script[data-bertlens-page]', (els) => els.map((e) => e.closest('.jp-Cell').dataset.windowedListIndex ?? [...document.querySelectorAll('.jp-Cell')].indexOf(e.closest('.jp-Cell'))));
  assert.deepEqual(carried.map(Number), [1, 3], `the pages travel once per notebook (cells ${carried})`);
  await page.screenshot({ path: path.join(SHOTS, 'notebook-lab.png'), fullPage: true });

  // A click in the head_view output: its Model view tab, drawn from its snapshot.
  const frameOf = async (i) => (await roots[i].$('iframe')).contentFrame();
  // A user's click: the mouse at the button's place on the screen (JupyterLab's
  // notebook skips painting what is off screen, content-visibility: auto, which
  // stalls Playwright's own checks inside the frames).
  const clickIn = async (frame, sel) => {
    const el = await frame.$(sel);
    await el.evaluate((e) => e.scrollIntoView({ block: 'center' }));
    await page.waitForTimeout(300);
    const b = await el.boundingBox();
    await page.mouse.click(b.x + b.width / 2, b.y + b.height / 2);
  };
  const head = await frameOf(0);
  await clickIn(head, '#view-tabs button[data-view="model"]');
  await head.waitForFunction(() => document.getElementById('view').dataset.view === 'model' && document.body.dataset.state === 'ready');
  assert.equal(await roots[0].getAttribute('data-state'), 'ready');
  say('head_view output: Model view tab drawn');
  // (the frames keep their height: a fitted frame does not keep resizing)
  const heights = [];
  for (let k = 0; k < 5; k++) { heights.push(await page.$$eval('.bertlens-output iframe', (fs) => fs.map((f) => f.offsetHeight).join(','))); await page.waitForTimeout(200); }
  assert.equal(new Set(heights).size, 1, `frame heights changing: ${heights.join(' | ')}`);
  // A click in the show() output: the engine runs the model view.
  const live = await frameOf(2);
  await live.evaluate(() => { document.body.dataset.state = 'loading'; });
  await clickIn(live, '#view-tabs button[data-view="model"]');
  say('show() output: Model view tab clicked');
  await live.waitForFunction(() => document.getElementById('view').dataset.view === 'model' && document.body.dataset.state === 'ready', null, { timeout: 60000 });
  const info = await live.$eval('#token-info', (e) => e.textContent);
  assert.match(info, /^9 tokens · model ran in \d+ ms/);
  await roots[2].screenshot({ path: path.join(SHOTS, 'notebook-lab-show.png') });
  say(`show() output: Model view tab run by the engine (${info})`);

  // The saved notebook keeps show()'s snapshot of the view last drawn.
  await page.waitForTimeout(1500); // (the page's snapshot to the kernel, the kernel's update to the output)
  await page.evaluate(() => { window.jupyterapp.commands.execute('docmanager:save'); });
  let saved = null;
  for (let i = 0; i < 50; i++) {
    await page.waitForTimeout(200);
    let nb;
    try { nb = JSON.parse(fs.readFileSync(path.join(dir, 'lab.ipynb'), 'utf8')); } catch { continue; } // (being written)
    const kept = (nb.cells[3].outputs || []).map((o) => [].concat(o.data?.['text/html'] || []).join('')).find((h) => h.includes('bertlens-kept'));
    if (kept && kept.includes('"s": "')) { saved = kept; break; }
  }
  assert.ok(saved, 'the saved notebook holds show()\'s snapshot');
  const snap = JSON.parse(saved.match(/<script type="application\/json" class="bertlens-snapshot"[^>]*>(.*?)<\/script>/)[1]).s;
  const bytes = Buffer.from(snap, 'base64url');
  const raw = (await import('node:zlib')).inflateRawSync(bytes);
  const meta = JSON.parse(raw.subarray(12, 12 + raw.readUInt32LE(8)).toString('utf8'));
  assert.equal(meta.state.view, 'model', 'the snapshot kept is the view last drawn');
  say('saved notebook keeps the model view\'s snapshot');
  assert.deepEqual(outside, [], 'requests that left 127.0.0.1');
  assert.deepEqual(errors, [], 'page errors');
} catch (e) {
  failed = e;
  const page = context.pages()[0];
  if (page) {
    await page.screenshot({ path: path.join(SHOTS, 'notebook-lab-failed.png'), fullPage: true }).catch(() => {});
    const seen = await page.evaluate(() => ({
      outputs: [...document.querySelectorAll('.bertlens-output')].map((r) => `${r.dataset.state}: ${r.querySelector('.bertlens-note')?.textContent}`),
      cells: [...document.querySelectorAll('.jp-Cell .jp-InputPrompt')].map((p) => p.textContent.trim()),
      errors: [...document.querySelectorAll('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')].map((e) => e.textContent.slice(0, 300)),
    })).catch((err) => String(err));
    console.error(JSON.stringify(seen, null, 1));
  }
} finally {
  await context.close().catch(() => {});
  fs.rmSync(profile, { recursive: true, force: true });
  lab.kill('SIGTERM');
  await new Promise((r) => { lab.on('exit', r); setTimeout(r, 5000); });
  fs.rmSync(dir, { recursive: true, force: true });
}
clearTimeout(deadline);
if (failed) {
  console.error(`FAIL JupyterLab: ${failed.stack || failed}`);
  process.exit(1);
}
console.log('JupyterLab: outputs draw live, react to clicks, and the notebook keeps show()\'s view');
