/* cli_npy.c — `bertlens attend --npy DIR`: the arrays as NumPy .npy files
 * beside a tokens.json index, each written atomically. */
#include "cli.h"
#include "text/json.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

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

static int fill_tokens_json(FILE *f, const void *ctx) {
    const bli_cli_npy_index *x = ctx;
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

int bli_cli_write_npy(const char *dir, const bl_state *s, const bli_cli_npy_index *ix, int NH, int d) {
    if (mkdir(dir, 0777) && errno != EEXIST) {
        bli_term_line(stderr, "bertlens: cannot create %s: %s", dir, strerror(errno));
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
            if (snprintf(path, sizeof path, "%s/%s_L%d.npy", dir, arrays[k].kind, l) >= (int)sizeof path) {
                bli_term_line(stderr, "bertlens: %s: path too long", dir);
                return -1;
            }
            if (write_file_atomic(path, fill_npy, &a)) return -1;
        }
    }
    if (snprintf(path, sizeof path, "%s/tokens.json", dir) >= (int)sizeof path ||
        write_file_atomic(path, fill_tokens_json, ix))
        return -1;
    fill_tokens_json(stdout, ix);
    return fflush(stdout) ? -1 : 0;
}

