/* hf_tok_pattern.h — the tokenizer.json pipeline's split patterns (hf_tok_pattern.c).
 * One stage of the pipeline hf_tok.c assembles (hf_tok_impl.h lists them);
 * it includes only the stages below it. Not a public interface.
 */
#ifndef BERTLENS_HF_TOK_PATTERN_H
#define BERTLENS_HF_TOK_PATTERN_H

#include <stddef.h>
#include <stdint.h>

#include "hf_tok_text.h"
#include "json_read.h"

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

#endif
