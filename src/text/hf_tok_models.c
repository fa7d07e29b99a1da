/* hf_tok_models.c — the models of tokenizer.json: BPE, Unigram, WordPiece.
 *
 * Each tokenizes one pre-tokenized split (its normalized characters) into
 * tokens whose offsets are first found in bytes of the split's UTF-8 (as in
 * tokenizers) and then mapped to the original text through the alignments of
 * the first and last character they cover.
 *
 *   BPE       characters (with continuing_subword_prefix / end_of_word_suffix)
 *             -> vocabulary ids, unknown ones as byte_fallback <0xXX> tokens
 *             or unk (fused when fuse_unk); then merges, lowest rank first,
 *             leftmost first among equal ranks (a binary heap of candidate
 *             pairs, stale entries skipped); ignore_merges: a split that is
 *             itself in the vocabulary is one token.
 *   Unigram   Viterbi over every vocabulary piece starting at every character
 *             (pieces of at most HF_MAX_PIECE_BYTES: linear in the text)
 *             (score sums in double, ties to the first candidate), an unk node
 *             (min score - 10) where no one-character piece exists, adjacent
 *             unknowns fused; byte_fallback spells unknown pieces in <0xXX>.
 *   WordPiece greedy longest match, "##" for continuations, the whole split
 *             unk when a piece is missing or it is longer than
 *             max_input_chars_per_word characters (0: every split).
 */
#include "hf_tok_models.h"
#include "base/error.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_VOCAB (1 << 24)
#define UNK_PENALTY 10.0

/* ---------------------------------------------------------- vocabulary */

static uint32_t fnv1a(const char *s, size_t n) {
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t)s[i]) * 16777619u;
    return h;
}

/* Lookup with the string's hash already known (FNV-1a, extended byte by
 * byte): a slot holds the hash beside the id, so a probe reads the string
 * only when the hashes agree. */
static int32_t vocab_find_h(const bli_hfvocab *v, const char *s, size_t n, uint32_t h) {
    if (!v->n_slots) return -1;
    for (uint32_t i = h & (v->n_slots - 1);; i = (i + 1) & (v->n_slots - 1)) {
        uint64_t e = v->slots[i];
        if (!e) return -1;
        int32_t id = (int32_t)(uint32_t)e - 1;
        if ((uint32_t)(e >> 32) == h && v->len[id] == n && !memcmp(v->pool + v->off[id], s, n)) return id;
    }
}

int32_t bli_hfvocab_find(const bli_hfvocab *v, const char *s, size_t n) { return vocab_find_h(v, s, n, fnv1a(s, n)); }

/* strs[i] of lens[i] bytes (NULL: no token i, its string ""). A string
 * given twice maps to its last id, as a Rust HashMap filled in order does. */
static int vocab_build(bli_hfvocab *v, const char *const *strs, const uint32_t *lens, int32_t n, char *err,
                       size_t errlen) {
    size_t pool = 0;
    for (int32_t i = 0; i < n; i++) pool += (strs[i] ? lens[i] : 0) + 1;
    v->n = n;
    v->pool = malloc(pool + 1);
    v->off = calloc((size_t)n, sizeof *v->off);
    v->len = calloc((size_t)n, sizeof *v->len);
    uint32_t slots = 16;
    while (slots < 2u * (uint32_t)n) slots *= 2;
    v->slots = calloc(slots, sizeof *v->slots);
    v->n_slots = slots;
    if (!v->pool || !v->off || !v->len || !v->slots || pool > UINT32_MAX) {
        bli_set_err(err, errlen, "tokenizer.json: out of memory for a vocabulary of %d", (int)n);
        return -1;
    }
    size_t o = 0;
    for (int32_t i = 0; i < n; i++) {
        v->off[i] = (uint32_t)o;
        if (!strs[i]) { v->pool[o++] = 0; v->len[i] = 0; continue; }
        if (lens[i]) memcpy(v->pool + o, strs[i], lens[i]);
        v->len[i] = lens[i];
        o += lens[i];
        v->pool[o++] = 0;
    }
    v->pool_len = o;
    for (int32_t i = 0; i < n; i++) {
        if (!strs[i]) continue;
        const char *s = v->pool + v->off[i];
        const uint32_t h = fnv1a(s, v->len[i]);
        const uint64_t mine = (uint64_t)h << 32 | ((uint32_t)i + 1);
        for (uint32_t k = h & (slots - 1);; k = (k + 1) & (slots - 1)) {
            uint64_t e = v->slots[k];
            if (!e) { v->slots[k] = mine; break; }
            int32_t id = (int32_t)(uint32_t)e - 1;
            if (v->len[id] == v->len[i] && !memcmp(v->pool + v->off[id], s, v->len[i])) {
                v->slots[k] = mine; /* later id wins */
                break;
            }
        }
    }
    return 0;
}

