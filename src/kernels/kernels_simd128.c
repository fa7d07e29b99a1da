/* kernels_simd128.c — the SIMD kernels, written with wasm SIMD128
 * intrinsics: the wasm build's kernels, and on x86-64 the SSE4.1 path (the
 * same source through src/kernels/simd_x86.h), whose matmul drivers hand over to the
 * AVX2+FMA micro-kernels of src/kernels/kernels_x86.c when the CPU has them.
 * Compiled to nothing in a scalar build (no BLK_SIMD).
 *
 * SIMD matmul design (no FMA in SIMD128, so every step is a mul + add):
 * SIMD matmul design (no FMA in SIMD128, so every step is a mul + add):
 *   weights are re-laid-out once into panels of 8 output columns so that for
 *   each input index k the 8 weights sit in two v128 registers; a micro-kernel
 *   keeps a block of 4 token rows x 8 columns of sums in 8 registers and adds
 *   splat(x[t][k]) * w[k][0..7] for every k.
 *   q8/q4: activations are quantized per row to 15 bits (scale = max|x| / 16383,
 *   so the loss is ~3e-5 relative, far below the weight quantization error);
 *   weights are kept as int16 pairs (k, k+1) per column (widened at pack time:
 *   twice the memory of int8, but the micro-kernel loads them without a
 *   sign-extending shuffle: 72 -> 77 GOP/s) and the pair product
 *   x[k]*w[k] + x[k+1]*w[k+1] of 4 columns comes from one i32x4.dot_i16x8_s.
 *   Integer sums of one scale group (qg 32-blocks, see blk_weight_pack) are
 *   scaled by the group's weight scales in f32; the row's activation scale
 *   is applied at the end.
 *   Before either kernel runs, x is interleaved in groups of 4 rows
 *   ([T/4][K][4], int16 pairs for q8) so one pointer plus constant offsets
 *   feeds the 4 splats, keeping integer work out of the inner loop.
 *   V8 (TurboFan) notes, measured: the 4x8 tile uses 15 of the 15 allocatable
 *   xmm registers (V8 hoists all loads of a step); unrolling k or a 5x8 tile
 *   makes it spill an accumulator, and a sum carried through the stack halves
 *   the speed. Polynomials (exp, erf) are bound by dependency latency, hence
 *   Estrin's scheme.
 */
#include "kernels_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#if BLK_SIMD
void blk_erf_vec(float *x, size_t n) {
    size_t i = 0;
    for (; i + 4 <= n; i += 4) wasm_v128_store(x + i, v_erf(wasm_v128_load(x + i)));
    for (; i < n; i++) {
        float t[4] = {x[i], 0, 0, 0};
        wasm_v128_store(t, v_erf(wasm_v128_load(t)));
        x[i] = t[0];
    }
}

void blk_exp_vec(float *x, size_t n) {
    size_t i = 0;
    for (; i + 4 <= n; i += 4) wasm_v128_store(x + i, v_exp(wasm_v128_load(x + i)));
    for (; i < n; i++) {
        float t[4] = {x[i], 0, 0, 0};
        wasm_v128_store(t, v_exp(wasm_v128_load(t)));
        x[i] = t[0];
    }
}

/* Interleave rows in groups of 4: xp[g][k][r] = x[4g + r][k] for rows
 * t0 <= 4g + r < T (stride ldx), zero for rows past T. So the micro-kernel
 * reads the 4 rows' x[k] from one pointer at offsets 0, 4, 8, 12 bytes. */
static void pack_rows_f32(float *xp, const float *x, int32_t ldx, int32_t T, int32_t K) {
    for (int32_t t = 0; t < T; t += 4, xp += (size_t)4 * K) {
        const float *r[4];
        for (int i = 0; i < 4; i++) r[i] = t + i < T ? x + (size_t)(t + i) * ldx : NULL;
        int32_t k = 0;
        if (t + 4 <= T)
            for (; k + 4 <= K; k += 4) {
                v128_t a = wasm_v128_load(r[0] + k), b = wasm_v128_load(r[1] + k), c = wasm_v128_load(r[2] + k),
                       d = wasm_v128_load(r[3] + k);
                transpose4(&a, &b, &c, &d);
                wasm_v128_store(xp + 4 * k, a);
                wasm_v128_store(xp + 4 * k + 4, b);
                wasm_v128_store(xp + 4 * k + 8, c);
                wasm_v128_store(xp + 4 * k + 12, d);
            }
        for (; k < K; k++)
            for (int i = 0; i < 4; i++) xp[4 * k + i] = r[i] ? r[i][k] : 0.0f;
    }
}

/* One k step of the 4 x 8 f32 tile (accumulators a00..a31 in scope):
 * 2 weight loads, 4 splat loads, 8 mul + 8 add. A macro, not a function, so
 * both kernels below get exactly this register allocation from V8. */
#define F32_TILE_STEP(xp, pw)                                                   \
    do {                                                                        \
        v128_t w0_ = wasm_v128_load(pw), w1_ = wasm_v128_load((pw) + 4), s_;    \
        s_ = wasm_v128_load32_splat(xp);                                        \
        a00 = F32_MADD(s_, w0_, a00);                     \
        a01 = F32_MADD(s_, w1_, a01);                     \
        s_ = wasm_v128_load32_splat((xp) + 1);                                  \
        a10 = F32_MADD(s_, w0_, a10);                     \
        a11 = F32_MADD(s_, w1_, a11);                     \
        s_ = wasm_v128_load32_splat((xp) + 2);                                  \
        a20 = F32_MADD(s_, w0_, a20);                     \
        a21 = F32_MADD(s_, w1_, a21);                     \
        s_ = wasm_v128_load32_splat((xp) + 3);                                  \
        a30 = F32_MADD(s_, w0_, a30);                     \
        a31 = F32_MADD(s_, w1_, a31);                     \
    } while (0)

/* Write the first `rows` rows of the tile (bias, activation) into y. */
#define F32_TILE_STORE()                                                        \
    do {                                                                        \
        store_row(y, a00, a01, bias, cols, act);                                \
        if (rows > 1) store_row(y + ldy, a10, a11, bias, cols, act);            \
        if (rows > 2) store_row(y + 2 * (size_t)ldy, a20, a21, bias, cols, act);\
        if (rows > 3) store_row(y + 3 * (size_t)ldy, a30, a31, bias, cols, act);\
    } while (0)

