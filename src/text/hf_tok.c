/* hf_tok.c — tokenizer.json: the reader, added tokens, and the assembly of
 * one encoding (see hf_tokenizer.h; the components live in hf_tok_norm.c,
 * hf_tok_pretok.c, hf_tok_models.c).
 *
 * Encoding one text, as tokenizers' Tokenizer::encode does:
 *   1. decode UTF-8 (strict) into characters aligned to their bytes;
 *   2. split out added tokens whose `normalized` is false, on the raw text
 *      (leftmost-longest; single_word, lstrip, rstrip);
 *   3. normalize every other piece, then split out the `normalized` added
 *      tokens (their normalized content) from it;
 *   4. pre-tokenize the pieces; drop empty ones; a piece's index is its word id;
 *   5. the model tokenizes each piece, an added token is one token;
 *   6. offsets: bytes of the original text -> code points (tokenizers' own
 *      conversion, quirks included) -> UTF-16 code units;
 * then, for the text (pair): truncation to max_tokens minus the specials the
 * post-processor adds (longest_first), ByteLevel offset trimming, and the
 * post-processor's template.
 */
#include "hf_tokenizer.h"
#include "hf_tok_impl.h"
#include "base/error.h"
#include "json_read.h"
#include "unicode.h"
#include "utf8.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

enum { HF_P_NONE, HF_P_ROBERTA, HF_P_BERT, HF_P_TEMPLATE, HF_P_BYTELEVEL };

typedef struct { int special; int32_t *ids; int32_t n_ids; int seq; int32_t type_id; } tpiece; /* seq: 0 A, 1 B */

typedef struct {
    int32_t id;
    uint32_t *cps; int32_t n;    /* content */
    uint32_t *ncps; int32_t nn;  /* normalized content (normalized tokens) */
    int lstrip, rstrip, single_word, normalized, special;
} added_tok;

struct bli_hftok {
    bli_jv *json;                /* kept: owns nothing the rest points into */
    int has_norm, has_pretok;
    bli_hfnorm norm;
    bli_hfpretok pretok;
    bli_hfmodel model;
    added_tok *added; int32_t n_added;
    bli_hfbmp *bmp;              /* the BMP's table (bli_hf_bmp_new) when a Bert step asks for it */
    bli_hfac ac[2];              /* added tokens matched on the raw text [0] and, normalized, on the normalized [1] */
    int has_kind[2];             /* any added token of that kind */
    int32_t vocab_size;
    char **added_str;            /* [vocab_size - model.vocab.n] strings of added ids past the model */
    /* post-processor */
    int proc;
    int trim_offsets, trim_prefix_space; /* ByteLevel trimming (RoBERTa / ByteLevel / Sequence) */
    int32_t cls_id, sep_id;
    tpiece *single, *pair; int32_t n_single, n_pair;
    /* the work buffers of the last encoding, kept for the next one (NULL:
     * none kept, or a call is using them): see hfwork */
    _Atomic(struct hfwork *) *spare;
};

/* What one encoding works in: encode_text's strings, piece lists, model
 * buffers and byte -> character map; the encodings of A and B and their
 * character -> UTF-16 maps. Kept by the tokenizer from one call to the next
 * (its spare slot, taken and given back atomically, so calls from several
 * threads each get their own: a second concurrent call makes a fresh one),
 * so a call on a short text allocates only its output, as it is on a page
 * or a corpus tokenizing text after text. Kept only after texts of at most
 * HF_KEEP_WORK_BYTES (its buffers grow with the text: ~60 bytes per byte). */
#define HF_KEEP_WORK_BYTES (64u << 10)
typedef struct hfwork {
    bli_hfstr s, w, scratch;
    bli_hfsplits l1, l2, l3;
    bli_hfmwork mw;
    char *buf; size_t bcap;
    int32_t *char_at; size_t char_cap;  /* [len + 1] byte -> character (at a character's first byte) */
    int32_t *longest; size_t lcap;      /* [characters] split_added's matches */
    bli_hftokens e[2];                  /* A's and B's tokens */
    int32_t *u16[2]; size_t u16_cap[2]; /* [len + 2] character -> UTF-16 offset, A and B */
} hfwork;

static void hfwork_free(hfwork *k) {
    if (!k) return;
    bli_hfstr_free(&k->s);
    bli_hfstr_free(&k->w);
    bli_hfstr_free(&k->scratch);
    bli_hfsplits_free(&k->l1);
    bli_hfsplits_free(&k->l2);
    bli_hfsplits_free(&k->l3);
    bli_hfmwork_free(&k->mw);
    free(k->buf);
    free(k->char_at);
    free(k->longest);
    free(k->e[0].v);
    free(k->e[1].v);
    free(k->u16[0]);
    free(k->u16[1]);
    free(k);
}

/* Room for need int32s in *p (capacity *cap). */
static int i32_room(int32_t **p, size_t *cap, size_t need) {
    if (need <= *cap) return 0;
    if (need > SIZE_MAX / sizeof **p) return -1;
    int32_t *q = realloc(*p, need * sizeof *q);
    if (!q) return -1;
    *p = q;
    *cap = need;
    return 0;
}

/* The spare work of t, or a new one (NULL: out of memory). */
static hfwork *work_take(const bli_hftok *t) {
    hfwork *k = atomic_exchange(t->spare, NULL);
    return k ? k : calloc(1, sizeof *k);
}

/* Back into the spare slot after a call on `bytes` bytes (freed instead
 * after a longer text, or when another call put its own back first). */
static void work_give(const bli_hftok *t, hfwork *k, size_t bytes) {
    if (k && bytes <= HF_KEEP_WORK_BYTES) k = atomic_exchange(t->spare, k);
    hfwork_free(k);
}

/* A tokenizer with its spare slot, the rest zero. */
static bli_hftok *hftok_new(void) {
    bli_hftok *t = calloc(1, sizeof(bli_hftok));
    if (t && !(t->spare = malloc(sizeof *t->spare))) {
        free(t);
        return NULL;
    }
    if (t) atomic_init(t->spare, NULL);
    return t;
}

/* ------------------------------------------------------------- reading */

