// Head palette: contrast on both themes' backgrounds and distinctness for
// readers with deuteranopia or protanopia (web/js/views/palette.js).
// References: WCAG 2 contrast examples, CIE L*a*b* of sRGB primaries.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  luminance, contrast, toLab, deltaE, simulate, minPairwiseDeltaE,
  HEAD_PALETTE, HEAD_MIN_CONTRAST, HEAD_MIN_DE, THEME_BACKGROUNDS, headColour,
  deltaE2000, minPairwiseDeltaE2000, hueChroma, mostInHueArc, HEAD_MIN_DE2000, HEAD_MAX_PER_ARC,
} from '../../web/js/views/palette.js';

// The palette before issue 26: five violets, 4.2 apart (ΔE00) for a reader
// with deuteranopia; the checks below must fail on it.
const OLD_PALETTE = ['#3c96ff', '#f05a00', '#879678', '#8700ff', '#c31e00', '#4b6969', '#c378a5', '#694be1', '#e1784b', '#963cb4', '#b43c3c', '#964b96'];

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

test('CIEDE2000 matches Sharma, Wu and Dalal (2005), the formula\'s published test data', () => {
  // Pairs 1, 7, 17, 25, 8, 13(ish hue wrap), 34 and 30 of their table (also
  // what colour-science's delta_E(method="CIE 2000") gives).
  const pairs = [
    [[50, 2.6772, -79.7751], [50, 0, -82.7485], 2.0425],
    [[50, 0, 0], [50, -1, 2], 2.3669],
    [[50, 2.5, 0], [73, 25, -18], 27.1492],
    [[60.2574, -34.0099, 36.2677], [60.4626, -34.1751, 39.4387], 1.2644],
    [[50, 2.5, 0], [50, 3.1736, 0.5854], 1.0],
    [[50, -0.001, 2.49], [50, 0.0009, -2.49], 4.8045],
    [[22.7233, 20.0904, -46.694], [23.0331, 14.973, -42.5619], 2.0373],
    [[90.8027, -2.0831, 1.441], [91.1528, -1.6435, 0.0447], 1.4441],
  ];
  for (const [a, b, want] of pairs) {
    close(deltaE2000({ lab: a }, { lab: b }), want, 1e-4, `${a} / ${b}`);
    close(deltaE2000({ lab: b }, { lab: a }), want, 1e-4, `${b} / ${a} (symmetric)`);
  }
  close(deltaE2000('#777777', '#777777'), 0, 1e-12, 'a colour and itself');
});

test('12 head colours that stay distinct with all heads on: CIEDE2000 and hue spread (issue 26 item 4)', () => {
  for (const kind of ['normal', 'deutan', 'protan']) {
    const d = minPairwiseDeltaE2000(HEAD_PALETTE, kind);
    assert.ok(d >= HEAD_MIN_DE2000[kind], `${kind}: smallest ΔE00 ${d.toFixed(2)} < ${HEAD_MIN_DE2000[kind]}`);
  }
  assert.ok(mostInHueArc(HEAD_PALETTE, 60) <= HEAD_MAX_PER_ARC, `${mostInHueArc(HEAD_PALETTE, 60)} colours within 60° of hue`);
  // The checks fail on the old palette: its violets crowd one hue arc, and
  // two of them are 4.2 apart under deuteranopia (7.1 with normal vision).
  assert.ok(minPairwiseDeltaE2000(OLD_PALETTE, 'deutan') < HEAD_MIN_DE2000.deutan);
  assert.ok(minPairwiseDeltaE2000(OLD_PALETTE, 'normal') < HEAD_MIN_DE2000.normal);
  assert.ok(mostInHueArc(OLD_PALETTE, 60) > HEAD_MAX_PER_ARC);
  const violets = OLD_PALETTE.filter((c) => { const { hue, chroma } = hueChroma(c); return chroma > 35 && hue >= 290 && hue < 350; });
  assert.equal(violets.length, 5, 'the old palette\'s five violets');
  assert.ok(HEAD_PALETTE.filter((c) => { const { hue, chroma } = hueChroma(c); return chroma > 35 && hue >= 290 && hue < 350; }).length <= 2);
});

test('one colour per pattern class, the overview\'s and the Corpus view\'s classes, told apart with and without colour blindness', async () => {
  const { CLASS_COLOURS, CLASS_MIN_DE2000, classColour } = await import('../../web/js/views/palette.js');
  const { CLASSES } = await import('../../web/js/views/overview.js').catch(() => ({ CLASSES: null }));
  const { CORPUS_CLASSES } = await import('../../web/js/lib/corpus_export.js');
  assert.deepEqual(Object.keys(CLASS_COLOURS), [...CORPUS_CLASSES]);
  if (CLASSES) assert.deepEqual(CLASSES, [...CORPUS_CLASSES]);
  const colours = Object.values(CLASS_COLOURS);
  for (const bg of Object.values(THEME_BACKGROUNDS)) {
    for (const c of colours) assert.ok(contrast(c, bg) >= HEAD_MIN_CONTRAST, `${c} on ${bg}: ${contrast(c, bg).toFixed(2)}`);
  }
  for (const kind of ['normal', 'deutan', 'protan']) {
    const min = minPairwiseDeltaE2000(colours, kind);
    assert.ok(min >= CLASS_MIN_DE2000[kind], `${kind}: smallest ΔE00 ${min.toFixed(1)}`);
  }
  assert.equal(classColour('no such class'), CLASS_COLOURS.heterogeneous);
  // the views take their colours from here, and define none of their own
  for (const f of ['overview.js', 'corpus_chart.js']) {
    const src = readFileSync(new URL(`../../web/js/views/${f}`, import.meta.url), 'utf8');
    assert.match(src, /import \{[^}]*classColour[^}]*\} from '\.\/palette\.js'/, `${f} imports classColour`);
    for (const c of colours) assert.ok(!src.includes(c), `${f} spells ${c} itself`);
  }
});
