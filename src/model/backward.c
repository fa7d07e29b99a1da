/* backward.c — a reverse-mode pass through the encoder: from dF/d(final
 * hidden states) to dF/d(each token's word-embedding row), for any F of the
 * final hidden states (explain.c: one logit of a head).
 *
 * The forward pass (encoder.c) keeps every layer's output (BL_KEEP_HIDDEN);
 * the backward pass walks the layers from the last, and for each one
 *   1. recomputes the layer from its input x = bl_hidden(s, l) with the
 *      layer's weights dequantized to f32 (so f32 and quantized bundles both
 *      work, and the gradient is that of the dequantized weights), keeping
 *      what the derivatives need (q, k, v, the probabilities, the
 *      LayerNorms' normalized rows and 1/sigma, the pre-activations);
 *   2. pulls dy = dF/d(output) back to dx = dF/d(input).
 * Memory is one layer's activations and weights, whatever the depth.
 *
 * The layer, by the family's traits (family.h), N a LayerNorm or an RMSNorm
 * (norm trait), ffn plain or gated (ffn trait), q and k rotated for rotary
 * positions:
 *   q, k, v = n Wq + bq, n Wk + bk, n Wv + bv       [T][H]
 *   P_h     = softmax(scores_h(q, k))               [T][T], 0 for a masked head
 *   c       = P v  (heads side by side)             [T][H]
 *   ffn(m)  = act(m W1 + b1) W2 + b2,  gated: (act(m W1 + b1) * (m Wg)) W2 + b2
 * post-norm (BERT, DistilBERT, ELECTRA, RoBERTa, ALBERT, MPNet, DeBERTa,
 * NomicBERT, GTE):
 *   n = x;  y1 = N1(x + c Wo + bo);  y = N2(y1 + ffn(y1))
 * pre-norm (ModernBERT, EuroBERT):
 *   n = N1(x) (layer 0 without the first_norm trait: x)
 *   x1 = x + c Wo + bo;  y = x1 + ffn(N2(x1));  last layer: y = Nf(y)
 * The recomputed forward runs the encoder's own kernels on the layer's
 * weights as the forward pass ran them (blk_matmul on the bundle's q8 / f32
 * weights, the attention products with bli_attn_product), so it gives the
 * forward pass's activations. The backward products with weights, dy W for
 * W [n][k], are blk_matmul_nt on W read in place (f32 bundles) or
 * dequantized to f32 one matrix at a time (quantized bundles: the gradient
 * is that of the dequantized weights); the attention's are blk_matmul_nt on
 * [T][T] blocks. Those are the SIMD kernels of the forward pass.
 *
 * The attention (q, k, v, the family-specific scores: MPNet's bias,
 * DeBERTa's c2p/p2c, the rotary tables and ModernBERT's window; softmax,
 * context) forward and back is backward_attn.c's; the rotation's gradient
 * is its transpose, R(theta)^T on dq, dk. The product dy W both use is
 * backward_dy.c's; the context all three read: backward_impl.h.
 */
#include "backward_impl.h"
#include "encoder_family.h"
#include "backward.h"
#include "base/error.h"
#include "base/sizes.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ weights */

static int mat_load(mat *m, const blk_weight *src) {
    const int32_t n = src->n, k = src->k;
    if (!(m->w = malloc((size_t)n * k * sizeof(float)))) return -1;
    for (int32_t r = 0; r < n; r++) blk_weight_row(src, r, m->w + (size_t)r * k);
    return blk_weight_init(&m->f, BL_F32, n, k, (const uint8_t *)m->w) || blk_weight_pack(&m->f) ? -1 : 0;
}

static void mat_free(mat *m) {
    blk_weight_free(&m->f);
    free(m->w);
    memset(m, 0, sizeof *m);
}

/* ---------------------------------------------------------- pieces */

/* y [T][n] = LN(x [T][n]) * g + b, keeping xhat [T][n] and rstd [T].
 * rms: RMSNorm instead (Llama's), y = x * rstd * g with rstd =
 * 1 / sqrt(mean(x^2) + eps): xhat = x * rstd, no mean taken off, no b. */
