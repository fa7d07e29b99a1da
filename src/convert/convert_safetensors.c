/* convert_safetensors.c — the converter's safetensors stage (conv_state.h):
 * a file's head size from its first 8 bytes, then its JSON header -> the
 * source tensors (names normalized to BERT's, DistilBERT's renamed; dtype,
 * shape and byte range checked against the file's size in 64 bits).
 */
#include "conv_state.h"
#include "base/error.h"
#include "base/sizes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The tables of conv_state.h. */
const char *const bli_conv_src_names[SRC_OTHER] = {"F32", "F16", "BF16", "F64", "I64"};
const int bli_conv_src_size[SRC_OTHER + 1] = {4, 2, 2, 8, 8, 0};
const char *const bli_conv_distil_names[9][2] = {
    {"transformer.layer.", "encoder.layer."},          {".attention.q_lin.", ".attention.self.query."},
    {".attention.k_lin.", ".attention.self.key."},     {".attention.v_lin.", ".attention.self.value."},
    {".attention.out_lin.", ".attention.output.dense."}, {".sa_layer_norm.", ".attention.output.LayerNorm."},
    {".ffn.lin1.", ".intermediate.dense."},            {".ffn.lin2.", ".output.dense."},
    {".output_layer_norm.", ".output.LayerNorm."}};

/* ------------------------------------------------------- safetensors */

int bli_conv_header_size(const void *first8, uint64_t file_size, uint64_t *head, char *err, size_t errlen) {
    const uint8_t *p = first8;
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--) n = n << 8 | p[i];
    if (file_size < 8 || n > file_size - 8 || n > (100u << 20)) {
        bli_set_err(err, errlen, "corrupt safetensors header (length %llu in a file of %llu bytes)",
                    (unsigned long long)n, (unsigned long long)file_size);
        return -1;
    }
    *head = 8 + n;
    return 0;
}

/* Replace every from in n by to; n has room for the growth (see set_header). */
static void replace_all(char *n, const char *from, const char *to) {
    char *s;
    size_t fl = strlen(from), tl = strlen(to);
    for (char *q = n; (s = strstr(q, from));) {
        memmove(s + tl, s + fl, strlen(s + fl) + 1);
        memcpy(s, to, tl);
        q = s + tl;
    }
}

/* convert.py normalize_names: prefixes, old LayerNorm names, DistilBERT's names. */
static void normalize(char *n, int distil) {
    static const char *const pre[] = {"bert.", "model.", "electra.", "distilbert.", "roberta.", "albert."};
    for (int i = 0; i < 6; i++) {
        size_t k = strlen(pre[i]);
        if (!strncmp(n, pre[i], k)) memmove(n, n + k, strlen(n + k) + 1);
    }
    replace_all(n, "LayerNorm.gamma", "LayerNorm.weight");
    replace_all(n, "LayerNorm.beta", "LayerNorm.bias");
    for (int i = 0; distil && i < (int)(sizeof bli_conv_distil_names / sizeof *bli_conv_distil_names); i++)
        replace_all(n, bli_conv_distil_names[i][0], bli_conv_distil_names[i][1]);
    const char *head = bli_conv_head_name(n); /* masked-LM head: head.* (convert_head.c) */
    if (head) memmove(n, head, strlen(head) + 1);
}

