/* convert_config.c — the converter's config stages (conv_state.h):
 * config.json -> the model's shape and its metadata entries, and the
 * sentence-transformers settings, in convert.py's order. The files they read
 * are found and parsed by convert_files.c; the vocabulary is convert_vocab.c.
 */
#include "conv_state.h"
#include "format/bundle.h"
#include "base/error.h"
#include "text/utf8.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
        {"gelu", "gelu"}, {"gelu_new", "gelu_tanh"}, {"gelu_pytorch_tanh", "gelu_tanh"}, {"relu", "relu"},
        {"silu", "silu"}, {"swish", "silu"}};
    /* DistilBERT: BERT's encoder under other names (bli_conv_distil_names), LayerNorm eps
     * 1e-12, no token types (DISTIL_TYPES rows of zeros). */
    const bli_family_traits *tr = bli_traits(c->fam.kind); /* its names for the activation and eps */
    const char *const *key = c->distil ? (const char *const[]){"n_layers", "n_heads", "dim", "hidden_dim", "activation"}
                                       : (const char *const[]){"num_hidden_layers", "num_attention_heads", "hidden_size",
                                                               "intermediate_size",
                                                               tr->act_key ? tr->act_key : "hidden_act"};
    const bli_jv *act = bli_jget(cfg, key[4]);
    const char *a = act ? (act->type == BLI_JSTR ? act->str : "(not a string)") : "gelu";
    c->activation = NULL;
    for (int i = 0; i < 6; i++)
        if (!strcmp(a, acts[i][0])) c->activation = acts[i][1];
    if (!c->activation) {
        bli_set_err(err, errlen, "unsupported hidden_act '%s' (supported: gelu, gelu_new, gelu_pytorch_tanh, relu, silu)",
                    a);
        return -1;
    }
    const bli_jv *pet = c->distil || tr->positions != BLI_POS_ABSOLUTE ? NULL : bli_jget(cfg, "position_embedding_type");
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
    /* no token types (family.h BLI_TYPES_NONE), or 0 of them: one row of zeros (convert_rel.c) */
    else if (tr->types == BLI_TYPES_NONE) k->type_vocab_size = 1;
    else if (cfg_int(cfg, "type_vocab_size", 2, tr->types == BLI_TYPES_CONFIG_OR_NONE ? 0 : 1, BL_MAX_TYPE_VOCAB,
                     "bert.type_vocab_size", &k->type_vocab_size, err, errlen))
        return -1;
    if (!k->type_vocab_size) k->type_vocab_size = 1;
    const bli_jv *eps = c->distil ? NULL : bli_jget(cfg, tr->eps_key ? tr->eps_key : "layer_norm_eps");
    double e = tr->eps_default > 0 ? tr->eps_default : 1e-12;
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
