/* kernels.c — matmul, LayerNorm, softmax, GELU: scalar references and the
 * wasm SIMD128 versions beside them (see kernels.h).
 *
 * SIMD matmul design (no FMA in SIMD128, so every step is a mul + add):
 *   weights are re-laid-out once into panels of 8 output columns so that for
 *   each input index k the 8 weights sit in two v128 registers; a micro-kernel
 *   keeps a block of 4 token rows x 8 columns of sums in 8 registers and adds
 *   splat(x[t][k]) * w[k][0..7] for every k.
 *   q8/q4: activations are quantized per row to 15 bits (scale = max|x| / 16383,
 *   so the loss is ~3e-5 relative, far below the weight quantization error);
 *   weights are kept as int16 pairs (k, k+1) per column (widened at pack time:
 *   twice the memory of int8, but the micro-kernel loads them without a
 *   sign-extending shuffle: 72 -> 77 GOP/s) and the pair product
 *   x[k]*w[k] + x[k+1]*w[k+1] of 4 columns comes from one i32x4.dot_i16x8_s.
 *   Integer sums of one scale group (qg 32-blocks, see blk_weight_pack) are
 *   scaled by the group's weight scales in f32; the row's activation scale
 *   is applied at the end.
 *   Before either kernel runs, x is interleaved in groups of 4 rows
 *   ([T/4][K][4], int16 pairs for q8) so one pointer plus constant offsets
 *   feeds the 4 splats, keeping integer work out of the inner loop.
 *   V8 (TurboFan) notes, measured: the 4x8 tile uses 15 of the 15 allocatable
 *   xmm registers (V8 hoists all loads of a step); unrolling k or a 5x8 tile
 *   makes it spill an accumulator, and a sum carried through the stack halves
 *   the speed. Polynomials (exp, erf) are bound by dependency latency, hence
 *   Estrin's scheme.
 */
#include "kernels.h"
#include "bertlens.h"
#include "bundle.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#elif BLK_SIMD
#include "simd_x86.h"
#include <immintrin.h>
#endif

/* ------------------------------------------------------------ weights */

