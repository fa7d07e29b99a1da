"""bertlens in a notebook: BertViz's ``head_view``/``model_view`` calls drawn
with bertlens's own views, from any model's attention.

    from bertlens import head_view, model_view, show
    head_view(outputs.attentions, tokens)
    show("all-minilm-l6-v2.q10.blb.gz", "The cat sat on the mat.")   # the page's own engine

Each output carries a snapshot of the numbers it draws (8-bit) and the
bertlens page (once per notebook where the front end allows), so a notebook
exported with ``jupyter nbconvert --to html`` draws offline, with no kernel.
Depends on numpy only; PyPI-free of any model code.
"""
from __future__ import annotations

from typing import Optional

from ._attention import MAX_TOKENS, AttentionError
from ._html import SETTINGS, AssetsMissing
from ._show import ModelError, show
from ._views import HTML, head_view, model_view, neuron_view

__version__ = "0.1.0"

__all__ = ["head_view", "model_view", "neuron_view", "show", "configure", "AttentionError", "ModelError", "AssetsMissing", "HTML",
           "MAX_TOKENS", "__version__"]


def configure(assets: Optional[str] = None, height: Optional[int] = None, max_height: Optional[int] = None) -> None:
    """Output settings for this kernel session.

    Args:
        assets: where the bertlens page (about 400 KB) goes: ``'auto'``
            (default: once per notebook in JupyterLab and Notebook 7, which
            name the running cell; in every output elsewhere), ``'inline'``
            (every output carries it: any output can be copied or shown
            alone) or ``'shared'`` (once per kernel session; on Colab, where
            each output is a frame of its own, every output carries the page).
        height: a fixed frame height in CSS pixels; ``0`` fits the frame to
            the page (the default), up to ``max_height``.
        max_height: the tallest a fitted frame grows (CSS pixels).
    """
    if assets is not None:
        if assets not in ("auto", "inline", "shared"):
            raise ValueError(f"assets must be 'auto', 'inline' or 'shared', not {assets!r}")
        SETTINGS.assets = assets
        SETTINGS.sent.clear()
    if height is not None:
        if not isinstance(height, int) or height < 0:
            raise ValueError(f"height must be a number of pixels (0: fit), not {height!r}")
        SETTINGS.height = height or None
    if max_height is not None:
        if not isinstance(max_height, int) or max_height < 100:
            raise ValueError(f"max_height must be at least 100 pixels, not {max_height!r}")
        SETTINGS.max_height = max_height
