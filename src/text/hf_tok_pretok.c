/* hf_tok_pretok.c — the pre-tokenizers of tokenizer.json (ByteLevel,
 * Metaspace, Bert, Whitespace, WhitespaceSplit, Punctuation, Digits,
 * Split, Sequence) and the splits they produce; the split patterns they
 * match are in hf_tok_pattern.c.
 */
#include "hf_tok_pretok.h"
#include "base/error.h"
#include "unicode.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>


/* GPT-2's byte-to-unicode table: printable bytes (33-126, 161-172, 174-255)
 * stand for themselves, the others for 256 + their rank. */
static const uint16_t byte_char[256] = {
    256, 257, 258, 259, 260, 261, 262, 263, 264, 265, 266, 267, 268, 269, 270, 271,
    272, 273, 274, 275, 276, 277, 278, 279, 280, 281, 282, 283, 284, 285, 286, 287,
    288, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47,
    48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63,
    64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79,
    80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95,
    96, 97, 98, 99, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111,
    112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122, 123, 124, 125, 126, 289,
    290, 291, 292, 293, 294, 295, 296, 297, 298, 299, 300, 301, 302, 303, 304, 305,
    306, 307, 308, 309, 310, 311, 312, 313, 314, 315, 316, 317, 318, 319, 320, 321,
    322, 161, 162, 163, 164, 165, 166, 167, 168, 169, 170, 171, 172, 323, 174, 175,
    176, 177, 178, 179, 180, 181, 182, 183, 184, 185, 186, 187, 188, 189, 190, 191,
    192, 193, 194, 195, 196, 197, 198, 199, 200, 201, 202, 203, 204, 205, 206, 207,
    208, 209, 210, 211, 212, 213, 214, 215, 216, 217, 218, 219, 220, 221, 222, 223,
    224, 225, 226, 227, 228, 229, 230, 231, 232, 233, 234, 235, 236, 237, 238, 239,
    240, 241, 242, 243, 244, 245, 246, 247, 248, 249, 250, 251, 252, 253, 254, 255,
};

/* --------------------------------------------------------------- splits */

void bli_hfsplits_free(bli_hfsplits *l) {
    free(l->v);
    bli_hfstr_free(&l->pool);
    memset(l, 0, sizeof *l);
}

void bli_hfsplits_clear(bli_hfsplits *l) {
    l->n = 0;
    l->pool.n = 0;
}

static int splits_room(bli_hfsplits *l) {
    if (l->n < l->cap) return 0;
    int32_t cap = l->cap ? 2 * l->cap : 16;
    if (cap > INT32_MAX / 64 || (size_t)cap > SIZE_MAX / sizeof *l->v) return -1;
    bli_hfsplit *v = realloc(l->v, (size_t)cap * sizeof *v);
    if (!v) return -1;
    l->v = v;
    l->cap = cap;
    return 0;
}

int bli_hfsplits_push(bli_hfsplits *l, const bli_hfch *c, int32_t n, int32_t added_id) {
    if (splits_room(l) || bli_hfstr_reserve(&l->pool, (int64_t)l->pool.n + n + 1)) return -1;
    if (n > 0) memcpy(l->pool.c + l->pool.n, c, (size_t)n * sizeof *c);
    l->v[l->n++] = (bli_hfsplit){l->pool.n, n, added_id};
    l->pool.n += n;
    return 0;
}

int bli_hfsplits_take(bli_hfsplits *l, bli_hfstr *s, int32_t added_id) {
    if (l->n > 0 || l->pool.n > 0) return bli_hfsplits_push(l, s->c, s->n, added_id);
    if (splits_room(l)) return -1;
    bli_hfstr old = l->pool;
    l->pool = *s;
    *s = old;
    s->n = 0;
    l->v[l->n++] = (bli_hfsplit){0, l->pool.n, added_id};
    return 0;
}

static int push_piece(const bli_hfstr *s, int32_t a, int32_t b, bli_hfsplits *out) {
    return b <= a ? 0 : bli_hfsplits_push(out, s->c + a, b - a, -1);
}

