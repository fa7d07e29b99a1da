/* simd_x86.h — the wasm SIMD128 intrinsics that src/kernels/kernels_simd128.c and
 * src/kernels/kernels_impl.h use, on x86-64 SSE4.1, so the one SIMD implementation
 * of each kernel also builds natively.
 *
 * v128_t is an untyped 128-bit vector as in <wasm_simd128.h>; each function
 * reinterprets it (free casts) and maps to one SSE instruction where the
 * semantics agree exactly, or a short sequence where they do not:
 *   f32x4.pmin/pmax   minps/maxps with swapped operands (same NaN and
 *                     signed-zero rules: pmin(a, b) = b < a ? b : a)
 *   i32x4.dot_i16x8_s pmaddwd
 *   i16x8.extend_low/high_i8x16_s  pmovsxbw (of the high half: punpckhqdq first)
 *   i16x8.narrow_i32x4_s packssdw
 *   f32x4.nearest     roundps, round-to-nearest-even
 *   i32x4.trunc_sat_f32x4_s  cvttps2dq gives 0x80000000 for NaN and for
 *                     values >= 2^31: fixed up to 0 and INT32_MAX
 *   v128.bitselect    and/andnot/or (every bit, not only the sign bits)
 * Only the intrinsics those files call are here; a new one there must be
 * added here too (the native build then fails to compile until it is).
 *
 * Included only when __SSE4_1__ is defined (Makefile: -msse4.1 for native
 * builds on x86-64). */
#ifndef BL_SIMD_X86_H
#define BL_SIMD_X86_H

#include <smmintrin.h>
#include <stdint.h>
#include <string.h>

typedef __m128i v128_t;

#define BLX_INLINE static inline __attribute__((always_inline))
#define BLX_PS(v) _mm_castsi128_ps(v)
#define BLX_SI(v) _mm_castps_si128(v)

BLX_INLINE v128_t wasm_v128_load(const void *p) { return _mm_loadu_si128((const __m128i *)p); }
BLX_INLINE void wasm_v128_store(void *p, v128_t v) { _mm_storeu_si128((__m128i *)p, v); }
BLX_INLINE v128_t wasm_v128_load64_zero(const void *p) { return _mm_loadl_epi64((const __m128i *)p); }
BLX_INLINE v128_t wasm_v128_load32_splat(const void *p) {
    int32_t v;
    memcpy(&v, p, 4);
    return _mm_set1_epi32(v);
}
BLX_INLINE v128_t wasm_v128_and(v128_t a, v128_t b) { return _mm_and_si128(a, b); }
BLX_INLINE v128_t wasm_v128_or(v128_t a, v128_t b) { return _mm_or_si128(a, b); }
/* bits of a where c is 1, of b where c is 0 */
BLX_INLINE v128_t wasm_v128_bitselect(v128_t a, v128_t b, v128_t c) {
    return _mm_or_si128(_mm_and_si128(a, c), _mm_andnot_si128(c, b));
}

