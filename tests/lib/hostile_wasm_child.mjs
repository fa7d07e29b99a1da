// hostile_wasm_child.mjs — one crafted tokenizer.json of issue 31 through the
// wasm build, in a process of its own (tests/hostile_wasm.test.mjs spawns it
// and kills it at its time limit, so a hang fails a test instead of blocking
// the run, and a 3 GB heap or a trap ends with this process):
//
//   node tests/lib/hostile_wasm_child.mjs TOKENIZER_JSON WORK_DIR REFS_JSON BULK
//
// Two paths, each in fresh module instances (a trap leaves an instance
// unusable); blw_load and blw_tokenize_json run in this backend's build
// (tests/lib/backend.mjs loadWasm: wasm-mt's on 2 threads):
//   page    a tiny BERT checkpoint around the file (tiny_checkpoint.mjs),
//           converted by the page's converter (web/js/engine/convert.js
//           through worker.js's 'conv' handler), then blw_load
//   bundle  the bundle a checkpoint whose tokenizer.json the converter keeps
//           whole becomes (a Unigram "carrier" of the same vocabulary size,
//           converted the same way), its tokenizer.json replaced by the
//           crafted file's bytes: what the loader meets in any bundle
//           (bundle.h version 2), whichever way the converter routes a file
// then, once loaded, blw_tokenize_json of every input of REFS_JSON (a file
// of [{input, max_length}]) and of BULK repeated to 100 KB (one text; a pair
// of its halves truncated to 512), each timed in this process's CPU time,
// then the reference inputs again (the same module, after the large texts).
//
// Prints one JSON line per step on stdout (the test reads them; the last
// line before a crash says how far it got):
//   {path, step: 'convert', bytes, log} | {path, step: 'convert', error}
//   {path, step: 'load'} | {path, step: 'load', error}
//   {path, step: 'ref', k, got}           (got: the tokens JSON, or {error})
//   {path, step: 'ref_after', k, got}     the same lines again after the 100 KB runs
//   {path, step: 'bulk', what, cpu_s, tokens} | {..., error}
//   {path, step: 'trap', at, error}       a RuntimeError (the path stops there)
//   {path, step: 'end'}                   the path ran to its end (or its refusal)
//   {done: true}
// bulk lines carry heap_mb, the module's memory then (it never shrinks).
import fs from 'node:fs';
import path from 'node:path';
import { loadWasm } from './backend.mjs';
import { readBundle, writeBundle, META } from './bundle_edit.mjs';
import { tinyCheckpoint, tokenizerVocabSize } from './tiny_checkpoint.mjs';
import { folderEntries, loadBytes, putString, wasmError, workerConverter } from '../../tools/wasm_node.mjs';
import { convertCheckpoint } from '../../web/js/engine/convert.js';
import { WORKER_PROTOCOL } from '../../web/js/lib/protocol.js';

const [tokFile, work, refsFile, bulk] = process.argv.slice(2);
const TEXT_BYTES = 100_000;
const say = (o) => fs.writeSync(1, `${JSON.stringify(o)}\n`); // (synchronous: a crash loses no line)

const tokJson = fs.readFileSync(tokFile);
const refs = JSON.parse(fs.readFileSync(refsFile, 'utf8'));

/** Convert checkpoint folder dir with the page's converter in a fresh worker
 *  (the single-threaded build, or $BERTLENS_WASM: worker.js in Node cannot
 *  start the pthreads glue's Workers; the conversion runs on one thread
 *  in both). */
async function convert(dir) {
  const { call } = await workerConverter(WORKER_PROTOCOL);
  return convertCheckpoint(call, folderEntries(dir), { name: 'test/hostile', dtype: 'f32', license: 'MIT' });
}

/** A Unigram tokenizer.json of n ids (<unk> and n - 1 pieces), no post-processor:
 *  the converter keeps it whole (convert_tokenizer.c). */
