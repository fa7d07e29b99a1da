/* wasm_corpus.c — `bertlens corpus` in the page (issue 25 item 2): the same
 * accumulator (corpus.h) fed batch by batch from the worker's 'corpus'
 * messages (web/js/engine/worker_corpus.js), so the page can show progress
 * and stop between batches, and memory stays flat over the corpus.
 *
 *   blw_corpus_begin(top_n, qk_layer, qk_head)  a new run on the loaded model;
 *       returns its threads (the page's, lent until blw_corpus_end), or -1
 *   blw_corpus_add(lines, len, first_line)      one batch: '\n'-separated lines
 *       as the CLI reads them (a TAB before sentence B); returns the inputs
 *       analysed in it, or -1 (blw_error)
 *   blw_corpus_qk_count / _qk_vectors / _qk_meta   with qk_layer >= 0: the
 *       batch's tokens, [n][2][d_head] floats (query, then key of head
 *       qk_head of layer qk_layer, as bl_layer_queries keeps them: after the
 *       bias, before 1/sqrt(d)) and [n][4] int32 (text index, position, id,
 *       kind: 0 special, 1 punctuation, 2 word, 3 subword; token_kind)
 *   blw_corpus_json()   the CLI's JSON (cli_corpus.c) for everything so far
 *   blw_corpus_end()    frees the run
 *
 * Skip reasons, the text index, the tie order and the JSON are the CLI's, so
 * the two give the same numbers (tests/web/corpus_run.test.mjs). The forward
 * pass runs on the threads blw_set_threads gave (the pthreads build), one
 * input at a time (the page's own state runs on one thread meanwhile); the features are added in input order, as the CLI adds
 * them. */
#include "bertlens.h"
#include "analysis/corpus.h"
#include "text/json.h"
#include "base/sizes.h"
#include "wasm_api.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __EMSCRIPTEN__
#include <emscripten.h>
#else
#define EMSCRIPTEN_KEEPALIVE
#endif

#define CORPUS_MAX_LINE (1u << 20) /* as cli_corpus.c */
#define STATE_STEP 64

int blw_threads(void);      /* wasm_api.c */
int blw_set_threads(int n);

static struct {
    bli_corpus *acc;
    bl_state *s;
    int32_t cap;          /* tokens s holds                                  */
    unsigned loads;       /* the model's load number: a new model ends a run */
    int32_t top_n, qk_layer, qk_head;
    int threads;          /* the run's threads, lent by the page's state     */
    bli_corpus_skips skipped; /* the first skipped lines and the count (corpus.h) */
    float *qk;            /* [qk_n][2][d_head] of the last batch             */
    int32_t *meta;        /* [qk_n][4]                                        */
    size_t qk_n, qk_cap;
    char *json;
} c;

EMSCRIPTEN_KEEPALIVE void blw_corpus_end(void) {
    bli_corpus_free(c.acc);
    bl_state_free(c.s); /* joins its threads: their Workers go back to the pool */
    if (c.threads > 1) blw_set_threads(c.threads); /* the page's state gets them back */
    bli_corpus_skips_free(&c.skipped);
    free(c.qk);
    free(c.meta);
    free(c.json);
    memset(&c, 0, sizeof c);
}

EMSCRIPTEN_KEEPALIVE int blw_corpus_begin(int top_n, int qk_layer, int qk_head) {
    char *err = bli_wasm_err();
    unsigned loads;
    const bl_model *m = bli_wasm_model(&loads);
    blw_corpus_end();
    if (!m) {
        snprintf(err, BLI_WASM_ERRLEN, "no model loaded");
        return -1;
    }
    const bl_config *cfg = bl_model_config(m);
    if (qk_layer >= cfg->n_layers || (qk_layer >= 0 && (qk_head < 0 || qk_head >= cfg->n_heads))) {
        snprintf(err, BLI_WASM_ERRLEN, "no head L%d H%d in a model of %d x %d heads", qk_layer, qk_head,
                 cfg->n_layers, cfg->n_heads);
        return -1;
    }
    if (!(c.acc = bli_corpus_new(cfg->n_layers, cfg->n_heads, top_n, err, BLI_WASM_ERRLEN))) return -1;
    /* The pthreads build starts a fixed pool of Workers (PTHREAD_POOL_SIZE),
     * all held by the page's state: it lends them to the run (down to one
     * thread until blw_corpus_end), or the run could start none. */
    c.threads = blw_threads();
    if (c.threads > 1 && blw_set_threads(1) < 0) {
        bli_corpus_free(c.acc);
        memset(&c, 0, sizeof c);
        return -1;
    }
    c.loads = loads;
    c.top_n = top_n;
    c.qk_layer = qk_layer < 0 ? -1 : qk_layer;
    c.qk_head = qk_head;
    return c.threads > 1 ? c.threads : 1;
}

