/* hf_tok_models.h — the tokenizer.json pipeline's the models: BPE, Unigram, WordPiece (hf_tok_models.c).
 * One stage of the pipeline hf_tok.c assembles (hf_tok_impl.h lists them);
 * it includes only the stages below it. Not a public interface.
 */
#ifndef BERTLENS_HF_TOK_MODELS_H
#define BERTLENS_HF_TOK_MODELS_H

#include <stddef.h>
#include <stdint.h>

#include "hf_tok_pretok.h"
#include "json_read.h"

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
    uint32_t cont_hash;            /* WordPiece: FNV-1a of cont_prefix (a continuation's hash starts there) */
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
