/* mlm.c — masked-word predictions: a bundle's masked-LM head (bundle.h,
 * "masked-LM head") run on the final hidden states of a bl_forward.
 *
 * Per asked position, from the final hidden state x [hidden]:
 *   t = act(W_t x + b_t)              [E]      transform (the kernels, any dtype)
 *   t = LN(t) * g + b                 [E]
 *   logits = W_d t + b_d              [vocab]  W_d: the word embedding when tied
 *   p = softmax(logits)                        over every row, in double
 * The decoder product is split by vocabulary rows over the state's threads:
 * each thread multiplies a run of whole 8-row panels of the packed decoder
 * (a blk_weight view of them); a scalar build runs it on one thread. Only the
 * positions asked for are multiplied, BATCH at a time, so the logits buffer
 * stays BATCH x vocab floats whatever the text's length.
 */
#include "bertlens.h"
#include "kernels/kernels.h"
#include "base/sizes.h"
#include "base/error.h"
#include "base/threads.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BATCH 16     /* positions per decoder product                   */
#define MAX_THREADS 64

struct bl_mlm {
    const bl_model *model;
    int32_t H, E, V;      /* hidden, head width, vocabulary rows          */
    int32_t act;          /* bl_activation                                */
    float eps;
    blk_weight transform; /* [E][H], packed                               */
    blk_weight decoder;   /* [V][E], packed                               */
    const float *bt, *g, *b, *bd; /* [E], [E], [E], [V]: in the bundle     */
};

static const float *f32_of(const bl_model *m, const char *name) {
    const bl_tensor *t = bl_model_find_tensor(m, name);
    return t ? (const float *)(const void *)t->data : NULL; /* f32 and shape checked by the loader */
}

static int wrap(blk_weight *w, const bl_tensor *t, char *err, size_t errlen) {
    if (blk_weight_of_tensor(w, t, (int32_t)t->dims[0], (int32_t)t->dims[1])) {
        bli_set_err(err, errlen, "%s: not a matrix the kernels take (%s)", t->name, bl_dtype_name(t->dtype));
        return -1;
    }
    if (blk_weight_pack(w)) {
        bli_set_err(err, errlen, "out of memory laying out %s for the kernels", t->name);
        return -1;
    }
    return 0;
}

bl_mlm *bl_mlm_new(const bl_model *m, char *err, size_t errlen) {
    bl_head_info hi;
    bl_model_head_info(m, &hi);
    if (!hi.present) {
        bli_set_err(err, errlen, "this bundle has no masked-LM head: convert a checkpoint that has one (e.g. a "
                                 "BertForMaskedLM folder) to predict words");
        return NULL;
    }
    bl_mlm *h = calloc(1, sizeof *h);
    if (!h) {
        bli_set_err(err, errlen, "out of memory");
        return NULL;
    }
    const bl_config *c = bl_model_config(m);
    h->model = m;
    h->H = c->hidden;
    h->E = hi.size;
    h->V = c->vocab_size;
    h->act = hi.activation;
    h->eps = hi.ln_eps;
    h->bt = f32_of(m, "head.transform.bias");
    h->g = f32_of(m, "head.ln.weight");
    h->b = f32_of(m, "head.ln.bias");
    h->bd = f32_of(m, "head.decoder.bias");
    const bl_tensor *tw = bl_model_find_tensor(m, "head.transform.weight");
    const bl_tensor *dw = bl_model_find_tensor(m, hi.tied ? "embeddings.word_embeddings.weight" : "head.decoder.weight");
    if (!tw || !dw || !h->bt || !h->g || !h->b || !h->bd) { /* the loader's checks make this unreachable */
        bli_set_err(err, errlen, "the bundle's head is incomplete");
        bl_mlm_free(h);
        return NULL;
    }
    if (wrap(&h->transform, tw, err, errlen) || wrap(&h->decoder, dw, err, errlen)) {
        bl_mlm_free(h);
        return NULL;
    }
    return h;
}

void bl_mlm_free(bl_mlm *h) {
    if (!h) return;
    blk_weight_free(&h->transform);
    blk_weight_free(&h->decoder);
    free(h);
}

/* ------------------------------------------------------------ decoder */

typedef struct {
    const bl_mlm *h;
    const float *t;   /* [B][E] the transformed rows                       */
    int32_t B;
    float *logits;    /* split: chunk [r0, r1) as [B][r1 - r0] at logits + r0 * B; else [B][V] */
    float *scratch;   /* [threads][scratch_floats]                          */
    size_t scratch_floats;
    int split;        /* 1: views of whole panels per thread (SIMD layouts) */
} dec_job;

/* Rows [r0, r1) of worker w of n: whole panels, as even as they come. */
static void rows_of(int32_t V, int w, int n, int32_t *r0, int32_t *r1) {
    const int64_t panels = (V + BL_PANEL - 1) / BL_PANEL, p0 = panels * w / n, p1 = panels * (w + 1) / n;
    *r0 = (int32_t)(p0 * BL_PANEL);
    *r1 = (int32_t)(p1 * BL_PANEL < V ? p1 * BL_PANEL : V);
}

