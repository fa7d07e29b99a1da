/* hf_tok_text.c — the tokenizer.json pipeline's strings: a bli_hfstr is a
 * text as code points, each with the byte range of the original text it
 * stands for (its alignment); the growable arrays, UTF-8 output and the
 * White_Space test every stage uses. The floor below the normalizers,
 * patterns and pre-tokenizers (hf_tok_norm.c, hf_tok_pattern.c,
 * hf_tok_pretok.c).
 */
#include "hf_tok_text.h"
#include "base/error.h"
#include "unicode.h"
#include "utf8.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ strings */

int bli_hfstr_reserve(bli_hfstr *s, int64_t need) {
    if (need < 0 || need > INT32_MAX / 2) return -1;
    if (need <= s->cap) return 0;
    int64_t cap = s->cap ? s->cap : 16;
    while (cap < need) cap *= 2;
    if ((uint64_t)cap > SIZE_MAX / sizeof *s->c) return -1; /* wasm32: size_t has 32 bits */
    bli_hfch *c = realloc(s->c, (size_t)cap * sizeof *c);
    if (!c) return -1;
    s->c = c;
    s->cap = (int32_t)cap;
    return 0;
}

void bli_hfstr_free(bli_hfstr *s) {
    free(s->c);
    memset(s, 0, sizeof *s);
}

int bli_hfstr_copy(bli_hfstr *dst, const bli_hfstr *src, int32_t from, int32_t to) {
    if (bli_hfstr_reserve(dst, to - from + 1)) return -1;
    if (to > from) memcpy(dst->c, src->c + from, (size_t)(to - from) * sizeof *dst->c);
    dst->n = to - from;
    return 0;
}

