/* sizes.h — internal: byte counts made from untrusted numbers (a bundle's
 * config, a token count, a tensor's shape, a text's length), computed in 64
 * bits and checked against one cap before anything is allocated.
 *
 * In a 32-bit build (wasm32, clang -m32) size_t has 32 bits, so a product
 * such as layers x heads x T x T x 4 wraps without a sound: 33 x 128 x 512 x
 * 512 x 4 = 4,429,185,024 becomes 134,217,728, malloc succeeds, and the
 * forward pass writes 4.4 GB into 128 MB (issue 23). Every size made from
 * such counts goes through BLI_BYTES (the product in uint64_t, saturating at
 * UINT64_MAX instead of wrapping) and bli_size_ok / bli_alloc (compared to
 * BLI_MAX_BUFFER, the largest single buffer this build allocates):
 *
 *   32-bit builds  2 GB (2,000,000,000 bytes): below 2^31, so every byte
 *                  offset into a buffer fits an int32 and a JavaScript typed
 *                  array's index (wasm memory is at most 4 GB; 2 GB in the
 *                  pthreads build).
 *   64-bit builds  1 TB (10^12 bytes): more than the machines this runs on
 *                  have, so a size beyond it comes from a hostile or broken
 *                  input; refused with the same message instead of an
 *                  overcommitted buffer that fails later.
 *
 * A refused size is a message in the caller's (err, errlen), e.g.
 *   "attention of 33 layers x 128 heads x 512 x 512 tokens needs 4.4 GB:
 *    more than this build allows in one buffer (2.0 GB)"
 * and a buffer that fits but cannot be had is "out of memory for ...".
 * What passes the check fits size_t, and so does every offset into it. */
#ifndef BL_SIZES_H
#define BL_SIZES_H

#include "error.h"

#include <stdint.h>
#include <stdlib.h>

#if SIZE_MAX > 0xFFFFFFFFu
#define BLI_MAX_BUFFER UINT64_C(1000000000000) /* 1 TB: 64-bit builds */
#else
#define BLI_MAX_BUFFER UINT64_C(2000000000) /* 2 GB: 32-bit builds (wasm32) */
#endif

/* a * b, or UINT64_MAX if it does not fit 64 bits (a saturated size is
 * always refused: it exceeds BLI_MAX_BUFFER). */
static inline uint64_t bli_mul_sat(uint64_t a, uint64_t b) {
    return b && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

/* elem * n[0] * ... * n[k-1] bytes, saturating. */
static inline uint64_t bli_bytes_of(uint64_t elem, size_t k, const uint64_t *n) {
    uint64_t p = elem;
    for (size_t i = 0; i < k; i++) p = bli_mul_sat(p, n[i]);
    return p;
}

/* BLI_BYTES(elem, n0, n1, ...): the byte count of an array of n0 x n1 x ...
 * elements of elem bytes, in 64 bits (each factor converted to uint64_t
 * before any multiplication). */
#define BLI_BYTES(elem, ...)                                                                                 \
    bli_bytes_of((uint64_t)(elem), sizeof((const uint64_t[]){__VA_ARGS__}) / sizeof(uint64_t),             \
                 (const uint64_t[]){__VA_ARGS__})

/* "4.4 GB", "134 MB", "512 bytes": a size for messages (decimal units). */
static inline void bli_format_bytes(char *buf, size_t cap, uint64_t n) {
    if (n == UINT64_MAX) snprintf(buf, cap, "more than 18 EB");
    else if (n >= UINT64_C(1000000000000)) snprintf(buf, cap, "%.1f TB", (double)n / 1e12);
    else if (n >= UINT64_C(1000000000)) snprintf(buf, cap, "%.1f GB", (double)n / 1e9);
    else if (n >= UINT64_C(1000000)) snprintf(buf, cap, "%.0f MB", (double)n / 1e6);
    else snprintf(buf, cap, "%llu bytes", (unsigned long long)n);
}

/* 1 if a buffer of `bytes` may be allocated; else 0 and "<what> needs X:
 * more than this build allows in one buffer (Y)". */
static inline int bli_size_ok(uint64_t bytes, const char *what, char *err, size_t errlen) {
    if (bytes <= BLI_MAX_BUFFER) return 1;
    char need[32], cap[32];
    bli_format_bytes(need, sizeof need, bytes);
    bli_format_bytes(cap, sizeof cap, BLI_MAX_BUFFER);
    bli_set_err(err, errlen, "%s needs %s: more than this build allows in one buffer (%s)", what, need, cap);
    return 0;
}

/* malloc (zero: calloc) of `bytes` after bli_size_ok; NULL with a message
 * ("... needs X ..." or "out of memory for <what> (X)"). bytes 0 allocates
 * 1 byte, so that NULL always means failure. */
static inline void *bli_alloc(uint64_t bytes, int zero, const char *what, char *err, size_t errlen) {
    if (!bli_size_ok(bytes, what, err, errlen)) return NULL;
    const size_t n = bytes ? (size_t)bytes : 1;
    void *p = zero ? calloc(1, n) : malloc(n);
    if (!p) {
        char need[32];
        bli_format_bytes(need, sizeof need, bytes);
        bli_set_err(err, errlen, "out of memory for %s (%s)", what, need);
    }
    return p;
}

#endif
