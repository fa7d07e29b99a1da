// palette.js — colour arithmetic the views rely on, with no DOM and no D3 so
// node's test runner checks it (tests/web/palette.test.mjs):
//   WCAG 2 relative luminance and contrast ratio,
//   CIE L*a*b* (D65) and the CIE76 colour difference ΔE*ab,
//   colour-vision-deficiency simulation (Machado, Oliveira & Fernandes 2009,
//   severity 1.0, applied to linear-light sRGB),
// and the 12-colour head palettes, one per theme.
//
// How the palettes were chosen: every sRGB colour on a 16-level grid whose
// contrast against the theme's background is >= 3:1 was a candidate; a
// greedy max-min search then picked 12, maximizing the smallest ΔE*ab between
// any two picks under normal vision, deuteranopia and protanopia at once.
// The resulting guarantees (asserted in tests/web/palette.test.mjs):
//   contrast against the theme background        >= 3:1  (HEAD_MIN_CONTRAST)
//   smallest pairwise ΔE*ab, normal vision        >= HEAD_MIN_DE.normal
//   smallest pairwise ΔE*ab, simulated deutan     >= HEAD_MIN_DE.cvd
//   smallest pairwise ΔE*ab, simulated protan     >= HEAD_MIN_DE.cvd
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
  '#3c96ff', '#f05a00', '#879678', '#8700ff', '#c31e00', '#4b6969',
  '#c378a5', '#694be1', '#e1784b', '#963cb4', '#b43c3c', '#964b96',
];

/** Theme backgrounds the palette is checked against (app.css body, common.js THEMES). */
export const THEME_BACKGROUNDS = { light: '#ffffff', dark: '#12161c' };

/** Thresholds the palette meets (tests/web/palette.test.mjs): smallest ΔE*ab
 *  between two heads with normal vision and under simulated deuteranopia and
 *  protanopia. ΔE*ab ≈ 2.3 is a just-noticeable difference; 18 keeps two
 *  heads clearly apart as swatches and as thin lines. */
export const HEAD_MIN_DE = { normal: 18, deutan: 18, protan: 18 };

/** Colour of head h (0-based). */
export function headColour(h) {
  return HEAD_PALETTE[((h % HEAD_PALETTE.length) + HEAD_PALETTE.length) % HEAD_PALETTE.length];
}
