// heatmap_tasks.scenarios.mjs — a 512-token heatmap redraws without one
// long main-thread task (issue 35 item 3), checked by what it does, never by
// how long it takes: the drawing is not done in the task of the change that
// asks for it (views/heatmap.js spreads it over tasks, common.js sliced), and
// a redraw with the same tokens leaves the labels and the SVG's attributes
// untouched (setting them again had Chromium lay out every label again).

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { scenario, ready, ROOT } from './harness.mjs';

scenario('heatmap at 512 tokens: a head switch draws after its own task and leaves the unchanged labels and SVG attributes alone', async ({ page, base, shot }) => {
  const index = JSON.parse(fs.readFileSync(path.join(ROOT, 'tests/fixtures/analyze/index.json'), 'utf8'));
  const c = index.cases.find((x) => x.name === 'max512');
  await page.goto(`${base}?${new URLSearchParams({ text: c.text, view: 'heatmap', layer: '2', head: '1' })}`);
  await ready(page);
  assert.match(await page.textContent('#token-info'), /^512 tokens/);
  const before = await page.evaluate(() => ({
    title: document.querySelector('#view .view-title').textContent,
    labels: [...document.querySelectorAll('#view text.row-label')].map((t) => t.textContent),
  }));
  assert.match(before.title, /head 1/);
  // Watch the SVG, then switch the head: the run is held, only the drawing changes.
  const sync = await page.evaluate(() => {
    window.__mut = [];
    const svg = document.querySelector('#view svg.hm-svg');
    new MutationObserver((ms) => {
      for (const m of ms) {
        const el = m.target.nodeType === 1 ? m.target : m.target.parentNode;
        window.__mut.push(`${m.type} ${el.tagName}.${el.getAttribute('class') || ''}${m.attributeName ? ` @${m.attributeName}` : ''}`);
      }
    }).observe(svg, { subtree: true, attributes: true, childList: true, characterData: true });
    document.body.dataset.state = 'loading';
    const sel = document.getElementById('head');
    sel.value = '2';
    sel.dispatchEvent(new Event('change', { bubbles: true }));
    return document.querySelector('#view .view-title').textContent; // right after the change, in its task
  });
  assert.equal(sync, before.title, 'the 512-token heatmap was drawn in the task of the change (one long task)');
  await ready(page);
  const after = await page.evaluate(() => ({
    title: document.querySelector('#view .view-title').textContent,
    labels: [...document.querySelectorAll('#view text.row-label')].map((t) => t.textContent),
    mut: window.__mut,
  }));
  assert.match(after.title, /head 2/);
  assert.deepEqual(after.labels, before.labels);
  const touched = after.mut.filter((m) => /(row|col)-label|SVG\.hm-svg|G\.(rows|cols|pinned) |RECT\.pin-bg/.test(m));
  assert.deepEqual(touched, [], `a redraw with the same tokens touched ${touched.length} label or SVG nodes: ${touched.slice(0, 5).join('; ')}`);
  await shot(page, 'heatmap-512-head-switch');
});
