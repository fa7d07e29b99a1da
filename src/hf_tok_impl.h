/* hf_tok_impl.h — the parts of the tokenizer.json pipeline shared by
 * hf_tok.c (reader, added tokens, assembly), hf_tok_norm.c (normalized
 * strings, normalizers), hf_tok_pretok.c (split patterns, pre-tokenizers)
 * and hf_tok_models.c (BPE, Unigram, WordPiece). Not a public interface.
 *
 * A normalized string is an array of code points, each with the byte range
 * [o0, o1) of the original text it stands for (tokenizers' alignments, kept
 * per character: every byte of a character shares one alignment there too).
 */
#ifndef BERTLENS_HF_TOK_IMPL_H
#define BERTLENS_HF_TOK_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "json_read.h"
#include "unicode.h"

#define HF_MAX_TEXT_BYTES (64u << 20) /* longer texts are refused: every index fits in int32 */
/* What a file may ask for (docs/security.md, "Limits"); each refused at load
 * with the limit named. */
#define HF_MAX_SEQ_COPIES 4 /* times a template may name $A (or $B): each copy is the whole sequence */
#define HF_MAX_PIECE_BYTES 256 /* a Unigram piece (SentencePiece: 16 characters, <= 64 bytes) */
#define HF_MAX_WORDPIECE_SPAN 256 /* WordPiece: min(max_input_chars_per_word, longest entry in bytes) */
#define HF_MAX_ADDED_CHARS (1 << 20) /* characters of all added tokens' contents (their automaton: ~32 bytes each) */
#define HF_NORM_MAX_GROWTH 64 /* a normalizer makes at most 64 characters of each one (real files: <= 36) */

typedef struct { uint32_t cp; int32_t o0, o1; } bli_hfch;
typedef struct { bli_hfch *c; int32_t n, cap; } bli_hfstr; /* c: [cap], n used */

int bli_hfstr_reserve(bli_hfstr *s, int64_t need);
void bli_hfstr_free(bli_hfstr *s);
int bli_hfstr_copy(bli_hfstr *dst, const bli_hfstr *src, int32_t from, int32_t to);
size_t bli_hf_utf8_put(char *out, uint32_t c);
int32_t bli_hfstr_utf8_len(const bli_hfstr *s, int32_t from, int32_t to);
/* UTF-8 of s[from, to) into *buf (grown as needed; NUL-terminated); byte length or -1. */
int64_t bli_hfstr_utf8(const bli_hfstr *s, int32_t from, int32_t to, char **buf, size_t *cap);
int bli_hf_utf8_to_cps(const char *s, size_t n, uint32_t **out, int32_t *count); /* hf_tok_text.c */
int bli_hf_is_ws(uint32_t cp); /* White_Space: Rust's char::is_whitespace, regex \s */

/* What BERT's normalizer and pre-tokenizer ask of a code point, as flags:
 * bli_hf_flags(c) for any; for the hot loops, a table of the 65,536 BMP
 * code points (bli_hf_bmp_new: ~260 KB, owned by the tokenizer that uses it)
 * with their flags, combining classes and canonical decompositions. */
#define HF_F_CLASS 0x07  /* bli_uc_class: BL_UC_*                 */
#define HF_F_DECOMP 0x08 /* has a canonical decomposition          */
#define HF_F_CCC 0x10    /* non-zero canonical combining class     */
#define HF_F_LOWER 0x20  /* lower-casing changes it                */
#define HF_F_WS 0x40     /* bli_hf_is_ws                           */
int bli_hf_flags(uint32_t cp);
typedef struct {
    uint8_t flags[0x10000];
    uint8_t ccc[0x10000];               /* classes are 0..254 */
    uint16_t dix[0x10000];              /* 1 + index in dec of the decomposition, 0: none (or Hangul: computed) */
    uint16_t lower[0x10000];            /* lower case when it is one BMP character, else 0 (bli_uc_lower) */
    uint32_t (*dec)[BL_UC_MAX_DECOMP + 1]; /* [n_dec] {count, code points} */
} bli_hfbmp;
bli_hfbmp *bli_hf_bmp_new(void);
void bli_hf_bmp_free(bli_hfbmp *b);
static inline int bli_hf_flags_at(const bli_hfbmp *b, uint32_t cp) { return cp < 0x10000 ? b->flags[cp] : bli_hf_flags(cp); }
static inline int bli_hf_ccc_at(const bli_hfbmp *b, uint32_t cp) { return cp < 0x10000 ? b->ccc[cp] : bli_uc_ccc(cp); }
static inline int bli_hf_decompose_at(const bli_hfbmp *b, uint32_t cp, uint32_t out[BL_UC_MAX_DECOMP]) {
    if (cp >= 0x10000 || !b->dix[cp]) return bli_uc_decompose(cp, out);
    const uint32_t *d = b->dec[b->dix[cp] - 1];
    for (uint32_t k = 0; k < d[0]; k++) out[k] = d[1 + k];
    return (int)d[0];
}

