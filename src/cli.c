/* cli.c — build/bertlens, the native command-line front end.
 *
 *   bertlens info BUNDLE                               metadata + tensor summary
 *   bertlens tokenize BUNDLE TEXT [TEXT_B]             one JSON object
 *   bertlens tokenize --jsonl BUNDLE                   JSON lines in, JSON lines out
 *   bertlens attend [--layer N] [--qk] [--norms] [--ablate L:H,..|--keep L:H,..] BUNDLE TEXT [TEXT_B]
 *   bertlens embed [--ablate L:H,..|--keep L:H,..] BUNDLE TEXT [TEXT...]
 *                                                      sentence embeddings (JSON lines)
 *   bertlens attend --npy DIR ... BUNDLE TEXT [TEXT_B] the same arrays as .npy files in DIR
 *   bertlens analyze BUNDLE TEXT [TEXT_B]              head features, rollout (JSON)
 *   bertlens bench [--tokens 16,128,512] BUNDLE        forward-pass timings (JSON lines)
 *   bertlens convert CHECKPOINT_DIR OUT.blb[.gz] [--dtype ...]  Hugging Face -> bundle (cli_convert.c)
 *   bertlens test-attend ...                           internal: attend + test outputs
 *
 * BUNDLE may be plain (.blb) or gzip-compressed (.blb.gz). Any error: a
 * message on stderr and exit status 1.
 *
 * --threads N, anywhere after the program name: threads of every forward
 * pass (bl_state_set_threads; default 0, one per logical core). The
 * results do not depend on it.
 */
#include "bertlens.h"
#include "bundle.h"
#include "json.h"
#include "kernels.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <zlib.h>

/* ------------------------------------------------------------ loading */

typedef struct {
    void *bytes;  /* 64-byte aligned copy of the inflated bundle */
    size_t size;
    bl_model *model;
} cli_bundle;

/* Read a bundle file, inflating gzip transparently (zlib's gz* reads plain
 * files as they are), with memory bounded by the size the bundle declares:
 *
 *   1. inflate the first 96 bytes (the header, bundle.h);
 *   2. if they are a header (magic, version, header CRC), its file_size is
 *      the bundle's size: above CLI_MAX_BUNDLE it is refused as too large
 *      before anything else is inflated;
 *   3. inflate into a buffer of exactly file_size bytes, and refuse as soon
 *      as the stream holds one byte more ("too large"), so a few MB of gzip
 *      that would inflate to gigabytes stop after file_size bytes;
 *   4. a stream that ends early is handed over short: the loader says
 *      "truncated".
 * Bytes that are not a trustworthy header are handed over as they are (at
 * most 96): the loader says what is wrong with them. The gzip trailer's
 * ISIZE is not used: it is the size mod 2^32 and as hostile as the rest. */
#define CLI_MAX_BUNDLE (UINT64_C(4) << 30) /* 4 GiB: more than an f32 BERT-large (1.3 GB) */

static uint32_t rd_le32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* gzread until n bytes or the end; the count read, or -1 with a reason. */
static int64_t gz_read_full(gzFile f, uint8_t *dst, uint64_t n, const char *path, char *err, size_t errlen) {
    uint64_t got = 0;
    while (got < n) {
        uint64_t want = n - got > (1u << 30) ? (1u << 30) : n - got;
        int k = gzread(f, dst + got, (unsigned)want);
        int zerr;
        const char *msg;
        if (k < 0) {
            msg = gzerror(f, &zerr);
            bli_set_err(err, errlen, "%s: cannot decompress: %s", path, msg ? msg : "read error");
            return -1;
        }
        if (k == 0) {
            /* zlib reports a stream cut short (e.g. a missing gzip trailer,
             * so its CRC and length were never checked) only via gzerror. */
            msg = gzerror(f, &zerr);
            if (zerr != Z_OK) {
                bli_set_err(err, errlen, "%s: truncated or damaged gzip file (%s)", path,
                            zerr == Z_BUF_ERROR ? "it ends before the gzip trailer" : msg ? msg : "read error");
                return -1;
            }
            break;
        }
        got += (uint64_t)k;
    }
    return (int64_t)got;
}

static int read_bundle(const char *path, void **out, size_t *out_size, char *err, size_t errlen) {
    gzFile f = gzopen(path, "rb");
    if (!f) {
        bli_set_err(err, errlen, "cannot open %s: %s", path, strerror(errno ? errno : ENOENT));
        return -1;
    }
    uint8_t head[BL_HEADER_SIZE];
    uint8_t *buf = NULL;
    int64_t got = gz_read_full(f, head, BL_HEADER_SIZE, path, err, errlen);
    if (got < 0) goto fail;
    uint64_t size = (uint64_t)got; /* head only, unless it is a header to trust */
    int trusted = 0;
    if (got == BL_HEADER_SIZE && !memcmp(head, BL_BUNDLE_MAGIC, 8) && rd_le32(head + 8) == BL_BUNDLE_VERSION &&
        bli_crc32(0, head, 92) == rd_le32(head + 92)) {
        uint64_t declared = (uint64_t)rd_le32(head + 16) | (uint64_t)rd_le32(head + 20) << 32;
        if (declared > CLI_MAX_BUNDLE || declared > SIZE_MAX - 64) {
            bli_set_err(err, errlen,
                        "%s: too large: the header says the bundle is %llu bytes, more than the %llu a bundle "
                        "may be",
                        path, (unsigned long long)declared, (unsigned long long)CLI_MAX_BUNDLE);
            goto fail;
        }
        trusted = declared >= BL_HEADER_SIZE; /* a smaller one: the loader refuses the 96 bytes */
        if (trusted) size = declared;
    }
    /* [size + 1] bytes, 64-byte aligned (tensor data is read in place); a
     * large buffer is mapped lazily, so memory follows the bytes inflated.
     * The one byte more: a trusted size is read as a request for size + 1
     * bytes, so that zlib inflates on to the end of the stream (and checks
     * the gzip trailer) in the same call; a byte there is one too many. */
    buf = aligned_alloc(64, (size_t)((size + 64) / 64 * 64));
    if (!buf) {
        bli_set_err(err, errlen, "%s: out of memory (%llu bytes)", path, (unsigned long long)size);
        goto fail;
    }
    memcpy(buf, head, (size_t)got);
    int64_t rest = size > (uint64_t)got || trusted
                       ? gz_read_full(f, buf + got, size - (uint64_t)got + (uint64_t)trusted, path, err, errlen)
                       : 0;
    if (rest < 0) goto fail;
    if (trusted && (uint64_t)got + (uint64_t)rest > size) {
        if (gzdirect(f))
            bli_set_err(err, errlen, "%s: the file is larger than the %llu bytes its header says (trailing garbage)",
                        path, (unsigned long long)size);
        else
            bli_set_err(err, errlen,
                        "%s: too large: it inflates to more than the %llu bytes its header says (a damaged file "
                        "or a decompression bomb), so inflating stopped there",
                        path, (unsigned long long)size);
        goto fail;
    }
    gzclose(f);
    *out = buf;
    *out_size = (size_t)((uint64_t)got + (uint64_t)rest);
    return 0;
fail:
    free(buf);
    gzclose(f);
    return -1;
}

