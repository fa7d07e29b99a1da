/* convert_config.c — the converter's first stages (conv_state.h): the
 * checkpoint's small files (which ones are wanted, where they are), then
 * config.json -> the model's shape, the vocabulary and tokenizer settings
 * (vocab.txt or tokenizer.json, tokenizer_config.json) and the
 * sentence-transformers settings, as metadata entries in convert.py's order.
 */
#include "conv_state.h"
#include "bundle.h"
#include "error.h"
#include "utf8.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------- files */

static const char *const TEXT_FILES[] = {"config.json",           "vocab.txt",
                                         "tokenizer.json",        "tokenizer_config.json",
                                         "sentence_bert_config.json", "model.safetensors.index.json"};
static const char *const SIZE_FILES[] = {"model.safetensors", "pytorch_model.bin"};

static int base_match(const char *name, const char *const *list, int n) {
    const char *b = name;
    if (!strncmp(b, "0_Transformer/", 14)) b += 14;
    if (strchr(b, '/')) return 0;
    for (int i = 0; i < n; i++)
        if (!strcmp(b, list[i])) return 1;
    return 0;
}

static int is_shard_name(const char *name) {
    const char *b = !strncmp(name, "0_Transformer/", 14) ? name + 14 : name;
    size_t n = strlen(b);
    return !strchr(b, '/') && n > 12 && !strcmp(b + n - 12, ".safetensors");
}

int bli_conv_wants(const char *name) {
    if (base_match(name, TEXT_FILES, (int)(sizeof TEXT_FILES / sizeof *TEXT_FILES))) return BLI_CONV_WANT_TEXT;
    if (base_match(name, SIZE_FILES, 2) || is_shard_name(name)) return BLI_CONV_WANT_SIZE;
    const char *b = !strncmp(name, "0_Transformer/", 14) ? name + 14 : name;
    if (!strchr(b, '/') && bli_conv_tokenizer_wants(b)) return bli_conv_tokenizer_wants(b);
    return BLI_CONV_WANT_NONE;
}

int bli_conv_add_file(bli_conv *c, const char *name, const void *bytes, uint64_t size, char *err, size_t errlen) {
    if (!bli_conv_wants(name)) return 0;
    if (c->n_files == MAX_FILES) {
        bli_set_err(err, errlen, "too many checkpoint files (more than %d)", MAX_FILES);
        return -1;
    }
    cfile *f = &c->files[c->n_files];
    f->name = bli_conv_strdup(name);
    f->size = size;
    if (bytes) {
        f->bytes = malloc((size_t)size + 1);
        if (f->bytes) {
            memcpy(f->bytes, bytes, (size_t)size);
            f->bytes[size] = 0;
        }
    }
    if (!f->name || (bytes && !f->bytes)) {
        free(f->name);
        free(f->bytes);
        bli_set_err(err, errlen, "out of memory reading %s", name);
        return -1;
    }
    c->n_files++;
    return 0;
}

const cfile *bli_conv_file_at(const bli_conv *c, const char *dir, const char *base) {
    char path[256];
    snprintf(path, sizeof path, "%s%s", dir, base);
    for (int i = c->n_files; i-- > 0;)
        if (!strcmp(c->files[i].name, path)) return &c->files[i];
    return NULL;
}

/* In the model folder, else in the checkpoint root (convert.py bli_conv_find_file). */
const cfile *bli_conv_find_file(const bli_conv *c, const char *base) {
    const cfile *f = bli_conv_file_at(c, c->dir, base);
    return f ? f : bli_conv_file_at(c, "", base);
}

bli_jv *bli_conv_parse_file(const cfile *f, char *err, size_t errlen) {
    char e[256];
    bli_jv *v = bli_jparse(f->bytes, (size_t)f->size, e, sizeof e);
    if (!v) bli_set_err(err, errlen, "%s: %s", f->name, e);
    return v;
}

/* ------------------------------------------------------------ config */

/* An integer of config.json within [lo, hi]: the loader's range for the
 * bundle key it becomes (bundle.h BL_MAX_*), refused in the loader's words
 * ("<key> = <v> is out of range <lo>..<hi>") before anything is written. */
