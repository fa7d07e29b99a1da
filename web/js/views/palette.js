// palette.js — colour arithmetic the views rely on, with no DOM and no D3 so
// node's test runner checks it (tests/web/palette.test.mjs):
//   WCAG 2 relative luminance and contrast ratio,
//   CIE L*a*b* (D65) and the CIE76 colour difference ΔE*ab,
//   colour-vision-deficiency simulation (Machado, Oliveira & Fernandes 2009,
//   severity 1.0, applied to linear-light sRGB),
// the 12-colour head palette, and the one colour of each attention pattern
// class (CLASS_COLOURS: the heads overview and the Corpus view both use it).
//
// How the palette was chosen (issue 26): every sRGB colour on an 18-level
// grid (refined on a 35-level one) with >= 3:1 contrast against both themes'
// backgrounds was a candidate; a coordinate search picked 12 maximizing the
// smallest CIEDE2000 difference (ΔE00) between any two under normal vision,
// deuteranopia and protanopia at once; the order puts the most distinct
// first (each next head the farthest from those before it), so a model with
// few heads gets the most distinct few. The palette before was chosen by
// ΔE*ab (CIE76), which overrates differences of saturated blues and violets:
// it held five violets, 4.2 apart in ΔE00 for a deuteranope, a purple mush
// with all heads on.
// The resulting guarantees (asserted in tests/web/palette.test.mjs):
//   contrast against both theme backgrounds       >= 3:1  (HEAD_MIN_CONTRAST)
//   smallest pairwise ΔE00, normal/deutan/protan  >= HEAD_MIN_DE2000
//   smallest pairwise ΔE*ab, normal/deutan/protan >= HEAD_MIN_DE
//   most colours within one 60° arc of hue        <= HEAD_MAX_PER_ARC
// Heads beyond 12 (models with more heads) reuse the palette with a dashed
// stroke in the head view's key; their colours repeat.

export const HEAD_MIN_CONTRAST = 3;

/** 0..255 sRGB channel -> linear light 0..1. */
function toLinear(c) {
  const s = c / 255;
  return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
}

function fromLinear(v) {
  const x = Math.max(0, Math.min(1, v));
  const s = x <= 0.0031308 ? 12.92 * x : 1.055 * x ** (1 / 2.4) - 0.055;
  return Math.round(s * 255);
}

/** '#rrggbb' -> [r, g, b] in 0..255. */
export function parseHex(hex) {
  const m = /^#?([0-9a-f]{6})$/i.exec(hex);
  if (!m) throw new Error(`not a #rrggbb colour: ${hex}`);
  const n = parseInt(m[1], 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

export function toHex([r, g, b]) {
  return `#${[r, g, b].map((c) => c.toString(16).padStart(2, '0')).join('')}`;
}

/** WCAG 2 relative luminance of an sRGB colour. */
export function luminance(rgb) {
  const [r, g, b] = (typeof rgb === 'string' ? parseHex(rgb) : rgb).map(toLinear);
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** WCAG 2 contrast ratio (1..21) between two colours. */
export function contrast(a, b) {
  const la = luminance(a);
  const lb = luminance(b);
  return (Math.max(la, lb) + 0.05) / (Math.min(la, lb) + 0.05);
}

// Machado et al. 2009, severity 1.0, rows act on linear [r, g, b].
const CVD = {
  protan: [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]],
  deutan: [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.011820, 0.042940, 0.968881]],
};

/** How a colour looks to a reader with protanopia or deuteranopia
 *  ('protan' | 'deutan'; 'normal' returns the colour). */
export function simulate(rgb, kind) {
  const c = typeof rgb === 'string' ? parseHex(rgb) : rgb;
  if (kind === 'normal') return c;
  const m = CVD[kind];
  if (!m) throw new Error(`unknown vision ${kind}`);
  const lin = c.map(toLinear);
  return m.map((row) => fromLinear(row[0] * lin[0] + row[1] * lin[1] + row[2] * lin[2]));
}

/** sRGB -> CIE L*a*b* (D65 white). */
export function toLab(rgb) {
  const [r, g, b] = (typeof rgb === 'string' ? parseHex(rgb) : rgb).map(toLinear);
  const X = (0.4124564 * r + 0.3575761 * g + 0.1804375 * b) / 0.95047;
  const Y = 0.2126729 * r + 0.7151522 * g + 0.0721750 * b;
  const Z = (0.0193339 * r + 0.1191920 * g + 0.9503041 * b) / 1.08883;
  const f = (t) => (t > 216 / 24389 ? Math.cbrt(t) : (24389 / 27 * t + 16) / 116);
  const fx = f(X);
  const fy = f(Y);
  const fz = f(Z);
  return [116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)];
}

