/* backward_dy.c — the backward pass's product with a weight matrix
 * transposed, dx = dy W: every Linear layer of the reverse-mode pass
 * (backward.c's feed-forward and output projections, backward_attn.c's
 * q, k and v) goes back through it, below both. */

#include "backward_impl.h"
#include "kernels/kernels.h"

#include <math.h>
#include <string.h>

/* dx [rows][k] = dy [rows][n] W for w = W [n][k], W's rows in f32 (the
 * gradient through the dequantized weights). SIMD builds: W^T laid out in
 * wbuf as blk_weight_pack lays out an f32 weight [k][n], panels
 * pf[p][r][c] = W[r][8p + c] (zero past column k), straight from W's rows
 * (dequantized one at a time into wrow), then blk_matmul, the forward
 * pass's f32 kernel. Scalar builds: blk_matmul_nt on W's rows in wbuf. */
#if BLK_SIMD
/* Quantized W [n][k] (n % 32 == 0): W^T as blk_weight_pack lays out an
 * integer weight [k][n] with one scale per 32-block of n (qg = 1): int16
 * panels pq[p][i/2][c][i%2] = round(W[i][8p + c] / s), s per column and
 * 32 rows the smallest that keeps a block's sum |w'| within what the
 * kernels' int32 sums hold (|round(w/s)| summed <= L/s + 16 = BLK_QG_L1, the
 * kernels' bound), then scales ps[p][i/32][c]. The products then run on
 * the forward pass's integer kernels instead of f32 ones; the rounding adds
 * at most s/2 (~1e-4 of a block's largest |w|) to the bundle's own
 * quantization error (1/254 of it for q8). W's rows come 32 at a time
 * through blk_weight_row (wrow [32][k], then two [k] columns' sums). */
static void lay_int16(bctx *b, const blk_weight *w, int16_t *pq, float *ps) {
    const int32_t n = w->n, k = w->k, np = (k + BL_PANEL - 1) / BL_PANEL, nb = n / BL_QBLOCK;
    float *rows = b->wrow;              /* [32][k] W's rows of one block */
    float *L = rows + (size_t)BL_QBLOCK * k, *amax = L + k; /* [k] each: per column of the block */
    for (int32_t g = 0; g < nb; g++) {
        for (int32_t r = 0; r < BL_QBLOCK; r++) blk_weight_row(w, g * BL_QBLOCK + r, rows + (size_t)r * k);
        for (int32_t c = 0; c < k; c++) L[c] = 0.0f, amax[c] = 0.0f;
        for (int32_t r = 0; r < BL_QBLOCK; r++) { /* rows in order: contiguous, vectorizable */
            const float *x = rows + (size_t)r * k;
            for (int32_t c = 0; c < k; c++) {
                const float a = fabsf(x[c]);
                L[c] += a;
                amax[c] = a > amax[c] ? a : amax[c];
            }
        }
        for (int32_t c = 0; c < np * BL_PANEL; c++) { /* scales; amax becomes 1 / scale */
            float sc = 0.0f;
            if (c < k && !isfinite(L[c])) sc = NAN; /* as kernels_pack.c: 0s under a NaN scale, the products NaN */
            else if (c < k && amax[c] > 0) {
                sc = L[c] / (float)(BLK_QG_L1 - 0.5 * BL_QBLOCK);
                if (sc < amax[c] / 32767.0f) sc = amax[c] / 32767.0f;
            }
            ps[((size_t)(c / BL_PANEL) * nb + g) * BL_PANEL + c % BL_PANEL] = sc;
            if (c < k) amax[c] = sc > 0 ? 1.0f / sc : 0.0f;
        }
        /* rows i, i + 1 together: their 8 values of a panel interleave into
         * 16 contiguous int16 (a vectorizable loop); rounding to nearest by
         * the 1.5 * 2^23 trick (|v| <= 32767) */
        for (int32_t r = 0; r < BL_QBLOCK; r += 2) {
            const int32_t i = g * BL_QBLOCK + r;
            const float *x0 = rows + (size_t)r * k, *x1 = x0 + k;
            for (int32_t p = 0; p < np; p++) {
                int16_t *d = pq + (size_t)p * n * BL_PANEL + (size_t)(i / 2) * 2 * BL_PANEL; /* [p][i/2][cc][2] */
                const int32_t c0 = p * BL_PANEL;
                if (c0 + BL_PANEL <= k) {
                    const float *a = x0 + c0, *bb = x1 + c0, *iv = amax + c0;
                    for (int cc = 0; cc < BL_PANEL; cc++) {
                        d[2 * cc] = (int16_t)(int32_t)((a[cc] * iv[cc] + 12582912.0f) - 12582912.0f);
                        d[2 * cc + 1] = (int16_t)(int32_t)((bb[cc] * iv[cc] + 12582912.0f) - 12582912.0f);
                    }
                } else
                    for (int cc = 0; cc < BL_PANEL; cc++) {
                        const int32_t c = c0 + cc;
                        d[2 * cc] = c < k ? (int16_t)(int32_t)((x0[c] * amax[c] + 12582912.0f) - 12582912.0f) : 0;
                        d[2 * cc + 1] = c < k ? (int16_t)(int32_t)((x1[c] * amax[c] + 12582912.0f) - 12582912.0f) : 0;
                    }
            }
        }
    }
}
#endif