int bli_hf_split_by(const bli_hfstr *s, const bli_hfspans *sp, int behavior, bli_hfsplits *out) {
    const bli_hfspan *v = sp->v;
    int32_t n = sp->n;
    switch (behavior) {
    case HF_B_REMOVED:
        for (int32_t k = 0; k < n; k++) if (!v[k].m && push_piece(s, v[k].s, v[k].e, out)) return -1;
        return 0;
    case HF_B_ISOLATED:
        for (int32_t k = 0; k < n; k++) if (push_piece(s, v[k].s, v[k].e, out)) return -1;
        return 0;
    case HF_B_CONTIGUOUS:
    case HF_B_MERGED_PREV: {
        int32_t a = -1, b = -1, prev = 0;
        for (int32_t k = 0; k < n; k++) {
            int join = behavior == HF_B_CONTIGUOUS ? v[k].m == prev : (v[k].m && !prev);
            if (join && a >= 0) b = v[k].e;
            else {
                if (a >= 0 && push_piece(s, a, b, out)) return -1;
                a = v[k].s, b = v[k].e;
            }
            prev = v[k].m;
        }
        return a >= 0 ? push_piece(s, a, b, out) : 0;
    }
    case HF_B_MERGED_NEXT: {
        /* right to left: a match joins the piece after it */
        int32_t *st = malloc(((size_t)n + 1) * 2 * sizeof *st);
        if (!st) return -1;
        int32_t m = 0, prev = 0;
        for (int32_t k = n - 1; k >= 0; k--) {
            if (v[k].m && !prev && m > 0) st[2 * (m - 1)] = v[k].s;
            else st[2 * m] = v[k].s, st[2 * m + 1] = v[k].e, m++;
            prev = v[k].m;
        }
        int rc = 0;
        for (int32_t k = m - 1; k >= 0 && !rc; k--) rc = push_piece(s, st[2 * k], st[2 * k + 1], out);
        free(st);
        return rc;
    }
    }
    return -1;
}

/* ------------------------------------------------------ pre-tokenizers */

static int read_behavior(const bli_jv *j, int dflt, int *out, char *err, size_t errlen) {
    const bli_jv *b = bli_jget(j, "behavior");
    *out = dflt;
    if (!b || b->type == BLI_JNULL) return 0;
    static const char *names[] = {"Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"};
    for (int k = 0; k < 5; k++)
        if (b->type == BLI_JSTR && !strcmp(b->str, names[k])) { *out = k; return 0; }
    bli_set_err(err, errlen, "tokenizer.json: unknown split behavior");
    return -1;
}

static int flag(const bli_jv *j, const char *key, int dflt) {
    const bli_jv *v = bli_jget(j, key);
    return v && (v->type == BLI_JTRUE || v->type == BLI_JFALSE) ? v->type == BLI_JTRUE : dflt;
}

