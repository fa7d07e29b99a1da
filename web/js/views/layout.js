// layout.js — where each view puts things for a given box, as pure functions
// (no DOM, no D3), so the sizes can be tested in Node (tests/web/layout.test.mjs)
// and the embed snippet can propose a frame that fits (the *Frame functions).
//
// Every layout takes the box the view may use: width always, height only
// when the view must fit a fixed frame (an embed), else null (the page
// scrolls vertically). A layout never returns a stage wider than the width
// it was given unless `scroll` says the content needs its own scroll box
// (more tokens than fit at the smallest readable cell).

/** Approximate text width in px for the UI font at px size (no layout pass). */
export function textWidth(s, px = 12) {
  return Math.ceil(String(s).length * px * 0.58) + 4;
}

/** Characters that fit in w px at font size px. */
export function charsFor(w, px) {
  return Math.max(3, Math.floor((w - 4) / (px * 0.58)));
}

const clampTo = (v, lo, hi) => Math.max(lo, Math.min(hi, v));

/** Label every step-th token so labels at font px do not overlap in rows of h px. */
export function labelStep(h, px) {
  return Math.max(1, Math.ceil(px / Math.max(1, h)));
}

// --------------------------------------------------------------- heatmap

export const HEATMAP = { minCell: 3, maxCell: 30, bigCell: 48, right: 12, legend: 64, axisGap: 22 };

/** Heatmap geometry for K tokens whose longest label is longestLabel chars.
 *  Returns cell size, label width and margins, the stage size, which labels
 *  are drawn (every step-th), and whether the matrix needs its own scroll box.
 *  screen (on the page, no frame height): the height the stage has on screen
 *  once scrolled to; cells then grow past maxCell, up to HEATMAP.bigCell, as
 *  far as the matrix, its labels and legend still fit in it. */
export function heatmapLayout({ K, longestLabel = 8, width, height = null, maxCell = HEATMAP.maxCell, maxSide = 640, screen = null }) {
  const n = Math.max(1, K);
  // On the page (no frame height) the matrix stays at most maxSide px square.
  if (!height) maxCell = Math.min(screen ? Math.max(maxCell, HEATMAP.bigCell) : maxCell, Math.max(HEATMAP.minCell, Math.floor(maxSide / n)));
  // Past the usual maxCell only as far as the screen's height allows.
  const byScreen = (labelW) => (screen && !height
    ? Math.max(Math.min(HEATMAP.maxCell, maxCell), Math.floor((screen - labelW - HEATMAP.axisGap - HEATMAP.legend) / n)) : Infinity);
  // Labels take at most a fifth of the width each (rows left, columns on top).
  const labelMax = clampTo(Math.floor(width * 0.2), 40, 130);
  const fitCell = (labelW) => {
    const byW = Math.floor((width - labelW - HEATMAP.axisGap - HEATMAP.right) / n);
    const byH = height ? Math.floor((height - labelW - HEATMAP.axisGap - HEATMAP.legend) / n) : byScreen(labelW);
    return Math.min(maxCell, byW, byH);
  };
  let cell = fitCell(labelMax);
  let fontSize = clampTo(cell - 2, 8, 12);
  const labelW = clampTo(textWidth('x'.repeat(Math.min(longestLabel, 14)), fontSize), 36, labelMax);
  cell = fitCell(labelW);
  const minCell = n > 256 || height ? 2 : HEATMAP.minCell;
  const scroll = cell < minCell;
  cell = Math.max(minCell, cell);
  fontSize = clampTo(cell - 2, 8, 12);
  const side = cell * n;
  const left = labelW + HEATMAP.axisGap;
  const top = labelW + HEATMAP.axisGap;
  return {
    cell, side, left, top, labelW, fontSize,
    chars: charsFor(labelW, fontSize),
    step: labelStep(cell, fontSize - 1),
    W: Math.max(left + side + HEATMAP.right, Math.min(width, 250)),
    H: top + side + HEATMAP.legend,
    scroll,
  };
}

// ------------------------------------------------------------- head view

/** Head-view geometry: two token columns joined by lines. screen (on the
 *  page, no frame height): the height the stage has on screen; up to 80
 *  tokens, rows then grow from 22 to at most 30 px (labels to 14 px, the
 *  columns apart to 520 px) as far as they all fit in it. */
