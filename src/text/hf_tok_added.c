/* hf_tok_added.c — where added tokens start in a text: one Aho-Corasick
 * automaton per kind (tokenizer.json's added tokens matched on the raw text,
 * and the normalized ones on the normalized text), linear in the text.
 *
 * tokenizers finds added tokens with aho-corasick's leftmost-longest
 * iterator: from a position, the first place where a token starts, the
 * longest token there, then on from its end. All that needs is, for each
 * position i, the longest token that is a prefix of text[i..]. The automaton
 * holds the tokens' contents reversed and reads the text from its end: after
 * reading text[i..n) backwards, the tokens whose reversal ends there are the
 * tokens starting at i, and the longest of them is one lookup (best[], the
 * first token on the state's failure chain). Each character costs O(1)
 * amortized, so a text costs O(n) whatever the tokens (was: every token
 * compared at every position, 1,500 tokens of 64 characters: 5.3 s on
 * 100,000 characters).
 */
#include "hf_tok_added.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NO_CHILD (-1)

static uint32_t slot_of(uint64_t key, uint32_t n_slots) {
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdull;
    key ^= key >> 33;
    return (uint32_t)key & (n_slots - 1);
}

/* Child of node along character cp, or NO_CHILD. */
static int32_t child_of(const bli_hfac *a, int32_t node, uint32_t cp) {
    uint64_t key = ((uint64_t)node << 21 | cp) + 1; /* cp < 2^21; 0 marks an empty slot */
    for (uint32_t i = slot_of(key, a->n_slots);; i = (i + 1) & (a->n_slots - 1)) {
        if (a->key[i] == key) return a->child[i];
        if (!a->key[i]) return NO_CHILD;
    }
}

static void add_child(bli_hfac *a, int32_t node, uint32_t cp, int32_t child) {
    uint64_t key = ((uint64_t)node << 21 | cp) + 1;
    uint32_t i = slot_of(key, a->n_slots);
    while (a->key[i]) i = (i + 1) & (a->n_slots - 1);
    a->key[i] = key;
    a->child[i] = child;
}

void bli_hfac_free(bli_hfac *a) {
    free(a->fail);
    free(a->best);
    free(a->key);
    free(a->child);
    memset(a, 0, sizeof *a);
}

