/* backward_attn.c — the attention of one layer for the reverse-mode pass
 * (backward.c): recomputed from the layer's input with the forward pass's
 * kernels, then pulled back, for every family's scores:
 *   q, k, v = n Wq + bq, n Wk + bk, n Wv + bv       [T][H], q, k rotated (rotary)
 *   S_h     = scores_h(q, k)                         [T][T] (the family's scale and terms)
 *   P_h     = softmax(S_h)                           0 for a masked head
 *   c       = P v  (heads side by side)             [T][H]
 * and back: dP = dc_h v_h^T, dv_h = P^T dc_h, dS = P (dP - rowsum(P dP)),
 * dq_h, dk_h from dS (the family's terms), then R(theta)^T on dq, dk for
 * rotary positions, and dn += dq Wq + dk Wk + dv Wv.
 * The family-specific scores (MPNet's bias, DeBERTa's c2p/p2c, the rotary
 * tables and ModernBERT's window) are one section, "Family scores". */
#include "backward_impl.h"
#include "encoder_family.h"
#include "base/error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* out [n][m] = in [m][n] transposed. */
static void transpose(float *out, const float *in, int32_t m, int32_t n) {
    for (int32_t i = 0; i < m; i++)
        for (int32_t j = 0; j < n; j++) out[(size_t)j * m + i] = in[(size_t)i * n + j];
}

/* =================================================== Family scores
 * Everything that differs between the families' attention scores and
 * layers: the tables they read (made once per backward), the logits of one
 * head from q, k, and the pull-back of those logits' gradient into dq, dk. */

static const float *f32_tensor(const bl_model *m, const char *name, int64_t n) {
    const bl_tensor *t = bl_model_find_tensor(m, name);
    if (!t || t->dtype != BL_F32) return NULL;
    int64_t c = 1;
    for (int i = 0; i < t->n_dims; i++) c *= t->dims[i];
    return c == n ? (const float *)(const void *)t->data : NULL;
}

int bli_bwd_tables(bctx *b, char *err, size_t errlen) {
    bl_state *s = b->s;
    const bl_model *m = s->model;
    const bli_family *f = &s->fam;
    const int32_t T = b->T, H = b->H, NH = b->NH, d = b->d;
    if (positions(b) == BLI_POS_BUCKETS) {
        const float *table = f32_tensor(m, "encoder.relative_attention_bias.weight", (int64_t)f->rel_rows * NH);
        if (!table || !(b->bias = malloc(sizeof(float) * (size_t)NH * (2 * T - 1)))) goto missing;
        bli_mpnet_bias(b->bias, table, NH, T, 32, 128);
    }
    if (positions(b) == BLI_POS_DISENTANGLED) {
        const float *rel = f32_tensor(m, "encoder.rel_embeddings.weight", (int64_t)f->rel_rows * H);
        if (!rel || !(b->rel = malloc(sizeof(float) * (size_t)f->rel_rows * H))) goto missing;
        memcpy(b->rel, rel, sizeof(float) * (size_t)f->rel_rows * H);
        if (f->rel_norm) {
            const float *g = f32_tensor(m, "encoder.rel_embeddings.LayerNorm.weight", H),
                        *bb = f32_tensor(m, "encoder.rel_embeddings.LayerNorm.bias", H);
            if (!g || !bb) goto missing;
            blk_layernorm(b->rel, NULL, f->rel_rows, H, g, bb, s->c.ln_eps);
        }
        const int32_t nr = bli_deberta_rel_rows(T, f->rel_buckets, f->rel_max);
        if (!(b->idx = malloc(sizeof(int32_t) * (size_t)(2 * T - 1))) || !(b->pk = malloc(sizeof(float) * (size_t)nr * H)) ||
            !(b->pq = malloc(sizeof(float) * (size_t)nr * H)))
            goto missing;
        bli_deberta_rel_index(b->idx, &b->r0, &b->nr, T, f->rel_buckets, f->rel_max);
    }
    if (s->tr->final_norm && !(b->final_g = f32_tensor(m, "encoder.final_norm.weight", H))) goto missing;
    if (positions(b) == BLI_POS_ROTARY) {
        if (!(b->cs_g = malloc(sizeof(float) * (size_t)T * d)) || !(b->cs_l = malloc(sizeof(float) * (size_t)T * d)))
            goto missing;
        bli_rope_table(b->cs_g, T, d, f->rope_global);
        bli_rope_table(b->cs_l, T, d, f->rope_local);
    }
    return 0;
missing:
    bli_set_err(err, errlen, "backward: the %s tables are missing or out of memory", f->name);
    return -1;
}

