/* kernel_host.c — the blw_k_* kernel entry points of src/wasm/wasm_api.c, built
 * natively, driven by tests/kernels.test.mjs --native over two FIFOs.
 *
 *   build/kernel_host REQUEST_FIFO RESPONSE_FIFO
 *
 * The test keeps its "heap" in JavaScript; every call ships the used part of
 * it here and gets it back after the kernel ran, so pointers are offsets into
 * that heap (0 = NULL). Little-endian, no padding:
 *   request   u32 fn, u32 nargs, f64 args[nargs], u64 heap_len, heap bytes
 *   response  f64 result, u64 heap_len, heap bytes
 * fn: 0 simd (result = BLK_SIMD; heap unused), 1 matmul_act, 2 matmul,
 * 3 matmul_nt, 4 layernorm, 5 softmax, 6 activate, 7 erf, 8 exp,
 * 9 simd name (written as a C string at heap offset 0), 10 qgroup, 11 matmul_panels,
 * 12 weight_t16.
 * Exits 0 at end of input, 1 on a malformed request. */
#include "../../src/kernels/kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int blw_k_matmul_act(int simd, float *y, const float *x, int T, int dtype, int n, int k, const uint8_t *wdata,
                     const float *bias, int act);
int blw_k_matmul(int simd, float *y, const float *x, int T, int dtype, int n, int k, const uint8_t *wdata,
                 const float *bias);
int blw_k_matmul_nt(int simd, float *y, int ldy, const float *x, int ldx, int T, const float *b, int bn, int bk,
                    int N, int K);
void blw_k_layernorm(int simd, float *x, const float *res, int T, int n, const float *gam, const float *beta,
                     float eps);
void blw_k_softmax(int simd, float *x, int T, int n, float scale);
void blw_k_activate(int simd, float *x, int n, int act);
void blw_k_erf(int simd, float *x, int n);
void blw_k_exp(int simd, float *x, int n);
int blw_k_qgroup(int dtype, int n, int k, const uint8_t *wdata);
int blw_k_matmul_panels(int simd, float *y, const float *x, int T, int n, int k, uint8_t *wdata, const float *bias,
                        int act, int r, float *row_out);
int blw_k_weight_t16(int simd, int n, int k, uint8_t *wdata, int panels, int16_t *pq, float *ps);
int blw_k_q8_regroup(int n, int k, uint8_t *wdata, float *gs_out);

static int rd(FILE *f, void *p, size_t n) { return fread(p, 1, n, f) == n ? 0 : -1; }

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: kernel_host REQUEST_FIFO RESPONSE_FIFO\n");
        return 2;
    }
    FILE *in = fopen(argv[1], "rb"), *out = in ? fopen(argv[2], "wb") : NULL;
    if (!in || !out) {
        perror("kernel_host");
        return 1;
    }
    uint8_t *heap = NULL;
    size_t cap = 0;
    for (;;) {
        uint32_t fn, nargs;
        double a[16];
        uint64_t len;
        if (rd(in, &fn, 4)) break; /* end of input */
        if (rd(in, &nargs, 4) || nargs > 16 || rd(in, a, nargs * 8) || rd(in, &len, 8)) return 1;
        if (len + 64 > cap) {
            free(heap);
            cap = (size_t)len + 64 > 2 * cap ? (size_t)len + 64 : 2 * cap;
            if (!(heap = aligned_alloc(64, (cap + 63) / 64 * 64))) return 1;
        }
        if (rd(in, heap, (size_t)len)) return 1;
#define I(i) ((int)a[i])
#define P(i) (a[i] != 0 ? (void *)(heap + (size_t)a[i]) : NULL)
        double r = 0;
        switch (fn) {
        case 0: r = BLK_SIMD; break;
        case 1: r = blw_k_matmul_act(I(0), P(1), P(2), I(3), I(4), I(5), I(6), P(7), P(8), I(9)); break;
        case 2: r = blw_k_matmul(I(0), P(1), P(2), I(3), I(4), I(5), I(6), P(7), P(8)); break;
        case 3: r = blw_k_matmul_nt(I(0), P(1), I(2), P(3), I(4), I(5), P(6), I(7), I(8), I(9), I(10)); break;
        case 4: blw_k_layernorm(I(0), P(1), P(2), I(3), I(4), P(5), P(6), (float)a[7]); break;
        case 5: blw_k_softmax(I(0), P(1), I(2), I(3), (float)a[4]); break;
        case 6: blw_k_activate(I(0), P(1), I(2), I(3)); break;
        case 7: blw_k_erf(I(0), P(1), I(2)); break;
        case 8: blw_k_exp(I(0), P(1), I(2)); break;
        case 9:
            if (len < 32) return 1;
            snprintf((char *)heap, 32, "%s", blk_simd_name());
            break;
        case 10: r = blw_k_qgroup(I(0), I(1), I(2), P(3)); break;
        case 11: r = blw_k_matmul_panels(I(0), P(1), P(2), I(3), I(4), I(5), P(6), P(7), I(8), I(9), P(10)); break;
        case 12: r = blw_k_weight_t16(I(0), I(1), I(2), P(3), I(4), P(5), P(6)); break;
        case 13: r = blw_k_q8_regroup(I(0), I(1), P(2), P(3)); break;
        default: return 1;
        }
#undef I
#undef P
        if (fwrite(&r, 8, 1, out) != 1 || fwrite(&len, 8, 1, out) != 1 || fwrite(heap, 1, (size_t)len, out) != len ||
            fflush(out))
            return 1;
    }
    free(heap);
    return 0;
}
