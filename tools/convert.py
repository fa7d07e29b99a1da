#!/usr/bin/env python3
"""convert.py — Hugging Face BERT checkpoint -> bertlens bundle (.blb / .blb.gz).

    python3 tools/convert.py CHECKPOINT_DIR OUT.blb[.gz] [--dtype f32|f16|q8|q4|q8h|q9|q10|q11|q12]
            [--embed-dtype DTYPE] [--name NAME] [--license SPDX] [--cased]
            [--calib SET.jsonl] [--heldout SET.jsonl]

CHECKPOINT_DIR holds config.json, model.safetensors (or sharded:
model.safetensors.index.json and its shards; or pytorch_model.bin, which
needs torch), vocab.txt or tokenizer.json, and optionally
tokenizer_config.json. sentence-transformers folders (weights in the root or
in 0_Transformer/) work too; their sentence_bert_config.json max_seq_length,
when present, becomes the bundle key sentence.max_seq_length (where `bertlens
embed` truncates). The bundle format is specified in src/format/bundle.h.

Stages: config -> vocab -> [calib] -> tensors -> [fidelity] -> write. One log
line per tensor with its dtype and the quantization error (max |w - w'|,
RMS(w - w') / RMS(w)).

--calib: q8 and QN (q8h, q9..q12) projections are rounded with GPTQ
(tools/fidelity.py) from the inputs each projection sees on these token-id
inputs (fp32 model, float64), instead of round-to-nearest. The file format
does not change.
--heldout: the bundle's dequantized weights and the source's fp32 weights run
the same numpy forward on these inputs; the attention figures are stored in
the bundle's metadata (fidelity.* keys, src/format/bundle.h).
Both sets are JSON lines with "ids" and "type_ids" (tests/corpus/fidelity_*.jsonl).
Needs only numpy (and torch for .bin checkpoints).
"""
import argparse
import gzip
import hashlib
import io
import json
import math
import os
import struct
import sys
import zlib

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fidelity  # noqa: E402

CONVERTER_VERSION = "bertlens-convert 2"
MAGIC = b"BERTLENS"
FORMAT_VERSION = 1
HEADER_SIZE = 96
ALIGN = 64
QBLOCK = 32
DTYPES = {"f32": 0, "f16": 1, "q8": 2, "q4": 3, "q8h": 4, "q9": 5, "q10": 6, "q11": 7, "q12": 8}
QN_BITS = {"q8h": 8, "q9": 9, "q10": 10, "q11": 11, "q12": 12}  # src/format/bundle.h, QN layouts
GPTQ_DTYPES = ("q8",) + tuple(QN_BITS)  # rounded with GPTQ when --calib is given
META_U32, META_I32, META_F32, META_STR, META_STRARR = range(5)


SHARD_INDEX = "model.safetensors.index.json"

# What the bundle loader accepts (src/format/bundle.h BL_MAX_*): the converter
# refuses anything else before writing, in the loader's words.
MAX_LAYERS, MAX_HEADS, MAX_HIDDEN, MAX_INTERMEDIATE = 64, 128, 8192, 32768
MAX_POSITIONS, MAX_TYPE_VOCAB, MIN_VOCAB, MAX_VOCAB = 8192, 64, 5, 1000000
MAX_CHARS_PER_WORD, MAX_TOKEN_BYTES, MAX_WORD_CHARS = 1000, 4096, 2**31 - 1


class ConvertError(Exception):
    pass


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# ------------------------------------------------------------------ inputs

def find_model_dir(path):
    """The folder holding config.json + weights (sentence-transformers keeps
    them in the root or in 0_Transformer/)."""
    for cand in (path, os.path.join(path, "0_Transformer")):
        if os.path.isfile(os.path.join(cand, "config.json")) and any(
            os.path.isfile(os.path.join(cand, w)) for w in ("model.safetensors", SHARD_INDEX, "pytorch_model.bin")
        ):
            return cand
    raise ConvertError(f"{path}: no config.json with model.safetensors or pytorch_model.bin found")


def cfg_int(cfg, key, default, lo, hi, bkey):
    """config.json's integer `key` (default None: required) within the loader's [lo, hi] for bundle key `bkey`."""
    if key not in cfg and default is None:
        raise ConvertError(f"config.json has no {key}")
    x = cfg.get(key, default)
    if not isinstance(x, int) or isinstance(x, bool):
        raise ConvertError(f"config.json: {key} must be an integer")
    if not lo <= x <= hi:
        raise ConvertError(f"config.json: {key} = {x} is out of range {lo}..{hi} (the bundle's {bkey})")
    return x


def ln_eps(e):
    """layer_norm_eps as the bundle stores it (float32, round to nearest); the loader wants it in (0, 1)."""
    if isinstance(e, bool) or not isinstance(e, (int, float)):
        raise ConvertError("config.json: layer_norm_eps must be a number")
    f = struct.unpack("<f", struct.pack("<f", e))[0] if 0 < e < 1 else 0.0
    if not 0 < f < 1:
        raise ConvertError(f"config.json: layer_norm_eps = {e:g} (float32 {f if 0 < e < 1 else e:g}) is not in "
                           "(0, 1) (the bundle's bert.ln_eps)")
    return float(e)