/* vocab_build over JSON strings (NULL: no token i). */
static int vocab_build_jv(bli_hfvocab *v, const bli_jv *const *strings, int32_t n, char *err, size_t errlen) {
    const char **strs = calloc((size_t)n + 1, sizeof *strs);
    uint32_t *lens = calloc((size_t)n + 1, sizeof *lens);
    int rc = -1;
    if (!strs || !lens) bli_set_err(err, errlen, "tokenizer.json: out of memory for a vocabulary of %d", (int)n);
    else {
        for (int32_t i = 0; i < n; i++)
            if (strings[i]) strs[i] = strings[i]->str, lens[i] = (uint32_t)strings[i]->len;
        rc = vocab_build(v, strs, lens, n, err, errlen);
    }
    free(strs);
    free(lens);
    return rc;
}

/* ------------------------------------------------------------- tokens */

int bli_hftokens_push(bli_hftokens *l, bli_hftoken t) {
    if (l->n == l->cap) {
        int32_t cap = l->cap ? 2 * l->cap : 64;
        if (cap > INT32_MAX / 32 || (size_t)cap > SIZE_MAX / sizeof *l->v) return -1;
        bli_hftoken *v = realloc(l->v, (size_t)cap * sizeof *v);
        if (!v) return -1;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = t;
    return 0;
}

void bli_hf_space_ends(const char *s, size_t n, int32_t *lead, int32_t *trail) {
    /* decode to code points, count from both ends */
    int32_t cnt = 0, first_non = -1, last_non = -1;
    for (size_t i = 0; i < n;) {
        unsigned char b = (unsigned char)s[i];
        int len = b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
        uint32_t c = len == 1 ? b : len == 2 ? b & 0x1F : len == 3 ? b & 0x0F : b & 0x07;
        for (int j = 1; j < len && i + (size_t)j < n; j++) c = c << 6 | ((unsigned char)s[i + j] & 0x3F);
        int sp = c == 0x120 || bli_hf_is_ws(c);
        if (!sp) {
            if (first_non < 0) first_non = cnt;
            last_non = cnt;
        }
        cnt++;
        i += (size_t)len;
    }
    if (first_non < 0) { *lead = cnt; *trail = cnt; return; }
    *lead = first_non;
    *trail = cnt - 1 - last_non;
}

typedef bli_hfsplitbuf splitbuf;

/* Room for need elements of elem bytes in *p (capacity *cap, doubled). */
static int room(void *p, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap) return 0;
    size_t c = *cap < 64 ? 64 : 2 * *cap;
    if (c < need) c = need;
    if (c > SIZE_MAX / elem) return -1;
    void *q = realloc(*(void **)p, c * elem);
    if (!q) return -1;
    *(void **)p = q;
    *cap = c;
    return 0;
}

static int splitbuf_fill(splitbuf *b, const bli_hfstr *s) {
    if (room(&b->boff, &b->bcap, (size_t)s->n + 1, sizeof *b->boff) || room(&b->u, &b->ucap, 4 * (size_t)s->n + 1, 1))
        return -1;
    int32_t o = 0;
    for (int32_t i = 0; i < s->n; i++) {
        b->boff[i] = o;
        const uint32_t c = s->c[i].cp;
        if (c < 0x80) b->u[o++] = (char)c;
        else if (c < 0x800) b->u[o] = (char)(0xC0 | c >> 6), b->u[o + 1] = (char)(0x80 | (c & 0x3F)), o += 2;
        else if (c < 0x10000) /* CJK and most other scripts' letters */
            b->u[o] = (char)(0xE0 | c >> 12), b->u[o + 1] = (char)(0x80 | (c >> 6 & 0x3F)),
            b->u[o + 2] = (char)(0x80 | (c & 0x3F)), o += 3;
        else o += (int32_t)bli_hf_utf8_put(b->u + o, c);
    }
    b->u[o] = 0;
    b->boff[s->n] = o;
    b->n = s->n;
    b->nb = o;
    return 0;
}

void bli_hfmwork_free(bli_hfmwork *w) {
    free(w->b.u);
    free(w->b.boff);
    free(w->hash);
    memset(w, 0, sizeof *w);
}

/* Character index containing byte offset `byte` (byte < nb). */
static int32_t char_of(const splitbuf *b, int32_t byte) {
    int32_t lo = 0, hi = b->n;
    while (hi - lo > 1) {
        int32_t mid = (lo + hi) / 2;
        if (b->boff[mid] <= byte) lo = mid; else hi = mid;
    }
    return lo;
}

/* Token with byte offsets [b0, b1) of the split. */
static int emit(const bli_hfmodel *m, const bli_hfstr *s, const splitbuf *b, int32_t id, int32_t b0, int32_t b1,
                int32_t word, bli_hftokens *out) {
    bli_hftoken t;
    t.id = id;
    t.word = word;
    if (b1 > b->nb) {
        /* past the split (byte_fallback spells continuing_subword_prefix /
         * end_of_word_suffix too): tokenizers finds no alignment and keeps
         * the model's offsets as they are */
        t.o0 = b0;
        t.o1 = b1;
    } else if (b1 > b0) {
        t.o0 = s->c[char_of(b, b0)].o0;
        t.o1 = s->c[char_of(b, b1 - 1)].o1;
    } else {
        t.o0 = t.o1 = (s->n ? s->c[0].o0 : 0) + b0;
    }
    if (m->space_ends && id >= 0 && id < m->vocab.n) bli_hf_space_ends(m->vocab.pool + m->vocab.off[id], m->vocab.len[id], &t.lead, &t.trail);
    else t.lead = t.trail = 0;
    return bli_hftokens_push(out, t);
}

