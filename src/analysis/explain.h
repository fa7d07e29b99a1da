/* explain.h — what explain.c explains: one logit of a head (internal).
 *
 * A target is a function of the final hidden states [T][hidden]: its logit,
 * the gradient of that logit with respect to them (what bl_backward takes),
 * and the probability the head gives it (for head effects). explain.c runs
 * the methods on any target; the masked-LM head is one (explain.c,
 * bli_target_mlm), a task head another (bl_task_head_backward adapts to it).
 */
#ifndef BL_EXPLAIN_H
#define BL_EXPLAIN_H

#include "bertlens.h"
#include "model/backward.h" /* the reverse-mode pass explain.c drives */

typedef struct bli_target {
    void *ctx;
    int32_t position, target; /* the token and the class / word explained */
    /* The target's logit from final [T][hidden]. */
    double (*logit)(void *ctx, const float *final, int32_t T);
    /* d_final [T][hidden] = d logit / d final; returns the logit. */
    double (*backward)(void *ctx, const float *final, int32_t T, float *d_final);
    /* The head's probability of the target. */
    double (*prob)(void *ctx, const float *final, int32_t T);
    /* NULL, or: choose the position and target from the text's final
     * hidden states (the predicted class, the top word, the best span),
     * setting *position and *target; 0, or -1 with a reason. explain.c
     * calls it after the text's forward pass, before anything else reads
     * position or target, so the target costs no forward pass of its own. */
    int (*pick)(void *ctx, const float *final, int32_t T, int32_t *position, int32_t *target, char *err,
                size_t errlen);
    void (*free)(void *ctx);
} bli_target;

/* Run opts' method (and head effects) for target t on s, which ran nothing
 * yet or anything: explain.c forwards it itself, and leaves s holding the
 * text's run (its hidden states, the head mask as it was) when it succeeds.
 * Forward passes: grad-input 2 (the baseline, the text) and one backward;
 * ig M + 3 and M + 1 backwards; head effects (L + 1) / 2 layers per head
 * and one more. */
int bli_explain_run(bl_state *s, const int32_t *ids, const int32_t *type_ids, int32_t T, const bli_target *t,
                    const bl_explain_opts *opts, bl_explain *out, char *err, size_t errlen);

/* Explain task head h's logit (explain_task.c) on the tokens toks:
 * sequence classification (opts' target, default the predicted class),
 * token classification (at opts' position, default the first token that is
 * not special) or question answering (start_logits[s] + end_logits[e] of
 * the best span, bli_qa_best_span: out->position = s, out->target = e). */
int bli_explain_task(bl_state *s, const bl_task_head *h, const bl_tokens *toks, const bl_explain_opts *o,
                     bl_explain *out, char *err, size_t errlen);

/* The explanation as JSON (explain_json.c): what `bertlens explain` prints;
 * "label": `label`, or NULL: the target word of the vocabulary (masked-LM). */
typedef struct bli_jbuf bli_jbuf;
void bli_explain_json(bli_jbuf *b, const bl_model *m, const int32_t *ids, const bl_explain *e,
                      const bl_explain_opts *o, const char *label);

#endif
