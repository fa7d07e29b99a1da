/* hf_tok_pretok.h — the tokenizer.json pipeline's pre-tokenizers and the splits they make (hf_tok_pretok.c).
 * One stage of the pipeline hf_tok.c assembles (hf_tok_impl.h lists them);
 * it includes only the stages below it. Not a public interface.
 */
#ifndef BERTLENS_HF_TOK_PRETOK_H
#define BERTLENS_HF_TOK_PRETOK_H

#include <stddef.h>
#include <stdint.h>

#include "hf_tok_pattern.h"
#include "json_read.h"

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

#endif
