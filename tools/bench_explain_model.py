#!/usr/bin/env python3
"""bench_explain_model.py — the bert-base-shaped sequence classifier that
tools/bench_explain.mjs explains (issue 34 item 5).

    python3 tools/bench_explain_model.py OUT_ROOT

Writes OUT_ROOT/bert-base-shape-cls/: tools/make_random_bert.py's
bert-base-shape checkpoint (12 layers x 12 heads x 768, intermediate 3072,
random weights) laid out as a BertForSequenceClassification folder: its
tensors under "bert.", plus a two-label classifier (classifier.weight [2][768]
and .bias [2], drawn from the same PCG64 stream scheme, large enough that the
classes differ) and id2label in config.json. numpy only; a folder that is
already complete for the same inputs is left alone.
"""
import hashlib
import json
import os
import struct
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_random_bert as mrb  # noqa: E402

NAME = "bert-base-shape-cls"
LABELS = {"0": "NEGATIVE", "1": "POSITIVE"}


def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    return header, data


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    root = sys.argv[1]
    src = mrb.make(root, "bert-base-shape")
    d = os.path.join(root, NAME)
    with open(os.path.join(src, "stamp.json")) as f:
        stamp = json.dumps({"src": f.read(), "script": hashlib.sha256(open(__file__, "rb").read()).hexdigest()})
    stamp_path = os.path.join(d, "stamp.json")
    if os.path.isfile(stamp_path) and open(stamp_path).read() == stamp:
        print(f"bench_explain_model: {d} is up to date")
        return
    os.makedirs(d, exist_ok=True)
    header, data = read_safetensors(os.path.join(src, "model.safetensors"))
    header.pop("__metadata__", None)
    H = mrb.SHAPES["bert-base-shape"]["hidden"]
    bitgen = np.random.PCG64(34_5)
    extra = [("classifier.weight", [2, H], mrb.noise(bitgen, 2 * H, 1.0 / np.sqrt(H))),
             ("classifier.bias", [2], mrb.noise(bitgen, 2, 0.1))]
    out, blobs, off = {}, [], 0
    for name, meta in sorted(header.items(), key=lambda kv: kv[1]["data_offsets"][0]):
        a, b = meta["data_offsets"]
        out["bert." + name] = {"dtype": meta["dtype"], "shape": meta["shape"], "data_offsets": [off, off + b - a]}
        blobs.append(data[a:b])
        off += b - a
    for name, dims, arr in extra:
        raw = arr.astype("<f4").tobytes()
        out[name] = {"dtype": "F32", "shape": dims, "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    out["__metadata__"] = {"format": "pt", "generator": "bertlens bench_explain_model"}
    hj = json.dumps(out, separators=(",", ":")).encode()
    hj += b" " * (-len(hj) % 8)
    with open(os.path.join(d, "model.safetensors.tmp"), "wb") as f:
        f.write(struct.pack("<Q", len(hj)))
        f.write(hj)
        for b in blobs:
            f.write(b)
    os.replace(os.path.join(d, "model.safetensors.tmp"), os.path.join(d, "model.safetensors"))
    cfg = mrb.config_json(mrb.SHAPES["bert-base-shape"])
    cfg["architectures"] = ["BertForSequenceClassification"]
    cfg["id2label"] = LABELS
    cfg["label2id"] = {v: int(k) for k, v in LABELS.items()}
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
        f.write("\n")
    for name in ("vocab.txt", "tokenizer_config.json"):
        with open(os.path.join(src, name), "rb") as a, open(os.path.join(d, name), "wb") as b:
            b.write(a.read())
    with open(stamp_path, "w") as f:
        f.write(stamp)
    print(f"bench_explain_model: wrote {d}")


if __name__ == "__main__":
    main()
