// corpus_cmd.test.mjs — `bertlens corpus` (issue 25 item 1) against numpy
// references from Hugging Face attention, and against `bertlens analyze` run
// on every line.
//
//   node --test tests/corpus_cmd.test.mjs
//   BERTLENS_BACKEND=asan ...   under sanitizers; BERTLENS_QUICK=1 (its default there): the reference
//                               comparison and the hostile inputs only (no per-line analyze, no memory run)
//
// References: tests/fixtures/corpus_cmd/ (tests/fixtures/corpus_cmd/make.py:
// all-MiniLM-L6-v2, BertModel eager fp32, float64 numpy, the features and
// classes of tests/fixtures/analyze/make.py). Bundles: build/models/ (make
// test-models): the f32 MiniLM, and tiny-bert for the memory run.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BIN, QUICK, nativeTest as test } from './lib/backend.mjs';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const FIX = path.join(ROOT, 'tests/fixtures/corpus_cmd');
const expected = JSON.parse(fs.readFileSync(path.join(FIX, 'expected.json'), 'utf8'));
const BUNDLE = path.join(ROOT, expected.bundle);
const TINY = path.join(ROOT, 'build/models/tiny-bert.f32.blb');
const CORPUS = path.join(FIX, 'corpus.txt');
const FEATURES = ['entropy', 'cls', 'sep', 'punct', 'prev', 'self', 'next'];
const CLASSES = ['vertical', 'diagonal', 'vertical+diagonal', 'block', 'heterogeneous'];
const FEATURE_TOL = 1e-4; // mean features against numpy (measured 3.8e-7)
const WEIGHT_TOL = 1e-5;  // top-link weights against Hugging Face's (measured 1.7e-6)
const noBundle = !fs.existsSync(BUNDLE) && `no ${expected.bundle} (make test-models)`;

function corpus(args, opts = {}) {
  const r = spawnSync(BIN, ['corpus', ...args], { maxBuffer: 1 << 28, ...opts });
  return { status: r.status, signal: r.signal, stdout: r.stdout.toString('utf8'), stderr: r.stderr.toString('utf8') };
}

