/* kernels.h — internal numeric kernels of the encoder (not public API).
 *
 * Every kernel has a scalar reference (name ends in _scalar) that is always
 * compiled. When built with SIMD (BLK_SIMD: wasm SIMD128, -msimd128; or
 * x86-64 SSE4.1, -msse4.1, through src/kernels/simd_x86.h) a vector version sits
 * beside it and the un-suffixed name selects it at compile time; otherwise
 * the un-suffixed name is the scalar reference. On x86-64 the hottest
 * micro-kernels also have AVX2+FMA versions chosen at run time
 * (blk_simd_name says which path runs).
 *
 * Files: kernels.c (dispatch), kernels_pack.c (packing), kernels_ref.c (the scalar
 * references), kernels_simd128.c (SIMD128, and SSE4.1 through simd_x86.h),
 * kernels_x86.c (AVX2+FMA), kernels_impl.h (what they share).
 *
 * Weight matrices follow torch Linear: W[n][k], n = output, k = input.
 * A blk_weight wraps the bundle bytes (read by the scalar path) and, for the
 * SIMD path, a copy re-laid-out into panels once at setup time (blk_weight_pack)
 * so the forward pass never converts weights.
 */
#ifndef BL_KERNELS_H
#define BL_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#if defined(__wasm_simd128__) || (defined(__x86_64__) && defined(__SSE4_1__))
#define BLK_SIMD 1
#else
#define BLK_SIMD 0
#endif

#define BL_PANEL 8 /* output columns per packed panel (SIMD layouts) */
/* The most a scale group of int16 panel weights may sum to in |w'|: with
 * 15-bit activations ((2^31 - 1) / 16383 = 131080.0) no int32 sum can
 * overflow (kernels_pack.c blk_weight_pack, model/backward_dy.c's W^T). */
#define BLK_QG_L1 131072.0

typedef struct blk_weight {
    int32_t dtype;        /* bl_dtype of data                                   */
    int32_t n, k;         /* rows (outputs) x columns (inputs)                  */
    const uint8_t *data;  /* bundle bytes: f32/f16 [n][k]; q8 int8 [n][k] then
                             f32 scale [n][k/32]; q4 packed [n][k/2] then scale;
                             q8h..q12: the QN planes of src/format/bundle.h          */
    /* SIMD layout (NULL in scalar builds), owned, built by blk_weight_pack:
     *   f32/f16 -> pf[n_panels][k][8]          floats, zero-padded columns
     *   q8/q4/QN -> pq[n_panels][k/2][8][2]    int16 pairs (k even, k odd)
     *              ps[n_panels][n_groups][8]   f32 scales, one per row and
     *                                          group of qg 32-blocks (the last
     *                                          group may be shorter)         */
    float *pf;
    int16_t *pq;
    float *ps;
    int32_t qg; /* 32-blocks per scale group of pq/ps (1: the bundle's scales) */
    /* q8 in panels (blk_q8_panels_in_place: data itself re-laid out, n % 8 == 0),
     * borrowed from data, never a copy; pq/ps stay NULL:
     *   pq8 = data      int8 [n/8][k/2][8][2]   the bundle's integers
     *   ps8 = data+n*k  f32  [n/8][k/32][8]     the bundle's block scales */
    const int8_t *pq8;
    const float *ps8;
    /* and, built by blk_weight_pack where it pays (kernels_pack.c "q8 panels on
     * shared scales"), owned: one scale per row and group of qg blocks,
     *   gs [n/8][n_groups][8]  f32 s'; NULL: the kernels use ps8 alone */
    float *gs;
} blk_weight;

/* Wrap bundle bytes; checks n, k > 0, a known dtype and k % 32 == 0 for the
 * integer dtypes. 0 ok / -1. */
int blk_weight_init(blk_weight *w, int32_t dtype, int32_t n, int32_t k, const uint8_t *data);
/* Build the SIMD layout (no-op in scalar builds; for q8 in panels only the
 * shared scales gs). 0 ok / -1 out of memory. */
int blk_weight_pack(blk_weight *w);

/* A q8 matrix [n][k] (bundle layout: int8 [n][k], then f32 scales [n][k/32])
 * re-laid out in place into panels: int8 [n/8][k/2][8][2], then scales
 * [n/8][k/32][8] (the same bytes, one panel at a time through an 8-row
 * buffer). n % 8 == 0, k % 32 == 0. 0 ok / -1 (bad shape, out of memory:
 * data unchanged). blk_weight_use_panels then reads it in that layout:
 * every reader (blk_weight_row, the scalar references, the SIMD kernels,
 * which widen the int8 pairs as they load them) takes it, and the engine
 * keeps no second copy of the weights. */
int blk_q8_panels_in_place(uint8_t *data, int32_t n, int32_t k);
/* Mark an initialised q8 weight as laid out by blk_q8_panels_in_place. 0 / -1. */
int blk_weight_use_panels(blk_weight *w);
/* blk_weight_init on a bundle tensor's bytes, in the layout they have now
 * (bl_tensor.layout; panels only for the whole tensor [n][k]). 0 / -1. */
struct bl_tensor;
int blk_weight_of_tensor(blk_weight *w, const struct bl_tensor *t, int32_t n, int32_t k);
void blk_weight_free(blk_weight *w);
/* Dequantize row r of w into out[k] (any dtype). */
void blk_weight_row(const blk_weight *w, int32_t r, float *out);

