// redraw.scenarios.mjs — the model view paints its thumbnails from a cache
// kept per run (views/model.js: pooled once per run, mode and axis; an atlas
// per size and theme; nothing repainted when only the marks change). A
// stale cache would show the previous run's pixels: after every kind of
// change, the canvas must equal a fresh page's canvas for the same URL.

import assert from 'node:assert/strict';
import { scenario, ready, clickAndRedraw, fx } from './harness.mjs';

const PAIR = { text: fx.text, text_b: fx.text_b };

async function open(page, base, params) {
  await page.goto(`${base}?${new URLSearchParams(params)}`);
  await ready(page);
}

/** The thumbnails canvas as [width, height, FNV-1a hash of its RGBA bytes]. */
const pixels = (page) => page.$eval('canvas.mv-thumbs', (c) => {
  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  let h = 0x811c9dc5;
  for (let i = 0; i < d.length; i++) h = Math.imul(h ^ d[i], 0x01000193) >>> 0;
  return [c.width, c.height, h];
});

/** Click thumbnail (l, h) of the model view and wait for the redraw. */
async function clickThumb(page, l, h) {
  await page.$eval('rect.mv-hit', (r) => r.scrollIntoView({ block: 'center' }));
  const b = await page.$eval('rect.mv-hit', (r) => { const x = r.getBoundingClientRect(); return { x: x.x, y: x.y, w: x.width, h: x.height }; });
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await page.mouse.click(b.x + (h + 0.5) * (b.w / 12), b.y + (l + 0.5) * (b.h / 6));
  await ready(page);
}

scenario('model view cache: after ablation clicks, mode, axis, theme and size changes the thumbnails equal a fresh page\'s', async ({ page, base, context, shot }) => {
  const fresh = await context.newPage();
  const same = async (what) => {
    await fresh.setViewportSize(page.viewportSize());
    await open(fresh, base, Object.fromEntries(new URL(page.url()).searchParams));
    assert.deepEqual(await pixels(page), await pixels(fresh), `${what}: thumbnails differ from a fresh page's (${page.url()})`);
  };
  await open(page, base, { ...PAIR, view: 'model' });
  const plain = await pixels(page);
  await page.click('#ablation .abl-toggle');
  await clickThumb(page, 1, 4); // switch layer 1, head 4 off: a new run
  assert.notDeepEqual(await pixels(page), plain, 'switching a head off changes the thumbnails');
  await same('head 1:4 off');
  await clickThumb(page, 3, 0);
  await same('heads 1:4 and 3:0 off');
  await clickThumb(page, 1, 4); // back on
  await same('head 3:0 off');
  await page.click('#ablation .abl-toggle'); // the mode alone: nothing to repaint
  await same('ablation mode off');
  await clickAndRedraw(page, '#mode [data-mode="norm"]');
  await same('norms');
  await clickAndRedraw(page, '#hide');
  await same('[CLS]/[SEP] hidden');
  await clickAndRedraw(page, '#words');
  await same('words merged');
  await clickAndRedraw(page, '#theme-toggle');
  await same('dark theme');
  // A new size: the page redraws 150 ms after the last resize event.
  await page.evaluate(() => { window.blDrawn = 0; new MutationObserver((m, o) => { window.blDrawn = 1; o.disconnect(); }).observe(document.body, { attributes: true, attributeFilter: ['data-render-ms'] }); });
  await page.setViewportSize({ width: 700, height: 800 });
  await page.waitForFunction(() => window.blDrawn === 1);
  await same('narrower window');
  await shot(page, 'model-cache-checked');
  await fresh.close();
}, { viewport: { width: 1280, height: 800 } });
