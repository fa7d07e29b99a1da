/* wasm_convert.c — the converter of convert.h at the WebAssembly boundary
 * (blw_conv_* exports; web/js/engine/convert.js drives them): a Hugging
 * Face checkpoint folder in, a bundle in wasm memory out. Failing calls
 * leave their message for blw_error() (wasm_api.c).
 */
#include "convert/convert.h"
#include "text/json.h"
#include "base/sizes.h"
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
    bli_conv_rows rows; /* the tensor being converted by rows */
    int finished;     /* blw_conv_finish wrote the header: out is the bundle */
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

/* Source bytes per row of tensor t when the page may feed it by rows
 * (blw_conv_tensor_rows), else 0: it goes whole (blw_conv_tensor). */
EMSCRIPTEN_KEEPALIVE double blw_conv_rows(int t) { return cv.c ? (double)bli_conv_row_bytes(cv.c, t) : 0; }

/* Rows [row0, row0 + nrows) of tensor t from src (their source bytes), in
 * order; hash: src is also the next bytes of its weight file (source.sha256),
 * so the page passes each chunk once. 0 or -1. */
EMSCRIPTEN_KEEPALIVE int blw_conv_tensor_rows(int t, double row0, double nrows, const uint8_t *src, int hash) {
    if (!cv.c || !cv.out) return -1;
    const uint64_t row = bli_conv_row_bytes(cv.c, t);
    if (!(row0 >= 0 && row0 < 9007199254740992.0 && nrows >= 1 && nrows < 9007199254740992.0) || !row) {
        snprintf(bli_wasm_err(), BLI_WASM_ERRLEN, "blw_conv_tensor_rows: tensor %d, rows %g+%g", t, row0, nrows);
        return -1;
    }
    const uint64_t n = BLI_BYTES(row, (int64_t)nrows, 1);
    if (!bli_size_ok(n, "a chunk of rows", bli_wasm_err(), BLI_WASM_ERRLEN)) return -1;
    if (hash) bli_conv_hash(cv.c, src, (size_t)n);
    return bli_conv_tensor_rows(cv.c, &cv.rows, t, (int64_t)row0, (int64_t)nrows, src, conv_sink, NULL, cv.out,
                                cv.size, bli_wasm_err(), BLI_WASM_ERRLEN);
}

/* The finished bundle (blw_conv_size() bytes, owned until blw_conv_free), or NULL. */
EMSCRIPTEN_KEEPALIVE const uint8_t *blw_conv_finish(void) {
    if (!cv.c || !cv.out || bli_conv_finish(cv.c, conv_sink, NULL, bli_wasm_err(), BLI_WASM_ERRLEN)) return NULL;
    cv.finished = 1;
    return cv.out;
}

/* Bytes [off, off + n) of the finished bundle (a pointer into it), or NULL:
 * the page copies the bundle out by slices (never whole) to keep it. */
EMSCRIPTEN_KEEPALIVE const uint8_t *blw_conv_read(double off, double n) {
    if (!cv.finished || !cv.out || !(off >= 0 && n >= 0 && off <= (double)cv.size && n <= (double)cv.size - off)) {
        snprintf(bli_wasm_err(), BLI_WASM_ERRLEN, "no converted bundle bytes %g+%g (it has %llu)", off, n,
                 (unsigned long long)(cv.finished ? cv.size : 0));
        return NULL;
    }
    return cv.out + (uint64_t)off;
}

/* The finished bundle becomes the engine's model, without a copy: blw_load
 * takes its memory (and frees it when it refuses the bundle; the model
 * loaded before then stays). The converter forgets it and frees the rest of
 * its state first. 0 or -1 (blw_error). */
EMSCRIPTEN_KEEPALIVE int blw_conv_load(void) {
    if (!cv.finished || !cv.out) {
        bli_wasm_set_error("no converted bundle to load");
        return -1;
    }
    uint8_t *p = cv.out;
    const uint64_t n = cv.size;
    cv.out = NULL;
    blw_conv_free();
    if (n > 0x7fffffffu) {
        free(p);
        bli_wasm_set_error("the converted bundle is over 2 GB, more than the engine loads");
        return -1;
    }
    return blw_load(p, (int)n);
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
