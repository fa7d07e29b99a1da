// Tokenizer throughput, wasm (in Node) and native, on ~1 MB of mixed text
// built from the test corpus (prose in many scripts, code, URLs, emoji, random Unicode).
//
//   node tools/bench_tokenizer.mjs [--mb N] [--wasm build/wasm/bertlens.js] [--bin build/bertlens] [--bundle B]
//                                  [--baseline REF | --no-baseline] [--harness-mb 16] [--rounds 7]
//                                  [--callgrind MB | --no-callgrind]
//
// wasm: blw_tokenize_json on the whole text in one call, then line by line.
// native: `bertlens tokenize --jsonl` over the lines repeated --repeat times
// (default 10, so the work dwarfs start-up), minus the time of the same
// command on empty input (process start + bundle load).
// Baseline: the same native measurement of REF's CLI, built in this run from
// a `git worktree` of REF (build/bench-baseline/REF; kept for the next run),
// the two binaries alternating, on the uncased bundle and on the cased one
// (build/models/all-minilm-l6-v2-cased.q8.blb) when it is there. The default
// REF is the last commit with BERT's own WordPiece tokenizer (tokenizer.c of
// 688 lines, before it became a facade over the tokenizer.json pipeline).
// Then tokenizing alone (no process, no JSON): tools/bench_tokenize.c built
// against this tree's build/libbertlens.a and REF's, CPU time, uncased and
// cased, alternating; and their ids and offsets compared line by line.
// Then, where valgrind is installed (--no-callgrind: not), the harness's
// instructions per MB under callgrind (--callgrind MB of the corpus lines,
// default 2, minus a run of 0 MB: the bundle load), the figure the
// machine's load does not move.
// Prints MB/s (MB = 10^6 bytes of UTF-8 input).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createModule, loadBundle, putString } from './wasm_node.mjs';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const argv = process.argv.slice(2);
const opt = (name, def) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : def;
};
const MB = Number(opt('--mb', '1'));
const REPEAT = Number(opt('--repeat', '10'));
const WASM_JS = path.resolve(opt('--wasm', path.join(ROOT, 'build/wasm/bertlens.js')));
const BIN = path.resolve(opt('--bin', process.env.BERTLENS_BIN || path.join(ROOT, 'build/bertlens')));
const BUNDLE = path.resolve(opt('--bundle', [path.join(ROOT, 'build/models/all-minilm-l6-v2.q8.blb'),
  path.join(ROOT, 'models/all-minilm-l6-v2.q8.blb.gz')].find((p) => fs.existsSync(p))));
const CASED = path.join(ROOT, 'build/models/all-minilm-l6-v2-cased.q8.blb');
const OLD_TOKENIZER = '1f5539f'; // the last commit whose tokenizer.c was BERT's own WordPiece
const BASELINE = argv.includes('--no-baseline') ? null : opt('--baseline', OLD_TOKENIZER);

// ~MB megabytes of lines, cycling through the corpus texts in a fixed order.
const corpus = fs.readFileSync(path.join(ROOT, 'tests/corpus/tokenizer.jsonl'), 'utf8').split('\n').filter(Boolean)
  .map((l) => JSON.parse(l).text.replaceAll('\0', ' ').replace(/[\n\r]/g, ' ')).filter((t) => t.length);
const lines = [];
let bytes = 0;
for (let i = 0; bytes < MB * 1e6; i++) {
  const t = corpus[i % corpus.length];
  lines.push(t);
  bytes += Buffer.byteLength(t) + 1;
}
const text = lines.join('\n');
const mb = Buffer.byteLength(text) / 1e6;
console.log(`tokenizer bench: ${mb.toFixed(2)} MB of UTF-8 in ${lines.length} lines (${BUNDLE.replace(ROOT + '/', '')})`);

function best(n, fn) {
  let t = Infinity;
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    fn();
    t = Math.min(t, Number(process.hrtime.bigint() - t0) / 1e9);
  }
  return t;
}
const row = (name, sec) => console.log(`  ${name.padEnd(34)} ${(sec * 1e3).toFixed(1).padStart(8)} ms  ${(mb / sec).toFixed(1).padStart(7)} MB/s`);