static int jflag(const bli_jv *j, const char *key, int dflt) {
    const bli_jv *v = bli_jget(j, key);
    return v && (v->type == BLI_JTRUE || v->type == BLI_JFALSE) ? v->type == BLI_JTRUE : dflt;
}

static int read_added(bli_hftok *t, const bli_jv *arr, char *err, size_t errlen) {
    if (!arr || arr->type == BLI_JNULL) return 0;
    if (arr->type != BLI_JARR) { bli_set_err(err, errlen, "tokenizer.json: added_tokens must be a list"); return -1; }
    t->added = calloc(arr->n ? arr->n : 1, sizeof *t->added);
    if (!t->added) { bli_set_err(err, errlen, "out of memory"); return -1; }
    for (size_t i = 0; i < arr->n; i++) {
        const bli_jv *e = &arr->items[i], *id = bli_jget(e, "id"), *c = bli_jget(e, "content");
        if (!id || id->type != BLI_JNUM || !id->is_int || id->ival < 0 || id->ival >= (int64_t)t->model.vocab.n + 65536 ||
            !c || c->type != BLI_JSTR) {
            bli_set_err(err, errlen, "tokenizer.json: added token %zu needs an id below the vocabulary size + 65536 "
                        "and a content", i);
            return -1;
        }
        if (c->len == 0) continue; /* tokenizers ignores empty ones */
        added_tok *a = &t->added[t->n_added++];
        a->id = (int32_t)id->ival;
        if (bli_hf_utf8_to_cps(c->str, c->len, &a->cps, &a->n)) { bli_set_err(err, errlen, "out of memory"); return -1; }
        a->lstrip = jflag(e, "lstrip", 0);
        a->rstrip = jflag(e, "rstrip", 0);
        a->single_word = jflag(e, "single_word", 0);
        a->normalized = jflag(e, "normalized", 1);
        a->special = jflag(e, "special", 0);
        if (a->id + 1 > t->vocab_size) t->vocab_size = a->id + 1;
    }
    return 0;
}

/* One template (single or pair) into *out / *n_out, which must be empty: a
 * file gets one template of each kind (read_processor refuses a second
 * processor that adds tokens), and the pieces are counted into a list
 * allocated for exactly list->n of them, so reading cannot run past it. A
 * sequence named more than HF_MAX_SEQ_COPIES times is refused: each copy is
 * the whole sequence again (tokenizers runs such a template; bertlens
 * sizes its output from the pieces, see out_capacity). */
static int read_template(bli_hftok *t, const char *kind, const bli_jv *list, tpiece **out, int32_t *n_out,
                         const bli_jv *specials, char *err, size_t errlen) {
    if (*out) { bli_set_err(err, errlen, "tokenizer.json: a second %s template (one of each kind)", kind); return -1; }
    if (!list || list->type != BLI_JARR) { bli_set_err(err, errlen, "tokenizer.json: template must be a list"); return -1; }
    *out = calloc(list->n ? list->n : 1, sizeof **out);
    if (!*out) { bli_set_err(err, errlen, "out of memory"); return -1; }
    *n_out = 0;
    int32_t copies[2] = {0, 0};
    for (size_t i = 0; i < list->n; i++) {
        const bli_jv *e = &list->items[i], *sp = bli_jget(e, "SpecialToken"), *sq = bli_jget(e, "Sequence");
        tpiece *p = &(*out)[(*n_out)++]; /* i < list->n: inside the list */
        const bli_jv *body = sp ? sp : sq, *ty = body ? bli_jget(body, "type_id") : NULL, *id = body ? bli_jget(body, "id") : NULL;
        if (!body || !id || id->type != BLI_JSTR || !ty || ty->type != BLI_JNUM || !ty->is_int || ty->ival < 0 ||
            ty->ival > 1 << 20) {
            bli_set_err(err, errlen, "tokenizer.json: bad template piece %zu", i);
            return -1;
        }
        p->type_id = (int32_t)ty->ival;
        if (sq) {
            if (strcmp(id->str, "A") && strcmp(id->str, "B")) { bli_set_err(err, errlen, "tokenizer.json: template sequence must be A or B"); return -1; }
            p->seq = id->str[0] == 'B';
            if (++copies[p->seq] > HF_MAX_SEQ_COPIES) {
                int32_t n = 0;
                for (size_t k = 0; k < list->n; k++) {
                    const bli_jv *q = bli_jget(&list->items[k], "Sequence"), *qi = q ? bli_jget(q, "id") : NULL;
                    n += qi && qi->type == BLI_JSTR && !strcmp(qi->str, id->str);
                }
                bli_set_err(err, errlen, "tokenizer.json: the %s template names sequence %s %d times (at most %d)", kind,
                            id->str, (int)n, HF_MAX_SEQ_COPIES);
                return -1;
            }
            continue;
        }
        p->special = 1;
        const bli_jv *st = specials ? bli_jget(specials, id->str) : NULL, *ids = st ? bli_jget(st, "ids") : NULL;
        if (!ids || ids->type != BLI_JARR) { bli_set_err(err, errlen, "tokenizer.json: template special %.60s is not defined", id->str); return -1; }
        p->ids = calloc(ids->n ? ids->n : 1, sizeof *p->ids);
        if (!p->ids) { bli_set_err(err, errlen, "out of memory"); return -1; }
        for (size_t k = 0; k < ids->n; k++) {
            const bli_jv *x = &ids->items[k];
            if (x->type != BLI_JNUM || !x->is_int || x->ival < 0 || x->ival >= t->vocab_size) {
                bli_set_err(err, errlen, "tokenizer.json: template special %.60s has an id outside the vocabulary", id->str);
                return -1;
            }
            p->ids[p->n_ids++] = (int32_t)x->ival;
        }
    }
    return 0;
}

static int read_pair_token(bli_hftok *t, const bli_jv *v, int32_t *id, char *err, size_t errlen) {
    if (!v || v->type != BLI_JARR || v->n != 2 || v->items[1].type != BLI_JNUM || !v->items[1].is_int ||
        v->items[1].ival < 0 || v->items[1].ival >= t->vocab_size) {
        bli_set_err(err, errlen, "tokenizer.json: post_processor cls/sep must be [token, id] in the vocabulary");
        return -1;
    }
    *id = (int32_t)v->items[1].ival;
    return 0;
}

