/* fuzz_run.h — what the fuzz targets do with a model they got (a bundle
 * loaded, or a checkpoint converted): run it as the page does, on T tokens
 * (4..512), with everything kept, then the analyses and the bundle's own
 * tokenizer. Included by src/fuzz/fuzz_bundle.c, src/fuzz/fuzz_forward.c and src/fuzz/fuzz_convert.c only.
 *
 * Invariants, each a crash when broken: a forward pass on an accepted model
 * ends (libFuzzer's -timeout) and reads and writes only its buffers (ASan);
 * a refusal says why. Its numbers are not checked: weights the loader takes
 * (finite, but as large as f32 goes) may overflow to inf and NaN. */
#ifndef BERTLENS_FUZZ_RUN_H
#define BERTLENS_FUZZ_RUN_H

#include "bertlens.h"

#include <stdint.h>
#include <stdlib.h>

/* Models small enough to run many times a second, at any of 4..512 tokens. */
static int fuzz_small(const bl_config *c) {
    return c->n_layers <= 4 && c->hidden <= 256 && c->intermediate <= 1024 && c->max_positions >= 4;
}

/* T tokens from a seed: 4..min(512, positions); ids and token types drawn
 * from it (xorshift), the first and last ids 0 and 1 as a [CLS]/[SEP]. */
static void fuzz_run_model(const bl_model *m, uint32_t seed, int32_t T) {
    const bl_config *c = bl_model_config(m);
    if (!fuzz_small(c)) return;
    if (T > c->max_positions) T = c->max_positions;
    if (T > 512) T = 512;
    if (T < 4) T = 4;
    int32_t *ids = malloc((size_t)T * sizeof *ids), *types = malloc((size_t)T * sizeof *types);
    char err[256];
    bl_state *s = ids && types ? bl_state_new(m, T, BL_KEEP_ATTN | BL_KEEP_NORMS | BL_KEEP_QK_ALL, err, sizeof err)
                               : NULL;
    if (s) {
        uint32_t x = seed | 1;
        for (int32_t t = 0; t < T; t++) {
            x ^= x << 13, x ^= x >> 17, x ^= x << 5;
            ids[t] = (int32_t)(x % (uint32_t)c->vocab_size);
            types[t] = t < T / 2 ? 0 : (int32_t)((x >> 8) % (uint32_t)c->type_vocab_size);
        }
        ids[0] = 0, ids[T - 1] = 1 % c->vocab_size;
        if (bl_forward(s, ids, types, T, 0, err, sizeof err) == 0) {
            volatile float sink = 0; /* every kept result is read, as the page's views do */
            for (int32_t l = 0; l < c->n_layers; l++) {
                const float *a = bl_attention(s, l), *nm = bl_norms(s, l);
                const size_t n = (size_t)c->n_heads * T * T;
                if (a) sink += a[n - 1];
                if (nm) sink += nm[n - 1];
            }
            (void)sink;
            bl_analysis an;
            if (bl_analyze(s, ids, types, BL_ANALYZE_ROLLOUT, &an, err, sizeof err) == 0) bl_analysis_free(&an);
        } else if (!err[0]) {
            __builtin_trap(); /* a refusal without a reason */
        }
        bl_state_free(s);
    }
    free(ids);
    free(types);
    /* the bundle's tokenizer on a text of every kind of character */
    static const char text[] = "The caf\xc3\xa9 \xe6\x9d\xb1\xe4\xba\xac 2024! unbelievable \xf0\x9f\x98\x80 a  b";
    bl_tokens tk;
    if (bl_tokenize(bl_model_tokenizer(m), text, sizeof text - 1, "and B", 5, 64, &tk, err, sizeof err) == 0) {
        for (int32_t i = 0; i < tk.n; i++)
            if (tk.ids[i] < 0 || tk.ids[i] >= c->vocab_size) __builtin_trap();
        bl_tokens_free(&tk);
    }
}

#endif
