/* kernels_avx512.c — x86-64 AVX-512 (F, BW) micro-kernels, with VNNI's
 * vpdpwssd where the CPU has it; chosen at run time (blk_x86_level,
 * src/kernels/kernels.c) by the drivers of src/kernels/kernels_simd128.c and compiled with
 * target attributes, so the binary still runs on CPUs without them.
 *
 * The packed layouts are those of the other paths (kernels.h): panels of 8
 * columns, weights pf[np][K][8] (f32) or pq[np][K/2][8][2] (int16 pairs) with
 * scales ps[np][groups][8]. A 512-bit register holds two panels' values for
 * one k (or k pair): one 256-bit load and one 256-bit insert, shared by all
 * rows of the tile, so no second layout is packed (no extra memory).
 *
 * Tiles: 8 rows (two groups of 4 interleaved rows) x 48 columns (six panels)
 * for f32: 24 accumulators of the 32 registers, each broadcast x value feeds
 * 3 FMAs, each 512-bit weight value 8 (8 x 32 measured 5 % slower on Zen 4);
 * 8 x 32 for q8: 16 integer accumulators (vpdpwssd chains) plus the float
 * sums of the scale groups (one per row and column, updated once per group,
 * kept in memory by the compiler across a group's inner loop).
 * Rows past T read the last valid row group (nothing of them is stored);
 * panels past N repeat the tile's first panel, and masked stores write only
 * the first N columns.
 *
 * Epilogues (bias, activation) and the softmax / LayerNorm row loops run on
 * 16 lanes with the same operation sequences as src/kernels/kernels_impl.h (exp and
 * erf: the same polynomials, no FMA), so they round as the SIMD128 path does.
 */
#include "kernels_impl.h"

#if BLK_SIMD && !defined(__wasm_simd128__)
#include <immintrin.h>
#include <math.h>

#define T512 "avx512f,avx512bw,avx2,fma"
#define T512_VNNI "avx512f,avx512bw,avx2,fma,avx512vnni"
#define F512 static inline __attribute__((always_inline, target(T512)))
/* loops over the tile's rows and halves: unrolled, so the tile lives in registers */
#define UNROLL _Pragma("GCC unroll 16")

#define TR 8  /* rows per tile */
#define TH 2  /* 16-column parts of a q8 tile (4 panels) */
#define THF 3 /* of an f32 tile (6 panels: no second set of sums to hold) */
#define THM 3 /* the most of either */

/* ------------------------------------------------------------ vector math */
#define SET1(c) _mm512_set1_ps(c)
/* wasm's pmin/pmax (src/kernels/simd_x86.h): min/max with swapped operands */
#define PMIN(a, b) _mm512_min_ps((b), (a))
#define PMAX(a, b) _mm512_max_ps((b), (a))

/* v_exp_in_range of src/kernels/kernels_impl.h on 16 lanes, x in [-87.3, 88.3] */
F512 __m512 e_exp_in_range(__m512 x) {
    const __m512 magic = SET1(12582912.0f); /* 1.5 * 2^23 */
    __m512 t = _mm512_add_ps(_mm512_mul_ps(x, SET1(1.44269504088896341f)), magic);
    __m512 n = _mm512_sub_ps(t, magic);
    __m512 r = _mm512_sub_ps(x, _mm512_mul_ps(n, SET1(0.693359375f)));
    r = _mm512_sub_ps(r, _mm512_mul_ps(n, SET1(-2.12194440e-4f)));
    __m512 r2 = _mm512_mul_ps(r, r), r4 = _mm512_mul_ps(r2, r2);
    __m512 q01 = _mm512_add_ps(SET1(0.49999967217445374f), _mm512_mul_ps(r, SET1(0.16666479408740997f)));
    __m512 q23 = _mm512_add_ps(SET1(0.04167356714606285f), _mm512_mul_ps(r, SET1(0.008372685872018337f)));
    __m512 q = _mm512_add_ps(_mm512_add_ps(q01, _mm512_mul_ps(q23, r2)), _mm512_mul_ps(SET1(0.0013571209274232388f), r4));
    __m512 p = _mm512_add_ps(_mm512_add_ps(SET1(1.0f), r), _mm512_mul_ps(q, r2));
    __m512i e = _mm512_slli_epi32(_mm512_add_epi32(_mm512_castps_si512(t), _mm512_set1_epi32(127)), 23);
    return _mm512_mul_ps(p, _mm512_castsi512_ps(e));
}
F512 __m512 e_exp(__m512 x) { return e_exp_in_range(PMIN(PMAX(x, SET1(-87.3f)), SET1(88.3f))); }
F512 __m512 e_exp_nonpos(__m512 x) { return e_exp_in_range(PMAX(x, SET1(-87.3f))); }

