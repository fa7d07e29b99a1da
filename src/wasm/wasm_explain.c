/* wasm_explain.c — token attributions and head effects at the wasm boundary
 * (blw_explain_json), over the model and the last run of wasm_api.c: the
 * JSON `bertlens explain` prints (explain_json.c).
 */
#include "bertlens.h"
#include "analysis/explain.h"
#include "text/json.h"
#include "wasm_api.h"

#include <stdio.h>

#ifdef __EMSCRIPTEN__
#include <emscripten.h>
#else
#define EMSCRIPTEN_KEEPALIVE
#endif

/* Explain the bundle's task head (sequence / token classification;
 * explain_task.c), else its masked-LM head's prediction, for the text of the last blw_run,
 * which must have kept every layer's hidden states (flags BL_KEEP_HIDDEN =
 * 8) and the final ones (blw_set_final(1), the default). method 0
 * grad-input, 1 ig (steps M, 0: 32); position -1: the first mask; target
 * -1: the top word there; heads 1: head effects too. The run's head mask
 * (blw_set_head_mask) applies. Afterwards the state holds that run again.
 * NULL + blw_error on failure. */
EMSCRIPTEN_KEEPALIVE const char *blw_explain_json(int method, int steps, int position, int target, int heads) {
    char *err = bli_wasm_err();
    const bl_model *m = bli_wasm_model(NULL);
    const bl_tokens *tk = bli_wasm_run_tokens();
    bl_state *s = bli_wasm_state();
    if (!m || !tk || !s) {
        snprintf(err, BLI_WASM_ERRLEN, "no run to explain: call blw_run first");
        return NULL;
    }
    if (!bl_hidden(s, 0) || !bl_hidden(s, bl_model_config(m)->n_layers)) {
        snprintf(err, BLI_WASM_ERRLEN, "the run kept no hidden states: run with flags 8 (BL_KEEP_HIDDEN) and "
                                       "blw_set_final(1)");
        return NULL;
    }
    bl_explain_opts o = {.method = method == 1 ? BL_EXPLAIN_IG : BL_EXPLAIN_GRAD_INPUT,
                         .steps = steps > 0 ? steps : 32,
                         .position = position,
                         .target = target,
                         .heads = heads ? 1 : 0};
    bl_explain e;
    bl_task_head *th = NULL; /* the bundle's task head is the target when it has one */
    if (bl_model_task_kind(m) != BL_TASK_NONE && !(th = bl_task_head_new(m, err, BLI_WASM_ERRLEN))) return NULL;
    if (th ? bli_explain_task(s, th, tk, &o, &e, err, BLI_WASM_ERRLEN)
           : bl_explain_mlm(s, tk->ids, tk->type_ids, tk->n, &o, &e, err, BLI_WASM_ERRLEN)) {
        bl_task_head_free(th);
        return NULL;
    }
    bli_jbuf j = {0};
    bli_explain_json(&j, m, tk->ids, &e, &o, !th ? NULL : bl_task_head_kind(th) == BL_TASK_QA ? "answer span" : bl_task_head_label(th, e.target));
    bl_explain_free(&e);
    bl_task_head_free(th);
    /* the state holds the run again: bli_explain_run ends with the text's
     * forward pass (under the run's head mask) */
    const char *out;
    bli_wasm_json(&j, &out);
    return out;
}
