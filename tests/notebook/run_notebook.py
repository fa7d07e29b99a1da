#!/usr/bin/env python3
"""Execute a notebook that draws with bertlens, as a user's would run, then
export it with nbconvert (tests/notebook/run.sh runs this inside a fresh
virtual environment holding only the wheel, its dependencies, nbclient,
ipykernel and nbconvert; tests/notebook/check_export.mjs opens the export).

    build/notebook/venv/bin/python tests/notebook/run_notebook.py OUT_DIR

Writes OUT_DIR/bertlens.ipynb (executed) and OUT_DIR/bertlens.html
(nbconvert --to html), and checks the outputs in the notebook file: each
drawing cell has one HTML output with a bertlens root element, under 3 MB,
and the page (about 400 KB) is carried by as few outputs as the front end
allows.
"""
import json
import os
import re
import subprocess
import sys

import nbformat
from nbclient import NotebookClient
from nbconvert import HTMLExporter

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "build", "notebook"))
FIX = os.path.join(HERE, "fixtures")
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
with open(os.path.join(ROOT, "models", "index.json"), encoding="utf-8") as _f:
    DEFAULT = os.path.join(ROOT, "models", next(m["file"] for m in json.load(_f)["models"] if m["default"]))
SHOTS = os.path.join(ROOT, "build", "screenshots")
CHECKPOINT = os.path.join(ROOT, "tests", "fixtures", "families", "roberta")

CELLS = [
    f'''import json
from pathlib import Path
import numpy as np
import bertlens

FIX = Path({FIX!r})
def case(name):
    """outputs.attentions of a random checkpoint (fixtures/make_fixture.py) and its tokens."""
    meta = json.loads((FIX / f"{{name}}.json").read_text(encoding="utf-8"))
    return list(np.load(FIX / f"{{name}}.npy")), meta

print(bertlens.__version__, bertlens.__file__)
# The page once per kernel session (nbclient names no cells, so "auto" would
# put it in every output): the export then draws the later outputs with the
# first one's page.
bertlens.configure(assets="shared")''',
    # BertViz's calls, unchanged
    '''attention, meta = case("bert-pair")
bertlens.head_view(attention, meta["tokens"], sentence_b_start=meta["sentence_b_start"])''',
    '''attention, meta = case("roberta")
bertlens.model_view(attention, meta["tokens"])''',
    '''attention, meta = case("gpt2-causal")
bertlens.head_view(attention, meta["tokens"])''',
    '''try:
    bertlens.head_view(attention, meta["tokens"][:-1])
except bertlens.AttentionError as e:
    print("AttentionError:", e)''',
    # the neuron view from the query and key vectors the attention came from
    '''attention, meta = case("bert-pair")
q, k = list(np.load(FIX / "bert-pair-q.npy")), list(np.load(FIX / "bert-pair-k.npy"))
bertlens.neuron_view(attention, meta["tokens"], q, k, layer=1, head=2, sentence_b_start=meta["sentence_b_start"])''',
    # the page's own engine on the default bundle (the kernel serves its bytes)
    f'''bertlens.show({DEFAULT!r}, "The cat sat on the mat.", view="head")''',
    # a Hugging Face checkpoint folder, converted in the page
    f'''bertlens.show({CHECKPOINT!r}, "The cat sat on the mat.", view="heatmap", head="mean")''',
    # Colab, imitated (no Colab here): its kernel imports google.colab at start,
    # so show() takes its Colab path; colab.mjs is the browser side (the
    # output in a frame of its own, the kernel reached through
    # google.colab.kernel.proxyPort's proxy only). Last: the module stays.
    f'''import sys, types
sys.modules["google.colab"] = types.ModuleType("google.colab")
# (assets="shared" from the first cell: on Colab every output carries the page all the same)
bertlens.show({DEFAULT!r}, "The cat sat on the mat.", view="heatmap")''',
    # (the kernel, and so its server, lives while a cell runs: this one waits
    # for colab.mjs, which draws the Colab output a second time)
    f'''import os, time
t0 = time.monotonic()
while not os.path.exists({os.path.join(OUT, "colab-output.html.done")!r}) and time.monotonic() - t0 < 150:
    time.sleep(0.2)''',
]
DRAWN = [1, 2, 3, 5, 6, 7, 8]  # cells that draw (their order: the export's outputs)
SHOWS = (6, 7, 8)
COLAB = 8
SHOW_TOKENS = ["[CLS]", "the", "cat", "sat", "on", "the", "mat", ".", "[SEP]"]  # (MiniLM's WordPiece)


