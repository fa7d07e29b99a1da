/* convert_tokenizer.c — the converter's tokenizer stage for checkpoints whose
 * tokenizer is not BERT's WordPiece: the folder's tokenizer.json goes into
 * the bundle byte for byte (metadata tokenizer.json, type BYTES: bundle.h,
 * format version 2), with the special tokens' ids and model_max_length of
 * tokenizer_config.json / special_tokens_map.json.
 *
 * Which path a folder takes (bli_conv_stage_vocab asks bli_conv_tokenizer_hf
 * first):
 *   tokenizer.json whose model is BPE or Unigram, or WordPiece with another
 *     normalizer, pre-tokenizer or post-processor than BERT's (MPNet's
 *     RobertaProcessing)                     -> here
 *   vocab.txt, or a BERT WordPiece tokenizer.json -> convert_vocab.c, as before
 *     (bundles of version 1, byte for byte what they were)
 *   vocab.json + merges.txt, or a SentencePiece .model, without a
 *     tokenizer.json                         -> refused with the command that
 *     writes one (transformers converts them the way its fast tokenizers do)
 */
#include "conv_state.h"
#include "format/bundle.h"
#include "base/error.h"
#include "text/hf_tokenizer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int type_is(const bli_jv *obj, const char *type) {
    const bli_jv *t = bli_jget(obj, "type");
    return t && t->type == BLI_JSTR && !strcmp(t->str, type);
}

/* One template piece: {"SpecialToken": {"id": tok, "type_id": ty}} when tok
 * is given, else {"Sequence": {"id": seq, "type_id": ty}}. */
static int piece_is(const bli_jv *e, const char *tok, const char *seq, int64_t ty) {
    const bli_jv *b = bli_jget(e, tok ? "SpecialToken" : "Sequence");
    const bli_jv *id = bli_jget(b, "id"), *t = bli_jget(b, "type_id");
    return id && id->type == BLI_JSTR && !strcmp(id->str, tok ? tok : seq) && t && t->type == BLI_JNUM &&
           t->is_int && t->ival == ty;
}

/* The template's special token `name` stands for the one id of vocabulary entry `name`. */
static int template_special(const bli_jv *pp, const bli_jv *vocab, const char *name) {
    const bli_jv *st = bli_jget(bli_jget(pp, "special_tokens"), name), *ids = bli_jget(st, "ids");
    const bli_jv *v = bli_jget(vocab, name);
    return ids && ids->type == BLI_JARR && ids->n == 1 && ids->items[0].type == BLI_JNUM && ids->items[0].is_int &&
           v && v->type == BLI_JNUM && v->is_int && ids->items[0].ival == v->ival;
}

/* Exactly BERT's post-processor: [CLS] $A [SEP] and [CLS] $A [SEP] $B:1 [SEP]:1. */
static int bert_template(const bli_jv *pp, const bli_jv *vocab) {
    if (type_is(pp, "BertProcessing")) return 1;
    const bli_jv *a = bli_jget(pp, "single"), *b = bli_jget(pp, "pair");
    return a && a->type == BLI_JARR && a->n == 3 && piece_is(&a->items[0], "[CLS]", NULL, 0) &&
           piece_is(&a->items[1], NULL, "A", 0) && piece_is(&a->items[2], "[SEP]", NULL, 0) && b &&
           b->type == BLI_JARR && b->n == 5 && piece_is(&b->items[0], "[CLS]", NULL, 0) &&
           piece_is(&b->items[1], NULL, "A", 0) && piece_is(&b->items[2], "[SEP]", NULL, 0) &&
           piece_is(&b->items[3], NULL, "B", 1) && piece_is(&b->items[4], "[SEP]", NULL, 1) &&
           template_special(pp, vocab, "[CLS]") && template_special(pp, vocab, "[SEP]");
}

/* Every added token is one of the five specials the WordPiece path splits
 * out by itself ([UNK] [CLS] [SEP] [PAD] [MASK]), at its vocabulary id,
 * matched as typed (no strip, not normalized, not whole-word only). */
static int bert_added(const bli_jv *added, const bli_jv *vocab) {
    static const char *const five[] = {"[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"};
    if (!added || added->type == BLI_JNULL) return 1;
    if (added->type != BLI_JARR) return 0;
    for (size_t i = 0; i < added->n; i++) {
        const bli_jv *e = &added->items[i], *c = bli_jget(e, "content"), *id = bli_jget(e, "id");
        int known = 0;
        for (int k = 0; c && c->type == BLI_JSTR && k < 5; k++) known |= !strcmp(c->str, five[k]);
        const bli_jv *v = known ? bli_jget(vocab, c->str) : NULL;
        if (!known || !v || v->type != BLI_JNUM || !id || id->type != BLI_JNUM || id->ival != v->ival) return 0;
        static const char *const flags[] = {"lstrip", "rstrip", "single_word", "normalized"};
        for (int k = 0; k < 4; k++) {
            const bli_jv *f = bli_jget(e, flags[k]);
            if (f && f->type == BLI_JTRUE) return 0;
        }
    }
    return 1;
}

