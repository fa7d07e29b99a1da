/* bundle_family.c — the loader's family stage (bundle.h "Families"):
 * model.family and the family's keys, checked and read into the model's
 * bli_family, then every tensor of the family's lists checked for presence,
 * shape and dtype. Called by bl_model_load (bundle.c) after the config. */
#include "bundle_impl.h"
#include "families/family.h"

#include <stdio.h>
#include <string.h>

/* An optional family key (bundle.h "Families"): present exactly when the
 * family wants it (`want`), then a u32 in [lo, hi]. */
static int family_u32(const bl_model *m, const char *key, int want, uint32_t lo, uint32_t hi, int32_t *out,
                      char *err, size_t errlen) {
    if (!bli_bundle_meta(m, key)) {
        if (want == 1) bli_set_err(err, errlen, "a %s bundle needs the metadata '%s'", m->fam.name, key);
        return want == 1 ? -1 : 0;
    }
    if (!want) {
        bli_set_err(err, errlen, "metadata '%s' does not belong in a %s bundle", key, m->fam.name);
        return -1;
    }
    return bli_bundle_u32(m, key, lo, hi, out, err, errlen) ? 1 : -1;
}

/* A family's F32 key, present exactly when wanted, positive and finite. */
static int family_f32(const bl_model *m, const char *key, int want, float *out, char *err, size_t errlen) {
    const meta_entry *e = bli_bundle_meta(m, key);
    if (!e || !want) return family_u32(m, key, want, 0, 0, NULL, err, errlen); /* the message */
    float v;
    memcpy(&v, &e->u32, 4);
    if (e->type != BL_META_F32 || !(v > 0.0f && v < 1e30f)) {
        bli_set_err(err, errlen, "metadata '%s' must be a positive f32", key);
        return -1;
    }
    *out = v;
    return 1;
}

/* The keys of the position traits (bundle.h "Families"). */
static int parse_family_rel(bl_model *m, char *err, size_t errlen) {
    bli_family *f = &m->fam;
    const bl_config *c = &m->cfg;
    const bli_family_traits *tr = bli_traits(f->kind);
    const int mp = tr->positions == BLI_POS_BUCKETS, db = tr->positions == BLI_POS_DISENTANGLED,
              rot = tr->positions == BLI_POS_ROTARY, sl = rot && tr->sliding;
    if (family_u32(m, "model.rel_rows", mp || db, mp ? 32 : 2, mp ? 4096 : 2 * BL_MAX_POSITIONS, &f->rel_rows, err,
                   errlen) < 0 ||
        family_u32(m, "model.position_buckets", db, 0, BL_MAX_POSITIONS, &f->rel_buckets, err, errlen) < 0 ||
        family_u32(m, "model.max_relative_positions", db, 1, BL_MAX_POSITIONS, &f->rel_max, err, errlen) < 0 ||
        family_u32(m, "model.pos_att", db, 0, 3, &f->rel_terms, err, errlen) < 0 ||
        family_u32(m, "model.rel_norm", db, 0, 1, &f->rel_norm, err, errlen) < 0 ||
        family_u32(m, "model.window", sl, 1, BL_MAX_POSITIONS, &f->window, err, errlen) < 0 ||
        family_u32(m, "model.global_every", sl, 1, (uint32_t)c->n_layers, &f->global_every, err, errlen) < 0 ||
        family_f32(m, "model.rope_global", rot, &f->rope_global, err, errlen) < 0 ||
        family_f32(m, "model.rope_local", sl, &f->rope_local, err, errlen) < 0)
        return 0;
    if (db && f->rel_rows != 2 * (f->rel_buckets ? f->rel_buckets : f->rel_max)) {
        bli_set_err(err, errlen, "model.rel_rows %d is not twice the span (model.position_buckets %d, "
                    "model.max_relative_positions %d)", f->rel_rows, f->rel_buckets, f->rel_max);
        return 0;
    }
    if (rot && c->hidden / c->n_heads % 2) {
        bli_set_err(err, errlen, "a %s bundle needs an even head size (rotary pairs), not %d", f->name,
                    c->hidden / c->n_heads);
        return 0;
    }
    if (rot && !sl) { /* one theta, every layer global */
        f->rope_local = f->rope_global;
        f->global_every = 1;
    }
    if (db || rot) {
        f->nopos = 1;
        f->pos_rows = 1; /* one row of zeros, every token's */
    }
    f->notypes = tr->types == BLI_TYPES_NONE || (tr->types == BLI_TYPES_CONFIG_OR_NONE && c->type_vocab_size == 1);
    return 1;
}