static int read_processor(bli_hftok *t, const bli_jv *p, char *err, size_t errlen) {
    if (!p || p->type == BLI_JNULL) { t->proc = HF_P_NONE; return 0; }
    const bli_jv *ty = bli_jget(p, "type");
    const char *s = ty && ty->type == BLI_JSTR ? ty->str : "";
    if (!strcmp(s, "Sequence")) {
        /* ByteLevel steps only trim offsets; at most one step adds tokens
         * (tokenizers would run a second one on the first one's output) */
        const bli_jv *list = bli_jget(p, "processors");
        if (!list || list->type != BLI_JARR) { bli_set_err(err, errlen, "tokenizer.json: Sequence without processors"); return -1; }
        int trim = 0, trim_ps = 0, kind = HF_P_NONE;
        size_t adding = 0;
        for (size_t k = 0; k < list->n; k++) {
            const bli_jv *ty_k = bli_jget(&list->items[k], "type");
            adding += !(ty_k && ty_k->type == BLI_JSTR && !strcmp(ty_k->str, "ByteLevel"));
        }
        if (adding > 1) {
            bli_set_err(err, errlen, "tokenizer.json: the post-processor Sequence has %zu processors that add tokens "
                        "(at most 1; ByteLevel steps aside)", adding);
            return -1;
        }
        for (size_t k = 0; k < list->n; k++) {
            t->proc = HF_P_NONE;
            t->trim_offsets = 0;
            if (read_processor(t, &list->items[k], err, errlen)) return -1;
            if (t->trim_offsets) trim = 1, trim_ps = t->trim_prefix_space;
            if (t->proc != HF_P_BYTELEVEL) kind = t->proc;
        }
        t->proc = kind;
        t->trim_offsets = trim, t->trim_prefix_space = trim_ps;
        return 0;
    }
    if (!strcmp(s, "ByteLevel")) {
        t->proc = HF_P_BYTELEVEL;
        t->trim_offsets = jflag(p, "trim_offsets", 1);
        t->trim_prefix_space = jflag(p, "add_prefix_space", 1);
        return 0;
    }
    if (!strcmp(s, "RobertaProcessing") || !strcmp(s, "BertProcessing")) {
        t->proc = s[0] == 'R' ? HF_P_ROBERTA : HF_P_BERT;
        if (read_pair_token(t, bli_jget(p, "cls"), &t->cls_id, err, errlen) ||
            read_pair_token(t, bli_jget(p, "sep"), &t->sep_id, err, errlen))
            return -1;
        if (t->proc == HF_P_ROBERTA) {
            t->trim_offsets = jflag(p, "trim_offsets", 1);
            t->trim_prefix_space = jflag(p, "add_prefix_space", 1);
        }
        return 0;
    }
    if (!strcmp(s, "TemplateProcessing")) {
        t->proc = HF_P_TEMPLATE;
        const bli_jv *sp = bli_jget(p, "special_tokens");
        return read_template(t, "single", bli_jget(p, "single"), &t->single, &t->n_single, sp, err, errlen) ||
                       read_template(t, "pair", bli_jget(p, "pair"), &t->pair, &t->n_pair, sp, err, errlen)
                   ? -1
                   : 0;
    }
    bli_set_err(err, errlen, "tokenizer.json: post-processor %.60s is not supported", s);
    return -1;
}

void bli_hftok_free(bli_hftok *t) {
    if (!t) return;
    if (t->has_norm) bli_hfnorm_free(&t->norm);
    if (t->has_pretok) bli_hfpretok_free(&t->pretok);
    if (t->added_str)
        for (int32_t k = 0; k < t->vocab_size - t->model.vocab.n; k++) free(t->added_str[k]);
    free(t->added_str);
    bli_hfmodel_free(&t->model);
    for (int32_t k = 0; k < t->n_added; k++) free(t->added[k].cps), free(t->added[k].ncps);
    bli_hfac_free(&t->ac[0]);
    bli_hfac_free(&t->ac[1]);
    free(t->added);
    for (int32_t k = 0; k < t->n_single; k++) free(t->single[k].ids);
    for (int32_t k = 0; k < t->n_pair; k++) free(t->pair[k].ids);
    free(t->single);
    free(t->pair);
    bli_jfree(t->json);
    bli_hf_bmp_free(t->bmp);
    if (t->spare) hfwork_free(atomic_load(t->spare));
    free(t->spare);
    free(t);
}

/* Hand the BMP's table to every Bert normalizer and pre-tokenizer (built
 * when there is one): their one-pass forms read it. */
static int want_bmp_norm(bli_hfnorm *n, const bli_hfbmp *bmp) {
    int want = n->type == HF_N_BERT;
    if (want) n->bmp = bmp;
    for (int32_t k = 0; k < n->n_seq; k++) want |= want_bmp_norm(&n->seq[k], bmp);
    return want;
}

static int want_bmp_pretok(bli_hfpretok *p, const bli_hfbmp *bmp) {
    int want = p->type == HF_PT_BERT;
    if (want) p->bmp = bmp;
    for (int32_t k = 0; k < p->n_seq; k++) want |= want_bmp_pretok(&p->seq[k], bmp);
    return want;
}

static int attach_bmp(bli_hftok *t, char *err, size_t errlen) {
    int want = t->has_norm && want_bmp_norm(&t->norm, NULL);
    if (t->has_pretok && want_bmp_pretok(&t->pretok, NULL)) want = 1;
    if (!want) return 0;
    if (!(t->bmp = bli_hf_bmp_new())) { bli_set_err(err, errlen, "out of memory"); return -1; }
    if (t->has_norm) want_bmp_norm(&t->norm, t->bmp);
    if (t->has_pretok) want_bmp_pretok(&t->pretok, t->bmp);
    return 0;
}

/* One automaton per kind of added token (hf_tok_added.c): the raw contents
 * of those matched on the raw text, the normalized contents of those matched
 * after normalization (their content when there is no normalizer). */