float blk_half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
    if (exp == 0) {
        if (man == 0) {
            bits = sign;
        } else { /* subnormal half: normalize */
            int e = -1;
            do {
                e++;
                man <<= 1;
            } while (!(man & 0x400));
            bits = sign | ((uint32_t)(127 - 15 - e) << 23) | ((man & 0x3ff) << 13);
        }
    } else if (exp == 31) {
        bits = sign | 0x7f800000u | (man << 13);
    } else {
        bits = sign | ((exp - 15 + 127) << 23) | (man << 13);
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

#if BLK_SIMD && !defined(__wasm_simd128__)
static int blk_avx2_state = -1; /* -1: not decided yet */
/* AVX2+FMA micro-kernels run when the CPU has both, unless the environment
 * says BERTLENS_SIMD=sse4.1 (tests compare both paths with the scalar one).
 * Decided once; relaxed atomics since any thread may ask first. */
static int blk_have_avx2(void) {
    int have = __atomic_load_n(&blk_avx2_state, __ATOMIC_RELAXED);
    if (have < 0) {
        const char *env = getenv("BERTLENS_SIMD");
        __builtin_cpu_init();
        have = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && !(env && !strcmp(env, "sse4.1"));
        __atomic_store_n(&blk_avx2_state, have, __ATOMIC_RELAXED);
    }
    return have;
}
#endif

const char *blk_simd_name(void) {
#if defined(__wasm_simd128__)
    return "wasm-simd128";
#elif BLK_SIMD
    return blk_have_avx2() ? "avx2+fma" : "sse4.1";
#else
    return "scalar";
#endif
}

int blk_weight_init(blk_weight *w, int32_t dtype, int32_t n, int32_t k, const uint8_t *data) {
    memset(w, 0, sizeof *w);
    if (n <= 0 || k <= 0 || !data) return -1;
    if (dtype < BL_F32 || dtype >= BL_N_DTYPES) return -1;
    if (dtype != BL_F32 && dtype != BL_F16 && k % BL_QBLOCK) return -1;
    w->dtype = dtype;
    w->n = n;
    w->k = k;
    w->data = data;
    return 0;
}

void blk_weight_free(blk_weight *w) {
    free(w->pf);
    free(w->pq);
    free(w->ps);
    w->pf = NULL;
    w->pq = NULL;
    w->ps = NULL;
}

/* Scale of row r, block b (of 32) of a q8/q4/QN weight (scales follow the quants). */
static float qscale(const blk_weight *w, int32_t r, int32_t b) {
    const size_t n = (size_t)w->n * w->k;
    const int bits = bli_qn_bits(w->dtype);
    if (bits) { /* QN: the two byte planes of the float16 scales follow the high and low planes */
        const uint8_t *slo = w->data + n + n * (size_t)(bits - 8) / 8, *shi = slo + n / BL_QBLOCK;
        size_t i = (size_t)r * (w->k / BL_QBLOCK) + b;
        return blk_half_to_float((uint16_t)(slo[i] | shi[i] << 8));
    }
    size_t qbytes = w->dtype == BL_Q8 ? n : n / 2;
    float s;
    memcpy(&s, w->data + qbytes + ((size_t)r * (w->k / BL_QBLOCK) + b) * 4, 4);
    return s;
}

/* Integer of element (r, i) of a QN weight: high plane * 2^E + its E low bits. */
static int qn_value(const blk_weight *w, int32_t r, int32_t i) {
    const int e = bli_qn_bits(w->dtype) - 8;
    const size_t n = (size_t)r * w->k + i;
    int v = ((const int8_t *)w->data)[n] * (1 << e);
    if (e) {
        const uint8_t *lo = w->data + (size_t)w->n * w->k;
        size_t bit = n * (size_t)e;
        /* E <= 4 bits starting at bit % 8 <= 7 span at most two bytes; the
         * second is read only when the bits reach it (never past the plane) */
        unsigned two = lo[bit / 8];
        if (bit % 8 + (size_t)e > 8) two |= (unsigned)lo[bit / 8 + 1] << 8;
        v += (int)((two >> (bit % 8)) & ((1u << e) - 1));
    }
    return v;
}

void blk_weight_row(const blk_weight *w, int32_t r, float *out) {
    const int32_t k = w->k;
    switch (w->dtype) {
    case BL_F32:
        memcpy(out, w->data + (size_t)r * k * 4, (size_t)k * 4);
        break;
    case BL_F16:
        for (int32_t i = 0; i < k; i++) {
            uint16_t h;
            memcpy(&h, w->data + ((size_t)r * k + i) * 2, 2);
            out[i] = blk_half_to_float(h);
        }
        break;
    case BL_Q8: {
        const int8_t *q = (const int8_t *)w->data + (size_t)r * k;
        for (int32_t b = 0; b < k / BL_QBLOCK; b++) {
            float s = qscale(w, r, b);
            for (int i = 0; i < BL_QBLOCK; i++) out[b * BL_QBLOCK + i] = s * (float)q[b * BL_QBLOCK + i];
        }
        break;
    }
    case BL_Q4: {
        const uint8_t *p = w->data + (size_t)r * k / 2;
        for (int32_t b = 0; b < k / BL_QBLOCK; b++) {
            float s = qscale(w, r, b);
            for (int i = 0; i < 16; i++) {
                uint8_t byte = p[b * 16 + i];
                out[b * BL_QBLOCK + i] = s * (float)((int)(byte & 15) - 8);
                out[b * BL_QBLOCK + 16 + i] = s * (float)((int)(byte >> 4) - 8);
            }
        }
        break;
    }
    default: /* QN */
        for (int32_t b = 0; b < k / BL_QBLOCK; b++) {
            float s = qscale(w, r, b);
            for (int i = 0; i < BL_QBLOCK; i++) out[b * BL_QBLOCK + i] = s * (float)qn_value(w, r, b * BL_QBLOCK + i);
        }
        break;
    }
}

#if BLK_SIMD
/* Integer value of element (r, i) of a q8/q4/QN weight. */
static int qvalue(const blk_weight *w, int32_t r, int32_t i) {
    if (w->dtype == BL_Q8) return ((const int8_t *)w->data)[(size_t)r * w->k + i];
    if (w->dtype != BL_Q4) return qn_value(w, r, i);
    int32_t b = i / BL_QBLOCK, j = i % BL_QBLOCK;
    uint8_t byte = w->data[(size_t)r * w->k / 2 + b * 16 + (j & 15)];
    return (int)(j < 16 ? byte & 15 : byte >> 4) - 8;
}

/* ---- integer panels with scale groups
 * The SIMD kernels multiply 15-bit activations (|x| <= QX_MAX, one scale per
 * row) by int16 weights, sum in int32 and convert to float once per scale
 * group. The bundle has one scale per 32-block, and converting after every
 * block costs ~5 % of a quantized forward pass (A/B in one process). So
 * where it adds little error, blk_weight_pack puts qg blocks of a row on one
 * common scale s' (w' = round(w / s'), w = q * s_b the bundle's value):
 * the int32 sum of a group is at most QX_MAX * sum |w'|, so s' is the
 * smallest scale with sum |w'| <= QG_L1 (and |w'| <= 32767); the rounding
 * adds at most s' / 2 to each weight. qg is chosen per matrix: the fewest
 * groups whose rounding noise (s'^2 / 12 per value) stays within QG_NOISE
 * of the bundle's own (s_b^2 / 12 per value); qg = 1 keeps the bundle's
 * integers and scales exactly. Measured on all-MiniLM-L6-v2: q8 gets one
 * group per row of a 384-wide input (qg 12), q10 groups of 3 blocks. */
#define QX_MAX 16383.0f
#define QG_L1 131072.0 /* (2^31 - 1) / QX_MAX = 131080.0: int32 sums cannot overflow */
#define QG_NOISE 0.015625 /* 1/64: +0.4 % (q8) and +0.8 % (q10) mean attention error on the fidelity corpus */

/* Smallest s' for values w[0..n) with sum |round(w / s')| <= QG_L1 and
 * max |round(w / s')| <= 32767; L = sum |w|. 0 for an all-zero group. */
static double group_scale(const float *w, int32_t n, double L, double amax) {
    if (amax <= 0) return 0;
    double s = L / (QG_L1 - 0.5 * n); /* sum |w'| <= L / s + n / 2 */
    if (s < amax / 32767.0) s = amax / 32767.0;
    for (;;) { /* float rounding: check the sum itself */
        double sum = 0;
        for (int32_t i = 0; i < n; i++) sum += fabs(nearbyint(w[i] / s));
        if (sum <= QG_L1) return s;
        s *= 1.0 + 1e-6;
    }
}

/* Fill w->pq, w->ps, w->qg from a q8/q4/QN weight (see above). -1 out of memory. */
static int pack_groups(blk_weight *w) {
    const int32_t n = w->n, k = w->k, nb = k / BL_QBLOCK, np = (n + BL_PANEL - 1) / BL_PANEL;
    double *l1 = malloc((size_t)n * nb * sizeof(double)); /* per row and block: s_b * sum |q| */
    float *row = malloc((size_t)k * sizeof(float));
    if (!l1 || !row) {
        free(l1), free(row);
        return -1;
    }
    double noise_bundle = 0;
    for (int32_t r = 0; r < n; r++)
        for (int32_t b = 0; b < nb; b++) {
            double s = qscale(w, r, b), a = 0;
            for (int i = 0; i < BL_QBLOCK; i++) a += abs(qvalue(w, r, b * BL_QBLOCK + i));
            l1[(size_t)r * nb + b] = s * a;
            noise_bundle += s * s * BL_QBLOCK;
        }
    int32_t qg = 1;
    for (int32_t ng = 1; ng < nb; ng++) { /* fewest groups first; s' estimated from the l1 bound */
        int32_t g = (nb + ng - 1) / ng;
        double noise = 0;
        for (int32_t r = 0; r < n; r++)
            for (int32_t b0 = 0; b0 < nb; b0 += g) {
                int32_t nv = (b0 + g <= nb ? g : nb - b0) * BL_QBLOCK;
                double L = 0;
                for (int32_t b = b0; b < b0 + g && b < nb; b++) L += l1[(size_t)r * nb + b];
                double s = L / (QG_L1 - 0.5 * nv);
                noise += s * s * nv;
            }
        if (noise <= QG_NOISE * noise_bundle) {
            qg = g;
            break;
        }
    }
    free(l1);
    const int32_t ngr = (nb + qg - 1) / qg;
    w->qg = qg;
    w->pq = calloc((size_t)np * k * BL_PANEL, sizeof(int16_t));
    w->ps = calloc((size_t)np * ngr * BL_PANEL, sizeof(float));
    if (!w->pq || !w->ps) {
        free(row);
        return -1;
    }
    for (int32_t r = 0; r < n; r++) {
        int32_t p = r / BL_PANEL, c = r % BL_PANEL;
        int16_t *dq = w->pq + (size_t)p * k * BL_PANEL + c * 2; /* pq[p][i/2][c][i%2] */
        if (qg > 1) blk_weight_row(w, r, row);
        for (int32_t g = 0; g < ngr; g++) {
            int32_t i0 = g * qg * BL_QBLOCK, nv = (g + 1) * qg <= nb ? qg * BL_QBLOCK : k - i0;
            double s, L = 0, amax = 0;
            if (qg == 1) { /* the bundle's integers and scale */
                s = qscale(w, r, g);
            } else {
                for (int32_t i = i0; i < i0 + nv; i++) L += fabs(row[i]), amax = fabs(row[i]) > amax ? fabs(row[i]) : amax;
                s = group_scale(row + i0, nv, L, amax);
            }
            for (int32_t i = i0; i < i0 + nv; i++)
                dq[(size_t)(i / 2) * 2 * BL_PANEL + (i & 1)] =
                    qg == 1 ? (int16_t)qvalue(w, r, i) : s > 0 ? (int16_t)nearbyint(row[i] / s) : 0;
            w->ps[((size_t)p * ngr + g) * BL_PANEL + c] = (float)s;
        }
    }
    free(row);
    return 0;
}
#endif

int blk_weight_pack(blk_weight *w) {
#if BLK_SIMD
    const int32_t n = w->n, k = w->k, np = (n + BL_PANEL - 1) / BL_PANEL;
    if (w->dtype == BL_F32 || w->dtype == BL_F16) {
        float *row = malloc((size_t)k * sizeof(float));
        w->pf = calloc((size_t)np * k * BL_PANEL, sizeof(float));
        if (!row || !w->pf) {
            free(row);
            blk_weight_free(w);
            return -1;
        }
        for (int32_t r = 0; r < n; r++) { /* pf[p][k][c] = W[p*8+c][k] */
            blk_weight_row(w, r, row);
            float *dst = w->pf + (size_t)(r / BL_PANEL) * k * BL_PANEL + r % BL_PANEL;
            for (int32_t i = 0; i < k; i++) dst[(size_t)i * BL_PANEL] = row[i];
        }
        free(row);
    } else if (pack_groups(w)) {
        blk_weight_free(w);
        return -1;
    }
#else
    (void)w;
#endif
    return 0;
}

size_t blk_matmul_scratch_floats(int32_t T, int32_t k) {
    /* SIMD: rows padded to a multiple of 4, packed f32 [T4][k] or int16 [T4][k] + row scales [T4];
     * scalar: one weight row [k] */
    size_t T4 = ((size_t)T + 3) / 4 * 4;
    return T4 * ((size_t)k + 1) + (size_t)k + 16 + 32; /* + 32: mk_f32_long's block sums */
}

/* ------------------------------------------------------ scalar kernels */

static float dot_scalar(const float *a, const float *b, int32_t n) {
    float s[4] = {0, 0, 0, 0};
    int32_t i = 0;
    for (; i + 4 <= n; i += 4) {
        s[0] += a[i] * b[i];
        s[1] += a[i + 1] * b[i + 1];
        s[2] += a[i + 2] * b[i + 2];
        s[3] += a[i + 3] * b[i + 3];
    }
    for (; i < n; i++) s[0] += a[i] * b[i];
    return (s[0] + s[1]) + (s[2] + s[3]);
}

void blk_matmul_scalar(float *y, const float *x, int32_t T, const blk_weight *w, const float *bias, float *scratch) {
    const int32_t n = w->n, k = w->k;
    float *row = scratch; /* [k] one dequantized weight row */
    for (int32_t j = 0; j < n; j++) {
        blk_weight_row(w, j, row);
        float b = bias ? bias[j] : 0.0f;
        for (int32_t t = 0; t < T; t++) y[(size_t)t * n + j] = b + dot_scalar(x + (size_t)t * k, row, k);
    }
}

/* blk_matmul_nt packs x in chunks of this many rows (a multiple of 4). */
#define NT_ROWS 64

size_t blk_matmul_nt_scratch_floats(int32_t N, int32_t K) {
    /* B in panels [N/8][K][8], then one chunk of packed rows [NT_ROWS][K], then mk_f32_long's block sums [32] */
    /* blk_matmul_nt_q (SIMD): int16 panels and their block scales, one f32 panel, a chunk of quantized rows */
    size_t np = (size_t)(N + BL_PANEL - 1) / BL_PANEL, Kp = ((size_t)K + BL_QBLOCK - 1) / BL_QBLOCK * BL_QBLOCK;
    size_t f = np * BL_PANEL * K + (size_t)NT_ROWS * K + 16 + 32;
    size_t q = np * Kp * BL_PANEL / 2 + np * (Kp / BL_QBLOCK) * BL_PANEL + Kp * BL_PANEL + (size_t)NT_ROWS * (Kp / 2 + 1) + 16;
    return f > q ? f : q;
}

void blk_matmul_nt_scalar(float *y, int32_t ldy, const float *x, int32_t ldx, int32_t T, const float *b,
                         int32_t bn, int32_t bk, int32_t N, int32_t K, float *scratch) {
    (void)scratch;
    for (int32_t i = 0; i < T; i++)
        for (int32_t n = 0; n < N; n++) {
            float s = 0.0f;
            for (int32_t k = 0; k < K; k++) s += x[(size_t)i * ldx + k] * b[(size_t)n * bn + (size_t)k * bk];
            y[(size_t)i * ldy + n] = s;
        }
}

void blk_layernorm_scalar(float *x, const float *res, int32_t T, int32_t n, const float *g, const float *b,
                         float eps) {
    for (int32_t t = 0; t < T; t++) {
        float *r = x + (size_t)t * n;
        if (res)
            for (int32_t i = 0; i < n; i++) r[i] += res[(size_t)t * n + i];
        double mean = 0.0, var = 0.0;
        for (int32_t i = 0; i < n; i++) mean += r[i];
        mean /= n;
        for (int32_t i = 0; i < n; i++) var += (r[i] - mean) * (r[i] - mean);
        var /= n;
        float m = (float)mean, inv = (float)(1.0 / sqrt(var + eps));
        for (int32_t i = 0; i < n; i++) r[i] = (r[i] - m) * inv * g[i] + b[i];
    }
}

void blk_softmax_scalar(float *x, int32_t T, int32_t n, float scale) {
    for (int32_t t = 0; t < T; t++) {
        float *r = x + (size_t)t * n, mx = r[0];
        for (int32_t i = 1; i < n; i++) mx = r[i] > mx ? r[i] : mx;
        float sum = 0.0f;
        for (int32_t i = 0; i < n; i++) {
            r[i] = expf(scale * (r[i] - mx));
            sum += r[i];
        }
        float inv = 1.0f / sum;
        for (int32_t i = 0; i < n; i++) r[i] *= inv;
    }
}

void blk_activate_scalar(float *x, size_t n, int32_t act) {
    for (size_t i = 0; i < n; i++) {
        float v = x[i];
        if (act == BL_ACT_GELU)
            x[i] = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
        else if (act == BL_ACT_GELU_TANH)
            x[i] = 0.5f * v * (1.0f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)));
        else
            x[i] = v > 0.0f ? v : 0.0f;
    }
}

