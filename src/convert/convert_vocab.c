/* convert_vocab.c — the converter's vocabulary stage (conv_state.h): a
 * tokenizer.json kept whole (convert_tokenizer.c), or else BERT's vocabulary
 * (vocab.txt, or a BERT WordPiece tokenizer.json) with its special tokens and
 * settings from tokenizer_config.json, as metadata entries in convert.py's
 * order.
 */
#include "conv_state.h"
#include "format/bundle.h"
#include "base/error.h"
#include "text/utf8.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------- vocabulary */

typedef struct {
    const char *s;
    uint32_t len;
} tok;

/* The id of a special token: tokenizer_config.json's entry (a string or an
 * {"content": ...} object) else the default; the last id holding it. */
static int special(const bli_jv *tc, const char *key, const char *dflt, const tok *toks, int n, uint32_t *id,
                   char *err, size_t errlen) {
    const bli_jv *v = bli_jget(tc, key);
    const char *s = dflt;
    size_t len = strlen(dflt);
    if (v && v->type == BLI_JOBJ) v = bli_jget(v, "content");
    if (v) {
        if (v->type != BLI_JSTR) {
            bli_set_err(err, errlen, "special token %s in tokenizer_config.json is not a string", key);
            return -1;
        }
        s = v->str;
        len = v->len;
    }
    for (int i = n; i-- > 0;)
        if (toks[i].len == len && !memcmp(toks[i].s, s, len)) {
            *id = (uint32_t)i;
            return 0;
        }
    bli_set_err(err, errlen, "special token '%.*s' (%s) is not in the vocabulary", (int)(len > 64 ? 64 : len), s,
                key);
    return -1;
}

/* A boolean setting: tokenizer_config.json's key, else the normalizer's, else dflt (-1: None). */
static int setting(const bli_jv *tc, const char *key, const bli_jv *norm, const char *nkey, int dflt) {
    const bli_jv *v = bli_jget(tc, key);
    if (!v) v = bli_jget(norm, nkey);
    if (!v) return dflt;
    if (v->type == BLI_JNULL) return -1;
    return bli_jtruthy(v);
}


