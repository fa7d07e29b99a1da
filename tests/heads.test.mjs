// heads.test.mjs — fine-tuned task heads (src/model/task_head.c, src/convert/convert_head.c,
// `bertlens predict`, the wasm export blw_task_json) and the masked-LM
// logit lens (`bertlens predict --layers`, blw_lens_json) against Hugging
// Face on tiny random checkpoints of every family (tests/fixtures/heads/,
// made by make.py with transformers 5):
//   f32   sequence / token classification: every probability (softmax,
//         sigmoid for multi-label) within 1e-5, regression's value within
//         1e-5; question answering: start and end probabilities within
//         1e-5 and the best span (start, end and its text) HF's
//   q8    top-1 agreement reported (and loosely bounded)
//   lens  each layer's top-5 identical to the model's head on
//         hidden_states[l] (tests/fixtures/mlm/ checkpoints)
//   backward (native programs only: tests/c/task_head_host.c)  d logit /
//         d hidden of bl_task_head_backward against torch.autograd in
//         float64, given the same hidden states
//
//   node --test tests/heads.test.mjs                           native (BERTLENS_BACKEND)
//   BERTLENS_BACKEND=wasm node --test tests/heads.test.mjs     the wasm module
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { BIN, BUILD_DIR, IS_WASM, QUICK, ROOT } from './lib/backend.mjs';
import { convert, headCheckpoint, mlmCheckpoint, ok, wasmHolding } from './lib/checkpoints.mjs';
import { putString, wasmError } from '../tools/wasm_node.mjs';

const FIX = path.join(ROOT, 'tests/fixtures/heads');
const REFS = JSON.parse(fs.readFileSync(path.join(FIX, 'refs.json'), 'utf8'));
const OUT = path.join(ROOT, 'build/heads-test');
const TOL = 1e-5;
fs.mkdirSync(OUT, { recursive: true });

const bundles = new Map();
function bundle(ck, dt) {
  const key = `${ck.family}-${ck.name}-${dt}`;
  if (!bundles.has(key)) {
    const src = bundles.get(`${ck.family}-${ck.name}-src`) ?? headCheckpoint(ck, REFS.tokenizer, OUT);
    bundles.set(`${ck.family}-${ck.name}-src`, src);
    const out = path.join(OUT, `${key}.blb`);
    convert(src, out, dt, key);
    bundles.set(key, out);
  }
  return bundles.get(key);
}

async function wasmRun(file, texts, flags = 0) {
  const M = await wasmHolding(file);
  const a = putString(M, texts[0]), b = texts[1] === undefined ? 0 : putString(M, texts[1]);
  try {
    if (M._blw_run(a, b, flags, -1) < 0) throw new Error(wasmError(M));
  } finally {
    M._free(a);
  }
  return { M, b };
}

/** The head's output for texts: `bertlens predict`'s JSON, or blw_task_json's. */
async function predict(file, texts) {
  if (!IS_WASM) return JSON.parse(ok(BIN, ['predict', file, ...texts]).stdout);
  const { M, b } = await wasmRun(file, texts);
  try {
    assert.ok(M._blw_task_kind() > 0, 'blw_task_kind names the head');
    const p = M._blw_task_json(b);
    if (!p) throw new Error(wasmError(M));
    return JSON.parse(M.UTF8ToString(p));
  } finally {
    if (b) M._free(b);
  }
}

/** Every layer's top k through the masked-LM head: `predict --layers`, or blw_lens_json. */
async function lens(file, texts, k) {
  if (!IS_WASM) return JSON.parse(ok(BIN, ['predict', '--layers', '--top', String(k), file, ...texts]).stdout).layers;
  const { M, b } = await wasmRun(file, texts, 8 /* BL_KEEP_HIDDEN */);
  if (b) M._free(b);
  const p = M._blw_lens_json(k);
  if (!p) throw new Error(wasmError(M));
  return JSON.parse(M.UTF8ToString(p)).layers;
}

const NAMES = { seq: 'sequence-classification', token: 'token-classification', qa: 'question-answering' };
const maxDiff = (a, b) => a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i])), 0);
const argmax = (x) => x.reduce((k, v, i) => (v > x[k] ? i : k), 0);
const checkpoints = QUICK ? REFS.checkpoints.filter((c) => c.name === 'seq' || c.name === 'qa') : REFS.checkpoints;
const worst = {};

