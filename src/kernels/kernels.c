/* kernels.c — the kernels' dispatch (see kernels.h): which implementation
 * runs (blk_x86_level, blk_simd_name, blk_nt_q_pays), scratch sizes, and,
 * in a scalar build, the un-suffixed kernels as the scalar references.
 *
 * The kernels live in one file per instruction set, as in ggml's CPU backend:
 *   kernels_weight.c   a weight as the bundle stores it: wrapping and
 *                      dequantizing (blk_weight_init, blk_weight_row)
 *   kernels_pack.c     a weight's SIMD layout: panels, scale groups, the
 *                      shared scales of q8 panels (blk_weight_pack)
 *   kernels_ref.c      scalar references, always compiled (the tests compare
 *                      every other path with them)
 *   kernels_simd128.c  wasm SIMD128; on x86-64 the same source is the SSE4.1
 *                      path, through the intrinsic shim src/kernels/simd_x86.h
 *   kernels_x86.c      x86-64 AVX2+FMA micro-kernels, chosen at run time
 *   kernels_avx512.c   x86-64 AVX-512 (F, BW; VNNI) micro-kernels, at run time
 *   kernels_impl.h     what they share: constants, the inline vector helpers
 */
#include "kernels_impl.h"
#include "bertlens.h"
#include "format/bundle.h"
#include "base/dtype.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ weights */

#if BLK_SIMD && !defined(__wasm_simd128__)
static int blk_x86_state = -1; /* -1: not decided yet */
/* The x86-64 kernels that run: the best the CPU has (the AVX-512 level needs
 * F and BW; VNNI adds vpdpwssd), capped by the environment's
 * BERTLENS_SIMD=sse4.1|avx2|avx512 (tests compare each path with the scalar
 * one; avx512 means AVX-512 without VNNI). Decided once; relaxed atomics
 * since any thread may ask first. */
int blk_x86_level(void) {
    int level = __atomic_load_n(&blk_x86_state, __ATOMIC_RELAXED);
    if (level < 0) {
        const char *env = getenv("BERTLENS_SIMD");
        int cap = BLK_X86_AVX512_VNNI;
        if (env && !strcmp(env, "sse4.1")) cap = BLK_X86_SSE41;
        else if (env && !strcmp(env, "avx2")) cap = BLK_X86_AVX2;
        else if (env && !strcmp(env, "avx512")) cap = BLK_X86_AVX512;
        __builtin_cpu_init();
        level = BLK_X86_SSE41;
        if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
            level = BLK_X86_AVX2;
            if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw"))
                level = __builtin_cpu_supports("avx512vnni") ? BLK_X86_AVX512_VNNI : BLK_X86_AVX512;
        }
        if (level > cap) level = cap;
        __atomic_store_n(&blk_x86_state, level, __ATOMIC_RELAXED);
    }
    return level;
}
#endif

const char *blk_simd_name(void) {
#if defined(__wasm_simd128__)
    return "wasm-simd128";
#elif BLK_SIMD
    static const char *const names[] = {"sse4.1", "avx2+fma", "avx512", "avx512+vnni"};
    return names[blk_x86_level()];
#else
    return "scalar";
#endif
}

int blk_nt_q_pays(void) {
#if defined(__wasm_simd128__)
    return 1;
#elif BLK_SIMD
    return blk_x86_level() < BLK_X86_AVX512;
#else
    return 0;
#endif
}

size_t blk_matmul_scratch_floats(int32_t T, int32_t k) {
    /* SIMD: rows padded to a multiple of 4, packed f32 [T4][k] or int16 [T4][k] + row scales [T4];
     * scalar: one weight row [k] */
    size_t T4 = ((size_t)T + 3) / 4 * 4;
    return T4 * ((size_t)k + 1) + (size_t)k + 16 + 32; /* + 32: mk_f32_long's block sums */
}

size_t blk_matmul_nt_scratch_floats(int32_t N, int32_t K) {
    /* B in panels [N/8][K][8], then one chunk of packed rows [NT_ROWS][K], then mk_f32_long's block sums [32] */
    /* blk_matmul_nt_q (SIMD): int16 panels and their block scales, one f32 panel, a chunk of quantized rows */
    size_t np = (size_t)(N + BL_PANEL - 1) / BL_PANEL, Kp = ((size_t)K + BL_QBLOCK - 1) / BL_QBLOCK * BL_QBLOCK;
    size_t f = np * BL_PANEL * K + (size_t)NT_ROWS * K + 16 + 32;
    size_t q = np * Kp * BL_PANEL / 2 + np * (Kp / BL_QBLOCK) * BL_PANEL + Kp * BL_PANEL + (size_t)NT_ROWS * (Kp / 2 + 1) + 16;
    return f > q ? f : q;
}

#if !BLK_SIMD
/* Scalar build: the scalar references are the kernels. */
void blk_matmul(float *y, const float *x, int32_t T, const blk_weight *w, const float *bias, float *scratch) {
    blk_matmul_scalar(y, x, T, w, bias, scratch);
}
void blk_matmul_act(float *y, const float *x, int32_t T, const blk_weight *w, const float *bias, int32_t act,
                   float *scratch) {
    blk_matmul_scalar(y, x, T, w, bias, scratch);
    if (act >= 0) blk_activate_scalar(y, (size_t)T * w->n, act);
}
void blk_matmul_shared(int n, float *const *y, const float *x, int32_t T, const blk_weight *const *w,
                      const float *const *bias, int32_t act, float *scratch) {
    for (int i = 0; i < n; i++) blk_matmul_act(y[i], x, T, w[i], bias[i], act, scratch);
}
void blk_matmul_nt(float *y, int32_t ldy, const float *x, int32_t ldx, int32_t T, const float *b, int32_t bn,
                  int32_t bk, int32_t N, int32_t K, float *scratch) {
    blk_matmul_nt_scalar(y, ldy, x, ldx, T, b, bn, bk, N, K, scratch);
}
void blk_matmul_nt_q(float *y, int32_t ldy, const float *x, int32_t ldx, int32_t T, const float *b, int32_t bn,
                     int32_t bk, int32_t N, int32_t K, float *scratch) {
    blk_matmul_nt_scalar(y, ldy, x, ldx, T, b, bn, bk, N, K, scratch);
}
void blk_layernorm(float *x, const float *res, int32_t T, int32_t n, const float *g, const float *b, float eps) {
    blk_layernorm_scalar(x, res, T, n, g, b, eps);
}
void blk_softmax(float *x, int32_t T, int32_t n, float scale) { blk_softmax_scalar(x, T, n, scale); }
void blk_weight_t16(const blk_weight *w, int16_t *pq, float *ps) { blk_weight_t16_scalar(w, pq, ps); }
void blk_activate(float *x, size_t n, int32_t act) { blk_activate_scalar(x, n, act); }
void blk_erf_vec(float *x, size_t n) {
    for (size_t i = 0; i < n; i++) x[i] = erff(x[i]);
}
void blk_exp_vec(float *x, size_t n) {
    for (size_t i = 0; i < n; i++) x[i] = expf(x[i]);
}
#endif
