/* kernels_weight.c — a weight matrix as the bundle stores it (see
 * src/format/bundle.h for the bytes of each dtype): wrapping it (blk_weight_init)
 * and reading it back as floats (blk_weight_row, the scales, the QN
 * integers). The scalar references and the SIMD packing both stand on it.
 */
#include "kernels_impl.h"
#include "bertlens.h"
#include "format/bundle.h"
#include "base/dtype.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int blk_weight_init(blk_weight *w, int32_t dtype, int32_t n, int32_t k, const uint8_t *data) {
    memset(w, 0, sizeof *w);
    if (n <= 0 || k <= 0 || !data) return -1;
    if (dtype < BL_F32 || dtype >= BL_N_DTYPES) return -1;
    if (dtype != BL_F32 && dtype != BL_F16 && k % BL_QBLOCK) return -1;
    w->dtype = dtype;
    w->n = n;
    w->k = k;
    w->data = data;
    return 0;
}

int blk_q8_panels_in_place(uint8_t *data, int32_t n, int32_t k) {
    if (!data || n <= 0 || k <= 0 || n % BL_PANEL || k % BL_QBLOCK) return -1;
    const size_t nb = (size_t)k / BL_QBLOCK, rows = (size_t)BL_PANEL * k; /* bytes of one panel's integers */
    uint8_t *tmp = malloc(rows > nb * BL_PANEL * 4 ? rows : nb * BL_PANEL * 4);
    if (!tmp) return -1;
    /* Panel p's rows p*8 .. p*8+7 occupy the same bytes before and after. */
    for (size_t p = 0; p < (size_t)n / BL_PANEL; p++) {
        uint8_t *q = data + p * rows; /* [8][k] -> [k/2][8][2] */
        memcpy(tmp, q, rows);
        for (size_t c = 0; c < BL_PANEL; c++)
            for (size_t i = 0; i < (size_t)k; i++) q[(i / 2) * 2 * BL_PANEL + c * 2 + (i & 1)] = tmp[c * k + i];
        uint8_t *s = data + (size_t)n * k + p * nb * BL_PANEL * 4; /* f32 [8][nb] -> [nb][8] */
        memcpy(tmp, s, nb * BL_PANEL * 4);
        for (size_t c = 0; c < BL_PANEL; c++)
            for (size_t b = 0; b < nb; b++) memcpy(s + (b * BL_PANEL + c) * 4, tmp + (c * nb + b) * 4, 4);
    }
    free(tmp);
    return 0;
}

int blk_weight_use_panels(blk_weight *w) {
    if (w->dtype != BL_Q8 || w->n % BL_PANEL || w->k % BL_QBLOCK) return -1;
    w->pq8 = (const int8_t *)w->data;
    w->ps8 = (const float *)(const void *)(w->data + (size_t)w->n * w->k);
    return 0;
}

int blk_weight_of_tensor(blk_weight *w, const bl_tensor *t, int32_t n, int32_t k) {
    if (blk_weight_init(w, t->dtype, n, k, t->data)) return -1;
    if (t->layout == BL_LAYOUT_BUNDLE) return 0;
    if (t->layout != BL_LAYOUT_Q8_PANELS || t->n_dims != 2 || t->dims[0] != n || t->dims[1] != k) return -1;
    return blk_weight_use_panels(w);
}

/* Scale of row r, block b (of 32) of a q8/q4/QN weight (scales follow the quants). */
float blk_qscale(const blk_weight *w, int32_t r, int32_t b) {
    const size_t n = (size_t)w->n * w->k;
    if (w->pq8) { /* panels: [n/8][k/32][8] */
        float s;
        memcpy(&s, w->ps8 + ((size_t)(r / BL_PANEL) * (w->k / BL_QBLOCK) + b) * BL_PANEL + r % BL_PANEL, 4);
        return s;
    }
    const int bits = bli_qn_bits(w->dtype);
    if (bits) { /* QN: the two byte planes of the float16 scales follow the high and low planes */
        const uint8_t *slo = w->data + n + n * (size_t)(bits - 8) / 8, *shi = slo + n / BL_QBLOCK;
        size_t i = (size_t)r * (w->k / BL_QBLOCK) + b;
        return bli_f16_to_f32((uint16_t)(slo[i] | shi[i] << 8));
    }
    size_t qbytes = w->dtype == BL_Q8 ? n : n / 2;
    float s;
    memcpy(&s, w->data + qbytes + ((size_t)r * (w->k / BL_QBLOCK) + b) * 4, 4);
    return s;
}

