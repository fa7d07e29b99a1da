/* encoder_family.c — the forward pass's hooks for the families with
 * relative or rotary positions (encoder_family.h, "Hooks"): their weights
 * beyond BERT's, their per-forward tables, and the scores of one head.
 * Called by encoder.c at fixed points; a BERT-layout model has no extras
 * (s->fx NULL) and gets BERT's softmax. Nothing here allocates inside the
 * forward pass: every buffer is sized by bli_fam_reserve. */
#include "encoder_family.h"
#include "encoder_types.h"
#include "base/error.h"
#include "base/sizes.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct bli_famx {
    int pos;                  /* the positions trait, BLI_POS_* (family.h) */
    int32_t T;                /* tokens of the tables below (this forward) */
    /* MPNet */
    const float *rel_table;   /* [rel_rows][NH] relative_attention_bias   */
    float *bias;              /* [NH][2T-1] this forward's bias           */
    /* DeBERTa */
    float *rel;               /* [rel_rows][hidden] rel_embeddings, LayerNorm'ed (owned) */
    int32_t *idx;             /* [2T-1] relative row of i - j, minus r0   */
    int32_t r0, nr;           /* rows of rel this forward reaches         */
    int32_t nr_cap;           /* rows pk, pq hold (bli_fam_reserve)       */
    float *pk, *pq;           /* [nr_cap][hidden] them projected by layer l's key / query */
    int32_t pl;               /* the layer pk, pq belong to               */
    /* rotary positions */
    float *rope_g, *rope_l;   /* [max_tokens][d] cos | sin tables, global and local theta */
    /* gated feed-forward, final norm */
    blk_weight *wg;           /* [n_layers] the gates Wg [intermediate][hidden] */
    const float *final_g;     /* [hidden] final norm (no bias)            */
    float *zeros;             /* [max(hidden, intermediate)] the final norm's bias */
    float *gate;              /* [max_tokens][intermediate] x Wg          */
};

static const bl_tensor *find(const bl_model *m, const char *name, int64_t d0, int64_t d1, char *err, size_t errlen) {
    const bl_tensor *t = bl_model_find_tensor(m, name);
    if (!t || t->dtype != BL_F32 || t->n_dims != (d1 ? 2 : 1) || t->dims[0] != d0 || (d1 && t->dims[1] != d1)) {
        bli_set_err(err, errlen, "bundle has no usable %s [%lld%s%lld] (f32)", name, (long long)d0, d1 ? ", " : "",
                    (long long)d1);
        return NULL;
    }
    return t;
}