int bli_conv_stage_vocab(bli_conv *c, char *err, size_t errlen) {
    int hf = bli_conv_tokenizer_hf(c, err, errlen); /* a tokenizer.json kept whole, or refused */
    if (hf) return hf < 0 ? -1 : 0;
    int rc = -1;
    bli_jv *tj = NULL, *tcv = NULL;
    tok *toks = NULL;
    int n = 0;
    const cfile *tjf = bli_conv_find_file(c, "tokenizer.json"), *vf = bli_conv_find_file(c, "vocab.txt");
    const cfile *tcf = bli_conv_find_file(c, "tokenizer_config.json");
    const char *from;
    if (tjf && !(tj = bli_conv_parse_file(tjf, err, errlen))) goto out;
    if (tcf && !(tcv = bli_conv_parse_file(tcf, err, errlen))) goto out;
    if (bli_conv_tok_agree(c, tj, tcv, err, errlen)) goto out; /* both files say the same, or refused */
    if (vf) {
        from = vf->name;
        if (bli_utf8_check(vf->bytes, (size_t)vf->size, NULL)) {
            bli_set_err(err, errlen, "%s is not valid UTF-8", vf->name);
            goto out;
        }
        size_t lines = 1;
        for (uint64_t i = 0; i < vf->size; i++) lines += vf->bytes[i] == '\n';
        toks = calloc(lines, sizeof *toks);
        if (!toks) goto oom;
        const char *p = vf->bytes, *end = vf->bytes + vf->size;
        for (;;) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            const char *e = nl ? nl : end;
            if (!nl && p == end) break; /* a final newline ends the last token */
            size_t len = (size_t)(e - p);
            while (len && p[len - 1] == '\r') len--;
            toks[n].s = p;
            toks[n].len = (uint32_t)len;
            n++;
            if (!nl) break;
            p = nl + 1;
        }
    } else if (tj) {
        from = tjf->name;
        const bli_jv *model = bli_jget(tj, "model"), *type = bli_jget(model, "type");
        if (!type || type->type != BLI_JSTR || strcmp(type->str, "WordPiece")) {
            bli_set_err(err, errlen, "%s: tokenizer model is '%s', not WordPiece%s", tjf->name,
                        type && type->type == BLI_JSTR ? type->str : "(none)",
                        type && type->type == BLI_JSTR && !strcmp(type->str, "BPE")
                            ? " (a byte-level BPE tokenizer, as RoBERTa's: not a BERT vocabulary)"
                            : "");
            goto out;
        }
        const bli_jv *vocab = bli_jget(model, "vocab");
        if (!vocab || vocab->type != BLI_JOBJ) {
            bli_set_err(err, errlen, "%s: model.vocab is not an object", tjf->name);
            goto out;
        }
        toks = calloc(vocab->n ? vocab->n : 1, sizeof *toks);
        if (!toks) goto oom;
        n = (int)vocab->n;
        for (size_t i = 0; i < vocab->n; i++) {
            const bli_jv *it = &vocab->items[i];
            if (it->type != BLI_JNUM || !it->is_int || it->ival < 0 || it->ival >= n || toks[it->ival].s) {
                bli_set_err(err, errlen, "%s: vocabulary ids are not 0..%d", tjf->name, n - 1);
                goto out;
            }
            toks[it->ival].s = it->key;
            toks[it->ival].len = (uint32_t)it->key_len;
        }
    } else {
        bli_set_err(err, errlen, "%s: no vocab.txt or tokenizer.json found", *c->dir ? c->dir : "checkpoint folder");
        goto out;
    }
    if (n != c->cfg.vocab_size) {
        bli_set_err(err, errlen, "%s has %d tokens but config.json says vocab_size %d", from, n, c->cfg.vocab_size);
        goto out;
    }
    const bli_jv *norm = bli_jget(tj, "normalizer");
    if (norm && norm->type != BLI_JOBJ) norm = NULL;
    int lower = setting(tcv, "do_lower_case", norm, "lowercase", 1);
    int strip = setting(tcv, "strip_accents", norm, "strip_accents", -1);
    int chinese = setting(tcv, "tokenize_chinese_chars", norm, "handle_chinese_chars", 1);
    if (lower < 0) lower = 0; /* None */
    if (chinese < 0) chinese = 0;
    if (c->cased) lower = 0, strip = 0;
    if (strip < 0) strip = lower; /* Hugging Face: follows lowercase when unset */
    /* Words longer than this are one [UNK], exactly as Hugging Face's
     * max_input_chars_per_word (100 in every shipped file; 0: every word).
     * The bundle holds 0..2^31-1 (more is the same: no word is that long),
     * above BL_MAX_CHARS_PER_WORD only when no vocabulary entry is (the
     * WordPiece search per character is the smaller of the two): the
     * loader's rule and words. */
    const bli_jv *mc = bli_jget(bli_jget(tj, "model"), "max_input_chars_per_word");
    int64_t max_chars = 100;
    if (mc) {
        if (mc->type != BLI_JNUM || !(mc->num > -1e18 && mc->num < 1e18)) {
            bli_set_err(err, errlen, "%s: max_input_chars_per_word must be a number", tjf->name);
            goto out;
        }
        max_chars = (int64_t)mc->num;
        if (max_chars < 0) {
            bli_set_err(err, errlen,
                        "%s: max_input_chars_per_word = %lld is out of range 0..%u (the bundle's "
                        "tokenizer.max_chars_per_word)",
                        tjf->name, (long long)max_chars, BL_MAX_WORD_CHARS);
            goto out;
        }
        if (max_chars > (int64_t)BL_MAX_WORD_CHARS) max_chars = BL_MAX_WORD_CHARS;
    }
    uint32_t longest = 0;
    for (int i = 0; i < n; i++) {
        if (toks[i].len > BL_MAX_TOKEN_BYTES) {
            bli_set_err(err, errlen, "%s: vocabulary entry %d is %u bytes long (at most %u)", from, i, toks[i].len,
                        BL_MAX_TOKEN_BYTES);
            goto out;
        }
        if (toks[i].len > longest) longest = toks[i].len;
    }
    if (max_chars > (int64_t)BL_MAX_CHARS_PER_WORD && longest > BL_MAX_CHARS_PER_WORD) {
        bli_set_err(err, errlen,
                    "%s: max_input_chars_per_word = %lld is out of range 0..%u for a vocabulary with a %u-byte entry "
                    "(the bundle's tokenizer.max_chars_per_word)",
                    tjf->name, (long long)max_chars, BL_MAX_CHARS_PER_WORD, longest);
        goto out;
    }
    uint32_t ids[5];
    static const char *const sp[5][2] = {{"unk_token", "[UNK]"}, {"cls_token", "[CLS]"}, {"sep_token", "[SEP]"},
                                         {"pad_token", "[PAD]"}, {"mask_token", "[MASK]"}};
    for (int i = 0; i < 5; i++)
        if (special(tcv, sp[i][0], sp[i][1], toks, n, &ids[i], err, errlen)) goto out;

    /* Metadata up to the provenance, in convert.py's order. */
    bli_conv_meta_config(c);
    bli_conv_meta_key(&c->meta, "tokenizer.vocab", BL_META_STRARR);
    bli_conv_put32(&c->meta, (uint32_t)n);
    for (int i = 0; i < n; i++) {
        bli_conv_put32(&c->meta, toks[i].len);
        bli_json_raw(&c->meta, toks[i].s, toks[i].len);
    }
    c->n_meta += 1;
    bli_conv_meta_u32(c, "tokenizer.lowercase", (uint32_t)lower);
    bli_conv_meta_u32(c, "tokenizer.strip_accents", (uint32_t)strip);
    bli_conv_meta_u32(c, "tokenizer.chinese_chars", (uint32_t)chinese);
    bli_conv_meta_u32(c, "tokenizer.max_chars_per_word", (uint32_t)max_chars);
    static const char *const keys[5] = {"tokenizer.unk_id", "tokenizer.cls_id", "tokenizer.sep_id",
                                        "tokenizer.pad_id", "tokenizer.mask_id"};
    for (int i = 0; i < 5; i++) bli_conv_meta_u32(c, keys[i], ids[i]);
    if (c->meta.oom) goto oom;
    {
        const char *base = strrchr(from, '/');
        bli_conv_logf(c,
              "[vocab]  %d tokens from %s; lowercase=%d strip_accents=%d chinese_chars=%d max_chars=%lld; "
              "[UNK]=%u [CLS]=%u [SEP]=%u [PAD]=%u [MASK]=%u",
              n, base ? base + 1 : from, lower, strip, chinese, (long long)max_chars, ids[0], ids[1], ids[2], ids[3],
              ids[4]);
    }
    rc = 0;
    goto out;
oom:
    bli_set_err(err, errlen, "out of memory");
out:
    free(toks);
    bli_jfree(tj);
    bli_jfree(tcv);
    return rc;
}
