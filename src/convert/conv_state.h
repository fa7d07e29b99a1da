/* conv_state.h — internal to the converter (convert.h): the state one
 * conversion carries from stage to stage, and what the stage files share.
 *
 *   convert.c              the driver: bli_conv_new / begin / plan / hash / finish
 *   convert_vocab.c        the vocabulary: BERT's WordPiece, or else convert_tokenizer.c
 *   convert_tokenizer.c    a tokenizer.json that is not BERT's WordPiece, kept whole
 *   convert_config.c       config.json's shape and sentence-transformers settings
 *   convert_family.c       the encoder family: its config keys, metadata, weight names
 *   convert_rel.c          the same for the position traits, zeros, fused weights
 *   convert_files.c        the checkpoint's files: wanted, found, parsed; config keys
 *   convert_safetensors.c  safetensors headers -> the source tensors
 *   convert_head_names.c   the head tensors' names (below safetensors)
 *   convert_tensors.c      one bundle tensor planned from its source (bli_conv_add_tensor)
 *   convert_head.c         the masked-LM and task heads' config and recipes
 *   convert_quant.c        one tensor: source dtype -> f32 -> the bundle's dtype
 *   sha256.c, dtype.h      source.sha256, the f16 codec
 */
#ifndef BL_CONV_STATE_H
#define BL_CONV_STATE_H

#include "convert.h"
#include "bertlens.h"
#include "format/bundle.h"
#include "text/json.h"
#include "text/json_read.h"
#include "base/sha256.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ALIGN 64u
#define MAX_FILES 64

enum { SRC_F32, SRC_F16, SRC_BF16, SRC_F64, SRC_I64, SRC_OTHER };
extern const char *const bli_conv_src_names[SRC_OTHER]; /* safetensors dtype names */
extern const int bli_conv_src_size[SRC_OTHER + 1];      /* bytes per element, 0: other */

/* DistilBERT names -> BERT names, replaced in this order (convert.py
 * DISTIL_NAMES); its missing token-type embeddings become DISTIL_TYPES rows
 * of zeros. */
extern const char *const bli_conv_distil_names[9][2];
#define DISTIL_TYPES 2
#define DISTIL_TOKEN_TYPES "embeddings.token_type_embeddings.weight"

typedef struct {
    char *name; /* relative to the checkpoint folder */
    char *bytes; /* NULL: only the size is known */
    uint64_t size;
} cfile;

typedef struct {
    char *name;   /* normalized (no "bert." / "model.", LayerNorm.weight/bias) */
    int src;      /* SRC_* */
    int n_dims;
    int64_t dims[4];
    int w;        /* weight file */
    uint64_t off, nbytes; /* absolute offset in the weight file */
} stensor;

typedef struct {
    char name[96];
    int n_dims;
    int64_t dims[2];
    int dtype;      /* bundle dtype */
    int src;        /* stensors index */
    uint64_t off, nbytes; /* in the data section */
    uint64_t skip;  /* a row slice: bytes of the source before it (convert_rel.c) */
    uint32_t crc;
    int done;
} otensor;

struct bli_conv {
    int dtype, embed_dtype, cased;
    int distil; /* a DistilBERT checkpoint */
    bli_family fam;  /* the family (convert_family.c): layout, embeddings, positions, layers */
    int meta_family; /* model.family was written: format version 2 (bundle.h) */
    char *name, *license;
    bli_conv_log log;
    void *log_ctx;

    cfile files[MAX_FILES];
    int n_files;
    const char *dir; /* "" or "0_Transformer/" */

    bl_config cfg;
    float ln_eps;
    const char *activation;
    bli_jbuf meta; /* config + tokenizer entries */
    int n_meta;
    char *max_seq; /* sentence.max_seq_length text, or NULL */
    int meta_bytes; /* a BYTES entry was written: format version 2 (bundle.h) */

    char *weights[MAX_FILES];
    uint64_t weight_size[MAX_FILES];
    int n_weights, sharded, headers_set;

    stensor *st;
    int n_st, cap_st;

    otensor *ot;
    int n_ot;
    uint64_t meta_size, table_size, data_offset, data_size, file_size;
    int planned;

    bli_sha256 sha;
    uint64_t hashed;

    /* the masked-LM head (convert_head.c) */
    const char *head_act; /* its activation's bundle name               */
    int head_tied;        /* config.json's tie_word_embeddings (default 1) */
    int head_no_biases;   /* its family's head_no_biases (family.h)          */
    /* the task head (convert_head.c): its BL_TASK_* kind (0: none), its
     * family's recipe (source tensor names), the dense layer's activation */
    int task_kind;
    const void *task_recipe;
    const char *task_act;
};

/* One log line through the caller's callback (none: nothing). */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static inline void bli_conv_logf(bli_conv *c, const char *fmt, ...) {
    if (!c->log) return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    c->log(c->log_ctx, line);
}

static inline char *bli_conv_strdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

/* The checkpoint's files (convert_files.c). */
const cfile *bli_conv_file_at(const bli_conv *c, const char *dir, const char *base);
const cfile *bli_conv_find_file(const bli_conv *c, const char *base);
bli_jv *bli_conv_parse_file(const cfile *f, char *err, size_t errlen);

/* tokenizer.json tj and tokenizer_config.json tc (either may be NULL) say
 * the same of every setting transformers' tokenizer class rebuilds from tc:
 * 0, else -1 with both named (convert_tok_agree.c). */
