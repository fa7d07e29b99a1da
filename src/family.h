/* family.h — the encoder families bertlens runs, and the ones it refuses
 * by name (src/family.c). A family is a Hugging Face model_type; its layout
 * (bundle.h BLI_FAM_*) says which embeddings, positions and layer sharing
 * the encoder runs. The converter, the loader and `bertlens info` read this
 * one table. */
#ifndef BL_FAMILY_H
#define BL_FAMILY_H

typedef struct bli_family_info {
    const char *type;  /* model_type, e.g. "roberta"                       */
    int kind;          /* BLI_FAM_* (bundle.h), or -1: refused             */
    const char *what;  /* kind -1: why, in a sentence; else a short label  */
} bli_family_info;

/* The entry of model_type `type`, or NULL for a type the table does not know. */
const bli_family_info *bli_family_find(const char *type);

/* The supported families' model_types, comma-separated, for messages. */
const char *bli_family_list(void);

#endif
