// compare.test.mjs — web/js/lib/compare.js (the comparison's data layer) and
// the comparison's URL state: ablate= parsing and fitting, head toggles,
// alignment of two runs by tokens or by words, the difference and the
// ranking, embedding figures. The distances themselves are C's
// (tests/web/worker.test.mjs checks them against numpy on Hugging Face
// attention).
import test from 'node:test';
import assert from 'node:assert/strict';
import vm from 'node:vm';
import { readFileSync } from 'node:fs';
import {
  parseAblate, fitAblate, formatMask, toggleHead, withHeadOff, toggleLayer, allBut, describeMask, maskSet, comparing, partnerOf, sides,
  alignRuns, headDifference, rankChanges, embeddingFigures, cosine,
  mostChanged, runNames, pairText, shorten, legendFormat, formatSmall,
} from '../../web/js/lib/compare.js';
import { parseState, serializeState, DEFAULTS, permalinkSearch, MAX_PERMALINK } from '../../web/js/page/state.js';
import { viewById } from '../../web/js/views/index.js';
import { snapshotFromRun } from '../../web/js/lib/snapshot.js';
import { toJSON } from '../../web/js/lib/export_data.js';

const shownMatrices = (run, s) => viewById(s.view).shown(run, s); // (the view's own export)
import { compareKey } from '../../web/js/engine/compare_runs.js';

test('ablate=: canonical form, whole layers, refusals', () => {
  assert.equal(parseAblate('4:1,2:5,2:5,0:*,0:3'), '0:*,2:5,4:1');
  assert.equal(parseAblate(''), '');
  assert.equal(parseAblate('none'), '');
  for (const bad of ['2:x', '2', ':3', '2:3:4', '2;3', '-1:2', '1:2,', 'banana']) assert.equal(parseAblate(bad), null, bad);
});

test('fitAblate: heads of a model, out-of-range items dropped with a notice', () => {
  const f = fitAblate('1:*,2:5', 6, 12);
  assert.equal(f.heads.length, 13);
  assert.deepEqual(f.heads.at(-1), [2, 5]);
  assert.equal(f.text, '1:*,2:5');
  assert.deepEqual(f.notices, []);
  const g = fitAblate('1:3,9:0,2:12', 6, 12);
  assert.deepEqual(g.heads, [[1, 3]]);
  assert.equal(g.text, '1:3');
  assert.match(g.notices[0], /Ignored 9:0, 2:12 in ablate= \(this model has layers 0–5 and heads 0–11\)/);
  assert.deepEqual(fitAblate('', 6, 12), { heads: [], text: '', notices: [] });
});

test('toggles: one head, a whole layer, all but one; masks as sets and sentences', () => {
  let t = toggleHead('', 2, 5, 6, 12);
  assert.equal(t, '2:5');
  t = toggleHead(t, 3, 0, 6, 12);
  assert.equal(t, '2:5,3:0');
  assert.equal(toggleHead(t, 2, 5, 6, 12), '3:0');
  assert.equal(withHeadOff(t, 2, 5, 6, 12), '2:5,3:0', 'a head already off stays off');
  assert.equal(withHeadOff(t, 1, 1, 6, 12), '1:1,2:5,3:0');
  assert.equal(toggleLayer(t, 2, 6, 12), '2:*,3:0');
  assert.equal(toggleLayer('2:*,3:0', 2, 6, 12), '3:0', 'a full layer toggles back on');
  // A whole layer built head by head is written as L:*.
  let u = '';
  for (let h = 0; h < 12; h++) u = toggleHead(u, 4, h, 6, 12);
  assert.equal(u, '4:*');
  assert.equal(toggleHead('4:*', 4, 7, 6, 12).split(',').length, 11);
  const all = allBut(5, 7, 6, 12);
  assert.equal(all, '0:*,1:*,2:*,3:*,4:*,5:0,5:1,5:2,5:3,5:4,5:5,5:6,5:8,5:9,5:10,5:11');
  assert.equal(fitAblate(all, 6, 12).heads.length, 71);
  assert.match(describeMask(all, 6, 12), /71 of 72 heads switched off: every head but 5:7/);
  assert.match(describeMask('2:5', 6, 12), /1 of 72 heads switched off \(2:5\)/);
  assert.equal(describeMask('', 6, 12), '');
  assert.deepEqual([...maskSet('1:2,3:*', 6, 4)], ['1/2', '3/0', '3/1', '3/2', '3/3']);
  assert.equal(formatMask([[0, 1], [0, 0]], 1, 2), '0:*');
});