/* W^T of a q8 weight W [n][k] (n % 32 == 0), laid out as blk_weight_pack
 * lays out an integer weight [k][n] whose scale groups are single 32-blocks
 * (qg = 1), for the backward pass's products dx = dy W:
 *   pq int16 [k/8][n/2][8][2]  pq[p][i/2][c][i%2] = round(W[i][8p + c] / s)
 *   ps f32   [k/8][n/32][8]    s of column 8p + c, rows 32b .. 32b + 31
 * s is the smallest scale that keeps the group's sum of |round(W / s)|
 * within BLK_QG_L1 (no int32 sum of the integer kernels can overflow) and
 * each value within 32767; W is read in either q8 layout (bundle rows or
 * pq8 panels). The SIMD version equals the scalar one bit for bit. */
void blk_weight_t16(const blk_weight *w, int16_t *pq, float *ps);
void blk_weight_t16_scalar(const blk_weight *w, int16_t *pq, float *ps);

/* Scratch floats blk_matmul needs for T rows of width k (activation quantization,
 * a dequantized weight row for the scalar path). */
size_t blk_matmul_scratch_floats(int32_t T, int32_t k);

/* y[T][n] = x[T][k] * W^T + bias (bias may be NULL). Rows of x and y are
 * contiguous (stride k and n). */
void blk_matmul(float *y, const float *x, int32_t T, const blk_weight *w, const float *bias, float *scratch);
void blk_matmul_scalar(float *y, const float *x, int32_t T, const blk_weight *w, const float *bias, float *scratch);
/* blk_matmul then blk_activate(y, T * n, act) (act < 0: none); the SIMD path
 * applies the activation to each tile in registers before storing it. */
void blk_matmul_act(float *y, const float *x, int32_t T, const blk_weight *w, const float *bias, int32_t act,
                   float *scratch);

/* n products of the same x with weights of the same k (e.g. Q, K and V):
 * y[i] = act(x * w[i]^T + bias[i]) (bias[i] may be NULL, act < 0: none).
 * The SIMD path packs or quantizes x once for all of them. */
void blk_matmul_shared(int n, float *const *y, const float *x, int32_t T, const blk_weight *const *w,
                      const float *const *bias, int32_t act, float *scratch);

/* Activation x activation product used by attention:
 *   y[i*ldy + n] = sum_k x[i*ldx + k] * b[n*bn + k*bk]     i < T, n < N, k < K
 * (b is addressed with two strides, so K_h and V_h^T are read in place).
 * scratch: blk_matmul_nt_scratch_floats(N, K) floats. */
size_t blk_matmul_nt_scratch_floats(int32_t N, int32_t K);
void blk_matmul_nt(float *y, int32_t ldy, const float *x, int32_t ldx, int32_t T, const float *b, int32_t bn,
                  int32_t bk, int32_t N, int32_t K, float *scratch);
/* The same product with x and b quantized to 13-bit integers (SIMD builds;
 * used for the attention of quantized bundles), else blk_matmul_nt_scalar. */
void blk_matmul_nt_q(float *y, int32_t ldy, const float *x, int32_t ldx, int32_t T, const float *b, int32_t bn,
                     int32_t bk, int32_t N, int32_t K, float *scratch);
/* Whether blk_matmul_nt_q is the faster of the two here: the SIMD128
 * kernels (wasm, and x86 SSE4.1; 1.06x at 512 tokens) and AVX2 (1.03x at
 * 512, even at 128). With AVX-512 the f32 kernels are faster (AMD Zen 5,
 * all-MiniLM q8, one thread: 1.07x at 512 tokens, 1.03x at 128), so 0 there;
 * 0 in a scalar build (both are the scalar one). */
int blk_nt_q_pays(void);
void blk_matmul_nt_scalar(float *y, int32_t ldy, const float *x, int32_t ldx, int32_t T, const float *b,
                         int32_t bn, int32_t bk, int32_t N, int32_t K, float *scratch);

/* LayerNorm over each of T rows of width n, in place on x, with an optional
 * residual added first: x = LN(x + res) * g + b  (res may be NULL). */
void blk_layernorm(float *x, const float *res, int32_t T, int32_t n, const float *g, const float *b, float eps);
void blk_layernorm_scalar(float *x, const float *res, int32_t T, int32_t n, const float *g, const float *b,
                         float eps);

/* Row softmax in place of exp(scale * x): each of T rows of width n sums to 1. */
void blk_softmax(float *x, int32_t T, int32_t n, float scale);
void blk_softmax_scalar(float *x, int32_t T, int32_t n, float scale);

/* Activation in place over n values: act = bl_activation (GELU erf, GELU tanh, ReLU). */
void blk_activate(float *x, size_t n, int32_t act);
void blk_activate_scalar(float *x, size_t n, int32_t act);

/* Elementwise helpers exported for tests: erf and exp of the SIMD path applied
 * to n values (scalar builds use libm). */
void blk_erf_vec(float *x, size_t n);
void blk_exp_vec(float *x, size_t n);

/* Which kernels run: "scalar", "wasm-simd128", "sse4.1" or "avx2+fma". */
const char *blk_simd_name(void);

#endif