/** CIE76 colour difference ΔE*ab between two colours. */
export function deltaE(a, b) {
  const p = toLab(a);
  const q = toLab(b);
  return Math.hypot(p[0] - q[0], p[1] - q[1], p[2] - q[2]);
}

/** CIEDE2000 colour difference ΔE00 (CIE 142-2001, kL = kC = kH = 1)
 *  between two colours ('#rrggbb', [r, g, b]) or two L*a*b* triples
 *  ({lab: [L, a, b]}). Unlike ΔE*ab it does not overrate differences of
 *  saturated blues and violets, where a palette chosen by ΔE*ab crowds. */
export function deltaE2000(a, b) {
  const [L1, a1, b1] = a.lab || toLab(a);
  const [L2, a2, b2] = b.lab || toLab(b);
  const rad = Math.PI / 180;
  const C1 = Math.hypot(a1, b1);
  const C2 = Math.hypot(a2, b2);
  const Cm = (C1 + C2) / 2;
  const G = 0.5 * (1 - Math.sqrt(Cm ** 7 / (Cm ** 7 + 25 ** 7)));
  const ap1 = (1 + G) * a1;
  const ap2 = (1 + G) * a2;
  const Cp1 = Math.hypot(ap1, b1);
  const Cp2 = Math.hypot(ap2, b2);
  const hue = (x, y) => (x === 0 && y === 0 ? 0 : (Math.atan2(y, x) / rad + 360) % 360);
  const hp1 = hue(ap1, b1);
  const hp2 = hue(ap2, b2);
  const dL = L2 - L1;
  const dC = Cp2 - Cp1;
  let dh = 0;
  if (Cp1 * Cp2 !== 0) {
    dh = hp2 - hp1;
    if (dh > 180) dh -= 360;
    else if (dh < -180) dh += 360;
  }
  const dH = 2 * Math.sqrt(Cp1 * Cp2) * Math.sin((dh / 2) * rad);
  const Lm = (L1 + L2) / 2;
  const Cpm = (Cp1 + Cp2) / 2;
  let hm = hp1 + hp2;
  if (Cp1 * Cp2 !== 0) {
    if (Math.abs(hp1 - hp2) <= 180) hm /= 2;
    else hm = hp1 + hp2 < 360 ? (hm + 360) / 2 : (hm - 360) / 2;
  }
  const T = 1 - 0.17 * Math.cos((hm - 30) * rad) + 0.24 * Math.cos(2 * hm * rad)
    + 0.32 * Math.cos((3 * hm + 6) * rad) - 0.20 * Math.cos((4 * hm - 63) * rad);
  const dTheta = 30 * Math.exp(-(((hm - 275) / 25) ** 2));
  const RC = 2 * Math.sqrt(Cpm ** 7 / (Cpm ** 7 + 25 ** 7));
  const SL = 1 + (0.015 * (Lm - 50) ** 2) / Math.sqrt(20 + (Lm - 50) ** 2);
  const SC = 1 + 0.045 * Cpm;
  const SH = 1 + 0.015 * Cpm * T;
  const RT = -Math.sin(2 * dTheta * rad) * RC;
  return Math.sqrt((dL / SL) ** 2 + (dC / SC) ** 2 + (dH / SH) ** 2 + RT * (dC / SC) * (dH / SH));
}

/** Smallest ΔE00 between any two colours of a palette as seen with the
 *  given vision ('normal' | 'deutan' | 'protan'). */
export function minPairwiseDeltaE2000(colours, kind = 'normal') {
  const seen = colours.map((c) => simulate(c, kind));
  let min = Infinity;
  for (let i = 0; i < seen.length; i++) {
    for (let j = i + 1; j < seen.length; j++) min = Math.min(min, deltaE2000(seen[i], seen[j]));
  }
  return min;
}

