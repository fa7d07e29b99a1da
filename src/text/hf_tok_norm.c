/* hf_tok_norm.c — normalized strings and the normalizers of tokenizer.json.
 *
 * Every normalizer rewrites a bli_hfstr through bli_hf_transform, which
 * reproduces tokenizers' NormalizedString::transform: a new character that
 * replaces an old one takes its alignment, an inserted one takes the
 * alignment of the old character before it. That rule alone decides every
 * offset the normalizers produce, quirks included (a Replace's content takes
 * the alignment of the LAST character of the match; Strip's right side
 * compares a character index with a byte length, as tokenizers does).
 */
#include "hf_tok_norm.h"
#include "base/error.h"
#include "unicode.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------- transform */

int bli_hf_transform(bli_hfstr *s, const bli_hfdests *d, int32_t initial, bli_hfstr *scratch) {
    if (bli_hfstr_reserve(scratch, d->n + 1)) return -1;
    int64_t oi = initial; /* next old character */
    int32_t z0 = s->n ? s->c[0].o0 : 0; /* tokenizers' (0, 0): the split's own start */
    for (int32_t k = 0; k < d->n; k++) {
        bli_hfch a;
        if (d->d[k].change > 0) {
            if (oi < 1) a.o0 = a.o1 = z0;
            else { int64_t p = oi - 1 < s->n ? oi - 1 : s->n - 1; a = s->c[p]; }
        } else {
            if (oi < s->n) a = s->c[oi];
            else if (s->n) a = s->c[s->n - 1];
            else a.o0 = a.o1 = z0;
            oi += 1;
            if (d->d[k].change < 0) oi -= d->d[k].change;
        }
        a.cp = d->d[k].cp;
        scratch->c[k] = a;
    }
    scratch->n = d->n;
    bli_hfstr t = *s;
    *s = *scratch;
    *scratch = t;
    return 0;
}

/* ------------------------------------------------- Unicode normal forms */

/* NFD / NFKD / NFC / NFKC of s as ONE transform, as tokenizers' alignments
 * crate reports it: each character's decomposition is (first piece, change
 * 0) then (piece, +1)...; canonical reordering moves each code point with
 * its change (U+0228 U+094D: E, U+094D, U+0327 stand for U+0228, U+094D,
 * U+094D); composing a mark into its starter adds the mark's change minus
 * one to the starter's. So a composite takes the alignment of whichever
 * original character its change reaches: "㎏" + U+0327 -> "k" "ģ", the ģ
 * stands for the cedilla. (tools: NormalizedString.slice in Python shows
 * these alignments character by character.) */
static int normal_form(bli_hfstr *s, bli_hfstr *scratch, int compat, int comp) {
    bli_hfdests d = {0};
    uint32_t dc[BL_UC_MAX_COMPAT];
    for (int32_t i = 0; i < s->n; i++) {
        int nd = compat ? bli_uc_decompose_compat(s->c[i].cp, dc) : bli_uc_decompose(s->c[i].cp, dc);
        for (int k = 0; k < nd; k++)
            if (bli_hfdests_push(&d, dc[k], k > 0)) goto oom;
    }
    for (int32_t i = 0; i < d.n;) {
        if (bli_uc_ccc(d.d[i].cp) == 0) { i++; continue; }
        int32_t j = i + 1;
        while (j < d.n && bli_uc_ccc(d.d[j].cp) != 0) j++;
        for (int32_t x = i + 1; x < j; x++) { /* stable insertion sort; a change moves with its code point */
            bli_hfdest c = d.d[x];
            int cc = bli_uc_ccc(c.cp);
            int32_t y = x;
            while (y > i && bli_uc_ccc(d.d[y - 1].cp) > cc) { d.d[y] = d.d[y - 1]; y--; }
            d.d[y] = c;
        }
        i = j;
    }
    if (comp) {
        int32_t n = 0, starter = -1, last_cc = 0;
        for (int32_t i = 0; i < d.n; i++) {
            bli_hfdest e = d.d[i];
            int cc = bli_uc_ccc(e.cp);
            if (starter >= 0) {
                uint32_t c = 0;
                if (starter == n - 1 || (last_cc != 0 && last_cc < cc)) c = bli_uc_compose(d.d[starter].cp, e.cp);
                if (c) {
                    d.d[starter].cp = c;
                    d.d[starter].change += e.change - 1;
                    continue;
                }
            }
            if (cc == 0) starter = n, last_cc = 0;
            else last_cc = cc;
            d.d[n++] = e;
        }
        d.n = n;
    }
    int rc = bli_hf_transform(s, &d, 0, scratch);
    free(d.d);
    return rc;
oom:
    free(d.d);
    return -1;
}

/* -------------------------------------------------------- normalizers */

static int strip_ws(bli_hfstr *s, int left, int right, bli_hfstr *scratch) {
    int32_t lead = 0, trail = 0;
    if (left) while (lead < s->n && bli_hf_is_ws(s->c[lead].cp)) lead++;
    if (right) while (trail < s->n - lead && bli_hf_is_ws(s->c[s->n - 1 - trail].cp)) trail++;
    if (!lead && !trail) return 0;
    int32_t bytes = bli_hfstr_utf8_len(s, 0, s->n); /* tokenizers compares an index with this */
    bli_hfdests d = {0};
    for (int32_t i = lead; i < s->n - trail; i++)
        if (bli_hfdests_push(&d, s->c[i].cp, i == bytes - trail - 1 ? -trail : 0)) { free(d.d); return -1; }
    int rc = bli_hf_transform(s, &d, lead, scratch);
    free(d.d);
    return rc;
}

