"""The HTML of one notebook output: a root element with ``data-state``, the
snapshot it draws, the page (once per notebook where the front end shares
outputs' documents), a small loader script (``_loader.js``) and an iframe.

The page is the site's own viewer page (``dist/viewer.html``, built by
``make site`` and copied into the package by ``make wheel``): the views drawn
in a notebook are the page's, not a copy.
"""
from __future__ import annotations

import base64
import gzip
import hashlib
import html
import json
import os
import sys
import uuid
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Dict, Optional, Tuple

#: How long (ms) an output waits for the output that carries the page.
WAIT_MS = 15000


class AssetsMissing(RuntimeError):
    """The package was built without the page (run ``make wheel``)."""


@dataclass
class Settings:
    """Output settings (:func:`bertlens.configure`)."""

    #: 'auto': the page once per notebook where outputs share one document and
    #: the front end names cells (JupyterLab, Notebook 7), in every output
    #: elsewhere (Colab, VS Code, nbclient); 'inline': in every output;
    #: 'shared': once per kernel session. On Colab, where each output is a
    #: frame of its own, every output carries it whatever the setting.
    assets: str = "auto"
    #: Frame height (CSS px); None: fit the page (up to max_height).
    height: Optional[int] = None
    max_height: int = 1400
    #: The height (CSS px) a view may grow to (the page's "screen").
    screen: int = 640
    # key of the page -> cell id that carried it (None: no cell id known)
    sent: Dict[str, Optional[str]] = field(default_factory=dict)


SETTINGS = Settings()


def asset_bytes(name: str) -> bytes:
    """A page file the wheel carries (bertlens/assets/, from dist/)."""
    p = resources.files(__package__).joinpath("assets").joinpath(name)
    if not p.is_file():
        raise AssetsMissing(f"bertlens was installed without its page (assets/{name} is missing); install the wheel "
                            "`make wheel` builds (build/wheel/), or run `make site` before `pip install .`")
    return p.read_bytes()


@lru_cache(maxsize=4)
def page_block(name: str = "viewer.html") -> Tuple[str, str]:
    """(key, base64 of gzip) of a page asset; key names its content."""
    data = asset_bytes(name)
    key = hashlib.sha256(data).hexdigest()[:16]
    packed = gzip.compress(data, compresslevel=9, mtime=0)
    return key, base64.b64encode(packed).decode("ascii")


def script_json(obj: object) -> str:
    """JSON safe inside a <script> element: every '<' written \\u003c (JSON
    has '<' only inside strings), so no text in it can close the element."""
    return json.dumps(obj).replace("<", "\\u003c")


@lru_cache(maxsize=1)
def loader_source() -> str:
    """_loader.js without its comment lines and indentation (every output
    carries it)."""
    text = resources.files(__package__).joinpath("_loader.js").read_text(encoding="utf-8")
    return "\n".join(line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("//"))


def _cell_id() -> Optional[str]:
    """The notebook cell being run, as JupyterLab and Notebook 7 name it in the
    execute request's metadata (None elsewhere)."""
    try:
        from IPython import get_ipython  # type: ignore

        ip = get_ipython()
        kernel = getattr(ip, "kernel", None)
        parent = kernel.get_parent() if kernel is not None and hasattr(kernel, "get_parent") else None
        cid = ((parent or {}).get("metadata") or {}).get("cellId")
        return cid if isinstance(cid, str) and cid else None
    except Exception:  # noqa: BLE001 - no IPython, or another kernel
        return None


def in_colab() -> bool:
    """Is the kernel a Colab runtime? (Colab's kernel imports its google.colab
    package at start; a local Jupyter, VS Code or nbclient kernel does not.)"""
    return "google.colab" in sys.modules


def carry_page(key: str) -> bool:
    """Does this output carry the page itself? (see Settings.assets)"""
    mode = SETTINGS.assets
    if mode == "inline" or in_colab():  # (Colab: no output sees another's page)
        return True
    cell = _cell_id()
    if mode == "auto" and cell is None:
        return True
    if key not in SETTINGS.sent:
        SETTINGS.sent[key] = cell
        return True
    # Re-running the cell that carried it replaces that output: carry it again.
    return cell is not None and SETTINGS.sent[key] == cell


def output_html(snapshot_text: str, *, title: str, caption: str = "", page: str = "viewer.html",
                carry: Optional[bool] = None, static: bool = True) -> str:
    """The output's HTML for a snapshot text (``_snapshot.encode``)."""
    key, block = page_block(page)
    if carry is None:
        carry = carry_page(key)
    oid = f"bertlens-{uuid.uuid4().hex}"
    cfg = {"id": oid, "key": key, "wait": WAIT_MS, "fit": SETTINGS.height is None, "maxHeight": SETTINGS.max_height,
           "notebook": {"static": static, "screen": SETTINGS.screen}}
    script = loader_source().replace("__CONFIG__", script_json(cfg))
    height = SETTINGS.height or 640
    parts = [
        f'<div class="bertlens-output" id="{oid}" data-state="loading" style="width:100%">',
        f'<div class="bertlens-caption" style="font:12px sans-serif;opacity:.75;margin:2px 0">{html.escape(caption)}</div>'
        if caption else "",
        '<div class="bertlens-note" style="font:13px sans-serif;padding:6px 0">bertlens: this output draws with '
        "JavaScript; run the cell (or trust the notebook) to see it.</div>",
        f'<iframe title="{html.escape(title)}" style="width:100%;height:{height}px;border:0;display:block" '
        'loading="eager"></iframe>',
        '<script type="application/json" class="bertlens-snapshot">'
        + script_json({"s": snapshot_text}) + "</script>",
        f'<script type="application/octet-stream" data-bertlens-page="{key}">{block}</script>' if carry else "",
        f"<script>{script}</script>",
        "</div>",
    ]
    return "".join(parts)
