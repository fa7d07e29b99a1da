// tools/serve.py's command line: with no arguments it serves dist/ (next to
// tools/, whatever the working directory) on port 8000; bad arguments give a
// message, not a traceback. parse_args is asked directly, so no port is bound.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const TOOLS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'tools');

/** parse_args(args) with serve.ROOT set to root: {out, err, code}. */
function parse(root, args) {
  const code = `import json, pathlib, sys
sys.path.insert(0, ${JSON.stringify(TOOLS)})
import serve
serve.ROOT = pathlib.Path(${JSON.stringify(root)})
print(json.dumps(serve.parse_args(json.loads(sys.argv[1]))))`;
  const r = spawnSync('python3', ['-c', code, JSON.stringify(args)], { encoding: 'utf8', cwd: os.tmpdir() });
  return { out: r.stdout.trim(), err: r.stderr.trim(), code: r.status };
}

test('serve.py without arguments: dist/ of the repository, port 8000', (t) => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'bertlens-serve-args-'));
  t.after(() => fs.rmSync(root, { recursive: true, force: true }));
  // No site built yet: say what to do.
  let r = parse(root, []);
  assert.notEqual(r.code, 0);
  assert.match(r.err, /has no index\.html; build the site first \(make site\)/);
  fs.mkdirSync(path.join(root, 'dist'));
  fs.writeFileSync(path.join(root, 'dist', 'index.html'), 'x');
  r = parse(root, []);
  assert.equal(r.code, 0, r.err);
  assert.deepEqual(JSON.parse(r.out), [path.join(root, 'dist'), 8000]);
  r = parse(root, [path.join(root, 'dist'), '8123']);
  assert.deepEqual(JSON.parse(r.out), [path.join(root, 'dist'), 8123]);
});

test('serve.py: bad arguments are refused with a message', () => {
  for (const [args, re] of [[['a', 'b', 'c'], /usage: serve\.py \[DIR \[PORT\]\]/], [['--help'], /usage/],
    [[os.tmpdir(), 'http'], /port must be a number/], [[os.tmpdir(), '70000'], /port must be 1-65535/]]) {
    const r = parse(os.tmpdir(), args);
    assert.notEqual(r.code, 0, args.join(' '));
    assert.match(r.err, re);
    assert.doesNotMatch(r.err, /Traceback/);
  }
});
