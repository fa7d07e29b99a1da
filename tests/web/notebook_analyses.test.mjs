// The heads overview and the rollout of a notebook output (python/bertlens):
// the viewer page computes them from the snapshot's attention with the
// engine's own C (src/wasm/wasm_attn.c -> analyze.c, build/wasm/analyze.wasm,
// web/js/lib/attn_analyze.js). Checked against the engine's analyses of a
// live run (`bertlens analyze`) on the attention that run produced
// (`bertlens attend --npy`), for BERT, MiniLM and every family's tiny
// checkpoint (tests/fixtures/families, converted by `bertlens convert`):
//   - the float attention itself: the same numbers (features within 1e-6,
//     classes equal, rollout within 1e-5: native AVX vs wasm SIMD sums);
//   - through the Python package's head_view snapshot (8-bit weights) and
//     the page's decoder: features and rollout within the bounds of that
//     rounding (below), classes equal where no feature lies within its
//     bound of a class threshold.
// And a decoder's causal attention (tests/notebook/fixtures/gpt2-causal,
// random GPT-2 by transformers): the masked keys stay masked in the
// rollout, "next" is 0, and the rollout equals numpy's on the same weights.
// Needs build/bertlens, build/wasm/analyze.wasm and python3 with numpy.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeSnapshot, runFromSnapshot, snapshotCovers, FILE_LIMITS } from '../../web/js/lib/snapshot.js';
import { createAttnAnalyzer } from '../../web/js/lib/attn_analyze.js';
import { viewById } from '../../web/js/views/index.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const PYTHON = process.env.PYTHON || 'python3';
const BIN = path.join(ROOT, 'build/bertlens');
const WASM = path.join(ROOT, 'build/wasm/analyze.wasm');
const FIX = path.join(ROOT, 'tests/fixtures/families');
const FAMILIES = ['roberta', 'xlm-roberta', 'camembert', 'electra', 'albert', 'mpnet', 'deberta-v2', 'deberta-v2-buckets', 'modernbert', 'nomic-bert', 'gte', 'eurobert'];
const missing = [BIN, WASM].filter((f) => !fs.existsSync(f));
const skip = missing.length ? `needs ${missing.map((f) => path.relative(ROOT, f)).join(', ')} (make native, make build/wasm/analyze.wasm)` : false;
const FEATURES = ['entropy', 'cls', 'sep', 'punct', 'prev', 'self', 'next', 'segment', 'confidence'];
const TEXT = ["The cat sat on the mat, didn't it?", 'Yes; it did.'];

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bertlens-nb-analyses-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

function cli(args) {
  const r = spawnSync(BIN, args, { encoding: 'utf8', maxBuffer: 1 << 28 });
  assert.equal(r.status, 0, `bertlens ${args[0]}: ${r.stderr}`);
  return r.stdout;
}

/** A float32 .npy file as {shape, data}. */
function readNpy(file) {
  const b = fs.readFileSync(file);
  const hlen = b.readUInt16LE(8);
  const header = b.toString('latin1', 10, 10 + hlen);
  assert.match(header, /'descr': '<f4'/);
  const shape = header.match(/'shape': \(([^)]*)\)/)[1].split(',').filter((s) => s.trim()).map(Number);
  const data = new Float32Array(b.buffer.slice(b.byteOffset + 10 + hlen, b.byteOffset + b.length));
  return { shape, data };
}

/** The engine's run of a bundle on TEXT: its attention (attend --npy), its
 *  analyses (analyze) and the snapshot head_view writes of that attention. */