static void ln_fwd(float *y, const float *x, int32_t T, int32_t n, const float *g, const float *b, float eps,
                   float *xhat, float *rstd, int rms) {
    for (int32_t t = 0; t < T; t++) {
        const float *xr = x + (size_t)t * n;
        double mu = 0, var = 0;
        if (!rms) {
            for (int32_t i = 0; i < n; i++) mu += xr[i];
            mu /= n;
        }
        for (int32_t i = 0; i < n; i++) var += (xr[i] - mu) * (xr[i] - mu);
        var /= n;
        const float r = (float)(1.0 / sqrt(var + eps));
        rstd[t] = r;
        for (int32_t i = 0; i < n; i++) {
            const float xh = (float)((xr[i] - mu) * r);
            xhat[(size_t)t * n + i] = xh;
            if (y) y[(size_t)t * n + i] = xh * g[i] + (b && !rms ? b[i] : 0.0f);
        }
    }
}

/* dx [T][n] (=, or += when acc) from dy through y = LN(x) * g + b:
 *   dx = rstd * (dy g - mean(dy g) - xhat * mean(dy g * xhat))
 * rms (RMSNorm, y = xhat * g, xhat = x * rstd): the mean term drops out,
 *   dx = rstd * (dy g - xhat * mean(dy g * xhat)) */
static void ln_bwd(float *dx, const float *dy, const float *xhat, const float *rstd, const float *g, int32_t T,
                   int32_t n, int acc, int rms) {
    for (int32_t t = 0; t < T; t++) {
        const float *d = dy + (size_t)t * n, *xh = xhat + (size_t)t * n;
        double m1 = 0, m2 = 0;
        for (int32_t i = 0; i < n; i++) {
            const double dg = (double)d[i] * g[i];
            m1 += dg;
            m2 += dg * xh[i];
        }
        m1 = rms ? 0.0 : m1 / n, m2 /= n;
        float *o = dx + (size_t)t * n;
        for (int32_t i = 0; i < n; i++) {
            const float v = (float)(rstd[t] * ((double)d[i] * g[i] - m1 - xh[i] * m2));
            o[i] = acc ? o[i] + v : v;
        }
    }
}

/* act(u) and act'(u) for bl_activation act. */
float bli_act_f(float u, int32_t act) {
    switch (act) {
    case BL_ACT_RELU: return u > 0 ? u : 0;
    case BL_ACT_SILU: return (float)(u / (1.0 + exp(-(double)u)));
    case BL_ACT_GELU_TANH: {
        const double c = 0.7978845608028654; /* sqrt(2 / pi) */
        return (float)(0.5 * u * (1.0 + tanh(c * (u + 0.044715 * (double)u * u * u))));
    }
    default: return (float)(0.5 * u * (1.0 + erf(u * 0.7071067811865476)));
    }
}

float bli_act_d(float u, int32_t act) {
    switch (act) {
    case BL_ACT_RELU: return u > 0 ? 1.0f : 0.0f;
    case BL_ACT_SILU: { /* sigma(u) (1 + u (1 - sigma(u))) */
        const double sg = 1.0 / (1.0 + exp(-(double)u));
        return (float)(sg * (1.0 + u * (1.0 - sg)));
    }
    case BL_ACT_GELU_TANH: {
        const double c = 0.7978845608028654, x = u, th = tanh(c * (x + 0.044715 * x * x * x));
        return (float)(0.5 * (1.0 + th) + 0.5 * x * (1.0 - th * th) * c * (1.0 + 3.0 * 0.044715 * x * x));
    }
    default: {
        const double x = u;
        return (float)(0.5 * (1.0 + erf(x * 0.7071067811865476)) + x * exp(-0.5 * x * x) * 0.3989422804014327);
    }
    }
}

/* ------------------------------------------------------------ context */

/* A new layer: the weights laid out so far are not its. */
static void panels_reset(bctx *b) { b->npw = 0, b->used = 0; }

/* out [n] = act'(u) for u [n] (tmp [n]: work). erf GELU with the forward
 * pass's vector erf and exp: 0.5 (1 + erf(u / sqrt 2)) + u phi(u). */
static void act_grad(float *out, const float *u, size_t n, int32_t act, float *tmp) {
    if (act != BL_ACT_GELU) {
        for (size_t i = 0; i < n; i++) out[i] = bli_act_d(u[i], act);
        return;
    }
    for (size_t i = 0; i < n; i++) out[i] = u[i] * 0.70710678118654752f, tmp[i] = -0.5f * u[i] * u[i];
    blk_erf_vec(out, n);
    blk_exp_vec(tmp, n);
    for (size_t i = 0; i < n; i++) out[i] = 0.5f * (1.0f + out[i]) + u[i] * tmp[i] * 0.3989422804014327f;
}

