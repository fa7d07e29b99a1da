/* bundle_impl.h — internal to the loader: the model bl_model_load makes
 * (bundle_load.c over bundle.c) and the helpers its stages (bundle_family.c,
 * bundle_tokenizer.c, bundle_head.c) share. */
#ifndef BL_BUNDLE_IMPL_H
#define BL_BUNDLE_IMPL_H

#include "bundle.h"

#include <stddef.h>
#include <stdint.h>

typedef struct {
    char *key;        /* NUL-terminated copy                          */
    uint32_t type;    /* BL_META_*                                    */
    uint32_t u32;     /* U32 / I32 (bit pattern) / F32 (bit pattern)  */
    char *str;        /* STR: NUL-terminated copy                     */
    const uint8_t *arr; /* STRARR: first item's length field in the file */
    uint32_t count;   /* STRARR: number of items                      */
    const uint8_t *bytes; /* BYTES: the value in the file (borrowed)     */
    uint64_t nbytes;  /* BYTES: its length                            */
} meta_entry;

struct bl_model {
    bl_config cfg;
    const uint8_t *bytes; /* the caller's bundle (borrowed)   */
    size_t size;
    meta_entry *meta;     /* [n_meta]                          */
    uint32_t n_meta;
    bl_tensor *tensors;   /* [n_tensors]                       */
    uint32_t n_tensors;
    bl_tokenizer *tok;
    bl_head_info head;    /* the masked-LM head (check_head)    */
    uint32_t version;     /* the header's format version       */
    bli_family fam;       /* model.family and its keys (parse_family) */
};

/* bundle.c: the format read and checked (header, metadata, config, tensor
 * table, data CRCs and finite floats), before any stage (bundle_load.c):
 * a model, or NULL with a reason. */
bl_model *bli_bundle_parse(const void *data, size_t size, char *err, size_t errlen);

/* bundle.c: metadata entry `key` (NULL: absent); a u32 entry in [lo, hi]
 * (1, or 0 with the loader's message); a printable copy of a key or name;
 * one required tensor present with shape [d0] or [d0][d1] (and f32). */
const meta_entry *bli_bundle_meta(const bl_model *m, const char *key);
int bli_bundle_u32(const bl_model *m, const char *key, uint32_t lo, uint32_t hi, int32_t *out, char *err,
                   size_t errlen);
void bli_bundle_safe_name(char *dst, size_t cap, const uint8_t *p, size_t n);
int bli_bundle_check_tensor(const bl_model *m, const char *name, int64_t d0, int64_t d1, int f32_only, char *err,
                            size_t errlen);

/* Little-endian u32 at p. */
static inline uint32_t bli_le32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* bundle_tokenizer.c: the tokenizer from tokenizer.json or the vocabulary
 * (1, or 0 with the loader's message). */
int bli_bundle_build_tokenizer(bl_model *m, char *err, size_t errlen);
/* bundle_head.c: the masked-LM head's metadata and tensors -> m->head (1, or 0). */
int bli_bundle_check_head(bl_model *m, char *err, size_t errlen);

/* bundle_family.c: model.family and its keys -> m->fam (1, or 0 with a
 * reason), then every tensor of the family's lists (bundle.h). */
int bli_bundle_family(bl_model *m, char *err, size_t errlen);
int bli_bundle_check_tensors(const bl_model *m, char *err, size_t errlen);

#endif
