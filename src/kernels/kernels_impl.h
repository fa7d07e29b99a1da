/* kernels_impl.h — what the kernel files share (src/kernels*.c; not for
 * the encoder, which sees kernels.h only): constants, the x86-64 run-time
 * entry points, and in SIMD builds the inline vector helpers written with
 * wasm SIMD128 intrinsics (src/kernels/simd_x86.h maps them onto SSE4.1).
 */
#ifndef BL_KERNELS_IMPL_H
#define BL_KERNELS_IMPL_H

#include "kernels.h"
#include "bertlens.h"

#include <stdint.h>

/* Activations of projections are quantized per row to 15 bits: |q| <= QX_MAX. */
#define QX_MAX 16383.0f
/* blk_matmul_nt packs x in chunks of this many rows (a multiple of 4). */
#define NT_ROWS 64
/* f32 micro-kernels sum at most this many products in registers before
 * adding them to a block sum in memory (when K > 2 * F32_KBLOCK). */
#define F32_KBLOCK 256

/* src/kernels/kernels_weight.c: the scale of row r, block b (of 32) of a q8/q4/QN
 * weight, and the integer of element (r, i) of a QN weight. */
float blk_qscale(const blk_weight *w, int32_t r, int32_t b);
int blk_qn_value(const blk_weight *w, int32_t r, int32_t i);

/* src/kernels/kernels_ref.c: blk_weight_t16's 32 x 8 tile of W (block b of
 * rows, panel p of columns) dequantized, and a tile's 8 scales and their
 * inverses from its column sums and maxima (shared by both versions). */
void blk_t16_tile(const blk_weight *w, int32_t b, int32_t p, float t[BL_QBLOCK][BL_PANEL]);
void blk_t16_scales(const float *L, const float *amax, float *sc, float *iv);

#if BLK_SIMD && !defined(__wasm_simd128__)
/* x86-64 kernel levels (src/kernels/kernels.c, blk_x86_level): what the CPU has,
 * capped by BERTLENS_SIMD. */
enum { BLK_X86_SSE41, BLK_X86_AVX2, BLK_X86_AVX512, BLK_X86_AVX512_VNNI };
int blk_x86_level(void);
/* src/kernels/kernels_x86.c (AVX2+FMA) and src/kernels/kernels_avx512.c (AVX-512 F/BW, the
 * _vnni form with vpdpwssd): the matmul drivers of src/kernels/kernels_simd128.c
 * (same arguments, same packed layouts). */
void blk_matmul_f32_packed_avx2(float *y, int32_t ldy, const float *xp, int32_t T, const float *pf, int32_t N,
                                int32_t K, const float *bias, int32_t act);
void blk_matmul_q8_quantized_avx2(float *y, int32_t ldy, const int32_t *xq, const float *sx, int32_t T,
                                  const blk_weight *w, const float *bias, int32_t act);
void blk_matmul_f32_packed_avx512(float *y, int32_t ldy, const float *xp, int32_t T, const float *pf, int32_t N,
                                  int32_t K, const float *bias, int32_t act);
void blk_matmul_q8_quantized_avx512(float *y, int32_t ldy, const int32_t *xq, const float *sx, int32_t T,
                                    const blk_weight *w, const float *bias, int32_t act);
void blk_matmul_q8_quantized_avx512_vnni(float *y, int32_t ldy, const int32_t *xq, const float *sx, int32_t T,
                                         const blk_weight *w, const float *bias, int32_t act);
/* src/kernels/kernels_avx512.c: blk_softmax and blk_layernorm on 16 lanes. */
void blk_softmax_avx512(float *x, int32_t T, int32_t n, float scale);
void blk_layernorm_avx512(float *x, const float *res, int32_t T, int32_t n, const float *g, const float *b,
                          float eps);
#endif

#if BLK_SIMD
#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#else
#include "simd_x86.h"
#include <immintrin.h>
#endif

#define INLINE static inline __attribute__((always_inline))

/* a * b + c: one f32x4.relaxed_madd in a relaxed-SIMD build (-mrelaxed-simd;
 * V8 runs it as a fused multiply-add where the CPU has FMA), else mul + add. */
#ifdef __wasm_relaxed_simd__
#define F32_MADD(a, b, c) wasm_f32x4_relaxed_madd((a), (b), (c))
#else
#define F32_MADD(a, b, c) wasm_f32x4_add((c), wasm_f32x4_mul((a), (b)))
#endif
#ifdef __clang__
#define NO_UNROLL _Pragma("clang loop unroll(disable)")
#else
#define NO_UNROLL _Pragma("GCC unroll 1")
#endif

