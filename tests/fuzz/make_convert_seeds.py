#!/usr/bin/env python3
"""Seeds for src/fuzz/fuzz_convert.c (tests/fuzz/convert/): small checkpoints in
the target's input format (two option bytes, then config.json, vocab.txt,
tokenizer.json, tokenizer_config.json, sentence_bert_config.json and
model.safetensors separated by SEP). Deterministic: rerunning rewrites the
same bytes.

    python3 tests/fuzz/make_convert_seeds.py
"""
import json
import os
import struct

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "convert")
SEP = b"\n#%%#\n"
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "##s"]


def names(L, distil):
    out = ["embeddings.word_embeddings.weight", "embeddings.position_embeddings.weight",
           "embeddings.LayerNorm.weight", "embeddings.LayerNorm.bias"]
    if not distil:
        out.append("embeddings.token_type_embeddings.weight")
    lay = (["attention.q_lin", "attention.k_lin", "attention.v_lin", "attention.out_lin", "sa_layer_norm",
            "ffn.lin1", "ffn.lin2", "output_layer_norm"] if distil else
           ["attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense",
            "attention.output.LayerNorm", "intermediate.dense", "output.dense", "output.LayerNorm"])
    pre = "transformer.layer" if distil else "encoder.layer"
    for l in range(L):
        for n in lay:
            out += [f"{pre}.{l}.{n}.weight", f"{pre}.{l}.{n}.bias"]
    return out


def shape(name, H, I, V, P, T):
    if "word_embeddings" in name:
        return [V, H]
    if "position_embeddings" in name:
        return [P, H]
    if "token_type" in name:
        return [T, H]
    big_out = "intermediate.dense" in name or "lin1" in name
    big_in = name.endswith("output.dense.weight") and "attention" not in name or "lin2" in name
    if name.endswith(".bias") or "LayerNorm" in name or "layer_norm" in name:
        return [I] if big_out and name.endswith(".bias") else [H]
    return [I if big_out else H, I if big_in else H]


def safetensors(tensors, dtype, prefix):
    rng = np.random.default_rng(7)
    header, blobs, off = {"__metadata__": {"format": "pt"}}, [], 0
    for name, shp in tensors:
        a = (rng.standard_normal(shp) * 0.05).astype(np.float32)
        if dtype == "F16":
            b = a.astype("<f2").tobytes()
        elif dtype == "BF16":
            b = (a.view(np.uint32) >> 16).astype("<u2").tobytes()
        else:
            b = a.astype("<f4").tobytes()
        header[prefix + name] = {"dtype": dtype, "shape": shp, "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    hj = json.dumps(header).encode()
    hj += b" " * ((8 - len(hj) % 8) % 8)
    return struct.pack("<Q", len(hj)) + hj + b"".join(blobs)


def seed(name, opts, cfg, files, weights):
    parts = [files.get(k, b"") for k in ("config.json", "vocab.txt", "tokenizer.json", "tokenizer_config.json",
                                         "sentence_bert_config.json")]
    parts[0] = json.dumps(cfg).encode()
    data = bytes(opts) + SEP.join(parts + [weights])
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)
    return len(data)


def main():
    os.makedirs(OUT, exist_ok=True)
    H, I, V, P, T = 32, 32, len(VOCAB), 8, 2
    vocab_txt = "".join(t + "\n" for t in VOCAB).encode()
    bert = {"model_type": "bert", "num_hidden_layers": 1, "num_attention_heads": 2, "hidden_size": H,
            "intermediate_size": I, "max_position_embeddings": P, "type_vocab_size": T, "vocab_size": V,
            "layer_norm_eps": 1e-12, "hidden_act": "gelu"}
    t = [(n, shape(n, H, I, V, P, T)) for n in names(1, False)]
    sizes = [seed("bert-f32-q8", [2, 2], bert, {"vocab.txt": vocab_txt}, safetensors(t, "F32", "bert."))]
    tj = {"model": {"type": "WordPiece", "vocab": {v: i for i, v in enumerate(VOCAB)}, "max_input_chars_per_word": 100},
          "normalizer": {"lowercase": False, "strip_accents": None, "handle_chinese_chars": True}}
    tc = {"do_lower_case": False, "cls_token": {"content": "[CLS]"}, "unk_token": "[UNK]"}
    sizes.append(seed("bert-tokjson-f16-q4", [3, 1 | 16], dict(bert, hidden_act="gelu_new"),
                      {"tokenizer.json": json.dumps(tj).encode(), "tokenizer_config.json": json.dumps(tc).encode(),
                       "sentence_bert_config.json": b'{"max_seq_length": 6}'}, safetensors(t, "F16", "")))
    sizes.append(seed("electra-bf16-q10", [6, 4 | 32], dict(bert, model_type="electra", hidden_act="relu"),
                      {"vocab.txt": vocab_txt}, safetensors(t, "BF16", "electra.")))
    # a byte-level BPE tokenizer.json (RoBERTa's pipeline), kept whole in the
    # bundle (convert_tokenizer.c): the fuzzer reaches the tokenizer.json loader
    bpe = ["<s>", "<pad>", "</s>", "<unk>", "\u0120", "t", "h", "e", "th", "the", "\u0120the", "<mask>"]
    added = [{"id": bpe.index(c), "content": c, "single_word": False, "lstrip": c == "<mask>", "rstrip": False,
              "normalized": False, "special": True} for c in ("<s>", "<pad>", "</s>", "<unk>", "<mask>")]
    tjb = {"version": "1.0", "added_tokens": added, "normalizer": None,
           "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
           "post_processor": {"type": "RobertaProcessing", "sep": ["</s>", 2], "cls": ["<s>", 0],
                              "trim_offsets": True, "add_prefix_space": False},
           "decoder": {"type": "ByteLevel"},
           "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                     "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                     "vocab": {v: i for i, v in enumerate(bpe)}, "merges": ["t h", "th e", "\u0120 the"]}}
    tcb = {"model_max_length": 6, "cls_token": "<s>", "sep_token": "</s>", "pad_token": "<pad>",
           "mask_token": "<mask>", "unk_token": "<unk>"}
    tb = [(n, shape(n, H, I, len(bpe), P, 1)) for n in names(1, False)]
    sizes.append(seed("roberta-bpe-f32-q8", [2, 2], dict(bert, vocab_size=len(bpe), type_vocab_size=1),
                      {"tokenizer.json": json.dumps(tjb).encode(), "tokenizer_config.json": json.dumps(tcb).encode()},
                      safetensors(tb, "F32", "")))
    distil = {"model_type": "distilbert", "n_layers": 1, "n_heads": 2, "dim": H, "hidden_dim": I,
              "max_position_embeddings": P, "vocab_size": V, "activation": "gelu"}
    td = [(n, shape(n, H, I, V, P, T)) for n in names(1, True)]
    sizes.append(seed("distilbert-f32-q8h", [4, 0], distil, {"vocab.txt": vocab_txt},
                      safetensors(td, "F32", "distilbert.")))
    print(f"{len(sizes)} seeds in {OUT}: {sizes} bytes")


if __name__ == "__main__":
    main()