static int cfg_int(const bli_jv *cfg, const char *key, int64_t dflt, int64_t lo, int64_t hi, const char *bkey,
                   int32_t *out, char *err, size_t errlen) {
    const bli_jv *v = bli_jget(cfg, key);
    int64_t x = dflt;
    if (!v && dflt < 0) {
        bli_set_err(err, errlen, "config.json has no %s", key);
        return -1;
    }
    if (v) {
        if (v->type != BLI_JNUM || !v->is_int) {
            bli_set_err(err, errlen, "config.json: %s must be an integer", key);
            return -1;
        }
        x = v->ival;
    }
    if (x < lo || x > hi) {
        bli_set_err(err, errlen, "config.json: %s = %lld is out of range %lld..%lld (the bundle's %s)", key,
                    (long long)x, (long long)lo, (long long)hi, bkey);
        return -1;
    }
    *out = (int32_t)x;
    return 0;
}

int bli_conv_stage_config(bli_conv *c, const bli_jv *cfg, char *err, size_t errlen) {
    if (!cfg || cfg->type != BLI_JOBJ) {
        bli_set_err(err, errlen, "config.json is not a JSON object");
        return -1;
    }
    const bli_jv *mt = bli_jget(cfg, "model_type");
    const char *type = mt && mt->type == BLI_JSTR ? mt->str : "(none)";
    const bli_jv *archs = bli_jget(cfg, "architectures");
    const char *arch = archs && archs->type == BLI_JARR && archs->n && archs->items[0].type == BLI_JSTR
                           ? archs->items[0].str
                           : "?";
    c->distil = !strcmp(type, "distilbert");
    /* the family (convert_family.c): BERT, DistilBERT, ELECTRA, RoBERTa,
     * XLM-RoBERTa, CamemBERT, ALBERT; every other model_type refused by name */
    if (bli_conv_stage_family(c, cfg, type, arch, err, errlen)) return -1;
    static const char *const acts[][2] = {
        {"gelu", "gelu"}, {"gelu_new", "gelu_tanh"}, {"gelu_pytorch_tanh", "gelu_tanh"}, {"relu", "relu"}};
    /* DistilBERT: BERT's encoder under other names (bli_conv_distil_names), LayerNorm eps
     * 1e-12, no token types (DISTIL_TYPES rows of zeros). */
    const int modern = c->fam.kind == BLI_FAM_MODERNBERT; /* its own names for the activation and eps */
    const char *const *key = c->distil ? (const char *const[]){"n_layers", "n_heads", "dim", "hidden_dim", "activation"}
                                       : (const char *const[]){"num_hidden_layers", "num_attention_heads", "hidden_size",
                                                               "intermediate_size",
                                                               modern ? "hidden_activation" : "hidden_act"};
    const bli_jv *act = bli_jget(cfg, key[4]);
    const char *a = act ? (act->type == BLI_JSTR ? act->str : "(not a string)") : "gelu";
    c->activation = NULL;
    for (int i = 0; i < 4; i++)
        if (!strcmp(a, acts[i][0])) c->activation = acts[i][1];
    if (!c->activation) {
        bli_set_err(err, errlen, "unsupported hidden_act '%s' (supported: gelu, gelu_new, gelu_pytorch_tanh, relu)",
                    a);
        return -1;
    }
    const bli_jv *pet = c->distil ? NULL : bli_jget(cfg, "position_embedding_type");
    if (pet && (pet->type != BLI_JSTR || strcmp(pet->str, "absolute"))) {
        bli_set_err(err, errlen, "position_embedding_type '%s' is not supported (only 'absolute')",
                    pet->type == BLI_JSTR ? pet->str : "?");
        return -1;
    }
    bl_config *k = &c->cfg;
    if (cfg_int(cfg, key[0], -1, 1, BL_MAX_LAYERS, "bert.n_layers", &k->n_layers, err, errlen) ||
        cfg_int(cfg, key[1], -1, 1, BL_MAX_HEADS, "bert.n_heads", &k->n_heads, err, errlen) ||
        cfg_int(cfg, key[2], -1, 1, BL_MAX_HIDDEN, "bert.hidden", &k->hidden, err, errlen) ||
        cfg_int(cfg, key[3], -1, 1, BL_MAX_INTERMEDIATE, "bert.intermediate", &k->intermediate, err, errlen) ||
        cfg_int(cfg, "max_position_embeddings", -1, 1, BL_MAX_POSITIONS, "bert.max_positions", &k->max_positions,
                err, errlen) ||
        cfg_int(cfg, "vocab_size", -1, BL_MIN_VOCAB, BL_MAX_VOCAB, "bert.vocab_size", &k->vocab_size, err, errlen))
        return -1;
    if (c->distil) k->type_vocab_size = DISTIL_TYPES;
    /* MPNet and ModernBERT have no token types, DeBERTa-v3 has 0: one row of zeros (convert_rel.c) */
    else if (c->fam.kind == BLI_FAM_MPNET || modern) k->type_vocab_size = 1;
    else if (cfg_int(cfg, "type_vocab_size", 2, c->fam.kind == BLI_FAM_DEBERTA ? 0 : 1, BL_MAX_TYPE_VOCAB,
                     "bert.type_vocab_size", &k->type_vocab_size, err, errlen))
        return -1;
    if (!k->type_vocab_size) k->type_vocab_size = 1;
    const bli_jv *eps = c->distil ? NULL : bli_jget(cfg, modern ? "norm_eps" : "layer_norm_eps");
    double e = modern ? 1e-5 : 1e-12;
    if (eps) {
        if (eps->type != BLI_JNUM) {
            bli_set_err(err, errlen, "config.json: layer_norm_eps must be a number");
            return -1;
        }
        e = eps->num;
    }
    /* struct.pack('<f'): round to nearest; the loader wants the float32 in (0, 1) */
    c->ln_eps = e > 0 && e < 1 ? (float)e : 0.0f;
    if (!(c->ln_eps > 0.0f && c->ln_eps < 1.0f)) {
        bli_set_err(err, errlen, "config.json: layer_norm_eps = %g (float32 %g) is not in (0, 1) (the bundle's bert.ln_eps)",
                    e, e > 0 && e < 1 ? (double)(float)e : e);
        return -1;
    }
    if (k->hidden % k->n_heads) {
        bli_set_err(err, errlen, "%s %d is not a multiple of %s %d", key[2], k->hidden, key[1],
                    k->n_heads);
        return -1;
    }
    if (bli_conv_family_shape(c, cfg, err, errlen)) return -1;
    bli_conv_logf(c,
          "[config] bert: %d layers x %d heads, hidden %d, intermediate %d, positions %d, vocab %d, eps %g, %s",
          k->n_layers, k->n_heads, k->hidden, k->intermediate, k->max_positions, k->vocab_size, e, c->activation);
    return 0;
}

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

