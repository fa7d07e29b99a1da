/* corpus.h — what each head does over many inputs (issue 25): bl_analyze's
 * per-head features averaged over a stream of inputs, the share of inputs in
 * each pattern class, and each head's N strongest links over the whole
 * stream. Memory is fixed when the accumulator is made (L x H heads, N links
 * each): it does not grow with the number of inputs.
 *
 * One input, after its bl_forward: bl_analyze (BL_ANALYZE_HEADS), then
 * bli_corpus_add_features with its heads and bli_corpus_add_links (the CLI,
 * cli_corpus.c, does exactly this).
 *
 * Per head, over the inputs given to bli_corpus_add_features:
 *   entropy, cls, sep, punct, prev, self, next   the mean of bl_analyze's
 *       figure (bertlens.h "analyses"); prev / next over the inputs that
 *       have them (every input of two tokens or more)
 *   class_fraction[k]   the share of inputs whose class is k (bl_head_class)
 * and over the links given to bli_corpus_add_links:
 *   top   the N largest weights a[query][key] with query != key and neither
 *         token [CLS] nor [SEP], most weight first; ties by the lower text
 *         index, then query, then key (so the list does not depend on the
 *         order the inputs arrive in, nor on how they were shared out).
 *
 * Threads: an accumulator is one caller's. To spread inputs over threads,
 * give each thread its own accumulator and state, and bli_corpus_merge them:
 * the top lists come out the same whatever the split; the means are sums in
 * double, identical when the features are added in the same order (the CLI
 * adds them in input order: cli_corpus.c).
 */
#ifndef BERTLENS_CORPUS_H
#define BERTLENS_CORPUS_H

#include "bertlens.h"
#include "text/json.h"

#define BL_CORPUS_MAX_TOP 10000 /* top_n above this is refused (72 heads x 10000 links: 29 MB) */

typedef struct bli_corpus bli_corpus;

typedef struct bli_corpus_link {
    float weight;             /* a[query][key] of the head                    */
    int32_t query, key;       /* positions in the input's tokens ([CLS] = 0)  */
    int32_t query_id, key_id; /* their vocabulary ids                         */
    int64_t text;             /* the input's index (orders ties)              */
    int64_t line;             /* the caller's tag for it (e.g. a line number) */
} bli_corpus_link;

typedef struct bli_corpus_head {
    double entropy, cls, sep, punct, prev, self, next; /* means over inputs (NaN: none) */
    double class_fraction[BL_CLASS_HETEROGENEOUS + 1]; /* by bl_head_class              */
} bli_corpus_head;

/* An empty accumulator for a model of n_layers x n_heads heads keeping
 * top_n links per head (0..BL_CORPUS_MAX_TOP). NULL with a reason. */
bli_corpus *bli_corpus_new(int32_t n_layers, int32_t n_heads, int32_t top_n, char *err, size_t errlen);
void bli_corpus_free(bli_corpus *c);

/* One input's features: heads [n_layers][n_heads] (bl_analysis.heads) of a
 * T-token input. Returns 0, or -1 for a NULL argument or T < 1. */
int bli_corpus_add_features(bli_corpus *c, const bl_head_features *heads, int32_t T);

/* One input's links: the attention of the last bl_forward of s (kept with
 * BL_KEEP_ATTN, the model's shape) on ids [T]; text orders ties, line is
 * carried along. Returns 0, or -1 with a reason. */
int bli_corpus_add_links(bli_corpus *c, const bl_state *s, const int32_t *ids, int64_t text, int64_t line, char *err,
                        size_t errlen);

/* Add everything from into `into` (same shape and top_n): its sums, counts
 * and links. Returns 0, or -1 when the shapes differ. */
int bli_corpus_merge(bli_corpus *into, const bli_corpus *from);

int64_t bli_corpus_texts(const bli_corpus *c);  /* inputs added by bli_corpus_add_features */
int64_t bli_corpus_tokens(const bli_corpus *c); /* their tokens, specials included          */

/* Means and class shares of head (layer, head); 0, or -1 out of range. */
int bli_corpus_head_summary(const bli_corpus *c, int32_t layer, int32_t head, bli_corpus_head *out);

/* The head's top links, best first, into out [top_n]; returns how many
 * (at most top_n), or -1 out of range. */
int32_t bli_corpus_top(const bli_corpus *c, int32_t layer, int32_t head, bli_corpus_link *out);

/* The lines a front end skipped (cli_corpus.c, wasm_corpus.c): every one
 * counted, the first BL_CORPUS_MAX_SKIPPED listed with their reasons, so
 * memory stays flat however many lines are bad (issue 31: 20 MB of empty
 * lines took 1.57 GB, a record kept per line). The JSON, the same from both:
 *   "skipped":[{"line":L,"reason":"..."},...],"skipped_lines":N
 * Zero-initialize; bli_corpus_skips_free releases it. */
#define BL_CORPUS_MAX_SKIPPED 10000
typedef struct bli_corpus_skips {
    bli_jbuf listed; /* the records so far, comma-separated */
    int64_t count;   /* every skipped line                  */
} bli_corpus_skips;

void bli_corpus_skip(bli_corpus_skips *s, int64_t line, const char *reason);
void bli_corpus_skips_json(const bli_corpus_skips *s, bli_jbuf *out);
void bli_corpus_skips_free(bli_corpus_skips *s);
int bli_corpus_skips_oom(const bli_corpus_skips *s); /* a record was lost to out of memory */

#endif
