/* convert_tok_agree.c — a checkpoint's tokenizer settings in two places must
 * say the same thing, or the converter refuses the folder, naming both.
 *
 * Hugging Face has two readings of a folder's tokenizer. The tokenizers
 * library (and bertlens: the tokenizer.json pipeline, or the WordPiece path
 * for BERT's own) runs tokenizer.json as written. transformers' model
 * classes (BertTokenizer, RobertaTokenizer, ... as tokenizer_config.json's
 * tokenizer_class or config.json's model_type name them) take only the
 * vocabulary from it and build the rest from tokenizer_config.json's
 * settings, or from the class's defaults where the file has none
 * (transformers 5; transformers 4's fast classes already replaced BERT's
 * normalizer and RoBERTa's add_prefix_space from them). Where the two agree
 * there is one tokenization, which bertlens gives; where they do not, no
 * bundle can be both, so the folder is refused with the setting, its two
 * values and how to make them agree. Measured against transformers 5.24 on
 * crafted folders (tests/fixtures/tok_settings/make.py): each setting
 * checked here changes transformers' tokens when it disagrees.
 *
 *   class (tokenizer_class, "Fast" dropped;  setting (class default)  in tokenizer.json
 *          else by model_type)
 *   BERT: Bert/DistilBert/Electra/MPNet      do_lower_case (true)          BertNormalizer lowercase
 *                                            strip_accents (None: as       BertNormalizer strip_accents
 *                                              lowercase)                    (None: as lowercase)
 *                                            tokenize_chinese_chars (true) BertNormalizer handle_chinese_chars
 *                                            (always)                      BertNormalizer clean_text true
 *                                            unk_token ([UNK])             WordPiece unk_token
 *   RobertaTokenizer                         add_prefix_space (false)      ByteLevel add_prefix_space
 *   XLMRoberta/Camembert                     add_prefix_space (true)       Metaspace prepend_scheme always/never
 *   AlbertTokenizer                          do_lower_case (true)          a Lowercase normalizer
 *                                            keep_accents (false)          no StripAccents normalizer
 *                                            add_prefix_space (true)       Metaspace always/never
 *   DebertaV2Tokenizer                       do_lower_case (false)         a Lowercase normalizer
 *                                            split_by_punct (false)        a Punctuation pre-tokenizer
 *                                            add_prefix_space (true)       Metaspace always/first
 * Another class (TokenizersBackend, PreTrainedTokenizerFast, ModernBERT's)
 * runs tokenizer.json as written in transformers too: nothing to compare.
 * `bertlens convert --cased` says the model is cased: its lowercase and
 * accent settings are not compared (the bundle is cased).
 *
 * Not compared: WordPiece's max_input_chars_per_word. bertlens follows
 * tokenizer.json (0: every word unknown, as the tokenizers library and
 * transformers 4); transformers 5's BertTokenizer rebuilds WordPiece with
 * 100 whatever the file says.
 */
#include "conv_state.h"
#include "base/error.h"

#include <stdio.h>
#include <string.h>

enum { K_NONE, K_BERT, K_ROBERTA, K_XLMR, K_ALBERT, K_DEBERTA };

static int str_is(const bli_jv *v, const char *s) { return v && v->type == BLI_JSTR && !strcmp(v->str, s); }

/* The transformers class kind of tokenizer_class (else model_type). */
static int class_kind(const bli_jv *tc, const char *model_type, const char **name) {
    static const struct {
        const char *cls, *type;
        int kind;
    } map[] = {{"BertTokenizer", "bert", K_BERT},          {"DistilBertTokenizer", "distilbert", K_BERT},
               {"ElectraTokenizer", "electra", K_BERT},    {"MPNetTokenizer", "mpnet", K_BERT},
               {"RobertaTokenizer", "roberta", K_ROBERTA}, {"XLMRobertaTokenizer", "xlm-roberta", K_XLMR},
               {"CamembertTokenizer", "camembert", K_XLMR}, {"AlbertTokenizer", "albert", K_ALBERT},
               {"DebertaV2Tokenizer", "deberta-v2", K_DEBERTA}};
    const bli_jv *tcl = bli_jget(tc, "tokenizer_class");
    if (tcl && tcl->type == BLI_JSTR) {
        size_t n = tcl->len;
        if (n > 4 && !strcmp(tcl->str + n - 4, "Fast")) n -= 4;
        for (size_t i = 0; i < sizeof map / sizeof *map; i++)
            if (strlen(map[i].cls) == n && !memcmp(map[i].cls, tcl->str, n)) {
                *name = map[i].cls;
                return map[i].kind;
            }
        return K_NONE;
    }
    for (size_t i = 0; model_type && i < sizeof map / sizeof *map; i++)
        if (!strcmp(map[i].type, model_type)) {
            *name = map[i].cls;
            return map[i].kind;
        }
    return K_NONE;
}

