/* json.h — the little JSON the front ends need: a growable output buffer
 * with string escaping, the tokenize result object, and a reader for the
 * `tokenize --jsonl` input lines. Used by cli.c and wasm_api.c.
 */
#ifndef BERTLENS_JSON_H
#define BERTLENS_JSON_H

#include <stdio.h>
#include "bertlens.h"

typedef struct bl_jbuf {
    char *data;  /* [cap] NUL-terminated text written so far (len bytes) */
    size_t len, cap;
    int oom;     /* set when an allocation failed; text is then truncated */
} bl_jbuf;

void bl_jbuf_reset(bl_jbuf *b);   /* len = 0, keeps the memory */
void bl_jbuf_free(bl_jbuf *b);
void bl_json_raw(bl_jbuf *b, const char *s, size_t n);
void bl_json_int(bl_jbuf *b, long long v);
/* s[0..n) as a quoted JSON string; bytes that are not valid UTF-8 become U+FFFD. */
void bl_json_string(bl_jbuf *b, const char *s, size_t n);
int bl_json_write_string(FILE *f, const char *s, size_t n); /* same, to a stream; 0 ok */

/* {"tokens":[...],"ids":[...],"type_ids":[...],"offsets":[[s,e],...],
 *  "word_ids":[... null for specials],"truncated":false[,"n_a":k]} */
void bl_json_tokens(bl_jbuf *b, const bl_tokenizer *t, const bl_tokens *toks, int with_n_a);
void bl_json_error(bl_jbuf *b, const char *msg); /* {"error":"..."} */

/* One `tokenize --jsonl` input line: a JSON string (text A), or an object
 * {"text": str, "text_pair": str|null, "max_length": int} (other keys are
 * ignored). *a and *b (NULL if no pair) are malloc'ed UTF-8, NUL-terminated;
 * *max_length is 0 when absent. Returns 0, or -1 with a reason. */
int bl_json_read_input(const char *line, size_t len, char **a, size_t *alen, char **b, size_t *blen,
                       int32_t *max_length, char *err, size_t errlen);

#endif
