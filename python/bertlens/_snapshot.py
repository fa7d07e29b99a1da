"""Attention as a bertlens snapshot: the page's own format for a view and the
numbers it draws without the model (web/js/lib/snapshot.js describes it byte
by byte; tests/web/notebook_snapshot.test.mjs decodes what this module writes
with the page's decoder).

Only what the notebook needs is written: attention blocks (8-bit), no norms,
no q/k vectors, and the meta JSON (state, model, tokens, type and word ids,
special-token flags). The heads overview and the rollout are computed from
these blocks by the viewer page (build/wasm/analyze.wasm: the engine's C).
"""
from __future__ import annotations

import base64
import json
import re
import struct
import zlib
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from ._attention import Attention, AttentionError

SNAPSHOT_VERSION = 1
#: Version 2: T in two bytes, above MAX_TOKENS_V1 tokens.
SNAPSHOT_VERSION_LONG = 2
#: Tokens a snapshot of version 1 holds (web/js/lib/snapshot.js MAX_TOKENS).
MAX_TOKENS_V1 = 64
# What the page reads from a notebook output (snapshot.js FILE_LIMITS):
#: tokens
MAX_FILE_TOKENS = 1024
#: floats it allocates to draw the snapshot (layers named × H × T²)
MAX_FILE_FLOATS = 1 << 25
#: bytes of the binary snapshot
MAX_FILE_INFLATED = (1 << 25) + (1 << 20)
#: characters of the text form
MAX_FILE_TEXT = 4 << 20

# Tokens a tokenizer's template adds, by their spelling ([CLS], <s>, <|endoftext|>).
_SPECIAL = re.compile(r"^(\[[A-Z_]+\]|<[^<>\s]{1,20}>|<\|[^|\s]{1,30}\|>)$")
_BYTE_SPACE = "\u0120"  # GPT-2's byte-level space
_METASPACE = "\u2581"  # SentencePiece's word start


def is_special(token: str) -> bool:
    """Does the token look like one a template adds ([CLS], </s>, <|endoftext|>)?"""
    return bool(_SPECIAL.match(token))


def _byte_table() -> Dict[str, int]:
    """GPT-2's byte alphabet: printable Latin-1 bytes stand for themselves,
    the other 68 bytes for U+0100 + their rank."""
    table: Dict[str, int] = {}
    n = 0
    for b in range(256):
        printable = 33 <= b <= 126 or 161 <= b <= 172 or 174 <= b <= 255
        table[chr(b) if printable else chr(256 + n)] = b
        if not printable:
            n += 1
    return table


_BYTE_OF = _byte_table()


def piece_style(tokens: Sequence[str]) -> str:
    """How the pieces spell words (as web/js/lib/tokens.js names it):
    'wordpiece' ("##" continues a word), 'byte-level' ("Ġ" starts one) or
    'metaspace' ("▁" starts one)."""
    plain = [t for t in tokens if not is_special(t)]
    if any(t.startswith("##") and len(t) > 2 for t in plain):
        return "wordpiece"
    if any(t.startswith(_BYTE_SPACE) for t in plain):
        return "byte-level"
    if any(t.startswith(_METASPACE) for t in plain):
        return "metaspace"
    return "wordpiece"


def _starts_word(t: str, style: str) -> bool:
    if style == "byte-level":
        return t[:1] in (_BYTE_SPACE, "\u010a", "\u0109")  # Ġ space, Ċ newline, ĉ tab
    if style == "metaspace":
        return t.startswith(_METASPACE)
    return not (t.startswith("##") and len(t) > 2)


def guess_word_ids(tokens: Sequence[str]) -> List[int]:
    """Word ids from the pieces' spelling, -1 for special tokens (the page
    merges subwords into words by them)."""
    style = piece_style(tokens)
    out: List[int] = []
    word = -1
    after_special = True
    for t in tokens:
        if is_special(t):
            out.append(-1)
            after_special = True
            continue
        if after_special or _starts_word(t, style):
            word += 1
        out.append(word)
        after_special = False
    return out


def text_of(tokens: Sequence[str]) -> str:
    """A readable text for the page's text box: the pieces joined as they
    spell words, special tokens left out."""
    style = piece_style(tokens)
    plain = [t for t in tokens if not is_special(t)]
    if style == "byte-level":
        data = bytearray()
        for ch in "".join(plain):
            b = _BYTE_OF.get(ch)
            data.extend([b] if b is not None else ch.encode("utf-8"))
        return data.decode("utf-8", errors="replace").strip()
    if style == "metaspace":
        return "".join(plain).replace(_METASPACE, " ").strip()
    out = ""
    for t in plain:
        out += t[2:] if t.startswith("##") and len(t) > 2 else (" " if out else "") + t
    return out


def _q255(a: np.ndarray) -> np.ndarray:
    """round(α·255) as the page's encoder rounds it (half up), clamped."""
    return np.clip(np.floor(a.astype(np.float64) * 255.0 + 0.5), 0, 255).astype(np.uint8)


def _qk_bytes(layer: int, head: int, q: np.ndarray, k: np.ndarray) -> bytes:
    """One head's query and key vectors ([T, d] each) as the snapshot stores
    them: per vector an f32 scale c = max|x| / 127, then d × i8 round(x / c)
    (rounded half up, as the page's encoder does)."""
    out = [bytes([1, layer, head])]
    for vecs in (q, k):
        v = vecs.astype(np.float32)
        scale = (np.abs(v).max(axis=1) / np.float32(127)).astype(np.float32)  # [T]
        safe = np.where(scale > 0, scale, 1).astype(np.float64)
        ints = np.clip(np.floor(v.astype(np.float64) / safe[:, None] + 0.5), -127, 127).astype(np.int8)
        ints[scale == 0] = 0
        rows = np.empty((v.shape[0], 4 + v.shape[1]), dtype=np.uint8)
        rows[:, :4] = scale.astype("<f4").view(np.uint8).reshape(-1, 4)
        rows[:, 4:] = ints.view(np.uint8)
        out.append(rows.tobytes())
    return b"".join(out)


