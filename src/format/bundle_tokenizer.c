/* bundle_tokenizer.c — a bundle's tokenizer (bundle.h: tokenizer.json as
 * bytes in version 2, else the WordPiece vocabulary and its options), built
 * once the config is read. Called by bl_model_load (bundle.c). */
#include "bundle_impl.h"
#include "text/hf_tokenizer.h"
#include "base/sizes.h"

#include <stdlib.h>

/* A bundle with tokenizer.json (bundle.h, version 2): that file's pipeline,
 * the optional special ids and model_max_length. */
static int build_hf_tokenizer(bl_model *m, const meta_entry *j, char *err, size_t errlen) {
    char why[512] = "";
    bli_hftok *hf = bli_hftok_load((const char *)j->bytes, (size_t)j->nbytes, why, sizeof why);
    if (!hf) {
        bli_set_err(err, errlen, "tokenizer.json in the bundle: %s", why);
        return 0;
    }
    int32_t n = bli_hftok_vocab_size(hf);
    if (n < 1 || n > m->cfg.vocab_size) {
        bli_set_err(err, errlen, "tokenizer.json has %d tokens but bert.vocab_size is %d", (int)n, m->cfg.vocab_size);
        bli_hftok_free(hf);
        return 0;
    }
    static const char *const keys[5] = {"tokenizer.unk_id", "tokenizer.cls_id", "tokenizer.sep_id",
                                        "tokenizer.pad_id", "tokenizer.mask_id"};
    int32_t ids[5], max_len = 0;
    for (int k = 0; k < 5; k++) {
        ids[k] = -1;
        if (bli_bundle_meta(m, keys[k]) && !bli_bundle_u32(m, keys[k], 0, (uint32_t)n - 1, &ids[k], err, errlen)) {
            bli_hftok_free(hf);
            return 0;
        }
    }
    if (bli_bundle_meta(m, "tokenizer.model_max_length") &&
        !bli_bundle_u32(m, "tokenizer.model_max_length", 1, BL_MAX_POSITIONS, &max_len, err, errlen)) {
        bli_hftok_free(hf);
        return 0;
    }
    bl_special_ids sp = {ids[0], ids[1], ids[2], ids[3], ids[4]};
    m->tok = bli_tokenizer_from_hf(hf, &sp, max_len, why, sizeof why);
    if (!m->tok) bli_set_err(err, errlen, "%s", why);
    return m->tok != NULL;
}

int bli_bundle_build_tokenizer(bl_model *m, char *err, size_t errlen) {
    const meta_entry *j = bli_bundle_meta(m, "tokenizer.json");
    if (j) {
        if (j->type != BL_META_BYTES) {
            bli_set_err(err, errlen, "metadata 'tokenizer.json' must be bytes (type %u found)", j->type);
            return 0;
        }
        return build_hf_tokenizer(m, j, err, errlen);
    }
    const meta_entry *v = bli_bundle_meta(m, "tokenizer.vocab");
    if (!v || v->type != BL_META_STRARR) {
        bli_set_err(err, errlen, "required metadata 'tokenizer.vocab' (string array) is missing");
        return 0;
    }
    if ((int32_t)v->count != m->cfg.vocab_size) {
        bli_set_err(err, errlen, "tokenizer.vocab has %u tokens but bert.vocab_size is %d", v->count, m->cfg.vocab_size);
        return 0;
    }
    bl_tokenizer_opts o;
    int32_t hi = m->cfg.vocab_size - 1;
    if (!bli_bundle_u32(m, "tokenizer.lowercase", 0, 1, &o.lowercase, err, errlen) ||
        !bli_bundle_u32(m, "tokenizer.strip_accents", 0, 1, &o.strip_accents, err, errlen) ||
        !bli_bundle_u32(m, "tokenizer.chinese_chars", 0, 1, &o.chinese_chars, err, errlen) ||
        !bli_bundle_u32(m, "tokenizer.max_chars_per_word", 0, BL_MAX_WORD_CHARS, &o.max_chars_per_word, err, errlen) ||
        !bli_bundle_u32(m, "tokenizer.unk_id", 0, (uint32_t)hi, &o.unk_id, err, errlen) ||
        !bli_bundle_u32(m, "tokenizer.cls_id", 0, (uint32_t)hi, &o.cls_id, err, errlen) ||
        !bli_bundle_u32(m, "tokenizer.sep_id", 0, (uint32_t)hi, &o.sep_id, err, errlen) ||
        !bli_bundle_u32(m, "tokenizer.pad_id", 0, (uint32_t)hi, &o.pad_id, err, errlen) ||
        !bli_bundle_u32(m, "tokenizer.mask_id", 0, (uint32_t)hi, &o.mask_id, err, errlen))
        return 0;
    const char **strs = bli_alloc(BLI_BYTES(sizeof *strs, v->count), 0, "the vocabulary", err, errlen);
    uint32_t *lens = strs ? bli_alloc(BLI_BYTES(sizeof *lens, v->count), 0, "the vocabulary", err, errlen) : NULL;
    if (!strs || !lens) {
        free(strs);
        return 0;
    }
    const uint8_t *p = v->arr; /* already bounds-checked by parse_meta */
    uint32_t longest = 0;
    for (uint32_t i = 0; i < v->count; i++) {
        lens[i] = bli_le32(p);
        strs[i] = (const char *)p + 4;
        p += 4 + lens[i];
        if (lens[i] > longest) longest = lens[i];
    }
    /* WordPiece tries up to min(max_chars_per_word, longest entry) pieces per
     * character (bundle.h, Limits); an entry over BL_MAX_TOKEN_BYTES is
     * bl_tokenizer_new's to refuse */
    if ((uint32_t)o.max_chars_per_word > BL_MAX_CHARS_PER_WORD && longest > BL_MAX_CHARS_PER_WORD &&
        longest <= BL_MAX_TOKEN_BYTES) {
        bli_set_err(err, errlen,
                    "metadata 'tokenizer.max_chars_per_word' = %d is out of range 0..%u for a vocabulary with a "
                    "%u-byte entry (the WordPiece search per character is the smaller of the two)",
                    (int)o.max_chars_per_word, BL_MAX_CHARS_PER_WORD, longest);
        free(strs);
        free(lens);
        return 0;
    }
    char why[256] = "";
    m->tok = bl_tokenizer_new(strs, lens, (int32_t)v->count, &o, why, sizeof why);
    free(strs);
    free(lens);
    if (!m->tok) {
        bli_set_err(err, errlen, "tokenizer: %s", why);
        return 0;
    }
    return 1;
}
