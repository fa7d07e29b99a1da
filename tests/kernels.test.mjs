// kernels.test.mjs — SIMD kernels against their scalar references.
//
//   node --test tests/kernels.test.mjs     x86-64 SSE4.1 / AVX2+FMA / AVX-512 (+VNNI) (build/kernel_host;
//                                          build/asan/kernel_host with BERTLENS_BACKEND=asan); $BERTLENS_SIMD=sse4.1|avx2|avx512
//                                          caps the run-time choice: avx512 is AVX-512 without VNNI
//   BERTLENS_BACKEND=wasm node --test tests/kernels.test.mjs   wasm SIMD128 (build/wasm-test/bertlens.js; $BERTLENS_WASM overrides)
//
// Every kernel of src/kernels*.c runs twice on the same random inputs of awkward
// sizes (not multiples of the SIMD widths): blw_k_*(1, ...) = the build's SIMD
// kernel, blw_k_*(0, ...) = the scalar reference (erf/exp: libm erff/expf).
// Natively the same entry points run in build/kernel_host (tests/lib/native_kernels.mjs).
import fs from 'node:fs';
import { after } from 'node:test';
import { createModule } from '../tools/wasm_node.mjs';
import { IS_NATIVE, WASM_TEST_JS, host, missing } from './lib/backend.mjs';
import { check, checkedTest } from './lib/checks.mjs';
import { BL_F16, BL_F32, BL_Q12, BL_Q4, BL_Q8, QN, randomWeight, uniform } from './lib/kernel_inputs.mjs';
import { createNativeKernels } from './lib/native_kernels.mjs';

// Tolerances, relative to the size of what is summed where a sum is involved.
const TOL_MATMUL_F32 = 1e-5;   // |d| / sum_k |x_k w_k| (summation order only)
const TOL_MATMUL_F16 = 1e-5;   // same, weights converted to f32 at pack time
const TOL_MATMUL_Q8 = 1e-4;    // |d| / (max|x| sum_k |w_k|): 15-bit activations, beyond the group rounding below
// Scale groups (src/kernels/kernels_pack.c, blk_weight_pack): a group of qg 32-blocks of a
// row on one scale s', the smallest with sum |round(w / s')| <= QG_L1 and
// |round(w / s')| <= 32767; each weight moves by at most s' / 2, so an output
// may move by max|x| * sum over groups of (values * s' / 2) beyond TOL_MATMUL_Q8.
const QG_L1 = 131072;
const TOL_MATMUL_Q4 = 1e-4;
const TOL_MATMUL_QN = 1e-4;    // q8h, q9..q12: the same int16 panels as q8
const TOL_MATMUL_NT = 1e-5;    // attention products, f32
// attention products of quantized bundles: x per row and B per column and
// 32-block of k rounded to 13-bit integers (half a step, 1/16382 of the
// largest value each side); |d| / (K max|x| max|b|) is at most 2/16382 = 1.22e-4
const TOL_MATMUL_NT_Q = 1.25e-4;
const TOL_LAYERNORM = 2e-5;    // absolute, outputs O(|gamma|)
const TOL_SOFTMAX = 2e-6;      // absolute, probabilities
const TOL_EXP_REL = 5e-7;      // relative to expf
const TOL_ERF = 5e-7;          // absolute vs erff
const TOL_GELU = 1e-5;         // absolute, x in [-12, 12] (erf: brief's bar is 1e-4)
const TOL_GELU_TANH = 1e-5;

const NATIVE = IS_NATIVE;
const HOST = host('kernel_host');

const absent = missing(NATIVE ? HOST : WASM_TEST_JS);
if (absent) throw new Error(`kernels.test: ${absent} (make ${NATIVE ? 'build/kernel_host' : 'build/wasm-test/bertlens.js'})`);
const M = NATIVE ? createNativeKernels(HOST) : await createModule(WASM_TEST_JS);
// not x86-64, or built with NATIVE_SIMD= : only the scalar kernels exist
const SKIP = NATIVE && M._blw_simd() !== 1 && 'this native build has no SIMD kernels (scalar only)';
const section = (name, fn) => checkedTest(name, { skip: SKIP }, fn);
let closed = null; // the host's exit status, once closed (also when tests were skipped or filtered out)
const close = () => (closed ||= M.close());
if (NATIVE) after(close);

section('the build runs its SIMD kernels, at the level this CPU has', () => {
check(M._blw_simd() === 1, `the ${NATIVE ? 'native' : 'wasm'} build uses SIMD (else this test compares scalar with scalar)`);
if (NATIVE) {
  // The run-time choice (src/kernels/kernels.c, blk_x86_level): the best level this
  // CPU has (Linux /proc/cpuinfo flags), capped by $BERTLENS_SIMD.
  const name = M.simdName(), levels = ['sse4.1', 'avx2+fma', 'avx512', 'avx512+vnni'];
  console.log(`native SIMD kernels: ${name}`);
  let flags = null;
  try { flags = new Set((fs.readFileSync('/proc/cpuinfo', 'utf8').match(/^flags\s*:(.*)$/m) || [, ''])[1].trim().split(/\s+/)); } catch { /* not Linux */ }
  if (flags && flags.has('sse4_1')) {
    let cpu = 0;
    if (flags.has('avx2') && flags.has('fma')) cpu = 1;
    if (cpu === 1 && flags.has('avx512f') && flags.has('avx512bw')) cpu = flags.has('avx512_vnni') ? 3 : 2;
    const cap = { 'sse4.1': 0, avx2: 1, avx512: 2 }[process.env.BERTLENS_SIMD] ?? 3;
    check(name === levels[Math.min(cpu, cap)],
      `native kernels: ${name}, expected ${levels[Math.min(cpu, cap)]} (CPU ${levels[cpu]}, BERTLENS_SIMD=${process.env.BERTLENS_SIMD || ''})`);
  }
}
});

