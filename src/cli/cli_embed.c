/* cli_embed.c — `bertlens embed` (sentence embeddings and their cosines,
 * bl_embed) and `bertlens analyze` (bl_analyze as JSON, json.h). */
#include "cli.h"
#include "text/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* -------------------------------------------------------------- embed */

/* bertlens embed [--ablate L:H,...|--keep L:H,...] BUNDLE TEXT [TEXT...]
 *
 * The sentence-transformers embedding of each text (bl_embed: the mean of
 * the final hidden states, L2-normalized), texts truncated at
 * bl_embed_max_tokens (the bundle's sentence.max_seq_length; when absent,
 * the model's max positions, said on stderr). One JSON line per
 * text {"tokens": [...], "embedding": [hidden]}, then with several texts
 * {"cosine": [[...]]} (the dot products of the unit embeddings). */
int bli_cmd_embed(int argc, char **argv) {
    char num[BLI_JSON_NUM_CHARS]; /* a float as JSON (json.h) */
    const char *ablate = NULL, *keep = NULL;
    int first = -1;
    for (int i = 0; i < argc && first < 0; i++) {
        int ho = bli_cli_heads_opt(argc, argv, &i, &ablate, &keep);
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
    bli_cli_bundle cb;
    if (bli_cli_open_bundle(path, &cb)) return 1;
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
                        "%d tokens\n", max_len);
    for (int k = 0; k < n; k++) {
        bl_tokens toks;
        if (bl_tokenize(tk, texts[k], strlen(texts[k]), NULL, 0, max_len, &toks, err, sizeof err)) {
            bli_term_line(stderr, "bertlens: text %d: cannot tokenize: %s", k + 1, err);
            goto close;
        }
        const int T = toks.n;
        int bad = 0;
        if (!s) {
            bad = !(s = bli_cli_new_state(m, max_len, 0, err, sizeof err)) || bli_cli_apply_heads(s, ablate, keep);
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
            bli_cli_json_str(bl_token_str(tk, toks.ids[t]));
        }
        printf("],\"embedding\":");
        bli_cli_json_floats(e, (size_t)H);
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
                printf(b ? ",%s" : "%s", bli_json_num(num, dot));
            }
            putchar(']');
        }
        printf("]}\n");
    }
    rc = fflush(stdout) ? 1 : 0;
close:
    free(emb);
    bl_state_free(s);
    bli_cli_close_bundle(&cb);
    return rc;
}

/* ------------------------------------------------------------ analyze */

/* bertlens analyze BUNDLE TEXT [TEXT_B]
 * Prints bl_analyze's figures as JSON (format in json.h). */
int bli_cmd_analyze(int argc, char **argv) {
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: bertlens analyze BUNDLE TEXT [TEXT_B]\n");
        return 1;
    }
    bli_cli_bundle cb;
    if (bli_cli_open_bundle(argv[0], &cb)) return 1;
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
    if (!(s = bli_cli_new_state(cb.model, toks.n, BL_KEEP_ATTN | BL_KEEP_NORMS, err, sizeof err)) ||
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
    bli_cli_close_bundle(&cb);
    return rc;
}
