// The model worker's 'take' (web/js/engine/worker_take.js, engine/take.js;
// issue 36): a model is one request to the worker, answered by a few
// progress events and one result — the Hub's files fetched, the checkpoint
// converted by rows, loaded in place, all inside the worker. Run against
// the joined worker source (tools/worker_source.mjs) with the wasm build,
// as the page runs it, and the fake Hub of the browser scenarios.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT, DEFAULT_WASM_JS, loadFactory, wasmBinaryOf } from '../../tools/wasm_node.mjs';
import { workerSource } from '../../tools/worker_source.mjs';
import { WORKER_PROTOCOL, makeRunRequest } from '../../web/js/lib/protocol.js';
import { parseHubId } from '../../web/js/engine/hub.js';
import { PROGRESS_STEPS } from '../../web/js/engine/take.js';
import { startFakeHub, generatedSafetensors } from '../browser/fake_hub.mjs';

const TINY = path.join(ROOT, 'tests', 'fixtures', 'hub', 'tiny-mlm');
const BIN = path.join(ROOT, 'build', 'bertlens');
const MESSAGE_BAR = 50;

/** worker.js (joined) in this realm: send(type, args) -> {reply, events}
 *  (events: the {progress} messages before the reply), and every message
 *  counted both ways. */
function startTakeWorker() {
  const waiting = new Map();
  const events = new Map();
  const count = { out: 0, in: 0 };
  const self = {
    postMessage: (m) => {
      count.in++;
      if (m.progress && !('ok' in m)) events.get(m.id).push(m.progress);
      else waiting.get(m.id)(m);
    },
  };
  new Function('self', 'importScripts', 'createBertlens', workerSource(path.join(ROOT, 'web')))(self, () => {}, loadFactory(DEFAULT_WASM_JS));
  let id = 0;
  const send = (type, args) => new Promise((resolve) => {
    const n = ++id;
    events.set(n, []);
    waiting.set(n, (reply) => resolve({ reply, events: events.get(n) }));
    count.out++;
    self.onmessage({ data: { id: n, type, ...args } });
  });
  return { send, count };
}

async function started() {
  const w = startTakeWorker();
  const { reply } = await w.send('init', { glueUrl: null, wasmUrl: 'x.wasm', wasmBinary: wasmBinaryOf(DEFAULT_WASM_JS), protocol: WORKER_PROTOCOL });
  assert.ok(reply.ok, reply.error);
  w.count.out = w.count.in = 0;
  return w;
}

/** A BERT of `layers` layers, hidden 32, random weights, a word-piece vocabulary. */
function deepRepo(layers) {
  const H = 32, I = 64, V = 300;
  const t = [['embeddings.word_embeddings.weight', [V, H]], ['embeddings.position_embeddings.weight', [512, H]],
    ['embeddings.token_type_embeddings.weight', [2, H]], ['embeddings.LayerNorm.weight', [H]], ['embeddings.LayerNorm.bias', [H]]];
  for (let l = 0; l < layers; l++) {
    const p = `encoder.layer.${l}.`;
    for (const n of ['query', 'key', 'value']) t.push([`${p}attention.self.${n}.weight`, [H, H]], [`${p}attention.self.${n}.bias`, [H]]);
    t.push([`${p}attention.output.dense.weight`, [H, H]], [`${p}attention.output.dense.bias`, [H]], [`${p}attention.output.LayerNorm.weight`, [H]],
      [`${p}attention.output.LayerNorm.bias`, [H]], [`${p}intermediate.dense.weight`, [I, H]], [`${p}intermediate.dense.bias`, [I]],
      [`${p}output.dense.weight`, [H, I]], [`${p}output.dense.bias`, [H]], [`${p}output.LayerNorm.weight`, [H]], [`${p}output.LayerNorm.bias`, [H]]);
  }
  const vocab = ['[PAD]', ...Array.from({ length: 99 }, (_, i) => `[unused${i}]`), '[UNK]', '[CLS]', '[SEP]', '[MASK]'];
  for (let i = vocab.length; i < V; i++) vocab.push(`w${i}`);
  return {
    'config.json': Buffer.from(JSON.stringify({ architectures: ['BertModel'], model_type: 'bert', hidden_size: H, num_hidden_layers: layers, num_attention_heads: 4,
      intermediate_size: I, hidden_act: 'gelu', max_position_embeddings: 512, type_vocab_size: 2, vocab_size: V, layer_norm_eps: 1e-12, pad_token_id: 0 })),
    'vocab.txt': Buffer.from(`${vocab.join('\n')}\n`),
    'model.safetensors': generatedSafetensors(t.map(([name, shape]) => ({ name, shape }))),
  };
}

