/* cli_corpus.c — `bertlens corpus [--top N] BUNDLE FILE`: what each head does
 * over many inputs (issue 25; the figures are corpus.h's).
 *
 * FILE (or - for stdin) is UTF-8, one input per line; a TAB splits a line
 * into sentence A and sentence B of a pair (at the first TAB); a trailing CR
 * is dropped. Lines that cannot be an input are skipped and listed with the
 * reason, never fatal: an empty line, a line longer than CORPUS_MAX_LINE
 * bytes, invalid UTF-8 (the tokenizer's message), a sentence with no tokens
 * (whitespace or control characters only). Inputs longer than the model's
 * positions are truncated as `analyze` truncates them (one note on stderr).
 *
 * Output, one JSON object:
 *   {"texts": n, "tokens": total, "skipped": [{"line", "reason"}...],
 *    "skipped_lines": n (every skipped line; the list holds the first
 *                        BL_CORPUS_MAX_SKIPPED, corpus.h),
 *    "heads": [{"layer", "head", "entropy", "cls", "sep", "punct", "prev",
 *               "self", "next", "class_fractions": {"vertical", "diagonal",
 *               "vertical+diagonal", "block", "heterogeneous"},
 *               "top": [{"text", "line", "query", "key", "weight",
 *                        "query_token", "key_token"}...]}...]}
 * "text" is the input's 0-based index among the n counted, "line" its
 * 1-based line in FILE; query and key are token positions ([CLS] = 0).
 *
 * Streaming and threads: lines are read in batches (at most BATCH_PER_THREAD
 * inputs per thread and about BATCH_BYTES of text); the main thread
 * tokenizes a batch (so every input's text index is known), then the
 * --threads workers (default one per core) take its inputs one at a time,
 * each with its own bl_state and its own accumulator of top links, and
 * write every input's head features into its slot; the main thread adds
 * the slots in input order. So the output is the same for any --threads,
 * and memory is the model, a state per thread (grown to the longest input
 * seen), one batch and the top lists: flat in the number of lines, bad
 * ones included (the skipped list stops growing at BL_CORPUS_MAX_SKIPPED
 * records; the count goes on).
 */
#include "bertlens.h"
#include "analysis/corpus.h"
#include "text/json.h"
#include "base/sizes.h"
#include "base/threads.h"

#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CORPUS_MAX_LINE (1u << 20) /* bytes in one line; longer lines are skipped */
#define BATCH_PER_THREAD 16
#define BATCH_BYTES (4u << 20)
#define STATE_STEP 64 /* states grow to the next multiple of this many tokens */

typedef int (*bli_read_bundle_fn)(const char *path, void **out, size_t *out_size, char *err, size_t errlen);
int bli_cmd_corpus(int argc, char **argv, int32_t threads, int low_memory, bli_read_bundle_fn read_bundle);

/* ---------------------------------------------------------- reading */

/* One line of f into *buf (without the newline and a trailing CR), keeping
 * at most CORPUS_MAX_LINE bytes (the rest is read and dropped: *too_long).
 * Returns 1 for a line, 0 at the end of the input, -1 on a read error or
 * out of memory (errno says which). */
static int read_line(FILE *f, char **buf, size_t *cap, size_t *len, int *too_long) {
    size_t n = 0;
    int c, any = 0;
    *too_long = 0;
    while ((c = getc_unlocked(f)) != EOF) {
        any = 1;
        if (c == '\n') break;
        if (n >= CORPUS_MAX_LINE) {
            *too_long = 1;
            continue;
        }
        if (n + 1 >= *cap) {
            size_t nc = *cap ? *cap * 2 : 256;
            char *nb = realloc(*buf, nc);
            if (!nb) return -1;
            *buf = nb, *cap = nc;
        }
        (*buf)[n++] = (char)c;
    }
    if (ferror(f)) return -1;
    if (!any) return 0;
    if (n && (*buf)[n - 1] == '\r' && !*too_long) n--;
    *len = n;
    return 1;
}

/* ------------------------------------------------------------ batch */