/* NULL when the pass differentiates every trait of s's family, else the
 * first one it does not, in words. The blocks (each once, chosen by trait):
 * post-norm and pre-norm layers (pre-norm: layer 0's input normed or not, a
 * final norm), LayerNorm and RMSNorm, plain and gated feed-forward blocks
 * (ReLU, GELU, tanh GELU, SiLU), absolute, bucketed (MPNet), disentangled
 * (DeBERTa) and rotary positions (ModernBERT's windows too), embeddings
 * normed or not, projected or not. Every family bertlens runs has only these;
 * a trait value added later is refused until it has its block here. */
const char *bli_backward_refuses(const bl_state *s) {
    const bli_family_traits *tr = s->tr;
    if (tr->norm != BLI_NORM_LAYER && tr->norm != BLI_NORM_RMS) return "this norm";
    if (tr->layer != BLI_LAYER_POST_NORM && tr->layer != BLI_LAYER_PRE_NORM) return "this layer layout";
    if (tr->ffn != BLI_FFN_PLAIN && tr->ffn != BLI_FFN_GATED) return "this feed-forward block";
    if (tr->positions < BLI_POS_ABSOLUTE || tr->positions > BLI_POS_ROTARY) return "these positions";
    const int32_t act = s->c.activation;
    if (act != BL_ACT_GELU && act != BL_ACT_GELU_TANH && act != BL_ACT_RELU && act != BL_ACT_SILU)
        return "this activation";
    return NULL;
}

/* Load what layer l needs beyond the state's weights (a gated block's gate). */
static int load_layer(bctx *b, int32_t l) {
    mat_free(&b->wg);
    if (gated(b)) {
        char name[96];
        snprintf(name, sizeof name, "encoder.layer.%d.intermediate.gate.weight", l);
        const bl_tensor *t = bl_model_find_tensor(b->s->model, name);
        blk_weight g;
        if (!t || blk_weight_of_tensor(&g, t, b->I, b->H) || mat_load(&b->wg, &g)) return -1;
    }
    return 0;
}

/* The norm trait's y = N(x) [T][H] (LayerNorm or RMSNorm, family.h), keeping
 * xhat [T][H] and rstd [T]; and its pull-back (acc: dx +=). */
static void norm_fwd(bctx *b, float *y, const float *x, const float *g, const float *bias, float *xhat, float *rstd) {
    ln_fwd(y, x, b->T, b->H, g, bias, b->s->c.ln_eps, xhat, rstd, rms(b));
}

static void norm_bwd(bctx *b, float *dx, const float *dy, const float *xhat, const float *rstd, const float *g, int acc) {
    ln_bwd(dx, dy, xhat, rstd, g, b->T, b->H, acc, rms(b));
}

/* f [n] = act(u) as the forward pass computes it (bli_fam_ffn: the kernels'
 * activation; SiLU by hand). */
static void act_fwd(float *f, const float *u, size_t n, int32_t act) {
    if (act == BL_ACT_SILU) {
        for (size_t i = 0; i < n; i++) f[i] = u[i] / (1.0f + expf(-u[i]));
        return;
    }
    memcpy(f, u, n * sizeof(float));
    blk_activate(f, n, act);
}

/* The feed-forward block of layer l on in [T][H] (the ffn trait):
 *   plain  u = in W1 + b1                 f = act(u)
 *   gated  u = in W1 + b1,  gt = in Wg,   f = act(u) * gt  (GeGLU, SwiGLU)
 * out [T][H] = f W2 + b2 (out NULL: not needed). Keeps u, and for a gated
 * block gt and act(u) in f, [T][I] each, for ffn_bwd (gated: the product
 * goes through du). tu: the tape's u [T][I] and gate [T][I] (gated), taken
 * instead of the products with W1 and Wg; or NULL. */
