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
 *
 * Memory (issue 31: a 64 MB tokenizer.json took 2.4 GB): the whole tree is
 * one allocation, sized exactly before it is made. The text is read twice:
 * once to check it and count its values, string bytes and each container's
 * members, once to build. Values are 32 bytes (the
 * fields of a kind share their storage), arrays hold exactly their members,
 * every string and key lies in one pool behind the values. A file whose tree
 * would need more than BLI_JSON_MEM_FACTOR times its size plus
 * BLI_JSON_MEM_SLACK is refused before anything is allocated ("JSON: N
 * values need ... more than 8 times the text"): tokenizer.json files as
 * transformers saves them need 1.5-3x, but one written without spaces (a
 * script's json.dump, JSON.stringify) with [a, b] merges holds 3 values in
 * about 12 bytes per merge and needs 4.5-5x; only files denser in values
 * than any tokenizer ([0,0,0,...] 16x, ["",""] or [[],[]] 11x) reach the
 * cap. Issue 31 asked for 4x: that needs values smaller than 32 bytes.
 * Texts are at most BLI_JSON_MAX_TEXT.
 */
#ifndef BL_JSON_READ_H
#define BL_JSON_READ_H

#include <stddef.h>
#include <stdint.h>

enum { BLI_JNULL, BLI_JFALSE, BLI_JTRUE, BLI_JNUM, BLI_JSTR, BLI_JARR, BLI_JOBJ };

#define BLI_JSON_MEM_FACTOR 8u            /* a tree needs at most 8x its text ...   */
#define BLI_JSON_MEM_SLACK (64u << 10)    /* ... + 64 KB (small files)              */
#define BLI_JSON_MAX_TEXT (1u << 30)      /* 1 GB: the callers' caps are 100 MB at most */

/* One value. Only the fields of its type hold anything: the number's, the
 * string's and the container's share their storage (read a field only after
 * checking type; null, true and false hold zeros there). */
typedef struct bli_jv {
    union {
        struct {
            double num;    /* JNUM */
            int64_t ival;  /* JNUM with is_int */
        };
        struct {
            char *str;     /* JSTR: [len + 1] bytes */
            size_t len;
        };
        struct {
            struct bli_jv *items; /* JARR / JOBJ: [n] */
            size_t n;
        };
    };
    char *key;         /* member name when inside an object, else NULL */
    uint32_t key_len;
    uint8_t type;
    uint8_t is_int;    /* JNUM: integer literal that fits in int64 */
} bli_jv;

bli_jv *bli_jparse(const char *text, size_t len, char *err, size_t errlen);
void bli_jfree(bli_jv *v);                                  /* the value bli_jparse returned */
const bli_jv *bli_jget(const bli_jv *obj, const char *key); /* NULL unless obj is an object with key */
int bli_jtruthy(const bli_jv *v);                           /* Python's bool() of the value */

#endif
