// View layouts (web/js/views/layout.js): every view fits the box it is
// given — the embed frames of issue 8 (720×560, 360×480) for inputs up to
// 64 tokens, and a 390-px phone — and the embed snippet's preferred sizes fit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  heatmapLayout, headLayout, swatchLayout, modelLayout, neuronLayout, HEATMAP, NEURON,
} from '../../web/js/views/layout.js';
import { preferredSize } from '../../web/js/views/index.js';

// What an embed draws around a stage (view padding, title, info line, bars,
// caption) — measured on the page in these frames; generous on purpose.
const FRAMES = [{ width: 720, height: 560 }, { width: 360, height: 480 }];
const stageBox = (f, chrome) => ({ width: f.width - 16, height: f.height - chrome });

test('heatmap fits both embed frames for 1..64 tokens, without a scroll box', () => {
  for (const f of FRAMES) {
    const box = stageBox(f, 130);
    for (const K of [1, 5, 16, 33, 64]) {
      for (const longestLabel of [3, 14, 40]) {
        const g = heatmapLayout({ K, longestLabel, ...box });
        assert.ok(!g.scroll, `${f.width}x${f.height} K=${K}: needs a scroll box`);
        assert.ok(g.W <= box.width, `${f.width}x${f.height} K=${K}: W ${g.W} > ${box.width}`);
        assert.ok(g.H <= box.height, `${f.width}x${f.height} K=${K}: H ${g.H} > ${box.height}`);
        assert.equal(g.side, g.cell * K);
        assert.ok(g.cell >= 2);
        assert.ok(g.step * g.cell >= g.fontSize - 1, 'labels drawn never overlap');
      }
    }
  }
});

test('heatmap on the page with the screen height: cells grow past 30 px (up to bigCell) only as far as matrix, labels and legend fit it', () => {
  const width = 1244;
  // 1280x720 below an 82-px bar, title and info line: about 560 px.
  const plain = heatmapLayout({ K: 11, longestLabel: 5, width });
  const big = heatmapLayout({ K: 11, longestLabel: 5, width, screen: 560 });
  assert.equal(plain.cell, HEATMAP.maxCell);
  assert.ok(big.cell > plain.cell && big.cell <= HEATMAP.bigCell, `cells ${big.cell}`);
  assert.ok(big.H <= 560, `stage ${big.H} px in a 560-px screen`);
  assert.ok(heatmapLayout({ K: 11, longestLabel: 5, width, screen: 560 + 11 * 4 }).cell > big.cell, 'a taller screen, larger cells');
  assert.equal(heatmapLayout({ K: 4, longestLabel: 5, width, screen: 2000 }).cell, HEATMAP.bigCell, 'at most bigCell');
  assert.ok(heatmapLayout({ K: 11, longestLabel: 5, width: 420, screen: 2000 }).W <= 420, 'never wider than the box');
  // A short screen or many tokens: as before (the page scrolls).
  for (const [K, screen] of [[11, 200], [40, 560], [64, 900], [300, 900]]) {
    const a = heatmapLayout({ K, longestLabel: 8, width });
    const b = heatmapLayout({ K, longestLabel: 8, width, screen });
    assert.equal(b.cell, a.cell, `K=${K} screen ${screen}`);
    assert.equal(b.side, a.side);
  }
});

test('head view on the page with the screen height: rows grow from 22 to at most 30 px, labels to 14, only as far as all rows fit', () => {
  const plain = headLayout({ K: 9, longestLabel: 5, width: 1330 });
  const big = headLayout({ K: 9, longestLabel: 5, width: 1330, screen: 500 });
  assert.equal(plain.rowH, 22);
  assert.equal(big.rowH, 30);
  assert.equal(big.font, 14);
  assert.ok(big.gap > plain.gap && big.W <= 1330, `gap ${plain.gap} -> ${big.gap}`);
  const some = headLayout({ K: 20, longestLabel: 5, width: 1330, screen: 560 });
  assert.ok(some.rowH > 22 && some.H <= 560, `rows ${some.rowH}, stage ${some.H}`);
  for (const [K, screen] of [[40, 560], [81, 900], [512, 900]]) {
    const a = headLayout({ K, width: 1330 });
    const b = headLayout({ K, width: 1330, screen });
    assert.deepEqual([b.rowH, b.font, b.gap], [a.rowH, a.font, a.gap], `K=${K}: as before`);
  }
  assert.ok(headLayout({ K: 9, width: 370, screen: 844 }).W <= 370, 'a phone keeps its width');
});

