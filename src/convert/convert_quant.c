/* convert_quant.c — the converter's tensor stage (conv_state.h): one
 * source tensor to float32 (F16, BF16, F64 as np.asarray(float32)), checked
 * finite, then quantized to the bundle's dtype (the arithmetic in convert.c's
 * header comment, byte for byte convert.py's) and handed to the sink.
 */
#include "conv_state.h"
#include "format/bundle.h"
#include "base/dtype.h"
#include "base/error.h"
#include "base/sizes.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --------------------------------------------------------- quantize */

/* Quantization error of a tensor, for its log line: max |w - w'|, and the
 * sums for RMS(w - w') / RMS(w), in double as convert.py's float64. */
typedef struct {
    double emax, e2, w2;
} qerr;

static void qerr_add(qerr *q, float w, float deq) {
    double e = fabs((double)deq - (double)w);
    if (e > q->emax) q->emax = e;
    q->e2 += e * e;
    q->w2 += (double)w * (double)w;
}

/* q8: blocks of 32, scale = max|w| / 127 (convert.py quant_q8). */
static void quant_q8(const float *w, size_t n, uint8_t *out, qerr *qe) {
    int8_t *q = (int8_t *)out;
    uint8_t *scales = out + n;
    for (size_t b = 0; b < n / BL_QBLOCK; b++) {
        const float *r = w + b * BL_QBLOCK;
        float amax = 0;
        for (int k = 0; k < BL_QBLOCK; k++) {
            float a = fabsf(r[k]);
            if (a > amax) amax = a;
        }
        volatile float scale = amax / 127.0f; /* volatile: one float32 operation, never widened or fused */
        volatile float inv = scale > 0 ? 1.0f / scale : 0.0f;
        for (int k = 0; k < BL_QBLOCK; k++) {
            volatile float x = r[k] * inv;
            float v = rintf(x);
            if (!(v >= -127)) v = v != v ? 0 : -127; /* NaN only from a subnormal scale */
            if (v > 127) v = 127;
            q[b * BL_QBLOCK + k] = (int8_t)v;
            qerr_add(qe, r[k], (float)q[b * BL_QBLOCK + k] * scale);
        }
        float s = scale;
        memcpy(scales + 4 * b, &s, 4);
    }
}

/* q4: the element of largest magnitude maps to -8; nibble = q + 8 (convert.py quant_q4). */
static void quant_q4(const float *w, size_t n, uint8_t *out, qerr *qe) {
    uint8_t *scales = out + n / 2;
    for (size_t b = 0; b < n / BL_QBLOCK; b++) {
        const float *r = w + b * BL_QBLOCK;
        int idx = 0;
        float amax = fabsf(r[0]);
        for (int k = 1; k < BL_QBLOCK; k++)
            if (fabsf(r[k]) > amax) amax = fabsf(r[k]), idx = k;
        volatile float scale = r[idx] / -8.0f;
        volatile float inv = scale != 0 ? 1.0f / scale : 0.0f;
        int8_t q[BL_QBLOCK];
        for (int k = 0; k < BL_QBLOCK; k++) {
            volatile float x = r[k] * inv;
            float v = rintf(x);
            if (!(v >= -8)) v = v != v ? 0 : -8;
            if (v > 7) v = 7;
            q[k] = (int8_t)v;
            qerr_add(qe, r[k], (float)q[k] * scale);
        }
        for (int i = 0; i < 16; i++)
            out[b * 16 + i] = (uint8_t)((uint8_t)(q[i] + 8) | (uint8_t)(q[16 + i] + 8) << 4);
        float s = scale;
        memcpy(scales + 4 * b, &s, 4);
    }
}

/* QN (bundle.h Data layouts): round to nearest with float16 block scales,
 * in float64 (fidelity.qn_rtn), packed as fidelity.qn_pack. Returns -1 when
 * a block scale overflows float16 (convert.py refuses those weights too). */