/* Replace every match of the pattern by the content (-2: more than budget characters). */
static int replace(const bli_hfnorm *n, bli_hfstr *s, bli_hfstr *scratch, int64_t budget) {
    bli_hfspans sp = {0};
    if (bli_hfpat_find(&n->pat, s, &sp)) return -1;
    int64_t need = s->n;
    for (int32_t k = 0; k < sp.n; k++) if (sp.v[k].m) need += n->n_content - (sp.v[k].e - sp.v[k].s);
    if (need > budget) { free(sp.v); return -2; }
    if (bli_hfstr_reserve(scratch, need + 1)) { free(sp.v); return -1; }
    int32_t o = 0;
    int32_t z0 = s->n ? s->c[0].o0 : 0;
    for (int32_t k = 0; k < sp.n; k++) {
        const bli_hfspan *p = &sp.v[k];
        if (!p->m) {
            for (int32_t i = p->s; i < p->e; i++) scratch->c[o++] = s->c[i];
            continue;
        }
        bli_hfch a; /* the content takes the alignment of the match's last character */
        if (p->e >= 1) a = s->c[p->e - 1];
        else a.o0 = a.o1 = z0;
        for (int32_t i = 0; i < n->n_content; i++) {
            scratch->c[o] = a;
            scratch->c[o++].cp = n->content[i];
        }
    }
    free(sp.v);
    scratch->n = o;
    bli_hfstr t = *s;
    *s = *scratch;
    *scratch = t;
    return 0;
}

/* Map each character to 0..k characters that keep its alignment. */
static int map_chars(bli_hfstr *s, bli_hfstr *scratch, int (*f)(const bli_hfnorm *, uint32_t, uint32_t *),
                     const bli_hfnorm *n) {
    if (bli_hfstr_reserve(scratch, 3 * (int64_t)s->n + 1)) return -1;
    int32_t o = 0;
    for (int32_t i = 0; i < s->n; i++) {
        uint32_t out[3];
        int k = f(n, s->c[i].cp, out);
        for (int j = 0; j < k; j++) {
            scratch->c[o] = s->c[i];
            scratch->c[o++].cp = out[j];
        }
    }
    scratch->n = o;
    bli_hfstr t = *s;
    *s = *scratch;
    *scratch = t;
    return 0;
}

/* BERT's class of c, from the tokenizer's table when it has one */
static int bert_class(const bli_hfnorm *n, uint32_t c) {
    return n->bmp ? bli_hf_flags_some(n->bmp, c, 0) & HF_F_CLASS : bli_uc_class(c);
}

static int bert_clean(const bli_hfnorm *n, uint32_t c, uint32_t *out) {
    int k = bert_class(n, c);
    if (k == BL_UC_REMOVE) return 0;
    out[0] = k == BL_UC_SPACE ? ' ' : c;
    return 1;
}

static int bert_chinese(const bli_hfnorm *n, uint32_t c, uint32_t *out) {
    if (bert_class(n, c) != BL_UC_CJK) { out[0] = c; return 1; }
    out[0] = ' ', out[1] = c, out[2] = ' ';
    return 3;
}

static int drop_mn(const bli_hfnorm *n, uint32_t c, uint32_t *out) {
    if (bert_class(n, c) == BL_UC_MN) return 0;
    out[0] = c;
    return 1;
}

static int drop_marks(const bli_hfnorm *n, uint32_t c, uint32_t *out) {
    if (bli_uc_is_mark(c)) return 0;
    out[0] = c;
    return 1;
}

static int lower(const bli_hfnorm *n, uint32_t c, uint32_t *out) { return bli_uc_lower(c, out); }

static int prepend(const bli_hfnorm *n, bli_hfstr *s) {
    if (s->n == 0 || n->n_content == 0) return 0;
    if (bli_hfstr_reserve(s, (int64_t)s->n + n->n_content + 1)) return -1;
    memmove(s->c + n->n_content, s->c, (size_t)s->n * sizeof *s->c);
    for (int32_t i = 0; i < n->n_content; i++) {
        s->c[i] = s->c[n->n_content];
        s->c[i].cp = n->content[i];
    }
    s->n += n->n_content;
    return 0;
}

/* BertNormalizer without accent stripping (a cased BERT): no decomposition,
 * so no reordering and no mark; a character goes (a control), becomes a
 * space, gets spaces around it (CJK) or its lower case. Written in place,
 * behind the reading, while that fits (always for cased text without CJK);
 * from the first character that would overtake the reading, into scratch. */