/* Load BUNDLE or print why not. Returns 0 on success. */
static int open_bundle(const char *path, cli_bundle *cb) {
    char err[512] = "";
    memset(cb, 0, sizeof *cb);
    if (read_bundle(path, &cb->bytes, &cb->size, err, sizeof err) != 0) {
        bli_term_line(stderr, "bertlens: %s", err);
        return -1;
    }
    cb->model = bl_model_load(cb->bytes, cb->size, err, sizeof err);
    if (!cb->model) {
        bli_term_line(stderr, "bertlens: %s: %s", path, err);
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

/* ------------------------------------------------------------ threads */

static int32_t cli_threads = 0; /* --threads N (0: one per core) */

/* bl_state_new with the --threads count. */
static bl_state *new_state(const bl_model *m, int32_t max_tokens, unsigned flags, char *err, size_t errlen) {
    bl_state *s = bl_state_new(m, max_tokens, flags, err, errlen);
    if (s && bl_state_set_threads(s, cli_threads, err, errlen) < 0) {
        bl_state_free(s);
        return NULL;
    }
    return s;
}

/* Take "--threads N" out of argv (wherever it is); -1 on a bad value. */
static int take_threads_opt(int *argc, char **argv) {
    for (int i = 1; i < *argc; i++) {
        if (strcmp(argv[i], "--threads")) continue;
        char *end = NULL;
        long n = i + 1 < *argc ? strtol(argv[i + 1], &end, 10) : -1;
        if (!end || *end || end == argv[i + 1] || n < 0 || n > 64) {
            fprintf(stderr, "bertlens: --threads takes a number of threads, 1..64 (0: one per core)\n");
            return -1;
        }
        cli_threads = (int32_t)n;
        memmove(argv + i, argv + i + 2, (size_t)(*argc - i - 1) * sizeof *argv); /* keeps argv[argc] = NULL */
        *argc -= 2;
        return 0;
    }
    return 0;
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
    bli_term_line(stdout, "bundle       %s (%zu bytes inflated, format v%u)", argv[0], cb.size, BL_BUNDLE_VERSION);
    bli_term_line(stdout, "source       %s", bl_model_meta_str(m, "source.name"));
    bli_term_line(stdout, "license      %s", bl_model_meta_str(m, "source.license"));
    bli_term_line(stdout, "source sha256 %s", bl_model_meta_str(m, "source.sha256"));
    bli_term_line(stdout, "converter    %s", bl_model_meta_str(m, "converter.version"));
    bli_term_line(stdout, "dtype        %s", bl_model_meta_str(m, "weights.dtype"));
    const char *fmax = bl_model_meta_str(m, "fidelity.attn_max");
    if (fmax) {
        const char *fmean = bl_model_meta_str(m, "fidelity.attn_mean");
        const char *farg = bl_model_meta_str(m, "fidelity.argmax");
        const char *fset = bl_model_meta_str(m, "fidelity.set");
        bli_term_line(stdout, "fidelity     attention within %s of the fp32 model (worst input; mean |d| <= %s, "
                              "row argmax agrees >= %s %%) on %s", fmax, fmean ? fmean : "?", farg ? farg : "?",
               fset ? fset : "the converter's held-out set");
    }
    bli_term_line(stdout, "layers       %d", c->n_layers);
    bli_term_line(stdout, "heads        %d (d_head %d)", c->n_heads, c->hidden / c->n_heads);
    bli_term_line(stdout, "hidden       %d", c->hidden);
    bli_term_line(stdout, "intermediate %d", c->intermediate);
    bli_term_line(stdout, "max positions %d", c->max_positions);
    bli_term_line(stdout, "type vocab   %d", c->type_vocab_size);
    bli_term_line(stdout, "vocab        %d", c->vocab_size);
    bli_term_line(stdout, "ln eps       %g", (double)c->ln_eps);
    bli_term_line(stdout, "activation   %s", acts[c->activation]);
    bli_term_line(stdout, "metadata     %d entries", bl_model_n_meta(m));
    for (int i = 0; i < bl_model_n_meta(m); i++) {
        char val[256];
        bl_model_meta_format(m, i, val, sizeof val);
        bli_term_line(stdout, "  %-28s %s", bl_model_meta_key(m, i), val);
    }

    /* Tensor summary: count and bytes per dtype, then every tensor. */
    uint64_t bytes[BL_N_DTYPES] = {0}, params = 0;
    int count[BL_N_DTYPES] = {0};
    int n = bl_model_n_tensors(m);
    for (int i = 0; i < n; i++) {
        const bl_tensor *tt = bl_model_tensor(m, i);
        int64_t e = 1;
        for (int d = 0; d < tt->n_dims; d++) e *= tt->dims[d];
        params += (uint64_t)e;
        bytes[tt->dtype] += tt->nbytes;
        count[tt->dtype]++;
    }
    bli_term_line(stdout, "tensors      %d, %llu parameters", n, (unsigned long long)params);
    for (int d = 0; d < BL_N_DTYPES; d++)
        if (count[d]) bli_term_line(stdout, "  %-4s %4d tensors %12llu bytes", bl_dtype_name(d), count[d], (unsigned long long)bytes[d]);
    for (int i = 0; i < n; i++) {
        const bl_tensor *tt = bl_model_tensor(m, i);
        char shape[96];
        int k = snprintf(shape, sizeof shape, "[");
        for (int d = 0; d < tt->n_dims; d++)
            k += snprintf(shape + k, sizeof shape - (size_t)k, "%s%lld", d ? ", " : "", (long long)tt->dims[d]);
        snprintf(shape + k, sizeof shape - (size_t)k, "]");
        bli_term_line(stdout, "  %-52s %-4s %-14s %10llu", tt->name, bl_dtype_name(tt->dtype), shape, (unsigned long long)tt->nbytes);
    }
    close_bundle(&cb);
    return 0;
}

/* ----------------------------------------------------------- tokenize */

/* Tokenize one text (pair) given on the command line, or every line of stdin
 * with --jsonl (a JSON string or {"text", "text_pair", "max_length"} per
 * line; one JSON object out per line, {"error": ...} for a bad line).
 * Sequences are truncated to the model's max_positions (or max_length). */
static int cmd_tokenize(int argc, char **argv) {
    int jsonl = argc >= 1 && !strcmp(argv[0], "--jsonl");
    if (jsonl ? argc != 2 : (argc < 2 || argc > 3)) {
        fprintf(stderr, "usage: bertlens tokenize BUNDLE TEXT [TEXT_B]\n"
                        "       bertlens tokenize --jsonl BUNDLE < lines.jsonl\n");
        return 1;
    }
    cli_bundle cb;
    if (open_bundle(argv[jsonl ? 1 : 0], &cb)) return 1;
    const bl_tokenizer *tk = bl_model_tokenizer(cb.model);
    int32_t max_pos = bl_model_config(cb.model)->max_positions;
    char err[512];
    bli_jbuf out = {0};
    bl_tokens toks;
    int rc = 0;
    if (!jsonl) {
        const char *b = argc == 3 ? argv[2] : NULL;
        if (bl_tokenize(tk, argv[1], strlen(argv[1]), b, b ? strlen(b) : 0, max_pos, &toks, err, sizeof err)) {
            bli_term_line(stderr, "bertlens: %s", err);
            rc = 1;
        } else {
            bli_json_tokens(&out, tk, &toks, 0);
            bl_tokens_free(&toks);
            if (out.oom) {
                fprintf(stderr, "bertlens: out of memory\n");
                rc = 1;
            } else {
                printf("%s\n", out.data);
            }
        }
    } else {
        char *line = NULL;
        size_t cap = 0;
        ssize_t got;
        while ((got = getline(&line, &cap, stdin)) >= 0) {
            size_t n = (size_t)got;
            while (n && (line[n - 1] == '\n' || line[n - 1] == '\r')) n--;
            char *a, *b;
            size_t alen, blen;
            int32_t max_len;
            bli_jbuf_reset(&out);
            if (bli_json_read_input(line, n, &a, &alen, &b, &blen, &max_len, err, sizeof err)) {
                bli_json_error(&out, err);
            } else {
                if (max_len <= 0 || max_len > max_pos) max_len = max_pos;
                if (bl_tokenize(tk, a, alen, b, blen, max_len, &toks, err, sizeof err)) {
                    bli_json_error(&out, err);
                } else {
                    bli_json_tokens(&out, tk, &toks, 0);
                    bl_tokens_free(&toks);
                }
                free(a);
                free(b);
            }
            if (out.oom) {
                fprintf(stderr, "bertlens: out of memory\n");
                rc = 1;
                break;
            }
            fwrite(out.data, 1, out.len, stdout);
            fputc('\n', stdout);
        }
        free(line);
        if (fflush(stdout) != 0) {
            fprintf(stderr, "bertlens: cannot write output\n");
            rc = 1;
        }
    }
    bli_jbuf_free(&out);
    close_bundle(&cb);
    return rc;
}

/* ------------------------------------------------------------- attend */

/* bertlens attend [--layer N] [--qk] [--norms] BUNDLE TEXT [TEXT_B]
 *
 * Prints {"tokens": [...], "truncated": bool, "layers": [l...],
 * "attentions": [layer][head][T][T]}. Every per-layer array lists the layers
 * in "layers": all of them, or with --layer N a one-element list. --qk adds
 * "queries"/"keys" [layer][head][T][d_head] (after bias, before 1/sqrt(d)),
 * --norms adds "norms" [layer][head][T][T] (||a_ij f_h(x_j)||).
 *
 * bertlens test-attend [attend's options] [--ids 101,2023,...] [--types 0,0,...]
 *                      [--hidden] [--rows 0,5,...] BUNDLE [TEXT [TEXT_B]]
 * Internal, for tests/encoder.test.mjs and tests/shapes.test.mjs (not in the
 * usage text): run on token ids instead of text; --hidden adds "hidden"
 * [n_layers+1][T][hidden] and "pooled" [hidden] (mean of the final states);
 * --rows prints only these query rows of every [..][T][..] array and adds
 * "attn_argmax" and "attn_colmean" [layer][head][T] over all rows, so a
 * 512-token reference can be compared without printing every row. */

typedef struct {
    int layer;                /* -1: every layer                           */
    int qk, norms;            /* add queries/keys, value-weighted norms    */
    int hidden;               /* test-attend: add hidden states + pooled   */
    int32_t *ids, *types;     /* test-attend: run these (malloc'ed)        */
    int n_ids, n_types;
    int32_t *rows;            /* test-attend: print only these query rows  */
    int n_rows;               /* -1: every row                             */
    const char *ablate, *keep; /* head specs (see parse_heads), or NULL    */
    const char *npy_dir;       /* --npy DIR: .npy files instead of JSON     */
    const char *bundle, *text, *text_b;
} attend_opts;

static void attend_opts_free(attend_opts *o) {
    free(o->ids);
    free(o->types);
    free(o->rows);
}

/* Parse "1,2,3" into a malloc'ed array. Returns count or -1. */
static int parse_int_list(const char *s, int32_t **out) {
    int cap = 16, n = 0;
    int32_t *v = malloc((size_t)cap * sizeof *v);
    if (!v) return -1;
    while (*s) {
        char *end;
        errno = 0;
        long x = strtol(s, &end, 10);
        if (end == s || errno || x < INT32_MIN || x > INT32_MAX || (*end && *end != ',')) {
            free(v);
            return -1;
        }
        if (n == cap) {
            int32_t *nv = realloc(v, (size_t)(cap *= 2) * sizeof *v);
            if (!nv) {
                free(v);
                return -1;
            }
            v = nv;
        }
        v[n++] = (int32_t)x;
        s = *end ? end + 1 : end;
    }
    *out = v;
    return n;
}

/* One --ids/--types/--rows list into *v, *n; prints why not and returns -1. */
static int int_list_opt(const char *name, const char *arg, int32_t **v, int *n) {
    free(*v);
    *v = NULL;
    if ((*n = parse_int_list(arg, v)) <= 0) {
        bli_term_line(stderr, "bertlens: %s needs a comma-separated list of integers", name);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------- head masks */

/* A head list "L:H[,L:H...]" (L:* = every head of layer L) into sel
 * [L][NH] (1 = listed). Strict: decimal numbers only, no empty items, every
 * layer and head in range. Returns 0, or -1 with a reason in err. */
static int parse_heads(const char *spec, int L, int NH, uint8_t *sel, char *err, size_t errlen) {
    memset(sel, 0, (size_t)L * NH);
    const char *p = spec;
    if (!*p) {
        bli_set_err(err, errlen, "empty head list (expected L:H[,L:H...], L:* for a whole layer)");
        return -1;
    }
    for (;;) {
        const char *item = p;
        long v[2] = {0, -1};
        for (int part = 0; part < 2; part++) {
            if (part == 1 && *p == '*') {
                p++;
                break;
            }
            if (*p < '0' || *p > '9') goto bad;
            long x = 0;
            while (*p >= '0' && *p <= '9') {
                x = x * 10 + (*p++ - '0');
                if (x > 1000000) goto bad;
            }
            v[part] = x;
            if (part == 0) {
                if (*p != ':') goto bad;
                p++;
            }
        }
        if (*p && *p != ',') goto bad;
        if (v[0] >= L) {
            bli_set_err(err, errlen, "'%.*s': layer %ld out of range 0..%d", (int)(p - item), item, v[0], L - 1);
            return -1;
        }
        if (v[1] >= NH) {
            bli_set_err(err, errlen, "'%.*s': head %ld out of range 0..%d", (int)(p - item), item, v[1], NH - 1);
            return -1;
        }
        for (int h = 0; h < NH; h++)
            if (v[1] < 0 || h == v[1]) sel[(size_t)v[0] * NH + h] = 1;
        if (!*p) return 0;
        p++; /* ',' */
        continue;
    bad:
        while (*p && *p != ',') p++;
        bli_set_err(err, errlen, "'%.*s' is not a head (expected L:H or L:*, e.g. 2:5 or 3:*)", (int)(p - item),
                    item);
        return -1;
    }
}

/* Apply --ablate / --keep (at most one given) to s. Prints why not. */
static int apply_heads(bl_state *s, const char *ablate, const char *keep) {
    if (!ablate && !keep) return 0;
    const bl_config *c = bl_model_config(bl_state_model(s));
    const int L = c->n_layers, NH = c->n_heads;
    uint8_t *sel = malloc((size_t)L * NH);
    char err[256];
    if (!sel) {
        fprintf(stderr, "bertlens: out of memory\n");
        return -1;
    }
    if (parse_heads(ablate ? ablate : keep, L, NH, sel, err, sizeof err)) {
        bli_term_line(stderr, "bertlens: %s: %s", ablate ? "--ablate" : "--keep", err);
        free(sel);
        return -1;
    }
    if (keep)
        for (int i = 0; i < L * NH; i++) sel[i] = !sel[i];
    bl_state_set_head_mask(s, sel);
    free(sel);
    return 0;
}

/* --ablate or --keep at argv[*i] (value in argv[*i + 1]) into *ablate or *keep.
 * Returns 1 if it was one of them, 0 if not, -1 on a bad use. */
static int heads_opt(int argc, char **argv, int *i, const char **ablate, const char **keep) {
    const char *a = argv[*i];
    int is_ablate = !strcmp(a, "--ablate"), is_keep = !strcmp(a, "--keep");
    if (!is_ablate && !is_keep) return 0;
    if (*i + 1 >= argc) {
        bli_term_line(stderr, "bertlens: %s needs a head list L:H[,L:H...]", a);
        return -1;
    }
    if (*ablate || *keep) {
        fprintf(stderr, "bertlens: give --ablate or --keep once, not both or twice\n");
        return -1;
    }
    *(is_ablate ? ablate : keep) = argv[++*i];
    return 1;
}

/* attend's arguments into o; internal = 1 (test-attend) also takes the test
 * options. Prints why not and returns -1. */
static int parse_attend(int argc, char **argv, int internal, attend_opts *o) {
    memset(o, 0, sizeof *o);
    o->layer = -1;
    o->n_ids = o->n_types = o->n_rows = -1;
    const char *pos[3];
    int npos = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        int has_val = i + 1 < argc;
        int ho = heads_opt(argc, argv, &i, &o->ablate, &o->keep);
        if (ho < 0) return -1;
        if (ho) {
        } else if (!strcmp(a, "--layer") && has_val) {
            char *end;
            o->layer = (int)strtol(argv[++i], &end, 10);
            if (*end || o->layer < 0) {
                fprintf(stderr, "bertlens: --layer needs a layer number\n");
                return -1;
            }
        } else if (!strcmp(a, "--qk")) {
            o->qk = 1;
        } else if (!strcmp(a, "--npy") && has_val && !internal) {
            o->npy_dir = argv[++i];
        } else if (!strcmp(a, "--norms")) {
            o->norms = 1;
        } else if (internal && !strcmp(a, "--hidden")) {
            o->hidden = 1;
        } else if (internal && !strcmp(a, "--ids") && has_val) {
            if (int_list_opt(a, argv[++i], &o->ids, &o->n_ids)) return -1;
        } else if (internal && !strcmp(a, "--types") && has_val) {
            if (int_list_opt(a, argv[++i], &o->types, &o->n_types)) return -1;
        } else if (internal && !strcmp(a, "--rows") && has_val) {
            if (int_list_opt(a, argv[++i], &o->rows, &o->n_rows)) return -1;
        } else if (a[0] == '-' && a[1] == '-') {
            bli_term_line(stderr, "bertlens: attend: unknown option %s", a);
            return -1;
        } else if (npos < 3) {
            pos[npos++] = a;
        } else {
            npos++;
        }
    }
    if (npos < (o->ids ? 1 : 2) || npos > (o->ids ? 1 : 3)) {
        fprintf(stderr, "usage: bertlens attend [--layer N] [--qk] [--norms] [--ablate L:H,...|--keep L:H,...] "
                        "[--npy DIR] BUNDLE TEXT [TEXT_B]\n");
        return -1;
    }
    if (o->types && o->n_types != o->n_ids) {
        fprintf(stderr, "bertlens: --types has %d entries, --ids %d\n", o->n_types, o->n_ids);
        return -1;
    }
    o->bundle = pos[0];
    o->text = npos >= 2 ? pos[1] : NULL;
    o->text_b = npos == 3 ? pos[2] : NULL;
    return 0;
}

/* A token string as JSON (json.h's escaping, shared with tokenize). */
static void json_str(const char *s) { bli_json_write_string(stdout, s ? s : "", s ? strlen(s) : 0); }

/* Print n floats as a JSON list, %.9g (round-trips f32). */
static void json_floats(const float *x, size_t n) {
    putchar('[');
    for (size_t i = 0; i < n; i++) printf(i ? ",%.9g" : "%.9g", (double)x[i]);
    putchar(']');
}

/* Print a [n_outer][rows][cols] block where rows is either all `n_rows` rows
 * or the listed ones (sel != NULL): a [n_outer][n_sel][cols] JSON list. */
static void json_rows(const float *x, int n_outer, int n_rows, int cols, const int32_t *sel, int n_sel) {
    putchar('[');
    for (int o = 0; o < n_outer; o++) {
        printf(o ? ",[" : "[");
        int nr = sel ? n_sel : n_rows;
        for (int r = 0; r < nr; r++) {
            if (r) putchar(',');
            int row = sel ? sel[r] : r;
            json_floats(x + ((size_t)o * n_rows + row) * cols, (size_t)cols);
        }
        putchar(']');
    }
    putchar(']');
}

/* ,"key":[per layer l0..l1-1: [NH][T or rows][cols] of get(s, l)] */
static void emit_layers(const char *key, const float *(*get)(const bl_state *, int32_t), const bl_state *s,
                        int l0, int l1, int NH, int T, int cols, const attend_opts *o) {
    printf(",\"%s\":[", key);
    for (int l = l0; l < l1; l++) {
        if (l > l0) putchar(',');
        const float *x = get(s, l);
        json_rows(x, NH, T, cols, o->rows, o->n_rows);
    }
    putchar(']');
}

/* ,"hidden":[n_layers+1][T or rows][hidden],"pooled":[hidden] */
static void emit_hidden(const bl_state *s, int L, int T, int H, const attend_opts *o) {
    printf(",\"hidden\":[");
    for (int l = 0; l <= L; l++) {
        if (l) putchar(',');
        json_rows(bl_hidden(s, l), 1, T, H, o->rows, o->n_rows);
    }
    printf("],\"pooled\":[");
    const float *fin = bl_hidden(s, L);
    for (int i = 0; i < H; i++) {
        double sum = 0;
        for (int t = 0; t < T; t++) sum += fin[(size_t)t * H + i];
        printf(i ? ",%.9g" : "%.9g", sum / T);
    }
    putchar(']');
}

/* ,"attn_argmax":[layer][head][T],"attn_colmean":[layer][head][T]: the
 * argmax key of every query row, the mean attention every key receives. */
static void emit_attn_summaries(const bl_state *s, int l0, int l1, int NH, int T) {
    for (int pass = 0; pass < 2; pass++) {
        printf(pass ? "],\"attn_colmean\":[" : ",\"attn_argmax\":[");
        for (int l = l0; l < l1; l++) {
            printf(l > l0 ? ",[" : "[");
            for (int h = 0; h < NH; h++) {
                printf(h ? ",[" : "[");
                const float *a = bl_attention(s, l) + (size_t)h * T * T;
                for (int i = 0; i < T; i++) {
                    if (i) putchar(',');
                    if (!pass) {
                        int best = 0;
                        for (int j = 1; j < T; j++)
                            if (a[(size_t)i * T + j] > a[(size_t)i * T + best]) best = j;
                        printf("%d", best);
                    } else { /* column i */
                        double sum = 0;
                        for (int r = 0; r < T; r++) sum += a[(size_t)r * T + i];
                        printf("%.9g", sum / T);
                    }
                }
                putchar(']');
            }
            putchar(']');
        }
    }
    putchar(']');
}

/* --npy DIR: the arrays as NumPy .npy files (format 1.0, float32 C order,
 * header padded to 64 bytes) instead of JSON on stdout:
 *   DIR/attention_L<l>.npy  [head][T][T]       every listed layer
 *   DIR/norms_L<l>.npy      [head][T][T]       with --norms
 *   DIR/queries_L<l>.npy, DIR/keys_L<l>.npy   [head][T][d_head] with --qk
 *   DIR/tokens.json         {"tokens", "ids", "type_ids", "truncated",
 *                            "layers", "files"}, also printed on stdout
 * DIR is created if missing (its parent must exist). Each file is written
 * under a temporary name and renamed when complete, so a failure leaves no
 * half-written array behind. */

/* Write `path` atomically (path.tmp, then rename); fill(f, ctx) writes the bytes. */
static int write_file_atomic(const char *path, int (*fill)(FILE *, const void *), const void *ctx) {
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp) {
        bli_term_line(stderr, "bertlens: %s: path too long", path);
        return -1;
    }
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        bli_term_line(stderr, "bertlens: cannot write %s: %s", tmp, strerror(errno));
        return -1;
    }
    int bad = fill(f, ctx);
    bad |= ferror(f);
    if (fclose(f)) bad = 1;
    if (bad || rename(tmp, path)) {
        bli_term_line(stderr, "bertlens: cannot write %s: %s", path, strerror(errno ? errno : EIO));
        remove(tmp);
        return -1;
    }
    return 0;
}

typedef struct {
    const float *x;
    int shape[3];
} npy_array;

static int fill_npy(FILE *f, const void *ctx) {
    const npy_array *a = ctx;
    const uint16_t one = 1;
    char head[128];
    int n = snprintf(head, sizeof head, "{'descr': '%cf4', 'fortran_order': False, 'shape': (%d, %d, %d), }",
                     *(const uint8_t *)&one ? '<' : '>', a->shape[0], a->shape[1], a->shape[2]);
    int total = (10 + n + 1 + 63) / 64 * 64; /* magic, version, length, header, '\n' */
    uint16_t hlen = (uint16_t)(total - 10);
    uint8_t pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (uint8_t)(hlen & 255), (uint8_t)(hlen >> 8)};
    memset(head + n, ' ', (size_t)(total - 10 - n - 1));
    head[total - 10 - 1] = '\n';
    size_t count = (size_t)a->shape[0] * a->shape[1] * a->shape[2];
    return fwrite(pre, 1, 10, f) != 10 || fwrite(head, 1, (size_t)hlen, f) != hlen || fwrite(a->x, 4, count, f) != count;
}

