/* hf_tokenizer.h — a tokenizer driven by Hugging Face's tokenizer.json.
 *
 *     bli_hftok *t = bli_hftok_load(json, len, err, sizeof err);  // NULL: err says why
 *     bl_tokens toks;                                             // bertlens.h's result
 *     bli_hftok_encode(t, a, alen, b, blen, max_tokens, &toks, err, sizeof err);
 *     ...
 *     bl_tokens_free(&toks); bli_hftok_free(t);
 *
 * The pipeline is the `tokenizers` library's, component for component:
 * added tokens (matched on the raw text, lstrip / rstrip / single_word) ->
 * normalizer -> pre-tokenizer -> model -> truncation (longest_first, after
 * reserving the post-processor's specials) -> post-processor. Each component
 * is a small tagged struct read from its JSON object (hf_tok_impl.h); what
 * the file asks for and this code does not know is refused by name at load,
 * and so is what would pass one of its limits (hf_tok_impl.h: a template
 * naming a sequence 5 times, a normalizer that can grow a text 65 times, a
 * Unigram piece over 256 bytes, ...), so that every accepted file tokenizes
 * in time linear in the text and memory bounded by it (docs/security.md).
 *
 * Results match tokenizers' Python API (what AutoTokenizer returns): ids,
 * type ids from the template, offsets as [start, end) in UTF-16 code units of
 * the original text A or B (tokenizers gives code points; converted the same
 * way tests/tokenizer.test.mjs's fixtures are), word ids (index of the
 * pre-tokenized split in its text, -1 for the post-processor's specials),
 * n_a = tokens before the first token of text B, and whether truncation
 * dropped tokens. max_tokens <= 0: no truncation.
 */
#ifndef BERTLENS_HF_TOKENIZER_H
#define BERTLENS_HF_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

#include "bertlens.h"

typedef struct bli_hftok bli_hftok;

bli_hftok *bli_hftok_load(const char *json, size_t len, char *err, size_t errlen);
/* BERT's tokenizer from its vocabulary (vocab.txt, as bl_tokenizer_new gets
 * it) as the pipeline Hugging Face's BertTokenizerFast converts it to:
 * BertNormalizer (clean-up, CJK padding, accents and lower-casing from o),
 * BertPreTokenizer, WordPiece ("##", o->max_chars_per_word), the special ids
 * of o with a non-empty string as added tokens matched on the raw text, and
 * BertProcessing ([CLS] A [SEP] B [SEP]). The caller checked o's ids. */
bli_hftok *bli_hftok_wordpiece(const char *const *vocab, const uint32_t *lens, int32_t n, const bl_tokenizer_opts *o,
                               char *err, size_t errlen);
void bli_hftok_free(bli_hftok *t);
/* Model vocabulary plus added tokens: ids are < this. */
int32_t bli_hftok_vocab_size(const bli_hftok *t);
/* Token string of an id (NUL-terminated, owned by t), or NULL. */
const char *bli_hftok_token_str(const bli_hftok *t, int32_t id);
/* The model's kind: "BPE", "Unigram" or "WordPiece". */
const char *bli_hftok_kind(const bli_hftok *t);
/* Id of a token string (an added token's content first, then the model's
 * vocabulary), or -1. */
int32_t bli_hftok_token_id(const bli_hftok *t, const char *s, size_t n);
/* How pieces spell words: 1 byte-level (GPT-2's byte alphabet, 'Ġ' a space),
 * 2 SentencePiece ('▁' starts a word), 0 neither (WordPiece's '##'). */
int bli_hftok_pieces(const bli_hftok *t);
/* 1 if id is an added token marked special (<s>, [CLS], <mask>, ...). */
int bli_hftok_is_special(const bli_hftok *t, int32_t id);
int bli_hftok_encode(const bli_hftok *t, const char *a, size_t alen, const char *b, size_t blen, int32_t max_tokens,
                     bl_tokens *out, char *err, size_t errlen);

/* A bl_tokenizer that runs t (taken, freed with it, also on failure): special
 * ids from the bundle (-1: none), max_len: its model_max_length (0: none). */
bl_tokenizer *bli_tokenizer_from_hf(bli_hftok *t, const bl_special_ids *sp, int32_t max_len, char *err,
                                    size_t errlen);

#endif
