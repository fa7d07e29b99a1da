/* fuzz_hftok.c — libFuzzer target for the tokenizer.json pipeline as users
 * feed it: a file loaded, then text encoded through it (make fuzz).
 *
 * Input: one option byte, then three sections ended by SEP below (the last
 * runs to the end):
 *   byte 0     bit 0: a pair (text B given); bits 1..7: max_tokens, from
 *              MAX_TOKENS[(b >> 1) % 8] (0: no truncation)
 *   sections   tokenizer.json, text A, text B
 * Seeds: tests/fuzz/hftok/ (tests/fuzz/make_seeds.py: every family's
 * tokenizer, its vocabulary cut short, with texts of several scripts).
 *
 * Invariants of every successful encoding, each a crash when broken (ASan
 * sees every read and write of the exact-size copies):
 *   - every id is below the vocabulary size and has a string or is an
 *     added token's;
 *   - type ids are >= 0; offsets lie inside their text's UTF-16 length,
 *     start <= end; word ids are >= -1;
 *   - n_a lies in [0, n]; with truncation on (and room for the specials),
 *     the text's tokens number at most max_tokens - specials, times the
 *     copies of a sequence a template may name (at most 4: tokenizers
 *     repeats the truncated sequence, reserving room for specials only);
 *   - a refusal says why (a non-empty message).
 * Time: libFuzzer's -timeout catches an input whose load or encoding does
 * not end (issue 31: budgets on what a file controls). */
#include "bertlens.h"
#include "text/hf_tokenizer.h"

#include <stdlib.h>
#include <string.h>

#define SEP "\n#%%#\n"
static const int32_t MAX_TOKENS[8] = {0, 0, 8, 16, 32, 128, 512, 3};

/* Exact-size copy of a section, NUL-terminated one past its end is not
 * guaranteed to the code under test: it gets (p, n) only. */
static char *dup_exact(const uint8_t *p, size_t n) {
    char *c = malloc(n ? n : 1);
    if (c && n) memcpy(c, p, n);
    return c;
}

/* UTF-16 length of valid UTF-8 (the encoder refuses invalid text first). */
static int64_t utf16_len(const uint8_t *p, size_t n) {
    int64_t u = 0;
    for (size_t i = 0; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80) u++;     /* a lead byte: one unit */
        if ((p[i] & 0xF8) == 0xF0) u++;     /* four bytes: a surrogate pair */
    }
    return u;
}

static void check(int ok) {
    if (!ok) __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    const uint8_t *sec[3] = {0};
    size_t len[3] = {0};
    const uint8_t *p = data + 1, *end = data + size;
    const size_t sl = sizeof SEP - 1;
    for (int i = 0; i < 3; i++) {
        const uint8_t *q = p;
        if (i < 2)
            while (q + sl <= end && memcmp(q, SEP, sl)) q++;
        if (i == 2 || q + sl > end) q = end;
        sec[i] = p;
        len[i] = (size_t)(q - p);
        p = q + sl <= end ? q + sl : end;
    }
    const int pair = data[0] & 1;
    const int32_t max_tokens = MAX_TOKENS[(data[0] >> 1) % 8];
    char err[512] = "";
    char *json = dup_exact(sec[0], len[0]);
    if (!json) return 0;
    bli_hftok *t = bli_hftok_load(json, len[0], err, sizeof err);
    free(json); /* the tokenizer keeps nothing of the file */
    if (!t) {
        check(err[0] != 0);
        return 0;
    }
    const int32_t V = bli_hftok_vocab_size(t);
    check(V > 0);
    char *a = dup_exact(sec[1], len[1]), *b = pair ? dup_exact(sec[2], len[2]) : NULL;
    bl_tokens tk;
    err[0] = 0;
    if (a && (!pair || b)) {
        if (bli_hftok_encode(t, a, len[1], b, pair ? len[2] : 0, max_tokens, &tk, err, sizeof err) == 0) {
            const int64_t ua = utf16_len(sec[1], len[1]), ub = pair ? utf16_len(sec[2], len[2]) : 0;
            check(tk.n >= 0 && tk.n_a >= 0 && tk.n_a <= tk.n);
            for (int32_t i = 0; i < tk.n; i++) {
                check(tk.ids[i] >= 0 && tk.ids[i] < V);
                (void)bli_hftok_token_str(t, tk.ids[i]); /* may be NULL: an added token over a model id */
                check(tk.type_ids[i] >= 0 && tk.word_ids[i] >= -1);
                const int64_t lim = i < tk.n_a ? ua : (ua > ub ? ua : ub);
                check(tk.offsets[2 * i] >= 0 && tk.offsets[2 * i] <= tk.offsets[2 * i + 1] &&
                      tk.offsets[2 * i + 1] <= lim);
            }
            int32_t spec = 0; /* the post-processor's tokens (word id -1) */
            for (int32_t i = 0; i < tk.n; i++) spec += tk.word_ids[i] < 0;
            /* tokenizers subtracts the specials unsigned: more specials than the limit is no limit */
            check(max_tokens <= 0 || spec > max_tokens || tk.n - spec <= 4 * (max_tokens - spec));
            bl_tokens_free(&tk);
        } else {
            check(err[0] != 0);
        }
    }
    free(a);
    free(b);
    /* the other queries a caller makes of a loaded file */
    (void)bli_hftok_kind(t);
    (void)bli_hftok_pieces(t);
    (void)bli_hftok_is_special(t, 0);
    if (len[1]) (void)bli_hftok_token_id(t, (const char *)sec[1], len[1] < 64 ? len[1] : 64);
    bli_hftok_free(t);
    return 0;
}
