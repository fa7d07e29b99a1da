/* encoder_rel.c — relative positions in attention scores: MPNet's bucketed
 * bias and DeBERTa-v2/v3's disentangled (content <-> position) terms.
 * The formulas are in encoder_family.h. Both bucket functions evaluate their
 * logarithms in float in the same order of operations as Hugging Face, so a
 * relative position lands in the same bucket (tests/family_ops.test.mjs
 * checks every position from -600 to 600 against transformers). */
#include "encoder_family.h"
#include "kernels/kernels.h"

#include <math.h>

/* --------------------------------------------------------------- MPNet */

int32_t bli_mpnet_bucket(int32_t rel, int32_t num_buckets, int32_t max_distance) {
    const int32_t half = num_buckets / 2, exact = half / 2;
    int32_t ret = 0;
    /* n = query - key: keys after the query take the upper half */
    int64_t n = -(int64_t)rel;
    if (n < 0) {
        ret = half;
        n = -n;
    }
    if (n < exact || exact <= 0) return ret + (int32_t)(n < half - 1 ? n : half - 1);
    const float v = logf((float)n / (float)exact) / (float)log((double)max_distance / exact) * (float)(half - exact);
    const int32_t big = v < (float)half ? exact + (int32_t)v : half - 1;
    return ret + (big < half - 1 ? big : half - 1);
}

void bli_mpnet_bias(float *bias, const float *table, int32_t n_heads, int32_t T, int32_t num_buckets,
                    int32_t max_distance) {
    const int32_t R = 2 * T - 1;
    for (int32_t r = 0; r < R; r++) {
        const int32_t b = bli_mpnet_bucket(r - (T - 1), num_buckets, max_distance);
        for (int32_t h = 0; h < n_heads; h++) bias[(size_t)h * R + r] = table[(size_t)b * n_heads + h];
    }
}

void bli_rel_bias_add(float *a, int32_t T, float div, const float *rel) {
    for (int32_t i = 0; i < T; i++) {
        float *row = a + (size_t)i * T;
        const float *b = rel + (T - 1 - i); /* b[j] = rel[j - i + T - 1] */
        for (int32_t j = 0; j < T; j++) row[j] = row[j] / div + b[j];
    }
}

/* ------------------------------------------------------------- DeBERTa */

int32_t bli_deberta_bucket(int32_t delta, int32_t buckets, int32_t max_positions) {
    if (buckets <= 0 || max_positions <= 0) return delta;
    const int32_t mid = buckets / 2;
    const int64_t a = delta < 0 ? -(int64_t)delta : delta;
    if (a <= mid) return delta;
    const float den = logf((float)((double)(max_positions - 1) / mid));
    float lp = ceilf(logf((float)a / (float)mid) / den * (float)(mid - 1)) + (float)mid;
    /* a degenerate config (max_positions - 1 <= mid) gives inf or NaN; the
     * index is clamped to the table afterwards anyway */
    if (!(lp < 1e9f)) lp = 1e9f;
    if (lp < -1e9f) lp = -1e9f;
    return delta < 0 ? -(int32_t)lp : (int32_t)lp;
}

/* Row of the 2 span relative rows that delta = i - j reads. */
static int32_t rel_row(int32_t delta, int32_t span, int32_t buckets, int32_t max_positions) {
    int64_t v = (int64_t)bli_deberta_bucket(delta, buckets, max_positions) + span;
    if (v < 0) v = 0;
    if (v > 2 * (int64_t)span - 1) v = 2 * (int64_t)span - 1;
    return (int32_t)v;
}

/* First and last row any delta of T tokens reads. Not only the rows of the
 * ends: a config whose log buckets are not monotone (max_relative_positions
 * - 1 below or near position_buckets / 2) jumps, so every delta is looked at. */
static void rel_range(int32_t T, int32_t buckets, int32_t max_positions, int32_t *lo, int32_t *hi) {
    const int32_t span = buckets > 0 ? buckets : max_positions;
    *lo = 2 * span, *hi = -1;
    for (int32_t r = 0; r < 2 * T - 1; r++) {
        const int32_t v = rel_row(r - (T - 1), span, buckets, max_positions);
        *lo = v < *lo ? v : *lo;
        *hi = v > *hi ? v : *hi;
    }
}

int32_t bli_deberta_rel_rows(int32_t T, int32_t buckets, int32_t max_positions) {
    int32_t lo, hi;
    rel_range(T, buckets, max_positions, &lo, &hi);
    return hi - lo + 1;
}

void bli_deberta_rel_index(int32_t *idx, int32_t *r0, int32_t *nr, int32_t T, int32_t buckets,
                           int32_t max_positions) {
    const int32_t span = buckets > 0 ? buckets : max_positions;
    int32_t lo, hi;
    rel_range(T, buckets, max_positions, &lo, &hi);
    for (int32_t r = 0; r < 2 * T - 1; r++) idx[r] = rel_row(r - (T - 1), span, buckets, max_positions) - lo;
    *r0 = lo;
    *nr = hi - lo + 1;
}

size_t bli_deberta_scratch_floats(int32_t T, int32_t nr, int32_t d) {
    return (size_t)T * nr + blk_matmul_nt_scratch_floats(nr, d);
}

void bli_deberta_add(float *a, int32_t T, const float *q, const float *k, int32_t ld, const float *pk,
                     const float *pq, int32_t ldp, const int32_t *idx, int32_t nr, int32_t d, unsigned terms,
                     float *scratch) {
    float *P = scratch;                        /* [T][nr] one term's products with every used row */
    float *ks = scratch + (size_t)T * nr;      /* the product kernel's scratch */
    if (terms & BLI_DEB_C2P) {
        /* P[i][r] = q[i] . pk[r];  a[i][j] += P[i][idx(i - j)] */
        blk_matmul_nt(P, nr, q, ld, T, pk, ldp, 1, nr, d, ks);
        for (int32_t i = 0; i < T; i++) {
            float *row = a + (size_t)i * T;
            const float *p = P + (size_t)i * nr;
            const int32_t *ix = idx + i + (T - 1); /* ix[-j] = idx[i - j + T - 1] */
            for (int32_t j = 0; j < T; j++) row[j] += p[ix[-j]];
        }
    }
    if (terms & BLI_DEB_P2C) {
        /* P[j][r] = k[j] . pq[r];  a[i][j] += P[j][idx(i - j)] */
        blk_matmul_nt(P, nr, k, ld, T, pq, ldp, 1, nr, d, ks);
        for (int32_t i = 0; i < T; i++) {
            float *row = a + (size_t)i * T;
            const int32_t *ix = idx + i + (T - 1);
            for (int32_t j = 0; j < T; j++) row[j] += P[(size_t)j * nr + ix[-j]];
        }
    }
}
