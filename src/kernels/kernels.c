/* kernels.c — the kernels' shared part and their dispatch (see kernels.h):
 * packing weights for the SIMD paths (blk_weight_pack), scratch sizes,
 * which implementation runs (blk_simd_name), and, in a scalar build, the
 * un-suffixed kernels as the scalar references.
 *
 * The kernels live in one file per instruction set, as in ggml's CPU backend:
 *   kernels_weight.c   a weight as the bundle stores it: wrapping and
 *                      dequantizing (blk_weight_init, blk_weight_row)
 *   kernels_ref.c      scalar references, always compiled (the tests compare
 *                      every other path with them)
 *   kernels_simd128.c  wasm SIMD128; on x86-64 the same source is the SSE4.1
 *                      path, through the intrinsic shim src/kernels/simd_x86.h
 *   kernels_x86.c      x86-64 AVX2+FMA micro-kernels, chosen at run time
 *   kernels_avx512.c   x86-64 AVX-512 (F, BW; VNNI) micro-kernels, at run time
 *   kernels_impl.h     what they share: constants, the inline vector helpers
 */
#include "kernels_impl.h"
#include "bertlens.h"
#include "format/bundle.h"
#include "base/dtype.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ weights */

#if BLK_SIMD && !defined(__wasm_simd128__)
static int blk_x86_state = -1; /* -1: not decided yet */
/* The x86-64 kernels that run: the best the CPU has (the AVX-512 level needs
 * F and BW; VNNI adds vpdpwssd), capped by the environment's
 * BERTLENS_SIMD=sse4.1|avx2|avx512 (tests compare each path with the scalar
 * one; avx512 means AVX-512 without VNNI). Decided once; relaxed atomics
 * since any thread may ask first. */
int blk_x86_level(void) {
    int level = __atomic_load_n(&blk_x86_state, __ATOMIC_RELAXED);
    if (level < 0) {
        const char *env = getenv("BERTLENS_SIMD");
        int cap = BLK_X86_AVX512_VNNI;
        if (env && !strcmp(env, "sse4.1")) cap = BLK_X86_SSE41;
        else if (env && !strcmp(env, "avx2")) cap = BLK_X86_AVX2;
        else if (env && !strcmp(env, "avx512")) cap = BLK_X86_AVX512;
        __builtin_cpu_init();
        level = BLK_X86_SSE41;
        if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
            level = BLK_X86_AVX2;
            if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw"))
                level = __builtin_cpu_supports("avx512vnni") ? BLK_X86_AVX512_VNNI : BLK_X86_AVX512;
        }
        if (level > cap) level = cap;
        __atomic_store_n(&blk_x86_state, level, __ATOMIC_RELAXED);
    }
    return level;
}
#endif

const char *blk_simd_name(void) {
#if defined(__wasm_simd128__)
    return "wasm-simd128";
#elif BLK_SIMD
    static const char *const names[] = {"sse4.1", "avx2+fma", "avx512", "avx512+vnni"};
    return names[blk_x86_level()];
#else
    return "scalar";
#endif
}

int blk_nt_q_pays(void) {
#if defined(__wasm_simd128__)
    return 1;
#elif BLK_SIMD
    return blk_x86_level() < BLK_X86_AVX512;
#else
    return 0;
#endif
}

void blk_weight_free(blk_weight *w) {
    free(w->pf);
    free(w->pq);
    free(w->ps);
    free(w->gs);
    w->pf = NULL;
    w->pq = NULL;
    w->ps = NULL;
    w->gs = NULL;
}

