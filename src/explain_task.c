/* explain_task.c — a task head's logit as an explain target (explain.h):
 * sequence classification (the class logit; default the predicted class)
 * and token classification (the class logit at one token; default the
 * first token that is not special, its predicted class), through
 * bl_task_head_backward (task_head.c). Question answering is refused here
 * (not wrapped yet). */
#include "explain.h"
#include "error.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    const bl_task_head *h;
    int32_t pos, cls, C, rows;
    float *logits, *probs; /* [rows][C] */
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
    return k->logits[(size_t)(k->rows > 1 ? k->pos : 0) * k->C + k->cls];
}

static double task_backward(void *ctx, const float *final, int32_t T, float *d_final) {
    task_target *k = ctx;
    float logit = 0;
    if (bl_task_head_backward(k->h, final, T, k->cls, k->pos, d_final, &logit, k->err, k->errlen)) return 0;
    return logit;
}

static double task_prob(void *ctx, const float *final, int32_t T) {
    task_target *k = ctx;
    if (task_fwd(k, final, T)) return 0;
    return k->probs[(size_t)(k->rows > 1 ? k->pos : 0) * k->C + k->cls];
}

static void task_free(void *ctx) { (void)ctx; }

int bli_explain_task(bl_state *s, const bl_task_head *h, const int32_t *ids, const int32_t *type_ids, int32_t T,
                     const bl_explain_opts *o, bl_explain *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    const char *why = bli_backward_refuses(s);
    if (why) {
        bli_set_err(err, errlen, "explain: %s is not differentiated yet (the reverse-mode pass, src/backward.c)", why);
        return -1;
    }
    const int32_t kind = bl_task_head_kind(h);
    if (kind != BL_TASK_SEQUENCE && kind != BL_TASK_TOKEN) {
        bli_set_err(err, errlen, "explain: the question-answering head is not an explain target yet");
        return -1;
    }
    task_target k = {.h = h, .C = bl_task_head_classes(h), .rows = bl_task_head_rows(h, T), .err = err, .errlen = errlen};
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
    if (o->target >= k.C) {
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
    int32_t c = o->target;
    if (c < 0) { /* the predicted class */
        bl_state_set_word_rows(s, NULL);
        if (bl_forward(s, ids, type_ids, T, -1, err, errlen)) goto out;
        const float *fin = bl_hidden(s, bl_model_config(bl_state_model(s))->n_layers);
        if (!fin || task_fwd(&k, fin, T)) goto out;
        const float *row = k.logits + (size_t)(k.rows > 1 ? p : 0) * k.C;
        c = 0;
        for (int32_t j = 1; j < k.C; j++)
            if (row[j] > row[c]) c = j;
    }
    k.cls = c;
    bli_target t = {&k, p, c, task_logit, task_backward, task_prob, task_free};
    rc = bli_explain_run(s, ids, type_ids, T, &t, o, out, err, errlen);
out:
    free(k.logits), free(k.probs);
    return rc;
}