def stage_config(d):
    with open(os.path.join(d, "config.json"), encoding="utf-8") as f:
        cfg = json.load(f)
    mt = cfg.get("model_type")
    raw = cfg  # the head's settings (head_config) read the file as it is
    archs = cfg.get("architectures") or []
    if mt not in ("bert", "electra", "distilbert"):
        raise ConvertError(
            f"model_type is {mt!r}, architectures {archs}: only BERT checkpoints (model_type 'bert'), ELECTRA "
            "discriminators and DistilBERT are supported"
        )
    # the size keys, by the names the checkpoint uses (messages name them)
    keys = ("num_hidden_layers", "num_attention_heads", "hidden_size", "intermediate_size")
    if mt == "distilbert":  # BERT's encoder under other names, no token types (DISTIL_NAMES)
        keys = ("n_layers", "n_heads", "dim", "hidden_dim")
        cfg = {**{k: cfg[k] for k in keys + ("max_position_embeddings", "vocab_size") if k in cfg},
               "hidden_act": cfg.get("activation", "gelu"), "type_vocab_size": DISTIL_TYPES, "layer_norm_eps": 1e-12}
    # An ELECTRA encoder is BERT's (names under "electra."), unless its
    # embeddings are narrower than the encoder and pass a projection first.
    emb = cfg.get("embedding_size", cfg.get("hidden_size"))
    if mt == "electra" and emb != cfg.get("hidden_size"):
        raise ConvertError(
            f"ELECTRA with embedding_size {emb} != hidden_size {cfg.get('hidden_size')} needs its embeddings_project "
            "layer, which bertlens does not run (ELECTRA checkpoints whose embedding_size equals hidden_size, such "
            "as the base and large discriminators, convert)"
        )
    act = cfg.get("hidden_act", "gelu")
    acts = {"gelu": "gelu", "gelu_new": "gelu_tanh", "gelu_pytorch_tanh": "gelu_tanh", "relu": "relu"}
    if act not in acts:
        raise ConvertError(f"unsupported hidden_act {act!r} (supported: {', '.join(acts)})")
    pet = cfg.get("position_embedding_type", "absolute")
    if pet != "absolute":
        raise ConvertError(f"position_embedding_type {pet!r} is not supported (only 'absolute')")
    c = {
        "n_layers": cfg_int(cfg, keys[0], None, 1, MAX_LAYERS, "bert.n_layers"),
        "n_heads": cfg_int(cfg, keys[1], None, 1, MAX_HEADS, "bert.n_heads"),
        "hidden": cfg_int(cfg, keys[2], None, 1, MAX_HIDDEN, "bert.hidden"),
        "intermediate": cfg_int(cfg, keys[3], None, 1, MAX_INTERMEDIATE, "bert.intermediate"),
        "max_positions": cfg_int(cfg, "max_position_embeddings", None, 1, MAX_POSITIONS, "bert.max_positions"),
        "vocab_size": cfg_int(cfg, "vocab_size", None, MIN_VOCAB, MAX_VOCAB, "bert.vocab_size"),
        "type_vocab_size": cfg_int(cfg, "type_vocab_size", 2, 1, MAX_TYPE_VOCAB, "bert.type_vocab_size"),
        "ln_eps": ln_eps(cfg.get("layer_norm_eps", 1e-12)),
        "activation": acts[act],
        "distilbert": mt == "distilbert",
    }
    c.update(head_config(raw, c["activation"]))
    if c["hidden"] % c["n_heads"]:
        raise ConvertError(f"{keys[2]} {c['hidden']} is not a multiple of {keys[1]} {c['n_heads']}")
    log(
        f"[config] bert: {c['n_layers']} layers x {c['n_heads']} heads, hidden {c['hidden']}, "
        f"intermediate {c['intermediate']}, positions {c['max_positions']}, vocab {c['vocab_size']}, "
        f"eps {c['ln_eps']:g}, {c['activation']}"
    )
    return c


def find_file(name, d, root):
    """Path of `name` in the model folder or the checkpoint root, else None."""
    for base in (d, root):
        p = os.path.join(base, name)
        if os.path.isfile(p):
            return p
    return None


def read_json(path):
    if path is None:
        return {}
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def load_vocab(vocab_txt, tj_path, tj, where):
    """Token strings by id, from vocab.txt or else tokenizer.json's WordPiece model."""
    if vocab_txt:
        with open(vocab_txt, encoding="utf-8", newline="") as f:
            toks = f.read().split("\n")
        if toks and toks[-1] == "":
            toks.pop()
        return [t.rstrip("\r") for t in toks], vocab_txt
    if tj_path:
        model = tj.get("model", {})
        if model.get("type") != "WordPiece":
            raise ConvertError(f"{tj_path}: tokenizer model is {model.get('type')!r}, not WordPiece")
        vocab = model["vocab"]
        toks = [None] * len(vocab)
        for t, i in vocab.items():
            if not 0 <= i < len(toks) or toks[i] is not None:
                raise ConvertError(f"{tj_path}: vocabulary ids are not 0..{len(toks) - 1}")
            toks[i] = t
        return toks, tj_path
    raise ConvertError(f"{where}: no vocab.txt or tokenizer.json found")


