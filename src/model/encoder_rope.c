/* encoder_rope.c — ModernBERT's attention and MLP pieces: rotary position
 * embeddings (rotate-half), the sliding-window softmax whose keys outside
 * the window are exact zeros, and the GeGLU activation. Formulas in
 * encoder_family.h. */
#include "encoder_family.h"
#include "kernels/kernels.h"

#include <math.h>
#include <string.h>

/* 1 / theta^(2i / d): the exponent and the reciprocal in float, the power
 * the nearest float (torch's vectorized powf is within 1 ulp of it:
 * tests/family_ops.test.mjs) */
static float freq(int32_t i, int32_t d, float theta) {
    const float e = (float)(2 * i) / (float)d;
    return 1.0f / (float)pow((double)theta, (double)e);
}

void bli_rope_freq(float *inv, int32_t d, float theta) {
    for (int32_t i = 0; i < d / 2; i++) inv[i] = freq(i, d, theta);
}

void bli_rope_table(float *cs, int32_t T, int32_t d, float theta) {
    const int32_t h = d / 2;
    for (int32_t i = 0; i < h; i++) {
        const float inv = freq(i, d, theta);
        for (int32_t t = 0; t < T; t++) {
            const float arg = (float)t * inv;
            cs[(size_t)t * d + i] = (float)cos((double)arg);
            cs[(size_t)t * d + h + i] = (float)sin((double)arg);
        }
    }
}

void bli_rope_rows(float *x, int32_t ld, int32_t t0, int32_t t1, int32_t n_heads, int32_t d, const float *cs) {
    const int32_t h = d / 2;
    for (int32_t t = t0; t < t1; t++) {
        const float *c = cs + (size_t)t * d, *s = c + h;
        for (int32_t head = 0; head < n_heads; head++) {
            float *v = x + (size_t)t * ld + (size_t)head * d;
            for (int32_t i = 0; i < h; i++) {
                const float a = v[i], b = v[h + i];
                const float lo = a * c[i], lo2 = -b * s[i], hi = b * c[i], hi2 = a * s[i];
                v[i] = lo + lo2;
                v[h + i] = hi + hi2;
            }
        }
    }
}

void bli_window_of(int32_t i, int32_t T, int32_t half, int32_t *j0, int32_t *j1) {
    if (half < 0) {
        *j0 = 0;
        *j1 = T;
        return;
    }
    *j0 = i > half ? i - half : 0;
    *j1 = (int64_t)i + half + 1 < T ? i + half + 1 : T;
}

void bli_softmax_window(float *a, int32_t T, float scale, int32_t half) {
    if (half < 0 || half >= T - 1) {
        blk_softmax(a, T, T, scale);
        return;
    }
    for (int32_t i = 0; i < T; i++) {
        float *row = a + (size_t)i * T;
        int32_t j0, j1;
        bli_window_of(i, T, half, &j0, &j1);
        blk_softmax(row + j0, 1, j1 - j0, scale);
        memset(row, 0, (size_t)j0 * sizeof(float));
        memset(row + j1, 0, (size_t)(T - j1) * sizeof(float));
    }
}

void bli_geglu(float *y, int32_t T, int32_t I, int32_t act) {
    /* row t's output [I] lands at y + t*I, before its input at y + 2*t*I:
     * in place, rows in order, reading each pair before writing it */
    for (int32_t t = 0; t < T; t++) {
        float *in = y + (size_t)t * 2 * I, *out = y + (size_t)t * I;
        blk_activate(in, (size_t)I, act);
        for (int32_t i = 0; i < I; i++) out[i] = in[i] * in[I + i];
    }
}
