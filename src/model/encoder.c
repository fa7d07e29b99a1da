/* encoder.c — the BERT forward pass, exposing what attention views need.
 *
 *   x = LayerNorm(word[id] + position[p_t] + type[type_id])     [T][E]
 *   x = x Wp + bp  (families with a projection: ELECTRA-small, ALBERT)  [T][hidden]
 *   for each layer:
 *       q, k, v = x Wq + bq, x Wk + bk, x Wv + bv           [T][hidden], head h = columns h*d..h*d+d
 *       A_h     = softmax(q_h k_h^T / sqrt(d))               [T][T], rows = queries
 *       ctx_h   = A_h v_h
 *       x       = LayerNorm(x + ctx Wo + bo)
 *       x       = LayerNorm(x + act(x W1 + b1) W2 + b2)
 *
 * Value-weighted norms (Kobayashi et al. 2020): ||A_h[i][j] f_h(x_j)|| with
 * f_h(x_j) = v_h[j] Wo_h (head h's slice of the output projection, no bias).
 * ||f_h(x_j)||^2 = v_h[j]^T G_h v_h[j] with the d x d Gram matrix
 * G_h = Wo_h^T Wo_h, computed once per layer in bl_state_new.
 *
 * Families (bundle.h): the position ids p_t are t, or RoBERTa's
 * padding_idx + 1 + (non-pad tokens before t) with pad tokens at padding_idx
 * (positions()); ALBERT runs one stored layer group for every layer (bli_lw).
 * Hooks for the families of relative or rotary positions: the scores of one
 * head (task_heads, "score hook") and the q/k rows (qkv_rows, "position
 * hook") are where a family's bias or rotation goes.
 *
 * Everything is allocated in bl_state_new (encoder_state.c: the state, its
 * buffers and threads); bl_forward allocates nothing.
 * With bl_state_set_final(s, 0) the last layer stops after ctx: its output
 * projection and feed-forward only make the final hidden states.
 * Quantized bundles compute q k^T and A v on 13-bit integers from 64 tokens
 * where the kernels make that the faster (blk_matmul_nt_q; bli_attn_product
 * says when).
 *
 * Threads (bl_state_set_threads, threads.h): the pass runs as 2L + 1 tasks
 * (2L without the final hidden states)
 * on the state's pool, each split without touching the kernels:
 *   rows   embeddings + LayerNorm + the first Q/K/V projection; then per
 *          layer: the output projection, both LayerNorms, the feed-forward
 *          block and the next layer's Q/K/V projection. Thread w of n takes
 *          token rows [t0, t1) (whole groups of 4, the kernels' tile
 *          height): every one of these steps reads and writes only its own
 *          rows (the weights are shared and read-only).
 *   heads  scores, softmax, context, value norms of one head at a time,
 *          heads handed out one by one to whichever thread is free.
 * Each thread has its own kernel scratch (and [T][T] buffer when attention
 * is not kept), sized by bl_state_reserve. Every row and every head is
 * computed by the same kernel calls with the same inputs whatever the split,
 * so the results are bit for bit those of one thread (tests/threads.test.mjs).
 */
#include "encoder_types.h"
#include "base/error.h"
#include "base/sizes.h"
#include "base/threads.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* ------------------------------------------------------------- forward */

/* [T][hidden] columns of head h -> [T][d] block of out ([H][T][d]). */
static void split_head(float *out, const float *in, int32_t T, int32_t H, int32_t d, int32_t h) {
    for (int32_t t = 0; t < T; t++) memcpy(out + (size_t)t * d, in + (size_t)t * H + (size_t)h * d, (size_t)d * 4);
}