/* exp(x) for x in [-87.3, 88.3] (clamped to it; the callers need x <= 0 or
 * only saturation above): 2^n * p(r), r = x - n ln2, |r| <= ln2/2,
 * p(r) = 1 + r + r^2 q(r), q of degree 4: relative-weighted least squares
 * fit of (exp(r) - 1 - r) / r^2 in double (numpy, reweighted towards
 * minimax); max relative error 1.2e-7 evaluated in f32, as the Taylor series
 * to r^7 it replaced, with 6 mul + 6 add instead of 9 + 7.
 * n is rounded with the 1.5 * 2^23 trick: t = x log2(e) + 1.5 * 2^23 holds
 * round(x log2 e) in its low mantissa bits, so 2^n is (bits(t) + 127) << 23
 * (the high bits shift out) and no float -> int conversion is needed.
 * Polynomials here use Estrin's scheme: these loops are bound by latency
 * (how many operations the out-of-order window holds), not operation count. */
INLINE v128_t v_exp_in_range(v128_t x) { /* x in [-87.3, 88.3] */
    const v128_t magic = wasm_f32x4_splat(12582912.0f); /* 1.5 * 2^23 */
    v128_t t = wasm_f32x4_add(wasm_f32x4_mul(x, wasm_f32x4_splat(1.44269504088896341f)), magic);
    v128_t n = wasm_f32x4_sub(t, magic);
    v128_t r = wasm_f32x4_sub(x, wasm_f32x4_mul(n, wasm_f32x4_splat(0.693359375f)));
    r = wasm_f32x4_sub(r, wasm_f32x4_mul(n, wasm_f32x4_splat(-2.12194440e-4f)));
    v128_t r2 = wasm_f32x4_mul(r, r), r4 = wasm_f32x4_mul(r2, r2);
    v128_t q01 = wasm_f32x4_add(wasm_f32x4_splat(0.49999967217445374f), wasm_f32x4_mul(r, wasm_f32x4_splat(0.16666479408740997f)));
    v128_t q23 = wasm_f32x4_add(wasm_f32x4_splat(0.04167356714606285f), wasm_f32x4_mul(r, wasm_f32x4_splat(0.008372685872018337f)));
    v128_t q = wasm_f32x4_add(wasm_f32x4_add(q01, wasm_f32x4_mul(q23, r2)),
                              wasm_f32x4_mul(wasm_f32x4_splat(0.0013571209274232388f), r4));
    v128_t p = wasm_f32x4_add(wasm_f32x4_add(wasm_f32x4_splat(1.0f), r), wasm_f32x4_mul(q, r2));
    v128_t e = wasm_i32x4_shl(wasm_i32x4_add(t, wasm_i32x4_splat(127)), 23);
    return wasm_f32x4_mul(p, e);
}

/* pmin/pmax: one instruction each (f32x4.min/max add NaN handling) */
INLINE v128_t v_exp(v128_t x) {
    return v_exp_in_range(wasm_f32x4_pmin(wasm_f32x4_pmax(x, wasm_f32x4_splat(-87.3f)), wasm_f32x4_splat(88.3f)));
}

/* exp(x) for x <= 0 (one clamp less on the dependency chain). */
INLINE v128_t v_exp_nonpos(v128_t x) { return v_exp_in_range(wasm_f32x4_pmax(x, wasm_f32x4_splat(-87.3f))); }

/* erf(x) = x * P(x^2) / Q(x^2) with x clamped to [-3.92, 3.92] (erf(3.92)
 * = 1 - 1.6e-8: 1.0f). Coefficients: tools/fit_erf.py (least squares in
 * double with Lawson reweighting); max abs error 4.4e-8 in double, 3.5e-7
 * evaluated in f32 (tests/kernels.test.mjs checks it against libm erff).
 * 29 operations, one of them a division, and no branch or select: about half
 * of the two piecewise polynomials it replaced (GELU over the feed-forward
 * width was ~5 % of a q8 forward pass; now ~3 %). P and Q by Estrin's
 * scheme, not Horner's: two more multiplies, half the dependency depth
 * (1.007x on a q8 forward at 128 tokens). */
static const float ERF_P[7] = {1.1283787488937378f,    0.20616109669208527f,     0.05140385776758194f,
                               0.003974792547523975f,  0.00014902249677106738f,  -1.9942413018725347e-06f,
                               1.9917166582672508e-08f};
static const float ERF_Q[5] = {1.0f, 0.5160343050956726f, 0.1175842136144638f, 0.014893312938511372f,
                               0.0010245470330119133f};

INLINE v128_t v_erf(v128_t x) {
    x = wasm_f32x4_pmin(wasm_f32x4_pmax(x, wasm_f32x4_splat(-3.92f)), wasm_f32x4_splat(3.92f));
    v128_t t = wasm_f32x4_mul(x, x);
#define C(c, i) wasm_f32x4_splat(c[i])
#define L(c, i) wasm_f32x4_add(C(c, i), wasm_f32x4_mul(C(c, i + 1), t)) /* c[i] + c[i+1] t */
    v128_t t2 = wasm_f32x4_mul(t, t), t4 = wasm_f32x4_mul(t2, t2);
    v128_t p = wasm_f32x4_add(wasm_f32x4_add(L(ERF_P, 0), wasm_f32x4_mul(t2, L(ERF_P, 2))),
                              wasm_f32x4_mul(t4, wasm_f32x4_add(L(ERF_P, 4), wasm_f32x4_mul(C(ERF_P, 6), t2))));
    v128_t q = wasm_f32x4_add(wasm_f32x4_add(L(ERF_Q, 0), wasm_f32x4_mul(t2, L(ERF_Q, 2))),
                              wasm_f32x4_mul(t4, C(ERF_Q, 4)));
#undef L
#undef C
    v128_t r = wasm_f32x4_div(wasm_f32x4_mul(x, p), q); /* within 1.2e-7 of [-1, 1] at the clamp */
    return wasm_f32x4_pmin(wasm_f32x4_pmax(r, wasm_f32x4_splat(-1.0f)), wasm_f32x4_splat(1.0f));
}

