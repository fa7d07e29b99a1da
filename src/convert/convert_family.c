/* convert_family.c — the converter's family stage (conv_state.h): which
 * encoder family config.json describes (family.h's table, refusing the rest
 * by name), the family's own config keys, its metadata entries (bundle.h
 * "Families") and its weight names mapped onto the bundle's BERT names. */
#include "conv_state.h"
#include "base/error.h"
#include "families/family.h"

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

/* After the shape is read (c->cfg): the family's own keys, by its traits. */
int bli_conv_family_shape(bli_conv *c, const bli_jv *cfg, char *err, size_t errlen) {
    bli_family *f = &c->fam;
    const bl_config *k = &c->cfg;
    const bli_family_traits *tr = bli_traits(f->kind);
    f->embed = k->hidden;
    f->pos_rows = k->max_positions;
    f->n_stored = k->n_layers;
    for (const char *const *key = tr->must_be_false; key && *key; key++) {
        const bli_jv *v = bli_jget(cfg, *key);
        if (v && v->type == BLI_JTRUE) {
            bli_set_err(err, errlen, "model_type '%s' with %s true: bertlens runs it as released, without that",
                        f->name, *key);
            return -1;
        }
    }
    if (tr->pad_positions == BLI_PAD_CONFIG) {
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
    if (tr->pad_positions == BLI_PAD_ONE) {
        /* MPNetEmbeddings: padding_idx 1 whatever pad_token_id says */
        f->pad_id = 1;
        f->pos_offset = 2;
        if (k->max_positions < 3) {
            bli_set_err(err, errlen, "config.json: max_position_embeddings %d leaves no position", k->max_positions);
            return -1;
        }
    }
    if (tr->project != BLI_PROJ_NONE) {
        int32_t e;
        if (bli_conv_int_key(cfg, "embedding_size", tr->embed_default ? tr->embed_default : k->hidden, 1,
                             BL_MAX_HIDDEN, &e, err, errlen))
            return -1;
        f->embed = e;
        f->project = tr->project == BLI_PROJ_ALWAYS || (tr->project == BLI_PROJ_IF_NARROW && e != k->hidden);
        if (!f->project) f->kind = BLI_FAM_BERT; /* ELECTRA base/large: BERT's layout, as before */
    }
    if (tr->layer_groups) {
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
    if (bli_conv_rel_shape(c, cfg, err, errlen)) return -1;
    if (f->nopos) f->pos_rows = 1; /* one row of zeros (bundle.h) */
    if (f->kind != BLI_FAM_BERT)
        bli_conv_logf(c, "[config] family %s: embeddings %d wide%s, positions from %d, %d stored layer%s", f->name,
                      f->embed, f->project ? " (projected)" : "", f->pos_offset, f->n_stored,
                      f->n_stored == 1 ? "" : "s");
    return 0;
}

void bli_conv_meta_family(bli_conv *c) {
    const bli_family *f = &c->fam;
    const bli_family_traits *tr = bli_traits(f->kind);
    if (f->kind == BLI_FAM_BERT) return; /* version 1, byte for byte as before */
    c->meta_family = 1;
    bli_conv_meta_str(&c->meta, "model.family", f->name);
    c->n_meta++;
    if (tr->pad_positions != BLI_PAD_NONE) bli_conv_meta_u32(c, "model.padding_idx", (uint32_t)f->pad_id);
    if (f->project) bli_conv_meta_u32(c, "model.embedding_size", (uint32_t)f->embed);
    if (tr->layer_groups) bli_conv_meta_u32(c, "model.layer_groups", (uint32_t)f->n_stored);
    bli_conv_rel_meta(c);
}

/* Replace n by `to` + the rest after its first `skip` bytes, when it fits. */
static void rename_to(char *n, size_t cap, size_t skip, const char *to) {
    char out[512];
    snprintf(out, sizeof out, "%s%s", to, n + skip);
    if (strlen(out) < cap) memcpy(n, out, strlen(out) + 1);
}

/* The traits' name map (family.h): task prefixes, whole names, then the
 * names within a layer, onto the bundle's encoder.layer.N. names. */
void bli_conv_family_rename(const bli_conv *c, char *n, size_t cap) {
    const bli_family_traits *tr = bli_traits(c->fam.kind);
    for (const char *const *p = tr->prefixes; p && *p; p++)
        if (!strncmp(n, *p, strlen(*p))) memmove(n, n + strlen(*p), strlen(n + strlen(*p)) + 1);
    for (const bli_name_map *m = tr->names; m && m->from; m++)
        if (!strncmp(n, m->from, strlen(m->from))) {
            rename_to(n, cap, strlen(m->from), m->to);
            return;
        }
    if (!tr->layer_src || strncmp(n, tr->layer_src, strlen(tr->layer_src))) return;
    int l, used = 0;
    const char *at = n + strlen(tr->layer_src);
    if (sscanf(at, "%d.%n", &l, &used) != 1 || !used) return;
    const char *rest = at + used;
    for (const bli_name_map *m = tr->layer_names; m && m->from; m++)
        if (!strncmp(rest, m->from, strlen(m->from))) {
            char to[128];
            snprintf(to, sizeof to, "encoder.layer.%d.%s", l, m->to);
            rename_to(n, cap, (size_t)(rest - n) + strlen(m->from), to);
            return;
        }
}
