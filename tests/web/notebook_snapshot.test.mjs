// Snapshots written by the Python package (python/bertlens/_snapshot.py, for
// notebook outputs) read by the page's own decoder (web/js/lib/snapshot.js):
// version 1 up to 64 tokens, version 2 (T in two bytes) up to 1,024, which
// only a notebook output's page accepts (FILE_LIMITS); links keep their
// limits. The weights are numpy's softmax, compared within 0.5/255. Needs
// python3 with numpy (as CI has).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  decodeSnapshot, encodeSnapshot, packSnapshot, unpackSnapshot, runFromSnapshot, snapshotCovers, LINK_LIMITS, FILE_LIMITS, MAX_TOKENS, MAX_FILE_TOKENS,
} from '../../web/js/lib/snapshot.js';
import { crc32 } from '../../web/js/lib/bytes.js';
import { withMeta } from './snapshot_meta.mjs';
import { stateFromSnapshot } from '../../web/js/page/state.js';
import { viewById } from '../../web/js/views/index.js';
import { CAUSAL_NOTE } from '../../web/js/views/heatmap.js';
import { tokenAxis } from '../../web/js/lib/data.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const PYTHON = process.env.PYTHON || 'python3';

/** Python writes the snapshot of softmax attention (seeded numpy) and the
 *  weights themselves: {text, weights: [L][H][T*T], tokens}. */
