/* explain.c — which tokens drove one logit of a head, and which heads it
 * leans on (bertlens explain; the target interface is explain.h).
 *
 * e_t [E] is token t's word-embedding row (before positions, token types
 * and the embedding LayerNorm), g_t = d logit / d e_t (bl_backward).
 *   grad-input  score_t = sum_i g_t[i] e_t[i]                 (Shrikumar et al. 2016)
 *   ig          score_t = sum_i (e_t - e'_t)[i] * mean over the path of g_t[i]
 *               along e' + a (e - e'), a = k/M, k = 0..M, trapezoid rule
 *               (Sundararajan et al. 2017); e'_t = the pad token's row, except
 *               at special tokens, which keep theirs. Completeness: sum of
 *               scores ~ logit(e) - logit(e') = delta.
 *   heads       [L][H] p_target - p_target with that head switched off
 *               (bl_state_set_head_mask: its probabilities times 0).
 *
 * The masked-LM target: the logit of word w at position p,
 *   a = act(Wt x_p + bt) [E];  n = LN(a) g + b;  logit = Wd[w] . n + bd[w]
 * with the head's weights dequantized (the same for f32 and quantized
 * bundles); its backward puts d logit / d x_p in row p of d_final.
 */
#include "explain.h"
#include "model/encoder_types.h"
#include "base/error.h"
#include "kernels/kernels.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --------------------------------------------------- masked-LM target */

typedef struct {
    int32_t H, E, V, act;
    float eps;
    float *wt;               /* [E][H] transform, dequantized            */
    const float *bt, *g, *b; /* [E]                                      */
    blk_weight dec;          /* [V][E] decoder (rows dequantized on use) */
    const float *bd;         /* [V]                                      */
    float *wd;               /* [E] the target's decoder row             */
    int32_t p, w;            /* position, word                           */
    float *pre, *a, *xh, *row; /* [E] work                               */
} mlm_target;


/* n = LN(act(Wt x + bt)) into m->row (keeping pre, a, xhat); returns 1/sigma. */
static double mlm_transform(mlm_target *m, const float *x) {
    const int32_t H = m->H, E = m->E;
    double mu = 0, var = 0;
    for (int32_t e = 0; e < E; e++) {
        double acc = m->bt[e];
        for (int32_t i = 0; i < H; i++) acc += (double)m->wt[(size_t)e * H + i] * x[i];
        m->pre[e] = (float)acc;
        m->a[e] = bli_act_f(m->pre[e], m->act);
        mu += m->a[e];
    }
    mu /= E;
    for (int32_t e = 0; e < E; e++) var += (m->a[e] - mu) * (m->a[e] - mu);
    const double r = 1.0 / sqrt(var / E + m->eps);
    for (int32_t e = 0; e < E; e++) {
        m->xh[e] = (float)((m->a[e] - mu) * r);
        m->row[e] = m->xh[e] * m->g[e] + m->b[e];
    }
    return r;
}

static double dot(const float *a, const float *b, int32_t n) {
    double s = 0;
    for (int32_t i = 0; i < n; i++) s += (double)a[i] * b[i];
    return s;
}

static double mlm_logit(void *ctx, const float *final, int32_t T) {
    mlm_target *m = ctx;
    (void)T;
    mlm_transform(m, final + (size_t)m->p * m->H);
    return dot(m->wd, m->row, m->E) + m->bd[m->w];
}

static double mlm_backward(void *ctx, const float *final, int32_t T, float *d_final) {
    mlm_target *m = ctx;
    const int32_t H = m->H, E = m->E;
    const double r = mlm_transform(m, final + (size_t)m->p * H);
    const double logit = dot(m->wd, m->row, E) + m->bd[m->w];
    /* d n = Wd[w]; d a = LN back; d pre = d a * act'(pre); d x = Wt^T d pre */
    double m1 = 0, m2 = 0;
    for (int32_t e = 0; e < E; e++) {
        const double dg = (double)m->wd[e] * m->g[e];
        m1 += dg, m2 += dg * m->xh[e];
    }
    m1 /= E, m2 /= E;
    memset(d_final, 0, sizeof(float) * (size_t)T * H);
    float *dx = d_final + (size_t)m->p * H;
    for (int32_t e = 0; e < E; e++) {
        const double da = r * ((double)m->wd[e] * m->g[e] - m1 - m->xh[e] * m2);
        const float dp = (float)(da * bli_act_d(m->pre[e], m->act));
        for (int32_t i = 0; i < H; i++) dx[i] += dp * m->wt[(size_t)e * H + i];
    }
    return logit;
}

