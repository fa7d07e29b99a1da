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
 */
#include "cli.h"
#include "explain.h"
#include "json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int usage(void) {
    fprintf(stderr, "usage: bertlens explain [--method grad-input|ig] [--steps M] [--target LABEL|N] [--heads] "
                    "[--position P] [--ablate L:H,..|--keep L:H,..] BUNDLE TEXT [TEXT_B]\n");
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
    int i = 0;
    long v;
    for (; i < argc && argv[i][0] == '-' && argv[i][1] == '-'; i++) {
        if (!strcmp(argv[i], "--heads")) {
            o.heads = 1;
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
    o.progress = o.heads ? progress : NULL;
    if (!(s = bli_cli_new_state(m, toks.n, BL_KEEP_HIDDEN, err, sizeof err))) {
        bli_term_line(stderr, "bertlens: %s", err);
        goto out;
    }
    if (bli_cli_apply_heads(s, ablate, keep)) goto out;
    if (th ? bli_explain_task(s, th, &toks, &o, &e, err, sizeof err)
           : bl_explain_mlm(s, toks.ids, toks.type_ids, toks.n, &o, &e, err, sizeof err)) {
        bli_term_line(stderr, "bertlens: %s", err);
        goto out;
    }
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
