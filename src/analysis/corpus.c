/* corpus.c — per-head figures accumulated over a stream of inputs
 * (definitions in corpus.h). The features come from bl_analyze, so they are
 * the figures `bertlens analyze` prints for each input; this file only sums
 * them, counts classes and keeps the strongest links.
 *
 * The top links of a head are a bounded heap of top_n entries whose root is
 * the weakest kept link: a link enters when the heap has room or it beats
 * the root, so each input costs O(T^2) comparisons per head (most of them
 * against the root's weight alone) and memory stays top_n links per head.
 */
#include "corpus.h"
#include "base/error.h"
#include "base/sizes.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_CLASSES (BL_CLASS_HETEROGENEOUS + 1)

enum { F_ENTROPY, F_CLS, F_SEP, F_PUNCT, F_PREV, F_SELF, F_NEXT, N_FEATURES };

typedef struct {
    double sum[N_FEATURES];   /* sums over the inputs that have the figure */
    int64_t n[N_FEATURES];    /* how many inputs had it (not NaN)          */
    int64_t klass[N_CLASSES]; /* inputs per class                          */
} head_acc;

struct bli_corpus {
    int32_t L, NH, top_n;
    int64_t texts, tokens;
    head_acc *acc;       /* [L * NH]                                        */
    bli_corpus_link *top; /* [L * NH][top_n] a heap per head, weakest at [0] */
    int32_t *n_top;      /* [L * NH] links held by each heap                */
    uint8_t *roles;      /* [roles_cap] scratch for bli_corpus_add_links     */
    int32_t roles_cap;
};

bli_corpus *bli_corpus_new(int32_t n_layers, int32_t n_heads, int32_t top_n, char *err, size_t errlen) {
    if (n_layers < 1 || n_heads < 1 || top_n < 0 || top_n > BL_CORPUS_MAX_TOP) {
        bli_set_err(err, errlen, "bli_corpus_new: %d layers x %d heads, top %d: expected at least one head and "
                    "0..%d links", n_layers, n_heads, top_n, BL_CORPUS_MAX_TOP);
        return NULL;
    }
    bli_corpus *c = calloc(1, sizeof *c);
    if (!c) {
        bli_set_err(err, errlen, "out of memory for a corpus accumulator");
        return NULL;
    }
    c->L = n_layers;
    c->NH = n_heads;
    c->top_n = top_n;
    const uint64_t heads = (uint64_t)n_layers * (uint64_t)n_heads;
    if (!(c->acc = bli_alloc(BLI_BYTES(sizeof *c->acc, heads), 1, "the corpus sums", err, errlen)) ||
        !(c->n_top = bli_alloc(BLI_BYTES(sizeof *c->n_top, heads), 1, "the corpus top lists", err, errlen)) ||
        !(c->top = bli_alloc(BLI_BYTES(sizeof *c->top, heads, top_n), 0, "the corpus top lists", err, errlen))) {
        bli_corpus_free(c);
        return NULL;
    }
    return c;
}

void bli_corpus_free(bli_corpus *c) {
    if (!c) return;
    free(c->acc);
    free(c->top);
    free(c->n_top);
    free(c->roles);
    free(c);
}

/* ------------------------------------------------------------ features */

int bli_corpus_add_features(bli_corpus *c, const bl_head_features *heads, int32_t T) {
    if (!c || !heads || T < 1) return -1;
    for (int32_t k = 0; k < c->L * c->NH; k++) {
        const bl_head_features *f = &heads[k];
        const float v[N_FEATURES] = {f->entropy, f->cls, f->sep, f->punct, f->prev, f->self, f->next};
        head_acc *a = &c->acc[k];
        for (int i = 0; i < N_FEATURES; i++)
            if (!isnan(v[i])) a->sum[i] += v[i], a->n[i]++;
        if (f->klass >= 0 && f->klass < N_CLASSES) a->klass[f->klass]++;
    }
    c->texts++;
    c->tokens += T;
    return 0;
}

/* --------------------------------------------------------------- links */