/* tokenizers' NormalizedString::transform over the whole string: dest[k] is
 * a code point and its change (0 replaces the next old character, > 0 is
 * inserted, < 0 replaces one and removes -change more); `initial` old
 * characters are removed first. Alignments follow tokenizers exactly. */
typedef struct { uint32_t cp; int32_t change; } bli_hfdest;
typedef struct { bli_hfdest *d; int32_t n, cap; } bli_hfdests;
int bli_hfdests_push(bli_hfdests *d, uint32_t cp, int32_t change);
int bli_hf_transform(bli_hfstr *s, const bli_hfdests *d, int32_t initial, bli_hfstr *scratch);

/* ------------------------------------------------------------ patterns */

enum { HF_PAT_STRING, HF_PAT_CHAR_WS, HF_PAT_CHAR_PUNCT, HF_PAT_CHAR_DIGIT, HF_PAT_CHAR,
       HF_PAT_RE_GPT2, HF_PAT_RE_LLAMA3, HF_PAT_RE_SPACES2_NRT, HF_PAT_RE_SPACES2, HF_PAT_RE_WS_RUN, HF_PAT_RE_WORD_OR_PUNCT,
       HF_PAT_RE_DIGIT_RUN };
typedef struct {
    int kind;
    uint32_t *cps; int32_t n; /* HF_PAT_STRING: the literal; HF_PAT_CHAR: cps[0] */
    int32_t *fail;            /* HF_PAT_STRING: KMP's table, [n] */
} bli_hfpat;
/* Matches of pat in s: spans [start, end) in characters covering s, with is_match. */
typedef struct { int32_t s, e; int m; } bli_hfspan;
typedef struct { bli_hfspan *v; int32_t n, cap; } bli_hfspans;
int bli_hfpat_read(bli_hfpat *p, const bli_jv *pattern, char *err, size_t errlen);
void bli_hfpat_free(bli_hfpat *p);
int bli_hfpat_find(const bli_hfpat *p, const bli_hfstr *s, bli_hfspans *out);
int32_t bli_hfpat_min_len(const bli_hfpat *p); /* the shortest match, >= 1 */

/* --------------------------------------------------------- normalizers */

enum { HF_N_SEQUENCE, HF_N_BERT, HF_N_NFC, HF_N_NFD, HF_N_NFKC, HF_N_NFKD, HF_N_LOWERCASE, HF_N_STRIP_ACCENTS,
       HF_N_STRIP, HF_N_REPLACE, HF_N_PREPEND, HF_N_PRECOMPILED };
typedef struct bli_hfnorm {
    int type;
    struct bli_hfnorm *seq; int32_t n_seq;           /* Sequence */
    int clean, chinese, strip_accents, lowercase;   /* BertNormalizer (strip_accents: -1 = follow lowercase) */
    int left, right;                                /* Strip */
    bli_hfpat pat; uint32_t *content; int32_t n_content; /* Replace; Prepend uses content */
    uint8_t *charsmap; size_t charsmap_len;         /* Precompiled: the decoded blob */
    const uint32_t *trie; size_t trie_n;            /* [trie_n] units inside charsmap */
    const char *repl; size_t repl_len;              /* replacement strings, NUL-separated */
    const bli_hfbmp *bmp;                           /* BertNormalizer: the tokenizer's table (bli_hf_bmp_new) */
} bli_hfnorm;
int bli_hfnorm_read(bli_hfnorm *n, const bli_jv *j, char *err, size_t errlen);
void bli_hfnorm_free(bli_hfnorm *n);
/* Normalize s in place: 0, -1 out of memory, -2 the output would pass
 * HF_NORM_MAX_GROWTH times s's length (load refuses a normalizer that can:
 * bli_hfnorm_growth). */