/* fnorm[h][j] = ||f_h(x_j)|| = sqrt(v_h[j]^T G_h v_h[j]) for layer l, head h. */
static void value_norms(bl_state *s, int32_t l, int32_t h, int32_t T) {
    const int32_t NH = s->c.n_heads, H = s->c.hidden, d = H / NH;
    const double *g = s->gram + ((size_t)l * NH + h) * d * d;
    for (int32_t j = 0; j < T; j++) {
        const float *v = s->v + (size_t)j * H + (size_t)h * d;
        double sum = 0.0;
        for (int32_t a = 0; a < d; a++) {
            double ga = 0.0;
            for (int32_t b = 0; b < d; b++) ga += g[a * d + b] * v[b];
            sum += v[a] * ga;
        }
        s->fnorm[(size_t)h * T + j] = (float)sqrt(sum > 0.0 ? sum : 0.0);
    }
}

/* One task of the forward pass (see the top of the file). */
typedef struct {
    bl_state *s;
    const int32_t *ids, *type_ids;
    int32_t T;
    int32_t l;        /* layer of the task                  */
    float *tape;      /* s->tape, or NULL: none kept         */
    atomic_int next;  /* heads task: the next head to claim */
} fwd_task;

/* q, k, v rows [t0, t1) of layer l = x Wq^T + bq, x Wk^T + bk, x Wv^T + bv
 * (x packed once); pre-norm layers project N1(x), made in x2. */
static void qkv_rows(bl_state *s, int32_t l, int32_t t0, int32_t t1, float *scratch) {
    const layer_weights *w = bli_lw(s, l);
    const size_t o = (size_t)t0 * s->c.hidden;
    const float *in = s->x + o;
    if (s->tr->layer == BLI_LAYER_PRE_NORM && (l > 0 || s->tr->first_norm)) {
        memcpy(s->x2 + o, in, (size_t)(t1 - t0) * s->c.hidden * sizeof(float));
        bli_fam_norm(s, s->x2 + o, NULL, t1 - t0, w->ln1_g, w->ln1_b);
        in = s->x2 + o;
    }
    float *const y[3] = {s->q + o, s->k + o, s->v + o};
    const blk_weight *const ws[3] = {&w->wq, &w->wk, &w->wv};
    const float *const bs[3] = {w->bq, w->bk, w->bv};
    blk_matmul_shared(3, y, in, t1 - t0, ws, bs, -1, scratch);
    bli_fam_qk_rows(s, l, t0, t1); /* rotary positions (encoder_family.h) */
}

/* Rows: embeddings, their LayerNorm (E wide), the projection to the
 * hidden width (fam.project), layer 0's q, k, v. */
static void task_embed(void *arg, int w, int n) {
    fwd_task *f = arg;
    bl_state *s = f->s;
    const int32_t H = s->c.hidden, E = s->fam.embed;
    int32_t t0, t1;
    bli_rows_of(f->T, w, n, &t0, &t1);
    if (t0 >= t1) return;
    float *scratch = s->scratch + (size_t)w * s->nscratch;
    float *e = s->fam.project ? s->emb : s->x; /* [T][E] */
    for (int32_t t = t0; t < t1; t++) {
        float *x = e + (size_t)t * E;
        const float *p = s->pos + (size_t)s->posid[t] * E, *ty = s->type + (size_t)(f->type_ids ? f->type_ids[t] : 0) * E;
        if (s->word_rows) memcpy(x, s->word_rows + (size_t)t * E, (size_t)E * sizeof(float)); /* bl_state_set_word_rows */
        else blk_weight_row(&s->word, f->ids[t], x);
        for (int32_t i = 0; i < E; i++) x[i] += p[i] + ty[i];
    }
    if (!s->tr->no_emb_norm) blk_layernorm(e + (size_t)t0 * E, NULL, t1 - t0, E, s->emb_ln_g, s->emb_ln_b, s->c.ln_eps);
    float *x = s->x + (size_t)t0 * H;
    if (s->fam.project) blk_matmul(x, s->emb + (size_t)t0 * E, t1 - t0, &s->proj_w, s->proj_b, scratch);
    if (s->hidden) memcpy(s->hidden + (size_t)t0 * H, x, (size_t)(t1 - t0) * H * 4);
    qkv_rows(s, 0, t0, t1, scratch);
}

