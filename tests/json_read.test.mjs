// json_read.test.mjs — the JSON reader (src/text/json_read.c) on hostile files
// (issue 31: a 64 MB tokenizer.json, the Hub loader's cap, took 2.4 GB):
//
//  - what it reads, written back by build/json_host --dump, is what
//    JavaScript's JSON.parse reads from the same text (escapes, surrogate
//    pairs, numbers, duplicate keys, nesting, empty containers);
//  - its peak memory (build/json_host's peak resident size, VmHWM, around
//    bli_jparse) stays within 8x the file + 1 MB on files of several MB made
//    to cost the most per byte: [0,0,...], ["","",...], [[],[],...],
//    [{},{},...], 60-deep nesting (each refused: denser in values than the
//    cap allows), {"k":0,...} with short keys (read, 4.5x) and tokenizer-shaped
//    ones (compact BPE, pretty BPE with [a, b] merges, compact BPE with
//    [a, b] merges as a script writes it back, compact Unigram: read). Before:
//    24-289x (8 MB of [0,0,...] took 300 MB);
//  - its CPU time grows linearly with the file (a file 4x larger: at most 8x the time);
//  - the page's converter (wasm) refuses such a tokenizer.json with the
//    reader's message, its heap growing by about the file, not 36x it.
//
//   node --test tests/json_read.test.mjs                          build/json_host
//   BERTLENS_BACKEND=asan node --test tests/json_read.test.mjs    build/asan/json_host (what it reads; no memory figures under ASan)
//   BERTLENS_BACKEND=wasm node --test tests/json_read.test.mjs    the page's converter
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { BACKEND, IS_ASAN, ROOT, WASM_JS, host, missing, nativeTest, wasmTest } from './lib/backend.mjs';

const OUT = path.join(ROOT, 'build/json-read');
fs.mkdirSync(OUT, { recursive: true });
const HOST = host('json_host');
const FACTOR = 8; // src/text/json_read.h BLI_JSON_MEM_FACTOR
const SLACK_KB = 1024; // the reader's own 64 KB, the allocator's and getrusage's granularity

