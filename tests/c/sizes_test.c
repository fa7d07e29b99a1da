/* sizes_test.c — src/base/sizes.h at the points where 32-bit size arithmetic
 * wraps (2^31, 2^32) and 64-bit arithmetic overflows, built natively
 * (build/sizes_test) and as a 32-bit ASan program (build/asan32/sizes_test),
 * run by tests/limits.test.mjs. Prints one line per failed check, then
 * "sizes_test: N checks, M failed (size_t of B bits, cap C)"; exit 1 if any
 * failed (tests/c/check.h). */
#include "../../src/base/sizes.h"

#include <stdio.h>
#include <string.h>

#include "check.h"

/* bli_size_ok's verdict and message for bytes. */
static int ok_msg(uint64_t bytes, char *msg, size_t cap) {
    msg[0] = 0;
    return bli_size_ok(bytes, "the buffer", msg, cap);
}

int main(void) {
    const int wide = sizeof(size_t) > 4;
    char msg[256];

    /* products in 64 bits: what a 32-bit size_t would wrap */
    CHECK(bli_mul_sat(65536, 65536) == UINT64_C(4294967296));                /* 2^32 -> 0 in 32 bits */
    CHECK(BLI_BYTES(4, 33, 128, 512, 512) == UINT64_C(4429185024));          /* issue 23: -> 134,217,728 */
    CHECK(BLI_BYTES(4, 64, 128, 8192, 8192) == UINT64_C(2199023255552));     /* the loader's limits: 2 TiB */
    CHECK(BLI_BYTES(8, 64, 1, 8192, 8192) == UINT64_C(34359738368));         /* Gram matrices of one wide head */
    CHECK(BLI_BYTES(4, UINT64_C(1) << 30) == UINT64_C(4294967296));          /* a 2^30-element tensor */
    CHECK(BLI_BYTES(4, (UINT64_C(1) << 29) - 1) == UINT64_C(2147483644));    /* just below 2^31 */
    CHECK(BLI_BYTES(4, UINT64_C(1) << 29) == UINT64_C(2147483648));          /* 2^31 */
    CHECK(BLI_BYTES(2, 65537, 32768) == UINT64_C(4295032832));               /* just above 2^32 */
    CHECK(BLI_BYTES(1, 65535, 65537) == UINT64_C(4294967295));               /* 2^32 - 1 */
    /* 64-bit overflow saturates instead of wrapping, and is then refused */
    CHECK(BLI_BYTES(8, UINT64_C(1) << 32, UINT64_C(1) << 32) == UINT64_MAX);
    CHECK(BLI_BYTES(1, UINT64_MAX, 2) == UINT64_MAX);
    CHECK(BLI_BYTES(4, UINT64_C(1) << 62) == UINT64_MAX);
    CHECK(BLI_BYTES(4, 0, UINT64_MAX) == 0);
    CHECK(BLI_BYTES(4, 3) == 12 && BLI_BYTES(sizeof(double), 2, 3) == 48);
    /* negative counts (int32 -1) become huge and are refused, never small */
    CHECK(BLI_BYTES(4, (int32_t)-1) == UINT64_MAX || BLI_BYTES(4, (int32_t)-1) > BLI_MAX_BUFFER);

    /* the cap: 2 GB in 32-bit builds, 1 TB in 64-bit ones */
    CHECK(BLI_MAX_BUFFER == (wide ? UINT64_C(1000000000000) : UINT64_C(2000000000)));
    CHECK(BLI_MAX_BUFFER <= SIZE_MAX / 2); /* what passes fits size_t, and so do offsets into it */
    CHECK(ok_msg(BLI_MAX_BUFFER, msg, sizeof msg) && msg[0] == 0);
    CHECK(!ok_msg(BLI_MAX_BUFFER + 1, msg, sizeof msg) && strstr(msg, "the buffer needs "));
    CHECK(ok_msg(UINT64_C(1999999996), msg, sizeof msg));                    /* below 2 GB: both builds */
    CHECK(ok_msg(UINT64_C(2147483644), msg, sizeof msg) == wide);            /* below 2^31 */
    CHECK(ok_msg(UINT64_C(2147483648), msg, sizeof msg) == wide);            /* 2^31 */
    CHECK(ok_msg(UINT64_C(4294967295), msg, sizeof msg) == wide);            /* 2^32 - 1 */
    CHECK(ok_msg(UINT64_C(4294967296), msg, sizeof msg) == wide);            /* 2^32 */
    CHECK(ok_msg(UINT64_C(4295032832), msg, sizeof msg) == wide);            /* above 2^32 */
    CHECK(!ok_msg(UINT64_MAX, msg, sizeof msg) && strstr(msg, "more than 18 EB"));
    CHECK(!ok_msg(UINT64_C(2199023255552), msg, sizeof msg));                /* 2 TiB: refused everywhere */

    /* the message names the size and the cap */
    CHECK(!ok_msg(BLI_BYTES(4, 33, 128, 512, 512), msg, sizeof msg) == !wide);
    if (!wide)
        CHECK(!strcmp(msg, "the buffer needs 4.4 GB: more than this build allows in one buffer (2.0 GB)"));
    ok_msg(UINT64_C(2199023255552), msg, sizeof msg);
    CHECK(!strcmp(msg, wide ? "the buffer needs 2.2 TB: more than this build allows in one buffer (1.0 TB)"
                            : "the buffer needs 2.2 TB: more than this build allows in one buffer (2.0 GB)"));
    char b[32];
    bli_format_bytes(b, sizeof b, 134217728);
    CHECK(!strcmp(b, "134 MB"));
    bli_format_bytes(b, sizeof b, 512);
    CHECK(!strcmp(b, "512 bytes"));

    /* bli_alloc: refuses instead of allocating short; 0 bytes is not a failure */
    msg[0] = 0;
    void *p = bli_alloc(BLI_BYTES(4, 33, 128, 512, 512), 0, "attention", msg, sizeof msg);
    if (!wide) CHECK(!p && !strcmp(msg, "attention needs 4.4 GB: more than this build allows in one buffer (2.0 GB)"));
    free(p);
    msg[0] = 0;
    p = bli_alloc(UINT64_C(2199023255552), 0, "attention", msg, sizeof msg);
    CHECK(!p && strstr(msg, "attention needs 2.2 TB"));
    p = bli_alloc(0, 0, "nothing", msg, sizeof msg);
    CHECK(p != NULL);
    free(p);
    unsigned char *z = bli_alloc(BLI_BYTES(4, 1000), 1, "zeros", msg, sizeof msg);
    CHECK(z != NULL);
    int all_zero = 1;
    for (int i = 0; z && i < 4000; i++) all_zero &= z[i] == 0;
    CHECK(z && all_zero);
    free(z);
    CHECK(bli_alloc(UINT64_MAX, 0, "x", NULL, 0) == NULL); /* no message buffer: still refused */

    char note[80];
    snprintf(note, sizeof note, "size_t of %d bits, cap %llu bytes", (int)(8 * sizeof(size_t)),
             (unsigned long long)BLI_MAX_BUFFER);
    return check_done("sizes_test", note);
}