static int build_added_automata(bli_hftok *t, char *err, size_t errlen) {
    const uint32_t **cps = calloc((size_t)t->n_added + 1, sizeof *cps);
    int32_t *lens = calloc((size_t)t->n_added + 1, sizeof *lens);
    int rc = -1;
    if (!cps || !lens) { bli_set_err(err, errlen, "out of memory"); goto done; }
    int64_t total = 0;
    for (int32_t k = 0; k < t->n_added; k++) {
        const added_tok *a = &t->added[k];
        total += a->normalized && a->ncps ? a->nn : a->n;
    }
    if (total > HF_MAX_ADDED_CHARS) {
        bli_set_err(err, errlen, "tokenizer.json: the added tokens hold %lld characters (at most %d)", (long long)total,
                    HF_MAX_ADDED_CHARS);
        goto done;
    }
    for (int kind = 0; kind < 2; kind++) {
        for (int32_t k = 0; k < t->n_added; k++) {
            const added_tok *a = &t->added[k];
            int mine = a->normalized == kind;
            cps[k] = kind && a->ncps ? a->ncps : a->cps;
            lens[k] = !mine ? 0 : kind && a->ncps ? a->nn : a->n;
            t->has_kind[kind] |= mine;
        }
        if (t->has_kind[kind] && bli_hfac_build(&t->ac[kind], cps, lens, t->n_added)) {
            bli_set_err(err, errlen, "out of memory");
            goto done;
        }
    }
    rc = 0;
done:
    free(cps);
    free(lens);
    return rc;
}

bli_hftok *bli_hftok_load(const char *json, size_t len, char *err, size_t errlen) {
    bli_hftok *t = hftok_new();
    if (!t) { bli_set_err(err, errlen, "out of memory"); return NULL; }
    t->json = bli_jparse(json, len, err, errlen);
    if (!t->json) goto fail;
    const bli_jv *j = t->json;
    if (j->type != BLI_JOBJ) { bli_set_err(err, errlen, "tokenizer.json: not a JSON object"); goto fail; }
    const bli_jv *m = bli_jget(j, "model"), *n = bli_jget(j, "normalizer"), *p = bli_jget(j, "pre_tokenizer");
    if (!m || m->type != BLI_JOBJ) { bli_set_err(err, errlen, "tokenizer.json: no model"); goto fail; }
    if (bli_hfmodel_read(&t->model, m, err, errlen)) goto fail;
    t->vocab_size = t->model.vocab.n;
    if (n && n->type != BLI_JNULL) {
        t->has_norm = 1;
        if (bli_hfnorm_read(&t->norm, n, err, errlen)) goto fail;
        /* the normalizer's output is budgeted: a file that could pass the
         * budget (a Sequence doubling the text 27 times: 3.2 GB at load, where
         * the normalized added tokens go through it) is refused here */
        double g = bli_hfnorm_growth(&t->norm);
        if (!(g <= HF_NORM_MAX_GROWTH)) {
            bli_set_err(err, errlen, g < 1e15 ? "tokenizer.json: the normalizer can make its text up to %.0f times "
                                                "longer (at most %d)"
                                              : "tokenizer.json: the normalizer can make its text up to %.3g times "
                                                "longer (at most %d)",
                        g, HF_NORM_MAX_GROWTH);
            goto fail;
        }
    }
    if (p && p->type != BLI_JNULL) {
        t->has_pretok = 1;
        if (bli_hfpretok_read(&t->pretok, p, err, errlen)) goto fail;
    }
    if (attach_bmp(t, err, errlen) || read_added(t, bli_jget(j, "added_tokens"), err, errlen)) goto fail;
    /* normalized added tokens are matched by their normalized content */
    for (int32_t k = 0; k < t->n_added; k++) {
        added_tok *a = &t->added[k];
        if (!a->normalized || !t->has_norm) continue;
        bli_hfstr s = {0}, scratch = {0};
        int rc = bli_hfstr_reserve(&s, a->n + 1);
        for (int32_t i = 0; !rc && i < a->n; i++) s.c[i] = (bli_hfch){a->cps[i], 0, 0};
        s.n = rc ? 0 : a->n;
        rc = rc ? rc : bli_hfnorm_apply(&t->norm, &s, &scratch);
        if (!rc && !(a->ncps = malloc(((size_t)s.n + 1) * sizeof *a->ncps))) rc = -1;
        if (!rc) {
            for (int32_t i = 0; i < s.n; i++) a->ncps[i] = s.c[i].cp;
            a->nn = s.n;
        }
        bli_hfstr_free(&s);
        bli_hfstr_free(&scratch);
        if (rc == -2) {
            bli_set_err(err, errlen, "tokenizer.json: the normalizer makes added token %d more than %d times longer",
                        (int)k, HF_NORM_MAX_GROWTH);
            goto fail;
        }
        if (rc) { bli_set_err(err, errlen, "out of memory"); goto fail; }
    }
    if (build_added_automata(t, err, errlen)) goto fail;
    int32_t extra = t->vocab_size - t->model.vocab.n;
    if (extra > 0) {
        t->added_str = calloc((size_t)extra, sizeof *t->added_str);
        if (!t->added_str) { bli_set_err(err, errlen, "out of memory"); goto fail; }
    }
    for (int32_t k = 0; k < t->n_added; k++) {
        added_tok *a = &t->added[k];
        if (a->id < t->model.vocab.n) continue;
        char *s = malloc(4 * (size_t)a->n + 1);
        if (!s) { bli_set_err(err, errlen, "out of memory"); goto fail; }
        size_t o = 0;
        for (int32_t i = 0; i < a->n; i++) o += bli_hf_utf8_put(s + o, a->cps[i]);
        s[o] = 0;
        free(t->added_str[a->id - t->model.vocab.n]);
        t->added_str[a->id - t->model.vocab.n] = s;
    }
    if (read_processor(t, bli_jget(j, "post_processor"), err, errlen)) goto fail;
    t->model.space_ends = t->trim_offsets;
    bli_jfree(t->json);
    t->json = NULL;
    return t;
fail:
    bli_hftok_free(t);
    return NULL;
}

