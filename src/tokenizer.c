/* tokenizer.c — BERT WordPiece tokenizer, identical to Hugging Face's
 * BertTokenizerFast (tokenizers: BertNormalizer + BertPreTokenizer +
 * WordPiece + the [CLS] A [SEP] B [SEP] template).
 *
 * Pipeline for one text:
 *   1. decode UTF-8 (strict; invalid -> error with the byte offset) into code
 *      points, remembering each one's UTF-16 offset in the original text;
 *   2. split out special tokens typed in the text ([CLS], [SEP], ... matched
 *      case-sensitively on the raw text, anywhere, as HF's added tokens);
 *   3. normalize each remaining segment, in HF's order: clean-up (drop
 *      controls, whitespace -> ' '), pad CJK ideographs with spaces, NFD +
 *      drop non-spacing marks, full lower-casing. Every normalized character
 *      carries `src`, the original character it came from (HF's alignments);
 *   4. pre-tokenize: split on spaces, isolate punctuation -> words;
 *   5. WordPiece each word (greedy longest match, "##" continuation);
 *      a token's offsets run from its first character's source start to its
 *      last character's source end;
 *   6. assemble [CLS] A [SEP] (B [SEP]) and truncate longest-first.
 */
#include "bertlens.h"
#include "bundle.h" /* BL_MAX_CHARS_PER_WORD, BL_MAX_TOKEN_BYTES: the limits bundles share */
#include "error.h"
#include "hf_tokenizer.h"
#include "sizes.h"
#include "unicode.h"
#include "utf8.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TEXT_BYTES (64u << 20) /* longer texts are refused, keeps every index in int32 */
#define N_SPECIAL 5

struct bl_tokenizer {
    bl_tokenizer_opts opts;
    int32_t n_vocab;
    char *pool;             /* all token strings, each NUL-terminated        */
    uint32_t *str_off;      /* [n_vocab] offset of token i's string in pool  */
    uint32_t *str_len;      /* [n_vocab] its length in bytes                 */
    uint32_t *slots;        /* [n_slots] hash table: token id + 1, 0 = empty */
    uint32_t n_slots;       /* power of two, >= 2 * n_vocab                  */
    uint32_t max_piece;     /* longest token in bytes (without "##")         */
    int32_t special_ids[N_SPECIAL]; /* unk, cls, sep, pad, mask (-1 = none) */
    uint8_t *bmp;           /* [0x10000] per BMP code point: BL_UC_* class in
                               bits 0-2 | BMP_DECOMP | BMP_CCC | BMP_LOWER;
                               saves the binary searches on the hot path    */
    bli_hftok *hf;          /* a bundle's tokenizer.json: bl_tokenize runs it
                               instead of the WordPiece above (then unused) */
    int32_t max_len;        /* tokenizer.model_max_length, 0: none           */
};

#define BMP_DECOMP 0x08 /* has a canonical decomposition      */
#define BMP_CCC 0x10    /* non-zero canonical combining class */
#define BMP_LOWER 0x20  /* lower-casing changes it            */


/* ------------------------------------------------------------ vocabulary */

static uint32_t fnv1a(uint32_t h, const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t)s[i]) * 16777619u;
    return h;
}
#define FNV_SEED 2166136261u

/* Id of prefix + piece (prefix "" or "##"), or -1, given
 * h = fnv1a(fnv1a(FNV_SEED, prefix), piece). */
static int32_t vocab_find(const bl_tokenizer *t, uint32_t h, const char *prefix, size_t plen, const char *piece,
                          size_t n) {
    for (uint32_t i = h & (t->n_slots - 1);; i = (i + 1) & (t->n_slots - 1)) {
        uint32_t v = t->slots[i];
        if (v == 0) return -1;
        int32_t id = (int32_t)v - 1;
        const char *s = t->pool + t->str_off[id];
        if (t->str_len[id] == plen + n && memcmp(s, prefix, plen) == 0 && memcmp(s + plen, piece, n) == 0)
            return id;
    }
}

