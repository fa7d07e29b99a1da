// compare.scenarios.mjs — comparisons on the page (issue 12): head ablation
// by clicking heads, minimal pairs and two models, in the Compare view and
// the ablation line. The page's figures are checked against the same wasm
// build run in Node on the same bundle (build/wasm/bertlens.js, or
// build/wasm-relaxed/bertlens.js when the page's worker runs the
// relaxed-SIMD engine: <html data-engine-simd>; whose
// blw_head_compare is checked against numpy on Hugging Face attention in
// tests/web/worker.test.mjs): the unmasked and masked runs, blw_head_compare
// on their attention, and the embeddings' cosines.

import assert from 'node:assert/strict';
import path from 'node:path';
import v8 from 'node:v8';
import { scenario, ready, typeText, exportSvg, touchTap, ROOT, DEFAULT_MODEL, DEFAULT_GZ, reEscape } from './harness.mjs';
import { createModule, loadBundle, putString, floats, wasmError } from '../../tools/wasm_node.mjs';

const DEF = DEFAULT_GZ; // the published default bundle (models/index.json)
const F16 = path.join(ROOT, 'models/all-minilm-l6-v2.f16.blb.gz');
const F32 = path.join(ROOT, 'build/models/all-minilm-l6-v2.f32.blb'); // make test-models
const TOL = 2e-5; // the same wasm code and bundle in Node: float32 rounding only
const SENT = 'The doctor asked the nurse a question because she was tired.';
const PAIR = ['The doctor asked the nurse a question.', 'She answered it quickly.'];

// ---------------------------------------------------------------- Node side

// The build the page's worker chose (open() reads <html data-engine-simd>):
// relaxed_madd fuses multiply-adds, so only the same build gives the same
// float32 roundings. Node 20 runs relaxed SIMD behind a flag.
let pageBuild = 'simd128';
const BUILDS = { simd128: undefined, relaxed: path.join(ROOT, 'build/wasm-relaxed/bertlens.js') };
v8.setFlagsFromString('--experimental-wasm-relaxed-simd');
const engines = new Map();
async function engine(bundle) {
  const key = `${pageBuild}:${bundle}`;
  if (!engines.has(key)) {
    const M = await createModule(BUILDS[pageBuild], { print: () => {}, printErr: () => {} });
    loadBundle(M, bundle);
    engines.set(key, M);
  }
  return engines.get(key);
}

/** Run text (pair) with heads masked: {T, L, H, attn Float32Array [L*H*T*T], emb: [per text alone]}. */
async function nodeRun(bundle, a, b, mask = []) {
  const M = await engine(bundle);
  const info = JSON.parse(M.UTF8ToString(M._blw_info_json()));
  const L = info.config.n_layers;
  const H = info.config.n_heads;
  const pm = M._malloc(L * H);
  M.HEAPU8.fill(0, pm, pm + L * H);
  for (const [l, h] of mask) M.HEAPU8[pm + l * H + h] = 1;
  M._blw_set_head_mask(pm);
  M._free(pm);
  const embedOf = (t) => {
    const p = putString(M, t);
    assert.ok(M._blw_run(p, 0, 1, 0) > 0, wasmError(M));
    M._free(p);
    return floats(M, M._blw_embedding(), info.config.hidden);
  };
  const emb = b ? [embedOf(a), embedOf(b)] : [embedOf(a)];
  const pa = putString(M, a);
  const pb = b ? putString(M, b) : 0;
  const T = M._blw_run(pa, pb, 1, 0);
  M._free(pa); if (pb) M._free(pb);
  const attn = new Float32Array(L * H * T * T);
  for (let l = 0; l < L; l++) attn.set(floats(M, M._blw_attention(l), H * T * T), l * H * T * T);
  return { T, L, H, attn, emb };
}

