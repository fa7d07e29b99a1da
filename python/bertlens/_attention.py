"""Attention given by the caller, checked and brought into one shape.

What ``head_view``/``model_view`` accept is what ``transformers`` returns with
``output_attentions=True``: a list or tuple of L arrays, one per layer, each
``[batch, heads, T, T]`` (PyTorch tensors, numpy arrays, or anything
``numpy.asarray`` reads). Every check happens here, before anything is drawn,
and a failure is an :class:`AttentionError` (a ``ValueError``) that says what is
wrong in the caller's terms.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Optional, Sequence

import numpy as np

#: Longest input drawn (tokens). The page's views are laid out for up to 512
#: tokens of a live run; a notebook may hand in a decoder's 1,024.
MAX_TOKENS = 1024

#: How far a weight may stray outside [0, 1] (float16/bfloat16 rounding).
WEIGHT_SLACK = 1e-2


class AttentionError(ValueError):
    """The attention or tokens handed in cannot be drawn; the message says why."""


@dataclass
class Attention:
    """Checked attention: ``weights[l]`` is layer ``layers[l]``'s ``[H, T, T]``
    float32 array (batch item 0), ``heads`` the head numbers kept."""

    weights: List[np.ndarray]
    layers: List[int]
    heads: List[int]
    n_layers: int  # layers the model has (before include_layers)
    n_heads: int  # heads per layer the model has (before include_heads)
    tokens: List[str]
    causal: bool

    @property
    def T(self) -> int:
        return len(self.tokens)


def _to_numpy(x: Any, where: str) -> np.ndarray:
    """A tensor or array as a float32 numpy array, without importing torch."""
    if hasattr(x, "detach") and hasattr(x, "cpu"):  # a torch.Tensor (any device, any dtype)
        t = x.detach().cpu()
        if hasattr(t, "float"):
            t = t.float()  # bfloat16 has no numpy dtype
        x = t.numpy()
    try:
        a = np.asarray(x)
    except Exception as e:  # noqa: BLE001 - anything numpy cannot read
        raise AttentionError(f"{where} is not an array ({type(x).__name__}): {e}") from None
    if a.dtype == object or not (np.issubdtype(a.dtype, np.floating) or np.issubdtype(a.dtype, np.integer)):
        raise AttentionError(f"{where} holds {a.dtype} values, not numbers")
    return a.astype(np.float32, copy=False)


def _pick(what: str, chosen: Optional[Sequence[int]], n: int) -> List[int]:
    if chosen is None:
        return list(range(n))
    try:
        picked = [int(i) for i in chosen]
    except TypeError:
        raise AttentionError(f"include_{what} must be a list of {what[:-1]} numbers, not {chosen!r}") from None
    if not picked:
        raise AttentionError(f"include_{what} is empty: name at least one {what[:-1]}")
    bad = [i for i in picked if not 0 <= i < n]
    if bad:
        raise AttentionError(f"include_{what} names {what[:-1]} {bad[0]}, but the attention has {what} 0 to {n - 1}")
    if len(set(picked)) != len(picked):
        raise AttentionError(f"include_{what} names a {what[:-1]} twice: {picked}")
    return sorted(picked)


def check_tokens(tokens: Any, T: int) -> List[str]:
    """The token strings, one per attention position."""
    if tokens is None:
        raise AttentionError("tokens are required: one string per position, e.g. tokenizer.convert_ids_to_tokens(ids)")
    if isinstance(tokens, str):
        raise AttentionError("tokens must be a list of strings (one per position), not one string")
    if hasattr(tokens, "tolist") and not isinstance(tokens, list):
        tokens = tokens.tolist()
    toks = list(tokens)
    for i, t in enumerate(toks):
        if not isinstance(t, str):
            raise AttentionError(f"token {i} is {t!r} ({type(t).__name__}), not a string")
    if len(toks) != T:
        raise AttentionError(f"the attention has {T} positions but {len(toks)} tokens were given; "
                             "pass one token per position (special tokens included)")
    return toks


def is_causal(weights: Sequence[np.ndarray]) -> bool:
    """True when no query attends to a later key in any given head: a
    decoder's causal mask (the softmax of a masked score is exactly 0)."""
    T = weights[0].shape[-1]
    if T < 2:
        return False
    upper = np.triu(np.ones((T, T), dtype=bool), k=1)
    return all(not np.any(w[:, upper]) for w in weights)


