/* utf8.h — internal: the one strict UTF-8 decoder (RFC 3629: no overlong
 * forms, no surrogates, nothing above U+10FFFF), used wherever the engine
 * reads UTF-8 it did not write: the tokenizer's text, the converter's
 * vocab.txt, JSON and terminal output (which replace what is invalid), and
 * the analyses' reading of token strings.
 */
#ifndef BL_UTF8_H
#define BL_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* Why a sequence is invalid (bli_utf8_next's *why). */
enum {
    BLI_UTF8_OK = 0,
    BLI_UTF8_BAD_LEAD,   /* a byte that cannot start a character (0x80..0xBF, 0xF8..0xFF) */
    BLI_UTF8_TRUNCATED,  /* the text ends inside the character */
    BLI_UTF8_BAD_CONT,   /* a byte after the lead that is not 10xxxxxx */
    BLI_UTF8_OVERLONG,   /* more bytes than the code point needs */
    BLI_UTF8_TOO_BIG,    /* above U+10FFFF */
    BLI_UTF8_SURROGATE,  /* U+D800..U+DFFF */
};

/* Decode the character at s[0..n), n >= 1. Returns its length in bytes
 * (1..4) and stores its code point in *cp; or returns 0, stores the reason
 * (BLI_UTF8_*) in *why and the offset of the offending byte (0, or the
 * bad continuation byte's) in *at. cp, why and at may be NULL. */
size_t bli_utf8_next(const unsigned char *s, size_t n, uint32_t *cp, int *why, size_t *at);

/* The reason in words: "unexpected byte", "truncated sequence", ... */
const char *bli_utf8_why(int why);

/* Length of the valid character at s[0..n) (n >= 1), or 0 if invalid. */
static inline size_t bli_utf8_valid_len(const unsigned char *s, size_t n) { return bli_utf8_next(s, n, NULL, NULL, NULL); }

/* 0 if s[0..n) is valid UTF-8, else -1 with the offset of the first invalid
 * character in *bad (may be NULL). */
int bli_utf8_check(const char *s, size_t n, size_t *bad);

#endif