/* Rotary: layer l attends globally (else within +-window: ModernBERT's sliding). */
static int global_layer(const bctx *b, int32_t l) {
    return !b->s->tr->sliding || b->s->fam.global_every <= 1 || l % b->s->fam.global_every == 0;
}

/* DeBERTa: this layer's key / query projections of the relative rows. */
static void fam_layer_begin(bctx *b, int32_t l) {
    (void)l;
    if (positions(b) != BLI_POS_DISENTANGLED) return;
    const layer_weights *lw = bli_lw(b->s, l);
    const float *in = b->rel + (size_t)b->r0 * b->H;
    blk_matmul(b->pk, in, b->nr, &lw->wk, lw->bk, b->scratch);
    blk_matmul(b->pq, in, b->nr, &lw->wq, lw->bq, b->scratch);
}

/* S [T][T] = q_h k_h^T in, the logits head h's softmax takes out (the
 * family's scale and terms); entries outside ModernBERT's window are
 * -INFINITY. */
static void fam_logits(bctx *b, int32_t l, int32_t h, float *S) {
    const int32_t T = b->T, H = b->H, d = b->d, NH = b->NH;
    const float *q = b->q + (size_t)h * d, *k = b->k + (size_t)h * d;
    const bli_family *f = &b->s->fam;
    switch (positions(b)) {
    case BLI_POS_BUCKETS: {
        const float div = sqrtf((float)d), *rel = b->bias + (size_t)h * (2 * T - 1);
        for (int32_t i = 0; i < T; i++)
            for (int32_t j = 0; j < T; j++) S[(size_t)i * T + j] = S[(size_t)i * T + j] / div + rel[j - i + T - 1];
        break;
    }
    case BLI_POS_DISENTANGLED: {
        const unsigned on = (unsigned)f->rel_terms;
        const int n_terms = !!(on & BLI_DEB_C2P) + !!(on & BLI_DEB_P2C);
        const float scale = 1.0f / sqrtf((float)d * (float)(1 + n_terms));
        const float *pk = b->pk + (size_t)h * d, *pq = b->pq + (size_t)h * d;
        for (int32_t i = 0; i < T; i++)
            for (int32_t j = 0; j < T; j++) {
                const int32_t r = b->idx[i - j + T - 1];
                float acc = S[(size_t)i * T + j];
                if (on & BLI_DEB_C2P)
                    for (int32_t e = 0; e < d; e++) acc += q[(size_t)i * H + e] * pk[(size_t)r * H + e];
                if (on & BLI_DEB_P2C)
                    for (int32_t e = 0; e < d; e++) acc += k[(size_t)j * H + e] * pq[(size_t)r * H + e];
                S[(size_t)i * T + j] = acc * scale;
            }
        break;
    }
    default: {
        const float scale = 1.0f / sqrtf((float)d);
        const int32_t half = !global_layer(b, l) ? f->window : -1;
        for (int32_t i = 0; i < T; i++) {
            int32_t j0, j1;
            bli_window_of(i, T, half, &j0, &j1);
            for (int32_t j = 0; j < T; j++)
                S[(size_t)i * T + j] = j >= j0 && j < j1 ? S[(size_t)i * T + j] * scale : -INFINITY;
        }
    }
    }
    (void)NH;
}

/* dq, dk (head h's columns) from dL [T][T] = dF/d(logits), overwritten:
 *   dq_h = g k_h,  dk_h = g^T q_h  with g = dL * scale (blk_matmul_nt),
 * then DeBERTa's c2p / p2c terms. */