/* ----------------------------------------------------------------- BPE */

static uint32_t hash64(uint64_t k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return (uint32_t)k;
}

static int merge_get(const bli_hfmodel *m, int32_t a, int32_t b, uint32_t *rank, int32_t *nid) {
    if (!m->n_merge_slots) return 0;
    uint64_t key = (uint64_t)(uint32_t)a << 32 | (uint32_t)b;
    for (uint32_t i = hash64(key) & (m->n_merge_slots - 1);; i = (i + 1) & (m->n_merge_slots - 1)) {
        if (m->merge_rank[i] == UINT32_MAX) return 0;
        if (m->merge_keys[i] == key) {
            *rank = m->merge_rank[i];
            *nid = (int32_t)m->merge_new[i];
            return 1;
        }
    }
}

typedef struct { int32_t id, len, prev, next; } symbol; /* len in bytes, 0 = merged away */
typedef struct { uint32_t rank; int32_t pos, nid; } cand;

static int cand_less(const cand *a, const cand *b) {
    return a->rank != b->rank ? a->rank < b->rank : a->pos < b->pos;
}

static void heap_push(cand *h, int32_t *n, cand c) {
    int32_t i = (*n)++;
    h[i] = c;
    while (i > 0 && cand_less(&h[i], &h[(i - 1) / 2])) {
        cand t = h[i]; h[i] = h[(i - 1) / 2]; h[(i - 1) / 2] = t;
        i = (i - 1) / 2;
    }
}

static cand heap_pop(cand *h, int32_t *n) {
    cand top = h[0];
    h[0] = h[--(*n)];
    for (int32_t i = 0;;) {
        int32_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < *n && cand_less(&h[l], &h[m])) m = l;
        if (r < *n && cand_less(&h[r], &h[m])) m = r;
        if (m == i) break;
        cand t = h[i]; h[i] = h[m]; h[m] = t;
        i = m;
    }
    return top;
}

static int bpe(const bli_hfmodel *m, const bli_hfstr *s, int32_t word, bli_hftokens *out, bli_hfmwork *w, char *err,
               size_t errlen) {
    splitbuf b = w->b;
    symbol *sym = NULL;
    cand *heap = NULL;
    char *tmp = NULL;
    int32_t *fb = NULL;
    int rc = -1;
    if (splitbuf_fill(&b, s)) goto done;
    if (m->ignore_merges) {
        int32_t id = bli_hfvocab_find(&m->vocab, b.u, (size_t)b.nb);
        if (id >= 0) { rc = emit(m, s, &b, id, 0, b.nb, word, out); goto done; }
    }
    size_t plen = m->cont_prefix ? strlen(m->cont_prefix) : 0, slen = m->eow_suffix ? strlen(m->eow_suffix) : 0;
    /* a character becomes at most its bytes plus prefix and suffix in byte-fallback symbols */
    size_t per = 4 + plen + slen;
    if (per > 4096 || (size_t)b.n > (SIZE_MAX / sizeof *sym - 1) / per) goto done;
    sym = malloc(((size_t)b.n * per + 1) * sizeof *sym);
    tmp = malloc(per + 4);
    fb = malloc(per * sizeof *fb);
    if (!sym || !tmp || !fb) goto done;
    int32_t ns = 0, unk_len = 0, have_unk = 0;
    for (int32_t i = 0; i < b.n; i++) {
        int32_t cb = b.boff[i], ce = b.boff[i + 1], bl = ce - cb;
        size_t k = 0;
        if (i > 0 && plen) memcpy(tmp, m->cont_prefix, plen), k = plen;
        memcpy(tmp + k, b.u + cb, (size_t)bl), k += (size_t)bl;
        if (i == b.n - 1 && slen) memcpy(tmp + k, m->eow_suffix, slen), k += slen;
        int32_t id = bli_hfvocab_find(&m->vocab, tmp, k);
        if (id >= 0) {
            if (have_unk) { sym[ns++] = (symbol){m->unk_id, unk_len, 0, 0}; have_unk = 0; }
            sym[ns++] = (symbol){id, bl, 0, 0};
            continue;
        }
        if (m->byte_fallback) { /* every byte of the piece, prefix and suffix included, as tokenizers */
            int ok = 1;
            for (size_t j = 0; j < k && ok; j++) {
                char code[8];
                snprintf(code, sizeof code, "<0x%02X>", (unsigned char)tmp[j]);
                fb[j] = bli_hfvocab_find(&m->vocab, code, 6);
                ok = fb[j] >= 0;
            }
            if (ok) { /* a pending unk stays pending, after these, as in tokenizers */
                for (size_t j = 0; j < k; j++) sym[ns++] = (symbol){fb[j], 1, 0, 0};
                continue;
            }
        }
        if (m->unk_id < 0) continue; /* no unk token: the character is dropped */
        if (have_unk && m->fuse_unk) unk_len += bl;
        else {
            if (have_unk) sym[ns++] = (symbol){m->unk_id, unk_len, 0, 0};
            have_unk = 1;
            unk_len = bl;
        }
    }
    if (have_unk) sym[ns++] = (symbol){m->unk_id, unk_len, 0, 0};
    for (int32_t i = 0; i < ns; i++) sym[i].prev = i - 1, sym[i].next = i + 1 < ns ? i + 1 : -1;
    heap = malloc(((size_t)ns * 3 + 1) * sizeof *heap); /* ns <= b.n * per: no overflow (checked above) */
    if (!heap) goto done;
    int32_t nh = 0;
    for (int32_t i = 0; i + 1 < ns; i++) {
        uint32_t r;
        int32_t nid;
        if (merge_get(m, sym[i].id, sym[i + 1].id, &r, &nid)) heap_push(heap, &nh, (cand){r, i, nid});
    }
    while (nh > 0) {
        cand top = heap_pop(heap, &nh);
        symbol *cur = &sym[top.pos];
        if (cur->len == 0 || cur->next < 0) continue;
        symbol *right = &sym[cur->next];
        uint32_t r;
        int32_t nid;
        if (!merge_get(m, cur->id, right->id, &r, &nid) || nid != top.nid) continue;
        cur->id = top.nid;
        cur->len += right->len;
        right->len = 0;
        int32_t rn = right->next;
        cur->next = rn;
        if (rn >= 0) sym[rn].prev = top.pos;
        if (nh + 2 > ns * 3) goto done; /* cannot happen: each merge adds at most two */
        if (cur->prev >= 0 && merge_get(m, sym[cur->prev].id, cur->id, &r, &nid))
            heap_push(heap, &nh, (cand){r, cur->prev, nid});
        if (rn >= 0 && merge_get(m, cur->id, sym[rn].id, &r, &nid))
            heap_push(heap, &nh, (cand){r, top.pos, nid});
    }
    int32_t o = 0;
    for (int32_t i = 0; i < ns; i++) {
        if (sym[i].len == 0) continue;
        if (emit(m, s, &b, sym[i].id, o, o + sym[i].len, word, out)) goto done;
        o += sym[i].len;
    }
    rc = 0;
done:
    if (rc) bli_set_err(err, errlen, "tokenizer: out of memory (BPE)");
    free(sym);
    free(heap);
    free(tmp);
    free(fb);
    w->b = b;
    return rc;
}

