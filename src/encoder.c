/* encoder.c — the BERT forward pass, exposing what attention views need.
 *
 *   x = LayerNorm(word[id] + position[t] + type[type_id])
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
#include "bertlens.h"
#include "bundle.h"
#include "kernels.h"
#include "error.h"
#include "sizes.h"
#include "threads.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    blk_weight wq, wk, wv, wo; /* [hidden][hidden]                   */
    blk_weight w1;             /* [intermediate][hidden]             */
    blk_weight w2;             /* [hidden][intermediate]             */
    const float *bq, *bk, *bv, *bo; /* [hidden]                     */
    const float *b1;                /* [intermediate]               */
    const float *b2;                /* [hidden]                     */
    const float *ln1_g, *ln1_b;     /* [hidden] after attention     */
    const float *ln2_g, *ln2_b;     /* [hidden] after feed-forward  */
} layer_weights;

struct bl_state {
    const bl_model *model; /* the model it runs (borrowed; outlives the state) */
    bl_config c;
    int32_t max_tokens;  /* capacity of every buffer below                */
    unsigned flags;      /* BL_KEEP_* bits                                */
    int no_final;        /* bl_state_set_final(s, 0): skip the last layer's rows */
    int has_final;       /* the last forward made the final hidden states */
    int32_t T;           /* tokens of the last forward (0: none yet)      */
    int32_t qk_layer;    /* layer of queries/keys                         */

    /* weights (borrowed from the model, SIMD copies owned by the blk_weight) */
    blk_weight word;                 /* [vocab][hidden]                   */
    const float *pos;               /* [max_positions][hidden]           */
    const float *type;              /* [type_vocab_size][hidden]         */
    const float *emb_ln_g, *emb_ln_b; /* [hidden]                        */
    layer_weights *layers;          /* [n_layers]                        */
    double *gram;                   /* [n_layers][H][d][d] if KEEP_NORMS */
    uint8_t *head_mask;             /* [n_layers][H], 1 = masked (bl_state_set_head_mask) */
    int32_t n_masked;               /* heads masked (0: the unmasked path) */

    /* activations (compact: a [T][...] buffer holds T rows back to back) */
    float *x;        /* [T][hidden] residual stream                       */
    float *x2;       /* [T][hidden] sublayer output, swapped with x        */
    float *q, *k, *v;/* [T][hidden]                                        */
    float *ctx;      /* [T][hidden] attention context, heads concatenated  */
    float *ffn;      /* [T][intermediate]                                  */
    float *fnorm;    /* [H][T] ||f_h(x_j)||                                */
    /* per thread (slab w of thread w), sized by bl_state_reserve          */
    float *att;      /* [n_threads][T*T] one head's probabilities when not kept */
    float *scratch;  /* [n_threads][nscratch] kernel scratch (activation
                        quantization, packing)                            */
    size_t natt, nscratch; /* floats per thread in att, scratch           */
    bli_pool *pool;  /* NULL: one thread                                  */
    int32_t n_threads;

    /* results */
    float *attn;     /* [n_layers][H][T][T] if KEEP_ATTN                   */
    float *norms;    /* [n_layers][H][T][T] if KEEP_NORMS                  */
    float *queries;  /* [H][T][d] of qk_layer if KEEP_QK; [n_layers][H][T][d]
                        if KEEP_QK_ALL                                     */
    float *keys;     /* the same for keys                                  */
    float *hidden;   /* [n_layers + 1][T][hidden] if KEEP_HIDDEN           */
};


/* ------------------------------------------------------------- weights */

/* Bind tensor `fmt` (layer l for per-layer names) of bundle.h's tensor
 * lists. bl_model_load has checked each one's presence, shape and dtype, so
 * these only look it up (a missing one means the model did not come from
 * bl_model_load). */
static const bl_tensor *tensor(const bl_model *m, const char *fmt, int32_t l, char *err, size_t errlen) {
    char name[128];
    snprintf(name, sizeof name, fmt, l);
    const bl_tensor *t = bl_model_find_tensor(m, name);
    if (!t) bli_set_err(err, errlen, "bundle has no tensor %s", name);
    return t;
}

/* An f32 tensor: its floats. */
static int bind_F32(const float **dst, const bl_model *m, const char *fmt, int32_t l, int64_t d0, int64_t d1,
                    char *err, size_t errlen) {
    const bl_tensor *t = tensor(m, fmt, l, err, errlen);
    if (!t) return -1;
    *dst = (const float *)t->data;
    return 0;
}