def pack(att: Attention, state: Dict[str, Any], model: Dict[str, Any], type_ids: Sequence[int],
         word_ids: Sequence[int], n_a: Optional[int],
         qk: Optional["tuple[int, int, np.ndarray, np.ndarray]"] = None) -> bytes:
    """The binary snapshot (before compression) of every given layer and head,
    numbered 0.. in the order given; qk: (layer, head, q [T, d], k [T, d]) of
    one head, for the neuron view."""
    T = att.T
    L, H = len(att.weights), len(att.heads)
    if T > MAX_FILE_TOKENS:
        raise AttentionError(f"the input has {T} tokens; bertlens draws at most {MAX_FILE_TOKENS}")
    if L > 255 or H > 255:
        raise AttentionError(f"{L} layers × {H} heads: bertlens draws at most 255 of each")
    floats = L * H * T * T + (2 * H * T * qk[2].shape[1] if qk is not None else 0)
    if floats > MAX_FILE_FLOATS:
        fit = max(1, MAX_FILE_FLOATS // (T * T))
        raise AttentionError(f"{L} layers × {H} heads at {T} tokens is {floats:,} weights, more than the "
                             f"{MAX_FILE_FLOATS:,} one output draws (at {T} tokens, {fit} heads in all); "
                             "pass include_layers= or include_heads=")
    meta: Dict[str, Any] = {
        "state": state, "model": model, "tokens": list(att.tokens), "type_ids": [int(t) for t in type_ids],
        "word_ids": [int(w) for w in word_ids], "truncated": False,
    }
    if n_a is not None:
        meta["n_a"] = int(n_a)
    # the template's tokens by their spelling: the heads overview's [CLS] and
    # [SEP] roles (src/analysis/analyze.c bl_token_roles_text) and the page's words
    meta["special"] = [is_special(t) for t in att.tokens]
    if att.causal:
        meta["causal"] = True
    if att.heads != list(range(att.n_heads)) or att.layers != list(range(len(att.layers))):
        meta["partial"] = True  # a selection (include_*): no rollout, which needs every head of the first layers  # a decoder's masked keys (snapshot.js: views draw them as masked)
    if qk is not None:
        meta["scores"] = _scores(qk, T, att.causal)
    meta_bytes = json.dumps(meta, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    head = bytes([SNAPSHOT_VERSION, T]) if T <= MAX_TOKENS_V1 else bytes([SNAPSHOT_VERSION_LONG]) + struct.pack("<H", T)
    d = qk[2].shape[1] if qk is not None else 1
    if not 1 <= d <= 255:
        raise AttentionError(f"the query/key vectors have {d} dimensions; a snapshot holds 1 to 255")
    parts = [b"BLS", head, bytes([L, H, d]), struct.pack("<I", len(meta_bytes)), meta_bytes]
    parts.append(struct.pack("<H", L * H))
    parts.append(bytes(b for l in range(L) for h in range(H) for b in (l, h)))
    for w in att.weights:  # [H, T, T] per layer, row-major [query][key]
        parts.append(_q255(w).tobytes())
    parts.append(struct.pack("<H", 0))  # no norm blocks
    parts.append(_qk_bytes(*qk) if qk is not None else b"\x00")
    body = b"".join(parts)
    if len(body) > MAX_FILE_INFLATED:
        raise AttentionError(f"the snapshot would be {len(body):,} bytes, more than the page reads; "
                             "pass include_layers= or include_heads=")
    return body + struct.pack("<I", zlib.crc32(body) & 0xFFFFFFFF)


MAX_ALL_QUERIES = 128  # snapshot_scores.js: every query's scores are held up to this many tokens


def _scores(qk: "tuple[int, int, np.ndarray, np.ndarray]", T: int, causal: bool) -> Dict[str, Any]:
    """The neuron view's scores (snapshot_scores.js): q · k / √d of the head
    given, the one term they are, null at a causal mask's keys; every
    query's rows up to MAX_ALL_QUERIES tokens, else the first query's."""
    layer, head, q, k = qk
    s = (q.astype(np.float64) @ k.astype(np.float64).T) / np.sqrt(q.shape[1])
    rows = range(T) if T <= MAX_ALL_QUERIES else range(1)
    flat = [None if causal and j > i else float(f"{s[i, j]:.8g}") for i in rows for j in range(T)]
    return {
        "layer": layer, "head": head, "query": None if T <= MAX_ALL_QUERIES else 0, "window": -1,
        "terms": [{"name": "q·k/√d", "abbr": "q·k/√d",
                   "about": "the query's dot product with the key, over √d, of the vectors given in Python"}],
        "rows": [flat, list(flat)],
    }


def encode(body: bytes) -> str:
    """The text form: base64url (no padding) of the deflate-raw compression."""
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    raw = c.compress(body) + c.flush()
    text = base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")
    if len(text) > MAX_FILE_TEXT:
        raise AttentionError(f"the numbers take {len(text):,} bytes compressed, more than the {MAX_FILE_TEXT:,} an "
                             "output holds; pass include_layers= or include_heads=")
    return text