int bli_fam_init(bl_state *s, const bl_model *m, char *err, size_t errlen) {
    const bli_family *f = &s->fam;
    const bli_family_traits *tr = s->tr = bli_traits(f->kind);
    s->fx = NULL;
    if (tr->positions == BLI_POS_ABSOLUTE && tr->ffn == BLI_FFN_PLAIN && !tr->final_norm) return 0; /* BERT's */
    bli_famx *x = calloc(1, sizeof *x);
    if (!x) {
        bli_set_err(err, errlen, "out of memory");
        return -1;
    }
    s->fx = x;
    x->pos = tr->positions;
    x->pl = -1;
    const int32_t H = s->c.hidden, I = s->c.intermediate, L = s->c.n_layers;
    if (x->pos == BLI_POS_BUCKETS) {
        const bl_tensor *t = find(m, "encoder.relative_attention_bias.weight", f->rel_rows, s->c.n_heads, err, errlen);
        if (!t) return -1;
        x->rel_table = (const float *)t->data;
    }
    if (x->pos == BLI_POS_DISENTANGLED) {
        const bl_tensor *t = find(m, "encoder.rel_embeddings.weight", f->rel_rows, H, err, errlen);
        if (!t) return -1;
        x->rel = bli_alloc(BLI_BYTES(sizeof(float), f->rel_rows, H), 0, "the relative embeddings", err, errlen);
        if (!x->rel) return -1;
        memcpy(x->rel, t->data, (size_t)f->rel_rows * H * sizeof(float));
        if (f->rel_norm) {
            const bl_tensor *g = find(m, "encoder.rel_embeddings.LayerNorm.weight", H, 0, err, errlen),
                            *b = g ? find(m, "encoder.rel_embeddings.LayerNorm.bias", H, 0, err, errlen) : NULL;
            if (!b) return -1;
            blk_layernorm(x->rel, NULL, f->rel_rows, H, (const float *)g->data, (const float *)b->data, s->c.ln_eps);
        }
    }
    if (!(x->zeros = calloc((size_t)(H > I ? H : I), sizeof(float)))) {
        bli_set_err(err, errlen, "out of memory");
        return -1;
    }
    if (tr->final_norm) {
        const bl_tensor *g = find(m, "encoder.final_norm.weight", H, 0, err, errlen);
        if (!g) return -1;
        x->final_g = (const float *)g->data;
    }
    if (tr->ffn == BLI_FFN_GATED) {
        if (!(x->wg = calloc((size_t)L, sizeof *x->wg))) {
            bli_set_err(err, errlen, "out of memory");
            return -1;
        }
        for (int32_t l = 0; l < L; l++) {
            char name[96];
            snprintf(name, sizeof name, "encoder.layer.%d.intermediate.gate.weight", l);
            const bl_tensor *t = bl_model_find_tensor(m, name);
            if (!t || t->n_dims != 2 || t->dims[0] != I || t->dims[1] != H ||
                blk_weight_of_tensor(&x->wg[l], t, I, H)) {
                bli_set_err(err, errlen, "bundle has no usable %s [%d, %d]", name, I, H);
                return -1;
            }
            if (blk_weight_pack(&x->wg[l])) {
                bli_set_err(err, errlen, "out of memory preparing %s", name);
                return -1;
            }
        }
    }
    return 0;
}

void bli_fam_free_buffers(bl_state *s) {
    bli_famx *x = s->fx;
    if (!x) return;
    free(x->bias), free(x->idx), free(x->pk), free(x->pq), free(x->rope_g), free(x->rope_l), free(x->gate);
    x->bias = x->pk = x->pq = x->rope_g = x->rope_l = x->gate = NULL;
    x->idx = NULL;
    x->T = 0;
    x->pl = -1;
}

void bli_fam_free(bl_state *s) {
    if (!s->fx) return;
    bli_fam_free_buffers(s);
    bli_famx *x = s->fx;
    if (x->wg)
        for (int32_t l = 0; l < s->c.n_layers; l++) blk_weight_free(&x->wg[l]);
    free(x->wg), free(x->zeros), free(x->rel);
    free(x);
    s->fx = NULL;
}

/* Relative rows a forward of up to T tokens can reach (DeBERTa). */
static int32_t rel_rows_max(const bl_state *s, int32_t T) {
    return bli_deberta_rel_rows(T, s->fam.rel_buckets, s->fam.rel_max);
}

size_t bli_fam_scratch_floats(const bl_state *s, int32_t T) {
    if (!s->fx || s->fx->pos != BLI_POS_DISENTANGLED) return 0;
    const int32_t nr = rel_rows_max(s, T), d = s->c.hidden / s->c.n_heads;
    const size_t a = bli_deberta_scratch_floats(T, nr, d), b = blk_matmul_scratch_floats(nr, s->c.hidden);
    return a > b ? a : b;
}