static void ffn_fwd(bctx *b, int32_t l, const float *in, float *out, const float *tu) {
    const layer_weights *lw = bli_lw(b->s, l);
    const int32_t T = b->T, act = b->s->c.activation;
    const size_t ni = (size_t)T * b->I;
    if (tu) memcpy(b->u, tu, ni * sizeof(float));
    else blk_matmul(b->u, in, T, &lw->w1, lw->b1, b->scratch);
    if (gated(b) || out) act_fwd(b->f, b->u, ni, act);
    const float *f = b->f;
    if (gated(b)) {
        if (tu) memcpy(b->gt, tu + ni, ni * sizeof(float));
        else blk_matmul(b->gt, in, T, &b->wg.f, NULL, b->scratch);
        for (size_t i = 0; i < ni; i++) b->du[i] = b->f[i] * b->gt[i];
        f = b->du;
    }
    if (out) blk_matmul(out, f, T, &lw->w2, lw->b2, b->scratch);
}

/* out [T][H] = x + c Wo + bo: a = c Wo + bo from the tape tp, or made. */
static void attn_out(bctx *b, int32_t l, float *out, const float *x, const float *tp) {
    const size_t nh = (size_t)b->T * b->H;
    if (tp) memcpy(out, tp + 3 * nh, nh * sizeof(float));
    else blk_matmul(out, b->c, b->T, &bli_lw(b->s, l)->wo, bli_lw(b->s, l)->bo, b->scratch);
    add_to(out, x, nh);
}

/* ffn_fwd with u, the gate and out's product f W2 + b2 taken from the
 * layer's tape tp when there is one (BLI_TAPE_LAYER: u after [5][T][H]). */
static void ffn_out(bctx *b, int32_t l, const float *in, float *out, const float *tp) {
    ffn_fwd(b, l, in, tp ? NULL : out, tp ? tp + 5 * (size_t)b->T * b->H : NULL);
    if (tp && out) memcpy(out, tp + 4 * (size_t)b->T * b->H, (size_t)b->T * b->H * sizeof(float));
}

/* din [T][H] = dF/d(in) from dout [T][H] = dF/d(out) through ffn_fwd's
 * block (f, gt, du, tmp overwritten):
 *   df = dout W2;  gated: dgt = df act(u), df *= gt;  du = df act'(u)
 *   din = du W1 (+ dgt Wg) */
static void ffn_bwd(bctx *b, int32_t l, const float *dout, float *din) {
    const layer_weights *lw = bli_lw(b->s, l);
    const int32_t T = b->T, act = b->s->c.activation;
    const size_t ni = (size_t)T * b->I;
    bli_bwd_dy_w(b, b->du, dout, T, &lw->w2);                                    /* df */
    if (gated(b))
        for (size_t i = 0; i < ni; i++) {
            const float df = b->du[i];
            b->f[i] = df * b->f[i];                                      /* dgt */
            b->du[i] = df * b->gt[i];
        }
    act_grad(b->gt, b->u, ni, act, b->tmp);
    for (size_t i = 0; i < ni; i++) b->du[i] *= b->gt[i];               /* du */
    bli_bwd_dy_w(b, din, b->du, T, &lw->w1);
    if (gated(b)) {
        bli_bwd_dy_w(b, b->tmp, b->f, T, &b->wg.f);
        add_to(din, b->tmp, (size_t)T * b->H);
    }
}

/* The post-norm layer l (BERT's; NomicBERT's and GTE's with rotary q, k and
 * a gated block): dx [T][H] from dy [T][H] (dy is overwritten).
 *   x1 = N1(x + c Wo + bo);  y = N2(x1 + ffn(x1)) */
static void post_layer(bctx *b, int32_t l, const float *x, const float *tp, float *dy, float *dx) {
    const layer_weights *lw = bli_lw(b->s, l);
    const int32_t T = b->T, H = b->H;
    const size_t nh = (size_t)T * H;
    /* forward (tp: its q, k, v, a and o from the tape) */
    bli_bwd_attn_fwd(b, l, x, tp);
    attn_out(b, l, b->tmp, x, tp);                                       /* x + c Wo + bo */
    norm_fwd(b, b->y1, b->tmp, lw->ln1_g, lw->ln1_b, b->xh1, b->rs1);
    ffn_out(b, l, b->y1, b->tmp, tp);
    add_to(b->tmp, b->y1, nh);                                           /* x1 + ffn(x1) */
    norm_fwd(b, NULL, b->tmp, lw->ln2_g, lw->ln2_b, b->xh2, b->rs2);
    /* backward */
    norm_bwd(b, b->d1, dy, b->xh2, b->rs2, lw->ln2_g, 0);               /* d(x1 + ffn(x1)) */
    ffn_bwd(b, l, b->d1, dy);                                            /* dx1 = ffn'(d1) ... */
    add_to(dy, b->d1, nh);                                               /* ... + the residual */
    norm_bwd(b, dx, dy, b->xh1, b->rs1, lw->ln1_g, 0);                   /* d(x + c Wo + bo) */
    bli_bwd_dy_w(b, b->dc, dx, T, &lw->wo);                              /* dc; dx holds the residual */
    bli_bwd_attn_bwd(b, l, dx);
}