void bli_bwd_dy_w(bctx *b, float *dx, const float *dy, int32_t rows, const blk_weight *w) {
    const int32_t n = w->n, k = w->k;
#if BLK_SIMD
    const int32_t np = (k + BL_PANEL - 1) / BL_PANEL;
    /* integer weights (the bundle's q8, q4, QN): W^T in int16 panels, half
     * the floats of f32 panels plus a scale per 32 values */
    const int ints = w->dtype != BL_F32 && w->dtype != BL_F16 && n % BL_QBLOCK == 0;
    const size_t need = ints ? ((size_t)np * BL_PANEL * n) / 2 + (size_t)np * BL_PANEL * (n / BL_QBLOCK) : (size_t)np * BL_PANEL * n;
    float *pf = NULL, *row = b->wrow;
    for (int i = 0; i < b->npw; i++)
        if (b->pw[i] == w) pf = b->pp[i];
    if (pf) goto mul; /* laid out for an earlier step of the batch */
    if (b->npw == 8 || b->used + need > b->nwbuf) b->npw = 0, b->used = 0; /* (not reached) */
    pf = b->wbuf + b->used;
    b->used += need;
    b->pw[b->npw] = w, b->pp[b->npw++] = pf;
    if (ints) {
        if (w->dtype == BL_Q8) blk_weight_t16(w, (int16_t *)pf, pf + ((size_t)np * BL_PANEL * n) / 2);
        else lay_int16(b, w, (int16_t *)pf, pf + ((size_t)np * BL_PANEL * n) / 2);
        goto mul;
    }
    if (w->pq8 && w->dtype == BL_Q8) { /* q8 in panels: 8 x 8 blocks, each 64 bytes in a row */
        for (int32_t P = 0; P < n / BL_PANEL; P++) {
            const int8_t *qp = w->pq8 + (size_t)P * k * BL_PANEL;   /* [k/2][8][2] */
            const float *sp = w->ps8 + (size_t)P * (k / 32) * BL_PANEL; /* [k/32][8] */
            for (int32_t p = 0; p < np; p++) {
                float *dst = pf + ((size_t)p * n + (size_t)P * BL_PANEL) * BL_PANEL; /* [c][j] */
                const int8_t *q = qp + (size_t)p * 4 * 2 * BL_PANEL;   /* [j/2][c][j%2] */
                const float *sc = sp + (size_t)(p * BL_PANEL / 32) * BL_PANEL;
                for (int32_t c = 0; c < BL_PANEL; c++)
                    for (int32_t j = 0; j < BL_PANEL; j++) dst[c * BL_PANEL + j] = q[(j / 2) * 16 + c * 2 + (j & 1)] * sc[c];
            }
        }
        goto mul;
    }
    const size_t rw = (size_t)np * BL_PANEL; /* a row of wrow, zero past k */
    for (int32_t r0 = 0; r0 < n; r0 += BL_PANEL) { /* 8 rows, then one 8 x 8 block per panel */
        const int32_t nr = n - r0 < BL_PANEL ? n - r0 : BL_PANEL;
        for (int32_t c = 0; c < nr; c++) {
            float *rr = row + (size_t)c * rw;
            blk_weight_row(w, r0 + c, rr);
            for (int32_t i = k; i < (int32_t)rw; i++) rr[i] = 0.0f;
        }
        for (int32_t p = 0; p < np; p++)
            for (int32_t c = 0; c < nr; c++)
                memcpy(pf + ((size_t)p * n + r0 + c) * BL_PANEL, row + (size_t)c * rw + (size_t)p * BL_PANEL,
                       sizeof(float) * BL_PANEL);
    }
mul:;
    blk_weight wt;
    if (ints) { /* read through pq, ps only (the bundle bytes' dtype names the kind) */
        blk_weight_init(&wt, BL_Q8, k, n, (const uint8_t *)pf);
        wt.pq = (int16_t *)pf, wt.ps = pf + ((size_t)np * BL_PANEL * n) / 2, wt.qg = 1;
    } else {
        blk_weight_init(&wt, BL_F32, k, n, (const uint8_t *)pf); /* read through pf only */
        wt.pf = pf;
    }
    blk_matmul(dx, dy, rows, &wt, NULL, b->scratch);
#else
    for (int32_t r = 0; r < n; r++) blk_weight_row(w, r, b->wbuf + (size_t)r * k);
    blk_matmul_nt(dx, k, dy, n, rows, b->wbuf, 1, k, k, n, b->ntscr);
#endif
}