/* All V logits at the position into lg [V]; returns the argmax. */
static int32_t mlm_all(mlm_target *m, const float *final, double *lg) {
    mlm_transform(m, final + (size_t)m->p * m->H);
    int32_t best = 0;
    for (int32_t v = 0; v < m->V; v++) {
        blk_weight_row(&m->dec, v, m->a);
        lg[v] = dot(m->a, m->row, m->E) + m->bd[v];
        if (lg[v] > lg[best]) best = v;
    }
    return best;
}

static double mlm_prob(void *ctx, const float *final, int32_t T) {
    mlm_target *m = ctx;
    (void)T;
    double *lg = malloc(sizeof(double) * (size_t)m->V);
    if (!lg) return NAN;
    mlm_all(m, final, lg);
    double mx = -INFINITY, sum = 0;
    for (int32_t v = 0; v < m->V; v++) mx = lg[v] > mx ? lg[v] : mx;
    for (int32_t v = 0; v < m->V; v++) sum += exp(lg[v] - mx);
    const double p = exp(lg[m->w] - mx) / sum;
    free(lg);
    return p;
}

/* The top word at the position (bli_target.pick). */
static int mlm_pick(void *ctx, const float *final, int32_t T, int32_t *position, int32_t *target, char *err,
                    size_t errlen) {
    mlm_target *m = ctx;
    (void)T, (void)position;
    double *lg = malloc(sizeof(double) * (size_t)m->V);
    if (!lg) {
        bli_set_err(err, errlen, "out of memory");
        return -1;
    }
    *target = m->w = mlm_all(m, final, lg);
    blk_weight_row(&m->dec, m->w, m->wd);
    free(lg);
    return 0;
}

static void mlm_free(void *ctx) {
    mlm_target *m = ctx;
    if (!m) return;
    free(m->wt), free(m->wd), free(m->pre), free(m->a), free(m->xh), free(m->row);
    free(m);
}

static const float *f32_of(const bl_model *md, const char *name) {
    const bl_tensor *t = bl_model_find_tensor(md, name);
    return t && t->dtype == BL_F32 ? (const float *)(const void *)t->data : NULL;
}

static mlm_target *mlm_new(const bl_model *md, char *err, size_t errlen) {
    bl_head_info hi;
    bl_model_head_info(md, &hi);
    if (!hi.present) {
        bli_set_err(err, errlen, "this bundle has no head to explain: convert a checkpoint that has one (e.g. a "
                                 "BertForMaskedLM folder)");
        return NULL;
    }
    const bl_config *c = bl_model_config(md);
    mlm_target *m = calloc(1, sizeof *m);
    if (!m) goto oom;
    m->H = c->hidden, m->E = hi.size, m->V = c->vocab_size, m->act = hi.activation, m->eps = hi.ln_eps;
    m->bt = f32_of(md, "head.transform.bias"), m->g = f32_of(md, "head.ln.weight"), m->b = f32_of(md, "head.ln.bias");
    m->bd = f32_of(md, "head.decoder.bias");
    const bl_tensor *tw = bl_model_find_tensor(md, "head.transform.weight");
    const bl_tensor *dw = bl_model_find_tensor(md, hi.tied ? "embeddings.word_embeddings.weight" : "head.decoder.weight");
    blk_weight wt;
    if (!m->bt || !m->g || !m->b || !m->bd || !tw || !dw || blk_weight_of_tensor(&wt, tw, m->E, m->H) ||
        blk_weight_of_tensor(&m->dec, dw, m->V, m->E)) {
        bli_set_err(err, errlen, "the bundle's head is incomplete");
        mlm_free(m);
        return NULL;
    }
    const int32_t W = m->E > m->H ? m->E : m->H;
    if (!(m->wt = malloc(sizeof(float) * (size_t)m->E * m->H)) || !(m->wd = malloc(sizeof(float) * (size_t)W)) ||
        !(m->pre = malloc(sizeof(float) * (size_t)W)) || !(m->a = malloc(sizeof(float) * (size_t)W)) ||
        !(m->xh = malloc(sizeof(float) * (size_t)W)) || !(m->row = malloc(sizeof(float) * (size_t)W)))
        goto oom;
    for (int32_t e = 0; e < m->E; e++) blk_weight_row(&wt, e, m->wt + (size_t)e * m->H);
    return m;
oom:
    mlm_free(m);
    bli_set_err(err, errlen, "out of memory");
    return NULL;
}

