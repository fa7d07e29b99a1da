#!/usr/bin/env python3
"""The CLI and the converter against crafted models (issue 23 items 6 and 8).

  - Terminal escapes: strings from a bundle (source.name, source.license, a
    metadata key, a tensor name, a special token, the activation) and from a
    checkpoint (config.json strings, safetensors tensor names) never reach the
    terminal as control bytes: `info`, `tokenize`, `attend` and `convert`
    print them escaped (\\x1b, \\u009b), JSON stays valid JSON.
  - Gzip bombs: `info` on a .blb.gz that inflates past the size its header
    declares, or declares more than a bundle may be, is refused as "too large"
    within seconds, without inflating the rest.
  - Converter/loader agreement: for generated configs at and just past each
    limit of the loader (src/format/bundle.c), both converters (tools/convert.py and
    `bertlens convert`) refuse with the loader's words, or the bundle they
    write loads.

Binary: $BERTLENS_BIN (default build/bertlens). Needs numpy only.
"""
import gzip
import json
import os
import re
import resource
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
sys.path.insert(0, os.path.join(ROOT, "tests"))
import convert  # noqa: E402
from test_bundle import PROV, tiny_parts  # noqa: E402

BIN = os.environ.get("BERTLENS_BIN", os.path.join(ROOT, "build", "bertlens"))
TINY = os.path.join(ROOT, "tests", "fixtures", "tiny-bert")
TMP = tempfile.mkdtemp(prefix="bertlens-sec-")

# What a hostile string carries: set the window title (OSC 0), write the
# clipboard (OSC 52), clear the screen (CSI), an 8-bit CSI as UTF-8 (U+009B).
OSC_TITLE = "\x1b]0;pwned\x07"
OSC_CLIP = "\x1b]52;c;ZWNobyBoaQ==\x07"
CSI_CLEAR = "\x1b[2J"
C1_CSI = "\u009b31m"
RAW = (b"\x1b", b"\x07", b"\x9b")  # none of these bytes may be printed


def run(*args, timeout=60):
    return subprocess.run([BIN, *args], capture_output=True, timeout=timeout)


def write(name, data):
    p = os.path.join(TMP, name)
    with open(p, "wb") as f:
        f.write(data)
    return p


def assert_clean(tc, out, what):
    for b in RAW:
        i = out.find(b)
        tc.assertEqual(i, -1, f"{what}: raw control byte {b!r} printed: ...{out[max(0, i - 60):i + 40]!r}...")


def safetensors_add(path, name, like):
    """Add tensor `name` to a safetensors file, sharing the data of tensor `like`."""
    with open(path, "rb") as f:
        b = f.read()
    n = struct.unpack_from("<Q", b, 0)[0]
    h = json.loads(b[8 : 8 + n])
    h[name] = dict(h[like])
    hj = json.dumps(h).encode()
    hj += b" " * ((8 - len(hj) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hj)) + hj + b[8 + n :])


def checkpoint(name, cfg_edit=None, tc_edit=None):
    """A copy of tests/fixtures/tiny-bert with config.json / tokenizer_config.json edited."""
    d = os.path.join(TMP, name)
    shutil.rmtree(d, ignore_errors=True)
    shutil.copytree(TINY, d)
    for fname, edit in (("config.json", cfg_edit), ("tokenizer_config.json", tc_edit)):
        if edit:
            p = os.path.join(d, fname)
            with open(p, encoding="utf-8") as f:
                v = json.load(f)
            edit(v)
            with open(p, "w", encoding="utf-8") as f:
                json.dump(v, f)
    return d