static int bert_no_strip(const bli_hfnorm *n, bli_hfstr *s, bli_hfstr *scratch, int want) {
    const bli_hfbmp *bmp = n->bmp;
    const int clean = n->clean, chinese = n->chinese, lowercase = n->lowercase;
    enum { MOST = 2 + BL_UC_MAX_LOWER }; /* characters one makes */
    const int changes = (clean ? HF_B_CLEANED : 0) | (chinese ? HF_B_CJK : 0) | (lowercase ? HF_B_LOWER : 0);
    bli_hfch *in = s->c, *out = s->c;
    const int32_t len = s->n;
    int32_t o = 0;
    for (int32_t i = 0; i < len; i++) {
        const bli_hfch ch = in[i];
        uint32_t c = ch.cp, l[BL_UC_MAX_LOWER];
        if (c < 0x10000 && !(bmp->bert[c] & changes)) { /* stays as it is: most of a cased text */
            if (out != in && o == scratch->cap) {
                if (bli_hfstr_reserve(scratch, 2 * (int64_t)scratch->cap)) return -1;
                out = scratch->c;
            }
            if (out != in || o != i) out[o] = ch; /* where it was, or moved back */
            o++;
            continue;
        }
        const int f = bli_hf_flags_some(bmp, c, want), k = f & HF_F_CLASS;
        int nl = 0, pad = 0; /* nl: characters of a lower case in l (0: c alone) */
        if (clean && k == BL_UC_REMOVE) continue;
        if (clean && k == BL_UC_SPACE) {
            c = ' ';
        } else {
            pad = chinese && k == BL_UC_CJK;
            if (lowercase && (f & HF_F_LOWER)) {
                if (c < 0x10000 && bmp->lower[c]) c = bmp->lower[c];
                else nl = bli_uc_lower(c, l);
            }
        }
        const int made = 2 * pad + (nl ? nl : 1);
        if (out == in && o + made > i + 1) { /* would write over characters not read yet */
            if (bli_hfstr_reserve(scratch, (int64_t)len + MOST)) return -1;
            memcpy(scratch->c, in, (size_t)o * sizeof *in);
            out = scratch->c;
        }
        if (out != in && scratch->cap - o < MOST) {
            if (bli_hfstr_reserve(scratch, 2 * (int64_t)scratch->cap)) return -1;
            out = scratch->c;
        }
        if (pad) out[o++] = (bli_hfch){' ', ch.o0, ch.o1};
        if (!nl) out[o++] = (bli_hfch){c, ch.o0, ch.o1};
        for (int q = 0; q < nl; q++) out[o++] = (bli_hfch){l[q], ch.o0, ch.o1};
        if (pad) out[o++] = (bli_hfch){' ', ch.o0, ch.o1};
    }
    if (out == in) {
        s->n = o;
        return 0;
    }
    scratch->n = o;
    bli_hfstr t = *s;
    *s = *scratch;
    *scratch = t;
    return 0;
}

/* BertNormalizer in one pass, when that is the same as its steps one after
 * the other: each step maps every character to characters with its
 * alignment, except NFD's canonical reordering, which moves code points
 * between characters. So the pass stops (returns 1, nothing changed) at a
 * mark whose combining class is below the one before it (real text: almost
 * never), and the caller runs the steps. 0: done; -1: out of memory. */
static int bert_fused(const bli_hfnorm *n, bli_hfstr *s, bli_hfstr *scratch) {
    const bli_hfbmp *bmp = n->bmp;
    const int strip = n->strip_accents < 0 ? n->lowercase : n->strip_accents;
    enum { MOST = 3 * BL_UC_MAX_DECOMP * BL_UC_MAX_LOWER }; /* characters one makes */
    const int want = (strip ? HF_F_DECOMP | HF_F_CCC : 0) | (n->lowercase ? HF_F_LOWER : 0); /* flags read below */
    if (!strip) return bert_no_strip(n, s, scratch, want);
    int32_t i = 0, o = 0;
    if (bli_hfstr_reserve(scratch, (int64_t)s->n + MOST)) return -1;
    int last_cc = 0;
    for (; i < s->n; i++) {
        if (scratch->cap - o < MOST && bli_hfstr_reserve(scratch, 2 * (int64_t)scratch->cap)) return -1;
        const bli_hfch ch = s->c[i];
        if (ch.cp < 0x80) { /* ASCII: no CJK, no decomposition, no mark; A-Z the only capitals */
            const int k = bmp->flags[ch.cp] & HF_F_CLASS;
            uint32_t c = ch.cp;
            if (n->clean && k == BL_UC_REMOVE) continue;
            if (n->clean && k == BL_UC_SPACE) c = ' ';
            else if (n->lowercase && c - 'A' < 26u) c += 32;
            last_cc = 0;
            scratch->c[o++] = (bli_hfch){c, ch.o0, ch.o1};
            continue;
        }
        uint32_t piece[3] = {ch.cp, 0, 0};
        int f = bli_hf_flags_some(bmp, ch.cp, want), np = 1;
        if (n->clean && (f & HF_F_CLASS) == BL_UC_REMOVE) continue;
        if (n->clean && (f & HF_F_CLASS) == BL_UC_SPACE) piece[0] = ' ', f = bmp->flags[' '];
        if (n->chinese && (f & HF_F_CLASS) == BL_UC_CJK) piece[0] = ' ', piece[1] = ch.cp, piece[2] = ' ', np = 3;
        for (int p = 0; p < np; p++) {
            uint32_t d[BL_UC_MAX_DECOMP];
            int nd = 1;
            d[0] = piece[p];
            int fp = p == 0 && np == 1 ? f : bli_hf_flags_some(bmp, d[0], want);
            if (strip && (fp & HF_F_DECOMP)) nd = bli_hf_decompose_at(bmp, d[0], d);
            for (int k = 0; k < nd; k++) {
                int fk = nd == 1 ? fp : bli_hf_flags_some(bmp, d[k], want);
                if (strip) {
                    int cc = fk & HF_F_CCC ? bli_hf_ccc_at(bmp, d[k]) : 0;
                    if (cc && last_cc > cc) return 1; /* NFD would reorder */
                    last_cc = cc;
                    if ((fk & HF_F_CLASS) == BL_UC_MN) continue;
                }
                if (n->lowercase && (fk & HF_F_LOWER) && d[k] < 0x10000 && bmp->lower[d[k]]) {
                    scratch->c[o++] = (bli_hfch){bmp->lower[d[k]], ch.o0, ch.o1};
                } else if (n->lowercase && (fk & HF_F_LOWER)) {
                    uint32_t l[BL_UC_MAX_LOWER];
                    int nl = bli_uc_lower(d[k], l);
                    for (int q = 0; q < nl; q++) scratch->c[o++] = (bli_hfch){l[q], ch.o0, ch.o1};
                } else {
                    scratch->c[o++] = (bli_hfch){d[k], ch.o0, ch.o1};
                }
            }
        }
    }
    scratch->n = o;
    bli_hfstr t = *s;
    *s = *scratch;
    *scratch = t;
    return 0;
}

