// explain.test.mjs — token attributions and head effects (`bertlens explain`,
// src/analysis/explain.c over the reverse-mode pass src/model/backward.c, and the wasm
// export blw_explain_json, src/wasm/wasm_explain.c) against the same quantities
// computed with torch.autograd in float64 (tests/fixtures/explain/make.py)
// on the masked-LM fixture of every family (tests/fixtures/mlm/<family>,
// converted here to f32 bundles as tests/predict.test.mjs converts them):
//   grad-input, ig (M = 32, trapezoid, pad baseline with specials kept)
//             each score within 1e-3 x the largest |score| + 1e-5 of torch;
//             the target (top word at the first mask) the same; delta within
//             1e-4; completeness (sum of IG scores vs delta) reported
//   --ablate  IG with head 0 of the last layer switched off, within the
//             same bound (the backward pass respects the head mask)
// DeBERTa's and ModernBERT's grad-input scores are ~0 (1e-5 of IG's): with
// no absolute positions or token types the embedding LayerNorm's input is
// e_t itself, and LayerNorm is scale-invariant, so grad . e_t = 0 exactly;
// their gradients are checked through IG (whose path leaves the
// baseline's direction), which fails if e.g. DeBERTa's p2c gradient is dropped.
//   --heads   p_target - p_target with that head off, within 1e-5
//   q8        top-1 agreement (the token of the largest |score|) and the
//             rank correlation of the scores with f32's, reported
//
//   node --test tests/explain.test.mjs                           native (BERTLENS_BACKEND)
//   BERTLENS_BACKEND=wasm node --test tests/explain.test.mjs     the wasm module
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { BIN, IS_WASM, QUICK, ROOT } from './lib/backend.mjs';
import { HEADS_DIR, convert, headCheckpoint, mlmCheckpoint, ok, wasmHolding } from './lib/checkpoints.mjs';
import { putString, wasmError } from '../tools/wasm_node.mjs';

const REFS = JSON.parse(fs.readFileSync(path.join(ROOT, 'tests/fixtures/explain/refs.json'), 'utf8'));
const OUT = path.join(ROOT, `build/explain-test-${process.env.BERTLENS_BACKEND || 'native'}`);
fs.mkdirSync(OUT, { recursive: true });

/** The family's bundle in dtype dt, converted with its tokenizer (as predict.test.mjs). */
function bundle(fam, dt) {
  return convert(mlmCheckpoint(fam, OUT), path.join(OUT, `${fam}-${dt}.blb`), dt, `explain-${fam}`);
}

/** The explanation JSON: `bertlens explain` or blw_explain_json. */
async function explain(file, texts, { method = 'grad-input', heads = false, ablate = null, target = -1, steps = REFS.steps } = {}) {
  if (!IS_WASM) {
    const argv = ['explain', '--method', method, '--steps', String(steps)];
    if (target >= 0) argv.push('--target', String(target));
    if (heads) argv.push('--heads');
    if (ablate) argv.push('--ablate', ablate);
    return JSON.parse(ok(BIN, [...argv, file, ...texts]).stdout);
  }
  const M = await wasmHolding(file);
  const { n_layers: L, n_heads: NH } = JSON.parse(M.UTF8ToString(M._blw_info_json())).config;
  let maskPtr = 0;
  if (ablate) { /* one head "l:h" */
    const [l, h] = ablate.split(':').map(Number);
    maskPtr = M._malloc(L * NH);
    M.HEAPU8.fill(0, maskPtr, maskPtr + L * NH);
    M.HEAPU8[maskPtr + l * NH + h] = 1;
  }
  M._blw_set_head_mask(maskPtr);
  if (maskPtr) M._free(maskPtr);
  M._blw_set_final(1);
  const a = putString(M, texts[0]), b = texts[1] === undefined ? 0 : putString(M, texts[1]);
  try {
    if (M._blw_run(a, b, 8 /* BL_KEEP_HIDDEN */, -1) < 0) throw new Error(wasmError(M));
  } finally {
    M._free(a);
    if (b) M._free(b);
  }
  const p = M._blw_explain_json(method === 'ig' ? 1 : 0, steps, -1, target, heads ? 1 : 0);
  M._blw_set_head_mask(0);
  if (!p) throw new Error(wasmError(M));
  return JSON.parse(M.UTF8ToString(p));
}