class TerminalEscapes(unittest.TestCase):
    """Item 6: nothing from a bundle or checkpoint reaches the terminal as a control byte."""

    @classmethod
    def setUpClass(cls):
        cfg, tok, tensors = tiny_parts()
        tok = dict(tok)
        vocab = list(tok["vocab"])
        vocab[1] = "[UNK]" + CSI_CLEAR + C1_CSI  # the unknown token: printed for any unknown character
        tok["vocab"] = vocab
        tensors = tensors + [("evil" + OSC_TITLE + C1_CSI + ".weight", 0, (4,), b"\0" * 16)]
        prov = dict(PROV)
        prov["source.name"] = "evil/model" + OSC_TITLE
        prov["source.license"] = "MIT" + OSC_CLIP + C1_CSI
        prov["x.note" + CSI_CLEAR] = "bell\x07 tab\t newline\n del\x7f"
        cls.bundle = write("evil.blb", convert.build_bundle(cfg, tok, tensors, prov))

    def test_info_prints_bundle_strings_escaped(self):
        r = run("info", self.bundle)
        self.assertEqual(r.returncode, 0, r.stderr)
        assert_clean(self, r.stdout, "info")
        out = r.stdout.decode("utf-8")
        self.assertIn("source       evil/model\\x1b]0;pwned\\x07\n", out)
        self.assertIn("license      MIT\\x1b]52;c;ZWNobyBoaQ==\\x07\\u009b31m\n", out)
        self.assertRegex(out, r"\n  x\.note\\x1b\[2J +bell\\x07 tab\\x09 newline\\x0a del\\x7f\n")
        self.assertRegex(out, r"\n  evil\\x1b\]0;pwned\\x07\\u009b31m\.weight +f32 +\[4\] +16\n")
        # one line per entry: no newline from the bundle split a line
        self.assertEqual(len([l for l in out.split("\n") if l.startswith("  encoder.layer.")]), 32)

    def test_tokens_are_valid_json_without_controls(self):
        for args in (("tokenize", self.bundle, "the € cat"), ("attend", self.bundle, "the € cat")):
            r = run(*args)
            self.assertEqual(r.returncode, 0, r.stderr)
            assert_clean(self, r.stdout, args[0])
            toks = json.loads(r.stdout)["tokens"]
            self.assertEqual(toks[2], "[UNK]" + CSI_CLEAR + C1_CSI, args[0])  # JSON escapes decode to the token

    def test_loader_errors_escaped(self):
        cfg, tok, tensors = tiny_parts()
        cfg = dict(cfg, activation="gelu" + OSC_CLIP)
        p = write("evil-act.blb", convert.build_bundle(cfg, tok, tensors, PROV))
        r = run("info", p)
        self.assertEqual(r.returncode, 1)
        assert_clean(self, r.stderr, "loader error")
        self.assertIn(b"unsupported activation 'gelu\\x1b]52;c;ZWNobyBoaQ==\\x07'", r.stderr)

    def test_convert_prints_checkpoint_strings_escaped(self):
        # a tensor name with escapes: listed in the "skipped" log line
        d = checkpoint("evil-names")
        safetensors_add(os.path.join(d, "model.safetensors"), "cls.evil" + OSC_TITLE + C1_CSI,
                        "embeddings.LayerNorm.bias")
        out = os.path.join(TMP, "evil-names.blb")
        r = run("convert", d, out, "--name", "n" + OSC_TITLE)
        self.assertEqual(r.returncode, 0, r.stderr)
        assert_clean(self, r.stderr + r.stdout, "convert log")
        self.assertIn(b"skipped 1 tensors not used by the encoder: cls.evil\\x1b]0;pwned\\x07\\u009b31m", r.stderr)
        # config.json strings in the refusals
        cases = [
            (lambda c: c.update(model_type="bert" + OSC_CLIP), b"model_type is 'bert\\x1b]52;c;ZWNobyBoaQ==\\x07'"),
            (lambda c: c.update(hidden_act="gelu" + CSI_CLEAR + C1_CSI), b"unsupported hidden_act 'gelu\\x1b[2J\\u009b31m'"),
            (lambda c: c.update(architectures=["Bert" + OSC_TITLE], model_type="t5"), b"(Bert\\x1b]0;pwned\\x07)"),
        ]
        for k, (edit, want) in enumerate(cases):
            with self.subTest(k=k):
                d = checkpoint(f"evil-cfg-{k}", edit)
                r = run("convert", d, os.path.join(TMP, "x.blb"))
                self.assertEqual(r.returncode, 1, r.stderr)
                assert_clean(self, r.stderr + r.stdout, "convert error")
                self.assertIn(want, r.stderr)
        # a special token from tokenizer_config.json in a refusal
        d = checkpoint("evil-special", tc_edit=lambda t: t.update(cls_token="<s>" + OSC_CLIP))
        r = run("convert", d, os.path.join(TMP, "x.blb"))
        self.assertEqual(r.returncode, 1)
        assert_clean(self, r.stderr, "special token")
        self.assertIn(b"special token '<s>\\x1b]52;c;ZWNobyBoaQ==\\x07' (cls_token)", r.stderr)


