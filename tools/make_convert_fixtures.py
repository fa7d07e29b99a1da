#!/usr/bin/env python3
"""make_convert_fixtures.py — Hugging Face references for the checkpoint
families of tools/make_random_bert.py --family (local only: torch + transformers).

    HF_HUB_OFFLINE=1 python3 tools/make_convert_fixtures.py

For every family (BERT uncased with an MLM head and "bert." names, BERT cased
with a classifier head, old LayerNorm gamma/beta names and F16 weights, a
multilingual tokenizer.json-only BF16 checkpoint, a Chinese sharded one, a
MiniLM-like sentence-transformers folder, a bge/e5/gte-like sharded gelu_new
one, an ELECTRA discriminator, a DistilBERT) this generates the checkpoint (numpy) into build/convert-fixtures/, lets
transformers read it as a user would (AutoTokenizer, AutoModel: BertModel,
ElectraModel or DistilBertModel, eager fp32
attention) on one text, and writes tests/fixtures/convert/index.json (text,
Hugging Face tokens and ids, sha256 of every generated file the model reads)
and families.bin (each family's attention [L][H][T][T], float32 LE).
tests/convert.test.mjs regenerates the checkpoints with numpy, proves they
are these (sha256), converts them and compares tokens and attention.
"""
import hashlib
import json
import os
import sys

import numpy as np
import torch
from transformers import AutoModel, AutoTokenizer

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import make_random_bert  # noqa: E402

OUT = os.path.join(ROOT, "tests", "fixtures", "convert")
BUILD = os.path.join(ROOT, "build", "convert-fixtures")

TEXTS = {
    "bert-uncased": "The quick brown fox jumps over the lazy dog.",
    "bert-cased": "The Quick brown Fox met John in Paris.",
    "multilingual": "Über die Straße nach Москва, 日本 und türkiye.",
    "chinese": "我在中国大学学习。",
    "minilm-st": "A sentence-transformers model.",
    "bge-e5-gte": "query: how much protein should a female eat",
    "electra-disc": "Is this token replaced or original?",
    "distilbert": "A smaller, faster, cheaper and lighter BERT.",
}


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def main():
    os.makedirs(OUT, exist_ok=True)
    index = {"generator": "tools/make_convert_fixtures.py", "families": []}
    blob = bytearray()
    for fam, text in TEXTS.items():
        d = make_random_bert.make_family(BUILD, fam)
        md = os.path.join(d, "0_Transformer") if make_random_bert.FAMILIES[fam].get("st_dir") else d
        tok = AutoTokenizer.from_pretrained(md)
        enc = tok(text)
        model = AutoModel.from_pretrained(md, attn_implementation="eager", dtype=torch.float32).eval()
        assert type(model).__name__ in ("BertModel", "ElectraModel", "DistilBertModel"), type(model).__name__
        with torch.no_grad():
            out = model(input_ids=torch.tensor([enc["input_ids"]]), output_attentions=True)
        attn = np.stack([a[0].numpy() for a in out.attentions]).astype("<f4")  # [L][H][T][T]
        files = {}
        for base, _, names in os.walk(d):
            for n in sorted(names):
                p = os.path.join(base, n)
                files[os.path.relpath(p, d)] = sha256(p)
        index["families"].append({
            "family": fam, "text": text, "tokens": tok.convert_ids_to_tokens(enc["input_ids"]),
            "ids": enc["input_ids"], "shape": list(attn.shape), "offset": len(blob), "files": files,
        })
        blob += attn.tobytes()
        print(f"make_convert_fixtures: {fam}: {len(enc['input_ids'])} tokens, attention {list(attn.shape)}")
    with open(os.path.join(OUT, "families.bin"), "wb") as f:
        f.write(blob)
    with open(os.path.join(OUT, "index.json"), "w", encoding="utf-8") as f:
        json.dump(index, f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