// heap helpers: copy in, run, copy out (re-read views after every call: memory may grow)
function alloc(bytes) { return M._malloc(Math.max(bytes, 4)); }
function put(arr) {
  const p = alloc(arr.byteLength);
  M.HEAPU8.set(new Uint8Array(arr.buffer, arr.byteOffset, arr.byteLength), p);
  return p;
}
const getF = (p, n) => Float32Array.from(new Float32Array(M.HEAPF32.buffer, p, n));

const worst = {};
function note(name, v) { worst[name] = Math.max(worst[name] || 0, v); }

// ---------------------------------------------------------------- matmul
// The scale groups the pack chose for a weight (blw_k_qgroup) and, per row,
// the most its outputs may move per unit of max|x|: sum over groups of
// (values * s' / 2), s' bounded as in src/kernels/kernels_pack.c (group_scale).
const grouped = {}; // dtype -> [weights packed with qg > 1, of them with a shorter last group]
function groupBound(dtype, deq, N, K, pw) {
  const qg = M._blw_k_qgroup(dtype, N, K, pw), nb = K / 32, out = new Float64Array(N);
  check(qg >= 1 && qg <= nb, `${names[dtype]} N=${N} K=${K}: scale group of ${qg} blocks out of 1..${nb}`);
  if (qg <= 1) return out;
  const g = (grouped[dtype] ||= [0, 0]);
  g[0]++;
  if (nb % qg) g[1]++;
  for (let n = 0; n < N; n++)
    for (let i0 = 0; i0 < K; i0 += qg * 32) {
      const nv = Math.min(qg * 32, K - i0);
      let L = 0, amax = 0;
      for (let i = i0; i < i0 + nv; i++) { L += Math.abs(deq[n * K + i]); amax = Math.max(amax, Math.abs(deq[n * K + i])); }
      const sg = Math.max(L / (QG_L1 - nv / 2), amax / 32767) * (1 + 1e-5);
      out[n] += nv * sg / 2;
    }
  return out;
}
const names = { [BL_F32]: 'f32', [BL_F16]: 'f16', [BL_Q8]: 'q8', [BL_Q4]: 'q4', 4: 'q8h', 5: 'q9', 6: 'q10', 7: 'q11', 8: 'q12' };
const tols = { [BL_F32]: TOL_MATMUL_F32, [BL_F16]: TOL_MATMUL_F16, [BL_Q8]: TOL_MATMUL_Q8, [BL_Q4]: TOL_MATMUL_Q4 };
for (const d of QN) tols[d] = TOL_MATMUL_QN;
section('matmul, every dtype: SIMD vs scalar vs float64; scale groups at their int32 bound; bad shapes refused', () => {
for (const dtype of [BL_F32, BL_F16, BL_Q8, BL_Q4, ...QN]) {
  const Ks = dtype >= BL_Q8 ? [32, 64, 96, 160, 544] : [1, 3, 31, 64, 100, 600]; // f32 K > 512: blocked sums
  for (const T of [1, 2, 3, 5, 17]) for (const N of [1, 7, 9, 33, 64]) for (const K of Ks) {
    const x = uniform(T * K, -3, 3);
    if (T > 1) x[K + 1 < x.length ? K + 1 : 0] = 40; // an outlier in row 1
    const w = randomWeight(dtype, N, K), bias = uniform(N, -1, 1);
    const px = put(x), pw = put(w.bytes), pb = put(bias), y0 = alloc(T * N * 4), y1 = alloc(T * N * 4);
    const useBias = (N + K) % 2 === 0;
    const r0 = M._blw_k_matmul(0, y0, px, T, dtype, N, K, pw, useBias ? pb : 0);
    const r1 = M._blw_k_matmul(1, y1, px, T, dtype, N, K, pw, useBias ? pb : 0);
    check(r0 === 0 && r1 === 0, `matmul ${names[dtype]} T=${T} N=${N} K=${K} runs`);
    const a = getF(y0, T * N), b = getF(y1, T * N);
    const gb = dtype >= BL_Q8 ? groupBound(dtype, w.deq, N, K, pw) : new Float64Array(N);
    let worstRel = 0, worstRef = 0;
    for (let t = 0; t < T; t++) {
      let xmax = 0;
      for (let k = 0; k < K; k++) xmax = Math.max(xmax, Math.abs(x[t * K + k]));
      for (let n = 0; n < N; n++) {
        let sxw = 0, sw = 0, exact = useBias ? bias[n] : 0;
        for (let k = 0; k < K; k++) {
          sxw += Math.abs(x[t * K + k] * w.deq[n * K + k]);
          sw += Math.abs(w.deq[n * K + k]);
          exact += x[t * K + k] * w.deq[n * K + k];
        }
        const scale = (dtype >= BL_Q8 ? xmax * sw : sxw) + (useBias ? Math.abs(bias[n]) : 0) + 1e-30;
        worstRel = Math.max(worstRel, Math.max(0, Math.abs(a[t * N + n] - b[t * N + n]) - xmax * gb[n]) / scale);
        worstRef = Math.max(worstRef, Math.abs(a[t * N + n] - exact) / (sxw + 1e-30 + (useBias ? Math.abs(bias[n]) : 0)));
      }
    }
    note(`matmul ${names[dtype]} simd vs scalar`, worstRel);
    note(`matmul ${names[dtype]} scalar vs float64`, worstRef);
    check(worstRel <= tols[dtype], `matmul ${names[dtype]} T=${T} N=${N} K=${K}: simd vs scalar ${worstRel} > ${tols[dtype]}`);
    // the scalar reference itself against float64 with the dequantized weights
    check(worstRef <= 1e-5, `matmul ${names[dtype]} T=${T} N=${N} K=${K}: scalar vs float64 ${worstRef}`);
    for (const p of [px, pw, pb, y0, y1]) M._free(p);
  }
}
// Every quantized dtype but q12 (whose 32-block sums already use the whole
// int32 range) must have exercised scale groups, ragged ones included.
for (const dtype of [BL_Q8, BL_Q4, 4, 5, 6])
  check(grouped[dtype] && grouped[dtype][0] > 0, `matmul ${names[dtype]}: scale groups exercised`);
check(Object.values(grouped).some((g) => g[1] > 0), 'matmul: a shorter last scale group exercised');
// A group's int32 sum at its bound: every activation at the row's maximum
// with the sign of its weight in column n (quantized to exactly +-16383), so
// the sum is 16383 * sum |w'|, within 0.01 % of 2^31 (the pack takes the
// smallest s'). An overflow would be off by 2^32 units.
for (const dtype of [BL_Q8, BL_Q4, 6, BL_Q12]) for (const K of [384, 544, 1536]) {
  const T = 5, N = 9, w = randomWeight(dtype, N, K), x = new Float32Array(T * K);
  for (let t = 0; t < T; t++) for (let k = 0; k < K; k++) x[t * K + k] = w.deq[(t % N) * K + k] < 0 ? -2.5 : 2.5;
  const px = put(x), pw = put(w.bytes), y0 = alloc(T * N * 4), y1 = alloc(T * N * 4);
  check(M._blw_k_matmul(0, y0, px, T, dtype, N, K, pw, 0) === 0 && M._blw_k_matmul(1, y1, px, T, dtype, N, K, pw, 0) === 0,
    `matmul ${names[dtype]} K=${K} at the int32 bound runs`);
  const a = getF(y0, T * N), b = getF(y1, T * N), gb = groupBound(dtype, w.deq, N, K, pw);
  let worstRel = 0;
  for (let t = 0; t < T; t++) for (let n = 0; n < N; n++) {
    let sw = 0;
    for (let k = 0; k < K; k++) sw += Math.abs(w.deq[n * K + k]);
    worstRel = Math.max(worstRel, Math.max(0, Math.abs(a[t * N + n] - b[t * N + n]) - 2.5 * gb[n]) / (2.5 * sw));
  }
  note(`matmul ${names[dtype]} at the int32 bound`, worstRel);
  check(worstRel <= tols[dtype], `matmul ${names[dtype]} K=${K} at the int32 bound: ${worstRel} > ${tols[dtype]}`);
  for (const p of [px, pw, y0, y1]) M._free(p);
}
// a bad shape is refused, not run
check(M._blw_k_matmul(1, 0, 0, 1, BL_Q8, 4, 33, 8, 0) === -1, 'matmul refuses q8 with k % 32 != 0');
check(M._blw_k_matmul(1, 0, 0, 1, BL_Q12, 4, 48, 8, 0) === -1, 'matmul refuses q12 with k % 32 != 0');
check(M._blw_k_matmul(1, 0, 0, 1, BL_Q12 + 1, 4, 32, 8, 0) === -1, 'matmul refuses an unknown dtype');
});

