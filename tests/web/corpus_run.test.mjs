// corpus_run.test.mjs — the page's corpus run (issue 25 item 2:
// web/js/engine/corpus_run.js -> worker.js 'corpus-*' -> src/wasm/wasm_corpus.c)
// against `bertlens corpus` (the CLI, native) on the same corpus: the
// corpus of tests/fixtures/corpus_cmd/ (pairs, punctuation, a long input, a
// one-token input, empty, blank and invalid UTF-8 lines). Means within 1e-6,
// class fractions, skips and top lists equal. Also: Cancel stops between two
// batches, and the q/k the run keeps for one head are those a plain 'run'
// of the same input keeps. Needs build/wasm/bertlens.js, build/bertlens and
// build/models/all-minilm-l6-v2.f32.blb (make wasm build/bertlens test-models).
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT, DEFAULT_WASM_JS, startWorker, wasmBinaryOf } from '../../tools/wasm_node.mjs';
import { WORKER_PROTOCOL, makeRunRequest } from '../../web/js/lib/protocol.js';
import { runCorpus, CORPUS_BATCH } from '../../web/js/engine/corpus_run.js';

const BUNDLE = path.join(ROOT, 'build/models/all-minilm-l6-v2.f32.blb');
const CORPUS = path.join(ROOT, 'tests/fixtures/corpus_cmd/corpus.txt');
const BIN = path.join(ROOT, 'build/bertlens');
const FEATURES = ['entropy', 'cls', 'sep', 'punct', 'prev', 'self', 'next'];
for (const f of [DEFAULT_WASM_JS, BUNDLE, BIN]) {
  if (!fs.existsSync(f)) throw new Error(`${path.relative(ROOT, f)} is missing: run make wasm build/bertlens test-models first`);
}

/** The file's lines as the CLI reads them: bytes split at \n, no empty last line. */
function fileLines(file) {
  const b = fs.readFileSync(file);
  const out = [];
  let at = 0;
  for (let i = 0; i < b.length; i++) if (b[i] === 10) { out.push(new Uint8Array(b.subarray(at, i))); at = i + 1; }
  if (at < b.length) out.push(new Uint8Array(b.subarray(at)));
  return out;
}

let worker = null;
async function call() {
  if (worker) return worker;
  const send = startWorker();
  const init = await send('init', { glueUrl: null, wasmUrl: 'x.wasm', wasmBinary: wasmBinaryOf(), protocol: WORKER_PROTOCOL });
  assert.equal(init.ok, true, init.error);
  const bytes = fs.readFileSync(BUNDLE);
  const load = await send('load', { bytes: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) });
  assert.equal(load.ok, true, load.error);
  worker = async (type, args) => {
    const r = await send(type, args);
    if (!r.ok) throw new Error(r.error);
    return r.result;
  };
  return worker;
}

test('the page corpus run gives the CLI\'s numbers on the same corpus', async () => {
  const cli = spawnSync(BIN, ['corpus', '--top', '10', '--threads', '2', BUNDLE, CORPUS], { maxBuffer: 1 << 26 });
  assert.equal(cli.status, 0, cli.stderr.toString());
  const ref = JSON.parse(cli.stdout.toString());
  const progress = [];
  const page = await runCorpus(await call(), fileLines(CORPUS), { topN: 10, onProgress: (p) => progress.push(p) });
  const got = page.result;
  assert.equal(page.cancelled, false);
  assert.equal(got.texts, ref.texts);
  assert.equal(got.tokens, ref.tokens);
  assert.deepEqual(got.skipped, ref.skipped);
  assert.ok(ref.skipped.length >= 3 && ref.texts > 40, 'the corpus has skips and inputs');
  assert.equal(got.heads.length, ref.heads.length);
  let worst = 0, wWorst = 0;
  got.heads.forEach((h, i) => {
    const r = ref.heads[i];
    assert.equal(`${h.layer}:${h.head}`, `${r.layer}:${r.head}`);
    for (const f of FEATURES) {
      if (r[f] === null) { assert.equal(h[f], null, f); continue; }
      worst = Math.max(worst, Math.abs(h[f] - r[f]));
    }
    assert.deepEqual(h.class_fractions, r.class_fractions, `L${r.layer}H${r.head} class fractions`);
    const strip = (t) => t.map(({ weight, ...x }) => x);
    assert.deepEqual(strip(h.top), strip(r.top), `L${r.layer}H${r.head} top links`);
    h.top.forEach((x, k) => { wWorst = Math.max(wWorst, Math.abs(x.weight - r.top[k].weight)); });
  });
  assert.ok(worst <= 1e-6, `means within 1e-6 of the CLI (worst ${worst})`);
  assert.ok(wWorst <= 1e-5, `top weights within 1e-5 of the CLI (worst ${wWorst})`);
  console.log(`# page vs CLI: worst |difference| of a mean ${worst.toExponential(2)}, of a top weight ${wWorst.toExponential(2)}; ${page.perSecond.toFixed(1)} inputs/s in Node`);
  // progress after every batch, ending at the whole corpus
  assert.equal(progress.length, Math.ceil(fileLines(CORPUS).length / CORPUS_BATCH));
  assert.equal(progress.at(-1).done, progress.at(-1).total);
  assert.equal(progress.at(-1).analysed, ref.texts);
});

test('Cancel stops the run after the batch in flight; the result covers the inputs done', async () => {
  const ctl = new AbortController();
  const lines = fileLines(CORPUS);
  const run = await runCorpus(await call(), lines, { onProgress: () => ctl.abort(), signal: ctl.signal });
  assert.equal(run.cancelled, true);
  assert.equal(run.done, CORPUS_BATCH);
  assert.ok(run.result.texts > 0 && run.result.texts <= CORPUS_BATCH);
});

test('the q/k kept for a head are those a plain run of the input keeps', async () => {
  const c = await call();
  const lines = ['The cat sat on the mat.', 'Where is the stationmaster?\tTwo blocks north.'];
  const run = await runCorpus(c, lines, { qk: { layer: 2, head: 5 } });
  const { n, dh, vectors, meta } = run.qk;
  assert.equal(n, run.result.tokens);
  const plain = await c('run', { request: makeRunRequest({ a: 'Where is the stationmaster?', b: 'Two blocks north.', needs: { qk: true } }) });
  const T = plain.T;
  const rows = [];
  for (let i = 0; i < n; i++) if (meta[i * 4] === 1) rows.push(i);
  assert.equal(rows.length, T);
  let worst = 0;
  rows.forEach((i, t) => {
    assert.equal(meta[i * 4 + 1], t);
    const tok = plain.tokens[t];
    const kind = /^\[(CLS|SEP)\]$/.test(tok) ? 0 : /^[!-/:-@[-`{-~]+$/.test(tok) ? 1 : tok.startsWith('##') ? 3 : 2;
    assert.equal(meta[i * 4 + 3], kind, `kind of ${tok}`);
    for (let d = 0; d < dh; d++) {
      worst = Math.max(worst, Math.abs(vectors[i * 2 * dh + d] - plain.q[2][(5 * T + t) * dh + d]));
      worst = Math.max(worst, Math.abs(vectors[i * 2 * dh + dh + d] - plain.k[2][(5 * T + t) * dh + d]));
    }
  });
  assert.equal(worst, 0, 'the same vectors');
  assert.ok(plain.tokens.some((t) => t.startsWith('##')), 'a subword among the tokens');
});