def stage_vocab(d, root, cfg, cased_override):
    tj_path = find_file("tokenizer.json", d, root)
    tj = read_json(tj_path)
    toks, path = load_vocab(find_file("vocab.txt", d, root), tj_path, tj, d)
    if len(toks) != cfg["vocab_size"]:
        raise ConvertError(f"{path} has {len(toks)} tokens but config.json says vocab_size {cfg['vocab_size']}")
    tc = read_json(find_file("tokenizer_config.json", d, root))
    norm = tj.get("normalizer") or {}
    lower = tc.get("do_lower_case", norm.get("lowercase", True))
    strip = tc.get("strip_accents", norm.get("strip_accents"))
    chinese = tc.get("tokenize_chinese_chars", norm.get("handle_chinese_chars", True))
    if cased_override:
        lower, strip = False, False
    if strip is None:  # Hugging Face: follows lowercase when unset
        strip = lower
    # Words longer than this are one [UNK], exactly as Hugging Face's
    # max_input_chars_per_word (0: every word). The bundle holds 0..2^31-1
    # (more is the same: no word is that long), above MAX_CHARS_PER_WORD only
    # when no vocabulary entry is: the loader's rule and words.
    max_chars = (tj.get("model") or {}).get("max_input_chars_per_word", 100)
    if isinstance(max_chars, bool) or not isinstance(max_chars, (int, float)) or not -1e18 < max_chars < 1e18:
        raise ConvertError(f"{tj_path}: max_input_chars_per_word must be a number")
    max_chars = int(max_chars)
    if max_chars < 0:
        raise ConvertError(f"{tj_path}: max_input_chars_per_word = {max_chars} is out of range 0..{MAX_WORD_CHARS} "
                           "(the bundle's tokenizer.max_chars_per_word)")
    max_chars = min(max_chars, MAX_WORD_CHARS)
    longest = 0
    for i, t in enumerate(toks):
        if len(t.encode()) > MAX_TOKEN_BYTES:
            raise ConvertError(f"{path}: vocabulary entry {i} is {len(t.encode())} bytes long (at most {MAX_TOKEN_BYTES})")
        longest = max(longest, len(t.encode()))
    if max_chars > MAX_CHARS_PER_WORD and longest > MAX_CHARS_PER_WORD:
        raise ConvertError(f"{tj_path}: max_input_chars_per_word = {max_chars} is out of range 0..{MAX_CHARS_PER_WORD} "
                           f"for a vocabulary with a {longest}-byte entry (the bundle's tokenizer.max_chars_per_word)")
    index = {t: i for i, t in enumerate(toks)}

    def special(name, default):
        tok = tc.get(name, default)
        if isinstance(tok, dict):
            tok = tok.get("content", default)
        if tok not in index:
            raise ConvertError(f"special token {tok!r} ({name}) is not in the vocabulary")
        return index[tok]

    t = {
        "vocab": toks,
        "lowercase": int(bool(lower)),
        "strip_accents": int(bool(strip)),
        "chinese_chars": int(bool(chinese)),
        "max_chars_per_word": int(max_chars),
        "unk_id": special("unk_token", "[UNK]"),
        "cls_id": special("cls_token", "[CLS]"),
        "sep_id": special("sep_token", "[SEP]"),
        "pad_id": special("pad_token", "[PAD]"),
        "mask_id": special("mask_token", "[MASK]"),
    }
    log(
        f"[vocab]  {len(toks)} tokens from {os.path.basename(path)}; lowercase={t['lowercase']} "
        f"strip_accents={t['strip_accents']} chinese_chars={t['chinese_chars']} max_chars={t['max_chars_per_word']}; "
        f"[UNK]={t['unk_id']} [CLS]={t['cls_id']} [SEP]={t['sep_id']} [PAD]={t['pad_id']} [MASK]={t['mask_id']}"
    )
    return t


def read_safetensors(path):
    """Parse a .safetensors file with numpy only (8-byte header length, JSON
    header, raw little-endian data)."""
    dt = {"F32": np.float32, "F16": np.float16, "F64": np.float64, "BF16": None, "I64": np.int64}
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack_from("<Q", raw, 0)
    if n > len(raw) - 8:
        raise ConvertError(f"{path}: corrupt safetensors header")
    header = json.loads(raw[8 : 8 + n])
    base = 8 + n
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        s, e = info["data_offsets"]
        kind = info["dtype"]
        buf = raw[base + s : base + e]
        if kind == "BF16":
            a = np.frombuffer(buf, dtype=np.uint16).astype(np.uint32) << 16
            arr = a.view(np.float32)
        elif kind in dt and dt[kind] is not None:
            arr = np.frombuffer(buf, dtype=dt[kind])
        else:
            continue
        out[name] = arr.reshape(info["shape"])
    return out