int bli_fam_reserve(bl_state *s, int32_t T, char *err, size_t errlen) {
    bli_famx *x = s->fx;
    if (!x) return 0;
    bli_fam_free_buffers(s);
    const int32_t NH = s->c.n_heads, H = s->c.hidden, d = H / NH, R = 2 * T - 1;
    char what[96];
    snprintf(what, sizeof what, "%d tokens: the relative positions", T);
    if (x->pos == BLI_POS_BUCKETS && !(x->bias = bli_alloc(BLI_BYTES(sizeof(float), NH, R), 0, what, err, errlen)))
        return -1;
    if (x->pos == BLI_POS_DISENTANGLED) {
        const int32_t nr = x->nr_cap = rel_rows_max(s, T);
        if (!(x->idx = bli_alloc(BLI_BYTES(sizeof(int32_t), R), 0, what, err, errlen)) ||
            !(x->pk = bli_alloc(BLI_BYTES(sizeof(float), nr, H), 0, what, err, errlen)) ||
            !(x->pq = bli_alloc(BLI_BYTES(sizeof(float), nr, H), 0, what, err, errlen)))
            return -1;
    }
    if (x->pos == BLI_POS_ROTARY) {
        snprintf(what, sizeof what, "%d tokens: the rotary tables", T);
        if (!(x->rope_g = bli_alloc(BLI_BYTES(sizeof(float), T, d), 0, what, err, errlen)) ||
            !(x->rope_l = bli_alloc(BLI_BYTES(sizeof(float), T, d), 0, what, err, errlen)))
            return -1;
        bli_rope_table(x->rope_g, T, d, s->fam.rope_global);
        bli_rope_table(x->rope_l, T, d, s->fam.rope_local);
    }
    if (s->tr->ffn == BLI_FFN_GATED) {
        snprintf(what, sizeof what, "%d tokens: the feed-forward gates", T);
        if (!(x->gate = bli_alloc(BLI_BYTES(sizeof(float), T, s->c.intermediate), 0, what, err, errlen))) return -1;
    }
    return 0;
}

int bli_fam_forward_begin(bl_state *s, int32_t T, char *err, size_t errlen) {
    bli_famx *x = s->fx;
    if (!x) return 0;
    x->T = T;
    x->pl = -1;
    if (x->pos == BLI_POS_BUCKETS) bli_mpnet_bias(x->bias, x->rel_table, s->c.n_heads, T, 32, 128);
    if (x->pos == BLI_POS_DISENTANGLED) {
        bli_deberta_rel_index(x->idx, &x->r0, &x->nr, T, s->fam.rel_buckets, s->fam.rel_max);
        /* the rows projected per layer go into pk, pq: never past them */
        if (x->nr > x->nr_cap || x->r0 < 0 || (int64_t)x->r0 + x->nr > s->fam.rel_rows) {
            bli_set_err(err, errlen, "%d tokens reach relative rows %d..%d, beyond the %d reserved of %d",
                        T, x->r0, x->r0 + x->nr - 1, x->nr_cap, s->fam.rel_rows);
            return -1;
        }
    }
    return 0;
}

/* DeBERTa: rows of the relative embeddings through layer l's key and query
 * projections, split by rows over the pool as the other row tasks. */
typedef struct {
    bl_state *s;
    int32_t l;
} rel_task;

static void task_rel_rows(void *arg, int w, int n) {
    rel_task *r = arg;
    bl_state *s = r->s;
    bli_famx *x = s->fx;
    const layer_weights *lw = bli_lw(s, r->l);
    const int32_t H = s->c.hidden;
    int32_t t0, t1;
    bli_rows_of(x->nr, w, n, &t0, &t1);
    if (t0 >= t1) return;
    float *scratch = s->scratch + (size_t)w * s->nscratch;
    const float *in = x->rel + (size_t)(x->r0 + t0) * H;
    const unsigned terms = (unsigned)s->fam.rel_terms;
    if (terms == (BLI_DEB_C2P | BLI_DEB_P2C)) { /* both from one packing of the rows */
        float *const y[2] = {x->pk + (size_t)t0 * H, x->pq + (size_t)t0 * H};
        const blk_weight *const ws[2] = {&lw->wk, &lw->wq};
        const float *const bs[2] = {lw->bk, lw->bq};
        blk_matmul_shared(2, y, in, t1 - t0, ws, bs, -1, scratch);
    } else if (terms & BLI_DEB_C2P)
        blk_matmul(x->pk + (size_t)t0 * H, in, t1 - t0, &lw->wk, lw->bk, scratch);
    else if (terms & BLI_DEB_P2C)
        blk_matmul(x->pq + (size_t)t0 * H, in, t1 - t0, &lw->wq, lw->bq, scratch);
}