static int precompiled_apply(const bli_hfnorm *n, bli_hfstr *s, bli_hfstr *scratch, int64_t budget);
int32_t bli_hf_grapheme_end(const bli_hfstr *s, int32_t i);

/* One normalizer (a Sequence: each in turn); every step's output is held to
 * the budget, and a step that could allocate far past it checks before. */
static int norm_apply(const bli_hfnorm *n, bli_hfstr *s, bli_hfstr *scratch, int64_t budget) {
    switch (n->type) {
    case HF_N_SEQUENCE:
        for (int32_t i = 0; i < n->n_seq; i++) {
            int rc = norm_apply(&n->seq[i], s, scratch, budget);
            if (rc) return rc;
            if (s->n > budget) return -2;
        }
        return 0;
    case HF_N_BERT: {
        if (n->bmp) {
            int rc = bert_fused(n, s, scratch);
            if (rc <= 0) return rc;
        }
        if (n->clean && map_chars(s, scratch, bert_clean, n)) return -1;
        if (n->chinese && map_chars(s, scratch, bert_chinese, n)) return -1;
        int strip = n->strip_accents < 0 ? n->lowercase : n->strip_accents;
        if (strip && (normal_form(s, scratch, 0, 0) || map_chars(s, scratch, drop_mn, n))) return -1;
        if (n->lowercase && map_chars(s, scratch, lower, n)) return -1;
        return 0;
    }
    case HF_N_NFD: return normal_form(s, scratch, 0, 0);
    case HF_N_NFKD: return normal_form(s, scratch, 1, 0);
    case HF_N_NFC: return normal_form(s, scratch, 0, 1);
    case HF_N_NFKC: return normal_form(s, scratch, 1, 1);
    case HF_N_LOWERCASE: return map_chars(s, scratch, lower, n);
    case HF_N_STRIP_ACCENTS: return map_chars(s, scratch, drop_marks, n);
    case HF_N_STRIP: {
        if (n->left && n->right) return strip_ws(s, 1, 1, scratch);
        if (n->left && strip_ws(s, 1, 0, scratch)) return -1;
        if (n->right && strip_ws(s, 0, 1, scratch)) return -1;
        return 0;
    }
    case HF_N_REPLACE: return replace(n, s, scratch, budget);
    case HF_N_PREPEND: return (int64_t)s->n + n->n_content > budget ? -2 : prepend(n, s);
    case HF_N_PRECOMPILED: return precompiled_apply(n, s, scratch, budget);
    }
    return -1;
}

int bli_hfnorm_apply(const bli_hfnorm *n, bli_hfstr *s, bli_hfstr *scratch) {
    int64_t budget = (int64_t)HF_NORM_MAX_GROWTH * (s->n > 0 ? s->n : 1);
    int rc = norm_apply(n, s, scratch, budget);
    return rc ? rc : s->n > budget ? -2 : 0;
}

/* ------------------------------------------------------------- Precompiled
 *
 * SentencePiece's precompiled_charsmap (tokenizer.json carries it in base64):
 *   u32 LE  trie_bytes
 *   u32 LE  trie units [trie_bytes / 4]   a double-array trie over UTF-8 bytes
 *   bytes   replacement strings, each NUL-terminated
 * A unit packs: bits 0-7 label (bit 31 too, so a leaf never matches a byte),
 * bit 8 has-leaf, bit 9 offset scale (<< 8 when set), bits 10-30 offset; a
 * leaf unit's low 31 bits are a replacement's byte position. Looking a key up
 * walks pos ^= offset, pos ^= byte per byte; the FIRST (shortest) prefix with
 * a leaf gives the replacement, as sentencepiece and tokenizers do.
 */

static uint32_t unit_offset(uint32_t u) { return (u >> 10) << ((u & (1u << 9)) >> 6); }

/* Replacement for the shortest prefix of key[0, n) in the trie; its length in *rlen. */
static const char *charsmap_lookup(const bli_hfnorm *nm, const uint8_t *key, size_t n, size_t *rlen) {
    if (nm->trie_n == 0) return NULL;
    size_t pos = unit_offset(nm->trie[0]);
    for (size_t i = 0; i < n; i++) {
        if (key[i] == 0) return NULL;
        pos ^= key[i];
        if (pos >= nm->trie_n) return NULL;
        uint32_t u = nm->trie[pos];
        if ((u & ((1u << 31) | 0xFF)) != key[i]) return NULL;
        pos ^= unit_offset(u);
        if (pos >= nm->trie_n) return NULL;
        if ((u >> 8) & 1) {
            size_t v = nm->trie[pos] & ((1u << 31) - 1);
            if (v >= nm->repl_len) return NULL;
            const char *s = nm->repl + v;
            size_t k = 0;
            while (v + k < nm->repl_len && s[k]) k++;
            *rlen = k;
            return s;
        }
    }
    return NULL;
}