/* The first component of `type` in v, or in its Sequence's `list` (nested). */
static const bli_jv *find_type(const bli_jv *v, const char *list, const char *type, int depth) {
    if (!v || v->type != BLI_JOBJ || depth > 8) return NULL;
    if (str_is(bli_jget(v, "type"), type)) return v;
    const bli_jv *items = bli_jget(v, list);
    for (size_t i = 0; items && items->type == BLI_JARR && i < items->n; i++) {
        const bli_jv *f = find_type(&items->items[i], list, type, depth + 1);
        if (f) return f;
    }
    return NULL;
}

/* A boolean setting of tokenizer_config.json: 1, 0, -1 (null), or dflt when absent. */
static int tc_bool(const bli_jv *tc, const char *key, int dflt) {
    const bli_jv *v = bli_jget(tc, key);
    if (!v) return dflt;
    return v->type == BLI_JNULL ? -1 : bli_jtruthy(v);
}

static const char *said(int v) { return v < 0 ? "null" : v ? "true" : "false"; }

/* Refusal: `what` of tokenizer.json is `file`, but tokenizer_config.json's `key` is `want`. */
static int disagree(const char *cls, const char *what, const char *file, const char *key, const char *want,
                    const bli_jv *tc, const char *fix, char *err, size_t errlen) {
    bli_set_err(err, errlen,
                "tokenizer.json's %s is %s but tokenizer_config.json's %s is %s%s: transformers' %s builds its "
                "tokenizer from tokenizer_config.json, the tokenizers library runs tokenizer.json, and no bundle "
                "can tokenize as both; %s so that they agree",
                what, file, key, want, bli_jget(tc, key) ? "" : " (the class's default: the file does not set it)",
                cls, fix);
    return -1;
}

/* Metaspace's effective prepend scheme ("always", "first", "never"), NULL: none. */
static const char *metaspace_scheme(const bli_jv *pre) {
    const bli_jv *m = find_type(pre, "pretokenizers", "Metaspace", 0);
    if (!m) return NULL;
    const bli_jv *ps = bli_jget(m, "prepend_scheme"), *ap = bli_jget(m, "add_prefix_space");
    if (ps && ps->type == BLI_JSTR) return ps->str;
    return !ap || bli_jtruthy(ap) ? "always" : "never";
}

/* off: the scheme add_prefix_space false gives; one_section: nothing splits
 * the text before Metaspace, so "first" prepends where "always" does. */
/* SentencePiece classes (ALBERT, DeBERTa-v2): the normalizer lowercases
 * exactly when tokenizer_config.json's do_lower_case (default dflt) says so;
 * a --cased conversion keeps the file's own choice. */
static int check_lowercase(const char *cls, const bli_conv *c, const bli_jv *norm, const bli_jv *tc, int dflt,
                           char *err, size_t errlen) {
    const int have = find_type(norm, "normalizers", "Lowercase", 0) != NULL, want = tc_bool(tc, "do_lower_case", dflt) > 0;
    if (c->cased || have == want) return 0;
    return disagree(cls, "normalizer", have ? "lowercasing" : "not lowercasing", "do_lower_case", said(want), tc,
                    "set do_lower_case in tokenizer_config.json", err, errlen);
}

static int check_metaspace(const char *cls, const bli_jv *tj, const bli_jv *tc, const char *off, int one_section,
                           char *err, size_t errlen) {
    const char *have = metaspace_scheme(bli_jget(tj, "pre_tokenizer"));
    if (!have) return 0; /* no Metaspace: another pipeline, as written in both */
    const int aps = tc_bool(tc, "add_prefix_space", 1) > 0;
    const char *want = aps ? "always" : off;
    if (!strcmp(have, want)) return 0;
    if (one_section && strcmp(have, "never") && strcmp(want, "never")) return 0; /* first = always here */
    char file[48], want_s[64];
    snprintf(file, sizeof file, "\"%.24s\"", have);
    snprintf(want_s, sizeof want_s, "%s (prepend_scheme \"%s\")", said(aps), want);
    return disagree(cls, "Metaspace prepend_scheme", file, "add_prefix_space", want_s, tc,
                    "set add_prefix_space in tokenizer_config.json", err, errlen);
}