bli_hftok *bli_hftok_wordpiece(const char *const *vocab, const uint32_t *lens, int32_t n, const bl_tokenizer_opts *o,
                               char *err, size_t errlen) {
    bli_hftok *t = hftok_new();
    if (!t) { bli_set_err(err, errlen, "out of memory"); return NULL; }
    if (bli_hfmodel_wordpiece(&t->model, vocab, lens, n, o->unk_id, o->max_chars_per_word, err, errlen)) goto fail;
    t->vocab_size = n;
    t->has_norm = t->has_pretok = 1;
    t->norm.type = HF_N_BERT;
    t->norm.clean = 1;
    t->norm.chinese = o->chinese_chars != 0;
    t->norm.strip_accents = o->strip_accents != 0;
    t->norm.lowercase = o->lowercase != 0;
    t->pretok.type = HF_PT_BERT;
    const int32_t sp[5] = {o->unk_id, o->cls_id, o->sep_id, o->pad_id, o->mask_id};
    t->added = calloc(5, sizeof *t->added);
    if (!t->added) { bli_set_err(err, errlen, "out of memory"); goto fail; }
    for (int k = 0; k < 5; k++) {
        int32_t id = sp[k], dup = 0;
        for (int q = 0; q < k; q++) dup |= sp[q] == id;
        /* an empty string matches nothing; one that is not UTF-8 matches no text */
        if (id < 0 || id >= n || dup || !lens[id]) continue;
        added_tok *a = &t->added[t->n_added];
        if (bli_hf_utf8_to_cps(vocab[id], lens[id], &a->cps, &a->n)) continue;
        a->id = id;
        a->special = 1;
        t->n_added++;
    }
    if (attach_bmp(t, err, errlen) || build_added_automata(t, err, errlen)) goto fail;
    t->proc = HF_P_BERT;
    t->cls_id = o->cls_id;
    t->sep_id = o->sep_id;
    return t;
fail:
    bli_hftok_free(t);
    return NULL;
}

int32_t bli_hftok_vocab_size(const bli_hftok *t) { return t ? t->vocab_size : 0; }

const char *bli_hftok_token_str(const bli_hftok *t, int32_t id) {
    if (!t || id < 0 || id >= t->vocab_size) return NULL;
    if (id >= t->model.vocab.n) return t->added_str[id - t->model.vocab.n];
    for (int32_t k = 0; k < t->n_added; k++) /* an added token over a model id keeps its content */
        if (t->added[k].id == id && t->model.vocab.len[id] == 0) return NULL;
    return t->model.vocab.pool + t->model.vocab.off[id];
}

const char *bli_hftok_kind(const bli_hftok *t) {
    if (!t) return NULL;
    return t->model.type == HF_M_BPE ? "BPE" : t->model.type == HF_M_UNIGRAM ? "Unigram" : "WordPiece";
}

int32_t bli_hftok_token_id(const bli_hftok *t, const char *s, size_t n) {
    if (!t || !s) return -1;
    for (int32_t k = t->n_added; k-- > 0;) { /* the last added token with this content */
        const added_tok *a = &t->added[k];
        size_t o = 0, i = 0;
        char buf[4];
        for (; i < (size_t)a->n && o <= n; i++) {
            size_t w = bli_hf_utf8_put(buf, a->cps[i]);
            if (o + w > n || memcmp(s + o, buf, w)) break;
            o += w;
        }
        if (i == (size_t)a->n && o == n) return a->id;
    }
    return bli_hfvocab_find(&t->model.vocab, s, n);
}

int bli_hftok_pieces(const bli_hftok *t) {
    if (!t) return 0;
    if (bli_hfvocab_find(&t->model.vocab, "\xc4\xa0", 2) >= 0) return 1;   /* U+0120 'Ġ': GPT-2's byte alphabet */
    if (t->model.type != HF_M_WORDPIECE && bli_hfvocab_find(&t->model.vocab, "\xe2\x96\x81", 3) >= 0)
        return 2; /* U+2581 '▁': SentencePiece's word start */
    return 0;
}

int bli_hftok_is_special(const bli_hftok *t, int32_t id) {
    if (!t) return 0;
    for (int32_t k = 0; k < t->n_added; k++)
        if (t->added[k].id == id && t->added[k].special) return 1;
    return 0;
}

/* ------------------------------------------------------------ encoding */

/* Strict UTF-8 decode into characters aligned to their bytes, in the same
 * pass the maps the offsets go through at the end: char_at[len + 1] (byte
 * where a character starts -> its index; the other bytes are left unset,
 * char_of finds their character) and u16[n + 1] (character index -> UTF-16
 * offset). */
static int decode(const char *text, size_t len, const char *which, bli_hfstr *s, int32_t *char_at, int32_t *u16,
                  char *err, size_t errlen) {
    if (bli_hfstr_reserve(s, (int64_t)len + 1)) { bli_set_err(err, errlen, "out of memory"); return -1; }
    const unsigned char *u = (const unsigned char *)text;
    int32_t n = 0, w = 0;
    u16[0] = 0;
    for (size_t i = 0; i < len;) {
        uint32_t c = u[i];
        size_t k = 1;
        if (c >= 0x80) {
            /* two and three bytes well formed inline (most scripts), the
             * rest and every error through bli_utf8_next */
            if (c >= 0xC2 && c <= 0xDF && i + 1 < len && (u[i + 1] & 0xC0) == 0x80) {
                c = (c & 0x1F) << 6 | (u[i + 1] & 0x3F), k = 2;
            } else if ((c & 0xF0) == 0xE0 && i + 2 < len && (u[i + 1] & 0xC0) == 0x80 && (u[i + 2] & 0xC0) == 0x80 &&
                       (c = (c & 0x0F) << 12 | (uint32_t)(u[i + 1] & 0x3F) << 6 | (u[i + 2] & 0x3F)) >= 0x800 &&
                       (c < 0xD800 || c > 0xDFFF)) {
                k = 3;
            } else {
                int why;
                size_t at;
                c = u[i];
                k = bli_utf8_next(u + i, len - i, &c, &why, &at);
                if (!k) {
                    if (why == BLI_UTF8_BAD_LEAD || why == BLI_UTF8_BAD_CONT)
                        bli_set_err(err, errlen, "invalid UTF-8 in %s at byte %zu: %s 0x%02X", which, i + at,
                                    bli_utf8_why(why), u[i + at]);
                    else
                        bli_set_err(err, errlen, "invalid UTF-8 in %s at byte %zu: %s", which, i, bli_utf8_why(why));
                    return -1;
                }
            }
        }
        char_at[i] = n;
        s->c[n++] = (bli_hfch){c, (int32_t)i, (int32_t)(i + k)};
        w += c >= 0x10000 ? 2 : 1;
        u16[n] = w;
        i += k;
    }
    s->n = n;
    return 0;
}