for (const ck of checkpoints) {
  test(`${ck.family} ${ck.architecture} (${ck.name}): f32 within ${TOL} of Hugging Face`, async () => {
    const file = bundle(ck, 'f32');
    for (const c of ck.cases) {
      const got = await predict(file, c.texts);
      assert.equal(got.head, NAMES[ck.kind]);
      assert.deepEqual(got.ids, c.ids, `${c.texts}: the tokenizer's ids`);
      let d = 0;
      if (ck.kind === 'seq') {
        assert.deepEqual(got.labels, ck.labels);
        assert.equal(got.problem_type, ck.problem_type);
        if (ck.problem_type === 'regression') d = Math.abs(got.value - c.probs[0][0]);
        else {
          d = maxDiff(got.probs, c.probs[0]);
          assert.equal(got.label, ck.labels[argmax(c.logits[0])]);
        }
      } else if (ck.kind === 'token') {
        assert.deepEqual(got.labels, ck.labels);
        assert.equal(got.positions.length, c.ids.length);
        got.positions.forEach((p, t) => (d = Math.max(d, maxDiff(p.probs, c.probs[t]))));
      } else {
        d = Math.max(maxDiff(got.start_probs, c.start_probs), maxDiff(got.end_probs, c.end_probs));
        assert.ok(got.span, `${c.texts}: a span`);
        assert.deepEqual([got.span.start, got.span.end, got.span.text], [c.span.start, c.span.end, c.span.text],
          `${c.texts}: the best span`);
      }
      worst[ck.family] = Math.max(worst[ck.family] ?? 0, d);
      assert.ok(d <= TOL, `${c.texts}: max |Δp| ${d.toExponential(2)} > ${TOL}`);
    }
  });

  // ALBERT's 16-wide embeddings are not whole 32-value blocks: no q8 bundle of it
  const q8skip = (QUICK && 'quick run') || (ck.family === 'albert' && 'embedding_size 16 is no q8 block');
  test(`${ck.family} ${ck.name}: q8 top-1 agreement`, { skip: q8skip }, async () => {
    const file = bundle(ck, 'q8');
    let agree = 0, n = 0;
    for (const c of ck.cases) {
      const got = await predict(file, c.texts);
      if (ck.kind === 'seq') {
        if (ck.problem_type === 'regression') continue;
        n++, agree += argmax(got.logits) === argmax(c.logits[0]);
      } else if (ck.kind === 'token') {
        got.positions.forEach((p, t) => { n++, agree += argmax(p.logits) === argmax(c.logits[t]); });
      } else {
        n++, agree += got.span.start === c.span.start && got.span.end === c.span.end;
      }
    }
    if (n) {
      console.log(`# q8 ${ck.family}/${ck.name}: top-1 agreement ${agree}/${n}`);
      assert.ok(agree >= n / 2, `q8 top-1 agreement ${agree}/${n}`);
    }
  });
}

test('report: max |Δprob| per family (f32)', () => {
  for (const [f, d] of Object.entries(worst)) console.log(`# ${f}: max |Δp| ${d.toExponential(2)}`);
});

test('bertlens info names the task head and its labels', { skip: IS_WASM && 'native only' }, () => {
  const ck = REFS.checkpoints.find((c) => c.family === 'roberta' && c.name === 'token');
  assert.match(ok(BIN, ['info', bundle(ck, 'f32')]).stdout,
    /task head +token-classification \(single-label, softmax\), 5 labels: O, B-PER, I-PER, B-LOC, I-LOC/);
  const qa = REFS.checkpoints.find((c) => c.family === 'bert' && c.name === 'qa');
  assert.match(ok(BIN, ['info', bundle(qa, 'f32')]).stdout, /task head +question-answering/);
  const reg = REFS.checkpoints.find((c) => c.family === 'distilbert' && c.name === 'seq-regression');
  assert.match(ok(BIN, ['info', bundle(reg, 'f32')]).stdout, /task head +sequence-classification \(regression\), 1 label: score:/);
});

// NomicBERT, GTE and EuroBERT: heads that predict (above) and that explain
// names; `bertlens explain` explains them (the reverse-mode pass refused
// them by trait until it had RMSNorm and rotary post-norm blocks; their
// numbers against torch.autograd: tests/explain.test.mjs)
test('NomicBERT, GTE, EuroBERT heads: info names them; explain explains them', { skip: IS_WASM && 'native only' }, () => {
  const cases = [
    ['nomic-bert', 'seq', /task head +sequence-classification \(single-label, softmax\), 3 labels: negative, neutral, positive/],
    ['gte', 'token', /task head +token-classification \(single-label, softmax\), 5 labels: O, B-PER, I-PER, B-LOC, I-LOC/],
    ['eurobert', 'seq', /task head +sequence-classification \(single-label, softmax\), 3 labels: negative, neutral, positive[^]*task\.pooling +late/],
  ];
  for (const [fam, name, info] of cases) {
    const ck = REFS.checkpoints.find((c) => c.family === fam && c.name === name);
    const file = bundle(ck, 'f32');
    assert.match(ok(BIN, ['info', file]).stdout, info, fam);
    const r = spawnSync(BIN, ['explain', file, 'Anna lives in Paris.'], { encoding: 'utf8' });
    assert.equal(r.status, 0, `${fam}: ${r.stderr}`);
    const e = JSON.parse(r.stdout);
    assert.ok(ck.labels.includes(e.label), fam);
    assert.equal(e.scores.length, e.ids.length, fam);
    assert.ok(e.scores.every(Number.isFinite) && e.scores.some((v) => v !== 0), fam);
  }
});

