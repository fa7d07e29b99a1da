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
    limit of the loader (src/bundle.c), both converters (tools/convert.py and
    `bertlens convert`) refuse with the loader's words, or the bundle they
    write loads.

Binary: $BERTLENS_BIN (default build/bertlens). Needs numpy only.
"""
import gzip
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
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
        t0 = time.monotonic()
        r = run("info", path, timeout=120)
        dt = time.monotonic() - t0
        err = r.stderr.decode("utf-8", "replace")
        self.assertEqual(r.returncode, 1, err)
        self.assertEqual(r.stdout, b"")
        self.assertRegex(err, pattern)
        self.assertLess(dt, 5.0, f"took {dt:.1f} s: inflated too much")
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

if __name__ == "__main__":
    try:
        unittest.main(verbosity=2)
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