static void dec_task(void *ctx, int w, int n) {
    dec_job *j = ctx;
    const blk_weight *full = &j->h->decoder;
    float *scratch = j->scratch + (size_t)w * j->scratch_floats;
    if (!j->split) {
        if (w == 0) blk_matmul(j->logits, j->t, j->B, full, j->h->bd, scratch);
        return;
    }
    int32_t r0, r1;
    rows_of(full->n, w, n, &r0, &r1);
    if (r0 >= r1) return;
    /* A view of panels r0/8 .. : the SIMD kernels read only pf or pq/ps. */
    blk_weight v = *full;
    const int32_t p0 = r0 / BL_PANEL, k = full->k;
    v.n = r1 - r0;
    v.data = NULL;
    if (full->pf) v.pf = full->pf + (size_t)p0 * k * BL_PANEL;
    if (full->pq) {
        const int32_t groups = (k / BL_QBLOCK + full->qg - 1) / full->qg;
        v.pq = full->pq + (size_t)p0 * k * BL_PANEL;
        v.ps = full->ps + (size_t)p0 * groups * BL_PANEL;
    }
    blk_matmul(j->logits + (size_t)r0 * j->B, j->t, j->B, &v, j->h->bd + r0, scratch);
}

/* ------------------------------------------------------------ predict */

/* ex[0..V) = the logits of row b, from the per-chunk layout of dec_task. */
static void gather(const dec_job *j, int n, int b, double *ex) {
    const int32_t V = j->h->V;
    if (!j->split) {
        for (int32_t v = 0; v < V; v++) ex[v] = j->logits[(size_t)b * V + v];
        return;
    }
    for (int w = 0; w < n; w++) {
        int32_t r0, r1;
        rows_of(V, w, n, &r0, &r1);
        const float *src = j->logits + (size_t)r0 * j->B + (size_t)b * (r1 - r0);
        for (int32_t v = r0; v < r1; v++) ex[v] = src[v - r0];
    }
}

int bl_predict(const bl_mlm *h, bl_state *s, const int32_t *ids, const int32_t *positions, int32_t n_pos, int32_t k,
               int32_t *top_ids, float *top_probs, float *token_prob, int32_t *token_rank, char *err, size_t errlen) {
    const float *x = h && s ? bl_hidden(s, bl_model_config(h->model)->n_layers) : NULL; /* [T][H] */
    return bl_predict_hidden(h, s, x, ids, positions, n_pos, k, top_ids, top_probs, token_prob, token_rank, err,
                             errlen);
}

int bl_predict_layer(const bl_mlm *h, bl_state *s, int32_t layer, const int32_t *ids, const int32_t *positions,
                     int32_t n_pos, int32_t k, int32_t *top_ids, float *top_probs, float *token_prob,
                     int32_t *token_rank, char *err, size_t errlen) {
    if (!h || !s) {
        bli_set_err(err, errlen, "bl_predict_layer: missing argument");
        return -1;
    }
    const bl_config *c = bl_model_config(h->model);
    if (layer < 1 || layer > c->n_layers) {
        bli_set_err(err, errlen, "layer %d is out of range 1..%d", layer, c->n_layers);
        return -1;
    }
    const float *x = bl_hidden(s, layer); /* [T][H] */
    if (!x) {
        bli_set_err(err, errlen, "the run did not keep layer %d's hidden states (BL_KEEP_HIDDEN)", layer);
        return -1;
    }
    /* ModernBERT: a layer below the last through the encoder's final norm */
    const bl_tensor *fn = bl_model_find_tensor(h->model, "encoder.final_norm.weight");
    if (!fn || layer == c->n_layers)
        return bl_predict_hidden(h, s, x, ids, positions, n_pos, k, top_ids, top_probs, token_prob, token_rank, err,
                                 errlen);
    const int32_t T = bl_state_tokens(s), H = h->H;
    float *xn = bli_alloc(BLI_BYTES(sizeof(float), (uint64_t)T * H), 0, "the normed layer", err, errlen);
    float *zeros = xn ? calloc((size_t)H, sizeof *zeros) : NULL; /* the norm has no bias */
    if (!zeros) {
        free(xn);
        if (xn) bli_set_err(err, errlen, "out of memory");
        return -1;
    }
    memcpy(xn, x, sizeof(float) * (size_t)T * H);
    blk_layernorm(xn, NULL, T, H, (const float *)(const void *)fn->data, zeros, c->ln_eps);
    const int rc = bl_predict_hidden(h, s, xn, ids, positions, n_pos, k, top_ids, top_probs, token_prob, token_rank,
                                     err, errlen);
    free(xn), free(zeros);
    return rc;
}

