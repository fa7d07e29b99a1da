/* bundle_pack.c — bl_model_pack_in_place (bertlens.h): q8 matrices of a
 * loaded bundle re-laid out, in the bundle's own bytes, into the panels the
 * SIMD kernels read (blk_q8_panels_in_place, src/kernels/kernels.h). The page's
 * engine owns its copy of the bundle, so its q8 weights are then held once
 * (int8) instead of twice more (the int16 panels blk_weight_pack builds). */
#include "bundle_impl.h"
#include "kernels/kernels.h"

int bl_model_pack_in_place(bl_model *m, void *bytes) {
    if (!m || !bytes || (const uint8_t *)bytes != m->bytes) return -1; /* only the bytes the model was loaded from */
    int done = 0;
    for (uint32_t i = 0; i < m->n_tensors; i++) {
        bl_tensor *t = &m->tensors[i];
        if (t->dtype != BL_Q8 || t->n_dims != 2 || t->layout != BL_LAYOUT_BUNDLE) continue;
        if (t->dims[0] <= 0 || t->dims[0] > INT32_MAX || t->dims[1] <= 0 || t->dims[1] > INT32_MAX) continue;
        const int32_t n = (int32_t)t->dims[0], k = (int32_t)t->dims[1];
        if (n % BL_PANEL || k % BL_QBLOCK) continue; /* stays as it is: blk_weight_pack packs it */
        /* t->data points into bytes (bundle.c checked its range): writable here */
        uint8_t *data = (uint8_t *)bytes + (t->data - m->bytes);
        if (blk_q8_panels_in_place(data, n, k)) return -1;
        t->layout = BL_LAYOUT_Q8_PANELS;
        done++;
    }
    return done;
}