int bli_hfpretok_read(bli_hfpretok *p, const bli_jv *j, char *err, size_t errlen) {
    memset(p, 0, sizeof *p);
    const bli_jv *t = bli_jget(j, "type");
    if (!t || t->type != BLI_JSTR) { bli_set_err(err, errlen, "tokenizer.json: pre_tokenizer without a type"); return -1; }
    const char *ty = t->str;
    if (!strcmp(ty, "Sequence")) {
        const bli_jv *s = bli_jget(j, "pretokenizers");
        if (!s || s->type != BLI_JARR) { bli_set_err(err, errlen, "tokenizer.json: Sequence without pretokenizers"); return -1; }
        p->type = HF_PT_SEQUENCE;
        p->seq = calloc(s->n ? s->n : 1, sizeof *p->seq);
        if (!p->seq) { bli_set_err(err, errlen, "out of memory"); return -1; }
        for (size_t k = 0; k < s->n; k++) /* counted first: a half-read child is freed too */
            if (p->n_seq++, bli_hfpretok_read(&p->seq[k], &s->items[k], err, errlen)) return -1;
        return 0;
    }
    if (!strcmp(ty, "BertPreTokenizer")) { p->type = HF_PT_BERT; return 0; }
    if (!strcmp(ty, "WhitespaceSplit")) { p->type = HF_PT_WHITESPACE_SPLIT; return 0; }
    if (!strcmp(ty, "Whitespace")) { p->type = HF_PT_WHITESPACE; p->pat.kind = HF_PAT_RE_WORD_OR_PUNCT; return 0; }
    if (!strcmp(ty, "ByteLevel")) {
        p->type = HF_PT_BYTELEVEL;
        p->add_prefix_space = flag(j, "add_prefix_space", 1);
        p->use_regex = flag(j, "use_regex", 1);
        return 0;
    }
    if (!strcmp(ty, "Metaspace")) {
        p->type = HF_PT_METASPACE;
        const bli_jv *r = bli_jget(j, "replacement"), *ps = bli_jget(j, "prepend_scheme");
        uint32_t *cps = NULL;
        int32_t n = 0;
        if (!r || r->type != BLI_JSTR || bli_hf_utf8_to_cps(r->str, r->len, &cps, &n) || n != 1) {
            free(cps);
            bli_set_err(err, errlen, "tokenizer.json: Metaspace replacement must be one character");
            return -1;
        }
        p->replacement = cps[0];
        free(cps);
        p->split = flag(j, "split", 1);
        p->prepend_scheme = HF_PREPEND_ALWAYS;
        if (ps && ps->type == BLI_JSTR) {
            if (!strcmp(ps->str, "first")) p->prepend_scheme = HF_PREPEND_FIRST;
            else if (!strcmp(ps->str, "never")) p->prepend_scheme = HF_PREPEND_NEVER;
            else if (strcmp(ps->str, "always")) { bli_set_err(err, errlen, "tokenizer.json: unknown prepend_scheme"); return -1; }
        } else if (!flag(j, "add_prefix_space", 1)) {
            p->prepend_scheme = HF_PREPEND_NEVER; /* files from before prepend_scheme */
        }
        return 0;
    }
    if (!strcmp(ty, "Punctuation")) { p->type = HF_PT_PUNCTUATION; return read_behavior(j, HF_B_ISOLATED, &p->behavior, err, errlen); }
    if (!strcmp(ty, "Digits")) { p->type = HF_PT_DIGITS; p->individual_digits = flag(j, "individual_digits", 0); return 0; }
    if (!strcmp(ty, "Split")) {
        p->type = HF_PT_SPLIT;
        p->invert = flag(j, "invert", 0);
        const bli_jv *pat = bli_jget(j, "pattern");
        if (!pat || bli_hfpat_read(&p->pat, pat, err, errlen)) {
            if (!pat) bli_set_err(err, errlen, "tokenizer.json: Split without a pattern");
            return -1;
        }
        return read_behavior(j, HF_B_REMOVED, &p->behavior, err, errlen);
    }
    bli_set_err(err, errlen, "tokenizer.json: pre-tokenizer %.60s is not supported", ty);
    return -1;
}

void bli_hfpretok_free(bli_hfpretok *p) {
    for (int32_t k = 0; k < p->n_seq; k++) bli_hfpretok_free(&p->seq[k]);
    free(p->seq);
    bli_hfpat_free(&p->pat);
    memset(p, 0, sizeof *p);
}

/* Prepend characters with the first character's alignment (tokenizers' prepend). */
static int prepend_char(bli_hfstr *s, uint32_t cp) {
    if (s->n == 0) return 0;
    if (bli_hfstr_reserve(s, (int64_t)s->n + 2)) return -1;
    memmove(s->c + 1, s->c, (size_t)s->n * sizeof *s->c);
    s->c[0] = s->c[1];
    s->c[0].cp = cp;
    s->n++;
    return 0;
}

/* In pieces [first, out->n) of out (the last ones, their characters the end
 * of its pool), each character becomes the GPT-2 characters of its UTF-8
 * bytes, all with its alignment. */
static int bytes_to_chars(bli_hfsplits *out, int32_t first, bli_hfstr *scratch) {
    if (first >= out->n) return 0;
    const int32_t base = out->v[first].off, len = out->pool.n - base;
    if (bli_hfstr_copy(scratch, &out->pool, base, out->pool.n) ||
        bli_hfstr_reserve(&out->pool, (int64_t)base + 4 * (int64_t)len + 1))
        return -1;
    int32_t o = base;
    for (int32_t k = first; k < out->n; k++) {
        const bli_hfch *c = scratch->c + (out->v[k].off - base);
        const int32_t n = out->v[k].n;
        out->v[k].off = o;
        for (int32_t i = 0; i < n; i++) {
            char b[4];
            size_t nb = bli_hf_utf8_put(b, c[i].cp);
            for (size_t j = 0; j < nb; j++) {
                out->pool.c[o] = c[i];
                out->pool.c[o++].cp = byte_char[(unsigned char)b[j]];
            }
        }
        out->v[k].n = o - out->v[k].off;
    }
    out->pool.n = o;
    return 0;
}