int bli_hfnorm_apply(const bli_hfnorm *n, bli_hfstr *s, bli_hfstr *scratch);
/* At most how many times longer (in characters) n can make a text. */
double bli_hfnorm_growth(const bli_hfnorm *n);
/* 0 when the Unicode facts bli_hfnorm_growth relies on hold for every code
 * point, else -1 and the first exception in err (tests). */
int bli_hfnorm_facts(char *err, size_t errlen);

/* ------------------------------------------------------ pre-tokenizers */

enum { HF_PT_SEQUENCE, HF_PT_BERT, HF_PT_BYTELEVEL, HF_PT_METASPACE, HF_PT_WHITESPACE, HF_PT_WHITESPACE_SPLIT,
       HF_PT_PUNCTUATION, HF_PT_DIGITS, HF_PT_SPLIT };
enum { HF_B_REMOVED, HF_B_ISOLATED, HF_B_MERGED_PREV, HF_B_MERGED_NEXT, HF_B_CONTIGUOUS };
enum { HF_PREPEND_ALWAYS, HF_PREPEND_FIRST, HF_PREPEND_NEVER };
typedef struct bli_hfpretok {
    int type;
    struct bli_hfpretok *seq; int32_t n_seq;
    int add_prefix_space, use_regex;  /* ByteLevel */
    uint32_t replacement; int prepend_scheme, split; /* Metaspace */
    int behavior, invert, individual_digits; /* Punctuation / Split / Digits */
    bli_hfpat pat;                   /* Split */
    const bli_hfbmp *bmp;            /* Bert: the tokenizer's table (bli_hf_bmp_new) */
} bli_hfpretok;

/* One piece of a text on its way through the pipeline: a normalized
 * string, or a finished added token (id >= 0). A list keeps its pieces'
 * characters one after the other in one pool (no allocation per piece):
 * piece i is pool.c[v[i].off, v[i].off + v[i].n). */
typedef struct { int32_t off, n, added_id; } bli_hfsplit;
typedef struct { bli_hfsplit *v; int32_t n, cap; bli_hfstr pool; } bli_hfsplits;
void bli_hfsplits_free(bli_hfsplits *l);
void bli_hfsplits_clear(bli_hfsplits *l); /* no pieces; the memory is kept */
/* Append a piece: a copy of c[0, n) (not from l's own pool). */
int bli_hfsplits_push(bli_hfsplits *l, const bli_hfch *c, int32_t n, int32_t added_id);
/* Append all of *s as a piece; into an empty list it moves (s gets the
 * list's old pool to reuse), else it is copied. */
int bli_hfsplits_take(bli_hfsplits *l, bli_hfstr *s, int32_t added_id);
/* Piece i as a string (borrowed: valid until the list changes; not to be grown or freed). */
static inline bli_hfstr bli_hfsplit_str(const bli_hfsplits *l, int32_t i) {
    bli_hfstr s = {l->pool.c + l->v[i].off, l->v[i].n, l->v[i].n};
    return s;
}

int bli_hfpretok_read(bli_hfpretok *p, const bli_jv *j, char *err, size_t errlen);
void bli_hfpretok_free(bli_hfpretok *p);
/* Split every not-yet-tokenized split of *l (empty splits are dropped); tmp
 * is a second list to work in (its pieces are dropped). */
int bli_hfpretok_apply(const bli_hfpretok *p, bli_hfsplits *l, bli_hfsplits *tmp, bli_hfstr *scratch);
/* Split s by spans with a delimiter behavior, appending the non-empty pieces to out. */
int bli_hf_split_by(const bli_hfstr *s, const bli_hfspans *spans, int behavior, bli_hfsplits *out);

/* -------------------------------------------------------- added tokens */

/* An Aho-Corasick automaton over added tokens' contents (hf_tok_added.c). */
typedef struct {
    int32_t n;                       /* nodes; 0 is the root */
    int32_t *fail, *best;            /* [n] failure link; longest token ending at the node, or -1 */
    uint64_t *key; int32_t *child;   /* edges, open addressing: (node << 21 | cp) + 1 -> child; key 0 empty */
    uint32_t n_slots;
    uint32_t ascii[4];               /* bit c: ASCII character c is in some token (else the root follows it) */
    int32_t root_ascii[128];         /* the root's child along ASCII character c, or -1 */
    uint64_t high;                   /* bit c % 64: some token has a non-ASCII character c (a filter) */
    uint32_t first_ascii[4]; uint64_t first_high; /* the same for the tokens' first characters */
} bli_hfac;
/* The automaton of tokens cps[k][0, lens[k]) (k: the index best[] gives;
 * empty ones never match; of two with the same content the first counts);
 * -1: out of memory, or more than HF_MAX_ADDED_CHARS characters in all. */
