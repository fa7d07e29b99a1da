// kernel_inputs.mjs — the random inputs of tests/kernels.test.mjs: a seeded
// generator (mulberry32: the same numbers on every run and machine) and
// weights in each bundle dtype's layout, written from the spec (src/format/bundle.h),
// with the values they stand for.
export const BL_F32 = 0, BL_F16 = 1, BL_Q8 = 2, BL_Q4 = 3, BL_Q8H = 4, BL_Q12 = 8;
export const QN = [4, 5, 6, 7, 8]; // q8h, q9, q10, q11, q12: dtype - 4 + 8 bits (src/format/bundle.h)

let seed = 12345;
export function rand() { // mulberry32
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
export const uniform = (n, lo, hi) => Float32Array.from({ length: n }, () => lo + (hi - lo) * rand());

// A random float16 bit pattern with exponent in [lo, hi) and its value.
function randomHalf(lo, hi) {
  const sign = rand() < 0.5 ? 1 : 0, exp = lo + Math.floor(rand() * (hi - lo)), man = Math.floor(rand() * 1024);
  return { bits: (sign << 15) | (exp << 10) | man, value: (sign ? -1 : 1) * 2 ** (exp - 15) * (1 + man / 1024) };
}

// QN layout (src/format/bundle.h), written from the spec: int8 high plane q >> E,
// the E low bits as a little-endian bit stream, then the low and the high
// bytes of the float16 block scales. Integers cover [-qmax, qmax] with both
// ends present in every row (q12: the int32 block sums' worst case).
function randomQN(dtype, n, k) {
  const B = dtype - BL_Q8H + 8, E = B - 8, qmax = 2 ** (B - 1) - 1, N = n * k, nb = N / 32;
  const bytes = new Uint8Array(N + N * E / 8 + 2 * nb), deq = new Float32Array(N);
  const scales = Array.from({ length: nb }, () => randomHalf(3, 9)); // negative scales are valid too
  for (let i = 0; i < nb; i++) { bytes[N + N * E / 8 + i] = scales[i].bits & 255; bytes[N + N * E / 8 + nb + i] = scales[i].bits >> 8; }
  for (let i = 0; i < N; i++) {
    const q = i % k === 0 ? qmax : i % k === 1 ? -qmax : Math.floor(rand() * (2 * qmax + 1)) - qmax;
    bytes[i] = (q >> E) & 255;
    const low = q & ((1 << E) - 1);
    for (let j = 0; j < E; j++) if (low >> j & 1) bytes[N + ((i * E + j) >> 3)] |= 1 << ((i * E + j) & 7);
    deq[i] = Math.fround(scales[Math.floor(i / 32)].value) * q;
  }
  return { bytes, deq };
}

// Random weights in bundle layout for dtype: returns {bytes, deq: Float32Array(n*k)}
export function randomWeight(dtype, n, k) {
  if (QN.includes(dtype)) return randomQN(dtype, n, k);
  if (dtype === BL_F32) { const w = uniform(n * k, -1, 1); return { bytes: new Uint8Array(w.buffer), deq: w }; }
  if (dtype === BL_F16) {
    const h = new Uint16Array(n * k), deq = new Float32Array(n * k);
    for (let i = 0; i < h.length; i++) {
      const sign = rand() < 0.5 ? 1 : 0, exp = 8 + Math.floor(rand() * 8), man = Math.floor(rand() * 1024);
      h[i] = (sign << 15) | (exp << 10) | man;
      deq[i] = (sign ? -1 : 1) * 2 ** (exp - 15) * (1 + man / 1024);
    }
    return { bytes: new Uint8Array(h.buffer), deq };
  }
  const nb = k / 32, scales = uniform(n * nb, 0.001, 0.02), deq = new Float32Array(n * k);
  let q;
  if (dtype === BL_Q8) {
    q = new Int8Array(n * k);
    for (let i = 0; i < q.length; i++) { q[i] = Math.floor(rand() * 255) - 127; deq[i] = scales[Math.floor(i / 32)] * q[i]; }
  } else {
    q = new Uint8Array(n * k / 2);
    for (let i = 0; i < q.length; i++) q[i] = Math.floor(rand() * 256);
    for (let r = 0; r < n; r++) for (let b = 0; b < nb; b++) for (let i = 0; i < 16; i++) {
      const byte = q[r * k / 2 + b * 16 + i], s = scales[r * nb + b];
      deq[r * k + b * 32 + i] = s * ((byte & 15) - 8);
      deq[r * k + b * 32 + 16 + i] = s * ((byte >> 4) - 8);
    }
  }
  const bytes = new Uint8Array(q.byteLength + scales.byteLength);
  bytes.set(new Uint8Array(q.buffer), 0);
  bytes.set(new Uint8Array(scales.buffer), q.byteLength);
  return { bytes, deq };
}

