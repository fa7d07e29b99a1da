/* utf8.c — the strict UTF-8 decoder (utf8.h). */
#include "utf8.h"

size_t bli_utf8_next(const unsigned char *s, size_t n, uint32_t *cp, int *why, size_t *at) {
    uint32_t c = s[0], need, min;
    size_t bad_at = 0;
    int w;
    if (c < 0x80) {
        if (cp) *cp = c;
        return 1;
    }
    if ((c & 0xE0) == 0xC0) c &= 0x1F, need = 1, min = 0x80;
    else if ((c & 0xF0) == 0xE0) c &= 0x0F, need = 2, min = 0x800;
    else if ((c & 0xF8) == 0xF0) c &= 0x07, need = 3, min = 0x10000;
    else {
        w = BLI_UTF8_BAD_LEAD;
        goto bad;
    }
    if (need >= n) {
        w = BLI_UTF8_TRUNCATED;
        goto bad;
    }
    for (uint32_t k = 1; k <= need; k++) {
        if ((s[k] & 0xC0) != 0x80) {
            w = BLI_UTF8_BAD_CONT;
            bad_at = k;
            goto bad;
        }
        c = c << 6 | (s[k] & 0x3F);
    }
    if (c < min) w = BLI_UTF8_OVERLONG;
    else if (c > 0x10FFFF) w = BLI_UTF8_TOO_BIG;
    else if (c >= 0xD800 && c <= 0xDFFF) w = BLI_UTF8_SURROGATE;
    else {
        if (cp) *cp = c;
        return need + 1;
    }
bad:
    if (why) *why = w;
    if (at) *at = bad_at;
    return 0;
}

const char *bli_utf8_why(int why) {
    switch (why) {
    case BLI_UTF8_OK: return "valid";
    case BLI_UTF8_BAD_LEAD: return "unexpected byte";
    case BLI_UTF8_TRUNCATED: return "truncated sequence";
    case BLI_UTF8_BAD_CONT: return "bad continuation byte";
    case BLI_UTF8_OVERLONG: return "overlong encoding";
    case BLI_UTF8_TOO_BIG: return "code point above U+10FFFF";
    case BLI_UTF8_SURROGATE: return "surrogate code point";
    default: return "invalid sequence";
    }
}

int bli_utf8_check(const char *s, size_t n, size_t *bad) {
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        size_t k = u[i] < 0x80 ? 1 : bli_utf8_next(u + i, n - i, NULL, NULL, NULL);
        if (!k) {
            if (bad) *bad = i;
            return -1;
        }
        i += k;
    }
    return 0;
}