bl_tokenizer *bl_tokenizer_new(const char *const *vocab, const uint32_t *vocab_len, int32_t n_vocab,
                               const bl_tokenizer_opts *opts, char *err, size_t errlen) {
    if (!vocab || !vocab_len || !opts || n_vocab <= 0 || n_vocab > (1 << 24)) {
        bli_set_err(err, errlen, "tokenizer: bad arguments (vocabulary of %d entries)", (int)n_vocab);
        return NULL;
    }
    const int32_t specials[N_SPECIAL] = {opts->unk_id, opts->cls_id, opts->sep_id, opts->pad_id, opts->mask_id};
    for (int k = 0; k < N_SPECIAL; k++) {
        int required = k < 3;
        if (specials[k] >= n_vocab || (required && specials[k] < 0) || specials[k] < -1) {
            bli_set_err(err, errlen, "tokenizer: special token id %d out of range (vocabulary of %d)",
                    (int)specials[k], (int)n_vocab);
            return NULL;
        }
    }
    if (opts->max_chars_per_word < 0) { /* 0: every word is [UNK], as in Hugging Face */
        bli_set_err(err, errlen, "tokenizer: max_chars_per_word %d is negative", (int)opts->max_chars_per_word);
        return NULL;
    }
    size_t total = 0;
    uint32_t longest = 0;
    for (int32_t i = 0; i < n_vocab; i++) {
        if (vocab_len[i] > longest) longest = vocab_len[i];
        if (!vocab[i] && vocab_len[i]) {
            bli_set_err(err, errlen, "tokenizer: vocabulary entry %d is NULL", (int)i);
            return NULL;
        }
        if (vocab_len[i] > BL_MAX_TOKEN_BYTES) {
            bli_set_err(err, errlen, "tokenizer: vocabulary entry %d is %u bytes long (at most %u)", (int)i,
                        vocab_len[i], BL_MAX_TOKEN_BYTES);
            return NULL;
        }
        total += vocab_len[i] + 1;
    }
    if (total > UINT32_MAX / 2) {
        bli_set_err(err, errlen, "tokenizer: vocabulary too large");
        return NULL;
    }
    /* WordPiece tries up to min(max_chars_per_word, longest entry) pieces
     * per character: one of them must be within BL_MAX_CHARS_PER_WORD */
    if (opts->max_chars_per_word > (int32_t)BL_MAX_CHARS_PER_WORD && longest > BL_MAX_CHARS_PER_WORD) {
        bli_set_err(err, errlen, "tokenizer: max_chars_per_word %d with a vocabulary entry of %u bytes: the WordPiece "
                    "search per character is the smaller of the two (at most %u)", (int)opts->max_chars_per_word,
                    longest, BL_MAX_CHARS_PER_WORD);
        return NULL;
    }
    bl_tokenizer *t = calloc(1, sizeof *t);
    if (!t) goto oom;
    t->opts = *opts;
    t->n_vocab = n_vocab;
    t->n_slots = 1;
    while (t->n_slots < 2u * (uint32_t)n_vocab) t->n_slots <<= 1;
    t->pool = malloc(total);
    t->str_off = malloc(sizeof(uint32_t) * (size_t)n_vocab);
    t->str_len = malloc(sizeof(uint32_t) * (size_t)n_vocab);
    t->slots = calloc(t->n_slots, sizeof(uint32_t));
    if (!t->pool || !t->str_off || !t->str_len || !t->slots) goto oom;
    size_t off = 0;
    for (int32_t i = 0; i < n_vocab; i++) {
        uint32_t n = vocab_len[i];
        if (n) memcpy(t->pool + off, vocab[i], n);
        t->pool[off + n] = 0;
        t->str_off[i] = (uint32_t)off;
        t->str_len[i] = n;
        off += n + 1;
        const char *s = t->pool + t->str_off[i];
        uint32_t piece = (n >= 2 && s[0] == '#' && s[1] == '#') ? n - 2 : n;
        if (piece > t->max_piece) t->max_piece = piece;
        /* Insert; a duplicate string maps to its LAST id (as HF's vocab map). */
        uint32_t h = fnv1a(FNV_SEED, s, n);
        for (uint32_t j = h & (t->n_slots - 1);; j = (j + 1) & (t->n_slots - 1)) {
            uint32_t v = t->slots[j];
            if (v == 0 || (t->str_len[v - 1] == n && memcmp(t->pool + t->str_off[v - 1], s, n) == 0)) {
                t->slots[j] = (uint32_t)i + 1;
                break;
            }
        }
    }
    for (int k = 0; k < N_SPECIAL; k++) {
        t->special_ids[k] = specials[k];
        if (specials[k] >= 0 && t->str_len[specials[k]] == 0) t->special_ids[k] = -1; /* nothing to match */
    }
    t->bmp = malloc(0x10000);
    if (!t->bmp) goto oom;
    for (uint32_t c = 0; c < 0x10000; c++) {
        uint32_t d[BL_UC_MAX_DECOMP], l[BL_UC_MAX_LOWER];
        int f = bli_uc_class(c);
        if (c < 0xD800 || c > 0xDFFF) {
            if (bli_uc_decompose(c, d) != 1 || d[0] != c) f |= BMP_DECOMP;
            if (bli_uc_ccc(c)) f |= BMP_CCC;
            if (bli_uc_lower(c, l) != 1 || l[0] != c) f |= BMP_LOWER;
        }
        t->bmp[c] = (uint8_t)f;
    }
    return t;
oom:
    bl_tokenizer_free(t);
    bli_set_err(err, errlen, "tokenizer: out of memory");
    return NULL;
}

