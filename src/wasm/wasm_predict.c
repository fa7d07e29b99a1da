/* wasm_predict.c — the heads at the wasm boundary, over the model and the
 * last run of wasm_api.c: the masked-LM head (blw_has_head,
 * blw_predict_json; the worker's 'predict' message,
 * web/js/engine/worker_predict.js, calls them), its logit lens
 * (blw_lens_json) and a task head (blw_task_kind, blw_task_json).
 */
#include "bertlens.h"
#include "text/json.h"
#include "wasm_api.h"
#include "model/task_head.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __EMSCRIPTEN__
#include <emscripten.h>
#else
#define EMSCRIPTEN_KEEPALIVE
#endif

static struct {
    bl_mlm *mlm;     /* the head of the model of load number `loads`  */
    unsigned loads;
    bl_task_head *task; /* the task head of load number `task_loads`  */
    unsigned task_loads;
} p;

/* The model and tokens of the last blw_run, with the masked-LM head of
 * that model made (or kept from before): 1, or 0 with err set. */
static int run_head(const bl_model **m, const bl_tokens **tk, char *err) {
    unsigned loads;
    *m = bli_wasm_model(&loads);
    *tk = bli_wasm_run_tokens();
    if (!*m || !*tk) {
        snprintf(err, BLI_WASM_ERRLEN, "no run to predict from: call blw_run first");
        return 0;
    }
    if (p.mlm && p.loads != loads) {
        bl_mlm_free(p.mlm);
        p.mlm = NULL;
    }
    if (!p.mlm && !(p.mlm = bl_mlm_new(*m, err, BLI_WASM_ERRLEN))) return 0;
    p.loads = loads;
    return 1;
}

/* 1 when the loaded model has a masked-LM head, 0 when not, -1: no model. */
EMSCRIPTEN_KEEPALIVE int blw_has_head(void) {
    const bl_model *m = bli_wasm_model(NULL);
    if (!m) return -1;
    bl_head_info hi;
    bl_model_head_info(m, &hi);
    return hi.present;
}