typedef struct {
    const bl_tokenizer *tk;
    const int32_t *ids, *types;
    int T, truncated, l0, l1, norms, qk;
} npy_index;

static int fill_tokens_json(FILE *f, const void *ctx) {
    const npy_index *x = ctx;
    fputs("{\"tokens\":[", f);
    for (int t = 0; t < x->T; t++) {
        const char *s = bl_token_str(x->tk, x->ids[t]);
        if (t) fputc(',', f);
        bli_json_write_string(f, s ? s : "", s ? strlen(s) : 0);
    }
    fputs("],\"ids\":[", f);
    for (int t = 0; t < x->T; t++) fprintf(f, t ? ",%d" : "%d", x->ids[t]);
    fputs("],\"type_ids\":[", f);
    for (int t = 0; t < x->T; t++) fprintf(f, t ? ",%d" : "%d", x->types ? x->types[t] : 0);
    fprintf(f, "],\"truncated\":%s,\"layers\":[", x->truncated ? "true" : "false");
    for (int l = x->l0; l < x->l1; l++) fprintf(f, l > x->l0 ? ",%d" : "%d", l);
    fputs("],\"files\":{", f);
    static const char *kinds[] = {"attention", "norms", "queries", "keys"};
    for (int k = 0, first = 1; k < 4; k++) {
        if ((k == 1 && !x->norms) || (k >= 2 && !x->qk)) continue;
        fprintf(f, "%s\"%s\":[", first ? "" : ",", kinds[k]);
        first = 0;
        for (int l = x->l0; l < x->l1; l++) fprintf(f, "%s\"%s_L%d.npy\"", l > x->l0 ? "," : "", kinds[k], l);
        fputc(']', f);
    }
    fputs("}}\n", f);
    return 0;
}

