/* cli_info.c — `bertlens info` (a bundle's metadata and tensors) and
 * `bertlens tokenize` (one text, or JSON lines). */
#include "cli.h"
#include "format/bundle.h"
#include "text/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --------------------------------------------------------------- info */

/* The tokenizer's kind, where it comes from, its limit and special tokens. */
static void tokenizer_lines(const bl_model *m) {
    const bl_tokenizer *t = bl_model_tokenizer(m);
    int32_t max = bl_tokenizer_max_tokens(t);
    char lim[48] = "";
    if (max > 0) snprintf(lim, sizeof lim, ", truncates at %d tokens", (int)max);
    int hf = 0;
    for (int i = 0; i < bl_model_n_meta(m); i++) hf |= !strcmp(bl_model_meta_key(m, i), "tokenizer.json");
    bli_term_line(stdout, "tokenizer    %s (%s)%s", bl_tokenizer_kind(t),
                  hf ? "the checkpoint's tokenizer.json" : "the bundle's vocabulary", lim);
    bl_special_ids sp;
    bl_tokenizer_special(t, &sp);
    const int32_t ids[5] = {sp.cls, sp.sep, sp.pad, sp.mask, sp.unk};
    static const char *const names[5] = {"cls", "sep", "pad", "mask", "unk"};
    char line[512] = "";
    size_t k = 0;
    for (int i = 0; i < 5 && k < sizeof line; i++) {
        const char *s = ids[i] >= 0 ? bl_token_str(t, ids[i]) : NULL;
        if (s) k += (size_t)snprintf(line + k, sizeof line - k, "%s%s %.40s (%d)", k ? ", " : "", names[i], s, (int)ids[i]);
        else k += (size_t)snprintf(line + k, sizeof line - k, "%s%s none", k ? ", " : "", names[i]);
    }
    bli_term_line(stdout, "specials     %s", line);
}

/* The encoder family (bundle.h "Families") and what sets it apart. */
static void family_line(const bl_model *m) {
    const bli_family *f = bli_model_family(m);
    const bl_config *c = bl_model_config(m);
    char extra[240] = "";
    size_t k = 0;
    if (f->pos_offset)
        k += (size_t)snprintf(extra + k, sizeof extra - k, ", positions from %d (padding_idx %d)", f->pos_offset,
                              f->pad_id);
    if (f->project && k < sizeof extra)
        k += (size_t)snprintf(extra + k, sizeof extra - k, ", embeddings %d wide projected to %d", f->embed, c->hidden);
    if (f->n_stored != c->n_layers && k < sizeof extra)
        k += (size_t)snprintf(extra + k, sizeof extra - k, ", %s shared by %d layers",
                              f->n_stored == 1 ? "one layer group" : "layer groups", c->n_layers);
    const bli_family_traits *tr = bli_traits(f->kind);
    if (tr->about && k < sizeof extra) k += (size_t)snprintf(extra + k, sizeof extra - k, ", %s", tr->about);
    if (tr->positions == BLI_POS_DISENTANGLED && k < sizeof extra)
        k += (size_t)snprintf(extra + k, sizeof extra - k, ", disentangled attention (%s%s%s, %d relative rows%s)",
                              f->rel_terms & 1 ? "c2p" : "", f->rel_terms == 3 ? "+" : "", f->rel_terms & 2 ? "p2c" : "",
                              f->rel_rows, f->rel_buckets ? ", log buckets" : "");
    if (tr->positions == BLI_POS_ROTARY && tr->sliding && k < sizeof extra)
        k += (size_t)snprintf(extra + k, sizeof extra - k,
                              ", rotary positions, global attention every %d layers, else a window of +-%d",
                              f->global_every, f->window);
    else if (tr->positions == BLI_POS_ROTARY && k < sizeof extra)
        k += (size_t)snprintf(extra + k, sizeof extra - k, ", rotary positions (theta %g)", (double)f->rope_global);
    if (tr->layer == BLI_LAYER_PRE_NORM && k < sizeof extra)
        k += (size_t)snprintf(extra + k, sizeof extra - k, ", pre-norm%s", tr->norm == BLI_NORM_RMS ? " (RMSNorm)" : "");
    if (tr->ffn == BLI_FFN_GATED && k < sizeof extra)
        k += (size_t)snprintf(extra + k, sizeof extra - k, ", gated feed-forward");
    bli_term_line(stdout, "family       %s%s", f->name, extra);
}

int bli_cmd_info(int argc, char **argv) {
    if (argc != 1) {
        fprintf(stderr, "usage: bertlens info BUNDLE\n");
        return 1;
    }
    bli_cli_bundle cb;
    if (bli_cli_open_bundle(argv[0], &cb)) return 1;
    const bl_model *m = cb.model;
    const bl_config *c = bl_model_config(m);
    static const char *acts[] = {"gelu (erf)", "gelu (tanh)", "relu", "silu"};
    bli_term_line(stdout, "bundle       %s (%zu bytes inflated, format v%d)", argv[0], cb.size,
                  bl_model_format_version(m));
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
    family_line(m);
    bli_term_line(stdout, "layers       %d", c->n_layers);
    bli_term_line(stdout, "heads        %d (d_head %d)", c->n_heads, c->hidden / c->n_heads);
    bli_term_line(stdout, "hidden       %d", c->hidden);
    bli_term_line(stdout, "intermediate %d", c->intermediate);
    bli_term_line(stdout, "max positions %d", c->max_positions);
    bli_term_line(stdout, "type vocab   %d", c->type_vocab_size);
    bli_term_line(stdout, "vocab        %d", c->vocab_size);
    bli_term_line(stdout, "ln eps       %g", (double)c->ln_eps);
    bli_term_line(stdout, "activation   %s", acts[c->activation]);
    tokenizer_lines(m);
    bl_head_info hi;
    bl_model_head_info(m, &hi);
    if (hi.present)
        bli_term_line(stdout, "mlm head     yes (width %d, %s, decoder %s): bertlens predict", hi.size, acts[hi.activation],
                      hi.tied ? "tied to the word embedding" : "stored");
    else
        bli_term_line(stdout, "mlm head     none (no masked-word predictions)");
    bli_cli_info_task(m); /* task head (cli_predict.c) */
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
    bli_cli_close_bundle(&cb);
    return 0;
}

/* ----------------------------------------------------------- tokenize */

/* Tokenize one text (pair) given on the command line, or every line of stdin
 * with --jsonl (a JSON string or {"text", "text_pair", "max_length"} per
 * line; one JSON object out per line, {"error": ...} for a bad line).
 * Sequences are truncated to the model's max_positions (or max_length). */
int bli_cmd_tokenize(int argc, char **argv) {
    int jsonl = argc >= 1 && !strcmp(argv[0], "--jsonl");
    if (jsonl ? argc != 2 : (argc < 2 || argc > 3)) {
        fprintf(stderr, "usage: bertlens tokenize BUNDLE TEXT [TEXT_B]\n"
                        "       bertlens tokenize --jsonl BUNDLE < lines.jsonl\n");
        return 1;
    }
    bli_cli_bundle cb;
    if (bli_cli_open_bundle(argv[jsonl ? 1 : 0], &cb)) return 1;
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
    bli_cli_close_bundle(&cb);
    return rc;
}
