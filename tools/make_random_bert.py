#!/usr/bin/env python3
"""make_random_bert.py — deterministic random BERT checkpoints of real model shapes.

    python3 tools/make_random_bert.py OUT_ROOT [--shape NAME ...] [--force]

Writes OUT_ROOT/NAME/ as a Hugging Face BERT checkpoint folder (config.json,
model.safetensors, vocab.txt, tokenizer_config.json) for each shape below,
so the encoder can be checked against transformers on shapes for which no
real weights are at hand (bge-small: 12 x 12 x 384; bert-base: 12 x 12 x 768).
A folder that is already complete for the same shape and generator version is
left alone (--force rewrites it); editing this script regenerates it.

numpy only (it runs in CI, where there is no torch). The weights are
bit-for-bit reproducible on any platform: every value comes from the raw
64-bit PCG64 stream through integer arithmetic and one IEEE multiply, no
transcendental functions, so tests can compare the sha256 of the generated
model.safetensors with the one recorded next to the Hugging Face references
(tools/make_shape_fixtures.py, tests/fixtures/shapes/).

Distribution: each raw uint64 is split into four 16-bit integers whose sum
(Irwin-Hall, close to a normal) is centred and scaled to the tensor's standard
deviation. Query/key weights are larger than Hugging Face's 0.02 init so that
attention is peaked and varied rather than ~uniform; LayerNorm weights are
1 + noise and biases are small noise so that no term of the forward pass is
trivially zero or one.
"""
import argparse
import hashlib
import json
import os
import struct
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
# 5000 tokens: the first 5000 lines of the bert-base-uncased vocabulary
# (committed with the tiny random BERT of the encoder tests).
VOCAB = os.path.join(ROOT, "tests", "fixtures", "tiny-bert", "vocab.txt")

GENERATOR_VERSION = 3

SHAPES = {
    "bge-small-shape": {"layers": 12, "heads": 12, "hidden": 384, "intermediate": 1536, "seed": 384_12_12},
    "bert-base-shape": {"layers": 12, "heads": 12, "hidden": 768, "intermediate": 3072, "seed": 768_12_12},
}
VOCAB_SIZE = 5000
# Sublayer weights: standard deviation GAIN / sqrt(fan_in), the same effect at
# every width. Value/output projections and the feed-forward output stay well
# below the unit-scale residual (attention output std ~0.2, feed-forward ~0.4)
# so tokens remain distinct through 12 layers: with Hugging Face's flat 0.02,
# or gains near 1, a growing token-independent part makes the last layers'
# attention ~uniform in the wider model. The intermediate gain puts the GELU
# inputs at std ~1.5, where erf GELU is far from linear.
GAIN_VO, GAIN_INTERMEDIATE, GAIN_FF_OUT = 0.5, 1.5, 0.4
MAX_POSITIONS = 512
TYPE_VOCAB = 2

# Irwin-Hall of four uniform 16-bit integers: mean 4 * 65535 / 2, variance
# 4 * (65536^2 - 1) / 12.
_IH_MEAN2 = 4 * 65535            # twice the mean, so 2*s - _IH_MEAN2 is an exact integer
_IH_STD2 = 2.0 * ((4 * (65536.0 ** 2 - 1) / 12) ** 0.5)


def noise(bitgen, n, std):
    """n float32 values, mean 0, standard deviation std, from the raw stream."""
    raw = bitgen.random_raw(n)
    s = (raw & 0xFFFF) + ((raw >> 16) & 0xFFFF) + ((raw >> 32) & 0xFFFF) + (raw >> 48)
    centred = (2 * s.astype(np.int64) - _IH_MEAN2).astype(np.float64)  # exact
    return (centred * (std / _IH_STD2)).astype(np.float32)


def tensor_plan(shape):
    """[(name, dims, kind, std)] in file order; kind "w" = noise(std),
    "ln" = 1 + noise(std)."""
    H, I, L = shape["hidden"], shape["intermediate"], shape["layers"]
    qk_std = (4.0 / H) ** 0.5   # attention logits with a standard deviation of ~4 at layer 0

    def sub_std(fan_in, gain):
        return gain / fan_in ** 0.5

    plan = [
        ("embeddings.word_embeddings.weight", [VOCAB_SIZE, H], "w", 0.05),
        ("embeddings.position_embeddings.weight", [MAX_POSITIONS, H], "w", 0.03),
        ("embeddings.token_type_embeddings.weight", [TYPE_VOCAB, H], "w", 0.03),
        ("embeddings.LayerNorm.weight", [H], "ln", 0.1),
        ("embeddings.LayerNorm.bias", [H], "w", 0.05),
    ]
    for i in range(L):
        p = f"encoder.layer.{i}."
        plan += [
            (p + "attention.self.query.weight", [H, H], "w", qk_std),
            (p + "attention.self.query.bias", [H], "w", 0.1),
            (p + "attention.self.key.weight", [H, H], "w", qk_std),
            (p + "attention.self.key.bias", [H], "w", 0.1),
            (p + "attention.self.value.weight", [H, H], "w", sub_std(H, GAIN_VO)),
            (p + "attention.self.value.bias", [H], "w", 0.02),
            (p + "attention.output.dense.weight", [H, H], "w", sub_std(H, GAIN_VO)),
            (p + "attention.output.dense.bias", [H], "w", 0.02),
            (p + "attention.output.LayerNorm.weight", [H], "ln", 0.1),
            (p + "attention.output.LayerNorm.bias", [H], "w", 0.05),
            (p + "intermediate.dense.weight", [I, H], "w", sub_std(H, GAIN_INTERMEDIATE)),
            (p + "intermediate.dense.bias", [I], "w", 0.02),
            (p + "output.dense.weight", [H, I], "w", sub_std(I, GAIN_FF_OUT)),
            (p + "output.dense.bias", [H], "w", 0.02),
            (p + "output.LayerNorm.weight", [H], "ln", 0.1),
            (p + "output.LayerNorm.bias", [H], "w", 0.05),
        ]
    plan += [("pooler.dense.weight", [H, H], "w", 0.02), ("pooler.dense.bias", [H], "w", 0.02)]
    return plan