/* Replace old characters [i, j) of s by the UTF-8 string r, as tokenizers'
 * Precompiled does: every new character replaces one old character; extra
 * new ones are inserted, missing ones are removed with the last. */
static int precompiled_replace(bli_hfdests *d, int32_t n_old, const char *r, size_t rlen) {
    int32_t first = d->n;
    for (size_t i = 0; i < rlen;) {
        unsigned char b = (unsigned char)r[i];
        int len = b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
        uint32_t c = len == 1 ? b : len == 2 ? b & 0x1F : len == 3 ? b & 0x0F : b & 0x07;
        for (int j = 1; j < len && i + (size_t)j < rlen; j++) c = c << 6 | ((unsigned char)r[i + j] & 0x3F);
        if (bli_hfdests_push(d, c, 0)) return -1;
        i += (size_t)len;
    }
    int32_t n_new = d->n - first, diff = n_new - n_old;
    if (diff > 0) for (int32_t k = 0; k < diff; k++) d->d[d->n - 1 - k].change = 1;
    else if (diff < 0 && d->n > 0) d->d[d->n - 1].change += diff;
    return 0;
}

/* End of the extended grapheme cluster starting at character i (UAX #29's
 * rules GB3-GB13; GB9c, Indic conjuncts, is left out: those clusters are
 * three-byte characters, never under the 6 bytes the charsmap looks up whole). */
int32_t bli_hf_grapheme_end(const bli_hfstr *s, int32_t i) {
    int prev = bli_uc_gcb(s->c[i].cp);
    int pict = prev == BL_GCB_EXTPICT; /* inside ExtPict Extend* (ZWJ)? */
    int ri = prev == BL_GCB_RI;         /* regional indicators in a row */
    int32_t j = i + 1;
    for (; j < s->n; j++) {
        int cur = bli_uc_gcb(s->c[j].cp), join;
        if (prev == BL_GCB_CR && cur == BL_GCB_LF) join = 1;
        else if (prev == BL_GCB_CR || prev == BL_GCB_LF || prev == BL_GCB_CONTROL) join = 0;
        else if (cur == BL_GCB_CR || cur == BL_GCB_LF || cur == BL_GCB_CONTROL) join = 0;
        else if (prev == BL_GCB_L && (cur == BL_GCB_L || cur == BL_GCB_V || cur == BL_GCB_LV || cur == BL_GCB_LVT)) join = 1;
        else if ((prev == BL_GCB_LV || prev == BL_GCB_V) && (cur == BL_GCB_V || cur == BL_GCB_T)) join = 1;
        else if ((prev == BL_GCB_LVT || prev == BL_GCB_T) && cur == BL_GCB_T) join = 1;
        else if (cur == BL_GCB_EXTEND || cur == BL_GCB_ZWJ || cur == BL_GCB_SPACINGMARK) join = 1;
        else if (prev == BL_GCB_PREPEND) join = 1;
        else if (prev == BL_GCB_ZWJ && cur == BL_GCB_EXTPICT && pict) join = 1;
        else if (prev == BL_GCB_RI && cur == BL_GCB_RI && ri % 2 == 1) join = 1;
        else join = 0;
        if (!join) break;
        if (cur == BL_GCB_EXTPICT) pict = 1;
        else if (cur != BL_GCB_EXTEND && !(cur == BL_GCB_ZWJ && pict)) pict = 0;
        if (cur == BL_GCB_ZWJ && pict) pict = 1;
        ri = cur == BL_GCB_RI ? ri + 1 : 0;
        prev = cur;
    }
    return j;
}

static int precompiled_apply(const bli_hfnorm *nm, bli_hfstr *s, bli_hfstr *scratch, int64_t budget) {
    bli_hfdests d = {0};
    int modified = 0, rc = -1;
    char buf[64];
    for (int32_t i = 0; i < s->n;) {
        int32_t j = bli_hf_grapheme_end(s, i);
        /* a whole grapheme under 6 bytes first */
        size_t gl = 0;
        for (int32_t k = i; k < j && gl + 4 < sizeof buf; k++) gl += bli_hf_utf8_put(buf + gl, s->c[k].cp);
        size_t rlen;
        const char *r;
        if (gl < 6 && (r = charsmap_lookup(nm, (const uint8_t *)buf, gl, &rlen))) {
            modified = 1;
            if (precompiled_replace(&d, j - i, r, rlen)) goto done;
            if (d.n > budget) { rc = -2; goto done; }
            i = j;
            continue;
        }
        for (int32_t k = i; k < j; k++) {
            size_t cl = bli_hf_utf8_put(buf, s->c[k].cp);
            if ((r = charsmap_lookup(nm, (const uint8_t *)buf, cl, &rlen))) {
                modified = 1;
                if (precompiled_replace(&d, 1, r, rlen)) goto done;
                if (d.n > budget) { rc = -2; goto done; }
            } else if (bli_hfdests_push(&d, s->c[k].cp, 0)) {
                goto done;
            }
        }
        i = j;
    }
    rc = modified ? bli_hf_transform(s, &d, 0, scratch) : 0;
done:
    free(d.d);
    return rc;
}

