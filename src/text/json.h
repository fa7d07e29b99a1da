/* json.h — the little JSON the front ends need: a growable output buffer
 * with string escaping, the tokenize and analysis result objects, and a
 * reader for the `tokenize --jsonl` input lines. Used by cli.c and
 * wasm_api.c; the engine's computing files format no JSON.
 */
#ifndef BERTLENS_JSON_H
#define BERTLENS_JSON_H

#include <stdio.h>
#include "bertlens.h"

typedef struct bli_jbuf {
    char *data;  /* [cap] NUL-terminated text written so far (len bytes) */
    size_t len, cap;
    int oom;     /* set when an allocation failed; text is then truncated */
} bli_jbuf;

void bli_jbuf_reset(bli_jbuf *b);   /* len = 0, keeps the memory */
void bli_jbuf_free(bli_jbuf *b);
void bli_json_raw(bli_jbuf *b, const char *s, size_t n);
void bli_json_int(bli_jbuf *b, long long v);
/* x as a JSON number, %.9g (round-trips an f32), or null when x is inf or
 * NaN (JSON has neither: a model whose weights overflow gives NaN, and the
 * output must stay JSON). buf: at least BLI_JSON_NUM_CHARS bytes; returns buf. */
#define BLI_JSON_NUM_CHARS 32
const char *bli_json_num(char *buf, double x);
/* s[0..n) as a quoted JSON string; bytes that are not valid UTF-8 become U+FFFD. */
void bli_json_string(bli_jbuf *b, const char *s, size_t n);
int bli_json_write_string(FILE *f, const char *s, size_t n); /* same, to a stream; 0 ok */
/* s[0..n) made safe to show on a terminal: C0 controls (newline and tab
 * too), DEL and bytes that are not valid UTF-8 become \xNN, the C1 controls
 * U+0080..U+009F \u00NN; printable ASCII and other valid UTF-8 are copied.
 * Everything a front end prints from a bundle or checkpoint passes here (or
 * through bli_json_string, which escapes the same controls). */
void bli_term_escape(bli_jbuf *b, const char *s, size_t n);
/* One line: fmt's whole output through bli_term_escape, then '\n'. 0 or -1. */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
int bli_term_line(FILE *f, const char *fmt, ...);

/* {"tokens":[...],"ids":[...],"type_ids":[...],"offsets":[[s,e],...],
 *  "word_ids":[... null for specials],"truncated":false[,"n_a":k]} */
void bli_json_tokens(bli_jbuf *b, const bl_tokenizer *t, const bl_tokens *toks, int with_n_a);
void bli_json_error(bli_jbuf *b, const char *msg); /* {"error":"..."} */

/* A bl_analysis (json_analysis.c), with ids the tokens it was run on:
 * {"tokens":[...],"pair":bool,
 *  "heads":[{"layer","head","entropy","cls","sep","punct","prev","self",
 *            "next","segment","confidence","class"}...],   (undefined: null)
 *  "rollout":[L][T][T],"rollout_norm":[L][T][T] | null}   (with_rollout only,
 *  and only when the analysis has a rollout) */
void bli_json_analysis(bli_jbuf *b, const bl_tokenizer *tk, const int32_t *ids, const bl_analysis *a, int with_rollout);

/* One `tokenize --jsonl` input line: a JSON string (text A), or an object
 * {"text": str, "text_pair": str|null, "max_length": int} (other keys are
 * ignored). *a and *b (NULL if no pair) are malloc'ed UTF-8, NUL-terminated;
 * *max_length is 0 when absent. Returns 0, or -1 with a reason. */
int bli_json_read_input(const char *line, size_t len, char **a, size_t *alen, char **b, size_t *blen,
                       int32_t *max_length, char *err, size_t errlen);

#endif