function fromPython({ L, H, T, causal = false, pair = null, include = null }) {
  const code = `
import sys, json, numpy as np
sys.path.insert(0, ${JSON.stringify(path.join(ROOT, 'python'))})
from bertlens._attention import check_attention
from bertlens._snapshot import pack, encode, guess_word_ids, text_of
rng = np.random.default_rng(3)
L, H, T = ${L}, ${H}, ${T}
att = []
for _ in range(L):
    x = rng.normal(size=(1, H, T, T)) * 3
    if ${causal ? 'True' : 'False'}:
        x[..., np.triu(np.ones((T, T), dtype=bool), k=1)] = -np.inf
    e = np.exp(x - x.max(-1, keepdims=True))
    att.append((e / e.sum(-1, keepdims=True)).astype(np.float32))
tokens = ["[CLS]"] + [f"w{i}" if i % 3 else f"##p{i}" for i in range(1, T - 1)] + ["[SEP]"] if T > 2 else ["x"] * T
a = check_attention(att, tokens, ${include ? JSON.stringify(include) : 'None'})
b = ${pair === null ? 'None' : pair}
types = [0] * T if b is None else [0] * b + [1] * (T - b)
state = {"view": "head", "layer": 0, "head": 0, "mode": "attn", "text": text_of(tokens), "text_b": "", "model": "", "theme": "light", "heads": None, "filter": "all"}
text = encode(pack(a, state, {"id": "notebook", "name": "py", "bytes": 0}, types, guess_word_ids(tokens), b))
json.dump({"text": text, "tokens": tokens, "weights": [[w[h].ravel().tolist() for h in range(w.shape[0])] for w in a.weights], "causal": a.causal}, sys.stdout)
`;
  const r = spawnSync(PYTHON, ['-c', code], { encoding: 'utf8', maxBuffer: 1 << 30 });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

function maxDiff(a, b) {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

test('a notebook snapshot of 12 tokens (version 1) decodes as links do, every weight within 0.5/255', async () => {
  const py = fromPython({ L: 2, H: 3, T: 12, pair: 7 });
  const o = await decodeSnapshot(py.text); // link limits: a short one reads anywhere
  assert.deepEqual([o.T, o.L, o.H], [12, 2, 3]);
  assert.deepEqual(o.tokens, py.tokens);
  assert.deepEqual(o.typeIds, [0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1]);
  assert.equal(o.nA, 7);
  assert.equal(o.wordIds[0], -1);
  const run = runFromSnapshot(o);
  for (let l = 0; l < 2; l++) {
    for (let h = 0; h < 3; h++) {
      assert.ok(maxDiff(run.attn[l].subarray(h * 144, (h + 1) * 144), py.weights[l][h]) <= 0.5 / 255 + 1e-7, `layer ${l} head ${h}`);
    }
  }
  // Its state passes the page's checks, and it holds what the head, model and heatmap views draw.
  const checked = stateFromSnapshot(o.state, o);
  assert.deepEqual(checked.problems, []);
  for (const view of ['head', 'model', 'heatmap']) {
    assert.ok(snapshotCovers(o, { ...checked.state, view }, viewById(view).snapshot).ok, view);
  }
  assert.equal(snapshotCovers(o, { ...checked.state, view: 'neuron' }, viewById('neuron').snapshot).ok, false);
});

test('300 causal tokens: version 2, read with the notebook limits only', async () => {
  const py = fromPython({ L: 1, H: 2, T: 300, causal: true });
  assert.equal(py.causal, true);
  await assert.rejects(decodeSnapshot(py.text), /1 to 64 tokens/);
  await assert.rejects(decodeSnapshot(py.text, LINK_LIMITS), /1 to 64 tokens/);
  const o = await decodeSnapshot(py.text, FILE_LIMITS);
  assert.equal(o.T, 300);
  assert.equal(o.causal, true, 'the causal mask travels with the weights');
  const run = runFromSnapshot(o);
  assert.equal(run.causal, true);
  // the heatmap draws the masked cells as such, and says so
  const s = { ...stateFromSnapshot(o.state, o).state, view: 'heatmap', head: 1 };
  const hm = viewById('heatmap').prepare(run, s, { axis: tokenAxis(run), src: run.attn, lines: [], valueName: 'attention', modeWord: 'attention' });
  assert.equal(hm.causal, true);
  assert.ok(hm.notes.includes(CAUSAL_NOTE));
  const flat = runFromSnapshot(await decodeSnapshot(fromPython({ L: 1, H: 2, T: 12 }).text));
  const plain = viewById('heatmap').prepare(flat, { ...s, head: 0 }, { axis: tokenAxis(flat), src: flat.attn, lines: [], valueName: 'attention', modeWord: 'attention' });
  assert.equal(plain.causal, false);
  assert.ok(!plain.notes.includes(CAUSAL_NOTE));
  // a causal flag of another type is damage
  const v1 = packSnapshot(await decodeSnapshot(fromPython({ L: 1, H: 1, T: 10 }).text));
  await assert.rejects(decodeSnapshot(await withMeta(v1, (meta) => ({ ...meta, causal: 'yes' }))), /causal flag is not true or false/);
  const n = 300 * 300;
  assert.ok(maxDiff(run.attn[0].subarray(n, 2 * n), py.weights[0][1]) <= 0.5 / 255 + 1e-7);
  // above the diagonal: exactly 0 (masked)
  for (let q = 0; q < 300; q += 37) for (let k = q + 1; k < 300; k += 11) assert.equal(run.attn[0][q * 300 + k], 0);
  // and the page's encoder writes the same version for such a run
  const again = await decodeSnapshot(await encodeSnapshot(o, FILE_LIMITS), FILE_LIMITS);
  assert.equal(again.T, 300);
  assert.ok(maxDiff(again.attn[1].data, o.attn[1].data) === 0);
});

test('1,024 tokens read; version 2 under 65 tokens and budgets past the notebook limits are refused', async () => {
  assert.equal(MAX_FILE_TOKENS, 1024);
  const py = fromPython({ L: 1, H: 1, T: 1024, causal: true });
  const o = await decodeSnapshot(py.text, FILE_LIMITS);
  assert.equal(o.T, 1024);
  // A version-2 header naming 64 tokens or fewer is not one a writer makes.
  const v1 = packSnapshot(await decodeSnapshot(fromPython({ L: 1, H: 1, T: 10 }).text));
  const v2 = new Uint8Array(v1.length + 1);
  v2.set(v1.subarray(0, 3));
  v2[3] = 2;
  v2[4] = 10; v2[5] = 0; // T = 10 as u16
  v2.set(v1.subarray(5, v1.length - 4), 6);
  new DataView(v2.buffer).setUint32(v2.length - 4, crc32(v2.subarray(0, v2.length - 4)), true);
  assert.throws(() => unpackSnapshot(v2, FILE_LIMITS), /version 2 header names 10 tokens/);
  // Budget: 2^25 floats (one layer of 40 heads at 1,024 tokens is 42 M),
  // counted before anything is allocated.
  const big = { ...o, L: 1, H: 40 };
  await assert.rejects(decodeSnapshot(await encodeSnapshot(big, FILE_LIMITS), FILE_LIMITS), /more than the 128 MB a snapshot may use/);
});

test('neuron_view: one head\'s queries and keys from Python read by the page within half a step of their scale', async () => {
  const code = `
import sys, json, numpy as np
sys.path.insert(0, ${JSON.stringify(path.join(ROOT, 'python'))})
from bertlens._attention import check_attention
from bertlens._snapshot import pack, encode
rng = np.random.default_rng(5)
H, T, d = 2, 7, 12
q = rng.normal(size=(H, T, d)).astype(np.float32) * 3
k = rng.normal(size=(H, T, d)).astype(np.float32)
s = np.einsum("htd,hsd->hts", q, k) / np.sqrt(d)
e = np.exp(s - s.max(-1, keepdims=True))
att = check_attention([(e / e.sum(-1, keepdims=True))[None].astype(np.float32)], [f"t{i}" for i in range(T)])
state = {"view": "neuron", "layer": 0, "head": 1, "mode": "attn", "text": "t", "text_b": "", "model": "", "theme": "light", "heads": None, "filter": "all"}
text = encode(pack(att, state, {"id": "notebook", "name": "py", "bytes": 0}, [0] * T, list(range(T)), None, (0, 1, q[1], k[1])))
json.dump({"text": text, "q": q[1].ravel().tolist(), "k": k[1].ravel().tolist(), "s": s[1].ravel().tolist()}, sys.stdout)
`;
  const r = spawnSync(PYTHON, ['-c', code], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const py = JSON.parse(r.stdout);
  const o = await decodeSnapshot(py.text);
  assert.deepEqual([o.d, o.qk.layer, o.qk.head], [12, 0, 1]);
  for (const [name, want] of [['q', py.q], ['k', py.k]]) {
    for (let t = 0; t < 7; t++) {
      const row = want.slice(t * 12, (t + 1) * 12);
      const step = Math.max(...row.map(Math.abs)) / 127;
      for (let c = 0; c < 12; c++) assert.ok(Math.abs(o.qk[name][t * 12 + c] - row[c]) <= step / 2 + 1e-6, `${name}[${t}][${c}]`);
    }
  }
  // Every query's scores (q·k/√d in float64, numpy's), one term equal to them.
  assert.equal(o.scores.query, null);
  assert.equal(o.scores.rows.length, 2);
  py.s.forEach((v, i) => {
    assert.ok(Math.abs(o.scores.rows[0][i] - v) <= 1e-6 * Math.max(1, Math.abs(v)), `scores[${i}]`);
    assert.equal(o.scores.rows[1][i], o.scores.rows[0][i]);
  });
  const checked = stateFromSnapshot(o.state, o);
  for (const query of [0, 3, 6]) {
    assert.ok(snapshotCovers(o, { ...checked.state, view: 'neuron', query }, viewById('neuron').snapshot).ok, `the neuron view draws query ${query}`);
  }
});
