/* cli_predict.c — `bertlens predict`: what the bundle's head outputs, as
 * one JSON object with "head" naming it (docs/predictions.md).
 *
 *   bertlens predict [--top K] [--positions I,J,...] [--layers] BUNDLE TEXT [TEXT_B]
 *
 * A task head (task_head.c; question answering: TEXT the question, TEXT_B
 * the context): the object of bli_task_json (task_head.h). A masked-LM
 * head (bl_predict, mlm.c):
 * {"head": "masked-lm", "tokens": [...], "ids": [...], "positions": [{"index": i, "token": t,
 *  "token_prob": p, "top": [{"id": .., "token": .., "prob": ..}, ...]}]}
 * and with --layers, a logit lens (bl_predict_layer): "layers": [{"layer":
 * l, "positions": [{"index": i, "top": [...]}]}] for l = 1..n_layers.
 * K (default 5) entries per position, most probable first; probabilities
 * are the softmax over every row of the decoder; an id past the tokenizer's
 * vocabulary (padded embedding rows) has "token": null. Positions default
 * to every token.
 */
#include "cli.h"
#include "text/json.h"
#include "model/task_head.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void token_json(const bl_tokenizer *tk, int32_t id) {
    const char *s = id >= 0 && id < bl_tokenizer_vocab_size(tk) ? bl_token_str(tk, id) : NULL;
    if (s) bli_cli_json_str(s);
    else fputs("null", stdout);
}

/* "top":[{"id","token","prob"}, ...] of one position's k words. */
static void top_json(const bl_tokenizer *tk, const int32_t *ids, const float *probs, long k) {
    char num[BLI_JSON_NUM_CHARS];
    printf("\"top\":[");
    for (long r = 0; r < k; r++) {
        printf("%s{\"id\":%d,\"token\":", r ? "," : "", ids[r]);
        token_json(tk, ids[r]);
        printf(",\"prob\":%s}", bli_json_num(num, (double)probs[r]));
    }
    printf("]");
}

static int usage(void) {
    fprintf(stderr, "usage: bertlens predict [--top K] [--positions I,J,...] [--layers] BUNDLE TEXT [TEXT_B]\n");
    return 1;
}

/* The task head's output (task_head.h) for TEXT [TEXT_B]. */
static int predict_task(const char *path, const bl_model *m, const char *text, const char *text_b) {
    const bl_config *c = bl_model_config(m);
    char err[512] = "";
    int rc = 1;
    bl_tokens toks = {0};
    bl_state *s = NULL;
    bli_jbuf b = {0};
    bl_task_head *h = bl_task_head_new(m, err, sizeof err);
    if (!h) {
        bli_term_line(stderr, "bertlens: %s: %s", path, err);
        return 1;
    }
    if (bl_task_head_kind(h) == BL_TASK_QA && !text_b) {
        fprintf(stderr, "bertlens: predict: a question-answering head takes TEXT (the question) and TEXT_B (the "
                        "context)\n");
        goto out;
    }
    if (bl_tokenize(bl_model_tokenizer(m), text, strlen(text), text_b, text_b ? strlen(text_b) : 0, c->max_positions,
                    &toks, err, sizeof err)) {
        bli_term_line(stderr, "bertlens: cannot tokenize: %s", err);
        goto out;
    }
    if (!(s = bli_cli_new_state(m, toks.n, 0, err, sizeof err)) ||
        bl_forward(s, toks.ids, toks.type_ids, toks.n, 0, err, sizeof err) ||
        bli_task_json(&b, h, bl_model_tokenizer(m), &toks, text_b, bl_hidden(s, c->n_layers), err, sizeof err)) {
        bli_term_line(stderr, "bertlens: %s", err);
        goto out;
    }
    if (toks.truncated) fprintf(stderr, "bertlens: note: the input was truncated to %d tokens\n", toks.n);
    fwrite(b.data, 1, b.len, stdout);
    putchar('\n');
    rc = fflush(stdout) ? 1 : 0;
out:
    bli_jbuf_free(&b);
    bl_state_free(s);
    bl_tokens_free(&toks);
    bl_task_head_free(h);
    return rc;
}

