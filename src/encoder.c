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
 * Everything is allocated in bl_state_new; bl_forward allocates nothing.
 * With bl_state_set_final(s, 0) the last layer stops after ctx: its output
 * projection and feed-forward only make the final hidden states.
 * Quantized bundles compute q k^T and A v on 13-bit integers from 64 tokens
 * (blk_matmul_nt_q; task_heads says why).
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
#include "encoder_impl.h"
#include "error.h"
#include "sizes.h"
#include "threads.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* --------------------------------------------------------------- state */

/* Activation and result buffers (everything sized by max_tokens and flags). */
static void free_buffers(bl_state *s) {
    float **bufs[] = {&s->x,    &s->x2,      &s->q,     &s->k,       &s->v,    &s->ctx,   &s->ffn, &s->att,
                      &s->fnorm, &s->scratch, &s->attn, &s->norms, &s->queries, &s->keys, &s->hidden, &s->emb};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++) {
        free(*bufs[i]);
        *bufs[i] = NULL;
    }
    free(s->posid);
    s->posid = NULL;
    bli_fam_free_buffers(s);
    s->max_tokens = 0;
    s->flags = 0;
    s->T = 0;
}

void bl_state_free(bl_state *s) {
    if (!s) return;
    bli_enc_free_weights(s);
    free_buffers(s);
    bli_fam_free(s);
    free(s);
}

static size_t max_sz(size_t a, size_t b) { return a > b ? a : b; }

/* Per-thread slabs for n threads at the state's sizes: allocated first,
 * then swapped in, so a failure leaves the old ones. */
static int alloc_slabs(bl_state *s, int32_t n, char *err, size_t errlen) {
    char what[96];
    snprintf(what, sizeof what, "kernel scratch for %d threads", n);
    float *scratch = bli_alloc(BLI_BYTES(sizeof(float), n, s->nscratch), 0, what, err, errlen), *att = NULL;
    if (scratch && s->natt) {
        snprintf(what, sizeof what, "one head's attention per thread for %d threads", n);
        att = bli_alloc(BLI_BYTES(sizeof(float), n, s->natt), 0, what, err, errlen);
    }
    if (!scratch || (s->natt && !att)) {
        free(scratch);
        return -1;
    }
    free(s->scratch);
    free(s->att);
    s->scratch = scratch;
    s->att = att;
    return 0;
}

int bl_state_reserve(bl_state *s, int32_t max_tokens, unsigned flags, char *err, size_t errlen) {
    const bl_config *c = &s->c;
    if (max_tokens <= 0 || max_tokens > c->max_positions) {
        bli_set_err(err, errlen, "max_tokens %d out of range 1..%d", max_tokens, c->max_positions);
        return -1;
    }
    if ((flags & BL_KEEP_NORMS) && !s->gram && bli_enc_build_gram(s, err, errlen)) return -1;
    free_buffers(s);
    /* Every size in 64 bits, checked against BLI_MAX_BUFFER (sizes.h) before
     * anything is allocated: the loader's limits (bundle.h) let
     * L * NH * T * T * 4 reach 2.2 TB, and in 32-bit builds (wasm) the
     * product would wrap. The kernels' scratch counts stay below 2^29
     * floats within those limits (T <= 8192, hidden <= 8192, intermediate
     * <= 32768), so their size_t arithmetic cannot wrap. */
    const uint64_t T = (uint64_t)max_tokens, H = (uint64_t)c->hidden, I = (uint64_t)c->intermediate,
                   NH = (uint64_t)c->n_heads, L = (uint64_t)c->n_layers, d = H / NH, E = (uint64_t)s->fam.embed;
    s->nscratch = max_sz(blk_matmul_scratch_floats(max_tokens, (int32_t)max_sz(max_sz(H, I), E)),
                         max_sz(blk_matmul_nt_scratch_floats(max_tokens, (int32_t)d),
                                blk_matmul_nt_scratch_floats((int32_t)d, max_tokens)));
    s->nscratch = max_sz(s->nscratch, bli_fam_scratch_floats(s, max_tokens));
    s->natt = (flags & BL_KEEP_ATTN) ? 0 : (size_t)T * T;
    const uint64_t rows = BLI_BYTES(sizeof(float), T, H), heads = BLI_BYTES(sizeof(float), L, NH, T, T);
    const uint64_t qk = (flags & BL_KEEP_QK_ALL) ? BLI_BYTES(sizeof(float), L, T, H) : (flags & BL_KEEP_QK) ? rows : 0;
    char attn_what[96], layers_what[96];
    snprintf(attn_what, sizeof attn_what, "attention of %d layers x %d heads", c->n_layers, c->n_heads);
    snprintf(layers_what, sizeof layers_what, "%d layers' queries or keys", c->n_layers);
    const struct {
        float **p;
        uint64_t bytes;
        const char *what;
    } bufs[] = {
        {&s->x, rows, "the hidden states"},
        {&s->x2, rows, "the hidden states"},
        {&s->q, rows, "the queries"},
        {&s->k, rows, "the keys"},
        {&s->v, rows, "the values"},
        {&s->ctx, rows, "the attention context"},
        {&s->ffn, BLI_BYTES(sizeof(float), T, I), "the feed-forward activations"},
        {&s->fnorm, BLI_BYTES(sizeof(float), NH, T), "the value norms"},
        {&s->attn, (flags & BL_KEEP_ATTN) ? heads : 0, attn_what},
        {&s->norms, (flags & BL_KEEP_NORMS) ? heads : 0, "the value-weighted norms"},
        {&s->queries, qk, (flags & BL_KEEP_QK_ALL) ? layers_what : "the kept queries"},
        {&s->keys, qk, (flags & BL_KEEP_QK_ALL) ? layers_what : "the kept keys"},
        {&s->hidden, (flags & BL_KEEP_HIDDEN) ? BLI_BYTES(sizeof(float), L + 1, T, H) : 0, "every layer's hidden states"},
        {&s->emb, s->fam.project ? BLI_BYTES(sizeof(float), T, E) : 0, "the embeddings"},
    };
    const size_t nb = sizeof bufs / sizeof *bufs;
    char what[160];
    /* sizes first, so that a refusal names the buffer that cannot be made */
    for (size_t i = 0; i < nb; i++) {
        snprintf(what, sizeof what, "%d tokens: %s", max_tokens, bufs[i].what);
        if (!bli_size_ok(bufs[i].bytes, what, err, errlen)) return -1;
    }
    for (size_t i = 0; i < nb; i++) {
        if (!bufs[i].bytes) continue;
        snprintf(what, sizeof what, "%d tokens: %s", max_tokens, bufs[i].what);
        if (!(*bufs[i].p = bli_alloc(bufs[i].bytes, 0, what, err, errlen))) {
            free_buffers(s);
            return -1;
        }
    }
    snprintf(what, sizeof what, "%d tokens: the position ids", max_tokens);
    if (!(s->posid = bli_alloc(BLI_BYTES(sizeof(int32_t), T), 0, what, err, errlen)) ||
        alloc_slabs(s, s->n_threads, err, errlen) || bli_fam_reserve(s, max_tokens, err, errlen)) {
        free_buffers(s);
        return -1;
    }
    s->max_tokens = max_tokens;
    s->flags = flags;
    return 0;
}

