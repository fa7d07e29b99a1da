/* scores.c — one head's pre-softmax scores and the terms they add up from
 * (bertlens.h "attention scores"), after a forward pass that kept the
 * layer's queries and keys.
 *
 *   scores [T][T] = sum of the family's terms, as its softmax takes them
 *
 * q_h k_h^T is made from the kept q, k by the product the forward pass
 * uses for the layer (bli_attn_product: f32, or 13-bit integers for a
 * quantized bundle from 64 tokens), then the family's hook
 * (encoder_family.c bli_fam_scores) adds its relative terms, scale and
 * window in the order bli_fam_softmax does, so that softmax(scores) is the
 * head's attention row (tests/scores.test.mjs: within 1e-5 of Hugging
 * Face's, every family). Nothing is allocated: the product and DeBERTa's
 * relative rows use the state's buffers. */
#include "model/encoder_types.h"
#include "base/error.h"

int bl_score_terms(const bl_model *m, int32_t layer, bl_score_info *out, char *err, size_t errlen) {
    if (!m || !out) {
        bli_set_err(err, errlen, "bl_score_terms: no model or no output");
        return -1;
    }
    const bl_config *c = bl_model_config(m);
    if (layer < 0 || layer >= c->n_layers) {
        bli_set_err(err, errlen, "layer %d out of range 0..%d", layer, c->n_layers - 1);
        return -1;
    }
    bli_fam_score_terms(bli_model_family(m), c, layer, out);
    return 0;
}

int bl_scores(bl_state *s, int32_t layer, int32_t head, float *scores, float *terms, char *err, size_t errlen) {
    if (!s || !scores) {
        bli_set_err(err, errlen, "bl_scores: no state or no output");
        return -1;
    }
    const int32_t T = s->T, L = s->c.n_layers, NH = s->c.n_heads, d = s->c.hidden / NH;
    if (!T) {
        bli_set_err(err, errlen, "no forward pass to score (run bl_forward first)");
        return -1;
    }
    if (layer < 0 || layer >= L || head < 0 || head >= NH) {
        bli_set_err(err, errlen, "layer %d, head %d: the model has layers 0..%d, heads 0..%d", layer, head, L - 1,
                    NH - 1);
        return -1;
    }
    const float *Q = bl_layer_queries(s, layer), *K = bl_layer_keys(s, layer); /* [H][T][d] */
    if (!Q || !K) {
        bli_set_err(err, errlen,
                    "layer %d's queries and keys were not kept (BL_KEEP_QK with that qk_layer, or BL_KEEP_QK_ALL)",
                    layer);
        return -1;
    }
    const float *q = Q + (size_t)head * T * d, *k = K + (size_t)head * T * d; /* [T][d] each */
    float *scratch = s->scratch; /* the first thread's: no forward pass is running */
    /* scores[i][j] = q[i] . k[j], as task_heads makes it */
    bli_attn_product(s, layer, T)(scores, T, q, d, T, k, d, 1, T, d, scratch);
    bli_fam_scores(s, layer, head, q, k, T, scores, terms, scratch);
    return 0;
}
