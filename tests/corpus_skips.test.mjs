// corpus_skips.test.mjs — `bertlens corpus` and the page's corpus run on
// files of bad lines (issue 31: 20 MB of empty lines took 1.57 GB, one record
// kept per skipped line). Every skipped line is counted ("skipped_lines"),
// the first BL_CORPUS_MAX_SKIPPED are listed with their reasons, and memory
// does not grow with the number of bad lines:
//
//  - the CLI's peak RSS (/usr/bin/time) on 8 MB of bad lines (empty, invalid
//    UTF-8, whitespace only) is within 8 MB of its peak on 64 KB of them
//    (before: +600 MB);
//  - the page's run (blw_corpus_begin/add/json, wasm) on the same lines in
//    1 MB batches: the heap does not grow (before: +300 MB);
//  - both give the same JSON: the count, the first lines listed in order
//    with their reasons, then the inputs among the bad lines analysed.
//
//   node --test tests/corpus_skips.test.mjs                          build/bertlens
//   BERTLENS_BACKEND=asan node --test tests/corpus_skips.test.mjs    build/asan/bertlens (the JSON; no RSS under ASan)
//   BERTLENS_BACKEND=wasm node --test tests/corpus_skips.test.mjs    build/wasm/bertlens.js
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { BACKEND, BIN, IS_ASAN, ROOT, loadWasm, nativeTest, wasmTest } from './lib/backend.mjs';
import { loadBundle, wasmError } from '../tools/wasm_node.mjs';