/* One pre-tokenizer on one split, pieces appended to out. */
static int pretok_one(const bli_hfpretok *p, bli_hfstr *s, bli_hfsplits *out, bli_hfstr *scratch) {
    bli_hfspans sp = {0};
    bli_hfpat pat = {0};
    int rc = 0;
    switch (p->type) {
    case HF_PT_BERT: {
        if (p->bmp) { /* one pass: runs between White_Space and punctuation, each punctuation alone */
            int32_t a = 0;
            for (int32_t i = 0; i < s->n && !rc; i++) {
                int f = bli_hf_flags_some(p->bmp, s->c[i].cp, HF_F_WS);
                int punct = !(f & HF_F_WS) && (f & HF_F_CLASS) == BL_UC_PUNCT;
                if (!(f & HF_F_WS) && !punct) continue;
                rc = push_piece(s, a, i, out) || (punct && push_piece(s, i, i + 1, out));
                a = i + 1;
            }
            rc = rc || push_piece(s, a, s->n, out);
            break;
        }
        bli_hfsplits mid = {0};
        pat.kind = HF_PAT_CHAR_WS;
        rc = bli_hfpat_find(&pat, s, &sp) || bli_hf_split_by(s, &sp, HF_B_REMOVED, &mid);
        pat.kind = HF_PAT_CHAR_PUNCT;
        for (int32_t k = 0; k < mid.n && !rc; k++) {
            const bli_hfstr piece = bli_hfsplit_str(&mid, k);
            rc = bli_hfpat_find(&pat, &piece, &sp) || bli_hf_split_by(&piece, &sp, HF_B_ISOLATED, out);
        }
        bli_hfsplits_free(&mid);
        break;
    }
    case HF_PT_WHITESPACE_SPLIT:
        pat.kind = HF_PAT_CHAR_WS;
        rc = bli_hfpat_find(&pat, s, &sp) || bli_hf_split_by(s, &sp, HF_B_REMOVED, out);
        break;
    case HF_PT_WHITESPACE: /* Invert(\w+|[^\w\s]+), Removed: keep the matches */
        rc = bli_hfpat_find(&p->pat, s, &sp);
        for (int32_t k = 0; k < sp.n && !rc; k++) sp.v[k].m = !sp.v[k].m;
        rc = rc || bli_hf_split_by(s, &sp, HF_B_REMOVED, out);
        break;
    case HF_PT_PUNCTUATION:
        pat.kind = HF_PAT_CHAR_PUNCT;
        rc = bli_hfpat_find(&pat, s, &sp) || bli_hf_split_by(s, &sp, p->behavior, out);
        break;
    case HF_PT_DIGITS:
        pat.kind = HF_PAT_CHAR_DIGIT;
        rc = bli_hfpat_find(&pat, s, &sp) ||
             bli_hf_split_by(s, &sp, p->individual_digits ? HF_B_ISOLATED : HF_B_CONTIGUOUS, out);
        break;
    case HF_PT_SPLIT:
        rc = bli_hfpat_find(&p->pat, s, &sp);
        if (p->invert) for (int32_t k = 0; k < sp.n && !rc; k++) sp.v[k].m = !sp.v[k].m;
        rc = rc || bli_hf_split_by(s, &sp, p->behavior, out);
        break;
    case HF_PT_BYTELEVEL: {
        if (p->add_prefix_space && s->n && s->c[0].cp != ' ' && prepend_char(s, ' ')) { rc = -1; break; }
        int32_t first = out->n;
        if (p->use_regex) {
            pat.kind = HF_PAT_RE_GPT2;
            rc = bli_hfpat_find(&pat, s, &sp) || bli_hf_split_by(s, &sp, HF_B_ISOLATED, out);
        } else {
            rc = push_piece(s, 0, s->n, out);
        }
        rc = rc || bytes_to_chars(out, first, scratch);
        break;
    }
    case HF_PT_METASPACE: {
        for (int32_t i = 0; i < s->n; i++) if (s->c[i].cp == ' ') s->c[i].cp = p->replacement;
        int pre = p->prepend_scheme == HF_PREPEND_ALWAYS ||
                  (p->prepend_scheme == HF_PREPEND_FIRST && s->n && s->c[0].o0 == 0);
        if (pre && s->n && s->c[0].cp != p->replacement && prepend_char(s, p->replacement)) { rc = -1; break; }
        if (p->split) {
            pat.kind = HF_PAT_CHAR;
            uint32_t r = p->replacement;
            pat.cps = &r;
            rc = bli_hfpat_find(&pat, s, &sp) || bli_hf_split_by(s, &sp, HF_B_MERGED_NEXT, out);
        } else {
            rc = push_piece(s, 0, s->n, out);
        }
        break;
    }
    default:
        rc = -1;
    }
    free(sp.v);
    return rc ? -1 : 0;
}