/* Tokenize one line or say why it is skipped (reason), as cli_corpus.c's
 * prepare_slot. 1: tokens, 0: skipped, -1: out of memory. */
static int prepare(const bl_model *m, const char *s, size_t len, bl_tokens *t, char *reason, size_t rlen) {
    const bl_tokenizer *tk = bl_model_tokenizer(m);
    reason[0] = 0;
    if (len > CORPUS_MAX_LINE) {
        snprintf(reason, rlen, "line longer than %u bytes", CORPUS_MAX_LINE);
        return 0;
    }
    if (len == 0) {
        snprintf(reason, rlen, "empty line");
        return 0;
    }
    const char *tab = memchr(s, '\t', len);
    const size_t alen = tab ? (size_t)(tab - s) : len;
    char err[160] = "";
    memset(t, 0, sizeof *t);
    if (bl_tokenize(tk, s, alen, tab ? tab + 1 : NULL, tab ? len - alen - 1 : 0, bl_model_config(m)->max_positions,
                    t, err, sizeof err)) {
        snprintf(reason, rlen, "%s", err);
        return strstr(err, "out of memory") ? -1 : 0;
    }
    const int32_t n_b = t->n - t->n_a;
    if (t->n_a <= 2) snprintf(reason, rlen, "no tokens in sentence A (whitespace or control characters only)");
    else if (tab && n_b <= 1) snprintf(reason, rlen, "no tokens in sentence B (whitespace or control characters only)");
    if (reason[0]) {
        bl_tokens_free(t);
        return 0;
    }
    return 1;
}

/* A token's kind for the map's colours: 0 special, 1 punctuation (ASCII
 * punctuation only, after the piece's word mark), 2 a word's first piece,
 * 3 a continuing piece ("##x" in WordPiece; no space mark in byte-level or
 * metaspace pieces, after a token that is not special). */
static int32_t token_kind(const bl_tokenizer *tk, int32_t id, int32_t prev) {
    if (bl_token_is_special(tk, id)) return 0;
    const char *s = bl_token_str(tk, id);
    if (!s) return 2;
    const char *pieces = bl_tokenizer_pieces(tk);
    int cont = 0;
    if (!strcmp(pieces, "wordpiece")) {
        if (!strncmp(s, "##", 2)) s += 2, cont = 1;
    } else {
        const char *mark = !strcmp(pieces, "byte-level") ? "\xc4\xa0" : "\xe2\x96\x81";
        if (!strncmp(s, mark, strlen(mark))) s += strlen(mark);
        else cont = prev >= 0 && !bl_token_is_special(tk, prev);
    }
    int punct = *s != 0;
    for (const char *p = s; *p; p++)
        if ((unsigned char)*p >= 0x80 || !ispunct((unsigned char)*p)) punct = 0;
    return punct ? 1 : cont ? 3 : 2;
}

/* Keep the q/k of head (qk_layer, qk_head) for the T tokens of the last run. */
static int keep_qk(const bl_model *m, const bl_tokens *t, int64_t text, char *err) {
    const bl_config *cfg = bl_model_config(m);
    const int32_t dh = cfg->hidden / cfg->n_heads, T = t->n;
    const float *q = bl_layer_queries(c.s, c.qk_layer), *k = bl_layer_keys(c.s, c.qk_layer); /* [H][T][dh] */
    if (!q || !k) {
        snprintf(err, BLI_WASM_ERRLEN, "the corpus run kept no queries and keys");
        return -1;
    }
    if (c.qk_n + (size_t)T > c.qk_cap) {
        size_t nc = (c.qk_n + (size_t)T) * 2;
        float *nq = realloc(c.qk, nc * 2 * (size_t)dh * sizeof *nq);
        if (nq) c.qk = nq;
        int32_t *nm = realloc(c.meta, nc * 4 * sizeof *nm);
        if (nm) c.meta = nm;
        if (!nq || !nm) {
            snprintf(err, BLI_WASM_ERRLEN, "out of memory for the queries and keys of a batch");
            return -1;
        }
        c.qk_cap = nc;
    }
    const size_t off = (size_t)c.qk_head * (size_t)T * (size_t)dh;
    for (int32_t i = 0; i < T; i++) {
        float *dst = c.qk + (c.qk_n + (size_t)i) * 2 * (size_t)dh;
        memcpy(dst, q + off + (size_t)i * dh, (size_t)dh * sizeof *dst);
        memcpy(dst + dh, k + off + (size_t)i * dh, (size_t)dh * sizeof *dst);
        int32_t *mt = c.meta + (c.qk_n + (size_t)i) * 4;
        mt[0] = (int32_t)text, mt[1] = i, mt[2] = t->ids[i];
        mt[3] = token_kind(bl_model_tokenizer(m), t->ids[i], i ? t->ids[i - 1] : -1);
    }
    c.qk_n += (size_t)T;
    return 0;
}