const BUNDLE = path.join(ROOT, 'tests/fuzz/bundle/tiny-q8.blb');
const OUT = path.join(ROOT, 'build/corpus-skips');
fs.mkdirSync(OUT, { recursive: true });
// (read from its one definition; 10000 when src/analysis/corpus.h has none, as before the cap)
const MAX_LISTED = Number(/#define BL_CORPUS_MAX_SKIPPED (\d+)/.exec(fs.readFileSync(path.join(ROOT, 'src/analysis/corpus.h'), 'utf8'))?.[1] ?? 10000);
const MB = 1 << 20;

// A cycle of 8 lines: 5 bad (empty, 0xFF, whitespace only, empty, a lone
// surrogate), 3 inputs ("a b", a pair, "c") every 4096 cycles, else bad too.
const GOOD = [Buffer.from('a b'), Buffer.from('a\tb'), Buffer.from('c')];
const BAD = [Buffer.alloc(0), Buffer.from([0xff]), Buffer.from(' \t '), Buffer.alloc(0), Buffer.from([0xed, 0xa0, 0x80])];
const REASONS = [/^empty line$/, /^invalid UTF-8/, /^no tokens in sentence A/, /^empty line$/, /^invalid UTF-8/];

/** About `bytes` of lines; returns {text, lines, good: line numbers of the inputs}. */
function badLines(bytes) {
  const parts = [], good = [];
  let size = 0, line = 0;
  for (let cycle = 0; size < bytes; cycle++)
    for (let k = 0; k < 8; k++) {
      const b = k < 5 ? BAD[k] : cycle % 4096 === 0 ? GOOD[k - 5] : BAD[(k + cycle) % 5];
      line++;
      if (k >= 5 && cycle % 4096 === 0) good.push(line);
      parts.push(b, Buffer.from('\n'));
      size += b.length + 1;
    }
  return { text: Buffer.concat(parts), lines: line, good };
}

/** The line-by-line reason the cycle gives line n (1-based), or null for an input. */
function reasonOf(n) {
  const cycle = Math.floor((n - 1) / 8), k = (n - 1) % 8;
  if (k < 5) return REASONS[k];
  return cycle % 4096 === 0 ? null : REASONS[(k + cycle) % 5];
}

function checkJSON(got, { lines, good }, what) {
  assert.equal(got.texts, good.length, `${what}: inputs analysed`);
  assert.equal(got.skipped_lines, lines - good.length, `${what}: every skipped line counted`);
  assert.equal(got.skipped.length, Math.min(MAX_LISTED, lines - good.length), `${what}: the first ${MAX_LISTED} listed`);
  const want = [];
  for (let n = 1; want.length < got.skipped.length; n++) if (reasonOf(n)) want.push(n);
  assert.deepEqual(got.skipped.map((s) => s.line), want, `${what}: the lines listed, in order`);
  got.skipped.forEach((s) => assert.match(s.reason, reasonOf(s.line), `${what}: line ${s.line}`));
}

nativeTest(`${BACKEND}: corpus counts every bad line and lists the first ${MAX_LISTED}; memory flat in bad lines`, () => {
  const small = badLines(64 << 10), big = badLines(8 * MB);
  const files = [small, big].map((x, i) => {
    const f = path.join(OUT, `bad-${i}.txt`);
    fs.writeFileSync(f, x.text);
    return f;
  });
  const run = (f) => {
    const timed = !IS_ASAN && fs.existsSync('/usr/bin/time');
    const r = spawnSync(timed ? '/usr/bin/time' : BIN, [...(timed ? ['-f', 'RSS_KB %M', BIN] : []), 'corpus', BUNDLE, f],
      { maxBuffer: 1 << 28, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    return { json: JSON.parse(r.stdout), kb: timed ? Number(/RSS_KB (\d+)/.exec(r.stderr)[1]) : null };
  };
  const a = run(files[0]), b = run(files[1]);
  assert.ok(big.lines - big.good.length > 1e6 && big.lines - big.good.length > 100 * MAX_LISTED, 'the big file has many more bad lines than are listed');
  if (a.kb !== null) {
    console.log(`# peak RSS: ${small.lines} lines ${a.kb} kB, ${big.lines} lines ${b.kb} kB`);
    assert.ok(b.kb - a.kb < 8 * 1024, `peak RSS grew from ${a.kb} kB to ${b.kb} kB with the bad lines`);
  }
  checkJSON(a.json, small, '64 KB');
  checkJSON(b.json, big, '8 MB');
});

wasmTest(`${BACKEND}: the page's corpus run counts every bad line and lists the first ${MAX_LISTED}; its heap does not grow`, async () => {
  const M = await loadWasm();
  loadBundle(M, BUNDLE);
  const big = badLines(8 * MB);
  assert.ok(M._blw_corpus_begin(10, -1, 0) > 0, wasmError(M));
  const heap0 = M.HEAPU8.length;
  // 1 MB batches cut at line ends, as the page's worker sends them
  const buf = M._malloc(MB + 16);
  let line = 1, done = 0, at = 0, heapAfterFirst = 0;
  while (at < big.text.length) {
    let end = Math.min(at + MB, big.text.length);
    while (end < big.text.length && big.text[end - 1] !== 0x0a) end--;
    const chunk = big.text.subarray(at, end);
    M.HEAPU8.set(chunk, buf);
    const n = M._blw_corpus_add(buf, chunk.length, line);
    assert.ok(n >= 0, wasmError(M));
    done += n;
    for (const c of chunk) if (c === 0x0a) line++;
    at = end;
    if (!heapAfterFirst) heapAfterFirst = M.HEAPU8.length;
  }
  const heap1 = M.HEAPU8.length;
  const json = JSON.parse(M.UTF8ToString(M._blw_corpus_json()));
  M._blw_corpus_end();
  M._free(buf);
  console.log(`# wasm heap: ${(heap0 / MB).toFixed(0)} MB before, ${(heapAfterFirst / MB).toFixed(0)} MB after the first batch, ${(heap1 / MB).toFixed(0)} MB after ${big.lines} lines`);
  assert.equal(done, big.good.length);
  checkJSON(json, big, 'wasm');
  assert.ok(heap1 - heapAfterFirst <= 4 * MB, `the heap grew from ${heapAfterFirst} to ${heap1} bytes with the bad lines`);
  // the CLI gives the same JSON for the same lines
  const f = path.join(OUT, 'bad-wasm.txt');
  fs.writeFileSync(f, big.text);
  const r = spawnSync(BIN, ['corpus', BUNDLE, f], { maxBuffer: 1 << 28, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(json, JSON.parse(r.stdout), 'the page\'s JSON is the CLI\'s');
});
