// tools/build_site.mjs: every reference in the built site points at a file
// that exists, names carry content hashes, the service worker lists the shell.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Stand-ins for both engine builds (make wasm): one thread, and pthreads (-mt); and the analyses module. */
function fakeEngine(dir) {
  for (const b of ['bertlens', 'bertlens-mt']) {
    fs.writeFileSync(path.join(dir, `${b}.js`), `var createBertlens = function () {}; // ${b}\n`);
    fs.writeFileSync(path.join(dir, `${b}.wasm`), Buffer.from([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, b.length]));
  }
  fs.writeFileSync(path.join(dir, 'bertlens-mt.worker.js'), '"use strict"; // pthread Worker\n');
  fs.writeFileSync(path.join(dir, 'analyze.wasm'), Buffer.from([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0])); // the viewer's analyses (Makefile)
}

test('build_site writes a self-consistent, content-hashed dist', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bertlens-site-'));
  const wasm = path.join(tmp, 'wasm');
  fs.mkdirSync(wasm);
  fakeEngine(wasm);
  const dist = path.join(tmp, 'dist');
  try {
    execFileSync(process.execPath, [path.join(ROOT, 'tools', 'build_site.mjs')], {
      env: { ...process.env, WASM_DIR: wasm, RELAXED_DIR: '', DIST_DIR: path.relative(ROOT, dist) }, stdio: 'pipe',
    });
    const files = [];
    const walk = (d) => { for (const e of fs.readdirSync(d, { withFileTypes: true })) { const p = path.join(d, e.name); if (e.isDirectory()) walk(p); else files.push(path.relative(dist, p)); } };
    walk(dist);
    const stable = new Set(['index.html', 'sw.js', 'favicon.svg', 'models/index.json', 'bertlens.html', 'viewer.html']);
    for (const f of files) {
      if (stable.has(f) || f.startsWith('models/')) continue;
      const m = f.match(/\.([0-9a-f]{10})(\.min)?\.(js|css|wasm)$/);
      assert.ok(m, `${f} has a content hash`);
      const h = createHash('sha256').update(fs.readFileSync(path.join(dist, f))).digest('hex').slice(0, 10);
      assert.equal(m[1], h, `${f}: hash matches its content`);
    }
    // index.html references exist.
    const html = fs.readFileSync(path.join(dist, 'index.html'), 'utf8');
    const refs = [...html.matchAll(/(?:src|href)="([^"#][^"]*)"/g)].map((m) => m[1]); // (#view: the skip link, in the page)
    assert.ok(refs.length >= 4);
    for (const r of refs) assert.ok(fs.existsSync(path.join(dist, r)), `index.html -> ${r}`);
    // (the policy's connect-src names the Hugging Face Hub: only connections)
    assert.doesNotMatch(html.replace(/<meta http-equiv="Content-Security-Policy"[^>]*>/, ''), /https?:\/\//, 'no remote origin in the page');
    // Every relative import of every module resolves.
    for (const f of files.filter((x) => x.startsWith('js/'))) {
      const src = fs.readFileSync(path.join(dist, f), 'utf8');
      for (const m of src.matchAll(/(?:from\s*|import\s*\(?\s*)['"](\.{1,2}\/[^'"]+)['"]/g)) {
        assert.ok(fs.existsSync(path.join(dist, path.dirname(f), m[1])), `${f} imports ${m[1]}`);
      }
    }
    // The generated asset map names real files; the service worker pre-caches the shell.
    const assets = fs.readFileSync(path.join(dist, files.find((f) => /^js\/engine\/assets\./.test(f))), 'utf8');
    for (const m of assets.matchAll(/"((?:js|wasm)\/[^"]+)"/g)) assert.ok(fs.existsSync(path.join(dist, m[1])), m[1]);
    const sw = fs.readFileSync(path.join(dist, 'sw.js'), 'utf8');
    const shell = JSON.parse(sw.match(/const SHELL = (\[[^\]]*\]);/)[1]);
    for (const f of shell.filter((x) => x !== './')) assert.ok(fs.existsSync(path.join(dist, f)), `sw shell ${f}`);
    assert.ok(shell.includes('index.html'));
    // both engine builds: named in the asset map and pre-cached (sw.js
    // ENGINE: the SIMD128 kind; no relaxed build here, none named)
    const engine = JSON.parse(sw.match(/const ENGINE = (\{.*?\});/)[1]);
    assert.deepEqual(engine.relaxed, []);
    assert.doesNotMatch(assets, /relaxed/);
    assert.ok(engine.simd128.some((f) => f.startsWith('wasm/bertlens.')));
    const mt = JSON.parse(assets.match(/"mt": (\{[^}]*\})/)[1]);
    assert.deepEqual(Object.keys(mt).sort(), ['glue', 'wasm', 'worker']);
    assert.match(mt.worker, /^wasm\/bertlens-mt\.worker\.[0-9a-f]{10}\.js$/);
    for (const f of Object.values(mt)) assert.ok(engine.simd128.includes(f), `sw ENGINE.simd128 has ${f}`);
    for (const f of engine.simd128) assert.ok(fs.existsSync(path.join(dist, f)) && !shell.includes(f), `engine file ${f}: built, not in the shell`);
    assert.ok(shell.includes('models/index.json'), 'the model list is pre-cached (offline after one visit)');
    assert.doesNotMatch(sw, /const VERSION = 'dev'/);
    // One-file pages: nothing to fetch, every script parses, the engine and
    // the default model inline in bertlens.html, neither in viewer.html.
    const index0 = JSON.parse(fs.readFileSync(path.join(dist, 'models', 'index.json'), 'utf8'));
    const def = index0.models.find((m) => m.default) || index0.models[0];
    for (const name of ['bertlens.html', 'viewer.html']) {
      const page = fs.readFileSync(path.join(dist, name), 'utf8');
      const outside = page.replace(/<script\b[\s\S]*?<\/script>/gi, '');
      assert.doesNotMatch(outside, /\s(?:src|href)="(?!data:|#)/, `${name}: no reference to another file`);
      assert.doesNotMatch(page, /<link rel="stylesheet"|file_notice/, `${name}: CSS inline, no file:// notice`);
      const code = [...page.matchAll(/<script(?: type="module")?>([\s\S]*?)<\/script>/g)].map((m) => m[1]);
      assert.equal(code.length, 3, `${name}: the Trusted Types policy, D3 and the bundled modules`);
      for (const c of code) assert.doesNotThrow(() => new Function(c), `${name}: inline script parses`);
      const block = (id) => page.match(new RegExp(`^<script type="[^"]+" id="${id}">([\\s\\S]*?)</script>`, "m"))?.[1];
      if (name === 'bertlens.html') {
        const bundle = Buffer.from(block('bertlens-bundle-0'), 'base64');
        assert.equal(createHash('sha256').update(bundle).digest('hex'), def.sha256, 'the inline bundle is the default model');
        assert.deepEqual(Buffer.from(block('bertlens-engine-wasm'), 'base64'), fs.readFileSync(path.join(wasm, 'bertlens.wasm')));
        assert.equal(JSON.parse(block('bertlens-models')).models[0].inline, 'bertlens-bundle-0');
        assert.match(code[2], /engine: true/);
        assert.equal(Buffer.from(block('bertlens-viewer'), 'base64').toString('utf8'), fs.readFileSync(path.join(dist, 'viewer.html'), 'utf8'),
          'bertlens.html carries viewer.html (its "Download HTML" cannot fetch it from file://)');
      } else {
        assert.equal(block('bertlens-viewer'), undefined);
        assert.equal(block('bertlens-bundle-0'), undefined);
        assert.equal(block('bertlens-engine-wasm'), undefined);
        assert.match(code[2], /engine: false/);
      }
    }
    // Bundles listed in the index are present with the listed size.
    const index = JSON.parse(fs.readFileSync(path.join(dist, 'models', 'index.json'), 'utf8'));
    for (const m of index.models) assert.equal(fs.statSync(path.join(dist, 'models', m.file)).size, m.bytes);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});

test('every built page carries the CSP of netlify.toml as a <meta>; the one-file pages allow exactly their inline scripts and styles', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bertlens-site-'));
  const wasm = path.join(tmp, 'wasm');
  fs.mkdirSync(wasm);
  fakeEngine(wasm);
  const dist = path.join(tmp, 'dist');
  try {
    execFileSync(process.execPath, [path.join(ROOT, 'tools', 'build_site.mjs')], {
      env: { ...process.env, WASM_DIR: wasm, RELAXED_DIR: '', DIST_DIR: path.relative(ROOT, dist) }, stdio: 'pipe',
    });
    // netlify.toml's header, read here independently of build_site.
    const toml = fs.readFileSync(path.join(ROOT, 'netlify.toml'), 'utf8');
    const header = toml.split('[[headers]]').find((r) => /for = "\/\*"/.test(r)).match(/Content-Security-Policy = "([^"]+)"/)[1];
    const directives = (p) => new Map(p.split(';').map((d) => d.trim()).filter(Boolean).map((d) => [d.split(/\s+/)[0], d.split(/\s+/).slice(1).join(' ')]));
    const H = directives(header);
    assert.equal(H.get('require-trusted-types-for'), "'script'", 'the header asks for Trusted Types');
    assert.equal(H.get('trusted-types'), 'default');
    const metaOf = (page) => {
      const tags = [...page.matchAll(/<meta http-equiv="Content-Security-Policy" content="([^"]+)">/g)];
      assert.equal(tags.length, 1, 'one CSP <meta>');
      // before any script or style: it governs only what follows it
      assert.ok(tags[0].index < page.search(/<script|<style|<link/), 'the <meta> comes before every script and style');
      return directives(tags[0][1].replace(/&quot;/g, '"').replace(/&amp;/g, '&'));
    };
    // index.html: the header, less frame-ancestors (a <meta> cannot carry it).
    const M = metaOf(fs.readFileSync(path.join(dist, 'index.html'), 'utf8'));
    assert.deepEqual([...M], [...H].filter(([k]) => k !== 'frame-ancestors'));
    // One-file pages: the same policy, scripts and styles by their hashes,
    // the engine worker from a blob:.
    const sha = (t) => `'sha256-${createHash('sha256').update(t, 'utf8').digest('base64')}'`;
    for (const name of ['bertlens.html', 'viewer.html']) {
      const page = fs.readFileSync(path.join(dist, name), 'utf8');
      const P = metaOf(page);
      const scripts = [...page.matchAll(/<script(?: type="module")?>([\s\S]*?)<\/script>/g)].map((m) => sha(m[1]));
      const styles = [...page.matchAll(/<style>([\s\S]*?)<\/style>/g)].map((m) => sha(m[1]));
      assert.equal(P.get('script-src'), `${scripts.join(' ')} 'wasm-unsafe-eval'`, `${name}: script-src`);
      assert.equal(P.get('style-src'), styles.join(' '), `${name}: style-src`);
      assert.equal(P.get('worker-src'), 'blob:');
      for (const [k, v] of H) {
        if (['script-src', 'style-src', 'worker-src', 'frame-ancestors'].includes(k)) continue;
        assert.equal(P.get(k), v, `${name}: ${k} as in the header`);
      }
      assert.ok(!P.has('frame-ancestors'));
    }
    // The policy every worker script ends with (its own CSP is its response's).
    const files = fs.readdirSync(path.join(dist, 'js')).concat(fs.readdirSync(path.join(dist, 'wasm')).map((f) => `../wasm/${f}`));
    const policy = fs.readFileSync(path.join(ROOT, 'web', 'js', 'trusted_types.js'), 'utf8');
    for (const w of [files.find((f) => /^worker\./.test(f)), files.find((f) => /bertlens-mt\.worker\./.test(f))]) {
      assert.ok(fs.readFileSync(path.join(dist, 'js', w), 'utf8').endsWith(policy), `${w} ends with the Trusted Types policy`);
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});

test('build_site refuses a wasm build older than the C sources, or an empty one', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bertlens-site-'));
  const wasm = path.join(tmp, 'wasm');
  fs.mkdirSync(wasm);
  const bin = path.join(wasm, 'bertlens.wasm');
  fakeEngine(wasm);
  const build = () => {
    try {
      execFileSync(process.execPath, [path.join(ROOT, 'tools', 'build_site.mjs')], {
        env: { ...process.env, WASM_DIR: wasm, RELAXED_DIR: '', DIST_DIR: path.relative(ROOT, path.join(tmp, 'dist')) }, stdio: 'pipe',
      });
      return { status: 0, stderr: '' };
    } catch (e) {
      return { status: e.status, stderr: String(e.stderr) };
    }
  };
  try {
    const old = new Date('2001-01-01T00:00:00Z');
    fs.utimesSync(bin, old, old);
    const stale = build();
    assert.notEqual(stale.status, 0);
    assert.match(stale.stderr, /wasm build in .* is older than src\/[a-z_]+\.[ch].*run `make wasm`/);
    assert.ok(!fs.existsSync(path.join(tmp, 'dist', 'index.html')), 'nothing is built from a stale engine');
    fs.writeFileSync(bin, '');
    const empty = build();
    assert.notEqual(empty.status, 0);
    assert.match(empty.stderr, /bertlens\.wasm is empty/);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});

test('build_site ships the relaxed-SIMD modules beside the plain ones, named in ASSETS.relaxed and in sw.js ENGINE.relaxed, never pre-cached for all, not in the one-file pages', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bertlens-site-'));
  const wasm = path.join(tmp, 'wasm'), relaxed = path.join(tmp, 'wasm-relaxed');
  fs.mkdirSync(wasm);
  fs.mkdirSync(relaxed);
  fakeEngine(wasm);
  fakeEngine(relaxed);
  fs.rmSync(path.join(relaxed, 'analyze.wasm'));
  for (const f of ['bertlens.wasm', 'bertlens-mt.wasm']) fs.appendFileSync(path.join(relaxed, f), 'relaxed'); // other bytes than the plain ones
  const dist = path.join(tmp, 'dist');
  const build = (relaxedDir) => execFileSync(process.execPath, [path.join(ROOT, 'tools', 'build_site.mjs')], {
    env: { ...process.env, WASM_DIR: wasm, RELAXED_DIR: relaxedDir, DIST_DIR: path.relative(ROOT, dist) }, stdio: 'pipe', encoding: 'utf8',
  });
  try {
    build(relaxed);
    const files = fs.readdirSync(path.join(dist, 'js', 'engine'));
    const assetsText = fs.readFileSync(path.join(dist, 'js', 'engine', files.find((f) => /^assets\./.test(f))), 'utf8');
    const ASSETS = JSON.parse(assetsText.slice(assetsText.indexOf('{'), assetsText.lastIndexOf('}') + 1));
    const names = [ASSETS.relaxed.glue, ASSETS.relaxed.wasm, ...Object.values(ASSETS.relaxed.mt)];
    assert.equal(names.length, 5);
    for (const f of names) {
      assert.match(f, /^wasm\/bertlens-relaxed(-mt)?(\.worker)?\.[0-9a-f]{10}\.(js|wasm)$/);
      assert.ok(fs.existsSync(path.join(dist, f)), f);
    }
    assert.deepEqual(fs.readFileSync(path.join(dist, ASSETS.relaxed.wasm)), fs.readFileSync(path.join(relaxed, 'bertlens.wasm')));
    assert.deepEqual(fs.readFileSync(path.join(dist, ASSETS.relaxed.mt.wasm)), fs.readFileSync(path.join(relaxed, 'bertlens-mt.wasm')));
    assert.notEqual(ASSETS.relaxed.wasm, ASSETS.wasm);
    const sw = fs.readFileSync(path.join(dist, 'sw.js'), 'utf8');
    const shell = JSON.parse(sw.match(/const SHELL = (\[[^\]]*\]);/)[1]);
    const engine = JSON.parse(sw.match(/const ENGINE = (\{.*?\});/)[1]);
    assert.deepEqual([...engine.relaxed].sort(), [...names].sort(), 'ENGINE.relaxed: the relaxed files');
    assert.deepEqual(shell.filter((f) => /bertlens(-relaxed)?(-mt)?(\.worker)?\.[0-9a-f]{10}\.(js|wasm)$/.test(f)), [], 'no engine module in the shell pre-cached for every browser');
    for (const page of ['bertlens.html', 'viewer.html']) {
      assert.doesNotMatch(fs.readFileSync(path.join(dist, page), 'utf8'), /bertlens-relaxed|"relaxed"/, `${page} carries the SIMD128 engine only`);
    }
    // No relaxed build (clang-19 missing): the plain engine alone, said, no failure.
    const out = build(path.join(tmp, 'none'));
    assert.match(out, /no relaxed-SIMD build in .* the site carries the SIMD128 engine only/);
    assert.ok(!fs.readdirSync(path.join(dist, 'wasm')).some((f) => /relaxed/.test(f)));
    // A stale relaxed build is refused, as a stale plain one is.
    const old = new Date('2001-01-01T00:00:00Z');
    fs.utimesSync(path.join(relaxed, 'bertlens.wasm'), old, old);
    assert.throws(() => build(relaxed), (e) => /relaxed-SIMD build in .* is older than src\//.test(String(e.stderr)));
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});
