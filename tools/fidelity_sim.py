#!/usr/bin/env python3
"""fidelity_sim.py — simulate quantized bundles of all-MiniLM-L6-v2 on the fidelity corpus.

    python3 tools/fidelity_sim.py [VARIANT ...]      (needs torch + transformers; local only)

Each variant is a recipe for the stored weights (see VARIANTS). Its weights
are quantized with tools/fidelity.py's numpy code exactly as the converter
would, decoded back to float32 and loaded into Hugging Face BertModel (eager,
fp32); the attention of every input of tests/corpus/fidelity.jsonl is
compared with the unquantized model's. A variant is PROJ[+EMB[+f16L…]]:
PROJ rtn, rtn16, gptq, gptqao, f16, intB / intB0.B1.….B5 (B-bit integers
per block of 32, one width or one per layer, f32 scales) or gqB / rqB (the
QN dtypes, GPTQ or round to nearest, one width or one per layer as intB);
EMB q8, f16, f32, qBbK (B <= 8 bits, blocks of K), intB, or eB / eBbK (QN,
B bits, blocks of 32 or K). Further parts: f16L01 / f32L01 (layers 0 and 1
unquantized), and for the QN modes KINDS=B (e.g. qk=11: query and key
projections at 11 bits; kinds q k v o i d = query, key, value, attention
output, intermediate, output). Prints per variant: worst input's
max |Δ|, inputs over 0.02 and 0.01, mean |Δ| (worst input), row-argmax
agreement (worst input), and the stored bytes of the weights.
"""
import os
import sys
import time
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import convert  # noqa: E402
import fidelity  # noqa: E402
import make_models  # noqa: E402

os.environ.setdefault("HF_HUB_OFFLINE", "1")
import torch  # noqa: E402
from transformers import BertModel  # noqa: E402

torch.set_num_threads(2)


def projections(cfg):
    return [n for n, _, kind in convert.canonical_names(cfg) if kind == "linear"]


def calib_hessians(W, cfg):
    caps = {}
    for it in fidelity.load_corpus(os.path.join(ROOT, "tests/corpus/fidelity_calib.jsonl")):
        fidelity.forward(W, cfg, it["ids"], it["type_ids"], np.float64, caps)
    return {k: fidelity.hessian(v) for k, v in caps.items()}


_memo = {}


def gz(data):
    """Bytes of data after zlib level 9 (what gzip -9 of the bundle pays for it, give or take the framing)."""
    return len(zlib.compress(data, 9))


def qn_tensor(n, w, bits, block=32, hess=None):
    """(dequantized weights, gzip bytes) of one tensor in the QN layout (GPTQ when hess is given)."""
    key = (n, bits, block, hess is not None)
    cache = os.environ.get("SIM_CACHE")  # a folder: GPTQ results kept between runs
    path = cache and os.path.join(cache, f"{n}.{bits}.{block}.npz")
    if key not in _memo:
        if hess is not None and path and os.path.exists(path):
            z = np.load(path)
            q, s = z["q"], z["s"]
        elif hess is not None:
            q, s = fidelity.gptq_qn(w, hess, bits, block)
            if path:
                os.makedirs(cache, exist_ok=True)
                np.savez(path, q=q, s=s)
        else:
            q, s = fidelity.qn_rtn(w, bits, block)
        packed = fidelity.qn_pack(q, s, bits) if block == 32 or bits == 8 else None
        if packed is None:  # other block sizes: same planes, scales per `block`
            packed = fidelity.qn_pack(q, np.zeros((1, 0), np.float16), bits) + s.astype("<f2").tobytes()
        _memo[key] = (fidelity.qn_dequant(q, s, block), gz(packed))
    return _memo[key]


