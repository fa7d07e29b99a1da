// The attention and position pieces of the encoder families beyond BERT
// (src/model/encoder_family.h: encoder_rel.c, encoder_rope.c) against the
// Hugging Face modules they reproduce, one piece at a time, within 1e-5:
//   MPNet       relative_position_bucket on -600..600; MPNetSelfAttention's
//               probabilities with the encoder's shared bucketed bias
//   DeBERTa-v2  make_log_bucket_position (3 bucket/max pairs) on -600..600;
//               DisentangledSelfAttention's probabilities: v3 style (shared
//               key, c2p|p2c, log buckets, LayerNorm'ed rel_embeddings),
//               c2p-only with its own pos_key_proj and clamped distances,
//               p2c-only with its own pos_query_proj
//   ModernBERT  the RoPE inverse frequencies (head sizes 16..128, both
//               thetas, bit for bit); ModernBertAttention's probabilities in
//               a global layer and in a sliding-window layer (40 tokens,
//               window +-8: every structural zero exactly 0); the GeGLU MLP
// The references (tests/fixtures/family_ops/ops.json) come from
// tests/fixtures/family_ops/make.py, run with torch and transformers.
//
//   node --test tests/family_ops.test.mjs          build/family_host (tests/c/family_host.c)
//   BERTLENS_BACKEND=asan node --test ...          build/asan/family_host
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT, host, nativeTest as test } from './lib/backend.mjs';

const TOL = 1e-5; // max |d| of probabilities and MLP outputs
const BIN = host('family_host');
const FIX = JSON.parse(fs.readFileSync(path.join(ROOT, 'tests/fixtures/family_ops/ops.json'), 'utf8'));

/** Runs the host on one case's text; returns the numbers it printed. */
function run(op, parts) {
  const input = parts.map((p) => (Array.isArray(p) ? p.join(' ') : String(p))).join('\n') + '\n';
  const r = spawnSync(BIN, [], { input, maxBuffer: 1 << 28 });
  if (r.error) assert.fail(`cannot run ${BIN} (make ${path.relative(ROOT, BIN)}): ${r.error.message}`);
  assert.equal(r.status, 0, `${op}: family_host failed: ${r.stderr}`);
  const f = String(r.stdout).trim().split(/\s+/);
  assert.equal(f[0], op);
  const n = Number(f[1]);
  assert.equal(f.length, n + 2, `${op}: ${n} values announced, ${f.length - 2} printed`);
  return f.slice(2).map(Number);
}

/** Max |got - want| with where it is; asserts same length and no NaN. */
function maxDiff(got, want, what) {
  assert.equal(got.length, want.length, `${what}: ${got.length} values, want ${want.length}`);
  let worst = 0, at = -1;
  for (let i = 0; i < want.length; i++) {
    const d = Math.abs(got[i] - want[i]);
    if (!(d <= worst)) [worst, at] = [Number.isNaN(d) ? Infinity : d, i];
  }
  return { worst, at };
}

function assertClose(got, want, what) {
  const { worst, at } = maxDiff(got, want, what);
  assert.ok(worst <= TOL, `${what}: max |d| ${worst} at ${at} (got ${got[at]}, want ${want[at]}) > ${TOL}`);
  if (process.env.FAMILY_OPS_VERBOSE) console.log(`# ${what}: max |d| ${worst.toExponential(2)}`);
  return worst;
}

const cases = (op) => FIX.cases.filter((c) => c.op === op);

test('MPNet relative position buckets are Hugging Face\'s on -600..600', () => {
  const [c] = cases('mpnet_bucket');
  const got = run('mpnet_bucket', ['mpnet_bucket', c.num_buckets, c.max_distance, c.rel.length, c.rel]);
  const bad = c.rel.filter((r, i) => got[i] !== c.bucket[i]);
  assert.deepEqual(bad, [], `relative positions in another bucket: ${bad.slice(0, 10)}`);
});

test('MPNet attention with the shared bucketed bias matches MPNetSelfAttention', () => {
  const [c] = cases('mpnet_attn');
  const got = run('mpnet_attn', ['mpnet_attn', c.T, c.hidden, c.heads, c.num_buckets, c.max_distance,
    c.x, c.q.w, c.q.b, c.k.w, c.k.b, c.table]);
  assertClose(got, c.probs, 'mpnet probabilities');
});