/* ------------------------------------------------------------- Unigram */

typedef struct { double score; int32_t start, id; } vnode; /* best path ending here; start -1 = none */

static int unigram(const bli_hfmodel *m, const bli_hfstr *s, int32_t word, bli_hftokens *out, bli_hfmwork *w,
                   char *err, size_t errlen) {
    splitbuf b = w->b;
    vnode *best = NULL;
    int32_t *path = NULL;
    int rc = -1;
    if (splitbuf_fill(&b, s)) goto done;
    best = malloc(((size_t)b.n + 1) * sizeof *best);
    path = malloc(((size_t)b.n + 1) * sizeof *path);
    if (!best || !path) goto done;
    for (int32_t i = 0; i <= b.n; i++) best[i].score = 0, best[i].start = -1, best[i].id = 0;
    double unk_score = m->min_score - UNK_PENALTY;
    for (int32_t i = 0; i < b.n; i++) {
        double here = best[i].score;
        int single = 0;
        uint32_t h = 2166136261u; /* FNV-1a of u[boff[i], boff[j]), one character at a time */
        for (int32_t j = i + 1; j <= b.n && b.boff[j] - b.boff[i] <= m->max_piece; j++) {
            for (int32_t x = b.boff[j - 1]; x < b.boff[j]; x++) h = (h ^ (uint8_t)b.u[x]) * 16777619u;
            int32_t id = vocab_find_h(&m->vocab, b.u + b.boff[i], (size_t)(b.boff[j] - b.boff[i]), h);
            if (id < 0) continue;
            double cand = m->scores[id] + here;
            if (best[j].start < 0 || cand > best[j].score) best[j].score = cand, best[j].start = i, best[j].id = id;
            if (j == i + 1) single = 1;
        }
        if (!single) {
            if (m->unk_id < 0) {
                bli_set_err(err, errlen, "tokenizer: Unigram model has no unk_id for an unknown character");
                rc = -2;
                goto done;
            }
            double cand = unk_score + here;
            if (best[i + 1].start < 0 || cand > best[i + 1].score)
                best[i + 1].score = cand, best[i + 1].start = i, best[i + 1].id = m->unk_id;
        }
    }
    /* back from the end: path[] holds the start of each piece, fused unknowns as one */
    int32_t np = 0;
    for (int32_t e = b.n; e > 0;) {
        int32_t st = best[e].start;
        if (best[e].id == m->unk_id) {
            while (st > 0 && best[st].id == m->unk_id) st = best[st].start;
        }
        path[np++] = st;
        e = st;
    }
    int32_t end = b.n;
    /* path is reversed: emit from the front */
    for (int32_t k = np - 1; k >= 0; k--) {
        int32_t st = path[k], en = k > 0 ? path[k - 1] : end;
        int32_t b0 = b.boff[st], b1 = b.boff[en];
        int32_t id = bli_hfvocab_find(&m->vocab, b.u + b0, (size_t)(b1 - b0));
        if (id < 0 && m->byte_fallback) {
            int ok = 1;
            for (int32_t x = b0; x < b1 && ok; x++) {
                char code[8];
                snprintf(code, sizeof code, "<0x%02X>", (unsigned char)b.u[x]);
                ok = bli_hfvocab_find(&m->vocab, code, 6) >= 0;
            }
            if (ok) {
                for (int32_t x = b0; x < b1; x++) {
                    char code[8];
                    snprintf(code, sizeof code, "<0x%02X>", (unsigned char)b.u[x]);
                    if (emit(m, s, &b, bli_hfvocab_find(&m->vocab, code, 6), b0, b1, word, out)) goto done;
                }
                continue;
            }
        }
        if (id < 0) id = m->unk_id;
        if (emit(m, s, &b, id, b0, b1, word, out)) goto done;
    }
    rc = 0;
done:
    if (rc == -1) bli_set_err(err, errlen, "tokenizer: out of memory (Unigram)");
    free(best);
    free(path);
    w->b = b;
    return rc ? -1 : 0;
}

