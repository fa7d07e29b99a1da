// export.js — the current view as a standalone SVG or PNG file. A view is
// SVG (text, marks) layered over canvases (dense cells, lines); the export
// copies the SVG with its computed styles inlined, and redraws each canvas as
// vector marks (<rect>, <line>) when its view gave it a vector form
// (views/common.js exportable) small enough to stay reasonable, else embeds
// the canvas as a PNG <image> at the same place. The SVG's <desc> says which
// parts are vectors and which are images. All text goes in as text nodes
// (copied SVG <text>, textContent), never as markup.

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

/** Standalone SVG markup for everything drawn inside stageEl. */
export function stageToSVG(stageEl, { background, title }) {
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
  const place = (el) => {
    const r = el.getBoundingClientRect();
    return [r.left - box.left, r.top - box.top, r.width, r.height];
  };
  for (const el of stageEl.children) {
    if (el.tagName.toLowerCase() === 'canvas') {
      const [x, y, w, h] = place(el);
      if (w === 0 || h === 0) continue;
      const vec = typeof el.blExport === 'function' ? el.blExport() : null;
      if (vec && vec.node) {
        const g = document.createElementNS(SVG_NS, 'g');
        g.setAttribute('transform', `translate(${x},${y})`);
        g.appendChild(buildMarks(vec.node));
        out.appendChild(g);
      } else {
        out.appendChild(canvasAsImage(el, x, y, w, h));
      }
      notes.push(vec && vec.note ? vec.note : `A ${w} × ${h} px canvas (${el.className || 'unnamed'}) is an embedded PNG image.`);
    } else if (el.tagName.toLowerCase() === 'svg') {
      const [x, y] = place(el);
      const copy = el.cloneNode(true);
      inlineStyles(el, copy);
      copy.removeAttribute('class');
      copy.setAttribute('overflow', 'visible'); // as on the page: legends may run past the stage
      copy.setAttribute('x', x);
      copy.setAttribute('y', y);
      copy.querySelectorAll('.hm-hit, .mv-hit, g.hit').forEach((n) => n.remove());
      out.appendChild(copy);
    }
  }
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
