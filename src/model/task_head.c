/* task_head.c — a bundle's fine-tuned task head (bertlens.h "task heads";
 * its tensors and metadata: docs/bundle-format.md "Task heads"): sequence classification, token classification and
 * question answering on the encoder's final hidden states, and the exact
 * gradient of one of its logits with respect to those hidden states.
 *
 * The head's weights are dequantized to f32 once (they are small: at most
 * hidden x hidden + C x hidden), and every product accumulates in double:
 * the same arithmetic for f32 and quantized bundles, and logits within
 * float rounding of PyTorch's float32 ones.
 */
#include "bertlens.h"
#include "format/bundle_impl.h"
#include "base/error.h"
#include "kernels/kernels.h"
#include "base/sizes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PI 3.14159265358979323846

/* the head's input: the first token, the tokens' mean, each token (token
 * classification, QA), or each token with the logits averaged (EuroBERT's
 * classifier_pooling "late": one row of logits, the mean of T) */
enum { POOL_FIRST, POOL_MEAN, POOL_TOKEN, POOL_LATE };
enum { ACT_IDENTITY, ACT_TANH, ACT_GELU, ACT_GELU_TANH, ACT_RELU, ACT_SILU };

struct bl_task_head {
    int32_t kind, problem, pool, act; /* BL_TASK_*, BL_PROBLEM_*, POOL_*, ACT_* */
    int32_t H, C;                     /* hidden, classes                        */
    int dense, norm;                  /* 1: the layer is there                  */
    float norm_eps;
    float *wd, *bd;                   /* [H][H], [H]  dense (pooler)            */
    float *g, *b;                     /* [H], [H]     norm                      */
    float *wo, *bo;                   /* [C][H], [C]  output                    */
    char **labels;                    /* [C] NUL-terminated copies              */
};

static const char *const KIND_NAMES[] = {"none", "sequence-classification", "token-classification",
                                         "question-answering"};

const char *bl_task_kind_name(int32_t kind) { return kind > 0 && kind < 4 ? KIND_NAMES[kind] : "none"; }

int32_t bl_model_task_kind(const bl_model *m) {
    const char *k = m ? bl_model_meta_str(m, "task.kind") : NULL;
    for (int32_t i = 1; k && i < 4; i++)
        if (!strcmp(k, KIND_NAMES[i])) return i;
    return BL_TASK_NONE;
}

int32_t bl_task_head_kind(const bl_task_head *h) { return h->kind; }
int32_t bl_task_head_problem(const bl_task_head *h) { return h->problem; }
int32_t bl_task_head_classes(const bl_task_head *h) { return h->C; }
const char *bl_task_head_label(const bl_task_head *h, int32_t c) {
    return c >= 0 && c < h->C && h->labels ? h->labels[c] : NULL;
}
int32_t bl_task_head_rows(const bl_task_head *h, int32_t T) { return h->kind == BL_TASK_SEQUENCE ? 1 : T; }

void bl_task_head_free(bl_task_head *h) {
    if (!h) return;
    free(h->wd), free(h->bd), free(h->g), free(h->b), free(h->wo), free(h->bo);
    for (int32_t c = 0; h->labels && c < h->C; c++) free(h->labels[c]);
    free(h->labels);
    free(h);
}

/* ------------------------------------------------------------- loading */

/* Tensor `name` as f32 [d0][d1] (d1 0: a vector), dequantized; NULL with a
 * reason when absent or of another shape (vectors must be f32). */
static float *load(const bl_model *m, const char *name, int32_t d0, int32_t d1, char *err, size_t errlen) {
    const bl_tensor *t = bl_model_find_tensor(m, name);
    if (!t) {
        bli_set_err(err, errlen, "the task head's tensor '%s' is missing", name);
        return NULL;
    }
    const int ok = d1 ? t->n_dims == 2 && t->dims[0] == d0 && t->dims[1] == d1
                      : t->n_dims == 1 && t->dims[0] == d0 && t->dtype == BL_F32;
    if (!ok) {
        if (d1) bli_set_err(err, errlen, "tensor '%s' must be [%d, %d]", name, d0, d1);
        else bli_set_err(err, errlen, "tensor '%s' must be f32 [%d]", name, d0);
        return NULL;
    }
    float *out = malloc(sizeof(float) * (size_t)d0 * (size_t)(d1 ? d1 : 1));
    if (!out) {
        bli_set_err(err, errlen, "out of memory for the task head");
        return NULL;
    }
    if (!d1) {
        memcpy(out, t->data, sizeof(float) * (size_t)d0);
        return out;
    }
    blk_weight w;
    if (blk_weight_of_tensor(&w, t, d0, d1)) {
        bli_set_err(err, errlen, "%s: not a matrix the kernels take (%s)", name, bl_dtype_name(t->dtype));
        free(out);
        return NULL;
    }
    for (int32_t r = 0; r < d0; r++) blk_weight_row(&w, r, out + (size_t)r * d1);
    blk_weight_free(&w);
    return out;
}