/* ----------------------------------------------------------- WordPiece */

/* Id of prefix + piece (pl + n bytes) given its FNV-1a hash h, or -1. */
static int32_t vocab_find_2(const bli_hfvocab *v, uint32_t h, const char *pre, size_t pl, const char *piece, size_t n) {
    if (!v->n_slots) return -1;
    for (uint32_t i = h & (v->n_slots - 1);; i = (i + 1) & (v->n_slots - 1)) {
        uint64_t e = v->slots[i];
        if (!e) return -1;
        int32_t id = (int32_t)(uint32_t)e - 1;
        if ((uint32_t)(e >> 32) != h || v->len[id] != pl + n) continue;
        const char *str = v->pool + v->off[id];
        if (!memcmp(str, pre, pl) && !memcmp(str + pl, piece, n)) return id;
    }
}

/* A WordPiece token: characters [c0, c1) of the split (inline: a token
 * per piece of every word; the list grows out of line). */
static inline int emit_chars(const bli_hfmodel *m, const bli_hfstr *s, int32_t id, int32_t c0, int32_t c1,
                             int32_t word, bli_hftokens *out) {
    bli_hftoken t = {id, s->c[c0].o0, s->c[c1 - 1].o1, word, 0, 0};
    if (m->space_ends && id >= 0 && id < m->vocab.n)
        bli_hf_space_ends(m->vocab.pool + m->vocab.off[id], m->vocab.len[id], &t.lead, &t.trail);
    if (out->n < out->cap) {
        out->v[out->n++] = t;
        return 0;
    }
    return bli_hftokens_push(out, t);
}

/* tokenizers' WordPiece: a word of more than max_input_chars_per_word
 * characters is one unk; else the greedy longest match from each start
 * ("##" after the first), the whole word unk when a start has none. The
 * candidates from a start are the ends whose piece (prefix included) fits
 * the longest vocabulary entry, tried from the longest down, each one lookup
 * with its hash extended a character at a time: at most min(word, longest
 * entry) lookups per start, which load holds to HF_MAX_WORDPIECE_SPAN
 * whatever the word (bli_hfmodel_read), so a text costs linear time. */
static int wordpiece(const bli_hfmodel *m, const bli_hfstr *s, int32_t word, bli_hftokens *out, bli_hfmwork *w,
                     char *err, size_t errlen) {
    splitbuf b = w->b;
    int rc = -1;
    if (s->n > m->max_chars) { rc = emit_chars(m, s, m->unk_id, 0, s->n, word, out); goto done; }
    if (splitbuf_fill(&b, s)) goto done;
    if (room(&w->hash, &w->hcap, (size_t)b.n + 1, sizeof *w->hash)) goto done;
    uint32_t *hash = w->hash;
    const size_t plen = m->cont_len;
    const uint32_t h_pre = m->cont_hash; /* FNV-1a of the prefix */
    const int32_t first = out->n;
    for (int32_t st = 0; st < b.n;) {
        const char *pre = st > 0 && plen ? m->cont_prefix : "";
        const size_t pl = st > 0 ? plen : 0;
        uint32_t h = st > 0 ? h_pre : 2166136261u;
        int32_t lim = st; /* hash[e] = hash of pre + [st, e), for the ends that fit */
        const int32_t room = m->max_piece - (int32_t)pl + b.boff[st]; /* ends at byte <= room fit */
        while (lim < b.n && b.boff[lim + 1] <= room) {
            for (int32_t x = b.boff[lim]; x < b.boff[lim + 1]; x++) h = (h ^ (uint8_t)b.u[x]) * 16777619u;
            hash[++lim] = h;
        }
        int32_t id = -1, en = lim;
        for (; en > st; en--) {
            id = vocab_find_2(&m->vocab, hash[en], pre, pl, b.u + b.boff[st], (size_t)(b.boff[en] - b.boff[st]));
            if (id >= 0) break;
        }
        if (id < 0) {
            out->n = first;
            rc = emit_chars(m, s, m->unk_id, 0, b.n, word, out);
            goto done;
        }
        if (emit_chars(m, s, id, st, en, word, out)) goto done;
        st = en;
    }
    rc = 0;
done:
    if (rc) bli_set_err(err, errlen, "tokenizer: out of memory (WordPiece)");
    w->b = b;
    return rc;
}