void bl_tokenizer_free(bl_tokenizer *t) {
    if (!t) return;
    bli_hftok_free(t->hf);
    free(t->pool);
    free(t->str_off);
    free(t->str_len);
    free(t->slots);
    free(t->bmp);
    free(t);
}

/* A tokenizer over a tokenizer.json pipeline (takes hf, also on failure):
 * the special ids are the bundle's (-1: none), max_len its model_max_length. */
bl_tokenizer *bli_tokenizer_from_hf(bli_hftok *hf, const bl_special_ids *sp, int32_t max_len, char *err,
                                    size_t errlen) {
    bl_tokenizer *t = hf ? calloc(1, sizeof *t) : NULL;
    if (!t) {
        bli_hftok_free(hf);
        bli_set_err(err, errlen, "tokenizer: out of memory");
        return NULL;
    }
    t->hf = hf;
    t->n_vocab = bli_hftok_vocab_size(hf);
    t->max_len = max_len > 0 ? max_len : 0;
    t->opts.unk_id = sp->unk, t->opts.cls_id = sp->cls, t->opts.sep_id = sp->sep;
    t->opts.pad_id = sp->pad, t->opts.mask_id = sp->mask;
    const int32_t ids[N_SPECIAL] = {sp->unk, sp->cls, sp->sep, sp->pad, sp->mask};
    for (int k = 0; k < N_SPECIAL; k++) t->special_ids[k] = ids[k];
    return t;
}

int32_t bl_tokenizer_vocab_size(const bl_tokenizer *t) { return t ? t->n_vocab : 0; }

const char *bl_tokenizer_kind(const bl_tokenizer *t) {
    if (!t) return NULL;
    return t->hf ? bli_hftok_kind(t->hf) : "WordPiece";
}

int32_t bl_tokenizer_max_tokens(const bl_tokenizer *t) { return t ? t->max_len : 0; }

const char *bl_tokenizer_pieces(const bl_tokenizer *t) {
    static const char *const names[3] = {"wordpiece", "byte-level", "metaspace"};
    return t && t->hf ? names[bli_hftok_pieces(t->hf)] : "wordpiece";
}

int bl_token_is_special(const bl_tokenizer *t, int32_t id) {
    if (!t || id < 0 || id >= t->n_vocab) return 0;
    for (int k = 0; k < N_SPECIAL; k++)
        if (t->special_ids[k] == id) return 1;
    return t->hf ? bli_hftok_is_special(t->hf, id) : 0;
}

void bl_tokenizer_special(const bl_tokenizer *t, bl_special_ids *out) {
    out->unk = t ? t->opts.unk_id : -1;
    out->cls = t ? t->opts.cls_id : -1;
    out->sep = t ? t->opts.sep_id : -1;
    out->pad = t ? t->opts.pad_id : -1;
    out->mask = t ? t->opts.mask_id : -1;
}

