// Head palette: contrast on both themes' backgrounds and distinctness for
// readers with deuteranopia or protanopia (web/js/views/palette.js).
// References: WCAG 2 contrast examples, CIE L*a*b* of sRGB primaries.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  luminance, contrast, toLab, deltaE, simulate, minPairwiseDeltaE,
  HEAD_PALETTE, HEAD_MIN_CONTRAST, HEAD_MIN_DE, THEME_BACKGROUNDS, headColour,
} from '../../web/js/views/palette.js';

const close = (a, b, tol, what) => assert.ok(Math.abs(a - b) <= tol, `${what}: ${a} vs ${b}`);

test('WCAG luminance and contrast match published values', () => {
  close(luminance('#ffffff'), 1, 1e-12, 'white');
  close(luminance('#000000'), 0, 1e-12, 'black');
  close(contrast('#000000', '#ffffff'), 21, 1e-9, 'black on white');
  // #767676 is the usual "lightest grey with 4.5:1 on white" (4.54:1).
  close(contrast('#767676', '#ffffff'), 4.54, 0.01, '#767676 on white');
  // Tableau 10's yellow, head 5 before this palette: 1.6:1 on white (issue 8).
  assert.ok(contrast('#edc948', '#ffffff') < 1.7);
});

test('CIE L*a*b* of sRGB red and the colour difference', () => {
  const [L, a, b] = toLab('#ff0000');
  close(L, 53.24, 0.02, 'L*');
  close(a, 80.09, 0.05, 'a*');
  close(b, 67.20, 0.05, 'b*');
  close(deltaE('#ffffff', '#000000'), 100, 0.01, 'white-black');
});

test('CVD simulation keeps greys and merges red with green', () => {
  for (const g of ['#000000', '#777777', '#ffffff']) {
    for (const kind of ['deutan', 'protan']) {
      const s = simulate(g, kind);
      for (const c of s) assert.ok(Math.abs(c - parseInt(g.slice(1, 3), 16)) <= 2, `${g} ${kind} -> ${s}`);
    }
  }
  const normal = deltaE('#d62728', '#2ca02c');
  for (const kind of ['deutan', 'protan']) {
    const seen = deltaE(simulate('#d62728', kind), simulate('#2ca02c', kind));
    assert.ok(seen < normal / 2, `${kind}: red/green ΔE ${seen.toFixed(1)} vs normal ${normal.toFixed(1)}`);
  }
});

test('theme backgrounds are the ones app.css uses', () => {
  const css = readFileSync(new URL('../../web/css/app.css', import.meta.url), 'utf8');
  const bgs = [...css.matchAll(/--bg:\s*(#[0-9a-f]{6})/gi)].map((m) => m[1].toLowerCase());
  assert.deepEqual(bgs, [THEME_BACKGROUNDS.light, THEME_BACKGROUNDS.dark]);
});

test('12 head colours, each >= 3:1 on the light and the dark background', () => {
  assert.equal(HEAD_PALETTE.length, 12);
  assert.equal(new Set(HEAD_PALETTE).size, 12);
  for (const [theme, bg] of Object.entries(THEME_BACKGROUNDS)) {
    for (const [h, c] of HEAD_PALETTE.entries()) {
      const r = contrast(c, bg);
      assert.ok(r >= HEAD_MIN_CONTRAST, `head ${h} ${c} on ${theme} ${bg}: ${r.toFixed(2)}:1`);
    }
  }
  assert.equal(headColour(13), HEAD_PALETTE[1]);
});

test('heads stay apart under normal vision, deuteranopia and protanopia', () => {
  for (const kind of ['normal', 'deutan', 'protan']) {
    const d = minPairwiseDeltaE(HEAD_PALETTE, kind);
    assert.ok(d >= HEAD_MIN_DE[kind], `${kind}: smallest ΔE*ab ${d.toFixed(2)} < ${HEAD_MIN_DE[kind]}`);
  }
  // The check can fail: Tableau 10 (the old palette's start) does under deutan.
  const tableau = ['#4e79a7', '#f28e2c', '#e15759', '#76b7b2', '#59a14f', '#edc949', '#af7aa1', '#ff9da7', '#9c755f', '#bab0ab'];
  assert.ok(minPairwiseDeltaE(tableau, 'deutan') < HEAD_MIN_DE.deutan);
});
