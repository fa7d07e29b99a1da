// inline_page.mjs — turn a page and its ES modules into one self-contained
// HTML file (no bundler needed). Used by tools/build_site.mjs for
// dist/bertlens.html (works from file:// with no network) and
// dist/viewer.html; tested by tests/web/inline_page.test.mjs.
//
// bundleModules(entry, read) -> the source of ONE module script:
//   const __bl = Object.create(null);
//   __bl["js/lib/data.js"] = (() => { …body…; return Object.freeze({ get f() { return f; }, … }); })();
//   …dependencies first…
//   __bl["js/app.js"] = (() => { … })();
// Each module keeps its own scope (a function body), so names never
// collide. Supported syntax (anything else stops the build with a message):
//   import { a, b as c } from './x.js';   import * as ns from './x.js';   import './x.js';
//   export function|async function|function*|class|const NAME …;   export { a, b as c };
//   export { a, b as c } from './x.js';
// Not supported: export default, export let/var (imports are bound once,
// when the importing module runs, so a re-assigned export would go stale),
// export * from, destructuring exports, import(), import.meta, and bare
// (package) specifiers.
//
// inlinePage(html, { read, dropScripts, dataBlocks }) -> html with every
// <link rel="stylesheet" href>, <link rel="icon" href>, <script src> and
// <script type="module" src> replaced by its content (modules bundled with
// bundleModules), and the data blocks appended at the end of <body>.

import path from 'node:path';

const posix = path.posix;

class InlineError extends Error {}

function fail(rel, what) {
  throw new InlineError(`inline_page: ${rel}: ${what}`);
}

/** JS source made safe inside an inline <script> element: `</script`
 *  becomes `<\/script` (the same string, regex or comment in JS). `<!--`
 *  could switch the HTML parser into its escaped states, so it stops the
 *  build rather than being rewritten. */
export function scriptSafe(text, what = 'script') {
  if (text.includes('<!--')) fail(what, 'contains "<!--", which cannot be inlined in a <script> element');
  return text.replace(/<\/(script)/gi, '<\\/$1');
}

/** JSON made safe inside <script type="application/json">: every < is
 *  written \u003c (JSON only has < inside strings). */
export function jsonSafe(text) {
  return text.replace(/</g, '\\u003c');
}