// ------------------------------------------------------------ the files
/** A deterministic stream of numbers in [0, 1) (a linear congruential generator). */
function lcg(seed) {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

/** n distinct lowercase words (1..9 letters), the same for the same n. */
function words(n) {
  const rnd = lcg(7), seen = new Set();
  while (seen.size < n) {
    let w = '';
    for (let k = 1 + Math.floor(rnd() * 9); k > 0; k--) w += String.fromCharCode(97 + Math.floor(rnd() * 26));
    seen.add(w);
  }
  return [...seen];
}

const MB = 1 << 20;
/** [name, size in bytes -> text]: the denser in values, the more a reader
 *  spends per byte; the tokenizer shapes are what real files look like. */
const FILES = {
  zeros: (size) => `[${Array(Math.floor(size / 2)).fill('0').join(',')}]`,
  'empty strings': (size) => `[${Array(Math.floor(size / 3)).fill('""').join(',')}]`,
  'short keys': (size) => `{${Array.from({ length: Math.floor(size / 8) }, (_, i) => `"${(i % 4096).toString(16)}":0`).join(',')}}`,
  'empty arrays': (size) => `[${Array(Math.floor(size / 3)).fill('[]').join(',')}]`,
  'empty objects': (size) => `[${Array(Math.floor(size / 3)).fill('{}').join(',')}]`,
  'nested 60 deep': (size) => `[${Array(Math.floor(size / 122)).fill('['.repeat(60) + ']'.repeat(60)).join(',')}]`,
  'BPE, compact, "a b" merges': (size) => {
    const w = words(Math.floor(size / 13));
    const vocab = Object.fromEntries(w.map((x, i) => [x, i]));
    return JSON.stringify({ version: '1.0', model: { type: 'BPE', vocab, merges: w.filter((x) => x.length > 1).map((x) => `${x[0]} ${x.slice(1)}`) } });
  },
  'BPE, pretty, [a, b] merges': (size) => {
    const w = words(Math.floor(size / 35));
    const vocab = Object.fromEntries(w.map((x, i) => [x, i]));
    return JSON.stringify({ version: '1.0', model: { type: 'BPE', vocab, merges: w.filter((x) => x.length > 1).map((x) => [x[0], x.slice(1)]) } }, null, 2);
  },
  // as a script's JSON.stringify / json.dump writes it back: 3 values in ~12 bytes per merge (4.8x)
  'BPE, compact, list merges': (size) => {
    const w = words(Math.floor(size / 24));
    const vocab = Object.fromEntries(w.map((x, i) => [x, i]));
    return JSON.stringify({ version: '1.0', model: { type: 'BPE', vocab, merges: w.filter((x) => x.length > 1).map((x) => [x[0], x.slice(1)]) } });
  },
  'Unigram, compact': (size) => {
    const rnd = lcg(3);
    return JSON.stringify({ model: { type: 'Unigram', vocab: words(Math.floor(size / 28)).map((x) => [x, -rnd() * 20]) } });
  },
};
const DENSE = ['zeros', 'empty strings', 'empty arrays', 'empty objects', 'nested 60 deep'];

/** FILES[name] of about `size` bytes, written once into build/json-read/. */
function file(name, size) {
  const f = path.join(OUT, `${name.replace(/[^a-z0-9]+/gi, '-')}-${size}.json`);
  if (!fs.existsSync(f)) fs.writeFileSync(f, FILES[name](size));
  return f;
}

function runHost(args) {
  const r = spawnSync(HOST, args, { encoding: 'utf8', maxBuffer: 1 << 28 });
  assert.equal(r.status, 0, `${path.basename(HOST)} ${args.join(' ')}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

// -------------------------------------------------------- what it reads
const TEXTS = [
  '{"a":[1,2.5,-3e2,0,-1,1E+3,0.1,123456789012345678901234567890,-9223372036854775808,9223372036854775807],"b":{}}',
  '"\\u00e9\\ud83d\\ude00\\"\\\\\\/\\b\\f\\n\\r\\t plain é 😀"',
  '{"k":1,"k":2,"":[],"nested":{"k":[{"x":null},true,false]}}',
  ' [ [ ] , { } , [ [ [ "deep" ] ] ] , "" ] ',
  `[${'['.repeat(63)}1${']'.repeat(63)}]`,
  JSON.stringify({ model: { vocab: Object.fromEntries(words(500).map((w, i) => [w, i])), merges: words(300).map((w) => [w, w]) } }),
];
const BAD = [
  ['{"a":1,}', /^JSON: expected a member name at byte 7$/],
  ['[1 2]', /^JSON: expected ',' or '\]' at byte 3$/],
  ['"abc', /^JSON: unterminated string at byte 1$/],
  ['"a\\x"', /^JSON: bad escape in string at byte 4$/],
  ['"\\ud800"', /^JSON: lone surrogate in \\u escape at byte 7$/],
  ['"a\nb"', /^JSON: control character in string at byte 2$/],
  ['01', /^JSON: trailing characters at byte 1$/],
  ['-', /^JSON: bad number at byte 1$/],
  ['1.e5', /^JSON: bad number at byte 2$/],
  ['tru', /^JSON: unexpected character at byte 0$/],
  [`${'['.repeat(66)}${']'.repeat(66)}`, /^JSON: nested too deeply at byte 65$/],
  ['\uFEFF{}', /^JSON: starts with a byte-order mark at byte 0$/],
  ['{} x', /^JSON: trailing characters at byte 3$/],
];

nativeTest(`${BACKEND}: what the reader reads is what JSON.parse reads; bad texts get their message`, { skip: missing(HOST) }, () => {
  TEXTS.forEach((text, i) => {
    const f = path.join(OUT, `text-${i}.json`);
    fs.writeFileSync(f, text);
    const got = runHost(['--dump', f]);
    assert.deepEqual(got, JSON.parse(text), `text ${i}`);
  });
  BAD.forEach(([text, re], i) => {
    const f = path.join(OUT, `bad-${i}.json`);
    fs.writeFileSync(f, text);
    const got = runHost(['--dump', f]);
    assert.match(got.error ?? '(parsed)', re, JSON.stringify(text));
  });
});

// ------------------------------------------------------------ its memory
nativeTest(`${BACKEND}: the reader holds at most ${FACTOR}x the file + ${SLACK_KB} KB, dense files refused by the cap`, { skip: IS_ASAN ? 'ASan\'s shadow memory and redzones: memory measured on native' : missing(HOST) }, () => {
  for (const name of Object.keys(FILES)) {
    const f = file(name, 6 * MB);
    const r = runHost([f]);
    const held = (r.rss_peak_kb - r.rss_before_kb) * 1024;
    console.log(`# ${name}: ${r.bytes} bytes, ${r.ok ? `${r.values} values read` : 'refused'}, ` +
      `peak ${(held / MB).toFixed(1)} MB = ${(held / r.bytes).toFixed(2)}x the file, ${r.cpu_s} s CPU`);
    assert.ok(held <= FACTOR * r.bytes + SLACK_KB * 1024,
      `${name}: the reader held ${(held / MB).toFixed(1)} MB for ${(r.bytes / MB).toFixed(1)} MB (${(held / r.bytes).toFixed(1)}x)`);
    if (DENSE.includes(name)) {
      assert.equal(r.ok, false, `${name}: read`);
      assert.match(r.error, /^JSON: \d+ values need \d+ MB in memory( \(or more: counting stopped there\))?, more than 8 times the text's \d+ bytes \(\+65536\)/, name);
    } else {
      assert.equal(r.ok, true, `${name}: ${r.error}`);
    }
  }
});

