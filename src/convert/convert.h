/* convert.h — Hugging Face BERT checkpoint -> bertlens bundle, in C.
 *
 * The same bytes as tools/convert.py (the reference) for the same inputs and
 * options; one implementation for the native CLI (`bertlens convert`) and the
 * page (wasm_api.c). The converter never touches a file system: the front end
 * hands it the checkpoint's small files whole and the weights piece by piece,
 * and receives the bundle through a write-at callback, so a browser can read
 * File slices asynchronously and a 440 MB checkpoint is never held twice.
 *
 *     bli_conv *c = bli_conv_new(&opts, log, ctx, err, sizeof err);
 *     for each name in the folder: switch (bli_conv_wants(name)) {
 *         case BLI_CONV_WANT_TEXT: bli_conv_add_file(c, name, bytes, n, ...); break;
 *         case BLI_CONV_WANT_SIZE: bli_conv_add_file(c, name, NULL, size, ...); break; }
 *     bli_conv_begin(c, ...)                      config, vocabulary, which weight files
 *     for w < bli_conv_n_weights(c):              safetensors headers
 *         bli_conv_header_size(first 8 bytes, file size, &n); bli_conv_set_header(c, w, head, n, ...)
 *     bli_conv_plan(c, ...)                       tensors found and checked, bundle layout
 *     for every weight file, all its bytes in order: bli_conv_hash(c, p, n)   (source.sha256)
 *     for t < bli_conv_n_tensors(c):
 *         bli_conv_source(c, t, &w, &off, &n); read those bytes; bli_conv_tensor(c, t, bytes, sink, ...)
 *     bli_conv_finish(c, sink, ...)               header, metadata, table
 *     bli_conv_free(c);
 *
 * Names are relative to the checkpoint folder ("config.json",
 * "0_Transformer/model.safetensors"). The bundle is bli_conv_size(c) bytes; the
 * sink receives every byte range exactly once except zero padding, which it
 * must supply itself (a zero-filled buffer or file). Every function returns 0
 * or -1 with a reason in err; nothing aborts.
 */
#ifndef BL_CONVERT_H
#define BL_CONVERT_H

#include <stddef.h>
#include <stdint.h>

#define BLI_CONVERTER_VERSION "bertlens-convert 2"

typedef struct bli_conv bli_conv;

typedef struct {
    const char *dtype;       /* "f32" "f16" "q8" "q4" "q8h" "q9".."q12"; NULL: "q8" */
    const char *embed_dtype; /* NULL: dtype */
    const char *name;        /* source.name (the front end defaults it to the folder's name) */
    const char *license;     /* NULL: "unknown", with a warning */
    int cased;               /* force a cased tokenizer */
} bli_conv_opts;

/* One log line (no newline), as tools/convert.py prints them. */
typedef void (*bli_conv_log)(void *ctx, const char *line);
/* Write n bytes at offset off of the bundle; 0 or -1. */
typedef int (*bli_conv_sink)(void *ctx, uint64_t off, const void *p, size_t n);

enum { BLI_CONV_WANT_NONE = 0, BLI_CONV_WANT_TEXT = 1, BLI_CONV_WANT_SIZE = 2 };

bli_conv *bli_conv_new(const bli_conv_opts *o, bli_conv_log log, void *log_ctx, char *err, size_t errlen);
void bli_conv_free(bli_conv *c);

int bli_conv_wants(const char *name);
int bli_conv_add_file(bli_conv *c, const char *name, const void *bytes, uint64_t size, char *err, size_t errlen);
int bli_conv_begin(bli_conv *c, char *err, size_t errlen);

int bli_conv_n_weights(const bli_conv *c);
const char *bli_conv_weight_name(const bli_conv *c, int w);
/* From the first 8 bytes of a safetensors file: how many bytes its head
 * (length + JSON header) takes. */
int bli_conv_header_size(const void *first8, uint64_t file_size, uint64_t *head, char *err, size_t errlen);
int bli_conv_set_header(bli_conv *c, int w, uint64_t file_size, const void *head, size_t n, char *err,
                        size_t errlen);

int bli_conv_plan(bli_conv *c, char *err, size_t errlen);
uint64_t bli_conv_size(const bli_conv *c);
int bli_conv_n_tensors(const bli_conv *c);
void bli_conv_hash(bli_conv *c, const void *p, size_t n);
int bli_conv_source(const bli_conv *c, int t, int *w, uint64_t *off, uint64_t *n);
int bli_conv_tensor(bli_conv *c, int t, const void *src, bli_conv_sink sink, void *sink_ctx, char *err,
                    size_t errlen);
/* By rows, for front ends that hold the bundle in memory (the page): a 2-D
 * tensor whose source and dtype allow it (f32 / f16 / bf16 / f64 source;
 * f32, f16, q8 or q4 out) is converted rows [row0, row0 + nrows) at a time,
 * in order from row 0, src holding just those rows' source bytes; the
 * bundle's bytes, the log line and the CRC (taken from `bundle`, the sink's
 * buffer of bundle_size bytes, after the last rows) are bli_conv_tensor's.
 * bli_conv_row_bytes: source bytes per row, 0 when t goes whole. */
typedef struct {
    int t;
    int64_t next;           /* the row the next call starts at */
    double emax, e2, w2;    /* the error sums so far (the log line) */
} bli_conv_rows;
uint64_t bli_conv_row_bytes(const bli_conv *c, int t);
int bli_conv_tensor_rows(bli_conv *c, bli_conv_rows *acc, int t, int64_t row0, int64_t nrows, const void *src,
                         bli_conv_sink sink, void *sink_ctx, const uint8_t *bundle, uint64_t bundle_size, char *err,
                         size_t errlen);
int bli_conv_finish(bli_conv *c, bli_conv_sink sink, void *sink_ctx, char *err, size_t errlen);

#endif
