"""In-tree PEP 517 build backend for the bertlens Python package (no build
dependencies: a wheel is a zip file with three metadata files).

The wheel holds python/bertlens/ and the page assets the Makefile builds:
``dist/viewer.html`` (the site's one-file viewer page) as
``bertlens/assets/viewer.html``, byte for byte. Build them first with
``make site`` (``make wheel`` does both); ``pip install .`` at the repository
root uses this backend and stops with that advice when ``dist/`` is missing.

    python3 python/build_backend.py OUT_DIR     (what `make wheel` runs)
"""
from __future__ import annotations

import base64
import hashlib
import os
import re
import sys
import zipfile
from pathlib import Path
from typing import Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "python" / "bertlens"
DIST = Path(os.environ.get("BERTLENS_DIST", ROOT / "dist"))
#: dist/ files carried by the package: (path under dist/, path in the package).
#: engine.html is dist/bertlens.html (the one-file page: page, engine, wasm)
#: without its built-in model, model list and viewer copy (a show() output's
#: page is handed the kernel's model files instead).
ASSETS: List[Tuple[str, str]] = [("viewer.html", "assets/viewer.html"), ("bertlens.html", "assets/engine.html")]
DROP = {"assets/engine.html": ("bertlens-bundle-0", "bertlens-models", "bertlens-viewer")}
NAME = "bertlens"
SUMMARY = "bertlens's attention views in Jupyter: BertViz's head_view/model_view calls, drawn offline"
REQUIRES = ["numpy"]
# zip entries get one fixed date, so the same sources give the same wheel
DATE = (1980, 1, 1, 0, 0, 0)


def version() -> str:
    m = re.search(r'^__version__ = "([^"]+)"', (PKG / "__init__.py").read_text(encoding="utf-8"), re.M)
    if not m:
        raise RuntimeError("python/bertlens/__init__.py has no __version__")
    return m.group(1)


def _metadata() -> str:
    readme = ROOT / "docs" / "notebook.md"
    lines = [
        "Metadata-Version: 2.1", f"Name: {NAME}", f"Version: {version()}", f"Summary: {SUMMARY}",
        "License: Apache-2.0", "Requires-Python: >=3.9", *[f"Requires-Dist: {r}" for r in REQUIRES],
        "Classifier: Framework :: Jupyter", "Classifier: Programming Language :: Python :: 3",
        "Description-Content-Type: text/markdown", "",
    ]
    body = readme.read_text(encoding="utf-8") if readme.is_file() else SUMMARY + "\n"
    return "\n".join(lines) + "\n" + body


def _files() -> Dict[str, bytes]:
    """Path in the wheel -> content."""
    out: Dict[str, bytes] = {}
    for p in sorted(PKG.rglob("*")):
        rel = p.relative_to(PKG)
        if p.is_dir() or "__pycache__" in rel.parts or p.suffix == ".pyc" or rel.parts[0] == "assets":
            continue
        out[f"{NAME}/{rel.as_posix()}"] = p.read_bytes()
    for src, dst in ASSETS:
        f = DIST / src
        if not f.is_file():
            raise RuntimeError(f"{f} is missing: the package carries the built page; run `make site` first "
                               "(or `make wheel`, which builds both)")
        data = f.read_bytes()
        for block in DROP.get(dst, ()):
            data, n = re.subn(rb'<script type="[^"]+" id="' + block.encode() + rb'">[^<]*</script>\n?', b"", data)
            if n != 1:
                raise RuntimeError(f"{f} has {n} #{block} blocks, not one: tools/build_site.mjs changed?")
        out[f"{NAME}/{dst}"] = data
    return out


def _digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).decode("ascii").rstrip("=")


def _dist_info(ver: str) -> Dict[str, bytes]:
    di = f"{NAME}-{ver}.dist-info"
    return {
        f"{di}/METADATA": _metadata().encode("utf-8"),
        f"{di}/WHEEL": b"Wheel-Version: 1.0\nGenerator: bertlens build_backend\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        f"{di}/top_level.txt": f"{NAME}\n".encode("ascii"),
    }


def build_wheel(wheel_directory: str, config_settings: Optional[dict] = None,
                metadata_directory: Optional[str] = None) -> str:
    ver = version()
    name = f"{NAME}-{ver}-py3-none-any.whl"
    files = {**_files(), **_dist_info(ver)}
    record = f"{NAME}-{ver}.dist-info/RECORD"
    rows = [f"{p},{_digest(d)},{len(d)}" for p, d in files.items()] + [f"{record},,"]
    files[record] = ("\n".join(rows) + "\n").encode("utf-8")
    os.makedirs(wheel_directory, exist_ok=True)
    path = os.path.join(wheel_directory, name)
    tmp = path + ".tmp"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        for p, d in files.items():
            info = zipfile.ZipInfo(p, DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            z.writestr(info, d)
    os.replace(tmp, path)
    return name


def get_requires_for_build_wheel(config_settings: Optional[dict] = None) -> List[str]:
    return []


def prepare_metadata_for_build_wheel(metadata_directory: str, config_settings: Optional[dict] = None) -> str:
    ver = version()
    di = Path(metadata_directory) / f"{NAME}-{ver}.dist-info"
    di.mkdir(parents=True, exist_ok=True)
    for p, d in _dist_info(ver).items():
        (Path(metadata_directory) / p).write_bytes(d)
    return di.name


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python3 python/build_backend.py OUT_DIR")
    try:
        print(os.path.join(sys.argv[1], build_wheel(sys.argv[1])))
    except RuntimeError as e:
        sys.exit(f"build_backend: {e}")