INLINE float hsum(v128_t v) {
    v = wasm_f32x4_add(v, wasm_i32x4_shuffle(v, v, 2, 3, 0, 1));
    v = wasm_f32x4_add(v, wasm_i32x4_shuffle(v, v, 1, 0, 3, 2));
    return wasm_f32x4_extract_lane(v, 0);
}

INLINE float hmax(v128_t v) { /* inputs are not NaN: pmax is enough */
    v = wasm_f32x4_pmax(v, wasm_i32x4_shuffle(v, v, 2, 3, 0, 1));
    v = wasm_f32x4_pmax(v, wasm_i32x4_shuffle(v, v, 1, 0, 3, 2));
    return wasm_f32x4_extract_lane(v, 0);
}

INLINE v128_t v_act(v128_t v, int32_t act) {
    const v128_t half = wasm_f32x4_splat(0.5f), one = wasm_f32x4_splat(1.0f);
    if (act == BL_ACT_GELU)
        return wasm_f32x4_mul(wasm_f32x4_mul(half, v),
                              wasm_f32x4_add(one, v_erf(wasm_f32x4_mul(v, wasm_f32x4_splat(0.70710678118654752f)))));
    if (act == BL_ACT_GELU_TANH) { /* tanh(u) = 1 - 2 / (exp(2u) + 1) */
        v128_t u = wasm_f32x4_mul(
            wasm_f32x4_splat(0.7978845608028654f),
            wasm_f32x4_add(v, wasm_f32x4_mul(wasm_f32x4_splat(0.044715f), wasm_f32x4_mul(v, wasm_f32x4_mul(v, v)))));
        v128_t e = v_exp(wasm_f32x4_add(u, u));
        v128_t th = wasm_f32x4_sub(one, wasm_f32x4_div(wasm_f32x4_splat(2.0f), wasm_f32x4_add(e, one)));
        return wasm_f32x4_mul(wasm_f32x4_mul(half, v), wasm_f32x4_add(one, th));
    }
    return wasm_f32x4_pmax(v, wasm_f32x4_splat(0.0f));
}

/* Write one row of 8 sums (+ bias, then activation act unless act < 0) to
 * y, only the first `cols` columns. */
INLINE void store_row(float *y, v128_t a0, v128_t a1, const float *bias, int cols, int32_t act) {
    if (cols == BL_PANEL) {
        if (bias) {
            a0 = wasm_f32x4_add(a0, wasm_v128_load(bias));
            a1 = wasm_f32x4_add(a1, wasm_v128_load(bias + 4));
        }
        if (act >= 0) {
            a0 = v_act(a0, act);
            a1 = v_act(a1, act);
        }
        wasm_v128_store(y, a0);
        wasm_v128_store(y + 4, a1);
    } else {
        float t[8];
        if (bias) {
            for (int c = 0; c < BL_PANEL; c++) t[c] = c < cols ? bias[c] : 0.0f;
            a0 = wasm_f32x4_add(a0, wasm_v128_load(t));
            a1 = wasm_f32x4_add(a1, wasm_v128_load(t + 4));
        }
        if (act >= 0) {
            a0 = v_act(a0, act);
            a1 = v_act(a1, act);
        }
        wasm_v128_store(t, a0);
        wasm_v128_store(t + 4, a1);
        for (int c = 0; c < cols; c++) y[c] = t[c];
    }
}

/* 4x4 transpose of 32-bit lanes: out[i] = lane i of a, b, c, d. */
INLINE void transpose4(v128_t *a, v128_t *b, v128_t *c, v128_t *d) {
    v128_t t0 = wasm_i32x4_shuffle(*a, *b, 0, 4, 1, 5), t1 = wasm_i32x4_shuffle(*a, *b, 2, 6, 3, 7);
    v128_t t2 = wasm_i32x4_shuffle(*c, *d, 0, 4, 1, 5), t3 = wasm_i32x4_shuffle(*c, *d, 2, 6, 3, 7);
    *a = wasm_i32x4_shuffle(t0, t2, 0, 1, 4, 5);
    *b = wasm_i32x4_shuffle(t0, t2, 2, 3, 6, 7);
    *c = wasm_i32x4_shuffle(t1, t3, 0, 1, 4, 5);
    *d = wasm_i32x4_shuffle(t1, t3, 2, 3, 6, 7);
}

#endif /* BLK_SIMD */

#endif