int bl_predict_hidden(const bl_mlm *h, bl_state *s, const float *x, const int32_t *ids, const int32_t *positions,
                      int32_t n_pos, int32_t k, int32_t *top_ids, float *top_probs, float *token_prob,
                      int32_t *token_rank, char *err, size_t errlen) {
    if (!h || !s || !ids || (n_pos > 0 && (!positions || !top_ids || !top_probs || !token_prob || !token_rank))) {
        bli_set_err(err, errlen, "bl_predict: missing argument");
        return -1;
    }
    if (bl_state_model(s) != h->model) {
        bli_set_err(err, errlen, "bl_predict: the state is not of the head's model");
        return -1;
    }
    const int32_t T = bl_state_tokens(s), H = h->H, E = h->E, V = h->V;
    if (T < 1 || !x) {
        bli_set_err(err, errlen, "bl_predict: no forward pass with final hidden states to predict from");
        return -1;
    }
    if (k < 1 || k > V) {
        bli_set_err(err, errlen, "top k = %d is out of range 1..%d (the vocabulary)", k, V);
        return -1;
    }
    for (int32_t i = 0; i < n_pos; i++)
        if (positions[i] < 0 || positions[i] >= T) {
            bli_set_err(err, errlen, "position %d is out of range 0..%d (the run has %d tokens)", positions[i], T - 1, T);
            return -1;
        }
    if (n_pos == 0) return 0;
    bli_pool *pool = bli_state_pool(s);
    int n = pool ? bli_pool_threads(pool) : 1;
    if (n > MAX_THREADS) n = MAX_THREADS;
    const int split = h->decoder.pf || h->decoder.pq;
    const int B = n_pos < BATCH ? n_pos : BATCH;
    size_t sf = blk_matmul_scratch_floats(B, E > H ? E : H);
    /* xs [B][H], t [B][E], logits [B][V], scratch [n][sf] */
    float *xs = bli_alloc(BLI_BYTES(sizeof(float), (uint64_t)B * H), 0, "the head's input", err, errlen);
    float *t = xs ? bli_alloc(BLI_BYTES(sizeof(float), (uint64_t)B * E), 0, "the head", err, errlen) : NULL;
    float *logits = t ? bli_alloc(BLI_BYTES(sizeof(float), (uint64_t)B * V), 0, "the logits", err, errlen) : NULL;
    float *scratch = logits ? bli_alloc(BLI_BYTES(sizeof(float), (uint64_t)n * sf), 0, "the head's scratch", err, errlen)
                            : NULL;
    double *ex = scratch ? bli_alloc(BLI_BYTES(sizeof(double), (uint64_t)V), 0, "the softmax", err, errlen) : NULL;
    if (!ex) {
        free(xs), free(t), free(logits), free(scratch);
        return -1;
    }
    for (int32_t i0 = 0; i0 < n_pos; i0 += BATCH) {
        const int b_n = n_pos - i0 < BATCH ? n_pos - i0 : BATCH;
        for (int b = 0; b < b_n; b++) memcpy(xs + (size_t)b * H, x + (size_t)positions[i0 + b] * H, sizeof(float) * H);
        blk_matmul_act(t, xs, b_n, &h->transform, h->bt, h->act, scratch);
        blk_layernorm(t, NULL, b_n, E, h->g, h->b, h->eps);
        dec_job j = {h, t, b_n, logits, scratch, sf, split};
        if (pool && split && n > 1) bli_pool_run(pool, dec_task, &j);
        else {
            j.split = 0;
            dec_task(&j, 0, 1);
        }
        const int nw = j.split ? n : 1;
        for (int b = 0; b < b_n; b++) {
            const int32_t i = i0 + b, want = ids[positions[i]];
            double mx = -INFINITY, sum = 0;
            gather(&j, nw, b, ex);
            for (int32_t v = 0; v < V; v++)
                if (ex[v] > mx) mx = ex[v];
            const double lw = want >= 0 && want < V ? ex[want] : -INFINITY;
            int32_t rank = 1;
            int32_t *ti = top_ids + (size_t)i * k;
            float *tp = top_probs + (size_t)i * k;
            int32_t filled = 0;
            for (int32_t v = 0; v < V; v++) {
                const double l = ex[v];
                if (l > lw) rank++;
                ex[v] = exp(l - mx);
                sum += ex[v];
                /* insert v into the top k by logit (ties: the lower id first) */
                if (filled < k || l > (double)tp[filled - 1]) {
                    int32_t at = filled < k ? filled++ : k - 1;
                    while (at > 0 && (double)tp[at - 1] < l) {
                        tp[at] = tp[at - 1];
                        ti[at] = ti[at - 1];
                        at--;
                    }
                    tp[at] = (float)l; /* the logit until the sum is known */
                    ti[at] = v;
                }
            }
            for (int32_t q = 0; q < k; q++) tp[q] = (float)(ex[ti[q]] / sum);
            token_prob[i] = want >= 0 && want < V ? (float)(ex[want] / sum) : 0.0f;
            token_rank[i] = rank;
        }
    }
    free(xs), free(t), free(logits), free(scratch), free(ex);
    return 0;
}