def shard_paths(index):
    """The shards of a sharded checkpoint, sorted by file name."""
    wm = read_json(index).get("weight_map")
    if not isinstance(wm, dict) or not wm or not all(isinstance(f, str) and f and "/" not in f for f in wm.values()):
        raise ConvertError(f"{index}: no weight_map of file names")
    return [os.path.join(os.path.dirname(index), f) for f in sorted(set(wm.values()))]


def read_weights(d):
    """(tensors, path recorded as source.file, files whose bytes source.sha256
    covers in order: the shards, sorted by name, of a sharded checkpoint)."""
    st = os.path.join(d, "model.safetensors")
    if os.path.isfile(st):
        return read_safetensors(st), st, [st]
    index = os.path.join(d, SHARD_INDEX)
    if os.path.isfile(index):
        sd = {}
        shards = shard_paths(index)
        for p in shards:
            if not os.path.isfile(p):
                raise ConvertError(f"{p} is listed in {SHARD_INDEX} but missing")
            sd.update(read_safetensors(p))
        return sd, index, shards
    pt = os.path.join(d, "pytorch_model.bin")
    try:
        import torch
    except ImportError:
        raise ConvertError(f"{pt} needs torch to read (pip install torch), or provide model.safetensors")
    sd = torch.load(pt, map_location="cpu", weights_only=True)
    return {k: v.float().numpy() for k, v in sd.items()}, pt, [pt]


def sha256_file(*paths):
    """sha256 of the files' bytes, concatenated."""
    h = hashlib.sha256()
    for path in paths:
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
    return h.hexdigest()


# ------------------------------------------------------------ quantization

def quant_q8(w):
    """Blocks of 32 along the last dim, scale = max|w| / 127."""
    r = w.reshape(-1, QBLOCK).astype(np.float32)
    amax = np.abs(r).max(axis=1)
    scale = (amax / 127.0).astype(np.float32)
    inv = np.where(scale > 0, 1.0 / np.where(scale > 0, scale, 1), 0).astype(np.float32)
    q = np.clip(np.rint(r * inv[:, None]), -127, 127).astype(np.int8)
    deq = (q.astype(np.float32) * scale[:, None]).reshape(w.shape)
    return q.tobytes() + scale.astype("<f4").tobytes(), deq


def quant_q4(w):
    """Blocks of 32, 4-bit: the element of largest magnitude maps to -8, so
    the scale is that element / -8; stored nibble = q + 8."""
    r = w.reshape(-1, QBLOCK).astype(np.float32)
    idx = np.abs(r).argmax(axis=1)
    mx = r[np.arange(r.shape[0]), idx]
    scale = (mx / -8.0).astype(np.float32)
    inv = np.where(scale != 0, 1.0 / np.where(scale != 0, scale, 1), 0).astype(np.float32)
    q = np.clip(np.rint(r * inv[:, None]), -8, 7).astype(np.int8)
    deq = (q.astype(np.float32) * scale[:, None]).reshape(w.shape)
    nib = (q + 8).astype(np.uint8)
    packed = (nib[:, :16] | (nib[:, 16:] << 4)).astype(np.uint8)
    return packed.tobytes() + scale.astype("<f4").tobytes(), deq


def quant_qn(w, bits, hess=None):
    """QN (bits 8..12, float16 block scales): round to nearest
    (fidelity.qn_rtn), or GPTQ from the layer's input Hessian (fidelity.gptq_qn)."""
    if hess is None:
        q, scale = fidelity.qn_rtn(w, bits, QBLOCK)
    else:
        q, scale = fidelity.gptq_qn(w, hess, bits, QBLOCK)
    if not np.all(np.isfinite(scale.astype(np.float32))):
        raise ConvertError(f"weights up to {np.abs(w).max():g} overflow a float16 block scale")
    return fidelity.qn_pack(q, scale, bits), fidelity.qn_dequant(q, scale, QBLOCK)


def encode(w, dtype, name="weight"):
    w = np.ascontiguousarray(w, dtype=np.float32)
    if dtype == "f32":
        return w.astype("<f4").tobytes(), w
    if dtype == "f16":
        h = w.astype("<f2")
        if not np.all(np.isfinite(h)):  # as src/convert/convert_quant.c: never write an inf the loader refuses
            big = float(w.ravel()[np.argmax(~np.isfinite(h.ravel()))])
            raise ConvertError(f"{name}: weight {big:g} overflows float16 (largest 65504): convert with another dtype")
        return h.tobytes(), h.astype(np.float32)
    if w.shape[-1] % QBLOCK:
        raise ConvertError(f"last dimension {w.shape[-1]} is not a multiple of {QBLOCK}: cannot use {dtype}")
    if dtype in QN_BITS:
        return quant_qn(w, QN_BITS[dtype])
    return quant_q8(w) if dtype == "q8" else quant_q4(w)