/* BERT's own pipeline, nothing added: the WordPiece path (tokenizer.c)
 * reproduces it, under the bundle's limits (max_chars_per_word up to 2^31 - 1
 * when no entry passes 1,000 bytes, as tools/convert.py takes it). Anything
 * more (a template of another shape, added tokens beyond the five specials,
 * another subword prefix) keeps the tokenizer.json whole, run by the
 * tokenizer.json pipeline under its own limits. */
static int bert_wordpiece(const bli_jv *tj) {
    const bli_jv *pp = bli_jget(tj, "post_processor"), *m = bli_jget(tj, "model"), *vocab = bli_jget(m, "vocab");
    const bli_jv *pre = bli_jget(m, "continuing_subword_prefix");
    return type_is(m, "WordPiece") && vocab && vocab->type == BLI_JOBJ && (!pre || pre->type == BLI_JNULL ||
           (pre->type == BLI_JSTR && !strcmp(pre->str, "##"))) &&
           type_is(bli_jget(tj, "normalizer"), "BertNormalizer") &&
           type_is(bli_jget(tj, "pre_tokenizer"), "BertPreTokenizer") && bert_template(pp, vocab) &&
           bert_added(bli_jget(tj, "added_tokens"), vocab);
}

/* A special token's string: tokenizer_config.json's key, else
 * special_tokens_map.json's (a string or {"content": ...}); NULL: absent. */
static const bli_jv *special_str(const bli_jv *tc, const bli_jv *sm, const char *key, char *err, size_t errlen,
                                 int *bad) {
    const bli_jv *v = bli_jget(tc, key);
    if (!v || v->type == BLI_JNULL) v = bli_jget(sm, key);
    if (v && v->type == BLI_JOBJ) v = bli_jget(v, "content");
    if (!v || v->type == BLI_JNULL) return NULL;
    if (v->type != BLI_JSTR) {
        bli_set_err(err, errlen, "special token %s in tokenizer_config.json is not a string", key);
        *bad = 1;
        return NULL;
    }
    return v;
}

/* The metadata of the tokenizer.json path; tj: the parsed file, f: its bytes. */
static int write_hf(bli_conv *c, const cfile *f, const bli_jv *tc, const bli_jv *sm, char *err, size_t errlen) {
    char why[512] = "";
    bli_hftok *t = bli_hftok_load(f->bytes, (size_t)f->size, why, sizeof why);
    if (!t) {
        bli_set_err(err, errlen, "%s: %s", f->name, strncmp(why, "tokenizer.json: ", 16) ? why : why + 16);
        return -1;
    }
    int rc = -1;
    int32_t n = bli_hftok_vocab_size(t);
    if (n > c->cfg.vocab_size) {
        bli_set_err(err, errlen, "%s has %d tokens but config.json says vocab_size %d", f->name, (int)n,
                    c->cfg.vocab_size);
        goto out;
    }
    if (f->size > BL_MAX_META_BYTES) {
        bli_set_err(err, errlen, "%s is %llu bytes: a bundle holds at most %u", f->name, (unsigned long long)f->size,
                    BL_MAX_META_BYTES);
        goto out;
    }
    static const char *const keys[5][3] = {{"unk_token", "[UNK]", "<unk>"}, {"cls_token", "[CLS]", "<s>"},
                                           {"sep_token", "[SEP]", "</s>"}, {"pad_token", "[PAD]", "<pad>"},
                                           {"mask_token", "[MASK]", "<mask>"}};
    static const char *const meta[5] = {"tokenizer.unk_id", "tokenizer.cls_id", "tokenizer.sep_id",
                                        "tokenizer.pad_id", "tokenizer.mask_id"};
    int32_t ids[5];
    for (int k = 0; k < 5; k++) {
        int bad = 0;
        const bli_jv *s = special_str(tc, sm, keys[k][0], err, errlen, &bad);
        if (bad) goto out;
        if (s) {
            ids[k] = bli_hftok_token_id(t, s->str, s->len);
            if (ids[k] < 0) {
                bli_set_err(err, errlen, "special token '%.*s' (%s) is not in %s", (int)(s->len > 64 ? 64 : s->len),
                            s->str, keys[k][0], f->name);
                goto out;
            }
        } else { /* unnamed: BERT's or RoBERTa's spelling, if the tokenizer has it */
            ids[k] = bli_hftok_token_id(t, keys[k][1], strlen(keys[k][1]));
            if (ids[k] < 0) ids[k] = bli_hftok_token_id(t, keys[k][2], strlen(keys[k][2]));
        }
    }
    /* model_max_length: transformers' "no limit" (1e30) or a value past the
     * positions the model has is not the model's limit. */
    int32_t max_len = 0;
    const bli_jv *ml = bli_jget(tc, "model_max_length");
    if (ml && ml->type == BLI_JNUM && ml->is_int && ml->ival > 0 && ml->ival <= (int64_t)BL_MAX_POSITIONS) {
        max_len = (int32_t)ml->ival;
        if (max_len > c->cfg.max_positions) {
            bli_conv_logf(c, "[vocab]  model_max_length %d is more than the %d positions: truncating at %d",
                          (int)max_len, c->cfg.max_positions, c->cfg.max_positions);
            max_len = c->cfg.max_positions;
        }
    } else if (ml && ml->type != BLI_JNULL) {
        bli_conv_logf(c, "[vocab]  model_max_length of tokenizer_config.json is not a limit (%.6g): none kept",
                      ml->type == BLI_JNUM ? ml->num : 0.0);
    }

    bli_conv_meta_config(c);
    bli_conv_meta_key(&c->meta, "tokenizer.json", BL_META_BYTES);
    bli_conv_put64(&c->meta, f->size);
    bli_json_raw(&c->meta, f->bytes, (size_t)f->size);
    c->n_meta++;
    c->meta_bytes = 1;
    for (int k = 0; k < 5; k++)
        if (ids[k] >= 0) bli_conv_meta_u32(c, meta[k], (uint32_t)ids[k]);
    if (max_len) bli_conv_meta_u32(c, "tokenizer.model_max_length", (uint32_t)max_len);
    if (c->meta.oom) {
        bli_set_err(err, errlen, "out of memory");
        goto out;
    }
    {
        char sp[256] = "";
        size_t o = 0;
        static const char *const names[5] = {"unk", "cls", "sep", "pad", "mask"};
        for (int k = 0; k < 5 && o < sizeof sp; k++) {
            const char *s = ids[k] >= 0 ? bli_hftok_token_str(t, ids[k]) : NULL;
            o += (size_t)snprintf(sp + o, sizeof sp - o, " %s=%.24s", names[k], s ? s : "none");
        }
        const char *base = strrchr(f->name, '/');
        bli_conv_logf(c, "[vocab]  %s tokenizer, %d tokens, from %s (kept whole, %llu bytes);%s; truncates at %s",
                      bli_hftok_kind(t), (int)n, base ? base + 1 : f->name, (unsigned long long)f->size, sp,
                      max_len ? "model_max_length" : "the positions");
    }
    rc = 0;
out:
    bli_hftok_free(t);
    return rc;
}

