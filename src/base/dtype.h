/* dtype.h — internal: what a bundle's weight dtypes are made of, in one
 * place for the loader (bundle.c), the converter (convert_quant.c), the
 * kernels and the front ends:
 *
 *   - the dtypes' names ("f32", "f16", "q8", ...; bl_dtype in bertlens.h,
 *     the codes in bundle.h) and parsing them back;
 *   - their bit widths (bits per stored weight, QN integer widths);
 *   - the IEEE binary16 codec: f16 -> f32 (exact), f32 -> f16 and
 *     f64 -> f16 (round to nearest even, overflow to infinity, NaN kept a
 *     quiet NaN: numpy's astype(float16) from either width).
 *
 * Header-only (static inline), no state, no allocation: any translation
 * unit may include it, SIMD kernels included.
 */
#ifndef BL_DTYPE_H
#define BL_DTYPE_H

#include "bertlens.h"

#include <stdint.h>
#include <string.h>

/* "f32, f16, ..." in code order, for messages that list the choices. */
#define BLI_DTYPE_LIST "f32, f16, q8, q4, q8h, q9, q10, q11, q12"

/* The dtype named s (bl_dtype_name's names), or -1. */
static inline int bli_dtype_parse(const char *s) {
    static const char *const names[BL_N_DTYPES] = {"f32", "f16", "q8", "q4", "q8h", "q9", "q10", "q11", "q12"};
    for (int i = 0; s && i < BL_N_DTYPES; i++)
        if (!strcmp(s, names[i])) return i;
    return -1;
}

/* QN dtypes (Q8H, Q9..Q12; bundle.h "Data layouts"): bits per integer, or 0
 * for F32, F16, Q8, Q4. */
static inline int bli_qn_bits(int dtype) { return dtype >= BL_Q8H && dtype <= BL_Q12 ? dtype - BL_Q8H + 8 : 0; }

/* Bits of one stored weight, scales not counted: 32, 16, 8, 4, 8..12; 0 for
 * an unknown dtype. */
static inline int bli_dtype_bits(int dtype) {
    switch (dtype) {
    case BL_F32: return 32;
    case BL_F16: return 16;
    case BL_Q8: return 8;
    case BL_Q4: return 4;
    default: return bli_qn_bits(dtype);
    }
}

/* ------------------------------------------------------------ binary16 */

/* binary16 -> float32, exact for every input (subnormals, infinities, NaN
 * payloads). */
static inline float bli_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 0x1f, m = h & 0x3ffu, bits;
    if (e == 0) {
        if (m == 0) {
            bits = sign;
        } else { /* subnormal: m * 2^-24, normalized (at most 10 shifts) */
            int s = 0;
            while (!(m & 0x400)) m <<= 1, s++;
            bits = sign | (uint32_t)(127 - 15 + 1 - s) << 23 | (m & 0x3ffu) << 13;
        }
    } else if (e == 31) {
        bits = sign | 0x7f800000u | m << 13;
    } else {
        bits = sign | (e + 127 - 15) << 23 | m << 13;
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

/* float32 -> binary16, round to nearest even, overflow to infinity. */
static inline uint16_t bli_f32_to_f16(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000, ax = x & 0x7fffffff;
    if (ax > 0x7f800000) return (uint16_t)(sign | 0x7e00);
    if (ax >= 0x477ff000) return (uint16_t)(sign | 0x7c00); /* >= 65520: rounds to infinity */
    if (ax < 0x38800000) {                                  /* below 2^-14: subnormal or zero */
        /* Adding 0.5 puts the 2^-24 unit in the last place; the float add rounds to even. */
        float v, a;
        memcpy(&a, &ax, 4);
        v = a + 0.5f;
        uint32_t vb;
        memcpy(&vb, &v, 4);
        return (uint16_t)(sign | (vb - 0x3f000000u));
    }
    uint32_t e = ax - 0x38000000u; /* rebias the exponent from 127 to 15 */
    return (uint16_t)(sign | ((e + 0x0fffu + ((e >> 13) & 1)) >> 13));
}

/* float64 -> binary16, round to nearest even from the double (numpy's
 * float64.astype(float16): no intermediate float32 rounding). */
static inline uint16_t bli_f64_to_f16(double d) {
    uint64_t x;
    memcpy(&x, &d, 8);
    uint16_t sign = (uint16_t)((x >> 48) & 0x8000);
    uint64_t ax = x & 0x7fffffffffffffffull;
    if (ax > 0x7ff0000000000000ull) return (uint16_t)(sign | 0x7e00);
    if (ax >= 0x40effe0000000000ull) return (uint16_t)(sign | 0x7c00); /* >= 65520: rounds to infinity */
    if (ax < 0x3f10000000000000ull) {                                   /* below 2^-14: subnormal or zero */
        /* 2^28 has a last place of 2^-24 (the subnormal unit): the double add rounds to even. */
        double a;
        memcpy(&a, &ax, 8);
        volatile double v = a + 268435456.0;
        return (uint16_t)(sign | (uint16_t)((v - 268435456.0) * 16777216.0));
    }
    uint64_t e = ax - ((uint64_t)(1023 - 15) << 52); /* rebias the exponent from 1023 to 15 */
    return (uint16_t)(sign | ((e + 0x1ffffffffffull + ((e >> 42) & 1)) >> 42));
}

#endif