/* ------------------------------------------------------------ methods */

/* A forward of ids (rows: the word rows to use, or NULL); the final hidden
 * states. The rows stay set for the bl_backward that follows (it recomputes
 * the embeddings from them). */
static const float *run(bl_state *s, const int32_t *ids, const int32_t *types, int32_t T, const float *rows,
                        char *err, size_t errlen) {
    bl_state_set_word_rows(s, rows);
    const int rc = bl_forward(s, ids, types, T, -1, err, errlen);
    return rc ? NULL : bl_hidden(s, bl_model_config(bl_state_model(s))->n_layers);
}

int bli_explain_run(bl_state *s, const int32_t *ids, const int32_t *type_ids, int32_t T, const bli_target *t,
                    const bl_explain_opts *o, bl_explain *out, char *err, size_t errlen) {
    const bl_model *md = bl_state_model(s);
    const bl_config *c = bl_model_config(md);
    const bl_tokenizer *tk = bl_model_tokenizer(md);
    const int32_t E = bl_word_width(s), H = c->hidden, M = o->steps > 0 ? o->steps : 32;
    const size_t te = (size_t)T * E;
    memset(out, 0, sizeof *out);
    out->T = T, out->position = t->position, out->target = t->target;
    float *e = malloc(sizeof(float) * te), *e0 = malloc(sizeof(float) * te), *rows = malloc(sizeof(float) * te),
          *g = malloc(sizeof(float) * te), *acc = calloc(te, sizeof(float)),
          *df = malloc(sizeof(float) * (size_t)T * H), *fin0 = malloc(sizeof(float) * (size_t)T * H);
    out->scores = calloc((size_t)T, sizeof(float));
    int rc = -1, text = 0; /* text: the state holds the text's run */
    const float *fin;
    uint8_t *mask = NULL;
    float *tape = NULL; /* the text's tape, bli_tape_floats (bli_state_set_tape) */
    if (!e || !e0 || !rows || !g || !acc || !df || !fin0 || !out->scores) {
        bli_set_err(err, errlen, "out of memory");
        goto out;
    }
    /* the state's head mask (bertlens explain --ablate): attributions are
     * those of the model with those heads off; head effects switch one
     * more off; the mask is the same afterwards */
    const int32_t LH = c->n_layers * c->n_heads;
    if (!(mask = malloc((size_t)LH))) {
        bli_set_err(err, errlen, "out of memory");
        goto out;
    }
    memcpy(mask, bl_state_head_mask(s), (size_t)LH);
    /* e: the text's rows; e': the pad row, specials keeping theirs */
    bl_special_ids sp;
    bl_tokenizer_special(tk, &sp);
    bl_word_rows(s, ids, T, e);
    for (int32_t i = 0; i < T; i++) {
        const int32_t id = bl_token_is_special(tk, ids[i]) || sp.pad < 0 ? ids[i] : sp.pad;
        bl_word_rows(s, &id, 1, e0 + (size_t)i * E);
    }
    /* the baseline's final hidden states (its logit once the target is known) */
    if (!(fin = run(s, ids, type_ids, T, e0, err, errlen))) goto out;
    memcpy(fin0, fin, sizeof(float) * (size_t)T * H);
    /* the text: the target, its logit, probability and gradient (grad x
     * input; IG's step k = M, where the path reaches e itself); its run
     * keeps the tape the backward reads instead of redoing each layer's
     * products (bert-base: 5 floats a layer, token and hidden unit, and 4 of
     * the feed-forward's u) */
    const size_t tsz = bli_tape_floats(s, T);
    if (!(tape = malloc(sizeof(float) * tsz))) {
        bli_set_err(err, errlen, "out of memory");
        goto out;
    }
    bli_state_set_tape(s, tape);
    fin = run(s, ids, type_ids, T, NULL, err, errlen);
    bli_state_set_tape(s, NULL);
    if (!fin) goto out;
    text = 1;
    if (t->pick && t->pick(t->ctx, fin, T, &out->position, &out->target, err, errlen)) goto out;
    out->logit = t->backward(t->ctx, fin, T, df);
    out->prob = t->prob(t->ctx, fin, T);
    out->baseline = t->logit(t->ctx, fin0, T);
    {
        const float *hid = bl_hidden(s, 0), *tp = tape, *const no_rows = NULL, *dfc = df;
        if (bli_backward_steps(s, 1, ids, type_ids, &hid, &no_rows, &tp, &dfc, &g, err, errlen)) goto out;
    }
    if (o->method != BL_EXPLAIN_IG)
        for (int32_t i = 0; i < T; i++) out->scores[i] = (float)dot(g + (size_t)i * E, e + (size_t)i * E, E);
    else
        for (size_t i = 0; i < te; i++) acc[i] = 0.5f * g[i];
    if (o->heads) {
        /* Switching off head h of layer l leaves layers 0..l-1 as they were:
         * rerun only layers l..L-1 from the kept input of layer l
         * (bli_forward_from), on the state's threads. Layers from the last
         * down, so the inputs of layers <= l stay the text's: on average
         * (L + 1) / 2 layers a head, not L. */
        if (!(out->heads = malloc(sizeof(float) * (size_t)LH))) {
            bli_set_err(err, errlen, "out of memory");
            goto out;
        }
        const int32_t L = c->n_layers, NH = c->n_heads;
        int32_t done = 0, bad = 0;
        text = 0;
        for (int32_t l = L - 1; l >= 0 && !bad; l--)
            for (int32_t h = 0; h < NH && !bad; h++) {
                const int32_t i = l * NH + h;
                const uint8_t was = mask[i];
                mask[i] = 1;
                bl_state_set_head_mask(s, mask);
                mask[i] = was;
                if ((bad = bli_forward_from(s, l, err, errlen) != 0)) break;
                out->heads[i] = (float)(out->prob - t->prob(t->ctx, bl_hidden(s, L), T));
                if (o->progress) o->progress(o->progress_arg, ++done, LH);
            }
        bl_state_set_head_mask(s, mask);
        if (bad) goto out;
    }
    if (o->method == BL_EXPLAIN_IG) { /* steps k = 0..M-1 (k = M above) */
        /* Batches of G steps: each step's forward pass (its hidden states
         * copied aside, its tape kept), then one backward for the batch,
         * which lays each layer's weights out once for all G
         * (bli_backward_steps). G: as many as 96 MB of hidden states and
         * tapes hold, at most 8 (bert-base, 128 tokens: 3). */
        const size_t hsz = (size_t)(c->n_layers + 1) * T * H, th = (size_t)T * H;
        int32_t G = (int32_t)(((size_t)96 << 20) / ((hsz + tsz) * sizeof(float)));
        G = G < 1 ? 1 : G > 8 ? 8 : G > M ? M : G;
        float *hb = malloc(sizeof(float) * hsz * G), *rb = malloc(sizeof(float) * te * G),
              *db = malloc(sizeof(float) * th * G), *gb = malloc(sizeof(float) * te * G);
        float *tb = tape; /* G tapes; the text's is spent: reused when G = 1 */
        if (G > 1) {
            free(tape), tape = NULL;
            tb = malloc(sizeof(float) * tsz * G);
        }
        const float *hp[8], *rp[8], *dp[8], *tpp[8];
        float *gp[8];
        int bad = !hb || !rb || !db || !gb || !tb;
        if (bad) bli_set_err(err, errlen, "out of memory");
        text = 0;
        for (int32_t k0 = 0; k0 < M && !bad; k0 += G) {
            const int32_t n = M - k0 < G ? M - k0 : G;
            for (int32_t j = 0; j < n && !bad; j++) {
                const float a = (float)(k0 + j) / (float)M;
                float *r = rb + te * j;
                for (size_t i = 0; i < te; i++) r[i] = e0[i] + a * (e[i] - e0[i]);
                bli_state_set_tape(s, tb + tsz * j);
                fin = run(s, ids, type_ids, T, r, err, errlen);
                bli_state_set_tape(s, NULL);
                if (!fin) {
                    bad = 1;
                    break;
                }
                t->backward(t->ctx, fin, T, db + th * j);
                memcpy(hb + hsz * j, bl_hidden(s, 0), sizeof(float) * hsz);
                hp[j] = hb + hsz * j, rp[j] = r, dp[j] = db + th * j, gp[j] = gb + te * j, tpp[j] = tb + tsz * j;
            }
            if (bad || (bad = bli_backward_steps(s, n, ids, type_ids, hp, rp, tpp, dp, gp, err, errlen) != 0)) break;
            for (int32_t j = 0; j < n; j++) {
                const float w = k0 + j == 0 ? 0.5f : 1.0f;
                for (size_t i = 0; i < te; i++) acc[i] += w * gp[j][i];
            }
        }
        free(hb), free(rb), free(db), free(gb);
        if (tb != tape) free(tb);
        if (bad) goto out;
        for (int32_t i = 0; i < T; i++) {
            double sc = 0;
            for (int32_t j = 0; j < E; j++) {
                const size_t x = (size_t)i * E + j;
                sc += (double)(e[x] - e0[x]) * acc[x] / M;
            }
            out->scores[i] = (float)sc;
        }
    }
    out->delta = out->logit - out->baseline;
    for (int32_t i = 0; i < T; i++) out->sum += out->scores[i];
    if (!text && !run(s, ids, type_ids, T, NULL, err, errlen)) goto out; /* the text's run again */
    rc = 0;
out:
    if (mask) bl_state_set_head_mask(s, mask);
    free(mask);
    free(tape);
    bl_state_set_word_rows(s, NULL);
    free(e), free(e0), free(rows), free(g), free(acc), free(df), free(fin0);
    if (rc) bl_explain_free(out);
    return rc;
}

