"""show(): bertlens's own page and engine (WebAssembly) in a notebook output,
on a bundle or a Hugging Face checkpoint folder the kernel hands it.

The kernel serves the model's bytes to the notebook's browser from a small
HTTP server on 127.0.0.1 (a random port, an unguessable path, only the files
show() was given); the output's loader fetches them and posts them to the
page (web/js/page/embed.js notebookFiles), which loads the bundle as an
opened file or converts the checkpoint folder as a dropped one.
Each time the page draws, it sends its snapshot back to that server and the
kernel writes it into a second, invisible output of the same cell: the saved
notebook (and its nbconvert export) then draws that view from the snapshot
with no kernel, no model and no network.

On Colab the browser cannot reach the kernel's 127.0.0.1: the kernel says so
in the output's configuration (``live.colab``: the server's port and secret
path), and the loader asks Colab's documented output API,
``google.colab.kernel.proxyPort(port)``, for the URL at which the output
reaches that port through Colab's proxy. The server answers requests arriving
that way (another Host, the output frame's Origin); the path is the secret.
"""
from __future__ import annotations

import gzip
import json
import os
import secrets
import struct
import threading
import time
import uuid
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Union
from urllib.parse import urlencode

from ._html import SETTINGS, carry_page, in_colab, loader_source, page_block, script_json

#: The page's views (web/js/views/index.js), for a clear error before drawing.
VIEWS = ("heatmap", "head", "model", "neuron", "overview", "rollout", "predict", "compare", "corpus")
#: State keys show() passes to the page as its URL parameters (web/js/page/state.js).
STATE_KEYS = ("layer", "head", "mode", "query", "theme", "hide", "renorm", "words", "filter", "heads", "keep", "span",
              "rank", "min", "ablate", "cmp", "cmp_text", "cmp_text_b", "cmp_head", "mask", "cell", "key")
MAX_SNAPSHOT_TEXT = 4 << 20  # what the page writes at most (snapshot.js FILE_LIMITS.text)
MAX_BUNDLE = 2 << 30


class ModelError(ValueError):
    """The model handed to show() cannot be loaded; the message says why."""


# ------------------------------------------------------------------ models

def _bundle_header(raw: bytes, name: str) -> Dict[str, int]:
    """The checks of src/format/bundle.h's header a file must pass to be a bundle."""
    if len(raw) < 96 or raw[:8] != b"BERTLENS":
        raise ModelError(f"{name} is not a bertlens bundle (no BERTLENS header); pass a .blb or .blb.gz "
                         "file, or a Hugging Face checkpoint folder")
    version, align, file_size, meta_off, meta_size, table_off, table_size = struct.unpack_from("<IIQQQQQ", raw, 8)
    (header_crc,) = struct.unpack_from("<I", raw, 92)
    if zlib.crc32(raw[:92]) & 0xFFFFFFFF != header_crc:
        raise ModelError(f"{name}: its header checksum does not match (the file is damaged)")
    if version not in (1, 2):
        raise ModelError(f"{name} has bundle version {version}; this bertlens reads versions 1 and 2")
    if file_size != len(raw):
        raise ModelError(f"{name} is {len(raw):,} bytes but its header says {file_size:,} (the file is cut or damaged)")
    meta_crc, table_crc = struct.unpack_from("<II", raw, 80)
    if meta_off + meta_size > len(raw) or table_off + table_size > len(raw):
        raise ModelError(f"{name}: its sections lie outside the file (the file is damaged)")
    if zlib.crc32(raw[meta_off:meta_off + meta_size]) & 0xFFFFFFFF != meta_crc or \
            zlib.crc32(raw[table_off:table_off + table_size]) & 0xFFFFFFFF != table_crc:
        raise ModelError(f"{name}: a section checksum does not match (the file is damaged)")
    return {"version": version, "bytes": file_size}