# ---------------------------------------------------------------- tensors

def canonical_names(cfg):
    """Required tensors in file order, with shapes and whether they may be quantized."""
    H, I = cfg["hidden"], cfg["intermediate"]
    out = [
        ("embeddings.word_embeddings.weight", (cfg["vocab_size"], H), "embed"),
        ("embeddings.position_embeddings.weight", (cfg["max_positions"], H), None),
        ("embeddings.token_type_embeddings.weight", (cfg["type_vocab_size"], H), None),
        ("embeddings.LayerNorm.weight", (H,), None),
        ("embeddings.LayerNorm.bias", (H,), None),
    ]
    lin = [
        ("attention.self.query", H, H), ("attention.self.key", H, H), ("attention.self.value", H, H),
        ("attention.output.dense", H, H), ("intermediate.dense", I, H), ("output.dense", H, I),
    ]
    for l in range(cfg["n_layers"]):
        p = f"encoder.layer.{l}."
        for name, o, i in lin[:4]:
            out += [(p + name + ".weight", (o, i), "linear"), (p + name + ".bias", (o,), None)]
        out += [(p + "attention.output.LayerNorm.weight", (H,), None), (p + "attention.output.LayerNorm.bias", (H,), None)]
        for name, o, i in lin[4:]:
            out += [(p + name + ".weight", (o, i), "linear"), (p + name + ".bias", (o,), None)]
        out += [(p + "output.LayerNorm.weight", (H,), None), (p + "output.LayerNorm.bias", (H,), None)]
    return out


# DistilBERT names -> BERT names (replacements in this order); its missing
# token-type embeddings become DISTIL_TYPES rows of zeros.
DISTIL_NAMES = [
    ("transformer.layer.", "encoder.layer."), (".attention.q_lin.", ".attention.self.query."),
    (".attention.k_lin.", ".attention.self.key."), (".attention.v_lin.", ".attention.self.value."),
    (".attention.out_lin.", ".attention.output.dense."), (".sa_layer_norm.", ".attention.output.LayerNorm."),
    (".ffn.lin1.", ".intermediate.dense."), (".ffn.lin2.", ".output.dense."),
    (".output_layer_norm.", ".output.LayerNorm."),
]
DISTIL_TYPES = 2


# Masked-LM heads: source names (prefixes stripped) -> the bundle's head.*
# names (bundle.h, "masked-LM head"; the C converter's src/convert/convert_head_names.c).
HEAD_NAMES = {
    "cls.predictions.transform.dense.weight": "head.transform.weight",
    "cls.predictions.transform.dense.bias": "head.transform.bias",
    "cls.predictions.transform.LayerNorm.weight": "head.ln.weight",
    "cls.predictions.transform.LayerNorm.bias": "head.ln.bias",
    "cls.predictions.decoder.weight": "head.decoder.weight",
    "cls.predictions.bias": "head.decoder.bias",
    "cls.predictions.decoder.bias": "head.decoder.bias",  # the later one in the file wins (src/convert/convert_head_names.c)
    "vocab_transform.weight": "head.transform.weight",
    "vocab_transform.bias": "head.transform.bias",
    "vocab_layer_norm.weight": "head.ln.weight",
    "vocab_layer_norm.bias": "head.ln.bias",
    "vocab_projector.weight": "head.decoder.weight",
    "vocab_projector.bias": "head.decoder.bias",
    "generator_predictions.dense.weight": "head.transform.weight",
    "generator_predictions.dense.bias": "head.transform.bias",
    "generator_predictions.LayerNorm.weight": "head.ln.weight",
    "generator_predictions.LayerNorm.bias": "head.ln.bias",
    "generator_lm_head.weight": "head.decoder.weight",
    "generator_lm_head.bias": "head.decoder.bias",
    "predictions.dense.weight": "head.transform.weight",  # ALBERT (the C converter's family)
    "predictions.dense.bias": "head.transform.bias",
    "predictions.LayerNorm.weight": "head.ln.weight",
    "predictions.LayerNorm.bias": "head.ln.bias",
    "predictions.decoder.weight": "head.decoder.weight",
    "predictions.bias": "head.decoder.bias",
    "predictions.decoder.bias": "head.decoder.bias",
    "lm_head.dense.weight": "head.transform.weight",
    "lm_head.dense.bias": "head.transform.bias",
    "lm_head.layer_norm.weight": "head.ln.weight",
    "lm_head.layer_norm.bias": "head.ln.bias",
    "lm_head.decoder.weight": "head.decoder.weight",
    "lm_head.bias": "head.decoder.bias",
    "lm_head.decoder.bias": "head.decoder.bias",
}


