/* cli_explain.c — `bertlens explain`: which tokens drove the head's
 * prediction (bl_explain_mlm, explain.c), as one JSON object
 * (explain_json.c).
 *
 *   bertlens explain [--method grad-input|ig] [--steps M] [--target LABEL|N]
 *                    [--heads] [--position P] BUNDLE TEXT [TEXT_B]
 *
 * Masked-LM bundles: the target defaults to the top word at the first mask
 * (--position P: at token P); --target takes a word id or the word itself.
 * --heads adds [L][H] head effects (progress on stderr). --ablate / --keep
 * (as attend takes them) explain the model with those heads switched off.
 * --time (tools/bench_explain.mjs): first times --time-runs forward passes
 * of the text that keep every layer's attention (as the page runs them;
 * median), then the explanation on the same state (--time-explain-runs
 * N > 1: once cold, then N pairs of a forward pass and an explanation:
 * medians, and the median of the pairs' ratios in x_forward), and prints on
 * stderr one JSON line {"forward_ms", "explain_ms", "forward_cpu_ms",
 * "explain_cpu_ms", "x_forward", "x_forward_cpu", "explain_cold_ms",
 * "explain_cold_cpu_ms", "explain_runs", "rss_forward_mb",
 * "rss_peak_mb"}: wall and CPU (the process's, every
 * thread) times, and the process's peak resident memory after the forward
 * passes and at the end (getrusage).
 */
#include "cli.h"
#include "analysis/explain.h"
#include "text/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static double peak_rss_mb(void) {
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) ? -1.0 : ru.ru_maxrss / 1024.0; /* KiB on Linux */
}

