/* hf_tok_pattern.c — the split patterns of tokenizer.json (Split, ByteLevel,
 * Replace, Whitespace).
 *
 * tokenizers runs regular expressions (Oniguruma) for a few patterns; this
 * file has no regex engine: it recognizes the patterns the supported families
 * ship, each written out as a matcher with the same leftmost, first
 * alternative semantics, and refuses any other pattern by quoting it.
 *
 *   GPT-2 (ByteLevel):  's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
 *   Llama 3 (EuroBERT's Split):
 *       (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*
 *       |\s*[\r\n]+|\s+(?!\S)|\s+
 *   DeBERTa-v2/v3:      \s{2,}|[\n\r\t]      (older converters: " {2,}")
 *   Split / Whitespace: \s+   \w+|[^\w\s]+   \p{N}+ / \d+ style digit runs
 *
 * A regular expression is one of these, compared as text (so at most the
 * longest of them, GPT-2's); a String pattern of any length is searched in
 * linear time (KMP).
 */
#include "hf_tok_pattern.h"
#include "base/error.h"
#include "unicode.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define LLAMA3_RE "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
#define GPT2_RE "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+"

/* ------------------------------------------------------------ patterns */

static int is_letter(uint32_t c) {
    if (c < 0x80) return (c | 32) >= 'a' && (c | 32) <= 'z';
    return bli_uc_gc(c) == BL_GC_LETTER;
}
static int is_number(uint32_t c) {
    if (c < 0x80) return c >= '0' && c <= '9';
    return bli_uc_gc(c) == BL_GC_NUMBER;
}
static int is_word(uint32_t c) { return bli_uc_is_word(c); }

static int spans_push(bli_hfspans *o, int32_t s, int32_t e, int m) {
    if (o->n == o->cap) {
        int32_t cap = o->cap ? 2 * o->cap : 32;
        if (cap > INT32_MAX / 16 || (size_t)cap > SIZE_MAX / sizeof *o->v) return -1;
        bli_hfspan *v = realloc(o->v, (size_t)cap * sizeof *v);
        if (!v) return -1;
        o->v = v;
        o->cap = cap;
    }
    o->v[o->n].s = s, o->v[o->n].e = e, o->v[o->n++].m = m;
    return 0;
}

/* Length of the match of GPT-2's pattern at i (always >= 1). */
static int32_t gpt2_at(const bli_hfch *c, int32_t n, int32_t i) {
    uint32_t x = c[i].cp;
    if (x == '\'' && i + 1 < n) {
        uint32_t y = c[i + 1].cp;
        if (y == 's' || y == 't' || y == 'm' || y == 'd') return 2;
        if (i + 2 < n) {
            uint32_t z = c[i + 2].cp;
            if ((y == 'r' && z == 'e') || (y == 'v' && z == 'e') || (y == 'l' && z == 'l')) return 3;
        }
    }
    int32_t j = i + (x == ' ' && i + 1 < n ? 1 : 0);
    uint32_t f = c[j].cp;
    if (j > i || x != ' ') {
        int32_t k = j;
        if (is_letter(f)) { while (k < n && is_letter(c[k].cp)) k++; return k - i; }
        if (is_number(f)) { while (k < n && is_number(c[k].cp)) k++; return k - i; }
        if (!bli_hf_is_ws(f)) {
            while (k < n && !bli_hf_is_ws(c[k].cp) && !is_letter(c[k].cp) && !is_number(c[k].cp)) k++;
            return k - i;
        }
    }
    /* whitespace run: \s+(?!\S) backs off one character before a non-space */
    int32_t k = i;
    while (k < n && bli_hf_is_ws(c[k].cp)) k++;
    if (k == n || k - i == 1) return k - i;
    return k - i - 1;
}

/* Simple case folding onto the letters of Llama 3's contractions: ASCII
 * capitals, and U+017F (long s), which folds to "s" (tokenizers' Oniguruma
 * matches "'ſ" as "'s"). */
static uint32_t fold_contraction(uint32_t c) {
    if (c >= 'A' && c <= 'Z') return c | 32;
    return c == 0x17F ? 's' : c;
}

/* Length of the match of Llama 3's pattern at i (always >= 1): the first
 * alternative that matches, as a backtracking engine takes it. */