def head_config(raw, activation):
    """What config.json says of a masked-LM head: ELECTRA's generator and
    RoBERTa's lm_head use erf GELU, BERT's and DistilBERT's the encoder's."""
    mt = raw.get("model_type")
    act = "gelu" if mt in ("electra", "roberta", "xlm-roberta", "camembert", "mpnet") else activation
    return {"head_act": act, "head_tied": 1 if raw.get("tie_word_embeddings", True) else 0}


def head_names(cfg, sd):
    """The head's tensors (after the encoder's), when the checkpoint has one."""
    if "head.transform.weight" not in sd:
        return []
    H, V = cfg["hidden"], cfg["vocab_size"]
    w = sd["head.transform.weight"]
    E = w.shape[0] if len(w.shape) == 2 else 0
    if not 1 <= E <= MAX_HIDDEN:
        raise ConvertError(f"head.transform.weight: shape is not [E, {H}] with E in 1..{MAX_HIDDEN}")
    if cfg["head_tied"] and E != H:
        raise ConvertError(f"the masked-LM head is {E} wide but its decoder is tied to {H}-wide word embeddings")
    out = [("head.transform.weight", (E, H), "linear"), ("head.transform.bias", (E,), None),
           ("head.ln.weight", (E,), None), ("head.ln.bias", (E,), None)]
    if not cfg["head_tied"]:
        out.append(("head.decoder.weight", (V, E), "embed"))
    out.append(("head.decoder.bias", (V,), None))
    cfg["head"] = E
    log(f"[head]   masked-LM head: width {E}, {cfg['head_act']}, decoder "
        + ("tied to the word embeddings" if cfg["head_tied"] else "stored"))
    return out


def normalize_names(sd, cfg=None):
    """Strip 'bert.' / 'model.' / 'electra.' / 'distilbert.' prefixes, map old
    gamma/beta LayerNorm names (and DistilBERT's names, cfg["distilbert"])."""
    out = {}
    distil = bool(cfg and cfg.get("distilbert"))
    for k, v in sd.items():
        n = k
        for pre in ("bert.", "model.", "electra.", "distilbert."):
            if n.startswith(pre):
                n = n[len(pre):]
        n = n.replace("LayerNorm.gamma", "LayerNorm.weight").replace("LayerNorm.beta", "LayerNorm.bias")
        if distil:
            for a, b in DISTIL_NAMES:
                n = n.replace(a, b)
        n = HEAD_NAMES.get(n, n)
        out[n] = v
    if distil:
        out["embeddings.token_type_embeddings.weight"] = np.zeros((DISTIL_TYPES, cfg["hidden"]), np.float32)
    return out


def stage_calib(sd, cfg, path):
    """Hessians (X^T X / n) of every projection's inputs on the calibration set."""
    W = {k: np.asarray(v, dtype=np.float32) for k, v in normalize_names(sd, cfg).items()}
    items = fidelity.load_corpus(path)
    caps = {}
    for it in items:
        fidelity.forward(W, cfg, it["ids"], it["type_ids"], np.float64, caps)
    n = sum(len(it["ids"]) for it in items)
    log(f"[calib]  {len(items)} inputs, {n} tokens from {os.path.basename(path)}")
    return {k: fidelity.hessian(v) for k, v in caps.items()}


def stage_fidelity(sd, cfg, deq, path):
    """Attention of the stored (dequantized) weights vs the source's fp32 weights on
    the held-out set: worst input's max |d|, worst mean |d|, worst row-argmax agreement."""
    W = {k: np.asarray(v, dtype=np.float32) for k, v in normalize_names(sd, cfg).items()}
    Wq = dict(W)
    Wq.update(deq)
    items = fidelity.load_corpus(path)
    figs = []
    for it in items:
        ref = fidelity.forward(W, cfg, it["ids"], it["type_ids"], np.float64)
        got = fidelity.forward(Wq, cfg, it["ids"], it["type_ids"], np.float64)
        figs.append(fidelity.attention_figures(ref, got))
    mx = max(f[0] for f in figs)
    mean = max(f[1] for f in figs)
    agree = min(f[2] for f in figs)
    sig = lambda v: f"{float(f'{v:.2g}'):g}"  # noqa: E731 - two significant digits, stable text
    out = {
        "fidelity.attn_max": sig(mx),
        "fidelity.attn_mean": sig(mean),
        "fidelity.argmax": f"{math.floor(agree * 1000) / 10:.1f}",
        "fidelity.set": f"{os.path.basename(path)}, {len(items)} inputs, "
                        f"{sum(len(it['ids']) for it in items)} tokens",
    }
    log(f"[fidelity] attention vs fp32 on {out['fidelity.set']}: max |d| {mx:.3e}, mean |d| {mean:.2e} (worst input), "
        f"row argmax {agree * 100:.2f} % (worst input)")
    return out


