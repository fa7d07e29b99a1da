/* cli_bench.c — `bertlens bench`: forward-pass timings. */
#include "cli.h"
#include "text/json.h"
#include "kernels/kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
                 : !(b->s = bli_cli_new_state(b->model, T, b->flags, err, sizeof err))) {
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
    double t0 = bli_cli_now_ms(), c0 = bli_cli_cpu_ms();
    if (bl_forward(b->s, b->ids, NULL, T, 0, err, sizeof err)) {
        bli_term_line(stderr, "bertlens: %s", err);
        return 1;
    }
    *ms = bli_cli_now_ms() - t0;
    if (cpu) *cpu = bli_cli_cpu_ms() - c0;
    return 0;
}

int bli_cmd_bench(int argc, char **argv) {
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
            if ((nT = bli_cli_parse_int_list(v, &Ts)) <= 0) {
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
    bli_cli_bundle cb;
    if (bli_cli_open_bundle(argv[i], &cb)) {
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
    bli_cli_close_bundle(&cb);
    return rc;
}
