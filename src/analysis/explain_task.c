/* explain_task.c — a task head's logit as an explain target (explain.h):
 * sequence classification (the class logit; default the predicted class),
 * token classification (the class logit at one token; default the first
 * token that is not special, its predicted class) and question answering
 * (the best span's start logit plus its end logit), through
 * bl_task_head_backward (task_head.c). */
#include "explain.h"
#include "base/error.h"
#include "model/task_head.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const bl_task_head *h;
    int32_t pos, cls, C, rows;
    int qa;                /* question answering: pos = the span's start, cls = its end */
    int32_t D;             /* hidden width */
    float *logits, *probs; /* [rows][C] */
    float *d2;             /* question answering: [T][hidden], the end logit's gradient */
    const bl_tokens *toks;   /* the text's (question answering: the span must lie in the context) */
    const bl_tokenizer *tk;
    char *err;
    size_t errlen;
} task_target;

/* logits (and probs) of final [T][hidden]. */
static int task_fwd(task_target *k, const float *final, int32_t T) {
    if (bl_task_head_forward(k->h, final, T, k->logits, k->err, k->errlen)) return -1;
    bl_task_head_probs(k->h, k->logits, k->rows, k->probs);
    return 0;
}

static double task_logit(void *ctx, const float *final, int32_t T) {
    task_target *k = ctx;
    if (task_fwd(k, final, T)) return 0;
    if (k->qa) return (double)k->logits[(size_t)k->pos * 2] + k->logits[(size_t)k->cls * 2 + 1];
    return k->logits[(size_t)(k->rows > 1 ? k->pos : 0) * k->C + k->cls];
}

static double task_backward(void *ctx, const float *final, int32_t T, float *d_final) {
    task_target *k = ctx;
    float logit = 0, end = 0;
    if (!k->qa) {
        if (bl_task_head_backward(k->h, final, T, k->cls, k->pos, d_final, &logit, k->err, k->errlen)) return 0;
        return logit;
    }
    /* start_logits[s] + end_logits[e]: the sum of the two gradients */
    const size_t n = (size_t)T * (size_t)k->D;
    if (bl_task_head_backward(k->h, final, T, 0, k->pos, d_final, &logit, k->err, k->errlen) ||
        bl_task_head_backward(k->h, final, T, 1, k->cls, k->d2, &end, k->err, k->errlen))
        return 0;
    for (size_t i = 0; i < n; i++) d_final[i] += k->d2[i];
    return (double)logit + end;
}

/* softmax over the T tokens of column c of logits [T][2], at token t */
static double column_softmax(const float *logits, int32_t T, int c, int32_t t) {
    double mx = -INFINITY, sum = 0;
    for (int32_t i = 0; i < T; i++) mx = fmax(mx, logits[(size_t)i * 2 + c]);
    for (int32_t i = 0; i < T; i++) sum += exp((double)logits[(size_t)i * 2 + c] - mx);
    return exp((double)logits[(size_t)t * 2 + c] - mx) / sum;
}

static double task_prob(void *ctx, const float *final, int32_t T) {
    task_target *k = ctx;
    if (task_fwd(k, final, T)) return 0;
    if (k->qa) /* the span's probability: p_start(s) * p_end(e), each a softmax over the tokens */
        return column_softmax(k->logits, T, 0, k->pos) * column_softmax(k->logits, T, 1, k->cls);
    return k->probs[(size_t)(k->rows > 1 ? k->pos : 0) * k->C + k->cls];
}

/* bli_target.pick: question answering, the best span of this input (its
 * start and end); else the predicted class (at the position). */
static int task_pick(void *ctx, const float *final, int32_t T, int32_t *position, int32_t *target, char *err,
                     size_t errlen) {
    task_target *k = ctx;
    if (task_fwd(k, final, T)) return -1;
    if (k->qa) {
        float *se = malloc(sizeof(float) * 2 * (size_t)T);
        if (!se) {
            bli_set_err(err, errlen, "out of memory");
            return -1;
        }
        for (int32_t i = 0; i < T; i++) se[i] = k->logits[(size_t)i * 2], se[T + i] = k->logits[(size_t)i * 2 + 1];
        int32_t a, b;
        const int none = bli_qa_best_span(se, se + T, k->toks, k->tk, BLI_QA_MAX_SPAN, &a, &b);
        free(se);
        if (none) {
            bli_set_err(err, errlen, "explain: the context has no token an answer could start at");
            return -1;
        }
        *position = k->pos = a, *target = k->cls = b;
        return 0;
    }
    const float *row = k->logits + (size_t)(k->rows > 1 ? k->pos : 0) * k->C;
    int32_t c = 0;
    for (int32_t j = 1; j < k->C; j++)
        if (row[j] > row[c]) c = j;
    *target = k->cls = c;
    return 0;
}

static void task_free(void *ctx) { (void)ctx; }

int bli_explain_task(bl_state *s, const bl_task_head *h, const bl_tokens *toks, const bl_explain_opts *o,
                     bl_explain *out, char *err, size_t errlen) {
    const int32_t *ids = toks->ids, *type_ids = toks->type_ids, T = toks->n;
    memset(out, 0, sizeof *out);
    const char *why = bli_backward_refuses(s);
    if (why) {
        bli_set_err(err, errlen, "explain: %s is not differentiated yet (the reverse-mode pass, src/model/backward.c)", why);
        return -1;
    }
    const int32_t kind = bl_task_head_kind(h);
    task_target k = {.h = h, .C = bl_task_head_classes(h), .rows = bl_task_head_rows(h, T), .qa = kind == BL_TASK_QA,
                     .D = bl_model_config(bl_state_model(s))->hidden, .err = err, .errlen = errlen};
    int32_t p = kind == BL_TASK_TOKEN ? o->position : 0;
    if (kind == BL_TASK_TOKEN && p < 0) { /* the first token that is not special */
        const bl_tokenizer *tk = bl_model_tokenizer(bl_state_model(s));
        for (int32_t i = 0; i < T && p < 0; i++)
            if (!bl_token_is_special(tk, ids[i])) p = i;
        if (p < 0) p = 0;
    }
    if (p >= T) {
        bli_set_err(err, errlen, "position %d is out of range 0..%d (%d tokens)", p, T - 1, T);
        return -1;
    }
    if (!k.qa && o->target >= k.C) {
        bli_set_err(err, errlen, "target %d is out of range 0..%d (the head's classes)", o->target, k.C - 1);
        return -1;
    }
    int rc = -1;
    k.pos = p;
    if (!(k.logits = malloc(sizeof(float) * (size_t)k.rows * k.C)) ||
        !(k.probs = malloc(sizeof(float) * (size_t)k.rows * k.C))) {
        bli_set_err(err, errlen, "out of memory");
        goto out;
    }
    k.toks = toks, k.tk = bl_model_tokenizer(bl_state_model(s));
    if (k.qa && !(k.d2 = malloc(sizeof(float) * (size_t)T * (size_t)k.D))) {
        bli_set_err(err, errlen, "out of memory");
        goto out;
    }
    const int32_t c = o->target;
    k.pos = p, k.cls = c;
    bli_target t = {.ctx = &k, .position = p, .target = c, .logit = task_logit, .backward = task_backward,
                    .prob = task_prob, .free = task_free, .pick = k.qa || c < 0 ? task_pick : NULL};
    rc = bli_explain_run(s, ids, type_ids, T, &t, o, out, err, errlen);
out:
    free(k.logits), free(k.probs), free(k.d2);
    return rc;
}