/* Position ids of the input (bundle.h "Families"): t, or from padding_idx +
 * 1 over the tokens that are not padding_idx, those at padding_idx. Every
 * one is below pos_rows: T <= max_positions = pos_rows - pos_offset. */
static void positions(bl_state *s, const int32_t *ids, int32_t T) {
    if (s->fam.nopos) { /* one row of zeros (bundle.h) */
        memset(s->posid, 0, (size_t)T * sizeof *s->posid);
        return;
    }
    if (!s->fam.pos_offset) {
        for (int32_t t = 0; t < T; t++) s->posid[t] = t;
        return;
    }
    int32_t next = s->fam.pos_offset;
    for (int32_t t = 0; t < T; t++) s->posid[t] = ids[t] == s->fam.pad_id ? s->fam.pad_id : next++;
}

/* Where layer l's kept q/k go ([H][T][d] at this offset of queries/keys),
 * or -1 when they are not kept. */
static ptrdiff_t qk_offset(const bl_state *s, int32_t l, int32_t T) {
    if (!s->queries) return -1;
    if (s->flags & BL_KEEP_QK_ALL) return (ptrdiff_t)l * T * s->c.hidden;
    return l == s->qk_layer ? 0 : -1;
}

/* Heads of layer l, claimed one at a time: scores, softmax, context
 * (its d columns of ctx), value norms, kept queries/keys. */
static void task_heads(void *arg, int w, int n) {
    fwd_task *f = arg;
    bl_state *s = f->s;
    const int32_t T = f->T, l = f->l, H = s->c.hidden, NH = s->c.n_heads, d = H / NH;
    float *scratch = s->scratch + (size_t)w * s->nscratch;
    const ptrdiff_t qk = qk_offset(s, l, T);
    const bli_nt_fn nt = bli_attn_product(s, l, T);
    (void)n;
    for (int32_t h; (h = atomic_fetch_add_explicit(&f->next, 1, memory_order_relaxed)) < NH;) {
        float *a = s->attn ? s->attn + ((size_t)l * NH + h) * T * T : s->att + (size_t)w * s->natt; /* [T][T] */
        if (qk >= 0) {
            split_head(s->queries + qk + (size_t)h * T * d, s->q, T, H, d, h);
            split_head(s->keys + qk + (size_t)h * T * d, s->k, T, H, d, h);
        }
        if (s->n_masked && s->head_mask[(size_t)l * NH + h]) {
            /* masked head: probabilities times 0, so its context is 0 */
            memset(a, 0, (size_t)T * T * 4);
            for (int32_t t = 0; t < T; t++) memset(s->ctx + (size_t)t * H + (size_t)h * d, 0, (size_t)d * 4);
            if (s->norms) memset(s->norms + ((size_t)l * NH + h) * T * T, 0, (size_t)T * T * 4);
            continue;
        }
        /* scores a[i][j] = q_h[i] . k_h[j], then softmax of scale * scores */
        nt(a, T, s->q + (size_t)h * d, H, T, s->k + (size_t)h * d, H, 1, T, d, scratch);
        /* the family's relative terms, window and scale (encoder_family.h) */
        bli_fam_softmax(s, l, h, a, T, scratch);
        /* ctx_h[i][e] = sum_j a[i][j] v[j][h*d + e] */
        nt(s->ctx + (size_t)h * d, H, a, T, T, s->v + (size_t)h * d, 1, H, d, T, scratch);
        if (s->norms) {
            value_norms(s, l, h, T);
            float *nm = s->norms + ((size_t)l * NH + h) * T * T;
            const float *fn = s->fnorm + (size_t)h * T;
            for (int32_t i = 0; i < T; i++)
                for (int32_t j = 0; j < T; j++) nm[(size_t)i * T + j] = a[(size_t)i * T + j] * fn[j];
        }
    }
}

