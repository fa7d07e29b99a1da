"""head_view and model_view: BertViz's calls, drawn by bertlens's page."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

from ._attention import Attention, AttentionError, check_attention
from ._html import output_html
from ._snapshot import encode, guess_word_ids, pack, text_of


class HTML:
    """An HTML output (what IPython.display.HTML is, without needing IPython):
    ``.data`` holds the markup; notebooks show it through ``_repr_html_``."""

    def __init__(self, data: str) -> None:
        self.data = data

    def _repr_html_(self) -> str:
        return self.data

    def __repr__(self) -> str:
        return f"<bertlens.HTML output, {len(self.data):,} characters>"


def _display(obj: HTML) -> None:
    try:
        from IPython.display import display  # type: ignore
    except ImportError:
        raise RuntimeError("html_action='view' shows the output in a notebook (IPython); "
                           "outside one use html_action='return' and write .data to a file") from None
    display(obj)


def _segments(T: int, sentence_b_start: Optional[int]) -> "tuple[List[int], Optional[int]]":
    if sentence_b_start is None:
        return [0] * T, None
    if isinstance(sentence_b_start, bool) or not isinstance(sentence_b_start, int) and not hasattr(sentence_b_start, "__index__"):
        raise AttentionError(f"sentence_b_start must be a token index, not {sentence_b_start!r}")
    b = int(sentence_b_start.__index__())
    if not 0 < b < T:
        raise AttentionError(f"sentence_b_start is {b}; it must be a token index from 1 to {T - 1}")
    return [0] * b + [1] * (T - b), b


def _word_ids(tokens: Sequence[str], word_ids: Optional[Sequence[Optional[int]]]) -> List[int]:
    if word_ids is None:
        return guess_word_ids(tokens)
    ids = list(word_ids)
    if len(ids) != len(tokens):
        raise AttentionError(f"word_ids has {len(ids)} entries for {len(tokens)} tokens")
    out = []
    for i, w in enumerate(ids):
        if w is None:
            out.append(-1)
        elif isinstance(w, bool) or not isinstance(w, int) or w < 0:
            raise AttentionError(f"word_ids[{i}] is {w!r}: a word index (>= 0) or None")
        else:
            out.append(int(w))
    return out


def _caption(att: Attention) -> str:
    notes = []
    if att.layers != list(range(att.n_layers)):
        notes.append(f"layers 0–{len(att.layers) - 1} shown are the model's layers {', '.join(map(str, att.layers))}")
    if att.heads != list(range(att.n_heads)):
        notes.append(f"heads 0–{len(att.heads) - 1} shown are its heads {', '.join(map(str, att.heads))}")
    if att.causal:
        notes.append("causal attention: each token attends only to itself and earlier tokens (the cells above the "
                     "diagonal are masked, not weights of 0 the model chose)")
    return "; ".join(notes)


def _theme(display_mode: Optional[str], default: str) -> str:
    mode = default if display_mode is None else display_mode
    if mode not in ("light", "dark"):
        raise AttentionError(f"display_mode must be 'light' or 'dark', not {mode!r}")
    return mode


def render(view: str, att: Attention, *, sentence_b_start: Optional[int], layer: int = 0,
           heads: Optional[List[int]] = None, theme: str = "light", word_ids: Optional[Sequence[Optional[int]]] = None,
           model_name: Optional[str] = None, html_action: str = "view", head: int = 0,
           qk: Optional["tuple[int, int, Any, Any]"] = None) -> Optional[HTML]:
    """Snapshot + output for a checked attention (``view``: a page view id)."""
    if html_action not in ("view", "return"):
        raise AttentionError(f"html_action must be 'view' or 'return', not {html_action!r}")
    T = att.T
    type_ids, n_a = _segments(T, sentence_b_start)
    wids = _word_ids(att.tokens, word_ids)
    seg_a = [t for t, s in zip(att.tokens, type_ids) if s == 0]
    seg_b = [t for t, s in zip(att.tokens, type_ids) if s == 1]
    state: Dict[str, Any] = {
        "view": view, "layer": layer, "head": head, "mode": "attn", "text": text_of(seg_a), "text_b": text_of(seg_b),
        "model": "", "theme": theme, "heads": heads, "filter": "all",
    }
    model = {"id": "notebook", "name": model_name or "attention from Python", "bytes": 0}
    body = pack(att, state, model, type_ids, wids, n_a, qk)
    out = HTML(output_html(encode(body), title=f"bertlens {view} view", caption=_caption(att)))
    if html_action == "return":
        return out
    _display(out)
    return None


def _compact(att: Attention, chosen: Optional[Any], what: str, kept: List[int]) -> Optional[int]:
    """A layer/head number of the model, as numbered in the output (0..)."""
    if chosen is None:
        return None
    n = int(chosen)
    if n not in kept:
        raise AttentionError(f"{what} {n} is not among the {what}s shown ({', '.join(map(str, kept))})")
    return kept.index(n)


def head_view(attention: Any = None, tokens: Optional[Sequence[str]] = None, sentence_b_start: Optional[int] = None,
              prettify_tokens: bool = True, layer: Optional[int] = None, heads: Optional[Sequence[int]] = None,
              encoder_attention: Any = None, decoder_attention: Any = None, cross_attention: Any = None,
              encoder_tokens: Optional[Sequence[str]] = None, decoder_tokens: Optional[Sequence[str]] = None,
              include_layers: Optional[Sequence[int]] = None, html_action: str = "view", *,
              display_mode: Optional[str] = None, word_ids: Optional[Sequence[Optional[int]]] = None,
              model_name: Optional[str] = None) -> Optional[HTML]:
    """Draw bertlens's head view of ``attention`` (BertViz's ``head_view`` call).

    Args:
        attention: one array per layer, each ``[batch=1, heads, T, T]``, as
            ``transformers`` returns ``outputs.attentions`` (PyTorch tensors or
            numpy arrays). A decoder's causal mask is detected and said.
        tokens: the T token strings (``tokenizer.convert_ids_to_tokens(ids)``).
        sentence_b_start: index of sentence B's first token for a pair.
        prettify_tokens: accepted for BertViz's sake; the page always shows
            pieces as words spell them ("Ġthe" as " the").
        layer: the layer shown first (default the first one shown).
        heads: the heads selected first (default all).
        encoder_attention, decoder_attention, encoder_tokens, decoder_tokens:
            an encoder-decoder model's self-attention, drawn one after the
            other (cross-attention is not drawn: it is not square).
        include_layers: the layers to include (default all).
        html_action: ``'view'`` shows the output; ``'return'`` returns it
            (an object with ``.data``, the HTML).
        display_mode: ``'light'`` (default) or ``'dark'``.
        word_ids: the tokenizer's word index per token (``encoding.word_ids()``,
            None for special tokens); guessed from the pieces when omitted.
        model_name: the model's name, shown with the view.

    Raises:
        AttentionError (a ValueError): shapes, token count, NaN, T above 1,024,
        or more numbers than one output draws, before anything is drawn.
    """
    del prettify_tokens
    if attention is None and any(x is not None for x in (encoder_attention, decoder_attention, cross_attention)):
        return _encoder_decoder("head", locals())
    if any(x is not None for x in (encoder_attention, decoder_attention, cross_attention)):
        raise AttentionError("pass either attention= (self-attention) or encoder_attention=/decoder_attention=, not both")
    att = check_attention(attention, tokens, include_layers)
    lay = _compact(att, layer, "layer", att.layers) or 0
    hs = None
    if heads is not None:
        hs = sorted({int(h) for h in heads})
        bad = [h for h in hs if not 0 <= h < att.n_heads]
        if bad:
            raise AttentionError(f"heads names head {bad[0]}; the attention has heads 0 to {att.n_heads - 1}")
        if len(hs) == att.n_heads:
            hs = None
    return render("head", att, sentence_b_start=sentence_b_start, layer=lay, heads=hs,
                  theme=_theme(display_mode, "light"), word_ids=word_ids, model_name=model_name, html_action=html_action)


def model_view(attention: Any = None, tokens: Optional[Sequence[str]] = None, sentence_b_start: Optional[int] = None,
               prettify_tokens: bool = True, display_mode: str = "dark", encoder_attention: Any = None,
               decoder_attention: Any = None, cross_attention: Any = None,
               encoder_tokens: Optional[Sequence[str]] = None, decoder_tokens: Optional[Sequence[str]] = None,
               include_layers: Optional[Sequence[int]] = None, include_heads: Optional[Sequence[int]] = None,
               html_action: str = "view", *, word_ids: Optional[Sequence[Optional[int]]] = None,
               model_name: Optional[str] = None) -> Optional[HTML]:
    """Draw bertlens's model view of ``attention`` (BertViz's ``model_view`` call):
    every layer × head as a thumbnail; click one to open it.

    Args are those of :func:`head_view`, plus ``include_heads`` (the heads to
    include, default all) and ``display_mode`` (``'dark'`` by default, as in
    BertViz). Raises AttentionError as :func:`head_view` does.
    """
    del prettify_tokens
    if attention is None and any(x is not None for x in (encoder_attention, decoder_attention, cross_attention)):
        return _encoder_decoder("model", locals())
    if any(x is not None for x in (encoder_attention, decoder_attention, cross_attention)):
        raise AttentionError("pass either attention= (self-attention) or encoder_attention=/decoder_attention=, not both")
    att = check_attention(attention, tokens, include_layers, include_heads)
    return render("model", att, sentence_b_start=sentence_b_start, theme=_theme(display_mode, "dark"),
                  word_ids=word_ids, model_name=model_name, html_action=html_action)


def _vectors(x: Any, what: str, layer: int, n_layers: int, H: int, T: int) -> Any:
    """One layer's query or key vectors [H, T, d] from a list of L arrays
    [1, H, T, d] (or that layer's array alone)."""
    import numpy as np

    from ._attention import _to_numpy

    if isinstance(x, (list, tuple)):
        if len(x) != n_layers:
            raise AttentionError(f"{what} has {len(x)} layers, the attention {n_layers}")
        x = x[layer]
    a = _to_numpy(x, f"{what} of layer {layer}")
    if a.ndim == 4 and a.shape[0] == 1:
        a = a[0]
    if a.ndim != 3 or a.shape[0] != H or a.shape[1] != T:
        raise AttentionError(f"{what} of layer {layer} has shape {tuple(getattr(x, 'shape', a.shape))}; expected "
                             f"[1, {H}, {T}, head width] (one vector per head and token)")
    if not np.all(np.isfinite(a)):
        raise AttentionError(f"{what} of layer {layer} holds a NaN or infinite value")
    return a


def neuron_view(attention: Any, tokens: Optional[Sequence[str]], queries: Any, keys: Any, layer: int = 0,
                head: int = 0, sentence_b_start: Optional[int] = None, html_action: str = "view", *,
                display_mode: Optional[str] = None, word_ids: Optional[Sequence[Optional[int]]] = None,
                model_name: Optional[str] = None, tolerance: float = 2e-3) -> Optional[HTML]:
    """Draw bertlens's neuron view: how one head's attention is computed from
    its query and key vectors (q, k, q × k, q · k, / √d, softmax), for any
    model whose attention is softmax(q · k / √d) (a causal mask allowed).

    Args:
        attention, tokens, sentence_b_start: as for :func:`head_view`.
        queries, keys: the query and key vectors, one array per layer
            ``[1, heads, T, head width]`` (as the attention module computes
            them, after any rotary embedding), or the chosen layer's alone.
        layer, head: the head explained.
        tolerance: how far softmax(q · k / √d) may be from the given
            attention row (the model's own numbers: a model that adds
            position biases or scales otherwise is refused, not drawn wrong).

    Raises:
        AttentionError: as head_view, plus vectors of the wrong shape, or
        vectors whose softmax is not the attention given.
    """
    import numpy as np

    att = check_attention(attention, tokens)
    H, T = att.n_heads, att.T
    if not (isinstance(layer, int) and 0 <= layer < att.n_layers):
        raise AttentionError(f"layer {layer!r} is not one of the attention's layers 0 to {att.n_layers - 1}")
    if not (isinstance(head, int) and 0 <= head < H):
        raise AttentionError(f"head {head!r} is not one of the attention's heads 0 to {H - 1}")
    q = _vectors(queries, "queries", layer, att.n_layers, H, T)[head]
    k = _vectors(keys, "keys", layer, att.n_layers, H, T)[head]
    if q.shape != k.shape:
        raise AttentionError(f"queries have width {q.shape[1]}, keys {k.shape[1]}")
    scores = (q.astype(np.float64) @ k.astype(np.float64).T) / np.sqrt(q.shape[1])
    if att.causal:
        scores[np.triu(np.ones((T, T), dtype=bool), k=1)] = -np.inf
    e = np.exp(scores - scores.max(axis=1, keepdims=True))
    soft = e / e.sum(axis=1, keepdims=True)
    off = float(np.abs(soft - att.weights[layer][head]).max())
    if off > tolerance:
        raise AttentionError(f"softmax(q · k / √{q.shape[1]}) of layer {layer} head {head} differs from its attention "
                             f"by up to {off:.3g}: the neuron view would not show this model's numbers (pass the vectors "
                             "the attention is computed from, after any rotary embedding; models that add position "
                             "biases cannot be shown this way)")
    return render("neuron", att, sentence_b_start=sentence_b_start, layer=layer, head=head,
                  theme=_theme(display_mode, "light"), word_ids=word_ids, model_name=model_name,
                  html_action=html_action, qk=(layer, head, q, k))


def _encoder_decoder(view: str, args: Dict[str, Any]) -> Optional[HTML]:
    """An encoder-decoder model's self-attentions, one output each."""
    if args["cross_attention"] is not None and args["encoder_attention"] is None and args["decoder_attention"] is None:
        raise AttentionError("cross_attention alone is not drawn (it is not square); pass encoder_attention= or decoder_attention=")
    outs = []
    for part in ("encoder", "decoder"):
        attn = args[f"{part}_attention"]
        if attn is None:
            continue
        toks = args[f"{part}_tokens"]
        if toks is None:
            raise AttentionError(f"{part}_tokens are required with {part}_attention")
        att = check_attention(attn, toks, args.get("include_layers"), args.get("include_heads"))
        outs.append(render(view, att, sentence_b_start=None, theme=_theme(args.get("display_mode"), "dark" if view == "model" else "light"),
                           model_name=f"{args.get('model_name') or 'model'} ({part})", html_action="return"))
    if args["html_action"] == "return":
        return HTML("".join(o.data for o in outs if o is not None))
    if args["html_action"] != "view":
        raise AttentionError(f"html_action must be 'view' or 'return', not {args['html_action']!r}")
    for o in outs:
        if o is not None:
            _display(o)
    return None
