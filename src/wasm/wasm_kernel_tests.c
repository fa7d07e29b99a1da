/* wasm_kernel_tests.c — the kernels' test entry points (blw_k_*), for
 * tests/kernels.test.mjs: each runs one kernel, the scalar reference
 * (simd = 0) or the build's selected version (simd = 1), on caller-provided
 * buffers. Compiled only into the test builds — build/wasm-test/bertlens.js
 * and, natively, build/kernel_host (tests/c/kernel_host.c) — never into the
 * page's wasm (dist/), whose exports tools/wasm_exports.sh takes from
 * wasm_api.c alone.
 */
#include "bertlens.h"
#include "kernels/kernels.h"
#include "wasm_api.h"

#include <math.h>
#include <stdlib.h>

#ifdef __EMSCRIPTEN__
#include <emscripten.h>
#else
#define EMSCRIPTEN_KEEPALIVE
#endif

/* y = act(x w^T + bias): the build's kernels (simd = 1) or the scalar
 * matmul then the scalar activation. 0 / -1 out of memory. */
static int run_matmul(int simd, float *y, const float *x, int T, const blk_weight *w, const float *bias, int act) {
    float *scratch = malloc(blk_matmul_scratch_floats(T, w->k) * sizeof(float));
    if (!scratch) {
        bli_wasm_set_error("out of memory");
        return -1;
    }
    if (simd) {
        blk_matmul_act(y, x, T, w, bias, act, scratch);
    } else {
        blk_matmul_scalar(y, x, T, w, bias, scratch);
        if (act >= 0) blk_activate_scalar(y, (size_t)T * w->n, act);
    }
    free(scratch);
    return 0;
}

/* The fused projection + activation (blk_matmul_act; act < 0: none) against
 * the scalar matmul followed by the scalar activation (simd = 0). */
EMSCRIPTEN_KEEPALIVE int blw_k_matmul_act(int simd, float *y, const float *x, int T, int dtype, int n, int k,
                                          const uint8_t *wdata, const float *bias, int act) {
    blk_weight w;
    if (blk_weight_init(&w, dtype, n, k, wdata)) {
        bli_wasm_set_error("bad weight shape/dtype");
        return -1;
    }
    if (simd && blk_weight_pack(&w)) {
        bli_wasm_set_error("out of memory");
        return -1;
    }
    int rc = run_matmul(simd, y, x, T, &w, bias, act);
    blk_weight_free(&w);
    return rc;
}

/* A q8 weight re-laid out in place into panels (blk_q8_panels_in_place, as
 * bl_model_pack_in_place does in the page's engine): blk_matmul_act (simd =
 * 1) or the scalar reference (simd = 0) reading the panels, and row r of it
 * (blk_weight_row) into row_out[k] (row_out may be NULL). wdata is
 * rewritten: the caller passes a copy. -1: a shape the panels refuse. */
EMSCRIPTEN_KEEPALIVE int blw_k_matmul_panels(int simd, float *y, const float *x, int T, int n, int k, uint8_t *wdata,
                                             const float *bias, int act, int r, float *row_out) {
    blk_weight w;
    if (blk_weight_init(&w, BL_Q8, n, k, wdata) || blk_q8_panels_in_place(wdata, n, k) || blk_weight_use_panels(&w) ||
        blk_weight_pack(&w)) {
        bli_wasm_set_error("bad weight shape for q8 panels");
        return -1;
    }
    const int rc = run_matmul(simd, y, x, T, &w, bias, act);
    if (!rc && row_out && r >= 0 && r < n) blk_weight_row(&w, r, row_out);
    blk_weight_free(&w); /* the shared scales; the panels are the caller's bytes */
    return rc;
}

/* The shared scales blk_weight_pack gives a q8 weight re-laid out in panels
 * (kernels_pack.c "q8 panels on shared scales"): the 32-blocks per group, 0 where
 * it keeps the bundle's scales (a scalar build: always), and the scales
 * s' into gs_out [n][groups] (may be NULL). wdata is rewritten: the caller
 * passes a copy. -1: a shape the panels refuse, or out of memory. */
EMSCRIPTEN_KEEPALIVE int blw_k_q8_regroup(int n, int k, uint8_t *wdata, float *gs_out) {
    blk_weight w;
    if (blk_weight_init(&w, BL_Q8, n, k, wdata) || blk_q8_panels_in_place(wdata, n, k) || blk_weight_use_panels(&w) ||
        blk_weight_pack(&w)) {
        bli_wasm_set_error("bad weight shape for q8 panels");
        return -1;
    }
    const int qg = w.gs ? w.qg : 0, nb = k / BL_QBLOCK, ngr = qg ? (nb + qg - 1) / qg : 0;
    if (gs_out)
        for (int r = 0; r < n; r++)
            for (int g = 0; g < ngr; g++) gs_out[r * ngr + g] = w.gs[((size_t)(r / BL_PANEL) * ngr + g) * BL_PANEL + r % BL_PANEL];
    blk_weight_free(&w);
    return qg;
}