/* One input on the corpus state: forward, analysis, features and links. */
static int run_one(const bl_model *m, const bl_tokens *t, int64_t text, int64_t line, char *err) {
    const int32_t T = t->n, max_pos = bl_model_config(m)->max_positions;
    const unsigned flags = BL_KEEP_ATTN | (c.qk_layer >= 0 ? BL_KEEP_QK : 0);
    if (T > c.cap) {
        int64_t cap = ((int64_t)T + STATE_STEP - 1) / STATE_STEP * STATE_STEP;
        if (cap > max_pos) cap = max_pos;
        if (c.s ? bl_state_reserve(c.s, (int32_t)cap, flags, err, BLI_WASM_ERRLEN)
                : !(c.s = bl_state_new(m, (int32_t)cap, flags, err, BLI_WASM_ERRLEN)))
            return -1;
        bl_state_set_final(c.s, 0);
        c.cap = (int32_t)cap;
    }
    if (c.threads > 1 && bl_state_threads(c.s) != c.threads && bl_state_set_threads(c.s, c.threads, err, BLI_WASM_ERRLEN) < 0)
        return -1;
    bl_analysis a;
    if (bl_forward(c.s, t->ids, t->type_ids, T, c.qk_layer < 0 ? 0 : c.qk_layer, err, BLI_WASM_ERRLEN) ||
        bl_analyze(c.s, t->ids, t->type_ids, BL_ANALYZE_HEADS, &a, err, BLI_WASM_ERRLEN))
        return -1;
    bli_corpus_add_features(c.acc, a.heads, T);
    bl_analysis_free(&a);
    if (bli_corpus_add_links(c.acc, c.s, t->ids, text, line, err, BLI_WASM_ERRLEN)) return -1;
    return c.qk_layer >= 0 ? keep_qk(m, t, text, err) : 0;
}

EMSCRIPTEN_KEEPALIVE int blw_corpus_add(const char *lines, int len, int first_line) {
    char *err = bli_wasm_err();
    unsigned loads;
    const bl_model *m = bli_wasm_model(&loads);
    if (!c.acc || !m || loads != c.loads) {
        snprintf(err, BLI_WASM_ERRLEN, "no corpus run on this model: call blw_corpus_begin first");
        return -1;
    }
    if (!lines || len < 0) {
        snprintf(err, BLI_WASM_ERRLEN, "no lines");
        return -1;
    }
    c.qk_n = 0;
    int done = 0;
    int64_t line = first_line;
    for (size_t at = 0; at < (size_t)len; line++) {
        const char *s = lines + at, *nl = memchr(s, '\n', (size_t)len - at);
        size_t n = nl ? (size_t)(nl - s) : (size_t)len - at;
        at += n + (nl != NULL);
        if (n && s[n - 1] == '\r') n--;
        bl_tokens t;
        char reason[192];
        const int got = prepare(m, s, n, &t, reason, sizeof reason);
        if (got < 0) {
            snprintf(err, BLI_WASM_ERRLEN, "line %lld: %s", (long long)line, reason);
            return -1;
        }
        if (!got) {
            bli_corpus_skip(&c.skipped, line, reason);
            continue;
        }
        const int rc = run_one(m, &t, bli_corpus_texts(c.acc), line, err);
        bl_tokens_free(&t);
        if (rc) return -1;
        done++;
    }
    return done;
}

EMSCRIPTEN_KEEPALIVE int blw_corpus_qk_count(void) { return (int)c.qk_n; }
EMSCRIPTEN_KEEPALIVE const float *blw_corpus_qk_vectors(void) { return c.qk; }
EMSCRIPTEN_KEEPALIVE const int32_t *blw_corpus_qk_meta(void) { return c.meta; }