size_t bli_hf_utf8_put(char *out, uint32_t c) {
    if (c < 0x80) { out[0] = (char)c; return 1; }
    if (c < 0x800) { out[0] = (char)(0xC0 | c >> 6); out[1] = (char)(0x80 | (c & 0x3F)); return 2; }
    if (c < 0x10000) {
        out[0] = (char)(0xE0 | c >> 12); out[1] = (char)(0x80 | ((c >> 6) & 0x3F)); out[2] = (char)(0x80 | (c & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | c >> 18); out[1] = (char)(0x80 | ((c >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((c >> 6) & 0x3F)); out[3] = (char)(0x80 | (c & 0x3F));
    return 4;
}

static int32_t utf8_size(uint32_t c) { return c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4; }

int32_t bli_hfstr_utf8_len(const bli_hfstr *s, int32_t from, int32_t to) {
    int32_t n = 0;
    for (int32_t i = from; i < to; i++) n += utf8_size(s->c[i].cp);
    return n;
}

int64_t bli_hfstr_utf8(const bli_hfstr *s, int32_t from, int32_t to, char **buf, size_t *cap) {
    size_t need = 4 * (size_t)(to - from) + 1;
    if (need > *cap) {
        char *b = realloc(*buf, need);
        if (!b) return -1;
        *buf = b;
        *cap = need;
    }
    size_t n = 0;
    for (int32_t i = from; i < to; i++) n += bli_hf_utf8_put(*buf + n, s->c[i].cp);
    (*buf)[n] = 0;
    return (int64_t)n;
}

int bli_hf_is_ws(uint32_t cp) {
    if (cp < 0x80) return cp == ' ' || (cp >= 9 && cp <= 13);
    return bli_uc_gc(cp) == BL_GC_SPACE;
}

int bli_hf_flags_of(uint32_t c, int want) {
    int f = bli_uc_class(c);
    if (c < 0xD800 || c > 0xDFFF) { /* surrogates never come out of a strict UTF-8 decode */
        uint32_t d[BL_UC_MAX_DECOMP], l[BL_UC_MAX_LOWER];
        if ((want & HF_F_DECOMP) && (bli_uc_decompose(c, d) != 1 || d[0] != c)) f |= HF_F_DECOMP;
        if ((want & HF_F_CCC) && bli_uc_ccc(c)) f |= HF_F_CCC;
        if ((want & HF_F_LOWER) && (bli_uc_lower(c, l) != 1 || l[0] != c)) f |= HF_F_LOWER;
    }
    if ((want & HF_F_WS) && bli_hf_is_ws(c)) f |= HF_F_WS;
    return f;
}

int bli_hf_flags(uint32_t c) { return bli_hf_flags_of(c, HF_F_ALL); }

bli_hfbmp *bli_hf_bmp_new(void) {
    bli_hfbmp *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    int32_t n_dec = 0;
    for (uint32_t c = 0; c < 0x10000; c++) {
        t->flags[c] = (uint8_t)bli_hf_flags(c);
        t->ccc[c] = (uint8_t)(t->flags[c] & HF_F_CCC ? bli_uc_ccc(c) : 0);
        n_dec += (t->flags[c] & HF_F_DECOMP) && !(c >= 0xAC00 && c <= 0xD7A3);
        uint32_t l[BL_UC_MAX_LOWER];
        if ((t->flags[c] & HF_F_LOWER) && bli_uc_lower(c, l) == 1 && l[0] < 0x10000 && l[0]) t->lower[c] = (uint16_t)l[0];
        const int f = t->flags[c], k = f & HF_F_CLASS;
        t->bert[c] = (uint8_t)((k == BL_UC_REMOVE || (k == BL_UC_SPACE && c != ' ') ? HF_B_CLEANED : 0) |
                               (k == BL_UC_CJK ? HF_B_CJK : 0) | (f & HF_F_LOWER ? HF_B_LOWER : 0) |
                               (f & HF_F_WS || k == BL_UC_PUNCT ? HF_B_SPLIT : 0));
    }
    t->dec = malloc(((size_t)n_dec + 1) * sizeof *t->dec);
    if (!t->dec || n_dec >= 0xFFFF) {
        bli_hf_bmp_free(t);
        return NULL;
    }
    int32_t k = 0;
    for (uint32_t c = 0; c < 0x10000; c++) {
        if (!(t->flags[c] & HF_F_DECOMP) || (c >= 0xAC00 && c <= 0xD7A3)) continue; /* Hangul: arithmetic */
        t->dec[k][0] = (uint32_t)bli_uc_decompose(c, &t->dec[k][1]);
        t->dix[c] = (uint16_t)++k;
    }
    return t;
}

void bli_hf_bmp_free(bli_hfbmp *b) {
    if (b) free(b->dec);
    free(b);
}

int bli_hfdests_push(bli_hfdests *d, uint32_t cp, int32_t change) {
    if (d->n == d->cap) {
        int32_t cap = d->cap ? 2 * d->cap : 64;
        if (cap > INT32_MAX / 4 || (size_t)cap > SIZE_MAX / sizeof *d->d) return -1;
        bli_hfdest *v = realloc(d->d, (size_t)cap * sizeof *v);
        if (!v) return -1;
        d->d = v;
        d->cap = cap;
    }
    d->d[d->n].cp = cp;
    d->d[d->n++].change = change;
    return 0;
}

/* s[0..n) as code points in a new array *out of *count entries (the caller
 * frees it); -1 if s is not valid UTF-8 or memory runs out. */
int bli_hf_utf8_to_cps(const char *s, size_t n, uint32_t **out, int32_t *count) {
    if (n > (size_t)INT32_MAX - 1 || n + 1 > SIZE_MAX / sizeof(uint32_t)) return -1;
    uint32_t *v = malloc((n + 1) * sizeof *v);
    if (!v) return -1;
    int32_t k = 0;
    for (size_t i = 0; i < n;) {
        size_t len = bli_utf8_next((const unsigned char *)s + i, n - i, &v[k], NULL, NULL);
        if (!len) {
            free(v);
            return -1;
        }
        k++;
        i += len;
    }
    *out = v;
    *count = k;
    return 0;
}