static void jprintf(bli_jbuf *b, const char *fmt, ...) {
    char tmp[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n > 0) bli_json_raw(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

static void jtoken(bli_jbuf *b, const bl_tokenizer *tk, int32_t id) {
    const char *s = id >= 0 && id < bl_tokenizer_vocab_size(tk) ? bl_token_str(tk, id) : NULL;
    if (s) bli_json_string(b, s, strlen(s));
    else bli_json_raw(b, "null", 4);
}

/* The head's predictions for the last blw_run (which must have kept the
 * final hidden states: blw_set_final(1)) at positions[0..n_pos) and, with
 * masks = 1, at every token that is the tokenizer's mask token (in token
 * order, each once); positions NULL with n_pos 0 and masks 0: every token.
 * k per position. JSON as `bertlens predict`
 * prints it, each position with "token_rank" (1 = the most probable) too:
 * {"tokens","ids","positions":[{"index","token","token_prob","token_rank",
 * "top":[{"id","token","prob"}]}]}. NULL + blw_error on failure.
 * was[0..2 n_was): pairs (position, id) of words the page masked: where the
 * run has the mask token at that position, "token_prob" and "token_rank"
 * are those of id (the word that was there, which the model did not see)
 * and the position says so with "was":{"id","token"}; other pairs are left
 * alone (the text changed under them). */
const char *blw_predict_json_was(const int32_t *positions, int n_pos, int k, int masks, const int32_t *was, int n_was);

EMSCRIPTEN_KEEPALIVE const char *blw_predict_json(const int32_t *positions, int n_pos, int k, int masks) {
    return blw_predict_json_was(positions, n_pos, k, masks, NULL, 0);
}

EMSCRIPTEN_KEEPALIVE const char *blw_predict_json_was(const int32_t *positions, int n_pos, int k, int masks,
                                                      const int32_t *was, int n_was) {
    char num[BLI_JSON_NUM_CHARS]; /* a float as JSON (json.h) */
    char *err = bli_wasm_err();
    const bl_model *m;
    const bl_tokens *tk;
    if (!run_head(&m, &tk, err)) return NULL;
    const int32_t V = bl_model_config(m)->vocab_size;
    if (k < 1) k = 1;
    if (k > V) k = V;
    const int all = !positions && !n_pos && !masks;
    if (!positions) n_pos = 0;
    if (n_pos < 0 || n_pos > tk->n) {
        snprintf(err, BLI_WASM_ERRLEN, "%d positions asked for a run of %d tokens", n_pos, tk->n);
        return NULL;
    }
    /* the positions, in token order, each once: [tk->n] flags first */
    const int cap = tk->n;
    int32_t *pos = calloc((size_t)cap, sizeof *pos);
    int32_t *ids = calloc((size_t)cap * (size_t)k, sizeof *ids);
    float *probs = calloc((size_t)cap * (size_t)k, sizeof *probs);
    float *tp = calloc((size_t)cap, sizeof *tp);
    int32_t *rank = calloc((size_t)cap, sizeof *rank);
    int32_t *scored = malloc((size_t)cap * sizeof *scored); /* [tk->n] the id whose probability and rank are reported */
    const char *out = NULL;
    if (!pos || !ids || !probs || !tp || !rank || !scored) {
        snprintf(err, BLI_WASM_ERRLEN, "out of memory for %d predictions", cap);
        goto done;
    }
    bl_special_ids sp;
    bl_tokenizer_special(bl_model_tokenizer(m), &sp);
    for (int i = 0; i < n_pos; i++)
        if (positions[i] >= 0 && positions[i] < tk->n) pos[positions[i]] = 1;
    for (int t = 0; t < tk->n; t++)
        if (all || (masks && sp.mask >= 0 && tk->ids[t] == sp.mask)) pos[t] = 1;
    n_pos = 0;
    for (int t = 0; t < tk->n; t++)
        if (pos[t]) pos[n_pos++] = t;
    memcpy(scored, tk->ids, (size_t)tk->n * sizeof *scored);
    for (int i = 0; was && i < n_was; i++) {
        const int32_t at = was[2 * i], id = was[2 * i + 1];
        if (at >= 0 && at < tk->n && sp.mask >= 0 && tk->ids[at] == sp.mask && id >= 0 && id < V) scored[at] = id;
    }
    if (bl_predict(p.mlm, bli_wasm_state(), scored, pos, n_pos, k, ids, probs, tp, rank, err, BLI_WASM_ERRLEN))
        goto done;
    const bl_tokenizer *tok = bl_model_tokenizer(m);
    bli_jbuf b = {0};
    bli_json_raw(&b, "{\"mask_token\":", 14);
    jtoken(&b, tok, sp.mask);
    bli_json_raw(&b, ",\"tokens\":[", 11);
    for (int t = 0; t < tk->n; t++) {
        if (t) bli_json_raw(&b, ",", 1);
        jtoken(&b, tok, tk->ids[t]);
    }
    bli_json_raw(&b, "],\"ids\":[", 9);
    for (int t = 0; t < tk->n; t++) jprintf(&b, t ? ",%d" : "%d", tk->ids[t]);
    bli_json_raw(&b, "],\"positions\":[", 15);
    for (int q = 0; q < n_pos; q++) {
        jprintf(&b, "%s{\"index\":%d,\"token\":", q ? "," : "", pos[q]);
        jtoken(&b, tok, tk->ids[pos[q]]);
        if (scored[pos[q]] != tk->ids[pos[q]]) {
            jprintf(&b, ",\"was\":{\"id\":%d,\"token\":", scored[pos[q]]);
            jtoken(&b, tok, scored[pos[q]]);
            bli_json_raw(&b, "}", 1);
        }
        jprintf(&b, ",\"token_prob\":%s,\"token_rank\":%d,\"top\":[", bli_json_num(num, (double)tp[q]), rank[q]);
        for (int r = 0; r < k; r++) {
            int32_t id = ids[(size_t)q * k + r];
            jprintf(&b, "%s{\"id\":%d,\"token\":", r ? "," : "", id);
            jtoken(&b, tok, id);
            jprintf(&b, ",\"prob\":%s}", bli_json_num(num, (double)probs[(size_t)q * k + r]));
        }
        bli_json_raw(&b, "]}", 2);
    }
    bli_json_raw(&b, "]}", 2);
    bli_wasm_json(&b, &out);
done:
    free(pos), free(ids), free(probs), free(tp), free(rank), free(scored);
    return out;
}

/* ------------------------------------------------------------ task head */

/* The loaded model's task head (bertlens.h BL_TASK_*: 0 none), -1: no model. */
EMSCRIPTEN_KEEPALIVE int blw_task_kind(void) {
    const bl_model *m = bli_wasm_model(NULL);
    return m ? bl_model_task_kind(m) : -1;
}

/* The task head's output for the last blw_run (which computed the final
 * hidden states), as `bertlens predict` prints it (task_head.h
 * bli_task_json); text_b: the run's second text (question answering: the
 * context, for the answer's text), or NULL. NULL + blw_error on failure. */
EMSCRIPTEN_KEEPALIVE const char *blw_task_json(const char *text_b) {
    char *err = bli_wasm_err();
    unsigned loads;
    const bl_model *m = bli_wasm_model(&loads);
    const bl_tokens *tk = bli_wasm_run_tokens();
    const float *x = m && tk ? bl_hidden(bli_wasm_state(), bl_model_config(m)->n_layers) : NULL;
    if (!m || !tk || !x) {
        snprintf(err, BLI_WASM_ERRLEN, "no run with final hidden states: call blw_run first (blw_set_final(1))");
        return NULL;
    }
    if (p.task && p.task_loads != loads) {
        bl_task_head_free(p.task);
        p.task = NULL;
    }
    if (!p.task && !(p.task = bl_task_head_new(m, err, BLI_WASM_ERRLEN))) return NULL;
    p.task_loads = loads;
    bli_jbuf b = {0};
    const char *out = NULL;
    if (bli_task_json(&b, p.task, bl_model_tokenizer(m), tk, text_b, x, err, BLI_WASM_ERRLEN)) {
        bli_jbuf_free(&b);
        return NULL;
    }
    bli_wasm_json(&b, &out);
    return out;
}

/* The masked-LM head's logit lens for the last blw_run, which kept every
 * layer's hidden states (flags with BL_KEEP_HIDDEN): every token, k per
 * position, at every layer (bl_predict_layer):
 * {"layers":[{"layer","positions":[{"index","top":[{"id","token","prob"}]}]}]}
 * as `bertlens predict --layers` prints them. NULL + blw_error on failure. */
const char *blw_lens_json_at(const int32_t *positions, int n_pos, int k);

EMSCRIPTEN_KEEPALIVE const char *blw_lens_json(int k) { return blw_lens_json_at(NULL, 0, k); }

/* The same at positions[0..n_pos) only (in the order given; each must be a
 * token of the run), or every token when positions is NULL: the page's
 * Decision view asks for the blanks alone (the head over the whole
 * vocabulary at every token and layer is most of the lens's work). */
EMSCRIPTEN_KEEPALIVE const char *blw_lens_json_at(const int32_t *positions, int n_pos, int k) {
    char num[BLI_JSON_NUM_CHARS];
    char *err = bli_wasm_err();
    const bl_model *m;
    const bl_tokens *tk;
    if (!run_head(&m, &tk, err)) return NULL;
    const int32_t V = bl_model_config(m)->vocab_size, L = bl_model_config(m)->n_layers, T = tk->n;
    if (k < 1) k = 1;
    if (k > V) k = V;
    int32_t *pos = calloc((size_t)T, sizeof *pos), *ids = calloc((size_t)T * (size_t)k, sizeof *ids);
    float *probs = calloc((size_t)T * (size_t)k, sizeof *probs), *tp = calloc((size_t)T, sizeof *tp);
    int32_t *rank = calloc((size_t)T, sizeof *rank);
    const char *out = NULL;
    bli_jbuf b = {0};
    if (!pos || !ids || !probs || !tp || !rank) {
        snprintf(err, BLI_WASM_ERRLEN, "out of memory for %d predictions", T);
        goto done;
    }
    int32_t n = T; /* positions asked: pos[0..n) */
    if (positions) {
        if (n_pos < 0 || n_pos > T) {
            snprintf(err, BLI_WASM_ERRLEN, "%d lens positions asked for a run of %d tokens", n_pos, T);
            goto done;
        }
        n = n_pos;
        for (int32_t q = 0; q < n; q++) {
            if (positions[q] < 0 || positions[q] >= T) {
                snprintf(err, BLI_WASM_ERRLEN, "no token %d in a run of %d tokens", positions[q], T);
                goto done;
            }
            pos[q] = positions[q];
        }
    } else
        for (int32_t t = 0; t < T; t++) pos[t] = t;
    const bl_tokenizer *tok = bl_model_tokenizer(m);
    bli_json_raw(&b, "{\"layers\":[", 11);
    for (int32_t l = 1; l <= L; l++) {
        if (bl_predict_layer(p.mlm, bli_wasm_state(), l, tk->ids, pos, n, k, ids, probs, tp, rank, err,
                             BLI_WASM_ERRLEN))
            goto done;
        jprintf(&b, "%s{\"layer\":%d,\"positions\":[", l > 1 ? "," : "", l);
        for (int32_t q = 0; q < n; q++) {
            jprintf(&b, "%s{\"index\":%d,\"top\":[", q ? "," : "", pos[q]);
            for (int r = 0; r < k; r++) {
                jprintf(&b, "%s{\"id\":%d,\"token\":", r ? "," : "", ids[(size_t)q * k + r]);
                jtoken(&b, tok, ids[(size_t)q * k + r]);
                jprintf(&b, ",\"prob\":%s}", bli_json_num(num, (double)probs[(size_t)q * k + r]));
            }
            bli_json_raw(&b, "]}", 2);
        }
        bli_json_raw(&b, "]}", 2);
    }
    bli_json_raw(&b, "]}", 2);
    bli_wasm_json(&b, &out);
done:
    if (!out) bli_jbuf_free(&b);
    free(pos), free(ids), free(probs), free(tp), free(rank);
    return out;
}