int bli_hfmodel_tokenize(const bli_hfmodel *m, const bli_hfstr *s, int32_t word, bli_hftokens *out, bli_hfmwork *w,
                         char *err, size_t errlen) {
    if (s->n == 0) return 0;
    switch (m->type) {
    case HF_M_BPE: return bpe(m, s, word, out, w, err, errlen);
    case HF_M_UNIGRAM: return unigram(m, s, word, out, w, err, errlen);
    case HF_M_WORDPIECE: return wordpiece(m, s, word, out, w, err, errlen);
    }
    return -1;
}

/* -------------------------------------------------------------- reader */

static char *dup_str(const bli_jv *v) {
    if (!v || v->type != BLI_JSTR || v->len == 0) return NULL;
    char *s = malloc(v->len + 1);
    if (s) memcpy(s, v->str, v->len + 1);
    return s;
}

/* vocab as {"token": id} */
static int read_vocab_object(bli_hfmodel *m, const bli_jv *vocab, char *err, size_t errlen) {
    if (!vocab || vocab->type != BLI_JOBJ || vocab->n == 0 || vocab->n > MAX_VOCAB) {
        bli_set_err(err, errlen, "tokenizer.json: model.vocab must be a non-empty object (at most %d entries)", MAX_VOCAB);
        return -1;
    }
    int64_t max_id = -1;
    for (size_t i = 0; i < vocab->n; i++) {
        const bli_jv *e = &vocab->items[i];
        if (e->type != BLI_JNUM || !e->is_int || e->ival < 0 || e->ival >= MAX_VOCAB) {
            bli_set_err(err, errlen, "tokenizer.json: vocabulary id of %.60s is not an integer in [0, %d)", e->key, MAX_VOCAB);
            return -1;
        }
        if (e->ival > max_id) max_id = e->ival;
    }
    if (max_id >= (int64_t)vocab->n + 65536) {
        bli_set_err(err, errlen, "tokenizer.json: vocabulary ids run to %lld for %zu tokens", (long long)max_id, vocab->n);
        return -1;
    }
    bli_jv *keys = calloc((size_t)max_id + 1, sizeof *keys);
    const bli_jv **strs = calloc((size_t)max_id + 1, sizeof *strs);
    if (!keys || !strs) { free(keys); free(strs); bli_set_err(err, errlen, "out of memory"); return -1; }
    for (size_t i = 0; i < vocab->n; i++) {
        const bli_jv *e = &vocab->items[i];
        keys[e->ival].type = BLI_JSTR;
        keys[e->ival].str = e->key;
        keys[e->ival].len = e->key_len;
        strs[e->ival] = &keys[e->ival];
    }
    int rc = vocab_build_jv(&m->vocab, strs, (int32_t)max_id + 1, err, errlen);
    free(keys);
    free(strs);
    return rc;
}

static int read_merges(bli_hfmodel *m, const bli_jv *merges, char *err, size_t errlen) {
    if (!merges || merges->type != BLI_JARR) { bli_set_err(err, errlen, "tokenizer.json: BPE without merges"); return -1; }
    uint32_t slots = 16;
    while (slots < 2 * merges->n + 2) slots *= 2;
    m->merge_keys = malloc(slots * sizeof *m->merge_keys);
    m->merge_rank = malloc(slots * sizeof *m->merge_rank);
    m->merge_new = malloc(slots * sizeof *m->merge_new);
    m->n_merge_slots = slots;
    size_t cap = 64;
    char *buf = malloc(cap);
    if (!m->merge_keys || !m->merge_rank || !m->merge_new || !buf) { free(buf); bli_set_err(err, errlen, "out of memory"); return -1; }
    for (uint32_t i = 0; i < slots; i++) m->merge_rank[i] = UINT32_MAX;
    size_t plen = m->cont_prefix ? strlen(m->cont_prefix) : 0;
    for (size_t r = 0; r < merges->n; r++) {
        const bli_jv *e = &merges->items[r];
        const char *a, *b;
        size_t al, bl;
        if (e->type == BLI_JSTR) {
            const char *sp = memchr(e->str, ' ', e->len);
            if (!sp || memchr(sp + 1, ' ', e->len - (size_t)(sp + 1 - e->str))) goto bad;
            a = e->str, al = (size_t)(sp - e->str), b = sp + 1, bl = e->len - al - 1;
        } else if (e->type == BLI_JARR && e->n == 2 && e->items[0].type == BLI_JSTR && e->items[1].type == BLI_JSTR) {
            a = e->items[0].str, al = e->items[0].len, b = e->items[1].str, bl = e->items[1].len;
        } else {
            goto bad;
        }
        int32_t ia = bli_hfvocab_find(&m->vocab, a, al), ib = bli_hfvocab_find(&m->vocab, b, bl);
        if (ia < 0 || ib < 0) {
            bli_set_err(err, errlen, "tokenizer.json: merge %zu uses a token that is not in the vocabulary", r);
            free(buf);
            return -1;
        }
        size_t skip = plen && bl >= plen && !memcmp(b, m->cont_prefix, plen) ? plen : 0;
        if (al + bl + 1 > cap) {
            cap = al + bl + 1;
            char *nb = realloc(buf, cap);
            if (!nb) { free(buf); bli_set_err(err, errlen, "out of memory"); return -1; }
            buf = nb;
        }
        memcpy(buf, a, al);
        memcpy(buf + al, b + skip, bl - skip);
        int32_t nid = bli_hfvocab_find(&m->vocab, buf, al + bl - skip);
        if (nid < 0) {
            bli_set_err(err, errlen, "tokenizer.json: merge %zu makes a token that is not in the vocabulary", r);
            free(buf);
            return -1;
        }
        uint64_t key = (uint64_t)(uint32_t)ia << 32 | (uint32_t)ib;
        for (uint32_t k = hash64(key) & (slots - 1);; k = (k + 1) & (slots - 1)) {
            if (m->merge_rank[k] == UINT32_MAX) {
                m->merge_keys[k] = key, m->merge_rank[k] = (uint32_t)r, m->merge_new[k] = (uint32_t)nid;
                break;
            }
            if (m->merge_keys[k] == key) break; /* first rank of a repeated pair wins */
        }
    }
    free(buf);
    return 0;
bad:
    free(buf);
    bli_set_err(err, errlen, "tokenizer.json: BPE merges must be \"a b\" strings or [a, b] pairs");
    return -1;
}