/* 1 if x ranks before y: more weight, then lower text, query, key. */
static int ranks_before(const bli_corpus_link *x, const bli_corpus_link *y) {
    if (x->weight != y->weight) return x->weight > y->weight;
    if (x->text != y->text) return x->text < y->text;
    if (x->query != y->query) return x->query < y->query;
    return x->key < y->key;
}

/* Restore the heap (weakest at the root) below position i. */
static void sift_down(bli_corpus_link *h, int32_t n, int32_t i) {
    for (;;) {
        int32_t w = i;
        const int32_t l = 2 * i + 1, r = l + 1;
        if (l < n && ranks_before(&h[w], &h[l])) w = l;
        if (r < n && ranks_before(&h[w], &h[r])) w = r;
        if (w == i) return;
        const bli_corpus_link t = h[i];
        h[i] = h[w];
        h[w] = t;
        i = w;
    }
}

/* Offer link x to heap h (n of cap held). */
static void offer(bli_corpus_link *h, int32_t *n, int32_t cap, const bli_corpus_link *x) {
    if (*n < cap) { /* room: append and sift up */
        int32_t i = (*n)++;
        h[i] = *x;
        while (i > 0) {
            const int32_t p = (i - 1) / 2;
            if (!ranks_before(&h[p], &h[i])) break;
            const bli_corpus_link t = h[i];
            h[i] = h[p];
            h[p] = t;
            i = p;
        }
    } else if (cap > 0 && ranks_before(x, &h[0])) {
        h[0] = *x;
        sift_down(h, *n, 0);
    }
}

int bli_corpus_add_links(bli_corpus *c, const bl_state *s, const int32_t *ids, int64_t text, int64_t line, char *err,
                        size_t errlen) {
    if (!c || !s || !ids) {
        bli_set_err(err, errlen, "bli_corpus_add_links: missing accumulator, state or ids");
        return -1;
    }
    const bl_model *m = bl_state_model(s);
    const bl_config *cfg = bl_model_config(m);
    const int32_t T = bl_state_tokens(s);
    if (cfg->n_layers != c->L || cfg->n_heads != c->NH) {
        bli_set_err(err, errlen, "bli_corpus_add_links: the model has %d x %d heads, the accumulator %d x %d",
                    cfg->n_layers, cfg->n_heads, c->L, c->NH);
        return -1;
    }
    if (T < 1 || !bl_attention(s, 0)) {
        bli_set_err(err, errlen, "bli_corpus_add_links: run bl_forward with BL_KEEP_ATTN first");
        return -1;
    }
    if (c->top_n == 0) return 0;
    if (T > c->roles_cap) {
        uint8_t *r = realloc(c->roles, (size_t)T); /* T fits the state's buffers, so it fits size_t */
        if (!r) {
            bli_set_err(err, errlen, "out of memory for the roles of %d tokens", T);
            return -1;
        }
        c->roles = r;
        c->roles_cap = T;
    }
    if (bl_token_roles(m, ids, T, c->roles, err, errlen)) return -1;
    const uint8_t special = BL_ROLE_CLS | BL_ROLE_SEP;
    const size_t TT = (size_t)T * (size_t)T;
    for (int32_t l = 0; l < c->L; l++) {
        const float *att = bl_attention(s, l); /* [NH][T][T] */
        for (int32_t h = 0; h < c->NH; h++) {
            const size_t k = (size_t)l * c->NH + h;
            bli_corpus_link *heap = c->top + k * (size_t)c->top_n;
            int32_t *n = &c->n_top[k];
            const float *a = att + (size_t)h * TT;
            for (int32_t i = 0; i < T; i++) {
                if (c->roles[i] & special) continue;
                const float *row = a + (size_t)i * T;
                for (int32_t j = 0; j < T; j++) {
                    const float w = row[j];
                    /* full heap: only a weight at least the root's can enter */
                    if (j == i || (c->roles[j] & special) || isnan(w) || (*n == c->top_n && w < heap[0].weight))
                        continue;
                    const bli_corpus_link x = {.weight = w, .query = i, .key = j, .query_id = ids[i],
                                              .key_id = ids[j], .text = text, .line = line};
                    offer(heap, n, c->top_n, &x);
                }
            }
        }
    }
    return 0;
}