/* Index of the character holding byte b of a text decoded by decode. */
static int32_t char_of_byte(const char *text, const int32_t *char_at, size_t b) {
    while (b > 0 && ((unsigned char)text[b] & 0xC0) == 0x80) b--; /* back to the character's first byte */
    return char_at[b];
}

static int is_word_char(uint32_t c) { return bli_uc_is_word(c); }

/* Split s around added tokens of the given `normalized` kind; pieces appended
 * to out (added ones with their id). tokenizers' find_matches: the
 * leftmost-longest matches of its automaton, each from the end of the last
 * one (bli_hfac_starts gives the longest token starting at each position).
 * s may be moved into out (bli_hfsplits_take). longest: work buffer. */
static int split_added(const bli_hftok *t, bli_hfstr *s, int normalized, bli_hfsplits *out, int32_t **longest,
                       size_t *lcap) {
    int32_t n = s->n, start_off = 0;
    if (n == 0) return 0;
    if (!t->has_kind[normalized] || !bli_hfac_may_start(&t->ac[normalized], s)) return bli_hfsplits_take(out, s, -1);
    if (i32_room(longest, lcap, (size_t)n)) return -1;
    int32_t *lg = *longest;
    bli_hfac_starts(&t->ac[normalized], s, lg);
    for (int32_t i = 0; i < n;) {
        if (lg[i] < 0) { i++; continue; }
        const added_tok *best = &t->added[lg[i]];
        int32_t blen = normalized && best->ncps ? best->nn : best->n;
        int32_t st = i, stop = i + blen;
        i = stop; /* the automaton moves past a match even when it is discarded */
        if (best->single_word) {
            int sp_before = st == 0 || !is_word_char(s->c[st - 1].cp);
            int sp_after = stop == n || !is_word_char(s->c[stop].cp);
            if (!sp_before || !sp_after) continue;
        }
        if (best->lstrip) {
            int32_t ns = st;
            while (ns > 0 && bli_hf_is_ws(s->c[ns - 1].cp)) ns--;
            st = ns > start_off ? ns : start_off;
        }
        if (best->rstrip) {
            while (stop < n && bli_hf_is_ws(s->c[stop].cp)) stop++;
            i = stop;
        }
        if (start_off < st && bli_hfsplits_push(out, s->c + start_off, st - start_off, -1)) return -1;
        if (bli_hfsplits_push(out, s->c + st, stop - st, best->id)) return -1;
        start_off = stop;
    }
    if (start_off == 0) return bli_hfsplits_take(out, s, -1); /* no match */
    if (start_off < n && bli_hfsplits_push(out, s->c + start_off, n - start_off, -1)) return -1;
    return 0;
}

/* Tokens of one text (ab: 0 A, 1 B) into wk->e[ab], their offsets in
 * characters; wk->u16[ab] [len + 2] gets the UTF-16 offset of each of the
 * text's *n_chars characters and of its end. */
static int encode_text(const bli_hftok *t, hfwork *wk, int ab, const char *text, size_t len, const char *which,
                       int32_t *n_chars, char *err, size_t errlen) {
    /* the work's buffers (given back at the end: a piece may move between
     * them), emptied */
    bli_hfstr s = wk->s, w = wk->w, scratch = wk->scratch;
    bli_hfsplits l1 = wk->l1, l2 = wk->l2, l3 = wk->l3;
    bli_hfmwork mw = wk->mw;
    bli_hftokens *out = &wk->e[ab];
    out->n = 0;
    w.n = scratch.n = 0;
    bli_hfsplits_clear(&l1);
    bli_hfsplits_clear(&l2);
    bli_hfsplits_clear(&l3);
    int rc = -1;
    /* byte -> code point index, for the final offset conversion */
    if (i32_room(&wk->char_at, &wk->char_cap, len + 1) || i32_room(&wk->u16[ab], &wk->u16_cap[ab], len + 2)) goto done;
    int32_t *char_at = wk->char_at, *u16 = wk->u16[ab];
    if (decode(text, len, which, &s, char_at, u16, err, errlen)) goto done_noerr;
    *n_chars = s.n;
    if (split_added(t, &s, 0, &l1, &wk->longest, &wk->lcap)) goto done;
    for (int32_t i = 0; i < l1.n; i++) {
        const bli_hfstr piece = bli_hfsplit_str(&l1, i);
        if (l1.v[i].added_id >= 0) {
            if (bli_hfsplits_push(&l2, piece.c, piece.n, l1.v[i].added_id)) goto done;
            continue;
        }
        if (l1.n == 1 && l1.v[0].off == 0) { /* the whole text (no added token in it): its characters move */
            bli_hfstr x = w;
            w = l1.pool;
            w.n = piece.n;
            l1.pool = x;
            l1.pool.n = 0;
        } else if (bli_hfstr_copy(&w, &piece, 0, piece.n)) {
            goto done;
        }
        int nrc = t->has_norm ? bli_hfnorm_apply(&t->norm, &w, &scratch) : 0;
        if (nrc == -2) { /* cannot happen in a file that loaded (its growth is checked there) */
            bli_set_err(err, errlen, "tokenizer: the normalizer made %s more than %d times longer", which,
                        HF_NORM_MAX_GROWTH);
            goto done_noerr;
        }
        if (nrc) goto done;
        if (split_added(t, &w, 1, &l2, &wk->longest, &wk->lcap)) goto done;
    }
    if (t->has_pretok && bli_hfpretok_apply(&t->pretok, &l2, &l3, &scratch)) goto done;
    for (int32_t k = 0; k < l2.n; k++) {
        const bli_hfstr sp = bli_hfsplit_str(&l2, k);
        if (l2.v[k].added_id >= 0) {
            bli_hftoken tk = {l2.v[k].added_id, sp.n ? sp.c[0].o0 : 0, sp.n ? sp.c[sp.n - 1].o1 : 0, k, 0, 0};
            if (t->trim_offsets) {
                int64_t nb = bli_hfstr_utf8(&sp, 0, sp.n, &wk->buf, &wk->bcap);
                if (nb < 0) goto done;
                bli_hf_space_ends(wk->buf, (size_t)nb, &tk.lead, &tk.trail);
            }
            if (bli_hftokens_push(out, tk)) goto done;
        } else if (bli_hfmodel_tokenize(&t->model, &sp, k, out, &mw, err, errlen)) {
            goto done_noerr;
        }
    }
    /* bytes -> code points, as tokenizers' BytesToCharOffsetConverter */
    for (int32_t k = 0; k < out->n; k++) {
        bli_hftoken *tk = &out->v[k];
        int32_t o0 = tk->o0, o1 = tk->o1;
        if (o0 < 0 || (size_t)o0 >= len) continue; /* stays in bytes, as there */
        int32_t cs = char_of_byte(text, char_at, (size_t)o0), ce;
        if ((size_t)o1 < len && o1 >= 0) ce = char_of_byte(text, char_at, (size_t)o1);
        else ce = ((size_t)(o1 - 1) < len && o1 >= 1 ? char_of_byte(text, char_at, (size_t)(o1 - 1)) : cs + 1) + 1;
        tk->o0 = cs;
        tk->o1 = ce;
    }
    rc = 0;
    goto done_noerr;
done:
    bli_set_err(err, errlen, "tokenizer: out of memory");
done_noerr:
    wk->s = s, wk->w = w, wk->scratch = scratch;
    wk->l1 = l1, wk->l2 = l2, wk->l3 = l3;
    wk->mw = mw;
    return rc;
}

