#!/usr/bin/env python3
"""make_compare_fixtures.py — numpy references for comparing two runs head by head.

    python3 tools/make_compare_fixtures.py

Needs only numpy: it reads the Hugging Face attention of
tests/fixtures/ablation/ (made by make_ablation_fixtures.py with torch) and
writes tests/fixtures/compare/index.json. For each input, the unmasked run
is A and each masked run is B; for every head of the layers both hold
(first_layer .. L-1) it stores:

  js       Jensen-Shannon distance in bits, per query row, mean over rows,
           written here in its entropy form
           sqrt(H(m) - (H(p) + H(q)) / 2), m = (p + q) / 2, H in bits,
           float64 (src/analyze.c bl_head_compare sums the two KL terms
           instead: the same value by another route)
  max_abs  max |b - a|

and the same for pairs of heads of the unmasked run (layer 2 head 5 against
every head), as the heads overview's "heads like this one" asks. The tests
(tests/compare.test.mjs) feed the same HF matrices to blw_head_compare and
compare.
"""
import json
import os

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "tests", "fixtures", "ablation")
OUT = os.path.join(ROOT, "tests", "fixtures", "compare")


def entropy_bits(x):
    x = x.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(x > 0, -x * np.log2(np.where(x > 0, x, 1.0)), 0.0)
    return t.sum(axis=-1)


def js_distance(a, b):
    """a, b [..., T, T] -> [...]: mean over rows of the row JS distance."""
    a = a.astype(np.float64)
    b = b.astype(np.float64)
    m = 0.5 * (a + b)
    d = entropy_bits(m) - 0.5 * (entropy_bits(a) + entropy_bits(b))
    return np.sqrt(np.maximum(d, 0.0)).mean(axis=-1)


def main():
    index = json.load(open(os.path.join(SRC, "index.json")))
    raw = open(os.path.join(SRC, "ablation.bin"), "rb").read()

    def arr(e):
        n = int(np.prod(e["shape"]))
        return np.frombuffer(raw, dtype="<f4", count=n, offset=e["offset"]).reshape(e["shape"])

    cases = []
    by_input = {}
    for c in index["cases"]:
        by_input.setdefault(json.dumps(c["input"], sort_keys=True), []).append(c)
    for group in by_input.values():
        base = next(c for c in group if c["ablate"] is None and c["keep"] is None)
        A = arr(base["attn"])  # [L][H][T][T]
        for c in group:
            if c is base:
                continue
            first = c["first_layer"]
            B = arr(c["attn"])  # [L - first][H][T][T]
            a = A[first:]
            cases.append({
                "input": c["input"], "mask_name": c["mask_name"], "mask": c["mask"], "first_layer": first,
                "a": {"case": base["mask_name"], "attn": base["attn"]},
                "b": {"case": c["mask_name"], "attn": c["attn"]},
                "js": js_distance(a, B).round(12).tolist(),
                "max_abs": np.abs(B.astype(np.float64) - a).max(axis=(-1, -2)).round(12).tolist(),
            })
        ref = A[2, 5]
        cases.append({
            "input": base["input"], "like": [2, 5], "a": {"case": base["mask_name"], "attn": base["attn"]},
            "js": js_distance(np.broadcast_to(ref, A.shape), A).round(12).tolist(),
            "max_abs": np.abs(A.astype(np.float64) - ref).max(axis=(-1, -2)).round(12).tolist(),
        })
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "index.json"), "w") as f:
        json.dump({"source": "tests/fixtures/ablation (Hugging Face attention, fp32)", "numpy": np.__version__,
                   "cases": cases}, f, indent=1)
    print(f"wrote {len(cases)} cases to {os.path.relpath(OUT, ROOT)}/index.json")


if __name__ == "__main__":
    main()