// ------------------------------------ matmul + activation (fused on SIMD)
const actTol = { [-1]: 0, 0: TOL_GELU, 1: TOL_GELU_TANH, 2: 0 };
const actName = { [-1]: 'none', 0: 'gelu', 1: 'gelu_tanh', 2: 'relu' };
// q8 panels in place (bl_model_pack_in_place: what the page's engine runs on,
// its weights held once): the scalar reference reading the panels gives the
// bundle layout's result bit for bit, every row reads back exactly, and the
// SIMD kernel (int8 pairs widened as loaded, the bundle's own 32-block
// scales: no scale groups) stays within the q8 tolerance of it.
section('matmul on q8 panels re-laid out in place: same rows, scalar bit-exact, SIMD within TOL_MATMUL_Q8, regrouped within one unit of the shared scale', () => {
for (const [T, N] of [[1, 8], [3, 16], [5, 64], [17, 24]]) for (const K of [32, 96, 544]) for (const act of [-1, 0]) {
  const x = uniform(T * K, -3, 3);
  if (T > 1) x[K + 1] = 40; // an outlier in row 1
  const w = randomWeight(BL_Q8, N, K), bias = uniform(N, -1, 1);
  const px = put(x), pb = put(bias), pw = put(w.bytes), pw0 = put(w.bytes), pw1 = put(w.bytes);
  const y = alloc(T * N * 4), y0 = alloc(T * N * 4), y1 = alloc(T * N * 4), row = alloc(K * 4);
  const what = `panels T=${T} N=${N} K=${K} ${actName[act]}`;
  const r = N - 1 - (T % N);
  check(M._blw_k_matmul_act(0, y, px, T, BL_Q8, N, K, pw, pb, act) === 0, `${what}: the bundle layout runs`);
  check(M._blw_k_matmul_panels(0, y0, px, T, N, K, pw0, pb, act, r, row) === 0 &&
    M._blw_k_matmul_panels(1, y1, px, T, N, K, pw1, pb, act, -1, 0) === 0, `${what} runs`);
  const ref = getF(y, T * N), a = getF(y0, T * N), b = getF(y1, T * N), got = getF(row, K);
  const moved = M.HEAPU8.subarray(pw0, pw0 + w.bytes.length).some((v, i) => v !== w.bytes[i]);
  check(moved, `${what}: the bytes were re-laid out`);
  let rowOk = true;
  for (let k = 0; k < K; k++) rowOk &&= got[k] === Math.fround(w.deq[r * K + k]);
  check(rowOk, `${what}: row ${r} read back from the panels = the bundle's row`);
  let same = true, worstRel = 0;
  for (let t = 0; t < T; t++) {
    let xmax = 0;
    for (let k = 0; k < K; k++) xmax = Math.max(xmax, Math.abs(x[t * K + k]));
    for (let n = 0; n < N; n++) {
      same &&= Object.is(a[t * N + n], ref[t * N + n]);
      let sw = 0;
      for (let k = 0; k < K; k++) sw += Math.abs(w.deq[n * K + k]);
      const allowed = 1.13 * TOL_MATMUL_Q8 * (xmax * sw + Math.abs(bias[n])) + actTol[act];
      worstRel = Math.max(worstRel, Math.abs(b[t * N + n] - ref[t * N + n]) / allowed);
    }
  }
  check(same, `${what}: the scalar reference on panels = on the bundle layout, bit for bit`);
  note('matmul q8 panels simd vs scalar (fraction of tol)', worstRel);
  check(worstRel <= 1, `${what}: simd vs scalar ${worstRel.toFixed(3)} x the tolerance`);
  for (const p of [px, pb, pw, pw0, pw1, y, y0, y1, row]) M._free(p);
}
// From 32 rows on (kernels_simd128.c WIDEN_ROWS) each panel is widened once
// into int16 before the rows run on it, onto the shared scales
// blk_weight_pack chose for it (kernels_pack.c "q8 panels on shared scales"):
// the int32 sums cross qg blocks. Held here, from the scales themselves and
// the integers the kernel makes of them (w' = round(q * m / 128), m =
// round(s_b * (128 / s')), in f32 as the kernel computes them): no group
// can overflow int32 (sum |w'| <= QG_L1, |m| <= 32767); every output is
// within the q8 tolerance plus one unit of s' per value of the scalar
// reference on the bundle's own scales; and rows stay independent (the
// first 33 rows of 40 equal those 33 alone, bit for bit).
const roundEven = (v) => { const f = Math.floor(v), d = v - f; return d > 0.5 || (d === 0.5 && f % 2 !== 0) ? f + 1 : f; };
const regroupValue = (q, m) => Math.floor((q * 256 * m + 16384) / 32768);
for (const K of [96, 544]) for (const act of [-1, 0]) {
  const N = 24, T = 40, nb = K / 32, x = uniform(T * K, -3, 3);
  x[K + 1] = 40; // an outlier in row 1
  const w = randomWeight(BL_Q8, N, K), bias = uniform(N, -1, 1);
  const q = new Int8Array(w.bytes.buffer, w.bytes.byteOffset, N * K);
  const sb = new Float32Array(w.bytes.slice(N * K).buffer);
  const pwg = put(w.bytes), gsp = alloc(N * nb * 4);
  const qg = M._blw_k_q8_regroup(N, K, pwg, gsp), ngr = Math.ceil(nb / qg);
  check(qg >= 2 && qg <= nb, `regroup K=${K}: ${qg} blocks per shared scale (2..${nb})`);
  const gs = getF(gsp, N * ngr);
  let bounded = true;
  const slack = new Float64Array(N); // sum over values of one unit of s': the regrouping's bound per |x|
  for (let n = 0; n < N; n++) for (let g = 0; g < ngr; g++) {
    const s = gs[n * ngr + g], inv = Math.fround(128 / s);
    let sum = 0;
    for (let b = g * qg; b < Math.min((g + 1) * qg, nb); b++) {
      const m = roundEven(Math.fround(sb[n * nb + b] * inv));
      bounded &&= Math.abs(m) <= 32767;
      for (let i = 0; i < 32; i++) sum += Math.abs(regroupValue(q[n * K + b * 32 + i], m));
      slack[n] += 32 * 1.01 * s;
    }
    bounded &&= s > 0 && sum <= QG_L1;
  }
  check(bounded, `regroup K=${K}: every group's sum |w'| <= ${QG_L1} and |m| <= 32767`);
  const px = put(x), pb = put(bias), pw0 = put(w.bytes), pw1 = put(w.bytes), pw2 = put(w.bytes);
  const y0 = alloc(T * N * 4), y1 = alloc(T * N * 4), y2 = alloc(33 * N * 4);
  check(M._blw_k_matmul_panels(0, y0, px, T, N, K, pw0, pb, act, -1, 0) === 0 &&
    M._blw_k_matmul_panels(1, y1, px, T, N, K, pw1, pb, act, -1, 0) === 0 &&
    M._blw_k_matmul_panels(1, y2, px, 33, N, K, pw2, pb, act, -1, 0) === 0, `regrouped panels K=${K} runs`);
  const ref = getF(y0, T * N), got = getF(y1, T * N), first = getF(y2, 33 * N);
  let worst = 0;
  for (let t = 0; t < T; t++) {
    let xmax = 0;
    for (let k = 0; k < K; k++) xmax = Math.max(xmax, Math.abs(x[t * K + k]));
    for (let n = 0; n < N; n++) {
      let sw = 0;
      for (let k = 0; k < K; k++) sw += Math.abs(w.deq[n * K + k]);
      const allowed = 1.13 * (TOL_MATMUL_Q8 * (xmax * sw + Math.abs(bias[n])) + xmax * slack[n]) + actTol[act];
      worst = Math.max(worst, Math.abs(got[t * N + n] - ref[t * N + n]) / allowed);
    }
  }
  note('matmul q8 panels regrouped vs scalar (fraction of tol)', worst);
  check(worst <= 1, `regrouped panels K=${K} ${actName[act]}: simd vs scalar ${worst.toFixed(3)} x the tolerance`);
  check(first.every((v, i) => Object.is(v, got[i])), `regrouped panels K=${K} ${actName[act]}: the first 33 of 40 rows = 33 rows alone, bit for bit`);
  for (const p of [pwg, gsp, px, pb, pw0, pw1, pw2, y0, y1, y2]) M._free(p);
}
// A group at its int32 limit: every weight +127 on one scale and every
// activation at its 15-bit maximum, so a group's integer sum is within
// 16383 * (QG_L1 + 32) of 2^31; an overflow would be far off.
{
  const N = 8, K = 544, T = 32, bytes = new Uint8Array(N * K + N * K / 32 * 4);
  bytes.fill(127, 0, N * K);
  new Float32Array(bytes.buffer, N * K).fill(0.01);
  const x = new Float32Array(T * K).fill(1), px = put(x), pw = put(bytes), y = alloc(T * N * 4);
  check(M._blw_k_matmul_panels(1, y, px, T, N, K, pw, 0, -1, -1, 0) === 0, 'regrouped panels at the int32 limit run');
  const want = K * 127 * Math.fround(0.01), got = getF(y, T * N);
  const worst = Math.max(...got.map((v) => Math.abs(v - want) / want));
  check(worst <= 1e-4, `regrouped panels at the int32 limit: relative error ${worst} (an overflowing sum is far off)`);
  for (const p of [px, pw, y]) M._free(p);
}
// rows not a multiple of 8 stay in the bundle layout: refused here
const pw = put(new Uint8Array(7 * 32 + 7 * 4));
check(M._blw_k_matmul_panels(1, 0, 0, 1, 7, 32, pw, 0, -1, -1, 0) === -1, 'panels refuse n % 8 != 0');
M._free(pw);
});

