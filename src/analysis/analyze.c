/* analyze.c — reading attention: per-head features and pattern class, and
 * attention rollout (raw and norm-based), and two runs compared head by head
 * (bl_head_compare). Definitions in bertlens.h
 * ("analyses"); one implementation used by the CLI (`bertlens analyze`) and
 * the page (blw_analyze_json in wasm_api.c), which format it as JSON
 * (bli_json_analysis, json_analysis.c): this file only computes.
 *
 * Sums run in double; a [T][T] head is read row by row once. The rollout is
 * L dense [T][T] products, O(L T^3): about 0.8 G multiply-adds at T = 512,
 * L = 6 (two rollouts: 1.6 G), in f32 on the kernels' SIMD product
 * (blk_matmul_nt; its scalar reference in scalar builds): the products of
 * row-stochastic matrices stay within 1e-5 of the numpy references in
 * double (tests/analyze.test.mjs; measured max |d| in docs/analyses.md).
 *
 * Threads: bl_analyze runs on the state's pool (bl_state_set_threads), like
 * the forward pass: heads' features handed out one head at a time, the
 * head sums and each rollout layer split by rows in whole groups of 4 (the
 * kernels' tile height). Every head and row is computed by the same calls
 * on the same inputs whatever the split, so the results are bit for bit
 * those of one thread (tests/threads.test.mjs).
 */
#include "bertlens.h"
#include "base/error.h"
#include "kernels/kernels.h"
#include "base/sizes.h"
#include "base/threads.h"
#include "text/unicode.h"
#include "text/utf8.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------- token roles */

/* BERT's punctuation rule, on one code point. */
static int is_punct_cp(uint32_t c) {
    if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126)) return 1;
    return c >= 128 && bli_uc_class(c) == BL_UC_PUNCT;
}

/* 1 if s is non-empty valid UTF-8 whose every character is punctuation. */
static int all_punct(const char *s) {
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s);
    if (!n) return 0;
    for (size_t i = 0; i < n;) {
        uint32_t c;
        size_t k = bli_utf8_next(p + i, n - i, &c, NULL, NULL);
        if (!k || !is_punct_cp(c)) return 0;
        i += k;
    }
    return 1;
}

int bl_token_roles(const bl_model *m, const int32_t *ids, int32_t T, uint8_t *roles, char *err, size_t errlen) {
    if (!m || !ids || !roles || T < 1) {
        bli_set_err(err, errlen, "bl_token_roles: missing model, ids or roles");
        return -1;
    }
    const bl_tokenizer *tk = bl_model_tokenizer(m);
    bl_special_ids sp;
    bl_tokenizer_special(tk, &sp);
    const int32_t cls = sp.cls, sep = sp.sep; /* required by bl_tokenizer_new: >= 0 */
    for (int32_t t = 0; t < T; t++) {
        const char *s = bl_token_str(tk, ids[t]);
        roles[t] = (uint8_t)((ids[t] == cls ? BL_ROLE_CLS : 0) | (ids[t] == sep ? BL_ROLE_SEP : 0) |
                             (s && all_punct(s) ? BL_ROLE_PUNCT : 0));
    }
    return 0;
}

/* -------------------------------------------------------- head features */

static const char *const class_names[] = {"vertical", "diagonal", "vertical+diagonal", "block", "heterogeneous"};

const char *bl_head_class_name(int klass) {
    return klass >= 0 && klass <= BL_CLASS_HETEROGENEOUS ? class_names[klass] : NULL;
}

static float nz(float x) { return isnan(x) ? 0.0f : x; }
static float max3(float a, float b, float c) { return fmaxf(fmaxf(nz(a), nz(b)), nz(c)); }

int bl_head_classify(const bl_head_features *f, int32_t T, int pair) {
    const float u = T > 0 ? 1.0f / (float)T : 0.0f; /* a uniform row's weight on one key */
    const int v = max3(f->cls, f->sep, f->punct) - u >= BL_CLASS_VERTICAL_MIN,
              d = max3(f->prev, f->self, f->next) - u >= BL_CLASS_DIAGONAL_MIN;
    if (v && d) return BL_CLASS_VERTICAL_DIAGONAL;
    if (v) return BL_CLASS_VERTICAL;
    if (d) return BL_CLASS_DIAGONAL;
    if (pair && nz(f->segment) >= BL_CLASS_BLOCK_MIN) return BL_CLASS_BLOCK;
    return BL_CLASS_HETEROGENEOUS;
}