def stage_tensors(sd, cfg, dtype, embed_dtype, hess=None, deq_out=None):
    sd = normalize_names(sd, cfg)
    tensors = []
    used = set()
    for name, shape, kind in canonical_names(cfg) + head_names(cfg, sd):
        if name not in sd:
            raise ConvertError(f"checkpoint has no tensor {name!r} (is this a BERT encoder?)")
        w = np.asarray(sd[name], dtype=np.float32)
        if tuple(w.shape) != shape:
            raise ConvertError(f"{name}: shape {tuple(w.shape)}, expected {shape}")
        if not np.all(np.isfinite(w)):
            raise ConvertError(f"{name}: contains NaN or infinity")
        dt = {"embed": embed_dtype, "linear": dtype}.get(kind, "f32")
        if hess is not None and kind == "linear" and dt == "q8":
            q, scale = fidelity.gptq_q8(w, hess[name], QBLOCK)
            data = q.tobytes() + scale.astype("<f4").tobytes()
            deq = fidelity.q8_dequant(q, scale, QBLOCK)
        elif hess is not None and kind == "linear" and dt in QN_BITS:
            if w.shape[-1] % QBLOCK:
                raise ConvertError(f"last dimension {w.shape[-1]} is not a multiple of {QBLOCK}: cannot use {dt}")
            data, deq = quant_qn(w, QN_BITS[dt], hess[name])
        else:
            data, deq = encode(w, dt, name)
        if deq_out is not None and dt != "f32":
            deq_out[name] = deq
        err = np.abs(deq.astype(np.float64) - w)
        rms = float(np.sqrt(np.mean(w.astype(np.float64) ** 2)))
        rel = float(np.sqrt(np.mean(err**2)) / rms) if rms > 0 else 0.0
        log(f"[tensor] {name:<52} {str(list(shape)):<14} {dt:<4} max|err| {err.max():.3e}  rel.rms {rel:.3e}")
        tensors.append((name, DTYPES[dt], shape, data))
        used.add(name)
    skipped = sorted(k for k in sd if k not in used)
    if skipped:
        log(f"[tensor] skipped {len(skipped)} tensors not used by the encoder: {', '.join(skipped[:6])}"
            + (" ..." if len(skipped) > 6 else ""))
    return tensors


# ------------------------------------------------------------------ write

def meta_bytes(entries):
    b = io.BytesIO()
    for key, typ, val in entries:
        k = key.encode()
        b.write(struct.pack("<I", len(k)) + k + struct.pack("<I", typ))
        if typ == META_U32:
            b.write(struct.pack("<I", val))
        elif typ == META_I32:
            b.write(struct.pack("<i", val))
        elif typ == META_F32:
            b.write(struct.pack("<f", val))
        elif typ == META_STR:
            s = val.encode()
            b.write(struct.pack("<I", len(s)) + s)
        elif typ == META_STRARR:
            b.write(struct.pack("<I", len(val)))
            for item in val:
                s = item.encode()
                b.write(struct.pack("<I", len(s)) + s)
    return b.getvalue()


def align(n, a=ALIGN):
    return (n + a - 1) // a * a


def build_bundle(cfg, tok, tensors, provenance):
    meta = [
        ("bert.n_layers", META_U32, cfg["n_layers"]),
        ("bert.n_heads", META_U32, cfg["n_heads"]),
        ("bert.hidden", META_U32, cfg["hidden"]),
        ("bert.intermediate", META_U32, cfg["intermediate"]),
        ("bert.max_positions", META_U32, cfg["max_positions"]),
        ("bert.type_vocab_size", META_U32, cfg["type_vocab_size"]),
        ("bert.vocab_size", META_U32, cfg["vocab_size"]),
        ("bert.ln_eps", META_F32, cfg["ln_eps"]),
        ("bert.activation", META_STR, cfg["activation"]),
        ("tokenizer.vocab", META_STRARR, tok["vocab"]),
    ]
    for k in ("lowercase", "strip_accents", "chinese_chars", "max_chars_per_word", "unk_id", "cls_id", "sep_id",
              "pad_id", "mask_id"):
        meta.append(("tokenizer." + k, META_U32, tok[k]))
    if cfg.get("head"):  # the masked-LM head, after the other entries
        meta += [("head.kind", META_STR, "mlm"), ("head.tied", META_U32, cfg["head_tied"]),
                 ("head.activation", META_STR, cfg["head_act"]), ("head.ln_eps", META_F32, cfg["ln_eps"])]
    for k, v in provenance.items():
        meta.append((k, META_STR, v))
    mb = meta_bytes(meta)

    # Tensor data layout first (offsets go into the table).
    offsets, off = [], 0
    for _, _, _, data in tensors:
        off = align(off)
        offsets.append(off)
        off += len(data)
    data_size = align(off)

    tb = io.BytesIO()
    for (name, dt, shape, data), o in zip(tensors, offsets):
        n = name.encode()
        tb.write(struct.pack("<I", len(n)) + n + struct.pack("<II", dt, len(shape)))
        tb.write(struct.pack(f"<{len(shape)}Q", *shape))
        tb.write(struct.pack("<QQI", o, len(data), zlib.crc32(data)))
    tbytes = tb.getvalue()

    meta_off = HEADER_SIZE
    table_off = meta_off + len(mb)
    data_off = align(table_off + len(tbytes))
    file_size = data_off + data_size
    hdr = bytearray(HEADER_SIZE)
    hdr[0:8] = MAGIC
    struct.pack_into("<II", hdr, 8, FORMAT_VERSION, ALIGN)
    struct.pack_into("<QQQQQQQ", hdr, 16, file_size, meta_off, len(mb), table_off, len(tbytes), data_off, data_size)
    struct.pack_into("<IIIII", hdr, 72, len(meta), len(tensors), zlib.crc32(mb), zlib.crc32(tbytes), 0)
    struct.pack_into("<I", hdr, 92, zlib.crc32(bytes(hdr[:92])))

    out = bytearray(file_size)
    out[0:HEADER_SIZE] = hdr
    out[meta_off : meta_off + len(mb)] = mb
    out[table_off : table_off + len(tbytes)] = tbytes
    for (_, _, _, data), o in zip(tensors, offsets):
        out[data_off + o : data_off + o + len(data)] = data
    return bytes(out)


