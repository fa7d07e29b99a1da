/* convert_head.c — the converter's masked-LM head (bundle.h, "masked-LM
 * head"): the checkpoints' head tensor names -> the bundle's head.* names
 * (applied with the other name normalizations, convert_safetensors.c), and
 * what config.json says of the head (tied decoder, activation). Planning
 * the head's tensors and metadata is convert.c's plan_head. tools/convert.py
 * does the same (HEAD_NAMES, head_names), byte for byte.
 */
#include "conv_state.h"
#include "error.h"

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

int bli_conv_stage_head(bli_conv *c, const bli_jv *cfg, char *err, size_t errlen) {
    const bli_jv *mt = bli_jget(cfg, "model_type");
    const char *type = mt && mt->type == BLI_JSTR ? mt->str : "";
    /* ELECTRA's generator and RoBERTa's and MPNet's lm_head apply erf GELU
     * whatever hidden_act says; BERT's, DistilBERT's and ALBERT's head the
     * encoder's. */
    static const char *const gelu_heads[] = {"electra", "roberta", "xlm-roberta", "camembert", "mpnet"};
    c->head_act = c->activation;
    for (size_t i = 0; i < sizeof gelu_heads / sizeof *gelu_heads; i++)
        if (!strcmp(type, gelu_heads[i])) c->head_act = "gelu";
    const bli_jv *tie = bli_jget(cfg, "tie_word_embeddings"); /* transformers' default: tied */
    c->head_tied = tie ? bli_jtruthy(tie) : 1;
    /* DeBERTa-v2/v3's lm_predictions head multiplies by the word embedding
     * whatever tie_word_embeddings says (legacy false, transformers' default
     * for new configs is true: then cls.predictions.* as BERT's) */
    if (!strcmp(type, "modernbert")) { /* its own activation key */
        const bli_jv *ca = bli_jget(cfg, "classifier_activation");
        const char *a = ca && ca->type == BLI_JSTR ? ca->str : "gelu";
        static const char *const acts[][2] = {
            {"gelu", "gelu"}, {"gelu_new", "gelu_tanh"}, {"gelu_pytorch_tanh", "gelu_tanh"}, {"relu", "relu"}};
        c->head_act = NULL;
        for (int i = 0; i < 4; i++)
            if (!strcmp(a, acts[i][0])) c->head_act = acts[i][1];
        if (!c->head_act) {
            bli_set_err(err, errlen, "config.json: classifier_activation '%s' of the masked-LM head is not supported "
                        "(gelu, gelu_new, gelu_pytorch_tanh, relu)", a);
            return -1;
        }
    }
    const bli_jv *legacy = bli_jget(cfg, "legacy");
    if (!strcmp(type, "deberta-v2") && legacy && !bli_jtruthy(legacy)) c->head_tied = 1;
    return 0;
}

int bli_conv_head_zeros(const bli_conv *c, const char *name) {
    /* ModernBERT's head has no biases unless its config asks for them */
    return c->fam.kind == BLI_FAM_MODERNBERT &&
           (!strcmp(name, "head.transform.bias") || !strcmp(name, "head.ln.bias") || !strcmp(name, "head.decoder.bias"));
}
