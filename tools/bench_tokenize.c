/* bench_tokenize.c — tokenizing alone, timed in CPU time, through the public
 * API (bertlens.h) only, so the same file links against any tree's
 * build/libbertlens.a (tools/bench_tokenizer.mjs builds it against this
 * tree and against the old tokenizer's commit and compares the two).
 *
 *   bench_tokenize BUNDLE LINES.txt MB            time: prints "cpu_s tokens bytes"
 *   bench_tokenize BUNDLE LINES.txt 0 --dump      ids and offsets per line (to diff two builds)
 *
 * LINES.txt holds one text per line (UTF-8, no NUL). Time mode tokenizes
 * the lines in turn, cycling, until MB megabytes (10^6 bytes) went through
 * bl_tokenize, and prints the process CPU time spent in those calls
 * (bl_tokens_free included; reading and model loading excluded).
 */
#include "bertlens.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static char *read_all(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf) buf[n] = 0;
    *size = buf ? (size_t)n : 0;
    return buf;
}

static double cpu_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: bench_tokenize BUNDLE LINES.txt MB [--dump]\n");
        return 2;
    }
    int dump = argc > 4 && !strcmp(argv[4], "--dump");
    double mb = atof(argv[3]);
    size_t bsize = 0, tsize = 0;
    char *bundle = read_all(argv[1], &bsize);
    char *text = read_all(argv[2], &tsize);
    if (!bundle || !text) {
        fprintf(stderr, "bench_tokenize: cannot read %s\n", bundle ? argv[2] : argv[1]);
        return 1;
    }
    char err[256] = "";
    bl_model *m = bl_model_load(bundle, bsize, err, sizeof err);
    if (!m) {
        fprintf(stderr, "bench_tokenize: %s\n", err);
        return 1;
    }
    const bl_tokenizer *tok = bl_model_tokenizer(m);

    /* the lines: [n_lines] start and length in text */
    size_t n_lines = 0, cap = 1024;
    size_t *start = malloc(cap * sizeof *start), *len = malloc(cap * sizeof *len);
    for (size_t i = 0; i < tsize;) {
        const char *nl = memchr(text + i, '\n', tsize - i);
        size_t e = nl ? (size_t)(nl - text) : tsize;
        if (e > i) {
            if (n_lines == cap) {
                cap *= 2;
                start = realloc(start, cap * sizeof *start);
                len = realloc(len, cap * sizeof *len);
            }
            start[n_lines] = i;
            len[n_lines++] = e - i;
        }
        i = e + 1;
    }
    if (!n_lines) {
        fprintf(stderr, "bench_tokenize: no lines in %s\n", argv[2]);
        return 1;
    }

    if (dump) { /* one line per text: ids, then start:end offsets */
        for (size_t l = 0; l < n_lines; l++) {
            bl_tokens tk;
            if (bl_tokenize(tok, text + start[l], len[l], NULL, 0, 0, &tk, err, sizeof err)) {
                printf("error %s\n", err);
                continue;
            }
            for (int32_t k = 0; k < tk.n; k++) printf("%d%c", tk.ids[k], k + 1 < tk.n ? ' ' : '|');
            for (int32_t k = 0; k < tk.n; k++)
                printf("%d:%d%c", tk.offsets[2 * k], tk.offsets[2 * k + 1], k + 1 < tk.n ? ' ' : '\n');
            bl_tokens_free(&tk);
        }
        return 0;
    }

    double bytes = 0, goal = mb * 1e6;
    long long tokens = 0;
    double t0 = cpu_now();
    for (size_t l = 0; bytes < goal; l = (l + 1) % n_lines) {
        bl_tokens tk;
        if (bl_tokenize(tok, text + start[l], len[l], NULL, 0, 0, &tk, err, sizeof err)) {
            fprintf(stderr, "bench_tokenize: line %zu: %s\n", l + 1, err);
            return 1;
        }
        tokens += tk.n;
        bytes += (double)len[l];
        bl_tokens_free(&tk);
    }
    double cpu = cpu_now() - t0;
    printf("%.4f %lld %.0f\n", cpu, tokens, bytes);
    bl_model_free(m);
    free(bundle);
    free(text);
    free(start);
    free(len);
    return 0;
}
