/* kernels_pack.c — a weight's SIMD layout, built once when a model is
 * bound to a state (blk_weight_pack) and freed with it (blk_weight_free):
 *   f32/f16          f32 panels pf [n/8][k][8]
 *   q8/q4/QN         int16 panels pq with one scale per row and group of qg
 *                    32-blocks (pack_groups, "integer panels with scale groups")
 *   q8 in panels     the bundle's own bytes (blk_q8_panels_in_place); only
 *                    shared scales gs (regroup_q8, "q8 panels on shared scales")
 * The kernels that read these layouts are kernels_simd128.c, kernels_x86.c
 * and kernels_avx512.c; kernels.c chooses among them.
 */
#include "kernels_impl.h"
#include "bertlens.h"
#include "base/dtype.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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
/* Integer value of element (r, i) of a q8/q4/QN weight in the bundle
 * layout (q8 panels are read 256 bytes at a time, panel_abs_sums). */
static int qvalue(const blk_weight *w, int32_t r, int32_t i) {
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
 *   w' = round(q * m_b / 128),   m_b = round(s_b * (128 / s'))
 * on one scale s' per row and group of qg blocks, so its int32 sums cross
 * qg blocks before one conversion to float, as pack_groups' do. qg as
 * pack_groups chooses it (margin 1). s' comes from a bound, not a search,
 * so a model loads as fast as before: with A_b = sum |q| over block b,
 * L = sum s_b A_b and f the f32 roundings of 128 / s' and s_b * inv
 * (1 + 2^-23 at most; the kernel computes m_b in f32, rounding to nearest
 * even, and w' with i16x8.q15mulr_sat, half up), m_b / 128 <= f s_b / s' +
 * 1/256 and |w'| <= |q| m_b / 128 + 1/2, so
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

