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

// The head view at 512 tokens paints only the band of lines around the
// window (views/head.js bandOf) and repaints it on scroll. Wherever the
// window is, the band must cover it and show what the whole picture (the
// one the export embeds) shows in those rows.
scenario('head view at 512 tokens: after scrolling, the painted band covers the window and equals the same rows of the whole picture', async ({ page, base, shot }) => {
  const long = Array.from({ length: 700 }, (_, i) => `word${i % 37}`).join(' ');
  await open(page, base, { text: long, view: 'head' });
  assert.match(await page.textContent('#token-info'), /^512 tokens/);
  assert.ok(Number(await page.getAttribute('.hv-stage', 'data-lines')) > 4000, 'enough lines for the export to embed the picture');
  const offsets = new Set();
  await page.evaluate(() => {
    window.__long = [];
    new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__long.push(e); }).observe({ type: 'longtask' });
  });
  let longest = 0;
  for (const where of [0, 0.3, 0.7, 1]) {
    const t0 = await page.evaluate((f) => {
      const t = performance.now();
      window.scrollTo(0, f * (document.documentElement.scrollHeight - innerHeight));
      return t;
    }, where);
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    // the band is repainted in pieces (views/head.js repaint): wait for its end
    await page.waitForFunction(() => !document.querySelector('.hv-stage').hasAttribute('data-painting'));
    // tasks from the scroll to the repainted band (the checks below paint the whole picture: not counted)
    const t1 = await page.evaluate(() => performance.now());
    longest = Math.max(longest, ...(await page.evaluate(([a, b]) => window.__long.filter((e) => e.startTime >= a && e.startTime < b).map((e) => e.duration), [t0, t1])));
    const r = await page.$eval('canvas.hv-lines', (c) => {
      const box = c.getBoundingClientRect();
      const stage = c.parentElement.getBoundingClientRect();
      const whole = c.blExport().image; // the whole picture, painted for the export
      const y0 = Math.round(-c.blExport().dy * (c.width / box.width)); // band top, device px
      const a = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      const b = whole.getContext('2d').getImageData(0, y0, c.width, c.height).data;
      // pixels more than 64 levels apart, per stripe of 32 rows (the worst)
      let differ = 0;
      let ink = 0;
      const stripe = 32 * c.width;
      for (let s0 = 0; s0 < a.length / 4; s0 += stripe) {
        let d = 0;
        for (let p = s0; p < Math.min(a.length / 4, s0 + stripe); p++) {
          const i = 4 * p;
          if (a[i + 3]) ink++;
          if (Math.max(Math.abs(a[i] - b[i]), Math.abs(a[i + 1] - b[i + 1]), Math.abs(a[i + 2] - b[i + 2]), Math.abs(a[i + 3] - b[i + 3])) > 64) d++;
        }
        differ = Math.max(differ, d / stripe);
      }
      return {
        offset: box.top - stage.top - y0 / (c.width / box.width), // where the whole picture's top is in the stage
        top: box.top, bottom: box.bottom, stageTop: stage.top, stageBottom: stage.bottom, vh: innerHeight,
        wholeH: whole.height, wholeCss: whole.height / (c.width / box.width), bandH: c.height, differ, ink, px: a.length / 4,
      };
    });
    const linesTop = r.stageTop + r.offset; // the lines' area, in the window
    const seen = [Math.max(linesTop, 0), Math.min(linesTop + r.wholeCss, r.vh)];
    offsets.add(Math.round(r.offset * 10) / 10);
    assert.equal(offsets.size, 1, `scrolled to ${where}: the band sits where its rows are in the whole picture (${[...offsets]})`);
    assert.ok(r.bandH < r.wholeH, `only a band is painted (${r.bandH} of ${r.wholeH} px)`);
    assert.ok(r.top <= seen[0] + 1 && r.bottom >= seen[1] - 1,
      `scrolled to ${where}: band ${r.top}..${r.bottom} covers the lines in the window, ${seen.join('..')}`);
    assert.ok(r.ink > r.px / 50, `scrolled to ${where}: lines painted (${r.ink} px)`);
    // The rasteriser blends the same lines a little differently on a canvas
    // of another size (measured: at most ~1 % of a stripe's pixels more than
    // 64 levels apart); a band off by one row differs in ~55 %.
    console.log(`#   scrolled to ${where}: worst stripe ${(100 * r.differ).toFixed(2)} % of pixels differ`);
    assert.ok(r.differ <= 0.03, `scrolled to ${where}: ${(100 * r.differ).toFixed(1)} % of a stripe's pixels differ from the whole picture`);
  }
  console.log(`#   scrolling: longest main-thread task ${longest ? longest.toFixed(0) : '< 50'} ms (the band repainted in pieces; timed in make bench)`);
  await shot(page, 'head-512-scrolled');
}, { viewport: { width: 1280, height: 800 }, timeout: 300000 });
