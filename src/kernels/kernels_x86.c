/* kernels_x86.c — x86-64 micro-kernels beyond SSE4.1, chosen at run time
 * (blk_x86_level, src/kernels/kernels.c) by the matmul drivers of
 * src/kernels/kernels_simd128.c. Compiled with target attributes, so the binary still
 * runs on an x86-64 without them. Nothing here in wasm or scalar builds.
 */
#include "kernels_impl.h"

#if BLK_SIMD && !defined(__wasm_simd128__)
/* ------------------------------------- x86-64: AVX2+FMA micro-kernels
 * The same packed layouts as mk_f32 / mk_q8, 8 columns per 256-bit register,
 * and two panels (16 columns) per call: a 4 x 16 tile is 8 accumulators, so
 * 8 independent FMA chains hide FMA latency (4 x 8 would leave half the FMA
 * units idle), and each broadcast x value feeds 2 products instead of 1.
 * The panel pointer of the second half may repeat the first (an odd last
 * panel: cols1 = 0, nothing of it is stored). Results go through store_row
 * (bias, activation) as two 128-bit halves. Chosen at run time
 * (blk_x86_level); compiled with target attributes, so the binary still runs
 * on an SSE4.1-only x86-64. */
/* loops over the tile's rows and halves: unrolled, so the tile lives in registers */
#define UNROLL _Pragma("GCC unroll 8")
#define AVX2_FN __attribute__((target("avx2,fma"), noinline))
#define LO128(v) _mm_castps_si128(_mm256_castps256_ps128(v))
#define HI128(v) _mm_castps_si128(_mm256_extractf128_ps((v), 1))

/* Store the rows < rows of a 4 x 16 tile a[r][half] scaled by sx[r] (sx NULL: 1). */
#define AVX2_TILE_STORE(a, sx)                                                                              \
    UNROLL for (int r_ = 0; r_ < 4; r_++) if (r_ < rows) {                                                  \
        __m256 s_ = _mm256_set1_ps((sx) ? (sx)[r_] : 1.0f), lo_ = _mm256_mul_ps(a[r_][0], s_),             \
               hi_ = _mm256_mul_ps(a[r_][1], s_);                                                          \
        float *yr_ = y + (size_t)r_ * ldy;                                                                  \
        store_row(yr_, LO128(lo_), HI128(lo_), bias, cols0, act);                                           \
        if (cols1) store_row(yr_ + BL_PANEL, LO128(hi_), HI128(hi_), bias ? bias + BL_PANEL : NULL, cols1, act); \
    }

/* 4 interleaved rows xp[K][4] times panels pw0, pw1 ([K][8] each). Sums of
 * at most F32_KBLOCK products stay in registers, then go into part (the
 * blocked accumulation of mk_f32_long; one block when K <= 2 * F32_KBLOCK). */
INLINE __attribute__((target("avx2,fma"))) void mk_f32_avx2(float *y, int32_t ldy, const float *xp, const float *pw0,
                                                            const float *pw1, int32_t K, const float *bias, int rows,
                                                            int cols0, int cols1, int32_t act) {
    __m256 part[4][2], a[4][2];
    const float *end = xp + (size_t)4 * K;
    int blocks = 0;
    for (;;) {
        const float *stop = end - xp > 4 * F32_KBLOCK && K > 2 * F32_KBLOCK ? xp + 4 * F32_KBLOCK : end;
        UNROLL for (int r = 0; r < 4; r++) a[r][0] = a[r][1] = _mm256_setzero_ps();
        for (; xp != stop; xp += 4, pw0 += BL_PANEL, pw1 += BL_PANEL) {
            __m256 w0 = _mm256_loadu_ps(pw0), w1 = _mm256_loadu_ps(pw1);
            UNROLL for (int r = 0; r < 4; r++) {
                __m256 s = _mm256_broadcast_ss(xp + r);
                a[r][0] = _mm256_fmadd_ps(s, w0, a[r][0]);
                a[r][1] = _mm256_fmadd_ps(s, w1, a[r][1]);
            }
        }
        if (stop == end) break;
        UNROLL for (int r = 0; r < 4; r++)
            UNROLL for (int h = 0; h < 2; h++) part[r][h] = blocks ? _mm256_add_ps(part[r][h], a[r][h]) : a[r][h];
        blocks++;
    }
    if (blocks)
        UNROLL for (int r = 0; r < 4; r++)
            UNROLL for (int h = 0; h < 2; h++) a[r][h] = _mm256_add_ps(part[r][h], a[r][h]);
    AVX2_TILE_STORE(a, (const float *)NULL)
}

AVX2_FN void blk_matmul_f32_packed_avx2(float *y, int32_t ldy, const float *xp, int32_t T, const float *pf, int32_t N,
                                    int32_t K, const float *bias, int32_t act) {
    const int32_t np = (N + BL_PANEL - 1) / BL_PANEL;
    for (int32_t p = 0; p < np; p += 2) {
        const float *pw0 = pf + (size_t)p * K * BL_PANEL, *pw1 = p + 1 < np ? pw0 + (size_t)K * BL_PANEL : pw0;
        const float *pb = bias ? bias + p * BL_PANEL : NULL;
        int cols0 = N - p * BL_PANEL < BL_PANEL ? N - p * BL_PANEL : BL_PANEL;
        int cols1 = p + 1 >= np ? 0 : N - (p + 1) * BL_PANEL < BL_PANEL ? N - (p + 1) * BL_PANEL : BL_PANEL;
        float *yp = y + p * BL_PANEL;
        if (act < 0) /* a constant -1 leaves the activation code out of the common instance */
            for (int32_t t = 0; t < T; t += 4)
                mk_f32_avx2(yp + (size_t)t * ldy, ldy, xp + (size_t)t * K, pw0, pw1, K, pb, T - t < 4 ? T - t : 4,
                            cols0, cols1, -1);
        else
            for (int32_t t = 0; t < T; t += 4)
                mk_f32_avx2(yp + (size_t)t * ldy, ldy, xp + (size_t)t * K, pw0, pw1, K, pb, T - t < 4 ? T - t : 4,
                            cols0, cols1, act);
    }
}

