"""src/base/dtype.h's binary16 codec (build/dtype_host) against numpy's float16.

  f16 -> f32  every one of the 65536 halves, bit for bit (NaNs: NaN, sign kept)
  f32 -> f16  round to nearest even, overflow to infinity: every 4099th bit
              pattern of float32 (1 M values, every exponent), plus the
              halfway points and edges of the half range
  f64 -> f16  numpy's float64.astype(float16) (no double rounding through
              float32): 500 k doubles spread over the half range and its edges,
              plus the halfway points of every half, and those +- one ulp

  make build/dtype_host && python3 tests/test_dtype.py
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOST = os.environ.get("BERTLENS_DTYPE_HOST", os.path.join(ROOT, "build", "dtype_host"))


def run(mode, arr, out_dtype):
    with tempfile.TemporaryDirectory() as d:
        i, o = os.path.join(d, "in"), os.path.join(d, "out")
        arr.astype(arr.dtype.newbyteorder("<")).tofile(i)
        subprocess.run([HOST, mode, i, o], check=True)
        return np.fromfile(o, dtype=np.dtype(out_dtype).newbyteorder("<"))


def same_halves(got, want, what):
    """Equal bit patterns, except that any NaN matches any NaN of the same sign."""
    gn = (got & 0x7C00 == 0x7C00) & (got & 0x3FF != 0)
    wn = (want & 0x7C00 == 0x7C00) & (want & 0x3FF != 0)
    ok = np.where(gn | wn, gn & wn & ((got ^ want) & 0x8000 == 0), got == want)
    bad = np.flatnonzero(~ok)
    assert bad.size == 0, f"{what}: {bad.size} differ, first at {bad[0]}: got {got[bad[0]]:#06x}, numpy {want[bad[0]]:#06x}"


def main():
    # f16 -> f32: exact, all of them
    h = np.arange(65536, dtype=np.uint32).astype(np.uint16)
    got = run("h2f", h, "<u4")
    want = h.view(np.float16).astype(np.float32).view(np.uint32)
    nan = np.isnan(h.view(np.float16))
    assert np.array_equal(got[~nan], want[~nan]), "f16 -> f32 differs from numpy"
    g = got[nan].view(np.float32)
    assert np.isnan(g).all() and np.array_equal(np.signbit(g), np.signbit(h[nan].view(np.float16))), "f16 NaN -> f32"

    # halfway points between neighbouring halves (and +- one ulp around them)
    fin = h.view(np.float16)[np.isfinite(h.view(np.float16))].astype(np.float64)
    fin = np.unique(fin)
    mid = (fin[:-1] + fin[1:]) / 2
    edges = np.array([0.0, -0.0, 65504.0, 65519.99, 65520.0, 65536.0, 1e300, np.inf, -np.inf, np.nan,
                      2.0 ** -24, 2.0 ** -25, 2.0 ** -26, 2.0 ** -14, 5.960464477539063e-08, 1e-300])

    # f32 -> f16
    bits = np.arange(0, 2 ** 32, 4099, dtype=np.uint64).astype(np.uint32)
    with np.errstate(over="ignore", invalid="ignore"):
        f32 = np.concatenate([bits.view(np.float32), mid.astype(np.float32), edges.astype(np.float32)])
        f32 = np.concatenate([f32, np.nextafter(f32, np.float32(np.inf)), np.nextafter(f32, np.float32(-np.inf))])
        same_halves(run("f2h", f32, "<u2"), f32.astype(np.float16).view(np.uint16), "f32 -> f16")

    # f64 -> f16
    rng = np.random.default_rng(11)
    spread = np.ldexp(rng.uniform(-1, 1, 500_000), rng.integers(-30, 18, 500_000))
    f64 = np.concatenate([spread, mid, -mid, edges])
    with np.errstate(over="ignore", invalid="ignore"):
        f64 = np.concatenate([f64, np.nextafter(f64, np.inf), np.nextafter(f64, -np.inf)])
        same_halves(run("d2h", f64, "<u2"), f64.astype(np.float16).view(np.uint16), "f64 -> f16")
    print(f"dtype codec: 65536 halves, {f32.size} floats, {f64.size} doubles as numpy {np.__version__}")


if __name__ == "__main__":
    sys.exit(main())