int bl_state_set_threads(bl_state *s, int32_t n, char *err, size_t errlen) {
    if (!s) {
        bli_set_err(err, errlen, "bl_state_set_threads: no state");
        return -1;
    }
    if (n > BL_MAX_THREADS) {
        bli_set_err(err, errlen, "%d threads: at most %d", n, BL_MAX_THREADS);
        return -1;
    }
    if (n <= 0) n = bli_cores();
    if (!bli_threads_supported()) n = 1;
    if (n == s->n_threads) return n;
    /* Slabs first (a failure keeps everything as it was); then the old
     * threads are joined before the new ones start, as a thread pool of
     * fixed size (wasm: the Workers started with the module) may not hold
     * both. If the new ones cannot all start, the old number is restored,
     * else one thread is left. */
    if (s->max_tokens && n > s->n_threads && alloc_slabs(s, n, err, errlen)) return -1;
    const int32_t old = s->n_threads;
    bli_pool_free(s->pool);
    s->pool = NULL;
    s->n_threads = 1;
    int failed = 0;
    bli_pool *pool = bli_pool_new(n, &failed, err, errlen);
    if (failed) {
        s->pool = bli_pool_new(old, &failed, NULL, 0);
        s->n_threads = failed ? 1 : old;
        return -1;
    }
    s->pool = pool;
    s->n_threads = n;
    return n;
}

int32_t bl_state_threads(const bl_state *s) { return s ? s->n_threads : 0; }
bli_pool *bli_state_pool(const bl_state *s) { return s ? s->pool : NULL; }

bl_state *bl_state_new(const bl_model *m, int32_t max_tokens, unsigned flags, char *err, size_t errlen) {
    if (!m) {
        bli_set_err(err, errlen, "no model");
        return NULL;
    }
    const bl_config *c = bl_model_config(m);
    if (c->n_layers <= 0 || c->n_heads <= 0 || c->hidden <= 0 || c->hidden % c->n_heads || c->intermediate <= 0 ||
        c->max_positions <= 0 || c->type_vocab_size <= 0 || c->vocab_size <= 0 || c->activation < BL_ACT_GELU ||
        c->activation > BL_ACT_RELU) {
        bli_set_err(err, errlen, "unsupported model configuration");
        return NULL;
    }
    if (max_tokens <= 0 || max_tokens > c->max_positions) {
        bli_set_err(err, errlen, "max_tokens %d out of range 1..%d", max_tokens, c->max_positions);
        return NULL;
    }
    bl_state *s = calloc(1, sizeof *s);
    if (!s) {
        bli_set_err(err, errlen, "out of memory");
        return NULL;
    }
    s->model = m;
    s->c = *c;
    s->fam = *bli_model_family(m);
    s->n_threads = 1;
    if (!(s->head_mask = calloc((size_t)c->n_layers * c->n_heads, 1))) {
        bli_set_err(err, errlen, "out of memory");
        free(s);
        return NULL;
    }
    if (bli_enc_build_weights(s, m, err, errlen) || bli_fam_init(s, m, err, errlen) ||
        bl_state_reserve(s, max_tokens, flags, err, errlen)) {
        bl_state_free(s);
        return NULL;
    }
    return s;
}

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
    atomic_int next;  /* heads task: the next head to claim */
} fwd_task;