/* The pre-norm layer l (ModernBERT's, EuroBERT's): dx from dy (overwritten).
 *   n = N1(x) (layer 0 without the first_norm trait: x);  q, k, v from n
 *   x1 = x + c Wo + bo;  y = x1 + ffn(N2(x1));  the last layer: y = Nf(y) */
static void pre_layer(bctx *b, int32_t l, const float *x, const float *tp, float *dy, float *dx) {
    const bl_state *s = b->s;
    const layer_weights *lw = bli_lw(s, l);
    const int32_t T = b->T, H = b->H, L = s->c.n_layers;
    const size_t nh = (size_t)T * H;
    const int normed_in = l > 0 || s->tr->first_norm, last = l + 1 == L && s->tr->final_norm;
    /* forward */
    const float *n = x;
    if (normed_in) {
        norm_fwd(b, b->n, x, lw->ln1_g, lw->ln1_b, b->n_xh, b->n_rs);
        n = b->n;
    }
    bli_bwd_attn_fwd(b, l, n, tp);
    attn_out(b, l, b->y1, x, tp);                                        /* x1 */
    norm_fwd(b, b->m, b->y1, lw->ln2_g, lw->ln2_b, b->xh1, b->rs1);
    ffn_out(b, l, b->m, last ? b->tmp : NULL, tp);
    if (last) { /* y = Nf(x1 + ffn(m)) */
        add_to(b->tmp, b->y1, nh);
        norm_fwd(b, NULL, b->tmp, b->final_g, NULL, b->xh2, b->rs2);
        norm_bwd(b, b->d1, dy, b->xh2, b->rs2, b->final_g, 0);
        memcpy(dy, b->d1, nh * sizeof(float));
    }
    /* backward: dy = dF/d(x1 + ffn(m)) */
    ffn_bwd(b, l, dy, b->d1);                                            /* dm */
    norm_bwd(b, dy, b->d1, b->xh1, b->rs1, lw->ln2_g, 1);                /* dx1 = dy + N2'(dm) */
    memcpy(dx, dy, nh * sizeof(float));                                  /* the residual */
    bli_bwd_dy_w(b, b->dc, dy, T, &lw->wo);
    if (normed_in) {
        memset(b->d1, 0, nh * sizeof(float));
        bli_bwd_attn_bwd(b, l, b->d1);                                   /* dn */
        norm_bwd(b, dx, b->d1, b->n_xh, b->n_rs, lw->ln1_g, 1);
    } else
        bli_bwd_attn_bwd(b, l, dx);
}

/* ======================================================== embeddings */

int32_t bl_word_width(const bl_state *s) { return s ? s->fam.embed : 0; }

void bl_word_rows(const bl_state *s, const int32_t *ids, int32_t T, float *out) {
    for (int32_t t = 0; t < T; t++) blk_weight_row(&s->word, ids[t], out + (size_t)t * s->fam.embed);
}

/* d_word [T][E] from dh0 [T][H] = dF/d(layer 0's input):
 *   z = word + position + type;  e = LN(z) (no_emb_norm: e = z);
 *   h0 = e Wp + bp (fam.project) */