static int pick(const char *s, const char *const *names, int n) {
    for (int i = 0; s && i < n; i++)
        if (!strcmp(s, names[i])) return i;
    return -1;
}

bl_task_head *bl_task_head_new(const bl_model *m, char *err, size_t errlen) {
    const int32_t kind = bl_model_task_kind(m);
    if (!kind) {
        if (bl_model_meta_str(m, "task.kind"))
            bli_set_err(err, errlen, "task.kind '%s' is not sequence-classification, token-classification or "
                        "question-answering", bl_model_meta_str(m, "task.kind"));
        else
            bli_set_err(err, errlen, "this bundle has no task head: convert a *ForSequenceClassification, "
                        "*ForTokenClassification or *ForQuestionAnswering checkpoint to have one");
        return NULL;
    }
    bl_task_head *h = calloc(1, sizeof *h);
    if (!h) {
        bli_set_err(err, errlen, "out of memory");
        return NULL;
    }
    h->kind = kind;
    h->H = bl_model_config(m)->hidden;
    static const char *const problems[] = {"single_label_classification", "multi_label_classification", "regression"};
    static const char *const pools[] = {"first", "mean", "token", "late"};
    static const char *const acts[] = {"identity", "tanh", "gelu", "gelu_tanh", "relu", "silu"};
    h->problem = pick(bl_model_meta_str(m, "task.problem_type"), problems, 3);
    h->pool = pick(bl_model_meta_str(m, "task.pooling"), pools, 4);
    if (h->problem < 0 || h->pool < 0) {
        bli_set_err(err, errlen, "task.problem_type (single_label_classification, multi_label_classification, "
                    "regression) or task.pooling (first, mean, token, late) is missing or unknown");
        goto fail;
    }
    if ((kind == BL_TASK_SEQUENCE) != (h->pool != POOL_TOKEN)) {
        bli_set_err(err, errlen, "task.pooling '%s' does not go with %s", pools[h->pool], KIND_NAMES[kind]);
        goto fail;
    }
    const bl_tensor *wo = bl_model_find_tensor(m, "task.out.weight");
    if (!wo || wo->n_dims != 2 || wo->dims[0] < 1 || wo->dims[0] > 100000) {
        bli_set_err(err, errlen, "the task head's tensor 'task.out.weight' is missing or not [C, hidden]");
        goto fail;
    }
    h->C = (int32_t)wo->dims[0];
    if ((kind == BL_TASK_QA && h->C != 2) || (h->problem == BL_PROBLEM_REGRESSION && h->C != 1)) {
        bli_set_err(err, errlen, "the task head has %d outputs: question answering needs 2, regression 1", h->C);
        goto fail;
    }
    h->dense = bl_model_find_tensor(m, "task.dense.weight") != NULL;
    h->norm = bl_model_find_tensor(m, "task.norm.weight") != NULL;
    if (h->dense) {
        h->act = pick(bl_model_meta_str(m, "task.activation"), acts, 6);
        if (h->act < 0) {
            bli_set_err(err, errlen, "task.activation is missing or not one of identity, tanh, gelu, gelu_tanh, "
                        "relu, silu");
            goto fail;
        }
        if (!(h->wd = load(m, "task.dense.weight", h->H, h->H, err, errlen)) ||
            !(h->bd = load(m, "task.dense.bias", h->H, 0, err, errlen)))
            goto fail;
    }
    if (h->norm) {
        const meta_entry *e = bli_bundle_meta(m, "task.norm_eps");
        if (!e || e->type != BL_META_F32) {
            bli_set_err(err, errlen, "metadata 'task.norm_eps' (f32) is missing");
            goto fail;
        }
        memcpy(&h->norm_eps, &e->u32, 4);
        if (!(h->norm_eps > 0.0f && h->norm_eps < 1.0f)) {
            bli_set_err(err, errlen, "task.norm_eps = %g is not in (0, 1)", (double)h->norm_eps);
            goto fail;
        }
        if (!(h->g = load(m, "task.norm.weight", h->H, 0, err, errlen)) ||
            !(h->b = load(m, "task.norm.bias", h->H, 0, err, errlen)))
            goto fail;
    }
    if (!(h->wo = load(m, "task.out.weight", h->C, h->H, err, errlen)) ||
        !(h->bo = load(m, "task.out.bias", h->C, 0, err, errlen)))
        goto fail;
    /* labels: id2label's names, one per class (question answering: none) */
    const meta_entry *lab = bli_bundle_meta(m, "task.labels");
    if (lab) {
        if (lab->type != BL_META_STRARR || (int64_t)lab->count != h->C) {
            bli_set_err(err, errlen, "metadata 'task.labels' must be %d strings (one per class)", h->C);
            goto fail;
        }
        if (!(h->labels = calloc((size_t)h->C, sizeof *h->labels))) goto oom;
        const uint8_t *p = lab->arr; /* bounds-checked by the loader */
        for (int32_t c = 0; c < h->C; c++) {
            const uint32_t n = bli_le32(p);
            if (!(h->labels[c] = malloc(n + 1))) goto oom;
            memcpy(h->labels[c], p + 4, n);
            h->labels[c][n] = 0;
            p += 4 + n;
        }
    } else if (kind != BL_TASK_QA) {
        bli_set_err(err, errlen, "metadata 'task.labels' (the class names) is missing");
        goto fail;
    }
    return h;
oom:
    bli_set_err(err, errlen, "out of memory");
fail:
    bl_task_head_free(h);
    return NULL;
}