int bli_cmd_predict(int argc, char **argv) {
    char num[BLI_JSON_NUM_CHARS]; /* a float as JSON (json.h) */
    long k = 5;
    const char *pos_arg = NULL;
    int layers = 0, i = 0;
    for (; i < argc && argv[i][0] == '-' && argv[i][1] == '-'; i += 2) {
        if (!strcmp(argv[i], "--layers")) {
            layers = 1;
            i--;
            continue;
        }
        if (i + 1 >= argc) return usage();
        if (!strcmp(argv[i], "--top")) {
            char *end = NULL;
            k = strtol(argv[i + 1], &end, 10);
            if (!end || *end || end == argv[i + 1] || k < 1 || k > 1000000) {
                fprintf(stderr, "bertlens: predict: --top takes a number of predictions, 1 or more\n");
                return 1;
            }
        } else if (!strcmp(argv[i], "--positions")) {
            pos_arg = argv[i + 1];
        } else {
            bli_term_line(stderr, "bertlens: predict: unknown option %s", argv[i]);
            return 1;
        }
    }
    if (argc - i < 2 || argc - i > 3) return usage();
    const char *path = argv[i], *text = argv[i + 1], *text_b = argc - i == 3 ? argv[i + 2] : NULL;
    bli_cli_bundle cb;
    if (bli_cli_open_bundle(path, &cb)) return 1;
    const bl_model *m = cb.model;
    if (bl_model_task_kind(m) || bl_model_meta_str(m, "task.kind")) {
        if (layers) fprintf(stderr, "bertlens: predict: --layers is for masked-LM heads; this bundle has a task head\n");
        const int r = layers ? 1 : predict_task(path, m, text, text_b);
        bli_cli_close_bundle(&cb);
        return r;
    }
    const bl_tokenizer *tk = bl_model_tokenizer(m);
    const bl_config *c = bl_model_config(m);
    char err[512] = "";
    int rc = 1;
    bl_tokens toks = {0};
    bl_state *s = NULL;
    bl_mlm *h = NULL;
    int32_t *pos = NULL, *top_ids = NULL, *rank = NULL;
    float *top_p = NULL, *tok_p = NULL;
    int n_pos = 0;
    if (!(h = bl_mlm_new(m, err, sizeof err))) {
        bli_term_line(stderr, "bertlens: %s: %s", path, err);
        goto out;
    }
    if (k > c->vocab_size) k = c->vocab_size;
    if (bl_tokenize(tk, text, strlen(text), text_b, text_b ? strlen(text_b) : 0, c->max_positions, &toks, err,
                    sizeof err)) {
        bli_term_line(stderr, "bertlens: cannot tokenize: %s", err);
        goto out;
    }
    if (pos_arg) {
        n_pos = bli_cli_parse_int_list(pos_arg, &pos);
        if (n_pos < 1) {
            fprintf(stderr, "bertlens: predict: --positions takes token indices, e.g. 3,5\n");
            goto out;
        }
        for (int q = 0; q < n_pos; q++)
            if (pos[q] < 0 || pos[q] >= toks.n) {
                fprintf(stderr, "bertlens: predict: position %d is out of range 0..%d (%d tokens)\n", pos[q],
                        toks.n - 1, toks.n);
                goto out;
            }
    } else {
        n_pos = toks.n;
        pos = malloc(sizeof *pos * (size_t)n_pos);
        if (pos)
            for (int q = 0; q < n_pos; q++) pos[q] = q;
    }
    top_ids = calloc((size_t)n_pos * (size_t)k, sizeof *top_ids);
    top_p = calloc((size_t)n_pos * (size_t)k, sizeof *top_p);
    tok_p = calloc((size_t)n_pos, sizeof *tok_p);
    rank = calloc((size_t)n_pos, sizeof *rank);
    if (!pos || !top_ids || !top_p || !tok_p || !rank) {
        fprintf(stderr, "bertlens: out of memory\n");
        goto out;
    }
    if (!(s = bli_cli_new_state(m, toks.n, layers ? BL_KEEP_HIDDEN : 0, err, sizeof err)) ||
        bl_forward(s, toks.ids, toks.type_ids, toks.n, 0, err, sizeof err) ||
        bl_predict(h, s, toks.ids, pos, n_pos, (int32_t)k, top_ids, top_p, tok_p, rank, err, sizeof err)) {
        bli_term_line(stderr, "bertlens: %s", err);
        goto out;
    }
    if (toks.truncated) fprintf(stderr, "bertlens: note: the input was truncated to %d tokens\n", toks.n);
    printf("{\"head\":\"masked-lm\",\"tokens\":[");
    for (int t = 0; t < toks.n; t++) {
        if (t) putchar(',');
        token_json(tk, toks.ids[t]);
    }
    printf("],\"ids\":[");
    for (int t = 0; t < toks.n; t++) printf(t ? ",%d" : "%d", toks.ids[t]);
    printf("],\"positions\":[");
    for (int q = 0; q < n_pos; q++) {
        printf("%s{\"index\":%d,\"token\":", q ? "," : "", pos[q]);
        token_json(tk, toks.ids[pos[q]]);
        printf(",\"token_prob\":%s,", bli_json_num(num, (double)tok_p[q]));
        top_json(tk, top_ids + (size_t)q * k, top_p + (size_t)q * k, k);
        printf("}");
    }
    printf("]");
    for (int32_t l = 1; layers && l <= c->n_layers; l++) {
        if (bl_predict_layer(h, s, l, toks.ids, pos, n_pos, (int32_t)k, top_ids, top_p, tok_p, rank, err, sizeof err)) {
            fflush(stdout);
            bli_term_line(stderr, "bertlens: %s", err);
            goto out;
        }
        printf("%s{\"layer\":%d,\"positions\":[", l == 1 ? ",\"layers\":[" : ",", l);
        for (int q = 0; q < n_pos; q++) {
            printf("%s{\"index\":%d,", q ? "," : "", pos[q]);
            top_json(tk, top_ids + (size_t)q * k, top_p + (size_t)q * k, k);
            printf("}");
        }
        printf(l == c->n_layers ? "]}]" : "]}");
    }
    printf("}\n");
    rc = fflush(stdout) ? 1 : 0;
out:
    free(pos), free(top_ids), free(top_p), free(tok_p), free(rank);
    bl_state_free(s);
    bl_mlm_free(h);
    bl_tokens_free(&toks);
    bli_cli_close_bundle(&cb);
    return rc;
}