/* 4 interleaved rows xp[K][4] times one f32 panel pw[K][8]: 8 sums in
 * registers; one k step is 2 weight loads, 4 splat loads, 8 mul + 8 add.
 * Writes the first `rows` rows and `cols` columns of y (stride ldy). */
INLINE void mk_f32(float *y, int32_t ldy, const float *xp, const float *pw, int32_t K, const float *bias, int rows,
                   int cols, int32_t act) {
    v128_t a00 = wasm_f32x4_splat(0), a01 = a00, a10 = a00, a11 = a00, a20 = a00, a21 = a00, a30 = a00, a31 = a00;
    for (const float *end = xp + (size_t)4 * K; xp != end; xp += 4, pw += 8) {
        F32_TILE_STEP(xp, pw);
    }
    F32_TILE_STORE();
}

/* mk_f32 for long sums (used when K > 2 * F32_KBLOCK): blocked accumulation.
 * The registers sum at most F32_KBLOCK products, then are added into
 * part[8][4] (memory: no register is free), so rounding error grows with
 * F32_KBLOCK + K / F32_KBLOCK terms instead of K (the scalar reference's 4
 * partial sums: K / 4). One running sum put the bert-base-shaped f32
 * attention at 9.6e-6 vs Hugging Face (bar 1e-5); blocked: 4.8e-6.
 * Measured: V8 runs this kernel ~5% slower than mk_f32 even with one flush,
 * hence mk_f32 for K <= 512 (all attention products at <= 512 tokens,
 * 384-wide projections); part must not alias y, xp or pw.
 * Writes the first `rows` rows and `cols` columns of y (stride ldy). */
INLINE void mk_f32_long(float *y, int32_t ldy, const float *xp, const float *pw, int32_t K, const float *bias, int rows,
                   int cols, int32_t act, float *part) {
    v128_t a00, a01, a10, a11, a20, a21, a30, a31;
    const float *end = xp + (size_t)4 * K;
    int blocks = 0; /* finished k-blocks summed in part[8][4] */
    for (;;) {
        const float *stop = end - xp > 4 * F32_KBLOCK ? xp + 4 * F32_KBLOCK : end;
        a00 = wasm_f32x4_splat(0), a01 = a00, a10 = a00, a11 = a00, a20 = a00, a21 = a00, a30 = a00, a31 = a00;
        for (; xp != stop; xp += 4, pw += 8) {
            F32_TILE_STEP(xp, pw);
        }
        if (stop == end) break;
#define PART(i, a) wasm_v128_store(part + 4 * (i), blocks ? wasm_f32x4_add(wasm_v128_load(part + 4 * (i)), a) : a)
        PART(0, a00), PART(1, a01), PART(2, a10), PART(3, a11), PART(4, a20), PART(5, a21), PART(6, a30),
            PART(7, a31);
#undef PART
        blocks++;
        /* opaque to the optimizer: part[] is re-read from memory rather than
         * kept in registers across the k loop (none are free there) */
        __asm__ volatile("" ::: "memory");
    }
    if (blocks) {
#define PART(i, a) a = wasm_f32x4_add(wasm_v128_load(part + 4 * (i)), a)
        PART(0, a00), PART(1, a01), PART(2, a10), PART(3, a11), PART(4, a20), PART(5, a21), PART(6, a30),
            PART(7, a31);
#undef PART
    }
    F32_TILE_STORE();
}

/* y[T][N] (stride ldy) = rows packed by pack_rows_f32 (xp) times panels
 * pf[np][K][8]. Each panel stays in cache while all row groups pass it. */
static void matmul_f32_packed(float *y, int32_t ldy, const float *xp, int32_t T, const float *pf, int32_t N,
                              int32_t K, const float *bias, int32_t act, float *part) {
#if !defined(__wasm_simd128__)
    const int level = blk_x86_level();
    if (level >= BLK_X86_AVX512) {
        blk_matmul_f32_packed_avx512(y, ldy, xp, T, pf, N, K, bias, act);
        return;
    }
    if (level == BLK_X86_AVX2) {
        blk_matmul_f32_packed_avx2(y, ldy, xp, T, pf, N, K, bias, act);
        return;
    }
#endif
    for (int32_t p = 0; p * BL_PANEL < N; p++) {
        const float *pw = pf + (size_t)p * K * BL_PANEL;
        const float *pb = bias ? bias + p * BL_PANEL : NULL;
        int cols = N - p * BL_PANEL < BL_PANEL ? N - p * BL_PANEL : BL_PANEL;
        float *yp = y + p * BL_PANEL;
        /* a constant -1 leaves the activation code out of the common instance */
        if (K > 2 * F32_KBLOCK)
            for (int32_t t = 0; t < T; t += 4)
                mk_f32_long(yp + (size_t)t * ldy, ldy, xp + (size_t)t * K, pw, K, pb, T - t < 4 ? T - t : 4, cols, act,
                            part);
        else if (act < 0)
            for (int32_t t = 0; t < T; t += 4)
                mk_f32(yp + (size_t)t * ldy, ldy, xp + (size_t)t * K, pw, K, pb, T - t < 4 ? T - t : 4, cols, -1);
        else
            for (int32_t t = 0; t < T; t += 4)
                mk_f32(yp + (size_t)t * ldy, ldy, xp + (size_t)t * K, pw, K, pb, T - t < 4 ? T - t : 4, cols, act);
    }
}

/* 4 interleaved rows of int16 activation pairs xq[K/2][4] (one i32 per row
 * and pair) times one panel pw[K/2][8][2] with scales ps[K/gk][8] (one per
 * group of gk values of k, the last possibly shorter); sx[r] is row r's
 * scale. The panel holds int16 (i8 = 0: blk_weight_pack's) or int8 values
 * (i8 = 1: q8 panels in the bundle bytes, widened as they are loaded; one
 * 16-byte load per pair instead of two). i8 is a constant at every call:
 * each instance has one kind of load. */
