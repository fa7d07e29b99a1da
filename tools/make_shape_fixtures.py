#!/usr/bin/env python3
"""make_shape_fixtures.py — Hugging Face references for the random checkpoints
of real model shapes (local only: needs torch + transformers).

    HF_HUB_OFFLINE=1 python3 tools/make_shape_fixtures.py

For every shape of tools/make_random_bert.py (bge-small 12 x 12 x 384,
bert-base 12 x 12 x 768) this generates the checkpoint into build/shapes/NAME/,
loads it with transformers BertModel (eager attention, fp32) and runs three
inputs given as token ids: "short" (12 tokens), "pair" (40 tokens, two
segments) and "long" (exactly 512 tokens, two segments). It writes
tests/fixtures/shapes/index.json and one NAME.bin of little-endian arrays:

  short  attn [L][NH][T][T] (full), hidden [2][T][H] at hidden_layers, pooled [H]
  pair   attn_rows [AL][NH][R][T] at attn_layers (every layer) and rows,
         attn_argmax u16 [AL][NH][T] (every row), attn_colmean [AL][NH][T]
         (mean over all query rows), hidden_rows [3][R][H] at hidden_layers, pooled
  long   the same with attn_layers = first and last layer only

"hidden" layer 0 is the embedding output, layer L the final output; pooled is
the mean of the final hidden states over all tokens.

q8 references ("q8_*" arrays): the same model with every tensor that
tools/convert.py quantizes for --dtype q8 (word embeddings, the six projections
of each layer) replaced by convert.py's own quantize-dequantize, so they hold
only the encoder's error, not the weight quantization's (random weights with
peaked attention amplify the latter far beyond what real checkpoints show).
Stored compactly: q8_attn / q8_attn_rows as f16, q8_argmax_diff u16 [n][2]
(flat row index, argmax) where the argmax differs from attn_argmax, q8_pooled.

The index also records the sha256 of model.safetensors, so a test can prove
that the checkpoint it regenerated (numpy only) is the one these references
were computed from, and per case how peaked the reference attention is (mean
max probability, mean entropy vs the uniform log T).
"""
import json
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import convert  # noqa: E402
import make_random_bert  # noqa: E402

OUT = os.path.join(ROOT, "tests", "fixtures", "shapes")
BUILD = os.path.join(ROOT, "build", "shapes")
CLS, SEP = 101, 102
FIRST_WORD_ID = 999  # below: [PAD], [unused*], specials


def make_inputs():
    """Token ids + type ids of the three cases (fixed seed)."""
    rng = np.random.default_rng(20240512)
    words = lambda n: [int(x) for x in rng.integers(FIRST_WORD_ID, make_random_bert.VOCAB_SIZE, n)]

    def pair(na, nb):
        ids = [CLS] + words(na) + [SEP] + words(nb) + [SEP]
        return ids, [0] * (na + 2) + [1] * (nb + 1)

    short = [CLS] + words(10) + [SEP]
    cases = [
        {"name": "short", "kind": "full", "ids": short, "type_ids": [0] * len(short)},
        dict(zip(("ids", "type_ids"), pair(21, 16)), name="pair", kind="rows"),
        dict(zip(("ids", "type_ids"), pair(300, 209)), name="long", kind="rows"),
    ]
    # a few repeated words so that some heads can attend to copies
    for c in cases:
        ids = c["ids"]
        for k in range(2, len(ids) - 1, 7):
            if ids[k] not in (CLS, SEP) and ids[k - 1] not in (CLS, SEP):
                ids[k] = ids[k - 1]
    assert [len(c["ids"]) for c in cases] == [12, 40, 512]
    return cases


class Bin:
    def __init__(self):
        self.parts, self.off = [], 0

    def add(self, arr, dtype="<f4"):
        a = np.ascontiguousarray(np.asarray(arr), dtype=dtype)
        entry = {"offset": self.off, "shape": list(a.shape), "dtype": {"<f4": "f32", "<f2": "f16", "<u2": "u16"}[dtype]}
        b = a.tobytes()
        b += b"\0" * (-len(b) % 4)
        self.parts.append(b)
        self.off += len(b)
        return entry


def peakedness(att, T):
    """att: [L][NH][T][T] -> (mean max probability, mean entropy / log T)."""
    p = att.astype(np.float64)
    ent = -(p * np.log(np.clip(p, 1e-30, None))).sum(-1)
    return float(p.max(-1).mean()), float(ent.mean() / np.log(T))


def q8_dequantized(model, cfg):
    """A copy of model whose weights are what a q8 bundle holds."""
    import copy
    q = copy.deepcopy(model)
    sd = q.state_dict()
    kinds = {n: k for n, _, k in convert.canonical_names(cfg)}
    n = 0
    with torch.no_grad():
        for name, t in sd.items():
            if kinds.get(name) in ("embed", "linear"):
                _, deq = convert.encode(t.numpy(), "q8")
                t.copy_(torch.from_numpy(np.ascontiguousarray(deq, dtype=np.float32)))
                n += 1
    assert n == 1 + 6 * cfg["n_layers"], n
    return q


