// tests/web/docs_paths.test.mjs — the docs name only what exists (issue 36 item 5).
//
// README.md and every docs/*.md are read as text; in them:
//   - every path under src/, web/, tools/, tests/, docs/, models/ (globs with
//     * and {a,b} expanded; <placeholders> read as *) must name an existing
//     file or folder of the repository (except on a line that says the path
//     is "a new file", as a how-to's example does);
//   - in code (`spans` and fenced blocks), every `bertlens COMMAND` must be a
//     command src/cli/cli.c dispatches, and every --option written after it must
//     be a string the CLI sources (src/cli*.c) parse;
//   - in code, every `make TARGET` must be a target of the Makefile.
// Generated places (build/, dist/) are not checked: they exist after a build.
// Runs in plain Node, no build needed.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DOCS = ['README.md', ...fs.readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** Paths named in `text`: a top folder, then path characters. */
export function pathsIn(text) {
  const out = new Set();
  const re = /(?<![\w./~$-])(?:src|web|tools|tests|docs|models)\/[\w./*{},<>@+-]*/g;
  const kept = text.split('\n').filter((l) => !/\ba new file\b/.test(l)).join('\n');
  for (const m of kept.matchAll(re)) {
    let p = m[0].replace(/[.,:;]+$/, ''); // sentence punctuation after a path
    if (/\{[^}]*$/.test(p)) p = p.replace(/\{[^}]*$/, ''); // a brace list cut by the pattern
    out.add(p);
  }
  return [...out];
}

/** {a,b} alternatives, expanded (one level, several groups). */
function expandBraces(p) {
  const m = p.match(/\{([^{}]*)\}/);
  if (!m) return [p];
  return m[1].split(',').flatMap((alt) => expandBraces(p.slice(0, m.index) + alt + p.slice(m.index + m[0].length)));
}

/** Whether a path (with * and <placeholder> parts) names something here. */
function exists(p) {
  const parts = p.replace(/<[^>/]*>/g, '*').split('/').filter(Boolean);
  const walk = (dir, i) => {
    if (i === parts.length) return true;
    const part = parts[i];
    if (!part.includes('*')) return fs.existsSync(path.join(dir, part)) && walk(path.join(dir, part), i + 1);
    if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) return false;
    const re = new RegExp(`^${part.replace(/[.+?^$()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`);
    return fs.readdirSync(dir).some((f) => re.test(f) && walk(path.join(dir, f), i + 1));
  };
  return walk(ROOT, 0);
}

const cliSource = fs.readdirSync(path.join(ROOT, 'src/cli')).filter((f) => /\.c$/.test(f))
  .map((f) => fs.readFileSync(path.join(ROOT, 'src/cli', f), 'utf8')).join('\n');
// src/cli/cli.c's table of commands: rows {"name", function, help}, and the help words its main() knows
const CLI_C = fs.readFileSync(path.join(ROOT, 'src/cli/cli.c'), 'utf8');
const COMMANDS = new Set([...CLI_C.matchAll(/^\s*\{"([\w-]+)", \w+,/gm), ...CLI_C.matchAll(/!strcmp\(cmd, "([\w-]+)"\)/g)].map((m) => m[1]));
const makefile = fs.readFileSync(path.join(ROOT, 'Makefile'), 'utf8');
const TARGETS = new Set([...makefile.matchAll(/^([\w./%-]+(?:[ \t]+[\w./%-]+)*)[ \t]*:(?!=)/gm)].flatMap((m) => m[1].split(/\s+/)));

/** `bertlens CMD ...` and `make TARGET ...` uses in a doc: [{cmd, opts, line}] and [{target, line}]. */
export function usesIn(text) {
  const cli = [];
  const make = [];
  let fenced = false;
  text.split('\n').forEach((l, i) => {
    if (/^\s*```/.test(l)) {
      fenced = !fenced;
      return;
    }
    // the code on this line: all of it in a fenced block, else its `spans`
    const code = fenced ? [l] : [...l.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
    for (const c of code) {
      // a command where one starts: the code's start, or after $ | && ; (
      for (const m of c.matchAll(/(?:^|[$|&;(])\s*(?:\S*\/)?bertlens ([a-z][\w-]*)([^|;]*)/g)) {
        const opts = [...m[2].matchAll(/(?<![\w-])(--[a-z][\w-]*)/g)].map((o) => o[1]);
        cli.push({ cmd: m[1], opts, line: i + 1 });
      }
      for (const m of c.matchAll(/(?:^|[$|&;(])\s*make ((?:[a-z][\w./-]*\s*)+)/g)) {
        for (const t of m[1].trim().split(/\s+/)) if (/^[a-z][\w./-]*$/.test(t)) make.push({ target: t, line: i + 1 });
      }
    }
  });
  return { cli, make };
}

for (const doc of DOCS) {
  const text = fs.readFileSync(path.join(ROOT, doc), 'utf8');
  test(`${doc}: every path it names exists`, () => {
    const missing = pathsIn(text).filter((p) => !expandBraces(p).every(exists));
    assert.deepEqual(missing, [], `${doc} names paths that do not exist`);
  });
  test(`${doc}: every bertlens command, option and make target it names exists`, () => {
    const { cli, make } = usesIn(text);
    const bad = [];
    for (const u of cli) {
      if (!COMMANDS.has(u.cmd)) bad.push(`line ${u.line}: bertlens ${u.cmd} (commands: ${[...COMMANDS].join(' ')})`);
      for (const o of u.opts) if (!cliSource.includes(`"${o}"`) && !cliSource.includes(`"${o}=`)) bad.push(`line ${u.line}: bertlens ${u.cmd} ${o}`);
    }
    for (const u of make) if (!TARGETS.has(u.target)) bad.push(`line ${u.line}: make ${u.target}`);
    assert.deepEqual(bad, [], `${doc} names commands that do not exist`);
  });
}

test('the checks see drift: a made-up path, command, option and target are caught', () => {
  assert.deepEqual(pathsIn('see src/no_such_file.c, and web/js/views/\n// src/mine.c, a new file'), ['src/no_such_file.c', 'web/js/views/']);
  assert.equal(exists('src/no_such_file.c'), false);
  assert.equal(exists('web/js/views/'), true);
  assert.equal(exists('src/kernels/kernels_*.c'), true);
  assert.ok(expandBraces('src/cli/{cli,cli_info}.c').every(exists));
  assert.equal(expandBraces('src/cli/{cli,nope}.c').every(exists), false);
  const { cli, make } = usesIn('run `bertlens frobnicate --x`, then `bertlens attend --qk`; `make nothing-here test`\n'
    + 'prose: bertlens q8 is faster, make it so\n```\n$ build/bertlens info b.blb\n```');
  assert.deepEqual(cli.map((u) => u.cmd), ['frobnicate', 'attend', 'info']);
  assert.equal(COMMANDS.has('frobnicate'), false);
  assert.equal(COMMANDS.has('attend'), true);
  assert.ok(cliSource.includes('"--qk"'));
  assert.deepEqual(make.map((u) => u.target), ['nothing-here', 'test']);
  assert.equal(TARGETS.has('nothing-here'), false);
  assert.equal(TARGETS.has('test'), true);
});
