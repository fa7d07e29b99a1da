/* family_host.c — runs the family pieces of src/model/encoder_family.h on inputs
 * given as text on stdin and prints what they compute, for
 * tests/family_ops.test.mjs (which holds the Hugging Face references).
 *
 * Input: cases, each an op name, its integer parameters, then its arrays as
 * whitespace-separated numbers (the order below). Output: one line per case,
 * "<op> <count> v0 v1 ...". A malformed input stops with exit status 2.
 *
 *   mpnet_bucket NB MAXD N  rel[N]                   -> bucket[N]
 *   deberta_bucket B MAXP N rel[N]                   -> bucket[N]
 *   rope_freq D THETA                                -> inv_freq[D/2]
 *   mpnet_attn T HID H NB MAXD  x[T*HID] wq[HID*HID] bq[HID] wk bk table[NB*H]      -> probs[H*T*T]
 *   deberta_attn T HID H B MAXP TERMS SHARE EPS HASLN
 *       x wq bq wk bk rel[2S*HID] (HASLN: g[HID] b[HID]) (!SHARE: c2p: pkw pkb; p2c: pqw pqb)
 *                                                    -> probs[H*T*T]   (S = B > 0 ? B : MAXP)
 *   modernbert_attn T HID H THETA HALF  x[T*HID] wqkv[3*HID*HID]                    -> probs[H*T*T]
 *   geglu T HID I  x[T*HID] wi[2I*HID] wo[HID*I]     -> y[T*HID]
 */
#include "bertlens.h"
#include "model/encoder_family.h"
#include "kernels/kernels.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void die(const char *what) {
    fprintf(stderr, "family_host: %s\n", what);
    exit(2);
}

static long get_int(void) {
    long v;
    if (scanf("%ld", &v) != 1) die("expected an integer");
    return v;
}

static double get_num(void) {
    double v;
    if (scanf("%lf", &v) != 1) die("expected a number");
    return v;
}

static float *get_floats(size_t n) {
    float *p = malloc((n ? n : 1) * sizeof *p);
    if (!p) die("out of memory");
    for (size_t i = 0; i < n; i++) p[i] = (float)get_num();
    return p;
}

static void print_floats(const char *op, const float *v, size_t n) {
    printf("%s %zu", op, n);
    for (size_t i = 0; i < n; i++) printf(" %.9g", v[i]);
    printf("\n");
}

/* y[T][n] = x[T][k] W^T + b through the engine's kernels (f32 weight). */
static void linear(float *y, const float *x, int32_t T, const float *w, const float *b, int32_t n, int32_t k) {
    blk_weight bw;
    if (blk_weight_init(&bw, BL_F32, n, k, (const uint8_t *)w) || blk_weight_pack(&bw)) die("weight");
    float *scratch = malloc(blk_matmul_scratch_floats(T, k) * sizeof(float));
    if (!scratch) die("out of memory");
    blk_matmul(y, x, T, &bw, b, scratch);
    free(scratch);
    blk_weight_free(&bw);
}

static float *zalloc(size_t n) {
    float *p = calloc(n ? n : 1, sizeof(float));
    if (!p) die("out of memory");
    return p;
}

static void mpnet_attn(void) {
    const int32_t T = get_int(), HID = get_int(), H = get_int(), NB = get_int(), MAXD = get_int(), d = HID / H;
    float *x = get_floats((size_t)T * HID), *wq = get_floats((size_t)HID * HID), *bq = get_floats(HID),
          *wk = get_floats((size_t)HID * HID), *bk = get_floats(HID), *table = get_floats((size_t)NB * H);
    float *q = zalloc((size_t)T * HID), *k = zalloc((size_t)T * HID), *probs = zalloc((size_t)H * T * T),
          *bias = zalloc((size_t)H * (2 * T - 1)), *ks = zalloc(blk_matmul_nt_scratch_floats(T, d));
    linear(q, x, T, wq, bq, HID, HID);
    linear(k, x, T, wk, bk, HID, HID);
    bli_mpnet_bias(bias, table, H, T, NB, MAXD);
    for (int32_t h = 0; h < H; h++) {
        float *a = probs + (size_t)h * T * T;
        blk_matmul_nt(a, T, q + h * d, HID, T, k + h * d, HID, 1, T, d, ks);
        bli_rel_bias_add(a, T, sqrtf((float)d), bias + (size_t)h * (2 * T - 1));
        blk_softmax(a, T, T, 1.0f);
    }
    print_floats("mpnet_attn", probs, (size_t)H * T * T);
    free(x), free(wq), free(bq), free(wk), free(bk), free(table), free(q), free(k), free(probs), free(bias),
        free(ks);
}

