/* encoder_state.c — the forward pass's state (encoder_types.h): made by
 * bl_state_new with the model's weights (encoder_weights.c) and the
 * family's extras (encoder_family.c), its buffers sized for up to
 * max_tokens and the kept results (bl_state_reserve, every size checked in
 * 64 bits first), its thread pool (bl_state_set_threads). The pass itself
 * is encoder.c. */
#include "encoder_types.h"
#include "encoder_family.h"
#include "base/error.h"
#include "base/sizes.h"
#include "base/threads.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
        c->activation > BL_ACT_SILU) {
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

