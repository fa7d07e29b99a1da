/* explain_json.c — an explanation as the JSON `bertlens explain` prints and
 * the wasm export returns (one writer for both):
 *   {"ids", "tokens", "position", "target", "label", "method", "steps",
 *    "scores": [T], "logit", "baseline", "delta", "sum", "prob",
 *    "heads": [L][H] (when computed)}
 * "label": the target word (masked-LM), null past the tokenizer's vocabulary. */
#include "explain.h"
#include "text/json.h"

#include <string.h>

static void tok(bli_jbuf *b, const bl_tokenizer *tk, int32_t id) {
    const char *s = id >= 0 && id < bl_tokenizer_vocab_size(tk) ? bl_token_str(tk, id) : NULL;
    if (s) bli_json_string(b, s, strlen(s));
    else bli_json_raw(b, "null", 4);
}

static void num(bli_jbuf *b, double x) {
    char n[BLI_JSON_NUM_CHARS];
    bli_json_num(n, x);
    bli_json_raw(b, n, strlen(n));
}

static void key(bli_jbuf *b, const char *k) { bli_json_raw(b, k, strlen(k)); }

void bli_explain_json(bli_jbuf *b, const bl_model *m, const int32_t *ids, const bl_explain *e,
                      const bl_explain_opts *o, const char *label) {
    const bl_tokenizer *tk = bl_model_tokenizer(m);
    const bl_config *c = bl_model_config(m);
    key(b, "{\"ids\":[");
    for (int32_t t = 0; t < e->T; t++) {
        if (t) key(b, ",");
        bli_json_int(b, ids[t]);
    }
    key(b, "],\"tokens\":[");
    for (int32_t t = 0; t < e->T; t++) {
        if (t) key(b, ",");
        tok(b, tk, ids[t]);
    }
    key(b, "],\"position\":");
    bli_json_int(b, e->position);
    key(b, ",\"target\":");
    bli_json_int(b, e->target);
    key(b, ",\"label\":");
    if (label) bli_json_string(b, label, strlen(label));
    else tok(b, tk, e->target);
    key(b, o->method == BL_EXPLAIN_IG ? ",\"method\":\"ig\",\"steps\":" : ",\"method\":\"grad-input\",\"steps\":");
    bli_json_int(b, o->method == BL_EXPLAIN_IG ? (o->steps > 0 ? o->steps : 32) : 0);
    key(b, ",\"scores\":[");
    for (int32_t t = 0; t < e->T; t++) {
        if (t) key(b, ",");
        num(b, e->scores[t]);
    }
    key(b, "],\"logit\":");
    num(b, e->logit);
    key(b, ",\"baseline\":");
    num(b, e->baseline);
    key(b, ",\"delta\":");
    num(b, e->delta);
    key(b, ",\"sum\":");
    num(b, e->sum);
    key(b, ",\"prob\":");
    num(b, e->prob);
    if (e->heads) {
        key(b, ",\"heads\":[");
        for (int32_t l = 0; l < c->n_layers; l++) {
            key(b, l ? ",[" : "[");
            for (int32_t h = 0; h < c->n_heads; h++) {
                if (h) key(b, ",");
                num(b, e->heads[(size_t)l * c->n_heads + h]);
            }
            key(b, "]");
        }
        key(b, "]");
    }
    key(b, "}");
}
