#!/usr/bin/env python3
"""make_qn_edges.py — put the QN quantizer's rounding edge cases into a checkpoint.

    python3 tools/make_qn_edges.py CHECKPOINT_DIR

Rewrites, in CHECKPOINT_DIR/model.safetensors (float32, e.g. a copy of
tests/fixtures/tiny-bert), the first rows of
encoder.layer.0.attention.self.query.weight with blocks of 32 that exercise
every rounding rule of fidelity.qn_rtn, for each QN width B = 8..12
(qmax = 2^(B-1) - 1):
  - ties: w / scale exactly k + 1/2 (np.rint rounds half to even);
  - scale ties: max|w| / qmax is exactly a float16 midpoint (rounds to even:
    up from an odd lower neighbour, down from an even one). Rounding the
    scale via float32 instead of from the double gives the same float16 for
    every float32 max|w| (a / qmax is never within half a float32 ulp of a
    midpoint without being on it), so these are the scale's only ties;
  - clamping: the float16 scale rounds below max|w| / qmax, so rint(max|w| /
    scale) is qmax + 1 (B = 12 only: qmax * 2^-11 must reach 1/2);
  - a zero block, a block whose scale underflows float16 to 0, one whose
    scale is a float16 subnormal.
Prints one line with how many blocks of each kind were written, so a test can
check the file holds what it is meant to. numpy only.
"""
import json
import struct
import sys

import numpy as np

NAME = "encoder.layer.0.attention.self.query.weight"


def f16(d):
    return np.asarray(d, np.float64).astype(np.float16)


def scale_tie_amax(qmax, odd):
    """float32 max|w| with max|w| / qmax exactly the midpoint above a float16 of
    odd (or even) mantissa, near 0.01."""
    lo = np.float16(0.01).view(np.uint16)
    lo = lo if (lo & 1) == odd else lo + 1
    a, b = np.array([lo, lo + 1], np.uint16).view(np.float16).astype(np.float64)
    amax = np.float32((a + b) / 2 * qmax)
    assert np.float64(amax) / qmax == (a + b) / 2  # exact: 12 + 11 bits fit float32
    return amax


def clamp_amax(qmax):
    """A float32 max|w| with rint(max|w| / f16(max|w| / qmax)) > qmax, or None."""
    a = np.linspace(1.0, 2.0, 20001, dtype=np.float32).astype(np.float64)
    s = f16(a / qmax).astype(np.float64)
    hit = np.nonzero(np.rint(a / s) > qmax)[0]
    return np.float32(a[hit[0]]) if len(hit) else None


def edge_blocks():
    blocks, kinds = [], {"ties": 0, "scale_ties": 0, "clamp": 0, "special": 0}
    for bits in range(8, 13):
        qmax = 2 ** (bits - 1) - 1
        # ties: scale exactly 2^-12 (max|w| = qmax * 2^-12 is exact), halves around it
        s = 2.0 ** -12
        b = np.array([qmax * s] + [(k + 0.5) * s * (-1) ** k for k in range(31)], np.float32)
        blocks.append(b)
        kinds["ties"] += 1
        for odd in (0, 1):
            a = scale_tie_amax(qmax, odd)
            blocks.append(np.array([a] + [a * (k + 0.25) / qmax * (-1) ** k for k in range(31)], np.float32))
            kinds["scale_ties"] += 1
        a = clamp_amax(qmax) if bits == 12 else None
        if a is not None:
            blocks.append(np.array([a, -a] + [a * k / 31 for k in range(30)], np.float32))
            kinds["clamp"] += 1
    blocks += [np.zeros(32, np.float32), np.full(32, 1e-9, np.float32), np.linspace(-1e-5, 1e-5, 32, dtype=np.float32)]
    kinds["special"] = 3
    return np.concatenate(blocks), kinds


def main():
    path = sys.argv[1].rstrip("/") + "/model.safetensors"
    with open(path, "rb") as f:
        raw = bytearray(f.read())
    n = struct.unpack("<Q", raw[:8])[0]
    info = json.loads(raw[8:8 + n])[NAME]
    assert info["dtype"] == "F32", f"{NAME} is {info['dtype']}, expected F32"
    vals, kinds = edge_blocks()
    start = 8 + n + info["data_offsets"][0]
    assert start + 4 * len(vals) <= 8 + n + info["data_offsets"][1], "tensor too small for the edge blocks"
    raw[start:start + 4 * len(vals)] = vals.astype("<f4").tobytes()
    with open(path, "wb") as f:
        f.write(raw)
    print(json.dumps(kinds))


if __name__ == "__main__":
    main()
