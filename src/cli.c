/* cli.c — build/bertlens, the native command-line front end.
 *
 *   bertlens info BUNDLE                               metadata + tensor summary
 *   bertlens tokenize BUNDLE TEXT [TEXT_B]             one JSON object
 *   bertlens tokenize --jsonl BUNDLE                   JSON lines in, JSON lines out
 *   bertlens attend [--layer N] [--qk] [--norms] BUNDLE TEXT [TEXT_B]
 *
 * BUNDLE may be plain (.blb) or gzip-compressed (.blb.gz). Any error: a
 * message on stderr and exit status 1.
 */
#include "bertlens.h"
#include "bundle.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* ------------------------------------------------------------ loading */

typedef struct {
    void *bytes;  /* 64-byte aligned copy of the inflated bundle */
    size_t size;
    bl_model *model;
} cli_bundle;

/* Read a whole file, inflating gzip transparently (zlib's gz* reads plain
 * files as they are). The bundle limit keeps a hostile .gz from eating RAM. */
#define CLI_MAX_BUNDLE ((size_t)4 << 30)

static int read_bundle(const char *path, void **out, size_t *out_size, char *err, size_t errlen) {
    gzFile f = gzopen(path, "rb");
    if (!f) {
        bl_set_err(err, errlen, "cannot open %s: %s", path, strerror(errno ? errno : ENOENT));
        return -1;
    }
    size_t cap = 1 << 20, n = 0;
    uint8_t *buf = aligned_alloc(64, cap);
    if (!buf) goto oom;
    for (;;) {
        if (n == cap) {
            if (cap >= CLI_MAX_BUNDLE) {
                free(buf);
                gzclose(f);
                bl_set_err(err, errlen, "%s: larger than %zu bytes once inflated", path, CLI_MAX_BUNDLE);
                return -1;
            }
            uint8_t *nb = aligned_alloc(64, cap * 2);
            if (!nb) goto oom;
            memcpy(nb, buf, n);
            free(buf);
            buf = nb;
            cap *= 2;
        }
        size_t want = cap - n > (1u << 30) ? (1u << 30) : cap - n;
        int got = gzread(f, buf + n, (unsigned)want);
        if (got < 0) {
            int zerr;
            const char *msg = gzerror(f, &zerr);
            bl_set_err(err, errlen, "%s: cannot decompress: %s", path, msg ? msg : "read error");
            free(buf);
            gzclose(f);
            return -1;
        }
        if (got == 0) break;
        n += (size_t)got;
    }
    gzclose(f);
    *out = buf;
    *out_size = n;
    return 0;
oom:
    free(buf);
    gzclose(f);
    bl_set_err(err, errlen, "%s: out of memory", path);
    return -1;
}

/* Load BUNDLE or print why not. Returns 0 on success. */
static int open_bundle(const char *path, cli_bundle *cb) {
    char err[512] = "";
    memset(cb, 0, sizeof *cb);
    if (read_bundle(path, &cb->bytes, &cb->size, err, sizeof err) != 0) {
        fprintf(stderr, "bertlens: %s\n", err);
        return -1;
    }
    cb->model = bl_model_load(cb->bytes, cb->size, err, sizeof err);
    if (!cb->model) {
        fprintf(stderr, "bertlens: %s: %s\n", path, err);
        free(cb->bytes);
        cb->bytes = NULL;
        return -1;
    }
    return 0;
}

static void close_bundle(cli_bundle *cb) {
    bl_model_free(cb->model);
    free(cb->bytes);
    memset(cb, 0, sizeof *cb);
}

/* --------------------------------------------------------------- info */