typedef struct {
    int64_t line;             /* 1-based                                    */
    int64_t text;             /* 0-based index among the inputs counted     */
    size_t off, len;          /* the line's bytes in the batch's arena      */
    char reason[192];         /* non-empty: skipped, and why                */
    bl_tokens toks;           /* valid when has_toks                        */
    int has_toks;
    bl_head_features *heads;  /* [L][NH], written by a worker               */
} slot;

typedef struct {
    bl_state *s;
    int32_t cap;    /* tokens the state holds                             */
    bli_corpus *top; /* this worker's top links                            */
    char err[512];  /* first failure, if any                              */
    int failed;
} worker;

typedef struct {
    const bl_model *m;
    int32_t max_pos, top_n;
    slot *slots;     /* [count] of this batch                             */
    int count;
    atomic_int next; /* the next slot to run                              */
    worker *w;       /* [n threads]                                       */
} batch;

/* Forward + analysis of one slot on worker w's state. 0 or -1 (w->err). */
static int run_slot(batch *b, worker *w, slot *sl) {
    const int32_t T = sl->toks.n;
    if (T > w->cap) {
        int64_t cap = ((int64_t)T + STATE_STEP - 1) / STATE_STEP * STATE_STEP;
        if (cap > b->max_pos) cap = b->max_pos;
        if (w->s ? bl_state_reserve(w->s, (int32_t)cap, BL_KEEP_ATTN, w->err, sizeof w->err)
                 : !(w->s = bl_state_new(b->m, (int32_t)cap, BL_KEEP_ATTN, w->err, sizeof w->err)))
            return -1;
        bl_state_set_final(w->s, 0); /* the analyses need no final hidden states */
        w->cap = (int32_t)cap;
    }
    bl_analysis a;
    if (bl_forward(w->s, sl->toks.ids, sl->toks.type_ids, T, 0, w->err, sizeof w->err) ||
        bl_analyze(w->s, sl->toks.ids, sl->toks.type_ids, BL_ANALYZE_HEADS, &a, w->err, sizeof w->err))
        return -1;
    memcpy(sl->heads, a.heads, (size_t)a.n_layers * (size_t)a.n_heads * sizeof *a.heads);
    bl_analysis_free(&a);
    return bli_corpus_add_links(w->top, w->s, sl->toks.ids, sl->text, sl->line, w->err, sizeof w->err);
}

static void task_batch(void *arg, int wi, int n) {
    batch *b = arg;
    worker *w = &b->w[wi];
    for (int k; !w->failed && (k = atomic_fetch_add_explicit(&b->next, 1, memory_order_relaxed)) < b->count;)
        if (b->slots[k].has_toks && run_slot(b, w, &b->slots[k])) w->failed = 1;
}

/* ------------------------------------------------------------ output */

/* A double (means, shares) to the last bit, a float (weights) in 9 digits. */
static void jnum(bli_jbuf *o, double x, int is_float) {
    char tmp[32];
    int n = isfinite(x) ? snprintf(tmp, sizeof tmp, is_float ? "%.9g" : "%.17g", x) : snprintf(tmp, sizeof tmp, "null");
    bli_json_raw(o, tmp, (size_t)n);
}

static void jkey(bli_jbuf *o, const char *k) {
    bli_json_raw(o, ",\"", 2);
    bli_json_raw(o, k, strlen(k));
    bli_json_raw(o, "\":", 2);
}

static void jtoken(bli_jbuf *o, const bl_tokenizer *tk, int32_t id) {
    const char *s = bl_token_str(tk, id);
    bli_json_string(o, s ? s : "", s ? strlen(s) : 0);
}

