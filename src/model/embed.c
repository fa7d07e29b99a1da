/* embed.c — sentence embeddings (bertlens.h "sentence embeddings"): the
 * pooling of the final hidden states that sentence-transformers applies to
 * the models bertlens converts, one implementation for the CLI
 * (`bertlens embed`) and the page (blw_embedding in wasm_api.c).
 */
#include "bertlens.h"
#include "base/error.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

int32_t bl_embed_max_tokens(const bl_model *m, int *from_meta, char *err, size_t errlen) {
    int32_t max_len = bl_model_config(m)->max_positions;
    /* A tokenizer.json's model_max_length may be below the positions
     * (RoBERTa-style: 514 positions, 512 tokens): texts stop there. */
    const int32_t tok_max = bl_tokenizer_max_tokens(bl_model_tokenizer(m));
    if (tok_max > 0 && tok_max < max_len) max_len = tok_max;
    const char *msl = bl_model_meta_str(m, "sentence.max_seq_length");
    if (from_meta) *from_meta = msl != NULL;
    if (!msl) return max_len;
    char *end;
    errno = 0;
    long v = strtol(msl, &end, 10);
    if (end == msl || *end || errno || v <= 0) {
        bli_set_err(err, errlen, "bad sentence.max_seq_length '%s'", msl);
        return -1;
    }
    return v < max_len ? (int32_t)v : max_len;
}

int bl_embed(const bl_state *s, float *out, char *err, size_t errlen) {
    const int32_t T = s ? bl_state_tokens(s) : 0;
    if (!T) {
        bli_set_err(err, errlen, "no run to embed: call bl_forward first");
        return -1;
    }
    const bl_config *c = bl_model_config(bl_state_model(s));
    const int32_t H = c->hidden;
    const float *fin = bl_hidden(s, c->n_layers); /* [T][H] */
    if (!fin) {
        bli_set_err(err, errlen, "the last run skipped the final hidden states (bl_state_set_final(0))");
        return -1;
    }
    /* Means in double, rounded to float once: out[i] = mean_i / max(|mean|, 1e-12). */
    double norm = 0;
    for (int32_t i = 0; i < H; i++) {
        double sum = 0;
        for (int32_t t = 0; t < T; t++) sum += fin[(size_t)t * H + i];
        norm += (sum / T) * (sum / T);
    }
    norm = sqrt(norm);
    if (norm < 1e-12) norm = 1e-12;
    for (int32_t i = 0; i < H; i++) {
        double sum = 0;
        for (int32_t t = 0; t < T; t++) sum += fin[(size_t)t * H + i];
        out[i] = (float)(sum / T / norm);
    }
    return 0;
}