/* v_erf of src/kernels/kernels_impl.h on 16 lanes */
F512 __m512 e_erf(__m512 x) {
    x = PMIN(PMAX(x, SET1(-3.92f)), SET1(3.92f));
    __m512 t = _mm512_mul_ps(x, x);
#define C(c, i) SET1(c[i])
#define L(c, i) _mm512_add_ps(C(c, i), _mm512_mul_ps(C(c, i + 1), t))
    __m512 t2 = _mm512_mul_ps(t, t), t4 = _mm512_mul_ps(t2, t2);
    __m512 p = _mm512_add_ps(_mm512_add_ps(L(ERF_P, 0), _mm512_mul_ps(t2, L(ERF_P, 2))),
                             _mm512_mul_ps(t4, _mm512_add_ps(L(ERF_P, 4), _mm512_mul_ps(C(ERF_P, 6), t2))));
    __m512 q = _mm512_add_ps(_mm512_add_ps(L(ERF_Q, 0), _mm512_mul_ps(t2, L(ERF_Q, 2))), _mm512_mul_ps(t4, C(ERF_Q, 4)));
#undef L
#undef C
    __m512 r = _mm512_div_ps(_mm512_mul_ps(x, p), q);
    return PMIN(PMAX(r, SET1(-1.0f)), SET1(1.0f));
}

/* v_act of src/kernels/kernels_impl.h on 16 lanes */
F512 __m512 e_act(__m512 v, int32_t act) {
    const __m512 half = SET1(0.5f), one = SET1(1.0f);
    if (act == BL_ACT_GELU)
        return _mm512_mul_ps(_mm512_mul_ps(half, v), _mm512_add_ps(one, e_erf(_mm512_mul_ps(v, SET1(0.70710678118654752f)))));
    if (act == BL_ACT_GELU_TANH) {
        __m512 u = _mm512_mul_ps(SET1(0.7978845608028654f),
                                 _mm512_add_ps(v, _mm512_mul_ps(SET1(0.044715f), _mm512_mul_ps(v, _mm512_mul_ps(v, v)))));
        __m512 e = e_exp(_mm512_add_ps(u, u));
        __m512 th = _mm512_sub_ps(one, _mm512_div_ps(SET1(2.0f), _mm512_add_ps(e, one)));
        return _mm512_mul_ps(_mm512_mul_ps(half, v), _mm512_add_ps(one, th));
    }
    return PMAX(v, SET1(0.0f));
}

/* ------------------------------------------------------------ tiles */

/* 8 floats of panel a then 8 of panel b (the same k of two panels) */
F512 __m512 load_two_ps(const float *a, const float *b) {
    return _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(_mm256_loadu_ps(a))),
                                               _mm256_castps_pd(_mm256_loadu_ps(b)), 1));
}
F512 __m512i load_two_si(const int16_t *a, const int16_t *b) {
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)a)),
                              _mm256_loadu_si256((const __m256i *)b), 1);
}

/* Row r of a tile: v (16 columns) + bias, activation, into y; m: which
 * columns exist. */