/* Rows: the rest of layer l, then layer l + 1's q, k, v. The family's
 * layer trait (family.h) places the norms; its norm and feed-forward blocks
 * are encoder_family.c's:
 *   post-norm  x2 = N1(x + ctx Wo + bo);  x = N2(x2 + ffn(x2))
 *   pre-norm   x += ctx Wo + bo;  x += ffn(N2(x));  after the last layer
 *              x = Nfinal(x); the next layer projects N1(x) (qkv_rows). */
static void task_rows(void *arg, int w, int n) {
    fwd_task *f = arg;
    bl_state *s = f->s;
    const bl_config *c = &s->c;
    const int32_t l = f->l, H = c->hidden;
    const layer_weights *lw = bli_lw(s, l);
    int32_t t0, t1;
    bli_rows_of(f->T, w, n, &t0, &t1);
    if (t0 >= t1) return;
    const int32_t R = t1 - t0;
    const size_t nr = (size_t)R * H;
    float *scratch = s->scratch + (size_t)w * s->nscratch;
    float *x = s->x + (size_t)t0 * H, *x2 = s->x2 + (size_t)t0 * H;
    /* the tape's rows of this layer: [5][T][H] q, k, v, a, o, then [T][I]
     * u and the gate (bli_state_set_tape) */
    const size_t th = (size_t)f->T * H, ti = (size_t)f->T * c->intermediate;
    float *tl = f->tape ? f->tape + (size_t)l * bli_tape_layer(s, f->T) : NULL;
    float *tp = tl ? tl + (size_t)t0 * H : NULL;
    float *tu = tl ? tl + 5 * th + (size_t)t0 * c->intermediate : NULL, *tg = tu ? tu + ti : NULL;
    if (tp)
        for (int i = 0; i < 3; i++) memcpy(tp + i * th, (i == 0 ? s->q : i == 1 ? s->k : s->v) + (size_t)t0 * H, nr * sizeof(float));
    blk_matmul(x2, s->ctx + (size_t)t0 * H, R, &lw->wo, lw->bo, scratch);
    if (tp) memcpy(tp + 3 * th, x2, nr * sizeof(float));                 /* a */
    if (s->tr->layer == BLI_LAYER_PRE_NORM) {
        for (size_t i = 0; i < nr; i++) x[i] += x2[i];
        memcpy(x2, x, nr * sizeof(float));
        bli_fam_norm(s, x2, NULL, R, lw->ln2_g, lw->ln2_b);
        bli_fam_ffn(s, l, x2, x2, t0, t1, scratch, tu, tg);
        if (tp) memcpy(tp + 4 * th, x2, nr * sizeof(float));             /* o */
        for (size_t i = 0; i < nr; i++) x[i] += x2[i];
        if (l + 1 == c->n_layers) bli_fam_final_norm(s, x, R);
    } else {
        bli_fam_norm(s, x2, x, R, lw->ln1_g, lw->ln1_b);
        bli_fam_ffn(s, l, x, x2, t0, t1, scratch, tu, tg);
        if (tp) memcpy(tp + 4 * th, x, nr * sizeof(float));              /* o */
        bli_fam_norm(s, x, x2, R, lw->ln2_g, lw->ln2_b);
    }
    if (s->hidden) memcpy(s->hidden + ((size_t)(l + 1) * f->T + t0) * H, x, nr * sizeof(float));
    if (l + 1 < c->n_layers) qkv_rows(s, l + 1, t0, t1, scratch);
}

/* Layers l0..L-1 of the run f (its layer l0's q, k, v already made), then
 * the state holds a run of f->T tokens (bl_forward, bli_forward_from). */
static void run_layers(bl_state *s, fwd_task *f, int32_t l0) {
    const int32_t L = s->c.n_layers;
    for (int32_t l = l0; l < L; l++) {
        f->l = l;
        atomic_store_explicit(&f->next, 0, memory_order_relaxed);
        bli_fam_layer_begin(s, l);
        bli_pool_run(s->pool, task_heads, f);
        if (l + 1 < L || !s->no_final) bli_pool_run(s->pool, task_rows, f);
    }
    s->T = f->T;
    s->has_final = !s->no_final;
}