INLINE void mk_q8(float *y, int32_t ldy, const int32_t *xq, const float *sx, const void *pw, const float *ps,
                  int32_t K, int32_t gk, const float *bias, int rows, int cols, int32_t act, int i8) {
    const uint8_t *pq = pw;
    const int step = i8 ? 16 : 32; /* bytes of one pair of 8 columns */
    v128_t f00 = wasm_f32x4_splat(0), f01 = f00, f10 = f00, f11 = f00, f20 = f00, f21 = f00, f30 = f00, f31 = f00;
    for (int32_t k0 = 0; k0 < K; k0 += gk, ps += BL_PANEL) {
        const int32_t steps = (K - k0 < gk ? K - k0 : gk) / 2;
        /* one step = one pair (k, k+1): 8 dot products of 4 columns; the
         * group's first step initializes the sums (no zeroing, no adds) */
#define Q8_STEP(ACC)                                                                          \
    do {                                                                                      \
        v128_t w0, w1, s;                                                                     \
        if (i8) {                                                                             \
            v128_t b8 = wasm_v128_load(pq);                                                   \
            w0 = wasm_i16x8_extend_low_i8x16(b8);                                             \
            w1 = wasm_i16x8_extend_high_i8x16(b8);                                            \
        } else {                                                                              \
            w0 = wasm_v128_load(pq), w1 = wasm_v128_load(pq + 16);                            \
        }                                                                                     \
        s = wasm_v128_load32_splat(xq);                                                       \
        ACC(i00, wasm_i32x4_dot_i16x8(s, w0));                                                \
        ACC(i01, wasm_i32x4_dot_i16x8(s, w1));                                                \
        s = wasm_v128_load32_splat(xq + 1);                                                   \
        ACC(i10, wasm_i32x4_dot_i16x8(s, w0));                                                \
        ACC(i11, wasm_i32x4_dot_i16x8(s, w1));                                                \
        s = wasm_v128_load32_splat(xq + 2);                                                   \
        ACC(i20, wasm_i32x4_dot_i16x8(s, w0));                                                \
        ACC(i21, wasm_i32x4_dot_i16x8(s, w1));                                                \
        s = wasm_v128_load32_splat(xq + 3);                                                   \
        ACC(i30, wasm_i32x4_dot_i16x8(s, w0));                                                \
        ACC(i31, wasm_i32x4_dot_i16x8(s, w1));                                                \
    } while (0)
#define SET(a, d) a = (d)
#define ADD(a, d) a = wasm_i32x4_add(a, (d))
        v128_t i00, i01, i10, i11, i20, i21, i30, i31;
        Q8_STEP(SET);
        xq += 4;
        pq += step;
        NO_UNROLL
        for (const int32_t *end = xq + 4 * (steps - 1); xq != end; xq += 4, pq += step) Q8_STEP(ADD);
#undef SET
#undef ADD
#undef Q8_STEP
        v128_t s0 = wasm_v128_load(ps), s1 = wasm_v128_load(ps + 4);
        f00 = F32_MADD(wasm_f32x4_convert_i32x4(i00), s0, f00);
        f01 = F32_MADD(wasm_f32x4_convert_i32x4(i01), s1, f01);
        f10 = F32_MADD(wasm_f32x4_convert_i32x4(i10), s0, f10);
        f11 = F32_MADD(wasm_f32x4_convert_i32x4(i11), s1, f11);
        f20 = F32_MADD(wasm_f32x4_convert_i32x4(i20), s0, f20);
        f21 = F32_MADD(wasm_f32x4_convert_i32x4(i21), s1, f21);
        f30 = F32_MADD(wasm_f32x4_convert_i32x4(i30), s0, f30);
        f31 = F32_MADD(wasm_f32x4_convert_i32x4(i31), s1, f31);
    }
    v128_t s;
    s = wasm_f32x4_splat(sx[0]);
    store_row(y, wasm_f32x4_mul(f00, s), wasm_f32x4_mul(f01, s), bias, cols, act);
    if (rows > 1) {
        s = wasm_f32x4_splat(sx[1]);
        store_row(y + ldy, wasm_f32x4_mul(f10, s), wasm_f32x4_mul(f11, s), bias, cols, act);
    }
    if (rows > 2) {
        s = wasm_f32x4_splat(sx[2]);
        store_row(y + 2 * (size_t)ldy, wasm_f32x4_mul(f20, s), wasm_f32x4_mul(f21, s), bias, cols, act);
    }
    if (rows > 3) {
        s = wasm_f32x4_splat(sx[3]);
        store_row(y + 3 * (size_t)ldy, wasm_f32x4_mul(f30, s), wasm_f32x4_mul(f31, s), bias, cols, act);
    }
}

/* round(v) as int32 for |v| < 2^22: adding 1.5 * 2^23 leaves the integer,
 * rounded to nearest even as f32x4.nearest does, in the low mantissa bits.
 * Two cheap operations instead of nearest + trunc_sat (V8 guards the
 * latter against NaN and overflow with several instructions). */
INLINE v128_t round_small(v128_t v) {
    return wasm_i32x4_sub(wasm_f32x4_add(v, wasm_f32x4_splat(12582912.0f)), wasm_i32x4_splat(0x4B400000));
}

/* max |x[i]| over n values; four independent pmax chains (one chain waits
 * on pmax's latency for every vector). */
INLINE float absmax(const float *x, int32_t n) {
    v128_t m0 = wasm_f32x4_splat(0), m1 = m0, m2 = m0, m3 = m0;
    int32_t i = 0;
    for (; i + 16 <= n; i += 16) {
        m0 = wasm_f32x4_pmax(m0, wasm_f32x4_abs(wasm_v128_load(x + i)));
        m1 = wasm_f32x4_pmax(m1, wasm_f32x4_abs(wasm_v128_load(x + i + 4)));
        m2 = wasm_f32x4_pmax(m2, wasm_f32x4_abs(wasm_v128_load(x + i + 8)));
        m3 = wasm_f32x4_pmax(m3, wasm_f32x4_abs(wasm_v128_load(x + i + 12)));
    }
    for (; i + 4 <= n; i += 4) m0 = wasm_f32x4_pmax(m0, wasm_f32x4_abs(wasm_v128_load(x + i)));
    float amax = hmax(wasm_f32x4_pmax(wasm_f32x4_pmax(m0, m1), wasm_f32x4_pmax(m2, m3)));
    for (; i < n; i++) amax = fabsf(x[i]) > amax ? fabsf(x[i]) : amax;
    return amax;
}

/* q[i] = 4 int16 pairs of row i -> dst[4 pairs][4 rows] (one i32 per row and pair). */
INLINE void store_pairs(int32_t *dst, v128_t q[4]) {
    transpose4(&q[0], &q[1], &q[2], &q[3]);
    wasm_v128_store(dst, q[0]);
    wasm_v128_store(dst + 4, q[1]);
    wasm_v128_store(dst + 8, q[2]);
    wasm_v128_store(dst + 12, q[3]);
}