const char *bl_token_str(const bl_tokenizer *t, int32_t id) {
    if (!t || id < 0 || id >= t->n_vocab) return NULL;
    if (t->hf) return bli_hftok_token_str(t->hf, id);
    return t->pool + t->str_off[id];
}

/* ------------------------------------------------------------ buffers */

/* Growable arrays used while tokenizing one call. */
typedef struct {
    uint32_t *cp;   /* [n] code points                                        */
    int32_t *src;   /* [n] index of the original character each came from     */
    size_t n, cap;
} chars;

typedef struct {
    int32_t *id;    /* [n] token ids                                          */
    int32_t *off;   /* [2n] [start, end) in UTF-16 units of the original text */
    int32_t *word;  /* [n] word index within its text                         */
    size_t n, cap;
} toklist;

typedef struct {
    uint32_t *orig;    /* [n_orig] code points of the original text            */
    int32_t *u16;      /* [n_orig + 1] UTF-16 offset of each original character */
    size_t n_orig, orig_cap, u16_cap;
    chars a, b;        /* normalization ping-pong buffers                      */
    char *utf8;        /* [utf8_cap] UTF-8 bytes of the current word            */
    int32_t *boff;     /* [boff_cap] byte offset of each character of the word  */
    uint32_t *hash;    /* [hash_cap] hashes of the pieces from one position     */
    size_t utf8_cap, boff_cap, hash_cap;
    int oom;
} work;

/* Room for need elements of elem bytes in *p (capacity *cap, doubled as
 * needed); -1 when out of memory or over BLI_MAX_BUFFER (in 32-bit builds
 * c * elem would wrap for a long text: 64 MB of text reserves 4 x 192 M
 * characters when decomposing). */
static int grow(void **p, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap) return 0;
    uint64_t c = *cap ? *cap : 64;
    while (c < need) c *= 2;
    const uint64_t bytes = BLI_BYTES(elem, c);
    if (!bli_size_ok(bytes, "", NULL, 0)) return -1;
    void *q = realloc(*p, (size_t)bytes);
    if (!q) return -1;
    *p = q;
    *cap = (size_t)c;
    return 0;
}

static int chars_reserve(chars *c, size_t need) {
    size_t cap = c->cap;
    if (need <= cap) return 0;
    size_t cap2 = cap;
    if (grow((void **)&c->cp, &cap, need, sizeof(uint32_t))) return -1;
    if (grow((void **)&c->src, &cap2, need, sizeof(int32_t))) return -1;
    c->cap = cap;
    return 0;
}

static void chars_free(chars *c) {
    free(c->cp);
    free(c->src);
}

static int tok_push(toklist *l, int32_t id, int32_t s, int32_t e, int32_t word) {
    if (l->n == l->cap) {
        size_t c1 = l->cap, c2 = l->cap, c3 = l->cap;
        if (grow((void **)&l->id, &c1, l->n + 1, sizeof(int32_t)) ||
            grow((void **)&l->off, &c2, l->n + 1, 2 * sizeof(int32_t)) ||
            grow((void **)&l->word, &c3, l->n + 1, sizeof(int32_t)))
            return -1;
        l->cap = c1;
    }
    l->id[l->n] = id;
    l->off[2 * l->n] = s;
    l->off[2 * l->n + 1] = e;
    l->word[l->n] = word;
    l->n++;
    return 0;
}

static void toklist_free(toklist *l) {
    free(l->id);
    free(l->off);
    free(l->word);
}

/* ------------------------------------------------------------ UTF-8 */