static int cmd_info(int argc, char **argv) {
    if (argc != 1) {
        fprintf(stderr, "usage: bertlens info BUNDLE\n");
        return 1;
    }
    cli_bundle cb;
    if (open_bundle(argv[0], &cb)) return 1;
    const bl_model *m = cb.model;
    const bl_config *c = bl_model_config(m);
    static const char *acts[] = {"gelu (erf)", "gelu (tanh)", "relu"};
    printf("bundle       %s (%zu bytes inflated, format v%u)\n", argv[0], cb.size, BL_BUNDLE_VERSION);
    printf("source       %s\n", bl_model_meta_str(m, "source.name"));
    printf("license      %s\n", bl_model_meta_str(m, "source.license"));
    printf("source sha256 %s\n", bl_model_meta_str(m, "source.sha256"));
    printf("converter    %s\n", bl_model_meta_str(m, "converter.version"));
    printf("dtype        %s\n", bl_model_meta_str(m, "weights.dtype"));
    printf("layers       %d\n", c->n_layers);
    printf("heads        %d (d_head %d)\n", c->n_heads, c->hidden / c->n_heads);
    printf("hidden       %d\n", c->hidden);
    printf("intermediate %d\n", c->intermediate);
    printf("max positions %d\n", c->max_positions);
    printf("type vocab   %d\n", c->type_vocab_size);
    printf("vocab        %d\n", c->vocab_size);
    printf("ln eps       %g\n", (double)c->ln_eps);
    printf("activation   %s\n", acts[c->activation]);
    printf("metadata     %d entries\n", bl_model_n_meta(m));
    for (int i = 0; i < bl_model_n_meta(m); i++) {
        char val[256];
        bl_model_meta_format(m, i, val, sizeof val);
        printf("  %-28s %s\n", bl_model_meta_key(m, i), val);
    }

    /* Tensor summary: count and bytes per dtype, then every tensor. */
    uint64_t bytes[4] = {0}, params = 0;
    int count[4] = {0};
    int n = bl_model_n_tensors(m);
    for (int i = 0; i < n; i++) {
        const bl_tensor *tt = bl_model_tensor(m, i);
        int64_t e = 1;
        for (int d = 0; d < tt->n_dims; d++) e *= tt->dims[d];
        params += (uint64_t)e;
        bytes[tt->dtype] += tt->nbytes;
        count[tt->dtype]++;
    }
    printf("tensors      %d, %llu parameters\n", n, (unsigned long long)params);
    for (int d = 0; d < 4; d++)
        if (count[d]) printf("  %-4s %4d tensors %12llu bytes\n", bl_dtype_name(d), count[d], (unsigned long long)bytes[d]);
    for (int i = 0; i < n; i++) {
        const bl_tensor *tt = bl_model_tensor(m, i);
        char shape[96];
        int k = snprintf(shape, sizeof shape, "[");
        for (int d = 0; d < tt->n_dims; d++)
            k += snprintf(shape + k, sizeof shape - (size_t)k, "%s%lld", d ? ", " : "", (long long)tt->dims[d]);
        snprintf(shape + k, sizeof shape - (size_t)k, "]");
        printf("  %-52s %-4s %-14s %10llu\n", tt->name, bl_dtype_name(tt->dtype), shape, (unsigned long long)tt->nbytes);
    }
    close_bundle(&cb);
    return 0;
}

/* ----------------------------------------------------------- tokenize */

static int cmd_tokenize(int argc, char **argv) {
    (void)argc;
    (void)argv;
    fprintf(stderr, "bertlens: tokenize is not built into this binary yet\n");
    return 1;
}

/* ------------------------------------------------------------- attend */

static int cmd_attend(int argc, char **argv) {
    (void)argc;
    (void)argv;
    fprintf(stderr, "bertlens: attend is not built into this binary yet\n");
    return 1;
}

/* --------------------------------------------------------------- main */

static void usage(FILE *f) {
    fprintf(f,
            "bertlens %s — BERT attention from a bundle\n"
            "usage:\n"
            "  bertlens info BUNDLE\n"
            "  bertlens tokenize BUNDLE TEXT [TEXT_B]\n"
            "  bertlens tokenize --jsonl BUNDLE        (JSON lines on stdin)\n"
            "  bertlens attend [--layer N] [--qk] [--norms] BUNDLE TEXT [TEXT_B]\n",
            BL_VERSION);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return 1;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "info")) return cmd_info(argc - 2, argv + 2);
    if (!strcmp(cmd, "tokenize")) return cmd_tokenize(argc - 2, argv + 2);
    if (!strcmp(cmd, "attend")) return cmd_attend(argc - 2, argv + 2);
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        usage(stdout);
        return 0;
    }
    fprintf(stderr, "bertlens: unknown command '%s'\n", cmd);
    usage(stderr);
    return 1;
}