static int32_t llama3_at(const bli_hfch *c, int32_t n, int32_t i) {
    const uint32_t x = c[i].cp;
    if (x == '\'' && i + 1 < n) { /* (?i:'s|'t|'re|'ve|'m|'ll|'d) */
        const uint32_t y = fold_contraction(c[i + 1].cp);
        if (y == 's' || y == 't' || y == 'm' || y == 'd') return 2;
        if (i + 2 < n) {
            const uint32_t z = fold_contraction(c[i + 2].cp);
            if ((y == 'r' && z == 'e') || (y == 'v' && z == 'e') || (y == 'l' && z == 'l')) return 3;
        }
    }
    /* [^\r\n\p{L}\p{N}]?\p{L}+ : one leading character that is none of those, if letters follow */
    int32_t j = i;
    if (x != '\r' && x != '\n' && !is_letter(x) && !is_number(x) && i + 1 < n && is_letter(c[i + 1].cp)) j = i + 1;
    if (is_letter(c[j].cp)) {
        while (j < n && is_letter(c[j].cp)) j++;
        return j - i;
    }
    if (is_number(x)) { /* \p{N}{1,3} */
        for (j = i; j < n && j - i < 3 && is_number(c[j].cp);) j++;
        return j - i;
    }
    /*  ?[^\s\p{L}\p{N}]+[\r\n]* */
    j = i + (x == ' ' && i + 1 < n ? 1 : 0);
    if (!bli_hf_is_ws(c[j].cp) && !is_letter(c[j].cp) && !is_number(c[j].cp)) {
        while (j < n && !bli_hf_is_ws(c[j].cp) && !is_letter(c[j].cp) && !is_number(c[j].cp)) j++;
        while (j < n && (c[j].cp == '\r' || c[j].cp == '\n')) j++;
        return j - i;
    }
    /* a whitespace run [i, k): \s*[\r\n]+ ends after its last line break;
     * else \s+(?!\S) backs off one character before a non-space; else \s+ */
    int32_t k = i, nl = -1;
    for (; k < n && bli_hf_is_ws(c[k].cp); k++)
        if (c[k].cp == '\r' || c[k].cp == '\n') nl = k;
    if (nl >= 0) return nl + 1 - i;
    if (k == n || k - i == 1) return k - i;
    return k - i - 1;
}

int bli_hfpat_find(const bli_hfpat *p, const bli_hfstr *s, bli_hfspans *out) {
    out->n = 0;
    const bli_hfch *c = s->c;
    int32_t n = s->n, prev = 0;
#define MATCH(a, b) do { \
        if ((a) > prev && spans_push(out, prev, (a), 0)) return -1; \
        if (spans_push(out, (a), (b), 1)) return -1; \
        prev = (b); \
    } while (0)
    if (p->kind == HF_PAT_STRING) {
        /* Knuth-Morris-Pratt: each occurrence from the end of the last one
         * (a regex's leftmost, non-overlapping matches of the literal), in
         * O(n + pattern) (comparing at every position: a 50,000-character
         * pattern made a 100 KB text take 2.5 s) */
        for (int32_t i = 0, q = 0; i < n; i++) {
            while (q > 0 && c[i].cp != p->cps[q]) q = p->fail[q - 1];
            if (c[i].cp == p->cps[q]) q++;
            if (q == p->n) {
                MATCH(i + 1 - q, i + 1);
                q = 0;
            }
        }
        if (n > prev && spans_push(out, prev, n, 0)) return -1;
        return 0;
    }
    for (int32_t i = 0; i < n;) {
        uint32_t x = c[i].cp;
        int32_t len = 0;
        switch (p->kind) {
        case HF_PAT_STRING: break; /* above */
        case HF_PAT_CHAR_WS: len = bli_hf_is_ws(x); break;
        case HF_PAT_CHAR_PUNCT: len = bli_uc_class(x) == BL_UC_PUNCT; break;
        case HF_PAT_CHAR_DIGIT: len = bli_uc_is_numeric(x); break; /* Rust's is_numeric, not \p{N} */
        case HF_PAT_CHAR: len = x == p->cps[0]; break;
        case HF_PAT_RE_GPT2: len = gpt2_at(c, n, i); break;
        case HF_PAT_RE_LLAMA3: len = llama3_at(c, n, i); break;
        case HF_PAT_RE_SPACES2_NRT:
        case HF_PAT_RE_SPACES2:
        case HF_PAT_RE_WS_RUN: {
            int32_t k = i;
            int (*sp)(uint32_t) = p->kind == HF_PAT_RE_SPACES2 ? NULL : bli_hf_is_ws;
            while (k < n && (sp ? sp(c[k].cp) : c[k].cp == ' ')) k++;
            if (p->kind == HF_PAT_RE_WS_RUN) len = k - i;
            else if (k - i >= 2) len = k - i;
            else if (p->kind == HF_PAT_RE_SPACES2_NRT && (x == '\n' || x == '\r' || x == '\t')) len = 1;
            break;
        }
        case HF_PAT_RE_DIGIT_RUN: {
            int32_t k = i;
            while (k < n && is_number(c[k].cp)) k++;
            len = k - i;
            break;
        }
        case HF_PAT_RE_WORD_OR_PUNCT: {
            int32_t k = i;
            if (is_word(x)) while (k < n && is_word(c[k].cp)) k++;
            else if (!bli_hf_is_ws(x)) while (k < n && !is_word(c[k].cp) && !bli_hf_is_ws(c[k].cp)) k++;
            len = k - i;
            break;
        }
        }
        if (len > 0) {
            MATCH(i, i + len);
            i += len;
        } else {
            i++;
        }
    }
    if (n > prev && spans_push(out, prev, n, 0)) return -1;