#if BLK_SIMD
/* Integer value of element (r, i) of a q8/q4/QN weight. */
static int qvalue(const blk_weight *w, int32_t r, int32_t i) {
    if (w->pq8) /* panels: element (r, i) at [r/8][i/2][r%8][i%2] */
        return w->pq8[((size_t)(r / BL_PANEL) * w->k + (size_t)(i / 2) * 2) * BL_PANEL + (r % BL_PANEL) * 2 + (i & 1)];
    if (w->dtype == BL_Q8) return ((const int8_t *)w->data)[(size_t)r * w->k + i];
    if (w->dtype != BL_Q4) return blk_qn_value(w, r, i);
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
 * smallest scale with sum |w'| <= BLK_QG_L1 (and |w'| <= 32767); the rounding
 * adds at most s' / 2 to each weight. qg is chosen per matrix: the fewest
 * groups whose rounding noise (s'^2 / 12 per value) stays within QG_NOISE
 * of the bundle's own (s_b^2 / 12 per value); qg = 1 keeps the bundle's
 * integers and scales exactly. Measured on all-MiniLM-L6-v2: q8 gets one
 * group per row of a 384-wide input (qg 12), q10 groups of 3 blocks. */
#define QG_NOISE 0.015625 /* 1/64: +0.4 % (q8) and +0.8 % (q10) mean attention error on the fidelity corpus */

/* Smallest s' for values w[0..n) with sum |round(w / s')| <= BLK_QG_L1 and
 * max |round(w / s')| <= 32767; L = sum |w|. 0 for an all-zero group, NaN
 * for a group holding an inf or NaN (q4/q8 products can overflow a float
 * even from finite scales): no integer holds it, so pack_groups stores 0s
 * under a NaN scale and the products come out NaN, as in float, instead of
 * this loop never ending (issue 31: the sum of NaNs is never <= BLK_QG_L1).
 * For finite values the start is already within one rounding of the bound;
 * after a few nudges s doubles, and once s > 2 amax every w' is 0: the loop
 * ends for any finite input. */
static double group_scale(const float *w, int32_t n, double L, double amax) {
    if (!isfinite(L) || !isfinite(amax)) return NAN;
    if (amax <= 0) return 0;
    double s = L / (BLK_QG_L1 - 0.5 * n); /* sum |w'| <= L / s + n / 2 */
    if (s < amax / 32767.0) s = amax / 32767.0;
    for (int tries = 0;; tries++) { /* float rounding: check the sum itself */
        double sum = 0;
        for (int32_t i = 0; i < n; i++) sum += fabs(nearbyint(w[i] / s));
        if (sum <= BLK_QG_L1) return s;
        s *= tries < 16 ? 1.0 + 1e-6 : 2.0;
    }
}

/* sum |q| of each of the 8 rows of one 32-block of a q8 panel (256 bytes,
 * [16 pairs][8 rows][2], as blk_q8_panels_in_place lays them out) into a[8]. */
static void panel_abs_sums(const int8_t *blk, int32_t a[8]) {
    v128_t s = wasm_i16x8_splat(0); /* at most 16 * 2 * 128 = 4096 per lane */
    for (int j = 0; j < BL_QBLOCK / 2; j++)
        s = wasm_i16x8_add(s, wasm_u16x8_extadd_pairwise_u8x16(wasm_i8x16_abs(wasm_v128_load(blk + 16 * j))));
    wasm_v128_store(a, wasm_u32x4_extend_low_u16x8(s));
    wasm_v128_store(a + 4, wasm_u32x4_extend_high_u16x8(s));
}

/* sum |q| of every row's 32-blocks, A[n][k/32] (malloc'd; NULL out of
 * memory): from q8 panels 256 bytes (8 rows x 32 values) at a time with
 * panel_abs_sums, else value by value. */
static int32_t *block_abs_sums(const blk_weight *w) {
    const int32_t n = w->n, nb = w->k / BL_QBLOCK;
    int32_t *A = malloc((size_t)n * nb * sizeof(int32_t));
    if (!A) return NULL;
    if (w->pq8) {
        for (int32_t p = 0; p < n / BL_PANEL; p++)
            for (int32_t b = 0; b < nb; b++) {
                int32_t a8[BL_PANEL];
                panel_abs_sums(w->pq8 + ((size_t)p * w->k + (size_t)b * BL_QBLOCK) * BL_PANEL, a8);
                for (int c = 0; c < BL_PANEL; c++) A[(size_t)(p * BL_PANEL + c) * nb + b] = a8[c];
            }
        return A;
    }
    for (int32_t r = 0; r < n; r++)
        for (int32_t b = 0; b < nb; b++) {
            int32_t a = 0;
            for (int i = 0; i < BL_QBLOCK; i++) a += abs(qvalue(w, r, b * BL_QBLOCK + i));
            A[(size_t)r * nb + b] = a;
        }
    return A;
}

/* The 32-blocks per scale group of a quantized weight (see above), from
 * its blocks' sum |q| (A): the fewest groups whose rounding noise, s'
 * estimated as L / (BLK_QG_L1 - margin * nv) for a group of nv values
 * summing to L in |w|, stays within QG_NOISE of the bundle's own. margin:
 * the worst-case excess of sum |w'| over L / s' per value (1/2 for
 * round(w / s'); 1 for the shared scales of q8 panels). -1 out of memory. */
static int32_t choose_qg(const blk_weight *w, const int32_t *A, double margin) {
    const int32_t n = w->n, nb = w->k / BL_QBLOCK;
    double *l1 = malloc((size_t)n * nb * sizeof(double)); /* per row and block: s_b * sum |q| */
    if (!l1) return -1;
    double noise_bundle = 0;
    for (int32_t r = 0; r < n; r++)
        for (int32_t b = 0; b < nb; b++) {
            double s = blk_qscale(w, r, b);
            l1[(size_t)r * nb + b] = s * A[(size_t)r * nb + b];
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
                double s = L / (BLK_QG_L1 - margin * nv);
                noise += s * s * nv;
            }
        if (noise <= QG_NOISE * noise_bundle) {
            qg = g;
            break;
        }
    }
    free(l1);
    return qg;
}