/* Write every array of the last forward (q/k too for --qk) into o->npy_dir. */
static int emit_npy(const attend_opts *o, const bl_state *s, const npy_index *ix, int NH, int d) {
    if (mkdir(o->npy_dir, 0777) && errno != EEXIST) {
        bli_term_line(stderr, "bertlens: cannot create %s: %s", o->npy_dir, strerror(errno));
        return -1;
    }
    char path[4096];
    const int T = ix->T;
    for (int l = ix->l0; l < ix->l1; l++) {
        struct {
            const char *kind;
            const float *x;
            int cols;
        } arrays[] = {{"attention", bl_attention(s, l), T},
                      {"norms", ix->norms ? bl_norms(s, l) : NULL, T},
                      {"queries", ix->qk ? bl_layer_queries(s, l) : NULL, d},
                      {"keys", ix->qk ? bl_layer_keys(s, l) : NULL, d}};
        for (size_t k = 0; k < sizeof arrays / sizeof *arrays; k++) {
            if (!arrays[k].x) continue;
            npy_array a = {arrays[k].x, {NH, T, arrays[k].cols}};
            if (snprintf(path, sizeof path, "%s/%s_L%d.npy", o->npy_dir, arrays[k].kind, l) >= (int)sizeof path) {
                bli_term_line(stderr, "bertlens: %s: path too long", o->npy_dir);
                return -1;
            }
            if (write_file_atomic(path, fill_npy, &a)) return -1;
        }
    }
    if (snprintf(path, sizeof path, "%s/tokens.json", o->npy_dir) >= (int)sizeof path ||
        write_file_atomic(path, fill_tokens_json, ix))
        return -1;
    fill_tokens_json(stdout, ix);
    return fflush(stdout) ? -1 : 0;
}