static void write_heads(bli_jbuf *o, const bli_corpus *c, const bl_model *m, int32_t top_n, bli_corpus_link *links) {
    const bl_config *cfg = bl_model_config(m);
    const bl_tokenizer *tk = bl_model_tokenizer(m);
    for (int32_t l = 0; l < cfg->n_layers; l++)
        for (int32_t h = 0; h < cfg->n_heads; h++) {
            bli_corpus_head hd;
            bli_corpus_head_summary(c, l, h, &hd);
            char tmp[64];
            int n = snprintf(tmp, sizeof tmp, "%s{\"layer\":%d,\"head\":%d", l || h ? "," : "", l, h);
            bli_json_raw(o, tmp, (size_t)n);
            const struct { const char *k; double v; } fs[] = {
                {"entropy", hd.entropy}, {"cls", hd.cls},   {"sep", hd.sep},  {"punct", hd.punct},
                {"prev", hd.prev},       {"self", hd.self}, {"next", hd.next}};
            for (size_t i = 0; i < sizeof fs / sizeof *fs; i++) {
                jkey(o, fs[i].k);
                jnum(o, fs[i].v, 0);
            }
            bli_json_raw(o, ",\"class_fractions\":{", 20);
            for (int k = 0; k <= BL_CLASS_HETEROGENEOUS; k++) {
                if (k) bli_json_raw(o, ",", 1);
                bli_json_string(o, bl_head_class_name(k), strlen(bl_head_class_name(k)));
                bli_json_raw(o, ":", 1);
                jnum(o, hd.class_fraction[k], 0);
            }
            bli_json_raw(o, "},\"top\":[", 9);
            const int32_t nt = top_n ? bli_corpus_top(c, l, h, links) : 0;
            for (int32_t i = 0; i < nt; i++) {
                const bli_corpus_link *x = &links[i];
                n = snprintf(tmp, sizeof tmp, "%s{\"text\":%lld,\"line\":%lld,\"query\":%d,\"key\":%d,\"weight\":",
                             i ? "," : "", (long long)x->text, (long long)x->line, x->query, x->key);
                bli_json_raw(o, tmp, (size_t)n);
                jnum(o, x->weight, 1);
                bli_json_raw(o, ",\"query_token\":", 15);
                jtoken(o, tk, x->query_id);
                bli_json_raw(o, ",\"key_token\":", 13);
                jtoken(o, tk, x->key_id);
                bli_json_raw(o, "}", 1);
            }
            bli_json_raw(o, "]}", 2);
        }
}

/* --------------------------------------------------------------- main */

static int usage(void) {
    fprintf(stderr, "usage: bertlens corpus [--top N] BUNDLE FILE   (FILE: one input per line, TAB before "
                    "sentence B; - reads stdin)\n");
    return 1;
}

/* Tokenize slot sl (its bytes in arena) or say why it is skipped. 0, or -1
 * when out of memory (fatal). */
static int prepare_slot(slot *sl, const char *arena, const bl_tokenizer *tk, int32_t max_pos) {
    const char *s = arena + sl->off;
    if (sl->reason[0]) return 0;
    if (sl->len == 0) {
        snprintf(sl->reason, sizeof sl->reason, "empty line");
        return 0;
    }
    const char *tab = memchr(s, '\t', sl->len);
    const size_t alen = tab ? (size_t)(tab - s) : sl->len;
    char err[160] = "";
    if (bl_tokenize(tk, s, alen, tab ? tab + 1 : NULL, tab ? sl->len - alen - 1 : 0, max_pos, &sl->toks, err,
                    sizeof err)) {
        if (strstr(err, "out of memory")) {
            bli_term_line(stderr, "bertlens: line %lld: %s", (long long)sl->line, err);
            return -1;
        }
        snprintf(sl->reason, sizeof sl->reason, "%s", err);
        return 0;
    }
    const int32_t n_b = sl->toks.n - sl->toks.n_a; /* B [SEP], or 0 */
    if (sl->toks.n_a <= 2)
        snprintf(sl->reason, sizeof sl->reason, "no tokens in sentence A (whitespace or control characters only)");
    else if (tab && n_b <= 1)
        snprintf(sl->reason, sizeof sl->reason, "no tokens in sentence B (whitespace or control characters only)");
    if (sl->reason[0]) bl_tokens_free(&sl->toks);
    else sl->has_toks = 1;
    return 0;
}