// blk_matmul_act applies the activation to each output tile in registers; the
// reference is the scalar matmul followed by the scalar activation. Allowed:
// the matmul tolerance carried through the activation (slope <= 1.13) plus
// the activation's own tolerance.
section('matmul + activation (fused): SIMD vs scalar matmul then activation', () => {
for (const dtype of [BL_F32, BL_F16, BL_Q8, BL_Q4]) {
  const Ks = dtype >= BL_Q8 ? [32, 96, 544] : [3, 100, 1100];
  for (const [T, N] of [[1, 9], [3, 33], [5, 8], [13, 17]]) for (const K of Ks) for (const act of [-1, 0, 1, 2]) {
    const x = uniform(T * K, -2, 2);
    const w = randomWeight(dtype, N, K), bias = uniform(N, -1, 1);
    if (dtype === BL_F32 || dtype === BL_F16) { // keep pre-activations O(1..10) so GELU's curved part is exercised
      for (let i = 0; i < x.length; i++) x[i] /= Math.sqrt(K);
    }
    const px = put(x), pw = put(w.bytes), pb = put(bias), y0 = alloc(T * N * 4), y1 = alloc(T * N * 4);
    const r0 = M._blw_k_matmul_act(0, y0, px, T, dtype, N, K, pw, pb, act);
    const r1 = M._blw_k_matmul_act(1, y1, px, T, dtype, N, K, pw, pb, act);
    const what = `matmul_act ${names[dtype]} ${actName[act]} T=${T} N=${N} K=${K}`;
    check(r0 === 0 && r1 === 0, `${what} runs`);
    const a = getF(y0, T * N), b = getF(y1, T * N);
    const gb = dtype >= BL_Q8 ? groupBound(dtype, w.deq, N, K, pw) : new Float64Array(N);
    let worstRel = 0, negSeen = false;
    for (let t = 0; t < T; t++) {
      let xmax = 0;
      for (let k = 0; k < K; k++) xmax = Math.max(xmax, Math.abs(x[t * K + k]));
      for (let n = 0; n < N; n++) {
        let sxw = 0, sw = 0;
        for (let k = 0; k < K; k++) {
          sxw += Math.abs(x[t * K + k] * w.deq[n * K + k]);
          sw += Math.abs(w.deq[n * K + k]);
        }
        const scale = (dtype >= BL_Q8 ? xmax * sw : sxw) + Math.abs(bias[n]);
        const allowed = 1.13 * (tols[dtype] * scale + xmax * gb[n]) + actTol[act];
        worstRel = Math.max(worstRel, Math.abs(a[t * N + n] - b[t * N + n]) / allowed);
        negSeen ||= a[t * N + n] < -0.05;
      }
    }
    note(`matmul_act ${names[dtype]} ${actName[act]} (fraction of tol)`, worstRel);
    check(worstRel <= 1, `${what}: simd vs scalar ${worstRel.toFixed(3)} x the tolerance`);
    // fused = the build's matmul, then the build's activation, bit for bit:
    // a forward that keeps the feed-forward's u for the backward (the tape,
    // encoder_family.c) runs them apart and must give the same layer outputs
    if (act >= 0) {
      const y2 = alloc(T * N * 4);
      check(M._blw_k_matmul(1, y2, px, T, dtype, N, K, pw, pb) === 0, `${what}: unfused runs`);
      M._blw_k_activate(1, y2, T * N, act);
      const c = getF(y2, T * N);
      check(c.every((v, i) => Object.is(v, b[i])), `${what}: fused = matmul then activation, bit for bit`);
      M._free(y2);
    }
    // the activation really ran on the scalar side: ReLU output is never negative
    if (act === 2) check(!negSeen, `${what}: reference output has no negative values`);
    for (const p of [px, pw, pb, y0, y1]) M._free(p);
  }
}

});