def forward(model, ids, types):
    T = len(ids)
    with torch.no_grad():
        o = model(input_ids=torch.tensor([ids]), token_type_ids=torch.tensor([types]),
                  attention_mask=torch.ones(1, T, dtype=torch.long),
                  output_attentions=True, output_hidden_states=True)
    att = np.stack([a[0].numpy() for a in o.attentions])          # [L][NH][T][T]
    hid = np.stack([h[0].numpy() for h in o.hidden_states])       # [L+1][T][H]
    return att, hid, hid[-1].astype(np.float64).mean(0)


def main():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from transformers import BertModel

    torch.manual_seed(0)
    os.makedirs(OUT, exist_ok=True)
    cases = make_inputs()
    index = {"generator": "tools/make_shape_fixtures.py", "random_bert_version": make_random_bert.GENERATOR_VERSION,
             "shapes": {}}
    for name, shape in make_random_bert.SHAPES.items():
        if name == "bert-large-shape":  # memory measurements only
            continue
        d = make_random_bert.make(BUILD, name)
        model, info = BertModel.from_pretrained(d, attn_implementation="eager", torch_dtype=torch.float32,
                                                output_loading_info=True)
        bad = {k: v for k, v in info.items() if v and k != "mismatched_keys" or (k == "mismatched_keys" and v)}
        if bad:
            sys.exit(f"{name}: checkpoint did not load cleanly: {bad}")
        model.eval()
        L, NH, H = shape["layers"], shape["heads"], shape["hidden"]
        qmodel = q8_dequantized(model, {"n_layers": L, "hidden": H, "intermediate": shape["intermediate"],
                                        "vocab_size": make_random_bert.VOCAB_SIZE,
                                        "max_positions": make_random_bert.MAX_POSITIONS,
                                        "type_vocab_size": make_random_bert.TYPE_VOCAB})
        b = Bin()
        entry = {"config": {"n_layers": L, "n_heads": NH, "hidden": H, "intermediate": shape["intermediate"]},
                 "sha256": convert.sha256_file(os.path.join(d, "model.safetensors")), "bin": f"{name}.bin", "cases": []}
        for c in cases:
            ids, types = c["ids"], c["type_ids"]
            T = len(ids)
            att, hid, pooled = forward(model, ids, types)
            qatt, _, qpooled = forward(qmodel, ids, types)
            maxp, ent = peakedness(att, T)
            ce = {"name": c["name"], "kind": c["kind"], "T": T, "ids": ids, "type_ids": types, "arrays": {},
                  "attn_mean_max": round(maxp, 4), "attn_entropy_vs_uniform": round(ent, 4)}
            A = ce["arrays"]
            if c["kind"] == "full":
                ce["hidden_layers"] = [0, L]
                A["attn"] = b.add(att)
                A["hidden"] = b.add(hid[ce["hidden_layers"]])
                A["q8_attn"] = b.add(qatt, "<f2")
            else:
                rows = [0, T // 2 - 1, T // 2, T - 1] if T <= 64 else [0, T // 2, T - 1]
                al = list(range(L)) if T <= 64 else [0, L - 1]
                ce["rows"], ce["attn_layers"], ce["hidden_layers"] = rows, al, [0, L // 2, L]
                A["attn_rows"] = b.add(att[al][:, :, rows, :])
                am, qam = att[al].argmax(-1).reshape(-1), qatt[al].argmax(-1).reshape(-1)
                A["attn_argmax"] = b.add(am, "<u2")
                A["attn_colmean"] = b.add(att[al].astype(np.float64).mean(2))
                A["hidden_rows"] = b.add(hid[ce["hidden_layers"]][:, rows, :])
                A["q8_attn_rows"] = b.add(qatt[al][:, :, rows, :], "<f2")
                diff = np.nonzero(am != qam)[0]
                A["q8_argmax_diff"] = b.add(np.stack([diff, qam[diff]], 1).reshape(-1, 2), "<u2")
            A["pooled"] = b.add(pooled)
            A["q8_pooled"] = b.add(qpooled)
            entry["cases"].append(ce)
            qd = np.abs(qatt.astype(np.float64) - att)
            print(f"{name:16s} {c['name']:6s} T={T:3d}  attention: mean max p {maxp:.3f}, "
                  f"entropy {ent:.3f} of uniform; final hidden |max| {np.abs(hid[L]).max():.2f}; "
                  f"q8 weights vs f32: attn max|d| {qd.max():.3f} mean {qd.mean():.1e}, "
                  f"argmax {np.mean(att.argmax(-1) == qatt.argmax(-1)):.4f}")
        with open(os.path.join(OUT, entry["bin"]), "wb") as f:
            for p in b.parts:
                f.write(p)
        index["shapes"][name] = entry
        print(f"{name}: {b.off} bytes, sha256 {entry['sha256']}")
    with open(os.path.join(OUT, "index.json"), "w") as f:
        json.dump(index, f, separators=(",", ":"))
        f.write("\n")
    total = sum(os.path.getsize(os.path.join(OUT, x)) for x in os.listdir(OUT))
    print(f"make_shape_fixtures: {OUT} {total} bytes")


if __name__ == "__main__":
    main()