#if !BLK_SIMD
/* Scalar build: the scalar references are the kernels. */
void blk_matmul(float *y, const float *x, int32_t T, const blk_weight *w, const float *bias, float *scratch) {
    blk_matmul_scalar(y, x, T, w, bias, scratch);
}
void blk_matmul_act(float *y, const float *x, int32_t T, const blk_weight *w, const float *bias, int32_t act,
                   float *scratch) {
    blk_matmul_scalar(y, x, T, w, bias, scratch);
    if (act >= 0) blk_activate_scalar(y, (size_t)T * w->n, act);
}
void blk_matmul_shared(int n, float *const *y, const float *x, int32_t T, const blk_weight *const *w,
                      const float *const *bias, int32_t act, float *scratch) {
    for (int i = 0; i < n; i++) blk_matmul_act(y[i], x, T, w[i], bias[i], act, scratch);
}
void blk_matmul_nt(float *y, int32_t ldy, const float *x, int32_t ldx, int32_t T, const float *b, int32_t bn,
                  int32_t bk, int32_t N, int32_t K, float *scratch) {
    blk_matmul_nt_scalar(y, ldy, x, ldx, T, b, bn, bk, N, K, scratch);
}
void blk_matmul_nt_q(float *y, int32_t ldy, const float *x, int32_t ldx, int32_t T, const float *b, int32_t bn,
                     int32_t bk, int32_t N, int32_t K, float *scratch) {
    blk_matmul_nt_scalar(y, ldy, x, ldx, T, b, bn, bk, N, K, scratch);
}
void blk_layernorm(float *x, const float *res, int32_t T, int32_t n, const float *g, const float *b, float eps) {
    blk_layernorm_scalar(x, res, T, n, g, b, eps);
}
void blk_softmax(float *x, int32_t T, int32_t n, float scale) { blk_softmax_scalar(x, T, n, scale); }
void blk_activate(float *x, size_t n, int32_t act) { blk_activate_scalar(x, n, act); }
void blk_erf_vec(float *x, size_t n) {
    for (size_t i = 0; i < n; i++) x[i] = erff(x[i]);
}
void blk_exp_vec(float *x, size_t n) {
    for (size_t i = 0; i < n; i++) x[i] = expf(x[i]);
}
#else
/* -------------------------------------------------------- SIMD kernels */

#define INLINE static inline __attribute__((always_inline))

/* a * b + c: one f32x4.relaxed_madd in a relaxed-SIMD build (-mrelaxed-simd;
 * V8 runs it as a fused multiply-add where the CPU has FMA), else mul + add. */
#ifdef __wasm_relaxed_simd__
#define F32_MADD(a, b, c) wasm_f32x4_relaxed_madd((a), (b), (c))
#else
#define F32_MADD(a, b, c) wasm_f32x4_add((c), wasm_f32x4_mul((a), (b)))
#endif
#ifdef __clang__
#define NO_UNROLL _Pragma("clang loop unroll(disable)")
#else
#define NO_UNROLL _Pragma("GCC unroll 1")
#endif

/* exp(x) for x in [-87.3, 88.3] (clamped to it; the callers need x <= 0 or
 * only saturation above): 2^n * p(r), r = x - n ln2, |r| <= ln2/2,
 * p(r) = 1 + r + r^2 q(r), q of degree 4: relative-weighted least squares
 * fit of (exp(r) - 1 - r) / r^2 in double (numpy, reweighted towards
 * minimax); max relative error 1.2e-7 evaluated in f32, as the Taylor series
 * to r^7 it replaced, with 6 mul + 6 add instead of 9 + 7.
 * n is rounded with the 1.5 * 2^23 trick: t = x log2(e) + 1.5 * 2^23 holds
 * round(x log2 e) in its low mantissa bits, so 2^n is (bits(t) + 127) << 23
 * (the high bits shift out) and no float -> int conversion is needed.
 * Polynomials here use Estrin's scheme: these loops are bound by latency
 * (how many operations the out-of-order window holds), not operation count. */
INLINE v128_t v_exp_in_range(v128_t x) { /* x in [-87.3, 88.3] */
    const v128_t magic = wasm_f32x4_splat(12582912.0f); /* 1.5 * 2^23 */
    v128_t t = wasm_f32x4_add(wasm_f32x4_mul(x, wasm_f32x4_splat(1.44269504088896341f)), magic);
    v128_t n = wasm_f32x4_sub(t, magic);
    v128_t r = wasm_f32x4_sub(x, wasm_f32x4_mul(n, wasm_f32x4_splat(0.693359375f)));
    r = wasm_f32x4_sub(r, wasm_f32x4_mul(n, wasm_f32x4_splat(-2.12194440e-4f)));
    v128_t r2 = wasm_f32x4_mul(r, r), r4 = wasm_f32x4_mul(r2, r2);
    v128_t q01 = wasm_f32x4_add(wasm_f32x4_splat(0.49999967217445374f), wasm_f32x4_mul(r, wasm_f32x4_splat(0.16666479408740997f)));
    v128_t q23 = wasm_f32x4_add(wasm_f32x4_splat(0.04167356714606285f), wasm_f32x4_mul(r, wasm_f32x4_splat(0.008372685872018337f)));
    v128_t q = wasm_f32x4_add(wasm_f32x4_add(q01, wasm_f32x4_mul(q23, r2)),
                              wasm_f32x4_mul(wasm_f32x4_splat(0.0013571209274232388f), r4));
    v128_t p = wasm_f32x4_add(wasm_f32x4_add(wasm_f32x4_splat(1.0f), r), wasm_f32x4_mul(q, r2));
    v128_t e = wasm_i32x4_shl(wasm_i32x4_add(t, wasm_i32x4_splat(127)), 23);
    return wasm_f32x4_mul(p, e);
}

/* pmin/pmax: one instruction each (f32x4.min/max add NaN handling) */
INLINE v128_t v_exp(v128_t x) {
    return v_exp_in_range(wasm_f32x4_pmin(wasm_f32x4_pmax(x, wasm_f32x4_splat(-87.3f)), wasm_f32x4_splat(88.3f)));
}

/* exp(x) for x <= 0 (one clamp less on the dependency chain). */
INLINE v128_t v_exp_nonpos(v128_t x) { return v_exp_in_range(wasm_f32x4_pmax(x, wasm_f32x4_splat(-87.3f))); }

/* erf(x) = x * P(x^2) / Q(x^2) with x clamped to [-3.92, 3.92] (erf(3.92)
 * = 1 - 1.6e-8: 1.0f). Coefficients: tools/fit_erf.py (least squares in
 * double with Lawson reweighting); max abs error 4.4e-8 in double, 3.5e-7
 * evaluated in f32 (tests/kernels.test.mjs checks it against libm erff).
 * 29 operations, one of them a division, and no branch or select: about half
 * of the two piecewise polynomials it replaced (GELU over the feed-forward
 * width was ~5 % of a q8 forward pass; now ~3 %). P and Q by Estrin's
 * scheme, not Horner's: two more multiplies, half the dependency depth
 * (1.007x on a q8 forward at 128 tokens). */
static const float ERF_P[7] = {1.1283787488937378f,    0.20616109669208527f,     0.05140385776758194f,
                               0.003974792547523975f,  0.00014902249677106738f,  -1.9942413018725347e-06f,
                               1.9917166582672508e-08f};
static const float ERF_Q[5] = {1.0f, 0.5160343050956726f, 0.1175842136144638f, 0.014893312938511372f,
                               0.0010245470330119133f};

INLINE v128_t v_erf(v128_t x) {
    x = wasm_f32x4_pmin(wasm_f32x4_pmax(x, wasm_f32x4_splat(-3.92f)), wasm_f32x4_splat(3.92f));
    v128_t t = wasm_f32x4_mul(x, x);
#define C(c, i) wasm_f32x4_splat(c[i])
#define L(c, i) wasm_f32x4_add(C(c, i), wasm_f32x4_mul(C(c, i + 1), t)) /* c[i] + c[i+1] t */
    v128_t t2 = wasm_f32x4_mul(t, t), t4 = wasm_f32x4_mul(t2, t2);
    v128_t p = wasm_f32x4_add(wasm_f32x4_add(L(ERF_P, 0), wasm_f32x4_mul(t2, L(ERF_P, 2))),
                              wasm_f32x4_mul(t4, wasm_f32x4_add(L(ERF_P, 4), wasm_f32x4_mul(C(ERF_P, 6), t2))));
    v128_t q = wasm_f32x4_add(wasm_f32x4_add(L(ERF_Q, 0), wasm_f32x4_mul(t2, L(ERF_Q, 2))),
                              wasm_f32x4_mul(t4, C(ERF_Q, 4)));
#undef L
#undef C
    v128_t r = wasm_f32x4_div(wasm_f32x4_mul(x, p), q); /* within 1.2e-7 of [-1, 1] at the clamp */
    return wasm_f32x4_pmin(wasm_f32x4_pmax(r, wasm_f32x4_splat(-1.0f)), wasm_f32x4_splat(1.0f));
}

void blk_erf_vec(float *x, size_t n) {
    size_t i = 0;
    for (; i + 4 <= n; i += 4) wasm_v128_store(x + i, v_erf(wasm_v128_load(x + i)));
    for (; i < n; i++) {
        float t[4] = {x[i], 0, 0, 0};
        wasm_v128_store(t, v_erf(wasm_v128_load(t)));
        x[i] = t[0];
    }
}

void blk_exp_vec(float *x, size_t n) {
    size_t i = 0;
    for (; i + 4 <= n; i += 4) wasm_v128_store(x + i, v_exp(wasm_v128_load(x + i)));
    for (; i < n; i++) {
        float t[4] = {x[i], 0, 0, 0};
        wasm_v128_store(t, v_exp(wasm_v128_load(t)));
        x[i] = t[0];
    }
}