// ------------------------------------------ W^T of q8 weights, int16 panels
// The backward pass's products dx = dy W run on the integer kernels with
// W^T laid out as an int16 weight [k][n] (blk_weight_t16): scale groups of
// 32 rows of W per column. Against W itself (the dequantized bundle):
// every value within half its group's scale, each group's sum of |w'|
// within the int32 bound of the kernels (131072) and no |w'| over 32767,
// the scale no coarser than those bounds need; SIMD = scalar bit for bit,
// from the bundle layout and from q8 panels laid out in place.
section('W^T of q8 weights in int16 panels: within half a scale of W, int32-safe, SIMD = scalar bit for bit, both layouts', () => {
for (const [N, K] of [[32, 32], [64, 96], [96, 544], [160, 64]]) {
  const w = randomWeight(BL_Q8, N, K), nb = N / 32, np = K / 8;
  if (N >= 64) { // rows 32..63 all zero (zero scales): zero groups, scale 0
    const sc = new Float32Array(w.bytes.buffer, N * K, N * K / 32);
    for (let r = 32; r < 64; r++) for (let b = 0; b < K / 32; b++) { sc[r * K / 32 + b] = 0; }
    for (let r = 32; r < 64; r++) for (let k = 0; k < K; k++) w.deq[r * K + k] = 0;
  }
  const outs = [];
  for (const panels of [0, 1]) for (const simd of [0, 1]) {
    const pw = put(w.bytes), pq = alloc(N * K * 2), ps = alloc(np * nb * 8 * 4);
    check(M._blw_k_weight_t16(simd, N, K, pw, panels, pq, ps) === 0, `t16 N=${N} K=${K} panels=${panels} simd=${simd} runs`);
    outs.push({ q: Int16Array.from(new Int16Array(M.HEAPU8.buffer, pq, N * K)), s: getF(ps, np * nb * 8) });
    for (const p of [pw, pq, ps]) M._free(p);
  }
  const [ref] = outs;
  outs.forEach((o, i) => check(o.q.every((v, j) => v === ref.q[j]) && o.s.every((v, j) => Object.is(v, ref.s[j])),
    `t16 N=${N} K=${K}: output ${i} (panels ${i >> 1}, simd ${i & 1}) = the scalar reference on the bundle layout`));
  let worst = 0, sumOk = true, maxOk = true, tight = true, zeros = true;
  for (let p = 0; p < np; p++) for (let b = 0; b < nb; b++) for (let c = 0; c < 8; c++) {
    const col = 8 * p + c, s = ref.s[(p * nb + b) * 8 + c];
    let L = 0, amax = 0, sq = 0;
    for (let r = 0; r < 32; r++) {
      const i = 32 * b + r, W = w.deq[i * K + col], q = ref.q[p * N * 8 + (i >> 1) * 16 + 2 * c + (i & 1)];
      L += Math.abs(W), amax = Math.max(amax, Math.abs(W)), sq += Math.abs(q);
      maxOk &&= Math.abs(q) <= 32767;
      if (s > 0) worst = Math.max(worst, Math.abs(q * s - W) / s);
      else zeros &&= q === 0 && W === 0;
    }
    sumOk &&= sq <= 131072;
    if (amax > 0) tight &&= s <= Math.max(L / (131072 - 16), amax / 32767) * (1 + 1e-5);
    else zeros &&= s === 0;
  }
  note('t16 |w\' s - W| / s', worst);
  check(worst <= 0.5 + 1e-3, `t16 N=${N} K=${K}: every value within half its scale of W (${worst})`);
  check(sumOk && maxOk, `t16 N=${N} K=${K}: each group's sum |w'| <= 131072 and |w'| <= 32767`);
  check(tight, `t16 N=${N} K=${K}: scales no coarser than the bounds need`);
  check(zeros, `t16 N=${N} K=${K}: an all-zero group has scale 0 and zeros`);
}
check(M._blw_k_weight_t16(1, 48, 64, 8, 0, 0, 0) === -1, 't16 refuses n % 32 != 0');
});