int bli_conv_tokenizer_hf(bli_conv *c, char *err, size_t errlen) {
    const cfile *tjf = bli_conv_find_file(c, "tokenizer.json"), *vf = bli_conv_find_file(c, "vocab.txt");
    if (!tjf) {
        if (vf) return 0;
        const char *dir = *c->dir ? c->dir : "";
        char cmd[160];
        snprintf(cmd, sizeof cmd,
                 "python -c \"from transformers import AutoTokenizer; "
                 "AutoTokenizer.from_pretrained('DIR').save_pretrained('DIR')\"");
        if (bli_conv_find_file(c, "vocab.json") && bli_conv_find_file(c, "merges.txt")) {
            bli_set_err(err, errlen,
                        "%svocab.json + merges.txt (a byte-level BPE tokenizer) without a tokenizer.json: bertlens "
                        "reads the tokenizer.json that transformers makes from them; in the checkpoint folder DIR "
                        "run %s",
                        dir, cmd);
            return -1;
        }
        for (int i = 2; bli_conv_orig_files[i]; i++) /* past vocab.json, merges.txt */
            if (bli_conv_find_file(c, bli_conv_orig_files[i])) {
                bli_set_err(err, errlen,
                            "%s%s (a SentencePiece model) without a tokenizer.json: bertlens reads the "
                            "tokenizer.json that transformers makes from it; in the checkpoint folder DIR run %s",
                            dir, bli_conv_orig_files[i], cmd);
                return -1;
            }
        return 0; /* the WordPiece path says what is missing */
    }
    (void)vf;
    int rc = -1;
    bli_jv *tj = NULL, *tc = NULL, *sm = NULL;
    const cfile *tcf = bli_conv_find_file(c, "tokenizer_config.json");
    const cfile *smf = bli_conv_find_file(c, "special_tokens_map.json");
    if (!(tj = bli_conv_parse_file(tjf, err, errlen))) goto out;
    if (bert_wordpiece(tj)) { /* the WordPiece path (convert_vocab.c) reads it, with the bundle's limits */
        rc = 0;
        goto out;
    }
    if (tcf && !(tc = bli_conv_parse_file(tcf, err, errlen))) goto out;
    if (smf && !(sm = bli_conv_parse_file(smf, err, errlen))) goto out;
    if (bli_conv_tok_agree(c, tj, tc, err, errlen)) goto out; /* both files say the same, or refused */
    rc = write_hf(c, tjf, tc, sm, err, errlen) ? -1 : 1;
out:
    bli_jfree(tj);
    bli_jfree(tc);
    bli_jfree(sm);
    return rc;
}