/* model.family and its keys -> m->fam; the config's max_positions becomes
 * the tokens the model takes (RoBERTa: the rows less padding_idx + 1). */
int bli_bundle_family(bl_model *m, char *err, size_t errlen) {
    bl_config *c = &m->cfg;
    bli_family *f = &m->fam;
    memset(f, 0, sizeof *f);
    f->kind = BLI_FAM_BERT;
    snprintf(f->name, sizeof f->name, "bert");
    f->embed = c->hidden;
    f->pos_rows = c->max_positions;
    f->pad_id = -1;
    f->n_stored = c->n_layers;
    const meta_entry *e = bli_bundle_meta(m, "model.family");
    if (e) {
        char shown[64];
        if (e->type != BL_META_STR) {
            bli_set_err(err, errlen, "metadata 'model.family' must be a string");
            return 0;
        }
        bli_bundle_safe_name(shown, sizeof shown, (const uint8_t *)e->str, strlen(e->str));
        if (m->version < 2) {
            bli_set_err(err, errlen, "metadata 'model.family' needs format version 2, the header says %u", m->version);
            return 0;
        }
        const bli_family_info *fi = bli_family_find(e->str);
        if (!fi || fi->kind < 0) {
            bli_set_err(err, errlen, "model.family '%s' is not one this build runs (%s)", shown, bli_family_list());
            return 0;
        }
        f->kind = fi->kind;
        snprintf(f->name, sizeof f->name, "%s", fi->type);
    }
    const bli_family_traits *tr = bli_traits(f->kind);
    int32_t v = 0;
    int r = family_u32(m, "model.padding_idx", tr->pad_positions != BLI_PAD_NONE, 0,
                       (uint32_t)f->pos_rows - 1, &v, err, errlen);
    if (r < 0) return 0;
    if (r) {
        if (v + 1 >= f->pos_rows) {
            bli_set_err(err, errlen, "model.padding_idx %d leaves no position of the %d rows", v, f->pos_rows);
            return 0;
        }
        f->pad_id = v;
        f->pos_offset = v + 1;
        c->max_positions = f->pos_rows - f->pos_offset;
    }
    r = family_u32(m, "model.embedding_size", tr->project == BLI_PROJ_ALWAYS ? 1 : tr->project ? 2 : 0, 1,
                   BL_MAX_HIDDEN, &v, err, errlen);
    if (r < 0) return 0;
    if (r) f->embed = v, f->project = 1;
    r = family_u32(m, "model.layer_groups", tr->layer_groups, 1, (uint32_t)c->n_layers, &v, err, errlen);
    if (r < 0) return 0;
    if (r) {
        if (c->n_layers % v) {
            bli_set_err(err, errlen, "model.layer_groups %d does not divide bert.n_layers %d", v, c->n_layers);
            return 0;
        }
        f->n_stored = v;
    }
    return parse_family_rel(m, err, errlen);
}

/* Every tensor of bundle.h's lists, per layer for the layer list. */
typedef struct {
    const char *name; /* printf format, %d = layer for per-layer tensors */
    int d0, d1;       /* BL_DIM_*                                         */
    int f32_only;
} tensor_spec;