/* ------------------------------------------------------- output bound
 *
 * How many times longer (in characters) a normalizer can make a text, found
 * from the file alone, so that load refuses one that could grow past
 * HF_NORM_MAX_GROWTH (bli_hfnorm_apply also stops there at run time). Each
 * component has a factor: the most characters it makes of one character of
 * its input (Replace: content / shortest match, Prepend: 1 + its length, a
 * charsmap: its longest replacement per character looked up); a Sequence
 * multiplies them. Multiplying worst cases would refuse real files (ALBERT's
 * NFKD x Lowercase x Precompiled: 18 x 2 x 18), so the bound follows what a
 * text can still hold at each step: after NFD (NFKD) no character has a
 * canonical (compatibility) decomposition, so a later NFD/NFC (NFKD/NFKC)
 * finds nothing to expand, Lowercase nothing to expand (its one expansion,
 * U+0130, decomposes), and a charsmap's keys holding such characters never
 * match. The Unicode facts this rests on are checked over every code point
 * by bli_hfnorm_facts (tests/hostile_tokenizer.test.mjs). */

enum { LV_ANY, LV_NFD, LV_NFKD }; /* what a text's characters are known to be */

static int char_level(uint32_t c) {
    uint32_t d[BL_UC_MAX_COMPAT];
    if (bli_uc_decompose_compat(c, d) == 1 && d[0] == c) return LV_NFKD; /* implies no canonical decomposition */
    if (bli_uc_decompose(c, d) == 1 && d[0] == c) return LV_NFD;
    return LV_ANY;
}

static int cps_level(const uint32_t *c, int32_t n, int lv) {
    for (int32_t i = 0; i < n && lv > LV_ANY; i++) {
        int l = char_level(c[i]);
        if (l < lv) lv = l;
    }
    return lv;
}

/* Code points of a charsmap replacement (read as precompiled_replace does). */
static int64_t repl_chars(const char *r, size_t len, int *lv) {
    int64_t n = 0;
    for (size_t i = 0; i < len;) {
        unsigned char b = (unsigned char)r[i];
        int k = b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
        uint32_t c = k == 1 ? b : k == 2 ? b & 0x1F : k == 3 ? b & 0x0F : b & 0x07;
        for (int j = 1; j < k && i + (size_t)j < len; j++) c = c << 6 | ((unsigned char)r[i + j] & 0x3F);
        if (lv) *lv = cps_level(&c, 1, *lv);
        n++;
        i += (size_t)k;
    }
    return n;
}

/* The charsmap's keys, walked as charsmap_lookup walks them: UTF-8 paths of
 * at most 5 bytes (the longest lookup), each ending at its first leaf. */
typedef struct {
    const bli_hfnorm *nm;
    int lv, out_lv;
    double ratio;
    int64_t steps; /* a crafted trie could share nodes between many paths: past
                      a budget of steps the walk gives up (see charsmap_growth) */
} cm_walk;

#define CM_WALK_STEPS 8000000

static int cm_visit(cm_walk *w, size_t pos, int depth, int chars, int need, uint32_t cp) {
    const bli_hfnorm *nm = w->nm;
    int lo = need ? 0x80 : 0x01, hi = need ? 0xBF : 0xF4;
    for (int b = lo; b <= hi; b++) {
        if (!need && b >= 0x80 && b < 0xC2) continue; /* no character starts so */
        if (++w->steps > CM_WALK_STEPS) return -1;
        size_t p = pos ^ (size_t)b;
        if (p >= nm->trie_n) continue;
        uint32_t u = nm->trie[p];
        if ((u & ((1u << 31) | 0xFF)) != (uint32_t)b) continue;
        size_t next = p ^ unit_offset(u);
        if (next >= nm->trie_n) continue;
        int need2 = need ? need - 1 : b < 0x80 ? 0 : b < 0xE0 ? 1 : b < 0xF0 ? 2 : 3;
        uint32_t cp2 = need ? cp << 6 | (uint32_t)(b & 0x3F) : (uint32_t)(b < 0x80 ? b : b < 0xE0 ? b & 0x1F : b < 0xF0 ? b & 0x0F : b & 0x07);
        int chars2 = chars;
        if (need2 == 0) {
            if (char_level(cp2) < w->lv) continue; /* the text holds no such character */
            chars2++;
        }
        if ((u >> 8) & 1) { /* a leaf: the lookup ends here, whatever follows */
            size_t v = nm->trie[next] & ((1u << 31) - 1);
            if (v >= nm->repl_len) continue; /* no replacement: the lookup fails */
            size_t k = 0;
            while (v + k < nm->repl_len && nm->repl[v + k]) k++;
            double r = (double)repl_chars(nm->repl + v, k, &w->out_lv);
            int replaced = chars2 + (need2 > 0); /* a lookup holds every character it touches */
            if (r / replaced > w->ratio) w->ratio = r / replaced;
            continue;
        }
        if (depth + 1 < 5 && cm_visit(w, next, depth + 1, chars2, need2, cp2)) return -1;
    }
    return 0;
}

/* A charsmap's factor for a text at level *lv, and the level after it. */
static double charsmap_growth(const bli_hfnorm *nm, int *lv) {
    if (nm->trie_n == 0) return 1;
    cm_walk w = {nm, *lv, *lv, 1, 0};
    if (cm_visit(&w, unit_offset(nm->trie[0]), 0, 0, 0, 0) == 0) {
        *lv = w.out_lv;
        return w.ratio;
    }
    /* too many paths: every replacement may replace one character */
    double r = 1;
    for (size_t v = 0; v < nm->repl_len;) {
        size_t k = 0;
        while (v + k < nm->repl_len && nm->repl[v + k]) k++;
        double c = (double)repl_chars(nm->repl + v, k, NULL);
        if (c > r) r = c;
        v += k + 1;
    }
    *lv = LV_ANY;
    return r;
}