def config_json(shape):
    return {
        "architectures": ["BertModel"],
        "model_type": "bert",
        "hidden_act": "gelu",
        "hidden_size": shape["hidden"],
        "intermediate_size": shape["intermediate"],
        "num_attention_heads": shape["heads"],
        "num_hidden_layers": shape["layers"],
        "max_position_embeddings": MAX_POSITIONS,
        "type_vocab_size": TYPE_VOCAB,
        "vocab_size": VOCAB_SIZE,
        "layer_norm_eps": 1e-12,
        "initializer_range": 0.02,
        "hidden_dropout_prob": 0.1,
        "attention_probs_dropout_prob": 0.1,
        "position_embedding_type": "absolute",
        "pad_token_id": 0,
    }


TOKENIZER_CONFIG = {
    "tokenizer_class": "BertTokenizer",
    "do_lower_case": True,
    "tokenize_chinese_chars": True,
    "strip_accents": None,
    "model_max_length": MAX_POSITIONS,
    "unk_token": "[UNK]",
    "sep_token": "[SEP]",
    "pad_token": "[PAD]",
    "cls_token": "[CLS]",
    "mask_token": "[MASK]",
}


def write_safetensors(path, shape):
    """Stream the tensors of tensor_plan(shape) into a .safetensors file
    (8-byte little-endian header size, JSON header padded with spaces to a
    multiple of 8, raw little-endian float32 data). Returns its sha256."""
    plan = tensor_plan(shape)
    header, off = {}, 0
    for name, dims, _, _ in plan:
        n = int(np.prod(dims)) * 4
        header[name] = {"dtype": "F32", "shape": dims, "data_offsets": [off, off + n]}
        off += n
    header["__metadata__"] = {"format": "pt", "generator": f"bertlens make_random_bert {GENERATOR_VERSION}"}
    hj = json.dumps(header, separators=(",", ":")).encode()
    hj += b" " * (-len(hj) % 8)
    bitgen = np.random.PCG64(shape["seed"])
    h = hashlib.sha256()
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        for chunk in (struct.pack("<Q", len(hj)), hj):
            f.write(chunk)
            h.update(chunk)
        for name, dims, kind, std in plan:
            a = noise(bitgen, int(np.prod(dims)), std)
            if kind == "ln":
                a = (a + np.float32(1.0)).astype(np.float32)
            b = a.astype("<f4").tobytes()
            f.write(b)
            h.update(b)
    os.replace(tmp, path)
    return h.hexdigest()


def stamp_of(name, shape):
    """What a folder was generated from: any edit of this script or the vocab regenerates it."""
    def digest(path):
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    return json.dumps({"name": name, "shape": shape, "generator": GENERATOR_VERSION,
                       "script": digest(os.path.abspath(__file__)), "vocab": digest(VOCAB)}, sort_keys=True)


def make(out_root, name, force=False):
    shape = SHAPES[name]
    d = os.path.join(out_root, name)
    stamp_path = os.path.join(d, "stamp.json")
    stamp = stamp_of(name, shape)
    files = ["config.json", "model.safetensors", "vocab.txt", "tokenizer_config.json"]
    if (not force and os.path.isfile(stamp_path) and open(stamp_path).read() == stamp
            and all(os.path.isfile(os.path.join(d, f)) for f in files)):
        print(f"make_random_bert: {d} is up to date")
        return d
    os.makedirs(d, exist_ok=True)
    if os.path.exists(stamp_path):
        os.remove(stamp_path)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(config_json(shape), f, indent=2)
        f.write("\n")
    with open(os.path.join(d, "tokenizer_config.json"), "w") as f:
        json.dump(TOKENIZER_CONFIG, f, indent=2)
        f.write("\n")
    with open(VOCAB, "rb") as src, open(os.path.join(d, "vocab.txt"), "wb") as dst:
        vocab = src.read()
        if vocab.count(b"\n") != VOCAB_SIZE:
            sys.exit(f"make_random_bert: {VOCAB} does not have {VOCAB_SIZE} lines")
        dst.write(vocab)
    digest = write_safetensors(os.path.join(d, "model.safetensors"), shape)
    with open(stamp_path, "w") as f:
        f.write(stamp)
    print(f"make_random_bert: wrote {d} ({shape['layers']} layers x {shape['heads']} heads x "
          f"{shape['hidden']} hidden, intermediate {shape['intermediate']}); model.safetensors sha256 {digest}")
    return d


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out_root", help="folder receiving one checkpoint folder per shape")
    ap.add_argument("--shape", action="append", choices=sorted(SHAPES), help="only this shape (repeatable)")
    ap.add_argument("--force", action="store_true", help="rewrite even when up to date")
    a = ap.parse_args()
    for name in a.shape or list(SHAPES):
        make(a.out_root, name, a.force)


if __name__ == "__main__":
    main()