int bli_conv_tok_agree(const bli_conv *c, const bli_jv *tj, const bli_jv *tc, char *err, size_t errlen);

/* config.json's key as an integer (dflt when absent or null), in [lo, hi];
 * else -1 with the key named (convert_files.c). */
int bli_conv_int_key(const bli_jv *cfg, const char *key, int64_t dflt, int64_t lo, int64_t hi, int32_t *out,
                     char *err, size_t errlen);

/* The stages of bli_conv_begin: 0, or -1 with a reason. config and
 * sentence: convert_config.c; vocab: convert_vocab.c. */
int bli_conv_stage_config(bli_conv *c, const bli_jv *cfg, char *err, size_t errlen);
int bli_conv_stage_vocab(bli_conv *c, char *err, size_t errlen);
int bli_conv_stage_sentence(bli_conv *c, char *err, size_t errlen);
/* convert_family.c: the family of model_type `type` (refused by name when
 * bertlens does not run it), then its config keys once the shape is read;
 * its metadata entries (none for BERT layouts); its weight names renamed in
 * place (n has cap bytes). */
int bli_conv_stage_family(bli_conv *c, const bli_jv *cfg, const char *type, const char *arch, char *err,
                          size_t errlen);
int bli_conv_family_shape(bli_conv *c, const bli_jv *cfg, char *err, size_t errlen);
void bli_conv_meta_family(bli_conv *c);
void bli_conv_family_rename(const bli_conv *c, char *n, size_t cap);
/* convert_rel.c: the same stages for the position traits (relative,
 * rotary; family.h), and what convert.c asks of the traits: is bundle
 * tensor `name`, absent from the checkpoint, made of zeros (1); is it rows
 * row0 .. of source tensor src ([rows_src][K] or [rows_src]) (1). */
int bli_conv_rel_shape(bli_conv *c, const bli_jv *cfg, char *err, size_t errlen);
void bli_conv_rel_meta(bli_conv *c);
int bli_conv_rel_zeros(const bli_conv *c, const char *name);
int bli_conv_rel_slice(const bli_conv *c, const char *name, char *src, size_t cap, int64_t *row0, int64_t *rows_src);
/* convert_head_names.c: the bundle's head.* name of a source tensor (or NULL). */
const char *bli_conv_head_name(const char *n);
/* convert_head.c: what config.json says of the head (c->head_act, c->head_tied). */
int bli_conv_stage_head(bli_conv *c, const bli_jv *cfg, char *err, size_t errlen);
/* convert_head.c: the task head's tensors (task.*, bundle.h), planned by
 * convert.c's bli_conv_plan through bli_conv_add_tensor. */
int bli_conv_plan_task(bli_conv *c, char *err, size_t errlen);
/* convert_tensors.c: bundle tensor `name`, [d0] (d1 0) or [d0][d1], of
 * bundle dtype `dtype`, appended to c->ot from its source tensor (or a row
 * slice of a fused one, or zeros the traits allow): 0, or -1 with a reason. */
int bli_conv_add_tensor(bli_conv *c, const char *name, int64_t d0, int64_t d1, int dtype, char *err, size_t errlen);
/* convert_head_names.c: 1: the head tensor `name`, absent from the checkpoint, is made of zeros (head_no_biases). */
int bli_conv_head_zeros(const bli_conv *c, const char *name);
/* The bert.* entries (convert_config.c), for both tokenizer paths (convert_vocab.c, convert_tokenizer.c). */
void bli_conv_meta_config(bli_conv *c);
/* convert_tokenizer.c: the tokenizer.json path. 1: written; 0: the WordPiece
 * path's (vocab.txt or BERT's tokenizer.json); -1: refused (err). */
int bli_conv_tokenizer_hf(bli_conv *c, char *err, size_t errlen);
/* convert_files.c: what bli_conv_wants answers for the tokenizer's other
 * files (a base name); those read by name only (vocab.json, merges.txt, then
 * SentencePiece models; NULL-terminated). */
int bli_conv_tokenizer_wants(const char *base);
extern const char *const bli_conv_orig_files[];

/* ---------------------------------------------------------- metadata
 * Entries of the bundle's metadata section (bundle.h), little-endian. */

static inline void bli_conv_put32(bli_jbuf *b, uint32_t v) {
    uint8_t p[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    bli_json_raw(b, (const char *)p, 4);
}

static inline void bli_conv_put64(bli_jbuf *b, uint64_t v) {
    bli_conv_put32(b, (uint32_t)v);
    bli_conv_put32(b, (uint32_t)(v >> 32));
}

static inline void bli_conv_meta_key(bli_jbuf *b, const char *key, uint32_t type) {
    bli_conv_put32(b, (uint32_t)strlen(key));
    bli_json_raw(b, key, strlen(key));
    bli_conv_put32(b, type);
}

static inline void bli_conv_meta_u32(bli_conv *c, const char *key, uint32_t v) {
    bli_conv_meta_key(&c->meta, key, BL_META_U32);
    bli_conv_put32(&c->meta, v);
    c->n_meta++;
}

static inline void bli_conv_meta_str(bli_jbuf *b, const char *key, const char *s) {
    bli_conv_meta_key(b, key, BL_META_STR);
    bli_conv_put32(b, (uint32_t)strlen(s));
    bli_json_raw(b, s, strlen(s));
}

#endif
