// export.js — the current view as a standalone SVG or PNG file. A view is
// SVG (text, marks) layered over canvases (dense cells, lines); the export
// copies the SVG with its computed styles inlined, and redraws each canvas as
// vector marks (<rect>, <line>) when its view gave it a vector form
// (views/common.js exportable) small enough to stay reasonable, else embeds
// the canvas as a PNG <image> at the same place. The SVG's <desc> says which
// parts are vectors and which are images. All text goes in as text nodes
// (copied SVG <text>, textContent), never as markup.
//
// Every export carries its context: a title line on top (model, view, layer,
// head or mean, mode, the text — shortened; titleLine), the colour keys the
// view keeps outside its stage (the head view's swatches), the stage with
// its colour legend, and the view's explanatory notes below, wrapped. The
// page's hints ("Hover a cell…") are not part of the stage and never go in.

const SVG_NS = 'http://www.w3.org/2000/svg';
const MARK_TAGS = new Set(['g', 'rect', 'line', 'path']);
const STYLE_PROPS = ['fill', 'fill-opacity', 'stroke', 'stroke-width', 'stroke-opacity', 'stroke-dasharray',
  'opacity', 'font-family', 'font-size', 'font-weight', 'text-anchor', 'dominant-baseline', 'visibility'];

// Computed styles become SVG presentation attributes (not style="", which
// the page's Content-Security-Policy forbids).
function inlineStyles(src, dst) {
  const cs = getComputedStyle(src);
  for (const p of STYLE_PROPS) {
    const v = cs.getPropertyValue(p);
    if (v) dst.setAttribute(p, v);
  }
  for (let i = 0; i < src.children.length; i++) inlineStyles(src.children[i], dst.children[i]);
}

/** SVG elements from a view's mark tree {tag, attrs, children}. */
function buildMarks(spec) {
  if (!MARK_TAGS.has(spec.tag)) throw new Error(`unexpected mark <${spec.tag}>`);
  const el = document.createElementNS(SVG_NS, spec.tag);
  for (const [k, v] of Object.entries(spec.attrs || {})) if (v !== null && v !== undefined) el.setAttribute(k, String(v));
  for (const c of spec.children || []) el.appendChild(buildMarks(c));
  return el;
}

function canvasAsImage(el, x, y, w, h) {
  const img = document.createElementNS(SVG_NS, 'image');
  img.setAttribute('x', x);
  img.setAttribute('y', y);
  img.setAttribute('width', w);
  img.setAttribute('height', h);
  img.setAttribute('preserveAspectRatio', 'none');
  img.setAttribute('href', el.toDataURL('image/png'));
  return img;
}

/** Shorten a text to n characters (an ellipsis marks the cut). */
export function shorten(text, n = 80) {
  const t = String(text).replace(/\s+/g, ' ').trim();
  return t.length > n ? `${t.slice(0, n - 1)}…` : t;
}

/** The one-line title of an export: model, view, what of the state the
 *  view v (its descriptor, views/index.js) uses — layer, head or mean, query
 *  token, mode — and the text (both texts of a pair), shortened, or the
 *  subject the view names instead (exportContext subject). */
export function titleLine({ model = '', view, layer, head, mode, text = '', text_b: textB = '', query, queryLabel = null, ablate = '' }, v, subject = null) {
  const c = v.controls;
  const parts = ['bertlens'];
  if (model) parts.push(model);
  parts.push(`${view} view`);
  if (c.layer) parts.push(`layer ${layer}`);
  if (c.head && !v.query) parts.push(head === 'mean' ? 'mean of heads' : `head ${head}`);
  if (v.query) parts.push(`head ${head === 'mean' ? 0 : head}`, `query ${query}${queryLabel ? ` (${queryLabel})` : ''}`);
  if (c.mode || c.layer) parts.push(mode === 'norm' ? 'value-weighted norms' : 'attention');
  if (ablate) parts.push(`heads off ${ablate}`);
  const quoted = subject ? shorten(subject, 96) : textB ? `“${shorten(text, 48)}” / “${shorten(textB, 48)}”` : `“${shorten(text, 96)}”`;
  return `${parts.join(' · ')} · ${quoted}`;
}