/* ---- q8 panels on shared scales
 * q8 panels in place (blk_q8_panels_in_place) keep the bundle's integers and
 * 32-block scales, held once. What the SIMD kernel can still share is the
 * scale: widening a panel into int16 once per product, it makes
 *   w' = round(q * m_b / 128),   m_b = round(s_b * (128 / s'))   (blk_q8_mult)
 * on one scale s' per row and group of qg blocks, so its int32 sums cross
 * qg blocks before one conversion to float, as pack_groups' do. qg as
 * pack_groups chooses it (margin 1). s' comes from a bound, not a search,
 * so a model loads as fast as before: with A_b = sum |q| over block b,
 * L = sum s_b A_b and f the f32 roundings of 128 / s' and s_b * inv
 * (1 + 2^-23 at most), m_b / 128 <= f s_b / s' + 1/256 and
 * |w'| <= |q| m_b / 128 + 1/2, so
 *   sum |w'| <= f L / s' + sum A_b / 256 + nv / 2 <= BLK_QG_L1
 * for s' = f L / (BLK_QG_L1 - sum A_b / 256 - nv / 2), and m_b <= 32767
 * for s' >= f s_max * 128 / 32766.5; f32 s' is rounded up. A value then
 * differs from the bundle's by at most one unit of s' (half for w''s
 * rounding, |q| / 256 for m_b's). Scales only: one per row and group, in
 * w->gs. */
static float regroup_scale(const blk_weight *w, const int32_t *A, int32_t r, int32_t b0, int32_t b1) {
    const int32_t nb = w->k / BL_QBLOCK, nv = (b1 - b0) * BL_QBLOCK;
    const double f = 1.0 + 1e-6;
    double L = 0, AA = 0, smax = 0;
    for (int32_t b = b0; b < b1; b++) {
        const double sb = fabs((double)blk_qscale(w, r, b)), a = A[(size_t)r * nb + b];
        L += sb * a;
        AA += a;
        smax = sb > smax ? sb : smax;
    }
    if (!isfinite(L) || !isfinite(smax)) return NAN;
    if (smax <= 0) return 0;
    const double room = BLK_QG_L1 - AA / 256.0 - nv / 2.0;
    if (room <= 0) return NAN;
    double s = f * L / room;
    if (s < f * smax * 128.0 / 32766.5) s = f * smax * 128.0 / 32766.5;
    float sf = (float)s;
    if ((double)sf < s) sf = nextafterf(sf, INFINITY);
    return isfinite(128.0f / sf) ? sf : NAN;
}

/* w->gs, w->qg for q8 panels (see above); none where one group would be a
 * single block or a scale is not finite (the kernel keeps the bundle's
 * 32-block scales). -1 out of memory. */