test('convert refuses a classifier_pooling the family\'s head does not have, naming the ones it has', { skip: IS_WASM && 'native only' }, () => {
  fs.mkdirSync(path.join(OUT, 'bad-pooling'), { recursive: true });
  for (const [fam, known] of [['eurobert', 'late, bos, mean'], ['modernbert', 'cls, mean']]) {
    const ck = REFS.checkpoints.find((c) => c.family === fam && c.name === 'seq');
    const dir = headCheckpoint(ck, REFS.tokenizer, path.join(OUT, 'bad-pooling'));
    const cfg = JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8'));
    fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ ...cfg, classifier_pooling: 'max' }));
    const r = spawnSync(BIN, ['convert', dir, path.join(OUT, `bad-pooling-${fam}.blb`)], { encoding: 'utf8' });
    assert.equal(r.status, 1, fam);
    assert.match(r.stderr, new RegExp(`classifier_pooling 'max' is not supported \\(${known}\\)`), fam);
  }
});

/** The masked-LM fixture's bundle (f32), converted once. */
function mlmBundle(fam) {
  const out = path.join(OUT, `lens-${fam}.blb`);
  if (fs.existsSync(out) && bundles.has(out)) return out;
  convert(mlmCheckpoint(fam, OUT), out, 'f32', `lens-${fam}`);
  bundles.set(out, out);
  return out;
}

for (const ref of REFS.lens) {
  test(`logit lens ${ref.family}: every layer's top-5 is Hugging Face's`, async () => {
    const layers = await lens(mlmBundle(ref.family), ref.texts, 5);
    assert.equal(layers.length, ref.layers.length);
    for (const [l, want] of ref.layers.entries()) {
      assert.equal(layers[l].layer, want.layer);
      for (const p of want.positions) {
        const got = layers[l].positions.find((q) => q.index === p.index);
        // a 5th and 6th within float rounding of each other may swap: then only the first 4 must agree
        const k = p.gap > 1e-6 ? 5 : 4;
        assert.deepEqual(got.top.slice(0, k).map((t) => t.id), p.top_ids.slice(0, k),
          `layer ${want.layer}, token ${p.index}`);
        assert.ok(maxDiff(got.top.map((t) => t.prob), p.top_probs) <= TOL, `layer ${want.layer}, token ${p.index}: probabilities`);
      }
    }
  });
}

const HOST = path.join(BUILD_DIR, 'task_head_host');
for (const g of REFS.grads ?? []) {
  test(`backward ${g.family}/${g.name}: d logit / d hidden is torch.autograd's (float64)`,
    { skip: IS_WASM && 'native programs only' }, () => {
      const ck = REFS.checkpoints.find((c) => c.family === g.family && c.name === g.name);
      const hid = path.join(OUT, `hidden-${g.family}-${g.name}.f32`);
      fs.writeFileSync(hid, Buffer.from(g.hidden_f32, 'base64'));
      const got = JSON.parse(ok(HOST, [bundle(ck, 'f32'), hid, String(g.T), String(g.target), String(g.position)]).stdout);
      const H = got.grad.length / g.T;
      // torch's gradient, zero outside the rows the logit reads
      const want = new Float64Array(g.T * H);
      g.grad_rows.forEach((t, r) => want.set(g.grad.slice(r * H, (r + 1) * H), t * H));
      const scale = want.reduce((m, x) => Math.max(m, Math.abs(x)), 0);
      assert.ok(scale > 0, 'a gradient that is not all zero');
      assert.ok(Math.abs(got.logit - g.logit) <= 1e-5 * Math.max(1, Math.abs(g.logit)), `logit ${got.logit} vs ${g.logit}`);
      const d = maxDiff(got.grad, Array.from(want));
      assert.ok(d <= 1e-5 * scale + 1e-7, `max |Δgrad| ${d.toExponential(2)} (largest |grad| ${scale.toExponential(2)})`);
    });
}

test('predict refuses a question without its context, and --layers on a task head', { skip: IS_WASM && 'native only' }, () => {
  const qa = REFS.checkpoints.find((c) => c.family === 'bert' && c.name === 'qa');
  const r = spawnSync(BIN, ['predict', bundle(qa, 'f32'), 'Where?'], { encoding: 'utf8' });
  assert.equal(r.status, 1);
  assert.match(r.stderr, /question-answering head takes TEXT \(the question\) and TEXT_B \(the context\)/);
  const seq = REFS.checkpoints.find((c) => c.family === 'bert' && c.name === 'seq');
  const l = spawnSync(BIN, ['predict', '--layers', bundle(seq, 'f32'), 'A text.'], { encoding: 'utf8' });
  assert.equal(l.status, 1);
  assert.match(l.stderr, /--layers is for masked-LM heads/);
});