int bli_conv_tok_agree(const bli_conv *c, const bli_jv *tj, const bli_jv *tc, char *err, size_t errlen) {
    if (!tj) return 0; /* a vocab.txt alone: transformers builds from tokenizer_config.json as bertlens does */
    const char *cls = NULL;
    const int kind = class_kind(tc, c->fam.name[0] ? c->fam.name : "bert", &cls);
    const bli_jv *norm = bli_jget(tj, "normalizer"), *pre = bli_jget(tj, "pre_tokenizer");
    const bli_jv *model = bli_jget(tj, "model");
    switch (kind) {
    case K_BERT: {
        const bli_jv *bn = find_type(norm, "normalizers", "BertNormalizer", 0);
        if (!bn) return 0; /* not BERT's normalizer: refused or run as written elsewhere */
        const bli_jv *lc = bli_jget(bn, "lowercase"), *sa = bli_jget(bn, "strip_accents");
        const bli_jv *ch = bli_jget(bn, "handle_chinese_chars"), *ct = bli_jget(bn, "clean_text");
        /* tokenizers' defaults for a field left out: lowercase, clean_text and handle_chinese_chars true */
        const int n_lc = !lc || bli_jtruthy(lc), n_ch = !ch || bli_jtruthy(ch), n_ct = !ct || bli_jtruthy(ct);
        const int n_sa = !sa || sa->type == BLI_JNULL ? n_lc : bli_jtruthy(sa);
        const int t_lc = tc_bool(tc, "do_lower_case", 1) > 0, t_ch = tc_bool(tc, "tokenize_chinese_chars", 1) > 0;
        const int t_sar = tc_bool(tc, "strip_accents", -1), t_sa = t_sar < 0 ? t_lc : t_sar;
        char what[96];
        if (!c->cased && n_lc != t_lc)
            return disagree(cls, "BertNormalizer lowercase", said(n_lc), "do_lower_case", said(t_lc), tc,
                            "set do_lower_case in tokenizer_config.json (or lowercase in tokenizer.json)", err, errlen);
        if (!c->cased && n_sa != t_sa) {
            snprintf(what, sizeof what, "BertNormalizer strip_accents (%s, with lowercase %s)",
                     !sa || sa->type == BLI_JNULL ? "null" : said(bli_jtruthy(sa)), said(n_lc));
            char want[48];
            snprintf(want, sizeof want, "%s (with do_lower_case %s)", said(t_sar), said(t_lc));
            return disagree(cls, what, n_sa ? "stripping accents" : "keeping accents", "strip_accents", want, tc,
                            "set strip_accents in tokenizer_config.json to what tokenizer.json's normalizer does",
                            err, errlen);
        }
        if (n_ch != t_ch)
            return disagree(cls, "BertNormalizer handle_chinese_chars", said(n_ch), "tokenize_chinese_chars",
                            said(t_ch), tc, "set tokenize_chinese_chars in tokenizer_config.json", err, errlen);
        if (!n_ct) {
            bli_set_err(err, errlen,
                        "tokenizer.json's BertNormalizer has clean_text false: transformers 5's %s always cleans the "
                        "text (control characters dropped, whitespace made spaces), the tokenizers library and "
                        "transformers 4 do not, and no bundle can tokenize as both; set clean_text to true",
                        cls);
            return -1;
        }
        const bli_jv *unk = bli_jget(model, "unk_token"), *tunk = bli_jget(tc, "unk_token");
        if (tunk && tunk->type == BLI_JOBJ) tunk = bli_jget(tunk, "content");
        const char *want_unk = tunk && tunk->type == BLI_JSTR ? tunk->str : "[UNK]";
        if (str_is(model ? bli_jget(model, "type") : NULL, "WordPiece") && unk && unk->type == BLI_JSTR &&
            strcmp(unk->str, want_unk)) {
            char what[80], file[80], want[80];
            snprintf(what, sizeof what, "WordPiece unk_token");
            snprintf(file, sizeof file, "\"%.60s\"", unk->str);
            snprintf(want, sizeof want, "\"%.60s\"", want_unk);
            return disagree(cls, what, file, "unk_token", want, tc, "name the same unknown token in both", err, errlen);
        }
        return 0;
    }
    case K_ROBERTA: {
        const bli_jv *bl = find_type(pre, "pretokenizers", "ByteLevel", 0);
        if (!bl) return 0;
        const bli_jv *ap = bli_jget(bl, "add_prefix_space");
        const int have = !ap || bli_jtruthy(ap), want = tc_bool(tc, "add_prefix_space", 0) > 0;
        if (have == want) return 0;
        return disagree(cls, "ByteLevel add_prefix_space", said(have), "add_prefix_space", said(want), tc,
                        "set add_prefix_space in tokenizer_config.json", err, errlen);
    }
    case K_XLMR: return check_metaspace(cls, tj, tc, "never", 0, err, errlen);
    case K_ALBERT: {
        const int have_sa = find_type(norm, "normalizers", "StripAccents", 0) != NULL;
        const int keep = tc_bool(tc, "keep_accents", 0) > 0;
        if (check_lowercase(cls, c, norm, tc, 1, err, errlen)) return -1;
        if (!c->cased && have_sa == keep)
            return disagree(cls, "normalizer", have_sa ? "stripping accents" : "keeping accents", "keep_accents",
                            said(keep), tc, "set keep_accents in tokenizer_config.json", err, errlen);
        return check_metaspace(cls, tj, tc, "never", 0, err, errlen);
    }
    case K_DEBERTA: {
        const int have_p = find_type(pre, "pretokenizers", "Punctuation", 0) != NULL;
        const int want_p = tc_bool(tc, "split_by_punct", 0) > 0;
        if (check_lowercase(cls, c, norm, tc, 0, err, errlen)) return -1;
        if (have_p != want_p)
            return disagree(cls, "pre-tokenizer", have_p ? "splitting at punctuation" : "not splitting at punctuation",
                            "split_by_punct", said(want_p), tc, "set split_by_punct in tokenizer_config.json", err,
                            errlen);
        return check_metaspace(cls, tj, tc, "first", !have_p, err, errlen);
    }
    default: return 0;
    }
}
