// Hugging Face Hub loader (web/js/engine/hub.js): the id parser, the
// answers' mapping to sentences, Range reads against the fake Hub
// (tests/browser/fake_hub.mjs) — a server honouring Range, one ignoring it,
// one cutting the connection — and the site's CSP for the Hub
// (tools/build_site.mjs: netlify.toml's exactly, a test endpoint added only
// in builds whose model list names one).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseHubId, hubHttpError, parseContentRange, hubEndpoint, resolveUrl, openHubCheckpoint, DEFAULT_ENDPOINT } from '../../web/js/engine/hub.js';
import { startFakeHub, generatedSafetensors } from '../browser/fake_hub.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const TINY = path.join(ROOT, 'tests', 'fixtures', 'hub', 'tiny-mlm');
const tinyFiles = () => Object.fromEntries(fs.readdirSync(TINY).map((f) => [f, fs.readFileSync(path.join(TINY, f))]));

test('parseHubId takes OWNER/NAME[@REVISION] and nothing else', () => {
  assert.deepEqual(parseHubId('google-bert/bert-base-uncased'),
    { id: 'google-bert/bert-base-uncased', owner: 'google-bert', name: 'bert-base-uncased', revision: 'main', spec: 'google-bert/bert-base-uncased' });
  assert.deepEqual(parseHubId(' FacebookAI/roberta-base@refs/pr/3 '),
    { id: 'FacebookAI/roberta-base', owner: 'FacebookAI', name: 'roberta-base', revision: 'refs/pr/3', spec: 'FacebookAI/roberta-base@refs/pr/3' });
  assert.equal(parseHubId('a/b@0123456789abcdef0123456789abcdef01234567').revision, '0123456789abcdef0123456789abcdef01234567');
  assert.equal(parseHubId('a/b@main').spec, 'a/b');
  for (const bad of ['', 'bert-base-uncased', 'a/b/c', '/b', 'a/', 'a/b@', 'a/b@../x', 'a/b@x//y', 'a/b@/x', '-a/b', 'a./b', 'a/b--c', 'a/b..c',
    'a b/c', 'a/<img src=x onerror=alert(1)>', 'a/b?x=1', 'a/b#f', 'https://huggingface.co/a/b', `a/${'x'.repeat(97)}`, 'a/b@x y', 'ä/b', 'a/b@%2e%2e']) {
    assert.throws(() => parseHubId(bad), (e) => e.code === 'bad-id' && /is not a Hugging Face model id/.test(e.message), JSON.stringify(bad));
  }
  // the text comes back quoted as data, cut to 200 characters
  assert.throws(() => parseHubId(`<b>${'x'.repeat(400)}`), (e) => e.message.length < 600);
});

test('resolve URLs follow the documented layout, every part encoded', () => {
  assert.equal(resolveUrl('https://huggingface.co', 'a/b', 'main', 'config.json'), 'https://huggingface.co/a/b/resolve/main/config.json');
  assert.equal(resolveUrl('https://m.example/hf', 'a/b', 'refs/pr/3', '0_Transformer/model.safetensors'),
    'https://m.example/hf/a/b/resolve/refs%2Fpr%2F3/0_Transformer/model.safetensors');
  assert.equal(hubEndpoint({ hub: { endpoint: 'http://127.0.0.1:4000/' } }), 'http://127.0.0.1:4000');
  assert.equal(hubEndpoint({ hub: { endpoint: 'https://mirror.example/hf/' } }), 'https://mirror.example/hf');
  for (const bad of [{}, null, { hub: { endpoint: 'javascript:alert(1)' } }, { hub: { endpoint: 'https://u:p@x.example' } }, { hub: { endpoint: 'not a url' } }]) {
    assert.equal(hubEndpoint(bad), DEFAULT_ENDPOINT);
  }
});