static int32_t unk_from_token(const bli_hfmodel *m, const bli_jv *j, char *err, size_t errlen, int *bad) {
    const bli_jv *u = bli_jget(j, "unk_token");
    *bad = 0;
    if (!u || u->type == BLI_JNULL) return -1;
    if (u->type != BLI_JSTR) { *bad = 1; bli_set_err(err, errlen, "tokenizer.json: unk_token must be a string"); return -1; }
    int32_t id = bli_hfvocab_find(&m->vocab, u->str, u->len);
    if (id < 0) { *bad = 1; bli_set_err(err, errlen, "tokenizer.json: unk_token %.60s is not in the vocabulary", u->str); }
    return id;
}

static void max_piece(bli_hfmodel *m) {
    m->max_piece = 0;
    for (int32_t i = 0; i < m->vocab.n; i++) if ((int32_t)m->vocab.len[i] > m->max_piece) m->max_piece = (int32_t)m->vocab.len[i];
}

/* Python's bool() of an optional member: absent is false. */
static int truthy(const bli_jv *v) { return v && bli_jtruthy(v); }

int bli_hfmodel_read(bli_hfmodel *m, const bli_jv *j, char *err, size_t errlen) {
    memset(m, 0, sizeof *m);
    m->unk_id = -1;
    const bli_jv *t = bli_jget(j, "type");
    const char *ty = t && t->type == BLI_JSTR ? t->str : NULL;
    if (!ty) { /* old files: infer from the fields */
        if (bli_jget(j, "merges")) ty = "BPE";
        else if (bli_jget(j, "max_input_chars_per_word")) ty = "WordPiece";
        else if (bli_jget(j, "vocab") && bli_jget(j, "vocab")->type == BLI_JARR) ty = "Unigram";
        else { bli_set_err(err, errlen, "tokenizer.json: model without a type"); return -1; }
    }
    int bad;
    if (!strcmp(ty, "BPE")) {
        m->type = HF_M_BPE;
        const bli_jv *dr = bli_jget(j, "dropout");
        if (dr && dr->type == BLI_JNUM && dr->num > 0) {
            bli_set_err(err, errlen, "tokenizer.json: BPE dropout is random; bertlens tokenizes deterministically");
            return -1;
        }
        m->cont_prefix = dup_str(bli_jget(j, "continuing_subword_prefix"));
        m->eow_suffix = dup_str(bli_jget(j, "end_of_word_suffix"));
        m->byte_fallback = truthy(bli_jget(j, "byte_fallback"));
        m->ignore_merges = truthy(bli_jget(j, "ignore_merges"));
        m->fuse_unk = truthy(bli_jget(j, "fuse_unk"));
        if (read_vocab_object(m, bli_jget(j, "vocab"), err, errlen)) return -1;
        m->unk_id = unk_from_token(m, j, err, errlen, &bad);
        if (bad) return -1;
        max_piece(m);
        return read_merges(m, bli_jget(j, "merges"), err, errlen);
    }
    if (!strcmp(ty, "WordPiece")) {
        m->type = HF_M_WORDPIECE;
        const bli_jv *p = bli_jget(j, "continuing_subword_prefix"), *mc = bli_jget(j, "max_input_chars_per_word");
        m->cont_prefix = p && p->type == BLI_JSTR ? dup_str(p) : NULL;
        if (!p) m->cont_prefix = dup_str(&(bli_jv){.type = BLI_JSTR, .str = "##", .len = 2});
        m->cont_len = m->cont_prefix ? strlen(m->cont_prefix) : 0;
        m->cont_hash = fnv1a(m->cont_prefix ? m->cont_prefix : "", m->cont_len);
        /* as tokenizers reads it (a usize; 0: every word is unk); absent: 100.
         * Past INT32_MAX it is the same as INT32_MAX: no word is that long. */
        if (mc && (mc->type != BLI_JNUM || !mc->is_int || mc->ival < 0)) {
            bli_set_err(err, errlen, "tokenizer.json: WordPiece max_input_chars_per_word must be an integer >= 0");
            return -1;
        }
        m->max_chars = !mc ? 100 : mc->ival < INT32_MAX ? (int32_t)mc->ival : INT32_MAX;
        if (read_vocab_object(m, bli_jget(j, "vocab"), err, errlen)) return -1;
        m->unk_id = unk_from_token(m, j, err, errlen, &bad);
        if (bad) return -1;
        if (m->unk_id < 0) { bli_set_err(err, errlen, "tokenizer.json: WordPiece needs an unk_token"); return -1; }
        max_piece(m);
        /* a start tries at most min(word, longest entry) ends, and a word is
         * at most max_input_chars_per_word characters */
        int32_t span = m->max_chars < m->max_piece ? m->max_chars : m->max_piece;
        if (span > HF_MAX_WORDPIECE_SPAN) {
            bli_set_err(err, errlen, "tokenizer.json: WordPiece max_input_chars_per_word %d with a piece of %d bytes: "
                        "the search per character is up to %d (at most %d)", (int)m->max_chars, (int)m->max_piece,
                        (int)span, HF_MAX_WORDPIECE_SPAN);
            return -1;
        }
        return 0;
    }
    if (!strcmp(ty, "Unigram")) {
        m->type = HF_M_UNIGRAM;
        const bli_jv *v = bli_jget(j, "vocab"), *u = bli_jget(j, "unk_id");
        if (!v || v->type != BLI_JARR || v->n == 0 || v->n > MAX_VOCAB) {
            bli_set_err(err, errlen, "tokenizer.json: Unigram vocab must be a non-empty list (at most %d)", MAX_VOCAB);
            return -1;
        }
        const bli_jv **strs = calloc(v->n, sizeof *strs);
        m->scores = malloc(v->n * sizeof *m->scores);
        if (!strs || !m->scores) { free(strs); bli_set_err(err, errlen, "out of memory"); return -1; }
        m->min_score = 1e300;
        for (size_t i = 0; i < v->n; i++) {
            const bli_jv *e = &v->items[i];
            if (e->type != BLI_JARR || e->n != 2 || e->items[0].type != BLI_JSTR || e->items[1].type != BLI_JNUM) {
                free(strs);
                bli_set_err(err, errlen, "tokenizer.json: Unigram vocab entry %zu is not [piece, score]", i);
                return -1;
            }
            strs[i] = &e->items[0];
            m->scores[i] = e->items[1].num;
            if (m->scores[i] < m->min_score) m->min_score = m->scores[i];
        }
        int rc = vocab_build_jv(&m->vocab, strs, (int32_t)v->n, err, errlen);
        free(strs);
        if (rc) return -1;
        /* the lattice tries every piece length up to the longest at each
         * character: a 100 KB piece made a 100 KB text take 12 s */
        for (int32_t i = 0; i < m->vocab.n; i++)
            if (m->vocab.len[i] > HF_MAX_PIECE_BYTES) {
                bli_set_err(err, errlen, "tokenizer.json: Unigram piece %d is %u bytes long (at most %d)", (int)i,
                            m->vocab.len[i], HF_MAX_PIECE_BYTES);
                return -1;
            }
        if (u && u->type == BLI_JNUM) {
            if (!u->is_int || u->ival < 0 || u->ival >= (int64_t)v->n) {
                bli_set_err(err, errlen, "tokenizer.json: Unigram unk_id is not in the vocabulary");
                return -1;
            }
            m->unk_id = (int32_t)u->ival;
        }
        m->byte_fallback = truthy(bli_jget(j, "byte_fallback"));
        max_piece(m);
        return 0;
    }
    bli_set_err(err, errlen, "tokenizer.json: model %.60s is not supported (BPE, Unigram, WordPiece are)", ty);
    return -1;
}