BLX_INLINE v128_t wasm_f32x4_splat(float x) { return BLX_SI(_mm_set1_ps(x)); }
BLX_INLINE v128_t wasm_f32x4_add(v128_t a, v128_t b) { return BLX_SI(_mm_add_ps(BLX_PS(a), BLX_PS(b))); }
BLX_INLINE v128_t wasm_f32x4_sub(v128_t a, v128_t b) { return BLX_SI(_mm_sub_ps(BLX_PS(a), BLX_PS(b))); }
BLX_INLINE v128_t wasm_f32x4_mul(v128_t a, v128_t b) { return BLX_SI(_mm_mul_ps(BLX_PS(a), BLX_PS(b))); }
BLX_INLINE v128_t wasm_f32x4_div(v128_t a, v128_t b) { return BLX_SI(_mm_div_ps(BLX_PS(a), BLX_PS(b))); }
BLX_INLINE v128_t wasm_f32x4_abs(v128_t a) { return _mm_and_si128(a, _mm_set1_epi32(0x7fffffff)); }
BLX_INLINE v128_t wasm_f32x4_pmin(v128_t a, v128_t b) { return BLX_SI(_mm_min_ps(BLX_PS(b), BLX_PS(a))); }
BLX_INLINE v128_t wasm_f32x4_pmax(v128_t a, v128_t b) { return BLX_SI(_mm_max_ps(BLX_PS(b), BLX_PS(a))); }
BLX_INLINE v128_t wasm_f32x4_ge(v128_t a, v128_t b) { return BLX_SI(_mm_cmpge_ps(BLX_PS(a), BLX_PS(b))); }
BLX_INLINE v128_t wasm_f32x4_gt(v128_t a, v128_t b) { return BLX_SI(_mm_cmpgt_ps(BLX_PS(a), BLX_PS(b))); }
BLX_INLINE v128_t wasm_f32x4_lt(v128_t a, v128_t b) { return BLX_SI(_mm_cmplt_ps(BLX_PS(a), BLX_PS(b))); }
BLX_INLINE v128_t wasm_f32x4_nearest(v128_t a) {
    return BLX_SI(_mm_round_ps(BLX_PS(a), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
BLX_INLINE v128_t wasm_f32x4_convert_i32x4(v128_t a) { return BLX_SI(_mm_cvtepi32_ps(a)); }
#define wasm_f32x4_extract_lane(a, i) _mm_cvtss_f32(BLX_PS(_mm_shuffle_epi32((a), (i) * 0x55)))

BLX_INLINE v128_t wasm_i32x4_splat(int32_t x) { return _mm_set1_epi32(x); }
BLX_INLINE v128_t wasm_i32x4_add(v128_t a, v128_t b) { return _mm_add_epi32(a, b); }
BLX_INLINE v128_t wasm_i32x4_sub(v128_t a, v128_t b) { return _mm_sub_epi32(a, b); }
BLX_INLINE v128_t wasm_i32x4_shl(v128_t a, uint32_t n) { return _mm_sll_epi32(a, _mm_cvtsi32_si128((int)(n & 31))); }
BLX_INLINE v128_t wasm_i16x8_splat(int16_t v) { return _mm_set1_epi16(v); }
BLX_INLINE v128_t wasm_i16x8_add(v128_t a, v128_t b) { return _mm_add_epi16(a, b); }
BLX_INLINE v128_t wasm_i8x16_abs(v128_t a) { return _mm_abs_epi8(a); }
/* pairs of unsigned bytes summed into int16 lanes (at most 510: pmaddubsw cannot saturate) */
BLX_INLINE v128_t wasm_u16x8_extadd_pairwise_u8x16(v128_t a) { return _mm_maddubs_epi16(a, _mm_set1_epi8(1)); }
BLX_INLINE v128_t wasm_u32x4_extend_low_u16x8(v128_t a) { return _mm_cvtepu16_epi32(a); }
BLX_INLINE v128_t wasm_u32x4_extend_high_u16x8(v128_t a) { return _mm_cvtepu16_epi32(_mm_unpackhi_epi64(a, a)); }
BLX_INLINE v128_t wasm_i16x8_shl(v128_t a, uint32_t n) { return _mm_sll_epi16(a, _mm_cvtsi32_si128((int)(n & 15))); }
/* (a * b + 2^14) >> 15 per int16 lane, saturated: pmulhrsw, whose one
 * overflow (-32768 * -32768 -> -32768) becomes 32767 */
BLX_INLINE v128_t wasm_i16x8_q15mulr_sat(v128_t a, v128_t b) {
    const v128_t r = _mm_mulhrs_epi16(a, b);
    return _mm_xor_si128(r, _mm_cmpeq_epi16(r, _mm_set1_epi16(INT16_MIN)));
}
BLX_INLINE v128_t wasm_i32x4_dot_i16x8(v128_t a, v128_t b) { return _mm_madd_epi16(a, b); }
BLX_INLINE v128_t wasm_i16x8_extend_low_i8x16(v128_t a) { return _mm_cvtepi8_epi16(a); }
BLX_INLINE v128_t wasm_i16x8_extend_high_i8x16(v128_t a) { return _mm_cvtepi8_epi16(_mm_unpackhi_epi64(a, a)); }
BLX_INLINE v128_t wasm_i32x4_extend_low_i16x8(v128_t a) { return _mm_cvtepi16_epi32(a); }
BLX_INLINE v128_t wasm_i32x4_extend_high_i16x8(v128_t a) { return _mm_cvtepi16_epi32(_mm_unpackhi_epi64(a, a)); }
BLX_INLINE v128_t wasm_i16x8_narrow_i32x4(v128_t a, v128_t b) { return _mm_packs_epi32(a, b); }
BLX_INLINE v128_t wasm_i32x4_trunc_sat_f32x4(v128_t a) {
    __m128 f = BLX_PS(a);
    v128_t t = _mm_cvttps_epi32(f);
    /* lanes >= 2^31 came out as INT32_MIN: INT32_MAX instead; NaN lanes: 0 */
    v128_t big = BLX_SI(_mm_cmpge_ps(f, _mm_set1_ps(2147483648.0f)));
    t = _mm_xor_si128(t, big);
    return _mm_and_si128(t, BLX_SI(_mm_cmpord_ps(f, f)));
}

/* Lane shuffle of two vectors of 4 x 32 bits (indices 0-3: a, 4-7: b), as
 * wasm_i32x4_shuffle; gcc >= 12 and clang both have __builtin_shufflevector. */
typedef int32_t blx_v4si __attribute__((vector_size(16)));
#define wasm_i32x4_shuffle(a, b, c0, c1, c2, c3) \
    ((v128_t)__builtin_shufflevector((blx_v4si)(a), (blx_v4si)(b), c0, c1, c2, c3))

#endif