test('a 24-layer Hub model is one request to the worker: fetched, converted and loaded there in at most 50 messages', async () => {
  const w = await started();
  const hub = await startFakeHub({ 'o/deep-24': { files: deepRepo(24) } });
  try {
    const spec = parseHubId('o/deep-24');
    const { reply, events } = await w.send('take', { request: { kind: 'hub', spec, endpoint: hub.endpoint, keep: false }, page: 'http://127.0.0.1/' });
    assert.ok(reply.ok, reply.error);
    const r = reply.result;
    assert.equal(r.failed, undefined, r.failed && r.failed.message);
    assert.equal(r.from, 'hub');
    assert.equal(r.dtype, 'q8');
    assert.equal(r.load.info.config.n_layers, 24);
    assert.equal(r.tensors, 5 + 24 * 16);
    const total = w.count.out + w.count.in;
    console.log(`# 24-layer Hub load: ${total} messages (1 request, ${events.length} progress events, 1 result); ${r.tensors} tensors converted in the worker`);
    assert.ok(total <= MESSAGE_BAR, `${total} messages`);
    assert.ok(events.length <= 3 * PROGRESS_STEPS + 8, `${events.length} progress events`);
    // the steps go forward and name the file and the tensors converted
    assert.ok(events.some((e) => /^Downloading o\/deep-24: model\.safetensors \(converted: tensor \d+ of \d+\)$/.test(e.label) && e.total > 0), events.map((e) => e.label).join(' | '));
    assert.equal(events[events.length - 1].label, 'Loading o/deep-24 into the model engine…');
    // the engine runs the model it took: 24 layers of attention
    const run = await w.send('run', { request: makeRunRequest({ a: 'w150 w151' }) });
    assert.ok(run.reply.ok, run.reply.error);
    assert.equal(run.reply.result.L, 24);
  } finally {
    await hub.close();
  }
});

test('a checkpoint folder\'s files are converted in the worker to the bytes `bertlens convert` writes, kept nowhere, the copy handed back', async (t) => {
  if (!fs.existsSync(BIN)) return t.skip('no build/bertlens (make native)');
  const w = await started();
  const files = fs.readdirSync(TINY).map((name) => ({ name, file: new File([fs.readFileSync(path.join(TINY, name))], name) }));
  const { reply, events } = await w.send('take', { request: { kind: 'checkpoint', files, folder: 'tiny-mlm', own: '', dtype: 'q8', keep: false }, page: 'http://127.0.0.1/' });
  assert.ok(reply.ok, reply.error);
  const r = reply.result;
  assert.equal(r.failed, undefined, r.failed && r.failed.message);
  assert.equal(r.load.info.config.n_layers, 2);
  assert.equal(r.cv.dtype, 'q8');
  assert.match(r.cv.name, /^tiny-mlm \([0-9a-f]{8}\)$|^tiny-mlm/);
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'bertlens-take-')), 'tiny.blb');
  const conv = spawnSync(BIN, ['convert', TINY, out, '--name', 'tiny-mlm'], { encoding: 'utf8' });
  assert.equal(conv.status, 0, conv.stderr);
  assert.equal(Buffer.compare(Buffer.from(r.bytes), fs.readFileSync(out)), 0, 'the bundle bertlens convert writes');
  assert.ok(w.count.out + w.count.in <= MESSAGE_BAR, `${w.count.out + w.count.in} messages`);
  assert.ok(events.length >= 2);
});

test('a load that begins while a take is under way supersedes it: the take loads nothing', async (t) => {
  const bundle = path.join(ROOT, 'build', 'models', 'tiny-bert.q8.blb');
  if (!fs.existsSync(bundle)) return t.skip('no build/models/tiny-bert.q8.blb');
  const w = await started();
  const hub = await startFakeHub({ 'o/deep-24': { files: deepRepo(24) } });
  try {
    const taking = w.send('take', { request: { kind: 'hub', spec: parseHubId('o/deep-24'), endpoint: hub.endpoint, keep: false }, page: 'http://127.0.0.1/' });
    // (send runs the handler up to its first await: the take is fetching config.json now)
    const b = fs.readFileSync(bundle);
    const load = await w.send('load', { bytes: b.buffer.slice(b.byteOffset, b.byteOffset + b.length) });
    assert.ok(load.reply.ok && load.reply.result.info, load.reply.error);
    const { reply } = await taking;
    assert.ok(reply.ok, reply.error);
    assert.deepEqual(reply.result, { superseded: true });
    // the model the engine holds is the bundle's, not the Hub's
    const run = await w.send('run', { request: makeRunRequest({ a: 'the cat' }) });
    assert.ok(run.reply.ok, run.reply.error);
    assert.equal(run.reply.result.L, load.reply.result.info.config.n_layers);
    assert.notEqual(run.reply.result.L, 24);
  } finally {
    await hub.close();
  }
});