F512 void store16(float *y, __m512 v, const float *bias, __mmask16 m, int32_t act) {
    if (bias) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, bias));
    if (act >= 0) v = e_act(v, act);
    _mm512_mask_storeu_ps(y, m, v);
}

/* Store rows < rows of the tile a[r][h], each scaled by sx[r] (sx NULL: 1). */
F512 void tile_store(float *y, int32_t ldy, __m512 a[TR][THM], int nh, const float *sx, const float *bias, int rows,
                     const __mmask16 m[THM], int32_t act) {
    UNROLL for (int r = 0; r < TR; r++) if (r < rows) {
        __m512 s = SET1(sx ? sx[r] : 1.0f);
        UNROLL for (int h = 0; h < nh; h++) if (m[h])
            store16(y + (size_t)r * ldy + 16 * h, sx ? _mm512_mul_ps(a[r][h], s) : a[r][h], bias ? bias + 16 * h : NULL,
                    m[h], act);
    }
}

/* The columns of a 32-column tile that exist (cols of them). */
F512 void col_masks(__mmask16 m[THM], int nh, int cols) {
    UNROLL for (int h = 0; h < nh; h++) {
        int c = cols - 16 * h;
        m[h] = c >= 16 ? (__mmask16)0xffff : c <= 0 ? 0 : (__mmask16)((1u << c) - 1);
    }
}

/* Panel pointers of the tile at panel p: 4 panels of `stride` elements each,
 * panels past np repeated from p. */
#define TILE_PANELS(pw, nh, base, p, np, stride)                                                \
    for (int i_ = 0; i_ < 2 * (nh); i_++) (pw)[i_] = (base) + (size_t)((p) + i_ < (np) ? (p) + i_ : (p)) * (stride)

/* ------------------------------------------------------------ f32 */

/* Rows of xp0 / xp1 ([K][4] each: two groups of 4 interleaved rows) times
 * four f32 panels pw[i] ([K][8]). Sums of at most F32_KBLOCK products stay
 * in registers, then go into part (blocked accumulation, as mk_f32_long;
 * one block when K <= 2 * F32_KBLOCK). */
F512 void mk_f32_512(float *y, int32_t ldy, const float *xp0, const float *xp1, const float *const pw[2 * THF],
                     int32_t K, const float *bias, int rows, const __mmask16 m[THM], int32_t act, int nh) {
    __m512 a[TR][THM], part[TR][THM];
    int blocks = 0;
    for (int32_t k0 = 0;;) {
        const int32_t k1 = K - k0 > F32_KBLOCK && K > 2 * F32_KBLOCK ? k0 + F32_KBLOCK : K;
        UNROLL for (int r = 0; r < TR; r++) UNROLL for (int h = 0; h < nh; h++) a[r][h] = _mm512_setzero_ps();
        for (int32_t k = k0; k < k1; k++) {
            __m512 w[THF];
            UNROLL for (int h = 0; h < nh; h++)
                w[h] = load_two_ps(pw[2 * h] + (size_t)k * BL_PANEL, pw[2 * h + 1] + (size_t)k * BL_PANEL);
            UNROLL for (int r = 0; r < 4; r++) {
                __m512 s = _mm512_set1_ps(xp0[4 * k + r]);
                UNROLL for (int h = 0; h < nh; h++) a[r][h] = _mm512_fmadd_ps(s, w[h], a[r][h]);
            }
            UNROLL for (int r = 0; r < 4; r++) {
                __m512 s = _mm512_set1_ps(xp1[4 * k + r]);
                UNROLL for (int h = 0; h < nh; h++) a[4 + r][h] = _mm512_fmadd_ps(s, w[h], a[4 + r][h]);
            }
        }
        if (k1 == K) break;
        UNROLL for (int r = 0; r < TR; r++) UNROLL for (int h = 0; h < nh; h++)
            part[r][h] = blocks ? _mm512_add_ps(part[r][h], a[r][h]) : a[r][h];
        blocks++;
        k0 = k1;
    }
    if (blocks)
        UNROLL for (int r = 0; r < TR; r++) UNROLL for (int h = 0; h < nh; h++) a[r][h] = _mm512_add_ps(part[r][h], a[r][h]);
    tile_store(y, ldy, a, nh, NULL, bias, rows, m, act);
}