int bli_hfac_build(bli_hfac *a, const uint32_t *const *cps, const int32_t *lens, int32_t n_tokens) {
    memset(a, 0, sizeof *a);
    int64_t total = 1;
    for (int32_t k = 0; k < n_tokens; k++) total += lens[k] > 0 ? lens[k] : 0;
    if (total > (int64_t)HF_MAX_ADDED_CHARS + 1) return -1; /* the caller checks the limit first */
    uint32_t slots = 16;
    while (slots < 2 * (uint64_t)total) slots *= 2;
    int32_t *parent = malloc((size_t)total * sizeof *parent), *depth = malloc((size_t)total * sizeof *depth);
    int32_t *order = malloc((size_t)total * sizeof *order), *count = NULL;
    uint32_t *label = malloc((size_t)total * sizeof *label);
    a->fail = malloc((size_t)total * sizeof *a->fail);
    a->best = malloc((size_t)total * sizeof *a->best);
    a->key = calloc(slots, sizeof *a->key);
    a->child = malloc(slots * sizeof *a->child);
    a->n_slots = slots;
    int rc = -1;
    if (!parent || !depth || !order || !label || !a->fail || !a->best || !a->key || !a->child) goto done;
    /* the trie of the reversed contents; best[] first holds the token that
     * ends at a node (the first one listed, when two have the same content) */
    int32_t n = 1, max_depth = 0;
    parent[0] = -1, depth[0] = 0, label[0] = 0, a->best[0] = -1;
    for (int32_t k = 0; k < n_tokens; k++) {
        if (lens[k] <= 0) continue; /* an empty token matches nothing */
        int32_t node = 0;
        for (int32_t j = lens[k] - 1; j >= 0; j--) {
            int32_t c = child_of(a, node, cps[k][j]);
            if (c == NO_CHILD) {
                c = n++;
                parent[c] = node, depth[c] = depth[node] + 1, label[c] = cps[k][j], a->best[c] = -1;
                if (depth[c] > max_depth) max_depth = depth[c];
                add_child(a, node, cps[k][j], c);
            }
            node = c;
            if (cps[k][j] < 128) a->ascii[cps[k][j] >> 5] |= 1u << (cps[k][j] & 31);
            else a->high |= 1ull << (cps[k][j] & 63);
        }
        if (a->best[node] < 0) a->best[node] = k;
        const uint32_t c0 = cps[k][0];
        if (c0 < 128) a->first_ascii[c0 >> 5] |= 1u << (c0 & 31);
        else a->first_high |= 1ull << (c0 & 63);
    }
    a->n = n;
    for (uint32_t c = 0; c < 128; c++) a->root_ascii[c] = child_of(a, 0, c);
    /* failure links by increasing depth (a counting sort): a node's link is
     * its parent's link followed by its label, or shorter */
    count = calloc((size_t)max_depth + 2, sizeof *count);
    if (!count) goto done;
    for (int32_t v = 0; v < n; v++) count[depth[v] + 1]++;
    for (int32_t d = 1; d <= max_depth + 1; d++) count[d] += count[d - 1];
    for (int32_t v = 0; v < n; v++) order[count[depth[v]]++] = v;
    a->fail[0] = 0;
    for (int32_t i = 1; i < n; i++) {
        int32_t v = order[i], p = parent[v], f = 0;
        if (p != 0) {
            for (f = a->fail[p];; f = a->fail[f]) {
                int32_t c = child_of(a, f, label[v]);
                if (c != NO_CHILD) { f = c; break; }
                if (f == 0) break;
            }
        }
        a->fail[v] = f;
        /* the longest token ending here: this node's, else its link's */
        if (a->best[v] < 0) a->best[v] = a->best[f];
    }
    rc = 0;
done:
    free(parent);
    free(depth);
    free(order);
    free(label);
    free(count);
    if (rc) bli_hfac_free(a);
    return rc;
}

int bli_hfac_may_start(const bli_hfac *a, const bli_hfstr *s) {
    const uint32_t *f = a->first_ascii;
    if (!a->first_high && ((f[0] | f[1] | f[2] | f[3]) != 0)) {
        /* one ASCII character starts every token (BERT's '['): look for it alone */
        int bits = 0, only = 0;
        for (int w = 0; w < 4; w++)
            if (f[w]) bits += __builtin_popcount(f[w]), only = 32 * w + __builtin_ctz(f[w]);
        if (bits == 1) {
            for (int32_t i = 0; i < s->n; i++)
                if (s->c[i].cp == (uint32_t)only) return 1;
            return 0;
        }
    }
    for (int32_t i = 0; i < s->n; i++) {
        const uint32_t cp = s->c[i].cp;
        if (cp < 128 ? a->first_ascii[cp >> 5] >> (cp & 31) & 1 : a->first_high >> (cp & 63) & 1) return 1;
    }
    return 0;
}

void bli_hfac_starts(const bli_hfac *a, const bli_hfstr *s, int32_t *longest) {
    int32_t state = 0;
    for (int32_t i = s->n - 1; i >= 0; i--) {
        uint32_t cp = s->c[i].cp;
        /* most text, no walk: a character in no token leads back to the
         * root, an ASCII one at the root goes by the root's own table */
        const int in_tokens = cp < 128 ? a->ascii[cp >> 5] >> (cp & 31) & 1 : a->high >> (cp & 63) & 1;
        if (!in_tokens || (state == 0 && cp < 128)) {
            int32_t c = in_tokens ? a->root_ascii[cp] : NO_CHILD;
            state = c == NO_CHILD ? 0 : c;
            longest[i] = a->best[state];
            continue;
        }
        for (;;) {
            int32_t c = child_of(a, state, cp);
            if (c != NO_CHILD) { state = c; break; }
            if (state == 0) break;
            state = a->fail[state];
        }
        longest[i] = a->best[state];
    }
}