test('the Hub\'s answers become the sentences the issue asks for', () => {
  const at = { id: 'o/n', file: 'config.json' };
  assert.equal(hubHttpError(401, 'RepositoryNotFound', 'Repository not found', at).code, 'not-found');
  assert.match(hubHttpError(401, 'RepositoryNotFound', '', at).message, /no public model o\/n: it was not found or is private/);
  assert.match(hubHttpError(404, null, null, at).message, /not found or is private/);
  for (const s of [401, 403]) {
    const e = hubHttpError(s, 'GatedRepo', 'Access to model o/n is restricted.', at);
    assert.equal(e.code, 'gated');
    assert.match(e.message, /gated model.*needs a Hugging Face access token, and bertlens does not take tokens/);
    assert.match(e.detail, /^HTTP \d+ GatedRepo: Access to model o\/n is restricted\. for config\.json$/);
  }
  assert.match(hubHttpError(404, 'RevisionNotFound', '', { ...at, revision: 'v9' }).message, /has no revision “v9”/);
  assert.match(hubHttpError(404, 'EntryNotFound', '', { ...at, file: 'vocab.txt' }).message, /has no file vocab\.txt/);
  assert.match(hubHttpError(503, null, null, at).message, /usually temporary/);
  // server words are kept as plain text: control characters go
  assert.doesNotMatch(hubHttpError(403, 'X\u001b[31m', 'a\nb', at).detail, /[\u0000-\u001f]/);
});

test('Content-Range is read in safe integers only', () => {
  assert.deepEqual(parseContentRange('bytes 0-7/754280'), { first: 0, last: 7, total: 754280 });
  assert.deepEqual(parseContentRange('bytes 4294967296-4294967305/8589934592'), { first: 4294967296, last: 4294967305, total: 8589934592 });
  for (const bad of [null, '', 'bytes */100', 'bytes 5-4/10', 'bytes 0-10/10', 'bytes 0-1/99999999999999999', 'items 0-1/2', 'bytes -1-2/3', 'bytes 0-1/2, 3-4/5']) {
    assert.equal(parseContentRange(bad), null, bad);
  }
});

/** The wanted files as the converter chooses them (convert_config.c). */
const wants = async (f) => (/\.safetensors$|^pytorch_model\.bin$/.test(f) ? 2 : ['config.json', 'vocab.txt', 'tokenizer.json', 'tokenizer_config.json', 'sentence_bert_config.json', 'model.safetensors.index.json'].includes(f) ? 1 : 0);