class WithFrontend(NotebookClient):
    """nbclient, plus a browser for each show() output as it arrives
    (frontend.mjs; colab.mjs for the one made on the imitated Colab): show()
    waits for the page's first drawing."""

    frontends: list = []

    pages: list = []  # the page blocks of the outputs so far (a notebook's document holds them)

    def output(self, outs, msg, display_id, cell_index):
        out = super().output(outs, msg, display_id, cell_index)
        html = (msg.get("content", {}).get("data") or {}).get("text/html", "")
        if msg.get("msg_type") == "display_data" and '"colab": {' in html:
            # Colab: the output alone in its frame (it must carry its page)
            name = "colab-output.html"
            with open(os.path.join(OUT, name), "w", encoding="utf-8") as f:
                f.write(html)
            shot = os.path.join(SHOTS, "notebook-colab.png")
            self.frontends.append(subprocess.Popen(["node", os.path.join(HERE, "colab.mjs"), OUT, name, shot, json.dumps(SHOW_TOKENS)]))
        elif msg.get("msg_type") == "display_data" and '"live": {' in html:
            name = f"frontend-{len(self.frontends)}.html"
            with open(os.path.join(OUT, name), "w", encoding="utf-8") as f:
                f.write(f"<!doctype html><html><head><meta charset=utf-8></head><body>{html}{''.join(self.pages)}</body></html>")
            shot = os.path.join(SHOTS, f"notebook-live-{len(self.frontends)}.png")
            self.frontends.append(subprocess.Popen(["node", os.path.join(HERE, "frontend.mjs"), OUT, name, shot]))
        if msg.get("msg_type") == "display_data":
            self.pages += re.findall(r'<script type="application/octet-stream" data-bertlens-page="[0-9a-f]+">[^<]*</script>', html)
        return out


def main():
    os.makedirs(OUT, exist_ok=True)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in CELLS]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    client = WithFrontend(nb, timeout=180, kernel_name="python3", resources={"metadata": {"path": OUT}})
    client.execute()
    assert len(client.frontends) == len(SHOWS), f"{len(client.frontends)} live outputs"
    assert all(p.wait(timeout=120) == 0 for p in client.frontends), "a show() output did not draw in the browser"
    path = os.path.join(OUT, "bertlens.ipynb")
    nbformat.write(nb, path)

    print(nb.cells[0].outputs[0]["text"].strip())
    site = nb.cells[0].outputs[0]["text"]
    assert "site-packages" in site, f"the kernel imported bertlens from {site!r}, not the installed wheel"
    sizes, carried = [], 0
    for i in DRAWN:
        outs = [o for o in nb.cells[i].outputs if o.get("output_type") == "display_data"]
        assert len(outs) == (2 if i in SHOWS else 1), f"cell {i}: {len(outs)} display outputs: {nb.cells[i].outputs}"
        html = outs[0]["data"]["text/html"]
        html = "".join(html) if isinstance(html, list) else html
        assert re.match(r'<div class="bertlens-output" id="bertlens-[0-9a-f]+" data-state="loading"', html), html[:200]
        n = len(html.encode("utf-8"))
        assert n <= 3_000_000, f"cell {i}: output of {n} bytes"
        sizes.append(n)
        carried += html.count('<script type="application/octet-stream" data-bertlens-page=')
    for i in SHOWS:
        kept = [o for o in nb.cells[i].outputs if o.get("output_type") == "display_data"][1]["data"]["text/html"]
        assert '"s": "' in kept, f"cell {i}: show()'s kept output holds no snapshot: {kept[:300]}"
    err = "".join(o.get("text", "") for o in nb.cells[4].outputs)
    assert "AttentionError: the attention has 17 positions but 16 tokens were given" in err, err
    print(f"outputs: {', '.join(f'{n / 1024:.0f} KB' for n in sizes)}; the page carried by {carried} of {len(DRAWN)}")
    # the viewer and the engine page once each, and the engine page again by
    # the Colab output (each of Colab's outputs is a frame of its own)
    assert carried == 3 and sizes[1] < 20_000 and sizes[2] < 20_000 and sizes[3] < 20_000, "the viewer and the engine page once each"
    assert sizes[DRAWN.index(COLAB)] > 500_000, "the Colab output carries its page"

    body, _ = HTMLExporter().from_notebook_node(nb)
    with open(os.path.join(OUT, "bertlens.html"), "w", encoding="utf-8") as f:
        f.write(body)
    with open(os.path.join(OUT, "expected.json"), "w", encoding="utf-8") as f:
        # tabs: the views drawn from analyses of the snapshot's attention
        # (heads overview, rollout: the viewer's analyze.wasm), offered by
        # every output holding every layer's attention (neuron_view's too)
        json.dump([dict(json.load(open(os.path.join(FIX, f"{c}.json"), encoding="utf-8")), causal=c == "gpt2-causal",
                        tabs=True) for c in ("bert-pair", "roberta", "gpt2-causal", "bert-pair")]
                  + [{"tokens": SHOW_TOKENS}, json.load(open(os.path.join(FIX, "roberta-show.json"), encoding="utf-8")),
                     {"tokens": SHOW_TOKENS}], f)
    print(f"exported {os.path.join(OUT, 'bertlens.html')} ({len(body) / 1024:.0f} KB)")


if __name__ == "__main__":
    main()
