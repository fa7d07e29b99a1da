"""fidelity.py — numpy BERT forward, attention fidelity figures and GPTQ rounding.

Used by tools/convert.py (error-compensating q8 rounding from calibration
activations; the fidelity.* figures stored in every bundle) and by
tools/fidelity_sim.py (the experiments behind the choice of the default
bundle). numpy only, so `make models` needs no torch.

forward(W, cfg, ids, type_ids, dtype, capture)
    The BertModel forward pass (eager attention, exact erf GELU) on the
    dequantized weights W (dict of HF names without the "bert." prefix).
    Returns the attention probabilities [L][H][T][T]. With capture=dict, the
    input of every projection is appended to capture[weight name] (the rows
    GPTQ needs).
attention_figures(ref, got)
    max |Δ|, mean |Δ| and the share of rows whose argmax key agrees.
gptq_q8(w, hessian, block)
    int8 blocks of `block` along the input dim (the bundle's Q8 layout), each
    column rounded in turn and its rounding error spread onto the columns not
    yet rounded through the inverse Hessian of the layer's inputs (Frantar et
    al. 2022, "GPTQ"), in float64. Deterministic: no random numbers, fixed
    column order, Hessians rounded to float32 before use.
gptq_qn(w, hessian, bits, block), qn_rtn(w, bits, block)
    The same into the QN layouts (q8h, q9..q12: 8..12-bit integers, float16
    block scales); qn_pack / qn_unpack write and read their bytes (src/format/bundle.h).
qn_fixed, gptq_qn_fixed, qn_level_scales, qn_with_scales, tensor_step,
embed_step, hot_rows
    Other choices of QN block scales (one step per tensor, finer rows), used
    only by tools/fidelity_sim.py's experiments (docs/fidelity.md).
"""
import json
import math

import numpy as np

_ERFC = (-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806, 0.27886807, -1.13520398, 1.48851587,
         -0.82215223, 0.17087277)


def erf(x):
    """erf by the classic Chebyshev-fitted erfc (relative error < 1.2e-7), vectorized."""
    z = np.abs(x)
    t = 1.0 / (1.0 + 0.5 * z)
    poly = _ERFC[-1]
    for c in reversed(_ERFC[:-1]):
        poly = c + t * poly
    r = 1.0 - t * np.exp(-z * z + poly)
    return np.where(x >= 0, r, -r)


def gelu(x, act):
    if act == "gelu":
        return (0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))).astype(x.dtype)
    if act == "gelu_tanh":
        return (0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))).astype(x.dtype)
    return np.maximum(x, 0)


def layer_norm(x, g, b, eps):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * g + b


def forward(W, cfg, ids, type_ids, dtype=np.float32, capture=None):
    L, nh, Hd = cfg["n_layers"], cfg["n_heads"], cfg["hidden"]
    d = Hd // nh
    eps = cfg["ln_eps"]
    w = lambda n: W[n].astype(dtype, copy=False)  # noqa: E731
    ids = np.asarray(ids)
    T = len(ids)
    x = w("embeddings.word_embeddings.weight")[ids] + w("embeddings.position_embeddings.weight")[:T] \
        + w("embeddings.token_type_embeddings.weight")[np.asarray(type_ids)]
    x = layer_norm(x, w("embeddings.LayerNorm.weight"), w("embeddings.LayerNorm.bias"), eps)

    def lin(name, inp):
        if capture is not None:
            capture.setdefault(name + ".weight", []).append(inp)
        return inp @ w(name + ".weight").T + w(name + ".bias")

    attns = []
    for l in range(L):
        p = f"encoder.layer.{l}."
        q = lin(p + "attention.self.query", x).reshape(T, nh, d).transpose(1, 0, 2)
        k = lin(p + "attention.self.key", x).reshape(T, nh, d).transpose(1, 0, 2)
        v = lin(p + "attention.self.value", x).reshape(T, nh, d).transpose(1, 0, 2)
        s = q @ k.transpose(0, 2, 1) / dtype(math.sqrt(d))
        s = s - s.max(-1, keepdims=True)
        e = np.exp(s)
        a = e / e.sum(-1, keepdims=True)
        attns.append(a)
        ctx = (a @ v).transpose(1, 0, 2).reshape(T, Hd)
        x = layer_norm(x + lin(p + "attention.output.dense", ctx), w(p + "attention.output.LayerNorm.weight"),
                       w(p + "attention.output.LayerNorm.bias"), eps)
        h = gelu(lin(p + "intermediate.dense", x), cfg["activation"])
        x = layer_norm(x + lin(p + "output.dense", h), w(p + "output.LayerNorm.weight"),
                       w(p + "output.LayerNorm.bias"), eps)
    return np.stack(attns)