/* Quantize rows of x (T rows of K values, stride ldx) to integers with
 * scale max|row| / qmax (qmax <= 32767) into xq[T4/4][Kp/2][4] (row groups
 * of 4 interleaved by pairs, as mk_q8 reads them; rows past T and values
 * past K are zero). sx[t] = row t's scale. Kp % 8 == 0, K <= Kp. */
static void quantize_rows_ld(int32_t *xq, float *sx, const float *x, int32_t ldx, int32_t T, int32_t K, int32_t Kp,
                             float qmax) {
    for (int32_t t = 0; t < T; t += 4, xq += (size_t)2 * Kp) {
        const float *r[4];
        v128_t inv[4];
        for (int i = 0; i < 4; i++) {
            r[i] = t + i < T ? x + (size_t)(t + i) * ldx : NULL;
            float amax = 0.0f;
            if (r[i]) amax = absmax(r[i], K);
            if (i + t < T) sx[t + i] = amax / qmax;
            inv[i] = wasm_f32x4_splat(amax > 0 ? qmax / amax : 0.0f);
        }
        int32_t k = 0;
        if (t + 4 <= T) /* four rows, whole 8-value steps: no checks */
            for (; k + 8 <= K; k += 8) {
                v128_t q[4];
                for (int i = 0; i < 4; i++)
                    q[i] = wasm_i16x8_narrow_i32x4(round_small(wasm_f32x4_mul(wasm_v128_load(r[i] + k), inv[i])),
                                                   round_small(wasm_f32x4_mul(wasm_v128_load(r[i] + k + 4), inv[i])));
                store_pairs(xq + (size_t)(k / 2) * 4, q);
            }
        for (; k < Kp; k += 8) { /* 4 pairs of each row -> 4 x (4 rows' pair) */
            v128_t q[4];
            for (int i = 0; i < 4; i++) {
                if (!r[i] || k >= K) {
                    q[i] = wasm_i32x4_splat(0);
                    continue;
                }
                const float *src = r[i] + k;
                float tail[8];
                if (k + 8 > K) { /* the row's last values, zero-padded */
                    for (int e = 0; e < 8; e++) tail[e] = k + e < K ? src[e] : 0.0f;
                    src = tail;
                }
                v128_t a = round_small(wasm_f32x4_mul(wasm_v128_load(src), inv[i]));
                v128_t b = round_small(wasm_f32x4_mul(wasm_v128_load(src + 4), inv[i]));
                q[i] = wasm_i16x8_narrow_i32x4(a, b);
            }
            store_pairs(xq + (size_t)(k / 2) * 4, q);
        }
    }
}

/* Activations of a projection: contiguous rows, 15-bit (scale max / 16383,
 * ~3e-5 relative, far below the weight quantization error). K % 8 == 0. */
static void quantize_rows(int32_t *xq, float *sx, const float *x, int32_t T, int32_t K) {
    quantize_rows_ld(xq, sx, x, K, T, K, K, QX_MAX);
}

/* One panel of 8 output columns (pw, ps as mk_q8 takes them) for every
 * group of 4 rows; i8 as in mk_q8, a constant at each call. */
INLINE void q8_panel(float *yp, int32_t ldy, const int32_t *xq, const float *sx, int32_t T, const void *pw,
                     const float *ps, int32_t K, int32_t gk, const float *pb, int cols, int32_t act, int i8) {
    if (act < 0) /* as in matmul_f32_packed */
        for (int32_t t = 0; t < T; t += 4)
            mk_q8(yp + (size_t)t * ldy, ldy, xq + (size_t)t * K / 2, sx + t, pw, ps, K, gk, pb, T - t < 4 ? T - t : 4,
                  cols, -1, i8);
    else
        for (int32_t t = 0; t < T; t += 4)
            mk_q8(yp + (size_t)t * ldy, ldy, xq + (size_t)t * K / 2, sx + t, pw, ps, K, gk, pb, T - t < 4 ? T - t : 4,
                  cols, act, i8);
}

/* q8 panels in the bundle bytes are widened as they are loaded, once for
 * every group of 4 rows; from WIDEN_ROWS rows on, each panel is widened
 * once into int16 (wide [K/2][8][2], the layout of blk_weight_pack's
 * panels) and the rows run on that: the widening's cost is shared by all
 * rows instead of paid by each group of 4; where the weight has shared
 * scales (w->gs), onto those (regroup_panel). all-MiniLM q8, A/B in one
 * process: 1.044x at 128 tokens, 1.033x at 512; from 8 rows on it would
 * cost 8 % at 16 tokens, where 4 groups of rows share a panel's widening. */
#define WIDEN_ROWS 32

/* One int8 panel pq [K/2][8][2] (16 bytes a pair of k) -> int16 wide. */
INLINE void widen_panel(int16_t *wide, const int8_t *pq, int32_t K) {
    for (int32_t i = 0; i < K / 2; i++) {
        const v128_t b8 = wasm_v128_load(pq + (size_t)16 * i);
        wasm_v128_store(wide + (size_t)16 * i, wasm_i16x8_extend_low_i8x16(b8));
        wasm_v128_store(wide + (size_t)16 * i + 8, wasm_i16x8_extend_high_i8x16(b8));
    }
}

/* One int8 panel pq [K/2][8][2] (block scales ps [K/32][8]) -> int16 wide
 * on the shared scales gs [K/32/qg][8] (kernels_pack.c "q8 panels on shared
 * scales"): w' = q15mulr(q * 256, m) = round(q * m / 128), half up, with
 * m = round(s_b * (128 / s')) in f32. */