void bli_fam_layer_begin(bl_state *s, int32_t l) {
    bli_famx *x = s->fx;
    if (!x || x->pos != BLI_POS_DISENTANGLED) return;
    /* ALBERT-style sharing does not apply here: each layer has its projections */
    rel_task r = {s, l};
    bli_pool_run(s->pool, task_rel_rows, &r);
    x->pl = l;
}

/* Rotary: layer l is global when l % global_every == 0 (every layer without
 * the sliding trait: global_every 1). */
static int global_layer(const bli_family *f, int32_t l) { return f->global_every <= 1 || l % f->global_every == 0; }
static int is_global(const bl_state *s, int32_t l) { return global_layer(&s->fam, l); }

void bli_fam_qk_rows(bl_state *s, int32_t l, int32_t t0, int32_t t1) {
    bli_famx *x = s->fx;
    if (!x || x->pos != BLI_POS_ROTARY) return;
    const int32_t H = s->c.hidden, NH = s->c.n_heads, d = H / NH;
    const float *cs = is_global(s, l) ? x->rope_g : x->rope_l;
    bli_rope_rows(s->q, H, t0, t1, NH, d, cs);
    bli_rope_rows(s->k, H, t0, t1, NH, d, cs);
}

void bli_fam_softmax(bl_state *s, int32_t l, int32_t h, float *a, int32_t T, float *scratch) {
    const int32_t H = s->c.hidden, NH = s->c.n_heads, d = H / NH;
    bli_famx *x = s->fx;
    if (!x) {
        blk_softmax(a, T, T, 1.0f / sqrtf((float)d));
        return;
    }
    switch (x->pos) {
    case BLI_POS_BUCKETS:
        bli_rel_bias_add(a, T, sqrtf((float)d), x->bias + (size_t)h * (2 * T - 1));
        blk_softmax(a, T, T, 1.0f);
        break;
    case BLI_POS_DISENTANGLED: {
        const unsigned terms = (unsigned)s->fam.rel_terms;
        const int n_terms = !!(terms & BLI_DEB_C2P) + !!(terms & BLI_DEB_P2C);
        bli_deberta_add(a, T, s->q + (size_t)h * d, s->k + (size_t)h * d, H, x->pk + (size_t)h * d,
                        x->pq + (size_t)h * d, H, x->idx, x->nr, d, terms, scratch);
        blk_softmax(a, T, T, 1.0f / sqrtf((float)d * (float)(1 + n_terms)));
        break;
    }
    case BLI_POS_ROTARY:
        bli_softmax_window(a, T, 1.0f / sqrtf((float)d), is_global(s, l) ? -1 : s->fam.window);
        break;
    default:
        blk_softmax(a, T, T, 1.0f / sqrtf((float)d));
    }
}

/* ------------------------------------------------------ scores and terms
 * What bli_fam_softmax does to one head, kept apart term by term (bl_scores,
 * scores.c): the same operations in the same order, so that the scores are
 * the very logits its softmax takes. */

/* DeBERTa's relative terms the config enables: BLI_DEB_* bits, and how many. */
static unsigned deberta_terms(const bli_family *f, int *n) {
    const unsigned on = (unsigned)f->rel_terms;
    *n = !!(on & BLI_DEB_C2P) + !!(on & BLI_DEB_P2C);
    return on;
}

/* One term's name, short form and sentence into slot i of out. */
static void term(bl_score_info *out, const char *name, const char *abbr, const char *about) {
    const int i = out->n_terms++;
    snprintf(out->name[i], sizeof out->name[i], "%s", name);
    snprintf(out->abbr[i], sizeof out->abbr[i], "%s", abbr);
    snprintf(out->about[i], sizeof out->about[i], "%s", about);
}