/* The f32 driver for a tile width of nh 16-column parts (a constant at
 * each call). */
F512 void matmul_f32_512(float *y, int32_t ldy, const float *xp, int32_t T, const float *pf, int32_t N, int32_t K,
                         const float *bias, int32_t act, int nh) {
    const int32_t np = (N + BL_PANEL - 1) / BL_PANEL;
    for (int32_t p = 0; p < np; p += 2 * nh) {
        const float *pw[2 * THF];
        TILE_PANELS(pw, nh, pf, p, np, (size_t)K * BL_PANEL);
        __mmask16 m[THM];
        col_masks(m, nh, N - p * BL_PANEL);
        const float *pb = bias ? bias + p * BL_PANEL : NULL;
        float *yp = y + p * BL_PANEL;
        for (int32_t t = 0; t < T; t += TR) {
            const float *x0 = xp + (size_t)t * K, *x1 = t + 4 < T ? x0 + (size_t)4 * K : x0;
            const int rows = T - t < TR ? T - t : TR;
            if (act < 0) /* a constant -1 leaves the activation code out of the common instance */
                mk_f32_512(yp + (size_t)t * ldy, ldy, x0, x1, pw, K, pb, rows, m, -1, nh);
            else
                mk_f32_512(yp + (size_t)t * ldy, ldy, x0, x1, pw, K, pb, rows, m, act, nh);
        }
    }
}

/* 48-column tiles, or 32 where those cover N with an eighth fewer 16-column
 * parts (N = 32 or 64, a head's width in A v, where 48 computes a third
 * more than needed; 8 x 32 is otherwise 5 % slower, see above). */
__attribute__((target(T512), noinline)) void blk_matmul_f32_packed_avx512(float *y, int32_t ldy, const float *xp,
                                                                          int32_t T, const float *pf, int32_t N,
                                                                          int32_t K, const float *bias, int32_t act) {
    if ((N + 31) / 32 * 2 * 8 < (N + 47) / 48 * 3 * 7) matmul_f32_512(y, ldy, xp, T, pf, N, K, bias, act, 2);
    else matmul_f32_512(y, ldy, xp, T, pf, N, K, bias, act, THF);
}

/* ------------------------------------------------------------ q8 */

/* Rows of xq0 / xq1 ([K/2][4] int16 pairs each, two groups of 4 rows) times
 * four int16 panels pq[i] ([K/2][8][2]) with scales ps[i] ([K/gk][8]); the
 * integer sums of a scale group (at most gk values of k) are scaled into f.
 * DP(acc, x, w): acc + the pair products of x and w. */