static void regroup_panel(int16_t *wide, const int8_t *pq, const float *ps, const float *gs, int32_t K, int32_t qg) {
    const v128_t zero = wasm_f32x4_splat(0), c128 = wasm_f32x4_splat(128.0f), lo16 = wasm_i32x4_splat(0xffff);
    const int32_t nb = K / BL_QBLOCK;
    for (int32_t b0 = 0; b0 < nb; b0 += qg, gs += BL_PANEL) {
        v128_t inv[2]; /* 128 / s' of the group's 8 columns (0 where s' = 0) */
        for (int h = 0; h < 2; h++) {
            const v128_t gv = wasm_v128_load(gs + 4 * h);
            inv[h] = wasm_v128_and(wasm_f32x4_div(c128, gv), wasm_f32x4_gt(gv, zero));
        }
        for (int32_t b = b0; b < b0 + qg && b < nb; b++, ps += BL_PANEL) {
            v128_t m[2];
            for (int h = 0; h < 2; h++) { /* columns 4h .. 4h+3: m of each in both int16 halves of its lane */
                const v128_t mi = round_small(wasm_f32x4_mul(wasm_v128_load(ps + 4 * h), inv[h]));
                m[h] = wasm_v128_or(wasm_v128_and(mi, lo16), wasm_i32x4_shl(mi, 16));
            }
            for (int32_t j = 0; j < BL_QBLOCK / 2; j++, pq += 2 * BL_PANEL, wide += 2 * BL_PANEL) {
                const v128_t b8 = wasm_v128_load(pq);
                wasm_v128_store(wide, wasm_i16x8_q15mulr_sat(wasm_i16x8_shl(wasm_i16x8_extend_low_i8x16(b8), 8), m[0]));
                wasm_v128_store(wide + 8, wasm_i16x8_q15mulr_sat(wasm_i16x8_shl(wasm_i16x8_extend_high_i8x16(b8), 8), m[1]));
            }
        }
    }
}

/* y[T][N] = quantized rows (xq, sx from quantize_rows) times w's q8 panels;
 * wide: room for one widened panel (K * 8 int16), or NULL (widen as loaded).
 * With shared scales (w->gs) and wide, each panel is widened once onto them
 * (regroup_panel) and its sums cross qg blocks; without, on the bundle's
 * 32-block scales. */
static void matmul_q8_quantized(float *y, int32_t ldy, const int32_t *xq, const float *sx, int32_t T,
                                const blk_weight *w, const float *bias, int32_t act, int16_t *wide) {
    /* q8 panels in the bundle bytes (w->pq8) keep the bundle's scale per 32-block */
    const int regroup = w->pq8 && w->gs && wide;
    const int32_t N = w->n, K = w->k, gk = w->pq8 && !regroup ? BL_QBLOCK : w->qg * BL_QBLOCK, nb = (K + gk - 1) / gk;
#if !defined(__wasm_simd128__)
    if (!w->pq8) { /* the x86 micro-kernels read int16 panels only */
        switch (blk_x86_level()) {
        case BLK_X86_AVX512_VNNI: blk_matmul_q8_quantized_avx512_vnni(y, ldy, xq, sx, T, w, bias, act); return;
        case BLK_X86_AVX512: blk_matmul_q8_quantized_avx512(y, ldy, xq, sx, T, w, bias, act); return;
        case BLK_X86_AVX2: blk_matmul_q8_quantized_avx2(y, ldy, xq, sx, T, w, bias, act); return;
        default: break;
        }
    }
#endif
    for (int32_t p = 0; p * BL_PANEL < N; p++) {
        const size_t at = (size_t)p * K * BL_PANEL, sat = (size_t)p * nb * BL_PANEL;
        const float *pb = bias ? bias + p * BL_PANEL : NULL;
        int cols = N - p * BL_PANEL < BL_PANEL ? N - p * BL_PANEL : BL_PANEL;
        float *yp = y + p * BL_PANEL;
        if (regroup) {
            regroup_panel(wide, w->pq8 + at, w->ps8 + (size_t)p * (K / BL_QBLOCK) * BL_PANEL, w->gs + sat, K, w->qg);
            q8_panel(yp, ldy, xq, sx, T, wide, w->gs + sat, K, gk, pb, cols, act, 0);
        } else if (w->pq8 && wide && T >= WIDEN_ROWS) {
            widen_panel(wide, w->pq8 + at, K);
            q8_panel(yp, ldy, xq, sx, T, wide, w->ps8 + sat, K, gk, pb, cols, act, 0);
        } else if (w->pq8) q8_panel(yp, ldy, xq, sx, T, w->pq8 + at, w->ps8 + sat, K, gk, pb, cols, act, 1);
        else q8_panel(yp, ldy, xq, sx, T, w->pq + at, w->ps + sat, K, gk, pb, cols, act, 0);
    }
}

void blk_matmul_act(float *y, const float *x, int32_t T, const blk_weight *w, const float *bias, int32_t act,
                   float *scratch) {
    blk_matmul_shared(1, &y, x, T, &w, &bias, act, scratch);
}

void blk_matmul_shared(int n, float *const *y, const float *x, int32_t T, const blk_weight *const *w,
                      const float *const *bias, int32_t act, float *scratch) {
    const int32_t K = w[0]->k, T4 = (T + 3) / 4 * 4;
    int same = 1; /* all weights in the same SIMD layout */
    /* integer weights (int16 packs or q8 panels) all take the same quantized rows */
    for (int i = 1; i < n; i++)
        same &= w[i]->k == K && !w[i]->pf == !w[0]->pf && !(w[i]->pq || w[i]->pq8) == !(w[0]->pq || w[0]->pq8);
    if (same && w[0]->pf) { /* rows packed once: scratch[T4][K], then block sums */
        pack_rows_f32(scratch, x, K, T, K);
        for (int i = 0; i < n; i++)
            matmul_f32_packed(y[i], w[i]->n, scratch, T, w[i]->pf, w[i]->n, K, bias[i], act,
                              scratch + (size_t)T4 * K);
    } else if (same && (w[0]->pq || w[0]->pq8)) { /* rows quantized once: int16 pairs [T4/4][K/2][4], scales [T4] */
        int32_t *xq = (int32_t *)scratch;
        float *sx = scratch + (size_t)T4 * K / 2;
        /* then one widened q8 panel, K * 8 int16 = 4K floats (within
         * blk_matmul_scratch_floats(T, K)), from WIDEN_ROWS rows on */
        int16_t *wide = T >= WIDEN_ROWS ? (int16_t *)(sx + T4) : NULL;
        quantize_rows(xq, sx, x, T, K);
        for (int i = 0; i < n; i++) matmul_q8_quantized(y[i], w[i]->n, xq, sx, T, w[i], bias[i], act, wide);
    } else {
        for (int i = 0; i < n; i++) {
            blk_matmul_scalar(y[i], x, T, w[i], bias[i], scratch);
            if (act >= 0) blk_activate(y[i], (size_t)T * w[i]->n, act);
        }
    }
}

void blk_matmul(float *y, const float *x, int32_t T, const blk_weight *w, const float *bias, float *scratch) {
    blk_matmul_act(y, x, T, w, bias, -1, scratch);
}