def attention_figures(ref, got):
    """(max |Δ|, mean |Δ|, row-argmax agreement) of two [L][H][T][T] arrays."""
    diff = np.abs(ref.astype(np.float64) - got)
    agree = (ref.argmax(-1) == got.argmax(-1)).mean()
    return float(diff.max()), float(diff.mean()), float(agree)


def load_corpus(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


# ------------------------------------------------------------- quantizers

def q8_rtn(w, block=32):
    """Round to nearest, scale = max|w| / 127 per block (convert.py's classic q8)."""
    r = w.reshape(-1, block).astype(np.float32)
    scale = (np.abs(r).max(axis=1) / 127.0).astype(np.float32)
    inv = np.where(scale > 0, 1.0 / np.where(scale > 0, scale, 1), 0).astype(np.float32)
    q = np.clip(np.rint(r * inv[:, None]), -127, 127).astype(np.int8)
    return q.reshape(w.shape), scale.reshape(w.shape[0], -1)


def q8_dequant(q, scale, block=32):
    R, K = q.shape
    return (q.reshape(R, K // block, block).astype(np.float32) * scale[:, :, None]).reshape(R, K)


def hessian(xs):
    """X^T X / n (float64) of the captured inputs, rounded to float32 so that
    last-bit differences of another machine's BLAS do not change the rounding."""
    X = np.concatenate(xs).astype(np.float64)
    h = X.T @ X / X.shape[0]
    return h.astype(np.float32).astype(np.float64)


def _gptq_inputs(w, h):
    """float64 copies of w [R][K] and h [K][K]; inputs that never fired (zero
    diagonal) get H = 1 and zero weights, so they cost nothing."""
    W = np.array(w, dtype=np.float64)
    H = np.array(h, dtype=np.float64)
    dead = np.diag(H) == 0
    H[dead, dead] = 1.0
    W[:, dead] = 0.0
    return W, H


def _gptq_sweep(W, Hinv, q, col_scale, out_col, lazy=128, qmax=127):
    """GPTQ's column sweep, shared by every variant: quantize column i of W
    (float64 [R][K], updated in place) with the scales col_scale(i, Wb, j)
    returns (float64 [R]; Wb is the current lazy block, j = i - its start),
    write it to q[:, out_col(i)], and spread its rounding error over the
    columns still to come through the upper Cholesky factor Hinv of H^-1.
    Integers are clamped to [-qmax, qmax]; np.rint rounds half to even."""
    K = W.shape[1]
    for b0 in range(0, K, lazy):
        b1 = min(b0 + lazy, K)
        Wb = W[:, b0:b1].copy()
        Err = np.zeros_like(Wb)
        for j in range(b1 - b0):
            i = b0 + j
            s = col_scale(i, Wb, j)
            col = Wb[:, j]
            qi = np.clip(np.rint(np.divide(col, s, out=np.zeros_like(col), where=s > 0)), -qmax, qmax)
            q[:, out_col(i)] = qi.astype(q.dtype)
            e = (col - qi * s) / Hinv[i, i]
            Wb[:, j:] -= np.outer(e, Hinv[i, i:b1])
            Err[:, j] = e
        W[:, b1:] -= Err @ Hinv[b0:b1, b1:]


def gptq_q8_actorder(w, h, block=32, damp=0.01):
    """GPTQ with columns taken in decreasing order of H's diagonal (the inputs
    with the largest energy first) and static block scales: each Q8 block's
    scale is fixed beforehand from the original weights (max|w| / 127, with
    room for GPTQ's updates: clamped at +-127)."""
    W, H = _gptq_inputs(w, h)
    R, K = W.shape
    scale = (np.abs(np.asarray(w, np.float32)).reshape(R, K // block, block).max(axis=2) / 127.0).astype(np.float32)
    perm = np.argsort(-np.diag(H), kind="stable")
    H = H[perm][:, perm]
    W = W[:, perm]
    H += np.eye(K) * (damp * np.mean(np.diag(H)))
    Hinv = np.linalg.cholesky(np.linalg.inv(H)).T
    s_cols = scale.astype(np.float64)[:, perm // block]  # [R][K] scale of each permuted column
    q = np.zeros((R, K), dtype=np.int8)
    _gptq_sweep(W, Hinv, q, lambda i, Wb, j: s_cols[:, i], lambda i: perm[i])
    return q, scale


def gptq_q8(w, h, block=32, damp=0.01, lazy=128):
    """GPTQ into the Q8 layout. w [R][K] float, h [K][K]. Returns (q int8 [R][K], scale f32 [R][K/block])."""
    return _gptq_blocks(w, h, 127, np.float32, np.int8, block, damp, lazy)


def gptq_qn(w, h, bits, block=32, damp=0.01, lazy=128):
    """GPTQ into the QN layout (bits 9..12): integers in [-(2^(bits-1)-1),
    2^(bits-1)-1], one float16 scale per block. Returns (q int16 [R][K],
    scale f16 [R][K/block])."""
    return _gptq_blocks(w, h, 2 ** (bits - 1) - 1, np.float16, np.int16, block, damp, lazy)


def _gptq_blocks(w, h, qmax, scale_dtype, q_dtype, block, damp, lazy):
    """GPTQ with per-block scales: each block's scale is max|w| / qmax of the
    block's weights as already updated by the sweep, in float64, rounded to
    scale_dtype (float32 or float16, round to nearest even); the integers are
    chosen with that rounded scale."""
    W, H = _gptq_inputs(w, h)
    R, K = W.shape
    H += np.eye(K) * (damp * np.mean(np.diag(H)))
    # Upper Cholesky factor of H^-1: row i holds how column i's error spreads onward.
    Hinv = np.linalg.cholesky(np.linalg.inv(H)).T
    assert K % block == 0 and lazy % block == 0
    q = np.zeros((R, K), dtype=q_dtype)
    scale = np.zeros((R, K // block), dtype=scale_dtype)

    def block_scale(i, Wb, j):
        if i % block == 0:  # this block's scale from the already-updated weights
            scale[:, i // block] = (np.abs(Wb[:, j:j + block]).max(axis=1) / float(qmax)).astype(scale_dtype)
        return scale[:, i // block].astype(np.float64)

    _gptq_sweep(W, Hinv, q, block_scale, lambda i: i, lazy, qmax)
    return q, scale


def qn_rtn_dequant(w, bits, block=32):
    """Round to nearest with `bits`-bit symmetric integers (scale = max|w| /
    (2^(bits-1) - 1) per block of 32), decoded back to float32. For bits <= 12
    the products still fit the q8 kernels' int16 panels and int32 block sums
    (|x| <= 32767 from the int16 activations, 32 products per block: 2^15 *
    2047 * 32 < 2^31), so such weights would run at q8 speed; only storage
    and download grow."""
    qmax = 2 ** (bits - 1) - 1
    r = w.reshape(-1, block).astype(np.float32)
    scale = (np.abs(r).max(axis=1) / qmax).astype(np.float32)
    inv = np.where(scale > 0, 1.0 / np.where(scale > 0, scale, 1), 0).astype(np.float32)
    q = np.clip(np.rint(r * inv[:, None]), -qmax, qmax)
    return (q * scale[:, None]).reshape(w.shape).astype(np.float32)


def qk_embed(w, bits, block):
    """Symmetric `bits`-bit integers in blocks of `block` along the row, one
    float16 scale per block (scale = max|w| / (2^(bits-1) - 1))."""
    qmax = 2 ** (bits - 1) - 1
    r = w.reshape(-1, block).astype(np.float32)
    scale = (np.abs(r).max(axis=1) / qmax).astype(np.float16)
    s32 = scale.astype(np.float32)
    inv = np.where(s32 > 0, 1.0 / np.where(s32 > 0, s32, 1), 0).astype(np.float32)
    q = np.clip(np.rint(r * inv[:, None]), -qmax, qmax).astype(np.int8)
    return q.reshape(w.shape), scale.reshape(w.shape[0], -1)


def qk_embed_dequant(q, scale, bits, block):
    R, K = q.shape
    return (q.reshape(R, K // block, block).astype(np.float32) * scale.astype(np.float32)[:, :, None]).reshape(R, K)


def qk_embed_nbytes(shape, bits, block):
    n = int(np.prod(shape))
    return n * bits // 8 + n // block * 2


def qn_scale(amax, qmax):
    """A QN block scale: max|w| / qmax (float64), rounded to float16 (round to nearest even)."""
    return (np.asarray(amax, np.float64) / float(qmax)).astype(np.float16)


def qn_rtn(w, bits, block=32):
    """Round to nearest into the QN layout (bits 8..12): per block of `block`
    along the row, scale = qn_scale(max|w|, qmax), qmax = 2^(bits-1) - 1;
    q = rint(w / scale) in float64 (np.rint: half to even), clamped to
    [-qmax, qmax] (the float16 scale may round below max|w| / qmax); a zero
    scale gives q = 0. Returns (q int16 [R][K], scale f16 [R][K/block])."""
    qmax = 2 ** (bits - 1) - 1
    r = np.asarray(w, np.float32).reshape(-1, block).astype(np.float64)
    scale = qn_scale(np.abs(r).max(axis=1), qmax)
    s = scale.astype(np.float64)[:, None]
    q = np.clip(np.rint(np.divide(r, s, out=np.zeros_like(r), where=s > 0)), -qmax, qmax).astype(np.int16)
    return q.reshape(w.shape), scale.reshape(w.shape[0], -1)


def qn_dequant(q, scale, block=32):
    R, K = q.shape
    return (q.reshape(R, K // block, block).astype(np.float32)
            * scale.astype(np.float32)[:, :, None]).reshape(R, K)


def qn_pack(q, scale, bits):
    """QN bytes (src/format/bundle.h): the high plane int8 q >> (bits-8) (arithmetic
    shift: floor), then the low plane of the bits-8 low bits of every element
    as one little-endian bit stream (element n at bits n*(bits-8) ...), then
    the low bytes and then the high bytes of the float16 scales."""
    e = bits - 8
    q = np.asarray(q, np.int16).reshape(-1)
    out = (q >> e).astype(np.int8).tobytes()
    if e:
        low = (q & ((1 << e) - 1)).astype(np.uint8)
        bitsarr = ((low[:, None] >> np.arange(e, dtype=np.uint8)) & 1).astype(np.uint8)
        out += np.packbits(bitsarr.reshape(-1), bitorder="little").tobytes()
    s = np.frombuffer(np.asarray(scale, "<f2").tobytes(), np.uint8)
    return out + s[0::2].tobytes() + s[1::2].tobytes()


def qn_unpack(data, shape, bits, block=32):
    """Inverse of qn_pack: (q int16 shape, scale f16 [R][K/block])."""
    n = int(np.prod(shape))
    e = bits - 8
    q = np.frombuffer(data, np.int8, n).astype(np.int16) * (1 << e)
    nlow = n * e // 8
    if e:
        b = np.unpackbits(np.frombuffer(data, np.uint8, nlow, n), bitorder="little").reshape(n, e)
        q = q + (b.astype(np.int16) << np.arange(e, dtype=np.int16)).sum(axis=1).astype(np.int16)
    ns = n // block
    planes = np.frombuffer(data, np.uint8, 2 * ns, n + nlow)
    s = np.empty(2 * ns, np.uint8)
    s[0::2], s[1::2] = planes[:ns], planes[ns:]
    return q.reshape(shape), s.view("<f2").reshape(shape[0], -1)


def qn_step_scales(w, bits, step, block=32):
    """QN block scales for a fixed quantization step: each block's scale is
    step[row] (float64 [R]) unless max|w| of the block needs a larger one to
    fit [-qmax, qmax] (then max|w| / qmax), rounded to float16. With one step
    for a whole tensor the rounding error is the same everywhere (no block
    pays for its largest element) and the scale planes repeat, so gzip
    stores them almost for free; the integers then take as many bits as
    their spread needs, which gzip's Huffman codes of the high plane follow."""
    qmax = 2 ** (bits - 1) - 1
    R, K = w.shape
    bmax = np.abs(np.asarray(w, np.float32)).reshape(R, K // block, block).max(axis=2).astype(np.float64)
    s = np.maximum(np.asarray(step, np.float64)[:, None], bmax / float(qmax))
    s16 = s.astype(np.float16)
    # float16 rounding may land below max|w| / qmax: step up one ulp there (never overflow: clamped anyway)
    low = s16.astype(np.float64) * qmax < bmax
    s16[low] = np.nextafter(s16[low], np.float16(np.inf))
    return s16


def qn_fixed(w, bits, step, block=32):
    """Round to nearest with the scales of qn_step_scales. Returns (q int16, scale f16)."""
    qmax = 2 ** (bits - 1) - 1
    scale = qn_step_scales(w, bits, step, block)
    r = np.asarray(w, np.float32).reshape(-1, block).astype(np.float64)
    sc = scale.reshape(-1).astype(np.float64)[:, None]
    q = np.clip(np.rint(np.divide(r, sc, out=np.zeros_like(r), where=sc > 0)), -qmax, qmax).astype(np.int16)
    return q.reshape(w.shape), scale


def gptq_qn_fixed(w, h, bits, step, block=32, damp=0.01, lazy=128):
    """GPTQ into QN with the static scales of qn_step_scales (fixed before
    the sweep from the original weights; GPTQ's updates are clamped)."""
    W, H = _gptq_inputs(w, h)
    R, K = W.shape
    scale = qn_step_scales(w, bits, step, block)
    H += np.eye(K) * (damp * np.mean(np.diag(H)))
    Hinv = np.linalg.cholesky(np.linalg.inv(H)).T
    s_cols = scale.astype(np.float64)[:, np.arange(K) // block]
    q = np.zeros((R, K), dtype=np.int16)
    _gptq_sweep(W, Hinv, q, lambda i, Wb, j: s_cols[:, i], lambda i: i, lazy, 2 ** (bits - 1) - 1)
    return q, scale


def tensor_step(w, ratio):
    """One quantization step for every row of w: RMS(w) / ratio (float64 [R])."""
    w64 = np.asarray(w, np.float64)
    return np.full(w64.shape[0], np.sqrt(np.mean(w64 * w64)) / float(ratio))


def embed_step(w, ratio, hot):
    """Steps for a lookup table: the median row RMS / ratio for every row,
    except the `hot` rows of largest L2 norm (ties: lower row first), which
    get step 0, i.e. the finest scale their blocks fit (max|w| / qmax). Rows
    of large norm are the frequent and special tokens ([CLS], [SEP],
    punctuation) that attention heads gather on, where an error moves the
    most attention."""
    w64 = np.asarray(w, np.float64)
    step = np.full(w64.shape[0], np.median(np.sqrt(np.mean(w64 * w64, axis=1))) / float(ratio))
    if hot:
        step[np.argsort(-np.sqrt(np.sum(w64 * w64, axis=1)), kind="stable")[:hot]] = 0.0
    return step


def qn_level_scales(w, bits, levels, block=32):
    """QN block scales max|w| / levels[row] (levels <= qmax: a row with fewer
    levels is stored coarser), rounded to float16 and stepped up one ulp where
    the rounding fell below max|w| / qmax."""
    qmax = 2 ** (bits - 1) - 1
    R, K = w.shape
    bmax = np.abs(np.asarray(w, np.float32)).reshape(R, K // block, block).max(axis=2).astype(np.float64)
    s16 = (bmax / np.asarray(levels, np.float64)[:, None]).astype(np.float16)
    low = s16.astype(np.float64) * qmax < bmax
    s16[low] = np.nextafter(s16[low], np.float16(np.inf))
    return s16


def qn_with_scales(w, bits, scale, block=32):
    """Round to nearest with given float16 block scales: q = rint(w / scale)
    in float64 (half to even), clamped to [-qmax, qmax]; zero scale: q = 0."""
    qmax = 2 ** (bits - 1) - 1
    r = np.asarray(w, np.float32).reshape(-1, block).astype(np.float64)
    sc = np.asarray(scale).reshape(-1).astype(np.float64)[:, None]
    q = np.clip(np.rint(np.divide(r, sc, out=np.zeros_like(r), where=sc > 0)), -qmax, qmax).astype(np.int16)
    return q.reshape(w.shape)


def hot_rows(w, hot):
    """The `hot` rows of largest L2 norm (float64; ties: lower row first)."""
    w64 = np.asarray(w, np.float64)
    return np.argsort(-np.sqrt(np.sum(w64 * w64, axis=1)), kind="stable")[:hot]