class Model:
    """A model show() draws: a bundle file, or a checkpoint folder's files."""

    def __init__(self, source: Union[str, "os.PathLike[str]"]) -> None:
        p = Path(os.fspath(source)).expanduser()
        if p.is_dir():
            self.kind = "checkpoint"
            names = {f.name for f in p.iterdir() if f.is_file()}
            if "config.json" not in names:
                raise ModelError(f"{p} has no config.json: a Hugging Face checkpoint folder holds config.json, "
                                 "model.safetensors and the tokenizer files")
            if not any(n.endswith(".safetensors") for n in names):
                raise ModelError(f"{p} has no .safetensors weights (a pytorch_model.bin cannot be converted); "
                                 "save the model with save_pretrained(safe_serialization=True)")
            self.files = sorted(f for f in p.iterdir() if f.is_file() and (f.suffix in (".json", ".txt", ".model", ".safetensors")))
            self.name = p.name
        elif p.is_file():
            self.kind = "bundle"
            data = p.read_bytes()
            if len(data) > MAX_BUNDLE:
                raise ModelError(f"{p} is {len(data):,} bytes, more than a page can hold")
            raw = data
            if data[:2] == b"\x1f\x8b":
                try:
                    raw = gzip.decompress(data)
                except (OSError, EOFError, zlib.error) as e:
                    raise ModelError(f"{p} does not decompress: {e}") from None
            self.header = _bundle_header(raw, p.name)
            self.data = data if data[:2] == b"\x1f\x8b" else gzip.compress(raw, compresslevel=1, mtime=0)
            self.files = [p]
            self.name = p.name
        elif not os.path.exists(p) and "/" not in str(source) and not str(source).endswith((".blb", ".gz")):
            raise ModelError(f"{source!r} is not a file or folder here; show() takes a bundle path (.blb or .blb.gz, "
                             "e.g. the site's models/all-minilm-l6-v2.q10.blb.gz) or a Hugging Face checkpoint folder")
        else:
            raise ModelError(f"no such file or folder: {p}")

    def entries(self) -> List[Dict[str, Any]]:
        """The files the page asks the kernel for: [{name, path, bytes}]."""
        if self.kind == "bundle":
            return [{"name": self.name, "size": len(self.data)}]
        return [{"name": f.name, "size": f.stat().st_size} for f in self.files]

    def read(self, name: str) -> Optional[bytes]:
        if self.kind == "bundle":
            return self.data if name == self.name else None
        for f in self.files:
            if f.name == name:
                return f.read_bytes()
        return None


# ------------------------------------------------------------------ server

