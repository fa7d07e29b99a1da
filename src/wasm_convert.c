/* wasm_convert.c — the converter of convert.h at the WebAssembly boundary
 * (blw_conv_* exports; web/js/engine/convert.js drives them): a Hugging
 * Face checkpoint folder in, a bundle in wasm memory out. Failing calls
 * leave their message for blw_error() (wasm_api.c).
 */
#include "convert.h"
#include "json.h"
#include "sizes.h"
#include "wasm_api.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __EMSCRIPTEN__
#include <emscripten.h>
#else
#define EMSCRIPTEN_KEEPALIVE
#endif

/* ------------------------------------------------------------ convert */
/* The converter of convert.h for the page: a Hugging Face checkpoint folder
 * in, a bundle in wasm memory out (web/js/convert.js drives these calls).
 * Sizes and offsets are doubles (files may exceed 2 GB). One conversion at a
 * time; the log lines since the last blw_conv_log() are kept for progress. */

static struct {
    bli_conv *c;
    uint8_t *out;     /* [size] the bundle, zero-filled, written by the sink */
    uint64_t size;
    bli_jbuf log;
    double src[3];    /* weight file, offset, bytes of the last blw_conv_source */
} cv;

static void conv_log(void *ctx, const char *line) {
    (void)ctx;
    bli_json_raw(&cv.log, line, strlen(line));
    bli_json_raw(&cv.log, "\n", 1);
}

static int conv_sink(void *ctx, uint64_t off, const void *p, size_t n) {
    (void)ctx;
    if (off > cv.size || n > cv.size - off) return -1;
    memcpy(cv.out + off, p, n);
    return 0;
}

EMSCRIPTEN_KEEPALIVE void blw_conv_free(void) {
    bli_conv_free(cv.c);
    free(cv.out);
    bli_jbuf_free(&cv.log);
    memset(&cv, 0, sizeof cv);
}

EMSCRIPTEN_KEEPALIVE int blw_conv_new(const char *dtype, const char *embed_dtype, const char *name,
                                      const char *license, int cased) {
    blw_conv_free();
    bli_conv_opts o = {dtype && *dtype ? dtype : NULL, embed_dtype && *embed_dtype ? embed_dtype : NULL, name,
                       license && *license ? license : NULL, cased};
    cv.c = bli_conv_new(&o, conv_log, NULL, bli_wasm_err(), BLI_WASM_ERRLEN);
    return cv.c ? 0 : -1;
}

EMSCRIPTEN_KEEPALIVE int blw_conv_wants(const char *name) { return bli_conv_wants(name); }

EMSCRIPTEN_KEEPALIVE int blw_conv_add_file(const char *name, const uint8_t *bytes, double size) {
    return cv.c ? bli_conv_add_file(cv.c, name, bytes, (uint64_t)size, bli_wasm_err(), BLI_WASM_ERRLEN) : -1;
}

/* Number of weight files, or -1. */
EMSCRIPTEN_KEEPALIVE int blw_conv_begin(void) {
    if (!cv.c || bli_conv_begin(cv.c, bli_wasm_err(), BLI_WASM_ERRLEN)) return -1;
    return bli_conv_n_weights(cv.c);
}

EMSCRIPTEN_KEEPALIVE const char *blw_conv_weight_name(int w) { return cv.c ? bli_conv_weight_name(cv.c, w) : NULL; }

/* Bytes of the safetensors head (length + JSON) from its first 8 bytes, or -1. */
EMSCRIPTEN_KEEPALIVE double blw_conv_header_size(const uint8_t *first8, double file_size) {
    uint64_t n;
    return bli_conv_header_size(first8, (uint64_t)file_size, &n, bli_wasm_err(), BLI_WASM_ERRLEN) ? -1 : (double)n;
}

EMSCRIPTEN_KEEPALIVE int blw_conv_set_header(int w, double file_size, const uint8_t *head, int n) {
    return cv.c ? bli_conv_set_header(cv.c, w, (uint64_t)file_size, head, (size_t)n, bli_wasm_err(), BLI_WASM_ERRLEN) : -1;
}

/* Number of tensors, or -1; the bundle's memory is taken here. */
EMSCRIPTEN_KEEPALIVE int blw_conv_plan(void) {
    if (!cv.c || bli_conv_plan(cv.c, bli_wasm_err(), BLI_WASM_ERRLEN)) return -1;
    cv.size = bli_conv_size(cv.c);
    if (!(cv.out = bli_alloc(cv.size, 1, "the converted bundle", bli_wasm_err(), BLI_WASM_ERRLEN))) return -1;
    return bli_conv_n_tensors(cv.c);
}

EMSCRIPTEN_KEEPALIVE void blw_conv_hash(const uint8_t *p, int n) {
    if (cv.c) bli_conv_hash(cv.c, p, (size_t)n);
}

/* [weight file, offset, bytes] of tensor t's source data, or NULL. */
EMSCRIPTEN_KEEPALIVE const double *blw_conv_source(int t) {
    int w;
    uint64_t off, n;
    if (!cv.c || bli_conv_source(cv.c, t, &w, &off, &n)) {
        snprintf(bli_wasm_err(), BLI_WASM_ERRLEN, "no tensor %d", t);
        return NULL;
    }
    cv.src[0] = w, cv.src[1] = (double)off, cv.src[2] = (double)n;
    return cv.src;
}

EMSCRIPTEN_KEEPALIVE int blw_conv_tensor(int t, const uint8_t *src) {
    return cv.c && cv.out ? bli_conv_tensor(cv.c, t, src, conv_sink, NULL, bli_wasm_err(), BLI_WASM_ERRLEN) : -1;
}

/* The finished bundle (blw_conv_size() bytes, owned until blw_conv_free), or NULL. */
EMSCRIPTEN_KEEPALIVE const uint8_t *blw_conv_finish(void) {
    if (!cv.c || !cv.out || bli_conv_finish(cv.c, conv_sink, NULL, bli_wasm_err(), BLI_WASM_ERRLEN)) return NULL;
    return cv.out;
}

EMSCRIPTEN_KEEPALIVE double blw_conv_size(void) { return (double)cv.size; }

/* Log lines since the last call ("" if none); valid until the next call. */
EMSCRIPTEN_KEEPALIVE const char *blw_conv_log(void) {
    static char *last;
    free(last);
    last = cv.log.data && !cv.log.oom ? cv.log.data : NULL;
    memset(&cv.log, 0, sizeof cv.log);
    return last ? last : "";
}
