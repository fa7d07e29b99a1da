/* cli_attend.c — `bertlens attend` (attention, norms, q/k of one input as
 * JSON, or as .npy files with --npy: cli_npy.c) and the internal
 * `bertlens test-attend` used by the tests. */
#include "cli.h"
#include "text/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------- attend */

/* bertlens attend [--layer N] [--qk] [--norms] [--scores] BUNDLE TEXT [TEXT_B]
 *
 * Prints {"tokens": [...], "truncated": bool, "layers": [l...],
 * "attentions": [layer][head][T][T]}. Every per-layer array lists the layers
 * in "layers": all of them, or with --layer N a one-element list. --qk adds
 * "queries"/"keys" [layer][head][T][d_head] (after bias, before 1/sqrt(d)),
 * --norms adds "norms" [layer][head][T][T] (||a_ij f_h(x_j)||), --scores
 * adds "scores" [layer][head][T][T] (the logits each head's softmax takes,
 * null at keys the model masks out) and "score_terms" [{"name", "abbr",
 * "about", "values": [layer][head][T][T]}], the terms that add up to them
 * (bertlens.h bl_scores: one per piece of the family's attention).
 *
 * bertlens attend [options] --ids 0,31,7,2 [--types 0,0,0,0] BUNDLE
 * runs these token ids (and token types, default 0) instead of a text: the
 * model's ids as given, no tokenizer (e.g. ids from Hugging Face's own
 * tokenizer, or a family whose tokenizer the bundle does not carry).
 *
 * bertlens test-attend [attend's options] [--hidden] [--rows 0,5,...] BUNDLE [TEXT [TEXT_B]]
 * Internal, for tests/encoder.test.mjs and tests/shapes.test.mjs (not in the
 * usage text): --hidden adds "hidden"
 * [n_layers+1][T][hidden] and "pooled" [hidden] (mean of the final states);
 * --rows prints only these query rows of every [..][T][..] array and adds
 * "attn_argmax" and "attn_colmean" [layer][head][T] over all rows, so a
 * 512-token reference can be compared without printing every row. */

typedef struct {
    int layer;                /* -1: every layer                           */
    int qk, norms, scores;    /* add queries/keys, value-weighted norms,
                                 scores and their terms                    */
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

/* One --ids/--types/--rows list into *v, *n; prints why not and returns -1. */
static int int_list_opt(const char *name, const char *arg, int32_t **v, int *n) {
    free(*v);
    *v = NULL;
    if ((*n = bli_cli_parse_int_list(arg, v)) <= 0) {
        bli_term_line(stderr, "bertlens: %s needs a comma-separated list of integers", name);
        return -1;
    }
    return 0;
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
        int ho = bli_cli_heads_opt(argc, argv, &i, &o->ablate, &o->keep);
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
        } else if (!strcmp(a, "--scores")) {
            o->scores = 1;
        } else if (internal && !strcmp(a, "--hidden")) {
            o->hidden = 1;
        } else if (!strcmp(a, "--ids") && has_val) {
            if (int_list_opt(a, argv[++i], &o->ids, &o->n_ids)) return -1;
        } else if (!strcmp(a, "--types") && has_val) {
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
        fprintf(stderr, "usage: bertlens attend [--layer N] [--qk] [--norms] [--scores] [--ablate L:H,...|--keep L:H,...] "
                        "[--npy DIR] BUNDLE TEXT [TEXT_B]\n"
                        "       bertlens attend [options] --ids ID,ID,... [--types T,T,...] BUNDLE\n");
        return -1;
    }
    if (o->scores && o->npy_dir) {
        fprintf(stderr, "bertlens: --scores prints JSON; --npy writes attention, norms and q/k only\n");
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

/* Print a [rows][cols] block where rows is either all `n_rows` rows or the
 * listed ones (sel != NULL): a [n_sel][cols] JSON list. */
static void json_block(const float *x, int n_rows, int cols, const int32_t *sel, int n_sel) {
    putchar('[');
    int nr = sel ? n_sel : n_rows;
    for (int r = 0; r < nr; r++) {
        if (r) putchar(',');
        int row = sel ? sel[r] : r;
        bli_cli_json_floats(x + (size_t)row * cols, (size_t)cols);
    }
    putchar(']');
}

/* The same for n_outer such blocks: a [n_outer][n_sel][cols] JSON list. */
static void json_rows(const float *x, int n_outer, int n_rows, int cols, const int32_t *sel, int n_sel) {
    putchar('[');
    for (int o = 0; o < n_outer; o++) {
        if (o) putchar(',');
        json_block(x + (size_t)o * n_rows * cols, n_rows, cols, sel, n_sel);
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

/* ,"scores":[layer][head][T or rows][T],"score_terms":[{"name","abbr","about",
 * "values":[layer][head][T or rows][T]}]: computed again for each array
 * printed (one head's at a time), not held for every head at once. */
static int emit_scores(bl_state *s, const bl_model *m, int l0, int l1, int NH, int T, const attend_opts *o) {
    char err[512] = "";
    bl_score_info info;
    if (bl_score_terms(m, l0, &info, err, sizeof err)) {
        bli_term_line(stderr, "bertlens: %s", err);
        return -1;
    }
    const int n = info.n_terms;
    float *buf = malloc((size_t)(n + 1) * T * T * sizeof *buf); /* scores [T][T], then terms [n][T][T] */
    if (!buf) {
        fprintf(stderr, "bertlens: out of memory for the scores\n");
        return -1;
    }
    int rc = 0;
    printf(",\"scores\":[");
    for (int pass = 0; pass <= n && !rc; pass++) {
        if (pass) {
            printf(pass > 1 ? "]},{\"name\":" : "],\"score_terms\":[{\"name\":");
            bli_cli_json_str(info.name[pass - 1]);
            printf(",\"abbr\":");
            bli_cli_json_str(info.abbr[pass - 1]);
            printf(",\"about\":");
            bli_cli_json_str(info.about[pass - 1]);
            printf(",\"values\":[");
        }
        for (int l = l0; l < l1 && !rc; l++) {
            printf(l > l0 ? ",[" : "[");
            for (int h = 0; h < NH; h++) {
                if (bl_scores(s, l, h, buf, buf + (size_t)T * T, err, sizeof err)) {
                    bli_term_line(stderr, "bertlens: %s", err);
                    rc = -1;
                    break;
                }
                if (h) putchar(',');
                json_block(buf + (size_t)pass * T * T, T, T, o->rows, o->n_rows);
            }
            putchar(']');
        }
    }
    printf("]}]");
    free(buf);
    return rc;
}

/* ,"hidden":[n_layers+1][T or rows][hidden],"pooled":[hidden] */
static void emit_hidden(const bl_state *s, int L, int T, int H, const attend_opts *o) {
    char num[BLI_JSON_NUM_CHARS]; /* a float as JSON (json.h) */
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
        printf(i ? ",%s" : "%s", bli_json_num(num, sum / T));
    }
    putchar(']');
}

/* ,"attn_argmax":[layer][head][T],"attn_colmean":[layer][head][T]: the
 * argmax key of every query row, the mean attention every key receives. */
static void emit_attn_summaries(const bl_state *s, int l0, int l1, int NH, int T) {
    char num[BLI_JSON_NUM_CHARS]; /* a float as JSON (json.h) */
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
                        printf("%s", bli_json_num(num, sum / T));
                    }
                }
                putchar(']');
            }
            putchar(']');
        }
    }
    putchar(']');
}

