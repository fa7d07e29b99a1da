/* encoder_weights.c — the forward pass's weights (encoder_types.h): each
 * tensor of the family's lists in bundle.h bound to the state, the matrices
 * packed for the SIMD kernels; and the Gram matrices of the value norms.
 * bl_model_load has checked every tensor's presence, shape and dtype. */
#include "encoder_types.h"
#include "base/error.h"
#include "base/sizes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Tensor `fmt` (layer l for per-layer names) of bundle.h's tensor lists. */
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
    if (blk_weight_of_tensor(w, t, (int32_t)d0, (int32_t)d1)) {
        bli_set_err(err, errlen, "tensor %s: the kernels cannot read it", t->name);
        return -1;
    }
    if (blk_weight_pack(w)) {
        bli_set_err(err, errlen, "out of memory preparing %s", t->name);
        return -1;
    }
    return 0;
}

void bli_enc_free_weights(bl_state *s) {
    blk_weight_free(&s->word);
    blk_weight_free(&s->proj_w);
    if (s->layers)
        for (int32_t l = 0; l < s->fam.n_stored; l++) {
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

int bli_enc_build_weights(bl_state *s, const bl_model *m, char *err, size_t errlen) {
    const bl_config *c = &s->c;
    const bli_family *f = &s->fam;
    const int32_t E = f->embed;
    /* The word embedding is only read row by row: no SIMD copy. */
    const bl_tensor *we = bl_model_find_tensor(m, "embeddings.word_embeddings.weight");
    if (!we || we->n_dims != 2 || we->dims[0] != c->vocab_size || we->dims[1] != E ||
        blk_weight_of_tensor(&s->word, we, c->vocab_size, E)) {
        bli_set_err(err, errlen, "bundle has no usable embeddings.word_embeddings.weight [%d, %d]", c->vocab_size, E);
        return -1;
    }
#define BIND(field, name, d0, d1, dtypes)                                                                      \
    if (bind_##dtypes(&W->field, m, name, l, bli_fdim_size(c, f, BL_DIM_##d0), bli_fdim_size(c, f, BL_DIM_##d1), \
                      err, errlen))                                                                              \
        return -1;
    {
        bl_state *W = s;
        int32_t l = 0;
        BL_TENSORS_EMBED(BIND)
        if (f->project) {
            BL_TENSORS_PROJECT(BIND)
        }
    }
    s->layers = calloc((size_t)f->n_stored, sizeof *s->layers);
    if (!s->layers) {
        bli_set_err(err, errlen, "out of memory");
        return -1;
    }
    for (int32_t l = 0; l < f->n_stored; l++) {
        layer_weights *W = &s->layers[l];
        BL_TENSORS_LAYER(BIND)
    }
#undef BIND
    return 0;
}

/* G_h[a][b] = sum_o Wo[o][h*d+a] * Wo[o][h*d+b] for every layer and head. */
int bli_enc_build_gram(bl_state *s, char *err, size_t errlen) {
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
            blk_weight_row(&bli_lw(s, l)->wo, o, row);
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