INLINE float hsum(v128_t v) {
    v = wasm_f32x4_add(v, wasm_i32x4_shuffle(v, v, 2, 3, 0, 1));
    v = wasm_f32x4_add(v, wasm_i32x4_shuffle(v, v, 1, 0, 3, 2));
    return wasm_f32x4_extract_lane(v, 0);
}

INLINE float hmax(v128_t v) { /* inputs are not NaN: pmax is enough */
    v = wasm_f32x4_pmax(v, wasm_i32x4_shuffle(v, v, 2, 3, 0, 1));
    v = wasm_f32x4_pmax(v, wasm_i32x4_shuffle(v, v, 1, 0, 3, 2));
    return wasm_f32x4_extract_lane(v, 0);
}

INLINE v128_t v_act(v128_t v, int32_t act) {
    const v128_t half = wasm_f32x4_splat(0.5f), one = wasm_f32x4_splat(1.0f);
    if (act == BL_ACT_GELU)
        return wasm_f32x4_mul(wasm_f32x4_mul(half, v),
                              wasm_f32x4_add(one, v_erf(wasm_f32x4_mul(v, wasm_f32x4_splat(0.70710678118654752f)))));
    if (act == BL_ACT_GELU_TANH) { /* tanh(u) = 1 - 2 / (exp(2u) + 1) */
        v128_t u = wasm_f32x4_mul(
            wasm_f32x4_splat(0.7978845608028654f),
            wasm_f32x4_add(v, wasm_f32x4_mul(wasm_f32x4_splat(0.044715f), wasm_f32x4_mul(v, wasm_f32x4_mul(v, v)))));
        v128_t e = v_exp(wasm_f32x4_add(u, u));
        v128_t th = wasm_f32x4_sub(one, wasm_f32x4_div(wasm_f32x4_splat(2.0f), wasm_f32x4_add(e, one)));
        return wasm_f32x4_mul(wasm_f32x4_mul(half, v), wasm_f32x4_add(one, th));
    }
    return wasm_f32x4_pmax(v, wasm_f32x4_splat(0.0f));
}

/* Write one row of 8 sums (+ bias, then activation act unless act < 0) to
 * y, only the first `cols` columns. */
INLINE void store_row(float *y, v128_t a0, v128_t a1, const float *bias, int cols, int32_t act) {
    if (cols == BL_PANEL) {
        if (bias) {
            a0 = wasm_f32x4_add(a0, wasm_v128_load(bias));
            a1 = wasm_f32x4_add(a1, wasm_v128_load(bias + 4));
        }
        if (act >= 0) {
            a0 = v_act(a0, act);
            a1 = v_act(a1, act);
        }
        wasm_v128_store(y, a0);
        wasm_v128_store(y + 4, a1);
    } else {
        float t[8];
        if (bias) {
            for (int c = 0; c < BL_PANEL; c++) t[c] = c < cols ? bias[c] : 0.0f;
            a0 = wasm_f32x4_add(a0, wasm_v128_load(t));
            a1 = wasm_f32x4_add(a1, wasm_v128_load(t + 4));
        }
        if (act >= 0) {
            a0 = v_act(a0, act);
            a1 = v_act(a1, act);
        }
        wasm_v128_store(t, a0);
        wasm_v128_store(t + 4, a1);
        for (int c = 0; c < cols; c++) y[c] = t[c];
    }
}

/* 4x4 transpose of 32-bit lanes: out[i] = lane i of a, b, c, d. */
INLINE void transpose4(v128_t *a, v128_t *b, v128_t *c, v128_t *d) {
    v128_t t0 = wasm_i32x4_shuffle(*a, *b, 0, 4, 1, 5), t1 = wasm_i32x4_shuffle(*a, *b, 2, 6, 3, 7);
    v128_t t2 = wasm_i32x4_shuffle(*c, *d, 0, 4, 1, 5), t3 = wasm_i32x4_shuffle(*c, *d, 2, 6, 3, 7);
    *a = wasm_i32x4_shuffle(t0, t2, 0, 1, 4, 5);
    *b = wasm_i32x4_shuffle(t0, t2, 2, 3, 6, 7);
    *c = wasm_i32x4_shuffle(t1, t3, 0, 1, 4, 5);
    *d = wasm_i32x4_shuffle(t1, t3, 2, 3, 6, 7);
}

/* Interleave rows in groups of 4: xp[g][k][r] = x[4g + r][k] for rows
 * t0 <= 4g + r < T (stride ldx), zero for rows past T. So the micro-kernel
 * reads the 4 rows' x[k] from one pointer at offsets 0, 4, 8, 12 bytes. */
static void pack_rows_f32(float *xp, const float *x, int32_t ldx, int32_t T, int32_t K) {
    for (int32_t t = 0; t < T; t += 4, xp += (size_t)4 * K) {
        const float *r[4];
        for (int i = 0; i < 4; i++) r[i] = t + i < T ? x + (size_t)(t + i) * ldx : NULL;
        int32_t k = 0;
        if (t + 4 <= T)
            for (; k + 4 <= K; k += 4) {
                v128_t a = wasm_v128_load(r[0] + k), b = wasm_v128_load(r[1] + k), c = wasm_v128_load(r[2] + k),
                       d = wasm_v128_load(r[3] + k);
                transpose4(&a, &b, &c, &d);
                wasm_v128_store(xp + 4 * k, a);
                wasm_v128_store(xp + 4 * k + 4, b);
                wasm_v128_store(xp + 4 * k + 8, c);
                wasm_v128_store(xp + 4 * k + 12, d);
            }
        for (; k < K; k++)
            for (int i = 0; i < 4; i++) xp[4 * k + i] = r[i] ? r[i][k] : 0.0f;
    }
}

/* One k step of the 4 x 8 f32 tile (accumulators a00..a31 in scope):
 * 2 weight loads, 4 splat loads, 8 mul + 8 add. A macro, not a function, so
 * both kernels below get exactly this register allocation from V8. */
#define F32_TILE_STEP(xp, pw)                                                   \
    do {                                                                        \
        v128_t w0_ = wasm_v128_load(pw), w1_ = wasm_v128_load((pw) + 4), s_;    \
        s_ = wasm_v128_load32_splat(xp);                                        \
        a00 = F32_MADD(s_, w0_, a00);                     \
        a01 = F32_MADD(s_, w1_, a01);                     \
        s_ = wasm_v128_load32_splat((xp) + 1);                                  \
        a10 = F32_MADD(s_, w0_, a10);                     \
        a11 = F32_MADD(s_, w1_, a11);                     \
        s_ = wasm_v128_load32_splat((xp) + 2);                                  \
        a20 = F32_MADD(s_, w0_, a20);                     \
        a21 = F32_MADD(s_, w1_, a21);                     \
        s_ = wasm_v128_load32_splat((xp) + 3);                                  \
        a30 = F32_MADD(s_, w0_, a30);                     \
        a31 = F32_MADD(s_, w1_, a31);                     \
    } while (0)

/* Write the first `rows` rows of the tile (bias, activation) into y. */
#define F32_TILE_STORE()                                                        \
    do {                                                                        \
        store_row(y, a00, a01, bias, cols, act);                                \
        if (rows > 1) store_row(y + ldy, a10, a11, bias, cols, act);            \
        if (rows > 2) store_row(y + 2 * (size_t)ldy, a20, a21, bias, cols, act);\
        if (rows > 3) store_row(y + 3 * (size_t)ldy, a30, a31, bias, cols, act);\
    } while (0)

/* 4 interleaved rows xp[K][4] times one f32 panel pw[K][8]: 8 sums in
 * registers; one k step is 2 weight loads, 4 splat loads, 8 mul + 8 add.
 * Writes the first `rows` rows and `cols` columns of y (stride ldy). */
INLINE void mk_f32(float *y, int32_t ldy, const float *xp, const float *pw, int32_t K, const float *bias, int rows,
                   int cols, int32_t act) {
    v128_t a00 = wasm_f32x4_splat(0), a01 = a00, a10 = a00, a11 = a00, a20 = a00, a21 = a00, a30 = a00, a31 = a00;
    for (const float *end = xp + (size_t)4 * K; xp != end; xp += 4, pw += 8) {
        F32_TILE_STEP(xp, pw);
    }
    F32_TILE_STORE();
}

/* mk_f32 for long sums (used when K > 2 * F32_KBLOCK): blocked accumulation.
 * The registers sum at most F32_KBLOCK products, then are added into
 * part[8][4] (memory: no register is free), so rounding error grows with
 * F32_KBLOCK + K / F32_KBLOCK terms instead of K (the scalar reference's 4
 * partial sums: K / 4). One running sum put the bert-base-shaped f32
 * attention at 9.6e-6 vs Hugging Face (bar 1e-5); blocked: 4.8e-6.
 * Measured: V8 runs this kernel ~5% slower than mk_f32 even with one flush,
 * hence mk_f32 for K <= 512 (all attention products at <= 512 tokens,
 * 384-wide projections); part must not alias y, xp or pw.
 * Writes the first `rows` rows and `cols` columns of y (stride ldy). */