def make_variant(name, W, cfg, hess):
    """(weights, raw bytes, gzip bytes) of a variant; gzip bytes only for the QN modes (else 0)."""
    out = dict(W)
    nbytes = 0
    gzbytes = 0
    proj = projections(cfg)
    parts = name.split("+")
    proj_mode, emb_mode = parts[0], parts[1] if len(parts) > 1 else "q8"
    f16_layers, f32_layers = set(), set()
    kind_bits = {}  # qk=11: query and key projections at 11 bits (QN modes)
    kinds = {"q": "attention.self.query", "k": "attention.self.key", "v": "attention.self.value",
             "o": "attention.output.dense", "i": "intermediate.dense", "d": "output.dense"}
    for p in parts[2:]:
        if "=" in p:
            ks, b = p.split("=")
            kind_bits.update({kinds[c]: int(b) for c in ks})
        if p.startswith("f16L"):
            f16_layers |= {int(c) for c in p[4:]}
        if p.startswith("f32L"):
            f32_layers |= {int(c) for c in p[4:]}
    for n in proj:
        layer = int(n.split(".")[2])
        w = W[n]
        if layer in f32_layers:
            nbytes += w.size * 4
            continue
        if layer in f16_layers:
            out[n] = w.astype(np.float16).astype(np.float32)
            nbytes += w.size * 2
            continue
        if proj_mode[:2] == "gs":  # gs128 = GPTQ, fixed step RMS(W) / 128, 12-bit
            m = float(proj_mode[2:])
            m = next((b for kn, b in kind_bits.items() if kn + ".weight" in n), m)
            key = (n, "gs", m)
            if key not in _memo:
                q, sc = fidelity.gptq_qn_fixed(w, hess[n], 12, fidelity.tensor_step(w, m))
                _memo[key] = (fidelity.qn_dequant(q, sc), gz(fidelity.qn_pack(q, sc, 12)))
            out[n], g = _memo[key]
            gzbytes += g
            nbytes += w.size * 12 // 8 + w.size // 32 * 2
            continue
        if proj_mode[:2] in ("gq", "rq"):  # gq10 = GPTQ 10-bit QN; gq10.10.9.9.9.9 = per layer
            per = [int(b) for b in proj_mode[2:].split(".")]
            bits = per[layer] if len(per) > 1 else per[0]
            bits = next((b for kn, b in kind_bits.items() if kn + ".weight" in n), bits)
            out[n], g = qn_tensor(n, w, bits, 32, hess[n] if proj_mode[0] == "g" else None)
            gzbytes += g
            nbytes += w.size * bits // 8 + w.size // 32 * 2
            continue
        if proj_mode.startswith("int"):  # int10 = all layers 10-bit; int10.10.8.8.8.8 = per layer
            per = [int(b) for b in proj_mode[3:].split(".")]
            bits = per[layer] if len(per) > 1 else per[0]
            out[n] = fidelity.qn_rtn_dequant(w, bits)
            nbytes += w.size * bits // 8 + w.size // 32 * 4
            continue
        if proj_mode == "rtn":
            q, s = fidelity.q8_rtn(w)
        elif proj_mode == "rtn16":
            q, s = fidelity.q8_rtn(w, 16)
            out[n] = fidelity.q8_dequant(q, s, 16)
            nbytes += w.size + s.size * 4
            continue
        elif proj_mode == "gptq":
            q, s = fidelity.gptq_q8(w, hess[n])
        elif proj_mode == "gptqao":
            q, s = fidelity.gptq_q8_actorder(w, hess[n])
        elif proj_mode == "f16":
            out[n] = w.astype(np.float16).astype(np.float32)
            nbytes += w.size * 2
            continue
        else:
            raise SystemExit(f"unknown projection mode {proj_mode}")
        out[n] = fidelity.q8_dequant(q, s)
        nbytes += w.size + s.size * 4
    e = "embeddings.word_embeddings.weight"
    w = W[e]
    if emb_mode == "q8":
        q, s = fidelity.q8_rtn(w)
        out[e] = fidelity.q8_dequant(q, s)
        nbytes += w.size + s.size * 4
    elif emb_mode == "f32":
        nbytes += w.size * 4
    elif emb_mode == "f16":
        out[e] = w.astype(np.float16).astype(np.float32)
        nbytes += w.size * 2
    elif emb_mode.startswith("l"):  # l127.h256 = block max / 127 (12-bit container), 256 largest rows max / 2047
        lv, _, hot = emb_mode[1:].partition(".h")
        levels = np.full(w.shape[0], float(lv))
        if hot:
            levels[fidelity.hot_rows(w, int(hot))] = 2047.0
        sc = fidelity.qn_level_scales(w, 12, levels)
        q = fidelity.qn_with_scales(w, 12, sc)
        out[e] = fidelity.qn_dequant(q, sc)
        gzbytes += gz(fidelity.qn_pack(q, sc, 12))
        nbytes += w.size * 12 // 8 + w.size // 32 * 2
    elif emb_mode.startswith("s"):  # s66 = fixed step median-row-RMS / 66, 12-bit; s66.h1024: 1024 largest rows finest
        m, _, hot = emb_mode[1:].partition(".h")
        q, sc = fidelity.qn_fixed(w, 12, fidelity.embed_step(w, float(m), int(hot or 0)))
        out[e] = fidelity.qn_dequant(q, sc)
        gzbytes += gz(fidelity.qn_pack(q, sc, 12))
        nbytes += w.size * 12 // 8 + w.size // 32 * 2
    elif emb_mode.startswith("e"):  # e8 = 8-bit QN, blocks of 32; e8b384 = blocks of 384 (one per row)
        bits, blk = (emb_mode[1:].split("b") + ["32"])[:2]
        out[e], g = qn_tensor(e, w, int(bits), int(blk))
        gzbytes += g
        nbytes += w.size * int(bits) // 8 + w.size // int(blk) * 2
    elif emb_mode.startswith("int"):
        bits = int(emb_mode[3:])
        out[e] = fidelity.qn_rtn_dequant(w, bits)
        nbytes += w.size * bits // 8 + w.size // 32 * 4
    elif emb_mode.startswith("q") and emb_mode[1:].split("b")[0].isdigit():
        bits, blk = emb_mode[1:].split("b") if "b" in emb_mode else (emb_mode[1:], "32")
        out[e] = fidelity.qk_embed_dequant(*fidelity.qk_embed(w, int(bits), int(blk)), int(bits), int(blk))
        nbytes += fidelity.qk_embed_nbytes(w.shape, int(bits), int(blk))
    else:
        raise SystemExit(f"unknown embedding mode {emb_mode}")
    return out, nbytes, gzbytes


