/* convert_rel.c — the converter's side of the families with relative or
 * rotary positions (bundle.h "Families": mpnet, deberta-v2, modernbert):
 * their config keys, metadata, weight names, the tensors made of zeros
 * (absent biases, token types, positions) and the row slices of fused
 * weights (ModernBERT's Wqkv and Wi). Called by convert_family.c and
 * convert.c at the points where every family's stage runs. */
#include "conv_state.h"
#include "encoder_family.h"
#include "error.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int bli_conv_rel_kind(int kind) {
    return kind == BLI_FAM_MPNET || kind == BLI_FAM_DEBERTA || kind == BLI_FAM_MODERNBERT;
}

/* A boolean key (dflt when absent); a non-boolean is an error. */
static int get_bool(const bli_jv *cfg, const char *key, int dflt, int *out, char *err, size_t errlen) {
    const bli_jv *v = bli_jget(cfg, key);
    if (!v || v->type == BLI_JNULL) return *out = dflt, 0;
    if (v->type != BLI_JTRUE && v->type != BLI_JFALSE) {
        bli_set_err(err, errlen, "config.json: %s must be true or false", key);
        return -1;
    }
    *out = v->type == BLI_JTRUE;
    return 0;
}

/* A positive finite number (dflt when absent). */
static int get_num(const bli_jv *v, const char *key, double dflt, double *out, char *err, size_t errlen) {
    if (!v || v->type == BLI_JNULL) return *out = dflt, 0;
    if (v->type != BLI_JNUM || !(v->num > 0) || !isfinite(v->num) || v->num > 1e30) {
        bli_set_err(err, errlen, "config.json: %s must be a positive number", key);
        return -1;
    }
    *out = v->num;
    return 0;
}

/* DeBERTa's pos_att_type: a list of names or "p2c|c2p" -> BLI_DEB_* bits. */
static int att_terms(const bli_jv *v, int32_t *terms, char *err, size_t errlen) {
    *terms = 0;
    if (!v || v->type == BLI_JNULL) return 0;
    char buf[128] = "";
    if (v->type == BLI_JSTR) snprintf(buf, sizeof buf, "%s", v->str);
    else if (v->type == BLI_JARR)
        for (size_t i = 0; i < v->n; i++) {
            if (v->items[i].type != BLI_JSTR) break;
            snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "|%s", v->items[i].str);
        }
    else {
        bli_set_err(err, errlen, "config.json: pos_att_type must be a list or a string");
        return -1;
    }
    for (char *t = strtok(buf, "|"); t; t = strtok(NULL, "|")) {
        while (*t == ' ') t++;
        if (!strncmp(t, "c2p", 3)) *terms |= BLI_DEB_C2P;
        else if (!strncmp(t, "p2c", 3)) *terms |= BLI_DEB_P2C;
    }
    return 0;
}

