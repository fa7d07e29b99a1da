/* convert_tensors.c — one bundle tensor planned (conv_state.h,
 * bli_conv_add_tensor): its source tensor found by name (or rows of a fused
 * one, convert_rel.c; or zeros the traits allow), its shape and dtype
 * checked, its size set. Below convert.c's plan and convert_head.c's task
 * head, which both add tensors through it.
 */
#include "conv_state.h"
#include "format/bundle.h"
#include "base/dtype.h"
#include "base/error.h"

#include <stdio.h>
#include <string.h>

/* Output tensor t as rows of a fused source tensor (convert_rel.c: ModernBERT's
 * Wqkv, Wi): 1 with its source and the bytes before it set, 0 when it is
 * none, -1 when the source is there but not [rows_src][K] of floats. */
static int rel_slice(bli_conv *c, otensor *t, char *err, size_t errlen) {
    char src[96];
    int64_t row0, rows;
    if (!bli_conv_rel_slice(c, t->name, src, sizeof src, &row0, &rows)) return 0;
    for (int i = c->n_st; i-- > 0;) {
        const stensor *s = &c->st[i];
        if (strcmp(s->name, src)) continue;
        const int vec = t->n_dims == 1; /* a bias: rows of one value */
        if (s->n_dims != t->n_dims || s->dims[0] != rows || (!vec && s->dims[1] != t->dims[1]) ||
            s->src == SRC_I64 || !bli_conv_src_size[s->src] || row0 + t->dims[0] > rows) {
            if (vec) bli_set_err(err, errlen, "%s: expected floating point of shape (%lld,)", src, (long long)rows);
            else
                bli_set_err(err, errlen, "%s: expected floating point of shape (%lld, %lld)", src, (long long)rows,
                            (long long)t->dims[1]);
            return -1;
        }
        t->src = i;
        t->skip = (uint64_t)row0 * (uint64_t)(vec ? 1 : s->dims[1]) * (uint64_t)bli_conv_src_size[s->src];
        return 1;
    }
    return 0;
}

int bli_conv_add_tensor(bli_conv *c, const char *name, int64_t d0, int64_t d1, int dtype, char *err, size_t errlen) {
    otensor *t = &c->ot[c->n_ot];
    snprintf(t->name, sizeof t->name, "%s", name);
    t->n_dims = d1 ? 2 : 1;
    t->dims[0] = d0;
    t->dims[1] = d1;
    t->dtype = dtype;
    t->src = -1;
    t->skip = 0;
    for (int i = c->n_st; i-- > 0;)
        if (!strcmp(c->st[i].name, name)) {
            t->src = i;
            break;
        }
    if (t->src < 0) { /* fused weights (family.h fused_qkv, fused_ffn) */
        const int r = rel_slice(c, t, err, errlen);
        if (r < 0) return -1;
        if (r) { /* a row slice */
            t->nbytes = bli_dtype_nbytes(dtype, t->n_dims, t->dims);
            if (!t->nbytes) {
                bli_set_err(err, errlen, "last dimension %lld is not a multiple of %d: cannot use %s",
                            (long long)t->dims[1], BL_QBLOCK, bl_dtype_name(dtype));
                return -1;
            }
            c->n_ot++;
            return 0;
        }
    }
    if (t->src < 0 && ((c->distil && !strcmp(name, DISTIL_TOKEN_TYPES)) || bli_conv_rel_zeros(c, name) ||
                       bli_conv_head_zeros(c, name))) {
        /* zeros, made here */
        t->nbytes = bli_dtype_nbytes(dtype, t->n_dims, t->dims);
        c->n_ot++;
        return 0;
    }
    if (t->src < 0) {
        bli_set_err(err, errlen, "checkpoint has no tensor '%s' (is this a BERT encoder?)", name);
        return -1;
    }
    const stensor *s = &c->st[t->src];
    if (s->n_dims != t->n_dims || s->dims[0] != d0 || (d1 && s->dims[1] != d1)) {
        char got[96] = "", want[64];
        for (int d = 0; d < s->n_dims; d++)
            snprintf(got + strlen(got), sizeof got - strlen(got), "%s%lld", d ? ", " : "", (long long)s->dims[d]);
        if (d1) snprintf(want, sizeof want, "%lld, %lld", (long long)d0, (long long)d1);
        else snprintf(want, sizeof want, "%lld,", (long long)d0);
        bli_set_err(err, errlen, "%s: shape (%s%s), expected (%s)", name, got, s->n_dims == 1 ? "," : "", want);
        return -1;
    }
    if (s->src == SRC_I64) {
        bli_set_err(err, errlen, "%s: dtype I64, expected floating point", name);
        return -1;
    }
    t->nbytes = bli_dtype_nbytes(dtype, t->n_dims, t->dims);
    if (!t->nbytes) {
        bli_set_err(err, errlen, "last dimension %lld is not a multiple of %d: cannot use %s",
                    (long long)t->dims[t->n_dims - 1], BL_QBLOCK, bl_dtype_name(dtype));
        return -1;
    }
    c->n_ot++;
    return 0;
}
