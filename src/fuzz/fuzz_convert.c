/* fuzz_convert.c — libFuzzer target for the converter's inputs (make fuzz).
 *
 * Input: two option bytes, then the checkpoint's files, each section ended
 * by the separator SEP below (the last one runs to the end):
 *   byte 0    dtype of the projections (DTYPES[b % 9])
 *   byte 1    bits 0..3: embedding dtype (DTYPES[b % 9]); bit 4: --cased;
 *             bit 5: the files live in 0_Transformer/
 *   sections  config.json, vocab.txt, tokenizer.json, tokenizer_config.json,
 *             sentence_bert_config.json, model.safetensors
 * An empty section is a file that is not there. The whole conversion runs as
 * a front end drives it (convert.h): files, begin, the safetensors header,
 * plan, hash, every tensor from its byte range, finish, into a buffer of
 * bli_conv_size bytes. Invariants, each a crash when broken:
 *   - every byte range the converter asks for lies inside the weights file,
 *     every write lies inside the bundle (ASan: exact-size copies);
 *   - a refusal says why (a non-empty message);
 *   - a bundle the converter writes, the loader accepts (the converter
 *     refuses exactly what the loader refuses: issue 23 item 8);
 *   - the accepted bundle then runs as the page runs it (src/fuzz/fuzz_run.h):
 *     a forward pass on T = 4 + 19 * (byte 0 / 9) tokens (4..517, capped at
 *     512 and the model's positions) ends and stays inside its buffers, the
 *     analyses and the bundle's tokenizer too: config.json -> converter ->
 *     loader -> forward, the path of a ?hub= link.
 * Seeds: tests/fuzz/convert/ (tests/fuzz/make_convert_seeds.py); with
 * FUZZ_CONVERT_VERBOSE set, each input's outcome is printed.
 */
#include "bertlens.h"
#include "convert/convert.h"
#include "fuzz_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEP "\n#%%#\n"
#define N_SECTIONS 6

static const char *const DTYPES[] = {"f32", "f16", "q8", "q4", "q8h", "q9", "q10", "q11", "q12"};
static const char *const FILES[N_SECTIONS] = {"config.json", "vocab.txt", "tokenizer.json", "tokenizer_config.json",
                                              "sentence_bert_config.json", "model.safetensors"};

typedef struct {
    uint8_t *p; /* [n] the bundle */
    uint64_t n;
} out_buf;

static int sink(void *ctx, uint64_t off, const void *p, size_t n) {
    out_buf *o = ctx;
    if (off > o->n || n > o->n - off) __builtin_trap(); /* a write outside the bundle */
    memcpy(o->p + off, p, n);
    return 0;
}

static void fail_check(const char *err) {
    if (!err[0]) __builtin_trap(); /* a refusal without a reason */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    const uint8_t *sec[N_SECTIONS] = {0};
    size_t len[N_SECTIONS] = {0};
    const uint8_t *p = data + 2, *end = data + size;
    const size_t sl = sizeof SEP - 1;
    for (int i = 0; i < N_SECTIONS; i++) {
        const uint8_t *q = p;
        if (i < N_SECTIONS - 1)
            while (q + sl <= end && memcmp(q, SEP, sl)) q++;
        if (i == N_SECTIONS - 1 || q + sl > end) q = end;
        sec[i] = p;
        len[i] = (size_t)(q - p);
        p = q + sl <= end ? q + sl : end;
    }
    char err[1024] = "";
    bli_conv_opts o = {DTYPES[data[0] % 9], DTYPES[(data[1] & 15) % 9], "fuzz", NULL, (data[1] >> 4) & 1};
    const char *dir = (data[1] >> 5) & 1 ? "0_Transformer/" : "";
    bli_conv *c = bli_conv_new(&o, NULL, NULL, err, sizeof err);
    if (!c) __builtin_trap();
    out_buf out = {NULL, 0};
    uint8_t *w = NULL; /* the weights file, an exact-size copy */
    const uint64_t wsize = len[N_SECTIONS - 1];
    int rc = -1;
    for (int i = 0; i < N_SECTIONS; i++) {
        if (!len[i]) continue;
        char name[64];
        snprintf(name, sizeof name, "%s%s", dir, FILES[i]);
        if (bli_conv_add_file(c, name, i < N_SECTIONS - 1 ? sec[i] : NULL, len[i], err, sizeof err)) goto done;
    }
    if (bli_conv_begin(c, err, sizeof err)) goto done;
    if (!(w = malloc(wsize ? wsize : 1))) goto done;
    memcpy(w, sec[N_SECTIONS - 1], wsize);
    for (int k = 0; k < bli_conv_n_weights(c); k++) { /* one file: every weight name is model.safetensors */
        uint64_t head;
        if (wsize < 8) {
            snprintf(err, sizeof err, "short");
            goto done;
        }
        if (bli_conv_header_size(w, wsize, &head, err, sizeof err)) goto done;
        if (head > wsize) __builtin_trap();
        uint8_t *h = malloc((size_t)head);
        if (!h) goto done;
        memcpy(h, w, (size_t)head);
        int bad = bli_conv_set_header(c, k, wsize, h, (size_t)head, err, sizeof err);
        free(h);
        if (bad) goto done;
    }
    if (bli_conv_plan(c, err, sizeof err)) goto done;
    for (int k = 0; k < bli_conv_n_weights(c); k++) bli_conv_hash(c, w, (size_t)wsize);
    out.n = bli_conv_size(c);
    if (out.n < 96 || out.n > (64u << 20) + 16 * (uint64_t)size) __builtin_trap(); /* bounded by the input */
    if (!(out.p = calloc(1, (size_t)out.n))) goto done;
    for (int t = 0; t < bli_conv_n_tensors(c); t++) {
        int wi;
        uint64_t off, n;
        if (bli_conv_source(c, t, &wi, &off, &n)) __builtin_trap();
        if (n && (wi < 0 || wi >= bli_conv_n_weights(c) || off > wsize || n > wsize - off)) __builtin_trap();
        uint8_t *src = malloc(n ? (size_t)n : 1);
        if (!src) goto done;
        if (n) memcpy(src, w + off, (size_t)n);
        int bad = bli_conv_tensor(c, t, src, sink, &out, err, sizeof err);
        free(src);
        if (bad) goto done;
    }
    if (bli_conv_finish(c, sink, &out, err, sizeof err)) goto done;
    rc = 0;
done:
    if (getenv("FUZZ_CONVERT_VERBOSE")) fprintf(stderr, "%s\n", rc ? err : "converted");
    if (rc) fail_check(err);
    else {
        char lerr[512] = "";
        bl_model *m = bl_model_load(out.p, (size_t)out.n, lerr, sizeof lerr);
        if (!m) {
            fprintf(stderr, "converted, but the loader refuses the bundle: %s\n", lerr);
            __builtin_trap();
        }
        fuzz_run_model(m, (uint32_t)size * 2654435761u, 4 + 19 * (data[0] / 9));
        bl_model_free(m);
    }
    free(out.p);
    free(w);
    bli_conv_free(c);
    return 0;
}