static int quant_qn(const float *w, size_t n, int bits, uint8_t *out, qerr *qe) {
    const int e = bits - 8, qmax = (1 << (bits - 1)) - 1;
    const size_t nb = n / BL_QBLOCK;
    int8_t *hi = (int8_t *)out;
    uint8_t *lo = out + n, *slo = lo + n * (size_t)e / 8, *shi = slo + nb;
    memset(lo, 0, n * (size_t)e / 8);
    for (size_t b = 0; b < nb; b++) {
        const float *r = w + b * BL_QBLOCK;
        double amax = 0;
        for (int k = 0; k < BL_QBLOCK; k++) {
            double a = fabs((double)r[k]);
            if (a > amax) amax = a;
        }
        volatile double sd = amax / (double)qmax;
        uint16_t h = bli_f64_to_f16(sd);
        if ((h & 0x7c00) == 0x7c00) return -1;
        const float sf = bli_f16_to_f32(h);
        const double s = sf; /* exact */
        slo[b] = (uint8_t)h;
        shi[b] = (uint8_t)(h >> 8);
        for (int k = 0; k < BL_QBLOCK; k++) {
            int q = 0;
            if (s > 0) {
                volatile double x = (double)r[k] / s;
                double v = rint(x);
                q = v < -qmax ? -qmax : v > qmax ? qmax : (int)v;
            }
            size_t i = b * BL_QBLOCK + (size_t)k;
            /* q + 2048 >= 0 and 2^e divides 2048: floor(q / 2^e) and q's low bits without shifting a negative */
            unsigned u = (unsigned)(q + 2048);
            hi[i] = (int8_t)((int)(u >> e) - (2048 >> e));
            unsigned low = u & ((1u << e) - 1);
            for (int j = 0; j < e; j++)
                if (low >> j & 1) {
                    size_t bit = i * (size_t)e + (size_t)j;
                    lo[bit / 8] |= (uint8_t)(1u << (bit % 8));
                }
            volatile float deq = (float)q * sf;
            qerr_add(qe, r[k], deq);
        }
    }
    return 0;
}

static int check_finite(const float *w, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!isfinite(w[i])) return -1;
    return 0;
}

static int to_f32(const stensor *s, const uint8_t *p, float *w, size_t n) {
    for (size_t i = 0; i < n; i++) {
        const uint8_t *e = p + i * (size_t)bli_conv_src_size[s->src];
        switch (s->src) {
        case SRC_F32: {
            uint32_t x = (uint32_t)e[0] | (uint32_t)e[1] << 8 | (uint32_t)e[2] << 16 | (uint32_t)e[3] << 24;
            memcpy(&w[i], &x, 4);
            break;
        }
        case SRC_F16: w[i] = bli_f16_to_f32((uint16_t)(e[0] | e[1] << 8)); break;
        case SRC_BF16: {
            uint32_t x = (uint32_t)e[0] << 16 | (uint32_t)e[1] << 24;
            memcpy(&w[i], &x, 4);
            break;
        }
        case SRC_F64: {
            uint64_t x = 0;
            for (int k = 7; k >= 0; k--) x = x << 8 | e[k];
            double d;
            memcpy(&d, &x, 8);
            w[i] = (float)d;
            break;
        }
        default: return -1;
        }
        if (!isfinite(w[i])) return -1;
    }
    return 0;
}

/* w [n] floats -> data in o's dtype (its bytes for those n elements),
 * adding each element's error to qe; -1 with a reason when a QN block
 * scale overflows. */
static int encode(const otensor *o, const float *w, size_t n, uint8_t *data, qerr *qe, char *err, size_t errlen) {
    switch (o->dtype) {
    case BL_F16:
        for (size_t i = 0; i < n; i++) {
            uint16_t h = bli_f32_to_f16(w[i]);
            if ((h & 0x7c00) == 0x7c00) { /* w is finite (checked): it rounds past 65504, and the loader refuses inf */
                bli_set_err(err, errlen, "%s: weight %g overflows float16 (largest 65504): convert with another dtype",
                            o->name, (double)w[i]);
                return -1;
            }
            data[2 * i] = (uint8_t)h;
            data[2 * i + 1] = (uint8_t)(h >> 8);
            qerr_add(qe, w[i], bli_f16_to_f32(h));
        }
        break;
    case BL_Q8: quant_q8(w, n, data, qe); break;
    case BL_Q4: quant_q4(w, n, data, qe); break;
    case BL_Q8H: case BL_Q9: case BL_Q10: case BL_Q11: case BL_Q12:
        if (quant_qn(w, n, bli_qn_bits(o->dtype), data, qe)) {
            float amax = 0;
            for (size_t i = 0; i < n; i++) amax = fmaxf(amax, fabsf(w[i]));
            bli_set_err(err, errlen, "%s: weights up to %g overflow a float16 block scale", o->name, (double)amax);
            return -1;
        }
        break;
    default: /* f32: the bytes are w's */
        for (size_t i = 0; i < n; i++) qerr_add(qe, w[i], w[i]);
    }
    return 0;
}

/* The tensor's log line, as convert.py prints it (n: its elements). */
static void log_tensor(bli_conv *c, const otensor *o, const qerr *qe, size_t n) {
    double emax = qe->emax, e2 = qe->e2, w2 = qe->w2;
    double rms = sqrt(w2 / (double)n), rel = rms > 0 ? sqrt(e2 / (double)n) / rms : 0;
    char shape[48];
    if (o->n_dims == 2) snprintf(shape, sizeof shape, "[%lld, %lld]", (long long)o->dims[0], (long long)o->dims[1]);
    else snprintf(shape, sizeof shape, "[%lld]", (long long)o->dims[0]);
    bli_conv_logf(c, "[tensor] %-52s %-14s %-4s max|err| %.3e  rel.rms %.3e", o->name, shape, bl_dtype_name(o->dtype), emax,
          rel);
}