int bli_conv_rel_shape(bli_conv *c, const bli_jv *cfg, char *err, size_t errlen) {
    bli_family *f = &c->fam;
    const bl_config *k = &c->cfg;
    if (f->kind == BLI_FAM_MPNET) {
        /* MPNetEmbeddings: padding_idx 1 whatever pad_token_id says */
        f->pad_id = 1;
        f->pos_offset = 2;
        if (k->max_positions < 3) {
            bli_set_err(err, errlen, "config.json: max_position_embeddings %d leaves no position", k->max_positions);
            return -1;
        }
        /* the encoder takes buckets 0..31 of a table of this many rows */
        if (bli_conv_int_key(cfg, "relative_attention_num_buckets", 32, 32, 4096, &f->rel_rows, err, errlen)) return -1;
    }
    if (f->kind == BLI_FAM_DEBERTA) {
        int rel = 0, share = 0, biased = 1;
        int32_t conv = 0, emb = k->hidden, buckets, maxrel;
        if (get_bool(cfg, "relative_attention", 0, &rel, err, errlen) ||
            get_bool(cfg, "share_att_key", 0, &share, err, errlen) ||
            get_bool(cfg, "position_biased_input", 1, &biased, err, errlen) ||
            bli_conv_int_key(cfg, "conv_kernel_size", 0, 0, 64, &conv, err, errlen) ||
            bli_conv_int_key(cfg, "embedding_size", k->hidden, 1, BL_MAX_HIDDEN, &emb, err, errlen) ||
            bli_conv_int_key(cfg, "position_buckets", -1, -1, BL_MAX_POSITIONS, &buckets, err, errlen) ||
            bli_conv_int_key(cfg, "max_relative_positions", -1, -1, BL_MAX_POSITIONS, &maxrel, err, errlen) ||
            att_terms(bli_jget(cfg, "pos_att_type"), &f->rel_terms, err, errlen))
            return -1;
        const char *why = !rel ? "relative_attention false" : !share ? "share_att_key false (separate position projections)"
                        : biased ? "position_biased_input true (absolute positions added)"
                        : conv ? "conv_kernel_size > 0 (a convolution after the first layer)"
                        : emb != k->hidden ? "embedding_size != hidden_size" : NULL;
        if (why) {
            bli_set_err(err, errlen, "model_type 'deberta-v2' with %s: bertlens runs DeBERTa-v2/v3 as released "
                        "(relative attention, shared key projections, no absolute positions)", why);
            return -1;
        }
        if (buckets == 0) buckets = -1;
        if (maxrel < 1) maxrel = k->max_positions;
        f->rel_buckets = buckets > 0 ? buckets : 0;
        f->rel_max = maxrel;
        f->rel_rows = 2 * (buckets > 0 ? buckets : maxrel);
        const bli_jv *nr = bli_jget(cfg, "norm_rel_ebd");
        f->rel_norm = nr && nr->type == BLI_JSTR && strstr(nr->str, "layer_norm") != NULL;
        f->nopos = 1;
    }
    if (f->kind == BLI_FAM_MODERNBERT) {
        int nb = 0, ab = 0, mb = 0;
        int32_t local, every;
        if (get_bool(cfg, "norm_bias", 0, &nb, err, errlen) || get_bool(cfg, "attention_bias", 0, &ab, err, errlen) ||
            get_bool(cfg, "mlp_bias", 0, &mb, err, errlen) ||
            bli_conv_int_key(cfg, "local_attention", 128, 2, 2 * (int64_t)BL_MAX_POSITIONS, &local, err, errlen) ||
            bli_conv_int_key(cfg, "global_attn_every_n_layers", 3, 1, BL_MAX_LAYERS, &every, err, errlen))
            return -1;
        if (nb || ab || mb) {
            bli_set_err(err, errlen, "model_type 'modernbert' with %s true: bertlens runs ModernBERT without biases, "
                        "as released", nb ? "norm_bias" : ab ? "attention_bias" : "mlp_bias");
            return -1;
        }
        /* the Hub's global_rope_theta / local_rope_theta, or newer
         * transformers' rope_parameters {full_attention, sliding_attention} */
        double tg, tl;
        const bli_jv *rp = bli_jget(cfg, "rope_parameters"), *rg = NULL, *rl = NULL;
        if (rp && rp->type == BLI_JOBJ) {
            const bli_jv *g = bli_jget(rp, "full_attention"), *l = bli_jget(rp, "sliding_attention");
            rg = g && g->type == BLI_JOBJ ? bli_jget(g, "rope_theta") : NULL;
            rl = l && l->type == BLI_JOBJ ? bli_jget(l, "rope_theta") : NULL;
            const bli_jv *tg_ = g && g->type == BLI_JOBJ ? bli_jget(g, "rope_type") : NULL,
                         *tl_ = l && l->type == BLI_JOBJ ? bli_jget(l, "rope_type") : NULL;
            for (const bli_jv *t = tg_; t; t = t == tg_ ? tl_ : NULL)
                if (t->type != BLI_JSTR || strcmp(t->str, "default")) {
                    bli_set_err(err, errlen, "model_type 'modernbert': rope_type '%s': bertlens runs the default "
                                "rotary embedding", t->type == BLI_JSTR ? t->str : "?");
                    return -1;
                }
        }
        if (!rg) rg = bli_jget(cfg, "global_rope_theta");
        if (!rl) rl = bli_jget(cfg, "local_rope_theta");
        if (get_num(rg, "global_rope_theta", 160000.0, &tg, err, errlen) ||
            get_num(rl, "local_rope_theta", 10000.0, &tl, err, errlen))
            return -1;
        /* layer_types, when given, decides which layers are global; it must
         * be the pattern every n-th layer from 0 (the encoder's rule) */
        const bli_jv *lt = bli_jget(cfg, "layer_types");
        if (lt && lt->type == BLI_JARR) {
            if ((int64_t)lt->n != k->n_layers) {
                bli_set_err(err, errlen, "config.json: layer_types has %zu entries for %d layers", lt->n, k->n_layers);
                return -1;
            }
            /* the period: the first global layer after layer 0 (none: only layer 0) */
            every = 1;
            while (every < k->n_layers && !(lt->items[every].type == BLI_JSTR &&
                                             !strcmp(lt->items[every].str, "full_attention")))
                every++;
            for (int32_t l = 0; l < k->n_layers; l++) {
                const bli_jv *e = &lt->items[l];
                const char *want = l % every ? "sliding_attention" : "full_attention";
                if (e->type != BLI_JSTR || strcmp(e->str, want)) {
                    bli_set_err(err, errlen, "config.json: layer_types[%d] is '%s': bertlens runs a global layer "
                                "every n-th layer from layer 0, sliding ones between", l,
                                e->type == BLI_JSTR ? e->str : "?");
                    return -1;
                }
            }
        }
        f->global_every = every;
        f->window = local / 2;
        f->rope_global = (float)tg;
        f->rope_local = (float)tl;
        f->nopos = 1;
        if (k->hidden / k->n_heads % 2) {
            bli_set_err(err, errlen, "model_type 'modernbert': head size %d is odd (rotary pairs)", k->hidden / k->n_heads);
            return -1;
        }
    }
    return 0;
}