function runCorpus(args, opts) {
  const r = corpus(args, opts);
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

let defaultRun = null; // the MiniLM corpus with default options, run once
const runDefault = () => (defaultRun ??= corpus([BUNDLE, CORPUS]));

const key = (x) => `${x.text}:${x.query}:${x.key}`;

/** The top list of one head against the reference: same links in the same
 * order, except that two neighbours closer than the fixture's 1e-5
 * ("near_ties") may come either way. */
function compareTop(got, ref, name) {
  assert.equal(got.length, ref.top.length, `${name}: top length`);
  const near = new Set(ref.near_ties);
  for (let i = 0; i < got.length; i++) {
    const g = got[i];
    let r = ref.top[i];
    if (key(g) !== key(r) && near.has(i - 1) && key(g) === key(ref.top[i - 1])) r = ref.top[i - 1];
    else if (key(g) !== key(r) && near.has(i) && i + 1 < ref.top.length && key(g) === key(ref.top[i + 1])) r = ref.top[i + 1];
    else if (key(g) !== key(r) && near.has(i) && i + 1 === ref.top.length) { // the last kept vs the first left out
      assert.ok(Math.abs(g.weight - r.weight) <= WEIGHT_TOL, `${name} #${i}: ${g.weight} vs ${r.weight}`);
      continue;
    }
    assert.equal(key(g), key(r), `${name} #${i}: text:query:key`);
    assert.equal(g.line, r.line, `${name} #${i}: line`);
    assert.equal(g.query_token, r.query_token, `${name} #${i}: query_token`);
    assert.equal(g.key_token, r.key_token, `${name} #${i}: key_token`);
    assert.ok(Math.abs(g.weight - r.weight) <= WEIGHT_TOL, `${name} #${i}: weight ${g.weight} vs ${r.weight}`);
  }
}

test('corpus matches the numpy reference: counts, skipped lines, mean features, classes, top links', { skip: noBundle }, () => {
  const r = runDefault();
  assert.equal(r.status, 0, r.stderr);
  const got = JSON.parse(r.stdout);
  assert.equal(got.texts, expected.texts);
  assert.equal(got.tokens, expected.tokens);
  assert.deepEqual(got.skipped.map((s) => s.line), expected.skipped.map((s) => s.line), 'skipped lines');
  got.skipped.forEach((s, i) => assert.ok(s.reason.startsWith(expected.skipped[i].reason),
    `line ${s.line}: reason "${s.reason}", expected "${expected.skipped[i].reason}..."`));
  assert.equal(got.heads.length, expected.heads.length);
  let maxD = 0;
  got.heads.forEach((h, k) => {
    const r = expected.heads[k];
    const name = `L${r.layer}H${r.head}`;
    assert.equal(h.layer, r.layer);
    assert.equal(h.head, r.head);
    for (const f of FEATURES) {
      const d = Math.abs(h[f] - r[f]);
      maxD = Math.max(maxD, d);
      assert.ok(d <= FEATURE_TOL, `${name} ${f}: ${h[f]} vs ${r[f]}`);
    }
    assert.deepEqual(Object.keys(h.class_fractions), CLASSES, `${name}: class keys`);
    if (r.class_margin_ok) assert.deepEqual(h.class_fractions, r.class_fractions, `${name}: class fractions`);
    compareTop(h.top, r, name);
  });
  console.log(`# ${got.texts} texts, ${got.heads.length} heads: mean features max |d| ${maxD.toExponential(2)}`);
});

test('the output does not depend on --threads or on reading stdin', { skip: noBundle || (QUICK && 'BERTLENS_QUICK (quick subset)') }, () => {
  const dflt = runDefault(); // one thread per core
  const one = corpus(['--threads', '1', BUNDLE, CORPUS]);
  const three = corpus(['--threads', '3', BUNDLE, '-'], { input: fs.readFileSync(CORPUS) });
  assert.equal(one.status, 0, one.stderr);
  assert.equal(dflt.stdout, one.stdout, `--threads ${os.availableParallelism()} (default) vs 1`);
  assert.equal(three.stdout, one.stdout, 'stdin, --threads 3 vs 1');
});

test('--top N keeps the N strongest links of the default list', { skip: !fs.existsSync(TINY) && 'no tiny-bert (make test-models)' }, () => {
  const ten = runCorpus([TINY, CORPUS]);
  const three = runCorpus(['--top', '3', TINY, CORPUS]);
  const none = runCorpus(['--top', '0', TINY, CORPUS]);
  assert.ok(ten.heads.every((h) => h.top.length === 10));
  three.heads.forEach((h, k) => assert.deepEqual(h.top, ten.heads[k].top.slice(0, 3)));
  none.heads.forEach((h, k) => assert.deepEqual({ ...h, top: [] }, { ...ten.heads[k], top: [] }));
  none.heads.forEach((h) => assert.deepEqual(h.top, []));
});

/** Lines of the corpus split as the CLI splits them (1-based). */
function corpusLines() {
  const bytes = fs.readFileSync(CORPUS);
  const lines = [];
  let start = 0;
  for (let i = 0; i <= bytes.length; i++) {
    if (i < bytes.length && bytes[i] !== 0x0a) continue;
    if (i === bytes.length && start === i) break;
    let line = bytes.subarray(start, i);
    if (line.length && line[line.length - 1] === 0x0d) line = line.subarray(0, line.length - 1);
    lines.push(line);
    start = i + 1;
  }
  return lines;
}

function analyzeAsync(args) {
  return new Promise((resolve, reject) => {
    const p = spawn(BIN, ['analyze', BUNDLE, ...args]);
    const out = [];
    let err = '';
    p.stdout.on('data', (d) => out.push(d));
    p.stderr.on('data', (d) => { err += d; });
    p.on('close', (code) => (code === 0 ? resolve(JSON.parse(Buffer.concat(out).toString('utf8'))) : reject(new Error(err))));
  });
}

test('means and class fractions are those of `bertlens analyze` run on every line', { skip: noBundle || (QUICK && 'BERTLENS_QUICK (quick subset)') }, async () => {
  const got = JSON.parse(runDefault().stdout);
  const skipped = new Set(got.skipped.map((s) => s.line));
  const jobs = [];
  corpusLines().forEach((bytes, i) => {
    if (skipped.has(i + 1)) return;
    const text = bytes.toString('utf8');
    const tab = text.indexOf('\t');
    jobs.push(tab < 0 ? [text] : [text.slice(0, tab), text.slice(tab + 1)]);
  });
  assert.equal(jobs.length, got.texts);
  const results = new Array(jobs.length);
  let next = 0;
  const worker = async () => { while (next < jobs.length) { const k = next++; results[k] = await analyzeAsync(jobs[k]); } };
  await Promise.all([worker(), worker()]);
  const H = got.heads.length;
  const sums = Array.from({ length: H }, () => Object.fromEntries(FEATURES.map((f) => [f, 0])));
  const counts = Array.from({ length: H }, () => Object.fromEntries(CLASSES.map((c) => [c, 0])));
  let tokens = 0;
  for (const a of results) { // in input order, each figure the float analyze printed, summed in double as corpus.c does
    tokens += a.tokens.length;
    a.heads.forEach((h, k) => {
      for (const f of FEATURES) sums[k][f] += Math.fround(h[f]);
      counts[k][h.class]++;
    });
  }
  assert.equal(got.tokens, tokens, 'tokens');
  got.heads.forEach((h, k) => {
    for (const f of FEATURES) {
      const mean = sums[k][f] / results.length;
      assert.ok(Math.abs(h[f] - mean) <= 1e-8 * Math.max(1, Math.abs(mean)), `L${h.layer}H${h.head} ${f}: ${h[f]} vs ${mean}`);
    }
    for (const c of CLASSES)
      assert.equal(h.class_fractions[c], counts[k][c] / results.length, `L${h.layer}H${h.head} ${c}`);
  });
});

test('bad lines are listed, never fatal; bad arguments are refused with a message', { skip: !fs.existsSync(TINY) && 'no tiny-bert (make test-models)' }, () => {
  const long = Buffer.alloc((1 << 20) + 10, 0x61); // one line over the 1 MiB cap
  const input = Buffer.concat([Buffer.from('ok line\n\n\xff\n'.split('').map((c) => c.charCodeAt(0))),
    long, Buffer.from('\n\t\nlast\ttab'), Buffer.from([0x0a, 0xed, 0xa0, 0x80, 0x0a])]);
  const got = runCorpus([TINY, '-'], { input });
  assert.equal(got.texts, 2);
  assert.deepEqual(got.skipped.map((s) => s.line), [2, 3, 4, 5, 7]);
  assert.equal(got.skipped[0].reason, 'empty line');
  assert.match(got.skipped[1].reason, /^invalid UTF-8/);
  assert.match(got.skipped[2].reason, /^line longer than 1048576 bytes/);
  assert.match(got.skipped[3].reason, /^no tokens in sentence A/);
  assert.match(got.skipped[4].reason, /^invalid UTF-8/); // a UTF-16 surrogate (ED A0 80)
  const empty = runCorpus([TINY, '-'], { input: '' });
  assert.equal(empty.texts, 0);
  assert.ok(empty.heads.every((h) => h.entropy === null && h.top.length === 0 && h.class_fractions.vertical === null));
  for (const [args, msg] of [[['--top', '-1', TINY, '-'], /--top takes/], [['--top', 'x', TINY, '-'], /--top takes/],
    [['--top', '10001', TINY, '-'], /--top takes/], [['--bogus', TINY, '-'], /unknown option/],
    [[TINY], /usage/], [[TINY, path.join(os.tmpdir(), 'no-such-corpus.txt')], /cannot open/],
    [[path.join(os.tmpdir(), 'no-such.blb'), '-'], /cannot open/]]) {
    const r = corpus(args, { input: 'a\n' });
    assert.equal(r.status, 1, `${args.join(' ')}: exit status`);
    assert.equal(r.signal, null);
    assert.match(r.stderr, msg, args.join(' '));
  }
});

test('memory stays flat from 500 to 5,000 lines (peak RSS ratio < 1.3)', { skip: (QUICK && 'BERTLENS_QUICK (quick subset)') || (!fs.existsSync('/usr/bin/time') && 'no /usr/bin/time') || (!fs.existsSync(TINY) && 'no tiny-bert') }, () => {
  const words = ['the', 'cat', 'sat', 'on', 'a', 'mat', 'while', 'dogs', 'bark', 'loudly', ',', '.', 'and', 'birds', 'sing'];
  let x = 7;
  const line = (i) => {
    const n = 10 + (i % 40);
    const w = [];
    for (let k = 0; k < n; k++) { x = (x * 1103515245 + 12345) >>> 0; w.push(words[(x >>> 8) % words.length]); }
    return w.join(' ') + (i % 7 === 0 ? `\t${w.slice(0, 4).join(' ')}` : '');
  };
  const peak = (n) => {
    const text = Array.from({ length: n }, (_, i) => line(i)).join('\n') + '\n';
    const r = spawnSync('/usr/bin/time', ['-f', 'RSS_KB %M', BIN, 'corpus', TINY, '-'], { input: text, maxBuffer: 1 << 26 });
    assert.equal(r.status, 0, r.stderr.toString());
    assert.equal(JSON.parse(r.stdout.toString()).texts, n);
    return Number(/RSS_KB (\d+)/.exec(r.stderr.toString())[1]);
  };
  const small = peak(500), big = peak(5000);
  console.log(`# peak RSS: 500 lines ${small} kB, 5,000 lines ${big} kB (x${(big / small).toFixed(3)})`);
  assert.ok(big / small < 1.3, `peak RSS grew ${small} -> ${big} kB`);
});