/* n source values of o as floats and their encoding (dbytes bytes; the
 * floats themselves for f32). float32 sources are used in place
 * (little-endian hosts: x86, arm, wasm; the drivers' buffers are malloc'ed,
 * so aligned), others converted into e->wbuf; made: a tensor the converter
 * makes (no source: zeros). Then encoded_free(e). 0 / -1 (err set). */
typedef struct {
    float *wbuf;
    const float *w;
    uint8_t *data;
} encoded;

static int encode_source(const otensor *o, const stensor *s, const void *src, size_t n, uint64_t dbytes, int made,
                         encoded *e, qerr *qe, char *err, size_t errlen) {
    static const uint16_t one = 1;
    const int in_place = !made && s->src == SRC_F32 && *(const uint8_t *)&one == 1 && (uintptr_t)src % sizeof(float) == 0;
    e->wbuf = in_place ? NULL : bli_alloc((uint64_t)n * sizeof(float), made, o->name, err, errlen);
    e->w = in_place ? (const float *)src : e->wbuf;
    e->data = !e->w || o->dtype == BL_F32 ? (uint8_t *)e->w : bli_alloc(dbytes, 0, o->name, err, errlen);
    if (!e->w || !e->data) return -1; /* the message is bli_alloc's */
    if (!made && (in_place ? check_finite(e->w, n) : to_f32(s, src, e->wbuf, n))) {
        bli_set_err(err, errlen, "%s: contains NaN or infinity", o->name);
        return -1;
    }
    return encode(o, e->w, n, e->data, qe, err, errlen);
}

static void encoded_free(encoded *e) {
    if (e->data != (const uint8_t *)e->w) free(e->data);
    free(e->wbuf);
}

int bli_conv_tensor(bli_conv *c, int t, const void *src, bli_conv_sink sink, void *sink_ctx, char *err,
                    size_t errlen) {
    if (!c->planned || t < 0 || t >= c->n_ot) {
        bli_set_err(err, errlen, "bli_conv_tensor: no tensor %d", t);
        return -1;
    }
    otensor *o = &c->ot[t];
    static const stensor zeros = {NULL, SRC_OTHER, 0, {0}, 0, 0, 0};
    const stensor *s = o->src >= 0 ? &c->st[o->src] : &zeros;
    /* [dims[0]][dims[1]] floats, sized in 64 bits (sizes.h): a 2^30-element
     * tensor is 4 GB, which wraps in a 32-bit size_t (wasm) */
    const uint64_t nbytes32 = BLI_BYTES(sizeof(float), o->dims[0], o->n_dims == 2 ? o->dims[1] : 1);
    if (!bli_size_ok(nbytes32, o->name, err, errlen) || !bli_size_ok(o->nbytes, o->name, err, errlen)) return -1;
    size_t n = (size_t)(nbytes32 / sizeof(float));
    /* one tensor in memory, plus its encoded copy unless it stays f32 */
    encoded e;
    qerr qe = {0, 0, 0};
    int rc = -1;
    if (encode_source(o, s, src, n, o->nbytes, o->src < 0, &e, &qe, err, errlen)) goto out;
    log_tensor(c, o, &qe, n);
    o->crc = bli_crc32(0, e.data, (size_t)o->nbytes);
    if (sink(sink_ctx, c->data_offset + o->off, e.data, (size_t)o->nbytes)) {
        bli_set_err(err, errlen, "%s: cannot write the bundle", o->name);
        goto out;
    }
    o->done = 1;
    rc = 0;
out:
    encoded_free(&e);
    return rc;
}

/* ------------------------------------------------------------ by rows */

/* Bytes of the encoded rows [row0, row0 + nrows) of o ([R][K]) in each of
 * its regions: for q8 / q4 the values, then the scales; f32 / f16 one. */
