#!/usr/bin/env python3
"""Unit tests of the bertlens Python package (python/bertlens), run against
the built wheel (imported from the zip: what pip installs), with numpy
inputs; torch tensors too where torch is installed.

    make wheel && python3 tests/notebook/test_package.py -v
    BERTLENS_WHEEL=path/to.whl python3 tests/notebook/test_package.py

The snapshot each output carries is read back here with a reader written
from web/js/lib/snapshot.js's format comment; tests/web/notebook_snapshot.test.mjs
reads the same snapshots with the page's own decoder.
"""
from __future__ import annotations

import base64
import glob
import html as htmllib
import json
import os
import re
import struct
import sys
import unittest
import zlib

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WHEEL = os.environ.get("BERTLENS_WHEEL") or max(glob.glob(os.path.join(ROOT, "build", "wheel", "bertlens-*.whl")),
                                                 key=os.path.getmtime, default=None)
if not WHEEL or not os.path.isfile(WHEEL):
    sys.exit("no wheel: run `make wheel` first (or set BERTLENS_WHEEL)")
sys.path.insert(0, WHEEL)
import bertlens  # noqa: E402
from bertlens import AttentionError  # noqa: E402
from bertlens import _html  # noqa: E402

try:
    import torch  # type: ignore
except ImportError:  # CI: numpy only
    torch = None

RNG = np.random.default_rng(7)


def softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def attention(L=2, H=3, T=5, causal=False, dtype=np.float32):
    out = []
    for _ in range(L):
        x = RNG.normal(size=(1, H, T, T)) * 2
        if causal:
            x[..., np.triu(np.ones((T, T), dtype=bool), k=1)] = -np.inf
        out.append(softmax(x).astype(dtype))
    return out


TOKENS = ["[CLS]", "the", "cat", "##s", "[SEP]"]


def snapshot_of(html: str) -> dict:
    """Read back the snapshot an output carries (format: web/js/lib/snapshot.js)."""
    m = re.search(r'<script type="application/json" class="bertlens-snapshot">(.*?)</script>', html, re.S)
    assert m, "no snapshot in the output"
    text = json.loads(m.group(1))["s"]
    raw = zlib.decompress(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)), -15)
    body, crc = raw[:-4], struct.unpack("<I", raw[-4:])[0]
    assert zlib.crc32(body) & 0xFFFFFFFF == crc, "CRC"
    assert body[:3] == b"BLS"
    version = body[3]
    n = 4
    if version == 1:
        T = body[n]
        n += 1
    else:
        assert version == 2
        (T,) = struct.unpack_from("<H", body, n)
        n += 2
    L, H, d = body[n], body[n + 1], body[n + 2]
    n += 3
    (M,) = struct.unpack_from("<I", body, n)
    n += 4
    meta = json.loads(body[n:n + M].decode("utf-8"))
    n += M
    (A,) = struct.unpack_from("<H", body, n)
    n += 2
    pairs = [(body[n + 2 * i], body[n + 2 * i + 1]) for i in range(A)]
    n += 2 * A
    blocks = {}
    for p in pairs:
        blocks[p] = np.frombuffer(body, np.uint8, T * T, n).reshape(T, T) / 255.0
        n += T * T
    (N,) = struct.unpack_from("<H", body, n)
    n += 2
    assert N == 0, "no norm blocks"
    assert body[n] == 0, "no q/k"
    n += 1
    assert n == len(body), "nothing follows"
    return {"version": version, "T": T, "L": L, "H": H, "d": d, "meta": meta, "blocks": blocks, "text": text}


def snapshot_of_qk(html: str) -> dict:
    """snapshot_of, for an output that carries one head's q/k vectors."""
    m = re.search(r'<script type="application/json" class="bertlens-snapshot">(.*?)</script>', html, re.S)
    text = json.loads(m.group(1))["s"]
    raw = zlib.decompress(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)), -15)
    body = raw[:-4]
    T, L, H, d = body[4], body[5], body[6], body[7]
    (M,) = struct.unpack_from("<I", body, 8)
    meta = json.loads(body[12:12 + M])
    n = 12 + M
    (A,) = struct.unpack_from("<H", body, n)
    n += 2 + 2 * A + A * T * T
    (N,) = struct.unpack_from("<H", body, n)
    n += 2
    assert N == 0 and body[n] == 1, "one head's q/k"
    layer, head = body[n + 1], body[n + 2]
    n += 3
    out = {}
    for name in ("q", "k"):
        scale = np.empty(T, np.float32)
        vals = np.empty((T, d), np.float32)
        for t in range(T):
            (scale[t],) = struct.unpack_from("<f", body, n)
            vals[t] = np.frombuffer(body, np.int8, d, n + 4) * scale[t]
            n += 4 + d
        out[name] = (vals, scale)
    assert n == len(body)
    return {"meta": meta, "d": d, "qk": {"layer": layer, "head": head, **out}}