#define F32_KBLOCK 256
INLINE void mk_f32_long(float *y, int32_t ldy, const float *xp, const float *pw, int32_t K, const float *bias, int rows,
                   int cols, int32_t act, float *part) {
    v128_t a00, a01, a10, a11, a20, a21, a30, a31;
    const float *end = xp + (size_t)4 * K;
    int blocks = 0; /* finished k-blocks summed in part[8][4] */
    for (;;) {
        const float *stop = end - xp > 4 * F32_KBLOCK ? xp + 4 * F32_KBLOCK : end;
        a00 = wasm_f32x4_splat(0), a01 = a00, a10 = a00, a11 = a00, a20 = a00, a21 = a00, a30 = a00, a31 = a00;
        for (; xp != stop; xp += 4, pw += 8) {
            F32_TILE_STEP(xp, pw);
        }
        if (stop == end) break;
#define PART(i, a) wasm_v128_store(part + 4 * (i), blocks ? wasm_f32x4_add(wasm_v128_load(part + 4 * (i)), a) : a)
        PART(0, a00), PART(1, a01), PART(2, a10), PART(3, a11), PART(4, a20), PART(5, a21), PART(6, a30),
            PART(7, a31);
#undef PART
        blocks++;
        /* opaque to the optimizer: part[] is re-read from memory rather than
         * kept in registers across the k loop (none are free there) */
        __asm__ volatile("" ::: "memory");
    }
    if (blocks) {
#define PART(i, a) a = wasm_f32x4_add(wasm_v128_load(part + 4 * (i)), a)
        PART(0, a00), PART(1, a01), PART(2, a10), PART(3, a11), PART(4, a20), PART(5, a21), PART(6, a30),
            PART(7, a31);
#undef PART
    }
    F32_TILE_STORE();
}

#if !defined(__wasm_simd128__)
/* ------------------------------------- x86-64: AVX2+FMA micro-kernels
 * The same packed layouts as mk_f32 / mk_q8, 8 columns per 256-bit register,
 * and two panels (16 columns) per call: a 4 x 16 tile is 8 accumulators, so
 * 8 independent FMA chains hide FMA latency (4 x 8 would leave half the FMA
 * units idle), and each broadcast x value feeds 2 products instead of 1.
 * The panel pointer of the second half may repeat the first (an odd last
 * panel: cols1 = 0, nothing of it is stored). Results go through store_row
 * (bias, activation) as two 128-bit halves. Chosen at run time
 * (blk_have_avx2); compiled with target attributes, so the binary still runs
 * on an SSE4.1-only x86-64. */
/* loops over the tile's rows and halves: unrolled, so the tile lives in registers */
#define UNROLL _Pragma("GCC unroll 8")
#define AVX2_FN static __attribute__((target("avx2,fma"), noinline))
#define LO128(v) _mm_castps_si128(_mm256_castps256_ps128(v))
#define HI128(v) _mm_castps_si128(_mm256_extractf128_ps((v), 1))

/* Store the rows < rows of a 4 x 16 tile a[r][half] scaled by sx[r] (sx NULL: 1). */
#define AVX2_TILE_STORE(a, sx)                                                                              \
    UNROLL for (int r_ = 0; r_ < 4; r_++) if (r_ < rows) {                                                  \
        __m256 s_ = _mm256_set1_ps((sx) ? (sx)[r_] : 1.0f), lo_ = _mm256_mul_ps(a[r_][0], s_),             \
               hi_ = _mm256_mul_ps(a[r_][1], s_);                                                          \
        float *yr_ = y + (size_t)r_ * ldy;                                                                  \
        store_row(yr_, LO128(lo_), HI128(lo_), bias, cols0, act);                                           \
        if (cols1) store_row(yr_ + BL_PANEL, LO128(hi_), HI128(hi_), bias ? bias + BL_PANEL : NULL, cols1, act); \
    }

/* 4 interleaved rows xp[K][4] times panels pw0, pw1 ([K][8] each). Sums of
 * at most F32_KBLOCK products stay in registers, then go into part (the
 * blocked accumulation of mk_f32_long; one block when K <= 2 * F32_KBLOCK). */
INLINE __attribute__((target("avx2,fma"))) void mk_f32_avx2(float *y, int32_t ldy, const float *xp, const float *pw0,
                                                            const float *pw1, int32_t K, const float *bias, int rows,
                                                            int cols0, int cols1, int32_t act) {
    __m256 part[4][2], a[4][2];
    const float *end = xp + (size_t)4 * K;
    int blocks = 0;
    for (;;) {
        const float *stop = end - xp > 4 * F32_KBLOCK && K > 2 * F32_KBLOCK ? xp + 4 * F32_KBLOCK : end;
        UNROLL for (int r = 0; r < 4; r++) a[r][0] = a[r][1] = _mm256_setzero_ps();
        for (; xp != stop; xp += 4, pw0 += BL_PANEL, pw1 += BL_PANEL) {
            __m256 w0 = _mm256_loadu_ps(pw0), w1 = _mm256_loadu_ps(pw1);
            UNROLL for (int r = 0; r < 4; r++) {
                __m256 s = _mm256_broadcast_ss(xp + r);
                a[r][0] = _mm256_fmadd_ps(s, w0, a[r][0]);
                a[r][1] = _mm256_fmadd_ps(s, w1, a[r][1]);
            }
        }
        if (stop == end) break;
        UNROLL for (int r = 0; r < 4; r++)
            UNROLL for (int h = 0; h < 2; h++) part[r][h] = blocks ? _mm256_add_ps(part[r][h], a[r][h]) : a[r][h];
        blocks++;
    }
    if (blocks)
        UNROLL for (int r = 0; r < 4; r++)
            UNROLL for (int h = 0; h < 2; h++) a[r][h] = _mm256_add_ps(part[r][h], a[r][h]);
    AVX2_TILE_STORE(a, (const float *)NULL)
}

AVX2_FN void matmul_f32_packed_avx2(float *y, int32_t ldy, const float *xp, int32_t T, const float *pf, int32_t N,
                                    int32_t K, const float *bias, int32_t act) {
    const int32_t np = (N + BL_PANEL - 1) / BL_PANEL;
    for (int32_t p = 0; p < np; p += 2) {
        const float *pw0 = pf + (size_t)p * K * BL_PANEL, *pw1 = p + 1 < np ? pw0 + (size_t)K * BL_PANEL : pw0;
        const float *pb = bias ? bias + p * BL_PANEL : NULL;
        int cols0 = N - p * BL_PANEL < BL_PANEL ? N - p * BL_PANEL : BL_PANEL;
        int cols1 = p + 1 >= np ? 0 : N - (p + 1) * BL_PANEL < BL_PANEL ? N - (p + 1) * BL_PANEL : BL_PANEL;
        float *yp = y + p * BL_PANEL;
        if (act < 0) /* a constant -1 leaves the activation code out of the common instance */
            for (int32_t t = 0; t < T; t += 4)
                mk_f32_avx2(yp + (size_t)t * ldy, ldy, xp + (size_t)t * K, pw0, pw1, K, pb, T - t < 4 ? T - t : 4,
                            cols0, cols1, -1);
        else
            for (int32_t t = 0; t < T; t += 4)
                mk_f32_avx2(yp + (size_t)t * ldy, ldy, xp + (size_t)t * K, pw0, pw1, K, pb, T - t < 4 ? T - t : 4,
                            cols0, cols1, act);
    }
}

/* 4 rows of int16 activation pairs xq[K/2][4] times q8 panels pq0, pq1
 * ([K/2][8][2] int16 each; 16 int16 = one 256-bit load per pair), scales
 * ps0, ps1 ([K/gk][8], one per group of gk values of k, the last group
 * possibly shorter); sx[r] = row r's activation scale. */
INLINE __attribute__((target("avx2,fma"))) void mk_q8_avx2(float *y, int32_t ldy, const int32_t *xq, const float *sx,
                                                           const int16_t *pq0, const int16_t *pq1, const float *ps0,
                                                           const float *ps1, int32_t K, int32_t gk,
                                                           const float *bias, int rows, int cols0, int cols1,
                                                           int32_t act) {
    __m256 f[4][2];
    UNROLL for (int r = 0; r < 4; r++) f[r][0] = f[r][1] = _mm256_setzero_ps();
    for (int32_t k0 = 0; k0 < K; k0 += gk, ps0 += BL_PANEL, ps1 += BL_PANEL) {
        __m256i i[4][2];
        const int32_t k1 = K - k0 < gk ? K : k0 + gk;
        UNROLL for (int r = 0; r < 4; r++) i[r][0] = i[r][1] = _mm256_setzero_si256();
        for (int32_t kb = k0; kb < k1; kb += BL_QBLOCK) /* a constant trip count inside: unrolled by the compiler */
            for (int j = 0; j < BL_QBLOCK / 2; j++, xq += 4, pq0 += 2 * BL_PANEL, pq1 += 2 * BL_PANEL) {
                __m256i w0 = _mm256_loadu_si256((const __m256i *)pq0), w1 = _mm256_loadu_si256((const __m256i *)pq1);
                UNROLL for (int r = 0; r < 4; r++) {
                    __m256i s = _mm256_set1_epi32(xq[r]);
                    i[r][0] = _mm256_add_epi32(i[r][0], _mm256_madd_epi16(s, w0));
                    i[r][1] = _mm256_add_epi32(i[r][1], _mm256_madd_epi16(s, w1));
                }
            }
        __m256 s0 = _mm256_loadu_ps(ps0), s1 = _mm256_loadu_ps(ps1);
        UNROLL for (int r = 0; r < 4; r++) {
            f[r][0] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(i[r][0]), s0, f[r][0]);
            f[r][1] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(i[r][1]), s1, f[r][1]);
        }
    }
    AVX2_TILE_STORE(f, sx)
}