/* Panel p of B (columns p*8 .. p*8+7, b[n*bn + k*bk]) as dst[Kp][8]:
 * zero past column N and past k = K. */
static void pack_panel_f32(float *dst, const float *b, int32_t bn, int32_t bk, int32_t N, int32_t p, int32_t K,
                           int32_t Kp) {
    const float *src = b + (size_t)p * BL_PANEL * bn;
    int32_t k = 0;
    if ((p + 1) * BL_PANEL <= N) {
        if (bn == 1) /* the panel's 8 values for one k are contiguous (V_h) */
            for (; k < K; k++) {
                wasm_v128_store(dst + (size_t)k * BL_PANEL, wasm_v128_load(src + (size_t)k * bk));
                wasm_v128_store(dst + (size_t)k * BL_PANEL + 4, wasm_v128_load(src + (size_t)k * bk + 4));
            }
        else if (bk == 1) /* 8 rows of B contiguous in k (K_h): 4x4 transposes */
            for (; k + 4 <= K; k += 4)
                for (int c = 0; c < BL_PANEL; c += 4) {
                    v128_t r0 = wasm_v128_load(src + (size_t)c * bn + k),
                           r1 = wasm_v128_load(src + (size_t)(c + 1) * bn + k),
                           r2 = wasm_v128_load(src + (size_t)(c + 2) * bn + k),
                           r3 = wasm_v128_load(src + (size_t)(c + 3) * bn + k);
                    transpose4(&r0, &r1, &r2, &r3);
                    wasm_v128_store(dst + (size_t)k * BL_PANEL + c, r0);
                    wasm_v128_store(dst + (size_t)(k + 1) * BL_PANEL + c, r1);
                    wasm_v128_store(dst + (size_t)(k + 2) * BL_PANEL + c, r2);
                    wasm_v128_store(dst + (size_t)(k + 3) * BL_PANEL + c, r3);
                }
    }
    for (; k < Kp; k++) /* general case, leftovers and padding */
        for (int c = 0; c < BL_PANEL; c++) {
            int32_t n = p * BL_PANEL + c;
            dst[(size_t)k * BL_PANEL + c] = n < N && k < K ? b[(size_t)n * bn + (size_t)k * bk] : 0.0f;
        }
}

void blk_matmul_nt(float *y, int32_t ldy, const float *x, int32_t ldx, int32_t T, const float *b, int32_t bn,
                  int32_t bk, int32_t N, int32_t K, float *scratch) {
    /* pack B into panels scratch[p][k][8] (zero-padded), then x in chunks
     * of NT_ROWS rows behind them, then the f32 kernel */
    const int32_t np = (N + BL_PANEL - 1) / BL_PANEL;
    for (int32_t p = 0; p < np; p++) pack_panel_f32(scratch + (size_t)p * K * BL_PANEL, b, bn, bk, N, p, K, K);
    float *xp = scratch + (size_t)np * K * BL_PANEL;
    for (int32_t t = 0; t < T; t += NT_ROWS) {
        int32_t rows = T - t < NT_ROWS ? T - t : NT_ROWS;
        pack_rows_f32(xp, x + (size_t)t * ldx, ldx, rows, K);
        matmul_f32_packed(y + (size_t)t * ldy, ldy, xp, rows, scratch, N, K, NULL, -1, xp + (size_t)NT_ROWS * K);
    }
}

/* blk_matmul_nt on integers: x rows and B's columns quantized to 13 bits
 * (|q| <= NTQ_MAX) through the q8 kernel. x: one scale per row; B: one per
 * column and 32-block of k (the kernel's block scales). A block's integer
 * sum is at most 32 * 8191^2 < 2^31, so it cannot overflow. K is
 * zero-padded to Kp, a multiple of 32. */
#define NTQ_MAX 8191.0f
void blk_matmul_nt_q(float *y, int32_t ldy, const float *x, int32_t ldx, int32_t T, const float *b, int32_t bn,
                     int32_t bk, int32_t N, int32_t K, float *scratch) {
    const int32_t np = (N + BL_PANEL - 1) / BL_PANEL, Kp = (K + BL_QBLOCK - 1) / BL_QBLOCK * BL_QBLOCK,
                  nb = Kp / BL_QBLOCK;
    /* scratch: pq[np][Kp/2][8][2] int16, ps[np][nb][8], one f32 panel [Kp][8],
     * then x quantized in chunks of NT_ROWS rows: xq[NT_ROWS/4][Kp/2][4], sx[NT_ROWS] */
    int16_t *pq = (int16_t *)scratch;
    float *ps = scratch + (size_t)np * Kp * BL_PANEL / 2, *pf = ps + (size_t)np * nb * BL_PANEL;
    int32_t *xq = (int32_t *)(pf + (size_t)Kp * BL_PANEL);
    float *sx = (float *)xq + (size_t)NT_ROWS * Kp / 2;
    const v128_t qmax = wasm_f32x4_splat(NTQ_MAX), zero = wasm_f32x4_splat(0), lo16 = wasm_i32x4_splat(0xffff);
    for (int32_t p = 0; p < np; p++) {
        pack_panel_f32(pf, b, bn, bk, N, p, K, Kp);
        for (int32_t blk = 0; blk < nb; blk++) {
            const float *v = pf + (size_t)blk * BL_QBLOCK * BL_PANEL;
            v128_t m0 = zero, m1 = zero;
            for (int32_t k = 0; k < BL_QBLOCK; k++) {
                m0 = wasm_f32x4_pmax(m0, wasm_f32x4_abs(wasm_v128_load(v + k * BL_PANEL)));
                m1 = wasm_f32x4_pmax(m1, wasm_f32x4_abs(wasm_v128_load(v + k * BL_PANEL + 4)));
            }
            float *sc = ps + ((size_t)p * nb + blk) * BL_PANEL;
            wasm_v128_store(sc, wasm_f32x4_div(m0, qmax));
            wasm_v128_store(sc + 4, wasm_f32x4_div(m1, qmax));
            /* 1 / scale, 0 for an all-zero column block */
            v128_t i0 = wasm_v128_and(wasm_f32x4_div(qmax, m0), wasm_f32x4_gt(m0, zero));
            v128_t i1 = wasm_v128_and(wasm_f32x4_div(qmax, m1), wasm_f32x4_gt(m1, zero));
            int16_t *dq = pq + ((size_t)p * Kp + (size_t)blk * BL_QBLOCK) * BL_PANEL;
            for (int32_t k = 0; k < BL_QBLOCK; k += 2, dq += 2 * BL_PANEL) {
                const float *r = v + k * BL_PANEL;
#define NTQ(ptr, inv) round_small(wasm_f32x4_mul(wasm_v128_load(ptr), inv))
                /* int16 pairs (k, k+1) of columns 0-3, then 4-7 */
                wasm_v128_store(dq, wasm_v128_or(wasm_v128_and(NTQ(r, i0), lo16), wasm_i32x4_shl(NTQ(r + BL_PANEL, i0), 16)));
                wasm_v128_store(dq + 8, wasm_v128_or(wasm_v128_and(NTQ(r + 4, i1), lo16),
                                                     wasm_i32x4_shl(NTQ(r + BL_PANEL + 4, i1), 16)));
#undef NTQ
            }
        }
    }
    const blk_weight w = {.dtype = BL_Q8, .n = N, .k = Kp, .pq = pq, .ps = ps, .qg = 1};
    for (int32_t t = 0; t < T; t += NT_ROWS) {
        int32_t rows = T - t < NT_ROWS ? T - t : NT_ROWS;
        quantize_rows_ld(xq, sx, x + (size_t)t * ldx, ldx, rows, K, Kp, NTQ_MAX);
        matmul_q8_quantized(y + (size_t)t * ldy, ldy, xq, sx, rows, &w, NULL, -1, NULL);
    }
}