def pages(html: str) -> int:
    """How many copies of the page an output carries."""
    return html.count('<script type="application/octet-stream" data-bertlens-page=')


def ret(fn, *a, **k) -> str:
    return fn(*a, html_action="return", **k).data


class Inputs(unittest.TestCase):
    def test_numpy_head_view_carries_every_layer_and_head_to_8_bits(self):
        att = attention(L=2, H=3, T=5)
        snap = snapshot_of(ret(bertlens.head_view, att, TOKENS))
        self.assertEqual((snap["version"], snap["T"], snap["L"], snap["H"]), (1, 5, 2, 3))
        self.assertEqual(sorted(snap["blocks"]), [(l, h) for l in range(2) for h in range(3)])
        for (l, h), b in snap["blocks"].items():
            self.assertLessEqual(np.abs(b - att[l][0, h]).max(), 0.5 / 255 + 1e-9)
        meta = snap["meta"]
        self.assertEqual(meta["tokens"], TOKENS)
        self.assertEqual(meta["state"]["view"], "head")
        self.assertEqual(meta["word_ids"], [-1, 0, 1, 1, -1])
        self.assertEqual(meta["state"]["text"], "the cats")

    def test_model_view_state_and_float64_and_list_inputs(self):
        att = [a.astype(np.float64).tolist() for a in attention(L=3, H=2, T=5)]
        snap = snapshot_of(ret(bertlens.model_view, att, TOKENS))
        self.assertEqual(snap["meta"]["state"]["view"], "model")
        self.assertEqual(snap["meta"]["state"]["theme"], "dark")  # BertViz's model_view default
        self.assertEqual((snap["L"], snap["H"]), (3, 2))

    def test_sentence_pairs(self):
        snap = snapshot_of(ret(bertlens.head_view, attention(), TOKENS, sentence_b_start=2))
        self.assertEqual(snap["meta"]["type_ids"], [0, 0, 1, 1, 1])
        self.assertEqual(snap["meta"]["n_a"], 2)
        self.assertEqual((snap["meta"]["state"]["text"], snap["meta"]["state"]["text_b"]), ("the", "cats"))
        for bad in (0, 5, -1, "2", True):
            with self.subTest(bad=bad), self.assertRaisesRegex(AttentionError, "sentence_b_start"):
                bertlens.head_view(attention(), TOKENS, sentence_b_start=bad, html_action="return")

    def test_include_layers_and_heads_are_numbered_from_0_and_said(self):
        att = attention(L=4, H=5, T=5)
        html = ret(bertlens.model_view, att, TOKENS, include_layers=[3, 1], include_heads=[4, 0])
        snap = snapshot_of(html)
        self.assertEqual((snap["L"], snap["H"]), (2, 2))
        # layer 1 of the output is the model's layer 3, head 1 its head 4
        self.assertLessEqual(np.abs(snap["blocks"][(1, 1)] - att[3][0, 4]).max(), 0.5 / 255 + 1e-9)
        caption = htmllib.unescape(re.search(r'class="bertlens-caption"[^>]*>([^<]*)<', html).group(1))
        self.assertIn("layers 0–1 shown are the model's layers 1, 3", caption)
        self.assertIn("heads 0–1 shown are its heads 0, 4", caption)
        hv = snapshot_of(ret(bertlens.head_view, att, TOKENS, include_layers=[2, 3], layer=3, heads=[1, 4]))
        self.assertEqual(hv["meta"]["state"]["layer"], 1)
        self.assertEqual(hv["meta"]["state"]["heads"], [1, 4])
        for kw, msg in (({"include_layers": [4]}, "include_layers names layer 4"), ({"include_layers": []}, "empty"),
                        ({"include_layers": [1, 1]}, "twice"), ({"include_heads": [5]}, "include_heads names head 5")):
            with self.subTest(kw=kw), self.assertRaisesRegex(AttentionError, msg):
                bertlens.model_view(att, TOKENS, html_action="return", **kw)
        with self.assertRaisesRegex(AttentionError, "layer 0 is not among"):
            bertlens.head_view(att, TOKENS, include_layers=[2, 3], layer=0, html_action="return")

    def test_word_ids_from_the_tokenizer(self):
        snap = snapshot_of(ret(bertlens.head_view, attention(), TOKENS, word_ids=[None, 0, 1, 1, None]))
        self.assertEqual(snap["meta"]["word_ids"], [-1, 0, 1, 1, -1])
        with self.assertRaisesRegex(AttentionError, "word_ids has 2 entries for 5 tokens"):
            bertlens.head_view(attention(), TOKENS, word_ids=[0, 1], html_action="return")

    def test_piece_styles(self):
        for toks, ids, text in (
            (["<s>", "The", "Ġcaf", "Ã©", "Ġsat", "</s>"], [-1, 0, 1, 1, 2, -1], "The café sat"),
            (["▁The", "▁cat", "s", "▁sat", "</s>", "<pad>"], [0, 1, 1, 2, -1, -1], "The cats sat"),
        ):
            snap = snapshot_of(ret(bertlens.head_view, attention(T=len(toks)), toks))
            self.assertEqual(snap["meta"]["word_ids"], ids)
            self.assertEqual(snap["meta"]["state"]["text"], text)