/** Largest |got - want| over the bound 1e-3 max|want| + 1e-5 (<= 1 passes). */
function within(got, want) {
  assert.equal(got.length, want.length);
  const big = Math.max(...want.map(Math.abs));
  const tol = 1e-3 * big + 1e-5;
  let worst = 0;
  for (let i = 0; i < want.length; i++) worst = Math.max(worst, Math.abs(got[i] - want[i]) / tol);
  return { worst, err: worst * tol, rel: (worst * tol) / big };
}

/** Spearman's rank correlation of two equal-length lists. */
function spearman(a, b) {
  const rank = (x) => {
    const idx = x.map((v, i) => [v, i]).sort((p, q) => p[0] - q[0]);
    const r = new Array(x.length);
    idx.forEach(([, i], k) => { r[i] = k; });
    return r;
  };
  const ra = rank(a), rb = rank(b), n = a.length, m = (n - 1) / 2;
  let num = 0, da = 0, db = 0;
  for (let i = 0; i < n; i++) {
    num += (ra[i] - m) * (rb[i] - m);
    da += (ra[i] - m) ** 2;
    db += (rb[i] - m) ** 2;
  }
  return num / Math.sqrt(da * db);
}

const argmaxAbs = (x) => x.reduce((best, v, i) => (Math.abs(v) > Math.abs(x[best]) ? i : best), 0);

for (const { family, cases } of REFS.families) {
  const use = QUICK ? cases.slice(0, 1) : cases;
  test(`${family}: grad-input, IG and head effects match torch.autograd (float64)`, async (t) => {
    const file = bundle(family, 'f32');
    const worst = { gi: 0, ig: 0, ablated: 0, heads: 0 };
    for (const c of use) {
      const gi = await explain(file, c.texts, { heads: true });
      assert.deepEqual(gi.ids, c.ids);
      assert.equal(gi.position, c.position);
      assert.equal(gi.target, c.target, 'the top word at the first mask');
      assert.equal(gi.method, 'grad-input');
      const a = within(gi.scores, c.grad_input);
      assert.ok(a.worst <= 1, `grad-input ${JSON.stringify(c.texts)}: |Δ| ${a.err.toExponential(2)} over the bound\n${gi.scores}\n${c.grad_input}`);
      worst.gi = Math.max(worst.gi, a.rel);
      assert.ok(Math.abs(gi.logit - c.logit) < 1e-4, `logit ${gi.logit} vs ${c.logit}`);
      assert.ok(Math.abs(gi.delta - c.delta) < 1e-4, `delta ${gi.delta} vs ${c.delta}`);
      for (let l = 0; l < c.heads.length; l++)
        for (let h = 0; h < c.heads[l].length; h++) {
          const d = Math.abs(gi.heads[l][h] - c.heads[l][h]);
          assert.ok(d <= 1e-5, `head effect ${l}:${h} ${gi.heads[l][h]} vs ${c.heads[l][h]}`);
          worst.heads = Math.max(worst.heads, d);
        }
      const ig = await explain(file, c.texts, { method: 'ig' });
      assert.equal(ig.method, 'ig');
      assert.equal(ig.steps, REFS.steps);
      const b = within(ig.scores, c.ig);
      assert.ok(b.worst <= 1, `IG ${JSON.stringify(c.texts)}: |Δ| ${b.err.toExponential(2)} over the bound\n${ig.scores}\n${c.ig}`);
      worst.ig = Math.max(worst.ig, b.rel);
      assert.ok(Math.abs(ig.sum - c.ig_sum) <= 1e-3 * Math.abs(c.ig_sum) + 1e-4, `IG sum ${ig.sum} vs ${c.ig_sum}`);
      t.diagnostic(`${JSON.stringify(c.texts[0])}: IG completeness sum ${ig.sum.toFixed(4)} vs delta ${ig.delta.toFixed(4)} (torch: ${c.ig_sum.toFixed(4)} vs ${c.delta.toFixed(4)})`);
      // the same word as torch's (the unablated model's top word)
      const ab = await explain(file, c.texts, { method: 'ig', ablate: `${c.ablated.layer}:${c.ablated.head}`, target: c.target });
      assert.equal(ab.target, c.target);
      const e = within(ab.scores, c.ablated.ig);
      assert.ok(e.worst <= 1, `IG with ${c.ablated.layer}:${c.ablated.head} off: |Δ| ${e.err.toExponential(2)} over the bound`);
      worst.ablated = Math.max(worst.ablated, e.rel);
    }
    t.diagnostic(`${family}: largest |Δ| / max|score|: grad-input ${worst.gi.toExponential(2)}, IG ${worst.ig.toExponential(2)}, ` +
      `ablated ${worst.ablated.toExponential(2)}; head effects max |Δ| ${worst.heads.toExponential(2)}`);
  });
}