test('neuron view on the page with the screen height: vector cells grow from 7 to 10 px and rows from 17 to 24 px, as far as they fit', () => {
  const plain = neuronLayout({ R: 9, d: 32, width: 1330 });
  const big = neuronLayout({ R: 9, d: 32, width: 1330, screen: 500 });
  assert.deepEqual([plain.cw, plain.rowH], [7, 17]);
  assert.deepEqual([big.mode, big.cw, big.rowH], ['wide', 10, 24]);
  assert.ok(big.W <= 1330 && big.H <= 500, `${big.W}x${big.H}`);
  const some = neuronLayout({ R: 22, d: 32, width: 1330, screen: 560 });
  assert.ok(some.rowH > 17 && some.H <= 560, `rows ${some.rowH}, stage ${some.H}`);
  // Stacked on a phone: both bands in the screen, else as before.
  const phone = neuronLayout({ R: 9, d: 32, width: 370, screen: 844 });
  assert.equal(phone.mode, 'stacked');
  assert.ok(phone.W <= 370 && phone.H <= 844, `${phone.W}x${phone.H}`);
  const long = neuronLayout({ R: 30, d: 32, width: 370, screen: 844 });
  assert.equal(long.rowH, neuronLayout({ R: 30, d: 32, width: 370 }).rowH);
  const many = neuronLayout({ R: 100, d: 32, width: 1330, screen: 900 });
  assert.deepEqual([many.cw, many.rowH], [neuronLayout({ R: 100, d: 32, width: 1330 }).cw, 13]);
});

test('heatmap on a 390-px phone: page width kept; long inputs scroll in their own box', () => {
  const width = 390 - 20;
  const short = heatmapLayout({ K: 22, longestLabel: 10, width });
  assert.ok(!short.scroll && short.W <= width, `W ${short.W}`);
  const desk = heatmapLayout({ K: 40, longestLabel: 10, width: 1244 });
  assert.ok(desk.side <= 640 && desk.cell === 16, `desktop matrix ${desk.side} px, cells ${desk.cell}`);
  const long = heatmapLayout({ K: 300, longestLabel: 10, width });
  assert.ok(long.scroll, 'a 300-token matrix scrolls inside its box');
  assert.ok(long.labelW <= width * 0.2 + 1);
});

test('head view fits both embed frames for 64 tokens; swatches fit one row', () => {
  for (const f of FRAMES) {
    const box = stageBox(f, 170);
    for (const K of [4, 30, 64]) {
      const g = headLayout({ K, longestLabel: 12, ...box });
      assert.ok(g.W <= box.width, `W ${g.W} > ${box.width}`);
      assert.ok(g.H <= box.height, `${f.width}x${f.height} K=${K}: H ${g.H} > ${box.height}`);
      assert.ok(g.xR - g.xL >= 60, 'room for lines between the columns');
    }
    const sw = swatchLayout({ H: 12, width: box.width });
    assert.ok(sw.W <= box.width, `swatches ${sw.W} > ${box.width}`);
  }
  // Any frame height: the stage never ends below it (rounding included).
  for (let height = 120; height <= 700; height += 7) {
    for (const K of [17, 40, 63, 64]) {
      assert.ok(headLayout({ K, width: 344, height }).H <= height || K * 4 + 16 > height, `K=${K} in ${height}px`);
      const hm = heatmapLayout({ K, width: 344, height });
      assert.ok(hm.H <= height || hm.cell === 2, `heatmap K=${K} in ${height}px: ${hm.H}`);
      const nv = neuronLayout({ R: K, d: 32, width: 344, height });
      assert.ok(nv.H <= height || nv.rowH === 2, `neuron K=${K} in ${height}px: ${nv.H}`);
    }
  }
  const phone = headLayout({ K: 22, longestLabel: 12, width: 370 });
  assert.ok(phone.W <= 370);
});