static int embed_bwd(bctx *b, const int32_t *ids, const int32_t *type_ids, const float *word_rows, const float *dh0,
                     float *d_word) {
    bl_state *s = b->s;
    const int32_t T = b->T, E = b->E;
    const int normed = !s->tr->no_emb_norm;
    float *z = malloc(sizeof(float) * (size_t)T * E), *xh = malloc(sizeof(float) * (size_t)T * E),
          *rs = malloc(sizeof(float) * (size_t)T), *de = NULL;
    int rc = -1;
    if (!z || !xh || !rs) goto out;
    for (int32_t t = 0; t < T && normed; t++) {
        float *zr = z + (size_t)t * E;
        if (word_rows) memcpy(zr, word_rows + (size_t)t * E, sizeof(float) * E);
        else blk_weight_row(&s->word, ids[t], zr);
        const float *p = s->pos + (size_t)s->posid[t] * E, *ty = s->type + (size_t)(type_ids ? type_ids[t] : 0) * E;
        for (int32_t i = 0; i < E; i++) zr[i] += p[i] + ty[i];
    }
    if (normed) ln_fwd(NULL, z, T, E, s->emb_ln_g, s->emb_ln_b, s->c.ln_eps, xh, rs, 0);
    if (s->fam.project) {
        if (!(de = malloc(sizeof(float) * (size_t)T * E))) goto out;
        bli_bwd_dy_w(b, de, dh0, T, &s->proj_w);
        dh0 = de;
    }
    if (normed) ln_bwd(d_word, dh0, xh, rs, s->emb_ln_g, T, E, 0, 0);
    else memcpy(d_word, dh0, sizeof(float) * (size_t)T * E);
    rc = 0;
out:
    free(z), free(xh), free(rs), free(de);
    return rc;
}

/* ============================================================ the pass */

static void ctx_free(bctx *b) {
    mat_free(&b->wg);
    float *bufs[] = {b->ntscr, b->wbuf, b->wrow, b->tt, b->scratch, b->q,  b->k,  b->v,  b->P,  b->c,    b->n,   b->n_xh, b->n_rs, b->y1,
                     b->xh1,     b->rs1, b->m, b->u,  b->f,  b->gt,   b->xh2, b->rs2,  b->tmp,  b->dq,
                     b->dk,      b->dv,  b->dc, b->d1, b->du, b->dP,  b->bias, b->rel, b->pk,   b->pq,
                     b->cs_g,    b->cs_l};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++) free(bufs[i]);
    free(b->idx);
}

/* bl_backward for G runs of the same tokens at once (explain.c: a batch of
 * IG's steps): run g's layer inputs hid[g] ([L + 1][T][hidden], as
 * bl_hidden keeps them), word rows rows[g] ([T][E], or NULL: those of ids),
 * tape[g] (tape or an entry NULL: none; bli_state_set_tape): run g's
 * q, k, v, a and o of each layer, so that only W1's (and the gate's)
 * products and the attention are redone; d_final[g] -> d_word[g]. Layer by layer, each layer's weights are laid
 * out in panels once for all G runs. */