/** blw_head_compare of two runs' attention: {js, maxAbs} [L*H]. */
async function nodeCompare(A, B) {
  const M = await engine(DEF);
  const n = A.L * A.H;
  const put = (x) => { const p = M._malloc(x.length * 4); M.HEAPF32.set(x, p >> 2); return p; };
  const pa = put(A.attn); const pb = put(B.attn); const po = M._malloc(n * 8);
  assert.equal(M._blw_head_compare(pa, A.T * A.T, pb, n, A.T, po), 0);
  const out = floats(M, po, 2 * n);
  M._free(pa); M._free(pb); M._free(po);
  return { js: Array.from({ length: n }, (_, k) => out[2 * k]), maxAbs: Array.from({ length: n }, (_, k) => out[2 * k + 1]) };
}

const cos = (u, v) => { let d = 0; let a = 0; let b = 0; for (let i = 0; i < u.length; i++) { d += u[i] * v[i]; a += u[i] * u[i]; b += v[i] * v[i]; } return d / Math.sqrt(a * b); };

// ---------------------------------------------------------------- page side

async function open(page, base, params) {
  await page.goto(`${base}?${new URLSearchParams(params)}`);
  await ready(page);
  const simd = await page.evaluate(() => document.documentElement.dataset.engineSimd);
  assert.ok(Object.hasOwn(BUILDS, simd), `the page's engine build: ${simd}`);
  pageBuild = simd;
}

/** Click and wait for the redraw it starts. */
async function clickRedraw(page, sel, opts = {}) {
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await page.click(sel, opts);
  await ready(page);
}

/** The compare grid's JS distances: Map 'l/h' -> value. */
const gridJs = (page) => page.$$eval('g.cmp-head', (gs) => Object.fromEntries(gs.map((g) => [`${g.dataset.layer}/${g.dataset.head}`, Number(g.dataset.js)])));

/** The compare view opened on its own head: wait until the page's layer and
 *  head follow it (cmp_head=picked in the URL, the view drawn). */
async function compareSettled(page) {
  await page.waitForFunction(() => new URL(location.href).searchParams.get('cmp_head') === 'picked' && document.querySelector('g.cmp-head[data-shown]'));
  await ready(page);
}

/** The head the difference shows: [layer, head]. */
const shownHead = (page) => page.$eval('g.cmp-head[data-shown]', (g) => [Number(g.dataset.layer), Number(g.dataset.head)]);

/** The head the page shows must have the largest max |Δ| (from Node's
 *  blw_head_compare, ref) of the heads not switched off (off: Set 'l/h'),
 *  within float32 rounding, and never be switched off: [layer, head, maxAbs]. */
async function checkLargest(page, ref, H, off) {
  let top = -1;
  ref.maxAbs.forEach((m, k) => { if (!off.has(`${Math.floor(k / H)}/${k % H}`)) top = Math.max(top, m); });
  const [l, h] = await shownHead(page);
  assert.equal(off.has(`${l}/${h}`), false, `${l}:${h} is switched off: never the one shown`);
  assert.ok(ref.maxAbs[l * H + h] >= top - TOL, `shown ${l}:${h} max |Δ| ${ref.maxAbs[l * H + h]}, the largest of the heads on is ${top}`);
  return [l, h, ref.maxAbs[l * H + h]];
}