/* 1 if the segments mark a pair (some token's segment differs from the first). */
static int is_pair(const int32_t *segments, int32_t T) {
    if (!segments) return 0;
    for (int32_t t = 1; t < T; t++)
        if (segments[t] != segments[0]) return 1;
    return 0;
}

int bl_head_analyze(const float *a, int32_t T, const uint8_t *roles, const int32_t *segments,
                    bl_head_features *out) {
    if (!a || !out || T < 1) return -1;
    const int pair = is_pair(segments, T);
    double ent = 0, cls = 0, sep = 0, punct = 0, prev = 0, self = 0, next = 0, seg = 0, conf = 0;
    for (int32_t i = 0; i < T; i++) {
        const float *r = a + (size_t)i * T;
        double e = 0, top = 0;
        for (int32_t j = 0; j < T; j++) {
            const float x = r[j];
            if (x > 0) e -= (double)x * logf(x); /* logf: within 1 ulp, ~1.4x faster than log here */
            if (x > top) top = x;
        }
        if (roles) /* apart from the loop above, which then has no branches but x > 0 */
            for (int32_t j = 0; j < T; j++) {
                if (!roles[j]) continue;
                if (roles[j] & BL_ROLE_CLS) cls += r[j];
                if (roles[j] & BL_ROLE_SEP) sep += r[j];
                if (roles[j] & BL_ROLE_PUNCT) punct += r[j];
            }
        if (pair)
            for (int32_t j = 0; j < T; j++)
                if (segments[j] == segments[i]) seg += r[j];
        ent += e;
        conf += top;
        if (i > 0) prev += r[i - 1];
        self += r[i];
        if (i + 1 < T) next += r[i + 1];
    }
    out->entropy = (float)(ent / T);
    out->cls = (float)(cls / T);
    out->sep = (float)(sep / T);
    out->punct = (float)(punct / T);
    out->prev = T > 1 ? (float)(prev / (T - 1)) : NAN;
    out->self = (float)(self / T);
    out->next = T > 1 ? (float)(next / (T - 1)) : NAN;
    out->segment = pair ? (float)(seg / T) : NAN;
    out->confidence = (float)(conf / T);
    out->klass = bl_head_classify(out, T, pair);
    return 0;
}

/* -------------------------------------------------------------- rollout */

typedef struct {
    const float *m; /* this layer's mixing matrix [T][T]              */
    float *at;      /* [T][T] 0.5 * rownorm(m) + 0.5 * I              */
    float *r;       /* R_l, written                                   */
    const float *prev; /* R_(l-1), NULL for the first layer          */
    float *scratch; /* [n threads][nscr]                              */
    size_t nscr;
    int32_t T;
    int normalize;
} rollout_task;

/* One rollout layer, rows [i0, i1) of thread w: row i of at needs row i of
 * m only, row i of R_l needs row i of at and all of R_(l-1) (done by the
 * previous layer's task). */
static void task_rollout(void *arg, int w, int n) {
    const rollout_task *k = arg;
    const int32_t T = k->T;
    int32_t i0, i1;
    bli_rows_of(T, w, n, &i0, &i1);
    if (i0 >= i1) return;
    const float *m = k->m;
    float *at = k->at;
    /* at = 0.5 * rownorm(m) + 0.5 * I (the row sum in double) */
    for (int32_t i = i0; i < i1; i++) {
        double s = 1.0;
        if (k->normalize) {
            s = 0;
            for (int32_t j = 0; j < T; j++) s += m[(size_t)i * T + j];
            if (!(s > 0)) s = 1.0; /* an all-zero row: keep zeros, the identity half remains */
        }
        for (int32_t j = 0; j < T; j++) at[(size_t)i * T + j] = (float)(0.5 * m[(size_t)i * T + j] / s);
        at[(size_t)i * T + i] += 0.5f;
    }
    float *r = k->r + (size_t)i0 * T;
    if (!k->prev)
        memcpy(r, at + (size_t)i0 * T, (size_t)(i1 - i0) * T * sizeof(float));
    else /* R_l = at * R_(l-1): y[i][j] = sum_k at[i][k] * R_(l-1)[k][j], R_(l-1) read in place (strides 1, T) */
        blk_matmul_nt(r, T, at + (size_t)i0 * T, T, i1 - i0, k->prev, 1, T, T, T, k->scratch + (size_t)w * k->nscr);
}