class Errors(unittest.TestCase):
    def check(self, msg, *a, **k):
        with self.assertRaisesRegex(AttentionError, msg):
            bertlens.head_view(*a, html_action="return", **k)

    def test_shapes(self):
        good = attention(L=2, H=3, T=5)
        self.check("attention is required", None, TOKENS)
        self.check("one array per layer", np.stack(good), TOKENS)
        self.check("list or tuple", {"a": 1}, TOKENS)
        self.check("attention is empty", [], TOKENS)
        self.check("holds None", [None, None], TOKENS)
        self.check(r"shape \(3, 5, 5\); expected 4 dimensions", [good[0][0]], TOKENS)
        self.check("must be square", [np.zeros((1, 3, 5, 4))], TOKENS)
        self.check("every layer must match", [good[0], good[1][:, :2]], TOKENS)
        self.check("batch of 2", [np.concatenate([good[0], good[0]])], TOKENS)
        self.check("not numbers", [np.full((1, 1, 5, 5), "x")], TOKENS)
        self.assertTrue(issubclass(AttentionError, ValueError))

    def test_tokens(self):
        att = attention(T=5)
        self.check("tokens are required", att, None)
        self.check("has 5 positions but 4 tokens", att, TOKENS[:4])
        self.check("not one string", att, "the cat")
        self.check("token 2 is 3", att, ["a", "b", 3, "d", "e"])

    def test_values(self):
        att = attention(T=5)
        for bad, msg in ((np.nan, "holds nan"), (np.inf, "holds inf"), (3.5, "not \\[0, 1\\]"), (-2.0, "not \\[0, 1\\]")):
            a = [x.copy() for x in att]
            a[1][0, 2, 3, 1] = bad
            with self.subTest(bad=bad):
                self.check(msg, a, TOKENS)
        a = [x.copy() for x in att]
        a[1][0, 2, 3, 1] = np.nan
        self.check(r"layer 1's attention holds nan \(head 2, query 3, key 1\)", a, TOKENS)

    def test_token_limit_and_budget(self):
        T = bertlens.MAX_TOKENS + 1
        with self.assertRaisesRegex(AttentionError, "1025 tokens; bertlens draws at most 1024"):
            bertlens.head_view([np.zeros((1, 1, T, T), np.float32)], ["x"] * T, html_action="return")
        T = 600
        big = [np.zeros((1, 12, T, T), np.float32)] * 10  # 43 M weights: over the page's budget
        with self.assertRaisesRegex(AttentionError, "pass include_layers= or include_heads="):
            bertlens.model_view(big, ["x"] * T, html_action="return")

    def test_arguments(self):
        with self.assertRaisesRegex(AttentionError, "html_action"):
            bertlens.head_view(attention(), TOKENS, html_action="show")
        with self.assertRaisesRegex(AttentionError, "display_mode"):
            bertlens.model_view(attention(), TOKENS, display_mode="blue", html_action="return")
        with self.assertRaisesRegex(AttentionError, "not both"):
            bertlens.head_view(attention(), TOKENS, encoder_attention=attention(), html_action="return")
        with self.assertRaisesRegex(AttentionError, "cross_attention alone"):
            bertlens.head_view(cross_attention=[np.zeros((1, 1, 2, 3))], html_action="return")