test('what is compared: partner run and sides per kind; when a comparison runs', () => {
  const s = { ...DEFAULTS, text: 'a', text_b: 'b', ablate: '1:1', cmp_text: 'c', cmp_model: 'm2', model: 'm1' };
  assert.deepEqual(partnerOf({ ...s, cmp: 'ablate' }), { kind: 'ablate', text: 'a', text_b: 'b', model: 'm1', masked: false });
  assert.deepEqual(partnerOf({ ...s, cmp: 'text' }), { kind: 'text', text: 'c', text_b: '', model: 'm1', masked: true });
  assert.deepEqual(partnerOf({ ...s, cmp: 'model' }), { kind: 'model', text: 'a', text_b: 'b', model: 'm2', masked: true });
  assert.deepEqual(sides('ablate', 'page', 'partner'), { A: 'partner', B: 'page' });
  assert.deepEqual(sides('text', 'page', 'partner'), { A: 'page', B: 'partner' });
  assert.equal(comparing({ ...DEFAULTS }), false);
  assert.equal(comparing({ ...DEFAULTS, ablate: '0:1' }), true);
  assert.equal(comparing({ ...DEFAULTS, view: 'compare' }), false, 'the compare view asks by its needs()');
  assert.notEqual(compareKey({ ...s, cmp: 'text' }), compareKey({ ...s, cmp: 'text', cmp_text: 'd' }));
  assert.notEqual(compareKey(s), compareKey({ ...s, ablate: '1:2' }));
});

/** A run of tokens (word ids, one segment) with per-head attention from f(l, h, i, j), rows normalised. */
function fakeRun(tokens, wordIds, f, { L = 2, H = 2, typeIds = null } = {}) {
  const T = tokens.length;
  const attn = [];
  for (let l = 0; l < L; l++) {
    const a = new Float32Array(H * T * T);
    for (let h = 0; h < H; h++) {
      for (let i = 0; i < T; i++) {
        let sum = 0;
        for (let j = 0; j < T; j++) sum += (a[(h * T + i) * T + j] = f(l, h, i, j));
        for (let j = 0; j < T; j++) a[(h * T + i) * T + j] /= sum;
      }
    }
    attn.push(a);
  }
  return { tokens, wordIds, typeIds: typeIds || tokens.map(() => 0), offsets: null, T, L, H, attn, mask: null };
}

test('alignRuns: by token position, by words, or not at all (with the reason)', () => {
  const she = fakeRun(['[CLS]', 'she', 'ran', '[SEP]'], [-1, 0, 1, -1], (l, h, i, j) => 1 + i + j + h);
  const he = fakeRun(['[CLS]', 'he', 'ran', '[SEP]'], [-1, 0, 1, -1], (l, h, i, j) => 1 + i * j + l);
  const a = alignRuns(she, he);
  assert.equal(a.how, 'tokens');
  assert.equal(a.same, false);
  assert.equal(a.mats(she, 1), she.attn[1], 'positions: the run\'s own matrices');
  // "surgeon" in two pieces: 5 tokens against 4, both 4 words.
  const surgeon = fakeRun(['[CLS]', 'surge', '##on', 'ran', '[SEP]'], [-1, 0, 0, 1, -1], () => 1);
  const w = alignRuns(she, surgeon);
  assert.equal(w.how, 'words');
  assert.equal(w.K, 4);
  assert.deepEqual(w.labelsB, ['[CLS]', 'surgeon', 'ran', '[SEP]']);
  const m = w.mats(surgeon, 0); // uniform rows over 5 tokens, merged: the word "surgeon" gets 2/5
  assert.equal(m.length, 2 * 16);
  assert.ok(Math.abs(m[1] - 0.4) < 1e-6 && Math.abs(m[0] - 0.2) < 1e-6);
  for (let r = 0; r < 8; r++) assert.ok(Math.abs(m.subarray(r * 4, r * 4 + 4).reduce((x, y) => x + y, 0) - 1) < 1e-6, 'rows still sum to 1');
  const longer = fakeRun(['[CLS]', 'the', 'big', 'dog', 'ran', '[SEP]'], [-1, 0, 1, 2, 3, -1], () => 1);
  const n = alignRuns(she, longer);
  assert.equal(n.how, null);
  assert.match(n.why, /A has 4 tokens and 4 words .* B has 6 tokens and 6 words/);
  assert.equal(alignRuns(she, fakeRun(['[CLS]', 'a', 'b', '[SEP]'], [-1, 0, 1, -1], () => 1, { H: 3 })).how, null);
});