void blk_layernorm(float *x, const float *res, int32_t T, int32_t n, const float *g, const float *b, float eps) {
#if !defined(__wasm_simd128__)
    if (blk_x86_level() >= BLK_X86_AVX512) {
        blk_layernorm_avx512(x, res, T, n, g, b, eps);
        return;
    }
#endif
    for (int32_t t = 0; t < T; t++) {
        float *r = x + (size_t)t * n;
        const float *rr = res ? res + (size_t)t * n : NULL;
        /* two sums, each in two independent chains (one chain waits on
         * f32x4.add's latency for every vector) */
        v128_t s0 = wasm_f32x4_splat(0), s1 = s0;
        int32_t i = 0;
        if (rr)
            for (; i + 8 <= n; i += 8) {
                v128_t v0 = wasm_f32x4_add(wasm_v128_load(r + i), wasm_v128_load(rr + i));
                v128_t v1 = wasm_f32x4_add(wasm_v128_load(r + i + 4), wasm_v128_load(rr + i + 4));
                wasm_v128_store(r + i, v0);
                wasm_v128_store(r + i + 4, v1);
                s0 = wasm_f32x4_add(s0, v0);
                s1 = wasm_f32x4_add(s1, v1);
            }
        else
            for (; i + 8 <= n; i += 8) {
                s0 = wasm_f32x4_add(s0, wasm_v128_load(r + i));
                s1 = wasm_f32x4_add(s1, wasm_v128_load(r + i + 4));
            }
        float sum = hsum(wasm_f32x4_add(s0, s1));
        for (; i < n; i++) {
            if (rr) r[i] += rr[i];
            sum += r[i];
        }
        float mean = sum / (float)n;
        v128_t vm = wasm_f32x4_splat(mean);
        s0 = s1 = wasm_f32x4_splat(0);
        for (i = 0; i + 8 <= n; i += 8) {
            v128_t d0 = wasm_f32x4_sub(wasm_v128_load(r + i), vm), d1 = wasm_f32x4_sub(wasm_v128_load(r + i + 4), vm);
            s0 = wasm_f32x4_add(s0, wasm_f32x4_mul(d0, d0));
            s1 = wasm_f32x4_add(s1, wasm_f32x4_mul(d1, d1));
        }
        float var = hsum(wasm_f32x4_add(s0, s1));
        for (; i < n; i++) var += (r[i] - mean) * (r[i] - mean);
        var /= (float)n;
        float inv = 1.0f / sqrtf(var + eps);
        v128_t vi = wasm_f32x4_splat(inv);
        for (i = 0; i + 4 <= n; i += 4) {
            v128_t d = wasm_f32x4_mul(wasm_f32x4_sub(wasm_v128_load(r + i), vm), vi);
            wasm_v128_store(r + i, wasm_f32x4_add(wasm_f32x4_mul(d, wasm_v128_load(g + i)), wasm_v128_load(b + i)));
        }
        for (; i < n; i++) r[i] = (r[i] - mean) * inv * g[i] + b[i];
    }
}

/* exp(scale * (r[i] - max)) over one row with the exp variant `ex`; returns the sum. */
#define SOFTMAX_EXP_ROW(ex)                                                           \
    for (i = 0; i + 4 <= n; i += 4) {                                                 \
        v128_t e = ex(wasm_f32x4_mul(wasm_f32x4_sub(wasm_v128_load(r + i), vm), vs)); \
        wasm_v128_store(r + i, e);                                                    \
        s = wasm_f32x4_add(s, e);                                                     \
    }

void blk_softmax(float *x, int32_t T, int32_t n, float scale) {
#if !defined(__wasm_simd128__)
    if (blk_x86_level() >= BLK_X86_AVX512) {
        blk_softmax_avx512(x, T, n, scale);
        return;
    }
#endif
    for (int32_t t = 0; t < T; t++) {
        float *r = x + (size_t)t * n;
        v128_t m0 = wasm_f32x4_splat(-INFINITY), m1 = m0, m2 = m0, m3 = m0; /* four chains of pmax */
        int32_t i = 0;
        for (; i + 16 <= n; i += 16) {
            m0 = wasm_f32x4_pmax(m0, wasm_v128_load(r + i));
            m1 = wasm_f32x4_pmax(m1, wasm_v128_load(r + i + 4));
            m2 = wasm_f32x4_pmax(m2, wasm_v128_load(r + i + 8));
            m3 = wasm_f32x4_pmax(m3, wasm_v128_load(r + i + 12));
        }
        for (; i + 4 <= n; i += 4) m0 = wasm_f32x4_pmax(m0, wasm_v128_load(r + i));
        float mx = hmax(wasm_f32x4_pmax(wasm_f32x4_pmax(m0, m1), wasm_f32x4_pmax(m2, m3)));
        for (; i < n; i++) mx = r[i] > mx ? r[i] : mx;
        v128_t vm = wasm_f32x4_splat(mx), vs = wasm_f32x4_splat(scale), s = wasm_f32x4_splat(0);
        if (scale >= 0.0f) { /* arguments are <= 0 */
            SOFTMAX_EXP_ROW(v_exp_nonpos)
        } else {
            SOFTMAX_EXP_ROW(v_exp)
        }
        float sum = hsum(s);
        for (; i < n; i++) {
            float t4[4] = {(r[i] - mx) * scale, 0, 0, 0};
            wasm_v128_store(t4, v_exp(wasm_v128_load(t4)));
            r[i] = t4[0];
            sum += r[i];
        }
        float inv = 1.0f / sum;
        v128_t vi = wasm_f32x4_splat(inv);
        for (i = 0; i + 4 <= n; i += 4) wasm_v128_store(r + i, wasm_f32x4_mul(wasm_v128_load(r + i), vi));
        for (; i < n; i++) r[i] *= inv;
    }
}
#undef SOFTMAX_EXP_ROW