int bl_forward(bl_state *s, const int32_t *ids, const int32_t *type_ids, int32_t T, int32_t qk_layer, char *err,
               size_t errlen) {
    if (!s || !ids) {
        bli_set_err(err, errlen, "bl_forward: missing state or ids");
        return -1;
    }
    const bl_config *c = &s->c;
    const int32_t L = c->n_layers;
    s->T = 0;
    if (!s->max_tokens) {
        bli_set_err(err, errlen, "the state has no buffers (its last bl_state_reserve failed)");
        return -1;
    }
    if (T <= 0 || T > s->max_tokens) {
        bli_set_err(err, errlen, "%d tokens: must be 1..%d", T, s->max_tokens);
        return -1;
    }
    if ((s->flags & BL_KEEP_QK) && !(s->flags & BL_KEEP_QK_ALL) && (qk_layer < 0 || qk_layer >= L)) {
        bli_set_err(err, errlen, "qk layer %d out of range 0..%d", qk_layer, L - 1);
        return -1;
    }
    if (s->fam.notypes) type_ids = NULL; /* the family has no token types (bundle.h) */
    for (int32_t t = 0; t < T; t++) {
        if (ids[t] < 0 || ids[t] >= c->vocab_size) {
            bli_set_err(err, errlen, "token %d: id %d out of range 0..%d", t, ids[t], c->vocab_size - 1);
            return -1;
        }
        int32_t ty = type_ids ? type_ids[t] : 0;
        if (ty < 0 || ty >= c->type_vocab_size) {
            bli_set_err(err, errlen, "token %d: type id %d out of range 0..%d", t, ty, c->type_vocab_size - 1);
            return -1;
        }
    }
    s->qk_layer = qk_layer;
    positions(s, ids, T);
    if (bli_fam_forward_begin(s, T, err, errlen)) return -1;

    /* the tape only when every layer's rows run */
    fwd_task f = {.s = s, .ids = ids, .type_ids = type_ids, .T = T, .l = 0, .tape = s->no_final ? NULL : s->tape};
    s->tape_ok = 0;
    bli_pool_run(s->pool, task_embed, &f);
    run_layers(s, &f, 0);
    s->tape_ok = f.tape != NULL;
    return 0;
}

size_t bli_tape_layer(const bl_state *s, int32_t T) {
    return BLI_TAPE_LAYER(T, s->c.hidden, s->c.intermediate, s->tr->ffn == BLI_FFN_GATED);
}

size_t bli_tape_floats(const bl_state *s, int32_t T) { return (size_t)s->c.n_layers * bli_tape_layer(s, T); }

void bli_state_set_tape(bl_state *s, float *tape) {
    if (s) s->tape = tape, s->tape_ok = 0;
}

/* Rows: q, k, v of layer f->l from x (bli_forward_from). */
static void task_qkv(void *arg, int w, int n) {
    fwd_task *f = arg;
    int32_t t0, t1;
    bli_rows_of(f->T, w, n, &t0, &t1);
    if (t0 < t1) qkv_rows(f->s, f->l, t0, t1, f->s->scratch + (size_t)w * f->s->nscratch);
}

int bli_forward_from(bl_state *s, int32_t l0, char *err, size_t errlen) {
    const int32_t T = s ? s->T : 0, L = s ? s->c.n_layers : 0;
    if (!T || !s->hidden || l0 < 0 || l0 >= L) {
        bli_set_err(err, errlen, "bli_forward_from: no forward that kept the hidden states, or layer %d out of range", l0);
        return -1;
    }
    const size_t th = (size_t)T * s->c.hidden;
    memcpy(s->x, s->hidden + (size_t)l0 * th, th * sizeof(float));
    fwd_task f = {.s = s, .T = T, .l = l0};
    s->T = 0;
    s->tape_ok = 0; /* its layers from l0 up are no longer the tape's */
    bli_pool_run(s->pool, task_qkv, &f);
    run_layers(s, &f, l0);
    return 0;
}

