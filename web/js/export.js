// export.js — the current view as a standalone SVG or PNG file. A view is
// SVG (text, marks) layered over canvases (dense cells, lines); the export
// copies the SVG with its computed styles inlined and turns every canvas into
// an <image> at the same place.

const SVG_NS = 'http://www.w3.org/2000/svg';
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

/** Standalone SVG markup for everything drawn inside stageEl. */
export function stageToSVG(stageEl, { background, title }) {
  const box = stageEl.getBoundingClientRect();
  const W = Math.ceil(stageEl.scrollWidth || box.width);
  const H = Math.ceil(stageEl.scrollHeight || box.height);
  const out = document.createElementNS(SVG_NS, 'svg');
  out.setAttribute('xmlns', SVG_NS);
  out.setAttribute('width', W);
  out.setAttribute('height', H);
  out.setAttribute('viewBox', `0 0 ${W} ${H}`);
  const t = document.createElementNS(SVG_NS, 'title');
  t.textContent = title;
  out.appendChild(t);
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
      const img = document.createElementNS(SVG_NS, 'image');
      img.setAttribute('x', x);
      img.setAttribute('y', y);
      img.setAttribute('width', w);
      img.setAttribute('height', h);
      img.setAttribute('preserveAspectRatio', 'none');
      img.setAttribute('href', el.toDataURL('image/png'));
      out.appendChild(img);
    } else if (el.tagName.toLowerCase() === 'svg') {
      const [x, y] = place(el);
      const copy = el.cloneNode(true);
      inlineStyles(el, copy);
      copy.removeAttribute('class');
      copy.setAttribute('x', x);
      copy.setAttribute('y', y);
      copy.querySelectorAll('.hm-hit, .mv-hit, g.hit').forEach((n) => n.remove());
      out.appendChild(copy);
    }
  }
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
