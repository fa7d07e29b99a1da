/* kernels_ref.c — the scalar reference of every kernel (see kernels.h):
 * plain loops, always compiled. A scalar build (no BLK_SIMD) runs them as
 * the kernels (src/kernels/kernels.c maps the un-suffixed names onto them); SIMD
 * builds keep them for the kernel tests and for weights without a packed
 * layout.
 */
#include "kernels.h"
#include "bertlens.h"

#include <math.h>
#include <stddef.h>

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