// ---------------------------------------------- matmul_nt (attention form)
section('matmul_nt (attention products), float and 13-bit integer forms', () => {
for (const [T, N, K] of [[1, 1, 1], [3, 5, 7], [9, 17, 32], [13, 13, 64], [30, 3, 30], [5, 9, 700], [70, 32, 97]]) {
  for (const transposed of [false, true]) {
    const ldx = K + 3, ldy = N + 2;
    const x = uniform(T * ldx, -2, 2), bsrc = uniform(N * K * 2, -2, 2);
    const [bn, bk] = transposed ? [1, N + 1] : [K + 1, 1]; // B[n][k] = b[n*bn + k*bk]
    const px = put(x), pb = put(bsrc), y0 = alloc(T * ldy * 4), y1 = alloc(T * ldy * 4);
    M.HEAPF32.fill(0, y0 >> 2, (y0 >> 2) + T * ldy);
    M.HEAPF32.fill(0, y1 >> 2, (y1 >> 2) + T * ldy);
    check(M._blw_k_matmul_nt(0, y0, ldy, px, ldx, T, pb, bn, bk, N, K) === 0, 'matmul_nt scalar runs');
    check(M._blw_k_matmul_nt(1, y1, ldy, px, ldx, T, pb, bn, bk, N, K) === 0, 'matmul_nt simd runs');
    const a = getF(y0, T * ldy), b = getF(y1, T * ldy);
    let w = 0;
    for (let i = 0; i < T; i++) for (let n = 0; n < N; n++) {
      let s = 0;
      for (let k = 0; k < K; k++) s += Math.abs(x[i * ldx + k] * bsrc[n * bn + k * bk]);
      w = Math.max(w, Math.abs(a[i * ldy + n] - b[i * ldy + n]) / (s + 1e-30));
    }
    let untouched = true; // columns past N of each y row stay as they were
    for (let i = 0; i < T; i++) for (let n = N; n < ldy; n++) untouched &&= b[i * ldy + n] === 0;
    note('matmul_nt simd vs scalar', w);
    check(w <= TOL_MATMUL_NT, `matmul_nt T=${T} N=${N} K=${K} transposed=${transposed}: ${w}`);
    check(untouched, `matmul_nt T=${T} N=${N} K=${K}: writes only N columns`);
    // the integer form (simd = 2) on the same inputs, with one column of B
    // all zero (a zero scale) and one row of x all zero
    for (let k = 0; k < K; k++) { bsrc[(N - 1) * bn + k * bk] = 0; x[(T - 1) * ldx + k] = 0; }
    M.HEAPF32.set(x, px >> 2);
    M.HEAPF32.set(bsrc, pb >> 2);
    M.HEAPF32.fill(0, y1 >> 2, (y1 >> 2) + T * ldy);
    check(M._blw_k_matmul_nt(0, y0, ldy, px, ldx, T, pb, bn, bk, N, K) === 0, 'matmul_nt scalar runs');
    check(M._blw_k_matmul_nt(2, y1, ldy, px, ldx, T, pb, bn, bk, N, K) === 0, 'matmul_nt integer form runs');
    const r = getF(y0, T * ldy), q = getF(y1, T * ldy);
    let xmax = 0, bmax = 0, wq = 0, untouchedQ = true;
    for (let i = 0; i < T; i++) for (let k = 0; k < K; k++) xmax = Math.max(xmax, Math.abs(x[i * ldx + k]));
    for (let n = 0; n < N; n++) for (let k = 0; k < K; k++) bmax = Math.max(bmax, Math.abs(bsrc[n * bn + k * bk]));
    for (let i = 0; i < T; i++) for (let n = 0; n < N; n++) wq = Math.max(wq, Math.abs(r[i * ldy + n] - q[i * ldy + n]));
    wq /= K * xmax * bmax + 1e-30;
    for (let i = 0; i < T; i++) for (let n = N; n < ldy; n++) untouchedQ &&= q[i * ldy + n] === 0;
    note('matmul_nt integer form vs scalar', wq);
    check(wq <= TOL_MATMUL_NT_Q, `matmul_nt integer form T=${T} N=${N} K=${K} transposed=${transposed}: ${wq}`);
    check(untouchedQ, `matmul_nt integer form T=${T} N=${N} K=${K}: writes only N columns`);
    let zeroRow = true;
    for (let n = 0; n < N; n++) zeroRow &&= q[(T - 1) * ldy + n] === 0;
    check(zeroRow, `matmul_nt integer form T=${T} N=${N} K=${K}: a zero row of x gives zeros`);
    for (const p of [px, pb, y0, y1]) M._free(p);
  }
}

// The integer form at its largest block sums: every x and b equal, so each
// 32-block sums 32 * 8191^2 (just under 2^31) and every output is K * x * b.
for (const [T, N, K, v] of [[4, 8, 64, 3.5], [5, 9, 96, -0.75]]) {
  const x = new Float32Array(T * K).fill(v), bsrc = new Float32Array(N * K).fill(v);
  const px = put(x), pb = put(bsrc), y = alloc(T * N * 4);
  check(M._blw_k_matmul_nt(2, y, N, px, K, T, pb, K, 1, N, K) === 0, 'matmul_nt integer form runs');
  const q = getF(y, T * N), want = K * v * v;
  let worst = 0;
  for (const e of q) worst = Math.max(worst, Math.abs(e - want) / want);
  note('matmul_nt integer form, largest sums', worst);
  check(worst <= 1e-6, `matmul_nt integer form T=${T} N=${N} K=${K} all ${v}: relative error ${worst} (an overflowing block sum is far off)`);
  for (const p of [px, pb, y]) M._free(p);
}

});

