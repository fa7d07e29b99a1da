/* fuzz_bundle.c — libFuzzer target for the bundle loader (make fuzz).
 *
 * Built with FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION, under which the loader
 * reports checksum mismatches but carries on, so the fuzzer reaches the
 * parsing behind them instead of stopping at the first CRC. */
#include "fuzz_run.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    void *copy = malloc(size ? size : 1); /* exact size: ASan sees any overread */
    if (!copy) return 0;
    memcpy(copy, data, size);
    char err[256];
    bl_model *m = bl_model_load(copy, size, err, sizeof err);
    if (m) {
        /* Walk what a caller would touch. */
        for (int i = 0; i < bl_model_n_tensors(m); i++) {
            const bl_tensor *t = bl_model_tensor(m, i);
            volatile uint8_t sink = t->nbytes ? t->data[t->nbytes - 1] : 0;
            (void)sink;
        }
        char buf[64];
        for (int i = 0; i < bl_model_n_meta(m); i++) bl_model_meta_format(m, i, buf, sizeof buf);
        /* As the page's engine does: q8 matrices re-laid out in the bytes (on odd inputs only, so the
         * bundle layout is fuzzed through the forward pass too). */
        if (size % 2) bl_model_pack_in_place(m, copy);
        /* A small accepted model also runs, on 4 tokens (src/fuzz/fuzz_run.h;
         * src/fuzz/fuzz_forward.c runs 4..512): state, forward, analyses, tokenizer. */
        fuzz_run_model(m, (uint32_t)size, 4);
        bl_model_free(m);
    }
    free(copy);
    return 0;
}