static int run_attend(const attend_opts *o) {
    int rc = 1;
    cli_bundle cb;
    if (open_bundle(o->bundle, &cb)) return 1;
    const bl_model *m = cb.model;
    const bl_config *c = bl_model_config(m);
    const bl_tokenizer *tk = bl_model_tokenizer(m);
    char err[512] = "";
    bl_tokens toks;
    memset(&toks, 0, sizeof toks);
    int have_toks = 0;
    bl_state *s = NULL;
    const int L = c->n_layers, NH = c->n_heads, H = c->hidden, d = c->hidden / c->n_heads;
    const int32_t *ids = o->ids, *types = o->types;
    int T = o->n_ids;
    if (o->layer >= L) {
        fprintf(stderr, "bertlens: --layer %d: the model has layers 0..%d\n", o->layer, L - 1);
        goto close;
    }
    if (!ids) {
        const char *b = o->text_b;
        if (bl_tokenize(tk, o->text, strlen(o->text), b, b ? strlen(b) : 0, c->max_positions, &toks, err,
                        sizeof err)) {
            bli_term_line(stderr, "bertlens: cannot tokenize: %s", err);
            goto close;
        }
        have_toks = 1;
        ids = toks.ids;
        types = toks.type_ids;
        T = toks.n;
        if (toks.truncated)
            fprintf(stderr, "bertlens: note: the text was truncated to %d tokens (the model's maximum)\n", toks.n);
    }
    if (T > c->max_positions) {
        fprintf(stderr, "bertlens: %d tokens: the model takes at most %d\n", T, c->max_positions);
        goto close;
    }
    for (int r = 0; r < o->n_rows; r++)
        if (o->rows[r] < 0 || o->rows[r] >= T) {
            fprintf(stderr, "bertlens: --rows: row %d out of range 0..%d\n", o->rows[r], T - 1);
            goto close;
        }
    /* --qk: the one layer asked for, or every layer's q/k from one forward */
    unsigned flags = BL_KEEP_ATTN | (o->norms ? BL_KEEP_NORMS : 0) |
                     (o->qk ? (o->layer >= 0 ? BL_KEEP_QK : BL_KEEP_QK_ALL) : 0) | (o->hidden ? BL_KEEP_HIDDEN : 0);
    if (!(s = new_state(m, T, flags, err, sizeof err))) {
        bli_term_line(stderr, "bertlens: %s", err);
        goto close;
    }
    if (apply_heads(s, o->ablate, o->keep)) goto close;
    if (!o->hidden) bl_state_set_final(s, 0); /* nothing printed needs them */
    int l0 = o->layer >= 0 ? o->layer : 0, l1 = o->layer >= 0 ? o->layer + 1 : L;
    if (bl_forward(s, ids, types, T, l0, err, sizeof err)) {
        bli_term_line(stderr, "bertlens: %s", err);
        goto close;
    }

    if (o->npy_dir) {
        npy_index ix = {tk, ids, types, T, toks.truncated, l0, l1, o->norms, o->qk};
        rc = emit_npy(o, s, &ix, NH, d) ? 1 : 0;
        goto close;
    }
    printf("{\"tokens\":[");
    for (int t = 0; t < T; t++) {
        if (t) putchar(',');
        json_str(bl_token_str(tk, ids[t]));
    }
    printf("],\"truncated\":%s,\"layers\":[", toks.truncated ? "true" : "false");
    for (int l = l0; l < l1; l++) printf(l > l0 ? ",%d" : "%d", l);
    putchar(']');
    emit_layers("attentions", bl_attention, s, l0, l1, NH, T, T, o);
    if (o->norms) emit_layers("norms", bl_norms, s, l0, l1, NH, T, T, o);
    if (o->qk) {
        emit_layers("queries", bl_layer_queries, s, l0, l1, NH, T, d, o);
        emit_layers("keys", bl_layer_keys, s, l0, l1, NH, T, d, o);
    }
    if (o->hidden) emit_hidden(s, L, T, H, o);
    if (o->rows) emit_attn_summaries(s, l0, l1, NH, T);
    printf("}\n");
    rc = fflush(stdout) ? 1 : 0;

close:
    bl_state_free(s);
    if (have_toks) bl_tokens_free(&toks);
    close_bundle(&cb);
    return rc;
}

