// decision_worker.test.mjs — the Decision view's worker messages
// (web/js/engine/worker_decision.js: 'decision', 'decision-heads') through
// worker.js with the real wasm build, in Node, on the task-head fixtures of
// tests/fixtures/heads (converted here by build/bertlens, f32) and the
// masked-LM fixture of tests/fixtures/mlm:
//   'decision'        the head's output within 1e-5 of Hugging Face
//                     (tests/fixtures/heads/refs.json), the attribution
//                     within 1e-3 max|score| + 1e-5 of torch.autograd float64
//                     (tests/fixtures/explain/refs-heads.json, 8 IG steps);
//                     the state holds the page's run afterwards (its
//                     attention unchanged)
//   'decision-heads'  one layer per message; on the masked-LM fixture each
//                     effect within 1e-5 of Hugging Face's ablation done with
//                     forward hooks (tests/fixtures/explain/refs.json
//                     "heads"); on a classifier the same as `bertlens
//                     explain --heads` (the C grid, checked against HF there)
// Needs build/wasm/bertlens.js (make wasm) and build/bertlens (make native).
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT, DEFAULT_WASM_JS, startWorker, wasmBinaryOf } from '../../tools/wasm_node.mjs';
import { WORKER_PROTOCOL, makeRunRequest, makeDecisionRequest, makeDecisionHeadsRequest, checkDecision, checkDecisionHeads } from '../../web/js/lib/protocol.js';

const BIN = path.join(ROOT, 'build/bertlens');
const HEADS = path.join(ROOT, 'tests/fixtures/heads');
const REFS = JSON.parse(fs.readFileSync(path.join(HEADS, 'refs.json'), 'utf8'));
const XREFS = JSON.parse(fs.readFileSync(path.join(ROOT, 'tests/fixtures/explain/refs-heads.json'), 'utf8'));
const MREFS = JSON.parse(fs.readFileSync(path.join(ROOT, 'tests/fixtures/explain/refs.json'), 'utf8'));
const OUT = path.join(ROOT, 'build/decision-worker-test');
fs.mkdirSync(OUT, { recursive: true });
for (const f of [DEFAULT_WASM_JS, BIN]) {
  if (!fs.existsSync(f)) throw new Error(`${path.relative(ROOT, f)} is missing: run make native wasm first`);
}

function ok(argv) {
  const r = spawnSync(BIN, argv, { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error(`bertlens ${argv.join(' ')} failed (${r.status}):\n${r.stderr}`);
  return r.stdout;
}

/** A task-head checkpoint folder as tests/heads.test.mjs assembles it: the
 *  head's files, the family's encoder shard, its trained tokenizer. */
export function headCheckpoint(family, name, into) {
  const dir = path.join(into, `${family}-${name}`);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.cpSync(path.join(HEADS, family, name), dir, { recursive: true });
  fs.copyFileSync(path.join(HEADS, family, 'encoder.safetensors'), path.join(dir, 'encoder.safetensors'));
  const tok = path.join(ROOT, REFS.tokenizer[family]);
  for (const f of fs.readdirSync(tok)) if (f !== 'config.json' && f !== 'model.safetensors') fs.copyFileSync(path.join(tok, f), path.join(dir, f));
  return dir;
}

function bundleOf(family, name) {
  const out = path.join(OUT, `${family}-${name}.blb`);
  ok(['convert', headCheckpoint(family, name, OUT), out, '--dtype', 'f32', '--name', `${family}-${name}`]);
  return out;
}

/** A worker (started and initialized here, or `send`, one already started:
 *  the page loads one model after another into the same worker) holding file. */
async function workerWith(file, send = null) {
  if (!send) {
    send = startWorker();
    const init = await send('init', { glueUrl: null, wasmUrl: 'x.wasm', wasmBinary: wasmBinaryOf(), protocol: WORKER_PROTOCOL });
    assert.equal(init.ok, true, init.error);
  }
  const bytes = fs.readFileSync(file);
  const load = await send('load', { bytes: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) });
  assert.equal(load.ok, true, load.error);
  return { send, config: load.result.info.config };
}

const within = (got, want) => {
  const tol = 1e-3 * Math.max(...want.map(Math.abs)) + 1e-5;
  return got.every((v, i) => Math.abs(v - want[i]) <= tol) ? null : `max |Δ| ${Math.max(...got.map((v, i) => Math.abs(v - want[i])))} > ${tol}`;
};
const maxDiff = (a, b) => a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i])), 0);