/* A matrix [d0][d1] of any dtype, packed for the SIMD kernels. */
static int bind_ANY(blk_weight *w, const bl_model *m, const char *fmt, int32_t l, int64_t d0, int64_t d1, char *err,
                    size_t errlen) {
    memset(w, 0, sizeof *w);
    const bl_tensor *t = tensor(m, fmt, l, err, errlen);
    if (!t) return -1;
    if (blk_weight_init(w, t->dtype, (int32_t)d0, (int32_t)d1, t->data)) {
        bli_set_err(err, errlen, "tensor %s: the kernels cannot read it", t->name);
        return -1;
    }
    if (blk_weight_pack(w)) {
        bli_set_err(err, errlen, "out of memory preparing %s", t->name);
        return -1;
    }
    return 0;
}

static void free_weights(bl_state *s) {
    blk_weight_free(&s->word);
    if (s->layers)
        for (int32_t l = 0; l < s->c.n_layers; l++) {
            layer_weights *w = &s->layers[l];
            blk_weight_free(&w->wq);
            blk_weight_free(&w->wk);
            blk_weight_free(&w->wv);
            blk_weight_free(&w->wo);
            blk_weight_free(&w->w1);
            blk_weight_free(&w->w2);
        }
    free(s->layers);
    free(s->gram);
    free(s->head_mask);
    bli_pool_free(s->pool);
    s->pool = NULL;
}

static int build_weights(bl_state *s, const bl_model *m, char *err, size_t errlen) {
    const bl_config *c = &s->c;
    const int32_t H = c->hidden;
    /* The word embedding is only read row by row: no SIMD copy. */
    const bl_tensor *we = bl_model_find_tensor(m, "embeddings.word_embeddings.weight");
    if (!we || we->n_dims != 2 || we->dims[0] != c->vocab_size || we->dims[1] != H ||
        blk_weight_init(&s->word, we->dtype, c->vocab_size, H, we->data)) {
        bli_set_err(err, errlen, "bundle has no usable embeddings.word_embeddings.weight [%d, %d]", c->vocab_size, H);
        return -1;
    }
#define BIND(field, name, d0, d1, dtypes)                                                              \
    if (bind_##dtypes(&W->field, m, name, l, bli_dim_size(c, BL_DIM_##d0), bli_dim_size(c, BL_DIM_##d1), err, \
                      errlen))                                                                           \
        return -1;
    {
        bl_state *W = s;
        int32_t l = 0;
        BL_TENSORS_EMBED(BIND)
    }
    s->layers = calloc((size_t)c->n_layers, sizeof *s->layers);
    if (!s->layers) {
        bli_set_err(err, errlen, "out of memory");
        return -1;
    }
    for (int32_t l = 0; l < c->n_layers; l++) {
        layer_weights *W = &s->layers[l];
        BL_TENSORS_LAYER(BIND)
    }
#undef BIND
    return 0;
}

/* G_h[a][b] = sum_o Wo[o][h*d+a] * Wo[o][h*d+b] for every layer and head. */
static int build_gram(bl_state *s, char *err, size_t errlen) {
    const int32_t L = s->c.n_layers, NH = s->c.n_heads, H = s->c.hidden, d = H / NH;
    /* L * H * H / NH doubles: 34 GB for 64 layers of one 8192-wide head */
    s->gram = bli_alloc(BLI_BYTES(sizeof(double), L, NH, d, d), 1, "the value norms' Gram matrices", err, errlen);
    if (!s->gram) return -1;
    float *row = malloc((size_t)H * sizeof(float));
    if (!row) {
        bli_set_err(err, errlen, "out of memory");
        return -1;
    }
    for (int32_t l = 0; l < L; l++)
        for (int32_t o = 0; o < H; o++) {
            blk_weight_row(&s->layers[l].wo, o, row);
            for (int32_t h = 0; h < NH; h++) {
                double *g = s->gram + ((size_t)l * NH + h) * d * d;
                const float *r = row + h * d;
                for (int32_t a = 0; a < d; a++)
                    for (int32_t b = 0; b < d; b++) g[a * d + b] += (double)r[a] * r[b];
            }
        }
    free(row);
    return 0;
}

/* --------------------------------------------------------------- state */

/* Activation and result buffers (everything sized by max_tokens and flags). */
static void free_buffers(bl_state *s) {
    float **bufs[] = {&s->x,    &s->x2,      &s->q,     &s->k,       &s->v,    &s->ctx,   &s->ffn, &s->att,
                      &s->fnorm, &s->scratch, &s->attn, &s->norms, &s->queries, &s->keys, &s->hidden};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++) {
        free(*bufs[i]);
        *bufs[i] = NULL;
    }
    s->max_tokens = 0;
    s->flags = 0;
    s->T = 0;
}