test('model view shows all 12 heads in one row on a phone and in both frames', () => {
  for (const [width, height] of [[370, null], [704, 560 - 100], [344, 480 - 100]]) {
    for (const L of [6, 12]) {
      const g = modelLayout({ L, H: 12, width, height });
      assert.ok(g.W <= width, `${width}: W ${g.W}`);
      assert.equal(g.gridW, 12 * (g.S + g.gap));
      if (height) assert.ok(g.H <= height, `${width}x${height} L=${L}: H ${g.H}`);
      assert.ok(g.S >= 6);
    }
  }
});

test('neuron view: wide on a desktop, stacked on a phone, compact in a small frame; columns never overlap', () => {
  const wide = neuronLayout({ R: 22, d: 32, width: 1200 });
  assert.equal(wide.mode, 'wide');
  const phone = neuronLayout({ R: 22, d: 32, width: 370, norms: true });
  assert.equal(phone.mode, 'stacked');
  // DeBERTa's three terms and their sum: four number columns, on a phone too
  const deberta = neuronLayout({ R: 22, d: 64, width: 1260, cols: 4 });
  const debPhone = neuronLayout({ R: 22, d: 64, width: 370, cols: 4 });
  for (const g of [wide, phone, deberta, debPhone]) {
    assert.ok(g.x.k + g.stripW <= g.x.p, 'key strip before q×k strip');
    g.x.nums.forEach((x, c) => assert.ok(x + g.num <= (c + 1 < g.x.nums.length ? g.x.nums[c + 1] : g.x.soft), `number column ${c} before the next`));
    assert.ok(g.num >= NEURON.numMin, `columns of ${g.num} px`);
    assert.ok(g.numbers, 'numbers are drawn');
  }
  assert.equal(deberta.x.nums.length, 4);
  assert.equal(deberta.mode, 'wide');
  assert.equal(debPhone.mode, 'stacked');
  assert.ok(debPhone.W <= 370, `DeBERTa on a phone: W ${debPhone.W}`);
  assert.ok(phone.W <= 370, `phone W ${phone.W}`);
  assert.ok(phone.y.numbers >= phone.y.rows + 22 * phone.rowH, 'numbers band below the vectors band');
  for (const f of FRAMES) {
    const box = stageBox(f, 170);
    for (const R of [5, 22, 64]) {
      const g = neuronLayout({ R, d: 32, longestLabel: 12, ...box });
      assert.ok(g.W <= box.width, `${f.width}x${f.height} R=${R}: W ${g.W}`);
      assert.ok(g.H <= box.height, `${f.width}x${f.height} R=${R}: H ${g.H} > ${box.height} (${g.mode})`);
    }
  }
  assert.equal(neuronLayout({ R: 64, d: 32, width: 344, height: 310 }).mode, 'compact');
  const withNorms = neuronLayout({ R: 64, d: 32, longestLabel: 12, width: 344, height: 300, norms: true });
  assert.equal(withNorms.mode, 'compact');
  assert.ok(withNorms.W <= 344, `compact with norms: W ${withNorms.W}`);
});

test('preferred embed sizes fit their view', () => {
  for (const n of [3, 16, 40, 64]) {
    const hm = preferredSize('heatmap', n);
    const g = heatmapLayout({ K: n, longestLabel: 12, width: hm.width - 16, height: hm.height - 96 });
    assert.ok(!g.scroll && g.cell >= 6, `heatmap n=${n}: cell ${g.cell} in ${hm.width}x${hm.height}`);
    const hv = preferredSize('head', n);
    const h = headLayout({ K: n, longestLabel: 12, width: hv.width - 16, height: hv.height - 140 });
    assert.ok(h.rowH >= 9, `head n=${n}: rows ${h.rowH}px in ${hv.width}x${hv.height}`);
    const nv = preferredSize('neuron', n);
    const ne = neuronLayout({ R: n, d: 32, longestLabel: 12, width: nv.width - 16, height: nv.height - 126 });
    assert.ok(ne.numbers && ne.mode !== 'compact', `neuron n=${n}: ${ne.mode}, rows ${ne.rowH}px`);
    for (const s of [hm, hv, nv, preferredSize('model', n)]) {
      assert.ok(s.width >= 320 && s.width <= 960 && s.height >= 240 && s.height <= 1400, JSON.stringify(s));
    }
  }
  assert.ok(preferredSize('heatmap', 64).height < preferredSize('heatmap', 200).height + 1);
  assert.throws(() => preferredSize('nope', 3), /unknown view/);
  assert.equal(HEATMAP.minCell, 3);
});