async function runAndDecide(send, texts, choice) {
  const run = await send('run', { request: makeRunRequest({ a: texts[0], b: texts[1] ?? null }) });
  assert.equal(run.ok, true, run.error);
  const d = await send('decision', { request: makeDecisionRequest(run.result.runId, { a: texts[0], b: texts[1] ?? null, ...choice }) });
  assert.equal(d.ok, true, d.error);
  return { run: run.result, d: checkDecision(d.result) };
}

// every case of refs-heads.json (each family's heads), one after another in one worker
let shared = null;
for (const c of XREFS.cases) {
  test(`decision: ${c.family} ${c.name} output as Hugging Face, ${c.kind === 'qa' ? 'span' : 'attributions'} as torch.autograd`, async () => {
    const ck = REFS.checkpoints.find((k) => k.family === c.family && k.name === c.name);
    const ref = ck.cases.find((k) => JSON.stringify(k.texts) === JSON.stringify(c.texts));
    const { send } = await workerWith(bundleOf(c.family, c.name), shared);
    shared = send;
    const position = c.kind === 'token' ? c.position : -1;
    for (const method of ['grad-input', 'ig']) {
      const { run, d } = await runAndDecide(send, c.texts, { method, steps: XREFS.steps, position });
      assert.deepEqual(d.head.ids, ref.ids, 'the tokenizer\'s ids');
      if (c.kind === 'seq' && ck.problem_type === 'regression') assert.ok(Math.abs(d.head.value - ref.probs[0][0]) <= 1e-5, `value ${d.head.value} vs ${ref.probs[0][0]}`);
      else if (c.kind === 'seq') assert.ok(maxDiff(d.head.probs, ref.probs[0]) <= 1e-5, `probs ${d.head.probs} vs ${ref.probs[0]}`);
      if (c.kind === 'token') d.head.positions.forEach((p, t) => assert.ok(maxDiff(p.probs, ref.probs[t]) <= 1e-5, `token ${t}`));
      if (c.kind === 'qa') assert.deepEqual([d.head.span.start, d.head.span.end, d.head.span.text], [ref.span.start, ref.span.end, ref.span.text]);
      assert.equal(d.explain.target, c.target);
      assert.equal(d.explain.position, c.position);
      const bad = within(d.explain.scores, method === 'ig' ? c.ig : c.grad_input);
      assert.equal(bad, null, `${method}: ${bad}`);
      // the state holds the page's run again: a read of it is the same attention
      const again = await send('run', { request: makeRunRequest({ a: c.texts[0], b: c.texts[1] ?? null }) });
      assert.equal(maxDiff(again.result.attn[0], run.attn[0]), 0);
    }
  });
}

test('decision-heads: one layer per message, as Hugging Face\'s forward-hook ablation (masked-LM fixture)', async () => {
  const fam = MREFS.families.find((f) => f.family === 'bert');
  const c = fam.cases[0];
  const out = path.join(OUT, 'mlm-bert.blb');
  ok(['convert', path.join(ROOT, 'tests/fixtures/mlm/bert'), out, '--dtype', 'f32', '--name', 'mlm-bert']);
  const { send, config } = await workerWith(out);
  const { run, d } = await runAndDecide(send, c.texts, { method: 'grad-input' });
  assert.equal(d.kind, 'masked-lm');
  assert.equal(d.explain.target, c.target, 'the top word at the first mask');
  assert.ok(d.lens.length === config.n_layers && d.lens.every((l) => l.positions.some((p) => p.index === c.position)), 'the lens at the blank, every layer');
  let worst = 0;
  for (let l = 0; l < config.n_layers; l++) {
    const r = await send('decision-heads', { request: makeDecisionHeadsRequest(run.runId, { a: c.texts[0], b: c.texts[1] ?? null, kind: d.kind, position: d.explain.position, target: d.explain.target, layer: l }) });
    assert.equal(r.ok, true, r.error);
    checkDecisionHeads(r.result, l, config.n_heads);
    r.result.effects.forEach((v, h) => { worst = Math.max(worst, Math.abs(v - c.heads[l][h])); });
  }
  assert.ok(worst <= 1e-5, `head effects: max |Δ| ${worst} vs Hugging Face`);
  // the state held the page's run all along: a read of it is answered
  assert.equal((await send('qk', { request: { runId: run.runId } })).ok, true);
  // a layer asked for a run the state no longer holds is computed from its texts; the state then holds none of the page's runs
  const other = await send('decision-heads', { request: makeDecisionHeadsRequest(run.runId - 1, { a: c.texts[0], b: c.texts[1] ?? null, kind: d.kind, position: d.explain.position, target: d.explain.target, layer: 0 }) });
  assert.equal(other.ok, true, other.error);
  assert.ok(other.result.effects.every((v, h) => Math.abs(v - c.heads[0][h]) <= 1e-5));
  const stale = await send('qk', { request: { runId: run.runId } });
  assert.equal(stale.ok, false);
  assert.match(stale.error, /stale/);
});