/* Integer of element (r, i) of a QN weight: high plane * 2^E + its E low bits. */
int blk_qn_value(const blk_weight *w, int32_t r, int32_t i) {
    const int e = bli_qn_bits(w->dtype) - 8;
    const size_t n = (size_t)r * w->k + i;
    int v = ((const int8_t *)w->data)[n] * (1 << e);
    if (e) {
        const uint8_t *lo = w->data + (size_t)w->n * w->k;
        size_t bit = n * (size_t)e;
        /* E <= 4 bits starting at bit % 8 <= 7 span at most two bytes; the
         * second is read only when the bits reach it (never past the plane) */
        unsigned two = lo[bit / 8];
        if (bit % 8 + (size_t)e > 8) two |= (unsigned)lo[bit / 8 + 1] << 8;
        v += (int)((two >> (bit % 8)) & ((1u << e) - 1));
    }
    return v;
}

void blk_weight_row(const blk_weight *w, int32_t r, float *out) {
    const int32_t k = w->k;
    switch (w->dtype) {
    case BL_F32:
        memcpy(out, w->data + (size_t)r * k * 4, (size_t)k * 4);
        break;
    case BL_F16:
        for (int32_t i = 0; i < k; i++) {
            uint16_t h;
            memcpy(&h, w->data + ((size_t)r * k + i) * 2, 2);
            out[i] = bli_f16_to_f32(h);
        }
        break;
    case BL_Q8: {
        if (w->pq8) { /* panels: element (r, i) at [r/8][i/2][r%8][i%2] */
            const int8_t *q = w->pq8 + (size_t)(r / BL_PANEL) * k * BL_PANEL + (r % BL_PANEL) * 2;
            for (int32_t b = 0; b < k / BL_QBLOCK; b++) {
                float s = blk_qscale(w, r, b);
                for (int32_t i = b * BL_QBLOCK; i < (b + 1) * BL_QBLOCK; i++)
                    out[i] = s * (float)q[(size_t)(i / 2) * 2 * BL_PANEL + (i & 1)];
            }
            break;
        }
        const int8_t *q = (const int8_t *)w->data + (size_t)r * k;
        for (int32_t b = 0; b < k / BL_QBLOCK; b++) {
            float s = blk_qscale(w, r, b);
            for (int i = 0; i < BL_QBLOCK; i++) out[b * BL_QBLOCK + i] = s * (float)q[b * BL_QBLOCK + i];
        }
        break;
    }
    case BL_Q4: {
        const uint8_t *p = w->data + (size_t)r * k / 2;
        for (int32_t b = 0; b < k / BL_QBLOCK; b++) {
            float s = blk_qscale(w, r, b);
            for (int i = 0; i < 16; i++) {
                uint8_t byte = p[b * 16 + i];
                out[b * BL_QBLOCK + i] = s * (float)((int)(byte & 15) - 8);
                out[b * BL_QBLOCK + 16 + i] = s * (float)((int)(byte >> 4) - 8);
            }
        }
        break;
    }
    default: /* QN */
        for (int32_t b = 0; b < k / BL_QBLOCK; b++) {
            float s = blk_qscale(w, r, b);
            for (int i = 0; i < BL_QBLOCK; i++) out[b * BL_QBLOCK + i] = s * (float)blk_qn_value(w, r, b * BL_QBLOCK + i);
        }
        break;
    }
}