static void meta_f32(bli_conv *c, const char *key, float v) {
    uint32_t bits;
    memcpy(&bits, &v, 4);
    bli_conv_meta_key(&c->meta, key, BL_META_F32);
    bli_conv_put32(&c->meta, bits);
    c->n_meta++;
}

void bli_conv_rel_meta(bli_conv *c) {
    const bli_family *f = &c->fam;
    if (f->kind == BLI_FAM_MPNET) {
        bli_conv_meta_u32(c, "model.padding_idx", (uint32_t)f->pad_id);
        bli_conv_meta_u32(c, "model.rel_rows", (uint32_t)f->rel_rows);
    }
    if (f->kind == BLI_FAM_DEBERTA) {
        bli_conv_meta_u32(c, "model.rel_rows", (uint32_t)f->rel_rows);
        bli_conv_meta_u32(c, "model.position_buckets", (uint32_t)f->rel_buckets);
        bli_conv_meta_u32(c, "model.max_relative_positions", (uint32_t)f->rel_max);
        bli_conv_meta_u32(c, "model.pos_att", (uint32_t)f->rel_terms);
        bli_conv_meta_u32(c, "model.rel_norm", (uint32_t)f->rel_norm);
    }
    if (f->kind == BLI_FAM_MODERNBERT) {
        bli_conv_meta_u32(c, "model.window", (uint32_t)f->window);
        bli_conv_meta_u32(c, "model.global_every", (uint32_t)f->global_every);
        meta_f32(c, "model.rope_global", f->rope_global);
        meta_f32(c, "model.rope_local", f->rope_local);
    }
}

/* Source names (prefix stripped) -> the bundle's, by prefix of the rest. */
static const char *const MPNET_SUB[][2] = {
    {"attention.attn.q.", "attention.self.query."},   {"attention.attn.k.", "attention.self.key."},
    {"attention.attn.v.", "attention.self.value."},   {"attention.attn.o.", "attention.output.dense."},
    {"attention.LayerNorm.", "attention.output.LayerNorm."},
};
static const char *const DEBERTA_SUB[][2] = {
    {"attention.self.query_proj.", "attention.self.query."},
    {"attention.self.key_proj.", "attention.self.key."},
    {"attention.self.value_proj.", "attention.self.value."},
};
static const char *const MODERNBERT_SUB[][2] = {
    {"attn.Wo.", "attention.output.dense."},
    {"attn_norm.", "attention.output.LayerNorm."},
    {"mlp_norm.", "output.LayerNorm."},
    {"mlp.Wo.", "output.dense."},
};

static void sub_layer(char *n, size_t cap, const char *pre, const char *const (*sub)[2], size_t nsub,
                      const char *outpre) {
    int l, used = 0;
    char fmt[64];
    snprintf(fmt, sizeof fmt, "%s%%d.%%n", pre);
    if (sscanf(n, fmt, &l, &used) != 1 || !used) return;
    const char *rest = n + used;
    for (size_t i = 0; i < nsub; i++)
        if (!strncmp(rest, sub[i][0], strlen(sub[i][0]))) {
            char out[512];
            snprintf(out, sizeof out, "%s%d.%s%s", outpre, l, sub[i][1], rest + strlen(sub[i][0]));
            if (strlen(out) < cap) memcpy(n, out, strlen(out) + 1);
            return;
        }
}