static int32_t n_specials(const bli_hftok *t, int pair) {
    switch (t->proc) {
    case HF_P_ROBERTA: return pair ? 4 : 2;
    case HF_P_BERT: return pair ? 3 : 2;
    case HF_P_TEMPLATE: {
        int32_t c = 0;
        const tpiece *p = pair ? t->pair : t->single;
        int32_t n = pair ? t->n_pair : t->n_single;
        for (int32_t k = 0; k < n; k++) if (p[k].special) c += p[k].n_ids;
        return c;
    }
    }
    return 0;
}

/* tokenizers' process_offsets: drop leading / trailing spaces of a token's string from its offsets. */
static void trim(const bli_hftok *t, bli_hftokens *e) {
    for (int32_t i = 0; i < e->n; i++) {
        bli_hftoken *k = &e->v[i];
        int32_t lead = k->lead, trail = k->trail;
        if (lead > 0) {
            int first = i == 0 || k->o0 == 0;
            if (first && t->trim_prefix_space && lead == 1) lead = 0;
            k->o0 = k->o0 + lead < k->o1 ? k->o0 + lead : k->o1;
        }
        if (trail > 0 && k->o1 >= trail) k->o1 = k->o1 - trail > k->o0 ? k->o1 - trail : k->o0;
    }
}

/* Tokens the post-processor's layout makes of na tokens of A and nb of B
 * (pair: a pair): every special id and every copy of a sequence its
 * template names (tokenizers repeats a sequence named twice; the template
 * names it at most HF_MAX_SEQ_COPIES times). */
static int64_t out_capacity(const bli_hftok *t, int pair, int32_t na, int32_t nb) {
    switch (t->proc) {
    case HF_P_ROBERTA: return (int64_t)na + (pair ? nb + 4 : 2);
    case HF_P_BERT: return (int64_t)na + (pair ? nb + 3 : 2);
    case HF_P_TEMPLATE: {
        const tpiece *p = pair ? t->pair : t->single;
        int32_t np = pair ? t->n_pair : t->n_single;
        int64_t c = 0;
        for (int32_t k = 0; k < np; k++)
            c += p[k].special ? p[k].n_ids : p[k].seq == 0 ? na : pair ? nb : 0;
        return c;
    }
    }
    return (int64_t)na + (pair ? nb : 0);
}