static void jnum(bli_jbuf *o, double x, int is_float) {
    char tmp[32];
    int n = isfinite(x) ? snprintf(tmp, sizeof tmp, is_float ? "%.9g" : "%.17g", x) : snprintf(tmp, sizeof tmp, "null");
    bli_json_raw(o, tmp, (size_t)n);
}

/* The CLI's JSON (cli_corpus.c write_heads) for the inputs added so far. */
EMSCRIPTEN_KEEPALIVE const char *blw_corpus_json(void) {
    char *err = bli_wasm_err();
    unsigned loads;
    const bl_model *m = bli_wasm_model(&loads);
    if (!c.acc || !m || loads != c.loads) {
        snprintf(err, BLI_WASM_ERRLEN, "no corpus run on this model");
        return NULL;
    }
    const bl_config *cfg = bl_model_config(m);
    const bl_tokenizer *tk = bl_model_tokenizer(m);
    bli_corpus_link *links = bli_alloc(BLI_BYTES(sizeof *links, c.top_n), 0, "a top list", err, BLI_WASM_ERRLEN);
    if (!links && c.top_n) return NULL;
    bli_jbuf o = {0};
    char tmp[128];
    int n = snprintf(tmp, sizeof tmp, "{\"texts\":%lld,\"tokens\":%lld,",
                     (long long)bli_corpus_texts(c.acc), (long long)bli_corpus_tokens(c.acc));
    bli_json_raw(&o, tmp, (size_t)n);
    bli_corpus_skips_json(&c.skipped, &o);
    bli_json_raw(&o, ",\"heads\":[", 10);
    static const char *names[] = {"entropy", "cls", "sep", "punct", "prev", "self", "next"};
    for (int32_t l = 0; l < cfg->n_layers; l++)
        for (int32_t h = 0; h < cfg->n_heads; h++) {
            bli_corpus_head hd;
            bli_corpus_head_summary(c.acc, l, h, &hd);
            n = snprintf(tmp, sizeof tmp, "%s{\"layer\":%d,\"head\":%d", l || h ? "," : "", l, h);
            bli_json_raw(&o, tmp, (size_t)n);
            const double v[] = {hd.entropy, hd.cls, hd.sep, hd.punct, hd.prev, hd.self, hd.next};
            for (int i = 0; i < 7; i++) {
                n = snprintf(tmp, sizeof tmp, ",\"%s\":", names[i]);
                bli_json_raw(&o, tmp, (size_t)n);
                jnum(&o, v[i], 0);
            }
            bli_json_raw(&o, ",\"class_fractions\":{", 20);
            for (int k = 0; k <= BL_CLASS_HETEROGENEOUS; k++) {
                if (k) bli_json_raw(&o, ",", 1);
                bli_json_string(&o, bl_head_class_name(k), strlen(bl_head_class_name(k)));
                bli_json_raw(&o, ":", 1);
                jnum(&o, hd.class_fraction[k], 0);
            }
            bli_json_raw(&o, "},\"top\":[", 9);
            const int32_t nt = c.top_n ? bli_corpus_top(c.acc, l, h, links) : 0;
            for (int32_t i = 0; i < nt; i++) {
                const bli_corpus_link *x = &links[i];
                n = snprintf(tmp, sizeof tmp, "%s{\"text\":%lld,\"line\":%lld,\"query\":%d,\"key\":%d,\"weight\":",
                             i ? "," : "", (long long)x->text, (long long)x->line, x->query, x->key);
                bli_json_raw(&o, tmp, (size_t)n);
                jnum(&o, x->weight, 1);
                const char *qs = bl_token_str(tk, x->query_id), *ks = bl_token_str(tk, x->key_id);
                bli_json_raw(&o, ",\"query_token\":", 15);
                bli_json_string(&o, qs ? qs : "", qs ? strlen(qs) : 0);
                bli_json_raw(&o, ",\"key_token\":", 13);
                bli_json_string(&o, ks ? ks : "", ks ? strlen(ks) : 0);
                bli_json_raw(&o, "}", 1);
            }
            bli_json_raw(&o, "]}", 2);
        }
    bli_json_raw(&o, "]}", 2);
    free(links);
    if (o.oom || bli_corpus_skips_oom(&c.skipped)) {
        bli_jbuf_free(&o);
        snprintf(err, BLI_WASM_ERRLEN, "out of memory building the corpus JSON");
        return NULL;
    }
    free(c.json);
    c.json = o.data;
    return c.json;
}