test('headDifference, rankChanges, embedding figures', () => {
  const K = 2; const H = 2;
  const A = Float32Array.from([0.5, 0.5, 1, 0, /* head 1 */ 0, 1, 0, 1]);
  const B = Float32Array.from([1, 0, 1, 0, /* head 1 */ 0.5, 0.5, 0, 1]);
  assert.deepEqual(Array.from(headDifference(A, B, H, K, 0)), [0.5, -0.5, 0, 0]);
  assert.deepEqual(Array.from(headDifference(A, B, H, K, 'mean')), [0.5, -0.5, 0, 0].map((v, i) => (v + [0.5, -0.5, 0, 0][i]) / 2));
  const r = rankChanges(Float64Array.from([0.1, 0.7, 0.3, 0.2]), Float64Array.from([1, 2, 3, 4]), 2, 2, new Set(['0/1']));
  assert.deepEqual(r.map((d) => `${d.l}:${d.h}`), ['1:0', '1:1', '0:0', '0:1'], 'by distance, switched-off heads last');
  const e = (x) => Float32Array.from(x);
  const f = embeddingFigures({ embeddings: [e([1, 0]), e([0, 1])] }, { embeddings: [e([1, 0]), e([1, 1])] });
  assert.equal(f.self, 1);
  assert.equal(f.pairA, 0);
  assert.ok(Math.abs(f.pairB - Math.SQRT1_2) < 1e-7);
  assert.equal(embeddingFigures({ embeddings: null }, { embeddings: [e([1])] }), null);
  assert.ok(Math.abs(cosine(e([3, 4]), e([4, 3])) - 24 / 25) < 1e-7);
});