// -------------------------------------------------------------- layernorm
section('layernorm, with and without residual', () => {
for (const [T, n] of [[1, 1], [3, 7], [2, 64], [5, 385], [1, 1536]]) {
  for (const withRes of [false, true]) {
    const x = uniform(T * n, -4, 6), res = uniform(T * n, -1, 1), g = uniform(n, 0.5, 1.5), be = uniform(n, -0.5, 0.5);
    const p0 = put(x), p1 = put(x), pr = put(res), pg = put(g), pbe = put(be);
    M._blw_k_layernorm(0, p0, withRes ? pr : 0, T, n, pg, pbe, 1e-12);
    M._blw_k_layernorm(1, p1, withRes ? pr : 0, T, n, pg, pbe, 1e-12);
    const a = getF(p0, T * n), b = getF(p1, T * n);
    let w = 0;
    for (let i = 0; i < a.length; i++) w = Math.max(w, Math.abs(a[i] - b[i]));
    note('layernorm', w);
    check(w <= TOL_LAYERNORM, `layernorm T=${T} n=${n} res=${withRes}: ${w}`);
    if (n > 1) { // and the scalar reference really normalizes: row mean of (y - beta)/gamma ~ 0
      let m = 0;
      for (let i = 0; i < n; i++) m += (a[i] - be[i]) / g[i];
      check(Math.abs(m / n) < 1e-4, `layernorm reference T=${T} n=${n}: mean ${m / n}`);
    }
    for (const p of [p0, p1, pr, pg, pbe]) M._free(p);
  }
}

});

