#!/usr/bin/env python3
"""Hostile-but-valid bundles for tests/limits.test.mjs (issue 23, items 1 and 7),
written with the converter's own bundle writer (tools/convert.py) into OUT_DIR:

  wide.blb        33 layers x 128 heads, hidden 128 (d = 1), max_positions 512,
                  zero q8 weights (~2.6 MB): every count within the loader's
                  limits, yet one forward of 300+ tokens keeps 33*128*512*512*4
                  = 4,429,185,024 bytes of attention, which wraps to 134,217,728
                  in 32-bit size_t (wasm32). Zero weights make every attention
                  row uniform (1/T), a reference that needs no other engine.
  longpiece.blb   a vocabulary with a 4,096-byte entry (the tokenizer's longest),
                  max_chars_per_word = MAX_CHARS (the loader's cap), no
                  normalization: the WordPiece worst case.
  longpiece-over.blb  the same with max_chars_per_word = MAX_CHARS + 1 (must be refused).

  python3 tests/lib/limit_bundles.py OUT_DIR MAX_CHARS
Needs numpy only.
"""
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import convert  # noqa: E402

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
PROV = {"source.name": "test/limits", "source.license": "MIT", "source.sha256": "0" * 64,
        "converter.version": convert.CONVERTER_VERSION, "weights.dtype": "q8"}
# U+1D41A MATHEMATICAL BOLD SMALL A: a letter of 4 UTF-8 bytes, so a word of
# MAX_CHARS of them is ~4 KB, every candidate piece within the longest entry.
BOLD_A = "\U0001D41A"


def zero_bundle(cfg, tok):
    tensors = []
    for name, shape, kind in convert.canonical_names(cfg):
        w = np.zeros(shape, np.float32)
        if name.endswith("LayerNorm.weight"):
            w[:] = 1.0
        data, _ = convert.encode(w, "q8" if kind else "f32")
        tensors.append((name, convert.DTYPES["q8" if kind else "f32"], shape, data))
    return convert.build_bundle(cfg, tok, tensors, PROV)


def tok_opts(vocab, max_chars, normalize):
    return {"vocab": vocab, "lowercase": normalize, "strip_accents": normalize, "chinese_chars": normalize,
            "max_chars_per_word": max_chars, "unk_id": 1, "cls_id": 2, "sep_id": 3, "pad_id": 0, "mask_id": 4}


def main():
    out, max_chars = sys.argv[1], int(sys.argv[2])
    os.makedirs(out, exist_ok=True)
    letters = [chr(c) for c in range(ord("a"), ord("z") + 1)]
    vocab = SPECIALS + letters + ["##" + c for c in letters]
    cfg = {"n_layers": 33, "n_heads": 128, "hidden": 128, "intermediate": 32, "max_positions": 512,
           "type_vocab_size": 2, "vocab_size": len(vocab), "ln_eps": 1e-12, "activation": "gelu"}
    files = {"wide.blb": zero_bundle(cfg, tok_opts(vocab, 100, 1))}

    vocab = SPECIALS + ["a", "##a", BOLD_A, "##" + BOLD_A, "x" * 4096]
    cfg = dict(cfg, n_layers=1, n_heads=1, hidden=32, intermediate=32, max_positions=8192, vocab_size=len(vocab))
    files["longpiece.blb"] = zero_bundle(cfg, tok_opts(vocab, max_chars, 0))
    files["longpiece-over.blb"] = zero_bundle(cfg, tok_opts(vocab, max_chars + 1, 0))
    for name, data in files.items():
        tmp = os.path.join(out, name + ".tmp")
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, os.path.join(out, name))


if __name__ == "__main__":
    main()