static int row_regions(const otensor *o, int64_t row0, int64_t nrows, uint64_t off[2], uint64_t len[2]) {
    const uint64_t R = (uint64_t)o->dims[0], K = (uint64_t)o->dims[1], N = R * K;
    const uint64_t r0 = (uint64_t)row0, nr = (uint64_t)nrows;
    switch (o->dtype) {
    case BL_F32: off[0] = r0 * K * 4, len[0] = nr * K * 4; return 1;
    case BL_F16: off[0] = r0 * K * 2, len[0] = nr * K * 2; return 1;
    case BL_Q8:
        off[0] = r0 * K, len[0] = nr * K;
        off[1] = N + r0 * (K / BL_QBLOCK) * 4, len[1] = nr * (K / BL_QBLOCK) * 4;
        return 2;
    case BL_Q4:
        off[0] = r0 * K / 2, len[0] = nr * K / 2;
        off[1] = N / 2 + r0 * (K / BL_QBLOCK) * 4, len[1] = nr * (K / BL_QBLOCK) * 4;
        return 2;
    default: return 0;
    }
}

uint64_t bli_conv_row_bytes(const bli_conv *c, int t) {
    if (!c->planned || t < 0 || t >= c->n_ot) return 0;
    const otensor *o = &c->ot[t];
    if (o->src < 0 || o->n_dims != 2 || o->dims[0] <= 0 || o->dims[1] <= 0) return 0;
    const stensor *s = &c->st[o->src];
    if (s->src != SRC_F32 && s->src != SRC_F16 && s->src != SRC_BF16 && s->src != SRC_F64) return 0;
    if ((o->dtype == BL_Q8 || o->dtype == BL_Q4) && o->dims[1] % BL_QBLOCK) return 0;
    uint64_t off[2], len[2];
    if (!row_regions(o, 0, 1, off, len)) return 0;
    /* the source holds exactly these rows, in this order (bli_conv_source) */
    int w;
    uint64_t so, sn;
    const uint64_t row = BLI_BYTES((uint64_t)bli_conv_src_size[s->src], o->dims[1], 1);
    if (bli_conv_source(c, t, &w, &so, &sn) || row == 0 || row > sn || sn / row != (uint64_t)o->dims[0] ||
        sn % row)
        return 0;
    return row;
}

int bli_conv_tensor_rows(bli_conv *c, bli_conv_rows *acc, int t, int64_t row0, int64_t nrows, const void *src,
                         bli_conv_sink sink, void *sink_ctx, const uint8_t *bundle, uint64_t bundle_size, char *err,
                         size_t errlen) {
    const uint64_t row = bli_conv_row_bytes(c, t);
    if (!row) {
        bli_set_err(err, errlen, "bli_conv_tensor_rows: tensor %d cannot be converted by rows", t);
        return -1;
    }
    otensor *o = &c->ot[t];
    const stensor *s = &c->st[o->src];
    if (row0 == 0) memset(acc, 0, sizeof *acc), acc->t = t;
    if (acc->t != t || row0 != acc->next || nrows <= 0 || nrows > o->dims[0] - row0) {
        bli_set_err(err, errlen, "%s: rows %lld..+%lld out of order (next is row %lld of %lld)", o->name,
                    (long long)row0, (long long)nrows, (long long)acc->next, (long long)o->dims[0]);
        return -1;
    }
    /* [nrows][K] floats and their encoding, sized in 64 bits (sizes.h) */
    const uint64_t nbytes32 = BLI_BYTES(sizeof(float), nrows, o->dims[1]);
    if (!bli_size_ok(nbytes32, o->name, err, errlen)) return -1;
    const size_t n = (size_t)(nbytes32 / sizeof(float));
    uint64_t off[2], len[2];
    const int regions = row_regions(o, row0, nrows, off, len);
    encoded e;
    int rc = -1;
    qerr qe = {acc->emax, acc->e2, acc->w2}; /* the sums go on in element order, as one tensor's */
    if (encode_source(o, s, src, n, len[0] + (regions == 2 ? len[1] : 0), 0, &e, &qe, err, errlen)) goto out;
    for (int i = 0; i < regions; i++) {
        if (sink(sink_ctx, c->data_offset + o->off + off[i], e.data + (i ? len[0] : 0), (size_t)len[i])) {
            bli_set_err(err, errlen, "%s: cannot write the bundle", o->name);
            goto out;
        }
    }
    acc->emax = qe.emax, acc->e2 = qe.e2, acc->w2 = qe.w2;
    acc->next = row0 + nrows;
    if (acc->next == o->dims[0]) { /* the last rows: the whole tensor's line and CRC */
        const uint64_t at = c->data_offset + o->off;
        if (!bundle || at > bundle_size || o->nbytes > bundle_size - at) {
            bli_set_err(err, errlen, "%s: the bundle is not in memory for its CRC", o->name);
            goto out;
        }
        const size_t total = (size_t)((uint64_t)o->dims[0] * (uint64_t)o->dims[1]);
        log_tensor(c, o, &qe, total);
        o->crc = bli_crc32(0, bundle + at, (size_t)o->nbytes);
        o->done = 1;
    }
    rc = 0;
out:
    encoded_free(&e);
    return rc;
}
