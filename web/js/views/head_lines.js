// head_lines.js — the head view's lines (head.js): which lines a drawing
// state shows (lib/lines.js headLinesSteps, kept while the state holds),
// painted on a canvas in pieces, only the band of rows near the window
// (scrolling moves the band), and what an SVG export writes for them.
//
// headLines(st): st is the chart's shared state (head.js): st.focus (the
// token whose lines are isolated, or null) and st.cur (the scene drawn last).
// Returns {linesSteps(sc), paintSteps(sc), repaint(sc)}.

import { sizeCanvas, headColour, exportable, SVG_MAX_LINES, sliced } from './common.js';
import { headLinesSteps, drain, rowShareThresholds } from '../lib/lines.js';

const BAND_MARGIN = 0.3; // of the window's height, painted above and below it (views: bandOf)
// A drawing rasterises its band in pieces of about this many ms each (paintSteps).
const PIECE_MS = 8;

/** Where a stage is in the window: its top (CSS px from the window's
 *  top) and the window's height. Both reads force a layout when the page
 *  has changed since the last one: the view reads them before it writes
 *  (update), or in a frame callback (scrolling), and hovers reuse them. */
export function measure(node) {
  return { top: node.getBoundingClientRect().top, vh: globalThis.innerHeight || 800 };
}