test('DeBERTa log buckets are make_log_bucket_position\'s on -600..600', () => {
  for (const c of cases('deberta_bucket')) {
    const got = run('deberta_bucket', ['deberta_bucket', c.buckets, c.max_positions, c.rel.length, c.rel]);
    const bad = c.rel.filter((r, i) => got[i] !== c.bucket[i]);
    assert.deepEqual(bad, [], `buckets ${c.buckets}, max ${c.max_positions}: other buckets at ${bad.slice(0, 10)}`);
  }
});

test('DeBERTa disentangled attention matches DisentangledSelfAttention (v3, c2p only, p2c only)', () => {
  const all = cases('deberta_attn');
  assert.deepEqual(all.map((c) => c.name), ['v3', 'c2p', 'p2c']);
  for (const c of all) {
    const terms = (c.c2p ? 1 : 0) | (c.p2c ? 2 : 0);
    const parts = ['deberta_attn', c.T, c.hidden, c.heads, c.buckets, c.max_positions, terms, c.share_att_key ? 1 : 0,
      c.eps, c.rel_ln ? 1 : 0, c.x, c.q.w, c.q.b, c.k.w, c.k.b, c.rel_embeddings];
    if (c.rel_ln) parts.push(c.rel_ln.w, c.rel_ln.b);
    if (!c.share_att_key) {
      if (c.c2p) parts.push(c.pos_k.w, c.pos_k.b);
      if (c.p2c) parts.push(c.pos_q.w, c.pos_q.b);
    }
    assertClose(run('deberta_attn', parts), c.probs, `deberta ${c.name} probabilities`);
  }
});

// torch computes theta^x with a vectorized powf (SLEEF, within 1 ulp, not
// always the nearest float): 1 of the 240 values here (head size 128, theta
// 160000, i = 9) is 1 ulp above the nearest float; every head size up to 64
// (every published ModernBERT) is bit for bit.
test('RoPE inverse frequencies are ModernBertRotaryEmbedding\'s (bit for bit up to head size 64, else 1 ulp)', () => {
  const all = cases('rope_freq');
  assert.equal(all.length, 8);
  const ulp = (x) => { const f = new Float32Array([x]); const u = new Uint32Array(f.buffer); return u[0]; };
  for (const c of all) {
    const got = run('rope_freq', ['rope_freq', c.d, c.theta]);
    assert.equal(got.length, c.inv_freq.length);
    got.forEach((g, i) => {
      const apart = Math.abs(ulp(g) - ulp(c.inv_freq[i]));
      assert.ok(apart <= (c.d <= 64 ? 0 : 1), `d ${c.d}, theta ${c.theta}, i ${i}: ${g} vs ${c.inv_freq[i]} (${apart} ulp)`);
    });
  }
});

test('ModernBERT attention (RoPE; global and sliding window) matches ModernBertAttention, zeros exact', () => {
  const all = cases('modernbert_attn');
  assert.deepEqual(all.map((c) => c.layer_type), ['full_attention', 'sliding_attention']);
  for (const c of all) {
    const got = run('modernbert_attn', ['modernbert_attn', c.T, c.hidden, c.heads, c.theta, c.half_window, c.x, c.wqkv]);
    assertClose(got, c.probs, `${c.layer_type} probabilities`);
    // the window's structural zeros: exactly where Hugging Face has them
    const zerosHF = c.probs.filter((p) => p === 0).length;
    assert.equal(zerosHF, c.zeros);
    const wrong = got.filter((p, i) => (p === 0) !== (c.probs[i] === 0)).length;
    assert.equal(wrong, 0, `${c.layer_type}: ${wrong} entries zero in one and not the other`);
    if (c.half_window >= 0) assert.ok(c.zeros > 0 && c.T > 2 * c.half_window + 1, 'the input is longer than the window');
  }
});

test('ModernBERT GeGLU MLP matches ModernBertMLP', () => {
  const [c] = cases('modernbert_mlp');
  const got = run('geglu', ['geglu', c.T, c.hidden, c.intermediate, c.x, c.wi, c.wo]);
  assertClose(got, c.y, 'mlp output');
});

test('family_host refuses malformed input with a message, no crash', () => {
  for (const input of ['nonsense\n', 'mpnet_attn 4 8\n', 'mpnet_bucket 32 128 -5\n']) {
    const r = spawnSync(BIN, [], { input });
    assert.equal(r.status, 2, `${JSON.stringify(input)}: status ${r.status}`);
    assert.match(String(r.stderr), /family_host: /);
  }
});