#define MK_Q8_512_BODY(DP)                                                                                           \
    __m512 f[TR][THM];                                                                                               \
    const int16_t *q0 = pq[0], *q1 = pq[1], *q2 = pq[2], *q3 = pq[3];                                                \
    UNROLL for (int r = 0; r < TR; r++) UNROLL for (int h = 0; h < TH; h++) f[r][h] = _mm512_setzero_ps();         \
    for (int32_t k0 = 0, g = 0; k0 < K; k0 += gk, g++) {                                                             \
        const int32_t j1 = (K - k0 < gk ? K : k0 + gk) / 2;                                                          \
        __m512i i[TR][TH];                                                                                           \
        UNROLL for (int r = 0; r < TR; r++) UNROLL for (int h = 0; h < TH; h++) i[r][h] = _mm512_setzero_si512();  \
        for (int32_t j = k0 / 2; j < j1; j++) {                                                                      \
            const __m512i w0 = load_two_si(q0 + (size_t)j * 2 * BL_PANEL, q1 + (size_t)j * 2 * BL_PANEL),            \
                          w1 = load_two_si(q2 + (size_t)j * 2 * BL_PANEL, q3 + (size_t)j * 2 * BL_PANEL);            \
            UNROLL for (int r = 0; r < 4; r++) {                                                                     \
                __m512i s = _mm512_set1_epi32(xq0[4 * j + r]);                                                       \
                i[r][0] = DP(i[r][0], s, w0);                                                                        \
                i[r][1] = DP(i[r][1], s, w1);                                                                        \
            }                                                                                                        \
            UNROLL for (int r = 0; r < 4; r++) {                                                                     \
                __m512i s = _mm512_set1_epi32(xq1[4 * j + r]);                                                       \
                i[4 + r][0] = DP(i[4 + r][0], s, w0);                                                                \
                i[4 + r][1] = DP(i[4 + r][1], s, w1);                                                                \
            }                                                                                                        \
        }                                                                                                            \
        const __m512 s0 = load_two_ps(ps[0] + (size_t)g * BL_PANEL, ps[1] + (size_t)g * BL_PANEL),                   \
                     s1 = load_two_ps(ps[2] + (size_t)g * BL_PANEL, ps[3] + (size_t)g * BL_PANEL);                   \
        UNROLL for (int r = 0; r < TR; r++) {                                                                        \
            f[r][0] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(i[r][0]), s0, f[r][0]);                                     \
            f[r][1] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(i[r][1]), s1, f[r][1]);                                     \
        }                                                                                                            \
    }                                                                                                                \
    tile_store(y, ldy, f, TH, sx, bias, rows, m, act);

#define Q8_ARGS                                                                                                      \
    float *y, int32_t ldy, const int32_t *xq0, const int32_t *xq1, const float *sx, const int16_t *const pq[4],      \
        const float *const ps[4], int32_t K, int32_t gk, const float *bias, int rows, const __mmask16 m[THM],        \
        int32_t act

#define DP_BW(acc, x, w) _mm512_add_epi32((acc), _mm512_madd_epi16((x), (w)))
/* vpdpwssd through asm: the sum is updated in place. With the intrinsic,
 * GCC 12 copied every sum to a second register and back on each step and
 * spilled one to the stack (perf annotate), holding the kernel to about
 * half of vpdpwssd's rate. */
static inline __attribute__((always_inline, target(T512_VNNI))) __m512i dp_vnni(__m512i acc, __m512i x, __m512i w) {
    __asm__("vpdpwssd %2, %1, %0" : "+v"(acc) : "v"(x), "v"(w));
    return acc;
}
#define DP_VNNI(acc, x, w) dp_vnni((acc), (x), (w))
static inline __attribute__((always_inline, target(T512))) void mk_q8_512(Q8_ARGS) { MK_Q8_512_BODY(DP_BW) }
static inline __attribute__((always_inline, target(T512_VNNI))) void mk_q8_512_vnni(Q8_ARGS) { MK_Q8_512_BODY(DP_VNNI) }

/* The driver: tiles of 4 panels x 8 rows; MK is the micro-kernel. */
#define MATMUL_Q8_512(MK)                                                                                            \
    const int32_t N = w->n, K = w->k, gk = w->qg * BL_QBLOCK, nb = (K + gk - 1) / gk,                                \
                  np = (N + BL_PANEL - 1) / BL_PANEL;                                                                \
    for (int32_t p = 0; p < np; p += 2 * TH) {                                                                       \
        const int16_t *pq[2 * TH];                                                                                   \
        const float *ps[2 * TH];                                                                                     \
        TILE_PANELS(pq, TH, w->pq, p, np, (size_t)K * BL_PANEL);                                                     \
        TILE_PANELS(ps, TH, w->ps, p, np, (size_t)nb * BL_PANEL);                                                    \
        __mmask16 m[THM];                                                                                            \
        col_masks(m, TH, N - p * BL_PANEL);                                                                              \
        const float *pb = bias ? bias + p * BL_PANEL : NULL;                                                         \
        float *yp = y + p * BL_PANEL;                                                                                \
        for (int32_t t = 0; t < T; t += TR) {                                                                        \
            const int32_t *x0 = xq + (size_t)t * K / 2, *x1 = t + 4 < T ? x0 + (size_t)2 * K : x0;                   \
            const int rows = T - t < TR ? T - t : TR;                                                                \
            if (act < 0)                                                                                             \
                MK(yp + (size_t)t * ldy, ldy, x0, x1, sx + t, pq, ps, K, gk, pb, rows, m, -1);                       \
            else                                                                                                     \
                MK(yp + (size_t)t * ldy, ldy, x0, x1, sx + t, pq, ps, K, gk, pb, rows, m, act);                      \
        }                                                                                                            \
    }

