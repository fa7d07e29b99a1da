/* bundle_head.c — a bundle's optional masked-language-model head
 * (bundle.h, "masked-LM head"): its metadata and tensors checked by
 * bl_model_load (bundle.c), and what it reports (bl_model_head_info). */
#include "bundle_impl.h"

#include <string.h>

void bl_model_head_info(const bl_model *m, bl_head_info *out) {
    if (out) *out = m->head;
}

/* The optional head (bundle.h, "masked-LM head"): absent unless head.kind is
 * there; then its metadata and every tensor of BL_TENSORS_HEAD are checked. */
int bli_bundle_check_head(bl_model *m, char *err, size_t errlen) {
    const bl_config *c = &m->cfg;
    const meta_entry *kind = bli_bundle_meta(m, "head.kind");
    if (!kind) {
        for (uint32_t i = 0; i < m->n_tensors; i++)
            if (!strncmp(m->tensors[i].name, "head.", 5)) {
                bli_set_err(err, errlen, "tensor '%s' without the metadata 'head.kind'", m->tensors[i].name);
                return 0;
            }
        return 1;
    }
    if (kind->type != BL_META_STR || strcmp(kind->str, "mlm")) {
        bli_set_err(err, errlen, "metadata 'head.kind' must be the string \"mlm\"");
        return 0;
    }
    bl_head_info h = {1, 0, 0, 0, 0.0f};
    if (!bli_bundle_u32(m, "head.tied", 0, 1, &h.tied, err, errlen)) return 0;
    const meta_entry *eps = bli_bundle_meta(m, "head.ln_eps");
    if (!eps || eps->type != BL_META_F32) {
        bli_set_err(err, errlen, "metadata 'head.ln_eps' (f32) is missing");
        return 0;
    }
    memcpy(&h.ln_eps, &eps->u32, 4);
    if (!(h.ln_eps > 0.0f && h.ln_eps < 1.0f)) {
        bli_set_err(err, errlen, "head.ln_eps = %g is not in (0, 1)", (double)h.ln_eps);
        return 0;
    }
    const char *act = bl_model_meta_str(m, "head.activation");
    if (!act) {
        bli_set_err(err, errlen, "metadata 'head.activation' (string) is missing");
        return 0;
    }
    if (!strcmp(act, "gelu")) h.activation = BL_ACT_GELU;
    else if (!strcmp(act, "gelu_tanh")) h.activation = BL_ACT_GELU_TANH;
    else if (!strcmp(act, "relu")) h.activation = BL_ACT_RELU;
    else {
        bli_set_err(err, errlen, "head.activation '%s' is not supported (gelu, gelu_tanh, relu)", act);
        return 0;
    }
    const bl_tensor *tw = bl_model_find_tensor(m, "head.transform.weight");
    if (!tw) {
        bli_set_err(err, errlen, "required tensor 'head.transform.weight' is missing (head.kind is set)");
        return 0;
    }
    if (tw->n_dims != 2 || tw->dims[0] > BL_MAX_HIDDEN) {
        bli_set_err(err, errlen, "tensor 'head.transform.weight' must be [E, hidden] with E <= %u", BL_MAX_HIDDEN);
        return 0;
    }
    h.size = (int32_t)tw->dims[0];
    /* BL_DIM_HEAD_E is E; the other units as in the encoder's lists. */
#define HEAD_DIM(d) ((d) == BL_DIM_HEAD_E ? (int64_t)h.size : bli_dim_size(c, (d)))
#define HEAD_CHECK(field, name, d0, d1, dtypes)                                                            \
    if (!bli_bundle_check_tensor(m, name, HEAD_DIM(BL_DIM_##d0), HEAD_DIM(BL_DIM_##d1),                              \
                      BL_DTYPES_##dtypes == BL_DTYPES_F32, err, errlen))                                   \
        return 0;
    BL_TENSORS_HEAD(HEAD_CHECK)
    if (!h.tied) {
        BL_TENSORS_HEAD_UNTIED(HEAD_CHECK)
    } else {
        const bl_tensor *we = bl_model_find_tensor(m, "embeddings.word_embeddings.weight");
        if (!we || we->n_dims != 2 || we->dims[0] != c->vocab_size || we->dims[1] != h.size) {
            bli_set_err(err, errlen, "head.tied is 1 but the word embedding is not [%d, %d] (the head's width)",
                        c->vocab_size, h.size);
            return 0;
        }
        if (bl_model_find_tensor(m, "head.decoder.weight")) {
            bli_set_err(err, errlen, "head.tied is 1 but the bundle also has 'head.decoder.weight'");
            return 0;
        }
    }
#undef HEAD_CHECK
#undef HEAD_DIM
    m->head = h;
    return 1;
}