/** The sentence saying which head is shown and why: that head, its max |Δ|. */
function checkChoiceLine(text, l, h, maxAbs) {
  const m = text.match(/Showing the largest change: layer (\d+) head (\d+), max \|Δ\| = ([0-9.]+) \(the largest max \|heads off − original\|/)
    || text.match(/Showing the largest change: layer (\d+) head (\d+), max \|Δ\| = ([0-9.]+) \(the largest max \|edited text − original\|/);
  assert.ok(m, text);
  assert.deepEqual([Number(m[1]), Number(m[2])], [l, h]);
  assert.ok(Math.abs(Number(m[3]) - maxAbs) < 1e-3, `max |Δ| ${m[3]} vs ${maxAbs}`);
}

/** No legend tick and no line of the view in e-notation. */
async function noENotation(page) {
  const texts = await page.$$eval('#view .legend text, #view .cmp-lines p, #view .view-info', (x) => x.map((e) => e.textContent));
  for (const t of texts) assert.doesNotMatch(t, /\d[eE][-+]?\d/, `e-notation in "${t}"`);
}

async function checkGrid(page, ref, H, what) {
  const got = await gridJs(page);
  let worst = 0;
  for (let k = 0; k < ref.js.length; k++) worst = Math.max(worst, Math.abs(got[`${Math.floor(k / H)}/${k % H}`] - ref.js[k]));
  assert.ok(worst <= TOL, `${what}: JS distances on the page vs Node, worst ${worst}`);
  return worst;
}

scenario('compare: ablate by clicking heads in the model view; similarity and difference match wasm', async ({ page, base, shot }) => {
  await open(page, base, { text: SENT, view: 'model' });
  assert.equal(await page.isHidden('#ablation .abl-reset'), true);
  // Plain click opens a head (no ablation mode).
  await page.click('#ablation .abl-toggle');
  assert.equal(await page.getAttribute('#ablation .abl-toggle', 'aria-pressed'), 'true');
  const hit = await page.$('rect.mv-hit');
  const box = await hit.boundingBox();
  // Layer 2, head 5: the thumbnail grid is 12 wide, 6 high.
  const g = await page.evaluate(() => { const r = document.querySelector('rect.mv-hit'); return { w: Number(r.getAttribute('width')), h: Number(r.getAttribute('height')) }; });
  const at = (l, h) => ({ x: box.x + (h + 0.5) * (g.w / 12), y: box.y + (l + 0.5) * (g.h / 6) });
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await page.mouse.click(at(2, 5).x, at(2, 5).y);
  await ready(page);
  assert.equal(await page.evaluate(() => document.body.dataset.state), 'ready');
  assert.match(page.url(), /ablate=2%3A5/);
  assert.equal(await page.$$eval('g.mv-off', (x) => x.map((e) => `${e.dataset.layer}:${e.dataset.head}`).join()), '2:5');
  const cos1 = Number(await page.getAttribute('#ablation .abl-summary', 'data-cosine'));
  const A = await nodeRun(DEF, SENT, null);
  const B1 = await nodeRun(DEF, SENT, null, [[2, 5]]);
  assert.ok(Math.abs(cos1 - cos(A.emb[0], B1.emb[0])) < 1e-5, `cosine ${cos1} vs ${cos(A.emb[0], B1.emb[0])}`);
  assert.ok(cos1 < 0.99999, 'switching a head off changes the embedding');
  // A second head: the number changes again.
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await page.mouse.click(at(3, 0).x, at(3, 0).y);
  await ready(page);
  const cos2 = Number(await page.getAttribute('#ablation .abl-summary', 'data-cosine'));
  const B2 = await nodeRun(DEF, SENT, null, [[2, 5], [3, 0]]);
  assert.ok(Math.abs(cos2 - cos(A.emb[0], B2.emb[0])) < 1e-5);
  assert.notEqual(cos1.toFixed(6), cos2.toFixed(6));
  await shot(page, 'compare-ablate-model');
  // The Compare view: per-head distances as wasm computes them; the masked heads crossed.
  await clickRedraw(page, '#view-tabs button[data-view="compare"]');
  await compareSettled(page);
  const ref = await nodeCompare(A, B2);
  const w = await checkGrid(page, ref, 12, 'ablation 2:5,3:0');
  assert.deepEqual(await page.$$eval('g.cmp-head[data-off]', (x) => x.map((e) => `${e.dataset.layer}:${e.dataset.head}`)), ['2:5', '3:0']);
  // It opens on the head whose max |Δ| is the largest of those still on
  // (the switched-off heads change most of all: never shown), and says so.
  const [bl, bh, bm] = await checkLargest(page, ref, 12, new Set(['2/5', '3/0']));
  assert.ok(Math.max(ref.maxAbs[2 * 12 + 5], ref.maxAbs[3 * 12]) >= bm, 'a switched-off head changed more: it was passed over');
  assert.match(page.url(), new RegExp(`layer=${bl}&head=${bh}`));
  const lines = await page.$eval('.cmp-lines', (e) => e.textContent);
  checkChoiceLine(lines, bl, bh, bm);
  assert.match(lines, /Original: “The doctor asked .*”, every head on\. Heads off: the same text with 2 of 72 heads switched off/);
  await noENotation(page);
  assert.match(lines, /2 of 72 heads switched off/);
  assert.match(lines, /Aligned by token position/);
  // Layers 0–1 are untouched by a mask from layer 2 on.
  const js = await gridJs(page);
  assert.ok(Object.entries(js).filter(([k]) => Number(k.split('/')[0]) < 2).every(([, v]) => v < 1e-3));
  console.log(`    page vs Node: cosine ${cos2.toFixed(6)}, JS distance worst ${w.toExponential(2)}; page compare ${await page.evaluate(() => document.body.dataset.compareMs)} ms`);
  await shot(page, 'compare-ablate-view');
  // A head picked in the grid stays; the info line offers the most changed
  // head again; whole layer / all but this head / reset.
  await clickRedraw(page, 'g.cmp-head[data-layer="4"][data-head="1"]');
  assert.match(page.url(), /layer=4&head=1/);
  assert.deepEqual(await shownHead(page), [4, 1]);
  assert.match(await page.textContent('.cmp-lines'), new RegExp(`Showing layer 4 head 1, as picked\\. The largest change: layer ${bl} head ${bh}`));
  await clickRedraw(page, '.view-info .info-action');
  await compareSettled(page);
  assert.deepEqual(await shownHead(page), [bl, bh]);
  await clickRedraw(page, 'g.cmp-head[data-layer="4"][data-head="1"]');
  assert.match(page.url(), /layer=4&head=1/);
  await clickRedraw(page, '#ablation .abl-layer');
  assert.match(new URL(page.url()).searchParams.get('ablate'), /^2:5,3:0,4:\*$/);
  await clickRedraw(page, '#ablation .abl-allbut');
  assert.match(await page.textContent('#ablation .abl-summary'), /every head but/);
  await clickRedraw(page, '#ablation .abl-reset');
  assert.doesNotMatch(page.url(), /ablate=/);
});

/** Minimal pair through the Compare view's second-text box. */
async function minimalPair(page, base, textA, textB, pairA = '', pairB = '') {
  await open(page, base, { text: textA, text_b: pairA, view: 'compare', cmp: 'text' });
  assert.match(await page.textContent('.cmp-lines'), /Type the second text/);
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  if (pairB) await page.fill('input.cmp-text-b', pairB);
  await page.fill('input.cmp-text', textB);
  await ready(page);
}

scenario('compare: minimal pair, sentence (same token count) and pair; figures match wasm; URL round trip and CSV', async ({ page, base, shot }) => {
  const a = 'The doctor asked the nurse because she was late.';
  const b = 'The doctor asked the nurse because he was late.';
  await minimalPair(page, base, a, b);
  const A = await nodeRun(DEF, a, null);
  const B = await nodeRun(DEF, b, null);
  assert.equal(A.T, B.T);
  await checkGrid(page, await nodeCompare(A, B), 12, 'minimal pair');
  await compareSettled(page);
  const ref = await nodeCompare(A, B);
  const [bl, bh] = await checkLargest(page, ref, 12, new Set());
  const lines = await page.textContent('.cmp-lines');
  assert.match(lines, /Aligned by token position \(both have 12 tokens\)/);
  assert.match(lines, /Original: “The doctor asked the nurse because she was late\.”\s*Edited text: “The doctor asked the nurse because he was late\.”/);
  const m = lines.match(/original vs edited text: cosine ([0-9]+\.[0-9]+)/);
  assert.ok(m && Math.abs(Number(m[1]) - cos(A.emb[0], B.emb[0])) < 1e-5, `${m && m[1]} vs ${cos(A.emb[0], B.emb[0])}`);
  assert.ok((await page.$$eval('.cmp-row', (x) => x.map((e) => e.textContent))).includes('she/he'), 'the differing token is labelled A/B');
  await shot(page, 'compare-minimal-pair');
  // Export SVG holds the grid and the difference, with the comparison lines as notes.
  const svg = await exportSvg(page);
  assert.match(svg, /Jensen–Shannon distance per head \(edited text against original\)/);
  assert.match(svg, new RegExp(`Difference edited text − original, layer ${bl}, head ${bh}`));
  assert.match(svg, /she\/he/);
  assert.match(svg, /Aligned by token position/);
  // Keyboard: the grid is one tab stop; arrows move, Enter selects the head.
  await page.focus('g.cmp-head[tabindex="0"]');
  await page.keyboard.press(bl < 5 ? 'ArrowDown' : 'ArrowUp');
  await page.keyboard.press(bh < 11 ? 'ArrowRight' : 'ArrowLeft');
  const [kl, kh] = [bl < 5 ? bl + 1 : bl - 1, bh < 11 ? bh + 1 : bh - 1];
  assert.match(await page.textContent('.view-info .info-text'), new RegExp(`^Layer ${kl}, head ${kh}: JS distance`));
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await page.keyboard.press('Enter');
  await ready(page);
  assert.match(page.url(), new RegExp(`layer=${kl}&head=${kh}`));
  assert.deepEqual(await shownHead(page), [kl, kh]);
  // The URL holds the comparison; a fresh load reproduces it.
  const url = page.url();
  assert.equal(new URL(url).searchParams.get('cmp_text'), b);
  const before = await gridJs(page);
  await page.goto(url);
  await ready(page);
  assert.deepEqual(await gridJs(page), before);
  assert.equal(await page.inputValue('input.cmp-text'), b);
  // CSV export: per-head distances and the difference shown.
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#export-csv')]);
  const csv = (await import('node:fs')).readFileSync(await dl.path(), 'utf8');
  assert.match(csv.split('\n')[0], /js_distance,max_abs_diff/);
  assert.match(csv, /layer 5 head 11,/);
  // A pair, with a different token count on the B side: aligned by words.
  const pa = ['The doctor asked the nurse.', 'She answered.'];
  const pb = ['The surgeon asked the nurse.', 'He answered.'];
  await minimalPair(page, base, pa[0], pb[0], pa[1], pb[1]);
  const PA = await nodeRun(DEF, pa[0], pa[1]);
  const PB = await nodeRun(DEF, pb[0], pb[1]);
  const pl = await page.textContent('.cmp-lines');
  // A pair's two sentences stay apart.
  assert.match(pl, /Original: “The doctor asked the nurse\. \| She answered\.”\s*Edited text: “The surgeon asked the nurse\. \| He answered\.”/);
  if (PA.T === PB.T) {
    await checkGrid(page, await nodeCompare(PA, PB), 12, 'minimal pair (pair)');
  } else assert.match(pl, /Aligned by words/);
  const e = pl.match(/the pair's two sentences \(cosine\) is ([0-9]+\.[0-9]+) in the original and ([0-9]+\.[0-9]+) in the edited text/);
  assert.ok(e, pl);
  assert.ok(Math.abs(Number(e[1]) - cos(PA.emb[0], PA.emb[1])) < 1e-4 && Math.abs(Number(e[2]) - cos(PB.emb[0], PB.emb[1])) < 1e-4, `${e[1]} ${e[2]}`);
});

scenario('compare: minimal pair with different word counts says why there is no head-by-head difference', async ({ page, base }) => {
  await minimalPair(page, base, 'A dog barked.', 'The big old dog barked loudly at night.');
  const lines = await page.textContent('.cmp-lines');
  assert.match(lines, /No head-by-head difference: the original has \d+ tokens and \d+ words \(with \[CLS\]\/\[SEP\]\), the edited text \d+ tokens/);
  assert.match(lines, /original vs edited text: cosine /, 'the embedding comparison still shows');
  assert.equal(await page.isHidden('.cmp-body'), true);
});

scenario('compare: two models (the default against the f16 exact bundle), sentence and pair; figures match wasm', async ({ page, base, shot }) => {
  await open(page, base, { text: SENT, view: 'compare', cmp: 'model' });
  assert.match(await page.textContent('.cmp-lines'), /Choose a second model/);
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await page.selectOption('select.cmp-model', 'minilm-l6-f16');
  await ready(page);
  const A = await nodeRun(DEF, SENT, null);
  const B = await nodeRun(F16, SENT, null);
  const w = await checkGrid(page, await nodeCompare(A, B), 12, 'default vs f16');
  const lines = await page.textContent('.cmp-lines');
  assert.match(lines, new RegExp(`Original: ${reEscape(DEFAULT_MODEL.name)}\\. Other model: all-MiniLM-L6-v2 .*f16`));
  const m = lines.match(/original vs other model: cosine ([0-9]+\.[0-9]+)/);
  assert.ok(Math.abs(Number(m[1]) - cos(A.emb[0], B.emb[0])) < 1e-5);
  console.log(`    default vs f16: embedding cosine ${m[1]}, JS distance page vs Node worst ${w.toExponential(2)}`);
  await shot(page, 'compare-two-models');
  await typeText(page, '#text-b', PAIR[1]);
  await page.fill('#text-a', PAIR[0]);
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await page.fill('#text-a', PAIR[0] + ' ');
  await ready(page);
  const PA = await nodeRun(DEF, `${PAIR[0]} `, PAIR[1]);
  const PB = await nodeRun(F16, `${PAIR[0]} `, PAIR[1]);
  await checkGrid(page, await nodeCompare(PA, PB), 12, 'default vs f16, pair');
});

scenario('compare: a bundle file as the second model; a model of another shape is refused with a message', async ({ page, base }) => {
  await open(page, base, { text: SENT, view: 'compare', cmp: 'model' });
  // 2 layers × 4 heads: refused, the page stays usable.
  await page.setInputFiles('input.cmp-file', path.join(ROOT, 'build/models/tiny-bert.f32.blb'));
  await page.waitForSelector('#notices .notice.error');
  assert.match(await page.textContent('#notices'), /The second model has 2 layers × 4 heads .* heads can only be compared between models of the same shape/);
  assert.equal(await page.evaluate(() => document.body.dataset.state), 'ready');
  // The f32 bundle of the same model: compared head by head.
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await page.setInputFiles('input.cmp-file', F32);
  await ready(page);
  assert.match(await page.textContent('.cmp-lines'), /Other model: your bundle file all-minilm-l6-v2\.f32\.blb/);
  const A = await nodeRun(DEF, SENT, null);
  const B = await nodeRun(F32, SENT, null);
  await checkGrid(page, await nodeCompare(A, B), 12, 'default vs a dropped f32 bundle');
  // A link cannot carry the file: reloading says so.
  await page.goto(page.url());
  await ready(page);
  assert.match(await page.textContent('.cmp-lines'), /choose the file again/);
});

scenario('compare: a pair with heads switched off: the two sentences\' similarity before and after, as wasm', async ({ page, base }) => {
  await open(page, base, { text: PAIR[0], text_b: PAIR[1], view: 'heatmap', layer: 1, head: 4, ablate: '1:4,3:*' });
  const line = await page.textContent('#ablation .abl-summary');
  const m = line.match(/similarity of the two sentences \(encoded alone\) ([0-9]+\.[0-9]+) → ([0-9]+\.[0-9]+)/);
  assert.ok(m, line);
  const A = await nodeRun(DEF, PAIR[0], PAIR[1]);
  const B = await nodeRun(DEF, PAIR[0], PAIR[1], [[1, 4], ...Array.from({ length: 12 }, (_, h) => [3, h])]);
  assert.ok(Math.abs(Number(m[1]) - cos(A.emb[0], A.emb[1])) < 1e-4, `${m[1]} vs ${cos(A.emb[0], A.emb[1])}`);
  assert.ok(Math.abs(Number(m[2]) - cos(B.emb[0], B.emb[1])) < 1e-4, `${m[2]} vs ${cos(B.emb[0], B.emb[1])}`);
  assert.match(await page.textContent('#view .view-notes'), /Layer 1, head 4 is switched off/);
});

scenario('compare: a bad ablate= value gives a clear notice and the page stays usable; out-of-range heads dropped', async ({ page, base }) => {
  await open(page, base, { text: SENT, view: 'model', ablate: '2:x,banana' });
  const n = await page.textContent('#notices');
  assert.match(n, /Ignored ablate=2:x,banana \(expected heads as layer:head or layer:\*/);
  assert.equal(await page.isHidden('#ablation .abl-reset'), true);
  await open(page, base, { text: SENT, view: 'model', ablate: '1:3,9:0,2:12' });
  assert.match(await page.textContent('#notices'), /Ignored 2:12, 9:0 in ablate= \(this model has layers 0–5 and heads 0–11\)|Ignored 9:0, 2:12 in ablate=/);
  assert.equal(await page.$$eval('g.mv-off', (x) => x.map((e) => `${e.dataset.layer}:${e.dataset.head}`).join()), '1:3');
  assert.match(await page.textContent('#ablation .abl-summary'), /1 of 72 heads switched off/);
});

/** A touch tap (Chromium's touch events) at the middle of sel. */
scenario('compare: heads overview in ablate mode switches heads off (touch tap); phone width 390', async ({ page, base, context, shot }) => {
  await open(page, base, { text: SENT, view: 'overview' });
  const cdp = await context.newCDPSession(page);
  await cdp.send('Emulation.setTouchEmulationEnabled', { enabled: true, maxTouchPoints: 1 });
  await touchTap(page, cdp, '#ablation .abl-toggle');
  await page.waitForFunction(() => document.querySelector('#ablation .abl-toggle').getAttribute('aria-pressed') === 'true');
  await page.evaluate(() => { document.body.dataset.state = 'loading'; });
  await touchTap(page, cdp, 'g.ov-head[data-layer="1"][data-head="4"]');
  await ready(page);
  assert.equal(new URL(page.url()).searchParams.get('ablate'), '1:4');
  assert.equal(await page.getAttribute('g.ov-head[data-layer="1"][data-head="4"]', 'data-off'), '1');
  assert.equal(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), true, 'no sideways scroll');
  await shot(page, 'compare-phone-overview');
  await clickRedraw(page, '#view-tabs button[data-view="compare"]');
  assert.equal(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), true, 'no sideways scroll (compare)');
  await shot(page, 'compare-phone-view');
}, { viewport: { width: 390, height: 844 } });

scenario('compare: a switched-off head asked for by the URL is never shown; no difference at all is said in words; no e-notation', async ({ page, base, shot }) => {
  // The link names a switched-off head (2:5): the difference shows the
  // largest change among the heads still on instead, and says why.
  await open(page, base, { text: SENT, view: 'compare', ablate: '2:5,3:*', layer: 2, head: 5, cmp_head: 'picked' });
  await compareSettled(page);
  const A = await nodeRun(DEF, SENT, null);
  const B = await nodeRun(DEF, SENT, null, [[2, 5], ...Array.from({ length: 12 }, (_, h) => [3, h])]);
  const ref = await nodeCompare(A, B);
  const off = new Set(['2/5', ...Array.from({ length: 12 }, (_, h) => `3/${h}`)]);
  const [bl, bh, bm] = await checkLargest(page, ref, 12, off);
  checkChoiceLine(await page.textContent('.cmp-lines'), bl, bh, bm);
  await noENotation(page);
  await page.setViewportSize({ width: 1280, height: 720 });
  await ready(page);
  await shot(page, 'compare-heads-off-1280');
  // The same text twice: no difference anywhere, said in words, no flat map.
  await open(page, base, { text: SENT, view: 'compare', cmp: 'text', cmp_text: SENT });
  const lines = await page.textContent('.cmp-lines');
  assert.match(lines, /No difference: every head that is on attends exactly as in the original/);
  assert.equal(await page.isHidden('.cmp-body'), true, 'no flat map, no grid of zeros');
  await noENotation(page);
  await shot(page, 'compare-no-difference');
});