static double growth(const bli_hfnorm *n, int *lv) {
    double f = 1;
    switch (n->type) {
    case HF_N_SEQUENCE:
        for (int32_t i = 0; i < n->n_seq; i++) f *= growth(&n->seq[i], lv);
        return f;
    case HF_N_BERT: { /* clean-up (at most 1), Chinese padding (3), accents (NFD), lower-casing */
        if (n->chinese) f *= 3;
        if (n->strip_accents < 0 ? n->lowercase : n->strip_accents) {
            if (*lv < LV_NFD) f *= BL_UC_MAX_DECOMP, *lv = LV_NFD;
        }
        if (n->lowercase && *lv < LV_NFD) f *= BL_UC_MAX_LOWER;
        return f;
    }
    case HF_N_NFD:
        if (*lv >= LV_NFD) return 1;
        *lv = LV_NFD;
        return BL_UC_MAX_DECOMP;
    case HF_N_NFKD:
        f = *lv == LV_NFKD ? 1 : BL_UC_MAX_COMPAT;
        *lv = LV_NFKD;
        return f;
    case HF_N_NFC: /* decomposes, then only composes: at most NFD's length */
        f = *lv >= LV_NFD ? 1 : BL_UC_MAX_DECOMP;
        *lv = LV_ANY;
        return f;
    case HF_N_NFKC:
        f = *lv == LV_NFKD ? 1 : BL_UC_MAX_COMPAT;
        *lv = LV_ANY;
        return f;
    case HF_N_LOWERCASE: return *lv >= LV_NFD ? 1 : BL_UC_MAX_LOWER;
    case HF_N_STRIP_ACCENTS:
    case HF_N_STRIP: return 1;
    case HF_N_REPLACE: {
        int32_t m = bli_hfpat_min_len(&n->pat);
        *lv = cps_level(n->content, n->n_content, *lv);
        return n->n_content > m ? (double)n->n_content / m : 1;
    }
    case HF_N_PREPEND: /* adds its content to a non-empty string of at least one character */
        *lv = cps_level(n->content, n->n_content, *lv);
        return 1.0 + n->n_content;
    case HF_N_PRECOMPILED: return charsmap_growth(n, lv);
    }
    return 1;
}

double bli_hfnorm_growth(const bli_hfnorm *n) {
    int lv = LV_ANY;
    return growth(n, &lv);
}

/* The Unicode facts growth() rests on, over every code point: the tables'
 * longest decompositions and lower-case mapping are the constants it uses;
 * a decomposition's characters decompose no further; a character lower-cases
 * to more than one only if it has a canonical decomposition; lower-casing
 * keeps a character's level. */
int bli_hfnorm_facts(char *err, size_t errlen) {
    for (uint32_t c = 0; c < 0x110000; c++) {
        if (c >= 0xD800 && c < 0xE000) continue;
        uint32_t d[BL_UC_MAX_COMPAT], l[BL_UC_MAX_LOWER];
        int lv = char_level(c);
        int nd = bli_uc_decompose(c, d);
        for (int k = 0; k < nd; k++)
            if (char_level(d[k]) < LV_NFD) { bli_set_err(err, errlen, "U+%04X: NFD gives U+%04X, which decomposes", c, d[k]); return -1; }
        int nk = bli_uc_decompose_compat(c, d);
        for (int k = 0; k < nk; k++)
            if (char_level(d[k]) < LV_NFKD) { bli_set_err(err, errlen, "U+%04X: NFKD gives U+%04X, which decomposes", c, d[k]); return -1; }
        int nl = bli_uc_lower(c, l);
        if (nd > BL_UC_MAX_DECOMP || nk > BL_UC_MAX_COMPAT || nl > BL_UC_MAX_LOWER || nd < 1 || nk < 1 || nl < 1) {
            bli_set_err(err, errlen, "U+%04X: mappings of %d, %d, %d characters", c, nd, nk, nl);
            return -1;
        }
        if (nl > 1 && lv >= LV_NFD) { bli_set_err(err, errlen, "U+%04X lower-cases to %d characters and has no canonical decomposition", c, nl); return -1; }
        for (int k = 0; k < nl; k++)
            if (char_level(l[k]) < lv) { bli_set_err(err, errlen, "U+%04X lower-cases to U+%04X of a lower level", c, l[k]); return -1; }
    }
    return 0;
}

/* ------------------------------------------------------------- reader */

static int b64_value(int c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

static int read_precompiled(bli_hfnorm *n, const bli_jv *j, char *err, size_t errlen) {
    const bli_jv *b = bli_jget(j, "precompiled_charsmap");
    if (!b || b->type == BLI_JNULL) return 0; /* an empty charsmap changes nothing */
    if (b->type != BLI_JSTR) goto bad;
    n->charsmap = malloc(b->len / 4 * 3 + 4);
    if (!n->charsmap) { bli_set_err(err, errlen, "out of memory"); return -1; }
    size_t o = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < b->len; i++) {
        int c = (unsigned char)b->str[i];
        if (c == '=') break;
        int v = b64_value(c);
        if (v < 0) goto bad;
        acc = acc << 6 | (uint32_t)v;
        bits += 6;
        if (bits >= 8) { bits -= 8; n->charsmap[o++] = (uint8_t)(acc >> bits); }
    }
    n->charsmap_len = o;
    if (o == 0) return 0;
    if (o < 4) goto bad;
    uint32_t tb = (uint32_t)n->charsmap[0] | (uint32_t)n->charsmap[1] << 8 | (uint32_t)n->charsmap[2] << 16 |
                  (uint32_t)n->charsmap[3] << 24;
    if ((uint64_t)tb + 4 > o || tb % 4) goto bad;
    n->trie_n = tb / 4;
    uint32_t *units = malloc((n->trie_n + 1) * sizeof *units);
    if (!units) { bli_set_err(err, errlen, "out of memory"); return -1; }
    for (size_t k = 0; k < n->trie_n; k++) {
        const uint8_t *p = n->charsmap + 4 + 4 * k;
        units[k] = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    }
    n->trie = units;
    n->repl = (const char *)n->charsmap + 4 + tb;
    n->repl_len = o - 4 - tb;
    return 0;
bad:
    bli_set_err(err, errlen, "tokenizer.json: precompiled_charsmap is not a valid base64 charsmap");
    return -1;
}