/** Hue angle h_ab (degrees) and chroma C*ab of a colour (CIE LCh). */
export function hueChroma(rgb) {
  const [, a, b] = toLab(rgb);
  return { hue: ((Math.atan2(b, a) * 180) / Math.PI + 360) % 360, chroma: Math.hypot(a, b) };
}

/** The most colours of a palette whose hues fall within one arc of `deg`
 *  degrees: a palette crowding one family of hues (five violets) says so. */
export function mostInHueArc(colours, deg = 60) {
  const h = colours.map((c) => hueChroma(c).hue);
  return Math.max(...h.map((a) => h.filter((x) => (x - a + 360) % 360 < deg).length));
}

/** Smallest ΔE*ab between any two colours of a palette as seen with the
 *  given vision ('normal' | 'deutan' | 'protan'). */
export function minPairwiseDeltaE(colours, kind = 'normal') {
  const seen = colours.map((c) => simulate(c, kind));
  let min = Infinity;
  for (let i = 0; i < seen.length; i++) {
    for (let j = i + 1; j < seen.length; j++) min = Math.min(min, deltaE(seen[i], seen[j]));
  }
  return min;
}

/** The head palette, the same on both themes: every colour has >= 3:1
 *  contrast against the light (#ffffff) and the dark (#12161c) background. */
export const HEAD_PALETTE = [
  '#3496ff', '#969600', '#8e5270', '#879687', '#007800', '#1e87a5',
  '#4b5aff', '#2d875a', '#ff4b78', '#00a5a5', '#ca4444', '#0069a5',
];

/** Theme backgrounds the palette is checked against (app.css body, common.js THEMES). */
export const THEME_BACKGROUNDS = { light: '#ffffff', dark: '#12161c' };

/** Thresholds the palette meets (tests/web/palette.test.mjs): smallest
 *  difference between two heads with normal vision and under simulated
 *  deuteranopia and protanopia, in CIEDE2000 (about 1 is just noticeable;
 *  10 keeps two heads apart as swatches and thin lines) and in ΔE*ab. In a
 *  lightness band narrow enough for 3:1 on both themes, 12 colours cannot be
 *  18 apart in ΔE*ab for a colour-blind reader without crowding the violets
 *  (where ΔE*ab is generous); the ΔE00 floor is what keeps them apart. */
export const HEAD_MIN_DE2000 = { normal: 13, deutan: 10, protan: 10.5 };
export const HEAD_MIN_DE = { normal: 18, deutan: 12.5, protan: 11.5 };
/** At most this many of the 12 colours share one 60° arc of hue (the
 *  palette before had five violets in one). */
export const HEAD_MAX_PER_ARC = 4;

/** Colour of head h (0-based). */
export function headColour(h) {
  return HEAD_PALETTE[((h % HEAD_PALETTE.length) + HEAD_PALETTE.length) % HEAD_PALETTE.length];
}

// The pattern classes (Kovaleva et al. 2019; src/analysis/analyze.c, the heads
// overview and `bertlens corpus`), one colour each, the same in every view
// that draws them (views/overview.js, views/corpus_chart.js). Chosen as the
// head palette was: every colour of a 15-step sRGB grid with >= 3:1 against
// both theme backgrounds was a candidate, and a coordinate search (20 random
// starts) picked the four that, with a mid grey for "heterogeneous" (no
// pattern), maximize the smallest CIEDE2000 difference between two classes
// under normal vision (weighted 0.8), deuteranopia and protanopia. The two
// palettes before (orange/green/violet/pink/grey in the overview,
// blue/green/cyan/amber/grey in the Corpus view) were 2.0 and 7.6 apart for
// a deuteranope and a protanope.
export const CLASS_COLOURS = Object.freeze({
  vertical: '#0096ff',
  diagonal: '#a59600',
  'vertical+diagonal': '#785a87',
  block: '#875a2d',
  heterogeneous: '#8c8c8c',
});

/** Smallest pairwise ΔE00 of the class colours (tests/web/palette.test.mjs). */
export const CLASS_MIN_DE2000 = { normal: 25, deutan: 20, protan: 22 };

/** Colour of a pattern class (a grey for an unknown one). */
export function classColour(c) {
  return Object.hasOwn(CLASS_COLOURS, c) ? CLASS_COLOURS[c] : CLASS_COLOURS.heterogeneous;
}