def sentence_max_seq_length(d, root):
    """max_seq_length of a sentence-transformers checkpoint
    (sentence_bert_config.json), or None when the file is absent."""
    path = find_file("sentence_bert_config.json", d, root)
    if path is None:
        return None
    v = read_json(path).get("max_seq_length")
    if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
        raise ConvertError(f"{path}: max_seq_length must be a positive integer, not {v!r}")
    return v


def convert(src, out, dtype="q8", embed_dtype=None, name=None, license=None, cased=False, calib=None,
            heldout=None):
    if dtype not in DTYPES:
        raise ConvertError(f"unknown dtype {dtype!r} ({', '.join(DTYPES)})")
    embed_dtype = embed_dtype or dtype
    if embed_dtype not in DTYPES:
        raise ConvertError(f"unknown embedding dtype {embed_dtype!r}")
    d = find_model_dir(src)
    cfg = stage_config(d)
    tok = stage_vocab(d, src, cfg, cased)
    sd, wpath, wfiles = read_weights(d)
    hess = stage_calib(sd, cfg, calib) if calib and dtype in GPTQ_DTYPES else None
    deq = {}
    tensors = stage_tensors(sd, cfg, dtype, embed_dtype, hess, deq)
    if license is None:
        license = "unknown"
        log("[write]  warning: no --license given; recording 'unknown'")
    provenance = {
        "source.name": name or os.path.basename(os.path.abspath(src)),
        "source.license": license,
        "source.sha256": sha256_file(*wfiles),
        "source.file": os.path.basename(wpath),
        "converter.version": CONVERTER_VERSION,
        "weights.dtype": dtype,
        "weights.embed_dtype": embed_dtype,
        "weights.rounding": "gptq" if hess is not None else "nearest",
    }
    msl = sentence_max_seq_length(d, src)
    if msl is not None:
        provenance["sentence.max_seq_length"] = str(msl)
    if heldout:
        provenance.update(stage_fidelity(sd, cfg, deq, heldout))
    blob = build_bundle(cfg, tok, tensors, provenance)
    tmp = out + ".tmp"
    if out.endswith(".gz"):
        with open(tmp, "wb") as f:
            with gzip.GzipFile(fileobj=f, mode="wb", compresslevel=9, mtime=0, filename="") as g:
                g.write(blob)
    else:
        with open(tmp, "wb") as f:
            f.write(blob)
    os.replace(tmp, out)
    log(f"[write]  {out}: {len(blob)} bytes bundle, {os.path.getsize(out)} bytes on disk "
        f"({len(tensors)} tensors, dtype {dtype}, embeddings {embed_dtype})")
    return len(blob)


def main(argv=None):
    ap = argparse.ArgumentParser(description="Convert a Hugging Face BERT checkpoint to a bertlens bundle.")
    ap.add_argument("src", help="checkpoint folder (config.json, model.safetensors, vocab.txt, ...)")
    ap.add_argument("out", help="output bundle (.blb, or .blb.gz to compress)")
    ap.add_argument("--dtype", default="q8", choices=sorted(DTYPES), help="projection weights dtype (default q8)")
    ap.add_argument("--embed-dtype", choices=sorted(DTYPES), help="word-embedding dtype (default: --dtype)")
    ap.add_argument("--name", help="source model name recorded in the bundle")
    ap.add_argument("--license", help="licence of the source weights (SPDX id)")
    ap.add_argument("--cased", action="store_true", help="force a cased tokenizer (no lower-casing or accent stripping)")
    ap.add_argument("--calib", help="calibration set (JSON lines with ids, type_ids): GPTQ rounding for q8 and "
                    "q8h..q12 projections")
    ap.add_argument("--heldout", help="held-out set (JSON lines): measure attention fidelity, store it in the bundle")
    a = ap.parse_args(argv)
    try:
        convert(a.src, a.out, a.dtype, a.embed_dtype, a.name, a.license, a.cased, a.calib, a.heldout)
    except ConvertError as e:
        log(f"convert: error: {e}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
