/* hf_tok_impl.h — every stage of the tokenizer.json pipeline, for hf_tok.c,
 * which reads the file and assembles them. Each stage has its own header
 * and file, and includes only the stages below it, from the bottom up:
 * hf_tok_text (normalized strings: code points with the byte range [o0, o1)
 * of the original text each stands for; UTF-8; limits; character flags),
 * hf_tok_pattern (split patterns), hf_tok_norm (normalizers),
 * hf_tok_pretok (pre-tokenizers and their splits), hf_tok_added (added
 * tokens), hf_tok_models (BPE, Unigram, WordPiece). Not a public interface.
 */
#ifndef BERTLENS_HF_TOK_IMPL_H
#define BERTLENS_HF_TOK_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "hf_tok_text.h"    /* strings, UTF-8, limits, character flags */
#include "hf_tok_pattern.h" /* split patterns */
#include "hf_tok_norm.h"    /* normalizers */
#include "hf_tok_pretok.h"  /* pre-tokenizers, splits */
#include "hf_tok_added.h"   /* added tokens */
#include "hf_tok_models.h"  /* models */

#endif