/* A piece of l->pool by reference: characters [off, off + n). */
static int push_ref(bli_hfsplits *l, int32_t off, int32_t n, int32_t added_id) {
    if (splits_room(l)) return -1;
    l->v[l->n++] = (bli_hfsplit){off, n, added_id};
    return 0;
}

/* BertPreTokenizer over the BMP table, its pieces left where they are:
 * runs between White_Space and punctuation and each punctuation alone are
 * ranges of l's own characters, so l keeps its pool and gets new ranges
 * (tmp: their array while they are made). */
static int bert_in_place(const bli_hfpretok *p, bli_hfsplits *l, bli_hfsplits *tmp) {
    bli_hfsplits_clear(tmp);
    for (int32_t i = 0; i < l->n; i++) {
        const bli_hfsplit piece = l->v[i];
        if (piece.added_id >= 0) {
            if (push_ref(tmp, piece.off, piece.n, piece.added_id)) return -1;
            continue;
        }
        const bli_hfch *c = l->pool.c + piece.off;
        int32_t a = 0;
        for (int32_t k = 0; k < piece.n; k++) {
            const uint32_t cp = c[k].cp;
            if (cp < 0x10000 && !(p->bmp->bert[cp] & HF_B_SPLIT)) continue; /* most characters: in a word */
            const int f = bli_hf_flags_some(p->bmp, cp, HF_F_WS);
            const int punct = !(f & HF_F_WS) && (f & HF_F_CLASS) == BL_UC_PUNCT;
            if (!(f & HF_F_WS) && !punct) continue;
            if (k > a && push_ref(tmp, piece.off + a, k - a, -1)) return -1;
            if (punct && push_ref(tmp, piece.off + k, 1, -1)) return -1;
            a = k + 1;
        }
        if (piece.n > a && push_ref(tmp, piece.off + a, piece.n - a, -1)) return -1;
    }
    bli_hfsplit *v = l->v; /* l gets the ranges, tmp l's old array */
    const int32_t cap = l->cap;
    l->v = tmp->v, l->n = tmp->n, l->cap = tmp->cap;
    tmp->v = v, tmp->n = 0, tmp->cap = cap;
    return 0;
}

int bli_hfpretok_apply(const bli_hfpretok *p, bli_hfsplits *l, bli_hfsplits *tmp, bli_hfstr *scratch) {
    if (p->type == HF_PT_BERT && p->bmp) return bert_in_place(p, l, tmp);
    if (p->type == HF_PT_SEQUENCE) {
        for (int32_t k = 0; k < p->n_seq; k++)
            if (bli_hfpretok_apply(&p->seq[k], l, tmp, scratch)) return -1;
        return 0;
    }
    /* ByteLevel and Metaspace change a piece before they split it: they get a copy */
    const int edits = p->type == HF_PT_BYTELEVEL || p->type == HF_PT_METASPACE;
    bli_hfstr own = {0};
    bli_hfsplits_clear(tmp);
    int rc = bli_hfstr_reserve(&tmp->pool, (int64_t)l->pool.n + 16); /* the pieces' characters, at least */
    for (int32_t i = 0; i < l->n && !rc; i++) {
        bli_hfstr piece = bli_hfsplit_str(l, i);
        if (l->v[i].added_id >= 0) rc = bli_hfsplits_push(tmp, piece.c, piece.n, l->v[i].added_id);
        else if (!edits) rc = pretok_one(p, &piece, tmp, scratch);
        else rc = bli_hfstr_copy(&own, &piece, 0, piece.n) || pretok_one(p, &own, tmp, scratch);
    }
    bli_hfstr_free(&own);
    if (rc) return -1;
    bli_hfsplits x = *l; /* the result in l, l's old memory in tmp */
    *l = *tmp;
    *tmp = x;
    return 0;
}