AVX2_FN void matmul_q8_quantized_avx2(float *y, int32_t ldy, const int32_t *xq, const float *sx, int32_t T,
                                      const blk_weight *w, const float *bias, int32_t act) {
    const int32_t N = w->n, K = w->k, gk = w->qg * BL_QBLOCK, nb = (K + gk - 1) / gk,
                  np = (N + BL_PANEL - 1) / BL_PANEL;
    for (int32_t p = 0; p < np; p += 2) {
        const int p1 = p + 1 < np ? p + 1 : p;
        const int16_t *pq0 = w->pq + (size_t)p * K * BL_PANEL, *pq1 = w->pq + (size_t)p1 * K * BL_PANEL;
        const float *ps0 = w->ps + (size_t)p * nb * BL_PANEL, *ps1 = w->ps + (size_t)p1 * nb * BL_PANEL;
        const float *pb = bias ? bias + p * BL_PANEL : NULL;
        int cols0 = N - p * BL_PANEL < BL_PANEL ? N - p * BL_PANEL : BL_PANEL;
        int cols1 = p1 == p ? 0 : N - p1 * BL_PANEL < BL_PANEL ? N - p1 * BL_PANEL : BL_PANEL;
        float *yp = y + p * BL_PANEL;
        if (act < 0)
            for (int32_t t = 0; t < T; t += 4)
                mk_q8_avx2(yp + (size_t)t * ldy, ldy, xq + (size_t)t * K / 2, sx + t, pq0, pq1, ps0, ps1, K, gk, pb,
                           T - t < 4 ? T - t : 4, cols0, cols1, -1);
        else
            for (int32_t t = 0; t < T; t += 4)
                mk_q8_avx2(yp + (size_t)t * ldy, ldy, xq + (size_t)t * K / 2, sx + t, pq0, pq1, ps0, ps1, K, gk, pb,
                           T - t < 4 ? T - t : 4, cols0, cols1, act);
    }
}
#undef LO128
#undef UNROLL
#undef HI128
#endif

/* y[T][N] (stride ldy) = rows packed by pack_rows_f32 (xp) times panels
 * pf[np][K][8]. Each panel stays in cache while all row groups pass it. */
static void matmul_f32_packed(float *y, int32_t ldy, const float *xp, int32_t T, const float *pf, int32_t N,
                              int32_t K, const float *bias, int32_t act, float *part) {
#if !defined(__wasm_simd128__)
    if (blk_have_avx2()) {
        (void)part;
        matmul_f32_packed_avx2(y, ldy, xp, T, pf, N, K, bias, act);
        return;
    }
#endif
    for (int32_t p = 0; p * BL_PANEL < N; p++) {
        const float *pw = pf + (size_t)p * K * BL_PANEL;
        const float *pb = bias ? bias + p * BL_PANEL : NULL;
        int cols = N - p * BL_PANEL < BL_PANEL ? N - p * BL_PANEL : BL_PANEL;
        float *yp = y + p * BL_PANEL;
        /* a constant -1 leaves the activation code out of the common instance */
        if (K > 2 * F32_KBLOCK)
            for (int32_t t = 0; t < T; t += 4)
                mk_f32_long(yp + (size_t)t * ldy, ldy, xp + (size_t)t * K, pw, K, pb, T - t < 4 ? T - t : 4, cols, act,
                            part);
        else if (act < 0)
            for (int32_t t = 0; t < T; t += 4)
                mk_f32(yp + (size_t)t * ldy, ldy, xp + (size_t)t * K, pw, K, pb, T - t < 4 ? T - t : 4, cols, -1);
        else
            for (int32_t t = 0; t < T; t += 4)
                mk_f32(yp + (size_t)t * ldy, ldy, xp + (size_t)t * K, pw, K, pb, T - t < 4 ? T - t : 4, cols, act);
    }
}

/* 4 interleaved rows of int16 activation pairs xq[K/2][4] (one i32 per row
 * and pair) times one int16 panel pq[K/2][8][2] with scales ps[K/gk][8] (one
 * per group of gk values of k, the last possibly shorter); sx[r] is row r's scale. */
INLINE void mk_q8(float *y, int32_t ldy, const int32_t *xq, const float *sx, const int16_t *pq, const float *ps,
                  int32_t K, int32_t gk, const float *bias, int rows, int cols, int32_t act) {
    v128_t f00 = wasm_f32x4_splat(0), f01 = f00, f10 = f00, f11 = f00, f20 = f00, f21 = f00, f30 = f00, f31 = f00;
    for (int32_t k0 = 0; k0 < K; k0 += gk, ps += BL_PANEL) {
        const int32_t steps = (K - k0 < gk ? K - k0 : gk) / 2;
        /* one step = one pair (k, k+1): 8 dot products of 4 columns; the
         * group's first step initializes the sums (no zeroing, no adds) */
#define Q8_STEP(ACC)                                                                          \
    do {                                                                                      \
        v128_t w0 = wasm_v128_load(pq), w1 = wasm_v128_load(pq + 8), s;                      \
        s = wasm_v128_load32_splat(xq);                                                       \
        ACC(i00, wasm_i32x4_dot_i16x8(s, w0));                                                \
        ACC(i01, wasm_i32x4_dot_i16x8(s, w1));                                                \
        s = wasm_v128_load32_splat(xq + 1);                                                   \
        ACC(i10, wasm_i32x4_dot_i16x8(s, w0));                                                \
        ACC(i11, wasm_i32x4_dot_i16x8(s, w1));                                                \
        s = wasm_v128_load32_splat(xq + 2);                                                   \
        ACC(i20, wasm_i32x4_dot_i16x8(s, w0));                                                \
        ACC(i21, wasm_i32x4_dot_i16x8(s, w1));                                                \
        s = wasm_v128_load32_splat(xq + 3);                                                   \
        ACC(i30, wasm_i32x4_dot_i16x8(s, w0));                                                \
        ACC(i31, wasm_i32x4_dot_i16x8(s, w1));                                                \
    } while (0)
#define SET(a, d) a = (d)
#define ADD(a, d) a = wasm_i32x4_add(a, (d))
        v128_t i00, i01, i10, i11, i20, i21, i30, i31;
        Q8_STEP(SET);
        xq += 4;
        pq += 16;
        NO_UNROLL
        for (const int32_t *end = xq + 4 * (steps - 1); xq != end; xq += 4, pq += 16) Q8_STEP(ADD);
#undef SET
#undef ADD
#undef Q8_STEP
        v128_t s0 = wasm_v128_load(ps), s1 = wasm_v128_load(ps + 4);
        f00 = F32_MADD(wasm_f32x4_convert_i32x4(i00), s0, f00);
        f01 = F32_MADD(wasm_f32x4_convert_i32x4(i01), s1, f01);
        f10 = F32_MADD(wasm_f32x4_convert_i32x4(i10), s0, f10);
        f11 = F32_MADD(wasm_f32x4_convert_i32x4(i11), s1, f11);
        f20 = F32_MADD(wasm_f32x4_convert_i32x4(i20), s0, f20);
        f21 = F32_MADD(wasm_f32x4_convert_i32x4(i21), s1, f21);
        f30 = F32_MADD(wasm_f32x4_convert_i32x4(i30), s0, f30);
        f31 = F32_MADD(wasm_f32x4_convert_i32x4(i31), s1, f31);
    }
    v128_t s;
    s = wasm_f32x4_splat(sx[0]);
    store_row(y, wasm_f32x4_mul(f00, s), wasm_f32x4_mul(f01, s), bias, cols, act);
    if (rows > 1) {
        s = wasm_f32x4_splat(sx[1]);
        store_row(y + ldy, wasm_f32x4_mul(f10, s), wasm_f32x4_mul(f11, s), bias, cols, act);
    }
    if (rows > 2) {
        s = wasm_f32x4_splat(sx[2]);
        store_row(y + 2 * (size_t)ldy, wasm_f32x4_mul(f20, s), wasm_f32x4_mul(f21, s), bias, cols, act);
    }
    if (rows > 3) {
        s = wasm_f32x4_splat(sx[3]);
        store_row(y + 3 * (size_t)ldy, wasm_f32x4_mul(f30, s), wasm_f32x4_mul(f31, s), bias, cols, act);
    }
}

/* round(v) as int32 for |v| < 2^22: adding 1.5 * 2^23 leaves the integer,
 * rounded to nearest even as f32x4.nearest does, in the low mantissa bits.
 * Two cheap operations instead of nearest + trunc_sat (V8 guards the
 * latter against NaN and overflow with several instructions). */
INLINE v128_t round_small(v128_t v) {
    return wasm_i32x4_sub(wasm_f32x4_add(v, wasm_f32x4_splat(12582912.0f)), wasm_i32x4_splat(0x4B400000));
}

/* max |x[i]| over n values; four independent pmax chains (one chain waits
 * on pmax's latency for every vector). */
INLINE float absmax(const float *x, int32_t n) {
    v128_t m0 = wasm_f32x4_splat(0), m1 = m0, m2 = m0, m3 = m0;
    int32_t i = 0;
    for (; i + 16 <= n; i += 16) {
        m0 = wasm_f32x4_pmax(m0, wasm_f32x4_abs(wasm_v128_load(x + i)));
        m1 = wasm_f32x4_pmax(m1, wasm_f32x4_abs(wasm_v128_load(x + i + 4)));
        m2 = wasm_f32x4_pmax(m2, wasm_f32x4_abs(wasm_v128_load(x + i + 8)));
        m3 = wasm_f32x4_pmax(m3, wasm_f32x4_abs(wasm_v128_load(x + i + 12)));
    }
    for (; i + 4 <= n; i += 4) m0 = wasm_f32x4_pmax(m0, wasm_f32x4_abs(wasm_v128_load(x + i)));
    float amax = hmax(wasm_f32x4_pmax(wasm_f32x4_pmax(m0, m1), wasm_f32x4_pmax(m2, m3)));
    for (; i < n; i++) amax = fabsf(x[i]) > amax ? fabsf(x[i]) : amax;
    return amax;
}

/* q[i] = 4 int16 pairs of row i -> dst[4 pairs][4 rows] (one i32 per row and pair). */
INLINE void store_pairs(int32_t *dst, v128_t q[4]) {
    transpose4(&q[0], &q[1], &q[2], &q[3]);
    wasm_v128_store(dst, q[0]);
    wasm_v128_store(dst + 4, q[1]);
    wasm_v128_store(dst + 8, q[2]);
    wasm_v128_store(dst + 12, q[3]);
}

/* Quantize rows of x (T rows of K values, stride ldx) to integers with
 * scale max|row| / qmax (qmax <= 32767) into xq[T4/4][Kp/2][4] (row groups
 * of 4 interleaved by pairs, as mk_q8 reads them; rows past T and values
 * past K are zero). sx[t] = row t's scale. Kp % 8 == 0, K <= Kp. */