static int run_attend(const attend_opts *o) {
    int rc = 1;
    bli_cli_bundle cb;
    if (bli_cli_open_bundle(o->bundle, &cb)) return 1;
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
    /* --scores: made from the kept q/k of the layers printed */
    unsigned flags = BL_KEEP_ATTN | (o->norms ? BL_KEEP_NORMS : 0) |
                     (o->qk || o->scores ? (o->layer >= 0 ? BL_KEEP_QK : BL_KEEP_QK_ALL) : 0) |
                     (o->hidden ? BL_KEEP_HIDDEN : 0);
    if (!(s = bli_cli_new_state(m, T, flags, err, sizeof err))) {
        bli_term_line(stderr, "bertlens: %s", err);
        goto close;
    }
    if (bli_cli_apply_heads(s, o->ablate, o->keep)) goto close;
    if (!o->hidden) bl_state_set_final(s, 0); /* nothing printed needs them */
    int l0 = o->layer >= 0 ? o->layer : 0, l1 = o->layer >= 0 ? o->layer + 1 : L;
    if (bl_forward(s, ids, types, T, l0, err, sizeof err)) {
        bli_term_line(stderr, "bertlens: %s", err);
        goto close;
    }

    if (o->npy_dir) {
        bli_cli_npy_index ix = {tk, ids, types, T, toks.truncated, l0, l1, o->norms, o->qk};
        rc = bli_cli_write_npy(o->npy_dir, s, &ix, NH, d) ? 1 : 0;
        goto close;
    }
    printf("{\"tokens\":[");
    for (int t = 0; t < T; t++) {
        if (t) putchar(',');
        bli_cli_json_str(bl_token_str(tk, ids[t]));
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
    if (o->scores && emit_scores(s, m, l0, l1, NH, T, o)) {
        putchar('\n'); /* (the JSON is cut short: the status says so) */
        goto close;
    }
    if (o->hidden) emit_hidden(s, L, T, H, o);
    if (o->rows) emit_attn_summaries(s, l0, l1, NH, T);
    printf("}\n");
    rc = fflush(stdout) ? 1 : 0;

close:
    bl_state_free(s);
    if (have_toks) bl_tokens_free(&toks);
    bli_cli_close_bundle(&cb);
    return rc;
}

int bli_cmd_attend(int argc, char **argv, int internal) {
    attend_opts o;
    int rc = parse_attend(argc, argv, internal, &o) ? 1 : run_attend(&o);
    attend_opts_free(&o);
    return rc;
}