test('q8 bundles: attributions agree with f32 (reported)', { skip: QUICK && 'quick run' }, async (t) => {
  let top = 0, n = 0, rhoMin = 1, rhoSum = 0;
  for (const { family, cases } of REFS.families) {
    let file;
    try {
      file = bundle(family, 'q8');
    } catch (e) { /* ALBERT's embedding width 16 is no multiple of q8's 32-blocks */
      assert.match(e.message, /not a multiple of 32/);
      t.diagnostic(`${family}: no q8 bundle (${e.message.split('\n').find((l) => /multiple of 32/.test(l)).trim()})`);
      continue;
    }
    for (const c of cases) {
      const r = await explain(file, c.texts, { target: c.target }); /* f32's word, whatever q8's top is */
      assert.equal(r.scores.length, c.grad_input.length);
      assert.ok(r.scores.every(Number.isFinite));
      const rho = spearman(r.scores, c.grad_input);
      top += argmaxAbs(r.scores) === argmaxAbs(c.grad_input) ? 1 : 0;
      n++;
      rhoMin = Math.min(rhoMin, rho);
      rhoSum += rho;
      t.diagnostic(`${family} q8 ${JSON.stringify(c.texts[0])}: rank correlation ${rho.toFixed(3)}`);
    }
  }
  t.diagnostic(`q8 grad-input vs torch f64: top-1 token agreement ${top}/${n}, rank correlation mean ${(rhoSum / n).toFixed(3)}, min ${rhoMin.toFixed(3)}`);
  assert.ok(rhoSum / n > 0.5, 'q8 attributions should still rank the tokens like f32');
});

test('explain refuses what it cannot explain', { skip: IS_WASM && 'native only' }, () => {
  const file = bundle('bert', 'f32');
  const r = spawnSync(BIN, ['explain', '--method', 'shap', file, 'a [MASK] b'], { encoding: 'utf8' });
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /--method is grad-input or ig/);
  const p = spawnSync(BIN, ['explain', '--position', '99', file, 'a [MASK] b'], { encoding: 'utf8' });
  assert.notEqual(p.status, 0);
  assert.match(p.stderr, /position 99 is out of range/);
  const w = JSON.parse(ok(BIN, ['explain', '--target', 'paris', file, 'a [MASK] b']).stdout);
  assert.equal(w.label, 'paris');
});

// Every family's traits have their block in the reverse-mode pass
// (src/model/backward.c, bli_backward_refuses): explain gets past it to the head
// for each (the fixtures of tests/fixtures/families have none), where it
// used to stop NomicBERT and GTE (rotary post-norm layers) and EuroBERT
// (RMSNorm). Their gradients are checked on their task heads below.
test('explain differentiates every family (none refused by a trait)', { skip: IS_WASM && 'native only' }, () => {
  const dir = path.join(ROOT, 'tests/fixtures/families');
  const fams = fs.readdirSync(dir).filter((f) => fs.existsSync(path.join(dir, f, 'config.json')));
  assert.ok(fams.includes('eurobert') && fams.includes('gte') && fams.includes('nomic-bert'));
  for (const fam of fams) {
    const file = path.join(OUT, `family-${fam}.blb`);
    ok(BIN, ['convert', path.join(dir, fam), file, '--dtype', 'f32']);
    const r = spawnSync(BIN, ['explain', file, 'hello world'], { encoding: 'utf8' });
    assert.notEqual(r.status, 0, fam);
    assert.doesNotMatch(r.stderr, /not differentiated/, fam);
    assert.match(r.stderr, /no head to explain/, fam);
  }
});