/** Split text into lines of at most n characters at spaces. */
export function wrapText(text, n) {
  const lines = [];
  let cur = '';
  for (const word of String(text).split(/\s+/).filter(Boolean)) {
    if (cur && cur.length + 1 + word.length > n) { lines.push(cur); cur = ''; }
    cur = cur ? `${cur} ${word}` : word;
    while (cur.length > n) { lines.push(cur.slice(0, n)); cur = cur.slice(n); }
  }
  if (cur) lines.push(cur);
  return lines;
}

function textBlock(lines, { y0, size, colour, weight = 400, lineH }) {
  const g = document.createElementNS(SVG_NS, 'g');
  g.setAttribute('class', 'export-text');
  lines.forEach((line, i) => {
    const t = document.createElementNS(SVG_NS, 'text');
    t.setAttribute('x', 8);
    t.setAttribute('y', y0 + i * lineH);
    t.setAttribute('font-family', 'system-ui, sans-serif');
    t.setAttribute('font-size', size);
    t.setAttribute('font-weight', weight);
    t.setAttribute('fill', colour);
    t.textContent = line;
    g.appendChild(t);
  });
  return g;
}

/** An SVG element of the page (a colour key) copied with its styles inlined,
 *  without what only the page needs (focus, roles, handlers). */
function copySvg(el) {
  const copy = el.cloneNode(true);
  inlineStyles(el, copy);
  copy.removeAttribute('class');
  for (const n of [copy, ...copy.querySelectorAll('*')]) {
    for (const a of ['tabindex', 'role', 'aria-pressed', 'aria-label']) n.removeAttribute(a);
  }
  return copy;
}

// ------------------------------------------------------------ HTML parts
// A view that lays out part of its stage in HTML (the Predictions view's
// cards, the Corpus view's sections) is exported as what the reader sees:
// each visible box with a background or a border becomes a <rect>, each line
// of text a <text> at its place (its words measured with a Range, grouped by
// line), an ordered list's numbers included; SVG and canvases inside are
// copied as the stage's own. Form fields are left out, but a <select> shows
// its chosen option. Everything goes in as text (textContent), never markup.

const TEXT_STYLE = ['font-family', 'font-size', 'font-weight', 'font-style'];
const visibleColour = (c) => c && c !== 'transparent' && !/^rgba\(.*,\s*0\)$/.test(c);

function svgEl(tag, attrs) {
  const e = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== null && v !== undefined) e.setAttribute(k, String(v));
  return e;
}

/** One <text> per line of a text node: its words measured, grouped by the
 *  line box they are on. */
function textLines(node, cs, place, into) {
  const text = node.textContent;
  if (!/\S/.test(text)) return;
  const range = document.createRange();
  const lines = [];
  for (const m of text.matchAll(/\S+/g)) {
    range.setStart(node, m.index);
    range.setEnd(node, m.index + m[0].length);
    const r = range.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue; // clipped away or not rendered
    const [x, y, w, h] = place({ getBoundingClientRect: () => r });
    const line = lines.find((l) => Math.abs(l.y - y) < h / 2);
    if (line) { line.words.push(m[0]); line.x1 = Math.max(line.x1, x + w); line.x = Math.min(line.x, x); } else lines.push({ x, y, h, x1: x + w, words: [m[0]] });
  }
  const opacity = Number(cs.opacity) < 1 ? cs.opacity : null;
  for (const l of lines) {
    const t = svgEl('text', { x: l.x.toFixed(1), y: (l.y + l.h / 2).toFixed(1), 'dominant-baseline': 'central', fill: cs.color, opacity });
    for (const p of TEXT_STYLE) t.setAttribute(p, cs.getPropertyValue(p));
    t.textContent = l.words.join(' ');
    into.appendChild(t);
  }
}