bli_nt_fn bli_attn_product(const bl_state *s, int32_t l, int32_t T) {
    /* Quantized weights: the attention products on 13-bit integers too
     * (blk_matmul_nt_q, ~1e-4 of the largest value, invisible next to the
     * weights' own error: the fidelity corpus's worst q10 max |d| 0.0172 ->
     * 0.0169); f32/f16 bundles keep f32 (their 1e-5 bar against Hugging
     * Face), and so do short inputs, where the products are a small share
     * and padding K = T to 32 costs more than it saves, and kernels whose
     * f32 products are faster (blk_nt_q_pays: native AVX-512). */
    const int32_t wdt = bli_lw(s, l)->wq.dtype;
    return wdt == BL_F32 || wdt == BL_F16 || T < 64 || !blk_nt_q_pays() ? blk_matmul_nt : blk_matmul_nt_q;
}

/* ------------------------------------------------------------- results */

const float *bl_attention(const bl_state *s, int32_t layer) {
    if (!s || !s->attn || !s->T || layer < 0 || layer >= s->c.n_layers) return NULL;
    return s->attn + (size_t)layer * s->c.n_heads * s->T * s->T;
}

const float *bl_norms(const bl_state *s, int32_t layer) {
    if (!s || !s->norms || !s->T || layer < 0 || layer >= s->c.n_layers) return NULL;
    return s->norms + (size_t)layer * s->c.n_heads * s->T * s->T;
}

const float *bl_layer_queries(const bl_state *s, int32_t layer) {
    if (!s || !s->T || layer < 0 || layer >= s->c.n_layers) return NULL;
    const ptrdiff_t o = qk_offset(s, layer, s->T);
    return o < 0 ? NULL : s->queries + o;
}

const float *bl_layer_keys(const bl_state *s, int32_t layer) {
    if (!s || !s->T || layer < 0 || layer >= s->c.n_layers) return NULL;
    const ptrdiff_t o = qk_offset(s, layer, s->T);
    return o < 0 ? NULL : s->keys + o;
}

const float *bl_queries(const bl_state *s) { return s ? bl_layer_queries(s, s->qk_layer) : NULL; }
const float *bl_keys(const bl_state *s) { return s ? bl_layer_keys(s, s->qk_layer) : NULL; }

const float *bl_hidden(const bl_state *s, int32_t layer) {
    if (!s || !s->T || layer < 0 || layer > s->c.n_layers) return NULL;
    if (layer == s->c.n_layers && !s->has_final) return NULL; /* skipped (bl_state_set_final) */
    if (s->hidden) return s->hidden + (size_t)layer * s->T * s->c.hidden;
    return layer == s->c.n_layers ? s->x : NULL;
}

int32_t bl_state_tokens(const bl_state *s) { return s ? s->T : 0; }

int bl_state_set_head_mask(bl_state *s, const uint8_t *mask) {
    if (!s) return -1;
    const size_t n = (size_t)s->c.n_layers * s->c.n_heads;
    s->n_masked = 0;
    for (size_t i = 0; i < n; i++) {
        s->head_mask[i] = mask && mask[i] ? 1 : 0;
        s->n_masked += s->head_mask[i];
    }
    return s->n_masked;
}

void bl_state_set_word_rows(bl_state *s, const float *rows) {
    if (s) s->word_rows = rows;
}

void bl_state_set_final(bl_state *s, int final) {
    if (s) s->no_final = !final;
}

const uint8_t *bl_state_head_mask(const bl_state *s) { return s ? s->head_mask : NULL; }
const bl_model *bl_state_model(const bl_state *s) { return s ? s->model : NULL; }