static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *x, int n) {
    qsort(x, (size_t)n, sizeof *x, cmp_double);
    return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

/* One forward pass of toks on s, its wall and CPU ms into ms[2]; 0 / -1 (err). */
static int time_one_forward(bl_state *s, const bl_tokens *toks, double ms[2], char *err, size_t errlen) {
    const double t0 = bli_cli_now_ms(), c0 = bli_cli_cpu_ms();
    if (bl_forward(s, toks->ids, toks->type_ids, toks->n, -1, err, errlen)) return -1;
    ms[0] = bli_cli_now_ms() - t0, ms[1] = bli_cli_cpu_ms() - c0;
    return 0;
}

/* The medians of runs forward passes of toks on s (after a warm-up): wall
 * and CPU ms into med[2]; 0, or -1 (err). */
static int time_forward(bl_state *s, const bl_tokens *toks, int runs, double med[2], char *err, size_t errlen) {
    double *ms = malloc(sizeof(double) * 2 * (size_t)runs), one[2];
    int rc = -1;
    if (!ms || bl_forward(s, toks->ids, toks->type_ids, toks->n, -1, err, errlen)) goto out; /* warm-up */
    for (int r = 0; r < runs; r++) {
        if (time_one_forward(s, toks, one, err, errlen)) goto out;
        ms[r] = one[0], ms[runs + r] = one[1];
    }
    med[0] = median(ms, runs), med[1] = median(ms + runs, runs);
    rc = 0;
out:
    free(ms);
    return rc;
}

static int usage(void) {
    fprintf(stderr, "usage: bertlens explain [--method grad-input|ig] [--steps M] [--target LABEL|N] [--heads] "
                    "[--position P] [--ablate L:H,..|--keep L:H,..] [--time [--time-runs N] [--time-explain-runs N]] BUNDLE TEXT [TEXT_B]\n");
    return 1;
}

static int number(const char *s, long lo, long hi, long *out) {
    char *end = NULL;
    long v = strtol(s, &end, 10);
    if (!end || *end || end == s || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

static void progress(void *arg, int32_t done, int32_t total) {
    (void)arg;
    fprintf(stderr, "\rbertlens: head effects %d/%d", done, total);
    if (done == total) fputc('\n', stderr);
}

int bli_cmd_explain(int argc, char **argv) {
    bl_explain_opts o = {.method = BL_EXPLAIN_GRAD_INPUT, .steps = 32, .position = -1, .target = -1};
    const char *target = NULL, *ablate = NULL, *keep = NULL;
    int i = 0, timed = 0, time_runs = 3, explain_runs = 1;
    long v;
    for (; i < argc && argv[i][0] == '-' && argv[i][1] == '-'; i++) {
        if (!strcmp(argv[i], "--heads")) {
            o.heads = 1;
            continue;
        }
        if (!strcmp(argv[i], "--time")) {
            timed = 1;
            continue;
        }
        const int hr = bli_cli_heads_opt(argc, argv, &i, &ablate, &keep);
        if (hr < 0) return 1;
        if (hr > 0) continue;
        if (i + 1 >= argc) return usage();
        const char *a = argv[i], *val = argv[++i];
        if (!strcmp(a, "--method")) {
            if (!strcmp(val, "ig")) o.method = BL_EXPLAIN_IG;
            else if (!strcmp(val, "grad-input")) o.method = BL_EXPLAIN_GRAD_INPUT;
            else {
                bli_term_line(stderr, "bertlens: explain: --method is grad-input or ig, not %s", val);
                return 1;
            }
        } else if (!strcmp(a, "--steps")) {
            if (number(val, 1, 4096, &v)) {
                fprintf(stderr, "bertlens: explain: --steps takes a number of steps, 1..4096\n");
                return 1;
            }
            o.steps = (int32_t)v;
        } else if (!strcmp(a, "--position")) {
            if (number(val, 0, 1 << 20, &v)) {
                fprintf(stderr, "bertlens: explain: --position takes a token index\n");
                return 1;
            }
            o.position = (int32_t)v;
        } else if (!strcmp(a, "--time-runs")) {
            if (number(val, 1, 1000, &v)) {
                fprintf(stderr, "bertlens: explain: --time-runs takes a number of runs, 1..1000\n");
                return 1;
            }
            time_runs = (int)v;
        } else if (!strcmp(a, "--time-explain-runs")) {
            if (number(val, 1, 1000, &v)) {
                fprintf(stderr, "bertlens: explain: --time-explain-runs takes a number of runs, 1..1000\n");
                return 1;
            }
            explain_runs = (int)v;
        } else if (!strcmp(a, "--target")) {
            target = val;
        } else {
            bli_term_line(stderr, "bertlens: explain: unknown option %s", a);
            return 1;
        }
    }
    if (argc - i < 2 || argc - i > 3) return usage();
    const char *path = argv[i], *text = argv[i + 1], *text_b = argc - i == 3 ? argv[i + 2] : NULL;
    bli_cli_bundle cb;
    if (bli_cli_open_bundle(path, &cb)) return 1;
    const bl_model *m = cb.model;
    const bl_tokenizer *tk = bl_model_tokenizer(m);
    const bl_config *c = bl_model_config(m);
    char err[512] = "";
    int rc = 1;
    bl_tokens toks = {0};
    bl_state *s = NULL;
    bl_explain e = {0};
    bli_jbuf jb = {0};
    bl_task_head *th = NULL;
    if (bl_model_task_kind(m) != BL_TASK_NONE) { /* the bundle's task head is the target */
        if (!(th = bl_task_head_new(m, err, sizeof err))) {
            bli_term_line(stderr, "bertlens: explain: %s", err);
            goto out;
        }
        if (target) { /* a class index, or its label */
            const int32_t C = bl_task_head_classes(th);
            if (!number(target, 0, C - 1, &v)) o.target = (int32_t)v;
            for (int32_t k = 0; k < C && o.target < 0; k++) {
                const char *l = bl_task_head_label(th, k);
                if (l && !strcmp(l, target)) o.target = k;
            }
            if (o.target < 0) {
                bli_term_line(stderr, "bertlens: explain: --target %s is neither a class index nor a label of the head",
                              target);
                goto out;
            }
            target = NULL;
        }
    }
    if (target) { /* a word id, or the word as the vocabulary spells it */
        if (!number(target, 0, c->vocab_size - 1, &v)) o.target = (int32_t)v;
        else {
            for (int32_t id = 0; id < bl_tokenizer_vocab_size(tk) && o.target < 0; id++) {
                const char *w = bl_token_str(tk, id);
                if (w && !strcmp(w, target)) o.target = id;
            }
            if (o.target < 0) {
                bli_term_line(stderr, "bertlens: explain: --target %s is neither an id nor a word of the vocabulary",
                              target);
                goto out;
            }
        }
    }
    if (bl_tokenize(tk, text, strlen(text), text_b, text_b ? strlen(text_b) : 0, c->max_positions, &toks, err,
                    sizeof err)) {
        bli_term_line(stderr, "bertlens: cannot tokenize: %s", err);
        goto out;
    }
    if (toks.truncated) fprintf(stderr, "bertlens: note: the input was truncated to %d tokens\n", toks.n);
    o.progress = o.heads && !timed ? progress : NULL;
    double fwd[2] = {0, 0}, rss_fwd = 0, t0 = 0, c0 = 0;
    /* --time: one state runs the forward passes (every layer's attention
     * kept, as the page runs them) and the explanations */
    if (!(s = bli_cli_new_state(m, toks.n, timed ? BL_KEEP_ATTN | BL_KEEP_HIDDEN : BL_KEEP_HIDDEN, err, sizeof err))) {
        bli_term_line(stderr, "bertlens: %s", err);
        goto out;
    }
    if (timed) {
        if (time_forward(s, &toks, time_runs, fwd, err, sizeof err)) {
            bli_term_line(stderr, "bertlens: %s", err);
            goto out;
        }
        rss_fwd = peak_rss_mb();
    }
    if (bli_cli_apply_heads(s, ablate, keep)) goto out;
    /* --time with --time-explain-runs N > 1: the first explanation (cold: its
     * buffers new) is timed on its own; then N times a forward pass and an
     * explanation, and the median of the N ratios (a slow spell of a shared
     * machine slows both of a pair); the last explanation is printed */
    const int runs = timed && explain_runs > 1 ? explain_runs + 1 : 1;
    double *ems = calloc(4 * (size_t)runs, sizeof(double)); /* [2][runs] explain ms, [2][runs] ratios */
    if (!ems) {
        fprintf(stderr, "bertlens: out of memory\n");
        goto out;
    }
    for (int r = 0; r < runs; r++) {
        double f1[2] = {0, 0};
        if (r) bl_explain_free(&e);
        if (r && time_one_forward(s, &toks, f1, err, sizeof err)) {
            bli_term_line(stderr, "bertlens: %s", err);
            free(ems);
            goto out;
        }
        t0 = bli_cli_now_ms(), c0 = bli_cli_cpu_ms();
        if (th ? bli_explain_task(s, th, &toks, &o, &e, err, sizeof err)
               : bl_explain_mlm(s, toks.ids, toks.type_ids, toks.n, &o, &e, err, sizeof err)) {
            bli_term_line(stderr, "bertlens: %s", err);
            free(ems);
            goto out;
        }
        ems[r] = bli_cli_now_ms() - t0, ems[runs + r] = bli_cli_cpu_ms() - c0;
        if (r) ems[2 * runs + r] = ems[r] / f1[0], ems[3 * runs + r] = ems[runs + r] / f1[1];
    }
    if (timed) {
        const int w = runs > 1; /* the warm runs: 1 .. runs - 1 */
        const double cold[2] = {ems[0], ems[runs]};
        const double ex_ms = w ? median(ems + 1, runs - 1) : cold[0], ex_cpu = w ? median(ems + runs + 1, runs - 1) : cold[1];
        const double xw = w ? median(ems + 2 * runs + 1, runs - 1) : ex_ms / fwd[0];
        const double xc = w ? median(ems + 3 * runs + 1, runs - 1) : ex_cpu / fwd[1];
        fprintf(stderr, "{\"forward_ms\":%.1f,\"explain_ms\":%.1f,\"forward_cpu_ms\":%.1f,\"explain_cpu_ms\":%.1f,"
                        "\"x_forward\":%.3f,\"x_forward_cpu\":%.3f,"
                        "\"explain_cold_ms\":%.1f,\"explain_cold_cpu_ms\":%.1f,\"explain_runs\":%d,"
                        "\"rss_forward_mb\":%.1f,\"rss_peak_mb\":%.1f}\n",
                fwd[0], ex_ms, fwd[1], ex_cpu, xw, xc, cold[0], cold[1], w ? runs - 1 : 1, rss_fwd, peak_rss_mb());
    }
    free(ems);
    bli_explain_json(&jb, m, toks.ids, &e, &o, !th ? NULL : bl_task_head_kind(th) == BL_TASK_QA ? "answer span" : bl_task_head_label(th, e.target));
    if (jb.oom) {
        fprintf(stderr, "bertlens: out of memory\n");
        goto out;
    }
    fputs(jb.data, stdout);
    putchar('\n');
    rc = fflush(stdout) ? 1 : 0;
out:
    bli_jbuf_free(&jb);
    bl_explain_free(&e);
    bl_state_free(s);
    bl_task_head_free(th);
    bl_tokens_free(&toks);
    bli_cli_close_bundle(&cb);
    return rc;
}