static int cmd_attend(int argc, char **argv, int internal) {
    attend_opts o;
    int rc = parse_attend(argc, argv, internal, &o) ? 1 : run_attend(&o);
    attend_opts_free(&o);
    return rc;
}

/* -------------------------------------------------------------- embed */

/* bertlens embed [--ablate L:H,...|--keep L:H,...] BUNDLE TEXT [TEXT...]
 *
 * The sentence-transformers embedding of each text (bl_embed: the mean of
 * the final hidden states, L2-normalized), texts truncated at
 * bl_embed_max_tokens (the bundle's sentence.max_seq_length; when absent,
 * the model's max positions, said on stderr). One JSON line per
 * text {"tokens": [...], "embedding": [hidden]}, then with several texts
 * {"cosine": [[...]]} (the dot products of the unit embeddings). */
static int cmd_embed(int argc, char **argv) {
    const char *ablate = NULL, *keep = NULL;
    int first = -1;
    for (int i = 0; i < argc && first < 0; i++) {
        int ho = heads_opt(argc, argv, &i, &ablate, &keep);
        if (ho < 0) return 1;
        if (ho) continue;
        if (argv[i][0] == '-' && argv[i][1] == '-') {
            bli_term_line(stderr, "bertlens: embed: unknown option %s", argv[i]);
            return 1;
        }
        first = i;
    }
    if (first < 0 || argc - first < 2) {
        fprintf(stderr, "usage: bertlens embed [--ablate L:H,...|--keep L:H,...] BUNDLE TEXT [TEXT...]\n");
        return 1;
    }
    const char *path = argv[first];
    char **texts = argv + first + 1;
    const int n = argc - first - 1;
    cli_bundle cb;
    if (open_bundle(path, &cb)) return 1;
    const bl_model *m = cb.model;
    const bl_config *c = bl_model_config(m);
    const bl_tokenizer *tk = bl_model_tokenizer(m);
    const int H = c->hidden;
    int rc = 1;
    char err[512] = "";
    bl_state *s = NULL;
    float *emb = calloc((size_t)n * H, sizeof(float)); /* [n][H] */
    if (!emb) {
        fprintf(stderr, "bertlens: out of memory\n");
        goto close;
    }
    int from_meta;
    const int32_t max_len = bl_embed_max_tokens(m, &from_meta, err, sizeof err);
    if (max_len < 0) {
        bli_term_line(stderr, "bertlens: %s: %s", path, err);
        goto close;
    }
    if (!from_meta)
        fprintf(stderr, "bertlens: note: the bundle has no sentence.max_seq_length; truncating at the model's "
                        "%d positions\n", max_len);
    for (int k = 0; k < n; k++) {
        bl_tokens toks;
        if (bl_tokenize(tk, texts[k], strlen(texts[k]), NULL, 0, max_len, &toks, err, sizeof err)) {
            bli_term_line(stderr, "bertlens: text %d: cannot tokenize: %s", k + 1, err);
            goto close;
        }
        const int T = toks.n;
        int bad = 0;
        if (!s) {
            bad = !(s = new_state(m, max_len, 0, err, sizeof err)) || apply_heads(s, ablate, keep);
            if (!s) bli_term_line(stderr, "bertlens: %s", err);
        }
        if (!bad && bl_forward(s, toks.ids, toks.type_ids, T, 0, err, sizeof err)) {
            bli_term_line(stderr, "bertlens: %s", err);
            bad = 1;
        }
        if (bad) {
            bl_tokens_free(&toks);
            goto close;
        }
        if (toks.truncated)
            fprintf(stderr, "bertlens: note: text %d was truncated to %d tokens\n", k + 1, T);
        float *e = emb + (size_t)k * H;
        if (bl_embed(s, e, err, sizeof err)) {
            bli_term_line(stderr, "bertlens: %s", err);
            bl_tokens_free(&toks);
            goto close;
        }
        printf("{\"tokens\":[");
        for (int t = 0; t < T; t++) {
            if (t) putchar(',');
            json_str(bl_token_str(tk, toks.ids[t]));
        }
        printf("],\"embedding\":");
        json_floats(e, (size_t)H);
        printf("}\n");
        bl_tokens_free(&toks);
    }
    if (n > 1) {
        printf("{\"cosine\":[");
        for (int a = 0; a < n; a++) {
            printf(a ? ",[" : "[");
            for (int b = 0; b < n; b++) {
                double dot = 0;
                for (int i = 0; i < H; i++) dot += (double)emb[(size_t)a * H + i] * emb[(size_t)b * H + i];
                printf(b ? ",%.9g" : "%.9g", dot);
            }
            putchar(']');
        }
        printf("]}\n");
    }
    rc = fflush(stdout) ? 1 : 0;
close:
    free(emb);
    bl_state_free(s);
    close_bundle(&cb);
    return rc;
}