function liveRun(bundle, name) {
  const dir = path.join(tmp, name);
  cli(['attend', '--npy', dir, bundle, ...TEXT]);
  const meta = JSON.parse(fs.readFileSync(path.join(dir, 'tokens.json'), 'utf8'));
  const attn = meta.files.attention.map((f) => readNpy(path.join(dir, f)));
  const engine = JSON.parse(cli(['analyze', bundle, ...TEXT]));
  const code = `
import sys, json, re, glob, numpy as np
sys.path.insert(0, ${JSON.stringify(path.join(ROOT, 'python'))})
import bertlens._views as views
from bertlens import head_view
views.output_html = lambda text, **kw: text  # the snapshot text head_view writes (no page in the source tree)
d = ${JSON.stringify(dir)}
meta = json.load(open(d + "/tokens.json"))
att = [np.load(d + "/" + f)[None] for f in meta["files"]["attention"]]
b = meta["type_ids"].index(1) if 1 in meta["type_ids"] else None
out = head_view(att, meta["tokens"], sentence_b_start=b, html_action="return")
json.dump({"text": out.data}, sys.stdout)
`;
  const r = spawnSync(PYTHON, ['-c', code], { encoding: 'utf8', maxBuffer: 1 << 28 });
  assert.equal(r.status, 0, r.stderr);
  return { meta, attn, engine, snapshotText: JSON.parse(r.stdout).text };
}

const maxAbs = (a, b) => a.reduce((m, v, i) => Math.max(m, Math.abs(v - b[i])), 0);

let analyzer = null;
const getAnalyzer = async () => (analyzer ||= await createAttnAnalyzer(fs.readFileSync(WASM)));

/** Compare the analyses `got` ({analysis, rollout}) with the engine's
 *  JSON within tol(feature) for features, rolloutTol for the rollouts;
 *  classes equal unless a feature is within its tolerance of a threshold
 *  (then counted in .near). Returns the largest differences. */
function compare(got, engine, { tol, rolloutTol, what }) {
  const worst = Object.fromEntries(FEATURES.map((f) => [f, 0]));
  let near = 0;
  assert.equal(got.analysis.pair, engine.pair, `${what}: pair`);
  assert.equal(got.analysis.heads.length, engine.heads.length);
  engine.heads.forEach((e, k) => {
    const g = got.analysis.heads[k];
    assert.deepEqual([g.layer, g.head], [e.layer, e.head]);
    for (const f of FEATURES) {
      if (e[f] === null) { assert.equal(g[f], null, `${what} ${e.layer}:${e.head} ${f}`); continue; }
      const d = Math.abs(g[f] - e[f]);
      worst[f] = Math.max(worst[f], d);
      assert.ok(d <= tol(f), `${what} layer ${e.layer} head ${e.head} ${f}: ${g[f]} vs the engine's ${e[f]} (|d| ${d.toExponential(2)})`);
    }
    if (g.class !== e.class) {
      // a class may differ only where the rounding moved a feature over a threshold
      const T = engine.tokens.length, u = 1 / T;
      const v = Math.max(e.cls, e.sep, e.punct) - u, dg = Math.max(e.prev ?? 0, e.self, e.next ?? 0) - u;
      const close = Math.abs(v - 0.2) <= 3 * tol('cls') || Math.abs(dg - 0.08) <= tol('self') || (e.segment !== null && Math.abs(e.segment - 0.8) <= tol('segment'));
      assert.ok(close, `${what} layer ${e.layer} head ${e.head}: class ${g.class}, the engine's ${e.class}`);
      near++;
    }
  });
  let rollout = 0;
  engine.rollout.forEach((layer, l) => {
    const d = maxAbs(got.rollout[l], layer.flat());
    rollout = Math.max(rollout, d);
    assert.ok(d <= rolloutTol, `${what} rollout layer ${l}: max |d| ${d.toExponential(2)}`);
  });
  return { worst, rollout, near };
}

const CASES = [
  { name: 'tiny-bert', bundle: () => path.join(ROOT, 'build/models/tiny-bert.f32.blb') },
  { name: 'all-minilm-l6-v2', bundle: () => path.join(ROOT, 'build/models/all-minilm-l6-v2.f32.blb') },
  ...FAMILIES.map((f) => ({
    name: f,
    // EuroBERT's bundle names no [CLS] / [SEP] (bertlens info: "cls none, sep
    // none"): the engine gives its <|begin_of_text|> / <|end_of_text|> no
    // role, where the notebook's roles (by spelling) make them [CLS] / [SEP].
    noRoles: f === 'eurobert',
    bundle: () => {
      const out = path.join(tmp, `${f}.blb`);
      cli(['convert', path.join(FIX, f), out, '--dtype', 'f32']);
      return out;
    },
  })),
];

