/* backward_dy.c — the backward pass's product with a weight matrix
 * transposed, dx = dy W: every Linear layer of the reverse-mode pass
 * (backward.c's feed-forward and output projections, backward_attn.c's
 * q, k and v) goes back through it, below both. */

#include "backward_impl.h"
#include "kernels/kernels.h"

#include <string.h>

/* dx [rows][k] = dy [rows][n] W for w = W [n][k], W's rows in f32 (the
 * gradient through the dequantized weights). SIMD builds: W^T laid out in
 * wbuf as blk_weight_pack lays out an f32 weight [k][n], panels
 * pf[p][r][c] = W[r][8p + c] (zero past column k), straight from W's rows
 * (dequantized one at a time into wrow), then blk_matmul, the forward
 * pass's f32 kernel. Scalar builds: blk_matmul_nt on W's rows in wbuf. */
void bli_bwd_dy_w(bctx *b, float *dx, const float *dy, int32_t rows, const blk_weight *w) {
    const int32_t n = w->n, k = w->k;
#if BLK_SIMD
    const int32_t np = (k + BL_PANEL - 1) / BL_PANEL;
    float *pf = NULL, *row = b->wrow;
    for (int i = 0; i < b->npw; i++)
        if (b->pw[i] == w) pf = b->pp[i];
    if (pf) goto mul; /* laid out for an earlier step of the batch */
    if (b->npw == 8 || b->used + (size_t)np * BL_PANEL * n > b->nwbuf) b->npw = 0, b->used = 0; /* (not reached) */
    pf = b->wbuf + b->used;
    b->used += (size_t)np * BL_PANEL * n;
    b->pw[b->npw] = w, b->pp[b->npw++] = pf;
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
    blk_weight_init(&wt, BL_F32, k, n, (const uint8_t *)pf); /* read through pf only */
    wt.pf = pf;
    blk_matmul(dx, dy, rows, &wt, NULL, b->scratch);
#else
    for (int32_t r = 0; r < n; r++) blk_weight_row(w, r, b->wbuf + (size_t)r * k);
    blk_matmul_nt(dx, k, dy, n, rows, b->wbuf, 1, k, k, n, b->ntscr);
#endif
}