class Causal(unittest.TestCase):
    def test_causal_masks_are_detected(self):
        toks = ["The", "Ġcat", "Ġsat", "Ġon", "Ġit"]
        html = ret(bertlens.head_view, attention(T=5, causal=True), toks)
        self.assertIn("causal attention", html)
        self.assertIs(snapshot_of(html)["meta"].get("causal"), True, "the page hears of it (its heatmap draws the mask)")
        self.assertNotIn("causal", snapshot_of(ret(bertlens.head_view, attention(T=5), toks))["meta"])
        self.assertNotIn("causal attention", ret(bertlens.head_view, attention(T=5), toks))
        # one weight above the diagonal anywhere: not causal
        a = attention(T=5, causal=True)
        a[1][0, 2, 0, 4] = 0.01
        self.assertNotIn("causal attention", ret(bertlens.head_view, a, toks))
        # a single token is not called causal
        self.assertNotIn("causal attention", ret(bertlens.head_view, [np.ones((1, 2, 1, 1), np.float32)], ["x"]))


class Neuron(unittest.TestCase):
    def qk(self, T=6, H=3, L=2, d=8, causal=False):
        q = [RNG.normal(size=(1, H, T, d)).astype(np.float32) for _ in range(L)]
        k = [RNG.normal(size=(1, H, T, d)).astype(np.float32) for _ in range(L)]
        att = []
        for l in range(L):
            s = np.einsum("bhtd,bhsd->bhts", q[l], k[l]) / np.sqrt(d)
            if causal:
                s[..., np.triu(np.ones((T, T), dtype=bool), k=1)] = -np.inf
            att.append(softmax(s).astype(np.float32))
        return att, q, k

    def test_queries_and_keys_travel_for_the_head_explained(self):
        att, q, k = self.qk()
        toks = ["[CLS]", "a", "b", "c", "d", "[SEP]"]
        snap = snapshot_of_qk(ret(bertlens.neuron_view, att, toks, q, k, layer=1, head=2))
        self.assertEqual(snap["meta"]["state"]["view"], "neuron")
        self.assertEqual((snap["meta"]["state"]["layer"], snap["meta"]["state"]["head"]), (1, 2))
        self.assertEqual((snap["qk"]["layer"], snap["qk"]["head"], snap["d"]), (1, 2, 8))
        for name, want in (("q", q[1][0, 2]), ("k", k[1][0, 2])):
            got, scale = snap["qk"][name]
            self.assertTrue(np.all(np.abs(got - want) <= scale[:, None] / 2 + 1e-6), name)
        # the chosen layer's vectors alone, and a causal model
        att, q, k = self.qk(causal=True)
        ret(bertlens.neuron_view, att, toks, q[0], k[0], layer=0, head=0)

    def test_vectors_that_are_not_this_attention_are_refused(self):
        att, q, k = self.qk()
        toks = ["x"] * 6
        with self.assertRaisesRegex(AttentionError, "differs from its attention"):
            bertlens.neuron_view(att, toks, q, [x * 3 for x in k], layer=0, head=1, html_action="return")
        with self.assertRaisesRegex(AttentionError, "has shape"):
            bertlens.neuron_view(att, toks, [x[:, :2] for x in q], k, html_action="return")
        with self.assertRaisesRegex(AttentionError, "queries has 1 layers"):
            bertlens.neuron_view(att, toks, q[:1], k, html_action="return")
        with self.assertRaisesRegex(AttentionError, "head 3 is not one"):
            bertlens.neuron_view(att, toks, q, k, head=3, html_action="return")


class LongInputs(unittest.TestCase):
    def test_long_inputs_use_version_2(self):
        T = 300
        att = attention(L=1, H=2, T=T, causal=True)
        snap = snapshot_of(ret(bertlens.head_view, att, [f"t{i}" for i in range(T)]))
        self.assertEqual((snap["version"], snap["T"]), (2, 300))
        self.assertLessEqual(np.abs(snap["blocks"][(0, 1)] - att[0][0, 1]).max(), 0.5 / 255 + 1e-9)

    def test_1024_tokens_fit_one_output(self):
        T = 1024
        att = attention(L=1, H=4, T=T, causal=True)
        html = ret(bertlens.head_view, att, ["x"] * T)
        self.assertLessEqual(len(html.encode()), 3_000_000)
        self.assertEqual(snapshot_of(html)["T"], 1024)


