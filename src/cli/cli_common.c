/* cli_common.c — what the CLI's commands share (cli.h): reading a bundle
 * file (gzip or plain, memory bounded by the size it declares), the
 * --threads count of every state, JSON output helpers, argument lists.
 */
#include "cli.h"
#include "format/bundle.h"
#include "text/json.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

/* ------------------------------------------------------------ loading */

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

int bli_cli_read_bundle(const char *path, void **out, size_t *out_size, char *err, size_t errlen) {
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
    if (got == BL_HEADER_SIZE && !memcmp(head, BL_BUNDLE_MAGIC, 8) && rd_le32(head + 8) >= BL_BUNDLE_MIN_VERSION &&
        rd_le32(head + 8) <= BL_BUNDLE_VERSION &&
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

static int cli_low_memory = 0; /* --low-memory */

/* Load BUNDLE or print why not. Returns 0 on success. */
int bli_cli_open_bundle(const char *path, bli_cli_bundle *cb) {
    char err[512] = "";
    memset(cb, 0, sizeof *cb);
    if (bli_cli_read_bundle(path, &cb->bytes, &cb->size, err, sizeof err) != 0) {
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
    if (cli_low_memory && bl_model_pack_in_place(cb->model, cb->bytes) < 0) {
        bli_term_line(stderr, "bertlens: %s: out of memory re-laying out its weights", path);
        bli_cli_close_bundle(cb);
        return -1;
    }
    return 0;
}

void bli_cli_set_low_memory(int on) { cli_low_memory = on; }
int bli_cli_low_memory(void) { return cli_low_memory; }

void bli_cli_close_bundle(bli_cli_bundle *cb) {
    bl_model_free(cb->model);
    free(cb->bytes);
    memset(cb, 0, sizeof *cb);
}

/* ------------------------------------------------------------ threads */

static int32_t cli_threads = 0; /* --threads N (0: one per core) */

void bli_cli_set_threads(int32_t n) { cli_threads = n; }
int32_t bli_cli_threads(void) { return cli_threads; }

/* bl_state_new with the --threads count. */
bl_state *bli_cli_new_state(const bl_model *m, int32_t max_tokens, unsigned flags, char *err, size_t errlen) {
    bl_state *s = bl_state_new(m, max_tokens, flags, err, errlen);
    if (s && bl_state_set_threads(s, cli_threads, err, errlen) < 0) {
        bl_state_free(s);
        return NULL;
    }
    return s;
}

/* ---------------------------------------------------------------- JSON */

/* A token string as JSON (json.h's escaping, shared with tokenize). */
void bli_cli_json_str(const char *s) { bli_json_write_string(stdout, s ? s : "", s ? strlen(s) : 0); }

/* Print n floats as a JSON list, %.9g (round-trips f32), null for inf/NaN. */
void bli_cli_json_floats(const float *x, size_t n) {
    putchar('[');
    char num[BLI_JSON_NUM_CHARS];
    for (size_t i = 0; i < n; i++) printf(i ? ",%s" : "%s", bli_json_num(num, (double)x[i]));
    putchar(']');
}

/* ----------------------------------------------------------- arguments */

int bli_cli_parse_int_list(const char *s, int32_t **out) {
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

double bli_cli_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

double bli_cli_cpu_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}
