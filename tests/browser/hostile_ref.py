#!/usr/bin/env python3
"""Hugging Face `tokenizers` on the crafted tokenizer.json files of
tests/browser/hostile_repos.mjs: the reference tokens the page must show
where the engine accepts such a file (tests/browser/hostile.scenarios.mjs).

    node tests/browser/hostile_repos.mjs /tmp/hostile
    python3 tests/browser/hostile_ref.py /tmp/hostile > tests/browser/hostile.ref.json

For each repository with a tokenizer.json that `tokenizers` loads: the
tokens of SHORT alone, and of the repository's long pair (its text as
sentence A and as sentence B, each cut to the page's 20,000 characters)
truncated to the model's positions (longest_first, as the page truncates).
A file that `tokenizers` cannot run in reasonable time (the normalizer that
doubles the text 27 times) gets no reference: the page must refuse it.
"""
import json
import os
import sys
import time

from tokenizers import Tokenizer

SHORT = "a cat sat on the mat with a hat."
PAGE_MAX_CHARS = 20000  # web/js/page/state.js MAX_TEXT_CHARS
SKIP = {"normalizer-doubling"}  # 2^27 times the text: no reference can be had


def main(root):
    out = {"short": SHORT, "repos": {}}
    for name in sorted(os.listdir(root)):
        path = os.path.join(root, name, "tokenizer.json")
        if name in SKIP or not os.path.isfile(path):
            continue
        try:
            tok = Tokenizer.from_file(path)
            ref = {"short": tok.encode(SHORT).tokens}
        except BaseException as e:  # noqa: BLE001 - its refusal (a Rust panic included) is the reference
            out["repos"][name] = {"refused_by_tokenizers": f"{type(e).__name__}: {str(e)[:300]}"}
            continue
        cfg = json.load(open(os.path.join(root, name, "config.json")))
        text_file = os.path.join(root, f"{name}.text")
        if os.path.isfile(text_file):
            text = open(text_file).read()[:PAGE_MAX_CHARS]
            tok.enable_truncation(max_length=cfg["max_position_embeddings"], strategy="longest_first")
            t0 = time.process_time()
            ref["pair_len"] = len(tok.encode(text, text).tokens)
            print(f"{name}: the long pair in {time.process_time() - t0:.1f} s of CPU", file=sys.stderr)
        out["repos"][name] = ref
    json.dump(out, sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])
