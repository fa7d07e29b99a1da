/* fuzz_forward.c — libFuzzer target for bundles run on 4 to 512 tokens
 * (make fuzz): the loader, the page's in-place q8 layout, a forward pass
 * with everything kept, the analyses and the bundle's tokenizer.
 *
 * Input: two bytes, then a bundle (docs/bundle-format.md):
 *   byte 0..1  little-endian: T = 4 + value % 509 tokens (capped at the
 *              model's positions); the ids are drawn from the same value
 *   rest       the bundle; with an odd byte 0 its q8 matrices are re-laid
 *              out in place first, as the page's engine loads every bundle
 * Built with FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION, under which the loader
 * reports checksum mismatches but carries on, so mutations reach the
 * parsing and the numbers behind them. Seeds: tests/fuzz/forward/ (a tiny
 * bundle of every family, tests/fuzz/make_seeds.py). src/fuzz/fuzz_bundle.c
 * fuzzes the loader alone, faster. */
#include "fuzz_run.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    const uint32_t v = (uint32_t)data[0] | (uint32_t)data[1] << 8;
    const size_t n = size - 2;
    void *copy = malloc(n ? n : 1); /* exact size: ASan sees any overread */
    if (!copy) return 0;
    memcpy(copy, data + 2, n);
    char err[256];
    bl_model *m = bl_model_load(copy, n, err, sizeof err);
    if (m) {
        if (data[0] & 1) bl_model_pack_in_place(m, copy);
        fuzz_run_model(m, v * 2654435761u, 4 + (int32_t)(v % 509));
        bl_model_free(m);
    } else if (!err[0]) {
        __builtin_trap(); /* a refusal without a reason */
    }
    free(copy);
    return 0;
}
