// python.test.mjs — the Python tests under node:test, one subtest per Python test.
//
// tests/test_bundle.py (the loader and converter on damaged bundles) and
// tests/test_cli_security.py (the CLI and the converters on crafted models)
// check the C code against tools/convert.py, the reference converter, and
// numpy's decoding of the bundle spec; tests/test_dtype.py checks the f16
// codec against numpy's float16. Those references are Python, so the tests
// stay Python; this file runs them with the backend's CLI and reports each.
//
//   node --test tests/python.test.mjs                         build/bertlens, build/dtype_host
//   BERTLENS_BACKEND=asan node --test tests/python.test.mjs   build/asan/bertlens (test_dtype.py: native only)
//   python3 tests/test_bundle.py -v Rejects.test_wrong_magic  one Python test by name (BERTLENS_BIN=... for another CLI)
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { BACKEND, BIN, ROOT, host, needs } from './lib/backend.mjs';

const PYTHON = process.env.PYTHON || 'python3';
const CLI_ONLY = needs('native', 'asan');

/** Runs a unittest script verbosely; returns its status, output and each test's outcome and report. */
function unittest(file, env) {
  const r = spawnSync(PYTHON, [file, '-v'], { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 28, env: { ...process.env, ...env } });
  const out = `${r.stdout || ''}${r.stderr || ''}`;
  const results = [];
  // "test_name (module.Class.test_name) ... ok" (a docstring line may sit before " ... ")
  const re = /^(test\w*) \(([\w.]+)\)(?:\n[^\n]*?)? \.\.\. (ok|FAIL|ERROR|skipped(?: (.*))?|expected failure|unexpected success)$/gm;
  for (let m; (m = re.exec(out));) {
    const cls = m[2].split('.').slice(-2, -1)[0] || m[2];
    results.push({ name: `${cls}.${m[1]}`, id: m[2], outcome: m[3].split(' ')[0], reason: m[4] });
  }
  // the tracebacks: "FAIL: test_name (id)" or "ERROR: ..." (one per failed subTest), each up to the next
  // "=====" line or the "-----" line before "Ran N tests"
  const report = (id) => {
    const head = new RegExp(`^(FAIL|ERROR): \\w+ \\(${id.replace(/\./g, '\\.')}\\)`, 'gm');
    const blocks = [];
    for (let m; (m = head.exec(out));) {
      const rest = out.slice(m.index);
      const end = rest.slice(1).search(/^={70}$|^-{70}\nRan \d+ test/m);
      blocks.push(end < 0 ? rest : rest.slice(0, end + 1));
    }
    return blocks.join('').slice(0, 6000);
  };
  return { status: r.status, signal: r.signal, out, results, report };
}

for (const [file, what] of [
  ['tests/test_bundle.py', 'the loader and converter on damaged bundles'],
  ['tests/test_cli_security.py', 'the CLI and the converters on crafted models'],
]) {
  test(`${file}: ${what} (${BACKEND})`, { skip: CLI_ONLY }, async (t) => {
    const r = unittest(file, { BERTLENS_BIN: BIN });
    assert.ok(r.results.length > 0, `${file} ran no tests (exit ${r.status}):\n${r.out.slice(-3000)}`);
    for (const x of r.results) {
      await t.test(x.name, { skip: x.outcome === 'skipped' && (x.reason || 'skipped') }, () => {
        assert.ok(x.outcome === 'ok' || x.outcome === 'skipped' || x.outcome === 'expected', `${x.outcome}\n${r.report(x.id)}`);
      });
    }
    assert.equal(r.status, 0, `${file} exited ${r.status ?? r.signal}:\n${r.out.slice(-3000)}`);
  });
}

test('tests/test_dtype.py: the f16 codec (src/base/dtype.h) against numpy float16', { skip: needs('native') }, () => {
  const r = spawnSync(PYTHON, ['tests/test_dtype.py'], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, BERTLENS_DTYPE_HOST: host('dtype_host') } });
  console.log(`${(r.stdout || '').trim().split('\n').pop()}`);
  assert.equal(r.status, 0, `${r.stdout}${r.stderr}`);
});