/* Strict decode into w->orig / w->u16. Returns 0 or -1 with a message. */
static int decode_utf8(work *w, const char *text, size_t len, const char *which, char *err, size_t errlen) {
    const uint8_t *s = (const uint8_t *)text;
    size_t n = 0;
    int32_t u = 0;
    w->n_orig = 0;
    if (grow((void **)&w->orig, &w->orig_cap, len + 1, sizeof(uint32_t)) ||
        grow((void **)&w->u16, &w->u16_cap, len + 1, sizeof(int32_t))) {
        w->oom = 1;
        bli_set_err(err, errlen, "tokenizer: out of memory");
        return -1;
    }
    for (size_t i = 0; i < len;) {
        uint32_t c = s[i];
        int why;
        size_t at, k = c < 0x80 ? 1 : bli_utf8_next(s + i, len - i, &c, &why, &at);
        if (!k) {
            if (why == BLI_UTF8_BAD_LEAD || why == BLI_UTF8_BAD_CONT)
                bli_set_err(err, errlen, "invalid UTF-8 in %s at byte %zu: %s 0x%02X", which, i + at,
                            bli_utf8_why(why), s[i + at]);
            else
                bli_set_err(err, errlen, "invalid UTF-8 in %s at byte %zu: %s", which, i, bli_utf8_why(why));
            return -1;
        }
        w->orig[n] = c;
        w->u16[n] = u;
        u += c >= 0x10000 ? 2 : 1;
        n++;
        i += k;
    }
    w->u16[n] = u;
    w->n_orig = n;
    return 0;
}