__attribute__((target(T512), noinline)) void blk_matmul_q8_quantized_avx512(float *y, int32_t ldy, const int32_t *xq,
                                                                            const float *sx, int32_t T,
                                                                            const blk_weight *w, const float *bias,
                                                                            int32_t act) {
    MATMUL_Q8_512(mk_q8_512)
}

__attribute__((target(T512_VNNI), noinline)) void blk_matmul_q8_quantized_avx512_vnni(float *y, int32_t ldy,
                                                                                      const int32_t *xq,
                                                                                      const float *sx, int32_t T,
                                                                                      const blk_weight *w,
                                                                                      const float *bias, int32_t act) {
    MATMUL_Q8_512(mk_q8_512_vnni)
}

/* ------------------------------------------------------------ rows */

/* Mask of the first n (< 16) lanes. */
#define MASK(n) ((__mmask16)((1u << (n)) - 1))

__attribute__((target(T512), noinline)) void blk_softmax_avx512(float *x, int32_t T, int32_t n, float scale) {
    for (int32_t t = 0; t < T; t++) {
        float *r = x + (size_t)t * n;
        const __m512 ninf = SET1(-INFINITY);
        __m512 m0 = ninf, m1 = ninf, m2 = ninf, m3 = ninf; /* four chains of max */
        int32_t i = 0;
        for (; i + 64 <= n; i += 64) {
            m0 = PMAX(m0, _mm512_loadu_ps(r + i));
            m1 = PMAX(m1, _mm512_loadu_ps(r + i + 16));
            m2 = PMAX(m2, _mm512_loadu_ps(r + i + 32));
            m3 = PMAX(m3, _mm512_loadu_ps(r + i + 48));
        }
        for (; i + 16 <= n; i += 16) m0 = PMAX(m0, _mm512_loadu_ps(r + i));
        if (i < n) m1 = PMAX(m1, _mm512_mask_loadu_ps(ninf, MASK(n - i), r + i));
        const float mx = _mm512_reduce_max_ps(PMAX(PMAX(m0, m1), PMAX(m2, m3)));
        const __m512 vm = SET1(mx), vs = SET1(scale);
        __m512 s0 = _mm512_setzero_ps(), s1 = s0;
#define EXP_ROW(ex)                                                                                \
    for (i = 0; i + 32 <= n; i += 32) {                                                            \
        __m512 e0 = ex(_mm512_mul_ps(_mm512_sub_ps(_mm512_loadu_ps(r + i), vm), vs));              \
        __m512 e1 = ex(_mm512_mul_ps(_mm512_sub_ps(_mm512_loadu_ps(r + i + 16), vm), vs));         \
        _mm512_storeu_ps(r + i, e0);                                                               \
        _mm512_storeu_ps(r + i + 16, e1);                                                          \
        s0 = _mm512_add_ps(s0, e0);                                                                \
        s1 = _mm512_add_ps(s1, e1);                                                                \
    }                                                                                              \
    for (; i < n; i += 16) {                                                                       \
        const __mmask16 k_ = n - i >= 16 ? (__mmask16)0xffff : MASK(n - i);                        \
        __m512 e = ex(_mm512_mul_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(k_, r + i), vm), vs));     \
        _mm512_mask_storeu_ps(r + i, k_, e);                                                       \
        s0 = _mm512_mask_add_ps(s0, k_, s0, e);                                                    \
    }
        if (scale >= 0.0f) { /* arguments are <= 0 */
            EXP_ROW(e_exp_nonpos)
        } else {
            EXP_ROW(e_exp)
        }