/* ------------------------------------------------------------ analyze */

/* bertlens analyze BUNDLE TEXT [TEXT_B]
 * Prints bl_analyze's figures as JSON (format in json.h). */
static int cmd_analyze(int argc, char **argv) {
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: bertlens analyze BUNDLE TEXT [TEXT_B]\n");
        return 1;
    }
    cli_bundle cb;
    if (open_bundle(argv[0], &cb)) return 1;
    const bl_config *c = bl_model_config(cb.model);
    const bl_tokenizer *tk = bl_model_tokenizer(cb.model);
    char err[512] = "";
    bl_tokens toks;
    bl_state *s = NULL;
    bl_analysis an;
    bli_jbuf out = {0};
    int rc = 1, have_toks = 0;
    memset(&an, 0, sizeof an);
    const char *b = argc == 3 ? argv[2] : NULL;
    if (bl_tokenize(tk, argv[1], strlen(argv[1]), b, b ? strlen(b) : 0, c->max_positions, &toks, err, sizeof err)) {
        bli_term_line(stderr, "bertlens: cannot tokenize: %s", err);
        goto close;
    }
    have_toks = 1;
    if (toks.truncated)
        fprintf(stderr, "bertlens: note: the text was truncated to %d tokens (the model's maximum)\n", toks.n);
    if (!(s = new_state(cb.model, toks.n, BL_KEEP_ATTN | BL_KEEP_NORMS, err, sizeof err)) ||
        bl_forward(s, toks.ids, toks.type_ids, toks.n, 0, err, sizeof err) ||
        bl_analyze(s, toks.ids, toks.type_ids, BL_ANALYZE_ROLLOUT, &an, err, sizeof err)) {
        bli_term_line(stderr, "bertlens: %s", err);
        goto close;
    }
    bli_json_analysis(&out, tk, toks.ids, &an, 1);
    if (out.oom) {
        fprintf(stderr, "bertlens: out of memory\n");
        goto close;
    }
    fwrite(out.data, 1, out.len, stdout);
    fputc('\n', stdout);
    rc = fflush(stdout) ? 1 : 0;
close:
    bli_jbuf_free(&out);
    bl_analysis_free(&an);
    bl_state_free(s);
    if (have_toks) bl_tokens_free(&toks);
    close_bundle(&cb);
    return rc;
}

/* -------------------------------------------------------------- bench */

/* bertlens bench [--tokens 16,128,512] [--runs N] [--warmup N] [--flags attn|none] BUNDLE
 * bertlens bench --stdin [--flags attn|none] BUNDLE
 *
 * Times bl_forward in this process, as tools/bench.mjs times blw_forward_ids
 * in wasm, on the same synthetic ids ([CLS], words drawn by the LCG of
 * bench.mjs's tokenIds, [SEP]); the state is built before the clock starts.
 * One JSON line per T: {"T", "runs", "min_ms", "median_ms", "flags", "simd"}.
 * --stdin: for each line "T" on stdin, one timed forward of T tokens and one
 * line back {"T", "ms", "cpu_ms" (the process's CPU time, every thread), "simd"}
 * (tools/bench.mjs alternates these with wasm runs; tools/bench_native.py with its peers). */

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* CPU time of the whole process (every thread), ms. */
static double cpu_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct {
    const bl_model *model;
    unsigned flags;
    bl_state *s;
    int32_t *ids; /* [capacity] */
    int32_t capacity;
} bench_ctx;

/* One forward of T synthetic tokens; its wall time in *ms. 0 ok / 1 (said why). */
static int bench_forward(bench_ctx *b, int32_t T, double *ms, double *cpu) {
    const bl_config *c = bl_model_config(b->model);
    char err[512] = "";
    if (T < 2 || T > c->max_positions) {
        fprintf(stderr, "bertlens: bench: %d tokens: must be 2..%d\n", T, c->max_positions);
        return 1;
    }
    if (T > b->capacity) {
        int32_t *ids = realloc(b->ids, (size_t)T * sizeof *ids);
        if (!ids) {
            fprintf(stderr, "bertlens: out of memory\n");
            return 1;
        }
        b->ids = ids;
        if (b->s ? bl_state_reserve(b->s, T, b->flags, err, sizeof err)
                 : !(b->s = new_state(b->model, T, b->flags, err, sizeof err))) {
            bli_term_line(stderr, "bertlens: %s", err);
            return 1;
        }
        b->capacity = T;
    }
    /* ids in 2000..28999, or 200..vocab-1 for a smaller vocabulary (e.g.
     * the random checkpoints of tools/make_random_bert.py: 5000 tokens) */
    const int32_t lo = c->vocab_size >= 29000 ? 2000 : 200, span = c->vocab_size >= 29000 ? 27000 : c->vocab_size - 200;
    if (span < 1) {
        fprintf(stderr, "bertlens: bench: the vocabulary has %d tokens (needs more than 200)\n", c->vocab_size);
        return 1;
    }
    uint32_t x = 12345;
    for (int32_t t = 0; t < T; t++) {
        x = x * 1103515245u + 12345u;
        b->ids[t] = lo + (int32_t)((x >> 8) % (uint32_t)span);
    }
    b->ids[0] = 101;     /* [CLS] */
    b->ids[T - 1] = 102; /* [SEP] */
    double t0 = now_ms(), c0 = cpu_ms();
    if (bl_forward(b->s, b->ids, NULL, T, 0, err, sizeof err)) {
        bli_term_line(stderr, "bertlens: %s", err);
        return 1;
    }
    *ms = now_ms() - t0;
    if (cpu) *cpu = cpu_ms() - c0;
    return 0;
}