void bli_fam_score_terms(const bli_family *f, const bl_config *c, int32_t l, bl_score_info *out) {
    memset(out, 0, sizeof *out);
    out->window = -1;
    (void)c;
    switch (bli_traits(f->kind)->positions) {
    case BLI_POS_BUCKETS:
        term(out, "q·k/√d", "q·k/√d", "the query's dot product with the key, over √d");
        term(out, "relative position bias", "bias",
             "a learned number per head for the bucket of the key's offset j − i from the query (32 buckets: "
             "exact within 8 tokens, logarithmic to 128), the same in every layer");
        break;
    case BLI_POS_DISENTANGLED: {
        int n;
        const unsigned on = deberta_terms(f, &n);
        const char *div = n == 2 ? "√(3d)" : n == 1 ? "√(2d)" : "√d";
        char about[192];
        snprintf(about, sizeof about, "the query's content q_i against the key's content k_j, over %s", div);
        term(out, "content-to-content", "c2c", about);
        if (on & BLI_DEB_C2P) {
            snprintf(about, sizeof about,
                     "the query's content q_i against the key projection of the relative position i − j, "
                     "over %s", div);
            term(out, "content-to-position", "c2p", about);
        }
        if (on & BLI_DEB_P2C) {
            snprintf(about, sizeof about,
                     "the key's content k_j against the query projection of the relative position i − j, "
                     "over %s", div);
            term(out, "position-to-content", "p2c", about);
        }
        break;
    }
    case BLI_POS_ROTARY:
        term(out, "q·k/√d", "q·k/√d",
             "the dot product of the query and the key, both rotated by their positions (RoPE), so that it also "
             "depends on their distance; over √d");
        if (!global_layer(f, l)) out->window = f->window;
        break;
    default:
        term(out, "q·k/√d", "q·k/√d", "the query's dot product with the key, over √d");
    }
}

void bli_fam_scores(bl_state *s, int32_t l, int32_t h, const float *q, const float *k, int32_t T, float *scores,
                    float *terms, float *scratch) {
    const int32_t H = s->c.hidden, NH = s->c.n_heads, d = H / NH;
    const size_t n = (size_t)T * T;
    bli_famx *x = s->fx;
    float scale = 1.0f / sqrtf((float)d);
    int32_t half = -1; /* keys beyond it masked (ModernBERT's local layers) */
    switch (x ? x->pos : BLI_POS_ABSOLUTE) {
    case BLI_POS_BUCKETS: {
        /* bli_rel_bias_add: a[i][j] / sqrt(d) + bias[j - i + T - 1] */
        const float div = sqrtf((float)d), *rel = x->bias + (size_t)h * (2 * T - 1);
        if (terms)
            for (int32_t i = 0; i < T; i++)
                for (int32_t j = 0; j < T; j++) {
                    terms[(size_t)i * T + j] = scores[(size_t)i * T + j] / div;
                    terms[n + (size_t)i * T + j] = rel[j - i + T - 1];
                }
        bli_rel_bias_add(scores, T, div, rel);
        return;
    }
    case BLI_POS_DISENTANGLED: {
        int n_rel;
        const unsigned on = deberta_terms(&s->fam, &n_rel);
        scale = 1.0f / sqrtf((float)d * (float)(1 + n_rel));
        if (x->pl != l) bli_fam_layer_begin(s, l); /* the rows of another layer are there */
        const float *pk = x->pk + (size_t)h * d, *pq = x->pq + (size_t)h * d;
        if (!terms) {
            bli_deberta_add(scores, T, q, k, d, pk, pq, H, x->idx, x->nr, d, on, scratch);
            break;
        }
        /* each relative term on its own, added as bli_deberta_add adds them
         * (c2p, then p2c): the same sums */
        memcpy(terms, scores, n * sizeof(float));
        float *t = terms + n;
        const unsigned bits[2] = {BLI_DEB_C2P, BLI_DEB_P2C};
        for (int b = 0; b < 2; b++) {
            if (!(on & bits[b])) continue;
            memset(t, 0, n * sizeof(float));
            bli_deberta_add(t, T, q, k, d, pk, pq, H, x->idx, x->nr, d, bits[b], scratch);
            for (size_t i = 0; i < n; i++) scores[i] += t[i];
            t += n;
        }
        for (size_t i = 0; i < (size_t)(1 + n_rel) * n; i++) terms[i] *= scale;
        break;
    }
    case BLI_POS_ROTARY:
        if (!is_global(s, l)) half = s->fam.window;
        break;
    default:
        break;
    }
    /* the softmax's scale (blk_softmax(a, T, T, scale): exp(scale * a)) */
    for (size_t i = 0; i < n; i++) scores[i] *= scale;
    if (terms && (!x || x->pos != BLI_POS_DISENTANGLED)) memcpy(terms, scores, n * sizeof(float));
    if (half >= 0) {
        const int n_terms = terms ? 1 : 0;
        for (int32_t i = 0; i < T; i++) {
            int32_t j0, j1;
            bli_window_of(i, T, half, &j0, &j1);
            for (int32_t j = 0; j < T; j++)
                if (j < j0 || j >= j1)
                    for (int t = 0; t <= n_terms; t++) (t ? terms : scores)[(size_t)i * T + j] = NAN;
        }
    }
}