// Task heads (tests/fixtures/heads, assembled as tests/heads.test.mjs does):
// the target is the predicted class (token classification: at the first
// token that is not special; question answering: the best span's start
// logit plus its end logit, position = start, target = end), grad-input and
// IG (M = 8) within the same bound
// of torch.autograd float64 (tests/fixtures/explain/make.py --heads); for
// sequence and token classification, head effects on the target's
// probability within 1e-5 of the same ablation done with forward hooks.
// Every checkpoint of tests/fixtures/heads: each family's sequence, token and
// QA heads (NomicBERT, GTE, EuroBERT: no QA in transformers) and the
// variants (multi-label, regression, mean / bos pooling); NomicBERT and GTE
// (rotary post-norm layers, gated blocks: SwiGLU, GELU) and EuroBERT
// (pre-norm RMSNorm layers, SwiGLU, "late" pooling) among them.
const HEAD_REFS = JSON.parse(fs.readFileSync(path.join(HEADS_DIR, 'refs.json'), 'utf8'));
const EXPLAIN_HEADS = JSON.parse(fs.readFileSync(path.join(ROOT, 'tests/fixtures/explain/refs-heads.json'), 'utf8'));

function headBundle(fam, name) {
  const dir = headCheckpoint({ family: fam, name }, HEAD_REFS.tokenizer, OUT);
  return convert(dir, path.join(OUT, `head-${fam}-${name}.blb`), 'f32', `explain-${fam}-${name}`);
}

for (const c of EXPLAIN_HEADS.cases) {
  test(`${c.family}/${c.name} head: grad-input and IG match torch.autograd (float64)`, async (t) => {
    const file = headBundle(c.family, c.name);
    for (const method of ['grad-input', 'ig']) {
      const heads = method === 'grad-input' && Array.isArray(c.heads);
      const got = await explain(file, c.texts, { method, steps: EXPLAIN_HEADS.steps, heads });
      assert.deepEqual(got.ids, c.ids);
      assert.equal(got.position, c.position);
      assert.equal(got.target, c.target);
      assert.equal(got.label, c.label);
      const w = within(got.scores, method === 'ig' ? c.ig : c.grad_input);
      t.diagnostic(`${method}: max err ${w.err.toExponential(2)} (${w.rel.toExponential(2)} of max|score|)`);
      assert.ok(w.worst <= 1, `${c.family}/${c.name} ${method}: ${w.err} over the bound`);
      if (method === 'ig') assert.ok(Math.abs(got.delta - c.delta) < 1e-4, `delta ${got.delta} vs ${c.delta}`);
      if (!heads) continue;
      assert.ok(Math.abs(got.prob - c.prob) <= 1e-5, `prob ${got.prob} vs ${c.prob}`);
      let worst = 0;
      for (let l = 0; l < c.heads.length; l++)
        for (let h = 0; h < c.heads[l].length; h++) {
          const d = Math.abs(got.heads[l][h] - c.heads[l][h]);
          assert.ok(d <= 1e-5, `head effect ${l}:${h} ${got.heads[l][h]} vs ${c.heads[l][h]}`);
          worst = Math.max(worst, d);
        }
      t.diagnostic(`head effects: max |Δ| ${worst.toExponential(2)}`);
    }
    if (IS_WASM || c.kind === 'qa') return; // (question answering: the span is the target, no label to pick)
    // --target by label gives the same class
    const byLabel = JSON.parse(ok(BIN, ['explain', '--target', c.label, file, ...c.texts]).stdout);
    assert.equal(byLabel.target, c.target);
  });
}