// ---------------------------------------------------------------- wasm
if (fs.existsSync(WASM_JS)) {
  const M = await createModule(WASM_JS);
  loadBundle(M, BUNDLE);
  const put = (s) => putString(M, s);
  const whole = put(text);
  const each = lines.map(put); // strings copied in once; the timing covers tokenize + JSON
  const one = best(3, () => {
    const r = M.UTF8ToString(M._blw_tokenize_json(whole, 0, 0));
    if (r.startsWith('{"error"')) throw new Error(r);
  });
  const many = best(3, () => {
    for (const q of each) M._blw_tokenize_json(q, 0, 0);
  });
  console.log(`wasm (${M._blw_simd() ? 'simd128' : 'scalar'} build)`);
  row('one call on the whole text', one);
  row(`line by line (${lines.length} calls)`, many);
} else {
  console.log(`wasm: ${WASM_JS} missing (make wasm)`);
}

// -------------------------------------------------------------- native
const input = (lines.map((l) => JSON.stringify(l)).join('\n') + '\n').repeat(REPEAT);
// Seconds per MB-sized pass of `bin tokenize --jsonl bundle`, start-up subtracted.
function nativeTime(bin, bundle, runs = 3) {
  const run = (inp) => {
    const r = spawnSync(bin, ['tokenize', '--jsonl', bundle], { input: inp, maxBuffer: 1 << 30 });
    if (r.status !== 0) throw new Error(`${bin}: ${r.stderr}`);
  };
  const base = best(runs, () => run(''));
  const full = best(runs, () => run(input));
  return { base, sec: Math.max(full - base, 1e-6) / REPEAT };
}

// REF's CLI, built once in a git worktree under build/bench-baseline.
function baselineBin(ref) {
  const git = (...a) => spawnSync('git', a, { cwd: ROOT, encoding: 'utf8' });
  const hash = git('rev-parse', '--verify', '--short', `${ref}^{commit}`).stdout?.trim();
  if (!hash) return { why: `${ref} is not a commit here` };
  const dir = path.join(ROOT, 'build/bench-baseline', hash);
  const bin = path.join(dir, 'build/bertlens');
  if (!fs.existsSync(bin)) {
    if (!fs.existsSync(dir)) {
      const w = git('worktree', 'add', '--detach', dir, hash);
      if (w.status !== 0) return { why: `git worktree add failed: ${w.stderr}` };
    }
    console.log(`building ${ref}'s CLI in ${path.relative(ROOT, dir)} ...`);
    const m = spawnSync('make', ['build/bertlens'], { cwd: dir, encoding: 'utf8' });
    if (m.status !== 0) return { why: `make build/bertlens of ${ref} failed: ${m.stderr.slice(-400)}` };
  }
  return { bin, hash };
}

if (fs.existsSync(BIN)) {
  const { base, sec } = nativeTime(BIN, BUNDLE);
  console.log(`native (${path.relative(ROOT, BIN)}; start-up + bundle load ${(base * 1e3).toFixed(0)} ms subtracted)`);
  row(`tokenize --jsonl (per ${mb.toFixed(2)} MB)`, sec);
  const old = BASELINE ? baselineBin(BASELINE) : null;
  if (old && old.why) console.log(`baseline: ${old.why}`);
  else if (old) {
    console.log(`native vs ${BASELINE} (${old.hash}, built here; the two alternate, best of 3 rounds of 3)`);
    for (const [name, bundle] of [['uncased', BUNDLE], ['cased', CASED]]) {
      if (!fs.existsSync(bundle)) { console.log(`  ${name}: ${path.relative(ROOT, bundle)} missing (make test-models)`); continue; }
      let now = Infinity, then = Infinity;
      for (let i = 0; i < 3; i++) {
        then = Math.min(then, nativeTime(old.bin, bundle).sec);
        now = Math.min(now, nativeTime(BIN, bundle).sec);
      }
      row(`${name}: this tree`, now);
      row(`${name}: ${BASELINE}`, then);
      console.log(`  ${name}: this tree / ${BASELINE} = ${(now / then).toFixed(3)}`);
    }
  }
  if (old && !old.why) harnessVsOld(old);
} else {
  console.log(`native: ${BIN} missing (make native)`);
}

