#!/usr/bin/env node
// check_export.mjs — a notebook exported with nbconvert (tests/notebook/run_notebook.py)
// opened from file:// in headless Chromium with every request that is not a
// file aborted (and counted as a failure): every bertlens output must draw
// (its root's data-state "ready"), show its tokens, and log no error.
// Screenshots: build/screenshots/notebook-export*.png.
//
//   node tests/notebook/check_export.mjs build/notebook/bertlens.html build/notebook/expected.json
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchChromium } from '../browser/server.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const SHOTS = path.join(ROOT, 'build', 'screenshots');
const [file, expectedFile] = process.argv.slice(2).map((p) => path.resolve(p));
const expected = JSON.parse(fs.readFileSync(expectedFile, 'utf8'));

/** A piece as the page spells it, without its word marker ("Ġmodel" -> "model"). */
const plain = (t) => t.replace(/^(##|\u0120|\u2581)/, '');

const { context, profile } = await launchChromium({ viewport: { width: 1100, height: 900 } });
const outside = [];
const errors = [];
let failed = null;
try {
  // nbconvert's own template asks for require.js and MathJax from a CDN:
  // aborted like everything else, but only a request from a bertlens frame,
  // or one the export does not name, fails the test.
  const exported = fs.readFileSync(file, 'utf8');
  await context.route('**/*', (route) => {
    const req = route.request();
    const u = req.url();
    if (/^(file|data|blob|about):/.test(u)) return route.continue();
    const fromTemplate = req.frame() === req.frame().page().mainFrame() && exported.includes(u.split('?')[0]);
    if (!fromTemplate) outside.push(u);
    return route.abort();
  });
  const page = context.pages()[0] || await context.newPage();
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  await page.goto(`file://${file}`);
  const roots = await page.$$('.bertlens-output');
  assert.equal(roots.length, expected.length, 'one bertlens output per drawing cell');
  await page.waitForFunction(() => [...document.querySelectorAll('.bertlens-output')].every((e) => ['ready', 'error'].includes(e.dataset.state)),
    null, { timeout: 60000 });
  fs.mkdirSync(SHOTS, { recursive: true });
  for (const [i, root] of roots.entries()) {
    const state = await root.getAttribute('data-state');
    const note = await root.$eval('.bertlens-note', (e) => e.textContent);
    assert.equal(state, 'ready', `output ${i}: ${state} ${note}`);
    const frame = await (await root.$('iframe')).contentFrame();
    const shown = await frame.evaluate(() => ({
      view: document.getElementById('view').dataset.view,
      text: document.getElementById('view').textContent,
      tokenInfo: document.getElementById('token-info').textContent,
      state: document.body.dataset.state,
      height: document.documentElement.scrollHeight,
    }));
    const want = expected[i].tokens;
    assert.match(shown.tokenInfo, new RegExp(`^${want.length} tokens`), `output ${i}: ${shown.tokenInfo}`);
    if (['head', 'heatmap', 'neuron'].includes(shown.view)) {
      for (const t of want) assert.ok(shown.text.includes(plain(t)), `output ${i} (${shown.view}): token ${JSON.stringify(t)} not shown`);
    }
    const box = await root.boundingBox();
    assert.ok(box.height >= shown.height - 4, `output ${i}: frame ${box.height} px for a page of ${shown.height} px`);
    await root.screenshot({ path: path.join(SHOTS, `notebook-export-${i}.png`) });
    console.log(`ok   output ${i}: ${shown.view} view ready, ${want.length} tokens, frame ${Math.round(box.height)} px`);
    if (expected[i].causal) {
      // A decoder's output: its heatmap draws the cells right of the diagonal as masked, and says so.
      await frame.evaluate(() => { document.body.dataset.state = 'loading'; });
      await frame.click('#view-tabs button[data-view="heatmap"]');
      await frame.waitForFunction(() => document.body.dataset.state === 'ready' && document.getElementById('view').dataset.view === 'heatmap');
      const hm = await frame.evaluate(() => {
        const c = document.querySelector('canvas.hm-cells');
        const px = (x, y) => Array.from(c.getContext('2d').getImageData(Math.floor(x * c.width), Math.floor(y * c.height), 1, 1).data.slice(0, 3));
        return { above: px(0.9, 0.1), below: px(0.1, 0.9), notes: document.getElementById('view').textContent };
      });
      assert.deepEqual(hm.above, [0xdf, 0xe3, 0xe8], 'a masked cell is drawn in the grid colour');
      assert.notDeepEqual(hm.below, [0xdf, 0xe3, 0xe8]);
      assert.match(hm.notes, /Causal attention \(a decoder\)/);
      await root.screenshot({ path: path.join(SHOTS, `notebook-export-${i}-heatmap.png`) });
      console.log(`ok   output ${i}: causal heatmap, masked cells drawn as such`);
    }
    // The tabs of views drawn from the attention's analyses (the viewer
    // computes them with the engine's C, lib/attn_analyze.js): offered by
    // head_view / model_view / neuron_view (every layer's attention), drawn
    // offline; not by show()'s kept snapshot of one view.
    const offered = await frame.evaluate(() => ['overview', 'rollout'].map((v) => !document.querySelector(`#view-tabs button[data-view="${v}"]`).hidden));
    assert.deepEqual(offered, [!!expected[i].tabs, !!expected[i].tabs], `output ${i}: the overview and rollout tabs`);
    if (expected[i].tabs) {
      for (const v of ['overview', 'rollout']) {
        await frame.evaluate(() => { document.body.dataset.state = 'loading'; });
        await frame.click(`#view-tabs button[data-view="${v}"]`);
        await frame.waitForFunction((id) => ['ready', 'error', 'needs-model'].includes(document.body.dataset.state) && document.getElementById('view').dataset.view === id, v, { timeout: 30000 });
        const got = await frame.evaluate(() => ({
          state: document.body.dataset.state,
          title: (document.querySelector('#view .view-title') || {}).textContent || '',
          heads: document.querySelectorAll('#view g.ov-head').length,
          canvas: !!document.querySelector('#view canvas.hm-cells'),
          notices: document.getElementById('notices') ? document.getElementById('notices').textContent : '',
        }));
        assert.equal(got.state, 'ready', `output ${i} ${v}: ${got.state} ${got.notices}`);
        if (v === 'overview') {
          const [, L, H] = got.title.match(/(\d+) layers × (\d+) heads/) || [];
          assert.ok(L && got.heads === L * H, `output ${i}: overview "${got.title}" with ${got.heads} heads drawn`);
          // "heads like this one": the distances computed from the snapshot too
          await frame.evaluate(() => { document.body.dataset.state = 'loading'; });
          await frame.selectOption('#view select.ov-rank', 'like');
          await frame.waitForFunction(() => ['ready', 'error', 'needs-model'].includes(document.body.dataset.state), null, { timeout: 30000 });
          const like = await frame.evaluate(() => ({ state: document.body.dataset.state, notes: document.querySelector('#view p.view-notes').textContent }));
          assert.equal(like.state, 'ready', `output ${i}: overview ranked by likeness`);
          assert.match(like.notes, /Jensen–Shannon distance/);
        } else {
          assert.match(got.title, /^Rollout/);
          assert.ok(got.canvas, `output ${i}: the rollout's heatmap`);
        }
        await root.screenshot({ path: path.join(SHOTS, `notebook-export-${i}-${v}.png`) });
        console.log(`ok   output ${i}: ${v} drawn offline from the snapshot (${got.title})`);
      }
    }
  }
  await page.screenshot({ path: path.join(SHOTS, 'notebook-export.png'), fullPage: true });
  assert.deepEqual(outside, [], 'requests that were not files');
  // (the template's aborted CDN scripts log load errors of their own)
  assert.deepEqual(errors.filter((e) => !/ERR_FAILED|net::|Failed to load resource/.test(e)), [], 'console errors');
} catch (e) {
  failed = e;
} finally {
  await context.close().catch(() => {});
  fs.rmSync(profile, { recursive: true, force: true });
}
if (failed) {
  console.error(`FAIL notebook export: ${failed.stack || failed}`);
  process.exit(1);
}
console.log('notebook export: every output drawn offline');
