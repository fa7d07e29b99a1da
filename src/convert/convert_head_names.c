/* convert_head_names.c — the checkpoints' head tensor names -> the
 * bundle's head.* names (bundle.h, "masked-LM head"; applied with the other
 * name normalizations, convert_safetensors.c), and which head tensors a
 * checkpoint may lack (zeros). Below convert_safetensors.c and
 * convert_tensors.c, which ask it. tools/convert.py does the same
 * (HEAD_NAMES, head_names), byte for byte.
 */
#include "conv_state.h"

#include <string.h>

/* Source name (after the prefixes are stripped) -> bundle name. Families
 * whose encoder the converter does not take yet never reach their rows. */
static const char *const HEAD_NAMES[][2] = {
    /* BERT (BertForMaskedLM, BertForPreTraining): cls.predictions.*. The
     * decoder's own bias is what the head adds; transformers 4 tied it to
     * cls.predictions.bias, 5 ties it only with tie_word_embeddings, so an
     * untied checkpoint may hold two different ones: both map to
     * head.decoder.bias, and the later in the file (decoder.bias: safetensors
     * headers are sorted) wins, in both converters. */
    {"cls.predictions.transform.dense.weight", "head.transform.weight"},
    {"cls.predictions.transform.dense.bias", "head.transform.bias"},
    {"cls.predictions.transform.LayerNorm.weight", "head.ln.weight"},
    {"cls.predictions.transform.LayerNorm.bias", "head.ln.bias"},
    {"cls.predictions.decoder.weight", "head.decoder.weight"},
    {"cls.predictions.bias", "head.decoder.bias"},
    {"cls.predictions.decoder.bias", "head.decoder.bias"},
    /* DistilBertForMaskedLM */
    {"vocab_transform.weight", "head.transform.weight"},
    {"vocab_transform.bias", "head.transform.bias"},
    {"vocab_layer_norm.weight", "head.ln.weight"},
    {"vocab_layer_norm.bias", "head.ln.bias"},
    {"vocab_projector.weight", "head.decoder.weight"},
    {"vocab_projector.bias", "head.decoder.bias"},
    /* ElectraForMaskedLM (the generator) */
    {"generator_predictions.dense.weight", "head.transform.weight"},
    {"generator_predictions.dense.bias", "head.transform.bias"},
    {"generator_predictions.LayerNorm.weight", "head.ln.weight"},
    {"generator_predictions.LayerNorm.bias", "head.ln.bias"},
    {"generator_lm_head.weight", "head.decoder.weight"},
    {"generator_lm_head.bias", "head.decoder.bias"},
    /* DebertaV2ForMaskedLM (legacy false; a legacy one has BERT's cls.predictions.*):
     * the decoder is always the word embedding */
    {"lm_predictions.lm_head.dense.weight", "head.transform.weight"},
    {"lm_predictions.lm_head.dense.bias", "head.transform.bias"},
    {"lm_predictions.lm_head.LayerNorm.weight", "head.ln.weight"},
    {"lm_predictions.lm_head.LayerNorm.bias", "head.ln.bias"},
    {"lm_predictions.lm_head.bias", "head.decoder.bias"},
    /* ModernBertForMaskedLM: head.dense, head.norm, decoder (top level; the
     * biases classifier_bias, norm_bias, decoder_bias may be absent: zeros) */
    {"head.dense.weight", "head.transform.weight"},
    {"head.dense.bias", "head.transform.bias"},
    {"head.norm.weight", "head.ln.weight"},
    {"head.norm.bias", "head.ln.bias"},
    {"decoder.weight", "head.decoder.weight"},
    {"decoder.bias", "head.decoder.bias"},
    /* AlbertForMaskedLM: predictions.* (E = embedding_size; decoder.bias as BERT's) */
    {"predictions.dense.weight", "head.transform.weight"},
    {"predictions.dense.bias", "head.transform.bias"},
    {"predictions.LayerNorm.weight", "head.ln.weight"},
    {"predictions.LayerNorm.bias", "head.ln.bias"},
    {"predictions.decoder.weight", "head.decoder.weight"},
    {"predictions.bias", "head.decoder.bias"},
    {"predictions.decoder.bias", "head.decoder.bias"},
    /* RobertaForMaskedLM, XLM-R, CamemBERT, MPNetForMaskedLM: lm_head.* (decoder.bias as BERT's) */
    {"lm_head.dense.weight", "head.transform.weight"},
    {"lm_head.dense.bias", "head.transform.bias"},
    {"lm_head.layer_norm.weight", "head.ln.weight"},
    {"lm_head.layer_norm.bias", "head.ln.bias"},
    {"lm_head.decoder.weight", "head.decoder.weight"},
    {"lm_head.bias", "head.decoder.bias"},
    {"lm_head.decoder.bias", "head.decoder.bias"},
};

const char *bli_conv_head_name(const char *n) {
    for (size_t i = 0; i < sizeof HEAD_NAMES / sizeof *HEAD_NAMES; i++)
        if (!strcmp(n, HEAD_NAMES[i][0])) return HEAD_NAMES[i][1];
    return NULL;
}

int bli_conv_head_zeros(const bli_conv *c, const char *name) {
    /* ModernBERT's heads have no biases unless its config asks for them
     * (classifier_bias, norm_bias): head_no_biases */
    return c->head_no_biases &&
           (!strcmp(name, "head.transform.bias") || !strcmp(name, "head.ln.bias") || !strcmp(name, "head.decoder.bias") ||
            !strcmp(name, "task.dense.bias") || !strcmp(name, "task.norm.bias"));
}
