/* json_read.h — a small JSON reader (RFC 8259) for the converter's inputs:
 * config.json, tokenizer.json, tokenizer_config.json, safetensors headers.
 *
 *     bli_jv *v = bli_jparse(text, len, err, sizeof err);   // NULL: err says where
 *     const bli_jv *n = bli_jget(v, "hidden_size");         // NULL if absent
 *     bli_jfree(v);
 *
 * Objects keep their members in file order; bli_jget returns the LAST member
 * of that name (as Python's json does). Strings are UTF-8 (\u escapes decoded,
 * a lone surrogate is an error), NUL-terminated, and may hold NUL (len counts
 * it). Numbers keep their double value and whether the literal was an integer
 * (no fraction or exponent) with its int64 value. Nesting is limited to 64
 * levels so hostile input cannot exhaust the stack.
 */
#ifndef BL_JSON_READ_H
#define BL_JSON_READ_H

#include <stddef.h>
#include <stdint.h>

enum { BLI_JNULL, BLI_JFALSE, BLI_JTRUE, BLI_JNUM, BLI_JSTR, BLI_JARR, BLI_JOBJ };

typedef struct bli_jv {
    int type;
    int is_int;        /* JNUM: integer literal that fits in int64 */
    double num;        /* JNUM */
    int64_t ival;      /* JNUM with is_int */
    char *str;         /* JSTR: [len + 1] bytes */
    size_t len;
    struct bli_jv *items; /* JARR / JOBJ: [n] */
    size_t n;
    char *key;         /* member name when inside an object */
    size_t key_len;
} bli_jv;

bli_jv *bli_jparse(const char *text, size_t len, char *err, size_t errlen);
void bli_jfree(bli_jv *v);
const bli_jv *bli_jget(const bli_jv *obj, const char *key); /* NULL unless obj is an object with key */
int bli_jtruthy(const bli_jv *v);                           /* Python's bool() of the value */

#endif
