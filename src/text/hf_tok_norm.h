/* hf_tok_norm.h — the tokenizer.json pipeline's normalizers (hf_tok_norm.c).
 * One stage of the pipeline hf_tok.c assembles (hf_tok_impl.h lists them);
 * it includes only the stages below it. Not a public interface.
 */
#ifndef BERTLENS_HF_TOK_NORM_H
#define BERTLENS_HF_TOK_NORM_H

#include <stddef.h>
#include <stdint.h>

#include "hf_tok_pattern.h"
#include "json_read.h"

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

#endif