function resolveSpec(rel, spec) {
  if (!/^\.{1,2}\//.test(spec)) fail(rel, `only relative imports can be bundled, not "${spec}"`);
  return posix.normalize(posix.join(posix.dirname(rel), spec));
}

/** "a, b as c" -> [[local, exported]]  (for imports: [[imported, local]]). */
function nameList(rel, list) {
  return list.split(',').map((s) => s.trim()).filter(Boolean).map((item) => {
    const m = item.match(/^([A-Za-z_$][\w$]*)(?:\s+as\s+([A-Za-z_$][\w$]*))?$/);
    if (!m) fail(rel, `cannot read the name list item "${item}"`);
    return [m[1], m[2] || m[1]];
  });
}

// Statement patterns, matched at the start of a line.
const IMPORT_FROM = /^[ \t]*import\s+([\w$*{}\s,]+?)\s+from\s*(['"])([^'"]+)\2[ \t]*;?/gm;
const IMPORT_BARE = /^[ \t]*import\s*(['"])([^'"]+)\1[ \t]*;?/gm;
const EXPORT_FROM = /^[ \t]*export\s*\{([^}]*)\}\s*from\s*(['"])([^'"]+)\2[ \t]*;?/gm;
const EXPORT_LIST = /^[ \t]*export\s*\{([^}]*)\}[ \t]*;?/gm;
const EXPORT_DECL = /^([ \t]*)export\s+((?:async\s+)?function\s*\*?\s*|class\s+|const\s+)([A-Za-z_$][\w$]*)/gm;

/** Rewrite one module's source into a function body; returns
 *  {body, deps: [rel…], exports: [[exported, expression]…]}. */
export function transformModule(rel, src) {
  const deps = [];
  const exports = [];
  const dep = (spec) => {
    const d = resolveSpec(rel, spec);
    if (!deps.includes(d)) deps.push(d);
    return `__bl[${JSON.stringify(d)}]`;
  };
  if (/\bimport\s*\(/.test(src.replace(/\/\/.*$/gm, ''))) fail(rel, 'dynamic import() cannot be bundled');
  if (/\bimport\.meta\b/.test(src)) fail(rel, 'import.meta cannot be bundled');
  if (/^[ \t]*export\s+default\b/m.test(src)) fail(rel, 'export default is not supported');
  if (/^[ \t]*export\s+(let|var)\b/m.test(src)) fail(rel, 'export let/var is not supported (use const or a function)');
  if (/^[ \t]*export\s*\*/m.test(src)) fail(rel, 'export * is not supported');
  if (/^[ \t]*export\s+const\s*[{[]/m.test(src)) fail(rel, 'destructuring exports are not supported');

  let body = src.replace(IMPORT_FROM, (m, clause, q, spec) => {
    const mod = dep(spec);
    const c = clause.trim();
    const ns = c.match(/^\*\s+as\s+([A-Za-z_$][\w$]*)$/);
    if (ns) return `const ${ns[1]} = ${mod};`;
    const named = c.match(/^\{([^}]*)\}$/);
    if (!named) fail(rel, `unsupported import "${c}" (default imports are not supported)`);
    const pairs = nameList(rel, named[1]).map(([imp, local]) => (imp === local ? imp : `${imp}: ${local}`));
    return `const { ${pairs.join(', ')} } = ${mod};`;
  });
  body = body.replace(IMPORT_BARE, (m, q, spec) => { dep(spec); return ''; });
  body = body.replace(EXPORT_FROM, (m, list, q, spec) => {
    const mod = dep(spec);
    for (const [name, as] of nameList(rel, list)) exports.push([as, `${mod}.${name}`]);
    return '';
  });
  body = body.replace(EXPORT_LIST, (m, list) => {
    for (const [local, as] of nameList(rel, list)) exports.push([as, local]);
    return '';
  });
  body = body.replace(EXPORT_DECL, (m, indent, kind, name) => {
    exports.push([name, name]);
    return `${indent}${kind}${name}`;
  });
  if (/^[ \t]*(import|export)\b[^.(]/m.test(body)) {
    const line = body.split('\n').find((l) => /^[ \t]*(import|export)\b[^.(]/.test(l));
    fail(rel, `unsupported statement: ${line.trim()}`);
  }
  const seen = new Set();
  for (const [name] of exports) {
    if (seen.has(name)) fail(rel, `exports ${name} twice`);
    seen.add(name);
  }
  return { body, deps, exports };
}

/** Bundle entry (a path relative to the web root, e.g. 'js/app.js') and
 *  everything it imports; read(rel) returns a module's source. */
export function bundleModules(entry, read) {
  const out = [];
  const done = new Set();
  const visiting = [];
  const visit = (rel) => {
    if (done.has(rel)) return;
    if (visiting.includes(rel)) fail(rel, `import cycle: ${[...visiting, rel].join(' -> ')}`);
    visiting.push(rel);
    let src;
    try {
      src = read(rel);
    } catch (e) {
      fail(rel, `cannot read it (${e.message})`);
    }
    const { body, deps, exports } = transformModule(rel, src);
    for (const d of deps) visit(d);
    visiting.pop();
    const api = exports.map(([name, expr]) => `get ${name}() { return ${expr}; }`).join(', ');
    out.push(`// ---- ${rel}\n__bl[${JSON.stringify(rel)}] = (() => {\n${body.trimEnd()}\nreturn Object.freeze({ ${api} });\n})();\n`);
    done.add(rel);
  };
  visit(entry);
  return `const __bl = Object.create(null);\n${out.join('\n')}`;
}

const ATTR = (tag, name) => {
  const m = tag.match(new RegExp(`\\s${name}\\s*=\\s*"([^"]*)"`, 'i'));
  return m ? m[1] : null;
};

const DATA_TYPES = { '.svg': 'image/svg+xml', '.png': 'image/png', '.ico': 'image/x-icon' };

/** Inline everything a page refers to. read(rel) returns a file's content
 *  (a string for text, a Buffer for the icon) by its path relative to the
 *  page. dropScripts: <script src> paths to leave out. dataBlocks:
 *  [{id, type, text}] appended to <body> as inert <script> elements. */
export function inlinePage(html, { read, dropScripts = [], dataBlocks = [] }) {
  let out = html.replace(/<link\b[^>]*>/gi, (tag) => {
    const rel = (ATTR(tag, 'rel') || '').toLowerCase();
    const href = ATTR(tag, 'href');
    if (rel === 'stylesheet') return `<style>\n${String(read(href)).replace(/<\/(style)/gi, '<\\/$1')}\n</style>`;
    if (rel === 'icon') {
      const type = DATA_TYPES[posix.extname(href)] || 'application/octet-stream';
      return `<link rel="icon" href="data:${type};base64,${Buffer.from(read(href)).toString('base64')}">`;
    }
    fail('page', `cannot inline <link rel="${rel}">`);
    return tag;
  });
  out = out.replace(/<script\b([^>]*)><\/script>/gi, (tag, attrs) => {
    const src = ATTR(tag, 'src');
    if (!src) return tag;
    if (dropScripts.includes(src)) return '';
    const type = ATTR(tag, 'type');
    if (type === 'module') return `<script type="module">\n${scriptSafe(bundleModules(src, read), src)}</script>`;
    if (type && type !== 'text/javascript') fail('page', `cannot inline <script type="${type}">`);
    return `<script>\n${scriptSafe(String(read(src)), src)}\n</script>`;
  });
  if (/\s(?:src|href)="(?!data:|#|blob:)[^"]+"/i.test(out.replace(/<script\b[\s\S]*?<\/script>/gi, ''))) {
    const m = out.replace(/<script\b[\s\S]*?<\/script>/gi, '').match(/\s(?:src|href)="(?!data:|#|blob:)[^"]+"/i);
    fail('page', `a reference is left: ${m[0].trim()}`);
  }
  const blocks = dataBlocks.map(({ id, type, text }) => {
    if (!/^[\w-]+$/.test(id)) fail('page', `bad data block id ${id}`);
    const safe = /json/.test(type) ? jsonSafe(text) : scriptSafe(text, id);
    return `<script type="${type}" id="${id}">${safe}</script>`;
  }).join('\n');
  if (!out.includes('</body>')) fail('page', 'no </body>');
  return out.replace('</body>', `${blocks}\n</body>`);
}
