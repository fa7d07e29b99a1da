/* convert_rel.c — the converter's side of the position and layer traits
 * (family.h): the config keys of relative and rotary positions, their
 * metadata, the tensors made of zeros (absent biases, token types,
 * positions) and the row slices of fused weights (a q|k|v projection, a
 * W1|Wg feed-forward). Called by convert_family.c and convert.c at the
 * points where every family's stage runs. */
#include "conv_state.h"
#include "model/encoder_family.h"
#include "base/error.h"

#include <math.h>
#include <stdio.h>
#include <string.h>


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
    const bli_family_traits *tr = bli_traits(f->kind);
    if (tr->positions == BLI_POS_BUCKETS) {
        /* the encoder takes buckets 0..31 of a table of this many rows */
        if (bli_conv_int_key(cfg, "relative_attention_num_buckets", 32, 32, 4096, &f->rel_rows, err, errlen)) return -1;
    }
    if (tr->positions == BLI_POS_DISENTANGLED) {
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
    if (tr->positions == BLI_POS_ROTARY) {
        int32_t local = 2, every = 1;
        if (tr->sliding && (bli_conv_int_key(cfg, "local_attention", 128, 2, 2 * (int64_t)BL_MAX_POSITIONS, &local,
                                             err, errlen) ||
                            bli_conv_int_key(cfg, "global_attn_every_n_layers", 3, 1, BL_MAX_LAYERS, &every, err,
                                             errlen)))
            return -1;
        /* the Hub's global_rope_theta / local_rope_theta (sliding) or
         * rope_theta, or newer transformers' rope_parameters: {rope_theta}, or
         * {full_attention, sliding_attention} each with one */
        double tg, tl;
        const bli_jv *rp = bli_jget(cfg, "rope_parameters"), *rg = NULL, *rl = NULL;
        if (rp && rp->type == BLI_JOBJ) {
            const bli_jv *g = tr->sliding ? bli_jget(rp, "full_attention") : rp,
                         *l = tr->sliding ? bli_jget(rp, "sliding_attention") : NULL;
            rg = g && g->type == BLI_JOBJ ? bli_jget(g, "rope_theta") : NULL;
            rl = l && l->type == BLI_JOBJ ? bli_jget(l, "rope_theta") : NULL;
            const bli_jv *tg_ = g && g->type == BLI_JOBJ ? bli_jget(g, "rope_type") : NULL,
                         *tl_ = l && l->type == BLI_JOBJ ? bli_jget(l, "rope_type") : NULL;
            for (const bli_jv *t = tg_ ? tg_ : tl_; t; t = t == tg_ ? tl_ : NULL)
                if (t->type != BLI_JSTR || strcmp(t->str, "default")) {
                    bli_set_err(err, errlen, "model_type '%s': rope_type '%s': bertlens runs the default "
                                "rotary embedding", f->name, t->type == BLI_JSTR ? t->str : "?");
                    return -1;
                }
        }
        if (!rg) rg = bli_jget(cfg, tr->sliding ? "global_rope_theta" : "rope_theta");
        if (!rl) rl = bli_jget(cfg, "local_rope_theta");
        if (get_num(rg, tr->sliding ? "global_rope_theta" : "rope_theta", tr->sliding ? 160000.0 : 10000.0, &tg, err,
                    errlen) ||
            get_num(rl, "local_rope_theta", 10000.0, &tl, err, errlen))
            return -1;
        /* rotary on every dimension of a head: a partial rotation is refused */
        static const char *const partial[] = {"partial_rotary_factor", "rotary_emb_fraction"};
        for (int i = 0; i < 2; i++) {
            const bli_jv *v = bli_jget(cfg, partial[i]);
            if (v && v->type == BLI_JNUM && v->num != 1.0) {
                bli_set_err(err, errlen, "model_type '%s': %s %g: bertlens rotates every dimension of a head",
                            f->name, partial[i], v->num);
                return -1;
            }
        }
        if (!tr->sliding) tl = tg;
        int32_t kv, hd;
        if (bli_conv_int_key(cfg, "num_key_value_heads", k->n_heads, 1, BL_MAX_HEADS, &kv, err, errlen) ||
            bli_conv_int_key(cfg, "head_dim", k->hidden / k->n_heads, 1, BL_MAX_HIDDEN, &hd, err, errlen))
            return -1;
        if (kv != k->n_heads || hd * k->n_heads != k->hidden) {
            bli_set_err(err, errlen, "model_type '%s': %s: bertlens runs one key and value head per query head, "
                        "of hidden_size / num_attention_heads", f->name,
                        kv != k->n_heads ? "num_key_value_heads differs from num_attention_heads" : "head_dim");
            return -1;
        }
        /* layer_types, when given, decides which layers are global; it must
         * be the pattern every n-th layer from 0 (the encoder's rule) */
        const bli_jv *lt = tr->sliding ? bli_jget(cfg, "layer_types") : NULL;
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
        f->window = tr->sliding ? local / 2 : 0;
        f->rope_global = (float)tg;
        f->rope_local = (float)tl;
        f->nopos = 1;
        if (k->hidden / k->n_heads % 2) {
            bli_set_err(err, errlen, "model_type '%s': head size %d is odd (rotary pairs)", f->name,
                        k->hidden / k->n_heads);
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
    const bli_family_traits *tr = bli_traits(f->kind);
    if (tr->positions == BLI_POS_BUCKETS) bli_conv_meta_u32(c, "model.rel_rows", (uint32_t)f->rel_rows);
    if (tr->positions == BLI_POS_DISENTANGLED) {
        bli_conv_meta_u32(c, "model.rel_rows", (uint32_t)f->rel_rows);
        bli_conv_meta_u32(c, "model.position_buckets", (uint32_t)f->rel_buckets);
        bli_conv_meta_u32(c, "model.max_relative_positions", (uint32_t)f->rel_max);
        bli_conv_meta_u32(c, "model.pos_att", (uint32_t)f->rel_terms);
        bli_conv_meta_u32(c, "model.rel_norm", (uint32_t)f->rel_norm);
    }
    if (tr->positions == BLI_POS_ROTARY && tr->sliding) {
        bli_conv_meta_u32(c, "model.window", (uint32_t)f->window);
        bli_conv_meta_u32(c, "model.global_every", (uint32_t)f->global_every);
    }
    if (tr->positions == BLI_POS_ROTARY) meta_f32(c, "model.rope_global", f->rope_global);
    if (tr->positions == BLI_POS_ROTARY && tr->sliding) meta_f32(c, "model.rope_local", f->rope_local);
}

int bli_conv_rel_zeros(const bli_conv *c, const char *name) {
    const bli_family_traits *tr = bli_traits(c->fam.kind);
    /* no token types, no absolute positions: one row of zeros */
    if (tr->types != BLI_TYPES_CONFIG && !strcmp(name, "embeddings.token_type_embeddings.weight"))
        return 1; /* only asked when absent */
    if (c->fam.nopos && !strcmp(name, "embeddings.position_embeddings.weight")) return 1;
    if (!tr->absent_biases) return 0;
    /* a family without (some) biases: those it lacks are zeros; and the
     * norms the encoder never reads (no embedding norm; pre-norm layer 0
     * without an attention norm, its input being the embeddings' norm) */
    int l, used = 0;
    const size_t n = strlen(name);
    if (n > 5 && !strcmp(name + n - 5, ".bias") &&
        (!strncmp(name, "embeddings.LayerNorm.", 21) ||
         (sscanf(name, "encoder.layer.%d.%n", &l, &used) == 1 && used)))
        return 1;
    if (tr->no_emb_norm && !strcmp(name, "embeddings.LayerNorm.weight")) return 1;
    return tr->layer == BLI_LAYER_PRE_NORM && !tr->first_norm &&
           !strcmp(name, "encoder.layer.0.attention.output.LayerNorm.weight");
}

/* name is "encoder.layer.N." + one of subs: its N and which one (-1: none). */
static int layer_part(const char *name, const char *const *subs, int n, int *l) {
    int used = 0;
    if (sscanf(name, "encoder.layer.%d.%n", l, &used) != 1 || !used) return -1;
    for (int i = 0; i < n; i++)
        if (!strcmp(name + used, subs[i])) return i;
    return -1;
}

int bli_conv_rel_slice(const bli_conv *c, const char *name, char *src, size_t cap, int64_t *row0, int64_t *rows_src) {
    const bli_family_traits *tr = bli_traits(c->fam.kind);
    const int64_t H = c->cfg.hidden, I = c->cfg.intermediate;
    char pre[96];
    int l, i;
    static const char *const qkv[] = {"attention.self.query.weight", "attention.self.key.weight",
                                      "attention.self.value.weight", "attention.self.query.bias",
                                      "attention.self.key.bias", "attention.self.value.bias"};
    if (tr->fused_qkv && (i = layer_part(name, qkv, 6, &l)) >= 0) {
        /* Wqkv [3][heads][d] outputs: q rows 0..H-1, k, then v */
        snprintf(pre, sizeof pre, tr->fused_qkv, l);
        snprintf(src, cap, "%s%s", pre, i < 3 ? "weight" : "bias");
        *row0 = i % 3 * H;
        *rows_src = 3 * H;
        return 1;
    }
    static const char *const ffn[] = {"intermediate.dense.weight", "intermediate.gate.weight",
                                      "intermediate.dense.bias", "intermediate.gate.bias"};
    if (tr->fused_ffn && (i = layer_part(name, ffn, 4, &l)) >= 0) {
        /* W1|Wg's outputs: two halves (chunk(2)), the gate's first or second */
        const int gate = i % 2;
        snprintf(pre, sizeof pre, tr->fused_ffn, l);
        snprintf(src, cap, "%s%s", pre, i < 2 ? "weight" : "bias");
        *row0 = gate == tr->fused_ffn_gate_first ? 0 : I;
        *rows_src = 2 * I;
        return 1;
    }
    return 0;
}
