/* state_limits.c — one text through a bundle the way the page runs it, for
 * tests/limits.test.mjs: built natively (build/state_limits) and as a
 * 32-bit AddressSanitizer program (build/asan32/state_limits), where size_t
 * is 32 bits as in wasm32.
 *
 *   state_limits BUNDLE.blb TEXT
 *
 * Tokenizes TEXT with the bundle's tokenizer, makes a state for the next
 * power of two >= T tokens (at least 64, at most max_positions: the page's
 * rounding, src/wasm/wasm_api.c ensure_state) keeping attention, runs it, and
 * prints one JSON line:
 *   {"T":N,"capacity":C,"refused":"reason"}      the state was refused
 *   {"T":N,"capacity":C,"ran":true,"max_dev":x}  it ran; x = max over every
 *        layer, head and row of |a_ij - 1/T| (the test's bundles have zero
 *        weights, so every attention row is uniform)
 * Exit 0 for both; 1 if the bundle or the text cannot be read or the
 * forward pass fails. Uses the public API only (bertlens.h). */
#include "../../src/bertlens.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void json_str(const char *s) {
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') printf("\\%c", c);
        else if (c < 0x20) printf("\\u%04x", c);
        else putchar(c);
    }
    putchar('"');
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: state_limits BUNDLE.blb TEXT\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        fprintf(stderr, "state_limits: cannot open %s\n", argv[1]);
        return 1;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *bytes = n > 0 ? malloc((size_t)n) : NULL;
    if (!bytes || fread(bytes, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, "state_limits: cannot read %s\n", argv[1]);
        return 1;
    }
    fclose(f);
    char err[512] = "";
    bl_model *m = bl_model_load(bytes, (size_t)n, err, sizeof err);
    if (!m) {
        fprintf(stderr, "state_limits: %s\n", err);
        return 1;
    }
    const bl_config *c = bl_model_config(m);
    bl_tokens t;
    if (bl_tokenize(bl_model_tokenizer(m), argv[2], strlen(argv[2]), NULL, 0, c->max_positions, &t, err, sizeof err)) {
        fprintf(stderr, "state_limits: %s\n", err);
        return 1;
    }
    int32_t cap = 64;
    while (cap < t.n) cap *= 2;
    if (cap > c->max_positions) cap = c->max_positions;
    printf("{\"T\":%d,\"capacity\":%d,", t.n, cap);
    bl_state *s = bl_state_new(m, cap, BL_KEEP_ATTN, err, sizeof err);
    if (!s) {
        printf("\"refused\":");
        json_str(err);
        printf("}\n");
        bl_tokens_free(&t);
        bl_model_free(m);
        free(bytes);
        return 0;
    }
    if (bl_forward(s, t.ids, t.type_ids, t.n, 0, err, sizeof err)) {
        printf("\"error\":");
        json_str(err);
        printf("}\n");
        return 1;
    }
    double dev = 0;
    const size_t TT = (size_t)t.n * t.n;
    for (int32_t l = 0; l < c->n_layers; l++) {
        const float *a = bl_attention(s, l); /* [H][T][T] */
        for (size_t k = 0; k < (size_t)c->n_heads * TT; k++) dev = fmax(dev, fabs(a[k] - 1.0 / t.n));
    }
    printf("\"ran\":true,\"max_dev\":%.3g}\n", dev);
    bl_state_free(s);
    bl_tokens_free(&t);
    bl_model_free(m);
    free(bytes);
    return 0;
}