def header(file_size):
    """A valid-looking 96-byte bundle header (magic, version, CRC) declaring file_size."""
    h = bytearray(96)
    h[0:8] = b"BERTLENS"
    struct.pack_into("<IIQQQQQQQ", h, 8, 1, 64, file_size, 96, 0, 96, 0, 128, max(file_size - 128, 0))
    struct.pack_into("<I", h, 92, zlib.crc32(bytes(h[:92])))
    return bytes(h)


def bomb(name, first, zero_members, member_mib=16):
    """gzip members: `first`, then zero_members x member_mib MiB of zeros
    (one compressed member repeated: ~16 KB each). zlib reads concatenated
    members as one stream."""
    zeros = gzip.compress(bytes(member_mib << 20), compresslevel=9, mtime=0)
    p = os.path.join(TMP, name)
    with open(p, "wb") as f:
        f.write(gzip.compress(first, mtime=0))
        for _ in range(zero_members):
            f.write(zeros)
    return p


class GzipBombs(unittest.TestCase):
    """Item 8: the CLI inflates at most the size the bundle's header declares."""

    def refused_quickly(self, path, pattern):
        # CPU time of the child (not wall time, which a loaded machine stretches)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        r = run("info", path, timeout=120)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        dt = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        err = r.stderr.decode("utf-8", "replace")
        self.assertEqual(r.returncode, 1, err)
        self.assertEqual(r.stdout, b"")
        self.assertRegex(err, pattern)
        self.assertLess(dt, 5.0, f"took {dt:.1f} s of CPU: inflated too much")
        return err

    def test_bomb_after_a_small_header(self):
        # 96-byte header declaring 4096 bytes, then 2 GiB of zeros (a 2 MB file)
        p = bomb("bomb.blb.gz", header(4096), 128)
        self.assertLess(os.path.getsize(p), 4 << 20)
        self.refused_quickly(p, r"too large: it inflates to more than the 4096 bytes its header says")

    def test_bomb_after_a_real_bundle(self):
        cfg, tok, tensors = tiny_parts()
        good = convert.build_bundle(cfg, tok, tensors, PROV)
        p = bomb("bomb2.blb.gz", good, 64)
        self.refused_quickly(p, rf"too large: it inflates to more than the {len(good)} bytes its header says")
        # the same bundle alone loads
        p = write("good.blb.gz", gzip.compress(good, mtime=0))
        self.assertEqual(run("info", p).returncode, 0)

    def test_declared_size_beyond_the_maximum(self):
        p = bomb("huge.blb.gz", header(1 << 40), 4)
        self.refused_quickly(p, r"too large: the header says the bundle is 1099511627776 bytes, more than the "
                                r"4294967296 a bundle may be")

    def test_memory_stayed_bounded(self):
        # every command this file ran was a child: none held more than a few tens of MB
        import resource
        p = bomb("bomb3.blb.gz", header(1 << 20), 64)
        self.refused_quickly(p, r"too large")
        peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        self.assertLess(peak_mb, 512, f"a child reached {peak_mb:.0f} MB")

# ------------------------------------------------------------- agreement
BASE = {"num_hidden_layers": 1, "num_attention_heads": 1, "hidden_size": 4, "intermediate_size": 4,
        "max_position_embeddings": 8, "type_vocab_size": 2, "vocab_size": 8, "layer_norm_eps": 1e-12}
BASE_VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b", "c"]