void blk_activate(float *x, size_t n, int32_t act) {
    size_t i = 0;
    for (; i + 4 <= n; i += 4) wasm_v128_store(x + i, v_act(wasm_v128_load(x + i), act));
    for (; i < n; i++) {
        float t[4] = {x[i], 0, 0, 0};
        wasm_v128_store(t, v_act(wasm_v128_load(t), act));
        x[i] = t[0];
    }
}

/* blk_weight_t16 (kernels.h): W^T of a q8 weight in int16 panels, 32 rows
 * of W by 32 of its columns at a time (one q8 scale block: each row's 32
 * bytes in two loads, widened to floats and scaled), then each 32 x 8 tile's
 * sums, maxima, scales and roundings on two vectors a row, in
 * blk_weight_t16_scalar's order and with its divisions (the same bits).
 * Panels (pq8) come through the scalar tile reader. */
static void t16_finish(const v128_t t[BL_QBLOCK][2], int16_t *d, float *sc) {
    const v128_t C = wasm_f32x4_splat(12582912.0f), lo16 = wasm_i32x4_splat(0xffff), zero = wasm_f32x4_splat(0.0f);
    v128_t L[2] = {zero, zero}, A[2] = {zero, zero}, iv[2];
    for (int r = 0; r < BL_QBLOCK; r++)
        for (int h = 0; h < 2; h++) {
            const v128_t a = wasm_f32x4_abs(t[r][h]);
            L[h] = wasm_f32x4_add(L[h], a), A[h] = wasm_f32x4_pmax(A[h], a); /* a > m ? a : m */
        }
    for (int h = 0; h < 2; h++) { /* blk_t16_scales on 4 lanes */
        v128_t s = wasm_f32x4_pmax(wasm_f32x4_div(L[h], wasm_f32x4_splat((float)(BLK_QG_L1 - 0.5 * BL_QBLOCK))),
                                   wasm_f32x4_div(A[h], wasm_f32x4_splat(32767.0f)));
        s = wasm_v128_and(s, wasm_f32x4_gt(A[h], zero));                                     /* zeros: 0 */
        s = wasm_v128_bitselect(s, wasm_f32x4_splat(NAN), wasm_f32x4_lt(wasm_f32x4_abs(L[h]), wasm_f32x4_splat(INFINITY)));
        wasm_v128_store(sc + 4 * h, s);
        iv[h] = wasm_v128_and(wasm_f32x4_div(wasm_f32x4_splat(1.0f), s), wasm_f32x4_gt(s, zero));
    }
    for (int r = 0; r < BL_QBLOCK; r += 2) /* rows r, r + 1: (low, high) 16 bits of one int32 lane, */
        for (int h = 0; h < 2; h++) {      /* the low 16 bits of w / s + 1.5 * 2^23 being round(w / s) */
            const v128_t y0 = wasm_f32x4_add(wasm_f32x4_mul(t[r][h], iv[h]), C);
            const v128_t y1 = wasm_f32x4_add(wasm_f32x4_mul(t[r + 1][h], iv[h]), C);
            wasm_v128_store(d + (size_t)r * BL_PANEL + 8 * h, wasm_v128_or(wasm_v128_and(y0, lo16), wasm_i32x4_shl(y1, 16)));
        }
}

void blk_weight_t16(const blk_weight *w, int16_t *pq, float *ps) {
    const int32_t n = w->n, k = w->k, nb = n / BL_QBLOCK, kb = k / BL_QBLOCK;
    enum { NP = BL_QBLOCK / BL_PANEL }; /* panels per scale block */
    for (int32_t b = 0; b < nb; b++)
        for (int32_t cb = 0; cb < kb; cb++) {
            v128_t t[NP][BL_QBLOCK][2]; /* W[32b + r][32cb + 8j + 0..7] */
            if (w->pq8)
                for (int j = 0; j < NP; j++) {
                    float f[BL_QBLOCK][BL_PANEL];
                    blk_t16_tile(w, b, cb * NP + j, f);
                    for (int r = 0; r < BL_QBLOCK; r++) t[j][r][0] = wasm_v128_load(f[r]), t[j][r][1] = wasm_v128_load(f[r] + 4);
                }
            else
                for (int r = 0; r < BL_QBLOCK; r++) {
                    const size_t R = (size_t)b * BL_QBLOCK + r;
                    const uint8_t *q = w->data + R * k + (size_t)cb * BL_QBLOCK;
                    const v128_t s = wasm_v128_load32_splat(w->data + (size_t)n * k + (R * kb + cb) * 4);
                    const v128_t v0 = wasm_v128_load(q), v1 = wasm_v128_load(q + 16);
                    const v128_t e[4] = {wasm_i16x8_extend_low_i8x16(v0), wasm_i16x8_extend_high_i8x16(v0),
                                         wasm_i16x8_extend_low_i8x16(v1), wasm_i16x8_extend_high_i8x16(v1)};
                    for (int j = 0; j < NP; j++) { /* panel j: bytes 8j .. 8j + 7 */
                        t[j][r][0] = wasm_f32x4_mul(s, wasm_f32x4_convert_i32x4(wasm_i32x4_extend_low_i16x8(e[j])));
                        t[j][r][1] = wasm_f32x4_mul(s, wasm_f32x4_convert_i32x4(wasm_i32x4_extend_high_i16x8(e[j])));
                    }
                }
            for (int j = 0; j < NP; j++) {
                const int32_t p = cb * NP + j;
                t16_finish(t[j], pq + ((size_t)p * n + (size_t)b * BL_QBLOCK) * BL_PANEL, ps + ((size_t)p * nb + b) * BL_PANEL);
            }
        }
}
#endif /* BLK_SIMD */