class Output(unittest.TestCase):
    def tearDown(self):
        bertlens.configure(assets="auto")

    def test_root_element_and_page(self):
        html = ret(bertlens.head_view, attention(), TOKENS)
        self.assertRegex(html, r'^<div class="bertlens-output" id="bertlens-[0-9a-f]{32}" data-state="loading"')
        self.assertEqual(pages(html), 1, "outside a notebook front end every output carries the page")
        self.assertLessEqual(len(html.encode()), 3_000_000)
        self.assertIn("<iframe", html)

    def test_page_shared_once_per_notebook_where_cells_are_named(self):
        cells = iter(["cell-a", "cell-b", "cell-a", "cell-c"])
        orig = _html._cell_id
        _html._cell_id = lambda: next(cells)
        try:
            bertlens.configure(assets="auto")
            outs = [ret(bertlens.head_view, attention(), TOKENS) for _ in range(4)]
        finally:
            _html._cell_id = orig
        carried = [pages(o) for o in outs]
        # cell a carries it, b does not, a re-run of a carries it again, c does not
        self.assertEqual(carried, [1, 0, 1, 0])
        self.assertLess(len(outs[1]), 20_000, "a second output costs its snapshot and the loader")
        bertlens.configure(assets="inline")
        self.assertEqual(pages(ret(bertlens.head_view, attention(), TOKENS)), 1)

    def test_user_text_is_never_markup(self):
        toks = ["[CLS]", "</script><script>alert(1)</script>", "<b>", "[SEP]"]
        html = ret(bertlens.head_view, attention(T=4), toks, model_name="<img src=x onerror=alert(1)>")
        self.assertNotIn("<script>alert", html)
        self.assertNotIn("<img", html)
        self.assertEqual(snapshot_of(html)["meta"]["tokens"], toks)

    def test_configure(self):
        with self.assertRaises(ValueError):
            bertlens.configure(assets="sometimes")
        with self.assertRaises(ValueError):
            bertlens.configure(height=-3)
        bertlens.configure(height=500)
        self.assertIn("height:500px", ret(bertlens.head_view, attention(), TOKENS))
        bertlens.configure(height=0)

    def test_the_page_carries_the_analyses_module(self):
        # the heads overview and rollout tabs: the viewer computes them from
        # the snapshot with analyze.wasm (tests/web/notebook_analyses.test.mjs
        # checks its numbers); the snapshot says which tokens are special
        page = _html.asset_bytes("viewer.html").decode("utf-8")
        m = re.search(r'<script type="application/octet-stream" id="bertlens-analyze-wasm">([^<]*)</script>', page)
        self.assertTrue(m, "viewer.html carries build/wasm/analyze.wasm")
        wasm = base64.b64decode(m.group(1))
        self.assertEqual(wasm[:4], b"\0asm")
        for name in (b"blw_attn_analyze", b"blw_attn_rollout", b"blw_attn_compare"):
            self.assertIn(name, wasm)
        toks = ["[CLS]", "the", ",", "[SEP]", "it", "[SEP]"]
        meta = snapshot_of(ret(bertlens.head_view, attention(T=6), toks, sentence_b_start=4))["meta"]
        self.assertEqual(meta["special"], [True, False, False, True, False, True])

    def test_package_conventions(self):
        self.assertRegex(bertlens.__version__, r"^\d+\.\d+\.\d+")
        self.assertTrue(bertlens.head_view.__doc__ and bertlens.model_view.__doc__)
        self.assertIn("py.typed", os.listdir(os.path.dirname(bertlens.__file__)) if os.path.isdir(os.path.dirname(bertlens.__file__)) else
                      [n.split("/")[-1] for n in __import__("zipfile").ZipFile(WHEEL).namelist()])


DEFAULT_BUNDLE = os.path.join(ROOT, "models", next(m["file"] for m in json.load(open(os.path.join(ROOT, "models", "index.json")))["models"] if m["default"]))


class FakeDisplay:
    """IPython.display as show() uses it, recording what it sends (CI's
    python3 has no IPython; the notebook test runs the real one)."""

    def __enter__(self):
        import types
        self.shown, self.updates = [], []
        mod = types.ModuleType("IPython.display")

        class HTML:
            def __init__(self, data):
                self.data = data
        mod.HTML = HTML
        mod.display = lambda o, display_id=None: self.shown.append((display_id, o.data))
        mod.update_display = lambda o, display_id: self.updates.append((display_id, o.data))
        pkg = types.ModuleType("IPython")
        pkg.display = mod
        self.saved = {k: sys.modules.get(k) for k in ("IPython", "IPython.display")}
        sys.modules["IPython"], sys.modules["IPython.display"] = pkg, mod
        return self

    def __exit__(self, *exc):
        for k, v in self.saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v