void bl_explain_free(bl_explain *e) {
    if (!e) return;
    free(e->scores), free(e->heads);
    e->scores = NULL, e->heads = NULL;
}

int bl_explain_mlm(bl_state *s, const int32_t *ids, const int32_t *type_ids, int32_t T, const bl_explain_opts *o,
                   bl_explain *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    if (!s || !ids || !o || T < 1) {
        bli_set_err(err, errlen, "bl_explain_mlm: missing argument");
        return -1;
    }
    const char *why = bli_backward_refuses(s);
    if (why) { /* before the head: a family the pass cannot follow is refused by its trait */
        bli_set_err(err, errlen, "explain: %s is not differentiated yet (the reverse-mode pass, src/model/backward.c)", why);
        return -1;
    }
    const bl_model *md = bl_state_model(s);
    const bl_tokenizer *tk = bl_model_tokenizer(md);
    mlm_target *m = mlm_new(md, err, errlen);
    if (!m) return -1;
    int rc = -1;
    /* the position: asked, else the first mask, else the first token that is not special */
    int32_t p = o->position;
    if (p < 0) {
        bl_special_ids sp;
        bl_tokenizer_special(tk, &sp);
        for (int32_t i = 0; i < T && p < 0; i++)
            if (ids[i] == sp.mask) p = i;
        for (int32_t i = 0; i < T && p < 0; i++)
            if (!bl_token_is_special(tk, ids[i])) p = i;
        if (p < 0) p = 0;
    }
    if (p >= T) {
        bli_set_err(err, errlen, "position %d is out of range 0..%d (%d tokens)", p, T - 1, T);
        goto out;
    }
    m->p = p;
    int32_t w = o->target;
    if (w >= m->V) {
        bli_set_err(err, errlen, "target %d is out of range 0..%d (the vocabulary)", w, m->V - 1);
        goto out;
    }
    m->w = w;
    if (w >= 0) blk_weight_row(&m->dec, w, m->wd);
    bli_target t = {.ctx = m, .position = p, .target = w, .logit = mlm_logit, .backward = mlm_backward, .prob = mlm_prob,
                    .free = mlm_free, .pick = w < 0 ? mlm_pick : NULL};
    rc = bli_explain_run(s, ids, type_ids, T, &t, o, out, err, errlen);
out:
    mlm_free(m);
    return rc;
}