test('decision-heads on a classifier with a head switched off: as `bertlens explain --heads --ablate`', async () => {
  const file = bundleOf('bert', 'seq');
  const texts = ['A dull and tired story.'];
  const cli = JSON.parse(ok(['explain', '--heads', '--ablate', '0:1', file, ...texts]));
  const { send, config } = await workerWith(file);
  const run = await send('run', { request: makeRunRequest({ a: texts[0], mask: [[0, 1]] }) });
  const d = checkDecision((await send('decision', { request: makeDecisionRequest(run.result.runId, { a: texts[0] }) })).result);
  assert.equal(d.explain.target, cli.target);
  let worst = 0;
  for (let l = 0; l < config.n_layers; l++) {
    const r = await send('decision-heads', { request: makeDecisionHeadsRequest(run.result.runId, { a: texts[0], kind: d.kind, position: d.explain.position, target: d.explain.target, layer: l, mask: [[0, 1]] }) });
    assert.equal(r.ok, true, r.error);
    r.result.effects.forEach((v, h) => { worst = Math.max(worst, Math.abs(v - cli.heads[l][h])); });
  }
  assert.ok(worst <= 1e-5, `head effects: max |Δ| ${worst} vs the CLI`);
});

test('decision: a regression head (DistilBERT, num_labels 1) gives its value as Hugging Face and an attribution of it; head effects run', async () => {
  const ck = REFS.checkpoints.find((k) => k.family === 'distilbert' && k.name === 'seq-regression');
  const c = ck.cases[0];
  const { send, config } = await workerWith(bundleOf('distilbert', 'seq-regression'));
  const { run, d } = await runAndDecide(send, c.texts, { method: 'ig', steps: 8 });
  assert.equal(d.head.problem_type, 'regression');
  assert.ok(Math.abs(d.head.value - c.probs[0][0]) <= 1e-5, `value ${d.head.value} vs HF ${c.probs[0][0]}`);
  assert.equal(d.explain.scores.length, c.ids.length);
  const cli = JSON.parse(ok(['explain', '--method', 'ig', '--steps', '8', '--heads', bundleOf('distilbert', 'seq-regression'), ...c.texts]));
  assert.ok(d.explain.scores.every((v, i) => Math.abs(v - cli.scores[i]) <= 1e-5), 'IG as the CLI');
  const r = await send('decision-heads', { request: makeDecisionHeadsRequest(run.runId, { a: c.texts[0], kind: d.kind, position: d.explain.position, target: d.explain.target, layer: config.n_layers - 1 }) });
  assert.equal(r.ok, true, r.error);
  r.result.effects.forEach((v, h) => assert.ok(Math.abs(v - cli.heads[config.n_layers - 1][h]) <= 1e-5, `head ${h}: ${v} vs ${cli.heads[config.n_layers - 1][h]}`));
});

test('decision: a masked-LM\'s logit lens at the blank only, each layer\'s top 5 Hugging Face\'s (tests/fixtures/heads/refs.json lens)', async () => {
  const ref = REFS.lens.find((l) => l.family === 'bert');
  const out = path.join(OUT, 'mlm-bert.blb');
  ok(['convert', path.join(ROOT, 'tests/fixtures/mlm/bert'), out, '--dtype', 'f32', '--name', 'mlm-bert']);
  const { send, config } = await workerWith(out);
  const { d } = await runAndDecide(send, ref.texts, {});
  const blank = d.words.positions.map((p) => p.index);
  assert.equal(blank.length, 1, 'one blank');
  assert.equal(d.lens.length, config.n_layers);
  for (const l of d.lens) {
    assert.deepEqual(l.positions.map((p) => p.index), blank, `layer ${l.layer}: the blank only`);
    const want = ref.layers.find((r) => r.layer === l.layer).positions.find((p) => p.index === blank[0]);
    assert.deepEqual(l.positions[0].top.map((e) => e.id), want.top_ids, `layer ${l.layer}: HF's top 5`);
  }
});