export function headLayout({ K, longestLabel = 8, width, height = null, screen = null }) {
  const n = Math.max(1, K);
  let rowH = n > 80 ? 13 : 22;
  if (height) rowH = Math.min(rowH, Math.floor((height - 16) / n));
  else if (screen && n <= 80) rowH = clampTo(Math.floor((screen - 16) / n), rowH, 30);
  rowH = Math.max(height ? 3 : 4, rowH);
  const font = clampTo(rowH - 2, 8, n > 80 ? 10 : rowH > 22 ? 14 : 12);
  const labelMax = clampTo(Math.floor(width * 0.28), 44, 150);
  const labelW = clampTo(textWidth('x'.repeat(Math.min(longestLabel, 18)), font), 36, labelMax);
  const gap = clampTo(width - 2 * labelW - 16, 60, 360 + 20 * Math.max(0, rowH - 22));
  const W = Math.min(width, labelW * 2 + gap + 16);
  return {
    rowH, font, labelW, gap, top: 8,
    chars: charsFor(labelW, font),
    step: labelStep(rowH, font),
    xL: labelW + 4,
    xR: labelW + gap + 12,
    W: Math.max(W, labelW * 2 + gap + 16),
    H: 8 + n * rowH + 8,
  };
}

/** Head swatch size so H swatches fit in one row of the given width. */
export function swatchLayout({ H, width }) {
  const sw = clampTo(Math.floor(width / Math.max(1, H)) - 4, 12, 22);
  return { sw, W: H * (sw + 4) + 4, H: sw + 16 };
}

// ------------------------------------------------------------ model view

/** Largest thumbnail side of the model view (CSS px). */
export const MODEL_MAX_THUMB = 96;

/** Model-view geometry: L x H thumbnails; all heads always in one row. */
export function modelLayout({ L, H, width, height = null }) {
  const narrow = width < 520;
  const left = narrow ? 34 : 62;
  const gap = narrow ? 3 : 6;
  const top = 24;
  const legend = 64;
  let S = Math.floor((width - left - 10) / H) - gap;
  if (height) S = Math.min(S, Math.floor((height - top - legend) / L) - gap);
  S = clampTo(S, 6, MODEL_MAX_THUMB);
  const gridW = H * (S + gap);
  const gridH = L * (S + gap);
  return { S, gap, left, top, gridW, gridH, narrow, W: Math.max(left + gridW + 10, Math.min(width, 240)), H: top + gridH + legend };
}

// ----------------------------------------------------------- neuron view

export const NEURON = { header: 70, legend: 58, num: 62, numMin: 46, soft: 60, softText: 44, normW: 104 };

/** Neuron-view geometry for R key rows, head width d and `cols` number
 *  columns before the softmax (the score's terms, and their sum when there
 *  are several: 1 to 4). Wide boxes put every column side by side; narrow
 *  ones stack two bands (vectors, then numbers), each with its own key
 *  labels, so nothing overlaps or is cut: on a phone the number columns
 *  narrow to NEURON.numMin, then the bars shrink. A frame too small for
 *  either (an embed with many tokens) gets the compact form: one band with
 *  the vectors and the softmax bars; the numbers are then in the tooltip,
 *  the info line and the table only. x.nums: each number column's left. */