static size_t utf8_put(char *out, uint32_t c) {
    if (c < 0x80) { out[0] = (char)c; return 1; }
    if (c < 0x800) { out[0] = (char)(0xC0 | (c >> 6)); out[1] = (char)(0x80 | (c & 0x3F)); return 2; }
    if (c < 0x10000) {
        out[0] = (char)(0xE0 | (c >> 12));
        out[1] = (char)(0x80 | ((c >> 6) & 0x3F));
        out[2] = (char)(0x80 | (c & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (c >> 18));
    out[1] = (char)(0x80 | ((c >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((c >> 6) & 0x3F));
    out[3] = (char)(0x80 | (c & 0x3F));
    return 4;
}

/* ------------------------------------------------------------ normalizer */

static inline int klass(const bl_tokenizer *t, uint32_t c) {
    return c < 0x10000 ? t->bmp[c] & 7 : bli_uc_class(c);
}

static inline int ccc(const bl_tokenizer *t, uint32_t c) {
    return (c < 0x10000 && !(t->bmp[c] & BMP_CCC)) ? 0 : bli_uc_ccc(c);
}

/* Normalize original characters [from, to) into w->a. */
static int normalize(const bl_tokenizer *t, work *w, size_t from, size_t to) {
    chars *a = &w->a, *b = &w->b;
    /* clean-up + CJK padding: at most 3 characters per input character */
    if (chars_reserve(a, 3 * (to - from) + 1)) return -1;
    a->n = 0;
    for (size_t i = from; i < to; i++) {
        uint32_t c = w->orig[i];
        int k = klass(t, c);
        if (k == BL_UC_REMOVE) continue;
        if (k == BL_UC_SPACE) c = ' ';
        if (k == BL_UC_CJK && t->opts.chinese_chars) {
            a->cp[a->n] = ' ', a->src[a->n++] = (int32_t)i;
            a->cp[a->n] = c, a->src[a->n++] = (int32_t)i;
            a->cp[a->n] = ' ', a->src[a->n++] = (int32_t)i;
        } else {
            a->cp[a->n] = c, a->src[a->n++] = (int32_t)i;
        }
    }
    if (t->opts.strip_accents) {
        /* NFD: decompose (each piece keeps its source), reorder marks by
         * combining class. As in HF, the alignments stay with positions:
         * only the code points move. Then drop non-spacing marks. */
        if (chars_reserve(b, BL_UC_MAX_DECOMP * a->n + 1)) return -1;
        b->n = 0;
        for (size_t i = 0; i < a->n; i++) {
            uint32_t c = a->cp[i];
            if (c < 0x10000 && !(t->bmp[c] & BMP_DECOMP)) { b->cp[b->n] = c, b->src[b->n++] = a->src[i]; continue; }
            uint32_t d[BL_UC_MAX_DECOMP];
            int nd = bli_uc_decompose(c, d);
            for (int k = 0; k < nd; k++) b->cp[b->n] = d[k], b->src[b->n++] = a->src[i];
        }
        for (size_t i = 0; i < b->n;) {
            if (ccc(t, b->cp[i]) == 0) { i++; continue; }
            size_t j = i + 1;
            while (j < b->n && ccc(t, b->cp[j]) != 0) j++;
            for (size_t x = i + 1; x < j; x++) { /* stable insertion sort by ccc */
                uint32_t c = b->cp[x];
                int cc = ccc(t, c);
                size_t y = x;
                while (y > i && ccc(t, b->cp[y - 1]) > cc) { b->cp[y] = b->cp[y - 1]; y--; }
                b->cp[y] = c;
            }
            i = j;
        }
        if (chars_reserve(a, b->n + 1)) return -1;
        a->n = 0;
        for (size_t i = 0; i < b->n; i++) {
            if (klass(t, b->cp[i]) == BL_UC_MN) continue;
            a->cp[a->n] = b->cp[i], a->src[a->n++] = b->src[i];
        }
    }
    if (t->opts.lowercase) {
        if (chars_reserve(b, BL_UC_MAX_LOWER * a->n + 1)) return -1;
        b->n = 0;
        for (size_t i = 0; i < a->n; i++) {
            uint32_t c = a->cp[i];
            if (c < 0x10000 && !(t->bmp[c] & BMP_LOWER)) { b->cp[b->n] = c, b->src[b->n++] = a->src[i]; continue; }
            uint32_t l[BL_UC_MAX_LOWER];
            int nl = bli_uc_lower(c, l);
            for (int k = 0; k < nl; k++) b->cp[b->n] = l[k], b->src[b->n++] = a->src[i];
        }
        chars tmp = *a; /* swap so the result is in w->a */
        *a = *b;
        *b = tmp;
    }
    return 0;
}

/* ------------------------------------------------------------ WordPiece */

/* Tokenize normalized characters w->a[ws, we) as one word. */
static int wordpiece(const bl_tokenizer *t, work *w, size_t ws, size_t we, int32_t word, toklist *out) {
    const chars *a = &w->a;
    size_t n = we - ws;
    const int32_t *u16 = w->u16;
    if (n > (size_t)t->opts.max_chars_per_word) {
        return tok_push(out, t->opts.unk_id, u16[a->src[ws]], u16[a->src[we - 1] + 1], word);
    }
    if (grow((void **)&w->utf8, &w->utf8_cap, 4 * n + 1, 1) || grow((void **)&w->boff, &w->boff_cap, n + 1, sizeof(int32_t)) ||
        grow((void **)&w->hash, &w->hash_cap, n + 1, sizeof(uint32_t)))
        return -1;
    int32_t nb = 0;
    for (size_t k = 0; k < n; k++) {
        w->boff[k] = nb;
        nb += (int32_t)utf8_put(w->utf8 + nb, a->cp[ws + k]);
    }
    w->boff[n] = nb;
    /* Greedy longest match from each start. A piece longer than the longest
     * entry (max_piece bytes, without "##") cannot match, so the candidates
     * are the ends start + 1 .. lim, lim the last within max_piece bytes;
     * hash[e - start] is the hash of the piece [start, e) (with its "##"),
     * extended one character at a time. Each start costs O(lim - start)
     * (at most min(n, max_piece) characters), not O((n - start)^2) bytes
     * hashed: the word is linear in n for a given vocabulary. The same ends
     * are tried in the same order as a search from n down, so the pieces are
     * the same. */
    size_t first = out->n; /* roll back to here if a piece does not match */
    uint32_t *hash = w->hash;
    for (size_t start = 0; start < n;) {
        const size_t plen = start ? 2 : 0;
        size_t lim = start;
        hash[0] = fnv1a(FNV_SEED, "##", plen);
        while (lim < n && (uint32_t)(w->boff[lim + 1] - w->boff[start]) <= t->max_piece) {
            hash[lim + 1 - start] =
                fnv1a(hash[lim - start], w->utf8 + w->boff[lim], (size_t)(w->boff[lim + 1] - w->boff[lim]));
            lim++;
        }
        int32_t id = -1;
        size_t end = lim;
        for (; end > start; end--) {
            id = vocab_find(t, hash[end - start], "##", plen, w->utf8 + w->boff[start],
                            (size_t)(w->boff[end] - w->boff[start]));
            if (id >= 0) break;
        }
        if (id < 0) {
            out->n = first;
            return tok_push(out, t->opts.unk_id, u16[a->src[ws]], u16[a->src[we - 1] + 1], word);
        }
        if (tok_push(out, id, u16[a->src[ws + start]], u16[a->src[ws + end - 1] + 1], word)) return -1;
        start = end;
    }
    return 0;
}

/* Pre-tokenize w->a (one normalized segment) into words and WordPiece them. */
static int split_words(const bl_tokenizer *t, work *w, int32_t *word, toklist *out) {
    const chars *a = &w->a;
    size_t ws = 0;
    for (size_t i = 0; i <= a->n; i++) {
        int k = i < a->n ? klass(t, a->cp[i]) : BL_UC_SPACE;
        if (k != BL_UC_SPACE && k != BL_UC_PUNCT) continue;
        if (i > ws) {
            if (wordpiece(t, w, ws, i, (*word)++, out)) return -1;
        }
        if (k == BL_UC_PUNCT) {
            if (wordpiece(t, w, i, i + 1, (*word)++, out)) return -1;
        }
        ws = i + 1;
    }
    return 0;
}

/* Length in code points of a special token starting at original char i, else 0. */
static size_t match_special(const bl_tokenizer *t, const work *w, size_t i, int32_t *id) {
    size_t best = 0;
    for (int k = 0; k < N_SPECIAL; k++) {
        int32_t sid = t->special_ids[k];
        if (sid < 0) continue;
        const uint8_t *s = (const uint8_t *)t->pool + t->str_off[sid];
        uint32_t len = t->str_len[sid];
        /* compare code point by code point (special strings are ASCII in BERT,
         * but decode generally) */
        size_t j = i, p = 0;
        while (p < len && j < w->n_orig) {
            char buf[4];
            size_t nb = utf8_put(buf, w->orig[j]);
            if (p + nb > len || memcmp(buf, s + p, nb) != 0) break;
            p += nb;
            j++;
        }
        if (p == len && j - i > best) {
            best = j - i;
            *id = sid;
        }
    }
    return best;
}

/* Tokenize one text (no specials around it) into out. */
static int tokenize_text(const bl_tokenizer *t, work *w, const char *text, size_t len, const char *which,
                         toklist *out, char *err, size_t errlen) {
    if (len > MAX_TEXT_BYTES) {
        bli_set_err(err, errlen, "%s is too long: %zu bytes (limit %u)", which, len, MAX_TEXT_BYTES);
        return -1;
    }
    if (decode_utf8(w, text, len, which, err, errlen)) return -1;
    int32_t word = 0;
    size_t seg = 0;
    for (size_t i = 0; i <= w->n_orig; i++) {
        int32_t sid = -1;
        size_t m = 0;
        if (i < w->n_orig) {
            if (w->orig[i] != '[') continue; /* every BERT special starts with '[' */
            m = match_special(t, w, i, &sid);
            if (!m) continue;
        }
        if (i > seg) {
            if (normalize(t, w, seg, i) || split_words(t, w, &word, out)) goto oom;
        }
        if (m) {
            if (tok_push(out, sid, w->u16[i], w->u16[i + m], word++)) goto oom;
            i += m - 1;
        }
        seg = i + 1;
    }
    return 0;
oom:
    w->oom = 1;
    bli_set_err(err, errlen, "tokenizer: out of memory for %s (%zu bytes)", which, len);
    return -1;
}

/* ------------------------------------------------------------ assembly */

int bl_tokenize(const bl_tokenizer *t, const char *text, size_t len, const char *text_b, size_t len_b,
                int32_t max_tokens, bl_tokens *out, char *err, size_t errlen) {
    if (!out) {
        bli_set_err(err, errlen, "tokenize: no output");
        return -1;
    }
    memset(out, 0, sizeof *out);
    if (!t || (!text && len)) {
        bli_set_err(err, errlen, "tokenize: no tokenizer or text");
        return -1;
    }
    if (!text) text = "";
    if (t->hf) { /* the bundle's tokenizer.json, truncated at its model_max_length */
        if (len > MAX_TEXT_BYTES || (text_b && len_b > MAX_TEXT_BYTES)) {
            bli_set_err(err, errlen, "tokenize: text of %zu bytes is too long (at most %u)",
                        len > len_b || !text_b ? len : len_b, MAX_TEXT_BYTES);
            return -1;
        }
        if (max_tokens < 0) {
            bli_set_err(err, errlen, "tokenize: max_tokens %d is negative", (int)max_tokens);
            return -1;
        }
        if (t->max_len > 0 && (max_tokens == 0 || max_tokens > t->max_len)) max_tokens = t->max_len;
        return bli_hftok_encode(t->hf, text, len, text_b, text_b ? len_b : 0, max_tokens, out, err, errlen);
    }
    /* As transformers: an empty second text means a single sequence. */
    int pair = text_b != NULL && len_b > 0;
    int n_special = pair ? 3 : 2;
    if (max_tokens < 0 || (max_tokens > 0 && max_tokens < n_special)) {
        bli_set_err(err, errlen, "tokenize: max_tokens %d cannot hold the %d special tokens", (int)max_tokens,
                n_special);
        return -1;
    }
    work w = {0};
    toklist la = {0}, lb = {0};
    int rc = -1;
    if (tokenize_text(t, &w, text, len, "text A", &la, err, errlen)) goto done;
    if (pair && tokenize_text(t, &w, text_b, len_b, "text B", &lb, err, errlen)) goto done;

    /* Truncation, HF "longest_first": fit A and B into max_tokens - specials. */
    size_t na = la.n, nb = lb.n;
    if (max_tokens > 0 && na + nb + (size_t)n_special > (size_t)max_tokens) {
        size_t m = (size_t)max_tokens - (size_t)n_special;
        if (!pair) {
            na = m;
        } else {
            int swap = na > nb;
            size_t s = swap ? nb : na, l = swap ? na : nb; /* shorter, longer */
            l = s > m ? s : (s > m - s ? s : m - s);
            if (s + l > m) { s = m / 2; l = s + m % 2; }
            size_t ka = swap ? l : s, kb = swap ? s : l;
            if (ka < na) na = ka;
            if (kb < nb) nb = kb;
        }
        out->truncated = 1;
    }
    size_t n = na + nb + (size_t)n_special;
    /* [n] ids, type ids, word ids; [n][2] offsets */
    if (!(out->ids = bli_alloc(BLI_BYTES(sizeof(int32_t), n), 0, "the token ids", err, errlen)) ||
        !(out->type_ids = bli_alloc(BLI_BYTES(sizeof(int32_t), n), 0, "the token types", err, errlen)) ||
        !(out->offsets = bli_alloc(BLI_BYTES(sizeof(int32_t), n, 2), 0, "the token offsets", err, errlen)) ||
        !(out->word_ids = bli_alloc(BLI_BYTES(sizeof(int32_t), n), 0, "the word ids", err, errlen)))
        goto done;
    size_t k = 0;
#define PUT(ID, TYPE, S, E, WORD) \
    (out->ids[k] = (ID), out->type_ids[k] = (TYPE), out->offsets[2 * k] = (S), out->offsets[2 * k + 1] = (E), \
     out->word_ids[k] = (WORD), k++)
    PUT(t->opts.cls_id, 0, 0, 0, -1);
    for (size_t i = 0; i < na; i++) PUT(la.id[i], 0, la.off[2 * i], la.off[2 * i + 1], la.word[i]);
    PUT(t->opts.sep_id, 0, 0, 0, -1);
    out->n_a = (int32_t)k;
    if (pair) {
        for (size_t i = 0; i < nb; i++) PUT(lb.id[i], 1, lb.off[2 * i], lb.off[2 * i + 1], lb.word[i]);
        PUT(t->opts.sep_id, 1, 0, 0, -1);
    }
#undef PUT
    out->n = (int32_t)k;
    rc = 0;
done:
    if (rc) bl_tokens_free(out);
    chars_free(&w.a);
    chars_free(&w.b);
    free(w.orig);
    free(w.u16);
    free(w.utf8);
    free(w.boff);
    free(w.hash);
    toklist_free(&la);
    toklist_free(&lb);
    return rc;
}