static void quantize_rows_ld(int32_t *xq, float *sx, const float *x, int32_t ldx, int32_t T, int32_t K, int32_t Kp,
                             float qmax) {
    for (int32_t t = 0; t < T; t += 4, xq += (size_t)2 * Kp) {
        const float *r[4];
        v128_t inv[4];
        for (int i = 0; i < 4; i++) {
            r[i] = t + i < T ? x + (size_t)(t + i) * ldx : NULL;
            float amax = 0.0f;
            if (r[i]) amax = absmax(r[i], K);
            if (i + t < T) sx[t + i] = amax / qmax;
            inv[i] = wasm_f32x4_splat(amax > 0 ? qmax / amax : 0.0f);
        }
        int32_t k = 0;
        if (t + 4 <= T) /* four rows, whole 8-value steps: no checks */
            for (; k + 8 <= K; k += 8) {
                v128_t q[4];
                for (int i = 0; i < 4; i++)
                    q[i] = wasm_i16x8_narrow_i32x4(round_small(wasm_f32x4_mul(wasm_v128_load(r[i] + k), inv[i])),
                                                   round_small(wasm_f32x4_mul(wasm_v128_load(r[i] + k + 4), inv[i])));
                store_pairs(xq + (size_t)(k / 2) * 4, q);
            }
        for (; k < Kp; k += 8) { /* 4 pairs of each row -> 4 x (4 rows' pair) */
            v128_t q[4];
            for (int i = 0; i < 4; i++) {
                if (!r[i] || k >= K) {
                    q[i] = wasm_i32x4_splat(0);
                    continue;
                }
                const float *src = r[i] + k;
                float tail[8];
                if (k + 8 > K) { /* the row's last values, zero-padded */
                    for (int e = 0; e < 8; e++) tail[e] = k + e < K ? src[e] : 0.0f;
                    src = tail;
                }
                v128_t a = round_small(wasm_f32x4_mul(wasm_v128_load(src), inv[i]));
                v128_t b = round_small(wasm_f32x4_mul(wasm_v128_load(src + 4), inv[i]));
                q[i] = wasm_i16x8_narrow_i32x4(a, b);
            }
            store_pairs(xq + (size_t)(k / 2) * 4, q);
        }
    }
}

/* Activations of a projection: contiguous rows, 15-bit (scale max / 16383,
 * ~3e-5 relative, far below the weight quantization error). K % 8 == 0. */
static void quantize_rows(int32_t *xq, float *sx, const float *x, int32_t T, int32_t K) {
    quantize_rows_ld(xq, sx, x, K, T, K, K, QX_MAX);
}

/* y[T][N] = quantized rows (xq, sx from quantize_rows) times w's q8 panels. */
static void matmul_q8_quantized(float *y, int32_t ldy, const int32_t *xq, const float *sx, int32_t T,
                                const blk_weight *w, const float *bias, int32_t act) {
    const int32_t N = w->n, K = w->k, gk = w->qg * BL_QBLOCK, nb = (K + gk - 1) / gk;
#if !defined(__wasm_simd128__)
    if (blk_have_avx2()) {
        matmul_q8_quantized_avx2(y, ldy, xq, sx, T, w, bias, act);
        return;
    }
#endif
    for (int32_t p = 0; p * BL_PANEL < N; p++) {
        const int16_t *pq = w->pq + (size_t)p * K * BL_PANEL;
        const float *ps = w->ps + (size_t)p * nb * BL_PANEL;
        const float *pb = bias ? bias + p * BL_PANEL : NULL;
        int cols = N - p * BL_PANEL < BL_PANEL ? N - p * BL_PANEL : BL_PANEL;
        float *yp = y + p * BL_PANEL;
        if (act < 0) /* as in matmul_f32_packed */
            for (int32_t t = 0; t < T; t += 4)
                mk_q8(yp + (size_t)t * ldy, ldy, xq + (size_t)t * K / 2, sx + t, pq, ps, K, gk, pb, T - t < 4 ? T - t : 4,
                      cols, -1);
        else
            for (int32_t t = 0; t < T; t += 4)
                mk_q8(yp + (size_t)t * ldy, ldy, xq + (size_t)t * K / 2, sx + t, pq, ps, K, gk, pb, T - t < 4 ? T - t : 4,
                      cols, act);
    }
}

void blk_matmul_act(float *y, const float *x, int32_t T, const blk_weight *w, const float *bias, int32_t act,
                   float *scratch) {
    blk_matmul_shared(1, &y, x, T, &w, &bias, act, scratch);
}

void blk_matmul_shared(int n, float *const *y, const float *x, int32_t T, const blk_weight *const *w,
                      const float *const *bias, int32_t act, float *scratch) {
    const int32_t K = w[0]->k, T4 = (T + 3) / 4 * 4;
    int same = 1; /* all weights in the same SIMD layout */
    for (int i = 1; i < n; i++) same &= w[i]->k == K && !w[i]->pf == !w[0]->pf && !w[i]->pq == !w[0]->pq;
    if (same && w[0]->pf) { /* rows packed once: scratch[T4][K], then block sums */
        pack_rows_f32(scratch, x, K, T, K);
        for (int i = 0; i < n; i++)
            matmul_f32_packed(y[i], w[i]->n, scratch, T, w[i]->pf, w[i]->n, K, bias[i], act,
                              scratch + (size_t)T4 * K);
    } else if (same && w[0]->pq) { /* rows quantized once: int16 pairs [T4/4][K/2][4], scales [T] */
        int32_t *xq = (int32_t *)scratch;
        float *sx = scratch + (size_t)T4 * K / 2;
        quantize_rows(xq, sx, x, T, K);
        for (int i = 0; i < n; i++) matmul_q8_quantized(y[i], w[i]->n, xq, sx, T, w[i], bias[i], act);
    } else {
        for (int i = 0; i < n; i++) {
            blk_matmul_scalar(y[i], x, T, w[i], bias[i], scratch);
            if (act >= 0) blk_activate(y[i], (size_t)T * w[i]->n, act);
        }
    }
}

void blk_matmul(float *y, const float *x, int32_t T, const blk_weight *w, const float *bias, float *scratch) {
    blk_matmul_act(y, x, T, w, bias, -1, scratch);
}

/* Panel p of B (columns p*8 .. p*8+7, b[n*bn + k*bk]) as dst[Kp][8]:
 * zero past column N and past k = K. */
static void pack_panel_f32(float *dst, const float *b, int32_t bn, int32_t bk, int32_t N, int32_t p, int32_t K,
                           int32_t Kp) {
    const float *src = b + (size_t)p * BL_PANEL * bn;
    int32_t k = 0;
    if ((p + 1) * BL_PANEL <= N) {
        if (bn == 1) /* the panel's 8 values for one k are contiguous (V_h) */
            for (; k < K; k++) {
                wasm_v128_store(dst + (size_t)k * BL_PANEL, wasm_v128_load(src + (size_t)k * bk));
                wasm_v128_store(dst + (size_t)k * BL_PANEL + 4, wasm_v128_load(src + (size_t)k * bk + 4));
            }
        else if (bk == 1) /* 8 rows of B contiguous in k (K_h): 4x4 transposes */
            for (; k + 4 <= K; k += 4)
                for (int c = 0; c < BL_PANEL; c += 4) {
                    v128_t r0 = wasm_v128_load(src + (size_t)c * bn + k),
                           r1 = wasm_v128_load(src + (size_t)(c + 1) * bn + k),
                           r2 = wasm_v128_load(src + (size_t)(c + 2) * bn + k),
                           r3 = wasm_v128_load(src + (size_t)(c + 3) * bn + k);
                    transpose4(&r0, &r1, &r2, &r3);
                    wasm_v128_store(dst + (size_t)k * BL_PANEL + c, r0);
                    wasm_v128_store(dst + (size_t)(k + 1) * BL_PANEL + c, r1);
                    wasm_v128_store(dst + (size_t)(k + 2) * BL_PANEL + c, r2);
                    wasm_v128_store(dst + (size_t)(k + 3) * BL_PANEL + c, r3);
                }
    }
    for (; k < Kp; k++) /* general case, leftovers and padding */
        for (int c = 0; c < BL_PANEL; c++) {
            int32_t n = p * BL_PANEL + c;
            dst[(size_t)k * BL_PANEL + c] = n < N && k < K ? b[(size_t)n * bn + (size_t)k * bk] : 0.0f;
        }
}

void blk_matmul_nt(float *y, int32_t ldy, const float *x, int32_t ldx, int32_t T, const float *b, int32_t bn,
                  int32_t bk, int32_t N, int32_t K, float *scratch) {
    /* pack B into panels scratch[p][k][8] (zero-padded), then x in chunks
     * of NT_ROWS rows behind them, then the f32 kernel */
    const int32_t np = (N + BL_PANEL - 1) / BL_PANEL;
    for (int32_t p = 0; p < np; p++) pack_panel_f32(scratch + (size_t)p * K * BL_PANEL, b, bn, bk, N, p, K, K);
    float *xp = scratch + (size_t)np * K * BL_PANEL;
    for (int32_t t = 0; t < T; t += NT_ROWS) {
        int32_t rows = T - t < NT_ROWS ? T - t : NT_ROWS;
        pack_rows_f32(xp, x + (size_t)t * ldx, ldx, rows, K);
        matmul_f32_packed(y + (size_t)t * ldy, ldy, xp, rows, scratch, N, K, NULL, -1, xp + (size_t)NT_ROWS * K);
    }
}

/* blk_matmul_nt on integers: x rows and B's columns quantized to 13 bits
 * (|q| <= NTQ_MAX) through the q8 kernel. x: one scale per row; B: one per
 * column and 32-block of k (the kernel's block scales). A block's integer
 * sum is at most 32 * 8191^2 < 2^31, so it cannot overflow. K is
 * zero-padded to Kp, a multiple of 32. */
