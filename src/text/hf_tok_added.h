/* hf_tok_added.h — the tokenizer.json pipeline's the added tokens' automaton (hf_tok_added.c).
 * One stage of the pipeline hf_tok.c assembles (hf_tok_impl.h lists them);
 * it includes only the stages below it. Not a public interface.
 */
#ifndef BERTLENS_HF_TOK_ADDED_H
#define BERTLENS_HF_TOK_ADDED_H

#include <stddef.h>
#include <stdint.h>

#include "hf_tok_text.h"

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

#endif