#undef MATCH
    return 0;
}

int32_t bli_hfpat_min_len(const bli_hfpat *p) {
    if (p->kind == HF_PAT_STRING) return p->n;
    if (p->kind == HF_PAT_RE_SPACES2) return 2; /* " {2,}" */
    return 1; /* one character, or a pattern that matches one */
}

int bli_hfpat_read(bli_hfpat *p, const bli_jv *pattern, char *err, size_t errlen) {
    memset(p, 0, sizeof *p);
    const bli_jv *str = bli_jget(pattern, "String"), *re = bli_jget(pattern, "Regex");
    if (str && str->type == BLI_JSTR) {
        if (str->len == 0) { bli_set_err(err, errlen, "tokenizer.json: empty String pattern"); return -1; }
        if (bli_hf_utf8_to_cps(str->str, str->len, &p->cps, &p->n)) { bli_set_err(err, errlen, "tokenizer.json: bad pattern"); return -1; }
        p->kind = p->n == 1 ? HF_PAT_CHAR : HF_PAT_STRING;
        if (p->kind == HF_PAT_STRING) { /* fail[k]: the longest proper border of cps[0..k] */
            p->fail = malloc((size_t)p->n * sizeof *p->fail);
            if (!p->fail) { bli_set_err(err, errlen, "out of memory"); return -1; }
            p->fail[0] = 0;
            for (int32_t k = 1, b = 0; k < p->n; k++) {
                while (b > 0 && p->cps[k] != p->cps[b]) b = p->fail[b - 1];
                if (p->cps[k] == p->cps[b]) b++;
                p->fail[k] = b;
            }
        }
        return 0;
    }
    if (re && re->type == BLI_JSTR) {
        static const struct { const char *re; int kind; } known[] = {
            {GPT2_RE, HF_PAT_RE_GPT2},
            {LLAMA3_RE, HF_PAT_RE_LLAMA3},
            {"\\s{2,}|[\\n\\r\\t]", HF_PAT_RE_SPACES2_NRT},
            {" {2,}", HF_PAT_RE_SPACES2},
            {"\\s+", HF_PAT_RE_WS_RUN},
            {"\\w+|[^\\w\\s]+", HF_PAT_RE_WORD_OR_PUNCT},
            {"\\p{N}+", HF_PAT_RE_DIGIT_RUN},
        };
        for (size_t k = 0; k < sizeof known / sizeof known[0]; k++)
            if (strlen(known[k].re) == re->len && !memcmp(known[k].re, re->str, re->len)) {
                p->kind = known[k].kind;
                return 0;
            }
        bli_set_err(err, errlen, "tokenizer.json: regular expression %.120s is not supported (bertlens knows the "
                    "patterns of GPT-2/RoBERTa/ModernBERT and Llama 3/EuroBERT byte-level BPE and DeBERTa)", re->str);
        return -1;
    }
    bli_set_err(err, errlen, "tokenizer.json: pattern is neither {\"String\"} nor {\"Regex\"}");
    return -1;
}

void bli_hfpat_free(bli_hfpat *p) {
    free(p->cps);
    free(p->fail);
    memset(p, 0, sizeof *p);
}