#define NTQ_MAX 8191.0f
void blk_matmul_nt_q(float *y, int32_t ldy, const float *x, int32_t ldx, int32_t T, const float *b, int32_t bn,
                     int32_t bk, int32_t N, int32_t K, float *scratch) {
    const int32_t np = (N + BL_PANEL - 1) / BL_PANEL, Kp = (K + BL_QBLOCK - 1) / BL_QBLOCK * BL_QBLOCK,
                  nb = Kp / BL_QBLOCK;
    /* scratch: pq[np][Kp/2][8][2] int16, ps[np][nb][8], one f32 panel [Kp][8],
     * then x quantized in chunks of NT_ROWS rows: xq[NT_ROWS/4][Kp/2][4], sx[NT_ROWS] */
    int16_t *pq = (int16_t *)scratch;
    float *ps = scratch + (size_t)np * Kp * BL_PANEL / 2, *pf = ps + (size_t)np * nb * BL_PANEL;
    int32_t *xq = (int32_t *)(pf + (size_t)Kp * BL_PANEL);
    float *sx = (float *)xq + (size_t)NT_ROWS * Kp / 2;
    const v128_t qmax = wasm_f32x4_splat(NTQ_MAX), zero = wasm_f32x4_splat(0), lo16 = wasm_i32x4_splat(0xffff);
    for (int32_t p = 0; p < np; p++) {
        pack_panel_f32(pf, b, bn, bk, N, p, K, Kp);
        for (int32_t blk = 0; blk < nb; blk++) {
            const float *v = pf + (size_t)blk * BL_QBLOCK * BL_PANEL;
            v128_t m0 = zero, m1 = zero;
            for (int32_t k = 0; k < BL_QBLOCK; k++) {
                m0 = wasm_f32x4_pmax(m0, wasm_f32x4_abs(wasm_v128_load(v + k * BL_PANEL)));
                m1 = wasm_f32x4_pmax(m1, wasm_f32x4_abs(wasm_v128_load(v + k * BL_PANEL + 4)));
            }
            float *sc = ps + ((size_t)p * nb + blk) * BL_PANEL;
            wasm_v128_store(sc, wasm_f32x4_div(m0, qmax));
            wasm_v128_store(sc + 4, wasm_f32x4_div(m1, qmax));
            /* 1 / scale, 0 for an all-zero column block */
            v128_t i0 = wasm_v128_and(wasm_f32x4_div(qmax, m0), wasm_f32x4_gt(m0, zero));
            v128_t i1 = wasm_v128_and(wasm_f32x4_div(qmax, m1), wasm_f32x4_gt(m1, zero));
            int16_t *dq = pq + ((size_t)p * Kp + (size_t)blk * BL_QBLOCK) * BL_PANEL;
            for (int32_t k = 0; k < BL_QBLOCK; k += 2, dq += 2 * BL_PANEL) {
                const float *r = v + k * BL_PANEL;
#define NTQ(ptr, inv) round_small(wasm_f32x4_mul(wasm_v128_load(ptr), inv))
                /* int16 pairs (k, k+1) of columns 0-3, then 4-7 */
                wasm_v128_store(dq, wasm_v128_or(wasm_v128_and(NTQ(r, i0), lo16), wasm_i32x4_shl(NTQ(r + BL_PANEL, i0), 16)));
                wasm_v128_store(dq + 8, wasm_v128_or(wasm_v128_and(NTQ(r + 4, i1), lo16),
                                                     wasm_i32x4_shl(NTQ(r + BL_PANEL + 4, i1), 16)));
#undef NTQ
            }
        }
    }
    const blk_weight w = {.dtype = BL_Q8, .n = N, .k = Kp, .pq = pq, .ps = ps, .qg = 1};
    for (int32_t t = 0; t < T; t += NT_ROWS) {
        int32_t rows = T - t < NT_ROWS ? T - t : NT_ROWS;
        quantize_rows_ld(xq, sx, x + (size_t)t * ldx, ldx, rows, K, Kp, NTQ_MAX);
        matmul_q8_quantized(y + (size_t)t * ldy, ldy, xq, sx, rows, &w, NULL, -1);
    }
}

void blk_layernorm(float *x, const float *res, int32_t T, int32_t n, const float *g, const float *b, float eps) {
    for (int32_t t = 0; t < T; t++) {
        float *r = x + (size_t)t * n;
        const float *rr = res ? res + (size_t)t * n : NULL;
        /* two sums, each in two independent chains (one chain waits on
         * f32x4.add's latency for every vector) */
        v128_t s0 = wasm_f32x4_splat(0), s1 = s0;
        int32_t i = 0;
        if (rr)
            for (; i + 8 <= n; i += 8) {
                v128_t v0 = wasm_f32x4_add(wasm_v128_load(r + i), wasm_v128_load(rr + i));
                v128_t v1 = wasm_f32x4_add(wasm_v128_load(r + i + 4), wasm_v128_load(rr + i + 4));
                wasm_v128_store(r + i, v0);
                wasm_v128_store(r + i + 4, v1);
                s0 = wasm_f32x4_add(s0, v0);
                s1 = wasm_f32x4_add(s1, v1);
            }
        else
            for (; i + 8 <= n; i += 8) {
                s0 = wasm_f32x4_add(s0, wasm_v128_load(r + i));
                s1 = wasm_f32x4_add(s1, wasm_v128_load(r + i + 4));
            }
        float sum = hsum(wasm_f32x4_add(s0, s1));
        for (; i < n; i++) {
            if (rr) r[i] += rr[i];
            sum += r[i];
        }
        float mean = sum / (float)n;
        v128_t vm = wasm_f32x4_splat(mean);
        s0 = s1 = wasm_f32x4_splat(0);
        for (i = 0; i + 8 <= n; i += 8) {
            v128_t d0 = wasm_f32x4_sub(wasm_v128_load(r + i), vm), d1 = wasm_f32x4_sub(wasm_v128_load(r + i + 4), vm);
            s0 = wasm_f32x4_add(s0, wasm_f32x4_mul(d0, d0));
            s1 = wasm_f32x4_add(s1, wasm_f32x4_mul(d1, d1));
        }
        float var = hsum(wasm_f32x4_add(s0, s1));
        for (; i < n; i++) var += (r[i] - mean) * (r[i] - mean);
        var /= (float)n;
        float inv = 1.0f / sqrtf(var + eps);
        v128_t vi = wasm_f32x4_splat(inv);
        for (i = 0; i + 4 <= n; i += 4) {
            v128_t d = wasm_f32x4_mul(wasm_f32x4_sub(wasm_v128_load(r + i), vm), vi);
            wasm_v128_store(r + i, wasm_f32x4_add(wasm_f32x4_mul(d, wasm_v128_load(g + i)), wasm_v128_load(b + i)));
        }
        for (; i < n; i++) r[i] = (r[i] - mean) * inv * g[i] + b[i];
    }
}

/* exp(scale * (r[i] - max)) over one row with the exp variant `ex`; returns the sum. */
#define SOFTMAX_EXP_ROW(ex)                                                           \
    for (i = 0; i + 4 <= n; i += 4) {                                                 \
        v128_t e = ex(wasm_f32x4_mul(wasm_f32x4_sub(wasm_v128_load(r + i), vm), vs)); \
        wasm_v128_store(r + i, e);                                                    \
        s = wasm_f32x4_add(s, e);                                                     \
    }

void blk_softmax(float *x, int32_t T, int32_t n, float scale) {
    for (int32_t t = 0; t < T; t++) {
        float *r = x + (size_t)t * n;
        v128_t m0 = wasm_f32x4_splat(-INFINITY), m1 = m0, m2 = m0, m3 = m0; /* four chains of pmax */
        int32_t i = 0;
        for (; i + 16 <= n; i += 16) {
            m0 = wasm_f32x4_pmax(m0, wasm_v128_load(r + i));
            m1 = wasm_f32x4_pmax(m1, wasm_v128_load(r + i + 4));
            m2 = wasm_f32x4_pmax(m2, wasm_v128_load(r + i + 8));
            m3 = wasm_f32x4_pmax(m3, wasm_v128_load(r + i + 12));
        }
        for (; i + 4 <= n; i += 4) m0 = wasm_f32x4_pmax(m0, wasm_v128_load(r + i));
        float mx = hmax(wasm_f32x4_pmax(wasm_f32x4_pmax(m0, m1), wasm_f32x4_pmax(m2, m3)));
        for (; i < n; i++) mx = r[i] > mx ? r[i] : mx;
        v128_t vm = wasm_f32x4_splat(mx), vs = wasm_f32x4_splat(scale), s = wasm_f32x4_splat(0);
        if (scale >= 0.0f) { /* arguments are <= 0 */
            SOFTMAX_EXP_ROW(v_exp_nonpos)
        } else {
            SOFTMAX_EXP_ROW(v_exp)
        }
        float sum = hsum(s);
        for (; i < n; i++) {
            float t4[4] = {(r[i] - mx) * scale, 0, 0, 0};
            wasm_v128_store(t4, v_exp(wasm_v128_load(t4)));
            r[i] = t4[0];
            sum += r[i];
        }
        float inv = 1.0f / sum;
        v128_t vi = wasm_f32x4_splat(inv);
        for (i = 0; i + 4 <= n; i += 4) wasm_v128_store(r + i, wasm_f32x4_mul(wasm_v128_load(r + i), vi));
        for (; i < n; i++) r[i] *= inv;
    }
}
#undef SOFTMAX_EXP_ROW

void blk_activate(float *x, size_t n, int32_t act) {
    size_t i = 0;
    for (; i + 4 <= n; i += 4) wasm_v128_store(x + i, v_act(wasm_v128_load(x + i), act));
    for (; i < n; i++) {
        float t[4] = {x[i], 0, 0, 0};
        wasm_v128_store(t, v_act(wasm_v128_load(t), act));
        x[i] = t[0];
    }
}
#endif
