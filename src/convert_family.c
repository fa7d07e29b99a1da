/* convert_family.c — the converter's family stage (conv_state.h): which
 * encoder family config.json describes (family.h's table, refusing the rest
 * by name), the family's own config keys, its metadata entries (bundle.h
 * "Families") and its weight names mapped onto the bundle's BERT names. */
#include "conv_state.h"
#include "error.h"
#include "family.h"

#include <stdio.h>
#include <string.h>

int bli_conv_stage_family(bli_conv *c, const bli_jv *cfg, const char *type, const char *arch, char *err,
                          size_t errlen) {
    const bli_family_info *fi = bli_family_find(type);
    if (!fi || fi->kind < 0) {
        if (fi)
            bli_set_err(err, errlen, "model_type '%s' (%s) %s; bertlens converts %s", type, arch, fi->what,
                        bli_family_list());
        else
            bli_set_err(err, errlen,
                        "model_type is '%s' (%s): not an encoder family bertlens knows; it converts %s", type, arch,
                        bli_family_list());
        return -1;
    }
    bli_family *f = &c->fam;
    memset(f, 0, sizeof *f);
    f->kind = fi->kind;
    snprintf(f->name, sizeof f->name, "%s", fi->type);
    f->pad_id = -1;
    return 0;
}

/* After the shape is read (c->cfg): the family's own keys. */
int bli_conv_family_shape(bli_conv *c, const bli_jv *cfg, char *err, size_t errlen) {
    bli_family *f = &c->fam;
    const bl_config *k = &c->cfg;
    f->embed = k->hidden;
    f->pos_rows = k->max_positions;
    f->n_stored = k->n_layers;
    if (f->kind == BLI_FAM_ROBERTA) {
        /* RobertaEmbeddings: padding_idx = pad_token_id (1 in every released checkpoint) */
        int32_t pad;
        if (bli_conv_int_key(cfg, "pad_token_id", 1, 0, (int64_t)k->max_positions - 2, &pad, err, errlen)) return -1;
        if (pad >= k->vocab_size) {
            bli_set_err(err, errlen, "config.json: pad_token_id %d is not below vocab_size %d", pad, k->vocab_size);
            return -1;
        }
        f->pad_id = pad;
        f->pos_offset = pad + 1;
    }
    if (f->kind == BLI_FAM_ELECTRA || f->kind == BLI_FAM_ALBERT) {
        int32_t e;
        if (bli_conv_int_key(cfg, "embedding_size", f->kind == BLI_FAM_ALBERT ? 128 : k->hidden, 1, BL_MAX_HIDDEN, &e, err,
                    errlen))
            return -1;
        f->embed = e;
        f->project = f->kind == BLI_FAM_ALBERT || e != k->hidden;
        if (!f->project) f->kind = BLI_FAM_BERT; /* ELECTRA base/large: BERT's layout, as before */
    }
    if (f->kind == BLI_FAM_ALBERT) {
        int32_t g, inner;
        if (bli_conv_int_key(cfg, "num_hidden_groups", 1, 1, k->n_layers, &g, err, errlen) ||
            bli_conv_int_key(cfg, "inner_group_num", 1, 1, 64, &inner, err, errlen))
            return -1;
        if (k->n_layers % g) {
            bli_set_err(err, errlen, "config.json: num_hidden_groups %d does not divide num_hidden_layers %d", g,
                        k->n_layers);
            return -1;
        }
        if (inner != 1) {
            bli_set_err(err, errlen,
                        "config.json: inner_group_num %d: bertlens runs ALBERT groups of one layer (every released "
                        "ALBERT has inner_group_num 1)",
                        inner);
            return -1;
        }
        f->n_stored = g;
    }
    if (bli_conv_rel_kind(f->kind)) {
        if (bli_conv_rel_shape(c, cfg, err, errlen)) return -1;
        if (f->nopos) f->pos_rows = 1; /* one row of zeros (bundle.h) */
    }
    if (f->kind != BLI_FAM_BERT)
        bli_conv_logf(c, "[config] family %s: embeddings %d wide%s, positions from %d, %d stored layer%s", f->name,
                      f->embed, f->project ? " (projected)" : "", f->pos_offset, f->n_stored,
                      f->n_stored == 1 ? "" : "s");
    return 0;
}

void bli_conv_meta_family(bli_conv *c) {
    const bli_family *f = &c->fam;
    if (f->kind == BLI_FAM_BERT) return; /* version 1, byte for byte as before */
    c->meta_family = 1;
    bli_conv_meta_str(&c->meta, "model.family", f->name);
    c->n_meta++;
    if (f->kind == BLI_FAM_ROBERTA) bli_conv_meta_u32(c, "model.padding_idx", (uint32_t)f->pad_id);
    if (f->project) bli_conv_meta_u32(c, "model.embedding_size", (uint32_t)f->embed);
    if (f->kind == BLI_FAM_ALBERT) bli_conv_meta_u32(c, "model.layer_groups", (uint32_t)f->n_stored);
    bli_conv_rel_meta(c);
}

/* ALBERT's names -> the bundle's (bundle.h "Families", model.layer_groups). */
static const char *const ALBERT_SUB[][2] = {
    {"attention.query.", "attention.self.query."},
    {"attention.key.", "attention.self.key."},
    {"attention.value.", "attention.self.value."},
    {"attention.dense.", "attention.output.dense."},
    {"attention.LayerNorm.", "attention.output.LayerNorm."},
    {"ffn_output.", "output.dense."},
    {"ffn.", "intermediate.dense."},
    {"full_layer_layer_norm.", "output.LayerNorm."},
};

void bli_conv_family_rename(const bli_conv *c, char *n, size_t cap) {
    if (bli_conv_rel_kind(c->fam.kind)) bli_conv_rel_rename(c, n, cap);
    if (c->fam.kind != BLI_FAM_ALBERT) return;
    char out[512];
    if (!strncmp(n, "encoder.embedding_hidden_mapping_in.", 36)) {
        snprintf(out, sizeof out, "embeddings_project.%s", n + 36);
    } else {
        int g, inner, used = 0;
        if (sscanf(n, "encoder.albert_layer_groups.%d.albert_layers.%d.%n", &g, &inner, &used) != 2 || !used ||
            inner != 0)
            return;
        const char *rest = n + used;
        size_t i = 0;
        for (; i < sizeof ALBERT_SUB / sizeof *ALBERT_SUB; i++)
            if (!strncmp(rest, ALBERT_SUB[i][0], strlen(ALBERT_SUB[i][0]))) break;
        if (i == sizeof ALBERT_SUB / sizeof *ALBERT_SUB) return;
        snprintf(out, sizeof out, "encoder.layer.%d.%s%s", g, ALBERT_SUB[i][1], rest + strlen(ALBERT_SUB[i][0]));
    }
    if (strlen(out) < cap) memcpy(n, out, strlen(out) + 1);
}