function carrier(n) {
  const vocab = [['<unk>', 0]];
  for (let i = 1; i < n; i++) vocab.push([`p${i}`, -1]);
  return JSON.stringify({
    version: '1.0', truncation: null, padding: null, added_tokens: [], normalizer: null,
    pre_tokenizer: { type: 'WhitespaceSplit' }, post_processor: null, decoder: null,
    model: { type: 'Unigram', unk_id: 0, vocab, byte_fallback: false },
  });
}

/** Bundle bytes with its tokenizer.json replaced by tj (and the carrier's
 *  special ids dropped: they are optional in version 2 and name carrier
 *  tokens; tokenizing reads none of them). */
function withTokenizer(bytes, tj) {
  const b = readBundle(bytes);
  const e = b.meta.find((m) => m.key === 'tokenizer.json');
  if (!e || e.type !== META.BYTES) throw new Error('the carrier bundle has no tokenizer.json');
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(tj.length));
  e.value = Buffer.concat([len, tj]);
  b.meta = b.meta.filter((m) => !/^tokenizer\.(unk|cls|sep|pad|mask)_id$/.test(m.key));
  return writeBundle(b);
}

/** blw_tokenize_json(a, b, maxLen) as an object; throws a trap. */
function tokenize(M, a, b, maxLen) {
  const pa = putString(M, a), pb = b == null ? 0 : putString(M, b);
  try {
    return JSON.parse(M.UTF8ToString(M._blw_tokenize_json(pa, pb, maxLen)));
  } finally {
    M._free(pa);
    if (pb) M._free(pb);
  }
}

/** Load bundle bytes into a fresh module; tokenize the references and the
 *  bulk text (as one text; with pair, also as a pair of its halves). */
async function loadAndRun(p, bytes, pair) {
  const M = await loadWasm();
  let at = 'load';
  try {
    if (loadBytes(M, bytes) !== 0) return say({ path: p, step: 'load', error: wasmError(M) });
    say({ path: p, step: 'load' });
    const tokenizeRefs = (step) => {
      for (const [k, { input, max_length: ml }] of refs.entries()) {
        at = `reference line ${k}${step === 'ref' ? '' : ' after 100 KB'}`;
        say({ path: p, step, k, got: tokenize(M, input.text, input.text_pair ?? null, ml || 0) });
      }
    };
    tokenizeRefs('ref');
    const text = bulk.repeat(Math.ceil(TEXT_BYTES / bulk.length)).slice(0, TEXT_BYTES);
    const runs = [['one text', text, null, 0]];
    if (pair) runs.push(['a pair truncated to 512', text.slice(0, TEXT_BYTES / 2), text.slice(TEXT_BYTES / 2), 512]);
    for (const [what, a, b, ml] of runs) {
      at = `100 KB (${what})`;
      const t0 = process.cpuUsage();
      const got = tokenize(M, a, b, ml);
      const t = process.cpuUsage(t0);
      say({ path: p, step: 'bulk', what, cpu_s: (t.user + t.system) / 1e6, tokens: got.ids?.length ?? 0,
        heap_mb: M.HEAPU8.length / 2 ** 20, error: got.error });
    }
    tokenizeRefs('ref_after'); // a write out of bounds shows here, if not as a trap
  } catch (e) {
    say({ path: p, step: 'trap', at, error: String(e) });
  }
}


fs.mkdirSync(work, { recursive: true });
// page: the crafted file in a checkpoint, as a Hub repository would hold it
try {
  const r = await convert(tinyCheckpoint(path.join(work, 'checkpoint'), tokJson));
  say({ path: 'page', step: 'convert', bytes: r.bytes.length, log: r.log });
  await loadAndRun('page', r.bytes, false); // the pair: on the bundle path (the same pipeline when kept whole)
} catch (e) { // a trap in the worker comes back as its message
  say({ path: 'page', step: 'convert', error: e.message });
}
say({ path: 'page', step: 'end' });
// bundle: the crafted file inside a bundle of its vocabulary's size
const n = tokenizerVocabSize(JSON.parse(tokJson));
const c = await convert(tinyCheckpoint(path.join(work, 'carrier'), Buffer.from(carrier(n))));
await loadAndRun('bundle', withTokenizer(c.bytes, tokJson), true);
say({ path: 'bundle', step: 'end' });
say({ done: true });
process.exit(0);