static int regroup_q8(blk_weight *w) {
    const int32_t n = w->n, nb = w->k / BL_QBLOCK;
    int32_t *A = block_abs_sums(w);
    const int32_t qg = A ? choose_qg(w, A, 1.0) : -1;
    if (qg < 2) {
        free(A);
        return qg < 0 ? -1 : 0;
    }
    const int32_t ngr = (nb + qg - 1) / qg;
    float *gs = malloc((size_t)n * ngr * sizeof(float)); /* [n/8][ngr][8] */
    if (!gs) {
        free(A);
        return -1;
    }
    for (int32_t r = 0; r < n; r++)
        for (int32_t g = 0; g < ngr; g++) {
            const float s = regroup_scale(w, A, r, g * qg, (g + 1) * qg < nb ? (g + 1) * qg : nb);
            if (!isfinite(s)) {
                free(A);
                free(gs);
                return 0;
            }
            gs[((size_t)(r / BL_PANEL) * ngr + g) * BL_PANEL + r % BL_PANEL] = s;
        }
    free(A);
    w->gs = gs;
    w->qg = qg;
    return 0;
}

/* Fill w->pq, w->ps, w->qg from a q8/q4/QN weight (see above). -1 out of memory. */
static int pack_groups(blk_weight *w) {
    const int32_t n = w->n, k = w->k, nb = k / BL_QBLOCK, np = (n + BL_PANEL - 1) / BL_PANEL;
    int32_t *A = block_abs_sums(w);
    const int32_t qg = A ? choose_qg(w, A, 0.5) : -1;
    free(A);
    float *row = qg < 0 ? NULL : malloc((size_t)k * sizeof(float));
    if (!row) return -1;
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
                s = blk_qscale(w, r, g);
            } else {
                for (int32_t i = i0; i < i0 + nv; i++) L += fabs(row[i]), amax = fabs(row[i]) > amax ? fabs(row[i]) : amax;
                s = group_scale(row + i0, nv, L, amax);
            }
            for (int32_t i = i0; i < i0 + nv; i++)
                dq[(size_t)(i / 2) * 2 * BL_PANEL + (i & 1)] =
                    qg == 1 ? (int16_t)qvalue(w, r, i) : s > 0 ? (int16_t)nearbyint(row[i] / s) : 0; /* NaN s: 0 */
            w->ps[((size_t)p * ngr + g) * BL_PANEL + c] = (float)s;
        }
    }
    free(row);
    return 0;
}
#endif

int blk_weight_pack(blk_weight *w) {
#if BLK_SIMD
    if (w->pq8) return w->gs ? 0 : regroup_q8(w); /* the integers stay in the panels */
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

size_t blk_matmul_nt_scratch_floats(int32_t N, int32_t K) {
    /* B in panels [N/8][K][8], then one chunk of packed rows [NT_ROWS][K], then mk_f32_long's block sums [32] */
    /* blk_matmul_nt_q (SIMD): int16 panels and their block scales, one f32 panel, a chunk of quantized rows */
    size_t np = (size_t)(N + BL_PANEL - 1) / BL_PANEL, Kp = ((size_t)K + BL_QBLOCK - 1) / BL_QBLOCK * BL_QBLOCK;
    size_t f = np * BL_PANEL * K + (size_t)NT_ROWS * K + 16 + 32;
    size_t q = np * Kp * BL_PANEL / 2 + np * (Kp / BL_QBLOCK) * BL_PANEL + Kp * BL_PANEL + (size_t)NT_ROWS * (Kp / 2 + 1) + 16;
    return f > q ? f : q;
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
void blk_weight_t16(const blk_weight *w, int16_t *pq, float *ps) { blk_weight_t16_scalar(w, pq, ps); }
void blk_activate(float *x, size_t n, int32_t act) { blk_activate_scalar(x, n, act); }
void blk_erf_vec(float *x, size_t n) {
    for (size_t i = 0; i < n; i++) x[i] = erff(x[i]);
}
void blk_exp_vec(float *x, size_t n) {
    for (size_t i = 0; i < n; i++) x[i] = expf(x[i]);
}
#endif