class _Kernel:
    """What the kernel's server serves (models by id) and hears (snapshots)."""

    def __init__(self) -> None:
        self.token = secrets.token_urlsafe(24)
        self.models: Dict[str, Model] = {}
        self.cache: Dict[str, Any] = {}  # model id -> (path key, Model), oldest first
        self.outputs: Dict[str, Callable[[str], None]] = {}  # output id -> on snapshot text
        self.server: Optional[ThreadingHTTPServer] = None
        self.lock = threading.Lock()

    def model(self, source: Union[str, "os.PathLike[str]"]) -> "tuple[str, Model]":
        """(id, Model) of a path: one per file as it is now (a changed file is
        read again); the 8 newest are served (an older output then draws
        from its kept snapshot)."""
        p = Path(os.fspath(source)).expanduser()
        try:
            st = p.stat()
            key = (str(p.absolute()), st.st_mtime_ns, st.st_size)
        except OSError:
            key = None
        with self.lock:
            for mid, (k, m) in self.cache.items():
                if key is not None and k == key:
                    return mid, m
        m = Model(source)
        mid = uuid.uuid4().hex
        with self.lock:
            self.cache[mid] = (key, m)
            self.models[mid] = m
            while len(self.cache) > 8:
                old = next(iter(self.cache))
                del self.cache[old]
                self.models.pop(old, None)
        return mid, m

    def start(self) -> str:
        with self.lock:
            if self.server is None:
                kernel = self

                class Handler(BaseHTTPRequestHandler):
                    def log_message(self, *a: Any) -> None:  # quiet
                        pass

                    def _cors(self) -> None:
                        # The output's loader runs in the notebook's page (any origin, or
                        # file://), or behind Colab's proxy in an output frame of another
                        # origin, whose requests may carry that proxy's cookies: the origin
                        # that asks is allowed, with credentials. The token in the path is
                        # what guards these files.
                        origin = self.headers.get("Origin")
                        if origin:
                            self.send_header("Access-Control-Allow-Origin", origin)
                            self.send_header("Access-Control-Allow-Credentials", "true")
                            self.send_header("Vary", "Origin")
                        else:
                            self.send_header("Access-Control-Allow-Origin", "*")
                        self.send_header("Access-Control-Allow-Private-Network", "true")
                        self.send_header("Cache-Control", "no-store")

                    def _parts(self) -> Optional[List[str]]:
                        parts = self.path.split("?")[0].strip("/").split("/")
                        if len(parts) < 2 or not secrets.compare_digest(parts[0], kernel.token):
                            self.send_error(404)
                            return None
                        return parts[1:]

                    def do_OPTIONS(self) -> None:  # noqa: N802
                        self.send_response(204)
                        self._cors()
                        self.send_header("Access-Control-Allow-Methods", "GET, POST")
                        self.send_header("Access-Control-Allow-Headers", "Content-Type")
                        self.end_headers()

                    def do_GET(self) -> None:  # noqa: N802  /TOKEN/model/<id>/<file name>
                        parts = self._parts()
                        if parts is None:
                            return
                        m = kernel.models.get(parts[1]) if len(parts) == 3 and parts[0] == "model" else None
                        data = m.read(parts[2]) if m else None
                        if data is None:
                            self.send_error(404)
                            return
                        self.send_response(200)
                        self._cors()
                        self.send_header("Content-Type", "application/octet-stream")
                        self.send_header("Content-Length", str(len(data)))
                        self.end_headers()
                        self.wfile.write(data)

                    def do_POST(self) -> None:  # noqa: N802  /TOKEN/snapshot/<output id>
                        parts = self._parts()
                        if parts is None:
                            return
                        n = int(self.headers.get("Content-Length") or 0)
                        take = kernel.outputs.get(parts[1]) if len(parts) == 2 and parts[0] == "snapshot" else None
                        if take is None or not 0 < n <= MAX_SNAPSHOT_TEXT:
                            self.send_error(404 if take is None else 413)
                            return
                        text = self.rfile.read(n).decode("ascii", errors="replace")
                        ok = text.replace("-", "").replace("_", "").isalnum()
                        if ok:
                            take(text)  # (kept before the page hears back)
                        self.send_response(204 if ok else 400)
                        self._cors()
                        self.end_headers()

                self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
                self.server.daemon_threads = True
                threading.Thread(target=self.server.serve_forever, name="bertlens-show", daemon=True).start()
            host, port = self.server.server_address[:2]
            return f"http://{host}:{port}/{self.token}"

    def port(self) -> int:
        """The server's port (started)."""
        assert self.server is not None
        return int(self.server.server_address[1])



KERNEL = _Kernel()


# ------------------------------------------------------------------ show