/* ------------------------------------------------------------- forward */

static double act_f(int act, double x) {
    switch (act) {
    case ACT_TANH: return tanh(x);
    case ACT_GELU: return 0.5 * x * (1.0 + erf(x / sqrt(2.0)));
    case ACT_GELU_TANH: return 0.5 * x * (1.0 + tanh(sqrt(2.0 / PI) * (x + 0.044715 * x * x * x)));
    case ACT_RELU: return x > 0 ? x : 0;
    case ACT_SILU: return x / (1.0 + exp(-x));
    default: return x;
    }
}

static double act_df(int act, double x) {
    switch (act) {
    case ACT_TANH: {
        const double t = tanh(x);
        return 1.0 - t * t;
    }
    case ACT_GELU: return 0.5 * (1.0 + erf(x / sqrt(2.0))) + x * exp(-0.5 * x * x) / sqrt(2.0 * PI);
    case ACT_GELU_TANH: {
        const double k = sqrt(2.0 / PI), t = tanh(k * (x + 0.044715 * x * x * x));
        return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * k * (1.0 + 3.0 * 0.044715 * x * x);
    }
    case ACT_RELU: return x > 0 ? 1 : 0;
    case ACT_SILU: {
        const double s = 1.0 / (1.0 + exp(-x));
        return s * (1.0 + x * (1.0 - s));
    }
    default: return 1;
    }
}

/* What the head keeps of one row to go back through it. */
typedef struct {
    double *u;    /* [H] the head's input (pooled or one token)  */
    double *z;    /* [H] the dense layer's pre-activation        */
    double *a;    /* [H] after the activation                    */
    double *xh;   /* [H] the norm's normalized input             */
    double rstd;  /* 1 / the norm's standard deviation           */
    double *o;    /* [H] what the output layer reads             */
} row_buf;