#define TENSOR_SPEC(field, name, d0, d1, dtypes) {name, BL_DIM_##d0, BL_DIM_##d1, BL_DTYPES_##dtypes == BL_DTYPES_F32},
static const tensor_spec model_tensors[] = {BL_TENSORS_WORD(TENSOR_SPEC) BL_TENSORS_EMBED(TENSOR_SPEC)};
static const tensor_spec layer_tensors[] = {BL_TENSORS_LAYER(TENSOR_SPEC)};
static const tensor_spec project_tensors[] = {BL_TENSORS_PROJECT(TENSOR_SPEC)};
static const tensor_spec mpnet_tensors[] = {BL_TENSORS_MPNET(TENSOR_SPEC)};
static const tensor_spec deberta_tensors[] = {BL_TENSORS_DEBERTA(TENSOR_SPEC)};
static const tensor_spec deberta_norm_tensors[] = {BL_TENSORS_DEBERTA_NORM(TENSOR_SPEC)};
static const tensor_spec final_norm_tensors[] = {BL_TENSORS_MODERNBERT(TENSOR_SPEC)};
static const tensor_spec gate_layer_tensors[] = {BL_TENSORS_MODERNBERT_LAYER(TENSOR_SPEC)};
#undef TENSOR_SPEC

/* The tensors of list[0..n) (per layer l when the names take one). */
static int check_list(const bl_model *m, const tensor_spec *list, size_t n, int l, char *err, size_t errlen) {
    char name[128];
    for (size_t k = 0; k < n; k++) {
        snprintf(name, sizeof name, list[k].name, l);
        if (!bli_bundle_check_tensor(m, name, bli_fdim_size(&m->cfg, &m->fam, list[k].d0), bli_fdim_size(&m->cfg, &m->fam, list[k].d1),
                          list[k].f32_only, err, errlen))
            return 0;
    }
    return 1;
}
#define CHECK_LIST(list, l) check_list(m, list, sizeof list / sizeof *list, l, err, errlen)

/* The tensors of the traits beyond BERT's (bundle.h): the position tables,
 * the final norm, the feed-forward gates. */
static int check_tensors_rel(const bl_model *m, char *err, size_t errlen) {
    const bli_family_traits *tr = bli_traits(m->fam.kind);
    if (tr->positions == BLI_POS_BUCKETS && !CHECK_LIST(mpnet_tensors, 0)) return 0;
    if (tr->positions == BLI_POS_DISENTANGLED &&
        !(CHECK_LIST(deberta_tensors, 0) && (!m->fam.rel_norm || CHECK_LIST(deberta_norm_tensors, 0))))
        return 0;
    if (tr->final_norm && !CHECK_LIST(final_norm_tensors, 0)) return 0;
    for (int l = 0; tr->ffn == BLI_FFN_GATED && l < m->cfg.n_layers; l++)
        if (!CHECK_LIST(gate_layer_tensors, l)) return 0;
    return 1;
}

int bli_bundle_check_tensors(const bl_model *m, char *err, size_t errlen) {
    const bl_config *c = &m->cfg;
    const bli_family *f = &m->fam;
    for (size_t k = 0; k < sizeof model_tensors / sizeof *model_tensors; k++) {
        const tensor_spec *t = &model_tensors[k];
        if (!bli_bundle_check_tensor(m, t->name, bli_fdim_size(c, f, t->d0), bli_fdim_size(c, f, t->d1), t->f32_only, err,
                          errlen))
            return 0;
    }
    for (size_t k = 0; f->project && k < sizeof project_tensors / sizeof *project_tensors; k++) {
        const tensor_spec *t = &project_tensors[k];
        if (!bli_bundle_check_tensor(m, t->name, bli_fdim_size(c, f, t->d0), bli_fdim_size(c, f, t->d1), t->f32_only, err,
                          errlen))
            return 0;
    }
    char name[128];
    for (int l = 0; l < f->n_stored; l++)
        for (size_t k = 0; k < sizeof layer_tensors / sizeof *layer_tensors; k++) {
            const tensor_spec *t = &layer_tensors[k];
            snprintf(name, sizeof name, t->name, l);
            if (!bli_bundle_check_tensor(m, name, bli_fdim_size(c, f, t->d0), bli_fdim_size(c, f, t->d1), t->f32_only, err,
                              errlen))
                return 0;
        }
    return check_tensors_rel(m, err, errlen);
}

