/* tokenizer.c — bertlens.h's tokenizer: a facade over the tokenizer.json
 * pipeline (hf_tokenizer.h), which does all the tokenizing.
 *
 * Two ways in:
 *   - bl_tokenizer_new: BERT's WordPiece from its vocabulary (vocab.txt, as
 *     the published bundles store it). It is the pipeline Hugging Face's
 *     BertTokenizerFast converts to (bli_hftok_wordpiece): BertNormalizer +
 *     BertPreTokenizer + WordPiece + [CLS] A [SEP] B [SEP], with the special
 *     tokens typed in a text matched on the raw text, case-sensitively;
 *   - bli_tokenizer_from_hf: a bundle's own tokenizer.json.
 * What the facade adds: the arguments' checks and limits, the special ids
 * (bl_tokenizer_special), model_max_length, and for a vocabulary a
 * max_tokens that cannot hold [CLS] and [SEP] is an error (tokenizers
 * wraps such a limit around to none; a bundle's tokenizer.json keeps that).
 */
#include "bertlens.h"
#include "format/bundle.h" /* BL_MAX_CHARS_PER_WORD, BL_MAX_TOKEN_BYTES: the limits bundles share */
#include "base/error.h"
#include "hf_tokenizer.h"

#include <stdlib.h>
#include <string.h>

#define MAX_TEXT_BYTES (64u << 20) /* longer texts are refused, keeps every index in int32 */
#define N_SPECIAL 5

struct bl_tokenizer {
    bli_hftok *hf;                  /* the pipeline                               */
    int from_vocab;                 /* built by bl_tokenizer_new                  */
    bl_special_ids sp;              /* as given (bl_tokenizer_special)            */
    int32_t special_ids[N_SPECIAL]; /* unk, cls, sep, pad, mask; -1: none, or an
                                       empty string (a vocabulary's)           */
    int32_t n_vocab;
    int32_t max_len;                /* tokenizer.model_max_length, 0: none        */
};

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
    char why[256] = "";
    bli_hftok *hf = bli_hftok_wordpiece(vocab, vocab_len, n_vocab, opts, why, sizeof why);
    if (!hf) {
        bli_set_err(err, errlen, "tokenizer: %s", why);
        return NULL;
    }
    const bl_special_ids sp = {opts->unk_id, opts->cls_id, opts->sep_id, opts->pad_id, opts->mask_id};
    bl_tokenizer *t = bli_tokenizer_from_hf(hf, &sp, 0, err, errlen);
    if (!t) return NULL;
    t->from_vocab = 1;
    for (int k = 0; k < N_SPECIAL; k++) /* an empty string is no token to match or to mark */
        if (specials[k] >= 0 && vocab_len[specials[k]] == 0) t->special_ids[k] = -1;
    return t;
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
    t->sp = *sp;
    const int32_t ids[N_SPECIAL] = {sp->unk, sp->cls, sp->sep, sp->pad, sp->mask};
    for (int k = 0; k < N_SPECIAL; k++) t->special_ids[k] = ids[k];
    return t;
}

void bl_tokenizer_free(bl_tokenizer *t) {
    if (!t) return;
    bli_hftok_free(t->hf);
    free(t);
}

int32_t bl_tokenizer_vocab_size(const bl_tokenizer *t) { return t ? t->n_vocab : 0; }

const char *bl_tokenizer_kind(const bl_tokenizer *t) { return t ? bli_hftok_kind(t->hf) : NULL; }

int32_t bl_tokenizer_max_tokens(const bl_tokenizer *t) { return t ? t->max_len : 0; }

const char *bl_tokenizer_pieces(const bl_tokenizer *t) {
    static const char *const names[3] = {"wordpiece", "byte-level", "metaspace"};
    return t && !t->from_vocab ? names[bli_hftok_pieces(t->hf)] : "wordpiece";
}

int bl_token_is_special(const bl_tokenizer *t, int32_t id) {
    if (!t || id < 0 || id >= t->n_vocab) return 0;
    for (int k = 0; k < N_SPECIAL; k++)
        if (t->special_ids[k] == id) return 1;
    return !t->from_vocab && bli_hftok_is_special(t->hf, id);
}

void bl_tokenizer_special(const bl_tokenizer *t, bl_special_ids *out) {
    if (t) *out = t->sp;
    else out->unk = out->cls = out->sep = out->pad = out->mask = -1;
}

const char *bl_token_str(const bl_tokenizer *t, int32_t id) {
    if (!t || id < 0 || id >= t->n_vocab) return NULL;
    return bli_hftok_token_str(t->hf, id);
}

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
    if (len > MAX_TEXT_BYTES || (text_b && len_b > MAX_TEXT_BYTES)) {
        int b = len <= MAX_TEXT_BYTES;
        bli_set_err(err, errlen, "%s is too long: %zu bytes (limit %u)", b ? "text B" : "text A", b ? len_b : len,
                    MAX_TEXT_BYTES);
        return -1;
    }
    if (t->from_vocab) {
        /* As transformers: an empty second text means a single sequence. */
        int n_special = text_b && len_b > 0 ? 3 : 2;
        if (max_tokens < 0 || (max_tokens > 0 && max_tokens < n_special)) {
            bli_set_err(err, errlen, "tokenize: max_tokens %d cannot hold the %d special tokens", (int)max_tokens,
                        n_special);
            return -1;
        }
    } else if (max_tokens < 0) {
        bli_set_err(err, errlen, "tokenize: max_tokens %d is negative", (int)max_tokens);
        return -1;
    }
    /* a bundle's tokenizer.json: truncated at its model_max_length */
    if (t->max_len > 0 && (max_tokens == 0 || max_tokens > t->max_len)) max_tokens = t->max_len;
    return bli_hftok_encode(t->hf, text, len, text_b, text_b ? len_b : 0, max_tokens, out, err, errlen);
}