test('URL state: the comparison round-trips; a bad ablate= gives a notice and no mask', () => {
  const s = { ...DEFAULTS, view: 'compare', ablate: '0:*,2:5', cmp: 'text', cmp_text: 'The nurse & "he"', cmp_text_b: 'B side', cmp_model: 'minilm-l6-f16' };
  const back = parseState(serializeState(s));
  assert.deepEqual(back.notices, []);
  for (const k of ['view', 'ablate', 'cmp', 'cmp_text', 'cmp_text_b', 'cmp_model']) assert.equal(back.state[k], s[k], k);
  assert.equal(new URLSearchParams(serializeState({ ...DEFAULTS })).has('ablate'), false, 'defaults stay out of the URL');
  const bad = parseState('?ablate=3:x&cmp=other');
  assert.equal(bad.state.ablate, '');
  assert.equal(bad.state.cmp, 'ablate');
  assert.match(bad.notices[0], /Ignored ablate=3:x \(expected heads as layer:head or layer:\* \(whole layer\)/);
  assert.match(bad.notices[1], /Ignored cmp=other/);
  assert.equal(parseState('?ablate=2:5,2:*').state.ablate, '2:*');
});

test('snapshots and exports carry the switched-off heads', () => {
  const run = { ...fakeRun(['[CLS]', 'a', '[SEP]'], [-1, 0, -1], () => 1, { L: 1, H: 2 }), d: 2, norms: null, q: null, k: null, truncated: false };
  const s = { ...DEFAULTS, text: 'a', view: 'heatmap', ablate: '0:1' };
  assert.equal(snapshotFromRun(run, s, {}, viewById(s.view).snapshot).state.ablate, '0:1');
  const shown = shownMatrices(run, s);
  assert.match(shown.what, /heads 0:1 switched off/);
  assert.equal(JSON.parse(toJSON(shown)).heads_switched_off, '0:1');
  assert.equal('heads_switched_off' in JSON.parse(toJSON(shownMatrices(run, { ...s, ablate: '' }))), false);
});

test('permalinks stay within MAX_PERMALINK with a long second text', async () => {
  const long = Array.from({ length: 3000 }, (_, i) => `w${(i * 7919) % 10007}`).join(' ');
  const { search, cut } = await permalinkSearch({ ...DEFAULTS, text: 'a short text', view: 'compare', cmp: 'text', cmp_text: long }, { maxChars: MAX_PERMALINK });
  assert.ok(search.length <= MAX_PERMALINK, `${search.length}`);
  assert.ok(cut);
  const back = parseState(search).state;
  assert.ok(back.cmp_text.length > 1000 && long.startsWith(back.cmp_text), 'keeps the start of the second text');
  const short = await permalinkSearch({ ...DEFAULTS, text: 'a', cmp: 'text', cmp_text: 'b' });
  assert.equal(short.cut, null);
  assert.equal(parseState(short.search).state.cmp_text, 'b');
});

// compare_runs.js with stand-in engines (the real worker and C distances are
// tested in worker.test.mjs and the browser scenarios): which runs a
// comparison costs, and the refusals it reports.
function standInEngine(L = 2, H = 2, log = []) {
  return {
    log,
    worker: { terminate() { log.push('terminate'); } },
    async run(req) {
      log.push(`run ${req.a}${req.mask ? ` mask ${JSON.stringify(req.mask)}` : ''}`);
      const r = fakeRun(['[CLS]', req.a, '[SEP]'], [-1, 0, -1], (l, h, i, j) => 1 + (req.mask ? i * j : 0), { L, H });
      return { ...r, embeddings: [Float32Array.from([1, req.mask ? 1 : 0])] };
    },
    async compare(req) {
      log.push('compare');
      const n = req.a.length * req.H;
      return { js: new Float64Array(n).fill(0.25), maxAbs: new Float64Array(n).fill(0.5), ms: 0 };
    },
  };
}

test('Comparer: an ablation click costs one page run, the unmasked partner is kept; errors are sentences', async () => {
  const { Comparer } = await import('../../web/js/engine/compare_runs.js');
  const log = [];
  const main = standInEngine(2, 2, log);
  const info = { config: { n_layers: 2, n_heads: 2, hidden: 2 } };
  const c = new Comparer({ mainEngine: () => main, makeEngine: async () => standInEngine(3, 2), loadModel: async () => ({ config: { n_layers: 3, n_heads: 2, hidden: 2 } }), pageInfo: () => info });
  const s = { ...DEFAULTS, text: 'x', ablate: '0:1' };
  const page1 = await main.run({ a: 'x', mask: [[0, 1]] });
  const r1 = await c.compare(s, page1, [[0, 1]], maskSet('0:1', 2, 2));
  assert.deepEqual(log, ['run x mask [[0,1]]', 'run x', 'compare']);
  assert.equal(r1.B, page1, 'B: the page\'s (ablated) run');
  assert.notEqual(r1.A, page1, 'A: the unmasked partner');
  assert.equal(r1.ranked.at(-1).off, true, 'the switched-off head is ranked last');
  assert.ok(Math.abs(r1.emb.self - Math.SQRT1_2) < 1e-7);
  log.length = 0;
  const page2 = await main.run({ a: 'x', mask: [[0, 1], [1, 0]] }); // the next click
  await c.compare({ ...s, ablate: '0:1,1:0' }, page2, [[0, 1], [1, 0]], maskSet('0:1,1:0', 2, 2));
  assert.deepEqual(log, ['run x mask [[0,1],[1,0]]', 'compare'], 'no second partner run');
  assert.match((await c.compare({ ...s, cmp: 'text', cmp_text: ' ' }, page2, [], new Set())).error, /Type the second text/);
  assert.match((await c.compare({ ...s, cmp: 'model', cmp_model: '' }, page2, [], new Set())).error, /Choose a second model/);
  assert.match((await c.compare({ ...s, cmp: 'model', cmp_model: 'other' }, page2, [], new Set())).error, /The second model has 3 layers × 2 heads \(hidden 2\) and this one 2 × 2 \(hidden 2\)/);
  assert.match((await c.compare({ ...s, cmp: 'model', cmp_model: 'local' }, page2, [], new Set())).error, /choose the file again/);
});

// Issue 26 item 3: Compare opens on the most changed head that is on in both
// runs, names the runs by what changed, keeps a pair's sentences apart and
// never writes e-notation.
test('mostChanged: the largest max |Δ| among heads on in both runs, never a switched-off head', () => {
  const L = 2;
  const H = 3;
  // Head 1:2 changed most of all, but it is switched off (its attention is
  // all zeros in B); of the heads on, 0:1 has the largest max |Δ| while
  // 1:0 has the largest JS distance.
  const maxAbs = Float64Array.from([0.01, 0.40, 0.02, 0.30, 0.05, 0.95]);
  const js = Float64Array.from([0.01, 0.20, 0.02, 0.35, 0.03, 0.90]);
  const off = maskSet('1:2', L, H);
  const best = mostChanged(js, maxAbs, L, H, off);
  assert.deepEqual([best.l, best.h, best.maxAbs, best.none], [0, 1, 0.40, false]);
  const brute = [...maxAbs.keys()].filter((k) => !off.has(`${Math.floor(k / H)}/${k % H}`)).sort((a, b) => maxAbs[b] - maxAbs[a])[0];
  assert.equal(best.l * H + best.h, brute);
  // Every head off but one: that one, whatever its numbers.
  const one = mostChanged(js, maxAbs, L, H, maskSet(allBut(0, 0, L, H), L, H));
  assert.deepEqual([one.l, one.h], [0, 0]);
  assert.equal(mostChanged(js, maxAbs, L, H, maskSet('0:*,1:*', L, H)), null, 'every head off: nothing to open on');
  // No difference anywhere (the same run twice): said, not drawn flat.
  const flat = mostChanged(new Float64Array(6), Float64Array.from([0, 2e-7, 0, 0, 0, 0]), L, H);
  assert.equal(flat.none, true);
  // A tie opens on the first head in layer, head order.
  const tie = mostChanged(new Float64Array(6), Float64Array.from([0, 0.5, 0, 0.5, 0, 0]), L, H);
  assert.deepEqual([tie.l, tie.h], [0, 1]);
});

test('run names, a pair kept apart, long texts shortened', () => {
  assert.deepEqual(runNames('ablate'), { A: 'original', B: 'heads off' });
  assert.deepEqual(runNames('text'), { A: 'original', B: 'edited text' });
  assert.deepEqual(runNames('model'), { A: 'original', B: 'other model' });
  assert.equal(pairText('The cat sat.', 'It was tired.'), 'The cat sat. | It was tired.');
  assert.equal(pairText('One sentence.', ''), 'One sentence.');
  assert.equal(shorten('short', 80), 'short');
  const long = 'word '.repeat(100).trim();
  const cut = shorten(long, 80);
  assert.equal([...cut].length <= 80, true);
  assert.ok(cut.endsWith('…') && long.startsWith(cut.slice(0, -1)));
  assert.equal(shorten('🙂'.repeat(90), 80), `${'🙂'.repeat(79)}…`, 'whole code points');
});

test('legend ticks and small numbers are never in e-notation', async () => {
  // The D3 build the page carries (tools/build_site.mjs: vendor/d3.min.js).
  const box = {};
  vm.runInNewContext(readFileSync(new URL('../../node_modules/d3/dist/d3.min.js', import.meta.url), 'utf8'), box);
  const { format } = box.d3;
  for (const m of [1, 0.5, 0.05, 0.004, 1e-4, 1e-6, 3e-7, 1e-9]) {
    const f = format(legendFormat(m));
    for (const t of [-m, -m / 2, 0, m / 2, m]) {
      const s = f(t);
      assert.doesNotMatch(s, /e/i, `${m}: tick ${t} -> ${s}`);
      if (t !== 0) assert.ok(Math.abs(Number(s.replace('−', '-')) - t) <= Math.abs(t) * 0.05, `${m}: tick ${t} -> ${s} (two significant digits)`);
    }
    assert.equal(f(0), '0');
  }
  for (const v of [0, 0.5, 0.0123, 4e-5, 1e-6, 2.5e-8]) {
    const s = formatSmall(v);
    assert.doesNotMatch(s, /e/i, `${v} -> ${s}`);
    assert.ok(Math.abs(Number(s) - v) <= v * 0.05 + 5e-4 * (v >= 0.001), `${v} -> ${s}`);
  }
  assert.equal(formatSmall(0), '0');
});