void bli_conv_meta_config(bli_conv *c) {
    const bl_config *k = &c->cfg;
    bli_conv_meta_u32(c, "bert.n_layers", (uint32_t)k->n_layers);
    bli_conv_meta_u32(c, "bert.n_heads", (uint32_t)k->n_heads);
    bli_conv_meta_u32(c, "bert.hidden", (uint32_t)k->hidden);
    bli_conv_meta_u32(c, "bert.intermediate", (uint32_t)k->intermediate);
    bli_conv_meta_u32(c, "bert.max_positions", (uint32_t)k->max_positions);
    bli_conv_meta_u32(c, "bert.type_vocab_size", (uint32_t)k->type_vocab_size);
    bli_conv_meta_u32(c, "bert.vocab_size", (uint32_t)k->vocab_size);
    bli_conv_meta_key(&c->meta, "bert.ln_eps", BL_META_F32);
    {
        uint32_t bits;
        memcpy(&bits, &c->ln_eps, 4);
        bli_conv_put32(&c->meta, bits);
    }
    bli_conv_meta_str(&c->meta, "bert.activation", c->activation);
    c->n_meta += 2;
    bli_conv_meta_family(c); /* model.* (bundle.h "Families"); none for BERT layouts */
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

/* sentence_bert_config.json max_seq_length, when the file is there. */
int bli_conv_stage_sentence(bli_conv *c, char *err, size_t errlen) {
    const cfile *f = bli_conv_find_file(c, "sentence_bert_config.json");
    if (!f) return 0;
    bli_jv *v = bli_conv_parse_file(f, err, errlen);
    if (!v) return -1;
    const bli_jv *m = bli_jget(v, "max_seq_length");
    int ok = m && m->type == BLI_JNUM && m->is_int && m->ival > 0;
    if (ok) {
        char tmp[32];
        snprintf(tmp, sizeof tmp, "%lld", (long long)m->ival);
        c->max_seq = bli_conv_strdup(tmp);
    } else {
        bli_set_err(err, errlen, "%s: max_seq_length must be a positive integer", f->name);
    }
    bli_jfree(v);
    if (ok && !c->max_seq) bli_set_err(err, errlen, "out of memory");
    return ok && c->max_seq ? 0 : -1;
}