// Tokenizing alone: tools/bench_tokenize.c linked against this tree's
// build/libbertlens.a and against REF's (both through bertlens.h), CPU time of
// bl_tokenize over HARNESS_MB megabytes of the corpus lines, the two builds
// alternating, best of ROUNDS; and their ids and offsets, line by line, must
// be the same.
function harnessVsOld(old) {
  const HARNESS_MB = Number(opt('--harness-mb', '16'));
  const ROUNDS = Number(opt('--rounds', '7'));
  const dir = path.join(ROOT, 'build/tokbench');
  fs.mkdirSync(dir, { recursive: true });
  const linesFile = path.join(dir, 'lines.txt');
  fs.writeFileSync(linesFile, corpus.join('\n') + '\n');
  const build = (tree, out) => {
    const m = spawnSync('make', ['lib'], { cwd: tree, encoding: 'utf8' });
    if (m.status !== 0) return `make lib in ${path.relative(ROOT, tree) || '.'} failed: ${m.stderr.slice(-400)}`;
    const c = spawnSync(process.env.CC || 'cc', ['-O2', '-I', path.join(tree, 'build/include'), '-o', out,
      path.join(ROOT, 'tools/bench_tokenize.c'), path.join(tree, 'build/libbertlens.a'), '-lm', '-pthread'],
    { encoding: 'utf8' });
    return c.status === 0 ? null : `cc tools/bench_tokenize.c failed: ${c.stderr.slice(-400)}`;
  };
  const nowBin = path.join(dir, 'bench_tokenize'), oldBin = path.join(dir, `bench_tokenize-${old.hash}`);
  const why = build(ROOT, nowBin) || build(path.dirname(path.dirname(old.bin)), oldBin);
  if (why) { console.log(`tokenizing alone: ${why}`); return; }
  const cpu = (bin, bundle) => {
    const r = spawnSync(bin, [bundle, linesFile, String(HARNESS_MB)], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${bin}: ${r.stderr}`);
    return Number(r.stdout.split(' ')[0]);
  };
  const dump = (bin, bundle) => spawnSync(bin, [bundle, linesFile, '0', '--dump'], { encoding: 'utf8', maxBuffer: 1 << 30 }).stdout;
  console.log(`tokenizing alone (tools/bench_tokenize.c, CPU s of bl_tokenize on ${HARNESS_MB} MB of ${corpus.length} ` +
    `corpus lines; this tree and ${BASELINE} alternate, best of ${ROUNDS}; load average ${os.loadavg().map((x) => x.toFixed(1)).join(' ')})`);
  for (const [name, bundle] of [['uncased', BUNDLE], ['cased', CASED]]) {
    if (!fs.existsSync(bundle)) continue;
    const a = dump(nowBin, bundle), b = dump(oldBin, bundle);
    const same = a === b && a.length > 0;
    let now = Infinity, then = Infinity;
    for (let i = 0; i < ROUNDS; i++) {
      then = Math.min(then, cpu(oldBin, bundle));
      now = Math.min(now, cpu(nowBin, bundle));
    }
    console.log(`  ${name}: this tree ${now.toFixed(3)} s, ${BASELINE} ${then.toFixed(3)} s: ${(now / then).toFixed(3)}x` +
      `  (ids and offsets ${same ? 'identical' : 'DIFFER'})`);
  }
  if (!argv.includes('--no-callgrind') && spawnSync('valgrind', ['--version']).status === 0)
    callgrindVsOld(nowBin, oldBin, linesFile);
}

// Instructions per MB of bl_tokenize (tools/bench_tokenize.c under
// callgrind: a run on MB megabytes minus one on 0, which only loads).
function callgrindVsOld(nowBin, oldBin, linesFile) {
  const given = Number(opt('--callgrind', '2'));
  const MB = given > 0 ? given : 2;
  const ir = (bin, bundle, mb) => {
    const r = spawnSync('valgrind', ['--tool=callgrind', '--callgrind-out-file=/dev/null', bin, bundle, linesFile, String(mb)],
      { encoding: 'utf8' });
    const m = /Collected : (\d+)/.exec(r.stderr || '');
    if (r.status !== 0 || !m) throw new Error(`valgrind ${path.basename(bin)}: ${r.error || (r.stderr || '').slice(-300)}`);
    return Number(m[1]);
  };
  const perMb = (bin, bundle) => (ir(bin, bundle, MB) - ir(bin, bundle, 0)) / MB / 1e6;
  console.log(`instructions per MB of bl_tokenize (callgrind, ${MB} MB of the corpus lines, bundle load subtracted)`);
  for (const [name, bundle] of [['uncased', BUNDLE], ['cased', CASED]]) {
    if (!fs.existsSync(bundle)) continue;
    let now, then;
    try {
      now = perMb(nowBin, bundle);
      then = perMb(oldBin, bundle);
    } catch (e) {
      console.log(`  ${name}: ${e.message}`);
      return;
    }
    console.log(`  ${name}: this tree ${now.toFixed(1)} M, ${BASELINE} ${then.toFixed(1)} M: ${(now / then).toFixed(3)}x`);
  }
}