/* logits [C] of one input row u [H] (already pooled), through the head. */
static void row_forward(const bl_task_head *h, row_buf *r, double *logits) {
    const int32_t H = h->H;
    const double *v = r->u;
    if (h->dense) {
        for (int32_t i = 0; i < H; i++) {
            double s = h->bd[i];
            const float *w = h->wd + (size_t)i * H;
            for (int32_t j = 0; j < H; j++) s += (double)w[j] * v[j];
            r->z[i] = s;
            r->a[i] = act_f(h->act, s);
        }
        v = r->a;
    }
    if (h->norm) {
        double mean = 0, var = 0;
        for (int32_t i = 0; i < H; i++) mean += v[i];
        mean /= H;
        for (int32_t i = 0; i < H; i++) var += (v[i] - mean) * (v[i] - mean);
        var /= H;
        r->rstd = 1.0 / sqrt(var + (double)h->norm_eps);
        for (int32_t i = 0; i < H; i++) {
            r->xh[i] = (v[i] - mean) * r->rstd;
            r->o[i] = r->xh[i] * h->g[i] + h->b[i];
        }
        v = r->o;
    } else if (v != r->o) {
        memcpy(r->o, v, sizeof(double) * (size_t)H);
    }
    for (int32_t c = 0; c < h->C; c++) {
        double s = h->bo[c];
        const float *w = h->wo + (size_t)c * H;
        for (int32_t j = 0; j < H; j++) s += (double)w[j] * r->o[j];
        logits[c] = s;
    }
}

/* The pooled input of a sequence head, or token t's row, into r->u. */
static void input_row(const bl_task_head *h, const float *hidden, int32_t T, int32_t t, row_buf *r) {
    const int32_t H = h->H;
    if (h->pool == POOL_MEAN) {
        for (int32_t i = 0; i < H; i++) r->u[i] = 0;
        for (int32_t s = 0; s < T; s++)
            for (int32_t i = 0; i < H; i++) r->u[i] += hidden[(size_t)s * H + i];
        for (int32_t i = 0; i < H; i++) r->u[i] /= T;
        return;
    }
    const float *x = hidden + (size_t)(h->pool == POOL_FIRST ? 0 : t) * H; /* token, late: row t */
    for (int32_t i = 0; i < H; i++) r->u[i] = x[i];
}

static double *row_alloc(row_buf *r, int32_t H, int32_t C) {
    double *m = malloc(sizeof(double) * ((size_t)6 * H + (size_t)C));
    if (!m) return NULL;
    r->u = m, r->z = m + H, r->a = m + 2 * H, r->xh = m + 3 * H, r->o = m + 4 * H;
    return m;
}

int bl_task_head_forward(const bl_task_head *h, const float *hidden, int32_t T, float *logits, char *err,
                         size_t errlen) {
    if (!h || !hidden || !logits || T < 1) {
        bli_set_err(err, errlen, "bl_task_head_forward: missing argument or no tokens");
        return -1;
    }
    row_buf r;
    double *m = row_alloc(&r, h->H, h->C);
    if (!m) {
        bli_set_err(err, errlen, "out of memory");
        return -1;
    }
    double *l = m + 5 * (size_t)h->H; /* [C] (the 6th H block and C more) */
    if (h->pool == POOL_LATE) { /* every token through the head, the logits averaged in double */
        double *acc = calloc((size_t)h->C, sizeof(double));
        if (!acc) {
            free(m);
            bli_set_err(err, errlen, "out of memory");
            return -1;
        }
        for (int32_t t = 0; t < T; t++) {
            input_row(h, hidden, T, t, &r);
            row_forward(h, &r, l);
            for (int32_t c = 0; c < h->C; c++) acc[c] += l[c];
        }
        for (int32_t c = 0; c < h->C; c++) logits[c] = (float)(acc[c] / T);
        free(acc), free(m);
        return 0;
    }
    const int32_t rows = bl_task_head_rows(h, T);
    for (int32_t t = 0; t < rows; t++) {
        input_row(h, hidden, T, t, &r);
        row_forward(h, &r, l);
        for (int32_t c = 0; c < h->C; c++) logits[(size_t)t * h->C + c] = (float)l[c];
    }
    free(m);
    return 0;
}

void bl_task_head_probs(const bl_task_head *h, const float *logits, int32_t rows, float *probs) {
    const int32_t C = h->C;
    for (int32_t t = 0; t < rows; t++) {
        const float *l = logits + (size_t)t * C;
        float *p = probs + (size_t)t * C;
        if (h->problem == BL_PROBLEM_REGRESSION) {
            memcpy(p, l, sizeof(float) * (size_t)C);
        } else if (h->problem == BL_PROBLEM_MULTI) {
            for (int32_t c = 0; c < C; c++) p[c] = (float)(1.0 / (1.0 + exp(-(double)l[c])));
        } else {
            double mx = -INFINITY, sum = 0;
            for (int32_t c = 0; c < C; c++) mx = l[c] > mx ? l[c] : mx;
            for (int32_t c = 0; c < C; c++) sum += exp((double)l[c] - mx);
            for (int32_t c = 0; c < C; c++) p[c] = (float)(exp((double)l[c] - mx) / sum);
        }
    }
}