int bli_backward_steps(bl_state *s, int32_t G, const int32_t *ids, const int32_t *type_ids, const float *const *hid,
                       const float *const *word_rows, const float *const *tape, const float *const *d_final,
                       float *const *d_word, char *err, size_t errlen) {
    if (!s || !ids || G < 1 || !hid || !d_final || !d_word) {
        bli_set_err(err, errlen, "bl_backward: missing argument");
        return -1;
    }
    const bl_config *c = &s->c;
    bctx b = {.s = s, .T = s->T, .H = c->hidden, .I = c->intermediate, .NH = c->n_heads, .E = s->fam.embed};
    b.d = b.H / b.NH;
    const int32_t T = b.T, H = b.H, I = b.I, E = b.E, NH = b.NH;
    const int32_t W = H > I ? (H > E ? H : E) : (I > E ? I : E);
    if (s->fam.notypes) type_ids = NULL;
    const size_t th = (size_t)T * H, ti = (size_t)T * I;
    int32_t rows = T;
    const char *why = bli_backward_refuses(s);
    if (why) {
        bli_set_err(err, errlen, "backward: the gradient through %s (%s) is not differentiated yet", why, s->fam.name);
        return -1;
    }
    if (positions(&b) == BLI_POS_DISENTANGLED) {
        const int32_t nr = bli_deberta_rel_rows(T, s->fam.rel_buckets, s->fam.rel_max);
        rows = nr > rows ? nr : rows;
    }
    /* blk_matmul_nt: the attention's products, and (scalar builds) dy W (N = k, K = n of W) */
#if BLK_SIMD
    const int32_t nk[][2] = {{T, b.d}, {b.d, T}};
    /* the panels of one layer's weights (Wq, Wk, Wv, Wo, W1, W2, the gate), or the projection's */
#define R8(x) ((size_t)((x) + BL_PANEL - 1) / BL_PANEL * BL_PANEL)
    size_t wmax = 4 * R8(H) * H + R8(H) * I + R8(I) * H + (s->tr->ffn == BLI_FFN_GATED ? R8(H) * I : 0);
    wmax = R8(E) * H > wmax ? R8(E) * H : wmax;
#undef R8
#else
    const int32_t nk[][2] = {{H, H}, {H, I}, {I, H}, {E, H}, {T, b.d}, {b.d, T}};
    const size_t wmax = (size_t)(I > E ? I : E) * (H > I ? H : I);
#endif
    size_t nts = 0;
    for (size_t i = 0; i < sizeof nk / sizeof *nk; i++) {
        const size_t f = blk_matmul_nt_scratch_floats(nk[i][0], nk[i][1]);
        nts = f > nts ? f : nts;
    }
    b.nwbuf = wmax;
    struct {
        float **p;
        size_t n;
    } bufs[] = {{&b.scratch, blk_matmul_scratch_floats(rows, W)}, {&b.ntscr, nts}, {&b.wbuf, wmax},
                {&b.wrow, (size_t)(BL_QBLOCK + 2) * (W + BL_PANEL)}, {&b.tt, (size_t)T * T},
                {&b.q, th}, {&b.k, th}, {&b.v, th}, {&b.P, (size_t)NH * T * T}, {&b.c, th}, {&b.n, th},
                {&b.n_xh, th}, {&b.n_rs, (size_t)T}, {&b.y1, th}, {&b.xh1, th}, {&b.rs1, (size_t)T}, {&b.m, th},
                {&b.u, ti}, {&b.f, ti}, {&b.gt, ti}, {&b.xh2, th}, {&b.rs2, (size_t)T},
                {&b.tmp, (size_t)T * W}, {&b.dq, th}, {&b.dk, th}, {&b.dv, th}, {&b.dc, th}, {&b.d1, th},
                {&b.du, ti}, {&b.dP, (size_t)T * T}};
    int rc = -1;
    float *dys = malloc(2 * (size_t)G * th * sizeof(float)); /* [G][2][T][H]: each run's dy, dx */
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
        if (!(*bufs[i].p = malloc(bufs[i].n * sizeof(float)))) goto oom;
    if (!dys) goto oom;
    if (bli_bwd_tables(&b, err, errlen)) goto out;
    for (int32_t g = 0; g < G; g++) memcpy(dys + 2 * (size_t)g * th, d_final[g], th * sizeof(float));
    for (int32_t l = c->n_layers - 1; l >= 0; l--) {
        if (load_layer(&b, l)) goto oom;
        panels_reset(&b);
        for (int32_t g = 0; g < G; g++) {
            /* run g's dy is in slot (L - 1 - l) % 2 of its pair, dx goes to the other */
            float *dy = dys + (2 * (size_t)g + (size_t)((c->n_layers - 1 - l) % 2)) * th,
                  *dx = dys + (2 * (size_t)g + (size_t)((c->n_layers - l) % 2)) * th;
            const float *x = hid[g] + (size_t)l * th; /* the layer's input [T][H] */
            const float *tp = tape && tape[g] ? tape[g] + (size_t)l * bli_tape_layer(s, T) : NULL; /* its tape */
            if (pre_norm(&b)) pre_layer(&b, l, x, tp, dy, dx);
            else post_layer(&b, l, x, tp, dy, dx);
        }
    }
    panels_reset(&b);
    for (int32_t g = 0; g < G; g++)
        if (embed_bwd(&b, ids, type_ids, word_rows ? word_rows[g] : NULL,
                      dys + (2 * (size_t)g + (size_t)(c->n_layers % 2)) * th, d_word[g]))
            goto oom;
    rc = 0;
    goto out;
oom:
    bli_set_err(err, errlen, "backward: out of memory for %d tokens", T);
out:
    ctx_free(&b);
    free(dys);
    return rc;
}

int bl_backward(bl_state *s, const int32_t *ids, const int32_t *type_ids, const float *d_final, float *d_word,
                char *err, size_t errlen) {
    if (!s || !ids || !d_final || !d_word) {
        bli_set_err(err, errlen, "bl_backward: missing argument");
        return -1;
    }
    if (!s->T || !s->hidden || !s->has_final) {
        bli_set_err(err, errlen, "bl_backward: no forward pass that kept every layer's hidden states");
        return -1;
    }
    const float *hid = s->hidden, *rows = s->word_rows, *tape = s->tape_ok ? s->tape : NULL;
    return bli_backward_steps(s, 1, ids, type_ids, &hid, &rows, &tape, &d_final, &d_word, err, errlen);
}