test('Range reads against the fake Hub: in order they share one answer; a server ignoring Range is streamed past, not held', async () => {
  const big = generatedSafetensors([{ name: 'w', shape: [1024, 1024] }, { name: 'b', shape: [1024] }]); // 4 MB
  const whole = big.slice(0, big.size);
  const hub = await startFakeHub({
    'o/ranged': { files: { 'config.json': Buffer.from('{}'), 'model.safetensors': big } },
    'o/whole': { files: { 'config.json': Buffer.from('{}'), 'model.safetensors': big }, noRange: true },
    'o/cut': { files: { 'config.json': Buffer.from('{}'), 'model.safetensors': big }, cut: true },
  });
  try {
    for (const id of ['o/ranged', 'o/whole']) {
      const c = await openHubCheckpoint({ endpoint: hub.endpoint, spec: parseHubId(id), wants });
      assert.match(c.commit, /^[0-9a-f]{40}$/);
      assert.deepEqual(c.entries.map((e) => [e.name, e.size]), [['config.json', 2], ['model.safetensors', big.size]]);
      const w = c.entries[1];
      const seen = [];
      const before = hub.requests.length;
      // convert.js's pattern: the head, then the file start to end in pieces
      for (const [a, b] of [[0, 8], [0, 120], [0, 1 << 21], [1 << 21, (1 << 21) + 5], [(1 << 21) + 5, big.size]]) {
        const got = await w.read(a, b);
        assert.equal(Buffer.compare(Buffer.from(got), whole.subarray(a, b)), 0, `${id} bytes ${a}-${b}`);
        seen.push(got.length);
      }
      const cdnGets = hub.requests.slice(before).filter((r) => r.startsWith('cdn GET'));
      // the head (bounded), then one answer from 0 that the in-order reads continue
      assert.equal(cdnGets.length, 2, `${id}: ${cdnGets.join('\n')}`);
      await assert.rejects(w.read(5, big.size + 1), /outside its/);
      c.close();
    }
    // every request went to resolve URLs at the commit config.json was read at
    const commitReqs = hub.requests.filter((r) => r.startsWith('hub GET /o/ranged/'));
    assert.match(commitReqs[0], /\/resolve\/main\/config\.json$/);
    for (const r of commitReqs.slice(1)) assert.match(r, /\/resolve\/[0-9a-f]{40}\//);
    // a connection cut half-way: a clear 'cut' error, not a short result
    const c = await openHubCheckpoint({ endpoint: hub.endpoint, spec: parseHubId('o/cut'), wants });
    await assert.rejects(c.entries[1].read(0, big.size), (e) => e.code === 'cut' && /was cut off.*nothing of it was kept/.test(e.message));
    c.close();
  } finally {
    await hub.close();
  }
});

test('unknown, gated and safetensors-less repositories are refused with their sentences', async () => {
  const files = tinyFiles();
  const bin = { 'config.json': files['config.json'], 'vocab.txt': files['vocab.txt'], 'pytorch_model.bin': Buffer.alloc(1000, 1) };
  const hub = await startFakeHub({ 'o/gated': { files, gated: true }, 'o/bin': { files: bin } });
  try {
    const open = (id) => openHubCheckpoint({ endpoint: hub.endpoint, spec: parseHubId(id), wants });
    await assert.rejects(open('o/missing'), (e) => e.code === 'not-found' && /not found or is private/.test(e.message) && /RepositoryNotFound/.test(e.detail));
    await assert.rejects(open('o/gated'), (e) => e.code === 'gated' && /does not take tokens/.test(e.message));
    await assert.rejects(open('o/bin'), (e) => e.code === 'no-safetensors' && /only pytorch_model\.bin/.test(e.message) && /safe_serialization=True/.test(e.message));
    await assert.rejects(openHubCheckpoint({ endpoint: 'http://127.0.0.1:9', spec: parseHubId('o/x'), wants }), (e) => e.code === 'network');
  } finally {
    await hub.close();
  }
});

test('the published CSP allows exactly the Hub\'s hosts; a model list naming another endpoint adds only its origins', () => {
  const toml = fs.readFileSync(path.join(ROOT, 'netlify.toml'), 'utf8');
  const policy = toml.match(/Content-Security-Policy = "([^"]+)"/)[1];
  const connect = policy.split(';').map((d) => d.trim()).find((d) => d.startsWith('connect-src')).split(/\s+/).slice(1);
  assert.deepEqual(connect, ["'self'", 'https://huggingface.co', 'https://cas-bridge.xethub.hf.co', 'https://cas-bridge.xethub-eu.hf.co',
    'https://us.aws.cdn.hf.co', 'https://us.gcp.cdn.hf.co', 'https://cdn-lfs.hf.co', 'https://cdn-lfs-us-1.hf.co', 'https://cdn-lfs-eu-1.hf.co',
    'https://cdn-lfs.huggingface.co', 'https://cdn-lfs-us-1.huggingface.co', 'https://cdn-lfs-eu-1.huggingface.co']);
  const index = JSON.parse(fs.readFileSync(path.join(ROOT, 'models', 'index.json'), 'utf8'));
  assert.equal(hubEndpoint(index), 'https://huggingface.co');
  // A build whose list names a fake Hub (tests): its origins are added, the rest is netlify.toml's.
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bertlens-hub-csp-'));
  const wasm = path.join(tmp, 'wasm');
  fs.mkdirSync(wasm);
  for (const b of ['bertlens', 'bertlens-mt']) {
    fs.writeFileSync(path.join(wasm, `${b}.js`), `var createBertlens = function () {}; // ${b}\n`);
    fs.writeFileSync(path.join(wasm, `${b}.wasm`), Buffer.from([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]));
  }
  fs.writeFileSync(path.join(wasm, 'bertlens-mt.worker.js'), '"use strict";\n');
  fs.writeFileSync(path.join(wasm, 'analyze.wasm'), Buffer.from([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0])); // (viewer.html's analyses)
  const metaOf = (dist) => fs.readFileSync(path.join(dist, 'index.html'), 'utf8').match(/http-equiv="Content-Security-Policy" content="([^"]+)"/)[1].replace(/&#39;|&apos;/g, "'");
  try {
    const build = (name, env) => {
      const dist = path.join(tmp, name);
      execFileSync(process.execPath, [path.join(ROOT, 'tools', 'build_site.mjs')], { env: { ...process.env, WASM_DIR: wasm, DIST_DIR: path.relative(ROOT, dist), ...env }, stdio: 'pipe' });
      return dist;
    };
    const prod = metaOf(build('prod', {}));
    assert.equal(prod, policy.replace(/; frame-ancestors \*$/, ''), 'the published page: netlify.toml\'s policy');
    const fake = path.join(tmp, 'index.json');
    fs.writeFileSync(fake, JSON.stringify({ ...index, hub: { endpoint: 'http://127.0.0.1:4100/', redirects: ['http://127.0.0.1:4101'] } }));
    const test = build('test', { MODELS_INDEX: fake });
    assert.equal(metaOf(test), prod.replace(/(connect-src [^;]+)/, '$1 http://127.0.0.1:4100 http://127.0.0.1:4101'));
    assert.equal(JSON.parse(fs.readFileSync(path.join(test, 'models', 'index.json'), 'utf8')).hub.endpoint, 'http://127.0.0.1:4100/');
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});