int bli_conv_set_header(bli_conv *c, int w, uint64_t file_size, const void *head, size_t n, char *err,
                        size_t errlen) {
    const char *wn = w >= 0 && w < c->n_weights ? c->weights[w] : NULL; /* conv_state.h: the weight files */
    uint64_t hn;
    if (!wn) {
        bli_set_err(err, errlen, "no weight file %d", w);
        return -1;
    }
    if (n < 8) {
        bli_set_err(err, errlen, "%s: shorter than a safetensors header", wn);
        return -1;
    }
    if (bli_conv_header_size(head, file_size, &hn, err, errlen)) return -1;
    if (hn != n) {
        bli_set_err(err, errlen, "%s: header is %llu bytes, got %zu", wn, (unsigned long long)hn, n);
        return -1;
    }
    c->weight_size[w] = file_size;
    char e[256];
    bli_jv *v = bli_jparse((const char *)head + 8, n - 8, e, sizeof e);
    if (!v || v->type != BLI_JOBJ) {
        bli_set_err(err, errlen, "%s: corrupt safetensors header (%s)", wn, v ? "not an object" : e);
        bli_jfree(v);
        return -1;
    }
    int rc = -1;
    for (size_t i = 0; i < v->n; i++) {
        const bli_jv *t = &v->items[i];
        if (!strcmp(t->key, "__metadata__")) continue;
        const bli_jv *dt = bli_jget(t, "dtype"), *shape = bli_jget(t, "shape"), *offs = bli_jget(t, "data_offsets");
        if (!dt || dt->type != BLI_JSTR || !shape || shape->type != BLI_JARR || shape->n > 4 || !offs ||
            offs->type != BLI_JARR || offs->n != 2) {
            bli_set_err(err, errlen, "%s: tensor '%.80s' has no dtype, shape (at most 4 dims) or data_offsets", wn,
                        t->key);
            goto out;
        }
        int src = SRC_OTHER;
        for (int k = 0; k < SRC_OTHER; k++)
            if (!strcmp(dt->str, bli_conv_src_names[k])) src = k;
        if (src == SRC_OTHER) continue; /* convert.py reads only these */
        stensor s = {0};
        s.src = src;
        s.w = w;
        s.n_dims = (int)shape->n;
        uint64_t count = 1;
        for (size_t d = 0; d < shape->n; d++) {
            const bli_jv *x = &shape->items[d];
            if (x->type != BLI_JNUM || !x->is_int || x->ival < 0 || x->ival > (1ll << 40)) {
                bli_set_err(err, errlen, "%s: tensor '%.80s' has a bad shape", wn, t->key);
                goto out;
            }
            s.dims[d] = x->ival;
            count *= (uint64_t)x->ival;
            if (count > (1ull << 40)) {
                bli_set_err(err, errlen, "%s: tensor '%.80s' is too large", wn, t->key);
                goto out;
            }
        }
        const bli_jv *o0 = &offs->items[0], *o1 = &offs->items[1];
        if (o0->type != BLI_JNUM || !o0->is_int || o1->type != BLI_JNUM || !o1->is_int || o0->ival < 0 ||
            o1->ival < o0->ival) {
            bli_set_err(err, errlen, "%s: tensor '%.80s' has bad data_offsets", wn, t->key);
            goto out;
        }
        s.off = n + (uint64_t)o0->ival;
        s.nbytes = (uint64_t)(o1->ival - o0->ival);
        if (s.nbytes != count * (uint64_t)bli_conv_src_size[src]) {
            bli_set_err(err, errlen, "%s: tensor '%.80s' holds %llu bytes, its shape and dtype %s need %llu", wn,
                        t->key, (unsigned long long)s.nbytes, dt->str, (unsigned long long)(count * bli_conv_src_size[src]));
            goto out;
        }
        if (s.off + s.nbytes > file_size) {
            bli_set_err(err, errlen,
                        "%s is truncated: tensor '%.80s' ends at byte %llu of a %llu-byte file (download it again)",
                        wn, t->key, (unsigned long long)(s.off + s.nbytes), (unsigned long long)file_size);
            goto out;
        }
        /* Room for the renames: each adds at most 13 bytes, and a name holds few of them. */
        if (!(s.name = malloc(2 * t->key_len + 64))) goto oom;
        memcpy(s.name, t->key, t->key_len + 1);
        normalize(s.name, c->distil);
        bli_conv_family_rename(c, s.name, 2 * t->key_len + 64); /* ALBERT's layer groups */
        if (c->n_st == c->cap_st) {
            int cap = c->cap_st ? 2 * c->cap_st : 256;
            stensor *ns = realloc(c->st, (size_t)cap * sizeof *ns);
            if (!ns) {
                free(s.name);
                goto oom;
            }
            c->st = ns;
            c->cap_st = cap;
        }
        c->st[c->n_st++] = s;
    }
    c->headers_set++;
    rc = 0;
    goto out;
oom:
    bli_set_err(err, errlen, "out of memory");
out:
    bli_jfree(v);
    return rc;
}