// ---------------------------------------------------------------- softmax
section('softmax (scaled rows)', () => {
// negative scales take the SIMD exp with the upper clamp (arguments >= 0)
for (const [T, n, scale] of [[1, 1, 1], [2, 3, 0.125], [3, 17, 0.25], [4, 130, 0.17677669], [2, 512, 1],
  [3, 19, -0.125], [2, 257, -1]]) {
  const x = uniform(T * n, -30, 30);
  const p0 = put(x), p1 = put(x);
  M._blw_k_softmax(0, p0, T, n, scale);
  M._blw_k_softmax(1, p1, T, n, scale);
  const a = getF(p0, T * n), b = getF(p1, T * n);
  let w = 0, sumErr = 0;
  for (let i = 0; i < a.length; i++) w = Math.max(w, Math.abs(a[i] - b[i]));
  for (let t = 0; t < T; t++) { let s = 0; for (let i = 0; i < n; i++) s += b[t * n + i]; sumErr = Math.max(sumErr, Math.abs(s - 1)); }
  note('softmax', w);
  check(w <= TOL_SOFTMAX, `softmax T=${T} n=${n}: ${w}`);
  check(sumErr <= 1e-5, `softmax T=${T} n=${n}: rows sum to 1 (${sumErr})`);
  M._free(p0); M._free(p1);
}

});

// ------------------------------------------------ exp, erf, activations
section('exp, erf and the activations vs libm', () => {
function elementwise(fn, x, ...rest) {
  const p0 = put(x), p1 = put(x);
  fn(0, p0, x.length, ...rest);
  fn(1, p1, x.length, ...rest);
  const out = [getF(p0, x.length), getF(p1, x.length)];
  M._free(p0); M._free(p1);
  return out;
}
{
  // domain of the SIMD exp: [-87.3, 88.3] (softmax feeds x <= 0)
  const x = Float32Array.from([...uniform(4099, -87, 88), 0, -0, 1e-30, -1e-30, 88.3, -87.3, 0.5, -0.5]);
  const [a, b] = elementwise(M._blw_k_exp, x);
  let w = 0;
  for (let i = 0; i < x.length; i++) w = Math.max(w, Math.abs(a[i] - b[i]) / Math.max(a[i], 1e-37));
  note('exp (relative)', w);
  check(w <= TOL_EXP_REL, `exp vs expf: relative ${w}`);
}
{
  const x = Float32Array.from([...uniform(8191, -6, 6), ...uniform(1001, -1.2, 1.2), 0, -0, 1, -1, 3.99, 4, 4.01, -4, 1e-20, 30, -30]);
  const [a, b] = elementwise(M._blw_k_erf, x);
  let w = 0, odd = true;
  for (let i = 0; i < x.length; i++) w = Math.max(w, Math.abs(a[i] - b[i]));
  for (let i = 0; i < x.length; i++) odd &&= Math.abs(b[i]) <= 1;
  note('erf', w);
  check(w <= TOL_ERF, `erf vs erff: ${w}`);
  check(odd, 'erf stays within [-1, 1]');
}
for (const [act, tol, name] of [[0, TOL_GELU, 'gelu'], [1, TOL_GELU_TANH, 'gelu_tanh'], [2, 0, 'relu']]) {
  const x = Float32Array.from([...uniform(5003, -12, 12), 0, -0, 1e-8, -1e-8, 40, -40]);
  const [a, b] = elementwise(M._blw_k_activate, x, act);
  let w = 0;
  for (let i = 0; i < x.length; i++) w = Math.max(w, Math.abs(a[i] - b[i]));
  note(name, w);
  check(w <= tol, `${name}: ${w} > ${tol}`);
}

});

section('the worst differences (printed); the native host exits cleanly', async () => {
  console.log('kernel                             worst difference (SIMD vs scalar unless noted)');
  for (const [k, v] of Object.entries(worst)) console.log(`  ${k.padEnd(34)} ${v.toExponential(2)}`);
  if (NATIVE) check(await close() === 0, 'kernel_host exits cleanly');
});