static void deberta_attn(void) {
    const int32_t T = get_int(), HID = get_int(), H = get_int(), B = get_int(), MAXP = get_int();
    const unsigned terms = (unsigned)get_int();
    const int share = (int)get_int();
    const float eps = (float)get_num();
    const int has_ln = (int)get_int();
    const int32_t d = HID / H, S = B > 0 ? B : MAXP;
    float *x = get_floats((size_t)T * HID), *wq = get_floats((size_t)HID * HID), *bq = get_floats(HID),
          *wk = get_floats((size_t)HID * HID), *bk = get_floats(HID), *rel = get_floats((size_t)2 * S * HID);
    float *g = NULL, *b = NULL, *pkw = wk, *pkb = bk, *pqw = wq, *pqb = bq;
    if (has_ln) g = get_floats(HID), b = get_floats(HID);
    if (!share) {
        if (terms & BLI_DEB_C2P) pkw = get_floats((size_t)HID * HID), pkb = get_floats(HID);
        if (terms & BLI_DEB_P2C) pqw = get_floats((size_t)HID * HID), pqb = get_floats(HID);
    }
    if (has_ln) blk_layernorm(rel, NULL, 2 * S, HID, g, b, eps);
    int32_t *idx = malloc((size_t)(2 * T - 1) * sizeof *idx), r0, nr;
    if (!idx) die("out of memory");
    bli_deberta_rel_index(idx, &r0, &nr, T, B, MAXP);
    float *q = zalloc((size_t)T * HID), *k = zalloc((size_t)T * HID), *pk = zalloc((size_t)nr * HID),
          *pq = zalloc((size_t)nr * HID), *probs = zalloc((size_t)H * T * T),
          *ks = zalloc(blk_matmul_nt_scratch_floats(T, d)), *scratch = zalloc(bli_deberta_scratch_floats(T, nr, d));
    linear(q, x, T, wq, bq, HID, HID);
    linear(k, x, T, wk, bk, HID, HID);
    /* only the rows r0 .. r0 + nr - 1 the input's distances reach */
    if (terms & BLI_DEB_C2P) linear(pk, rel + (size_t)r0 * HID, nr, pkw, pkb, HID, HID);
    if (terms & BLI_DEB_P2C) linear(pq, rel + (size_t)r0 * HID, nr, pqw, pqb, HID, HID);
    const int n_terms = !!(terms & BLI_DEB_C2P) + !!(terms & BLI_DEB_P2C);
    const float scale = 1.0f / sqrtf((float)d * (float)(1 + n_terms));
    for (int32_t h = 0; h < H; h++) {
        float *a = probs + (size_t)h * T * T;
        blk_matmul_nt(a, T, q + h * d, HID, T, k + h * d, HID, 1, T, d, ks);
        bli_deberta_add(a, T, q + h * d, k + h * d, HID, pk + h * d, pq + h * d, HID, idx, nr, d, terms, scratch);
        blk_softmax(a, T, T, scale);
    }
    print_floats("deberta_attn", probs, (size_t)H * T * T);
    free(x), free(wq), free(bq), free(wk), free(bk), free(rel), free(g), free(b);
    if (pkw != wk) free(pkw), free(pkb);
    if (pqw != wq) free(pqw), free(pqb);
    free(idx), free(q), free(k), free(pk), free(pq), free(probs), free(ks), free(scratch);
}