/* bl_rollout on a pool (NULL: one thread). */
static int rollout_on(bli_pool *pool, const float *mix, int32_t L, int32_t T, int normalize, float *out, char *err,
                      size_t errlen) {
    if (!mix || !out || L < 1 || T < 1) {
        bli_set_err(err, errlen, "bl_rollout: no matrices");
        return -1;
    }
    char what[64];
    snprintf(what, sizeof what, "a %d-token rollout", T);
    /* T * T floats must fit one buffer (sizes.h) before TT is a size_t; the
     * caller's out and mix hold L of them */
    if (!bli_size_ok(BLI_BYTES(sizeof(float), L, T, T), what, err, errlen)) return -1;
    const size_t TT = (size_t)T * T;
    const int nt = bli_pool_threads(pool);
    const size_t nscr = L > 1 ? blk_matmul_nt_scratch_floats(T, T) : 0;
    float *at = bli_alloc(BLI_BYTES(sizeof(float), TT), 0, what, err, errlen);                    /* [T][T] */
    float *scratch = at && L > 1 ? bli_alloc(BLI_BYTES(sizeof(float), nt, nscr), 0, what, err, errlen) : NULL;
    if (!at || (L > 1 && !scratch)) {
        free(at);
        return -1;
    }
    rollout_task k = {.at = at, .scratch = scratch, .nscr = nscr, .T = T, .normalize = normalize};
    for (int32_t l = 0; l < L; l++) {
        k.m = mix + (size_t)l * TT;
        k.r = out + (size_t)l * TT;
        k.prev = l ? k.r - TT : NULL;
        bli_pool_run(pool, task_rollout, &k);
    }
    free(at);
    free(scratch);
    return 0;
}

int bl_rollout(const float *mix, int32_t L, int32_t T, int normalize, float *out, char *err, size_t errlen) {
    return rollout_on(NULL, mix, L, T, normalize, out, err, errlen);
}

/* ------------------------------------------------------------ comparing */

int bl_head_compare(const float *a, const float *b, int32_t T, bl_head_diff *out) {
    if (!a || !b || !out || T < 1) return -1;
    double total = 0, mx = 0;
    for (int32_t i = 0; i < T; i++) {
        const float *p = a + (size_t)i * T, *q = b + (size_t)i * T;
        double js = 0;
        for (int32_t j = 0; j < T; j++) {
            const double x = p[j], y = q[j], m = 0.5 * (x + y), d = fabs(y - x);
            if (x > 0) js += x * log2(x / m);
            if (y > 0) js += y * log2(y / m);
            if (d > mx) mx = d;
        }
        total += sqrt(fmax(0.0, 0.5 * js));
    }
    out->js = total / T;
    out->max_abs = mx;
    return 0;
}

/* ------------------------------------------------------------- analysis */

void bl_analysis_free(bl_analysis *a) {
    if (!a) return;
    free(a->heads);
    free(a->rollout);
    free(a->rollout_norm);
    memset(a, 0, sizeof *a);
}

/* out[k] = (sum over the NH heads of x[h][k]) / div (x: [NH][TT]), k in [k0, k1). */
static void sum_heads(float *out, const float *x, int32_t NH, size_t TT, double div, size_t k0, size_t k1) {
    for (size_t k = k0; k < k1; k++) {
        double sum = 0;
        for (int32_t h = 0; h < NH; h++) sum += x[(size_t)h * TT + k];
        out[k] = (float)(sum / div);
    }
}