def _search(text: str, text_b: Optional[str], view: str, state: Dict[str, Any]) -> str:
    """The page state as the page's URL parameters (web/js/page/state.js)."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("text must be a non-empty string")
    if text_b is not None and not isinstance(text_b, str):
        raise ValueError("text_b must be a string")
    if view not in VIEWS:
        raise ValueError(f"view must be one of {', '.join(VIEWS)}, not {view!r}")
    params: Dict[str, str] = {"text": text, "view": view}
    if text_b:
        params["text_b"] = text_b
    for k, v in state.items():
        if k not in STATE_KEYS:
            raise ValueError(f"unknown state {k}=; show() takes {', '.join(STATE_KEYS)}")
        if isinstance(v, bool):
            params[k] = "1" if v else "0"
        elif isinstance(v, (list, tuple)):
            params[k] = ",".join(str(int(x)) for x in v)
        else:
            params[k] = str(v)
    return urlencode(params)


def show(model: Union[str, "os.PathLike[str]"], text: str, text_b: Optional[str] = None, view: str = "heatmap",
         *, wait: float = 60.0, **state: Any) -> None:
    """Run bertlens's engine in the notebook's browser on ``model`` and show
    the whole page (typing, every view, predictions, compare) in the output.

    Args:
        model: a bundle (``.blb`` or ``.blb.gz``) or a Hugging Face checkpoint
            folder (config.json, *.safetensors, tokenizer files), converted in
            the page. The kernel serves its bytes to the page on 127.0.0.1, so
            the browser must run where the kernel runs (a local Jupyter, VS Code),
            or reach it through Colab's proxy (``google.colab.kernel.proxyPort``).
        text, text_b: the sentence, and the second one of a pair.
        view: the view shown first (heatmap, head, model, neuron, overview,
            rollout, predict, compare, corpus).
        wait: seconds to wait for the first drawing, whose snapshot the
            notebook keeps (0: do not wait; the snapshot is written when it comes).
        **state: the page's other settings (layer=, head=, mode=, theme=, ...).

    Raises:
        ModelError: the file or folder is not a model the page can load.
        ValueError: an unknown view or setting.
    """
    search = _search(text, text_b, view, state)
    mid, m = KERNEL.model(model)
    try:
        from IPython.display import HTML, display, update_display  # type: ignore
    except ImportError:
        raise RuntimeError("show() draws in a notebook (IPython); outside one use head_view(..., html_action='return')") from None
    base = KERNEL.start()
    oid = f"bertlens-{uuid.uuid4().hex}"
    got = threading.Event()
    snap_id = f"{oid}-snapshot"

    def take(snapshot: str) -> None:
        update_display(HTML(snapshot_html(oid, snapshot)), display_id=snap_id)
        got.set()

    KERNEL.outputs[oid] = take
    key, block = page_block("engine.html")
    live: Dict[str, Any] = {"base": base, "model": mid, "kind": m.kind, "name": m.name, "files": m.entries()}
    if in_colab():
        # the loader reaches the server through google.colab.kernel.proxyPort(port)
        live["colab"] = {"port": KERNEL.port(), "path": KERNEL.token}
    cfg = {"id": oid, "key": key, "wait": 15000, "fit": SETTINGS.height is None, "maxHeight": SETTINGS.max_height,
           "notebook": {"static": False, "screen": SETTINGS.screen, "search": search}, "live": live}
    carry = carry_page(key)
    display(HTML(live_html(oid, cfg, block if carry else None)))
    display(HTML(snapshot_html(oid, None)), display_id=snap_id)
    if wait > 0:
        t0 = time.monotonic()
        while not got.wait(0.1) and time.monotonic() - t0 < wait:
            pass


def live_html(oid: str, cfg: Dict[str, Any], block: Optional[str]) -> str:
    script = loader_source().replace("__CONFIG__", script_json(cfg))
    page = f'<script type="application/octet-stream" data-bertlens-page="{cfg["key"]}">{block}</script>' if block else ""
    return (f'<div class="bertlens-output" id="{oid}" data-state="loading" style="width:100%">'
            '<div class="bertlens-note" style="font:13px sans-serif;padding:6px 0">bertlens: this output draws with '
            'JavaScript; run the cell (or trust the notebook) to see it.</div>'
            '<iframe title="bertlens" style="width:100%;height:640px;border:0;display:block"></iframe>'
            f"{page}<script>{script}</script></div>")


def snapshot_html(oid: str, snapshot: Optional[str]) -> str:
    """The invisible output that keeps the live output's last snapshot."""
    body = script_json({"s": snapshot}) if snapshot else "{}"
    return (f'<div class="bertlens-kept" data-for="{oid}" style="display:none">'
            f'<script type="application/json" class="bertlens-snapshot" data-for="{oid}">{body}</script></div>')