void bli_conv_rel_rename(const bli_conv *c, char *n, size_t cap) {
    const int kind = c->fam.kind;
    /* the task models' prefixes (MPNetForMaskedLM, DebertaV2For*) */
    static const char *const pre[] = {"mpnet.", "deberta."};
    for (int i = 0; i < 2; i++)
        if (!strncmp(n, pre[i], strlen(pre[i]))) memmove(n, n + strlen(pre[i]), strlen(n + strlen(pre[i])) + 1);
    if (kind == BLI_FAM_MPNET)
        sub_layer(n, cap, "encoder.layer.", MPNET_SUB, sizeof MPNET_SUB / sizeof *MPNET_SUB, "encoder.layer.");
    if (kind == BLI_FAM_DEBERTA) {
        if (!strncmp(n, "encoder.LayerNorm.", 18)) {
            char out[512];
            snprintf(out, sizeof out, "encoder.rel_embeddings.LayerNorm.%s", n + 18);
            if (strlen(out) < cap) memcpy(n, out, strlen(out) + 1);
            return;
        }
        sub_layer(n, cap, "encoder.layer.", DEBERTA_SUB, sizeof DEBERTA_SUB / sizeof *DEBERTA_SUB, "encoder.layer.");
    }
    if (kind == BLI_FAM_MODERNBERT) {
        static const char *const whole[][2] = {{"embeddings.tok_embeddings.weight", "embeddings.word_embeddings.weight"},
                                               {"embeddings.norm.weight", "embeddings.LayerNorm.weight"},
                                               {"final_norm.weight", "encoder.final_norm.weight"}};
        for (size_t i = 0; i < 3; i++)
            if (!strcmp(n, whole[i][0])) {
                if (strlen(whole[i][1]) < cap) memcpy(n, whole[i][1], strlen(whole[i][1]) + 1);
                return;
            }
        sub_layer(n, cap, "layers.", MODERNBERT_SUB, sizeof MODERNBERT_SUB / sizeof *MODERNBERT_SUB,
                  "encoder.layer.");
    }
}

/* Does `suffix` end name (after "encoder.layer.N.")? */
static int layer_is(const char *name, const char *suffix) {
    int l, used = 0;
    return sscanf(name, "encoder.layer.%d.%n", &l, &used) == 1 && used && !strcmp(name + used, suffix);
}

int bli_conv_rel_zeros(const bli_conv *c, const char *name) {
    const int kind = c->fam.kind;
    if (!bli_conv_rel_kind(kind)) return 0;
    /* no token types (MPNet, ModernBERT; DeBERTa with type_vocab_size 0),
     * no absolute positions (DeBERTa, ModernBERT): one row of zeros */
    if (!strcmp(name, "embeddings.token_type_embeddings.weight")) return 1; /* only asked when absent */
    if (c->fam.nopos && !strcmp(name, "embeddings.position_embeddings.weight")) return 1;
    if (kind != BLI_FAM_MODERNBERT) return 0;
    /* ModernBERT has no biases at all; layer 0 has no attention norm (the
     * encoder never reads that one: its input is the embeddings' norm) */
    static const char *const none[] = {"attention.self.query.bias", "attention.self.key.bias",
                                       "attention.self.value.bias", "attention.output.dense.bias",
                                       "attention.output.LayerNorm.bias", "intermediate.dense.bias",
                                       "output.dense.bias", "output.LayerNorm.bias"};
    if (!strcmp(name, "embeddings.LayerNorm.bias")) return 1;
    for (size_t i = 0; i < sizeof none / sizeof *none; i++)
        if (layer_is(name, none[i])) return 1;
    return !strcmp(name, "encoder.layer.0.attention.output.LayerNorm.weight");
}

int bli_conv_rel_slice(const bli_conv *c, const char *name, char *src, size_t cap, int64_t *row0, int64_t *rows_src) {
    if (c->fam.kind != BLI_FAM_MODERNBERT) return 0;
    const int64_t H = c->cfg.hidden, I = c->cfg.intermediate;
    static const char *const qkv[] = {"attention.self.query.weight", "attention.self.key.weight",
                                      "attention.self.value.weight"};
    int l, used = 0;
    if (sscanf(name, "encoder.layer.%d.%n", &l, &used) != 1 || !used) return 0;
    for (int i = 0; i < 3; i++)
        if (!strcmp(name + used, qkv[i])) {
            /* Wqkv [3][heads][d] outputs: q rows 0..H-1, k, then v */
            snprintf(src, cap, "layers.%d.attn.Wqkv.weight", l);
            *row0 = i * H;
            *rows_src = 3 * H;
            return 1;
        }
    if (!strcmp(name + used, "intermediate.dense.weight") || !strcmp(name + used, "intermediate.gate.weight")) {
        /* Wi's outputs: the input half, then the gate half (chunk(2)) */
        snprintf(src, cap, "layers.%d.mlp.Wi.weight", l);
        *row0 = name[used + 13] == 'g' ? I : 0;
        *rows_src = 2 * I;
        return 1;
    }
    return 0;
}
