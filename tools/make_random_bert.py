#!/usr/bin/env python3
"""make_random_bert.py — deterministic random BERT checkpoints of real model shapes.

    python3 tools/make_random_bert.py OUT_ROOT [--shape NAME ...] [--family NAME ...] [--force]

Writes OUT_ROOT/NAME/ as a Hugging Face BERT checkpoint folder (config.json,
model.safetensors, vocab.txt, tokenizer_config.json) for each shape below,
so the encoder can be checked against transformers on shapes for which no
real weights are at hand (bge-small: 12 x 12 x 384; bert-base: 12 x 12 x 768).
A folder that is already complete for the same shape and generator version is
left alone (--force rewrites it); editing this script regenerates it.

--family writes OUT_ROOT/NAME/ for the checkpoint families of FAMILIES below:
small random BERTs laid out as the Hugging Face models of each family are
(tensor name prefixes, old LayerNorm gamma/beta names, F16/BF16 weights,
sharded safetensors, sentence-transformers folders, tokenizer.json-only
vocabularies, cased / multilingual / Chinese vocabularies, extra heads), for
the converter tests (tests/convert.test.mjs).

numpy only (it runs in CI, where there is no torch). The weights are
bit-for-bit reproducible on any platform: every value comes from the raw
64-bit PCG64 stream through integer arithmetic and one IEEE multiply, no
transcendental functions, so tests can compare the sha256 of the generated
model.safetensors with the one recorded next to the Hugging Face references
(tests/fixtures/shapes/make.py, tests/fixtures/shapes/).

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
    # Not among the Hugging Face references (tests/fixtures/shapes/make.py):
    # for memory measurements only (tools/convert_memory.mjs).
    "bert-large-shape": {"layers": 24, "heads": 16, "hidden": 1024, "intermediate": 4096, "seed": 1024_24_16},
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


# ----------------------------------------------------------- families
# Each family: a small shape, how its files are laid out, and its vocabulary.
#   prefix   tensor name prefix ("bert." as BertForMaskedLM / classifiers, "electra.")
#   old_ln   LayerNorm.gamma / LayerNorm.beta (original TF-converted BERT)
#   dtype    safetensors dtype of every weight: F32, F16 or BF16
#   shards   > 1: model.safetensors.index.json + that many shards
#   st_dir   sentence-transformers folder: weights and config in 0_Transformer/
#   vocab    "uncased" | "cased" | "multilingual" | "chinese"
#   tokjson  vocabulary only in tokenizer.json (WordPiece), no vocab.txt
#   heads    extra tensors the encoder does not use: pooler, mlm, classifier, discriminator
#   model_type  "electra": an ELECTRA discriminator (embedding_size = hidden);
#            "distilbert": DistilBERT names and config, no token types
#   lower    do_lower_case of tokenizer_config.json (None: no such file)
FAMILY_SHAPE = {"layers": 2, "heads": 4, "hidden": 64, "intermediate": 128}
FAMILIES = {
    "bert-uncased": dict(prefix="bert.", heads=["pooler", "mlm"], vocab="uncased", lower=True, seed=11),
    "bert-cased": dict(prefix="bert.", old_ln=True, dtype="F16", heads=["pooler", "classifier"], vocab="cased",
                       lower=False, seed=12),
    "multilingual": dict(vocab="multilingual", tokjson=True, lower=False, dtype="BF16", heads=["pooler"], seed=13),
    "chinese": dict(vocab="chinese", lower=None, shards=2, seed=14),
    "minilm-st": dict(st_dir=True, vocab="uncased", lower=True, heads=["pooler"], seed=15,
                      shape={"layers": 3, "heads": 12, "hidden": 96, "intermediate": 384}),
    "electra-disc": dict(prefix="electra.", heads=["discriminator"], vocab="uncased", lower=True, seed=17,
                         model_type="electra"),
    "distilbert": dict(prefix="distilbert.", heads=["distil-mlm"], vocab="uncased", lower=True, seed=18,
                       model_type="distilbert"),
    "bge-e5-gte": dict(vocab="uncased", lower=True, seed=16, shards=3, act="gelu_new",
                       shape={"layers": 2, "heads": 2, "hidden": 32, "intermediate": 64}),
}

# Multilingual / Chinese tokens put in place of [unused*] entries, so the
# vocabulary keeps its 5000 ids and specials.
MULTILINGUAL_TOKENS = ["über", "straße", "été", "ça", "niño", "señor", "москва", "##ский", "россия", "ελλάδα",
                       "##ος", "العربية", "##ية", "हिन्दी", "##ों", "한국어", "##는", "日本", "東京", "ไทย", "việt",
                       "##ệ", "türkiye", "##ğ", "polska", "##ł", "čeština", "##ř", "עברית", "##ים", "ქართული", "Über",
                       "Москва", "École", "##É"]
CHINESE_TOKENS = list("的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着去之过家学对可"
                      "里后小么心多天而能好都然没日于起还发成事只作当想看文无开手十用主行方又如前所本见经头面公同三")


# BERT tensor names -> DistilBERT's, in this order.
DISTIL_RENAMES = [
    ("encoder.layer.", "transformer.layer."), (".attention.self.query.", ".attention.q_lin."),
    (".attention.self.key.", ".attention.k_lin."), (".attention.self.value.", ".attention.v_lin."),
    (".attention.output.dense.", ".attention.out_lin."), (".attention.output.LayerNorm.", ".sa_layer_norm."),
    (".intermediate.dense.", ".ffn.lin1."), (".output.dense.", ".ffn.lin2."), (".output.LayerNorm.", ".output_layer_norm."),
]


def family_vocab(kind):
    with open(VOCAB, encoding="utf-8") as f:
        toks = f.read().split("\n")[:VOCAB_SIZE]
    if kind == "cased":  # capitalise every third plain word, as cased vocabularies hold both forms
        have = set(toks)
        for i in range(1996, len(toks)):
            t = toks[i]
            if i % 3 == 0 and t.isalpha() and t.isascii() and t.capitalize() not in have:
                have.add(t.capitalize())
                toks[i] = t.capitalize()
    extra = {"multilingual": MULTILINGUAL_TOKENS, "chinese": CHINESE_TOKENS}.get(kind, [])
    have = set(toks)
    extra = [t for t in extra if t not in have]
    for k, t in enumerate(extra):
        assert toks[1 + k].startswith("[unused")
        toks[1 + k] = t
    return toks


def head_tensors(heads, H, V):
    out = []
    if "pooler" in heads:
        out += [("pooler.dense.weight", [H, H]), ("pooler.dense.bias", [H])]
    if "mlm" in heads:
        out += [("cls.predictions.bias", [V]), ("cls.predictions.transform.dense.weight", [H, H]),
                ("cls.predictions.transform.dense.bias", [H]), ("cls.predictions.transform.LayerNorm.weight", [H]),
                ("cls.predictions.transform.LayerNorm.bias", [H])]
    if "discriminator" in heads:
        out += [("discriminator_predictions.dense.weight", [H, H]), ("discriminator_predictions.dense.bias", [H]),
                ("discriminator_predictions.dense_prediction.weight", [1, H]),
                ("discriminator_predictions.dense_prediction.bias", [1])]
    if "distil-mlm" in heads:
        out += [("vocab_transform.weight", [H, H]), ("vocab_transform.bias", [H]), ("vocab_layer_norm.weight", [H]),
                ("vocab_layer_norm.bias", [H]), ("vocab_projector.bias", [V])]
    if "classifier" in heads:
        out += [("classifier.weight", [3, H]), ("classifier.bias", [3])]
    return out


def to_dtype(a, dtype):
    """float32 array -> raw little-endian bytes of a safetensors dtype."""
    if dtype == "F32":
        return a.astype("<f4").tobytes()
    if dtype == "F16":
        return a.astype("<f2").tobytes()
    bits = a.astype("<f4").view(np.uint32).astype(np.uint64)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype("<u2").tobytes()  # BF16, round to nearest even


def make_family(out_root, name):
    """Write OUT_ROOT/NAME as a checkpoint of family NAME (always rewritten: small)."""
    fam = FAMILIES[name]
    shape = dict(fam.get("shape", FAMILY_SHAPE), seed=fam["seed"])
    d = os.path.join(out_root, name)
    md = os.path.join(d, "0_Transformer") if fam.get("st_dir") else d
    os.makedirs(md, exist_ok=True)
    H, V = shape["hidden"], VOCAB_SIZE
    dtype = fam.get("dtype", "F32")
    esize = {"F32": 4, "F16": 2, "BF16": 2}[dtype]
    bitgen = np.random.PCG64(shape["seed"])
    plan = [(n, dims, kind, std) for n, dims, kind, std in tensor_plan(shape) if not n.startswith("pooler.")]
    plan += [(n, dims, "w", 0.02) for n, dims in head_tensors(fam.get("heads", []), H, V)]
    tensors = []
    for n, dims, kind, std in plan:
        a = noise(bitgen, int(np.prod(dims)), std)
        if kind == "ln":
            a = (a + np.float32(1.0)).astype(np.float32)
        if fam.get("model_type") == "distilbert":  # BERT names -> DistilBERT's (no token types, no pooler)
            if "token_type" in n or n.startswith("pooler."):
                continue
            for bert, distil in DISTIL_RENAMES:
                n = n.replace(bert, distil)
        if not n.startswith(("pooler.", "cls.", "classifier.", "discriminator_predictions.", "vocab_")):
            n = fam.get("prefix", "") + n
        elif n.startswith("pooler."):
            n = fam.get("prefix", "") + n
        if fam.get("old_ln"):
            n = n.replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias", "LayerNorm.beta")
        tensors.append((n, dims, to_dtype(a, dtype)))
    n_shards = fam.get("shards", 1)
    per = -(-len(tensors) // n_shards)
    files = ["model.safetensors"] if n_shards == 1 else [
        f"model-{k + 1:05d}-of-{n_shards:05d}.safetensors" for k in range(n_shards)]
    for f in os.listdir(md):
        if f.endswith(".safetensors") or f == "model.safetensors.index.json":
            os.remove(os.path.join(md, f))
    weight_map = {}
    for k, fname in enumerate(files):
        part = tensors[k * per:(k + 1) * per]
        header, off = {}, 0
        for n, dims, b in part:
            header[n] = {"dtype": dtype, "shape": dims, "data_offsets": [off, off + len(b)]}
            off += len(b)
            weight_map[n] = fname
            assert len(b) == int(np.prod(dims)) * esize
        header["__metadata__"] = {"format": "pt"}
        hj = json.dumps(header, separators=(",", ":")).encode()
        hj += b" " * (-len(hj) % 8)
        with open(os.path.join(md, fname), "wb") as f:
            f.write(struct.pack("<Q", len(hj)) + hj)
            for _, _, b in part:
                f.write(b)
    if n_shards > 1:
        with open(os.path.join(md, "model.safetensors.index.json"), "w") as f:
            json.dump({"metadata": {"total_size": sum(len(b) for _, _, b in tensors)}, "weight_map": weight_map}, f,
                      indent=2)
    cfg = config_json(shape)
    if fam.get("prefix") or fam.get("heads"):
        cfg["architectures"] = ["BertForMaskedLM" if "mlm" in fam.get("heads", []) else
                                "BertForSequenceClassification" if "classifier" in fam.get("heads", []) else "BertModel"]
    if "act" in fam:
        cfg["hidden_act"] = fam["act"]
    if fam.get("model_type") == "distilbert":
        cfg = {"architectures": ["DistilBertForMaskedLM"], "model_type": "distilbert", "activation": "gelu",
               "dim": H, "hidden_dim": shape["intermediate"], "n_heads": shape["heads"], "n_layers": shape["layers"],
               "max_position_embeddings": MAX_POSITIONS, "vocab_size": VOCAB_SIZE, "sinusoidal_pos_embds": False,
               "dropout": 0.1, "attention_dropout": 0.1, "initializer_range": 0.02, "pad_token_id": 0}
    if fam.get("model_type") == "electra":  # an ELECTRA discriminator whose embeddings are as wide as the encoder
        cfg.update(model_type="electra", architectures=["ElectraForPreTraining"], embedding_size=H)
    with open(os.path.join(md, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    toks = family_vocab(fam["vocab"])
    for f in ("vocab.txt", "tokenizer.json", "tokenizer_config.json"):
        if os.path.exists(os.path.join(md, f)):
            os.remove(os.path.join(md, f))
    if fam.get("tokjson"):
        specials = [{"id": toks.index(t), "content": t, "single_word": False, "lstrip": False, "rstrip": False,
                     "normalized": False, "special": True} for t in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")]
        tj = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": specials,
              "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                             "strip_accents": None, "lowercase": bool(fam["lower"])},
              "pre_tokenizer": {"type": "BertPreTokenizer"},
              "post_processor": {"type": "BertProcessing", "sep": ["[SEP]", toks.index("[SEP]")],
                                 "cls": ["[CLS]", toks.index("[CLS]")]},
              "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
              "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                        "max_input_chars_per_word": 100, "vocab": {t: i for i, t in enumerate(toks)}}}
        with open(os.path.join(md, "tokenizer.json"), "w", encoding="utf-8") as f:
            json.dump(tj, f, ensure_ascii=fam["vocab"] == "multilingual", indent=1)
    else:
        with open(os.path.join(md, "vocab.txt"), "w", encoding="utf-8", newline="") as f:
            f.write("\n".join(toks) + "\n")
    if fam["lower"] is not None:
        tc = dict(TOKENIZER_CONFIG, do_lower_case=fam["lower"])
        with open(os.path.join(md, "tokenizer_config.json"), "w") as f:
            json.dump(tc, f, indent=2)
    if fam.get("st_dir"):
        with open(os.path.join(d, "sentence_bert_config.json"), "w") as f:
            json.dump({"max_seq_length": 128, "do_lower_case": False}, f)
        with open(os.path.join(d, "modules.json"), "w") as f:
            json.dump([{"idx": 0, "name": "0", "path": "0_Transformer", "type": "sentence_transformers.models.Transformer"}], f)
    print(f"make_random_bert: wrote {d} (family {name})")
    return d


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out_root", help="folder receiving one checkpoint folder per shape")
    ap.add_argument("--shape", action="append", choices=sorted(SHAPES), help="only this shape (repeatable)")
    ap.add_argument("--family", action="append", choices=sorted(FAMILIES) + ["all"],
                    help="a checkpoint family (repeatable; 'all': every one)")
    ap.add_argument("--force", action="store_true", help="rewrite even when up to date")
    a = ap.parse_args()
    fams = list(FAMILIES) if a.family and "all" in a.family else a.family or []
    for name in fams:
        make_family(a.out_root, name)
    for name in a.shape or ([] if fams else list(SHAPES)):
        make(a.out_root, name, a.force)


if __name__ == "__main__":
    main()