/* W^T of a q8 weight in int16 panels (blk_weight_t16; simd = 0: the scalar
 * reference), from the bundle layout (panels = 0) or from q8 panels laid
 * out in place (panels = 1; wdata is rewritten: the caller passes a copy):
 * pq int16 [k/8][n/2][8][2], ps f32 [k/8][n/32][8]. -1: a refused shape. */
EMSCRIPTEN_KEEPALIVE int blw_k_weight_t16(int simd, int n, int k, uint8_t *wdata, int panels, int16_t *pq, float *ps) {
    blk_weight w;
    if (n % BL_QBLOCK || blk_weight_init(&w, BL_Q8, n, k, wdata) ||
        (panels && (blk_q8_panels_in_place(wdata, n, k) || blk_weight_use_panels(&w)))) {
        bli_wasm_set_error("bad weight shape for W^T panels");
        return -1;
    }
    if (simd) blk_weight_t16(&w, pq, ps);
    else blk_weight_t16_scalar(&w, pq, ps);
    return 0;
}

/* The plain projection: blk_matmul is blk_matmul_act with no activation. */
EMSCRIPTEN_KEEPALIVE int blw_k_matmul(int simd, float *y, const float *x, int T, int dtype, int n, int k,
                                      const uint8_t *wdata, const float *bias) {
    return blw_k_matmul_act(simd, y, x, T, dtype, n, k, wdata, bias, -1);
}

/* The scale groups blk_weight_pack chooses for a q8/q4/QN weight: 32-blocks
 * per group (1: the bundle's own scales; also in scalar builds, which read
 * the bundle directly), -1 bad shape or out of memory. */
EMSCRIPTEN_KEEPALIVE int blw_k_qgroup(int dtype, int n, int k, const uint8_t *wdata) {
    blk_weight w;
    if (blk_weight_init(&w, dtype, n, k, wdata) || dtype == BL_F32 || dtype == BL_F16) {
        bli_wasm_set_error("bad weight shape/dtype");
        return -1;
    }
    if (blk_weight_pack(&w)) {
        bli_wasm_set_error("out of memory");
        return -1;
    }
    int qg = w.pq ? w.qg : 1;
    blk_weight_free(&w);
    return qg;
}

/* simd = 2: the integer form the attention of quantized bundles uses. */
EMSCRIPTEN_KEEPALIVE int blw_k_matmul_nt(int simd, float *y, int ldy, const float *x, int ldx, int T, const float *b,
                                         int bn, int bk, int N, int K) {
    float *scratch = malloc(blk_matmul_nt_scratch_floats(N, K) * sizeof(float));
    if (!scratch) {
        bli_wasm_set_error("out of memory");
        return -1;
    }
    if (simd == 2)
        blk_matmul_nt_q(y, ldy, x, ldx, T, b, bn, bk, N, K, scratch);
    else if (simd)
        blk_matmul_nt(y, ldy, x, ldx, T, b, bn, bk, N, K, scratch);
    else
        blk_matmul_nt_scalar(y, ldy, x, ldx, T, b, bn, bk, N, K, scratch);
    free(scratch);
    return 0;
}

EMSCRIPTEN_KEEPALIVE void blw_k_layernorm(int simd, float *x, const float *res, int T, int n, const float *gam,
                                          const float *beta, float eps) {
    if (simd)
        blk_layernorm(x, res, T, n, gam, beta, eps);
    else
        blk_layernorm_scalar(x, res, T, n, gam, beta, eps);
}

EMSCRIPTEN_KEEPALIVE void blw_k_softmax(int simd, float *x, int T, int n, float scale) {
    if (simd)
        blk_softmax(x, T, n, scale);
    else
        blk_softmax_scalar(x, T, n, scale);
}

EMSCRIPTEN_KEEPALIVE void blw_k_activate(int simd, float *x, int n, int act) {
    if (simd)
        blk_activate(x, (size_t)n, act);
    else
        blk_activate_scalar(x, (size_t)n, act);
}

/* erf / exp: simd = 1 -> the kernels' own approximations, 0 -> libm. */
EMSCRIPTEN_KEEPALIVE void blw_k_erf(int simd, float *x, int n) {
    if (simd)
        blk_erf_vec(x, (size_t)n);
    else
        for (int i = 0; i < n; i++) x[i] = erff(x[i]);
}

EMSCRIPTEN_KEEPALIVE void blw_k_exp(int simd, float *x, int n) {
    if (simd)
        blk_exp_vec(x, (size_t)n);
    else
        for (int i = 0; i < n; i++) x[i] = expf(x[i]);
}