/** Marks of an HTML element and what it holds, appended to `into`;
 *  returns the number of marks. */
function htmlMarks(el, into, { place, putCanvas, putSvg }) {
  const tag = el.tagName.toLowerCase();
  if (tag === 'svg') { putSvg(el, into); return 1; }
  if (tag === 'canvas') { putCanvas(el, into); return 1; }
  if (['input', 'textarea', 'script', 'style', 'template', 'progress'].includes(tag)) return 0;
  if (el.hidden || !el.getClientRects().length) return 0;
  const cs = getComputedStyle(el);
  if (cs.display === 'none' || cs.visibility === 'hidden') return 0;
  const [x, y, w, h] = place(el);
  let n = 0;
  const radius = parseFloat(cs.borderTopLeftRadius) || 0;
  if (visibleColour(cs.backgroundColor) && w > 0 && h > 0) {
    into.appendChild(svgEl('rect', { x: x.toFixed(1), y: y.toFixed(1), width: w.toFixed(1), height: h.toFixed(1), rx: radius || null, fill: cs.backgroundColor, opacity: Number(cs.opacity) < 1 ? cs.opacity : null }));
    n++;
  }
  // Borders: one line per side drawn (a box with all four, one outlined rect).
  const sides = ['top', 'right', 'bottom', 'left'].map((side) => ({
    side, width: parseFloat(cs.getPropertyValue(`border-${side}-width`)) || 0,
    colour: cs.getPropertyValue(`border-${side}-color`), style: cs.getPropertyValue(`border-${side}-style`),
  })).filter((b) => b.width > 0 && b.style !== 'none' && b.style !== 'hidden' && visibleColour(b.colour));
  if (sides.length === 4 && sides.every((b) => b.colour === sides[0].colour && b.width === sides[0].width)) {
    const bw = sides[0].width;
    into.appendChild(svgEl('rect', { x: (x + bw / 2).toFixed(1), y: (y + bw / 2).toFixed(1), width: Math.max(0, w - bw).toFixed(1), height: Math.max(0, h - bw).toFixed(1), rx: radius || null, fill: 'none', stroke: sides[0].colour, 'stroke-width': bw, 'stroke-dasharray': sides[0].style === 'dashed' ? '4 3' : null }));
    n++;
  } else {
    for (const b of sides) {
      const at = { top: [x, y + b.width / 2, x + w, y + b.width / 2], bottom: [x, y + h - b.width / 2, x + w, y + h - b.width / 2],
        left: [x + b.width / 2, y, x + b.width / 2, y + h], right: [x + w - b.width / 2, y, x + w - b.width / 2, y + h] }[b.side];
      into.appendChild(svgEl('line', { x1: at[0].toFixed(1), y1: at[1].toFixed(1), x2: at[2].toFixed(1), y2: at[3].toFixed(1), stroke: b.colour, 'stroke-width': b.width }));
      n++;
    }
  }
  // An ordered list's number (CSS draws it: no text node holds it).
  if (tag === 'li' && cs.display === 'list-item' && el.parentElement && el.parentElement.tagName.toLowerCase() === 'ol' && cs.listStyleType !== 'none') {
    const k = [...el.parentElement.children].filter((c) => c.tagName.toLowerCase() === 'li').indexOf(el) + (el.parentElement.start || 1);
    const t = svgEl('text', { x: (x - 4).toFixed(1), y: (y + h / 2).toFixed(1), 'text-anchor': 'end', 'dominant-baseline': 'central', fill: cs.color });
    for (const p of TEXT_STYLE) t.setAttribute(p, cs.getPropertyValue(p));
    t.textContent = `${k}.`;
    into.appendChild(t);
    n++;
  }
  if (tag === 'select') { // its chosen option, as shown
    const opt = el.selectedOptions && el.selectedOptions[0];
    if (opt) {
      const t = svgEl('text', { x: (x + 6).toFixed(1), y: (y + h / 2).toFixed(1), 'dominant-baseline': 'central', fill: cs.color });
      for (const p of TEXT_STYLE) t.setAttribute(p, cs.getPropertyValue(p));
      t.textContent = opt.textContent;
      into.appendChild(t);
      n++;
    }
    return n;
  }
  for (const c of el.childNodes) {
    if (c.nodeType === 3) { textLines(c, cs, place, into); n++; } else if (c.nodeType === 1) n += htmlMarks(c, into, { place, putCanvas, putSvg });
  }
  return n;
}