test('a Hub checkpoint converts to the bytes of its folder, each weight file downloaded once (hash and tensors in one pass)', async () => {
  const { workerConverter, folderEntries } = await import('../../tools/wasm_node.mjs');
  const { WORKER_PROTOCOL } = await import('../../web/js/lib/protocol.js');
  const { convertCheckpoint } = await import('../../web/js/engine/convert.js');
  const { call } = await workerConverter(WORKER_PROTOCOL);
  const hub = await startFakeHub({ 'o/tiny-mlm': { files: tinyFiles() } });
  try {
    const want = await convertCheckpoint(call, folderEntries(TINY), { name: 'o/tiny-mlm' });
    const c = await openHubCheckpoint({ endpoint: hub.endpoint, spec: parseHubId('o/tiny-mlm'), wants: (f) => call('wants', [f]) });
    const before = hub.requests.length;
    const got = await convertCheckpoint(call, c.entries, { name: 'o/tiny-mlm' });
    c.close();
    assert.equal(Buffer.compare(Buffer.from(got.bytes), Buffer.from(want.bytes)), 0, 'same bundle as from the folder');
    const size = fs.statSync(path.join(TINY, 'model.safetensors')).size;
    const ranges = hub.requests.slice(before).filter((r) => r.startsWith('cdn GET')).map((r) => r.match(/Range: bytes=(\d+)-(\d+)/).slice(1).map(Number));
    // the safetensors head (bounded reads), then the rest of the file in one answer
    const bytes = ranges.reduce((s, [a, b]) => s + b - a + 1, 0);
    assert.ok(bytes <= size + 64 * 1024 && ranges.length <= 3, `${bytes} bytes in ${ranges.length} answers for a ${size}-byte file: ${JSON.stringify(ranges)}`);
    assert.equal(ranges[ranges.length - 1][1], size - 1);
  } finally {
    await hub.close();
  }
});

test('tokenizer.json, where the repository has it, stands for the family\'s own tokenizer files (as in transformers)', async () => {
  const files = tinyFiles();
  const tj = Buffer.from('{"model": {"type": "WordPiece"}}');
  const hub = await startFakeHub({ 'o/with-tj': { files: { ...files, 'tokenizer.json': tj } }, 'o/without': { files } });
  try {
    const a = await openHubCheckpoint({ endpoint: hub.endpoint, spec: parseHubId('o/with-tj'), wants });
    assert.deepEqual(a.entries.map((e) => e.name), ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'model.safetensors']);
    assert.ok(!hub.requests.some((r) => r.includes('/o/with-tj/') && r.endsWith('/vocab.txt')), 'vocab.txt not asked for');
    const b = await openHubCheckpoint({ endpoint: hub.endpoint, spec: parseHubId('o/without'), wants });
    assert.deepEqual(b.entries.map((e) => e.name), ['config.json', 'vocab.txt', 'tokenizer_config.json', 'model.safetensors']);
    // only files the converter asks for are requested
    assert.ok(!hub.requests.some((r) => /\/(merges\.txt|vocab\.json|spiece\.model)$/.test(r)));
    a.close();
    b.close();
  } finally {
    await hub.close();
  }
});