def check_attention(attention: Any, tokens: Any, include_layers: Optional[Sequence[int]] = None,
                    include_heads: Optional[Sequence[int]] = None) -> Attention:
    """Check and convert ``attention`` (L arrays ``[batch, heads, T, T]``) and
    ``tokens``; raise :class:`AttentionError` for anything that cannot be drawn."""
    if attention is None:
        raise AttentionError("attention is required: the model's output.attentions (run it with output_attentions=True)")
    if hasattr(attention, "shape") and not isinstance(attention, (list, tuple)):
        raise AttentionError("attention must be a list or tuple with one array per layer (as transformers returns "
                             f"output.attentions), not one array of shape {tuple(attention.shape)}; "
                             "for a stacked [layers, batch, heads, T, T] array pass list(array)")
    if not isinstance(attention, (list, tuple)):
        raise AttentionError(f"attention must be a list or tuple of per-layer arrays, not {type(attention).__name__}")
    if len(attention) == 0:
        raise AttentionError("attention is empty: did the model run with output_attentions=True?")
    if any(a is None for a in attention):
        raise AttentionError("attention holds None: the model returned no attention weights "
                             "(run it with output_attentions=True and attn_implementation='eager')")
    shapes = []
    for l, a in enumerate(attention):
        shape = tuple(getattr(a, "shape", np.shape(a)))
        if len(shape) != 4:
            raise AttentionError(f"layer {l}'s attention has shape {shape}; expected 4 dimensions "
                                 "[batch, heads, T, T] as transformers returns them")
        shapes.append(shape)
    B, H, T, T2 = shapes[0]
    for l, s in enumerate(shapes):
        if s[2] != s[3]:
            raise AttentionError(f"layer {l}'s attention is {s[2]} × {s[3]}: self-attention must be square "
                                 "(cross-attention between two texts is not drawn)")
        if s != shapes[0]:
            raise AttentionError(f"layer {l}'s attention has shape {s}, layer 0's {shapes[0]}: every layer must match")
    if B < 1 or H < 1 or T < 1:
        raise AttentionError(f"the attention has shape {shapes[0]}: nothing to draw")
    if B != 1:
        raise AttentionError(f"the attention holds a batch of {B} inputs; pass one, e.g. [a[i:i+1] for a in attention]")
    if T > MAX_TOKENS:
        raise AttentionError(f"the input has {T} tokens; bertlens draws at most {MAX_TOKENS}")
    toks = check_tokens(tokens, T)
    layers = _pick("layers", include_layers, len(attention))
    heads = _pick("heads", include_heads, H)
    weights = []
    for l in layers:
        a = _to_numpy(attention[l], f"layer {l}'s attention")[0]
        if len(heads) != H:
            a = a[heads]
        if not np.all(np.isfinite(a)):
            bad = np.argwhere(~np.isfinite(a))[0]
            raise AttentionError(f"layer {l}'s attention holds {a[tuple(bad)]} (head {heads[bad[0]]}, "
                                 f"query {bad[1]}, key {bad[2]}): every weight must be a finite number")
        lo, hi = float(a.min()), float(a.max())
        if lo < -WEIGHT_SLACK or hi > 1 + WEIGHT_SLACK:
            raise AttentionError(f"layer {l}'s attention lies in [{lo:.3g}, {hi:.3g}], not [0, 1]: pass the "
                                 "softmax weights (output.attentions), not scores or logits")
        weights.append(np.clip(a, 0.0, 1.0))
    return Attention(weights=weights, layers=layers, heads=heads, n_layers=len(attention), n_heads=H,
                     tokens=toks, causal=is_causal(weights))