typedef struct {
    const bl_state *s;
    const uint8_t *roles;
    const int32_t *segments;
    bl_head_features *heads; /* [L][NH]                                   */
    float *mix, *mix_norm;   /* [L][T][T] mean / sum over heads, or NULL  */
    int32_t T, L, NH;
    atomic_int next;         /* the next head to analyse                  */
} analyze_task;

/* Features of every head, handed out one by one; then the head sums for
 * the rollouts, rows [i0, i1) of every layer. */
static void task_analyze(void *arg, int w, int n) {
    analyze_task *a = arg;
    const size_t TT = (size_t)a->T * a->T;
    for (int32_t k; (k = atomic_fetch_add_explicit(&a->next, 1, memory_order_relaxed)) < a->L * a->NH;)
        bl_head_analyze(bl_attention(a->s, k / a->NH) + (size_t)(k % a->NH) * TT, a->T, a->roles, a->segments,
                        &a->heads[k]);
    int32_t i0, i1;
    bli_rows_of(a->T, w, n, &i0, &i1);
    for (int32_t l = 0; l < a->L && i0 < i1; l++) {
        const size_t at = (size_t)l * TT, k0 = (size_t)i0 * a->T, k1 = (size_t)i1 * a->T;
        if (a->mix) sum_heads(a->mix + at, bl_attention(a->s, l), a->NH, TT, a->NH, k0, k1);
        if (a->mix_norm) sum_heads(a->mix_norm + at, bl_norms(a->s, l), a->NH, TT, 1.0, k0, k1);
    }
}

/* out's head features [L][NH] and, with_rollout, its rollouts' buffers and
 * the head sums they are made from (*mix, and *mix_norm with_norms:
 * [L][T][T]); the sizes checked in 64 bits first (sizes.h). -1: nothing kept. */
static int analysis_begin(bl_analysis *out, int32_t L, int32_t NH, int32_t T, const int32_t *segments,
                          int with_rollout, int with_norms, float **mix, float **mix_norm, char *err, size_t errlen) {
    char rwhat[64];
    snprintf(rwhat, sizeof rwhat, "the rollout of %d layers x %d tokens", L, T);
    const uint64_t lmats = BLI_BYTES(sizeof(float), L, T, T);
    *mix = *mix_norm = NULL;
    if (with_rollout && !bli_size_ok(lmats, rwhat, err, errlen)) return -1;
    if (!(out->heads = bli_alloc(BLI_BYTES(sizeof *out->heads, L, NH), 0, "head features", err, errlen)) ||
        (with_rollout && (!(*mix = bli_alloc(lmats, 0, rwhat, err, errlen)) ||
                          !(out->rollout = bli_alloc(lmats, 0, rwhat, err, errlen)))) ||
        (with_norms && (!(*mix_norm = bli_alloc(lmats, 0, rwhat, err, errlen)) ||
                        !(out->rollout_norm = bli_alloc(lmats, 0, rwhat, err, errlen))))) {
        free(*mix);
        free(*mix_norm);
        *mix = *mix_norm = NULL;
        bl_analysis_free(out);
        return -1;
    }
    out->n_layers = L;
    out->n_heads = NH;
    out->T = T;
    out->pair = is_pair(segments, T);
    return 0;
}

/* The rollouts of out from the head sums mix, mix_norm (either NULL: none),
 * which it frees. -1: out freed too. */
static int analysis_end(bli_pool *pool, bl_analysis *out, float *mix, float *mix_norm, char *err, size_t errlen) {
    const int32_t L = out->n_layers, T = out->T;
    const int bad = (mix && rollout_on(pool, mix, L, T, 0, out->rollout, err, errlen)) ||
                    (mix_norm && rollout_on(pool, mix_norm, L, T, 1, out->rollout_norm, err, errlen));
    free(mix);
    free(mix_norm);
    if (bad) bl_analysis_free(out);
    return bad ? -1 : 0;
}