def write_checkpoint(d, cfg, weights_cfg=None, vocab=None, tokenizer_json=None):
    """A BERT checkpoint folder: config.json from cfg, f32 weights shaped by
    weights_cfg (default cfg), vocab.txt, optionally tokenizer.json."""
    import numpy as np
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    w = weights_cfg or cfg
    vocab = vocab or (BASE_VOCAB + [f"t{i}" for i in range(w["vocab_size"] - len(BASE_VOCAB))])[: w["vocab_size"]]
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump({"model_type": "bert", "architectures": ["BertModel"], "hidden_act": "gelu", **cfg}, f)
    with open(os.path.join(d, "vocab.txt"), "w", encoding="utf-8") as f:
        f.write("".join(t + "\n" for t in vocab))
    if tokenizer_json is not None:
        with open(os.path.join(d, "tokenizer.json"), "w") as f:
            json.dump(tokenizer_json, f)
    shapes = {"n_layers": w["num_hidden_layers"], "hidden": w["hidden_size"], "intermediate": w["intermediate_size"],
              "vocab_size": w["vocab_size"], "max_positions": w["max_position_embeddings"],
              "type_vocab_size": w["type_vocab_size"]}
    rng = np.random.default_rng(1)
    header, blobs, off = {}, [], 0
    for name, shape, _ in convert.canonical_names(shapes):
        a = (rng.standard_normal(shape) * 0.05).astype("<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(shape), "data_offsets": [off, off + len(a)]}
        blobs.append(a)
        off += len(a)
    hj = json.dumps(header).encode()
    hj += b" " * ((8 - len(hj) % 8) % 8)
    with open(os.path.join(d, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(hj)) + hj + b"".join(blobs))
    return d


# (config.json key, value, bundle key, the loader's range, real): real: the
# checkpoint's weights follow the config (small enough to convert); else
# only config.json changes and an accepted value fails later (on shapes).
INT_CASES = [
    ("num_hidden_layers", 0, "bert.n_layers", (1, 64), False), ("num_hidden_layers", 64, "bert.n_layers", (1, 64), True),
    ("num_hidden_layers", 65, "bert.n_layers", (1, 64), False), ("num_hidden_layers", 256, "bert.n_layers", (1, 64), False),
    ("num_attention_heads", 0, "bert.n_heads", (1, 128), False), ("num_attention_heads", 128, "bert.n_heads", (1, 128), True),
    ("num_attention_heads", 129, "bert.n_heads", (1, 128), False),
    ("hidden_size", 0, "bert.hidden", (1, 8192), False), ("hidden_size", 8192, "bert.hidden", (1, 8192), False),
    ("hidden_size", 8193, "bert.hidden", (1, 8192), False),
    ("intermediate_size", 0, "bert.intermediate", (1, 32768), False),
    ("intermediate_size", 32768, "bert.intermediate", (1, 32768), True),
    ("intermediate_size", 32769, "bert.intermediate", (1, 32768), False),
    ("max_position_embeddings", 0, "bert.max_positions", (1, 8192), False),
    ("max_position_embeddings", 8192, "bert.max_positions", (1, 8192), True),
    ("max_position_embeddings", 8193, "bert.max_positions", (1, 8192), False),
    ("type_vocab_size", 0, "bert.type_vocab_size", (1, 64), False), ("type_vocab_size", 1, "bert.type_vocab_size", (1, 64), True),
    ("type_vocab_size", 64, "bert.type_vocab_size", (1, 64), True), ("type_vocab_size", 65, "bert.type_vocab_size", (1, 64), False),
    ("vocab_size", 4, "bert.vocab_size", (5, 1000000), False), ("vocab_size", 5, "bert.vocab_size", (5, 1000000), True),
    ("vocab_size", 1000000, "bert.vocab_size", (5, 1000000), False),
    ("vocab_size", 1000001, "bert.vocab_size", (5, 1000000), False),
]
EPS_CASES = [(0, False), (1, False), (-1e-12, False), (1e-50, False), (0.99999999, False), (2.5, False),
             (1e-12, True), (1e-5, True), (0.5, True), (0.9999999, True)]
CHARS_CASES = [0, -3, 1, 100, 1000, 1001, 100000]


class ConverterLoaderAgreement(unittest.TestCase):
    """Item 8: for each generated config, tools/convert.py, `bertlens convert`
    and the loader agree: the converters refuse in the loader's words, or
    the bundle they write loads (and is the same bytes from both)."""

    def loader(self, edit=None, tok_edit=None, name="loader.blb"):
        """The loader's verdict on a bundle carrying the edited metadata
        (tensors of a tiny base model): (refused by a range check, message)."""
        cfg, tok, tensors = tiny_parts(layers=1, heads=1, hidden=32, inter=64, dtype="f32")
        cfg, tok = dict(cfg), dict(tok)
        if edit:
            edit(cfg)
        if tok_edit:
            tok_edit(tok)
        r = run("info", write(name, convert.build_bundle(cfg, tok, tensors, PROV)))
        err = r.stderr.decode("utf-8", "replace")
        return r.returncode != 0 and re.search(r"out of range|is not in \(0, 1\)|bytes long", err) is not None, err

    def converters(self, d, tag):
        """(Python refused, its message, C refused, its message); when both
        convert, the bundles are the same bytes and load."""
        import contextlib
        import io
        out_py, out_c = os.path.join(TMP, f"py-{tag}.blb"), os.path.join(TMP, f"c-{tag}.blb")
        log = io.StringIO()
        try:
            with contextlib.redirect_stderr(log):
                convert.convert(d, out_py, "f32", None, "agree", "MIT")
            py = None
        except convert.ConvertError as e:
            py = str(e)
        r = run("convert", d, out_c, "--dtype", "f32", "--name", "agree", "--license", "MIT")
        c = None if r.returncode == 0 else r.stderr.decode("utf-8", "replace")
        if py is None and c is None:
            with open(out_py, "rb") as f1, open(out_c, "rb") as f2:
                self.assertEqual(f1.read(), f2.read(), f"{tag}: C and Python bundles differ")
            info = run("info", out_c)
            self.assertEqual(info.returncode, 0, f"{tag}: converted, but the loader refuses it: {info.stderr}")
            return "converted", info.stdout.decode(), log.getvalue()
        self.assertIsNotNone(py, f"{tag}: C refused ({c}) but Python converted")
        self.assertIsNotNone(c, f"{tag}: Python refused ({py}) but C converted")
        return "refused", py, c

    def agree(self, tag, loader_refused, loader_err, d, words):
        """The converters refuse exactly when the loader does, in its words
        (loader_err None: a value the bundle cannot even hold)."""
        res = self.converters(d, tag)
        if loader_refused:
            if loader_err is not None:
                self.assertRegex(loader_err, words, f"{tag}: loader's words")
            self.assertEqual(res[0], "refused", f"{tag}: the loader refuses this value, the converters wrote a bundle")
            self.assertRegex(res[1], words, f"{tag}: Python's refusal is not in the loader's words")
            self.assertRegex(res[2], words, f"{tag}: C's refusal is not in the loader's words")
        elif res[0] == "refused":  # config only: an accepted value fails later, never on the range
            for m in res[1:]:
                self.assertNotRegex(m, r"out of range|is not in \(0, 1\)|bytes long", f"{tag}: refused a value the loader accepts")
        return res

    def test_config_limits(self):
        ck = {"n_layers": 0}
        for key, v, bkey, (lo, hi), real in INT_CASES:
            with self.subTest(key=key, v=v):
                mkey = {"num_hidden_layers": "n_layers", "num_attention_heads": "n_heads", "hidden_size": "hidden",
                        "intermediate_size": "intermediate", "max_position_embeddings": "max_positions"}.get(key, key)
                refused, err = self.loader(lambda c: c.update({mkey: v}))
                self.assertEqual(refused, not lo <= v <= hi, f"{key} {v}: loader: {err}")
                cfg = dict(BASE, **{key: v})
                if key == "num_attention_heads" and v > 0:
                    cfg["hidden_size"] = v  # hidden a multiple of the heads
                d = write_checkpoint(os.path.join(TMP, f"agree-{key}-{v}"), cfg, cfg if real else BASE)
                words = rf"{re.escape(bkey)}.*= {v} is out of range {lo}\.\.{hi}|= {v} is out of range {lo}\.\.{hi}.*{re.escape(bkey)}"
                res = self.agree(f"{key}={v}", refused, err, d, words)
                if real:
                    ck["n_layers"] += 1
                    self.assertEqual(res[0], "converted", res)
                    self.assertIn(f"  {bkey:<28} {v}\n", res[1])
        self.assertGreaterEqual(ck["n_layers"], 7, "real conversions at the limits")

    def test_layer_norm_eps(self):
        for e, ok in EPS_CASES:
            with self.subTest(eps=e):
                refused, err = self.loader(lambda c: c.update(ln_eps=e) if abs(e) < 1e38 else None)
                self.assertEqual(refused, not ok, f"eps {e}: loader: {err}")
                d = write_checkpoint(os.path.join(TMP, f"agree-eps-{e}"), dict(BASE, layer_norm_eps=e))
                self.agree(f"eps={e}", refused, err, d, r"bert\.ln_eps.*is not in \(0, 1\)|is not in \(0, 1\).*bert\.ln_eps")

    def test_max_chars_per_word(self):
        # Hugging Face's max_input_chars_per_word as it is (0: every word is
        # [UNK]); past 2^31-1 the same as 2^31-1 (no word is that long)
        for v in CHARS_CASES:
            with self.subTest(max_chars=v):
                stored = min(v, 2**31 - 1)
                if stored >= 0:
                    refused, err = self.loader(tok_edit=lambda t: t.update(max_chars_per_word=stored))
                else:  # a u32 cannot hold it
                    refused, err = True, None
                self.assertEqual(refused, stored < 0, f"max_chars {v}: loader: {err}")
                # BERT's own pipeline (as a BERT checkpoint's tokenizer.json has it), so both
                # converters take the WordPiece path and read only this setting from it
                tj = {"normalizer": {"type": "BertNormalizer"}, "pre_tokenizer": {"type": "BertPreTokenizer"},
                      "post_processor": {"type": "BertProcessing"},
                      "model": {"type": "WordPiece", "vocab": {}, "max_input_chars_per_word": v}}
                d = write_checkpoint(os.path.join(TMP, f"agree-chars-{v}"), BASE, tokenizer_json=tj)
                res = self.agree(f"max_chars={v}", refused, err, d,
                                 rf"max_chars_per_word.*= {stored} is out of range 0\.\.2147483647|= {stored} is out of range 0\.\.2147483647.*tokenizer\.max_chars_per_word")
                if not refused:
                    self.assertEqual(res[0], "converted", res)
                    self.assertIn(f"  tokenizer.max_chars_per_word {stored}\n", res[1])
        # above 1000 only when no vocabulary entry is above 1000 bytes: the
        # WordPiece search per character is the smaller of the two
        for v, n in ((1000, 1001), (1001, 1000), (1001, 1001)):
            with self.subTest(max_chars=v, entry_bytes=n):
                long_tok = "x" * n
                refused, err = self.loader(tok_edit=lambda t: t.update(max_chars_per_word=v, vocab=t["vocab"][:-1] + [long_tok]))
                self.assertEqual(refused, v > 1000 and n > 1000, f"max_chars {v}, entry of {n}: loader: {err}")
                tj = {"normalizer": {"type": "BertNormalizer"}, "pre_tokenizer": {"type": "BertPreTokenizer"},
                      "post_processor": {"type": "BertProcessing"},
                      "model": {"type": "WordPiece", "vocab": {}, "max_input_chars_per_word": v}}
                d = write_checkpoint(os.path.join(TMP, f"agree-chars-{v}-{n}"), BASE, vocab=BASE_VOCAB[:-1] + [long_tok],
                                     tokenizer_json=tj)
                res = self.agree(f"max_chars={v} entry={n}", refused, err, d,
                                 rf"max_chars_per_word.*= {v} is out of range 0\.\.1000 for a vocabulary with a {n}-byte entry|"
                                 rf"= {v} is out of range 0\.\.1000 for a vocabulary with a {n}-byte entry")
                if not refused:
                    self.assertEqual(res[0], "converted", res)

    def test_vocabulary_entry_length(self):
        for n in (4096, 4097):
            with self.subTest(bytes=n):
                long_tok = "é" * (n // 2) + "x" * (n % 2)  # n bytes of UTF-8
                refused, err = self.loader(tok_edit=lambda t: t.update(vocab=t["vocab"][:-1] + [long_tok]))
                self.assertEqual(refused, n > 4096, err)
                vocab = BASE_VOCAB[:-1] + [long_tok]
                d = write_checkpoint(os.path.join(TMP, f"agree-tok-{n}"), BASE, vocab=vocab)
                self.agree(f"token={n}", refused, err, d, rf"vocabulary entry \d+ is {n} bytes long \(at most 4096\)"
                           if refused else "")

    def test_f16_overflow(self):
        """A finite weight past float16's 65504 converted to f16: both converters
        refuse it naming the tensor (tools/convert.py wrote +inf, which the
        loader refuses: issue 31)."""
        d = write_checkpoint(os.path.join(TMP, "agree-f16"), BASE)
        f = os.path.join(d, "model.safetensors")
        b = bytearray(open(f, "rb").read())
        n = struct.unpack("<Q", b[:8])[0]
        h = json.loads(b[8:8 + n])
        name = "encoder.layer.0.output.dense.weight"
        struct.pack_into("<f", b, 8 + n + h[name]["data_offsets"][0], 1e5)
        open(f, "wb").write(bytes(b))
        want = rf"{re.escape(name)}: weight 100000 overflows float16 \(largest 65504\)"
        with self.assertRaisesRegex(convert.ConvertError, want):
            convert.convert(d, os.path.join(TMP, "py-f16.blb"), "f16", None, "agree", "MIT")
        r = run("convert", d, os.path.join(TMP, "c-f16.blb"), "--dtype", "f16", "--name", "agree", "--license", "MIT")
        self.assertNotEqual(r.returncode, 0)
        self.assertRegex(r.stderr.decode("utf-8", "replace"), want)

if __name__ == "__main__":
    try:
        unittest.main(verbosity=2)
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