int bli_hfac_build(bli_hfac *a, const uint32_t *const *cps, const int32_t *lens, int32_t n_tokens);
void bli_hfac_free(bli_hfac *a);
/* longest[i] (i < s->n): the index of the longest token that starts at s's
 * character i, or -1 (the first listed among the longest). O(s->n). */
void bli_hfac_starts(const bli_hfac *a, const bli_hfstr *s, int32_t *longest);
/* 0 when no token can start anywhere in s (none of its characters begins one). */
int bli_hfac_may_start(const bli_hfac *a, const bli_hfstr *s);

/* -------------------------------------------------------------- models */

typedef struct {
    char *pool; size_t pool_len;   /* every string, NUL-terminated */
    uint32_t *off, *len;           /* [n] */
    int32_t n;
    uint64_t *slots; uint32_t n_slots; /* open addressing: FNV-1a << 32 | id + 1, 0 empty */
} bli_hfvocab;
int32_t bli_hfvocab_find(const bli_hfvocab *v, const char *s, size_t n);

enum { HF_M_BPE, HF_M_UNIGRAM, HF_M_WORDPIECE };
typedef struct {
    int type;
    bli_hfvocab vocab;             /* id -> string, string -> id */
    /* BPE */
    uint64_t *merge_keys; uint32_t *merge_rank, *merge_new; uint32_t n_merge_slots; /* (a << 32 | b) hash */
    char *cont_prefix, *eow_suffix; /* NULL when absent */
    size_t cont_len;               /* WordPiece: strlen(cont_prefix) */
    int byte_fallback, ignore_merges, fuse_unk;
    int32_t unk_id;                /* BPE/WordPiece: id of unk_token or -1; Unigram: unk_id or -1 */
    /* Unigram */
    double *scores; double min_score;
    /* WordPiece */
    int32_t max_chars;
    int32_t max_piece;             /* longest vocabulary string in bytes */
    int space_ends;                /* fill bli_hftoken's lead / trail (the post-processor trims offsets) */
} bli_hfmodel;

/* One token from the model or an added token: id, offsets (bytes of the
 * original text, before the final conversion), word, and how many leading /
 * trailing characters of its string are spaces (for ByteLevel trimming). */
typedef struct { int32_t id, o0, o1, word, lead, trail; } bli_hftoken;
typedef struct { bli_hftoken *v; int32_t n, cap; } bli_hftokens;
int bli_hftokens_push(bli_hftokens *l, bli_hftoken t);

/* A model's work buffers, kept from one split to the next (free with
 * bli_hfmwork_free): the split's UTF-8 and each character's byte offset,
 * WordPiece's hashes. */
typedef struct {
    char *u; size_t ucap;
    int32_t *boff; size_t bcap; /* [n + 1] */
    int32_t n, nb;
} bli_hfsplitbuf;
typedef struct { bli_hfsplitbuf b; uint32_t *hash; size_t hcap; } bli_hfmwork;
void bli_hfmwork_free(bli_hfmwork *w);

int bli_hfmodel_read(bli_hfmodel *m, const bli_jv *j, char *err, size_t errlen);
/* WordPiece ("##" continuations) over vocab[i] of lens[i] bytes (NULL: ""). */
int bli_hfmodel_wordpiece(bli_hfmodel *m, const char *const *vocab, const uint32_t *lens, int32_t n, int32_t unk_id,
                          int32_t max_chars, char *err, size_t errlen);
void bli_hfmodel_free(bli_hfmodel *m);
/* Tokenize one split; tokens appended with word id `word`. */
int bli_hfmodel_tokenize(const bli_hfmodel *m, const bli_hfstr *s, int32_t word, bli_hftokens *out, bli_hfmwork *w,
                         char *err, size_t errlen);
/* Leading / trailing characters of a UTF-8 string that are 'Ġ' or White_Space. */
void bli_hf_space_ends(const char *s, size_t n, int32_t *lead, int32_t *trail);

#endif