/* WordPiece over vocab[i] (lens[i] bytes): BERT's vocab.txt as a bundle
 * stores it, "##" continuations. The caller checked the ids and limits
 * (bl_tokenizer_new). */
int bli_hfmodel_wordpiece(bli_hfmodel *m, const char *const *vocab, const uint32_t *lens, int32_t n, int32_t unk_id,
                          int32_t max_chars, char *err, size_t errlen) {
    memset(m, 0, sizeof *m);
    m->type = HF_M_WORDPIECE;
    m->unk_id = unk_id;
    m->max_chars = max_chars;
    m->cont_prefix = malloc(3);
    if (!m->cont_prefix) { bli_set_err(err, errlen, "out of memory"); return -1; }
    memcpy(m->cont_prefix, "##", 3);
    m->cont_len = 2;
    m->cont_hash = fnv1a(m->cont_prefix, m->cont_len);
    if (vocab_build(&m->vocab, vocab, lens, n, err, errlen)) return -1;
    max_piece(m);
    return 0;
}

void bli_hfmodel_free(bli_hfmodel *m) {
    free(m->vocab.pool);
    free(m->vocab.off);
    free(m->vocab.len);
    free(m->vocab.slots);
    free(m->merge_keys);
    free(m->merge_rank);
    free(m->merge_new);
    free(m->cont_prefix);
    free(m->eow_suffix);
    free(m->scores);
    memset(m, 0, sizeof *m);
}
