/* bundle_load.c — bl_model_load (bertlens.h): a bundle's bytes read as the
 * format (bundle.c bli_bundle_parse), then given meaning stage by stage,
 * each checking what it reads and refusing with a reason:
 *   1. the family: model.family and its keys (bundle_family.c)
 *   2. every tensor the family's layout needs, with its shape
 *   3. the tokenizer: tokenizer.json or the vocabulary (bundle_tokenizer.c)
 *   4. the masked-LM head, if the bundle has one (bundle_head.c)
 * The stages stand above the format, so none of them is called from it. */
#include "bundle_impl.h"

bl_model *bl_model_load(const void *data, size_t size, char *err, size_t errlen) {
    bl_model *m = bli_bundle_parse(data, size, err, errlen);
    if (!m) return NULL;
    if (!bli_bundle_family(m, err, errlen) || !bli_bundle_check_tensors(m, err, errlen) ||
        !bli_bundle_build_tokenizer(m, err, errlen) || !bli_bundle_check_head(m, err, errlen)) {
        bl_model_free(m);
        return NULL;
    }
    return m;
}