static int read_cps(const bli_jv *v, uint32_t **out, int32_t *n) {
    *out = malloc((v->len + 1) * sizeof **out);
    if (!*out) return -1;
    int32_t k = 0;
    for (size_t i = 0; i < v->len;) {
        unsigned char b = (unsigned char)v->str[i];
        int len = b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
        uint32_t c = len == 1 ? b : len == 2 ? b & 0x1F : len == 3 ? b & 0x0F : b & 0x07;
        for (int j = 1; j < len && i + (size_t)j < v->len; j++) c = c << 6 | ((unsigned char)v->str[i + j] & 0x3F);
        (*out)[k++] = c;
        i += (size_t)len;
    }
    *n = k;
    return 0;
}

static int jbool(const bli_jv *j, const char *key, int dflt) {
    const bli_jv *v = bli_jget(j, key);
    return v && (v->type == BLI_JTRUE || v->type == BLI_JFALSE) ? v->type == BLI_JTRUE : dflt;
}

int bli_hfnorm_read(bli_hfnorm *n, const bli_jv *j, char *err, size_t errlen) {
    memset(n, 0, sizeof *n);
    const bli_jv *t = bli_jget(j, "type");
    if (!t || t->type != BLI_JSTR) { bli_set_err(err, errlen, "tokenizer.json: normalizer without a type"); return -1; }
    const char *ty = t->str;
    static const struct { const char *name; int type; } plain[] = {
        {"NFC", HF_N_NFC}, {"NFD", HF_N_NFD}, {"NFKC", HF_N_NFKC}, {"NFKD", HF_N_NFKD},
        {"Lowercase", HF_N_LOWERCASE}, {"StripAccents", HF_N_STRIP_ACCENTS},
    };
    for (size_t k = 0; k < sizeof plain / sizeof plain[0]; k++)
        if (!strcmp(ty, plain[k].name)) { n->type = plain[k].type; return 0; }
    if (!strcmp(ty, "Sequence")) {
        const bli_jv *s = bli_jget(j, "normalizers");
        if (!s || s->type != BLI_JARR) { bli_set_err(err, errlen, "tokenizer.json: Sequence without normalizers"); return -1; }
        n->type = HF_N_SEQUENCE;
        n->seq = calloc(s->n ? s->n : 1, sizeof *n->seq);
        if (!n->seq) { bli_set_err(err, errlen, "out of memory"); return -1; }
        for (size_t k = 0; k < s->n; k++) /* counted first: a half-read child is freed too */
            if (n->n_seq++, bli_hfnorm_read(&n->seq[k], &s->items[k], err, errlen)) return -1;
        return 0;
    }
    if (!strcmp(ty, "BertNormalizer")) {
        n->type = HF_N_BERT;
        n->clean = jbool(j, "clean_text", 1);
        n->chinese = jbool(j, "handle_chinese_chars", 1);
        n->lowercase = jbool(j, "lowercase", 1);
        n->strip_accents = jbool(j, "strip_accents", -1);
        return 0;
    }
    if (!strcmp(ty, "Strip")) {
        n->type = HF_N_STRIP;
        n->left = jbool(j, "strip_left", 1);
        n->right = jbool(j, "strip_right", 1);
        return 0;
    }
    if (!strcmp(ty, "Replace") || !strcmp(ty, "Prepend")) {
        int rep = ty[0] == 'R';
        n->type = rep ? HF_N_REPLACE : HF_N_PREPEND;
        const bli_jv *c = bli_jget(j, rep ? "content" : "prepend");
        if (!c || c->type != BLI_JSTR) { bli_set_err(err, errlen, "tokenizer.json: %s without its string", ty); return -1; }
        if (read_cps(c, &n->content, &n->n_content)) { bli_set_err(err, errlen, "out of memory"); return -1; }
        if (rep) {
            const bli_jv *p = bli_jget(j, "pattern");
            if (!p) { bli_set_err(err, errlen, "tokenizer.json: Replace without a pattern"); return -1; }
            return bli_hfpat_read(&n->pat, p, err, errlen);
        }
        return 0;
    }
    if (!strcmp(ty, "Precompiled")) {
        n->type = HF_N_PRECOMPILED;
        return read_precompiled(n, j, err, errlen);
    }
    bli_set_err(err, errlen, "tokenizer.json: normalizer %.60s is not supported", ty);
    return -1;
}

void bli_hfnorm_free(bli_hfnorm *n) {
    for (int32_t k = 0; k < n->n_seq; k++) bli_hfnorm_free(&n->seq[k]);
    free(n->seq);
    bli_hfpat_free(&n->pat);
    free(n->content);
    free(n->charsmap);
    free((void *)n->trie);
    memset(n, 0, sizeof *n);
}