export function neuronLayout({ R, d, longestLabel = 8, width, height = null, norms = false, screen = null, cols = 2 }) {
  const n = Math.max(1, R);
  const font = 11;
  const labelW = clampTo(textWidth('x'.repeat(Math.min(longestLabel, 14)), font), 40, clampTo(Math.floor(width * 0.22), 40, 130));
  const numbersW = NEURON.num * cols + NEURON.soft + NEURON.softText + (norms ? NEURON.normW : 0);
  const sideBySide = (cw) => labelW + 10 + 2 * (d * cw + 14) + numbersW + 8;
  const bandTitles = 22;
  const rowsFor = (bands, max) => {
    let h = max;
    if (height) h = Math.min(h, Math.floor((height - NEURON.header - NEURON.legend - bands * bandTitles) / (bands * n)));
    return h;
  };
  // On the page with the screen's height known (no frame), up to 80 rows
  // grow to 24 px and the vector cells to 10 px, as far as they fit.
  const roomy = !!screen && !height && n <= 80;
  const maxRow = n > 80 ? 13 : roomy ? clampTo(Math.floor((screen - NEURON.header - NEURON.legend - bandTitles) / n), 17, 24) : 17;
  let cw = Math.min(roomy ? 10 : 7, Math.floor((Math.min(width, roomy ? 1400 : 1100) - (labelW + 10 + numbersW + 8 + 28)) / (2 * d)));
  let mode = cw >= 1 && sideBySide(cw) <= width ? 'wide' : 'stacked';
  if (mode === 'stacked') cw = clampTo(Math.floor((width - labelW - 10 - 14 - 8) / (2 * d)), 1, 7);
  let rowH = rowsFor(mode === 'stacked' ? 2 : 1, maxRow);
  // Stacked, both bands share the screen.
  if (roomy && mode === 'stacked') rowH = Math.min(rowH, Math.max(17, Math.floor((screen - NEURON.header - NEURON.legend - 2 * bandTitles) / (2 * n))));
  if (height && rowH < 9) {
    // Rows too thin for numbers: drop the number columns rather than leave them empty.
    mode = 'compact';
    cw = clampTo(Math.floor((width - labelW - 10 - 28 - NEURON.soft * (norms ? 2 : 1) - 8) / (2 * d)), 1, 7);
    rowH = rowsFor(1, maxRow);
  }
  rowH = Math.max(height ? 2 : 3, rowH);
  const stacked = mode === 'stacked';
  const compact = mode === 'compact';
  // A phone's numbers band too wide: the number columns narrow first, then
  // the bars shrink (never the numbers' text).
  let num = NEURON.num;
  let softW = NEURON.soft;
  let normW = norms ? (compact ? NEURON.soft : NEURON.normW) : 0;
  if (stacked) {
    let over = labelW + 10 + num * cols + softW + NEURON.softText + normW + 8 - width;
    if (over > 0) {
      const narrower = Math.min(num - NEURON.numMin, Math.ceil(over / cols));
      num -= narrower;
      over -= narrower * cols;
    }
    if (over > 0) {
      const cut = Math.min(over, (softW - 30) + (norms ? normW - 74 : 0));
      const share = norms ? cut / 2 : cut;
      softW -= Math.ceil(share);
      if (norms) normW -= Math.ceil(cut - share);
    }
  }
  const stripW = d * cw;
  const x = { k: labelW + 10 };
  x.p = x.k + stripW + 14;
  const numX0 = stacked ? labelW + 10 : x.p + stripW + 14;
  x.nums = compact ? [] : Array.from({ length: cols }, (_, c) => numX0 + c * num);
  x.soft = compact ? numX0 : numX0 + cols * num;
  x.norm = x.soft + softW + (compact ? 0 : NEURON.softText);
  const bandH = n * rowH;
  const y = { rows: NEURON.header, numbers: stacked ? NEURON.header + bandH + bandTitles : NEURON.header };
  const rowsEnd = stacked ? y.numbers + bandH : NEURON.header + bandH;
  const W = stacked
    ? Math.max(x.p + stripW, x.norm + normW) + 8
    : x.norm + normW + 8;
  return {
    labelW, softW, normW, num, font: rowH >= 11 ? font : clampTo(rowH - 1, 7, font), cw, stripW, x, y, rowH, stacked, compact, mode,
    bands: stacked ? 2 : 1,
    numbers: rowH >= 9 && !compact, // numbers as text only when a row is tall enough to read them
    step: labelStep(rowH, 8),
    chars: charsFor(labelW, font),
    W, H: rowsEnd + NEURON.legend,
  };
}

// ---------------------------------------------------------- embed frames
// The frame (CSS px) in which a view shows n tokens comfortably, for the
// embed snippet: each view's descriptor names its own (size()), and
// views/index.js preferredSize asks it. Every frame is within 320..960 x
// 240..1400. The extra heights are what an embed draws around the stage
// (title, info line, head swatches or query picker, caption, paddings).

const frame = (width, height) => ({ width: clampTo(Math.ceil(width), 320, 960), height: clampTo(Math.ceil(height), 240, 1400) });

/** Heatmap (and rollout): cells of 6..24 px, labels of 12 characters. */
export function heatmapFrame(nTokens) {
  const n = Math.max(1, nTokens);
  const cell = clampTo(Math.floor(480 / n), 6, 24);
  const g = heatmapLayout({ K: n, longestLabel: 12, width: 2000, maxCell: cell, maxSide: Infinity });
  return frame(g.left + g.side + HEATMAP.right + 16, g.H + 96);
}

/** Head view: rows of 12..22 px. */
export function headFrame(nTokens) {
  const n = Math.max(1, nTokens);
  return frame(560, 16 + n * clampTo(Math.floor(640 / n), 12, 22) + 140);
}

/** Model view: every layer and head of the model (defaults: 12 x 12). */
export function modelFrame({ layers = 12, heads = 12 } = {}) {
  const width = 720;
  return frame(width, modelLayout({ L: layers, H: heads, width: width - 16 }).H + 74);
}

/** Neuron view: rows of 11..17 px in one band. */
export function neuronFrame(nTokens) {
  const n = Math.max(1, nTokens);
  return frame(720, NEURON.header + 22 + n * clampTo(Math.floor(640 / n), 11, 17) + NEURON.legend + 126);
}