void bl_state_free(bl_state *s) {
    if (!s) return;
    free_weights(s);
    free_buffers(s);
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
    if ((flags & BL_KEEP_NORMS) && !s->gram && build_gram(s, err, errlen)) return -1;
    free_buffers(s);
    /* Every size in 64 bits, checked against BLI_MAX_BUFFER (sizes.h) before
     * anything is allocated: the loader's limits (bundle.h) let
     * L * NH * T * T * 4 reach 2.2 TB, and in 32-bit builds (wasm) the
     * product would wrap. The kernels' scratch counts stay below 2^29
     * floats within those limits (T <= 8192, hidden <= 8192, intermediate
     * <= 32768), so their size_t arithmetic cannot wrap. */
    const uint64_t T = (uint64_t)max_tokens, H = (uint64_t)c->hidden, I = (uint64_t)c->intermediate,
                   NH = (uint64_t)c->n_heads, L = (uint64_t)c->n_layers, d = H / NH;
    s->nscratch = max_sz(blk_matmul_scratch_floats(max_tokens, (int32_t)max_sz(H, I)),
                         max_sz(blk_matmul_nt_scratch_floats(max_tokens, (int32_t)d),
                                blk_matmul_nt_scratch_floats((int32_t)d, max_tokens)));
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
    if (alloc_slabs(s, s->n_threads, err, errlen)) {
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
    s->n_threads = 1;
    if (!(s->head_mask = calloc((size_t)c->n_layers * c->n_heads, 1))) {
        bli_set_err(err, errlen, "out of memory");
        free(s);
        return NULL;
    }
    if (build_weights(s, m, err, errlen) || bl_state_reserve(s, max_tokens, flags, err, errlen)) {
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
    const layer_weights *w = &s->layers[l];
    const size_t o = (size_t)t0 * s->c.hidden;
    float *const y[3] = {s->q + o, s->k + o, s->v + o};
    const blk_weight *const ws[3] = {&w->wq, &w->wk, &w->wv};
    const float *const bs[3] = {w->bq, w->bk, w->bv};
    blk_matmul_shared(3, y, s->x + o, t1 - t0, ws, bs, -1, scratch);
}

/* Rows: embeddings, their LayerNorm, layer 0's q, k, v. */
static void task_embed(void *arg, int w, int n) {
    fwd_task *f = arg;
    bl_state *s = f->s;
    const int32_t H = s->c.hidden;
    int32_t t0, t1;
    bli_rows_of(f->T, w, n, &t0, &t1);
    if (t0 >= t1) return;
    for (int32_t t = t0; t < t1; t++) {
        float *x = s->x + (size_t)t * H;
        const float *p = s->pos + (size_t)t * H, *ty = s->type + (size_t)(f->type_ids ? f->type_ids[t] : 0) * H;
        blk_weight_row(&s->word, f->ids[t], x);
        for (int32_t i = 0; i < H; i++) x[i] += p[i] + ty[i];
    }
    float *x = s->x + (size_t)t0 * H;
    blk_layernorm(x, NULL, t1 - t0, H, s->emb_ln_g, s->emb_ln_b, s->c.ln_eps);
    if (s->hidden) memcpy(s->hidden + (size_t)t0 * H, x, (size_t)(t1 - t0) * H * 4);
    qkv_rows(s, 0, t0, t1, s->scratch + (size_t)w * s->nscratch);
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
    const float scale = 1.0f / sqrtf((float)d);
    float *scratch = s->scratch + (size_t)w * s->nscratch;
    const ptrdiff_t qk = qk_offset(s, l, T);
    /* Quantized weights: the attention products on 13-bit integers too
     * (blk_matmul_nt_q, ~1e-4 of the largest value, invisible next to the
     * weights' own error: the fidelity corpus's worst q10 max |d| 0.0172 ->
     * 0.0169); f32/f16 bundles keep f32 (their 1e-5 bar against Hugging
     * Face), and so do short inputs, where the products are a small share
     * and padding K = T to 32 costs more than it saves. */
    const int32_t wdt = s->layers[l].wq.dtype;
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
        blk_softmax(a, T, T, scale);
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
    const layer_weights *lw = &s->layers[l];
    int32_t t0, t1;
    bli_rows_of(f->T, w, n, &t0, &t1);
    if (t0 >= t1) return;
    const int32_t R = t1 - t0;
    float *scratch = s->scratch + (size_t)w * s->nscratch;
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

    fwd_task f = {.s = s, .ids = ids, .type_ids = type_ids, .T = T, .l = 0};
    bli_pool_run(s->pool, task_embed, &f);
    for (int32_t l = 0; l < L; l++) {
        f.l = l;
        atomic_store_explicit(&f.next, 0, memory_order_relaxed);
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