/** Standalone SVG markup for everything drawn inside stageEl, with its
 *  context: heading (title line), context.keys (colour keys outside the
 *  stage), context.notes (explanations) and theme (fg/muted colours). */
export function stageToSVG(stageEl, { background, title, heading = null, context = null, theme = null }) {
  // A view still writing rows in later frames (views/neuron.js) finishes first.
  if (typeof stageEl.blSettle === 'function') stageEl.blSettle();
  const box = stageEl.getBoundingClientRect();
  let W = Math.ceil(stageEl.scrollWidth || box.width);
  let H = Math.ceil(stageEl.scrollHeight || box.height);
  // Legends may run past the stage (its SVG overflows visibly): widen to fit.
  for (const el of stageEl.children) {
    if (el.tagName.toLowerCase() !== 'svg') continue;
    const r = el.getBoundingClientRect();
    const bb = el.getBBox();
    W = Math.max(W, Math.ceil(r.left - box.left + bb.x + bb.width + 4));
    H = Math.max(H, Math.ceil(r.top - box.top + bb.y + bb.height + 4));
  }
  const fg = theme ? theme.fg : '#1d232b';
  const muted = theme ? theme.muted : '#66707d';
  // Above the stage: the title line, then colour keys; below: the notes.
  W = Math.max(W, 360);
  const head = heading ? wrapText(heading, Math.floor((W - 16) / 7.4)) : [];
  let top = head.length ? 10 + head.length * 18 : 0;
  const keys = [];
  for (const k of (context && context.keys) || []) {
    if (!k) continue;
    const r = k.getBoundingClientRect();
    keys.push({ el: k, y: top + 4, h: Math.ceil(r.height) });
    W = Math.max(W, Math.ceil(r.width) + 16);
    top += Math.ceil(r.height) + 8;
  }
  const noteLines = ((context && context.notes) || []).flatMap((n) => wrapText(n, Math.floor((W - 16) / 6.2)));
  const stageH = H;
  H = top + stageH + (noteLines.length ? 10 + noteLines.length * 15 : 0);
  const out = document.createElementNS(SVG_NS, 'svg');
  out.setAttribute('xmlns', SVG_NS);
  out.setAttribute('width', W);
  out.setAttribute('height', H);
  out.setAttribute('viewBox', `0 0 ${W} ${H}`);
  const t = document.createElementNS(SVG_NS, 'title');
  t.textContent = title;
  out.appendChild(t);
  const desc = document.createElementNS(SVG_NS, 'desc');
  out.appendChild(desc);
  const notes = [];
  const bg = document.createElementNS(SVG_NS, 'rect');
  bg.setAttribute('width', W);
  bg.setAttribute('height', H);
  bg.setAttribute('fill', background);
  out.appendChild(bg);
  if (head.length) out.appendChild(textBlock(head, { y0: 20, size: 13, colour: fg, weight: 600, lineH: 18 })).setAttribute('class', 'export-title');
  for (const k of keys) {
    const copy = copySvg(k.el);
    copy.setAttribute('x', 8);
    copy.setAttribute('y', k.y);
    copy.setAttribute('class', 'export-key');
    out.appendChild(copy);
  }
  if (noteLines.length) out.appendChild(textBlock(noteLines, { y0: top + stageH + 20, size: 11, colour: muted, lineH: 15 })).setAttribute('class', 'export-notes');
  const content = document.createElementNS(SVG_NS, 'g');
  content.setAttribute('transform', `translate(0,${top})`);
  out.appendChild(content);
  const place = (el) => {
    const r = el.getBoundingClientRect();
    return [r.left - box.left, r.top - box.top, r.width, r.height];
  };
  const putCanvas = (el, into) => {
    const [x, y, w, h] = place(el);
    if (w === 0 || h === 0) return;
    const vec = typeof el.blExport === 'function' ? el.blExport() : null;
    if (vec && vec.node) {
      const g = document.createElementNS(SVG_NS, 'g');
      g.setAttribute('transform', `translate(${x},${y})`);
      g.appendChild(buildMarks(vec.node));
      into.appendChild(g);
    } else if (vec && vec.image) { // a canvas drawn for the export (the page's shows only part: views/head.js)
      into.appendChild(canvasAsImage(vec.image, x, y + (vec.dy || 0), w, vec.height ?? h));
    } else {
      into.appendChild(canvasAsImage(el, x, y, w, h));
    }
    notes.push(vec && vec.note ? vec.note : `A ${w} × ${h} px canvas (${el.className || 'unnamed'}) is an embedded PNG image.`);
  };
  const putSvg = (el, into) => {
    const [x, y] = place(el);
    const copy = el.cloneNode(true);
    inlineStyles(el, copy);
    copy.removeAttribute('class');
    copy.setAttribute('overflow', 'visible'); // as on the page: legends may run past the stage
    copy.setAttribute('x', x);
    copy.setAttribute('y', y);
    copy.querySelectorAll('.hm-hit, .mv-hit, g.hit, g.cursor, .mv-hover, .mv-focus').forEach((n) => n.remove());
    copy.querySelectorAll('g.pinned').forEach((n) => n.removeAttribute('transform'));
    copy.querySelectorAll('rect.pin-bg').forEach((n) => n.remove());
    for (const n of copy.querySelectorAll('[tabindex], [role]')) { n.removeAttribute('tabindex'); n.removeAttribute('role'); }
    into.appendChild(copy);
  };
  let htmlParts = 0;
  for (const el of stageEl.children) {
    const tag = el.tagName.toLowerCase();
    if (tag === 'canvas') putCanvas(el, content);
    else if (tag === 'svg') putSvg(el, content);
    else htmlParts += htmlMarks(el, content, { place, putCanvas, putSvg });
  }
  if (htmlParts) notes.push('What the page lays out as text (HTML) is redrawn as SVG text and rectangles at the same places.');
  desc.textContent = notes.length ? notes.join(' ') : 'All marks are vector elements.';
  return new XMLSerializer().serializeToString(out);
}

/** Rasterize SVG markup to a PNG Blob at the given scale. */
export function svgToPNG(svgText, scale = 2) {
  return new Promise((resolve, reject) => {
    const img = new Image();
    const url = URL.createObjectURL(new Blob([svgText], { type: 'image/svg+xml' }));
    img.onload = () => {
      const c = document.createElement('canvas');
      c.width = Math.ceil(img.width * scale);
      c.height = Math.ceil(img.height * scale);
      const ctx = c.getContext('2d');
      ctx.scale(scale, scale);
      ctx.drawImage(img, 0, 0);
      URL.revokeObjectURL(url);
      c.toBlob((b) => (b ? resolve(b) : reject(new Error('PNG encoding failed.'))), 'image/png');
    };
    img.onerror = () => { URL.revokeObjectURL(url); reject(new Error('The view could not be rasterized.')); };
    img.src = url;
  });
}

export function download(blob, name) {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10000);
}