/* ------------------------------------------------------------- blocks
 * The norm and feed-forward traits (family.h), each once; encoder.c's
 * layer (post-norm or pre-norm) calls them on its rows. */

/* RMSNorm rows of x [R][n] in place, x = x + res first when res is given:
 * x * g / sqrt(mean(x^2) + eps) (Llama's, the mean in double). */
static void rms_norm(float *x, const float *res, int32_t R, int32_t n, const float *g, float eps) {
    for (int32_t r = 0; r < R; r++) {
        float *xr = x + (size_t)r * n;
        if (res)
            for (int32_t i = 0; i < n; i++) xr[i] += res[(size_t)r * n + i];
        double ss = 0.0;
        for (int32_t i = 0; i < n; i++) ss += (double)xr[i] * xr[i];
        const float inv = 1.0f / sqrtf((float)(ss / n) + eps);
        for (int32_t i = 0; i < n; i++) xr[i] = g[i] * (xr[i] * inv);
    }
}

void bli_fam_norm(const bl_state *s, float *x, const float *res, int32_t R, const float *g, const float *b) {
    if (s->tr && s->tr->norm == BLI_NORM_RMS) rms_norm(x, res, R, s->c.hidden, g, s->c.ln_eps);
    else blk_layernorm(x, res, R, s->c.hidden, g, b, s->c.ln_eps);
}

void bli_fam_final_norm(const bl_state *s, float *x, int32_t R) {
    if (s->fx && s->fx->final_g) bli_fam_norm(s, x, NULL, R, s->fx->final_g, s->fx->zeros);
}

void bli_fam_ffn(bl_state *s, int32_t l, float *y, const float *in, int32_t t0, int32_t t1, float *scratch,
                 float *tu, float *tg) {
    const layer_weights *lw = bli_lw(s, l);
    const int32_t I = s->c.intermediate, R = t1 - t0, act = s->c.activation;
    const size_t n = (size_t)R * I;
    float *ffn = s->ffn + (size_t)t0 * I;
    /* SiLU is not one of the kernels' activations: applied here; with a
     * tape, u is kept before the activation runs */
    blk_matmul_act(ffn, in, R, &lw->w1, lw->b1, tu || act == BL_ACT_SILU ? -1 : act, scratch);
    if (tu) {
        memcpy(tu, ffn, n * sizeof(float));
        if (act != BL_ACT_SILU) blk_activate(ffn, n, act);
    }
    if (act == BL_ACT_SILU)
        for (size_t i = 0; i < n; i++) ffn[i] = ffn[i] / (1.0f + expf(-ffn[i]));
    if (s->tr && s->tr->ffn == BLI_FFN_GATED) {
        float *gate = s->fx->gate + (size_t)t0 * I;
        blk_matmul(gate, in, R, &s->fx->wg[l], NULL, scratch);
        if (tg) memcpy(tg, gate, n * sizeof(float));
        for (size_t i = 0; i < n; i++) ffn[i] *= gate[i];
    }
    blk_matmul(y, ffn, R, &lw->w2, lw->b2, scratch);
}
