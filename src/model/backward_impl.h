/* backward_impl.h — what the reverse-mode pass's two files share: its
 * context (one layer's recomputed activations and gradients, the family's
 * tables) and the blocks each exports to the other. backward.c runs the
 * pass (norms, feed-forward blocks, layers, embeddings); backward_attn.c is
 * the attention (q, k, v, the family's scores, softmax, context) forward and
 * back. Internal to those two files. */
#ifndef BL_BACKWARD_IMPL_H
#define BL_BACKWARD_IMPL_H

#include "encoder_types.h"

#include <stddef.h>
#include <stdint.h>

/* W [n][k] dequantized to f32 and packed for blk_matmul: a weight the state
 * does not hold ready (a gated block's gate, read from the bundle). */
typedef struct {
    float *w; /* [n][k] */
    blk_weight f;
} mat;

/* The pass's context (bli_backward_steps makes it, for one run of T tokens). */
typedef struct {
    bl_state *s;
    int32_t T, H, I, NH, d, E;
    mat wg;                /* a gated block's gate Wg [I][H], dequantized       */
    float *scratch;        /* blk_matmul scratch                                */
    float *ntscr;          /* blk_matmul_nt scratch                             */
    float *wbuf;           /* SIMD: the layer's weights in panels, one after the
                              other (an arena, emptied per layer: dy_w lays a
                              weight out once for every step of a batch);
                              scalar: one weight dequantized [n][k]          */
    size_t nwbuf, used;    /* floats in wbuf, laid out so far               */
    const blk_weight *pw[8]; /* the weights laid out in wbuf ...            */
    float *pp[8];          /* ... and where                                 */
    int npw;
    float *wrow;           /* [34][max(H, I, E) + 8] 32 rows of it, 2 sums      */
    float *tt;             /* [T][T] a transposed block                         */
    /* recomputed forward of one layer */
    float *q, *k, *v;      /* [T][H] (rotary positions: q, k rotated)           */
    float *P;              /* [NH][T][T] probabilities                          */
    float *c;              /* [T][H] attention context                          */
    float *n, *n_xh, *n_rs;/* pre-norm: N1(x) [T][H], its xhat, rstd [T]        */
    float *y1, *xh1, *rs1; /* post-norm: N1 output, xhat [T][H], rstd [T];
                              pre-norm: x1, N2's xhat, rstd                     */
    float *m;              /* pre-norm: N2(x1) [T][H]                           */
    float *u, *f, *gt;     /* [T][I] pre-activation, act(u), gate (gated block) */
    float *xh2, *rs2;      /* post-norm: N2's xhat [T][H], rstd [T]; pre-norm: Nf's */
    float *tmp;            /* [T][max(H, I, E)]                                 */
    /* gradients */
    float *dq, *dk, *dv, *dc; /* [T][H]                                         */
    float *d1;                /* [T][H]                                         */
    float *du;                /* [T][I]                                         */
    float *dP;                /* [T][T]                                         */
    /* family tables */
    float *bias;           /* MPNet [NH][2T-1]                                  */
    float *rel;            /* DeBERTa [rel_rows][H] LayerNorm'ed relative embeddings */
    int32_t *idx, r0, nr;  /* DeBERTa relative row of i - j, rows used          */
    float *pk, *pq;        /* DeBERTa [nr][H] this layer's projections of them  */
    float *cs_g, *cs_l;    /* rotary [T][d] tables, global and local theta      */
    const float *final_g;  /* pre-norm: the final norm [H]                       */
} bctx;

/* The traits the blocks read (family.h). */
static inline int positions(const bctx *b) { return b->s->tr->positions; }
static inline int pre_norm(const bctx *b) { return b->s->tr->layer == BLI_LAYER_PRE_NORM; }
static inline int rms(const bctx *b) { return b->s->tr->norm == BLI_NORM_RMS; }
static inline int gated(const bctx *b) { return b->s->tr->ffn == BLI_FFN_GATED; }

/* y [n] += x [n]. */
static inline void add_to(float *y, const float *x, size_t n) {
    for (size_t i = 0; i < n; i++) y[i] += x[i];
}

/* dx [rows][k] = dy [rows][n] W for w = W [n][k] (backward.c). */
void bli_bwd_dy_w(bctx *b, float *dx, const float *dy, int32_t rows, const blk_weight *w);

/* The family's tables for one backward (backward_attn.c): MPNet's bias,
 * DeBERTa's relative rows, the rotary tables, the final norm's weight. */
int bli_bwd_tables(bctx *b, char *err, size_t errlen);

/* Layer l's attention on n [T][H] (its input, or N1 of it): q, k, v (q, k
 * rotated for rotary positions), P, c (backward_attn.c). tp: the layer's
 * tape (BLI_TAPE_LAYER, encoder_types.h), whose q, k, v are taken instead of
 * products with n; or NULL. */
void bli_bwd_attn_fwd(bctx *b, int32_t l, const float *n, const float *tp);

/* dn [T][H] += dF/dn from dc = dF/dc through bli_bwd_attn_fwd's attention:
 * dq, dk, dv (back through the rotation: R(theta)^T), then dq Wq + dk Wk +
 * dv Wv (backward_attn.c). */
void bli_bwd_attn_bwd(bctx *b, int32_t l, float *dn);

#endif