int bl_analyze(const bl_state *s, const int32_t *ids, const int32_t *type_ids, int what, bl_analysis *out,
               char *err, size_t errlen) {
    if (!out) {
        bli_set_err(err, errlen, "bl_analyze: no output");
        return -1;
    }
    memset(out, 0, sizeof *out);
    const int32_t T = bl_state_tokens(s);
    if (!s || !ids || T < 1) {
        bli_set_err(err, errlen, "bl_analyze: run bl_forward first");
        return -1;
    }
    const bl_model *m = bl_state_model(s);
    const bl_config *c = bl_model_config(m);
    const int32_t L = c->n_layers, NH = c->n_heads;
    if (!bl_attention(s, 0)) {
        bli_set_err(err, errlen, "bl_analyze: the state did not keep attention (BL_KEEP_ATTN)");
        return -1;
    }
    const int with_rollout = what == BL_ANALYZE_ROLLOUT;
    const int with_norms = with_rollout && bl_norms(s, 0) != NULL;
    /* the rollouts [L][T][T] are checked on their own (the state's attention,
     * L * NH times larger, passed the same check when it was made) */
    float *mix, *mix_norm; /* [L][T][T] mean / sum over heads */
    uint8_t *roles = malloc((size_t)T);
    if (!roles) {
        bli_set_err(err, errlen, "out of memory analysing %d tokens", T);
        return -1;
    }
    if (bl_token_roles(m, ids, T, roles, err, errlen) ||
        analysis_begin(out, L, NH, T, type_ids, with_rollout, with_norms, &mix, &mix_norm, err, errlen)) {
        free(roles);
        return -1;
    }
    bli_pool *pool = bli_state_pool(s);
    analyze_task a = {.s = s, .roles = roles, .segments = type_ids, .heads = out->heads, .mix = mix,
                      .mix_norm = mix_norm, .T = T, .L = L, .NH = NH};
    atomic_init(&a.next, 0);
    bli_pool_run(pool, task_analyze, &a);
    free(roles);
    return analysis_end(pool, out, mix, mix_norm, err, errlen);
}

/* ------------------------------------------------ without a model (notebooks) */

void bl_token_roles_text(const char *const *tokens, const uint8_t *special, int32_t T, uint8_t *roles) {
    for (int32_t t = 0; t < T; t++) {
        const int sp = special && special[t];
        const int closing = sp && t > 0 && special[T - 1] && !strcmp(tokens[t], tokens[T - 1]);
        roles[t] = (uint8_t)((sp && t == 0 ? BL_ROLE_CLS : 0) | (closing ? BL_ROLE_SEP : 0) |
                             (tokens[t] && all_punct(tokens[t]) ? BL_ROLE_PUNCT : 0));
    }
}

int bl_analyze_attention(const float *attn, const float *norms, int32_t L, int32_t NH, int32_t T,
                         const uint8_t *roles, const int32_t *segments, int what, bl_analysis *out, char *err,
                         size_t errlen) {
    if (!out) {
        bli_set_err(err, errlen, "bl_analyze_attention: no output");
        return -1;
    }
    memset(out, 0, sizeof *out);
    if (!attn || L < 1 || NH < 1 || T < 1) {
        bli_set_err(err, errlen, "bl_analyze_attention: no attention");
        return -1;
    }
    /* the attention [L][NH][T][T] was allocated by the caller; its size in 64 bits first (sizes.h) */
    if (!bli_size_ok(BLI_BYTES(sizeof(float), (uint64_t)L * NH, T, T), "the attention", err, errlen)) return -1;
    const size_t TT = (size_t)T * T;
    const int with_rollout = what == BL_ANALYZE_ROLLOUT, with_norms = with_rollout && norms;
    float *mix, *mix_norm; /* [L][T][T] mean / sum over heads, as bl_analyze */
    if (analysis_begin(out, L, NH, T, segments, with_rollout, with_norms, &mix, &mix_norm, err, errlen)) return -1;
    for (int32_t k = 0; k < L * NH; k++) bl_head_analyze(attn + (size_t)k * TT, T, roles, segments, &out->heads[k]);
    for (int32_t l = 0; l < L; l++) {
        const size_t at = (size_t)l * TT;
        if (mix) sum_heads(mix + at, attn + at * NH, NH, TT, NH, 0, TT);
        if (mix_norm) sum_heads(mix_norm + at, norms + at * NH, NH, TT, 1.0, 0, TT);
    }
    return analysis_end(NULL, out, mix, mix_norm, err, errlen);
}
