/* convert_files.c — the converter's ground floor (conv_state.h): which of a
 * checkpoint's files it wants (the small ones as text, the weights by size,
 * the original tokenizer files by name only), where a file is (the model
 * folder, else the checkpoint root), a file parsed as JSON, and config.json's
 * integer keys read with their range. Every stage above reads through these.
 */
#include "conv_state.h"
#include "base/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* conv_state.h: files read only by name (their bytes are never needed: they
 * are refused), NULL-terminated: byte-level BPE's two, then SentencePiece's. */
const char *const bli_conv_orig_files[] = {"vocab.json", "merges.txt", "spiece.model", "sentencepiece.bpe.model",
                                           "spm.model", "tokenizer.model", NULL};

int bli_conv_tokenizer_wants(const char *base) {
    if (!strcmp(base, "special_tokens_map.json")) return BLI_CONV_WANT_TEXT;
    for (int i = 0; bli_conv_orig_files[i]; i++)
        if (!strcmp(base, bli_conv_orig_files[i])) return BLI_CONV_WANT_SIZE;
    return BLI_CONV_WANT_NONE;
}

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

/* ------------------------------------------------------------ config keys */

/* conv_state.h: config.json's key as an integer (dflt when absent or null),
 * in [lo, hi]; the family stages (here and convert_rel.c) read theirs so. */
int bli_conv_int_key(const bli_jv *cfg, const char *key, int64_t dflt, int64_t lo, int64_t hi, int32_t *out,
                     char *err, size_t errlen) {
    const bli_jv *v = bli_jget(cfg, key);
    int64_t x = dflt;
    if (v && v->type != BLI_JNULL) {
        if (v->type != BLI_JNUM || !v->is_int) {
            bli_set_err(err, errlen, "config.json: %s must be an integer", key);
            return -1;
        }
        x = v->ival;
    }
    if (x < lo || x > hi) {
        bli_set_err(err, errlen, "config.json: %s = %lld is out of range %lld..%lld", key, (long long)x, (long long)lo,
                    (long long)hi);
        return -1;
    }
    *out = (int32_t)x;
    return 0;
}