class FakeColab:
    """A Colab runtime as the package sees it: Colab's kernel imports its
    google.colab package at start (bertlens looks for it in sys.modules;
    tests/notebook/colab.mjs imitates the browser side)."""

    def __enter__(self):
        import types
        self.saved = {k: sys.modules.get(k) for k in ("google", "google.colab")}
        # (a namespace package google, e.g. protobuf's, may be there already)
        self.pkg = self.saved["google"] or types.ModuleType("google")
        self.had = hasattr(self.pkg, "colab")
        colab = types.ModuleType("google.colab")
        if not self.had:
            self.pkg.colab = colab
        sys.modules["google"], sys.modules["google.colab"] = self.pkg, colab
        return self

    def __exit__(self, *exc):
        if not self.had:
            del self.pkg.colab
        for k, v in self.saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v


def live_cfg(html: str) -> dict:
    return json.loads(re.search(r"var cfg = (\{.*?\});\n", html).group(1))


class Show(unittest.TestCase):
    def test_models_that_cannot_load_are_refused_before_drawing(self):
        import tempfile
        from bertlens import ModelError
        tmp = tempfile.mkdtemp()
        with FakeDisplay() as d:
            cases = [("missing.blb.gz", None, "no such file"), ("notes.txt", b"hello, not a model", "not a bertlens bundle"),
                     ("cut.blb.gz", None, "cut or damaged|does not decompress"), ("flip.blb", None, "checksum")]
            raw = __import__("gzip").decompress(open(DEFAULT_BUNDLE, "rb").read())
            for name, data, msg in cases:
                path = os.path.join(tmp, name)
                if name == "cut.blb.gz":
                    data = __import__("gzip").compress(raw[: len(raw) // 2], 1)
                if name == "flip.blb":
                    data = bytearray(raw[:200_000])
                    data[40] ^= 1
                    data = bytes(data)
                if data is not None:
                    open(path, "wb").write(data)
                with self.subTest(name=name), self.assertRaisesRegex(ModelError, msg):
                    bertlens.show(path, "text", wait=0)
            os.mkdir(os.path.join(tmp, "ckpt"))
            with self.assertRaisesRegex(ModelError, "no config.json"):
                bertlens.show(os.path.join(tmp, "ckpt"), "text", wait=0)
            open(os.path.join(tmp, "ckpt", "config.json"), "w").write("{}")
            with self.assertRaisesRegex(ModelError, "no .safetensors"):
                bertlens.show(os.path.join(tmp, "ckpt"), "text", wait=0)
            with self.assertRaisesRegex(ModelError, "not a file or folder here"):
                bertlens.show("bert-base-uncased", "text", wait=0)
            with self.assertRaisesRegex(ValueError, "view must be one of"):
                bertlens.show(DEFAULT_BUNDLE, "text", view="graph", wait=0)
            with self.assertRaisesRegex(ValueError, "unknown state colour="):
                bertlens.show(DEFAULT_BUNDLE, "text", colour="red", wait=0)
            with self.assertRaisesRegex(ValueError, "non-empty"):
                bertlens.show(DEFAULT_BUNDLE, "  ", wait=0)
            self.assertEqual(d.shown, [], "nothing drawn")

    def test_typed_text_and_file_names_are_never_markup(self):
        import tempfile
        tmp = tempfile.mkdtemp()
        path = os.path.join(tmp, "<img src=x onerror=alert(1)><!--.blb.gz")
        os.symlink(DEFAULT_BUNDLE, path)
        with FakeDisplay() as d:
            bertlens.show(path, "</script><script>alert(1)</script>", "<!-- b", wait=0)
        live = d.shown[0][1]
        scripts = re.findall(r"<script[^>]*>(.*?)</script>", live, re.S)
        self.assertEqual(len(scripts), 2, "the page block and the loader, each whole")
        self.assertNotIn("<script>alert", live)
        self.assertNotIn("<img", live)
        self.assertNotIn("<!--", live)
        cfg = json.loads(re.search(r"var cfg = (\{.*?\});\n", live).group(1))
        self.assertIn("text=%3C%2Fscript%3E", cfg["notebook"]["search"])
        self.assertEqual(cfg["live"]["name"], os.path.basename(path))

    def test_the_kernel_serves_the_model_and_keeps_the_page_snapshots(self):
        import urllib.error
        import urllib.request
        with FakeDisplay() as d:
            bertlens.show(DEFAULT_BUNDLE, "The cat sat.", "A pair.", view="head", layer=2, hide=True, wait=0)
        (live_id, live), (kept_id, kept) = d.shown
        self.assertIsNone(live_id)
        self.assertIn('data-state="loading"', live)
        cfg = json.loads(re.search(r"var cfg = (\{.*?\});\n", live).group(1))
        self.assertEqual(kept_id, f"{cfg['id']}-snapshot")
        self.assertIn("text=The+cat+sat.", cfg["notebook"]["search"])
        self.assertIn("text_b=A+pair.", cfg["notebook"]["search"])
        self.assertIn("layer=2", cfg["notebook"]["search"])
        self.assertIn("hide=1", cfg["notebook"]["search"])
        live_cfg = cfg["live"]
        url = f"{live_cfg['base']}/model/{live_cfg['model']}/{live_cfg['files'][0]['name']}"
        self.assertTrue(url.startswith("http://127.0.0.1:"))
        with urllib.request.urlopen(url) as r:
            self.assertEqual(r.read(), open(DEFAULT_BUNDLE, "rb").read())
            self.assertEqual(r.headers["Access-Control-Allow-Origin"], "*")
        wrong = url.replace(live_cfg["base"].rsplit("/", 1)[1], "x" * 32)
        with self.assertRaises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(wrong)
        self.assertEqual(e.exception.code, 404)
        post = urllib.request.Request(f"{live_cfg['base']}/snapshot/{cfg['id']}", data=b"AbC_-9", method="POST",
                                      headers={"Content-Type": "text/plain"})
        # (the output's own update_display: the one show() was called with)
        urllib.request.urlopen(post).close()
        self.assertEqual([u[0] for u in d.updates], [kept_id])
        self.assertIn('{"s": "AbC_-9"}', d.updates[0][1])
        bad = urllib.request.Request(post.full_url, data=b"<script>", method="POST")
        with self.assertRaises(urllib.error.HTTPError):
            urllib.request.urlopen(bad)
        self.assertEqual(len(d.updates), 1, "only snapshot text is kept")


    def test_colab_is_detected_and_its_outputs_reach_the_kernel_through_its_proxy(self):
        from bertlens import _show
        self.assertFalse(_show.in_colab())
        cells = iter(["cell-a", "cell-b", "cell-a", "cell-b"])
        orig = _html._cell_id
        _html._cell_id = lambda: next(cells)
        saved, assets = dict(_html.SETTINGS.sent), _html.SETTINGS.assets
        try:
            bertlens.configure(assets="auto")
            _html.SETTINGS.sent.clear()
            with FakeDisplay() as d:
                bertlens.show(DEFAULT_BUNDLE, "The cat sat.", wait=0)
                bertlens.show(DEFAULT_BUNDLE, "The cat sat.", wait=0)
            _html.SETTINGS.sent.clear()
            with FakeColab(), FakeDisplay() as c:
                self.assertTrue(_show.in_colab())
                bertlens.show(DEFAULT_BUNDLE, "The cat sat.", wait=0)
                bertlens.show(DEFAULT_BUNDLE, "The cat sat.", wait=0)
        finally:
            _html._cell_id = orig
            _html.SETTINGS.sent.clear()
            _html.SETTINGS.sent.update(saved)
            bertlens.configure(assets=assets)
        self.assertFalse(_show.in_colab())
        elsewhere = [live_cfg(d.shown[0][1]), live_cfg(d.shown[2][1])]
        colab = [live_cfg(c.shown[0][1]), live_cfg(c.shown[2][1])]
        # elsewhere: the browser fetches 127.0.0.1 itself; the page once per notebook
        self.assertNotIn("colab", elsewhere[0]["live"])
        self.assertEqual([pages(d.shown[0][1]), pages(d.shown[2][1])], [1, 0])
        # Colab: the port and the secret path, for google.colab.kernel.proxyPort;
        # the page in every output (each is a frame of its own)
        for cfg in colab:
            base = cfg["live"]["base"]
            self.assertEqual(cfg["live"]["colab"], {"port": int(base.split(":")[2].split("/")[0]), "path": base.rsplit("/", 1)[1]})
            self.assertGreaterEqual(len(cfg["live"]["colab"]["path"]), 32)
        self.assertEqual([pages(c.shown[0][1]), pages(c.shown[2][1])], [1, 1])
        # whatever the setting: no Colab output can see another's page
        bertlens.configure(assets="shared")
        try:
            with FakeColab():
                shared = [ret(bertlens.head_view, attention(), TOKENS) for _ in range(2)]
            plain = [ret(bertlens.head_view, attention(), TOKENS) for _ in range(2)]
        finally:
            bertlens.configure(assets=assets)
        self.assertEqual([pages(o) for o in shared], [1, 1])
        self.assertEqual(pages(plain[1]), 0, "elsewhere 'shared' carries it once")
        self.assertIn("proxyPort", c.shown[0][1])
        self.assertIn("setIframeHeight", c.shown[0][1])

    def test_the_kernel_answers_requests_through_a_proxy(self):
        # Colab's proxy forwards the output frame's requests: another Host,
        # the output frame's Origin, maybe its cookies (credentials: include).
        import urllib.error
        import urllib.request
        with FakeColab(), FakeDisplay() as d:
            bertlens.show(DEFAULT_BUNDLE, "The cat sat.", wait=0)
        cfg = live_cfg(d.shown[0][1])
        live = cfg["live"]
        origin = "https://abc123-colab.googleusercontent.com"
        via = {"Host": f"{live['colab']['port']}-m-s-xyz.prod.colab.dev", "Origin": origin, "X-Forwarded-For": "10.0.0.2"}
        url = f"{live['base']}/model/{live['model']}/{live['files'][0]['name']}"
        with urllib.request.urlopen(urllib.request.Request(url, headers=via)) as r:
            self.assertEqual(r.read(), open(DEFAULT_BUNDLE, "rb").read())
            self.assertEqual(r.headers["Access-Control-Allow-Origin"], origin)
            self.assertEqual(r.headers["Access-Control-Allow-Credentials"], "true")
            self.assertIn("Origin", r.headers["Vary"])
        pre = urllib.request.Request(f"{live['base']}/snapshot/{cfg['id']}", method="OPTIONS", headers=dict(via, **{
            "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type"}))
        with urllib.request.urlopen(pre) as r:
            self.assertEqual(r.status, 204)
            self.assertEqual(r.headers["Access-Control-Allow-Origin"], origin)
        post = urllib.request.Request(f"{live['base']}/snapshot/{cfg['id']}", data=b"Colab_-1", method="POST",
                                      headers=dict(via, **{"Content-Type": "text/plain"}))
        with urllib.request.urlopen(post) as r:
            self.assertEqual(r.status, 204)
            self.assertEqual(r.headers["Access-Control-Allow-Origin"], origin)
        self.assertEqual(d.updates, [(f"{cfg['id']}-snapshot", d.updates[0][1])])
        self.assertIn('{"s": "Colab_-1"}', d.updates[0][1])
        # the path stays the secret, whoever forwards the request
        with self.assertRaises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(urllib.request.Request(url.replace(live["colab"]["path"], "y" * 32), headers=via))
        self.assertEqual(e.exception.code, 404)

@unittest.skipIf(torch is None, "torch is not installed (numpy inputs are tested above)")
class Torch(unittest.TestCase):
    def test_torch_tensors_any_dtype(self):
        att = attention(L=2, H=3, T=5)
        for dtype in (torch.float32, torch.float16, torch.bfloat16):
            tens = tuple(torch.tensor(a).to(dtype).requires_grad_(dtype != torch.bfloat16 or True) for a in att)
            with self.subTest(dtype=dtype):
                snap = snapshot_of(ret(bertlens.head_view, tens, TOKENS))
                tol = 0.5 / 255 + (1e-3 if dtype == torch.float16 else 5e-3 if dtype == torch.bfloat16 else 1e-9)
                self.assertLessEqual(np.abs(snap["blocks"][(1, 2)] - att[1][0, 2]).max(), tol)

    def test_torch_errors(self):
        t = torch.zeros((1, 2, 5, 5))
        t[0, 1, 2, 2] = float("nan")
        with self.assertRaisesRegex(AttentionError, "holds nan"):
            bertlens.head_view((t,), TOKENS, html_action="return")


if __name__ == "__main__":
    result = unittest.main(exit=False).result
    # make test's one line of totals (tools/test_count.mjs)
    counts = os.environ.get("BERTLENS_COUNTS") or os.path.join(ROOT, "build", "test-counts.jsonl")
    os.makedirs(os.path.dirname(counts), exist_ok=True)
    failed = len(result.failures) + len(result.errors)
    with open(counts, "a", encoding="utf-8") as f:
        f.write(json.dumps({"suite": "notebook", "pass": result.testsRun - failed - len(result.skipped),
                            "fail": failed, "skip": len(result.skipped)}) + "\n")
    sys.exit(0 if result.wasSuccessful() else 1)