/* a + b into a's register (asm): with _mm256_add_epi32, GCC 12 put each
 * sum into a new register and moved it back on every step (perf annotate),
 * 8 extra moves per step of 8 vpmaddwd. */
INLINE __attribute__((target("avx2,fma"))) __m256i add_in_place(__m256i a, __m256i b) {
    __asm__("vpaddd %1, %0, %0" : "+x"(a) : "x"(b));
    return a;
}

/* 4 rows of int16 activation pairs xq[K/2][4] times q8 panels pq0, pq1
 * ([K/2][8][2] int16 each; 16 int16 = one 256-bit load per pair), scales
 * ps0, ps1 ([K/gk][8], one per group of gk values of k, the last group
 * possibly shorter); sx[r] = row r's activation scale. */
INLINE __attribute__((target("avx2,fma"))) void mk_q8_avx2(float *y, int32_t ldy, const int32_t *xq, const float *sx,
                                                           const int16_t *pq0, const int16_t *pq1, const float *ps0,
                                                           const float *ps1, int32_t K, int32_t gk,
                                                           const float *bias, int rows, int cols0, int cols1,
                                                           int32_t act) {
    __m256 f[4][2];
    UNROLL for (int r = 0; r < 4; r++) f[r][0] = f[r][1] = _mm256_setzero_ps();
    for (int32_t k0 = 0; k0 < K; k0 += gk, ps0 += BL_PANEL, ps1 += BL_PANEL) {
        __m256i i[4][2];
        const int32_t k1 = K - k0 < gk ? K : k0 + gk;
        UNROLL for (int r = 0; r < 4; r++) i[r][0] = i[r][1] = _mm256_setzero_si256();
        for (int32_t kb = k0; kb < k1; kb += BL_QBLOCK) /* a constant trip count inside: unrolled by the compiler */
            for (int j = 0; j < BL_QBLOCK / 2; j++, xq += 4, pq0 += 2 * BL_PANEL, pq1 += 2 * BL_PANEL) {
                __m256i w0 = _mm256_loadu_si256((const __m256i *)pq0), w1 = _mm256_loadu_si256((const __m256i *)pq1);
                UNROLL for (int r = 0; r < 4; r++) {
                    __m256i s = _mm256_set1_epi32(xq[r]);
                    i[r][0] = add_in_place(i[r][0], _mm256_madd_epi16(s, w0));
                    i[r][1] = add_in_place(i[r][1], _mm256_madd_epi16(s, w1));
                }
            }
        __m256 s0 = _mm256_loadu_ps(ps0), s1 = _mm256_loadu_ps(ps1);
        UNROLL for (int r = 0; r < 4; r++) {
            f[r][0] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(i[r][0]), s0, f[r][0]);
            f[r][1] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(i[r][1]), s1, f[r][1]);
        }
    }
    AVX2_TILE_STORE(f, sx)
}

AVX2_FN void blk_matmul_q8_quantized_avx2(float *y, int32_t ldy, const int32_t *xq, const float *sx, int32_t T,
                                      const blk_weight *w, const float *bias, int32_t act) {
    const int32_t N = w->n, K = w->k, gk = w->qg * BL_QBLOCK, nb = (K + gk - 1) / gk,
                  np = (N + BL_PANEL - 1) / BL_PANEL;
    for (int32_t p = 0; p < np; p += 2) {
        const int p1 = p + 1 < np ? p + 1 : p;
        const int16_t *pq0 = w->pq + (size_t)p * K * BL_PANEL, *pq1 = w->pq + (size_t)p1 * K * BL_PANEL;
        const float *ps0 = w->ps + (size_t)p * nb * BL_PANEL, *ps1 = w->ps + (size_t)p1 * nb * BL_PANEL;
        const float *pb = bias ? bias + p * BL_PANEL : NULL;
        int cols0 = N - p * BL_PANEL < BL_PANEL ? N - p * BL_PANEL : BL_PANEL;
        int cols1 = p1 == p ? 0 : N - p1 * BL_PANEL < BL_PANEL ? N - p1 * BL_PANEL : BL_PANEL;
        float *yp = y + p * BL_PANEL;
        if (act < 0)
            for (int32_t t = 0; t < T; t += 4)
                mk_q8_avx2(yp + (size_t)t * ldy, ldy, xq + (size_t)t * K / 2, sx + t, pq0, pq1, ps0, ps1, K, gk, pb,
                           T - t < 4 ? T - t : 4, cols0, cols1, -1);
        else
            for (int32_t t = 0; t < T; t += 4)
                mk_q8_avx2(yp + (size_t)t * ldy, ldy, xq + (size_t)t * K / 2, sx + t, pq0, pq1, ps0, ps1, K, gk, pb,
                           T - t < 4 ? T - t : 4, cols0, cols1, act);
    }
}
#undef LO128
#undef UNROLL
#undef HI128
#endif