static void fam_logits_bwd(bctx *b, int32_t h, float *dL) {
    const int32_t T = b->T, H = b->H, d = b->d;
    const float *q = b->q + (size_t)h * d, *k = b->k + (size_t)h * d;
    float *dq = b->dq + (size_t)h * d, *dk = b->dk + (size_t)h * d;
    const bli_family *f = &b->s->fam;
    float scale = 1.0f / sqrtf((float)d);
    unsigned on = 0;
    if (positions(b) == BLI_POS_DISENTANGLED) {
        on = (unsigned)f->rel_terms;
        const int n_terms = !!(on & BLI_DEB_C2P) + !!(on & BLI_DEB_P2C);
        scale = 1.0f / sqrtf((float)d * (float)(1 + n_terms));
    }
    /* buckets: S / sqrt(d) + bias, the bias a constant: the plain scale */
    const size_t tt = (size_t)T * T;
    for (size_t i = 0; i < tt; i++) dL[i] *= scale;
    blk_matmul_nt(dq, H, dL, T, T, k, 1, H, d, T, b->ntscr);
    transpose(b->tt, dL, T, T);
    blk_matmul_nt(dk, H, b->tt, T, T, q, 1, H, d, T, b->ntscr);
    if (!on) return;
    const float *pk = b->pk + (size_t)h * d, *pq = b->pq + (size_t)h * d;
    for (int32_t i = 0; i < T; i++)
        for (int32_t j = 0; j < T; j++) {
            const float g = dL[(size_t)i * T + j];
            if (g == 0.0f) continue;
            float *dqi = dq + (size_t)i * H, *dkj = dk + (size_t)j * H;
            /* c2p: q_i . pk[idx(i - j)];  p2c: k_j . pq[idx(i - j)] */
            const int32_t r = b->idx[i - j + T - 1];
            if (on & BLI_DEB_C2P)
                for (int32_t e = 0; e < d; e++) dqi[e] += g * pk[(size_t)r * H + e];
            if (on & BLI_DEB_P2C)
                for (int32_t e = 0; e < d; e++) dkj[e] += g * pq[(size_t)r * H + e];
        }
}

/* Rotary positions: rotate rows of x [T][H] (every head) by the layer's
 * table, forward (sign 1) or back (sign -1: the transpose R(theta)^T, for
 * gradients). */
static void rope(bctx *b, int32_t l, float *x, int sign) {
    const int32_t T = b->T, H = b->H, d = b->d, hd = d / 2;
    const float *cs = global_layer(b, l) ? b->cs_g : b->cs_l;
    for (int32_t t = 0; t < T; t++) {
        const float *c = cs + (size_t)t * d, *sn = c + hd;
        for (int32_t h = 0; h < b->NH; h++) {
            float *v = x + (size_t)t * H + (size_t)h * d;
            for (int32_t i = 0; i < hd; i++) {
                const float a = v[i], bb = v[hd + i], si = sign * sn[i];
                v[i] = a * c[i] - bb * si;
                v[hd + i] = bb * c[i] + a * si;
            }
        }
    }
}

/* q, k, v [T][H] = in Wq + bq, in Wk + bk, in Wv + bv with the layer's weights
 * as the forward pass multiplies them (biases: NULL where absent). */
static void qkv_fwd(bctx *b, int32_t l, const float *in) {
    const layer_weights *lw = bli_lw(b->s, l);
    float *const y[3] = {b->q, b->k, b->v};
    const blk_weight *const ws[3] = {&lw->wq, &lw->wk, &lw->wv};
    const float *const bs[3] = {lw->bq, lw->bk, lw->bv};
    blk_matmul_shared(3, y, in, b->T, ws, bs, -1, b->scratch);
}

/* Rotary positions: rotate q, k (sign 1, the forward) or dq, dk (sign -1:
 * R(theta)^T, the gradient through the rotation); other positions: nothing. */
static void rotate_qk(bctx *b, int32_t l, float *q, float *k, int sign) {
    if (positions(b) != BLI_POS_ROTARY) return;
    rope(b, l, q, sign);
    rope(b, l, k, sign);
}

/* Attention of layer l from q, k, v: P, c, with the forward pass's
 * products (bli_attn_product). */
