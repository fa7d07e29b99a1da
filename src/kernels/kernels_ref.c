/* kernels_ref.c — the scalar reference of every kernel (see kernels.h):
 * plain loops, always compiled. A scalar build (no BLK_SIMD) runs them as
 * the kernels (src/kernels/kernels.c maps the un-suffixed names onto them); SIMD
 * builds keep them for the kernel tests and for weights without a packed
 * layout.
 */
#include "kernels.h"
#include "kernels_impl.h"
#include "bertlens.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

static float dot_scalar(const float *a, const float *b, int32_t n) {
    float s[4] = {0, 0, 0, 0};
    int32_t i = 0;
    for (; i + 4 <= n; i += 4) {
        s[0] += a[i] * b[i];
        s[1] += a[i + 1] * b[i + 1];
        s[2] += a[i + 2] * b[i + 2];
        s[3] += a[i + 3] * b[i + 3];
    }
    for (; i < n; i++) s[0] += a[i] * b[i];
    return (s[0] + s[1]) + (s[2] + s[3]);
}

void blk_matmul_scalar(float *y, const float *x, int32_t T, const blk_weight *w, const float *bias, float *scratch) {
    const int32_t n = w->n, k = w->k;
    float *row = scratch; /* [k] one dequantized weight row */
    for (int32_t j = 0; j < n; j++) {
        blk_weight_row(w, j, row);
        float b = bias ? bias[j] : 0.0f;
        for (int32_t t = 0; t < T; t++) y[(size_t)t * n + j] = b + dot_scalar(x + (size_t)t * k, row, k);
    }
}

void blk_matmul_nt_scalar(float *y, int32_t ldy, const float *x, int32_t ldx, int32_t T, const float *b,
                         int32_t bn, int32_t bk, int32_t N, int32_t K, float *scratch) {
    (void)scratch;
    for (int32_t i = 0; i < T; i++)
        for (int32_t n = 0; n < N; n++) {
            float s = 0.0f;
            for (int32_t k = 0; k < K; k++) s += x[(size_t)i * ldx + k] * b[(size_t)n * bn + (size_t)k * bk];
            y[(size_t)i * ldy + n] = s;
        }
}

void blk_layernorm_scalar(float *x, const float *res, int32_t T, int32_t n, const float *g, const float *b,
                         float eps) {
    for (int32_t t = 0; t < T; t++) {
        float *r = x + (size_t)t * n;
        if (res)
            for (int32_t i = 0; i < n; i++) r[i] += res[(size_t)t * n + i];
        double mean = 0.0, var = 0.0;
        for (int32_t i = 0; i < n; i++) mean += r[i];
        mean /= n;
        for (int32_t i = 0; i < n; i++) var += (r[i] - mean) * (r[i] - mean);
        var /= n;
        float m = (float)mean, inv = (float)(1.0 / sqrt(var + eps));
        for (int32_t i = 0; i < n; i++) r[i] = (r[i] - m) * inv * g[i] + b[i];
    }
}

void blk_softmax_scalar(float *x, int32_t T, int32_t n, float scale) {
    for (int32_t t = 0; t < T; t++) {
        float *r = x + (size_t)t * n, mx = r[0];
        for (int32_t i = 1; i < n; i++) mx = r[i] > mx ? r[i] : mx;
        float sum = 0.0f;
        for (int32_t i = 0; i < n; i++) {
            r[i] = expf(scale * (r[i] - mx));
            sum += r[i];
        }
        float inv = 1.0f / sum;
        for (int32_t i = 0; i < n; i++) r[i] *= inv;
    }
}

void blk_activate_scalar(float *x, size_t n, int32_t act) {
    for (size_t i = 0; i < n; i++) {
        float v = x[i];
        if (act == BL_ACT_GELU)
            x[i] = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
        else if (act == BL_ACT_GELU_TANH)
            x[i] = 0.5f * v * (1.0f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)));
        else
            x[i] = v > 0.0f ? v : 0.0f;
    }
}

/* The 32 x 8 tile W[32b + r][8p + j] of a q8 weight, dequantized as
 * blk_weight_row does (scale * integer), from either layout. */
void blk_t16_tile(const blk_weight *w, int32_t b, int32_t p, float t[BL_QBLOCK][BL_PANEL]) {
    const int32_t k = w->k;
    for (int32_t r = 0; r < BL_QBLOCK; r++) {
        const size_t R = (size_t)b * BL_QBLOCK + r;
        const float s = blk_qscale(w, (int32_t)R, p * BL_PANEL / BL_QBLOCK);
        if (w->pq8) { /* [R/8][i/2][R%8][i%2] */
            const int8_t *q = w->pq8 + (R / BL_PANEL) * k * BL_PANEL + (size_t)p * BL_PANEL * BL_PANEL + (R % BL_PANEL) * 2;
            for (int j = 0; j < BL_PANEL; j++) t[r][j] = s * (float)q[(j / 2) * 2 * BL_PANEL + (j & 1)];
        } else { /* int8 [n][k] */
            const int8_t *q = (const int8_t *)w->data + R * k + (size_t)p * BL_PANEL;
            for (int j = 0; j < BL_PANEL; j++) t[r][j] = s * (float)q[j];
        }
    }
}

void blk_weight_t16_scalar(const blk_weight *w, int16_t *pq, float *ps) {
    const int32_t n = w->n, np = w->k / BL_PANEL, nb = n / BL_QBLOCK;
    for (int32_t b = 0; b < nb; b++)
        for (int32_t p = 0; p < np; p++) {
            float t[BL_QBLOCK][BL_PANEL], L[BL_PANEL] = {0}, amax[BL_PANEL] = {0}, iv[BL_PANEL];
            blk_t16_tile(w, b, p, t);
            for (int r = 0; r < BL_QBLOCK; r++) /* rows in order */
                for (int j = 0; j < BL_PANEL; j++) {
                    const float a = fabsf(t[r][j]);
                    L[j] += a;
                    amax[j] = a > amax[j] ? a : amax[j];
                }
            blk_t16_scales(L, amax, ps + ((size_t)p * nb + b) * BL_PANEL, iv);
            int16_t *d = pq + ((size_t)p * n + (size_t)b * BL_QBLOCK) * BL_PANEL; /* [i/2][j][i%2] */
            /* round to nearest: v = w / s + 1.5 * 2^23 (|w / s| <= 32767) holds
             * round(w / s) + 2^22 in its mantissa, so in its low 16 bits the
             * int16 (a NaN's: 0) */
            for (int r = 0; r < BL_QBLOCK; r++)
                for (int j = 0; j < BL_PANEL; j++) {
                    const float v = t[r][j] * iv[j] + 12582912.0f;
                    uint32_t u;
                    memcpy(&u, &v, 4);
                    d[(r / 2) * 2 * BL_PANEL + 2 * j + (r & 1)] = (int16_t)(uint16_t)(u & 0xffff);
                }
        }
}

/* One group's scale from its sum L and largest |W| amax (NaN under a sum
 * that is not finite, 0 for a group of zeros), and its inverse (0 for 0 and NaN). */
void blk_t16_scales(const float *L, const float *amax, float *sc, float *iv) {
    for (int j = 0; j < BL_PANEL; j++) {
        float s = 0.0f;
        if (!isfinite(L[j])) s = NAN;
        else if (amax[j] > 0) {
            s = L[j] / (float)(BLK_QG_L1 - 0.5 * BL_QBLOCK);
            if (s < amax[j] / 32767.0f) s = amax[j] / 32767.0f;
        }
        sc[j] = s;
        iv[j] = s > 0 ? 1.0f / s : 0.0f;
    }
}