for (const c of CASES) {
  test(`${c.name}: the viewer's analyses of the attention equal the engine's (float, and through head_view's snapshot)`, { skip }, async () => {
    const bundle = c.bundle();
    if (!fs.existsSync(bundle)) return assert.fail(`${bundle} is missing (make test-models)`);
    const { meta, attn, engine, snapshotText } = liveRun(bundle, c.name);
    const an = await getAnalyzer();
    const snap = await decodeSnapshot(snapshotText, FILE_LIMITS);
    const run = runFromSnapshot(snap);
    const { T, L, H } = run;
    assert.deepEqual(run.tokens, meta.tokens);
    // the tabs: the snapshot of head_view holds what both views draw from
    for (const view of ['overview', 'rollout']) {
      assert.ok(snapshotCovers(snap, { ...snap.state, view }, viewById(view).snapshot).ok, `${view} covered`);
    }

    let roles = run;
    if (c.noRoles) {
      const withRoles = an.analyze(run, false);
      assert.ok(withRoles.analysis.heads.every((h) => h.cls > 0 && h.sep > 0), 'the template tokens as [CLS] / [SEP]');
      assert.ok(engine.heads.every((h) => h.cls === 0 && h.sep === 0), 'the engine: no roles');
      roles = { ...run, special: new Array(T).fill(false) }; // compared with the engine's roles
    }

    // 1. the float attention of the live run: the engine's numbers
    const exact = an.analyze({ ...roles, attn: attn.map((a) => a.data) }, true);
    const e1 = compare(exact, engine, { tol: (f) => 1e-6 * Math.max(1, Math.abs(f === 'entropy' ? 4 : 1)), rolloutTol: 1e-5, what: `${c.name} float` });
    assert.equal(e1.near, 0);

    // 2. through the snapshot (8-bit weights, each within 0.5/255): a mean
    // over rows of a sum over k keys moves by at most k * 0.5/255; the
    // entropy's -x ln x by at most 0.5/255 * (1 + ln 510) per key (bound
    // near 0: x ln x at 1/510); the rollout multiplies L such matrices.
    const q = 0.5 / 255;
    const keys = { cls: 1, sep: meta.tokens.filter((t, i) => i > 0 && t === meta.tokens[T - 1]).length, punct: T, prev: 1, self: 1, next: 1, segment: T, confidence: 1, entropy: T * (1 + Math.log(510)) };
    const got = an.analyze(roles, true);
    const e2 = compare(got, engine, { tol: (f) => keys[f] * q + 1e-6, rolloutTol: 2 * L * T * q, what: `${c.name} snapshot` });
    console.log(`# ${c.name} (${L} x ${H}, T = ${T}): snapshot vs engine, max |d|: ${FEATURES.map((f) => `${f} ${e2.worst[f].toExponential(1)}`).join(', ')}; rollout ${e2.rollout.toExponential(1)}; classes moved ${e2.near}; float: rollout ${e1.rollout.toExponential(1)}`);

    // 3. "heads like this one": bl_head_compare's distances, 0 for the head itself
    const like = an.like(run, [L - 1, 0]);
    assert.equal(like.dist.length, L * H);
    assert.equal(like.dist[(L - 1) * H], 0);
    assert.ok(like.dist.every((x) => x >= 0 && x <= 1));
  });
}