nativeTest(`${BACKEND}: the reader's CPU time is linear in the file`, { skip: IS_ASAN ? 'timed on native' : missing(HOST) }, () => {
  for (const name of ['BPE, compact, "a b" merges', 'zeros']) {
    const best = (f) => Math.min(...[0, 1, 2].map(() => runHost([f]).cpu_s));
    const small = best(file(name, 2 * MB)), big = best(file(name, 8 * MB));
    console.log(`# ${name}: 2 MB in ${small.toFixed(3)} s, 8 MB in ${big.toFixed(3)} s of CPU`);
    assert.ok(big <= 8 * small + 0.05, `${name}: 4x the file took ${(big / small).toFixed(1)}x the CPU time`);
  }
});

// ----------------------------------------------------------------- wasm
wasmTest(`${BACKEND}: the page's converter refuses a dense tokenizer.json with the reader's message, its heap growing by about the file`, { skip: missing(WASM_JS) }, async () => {
  const { workerConverter, folderEntries } = await import('../tools/wasm_node.mjs');
  const { convertCheckpoint } = await import('../web/js/engine/convert.js');
  const { WORKER_PROTOCOL } = await import('../web/js/lib/protocol.js');
  const { call, module } = await workerConverter(WORKER_PROTOCOL, WASM_JS);
  const dir = path.join(OUT, 'checkpoint');
  fs.rmSync(dir, { recursive: true, force: true });
  fs.cpSync(path.join(ROOT, 'tests/fixtures/tiny-bert'), dir, { recursive: true });
  const zeros = fs.readFileSync(file('zeros', 8 * MB));
  fs.writeFileSync(path.join(dir, 'tokenizer.json'), zeros);
  const heap = () => module.HEAPU8.length;
  const before = heap();
  await assert.rejects(convertCheckpoint(call, folderEntries(dir), { name: 'dense' }),
    /tokenizer\.json: JSON: \d+ values need \d+ MB in memory( \(or more: counting stopped there\))?, more than 8 times the text's \d+ bytes/);
  const grew = heap() - before;
  console.log(`# wasm heap: ${(before / MB).toFixed(0)} MB -> ${(heap() / MB).toFixed(0)} MB for ${(zeros.length / MB).toFixed(0)} MB of [0,0,...]`);
  // the file is copied into the heap once (1x), the reader refuses before allocating; growth steps are 20 % of the heap
  assert.ok(grew <= (1 + FACTOR) * zeros.length + 0.25 * heap(), `the heap grew by ${(grew / MB).toFixed(0)} MB`);
});