export function headLines(st) {
  // Lines are computed once per drawing state (data, heads shown, filter,
  // pruning, focus) and kept: a redraw for the same state (scrolling, a
  // hover that ends where it began) only paints.
  let linesMemo = null; // {data, key, lines}
  let thrMemo = null; // {data, share, thresholds[h]}: pruning per head, kept across hovers

  const linesOf = (sc) => drain(linesSteps(sc));

  /** The lines of a scene for the focus at the start (kept in linesMemo);
   *  one step per head computed. */
  function* linesSteps(sc) {
    const { data, lay, sel } = sc;
    const at = st.focus;
    const share = data.share ?? 1;
    const minWeight = (lay.rowH < 10 ? 0.05 : data.K > 64 ? 0.03 : 0.005) * data.vmax;
    const heads = [...sel].join(',');
    const key = `${heads}|${data.hasPair ? data.filter : 'all'}|${share}|${minWeight}|${at ? `${at.side}${at.index}` : ''}`;
    if (linesMemo && linesMemo.data === data && linesMemo.key === key) return linesMemo.lines;
    if (share < 1 && !(thrMemo && thrMemo.data === data && thrMemo.share === share)) {
      thrMemo = { data, share, thresholds: data.mats.map(() => null) };
    }
    const shown = data.mats.map((m, h) => (sel.has(h) ? m : null));
    if (share < 1) {
      for (const [h, m] of shown.entries()) {
        if (!m || thrMemo.thresholds[h]) continue;
        thrMemo.thresholds[h] = rowShareThresholds(m, data.K, share);
        yield;
      }
    }
    const lines = yield* headLinesSteps(shown, data.K, data.segs, {
      filter: data.hasPair ? data.filter : 'all',
      focus: at,
      minWeight,
      share,
      thresholds: share < 1 ? thrMemo.thresholds : null,
      maxLines: 12000,
    });
    linesMemo = { data, key, lines };
    return lines;
  }

  /** Rows of the canvas (CSS px from its top) to paint: all of it when it
   *  is short, else the part in the window and a margin of BAND_MARGIN
   *  window heights above and below (scrolling repaints when the window
   *  leaves it). Chromium rasterises a 2D canvas on the main thread,
   *  and at 512 tokens the whole canvas is ~6,700 px tall: painting only
   *  what can be seen keeps that raster small. */
  function bandOf(sc, full) {
    if (!sc.at) sc.at = measure(sc.stage.node()); // the first drawing: forces a layout once
    const { vh } = sc.at;
    const span = vh * (1 + 2 * BAND_MARGIN);
    if (full <= span) return [0, full];
    const top = sc.at.top + sc.lay.top;
    const y0 = Math.max(0, Math.min(full, -top - vh * BAND_MARGIN));
    const y1 = Math.max(0, Math.min(full, vh - top + vh * BAND_MARGIN));
    return y1 - y0 >= vh / 2 ? [y0, y1] : (y1 >= full ? [Math.max(0, full - span), full] : [y0, Math.min(full, y0 + span)]);
  }

  /** Paint lines into ctx whose vertical band [y0, y1] (CSS px of the full
   *  line area) is the canvas: lines that miss the band are skipped. */
  function paintLines(ctx, sc, lines, y0, y1) {
    drain(paintLinesSteps(ctx, sc, lines, y0, y1, Infinity));
  }

  /** paintLines in pieces of about pieceMs each, one step per piece, each
   *  rasterised before it ends: Chromium records a 2D canvas's drawing and
   *  rasterises it all at once at the end of the task (FinalizeFrame) or
   *  when its pixels are read, on the main thread. At 512 tokens the band's
   *  raster takes 20-90 ms (measured by getImageData; 2-4 ms of it is the
   *  JavaScript that records the lines), so a band painted in one task is a
   *  long task by itself. Reading one pixel makes each piece's raster
   *  happen inside its step, where sliced() counts it. The pieces go to a
   *  canvas off the page (paintSteps), so no frame shows part of a band. */
  function* paintLinesSteps(ctx, sc, lines, y0, y1, pieceMs) {
    const { data, lay } = sc;
    const w = lay.xR - lay.xL;
    const y = (i) => i * lay.rowH + lay.rowH / 2;
    ctx.clearRect(0, 0, w, y1 - y0);
    ctx.translate(0, -y0);
    // 1 px at long inputs: the canvas rasterises on the main thread, and a
    // 1-px line takes the rasteriser's hairline path (at 512 tokens 12,000
    // lines: ~0.4 s instead of ~1.6 s at 1.2 px, measured by getImageData).
    ctx.lineWidth = data.K > 80 ? 1 : 2;
    const k = st.focus ? 1 : 0.9;
    // lines per piece: adapted after each piece to take about pieceMs
    let n = pieceMs === Infinity ? lines.length : 1000;
    for (let s = 0; s < lines.length;) {
      const t0 = performance.now();
      const e = Math.min(lines.length, s + n);
      for (; s < e; s++) {
        const l = lines[s];
        const a = y(l.i);
        const b = y(l.j);
        if ((a < y0 - 2 && b < y0 - 2) || (a > y1 + 2 && b > y1 + 2)) continue;
        ctx.strokeStyle = headColour(l.head);
        ctx.globalAlpha = Math.min(1, (l.w / data.vmax) * k);
        ctx.beginPath();
        ctx.moveTo(0, a);
        ctx.lineTo(w, b);
        ctx.stroke();
      }
      if (pieceMs === Infinity || s >= lines.length) continue;
      ctx.getImageData(0, 0, 1, 1); // rasterise this piece now
      n = Math.max(100, Math.min(8000, Math.round((n * pieceMs) / Math.max(0.5, performance.now() - t0))));
      yield;
    }
    ctx.globalAlpha = 1;
    ctx.translate(0, y0);
  }

  // The canvas a drawing paints its band on in pieces (paintSteps), off the
  // page; willReadFrequently keeps it in memory (never on the GPU), where
  // the one-pixel reads are cheap.
  let scratch = null;
  let paintGen = 0; // bumped by every paint: a drawing's pieces stop when another painted since

  /** The drawing's lines, painted in pieces (paintLinesSteps) on the
   *  scratch canvas and then copied to the page's canvas in one step: the
   *  copy is a bitmap (~1 ms to rasterise), and until then the page shows
   *  the previous picture whole. The latest paint wins: one started since
   *  (a drawing, a hover, a scroll) stops this one's pieces. */
  function* paintSteps(sc) {
    const gen = ++paintGen;
    sc.stage.attr('data-painting', 1); // until linesPainted (tests wait on it)
    const { data, lay } = sc;
    const lines = linesOf(sc);
    const full = data.K * lay.rowH;
    const [y0, y1] = bandRows(sc, full);
    if (!scratch) {
      scratch = document.createElement('canvas');
      scratch.getContext('2d', { willReadFrequently: true });
    }
    const steps = paintLinesSteps(sizeCanvas(scratch, lay.xR - lay.xL, y1 - y0), sc, lines, y0, y1, PIECE_MS);
    while (!steps.next().done) {
      yield;
      if (gen !== paintGen) return;
    }
    yield;
    if (gen !== paintGen) return;
    const ctx = placeCanvas(sc, y0, y1);
    ctx.save();
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.globalCompositeOperation = 'copy';
    ctx.drawImage(scratch, 0, 0);
    ctx.restore();
    linesPainted(sc, lines, y0, y1);
  }

  /** The band of rows to paint (bandOf), in whole CSS px. */
  function bandRows(sc, full) {
    const [b0, b1] = bandOf(sc, full);
    return [Math.floor(b0), Math.min(full, Math.ceil(b1))];
  }

  /** Size the page's canvas for band [y0, y1] and move it there; its context. */
  function placeCanvas(sc, y0, y1) {
    const { lay, canvas } = sc;
    canvas.style.top = `${lay.top + y0}px`;
    return sizeCanvas(canvas, lay.xR - lay.xL, y1 - y0);
  }

  /** Repaint the lines outside a drawing (hover, focus, freeze, scroll):
   *  the same pieces (paintSteps), run in slices (sliced): a token's few
   *  lines finish in the first slice, at once; the whole band at 512 tokens
   *  (a 20-90 ms raster in one piece) no longer makes a long task. */
  function repaint(sc) {
    sliced(paintSteps(sc));
  }

  /** After the band [y0, y1] of lines was painted: what scrolling and the
   *  export read, and the scroll watch. */
  function linesPainted(sc, lines, y0, y1) {
    const { data, lay, canvas } = sc;
    const { K } = data;
    const w = lay.xR - lay.xL;
    const full = K * lay.rowH;
    const y = (i) => i * lay.rowH + lay.rowH / 2;
    canvas.blBand = { sc, lines, y0, y1 };
    sc.stage.attr('data-lines', lines.length).attr('data-painting', null);
    watchScroll();
    const alpha = (l) => Math.min(1, (l.w / data.vmax) * (st.focus ? 1 : 0.9));
    const lw = K > 80 ? 1 : 2;
    exportable(canvas, () => {
      if (lines.length > SVG_MAX_LINES) {
        const whole = document.createElement('canvas');
        paintLines(sizeCanvas(whole, w, full), sc, lines, 0, full);
        return {
          node: null, image: whole, dy: -y0, height: full,
          note: `Head-view lines (${lines.length}) are an embedded PNG image: more than ${SVG_MAX_LINES} lines would make the SVG too heavy.`,
        };
      }
      const byHead = new Map();
      for (const l of lines) {
        if (!byHead.has(l.head)) byHead.set(l.head, []);
        byHead.get(l.head).push({ tag: 'line', attrs: { x1: 0, y1: y(l.i), x2: w, y2: y(l.j), 'stroke-opacity': +alpha(l).toFixed(3) } });
      }
      return {
        node: { tag: 'g', attrs: { class: 'hv-lines', 'stroke-width': lw, fill: 'none', transform: y0 ? `translate(0,${-y0})` : null },
          children: [...byHead].map(([h, children]) => ({ tag: 'g', attrs: { stroke: headColour(h), 'data-head': h }, children })) },
        note: `Head-view lines: ${lines.length} vector <line> elements (weak lines are not drawn, as on the page).`,
      };
    });
  }

  /** Scrolling the page moves the band in view: once per frame, repaint
   *  the band when the window has left the painted one (lines kept). */
  let scrollWatched = false;
  let scrollDue = false;
  function watchScroll() {
    if (scrollWatched || typeof window === 'undefined') return;
    scrollWatched = true;
    window.addEventListener('scroll', () => {
      if (scrollDue) return;
      scrollDue = true;
      requestAnimationFrame(() => {
        scrollDue = false;
        const cur = st.cur;
        const canvas = cur && cur.canvas;
        const band = canvas && canvas.blBand;
        if (!band || band.sc !== cur || !canvas.isConnected) return;
        const full = cur.data.K * cur.lay.rowH;
        cur.at = measure(cur.stage.node()); // (layout is clean in a frame callback)
        const { vh } = cur.at;
        const top = cur.at.top + cur.lay.top;
        const v0 = Math.max(0, -top);
        const v1 = Math.min(full, vh - top);
        if (v1 <= v0 || (v0 >= band.y0 && v1 <= band.y1)) return; // out of sight, or still inside the band
        repaint(cur);
      });
    }, { passive: true });
  }

  return { linesSteps, paintSteps, repaint };
}