test('a causal decoder (random GPT-2): the rollout stays causal, equals numpy on the same weights; next is 0', { skip }, async () => {
  const fx = path.join(ROOT, 'tests/notebook/fixtures');
  const code = `
import sys, json, re, numpy as np
sys.path.insert(0, ${JSON.stringify(path.join(ROOT, 'python'))})
import bertlens._views as views
from bertlens import model_view
views.output_html = lambda text, **kw: text
meta = json.load(open(${JSON.stringify(path.join(fx, 'gpt2-causal.json'))}))
att = np.load(${JSON.stringify(path.join(fx, 'gpt2-causal.npy'))})
out = model_view(list(att), meta["tokens"], html_action="return")  # [L][1][H][T][T]
# numpy's rollout of the weights the snapshot holds (8-bit)
q = np.floor(att[:, 0].astype(np.float64) * 255 + 0.5) / 255
r = None
out_r = []
for l in range(q.shape[0]):
    a = 0.5 * q[l].mean(0) + 0.5 * np.eye(q.shape[-1])
    r = a if r is None else a @ r
    out_r.append(r.ravel().tolist())
json.dump({"text": out.data, "rollout": out_r}, sys.stdout)
`;
  const r = spawnSync(PYTHON, ['-c', code], { encoding: 'utf8', maxBuffer: 1 << 28 });
  assert.equal(r.status, 0, r.stderr);
  const py = JSON.parse(r.stdout);
  const snap = await decodeSnapshot(py.text, FILE_LIMITS);
  assert.equal(snap.causal, true);
  const run = runFromSnapshot(snap);
  const got = (await getAnalyzer()).analyze(run, true);
  const { T, L } = run;
  for (let l = 0; l < L; l++) {
    const m = got.rollout[l];
    assert.ok(maxAbs(m, py.rollout[l]) <= 1e-5, `layer ${l}: max |d| ${maxAbs(m, py.rollout[l])}`);
    for (let i = 0; i < T; i++) for (let j = i + 1; j < T; j++) assert.equal(m[i * T + j], 0, `rollout ${l} [${i}][${j}] after the query`);
  }
  for (const h of got.analysis.heads) {
    assert.equal(h.next, 0, `layer ${h.layer} head ${h.head}: a causal head cannot attend to the next token`);
    assert.equal(h.cls, 0); // no special token: no [CLS] / [SEP] roles
    assert.equal(h.segment, null);
  }
  // every tab the snapshot draws: overview and rollout among them
  for (const view of ['overview', 'rollout']) assert.ok(snapshotCovers(snap, { ...snap.state, view }, viewById(view).snapshot).ok);
});

test('a selection of heads or layers (include_heads, include_layers) draws the overview of those heads, not a rollout', async () => {
  const code = `
import sys, json, numpy as np
sys.path.insert(0, ${JSON.stringify(path.join(ROOT, 'python'))})
import bertlens._views as views
from bertlens import model_view
views.output_html = lambda text, **kw: text
rng = np.random.default_rng(5)
def soft(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return (e / e.sum(-1, keepdims=True)).astype(np.float32)
att = [soft(rng.normal(size=(1, 4, 6, 6))) for _ in range(3)]
toks = ["[CLS]", "a", "b", ",", "c", "[SEP]"]
out = {}
for name, kw in {"all": {}, "prefix": {"include_layers": [0, 1]}, "layers": {"include_layers": [1, 2]}, "heads": {"include_heads": [0, 2]}}.items():
    out[name] = model_view(att, toks, html_action="return", **kw).data
json.dump(out, sys.stdout)
`;
  const r = spawnSync(PYTHON, ['-c', code], { encoding: 'utf8', maxBuffer: 1 << 28 });
  assert.equal(r.status, 0, r.stderr);
  const texts = JSON.parse(r.stdout);
  const covers = async (name, view) => {
    const snap = await decodeSnapshot(texts[name], FILE_LIMITS);
    return snapshotCovers(snap, { ...snap.state, view }, viewById(view).snapshot);
  };
  for (const name of ['all', 'prefix', 'layers', 'heads']) assert.ok((await covers(name, 'overview')).ok, `${name}: overview`);
  assert.ok((await covers('all', 'rollout')).ok);
  assert.ok((await covers('prefix', 'rollout')).ok, 'the first layers: their rollout is the model\'s');
  for (const name of ['layers', 'heads']) {
    const c = await covers(name, 'rollout');
    assert.equal(c.ok, false, `${name}: no rollout`);
    assert.match(c.why, /selection/);
  }
});