#undef EXP_ROW
        const __m512 vi = SET1(1.0f / _mm512_reduce_add_ps(_mm512_add_ps(s0, s1)));
        for (i = 0; i + 16 <= n; i += 16) _mm512_storeu_ps(r + i, _mm512_mul_ps(_mm512_loadu_ps(r + i), vi));
        if (i < n) _mm512_mask_storeu_ps(r + i, MASK(n - i), _mm512_mul_ps(_mm512_maskz_loadu_ps(MASK(n - i), r + i), vi));
    }
}

__attribute__((target(T512), noinline)) void blk_layernorm_avx512(float *x, const float *res, int32_t T, int32_t n,
                                                                  const float *g, const float *b, float eps) {
    const int32_t n16 = n / 16 * 16;
    const __mmask16 tail = MASK(n - n16);
    for (int32_t t = 0; t < T; t++) {
        float *r = x + (size_t)t * n;
        const float *rr = res ? res + (size_t)t * n : NULL;
        __m512 s0 = _mm512_setzero_ps(), s1 = s0; /* two chains */
        int32_t i = 0;
        for (; i + 32 <= n; i += 32) {
            __m512 v0 = _mm512_loadu_ps(r + i), v1 = _mm512_loadu_ps(r + i + 16);
            if (rr) {
                v0 = _mm512_add_ps(v0, _mm512_loadu_ps(rr + i));
                v1 = _mm512_add_ps(v1, _mm512_loadu_ps(rr + i + 16));
                _mm512_storeu_ps(r + i, v0);
                _mm512_storeu_ps(r + i + 16, v1);
            }
            s0 = _mm512_add_ps(s0, v0);
            s1 = _mm512_add_ps(s1, v1);
        }
        for (; i < n; i += 16) {
            const __mmask16 k = i < n16 ? (__mmask16)0xffff : tail;
            __m512 v = _mm512_maskz_loadu_ps(k, r + i);
            if (rr) {
                v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(k, rr + i));
                _mm512_mask_storeu_ps(r + i, k, v);
            }
            s0 = _mm512_add_ps(s0, v);
        }
        const float mean = _mm512_reduce_add_ps(_mm512_add_ps(s0, s1)) / (float)n;
        const __m512 vm = SET1(mean);
        s0 = s1 = _mm512_setzero_ps();
        for (i = 0; i + 32 <= n; i += 32) {
            __m512 d0 = _mm512_sub_ps(_mm512_loadu_ps(r + i), vm), d1 = _mm512_sub_ps(_mm512_loadu_ps(r + i + 16), vm);
            s0 = _mm512_fmadd_ps(d0, d0, s0);
            s1 = _mm512_fmadd_ps(d1, d1, s1);
        }
        for (; i < n; i += 16) {
            const __mmask16 k = i < n16 ? (__mmask16)0xffff : tail;
            __m512 d = _mm512_maskz_sub_ps(k, _mm512_maskz_loadu_ps(k, r + i), vm);
            s0 = _mm512_fmadd_ps(d, d, s0);
        }
        const float var = _mm512_reduce_add_ps(_mm512_add_ps(s0, s1)) / (float)n;
        const __m512 vi = SET1(1.0f / sqrtf(var + eps));
        for (i = 0; i < n; i += 16) {
            const __mmask16 k = i < n16 ? (__mmask16)0xffff : tail;
            __m512 d = _mm512_mul_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, r + i), vm), vi);
            _mm512_mask_storeu_ps(r + i, k, _mm512_add_ps(_mm512_mul_ps(d, _mm512_maskz_loadu_ps(k, g + i)),
                                                          _mm512_maskz_loadu_ps(k, b + i)));
        }
    }
}
#endif