void bli_cli_info_task(const bl_model *m) {
    if (!bl_model_meta_str(m, "task.kind")) {
        bli_term_line(stdout, "task head    none (a *ForSequenceClassification, *ForTokenClassification or "
                              "*ForQuestionAnswering checkpoint has one)");
        return;
    }
    char err[256] = "";
    bl_task_head *h = bl_task_head_new(m, err, sizeof err);
    if (!h) {
        bli_term_line(stdout, "task head    unusable: %s", err);
        return;
    }
    static const char *const problems[] = {"single-label, softmax", "multi-label, sigmoid", "regression"};
    bli_jbuf b = {0};
    for (int32_t c = 0; c < bl_task_head_classes(h) && bl_task_head_label(h, 0); c++) {
        const char *l = bl_task_head_label(h, c);
        if (c) bli_json_raw(&b, ", ", 2);
        bli_json_raw(&b, l, strlen(l));
    }
    if (bl_task_head_kind(h) == BL_TASK_QA)
        bli_term_line(stdout, "task head    question-answering (start and end of the answer): bertlens predict");
    else
        bli_term_line(stdout, "task head    %s (%s), %d label%s: %s: bertlens predict",
                      bl_task_kind_name(bl_task_head_kind(h)), problems[bl_task_head_problem(h)],
                      bl_task_head_classes(h), bl_task_head_classes(h) == 1 ? "" : "s", b.data ? b.data : "");
    bli_jbuf_free(&b);
    bl_task_head_free(h);
}