def hf_model(W, cfg_dir):
    m = BertModel.from_pretrained(cfg_dir, attn_implementation="eager").eval()
    sd = {k: torch.from_numpy(np.ascontiguousarray(v, dtype=np.float32)) for k, v in W.items()}
    missing, unexpected = m.load_state_dict(sd, strict=False)
    assert not [k for k in missing if "pooler" not in k], missing
    return m


def attentions(m, items):
    out = []
    with torch.no_grad():
        for it in items:
            r = m(input_ids=torch.tensor([it["ids"]]), token_type_ids=torch.tensor([it["type_ids"]]),
                  output_attentions=True)
            out.append(np.stack([a[0].numpy() for a in r.attentions]))
    return out


def main():
    src = make_models.need_minilm()
    d = convert.find_model_dir(src)
    cfg = convert.stage_config(d)
    sd = convert.read_weights(d)[0]
    W = {k: np.asarray(v, dtype=np.float32) for k, v in convert.normalize_names(sd).items()}
    items = fidelity.load_corpus(os.path.join(ROOT, "tests/corpus/fidelity.jsonl"))
    if os.environ.get("SIM_LIMIT"):
        items = items[: int(os.environ["SIM_LIMIT"])]
    if os.environ.get("SIM_IDS"):  # a comma-separated list of corpus ids
        want = set(os.environ["SIM_IDS"].split(","))
        items = [it for it in items if it["id"] in want]
    ref = attentions(hf_model(W, d), items)
    hess = None
    variants = sys.argv[1:] or ["rtn+q8", "gptq+q8", "gptq+f32"]
    print(f"| variant | max \\|Δ\\| (worst input) | inputs > 0.02 | inputs > 0.01 | mean \\|Δ\\| (worst) "
          f"| argmax (worst) | argmax (all rows) | weight bytes | weight bytes, zlib -9 |", flush=True)
    for v in variants:
        if ("gptq" in v or v.startswith("gq") or v.startswith("gs")) and hess is None:
            if os.path.exists("/tmp/fid_hess.npz"):
                hess = dict(np.load("/tmp/fid_hess.npz"))
            else:
                t = time.time()
                hess = calib_hessians(W, cfg)
                np.savez("/tmp/fid_hess.npz", **hess)
                print(f"(calibration: {time.time() - t:.1f} s)", file=sys.stderr)
        t = time.time()
        Wv, nbytes, gzbytes = make_variant(v, W, cfg, hess)
        tq = time.time() - t
        got = attentions(hf_model(Wv, d), items)
        figs = [fidelity.attention_figures(r, g) for r, g in zip(ref, got)]
        mx = np.array([f[0] for f in figs])
        mn = np.array([f[1] for f in figs])
        ag = np.array([f[2] for f in figs])
        rows = np.array([r.shape[0] * r.shape[1] * r.shape[2] for r in ref])
        worst = int(mx.argmax())
        if os.environ.get("SIM_WORST"):  # write the ids of this variant's inputs, worst first, with their max
            with open(os.environ["SIM_WORST"] + "." + v, "w") as f:
                for i in np.argsort(-mx, kind="stable"):
                    f.write(f"{items[i]['id']} {mx[i]:.5f} {len(items[i]['ids'])}\n")
        print(f"| {v} | {mx.max():.4f} ({items[worst]['id']}) | {(mx > 0.02).sum()} | {(mx > 0.01).sum()} "
              f"| {mn.max():.2e} | {ag.min() * 100:.2f} % | {(ag * rows).sum() / rows.sum() * 100:.3f} % "
              f"| {nbytes} | {gzbytes} |  (quantize {tq:.1f} s)", flush=True)


if __name__ == "__main__":
    main()
