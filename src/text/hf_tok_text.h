/* hf_tok_text.h — the bottom of the tokenizer.json pipeline (hf_tok_text.c):
 * normalized strings (code points with the byte range of the original text
 * each stands for), UTF-8, the limits every stage checks, what BERT's
 * normalizer and pre-tokenizer ask of a code point (flags and the BMP
 * table), and tokenizers' transform. The stages above (hf_tok_norm.c,
 * hf_tok_pretok.c, hf_tok_models.c, hf_tok.c) include it through
 * hf_tok_impl.h; nothing here knows of them. Not a public interface.
 */
#ifndef BERTLENS_HF_TOK_TEXT_H
#define BERTLENS_HF_TOK_TEXT_H

#include <stddef.h>
#include <stdint.h>

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
 * code points (bli_hf_bmp_new: ~450 KB, owned by the tokenizer that uses it)
 * with their flags, combining classes and canonical decompositions. */
#define HF_F_CLASS 0x07  /* bli_uc_class: BL_UC_*                 */
#define HF_F_DECOMP 0x08 /* has a canonical decomposition          */
#define HF_F_CCC 0x10    /* non-zero canonical combining class     */
#define HF_F_LOWER 0x20  /* lower-casing changes it                */
#define HF_F_WS 0x40     /* bli_hf_is_ws                           */
#define HF_F_ALL (HF_F_DECOMP | HF_F_CCC | HF_F_LOWER | HF_F_WS)
int bli_hf_flags(uint32_t cp);
/* The class and only the flags of `want` (those a caller reads): beyond the
 * BMP each flag is a table search, and a cased normalizer or the
 * pre-tokenizer needs only one or two of them. */
int bli_hf_flags_of(uint32_t cp, int want);
typedef struct {
    uint8_t flags[0x10000];
    uint8_t ccc[0x10000];               /* classes are 0..254 */
    uint16_t dix[0x10000];              /* 1 + index in dec of the decomposition, 0: none (or Hangul: computed) */
    uint16_t lower[0x10000];            /* lower case when it is one BMP character, else 0 (bli_uc_lower) */
    uint8_t bert[0x10000];              /* HF_B_*: what BERT's normalizer and pre-tokenizer do with it */
    uint32_t (*dec)[BL_UC_MAX_DECOMP + 1]; /* [n_dec] {count, code points} */
} bli_hfbmp;
/* bert[c]: a character a cased BERT text is mostly made of has none of these
 * (one test per character on the hot paths, hf_tok_norm.c / hf_tok_pretok.c) */
#define HF_B_CLEANED 0x01 /* BertNormalizer's clean_text changes it: a control, a space other than ' ' */
#define HF_B_CJK 0x02     /* handle_chinese_chars pads it                                 */
#define HF_B_LOWER 0x04   /* lowercase changes it                                         */
#define HF_B_SPLIT 0x08   /* BertPreTokenizer ends a piece there: White_Space or punctuation */
bli_hfbmp *bli_hf_bmp_new(void);
void bli_hf_bmp_free(bli_hfbmp *b);
static inline int bli_hf_flags_at(const bli_hfbmp *b, uint32_t cp) { return cp < 0x10000 ? b->flags[cp] : bli_hf_flags(cp); }
static inline int bli_hf_flags_some(const bli_hfbmp *b, uint32_t cp, int want) {
    return cp < 0x10000 ? b->flags[cp] : bli_hf_flags_of(cp, want);
}
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

#endif