int bli_hftok_encode(const bli_hftok *t, const char *a, size_t alen, const char *b, size_t blen, int32_t max_tokens,
                     bl_tokens *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    int rc = -1;
    int pair = b != NULL && blen > 0; /* transformers passes an empty text_pair as no pair */
    const size_t lens[2] = {alen, pair ? blen : 0};
    for (int k = 0; k < 2; k++) {
        if (lens[k] > HF_MAX_TEXT_BYTES) {
            bli_set_err(err, errlen, "%s is too long: %zu bytes (limit %u)", k ? "text B" : "text A", lens[k],
                        HF_MAX_TEXT_BYTES);
            return -1;
        }
    }
    hfwork *wk = work_take(t);
    if (!wk) { bli_set_err(err, errlen, "tokenizer: out of memory"); return -1; }
    bli_hftokens *ea = &wk->e[0], *eb = &wk->e[1];
    eb->n = 0;
    int32_t na_chars = 0, nb_chars = 0;
    if (encode_text(t, wk, 0, a, alen, "text A", &na_chars, err, errlen)) goto done;
    if (pair && encode_text(t, wk, 1, b, blen, "text B", &nb_chars, err, errlen)) goto done;
    /* ua, ub: [chars + 1] UTF-16 offset of each character */
    const int32_t *ua = wk->u16[0], *ub = pair ? wk->u16[1] : NULL;
    int32_t full = ea->n + eb->n;
    /* tokenizers subtracts the specials in unsigned arithmetic: a limit below
     * their count wraps around to no limit at all */
    if (max_tokens > 0 && max_tokens >= n_specials(t, pair)) {
        int32_t ml = max_tokens - n_specials(t, pair);
        if (ml == 0) {
            ea->n = 0, eb->n = 0;
        } else if (ea->n + eb->n > ml) {
            if (pair) {
                int32_t n1 = ea->n, n2 = eb->n, swap = 0;
                if (n1 > n2) { int32_t x = n1; n1 = n2; n2 = x; swap = 1; }
                if (n1 > ml) n2 = n1;
                else n2 = n1 > ml - n1 ? n1 : ml - n1;
                if (n1 + n2 > ml) { n1 = ml / 2; n2 = n1 + ml % 2; }
                if (swap) { int32_t x = n1; n1 = n2; n2 = x; }
                if (ea->n > n1) ea->n = n1;
                if (eb->n > n2) eb->n = n2;
            } else {
                ea->n = ml;
            }
        }
    }
    out->truncated = ea->n + eb->n < full;
    if (t->trim_offsets) {
        trim(t, ea);
        trim(t, eb);
    }
    /* assemble: the output holds exactly the pieces of the chosen layout */
    int64_t cap = out_capacity(t, pair, ea->n, eb->n);
    if (cap < 0 || cap > INT32_MAX / 4) {
        bli_set_err(err, errlen, "tokenizer: the post-processor makes %lld tokens (at most %d)", (long long)cap,
                    INT32_MAX / 4);
        goto done;
    }
    /* [cap] ids, type ids, word ids; [cap][2] offsets */
    out->ids = malloc(((size_t)cap + 1) * sizeof *out->ids);
    out->type_ids = malloc(((size_t)cap + 1) * sizeof *out->type_ids);
    out->offsets = malloc(((size_t)cap + 1) * 2 * sizeof *out->offsets);
    out->word_ids = malloc(((size_t)cap + 1) * sizeof *out->word_ids);
    if (!out->ids || !out->type_ids || !out->offsets || !out->word_ids) {
        bl_tokens_free(out);
        bli_set_err(err, errlen, "tokenizer: out of memory");
        goto done;
    }
    int32_t n = 0, n_a = -1;
    int32_t *ids = out->ids, *types = out->type_ids, *words = out->word_ids, *offs = out->offsets;
    /* every write goes through these two, which stop at cap (never reached:
     * out_capacity counts the same pieces); a sequence's offsets go from
     * characters to UTF-16 (its map m of lim + 1 entries) */
#define SPECIAL(ID, TY) do { if (n >= cap) goto overrun; \
        ids[n] = (ID), types[n] = (TY), words[n] = -1, offs[2 * n] = offs[2 * n + 1] = 0; n++; } while (0)
#define SEQ(E, S, TY) do { if ((E)->n > cap - n) goto overrun; \
        const int32_t *m = (S) ? ub : ua, lim = (S) ? nb_chars : na_chars; \
        for (int32_t q = 0; q < (E)->n; q++, n++) { \
            const bli_hftoken *v = &(E)->v[q]; \
            ids[n] = v->id, types[n] = (TY), words[n] = v->word; \
            offs[2 * n] = m[v->o0 < lim ? (v->o0 < 0 ? 0 : v->o0) : lim]; \
            offs[2 * n + 1] = m[v->o1 < lim ? (v->o1 < 0 ? 0 : v->o1) : lim]; \
        } } while (0)
    switch (t->proc) {
    case HF_P_ROBERTA:
        SPECIAL(t->cls_id, 0); SEQ(ea, 0, 0); SPECIAL(t->sep_id, 0);
        if (pair) { n_a = n; SPECIAL(t->sep_id, 0); SEQ(eb, 1, 0); SPECIAL(t->sep_id, 0); }
        break;
    case HF_P_BERT:
        SPECIAL(t->cls_id, 0); SEQ(ea, 0, 0); SPECIAL(t->sep_id, 0);
        if (pair) { n_a = n; SEQ(eb, 1, 1); SPECIAL(t->sep_id, 1); }
        break;
    case HF_P_TEMPLATE: {
        const tpiece *p = pair ? t->pair : t->single;
        int32_t np = pair ? t->n_pair : t->n_single;
        /* A's part of a pair is what the single template puts after $A
         * (XLM-R's <s> $A </s> </s> $B </s>: one </s> is A's, the next B's,
         * as RobertaProcessing splits it), at most up to $B */
        int32_t a_end = -1, after_a = 0;
        for (int32_t k = 0, seen = 0; k < t->n_single; k++) {
            if (!t->single[k].special) seen = t->single[k].seq == 0;
            else if (seen) after_a += t->single[k].n_ids;
        }
        for (int32_t k = 0; k < np; k++) {
            if (p[k].special) {
                for (int32_t q = 0; q < p[k].n_ids; q++) SPECIAL(p[k].ids[q], p[k].type_id);
            } else if (p[k].seq == 0) {
                SEQ(ea, 0, p[k].type_id);
                a_end = n;
            } else {
                if (n_a < 0) n_a = a_end >= 0 && a_end + after_a <= n ? a_end + after_a : n;
                if (!pair) continue;
                SEQ(eb, 1, p[k].type_id);
            }
        }
        break;
    }
    default:
        SEQ(ea, 0, 0);
        if (pair) { n_a = n; SEQ(eb, 1, 1); }
    }
#undef SPECIAL
#undef SEQ
    out->n = n;
    out->n_a = n_a < 0 ? n : n_a;
    rc = 0;
    goto done;
overrun:
    bl_tokens_free(out);
    bli_set_err(err, errlen, "tokenizer: internal error: the post-processor's output passed its %lld tokens",
                (long long)cap);
done:
    work_give(t, wk, alen + (pair ? blen : 0));
    return rc;
}

/* bertlens.h: what bl_tokenize and bli_hftok_encode return, freed. */
void bl_tokens_free(bl_tokens *toks) {
    if (!toks) return;
    free(toks->ids);
    free(toks->type_ids);
    free(toks->offsets);
    free(toks->word_ids);
    memset(toks, 0, sizeof *toks);
}