static void attn_fwd(bctx *b, int32_t l) {
    const bl_state *s = b->s;
    const int32_t T = b->T, H = b->H, d = b->d, NH = b->NH;
    const bli_nt_fn nt = bli_attn_product(s, l, T);
    for (int32_t h = 0; h < NH; h++) {
        float *P = b->P + (size_t)h * T * T;
        if (s->n_masked && s->head_mask[(size_t)l * NH + h]) { /* switched off: probabilities x 0 */
            memset(P, 0, sizeof(float) * (size_t)T * T);
            for (int32_t t = 0; t < T; t++) memset(b->c + (size_t)t * H + (size_t)h * d, 0, sizeof(float) * (size_t)d);
            continue;
        }
        nt(P, T, b->q + (size_t)h * d, H, T, b->k + (size_t)h * d, H, 1, T, d, b->ntscr);
        fam_logits(b, l, h, P);
        for (int32_t i = 0; i < T; i++) {
            float *row = P + (size_t)i * T, mx = -INFINITY;
            double sum = 0;
            for (int32_t j = 0; j < T; j++) mx = row[j] > mx ? row[j] : mx;
            for (int32_t j = 0; j < T; j++) sum += row[j] = row[j] == -INFINITY ? 0.0f : expf(row[j] - mx);
            for (int32_t j = 0; j < T; j++) row[j] = (float)(row[j] / sum);
        }
        nt(b->c + (size_t)h * d, H, P, T, T, b->v + (size_t)h * d, 1, H, d, T, b->ntscr); /* c_h = P v_h */
    }
}

/* dq, dk, dv from dc through the attention of layer l:
 *   dP = dc_h v_h^T,  dv_h = P^T dc_h,  dS = P (dP - rowsum(P dP)). */
static void attn_bwd(bctx *b, int32_t l) {
    const bl_state *s = b->s;
    const int32_t T = b->T, H = b->H, d = b->d, NH = b->NH;
    const size_t n = (size_t)T * H;
    memset(b->dq, 0, n * sizeof(float));
    memset(b->dk, 0, n * sizeof(float));
    memset(b->dv, 0, n * sizeof(float));
    for (int32_t h = 0; h < NH; h++) {
        if (s->n_masked && s->head_mask[(size_t)l * NH + h]) continue; /* no gradient through it */
        const float *P = b->P + (size_t)h * T * T, *dc = b->dc + (size_t)h * d;
        float *dP = b->dP; /* [T][T] dF/dP, then dF/d(logits) */
        blk_matmul_nt(dP, T, dc, H, T, b->v + (size_t)h * d, H, 1, T, d, b->ntscr);
        transpose(b->tt, P, T, T);
        blk_matmul_nt(b->dv + (size_t)h * d, H, b->tt, T, T, dc, 1, H, d, T, b->ntscr);
        for (int32_t i = 0; i < T; i++) {
            const float *p = P + (size_t)i * T;
            float *g = dP + (size_t)i * T;
            double dot = 0;
            for (int32_t j = 0; j < T; j++) dot += (double)g[j] * p[j];
            for (int32_t j = 0; j < T; j++) g[j] = p[j] * (float)(g[j] - dot);
        }
        fam_logits_bwd(b, h, dP);
    }
}

/* dn += dq Wq + dk Wk + dv Wv (dn [T][H]). */
static void qkv_bwd(bctx *b, int32_t l, float *dn) {
    const layer_weights *lw = bli_lw(b->s, l);
    const int32_t T = b->T;
    const size_t n = (size_t)T * b->H;
    bli_bwd_dy_w(b, b->tmp, b->dq, T, &lw->wq);
    add_to(dn, b->tmp, n);
    bli_bwd_dy_w(b, b->tmp, b->dk, T, &lw->wk);
    add_to(dn, b->tmp, n);
    bli_bwd_dy_w(b, b->tmp, b->dv, T, &lw->wv);
    add_to(dn, b->tmp, n);
}

/* ------------------------------------------------------------ exported */

void bli_bwd_attn_fwd(bctx *b, int32_t l, const float *n, const float *tp) {
    if (tp) { /* the forward's q, k (rotated), v */
        const size_t nh = (size_t)b->T * b->H;
        memcpy(b->q, tp, nh * sizeof(float));
        memcpy(b->k, tp + nh, nh * sizeof(float));
        memcpy(b->v, tp + 2 * nh, nh * sizeof(float));
    } else {
        qkv_fwd(b, l, n);
        rotate_qk(b, l, b->q, b->k, 1);
    }
    fam_layer_begin(b, l);
    attn_fwd(b, l);
}

void bli_bwd_attn_bwd(bctx *b, int32_t l, float *dn) {
    attn_bwd(b, l);
    rotate_qk(b, l, b->dq, b->dk, -1);
    qkv_bwd(b, l, dn);
}