int bli_corpus_merge(bli_corpus *into, const bli_corpus *from) {
    if (!into || !from || into->L != from->L || into->NH != from->NH || into->top_n != from->top_n) return -1;
    for (int32_t k = 0; k < into->L * into->NH; k++) {
        head_acc *a = &into->acc[k];
        const head_acc *b = &from->acc[k];
        for (int i = 0; i < N_FEATURES; i++) a->sum[i] += b->sum[i], a->n[i] += b->n[i];
        for (int i = 0; i < N_CLASSES; i++) a->klass[i] += b->klass[i];
        const bli_corpus_link *src = from->top + (size_t)k * from->top_n;
        for (int32_t i = 0; i < from->n_top[k]; i++)
            offer(into->top + (size_t)k * into->top_n, &into->n_top[k], into->top_n, &src[i]);
    }
    into->texts += from->texts;
    into->tokens += from->tokens;
    return 0;
}

/* ------------------------------------------------------------- results */

int64_t bli_corpus_texts(const bli_corpus *c) { return c ? c->texts : 0; }
int64_t bli_corpus_tokens(const bli_corpus *c) { return c ? c->tokens : 0; }

int bli_corpus_head_summary(const bli_corpus *c, int32_t layer, int32_t head, bli_corpus_head *out) {
    if (!c || !out || layer < 0 || layer >= c->L || head < 0 || head >= c->NH) return -1;
    const head_acc *a = &c->acc[(size_t)layer * c->NH + head];
    double mean[N_FEATURES];
    for (int i = 0; i < N_FEATURES; i++) mean[i] = a->n[i] ? a->sum[i] / (double)a->n[i] : NAN;
    out->entropy = mean[F_ENTROPY];
    out->cls = mean[F_CLS];
    out->sep = mean[F_SEP];
    out->punct = mean[F_PUNCT];
    out->prev = mean[F_PREV];
    out->self = mean[F_SELF];
    out->next = mean[F_NEXT];
    for (int i = 0; i < N_CLASSES; i++)
        out->class_fraction[i] = c->texts ? (double)a->klass[i] / (double)c->texts : NAN;
    return 0;
}

static int cmp_links(const void *x, const void *y) {
    return ranks_before(x, y) ? -1 : ranks_before(y, x) ? 1 : 0;
}

int32_t bli_corpus_top(const bli_corpus *c, int32_t layer, int32_t head, bli_corpus_link *out) {
    if (!c || layer < 0 || layer >= c->L || head < 0 || head >= c->NH) return -1;
    const size_t k = (size_t)layer * c->NH + head;
    const int32_t n = c->n_top[k];
    if (n == 0) return 0;
    if (!out) return -1;
    memcpy(out, c->top + k * (size_t)c->top_n, (size_t)n * sizeof *out);
    qsort(out, (size_t)n, sizeof *out, cmp_links);
    return n;
}

/* ------------------------------------------------------ skipped lines */

void bli_corpus_skip(bli_corpus_skips *s, int64_t line, const char *reason) {
    if (++s->count > BL_CORPUS_MAX_SKIPPED) return; /* counted, not listed */
    char tmp[48];
    int n = snprintf(tmp, sizeof tmp, "%s{\"line\":%lld,\"reason\":", s->count > 1 ? "," : "", (long long)line);
    bli_json_raw(&s->listed, tmp, (size_t)n);
    bli_json_string(&s->listed, reason, strlen(reason));
    bli_json_raw(&s->listed, "}", 1);
}

void bli_corpus_skips_json(const bli_corpus_skips *s, bli_jbuf *out) {
    bli_json_raw(out, "\"skipped\":[", 11);
    if (s->listed.len) bli_json_raw(out, s->listed.data, s->listed.len);
    char tmp[48];
    int n = snprintf(tmp, sizeof tmp, "],\"skipped_lines\":%lld", (long long)s->count);
    bli_json_raw(out, tmp, (size_t)n);
}

void bli_corpus_skips_free(bli_corpus_skips *s) {
    bli_jbuf_free(&s->listed);
    s->count = 0;
}

int bli_corpus_skips_oom(const bli_corpus_skips *s) { return s->listed.oom; }