/* ------------------------------------------------------------ backward */

/* g [H] = d logits[target] / d r->u for the row row_forward just ran
 * (g2 [H]: scratch). */
static void row_backward(const bl_task_head *h, const row_buf *r, int32_t target, double *g, double *g2) {
    const int32_t H = h->H;
    /* d logit / d o = W_o[target] */
    for (int32_t i = 0; i < H; i++) g[i] = h->wo[(size_t)target * H + i];
    if (h->norm) { /* d/dv of LN: rstd (dy - mean(dy) - xh mean(dy xh)), dy = g * d/do */
        double m1 = 0, m2 = 0;
        for (int32_t i = 0; i < H; i++) {
            g[i] *= h->g[i];
            m1 += g[i];
            m2 += g[i] * r->xh[i];
        }
        m1 /= H, m2 /= H;
        for (int32_t i = 0; i < H; i++) g[i] = r->rstd * (g[i] - m1 - r->xh[i] * m2);
    }
    if (h->dense) { /* through act, then W_d^T */
        for (int32_t i = 0; i < H; i++) g[i] *= act_df(h->act, r->z[i]);
        for (int32_t j = 0; j < H; j++) g2[j] = 0;
        for (int32_t i = 0; i < H; i++) {
            const float *w = h->wd + (size_t)i * H;
            for (int32_t j = 0; j < H; j++) g2[j] += g[i] * w[j];
        }
        memcpy(g, g2, sizeof(double) * (size_t)H);
    }
}

int bl_task_head_backward(const bl_task_head *h, const float *hidden, int32_t T, int32_t target_class,
                          int32_t position, float *d_hidden, float *logit_out, char *err, size_t errlen) {
    if (!h || !hidden || !d_hidden || T < 1) {
        bli_set_err(err, errlen, "bl_task_head_backward: missing argument or no tokens");
        return -1;
    }
    if (target_class < 0 || target_class >= h->C) {
        bli_set_err(err, errlen, "target class %d is out of range 0..%d", target_class, h->C - 1);
        return -1;
    }
    if (h->kind != BL_TASK_SEQUENCE && (position < 0 || position >= T)) {
        bli_set_err(err, errlen, "position %d is out of range 0..%d", position, T - 1);
        return -1;
    }
    const int32_t H = h->H;
    row_buf r;
    double *m = row_alloc(&r, H, h->C);
    double *g = malloc(sizeof(double) * 2 * (size_t)H); /* [H] gradient, [H] scratch */
    if (!m || !g) {
        free(m), free(g);
        bli_set_err(err, errlen, "out of memory");
        return -1;
    }
    double *l = m + 5 * (size_t)H, *g2 = g + H;
    memset(d_hidden, 0, sizeof(float) * (size_t)T * H);
    if (h->pool == POOL_LATE) { /* logit = mean_t head(x[t])[target]: each row's gradient / T */
        double sum = 0;
        for (int32_t t = 0; t < T; t++) {
            input_row(h, hidden, T, t, &r);
            row_forward(h, &r, l);
            sum += l[target_class];
            row_backward(h, &r, target_class, g, g2);
            for (int32_t i = 0; i < H; i++) d_hidden[(size_t)t * H + i] = (float)(g[i] / T);
        }
        if (logit_out) *logit_out = (float)(sum / T);
        free(m), free(g);
        return 0;
    }
    const int32_t row = h->kind == BL_TASK_SEQUENCE ? 0 : position;
    input_row(h, hidden, T, row, &r);
    row_forward(h, &r, l);
    if (logit_out) *logit_out = (float)l[target_class];
    row_backward(h, &r, target_class, g, g2);
    if (h->pool == POOL_MEAN) {
        for (int32_t t = 0; t < T; t++)
            for (int32_t i = 0; i < H; i++) d_hidden[(size_t)t * H + i] = (float)(g[i] / T);
    } else {
        for (int32_t i = 0; i < H; i++) d_hidden[(size_t)row * H + i] = (float)g[i];
    }
    free(m), free(g);
    return 0;
}