static int cmd_bench(int argc, char **argv) {
    static const int32_t default_Ts[] = {16, 128, 512};
    int32_t *Ts = NULL;
    int nT = 0, runs = 10, warmup = 2, from_stdin = 0, i;
    unsigned flags = BL_KEEP_ATTN;
    for (i = 0; i < argc - 1; i++) {
        const char *a = argv[i], *v = argv[i + 1];
        if (!strcmp(a, "--stdin")) {
            from_stdin = 1;
            continue;
        }
        if (!strcmp(a, "--tokens")) {
            free(Ts);
            Ts = NULL;
            if ((nT = parse_int_list(v, &Ts)) <= 0) {
                fprintf(stderr, "bertlens: bench: --tokens wants a list like 16,128,512\n");
                free(Ts); /* an empty list was allocated */
                return 1;
            }
        } else if (!strcmp(a, "--runs") || !strcmp(a, "--warmup")) {
            char *end;
            long n = strtol(v, &end, 10), lo = !strcmp(a, "--runs");
            if (*end || n < lo || n > 100000) {
                bli_term_line(stderr, "bertlens: bench: bad %s %s", a, v);
                free(Ts);
                return 1;
            }
            *(lo ? &runs : &warmup) = (int)n;
        } else if (!strcmp(a, "--flags") && (!strcmp(v, "attn") || !strcmp(v, "none"))) {
            flags = v[0] == 'a' ? BL_KEEP_ATTN : 0;
        } else {
            break;
        }
        i++;
    }
    if (i != argc - 1 || argv[i][0] == '-') {
        fprintf(stderr, "usage: bertlens bench [--tokens 16,128,512] [--runs N] [--warmup N] [--flags attn|none] BUNDLE\n"
                        "       bertlens bench --stdin [--flags attn|none] BUNDLE\n");
        free(Ts);
        return 1;
    }
    cli_bundle cb;
    if (open_bundle(argv[i], &cb)) {
        free(Ts);
        return 1;
    }
    bench_ctx b = {cb.model, flags, NULL, NULL, 0};
    int rc = 0;
    double *ms = NULL;
    if (from_stdin) {
        char line[64];
        while (!rc && fgets(line, sizeof line, stdin)) {
            double t, c;
            rc = bench_forward(&b, (int32_t)atoi(line), &t, &c);
            if (!rc)
                printf("{\"T\":%d,\"ms\":%.3f,\"cpu_ms\":%.3f,\"simd\":\"%s\"}\n", atoi(line), t, c, blk_simd_name());
            fflush(stdout);
        }
    } else if (!(ms = malloc((size_t)runs * sizeof *ms))) {
        fprintf(stderr, "bertlens: out of memory\n");
        rc = 1;
    } else {
        for (int j = 0; j < (Ts ? nT : 3) && !rc; j++) {
            const int32_t T = Ts ? Ts[j] : default_Ts[j];
            for (int r = 0; r < warmup + runs && !rc; r++) {
                double t;
                rc = bench_forward(&b, T, &t, NULL);
                if (r >= warmup) ms[r - warmup] = t;
            }
            if (rc) break;
            qsort(ms, (size_t)runs, sizeof *ms, cmp_double);
            double med = runs % 2 ? ms[runs / 2] : (ms[runs / 2 - 1] + ms[runs / 2]) / 2;
            printf("{\"T\":%d,\"runs\":%d,\"min_ms\":%.3f,\"median_ms\":%.3f,\"flags\":\"%s\",\"simd\":\"%s\"}\n", T, runs,
                   ms[0], med, flags ? "attn" : "none", blk_simd_name());
            fflush(stdout);
        }
    }
    free(ms);
    free(Ts);
    free(b.ids);
    bl_state_free(b.s);
    close_bundle(&cb);
    return rc;
}

/* --------------------------------------------------------------- main */

int bli_cmd_convert(int argc, char **argv); /* cli_convert.c */
int bli_cmd_corpus(int argc, char **argv, int32_t threads, int (*read)(const char *, void **, size_t *, char *, size_t)); /* cli_corpus.c */

static void usage(FILE *f) {
    fprintf(f,
            "bertlens %s — BERT attention from a bundle\n"
            "usage:\n"
            "  bertlens info BUNDLE\n"
            "  bertlens tokenize BUNDLE TEXT [TEXT_B]\n"
            "  bertlens tokenize --jsonl BUNDLE        (JSON lines on stdin)\n"
            "  bertlens attend [--layer N] [--qk] [--norms] [--ablate L:H,...|--keep L:H,...] [--npy DIR] BUNDLE TEXT [TEXT_B]\n"
            "                      --ablate masks these heads (L:* a whole layer), --keep all but these\n"
            "                      --npy DIR writes DIR/attention_L<l>.npy (float32 [head][T][T]; norms_, queries_,\n"
            "                      keys_ likewise) and DIR/tokens.json instead of JSON on stdout\n"
            "  bertlens embed [--ablate ...|--keep ...] BUNDLE TEXT [TEXT...]   sentence embeddings, cosines\n"
            "  bertlens analyze BUNDLE TEXT [TEXT_B]   head features + classes, rollout\n"
            "  bertlens corpus [--top N] BUNDLE FILE   every head over many inputs (a line each, TAB before B; - stdin)\n"
            "  bertlens bench [--tokens 16,128,512] [--runs N] [--flags attn|none] BUNDLE   forward-pass timings\n"
            "  bertlens convert CHECKPOINT_DIR OUT.blb[.gz] [--dtype f32|f16|q8|q4] [--embed-dtype D] [--name N]\n"
            "                  [--license SPDX] [--cased]   Hugging Face BERT folder -> bundle\n"
            "  --threads N (any command): threads of the forward pass, default one per core\n",
            BL_VERSION);
}

int main(int argc, char **argv) {
    if (take_threads_opt(&argc, argv)) return 1;
    if (argc < 2) {
        usage(stderr);
        return 1;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "info")) return cmd_info(argc - 2, argv + 2);
    if (!strcmp(cmd, "tokenize")) return cmd_tokenize(argc - 2, argv + 2);
    if (!strcmp(cmd, "attend")) return cmd_attend(argc - 2, argv + 2, 0);
    if (!strcmp(cmd, "test-attend")) return cmd_attend(argc - 2, argv + 2, 1); /* internal, for tests */
    if (!strcmp(cmd, "analyze")) return cmd_analyze(argc - 2, argv + 2);
    if (!strcmp(cmd, "embed")) return cmd_embed(argc - 2, argv + 2);
    if (!strcmp(cmd, "bench")) return cmd_bench(argc - 2, argv + 2);
    if (!strcmp(cmd, "convert")) return bli_cmd_convert(argc - 2, argv + 2);
    if (!strcmp(cmd, "corpus")) return bli_cmd_corpus(argc - 2, argv + 2, cli_threads, read_bundle);
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        usage(stdout);
        return 0;
    }
    bli_term_line(stderr, "bertlens: unknown command '%s'", cmd);
    usage(stderr);
    return 1;
}