int bli_cmd_corpus(int argc, char **argv, int32_t threads, int low_memory, bli_read_bundle_fn read_bundle) {
    int32_t top_n = 10;
    int i = 0;
    for (; i < argc && argv[i][0] == '-' && argv[i][1] == '-'; i++) {
        if (strcmp(argv[i], "--top") || i + 1 >= argc) {
            if (strcmp(argv[i], "--top")) bli_term_line(stderr, "bertlens: corpus: unknown option %s", argv[i]);
            return usage();
        }
        char *end;
        errno = 0;
        long v = strtol(argv[++i], &end, 10);
        if (end == argv[i] || *end || errno || v < 0 || v > BL_CORPUS_MAX_TOP) {
            fprintf(stderr, "bertlens: corpus: --top takes a number of links per head, 0..%d\n", BL_CORPUS_MAX_TOP);
            return 1;
        }
        top_n = (int32_t)v;
    }
    if (argc - i != 2) return usage();
    const char *path = argv[i], *file = argv[i + 1];

    char err[512] = "";
    void *bytes = NULL;
    size_t size = 0;
    if (read_bundle(path, &bytes, &size, err, sizeof err)) {
        bli_term_line(stderr, "bertlens: %s", err);
        return 1;
    }
    bl_model *m = bl_model_load(bytes, size, err, sizeof err);
    if (!m) {
        bli_term_line(stderr, "bertlens: %s: %s", path, err);
        free(bytes);
        return 1;
    }
    if (low_memory && bl_model_pack_in_place(m, bytes) < 0) {
        bli_term_line(stderr, "bertlens: %s: out of memory re-laying out its weights", path);
        bl_model_free(m);
        free(bytes);
        return 1;
    }
    FILE *in = strcmp(file, "-") ? fopen(file, "rb") : stdin;
    if (!in) {
        bli_term_line(stderr, "bertlens: cannot open %s: %s", file, strerror(errno));
        bl_model_free(m);
        free(bytes);
        return 1;
    }

    const bl_config *cfg = bl_model_config(m);
    const bl_tokenizer *tk = bl_model_tokenizer(m);
    const int32_t L = cfg->n_layers, NH = cfg->n_heads;
    const int nt = threads > 0 ? threads : bli_cores();
    const int nslots = BATCH_PER_THREAD * nt;
    int rc = 1, failed = 0;
    int64_t line_no = 0, truncated = 0;
    bli_pool *pool = bli_pool_new(nt, &failed, err, sizeof err);
    worker *ws = calloc((size_t)nt, sizeof *ws);
    slot *slots = calloc((size_t)nslots, sizeof *slots);
    bl_head_features *heads = bli_alloc(BLI_BYTES(sizeof *heads, nslots, L, NH), 0, "a batch's features", err,
                                        sizeof err); /* [nslots][L][NH] */
    bli_corpus *acc = bli_corpus_new(L, NH, top_n, err, sizeof err);
    bli_corpus_link *links = bli_alloc(BLI_BYTES(sizeof *links, top_n), 0, "a top list", err, sizeof err);
    char *arena = NULL, *line = NULL; /* arena: [arena_cap] this batch's lines */
    size_t arena_cap = 0, line_cap = 0;
    bli_corpus_skips skipped = {0};
    bli_jbuf out = {0};
    if (failed || !ws || !slots || !heads || !acc || !links) {
        bli_term_line(stderr, "bertlens: %s", err[0] ? err : "out of memory");
        goto done;
    }
    for (int w = 0; w < nt; w++)
        if (!(ws[w].top = bli_corpus_new(L, NH, top_n, err, sizeof err))) {
            bli_term_line(stderr, "bertlens: %s", err);
            goto done;
        }
    for (int k = 0; k < nslots; k++) slots[k].heads = heads + (size_t)k * L * NH;

    for (int eof = 0; !eof;) {
        /* read a batch */
        int count = 0;
        size_t used = 0;
        while (count < nslots && used < BATCH_BYTES) {
            size_t len = 0;
            int too_long;
            const int got = read_line(in, &line, &line_cap, &len, &too_long);
            if (got < 0) {
                bli_term_line(stderr, "bertlens: %s: %s", file, errno ? strerror(errno) : "read error");
                goto done;
            }
            if (!got) {
                eof = 1;
                break;
            }
            slot *sl = &slots[count++];
            sl->line = ++line_no;
            sl->reason[0] = 0;
            sl->has_toks = 0;
            sl->off = used;
            sl->len = too_long ? 0 : len;
            if (too_long) snprintf(sl->reason, sizeof sl->reason, "line longer than %u bytes", CORPUS_MAX_LINE);
            if (used + sl->len > arena_cap) {
                size_t nc = (used + sl->len) * 2;
                char *na = realloc(arena, nc);
                if (!na) {
                    fprintf(stderr, "bertlens: out of memory\n");
                    goto done;
                }
                arena = na, arena_cap = nc;
            }
            if (sl->len) memcpy(arena + used, line, sl->len);
            used += sl->len;
        }
        /* tokenize in order (text indices), run on the workers, add in order */
        int64_t text = bli_corpus_texts(acc), first = text;
        for (int k = 0; k < count; k++) {
            if (prepare_slot(&slots[k], arena, tk, cfg->max_positions)) goto done;
            if (slots[k].has_toks) {
                slots[k].text = text++;
                truncated += slots[k].toks.truncated != 0;
            }
        }
        batch b = {.m = m, .max_pos = cfg->max_positions, .top_n = top_n, .slots = slots, .count = count, .w = ws};
        atomic_init(&b.next, 0);
        if (text > first) bli_pool_run(pool, task_batch, &b); /* a batch of skipped lines wakes no worker */
        for (int w = 0; w < nt; w++)
            if (ws[w].failed) {
                bli_term_line(stderr, "bertlens: %s", ws[w].err);
                goto done;
            }
        for (int k = 0; k < count; k++) {
            slot *sl = &slots[k];
            if (sl->has_toks) {
                bli_corpus_add_features(acc, sl->heads, sl->toks.n);
                bl_tokens_free(&sl->toks);
                sl->has_toks = 0;
            } else {
                bli_corpus_skip(&skipped, sl->line, sl->reason);
            }
        }
    }
    for (int w = 0; w < nt; w++) bli_corpus_merge(acc, ws[w].top);
    if (truncated)
        fprintf(stderr, "bertlens: note: %lld inputs were truncated to the model's %d tokens\n", (long long)truncated,
                cfg->max_positions);

    char tmp[96];
    int n = snprintf(tmp, sizeof tmp, "{\"texts\":%lld,\"tokens\":%lld,", (long long)bli_corpus_texts(acc),
                     (long long)bli_corpus_tokens(acc));
    bli_json_raw(&out, tmp, (size_t)n);
    bli_corpus_skips_json(&skipped, &out);
    bli_json_raw(&out, ",\"heads\":[", 10);
    write_heads(&out, acc, m, top_n, links);
    bli_json_raw(&out, "]}\n", 3);
    if (out.oom || bli_corpus_skips_oom(&skipped)) {
        fprintf(stderr, "bertlens: out of memory\n");
        goto done;
    }
    fwrite(out.data, 1, out.len, stdout);
    rc = fflush(stdout) ? 1 : 0;
    if (rc) fprintf(stderr, "bertlens: cannot write output\n");
done:
    for (int k = 0; slots && k < nslots; k++)
        if (slots[k].has_toks) bl_tokens_free(&slots[k].toks);
    for (int w = 0; ws && w < nt; w++) {
        bl_state_free(ws[w].s);
        bli_corpus_free(ws[w].top);
    }
    bli_pool_free(pool);
    free(ws);
    free(slots);
    free(heads);
    free(links);
    free(arena);
    free(line);
    bli_corpus_free(acc);
    bli_corpus_skips_free(&skipped);
    bli_jbuf_free(&out);
    if (in != stdin) fclose(in);
    bl_model_free(m);
    free(bytes);
    return rc;
}