/* q, k, v rows [t0, t1) of layer l = x Wq^T + bq, x Wk^T + bk, x Wv^T + bv (x packed once). */
static void qkv_rows(bl_state *s, int32_t l, int32_t t0, int32_t t1, float *scratch) {
    const layer_weights *w = bli_lw(s, l);
    const size_t o = (size_t)t0 * s->c.hidden;
    float *const y[3] = {s->q + o, s->k + o, s->v + o};
    const blk_weight *const ws[3] = {&w->wq, &w->wk, &w->wv};
    const float *const bs[3] = {w->bq, w->bk, w->bv};
    blk_matmul_shared(3, y, s->x + o, t1 - t0, ws, bs, -1, scratch);
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
        blk_weight_row(&s->word, f->ids[t], x);
        for (int32_t i = 0; i < E; i++) x[i] += p[i] + ty[i];
    }
    blk_layernorm(e + (size_t)t0 * E, NULL, t1 - t0, E, s->emb_ln_g, s->emb_ln_b, s->c.ln_eps);
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
    /* Quantized weights: the attention products on 13-bit integers too
     * (blk_matmul_nt_q, ~1e-4 of the largest value, invisible next to the
     * weights' own error: the fidelity corpus's worst q10 max |d| 0.0172 ->
     * 0.0169); f32/f16 bundles keep f32 (their 1e-5 bar against Hugging
     * Face), and so do short inputs, where the products are a small share
     * and padding K = T to 32 costs more than it saves. */
    const int32_t wdt = bli_lw(s, l)->wq.dtype;
    void (*nt)(float *, int32_t, const float *, int32_t, int32_t, const float *, int32_t, int32_t, int32_t, int32_t,
               float *) = wdt == BL_F32 || wdt == BL_F16 || T < 64 ? blk_matmul_nt : blk_matmul_nt_q;
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

/* Rows: the rest of layer l, then layer l + 1's q, k, v.
 *   x2 = LN(x + ctx Wo + bo);  x = LN(x2 + act(x2 W1 + b1) W2 + b2) */
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
    float *scratch = s->scratch + (size_t)w * s->nscratch;
    if (bli_fam_rows(s, l, f->T, t0, t1, scratch)) return; /* pre-norm layers (encoder_family.h) */
    float *x = s->x + (size_t)t0 * H, *x2 = s->x2 + (size_t)t0 * H, *ffn = s->ffn + (size_t)t0 * c->intermediate;
    blk_matmul(x2, s->ctx + (size_t)t0 * H, R, &lw->wo, lw->bo, scratch);
    blk_layernorm(x2, x, R, H, lw->ln1_g, lw->ln1_b, c->ln_eps);
    blk_matmul_act(ffn, x2, R, &lw->w1, lw->b1, c->activation, scratch);
    blk_matmul(x, ffn, R, &lw->w2, lw->b2, scratch);
    blk_layernorm(x, x2, R, H, lw->ln2_g, lw->ln2_b, c->ln_eps);
    if (s->hidden) memcpy(s->hidden + ((size_t)(l + 1) * f->T + t0) * H, x, (size_t)R * H * 4);
    if (l + 1 < c->n_layers) qkv_rows(s, l + 1, t0, t1, scratch);
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
    bli_fam_forward_begin(s, T);

    fwd_task f = {.s = s, .ids = ids, .type_ids = type_ids, .T = T, .l = 0};
    bli_pool_run(s->pool, task_embed, &f);
    for (int32_t l = 0; l < L; l++) {
        f.l = l;
        atomic_store_explicit(&f.next, 0, memory_order_relaxed);
        bli_fam_layer_begin(s, l);
        bli_pool_run(s->pool, task_heads, &f);
        if (l + 1 < L || !s->no_final) bli_pool_run(s->pool, task_rows, &f);
    }
    s->T = T;
    s->has_final = !s->no_final;
    return 0;
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

void bl_state_set_final(bl_state *s, int final) {
    if (s) s->no_final = !final;
}

const uint8_t *bl_state_head_mask(const bl_state *s) { return s ? s->head_mask : NULL; }
const bl_model *bl_state_model(const bl_state *s) { return s ? s->model : NULL; }