static void modernbert_attn(void) {
    const int32_t T = get_int(), HID = get_int(), H = get_int();
    const float theta = (float)get_num();
    const int32_t half = get_int(), d = HID / H;
    float *x = get_floats((size_t)T * HID), *wqkv = get_floats((size_t)3 * HID * HID);
    float *qkv = zalloc((size_t)T * 3 * HID), *q = zalloc((size_t)T * HID), *k = zalloc((size_t)T * HID),
          *cs = zalloc((size_t)T * d), *probs = zalloc((size_t)H * T * T),
          *ks = zalloc(blk_matmul_nt_scratch_floats(T, d));
    linear(qkv, x, T, wqkv, NULL, 3 * HID, HID);
    for (int32_t t = 0; t < T; t++) {
        memcpy(q + (size_t)t * HID, qkv + (size_t)t * 3 * HID, (size_t)HID * sizeof(float));
        memcpy(k + (size_t)t * HID, qkv + (size_t)t * 3 * HID + HID, (size_t)HID * sizeof(float));
    }
    bli_rope_table(cs, T, d, theta);
    /* in two blocks of rows, as the forward pass's row tasks would */
    bli_rope_rows(q, HID, 0, T / 2, H, d, cs);
    bli_rope_rows(q, HID, T / 2, T, H, d, cs);
    bli_rope_rows(k, HID, 0, T, H, d, cs);
    for (int32_t h = 0; h < H; h++) {
        float *a = probs + (size_t)h * T * T;
        blk_matmul_nt(a, T, q + h * d, HID, T, k + h * d, HID, 1, T, d, ks);
        bli_softmax_window(a, T, 1.0f / sqrtf((float)d), half);
    }
    print_floats("modernbert_attn", probs, (size_t)H * T * T);
    free(x), free(wqkv), free(qkv), free(q), free(k), free(cs), free(probs), free(ks);
}

static void geglu(void) {
    const int32_t T = get_int(), HID = get_int(), I = get_int();
    float *x = get_floats((size_t)T * HID), *wi = get_floats((size_t)2 * I * HID), *wo = get_floats((size_t)HID * I);
    float *y = zalloc((size_t)T * 2 * I), *out = zalloc((size_t)T * HID);
    linear(y, x, T, wi, NULL, 2 * I, HID);
    bli_geglu(y, T, I, BL_ACT_GELU);
    linear(out, y, T, wo, NULL, HID, I);
    print_floats("geglu", out, (size_t)T * HID);
    free(x), free(wi), free(wo), free(y), free(out);
}

int main(void) {
    char op[64];
    while (scanf("%63s", op) == 1) {
        if (!strcmp(op, "mpnet_bucket") || !strcmp(op, "deberta_bucket")) {
            const int mp = op[0] == 'm';
            const long p1 = get_int(), p2 = get_int(), n = get_int();
            if (n < 0 || n > 1 << 20) die("bad count");
            printf("%s %ld", op, n);
            for (long i = 0; i < n; i++) {
                const int32_t r = (int32_t)get_int();
                printf(" %d", mp ? bli_mpnet_bucket(r, (int32_t)p1, (int32_t)p2)
                                 : bli_deberta_bucket(r, (int32_t)p1, (int32_t)p2));
            }
            printf("\n");
        } else if (!strcmp(op, "rope_freq")) {
            const int32_t d = get_int();
            const float theta = (float)get_num();
            float *inv = zalloc((size_t)d / 2);
            bli_rope_freq(inv, d, theta);
            print_floats("rope_freq", inv, (size_t)d / 2);
            free(inv);
        } else if (!strcmp(op, "mpnet_attn"))
            mpnet_attn();
        else if (!strcmp(op, "deberta_attn"))
            deberta_attn();
        else if (!strcmp(op, "modernbert_attn"))
            modernbert_attn();
        else if (!strcmp(op, "geglu"))
            geglu();
        else
            die("unknown op");
    }
    return 0;
}
