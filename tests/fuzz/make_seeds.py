#!/usr/bin/env python3
"""Seeds of every family for the fuzz targets of issue 31 (make fuzz):

  tests/fuzz/hftok/    src/fuzz/fuzz_hftok.c: a tokenizer.json and texts
  tests/fuzz/convert/  src/fuzz/fuzz_convert.c: a checkpoint of each family (fam-*)
  tests/fuzz/forward/  src/fuzz/fuzz_forward.c: its bundle in several dtypes

Each family's checkpoint (tests/fixtures/families/<family>/, random weights
saved by transformers, its tokenizer trained and saved by transformers) is
cut down to LAYERS layers and its first KEEP ids: the tokenizer's vocabulary (BPE merges whose
parts and result remain; added tokens past the model's vocabulary renumbered
after it, and the post-processor's ids with them), the word embeddings' rows
and config.json's vocab_size. Everything else (normalizer, pre-tokenizer,
templates, layers) stays as the Hub has it, so the fuzzer starts from the
structure users feed. The Precompiled normalizer (320 KB of SentencePiece
tables) is kept in one tokenizer seed only; the checkpoint seeds use NFKC.

Needs build/bertlens (for the bundles). Deterministic:
    python3 tests/fuzz/make_seeds.py
"""
import glob
import json
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FAM = os.path.join(ROOT, 'tests', 'fixtures', 'families')
HFT = os.path.join(ROOT, 'tests', 'fixtures', 'hf_tokenizers')
BIN = os.path.join(ROOT, 'build', 'bertlens')
SEP = b'\n#%%#\n'
KEEP = 160
LAYERS = 2
TEXTS = [
    ('The quick brown fox jumps over the lazy dog.', None),
    ('Naïve café, 東京 2024! unbelievable', 'Where is the café? It is near the station.'),
    ('  spaces\tand\nnewlines  ', 'Ünïcödé ﬁ ½ ① Ａ'),
    ('😀👍🏽 مرحبا بالعالم שלום नमस्ते', None),
    ('<s> [CLS] <mask> [MASK] </s>', 'x'),
]


def read_safetensors(path):
    b = open(path, 'rb').read()
    n = struct.unpack('<Q', b[:8])[0]
    hdr = json.loads(b[8:8 + n])
    data = b[8 + n:]
    out = {}
    for k, v in hdr.items():
        if k == '__metadata__':
            continue
        s, e = v['data_offsets']
        out[k] = (v['dtype'], v['shape'], data[s:e])
    return out


def write_safetensors(tensors):
    off, hdr, blobs = 0, {'__metadata__': {'format': 'pt'}}, []
    for name, (dt, shape, raw) in tensors.items():
        hdr[name] = {'dtype': dt, 'shape': shape, 'data_offsets': [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    hj = json.dumps(hdr).encode()
    hj += b' ' * ((8 - len(hj) % 8) % 8)
    return struct.pack('<Q', len(hj)) + hj + b''.join(blobs)


def shrink_tokenizer(tj, keep, precompiled=True):
    """The tokenizer cut to ids < keep, added tokens past the model renumbered;
    returns (tokenizer, old id -> new id)."""
    tj = json.loads(json.dumps(tj))
    m = tj['model']
    n_model = len(m['vocab'])
    remap = {}
    if m['type'] == 'Unigram':
        m['vocab'] = m['vocab'][:keep]
        if m.get('unk_id') is not None and m['unk_id'] >= keep:
            m['unk_id'] = 0
        remap = {i: i for i in range(len(m['vocab']))}
    else:
        v = {t: i for t, i in m['vocab'].items() if i < keep}
        m['vocab'] = v
        remap = {i: i for i in v.values()}
        if m['type'] == 'BPE':
            merges = []
            for mg in m.get('merges', []):
                a, b = mg if isinstance(mg, list) else mg.split(' ', 1)
                if a in v and b in v and a + b in v:
                    merges.append(mg)
            m['merges'] = merges
    size = len(m['vocab'])
    added = []
    for a in tj.get('added_tokens') or []:
        if a['id'] >= keep:  # past the cut (<mask> is often last): renumbered after the model's ids
            remap[a['id']] = size + len([x for x in added if x['id'] >= size])
            a['id'] = remap[a['id']]
        added.append(a)
    tj['added_tokens'] = added

    def fix_ids(p):
        if not p:
            return
        t = p.get('type')
        if t == 'Sequence':
            for q in p.get('processors', []):
                fix_ids(q)
        elif t == 'TemplateProcessing':
            for st in p['special_tokens'].values():
                st['ids'] = [remap.get(i, 0) for i in st['ids']]
        elif t in ('RobertaProcessing', 'BertProcessing'):
            for k in ('cls', 'sep'):
                p[k][1] = remap.get(p[k][1], 0)
    fix_ids(tj.get('post_processor'))
    if not precompiled:
        def drop(n):
            if not n:
                return n
            if n.get('type') == 'Precompiled':
                return {'type': 'NFKC'}
            if n.get('type') == 'Sequence':
                n['normalizers'] = [drop(x) for x in n['normalizers']]
            return n
        tj['normalizer'] = drop(tj.get('normalizer'))
    return tj, remap


def hftok_seed(tj, text, text_b, max_sel):
    opts = (1 if text_b else 0) | (max_sel << 1)
    parts = [json.dumps(tj, ensure_ascii=False).encode(), text.encode(), (text_b or '').encode()]
    return bytes([opts]) + SEP.join(parts)


def convert_seed(opts, files, weights):
    parts = [files.get(k, b'') for k in ('config.json', 'vocab.txt', 'tokenizer.json', 'tokenizer_config.json',
                                         'sentence_bert_config.json')]
    return bytes(opts) + SEP.join(parts + [weights])


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'wb') as f:
        f.write(data)


def main():
    if not os.access(BIN, os.X_OK):
        sys.exit('make_seeds.py needs build/bertlens (make native)')
    # 1. tokenizer.json seeds: every distinct tokenizer of the fixtures
    seen = {}
    for path in sorted(glob.glob(os.path.join(HFT, '*', 'tokenizer.json')) +
                       glob.glob(os.path.join(HFT, 'variants', '*.json')) +
                       glob.glob(os.path.join(FAM, '*', 'tokenizer.json'))):
        raw = open(path, 'rb').read()
        if raw in seen:
            continue
        name = os.path.basename(os.path.dirname(path)) if path.endswith('tokenizer.json') else \
            'v-' + os.path.basename(path)[:-5]
        seen[raw] = name
    big = False
    for raw, name in seen.items():
        tj = json.loads(raw)
        has_pc = 'Precompiled' in json.dumps(tj.get('normalizer'))
        keep_pc = has_pc and not big
        big = big or keep_pc
        small, _ = shrink_tokenizer(tj, KEEP, precompiled=keep_pc)
        for k, (a, b) in enumerate(TEXTS[:1] if keep_pc else TEXTS):  # the 320 KB one once
            write(os.path.join(HERE, 'hftok', f'{name}-{k}'), hftok_seed(small, a, b, (k * 3) % 8))
    # the crafted files of issue 31 (tests/fixtures/hostile_tok/) under 64 KB, whole
    for path in sorted(glob.glob(os.path.join(ROOT, 'tests', 'fixtures', 'hostile_tok', '*.json'))):
        if os.path.basename(path) == 'manifest.json' or os.path.getsize(path) > 65536:
            continue
        tj = json.load(open(path))
        name = 'hostile-' + os.path.basename(path)[:-5]
        write(os.path.join(HERE, 'hftok', name), hftok_seed(tj, TEXTS[1][0] * 3, TEXTS[1][1], 5))
    # 2. checkpoints of every family, and their bundles
    rng = np.random.default_rng(31)
    for fam in sorted(os.listdir(FAM)):
        d = os.path.join(FAM, fam)
        if not os.path.isfile(os.path.join(d, 'config.json')):
            continue
        cfg = json.load(open(os.path.join(d, 'config.json')))
        tj, remap = shrink_tokenizer(json.load(open(os.path.join(d, 'tokenizer.json'))), KEEP, precompiled=False)
        V = max(remap.values()) + 1
        old_of = {new: old for old, new in remap.items()}
        ts = read_safetensors(os.path.join(d, 'model.safetensors'))
        n_old = cfg['vocab_size']
        for k, (dt, shape, raw) in list(ts.items()):
            if len(shape) == 2 and shape[0] == n_old and dt == 'F32':  # the word embeddings, whatever their name
                a = np.frombuffer(raw, '<f4').reshape(shape)
                rows = np.stack([a[old_of.get(i, i) if old_of.get(i, i) < shape[0] else 0] for i in range(V)])
                ts[k] = (dt, [V, shape[1]], rows.astype('<f4').tobytes())
        cfg['vocab_size'] = V
        # two layers (ModernBERT's first global and first local one): smaller seeds, more runs a second
        if cfg.get('num_hidden_layers', 0) > LAYERS:
            cfg['num_hidden_layers'] = LAYERS
            if isinstance(cfg.get('layer_types'), list):
                cfg['layer_types'] = cfg['layer_types'][:LAYERS]
            ts = {k: v for k, v in ts.items()
                  if not any(f'{p}.{l}.' in k for p in ('layer', 'layers') for l in range(LAYERS, 64))}
        for key in ('pad_token_id', 'bos_token_id', 'eos_token_id', 'cls_token_id', 'sep_token_id'):
            if isinstance(cfg.get(key), int) and cfg[key] >= V:
                cfg[key] = remap.get(cfg[key], 0)
        files = {'config.json': json.dumps(cfg).encode(), 'tokenizer.json': json.dumps(tj, ensure_ascii=False).encode()}
        tc = os.path.join(d, 'tokenizer_config.json')
        if os.path.isfile(tc):
            files['tokenizer_config.json'] = open(tc, 'rb').read()
        weights = write_safetensors(ts)
        # byte 0: dtype of the projections (DTYPES[b % 9]) and the token count (b / 9)
        for k, (dtype_sel, emb_sel) in enumerate([(0, 0), (3, 6)]):  # f32 on 4 tokens; q4, q10 embeddings on 498
            b0 = dtype_sel + 9 * [0, 26][k]
            write(os.path.join(HERE, 'convert', f'fam-{fam}-{k}'), convert_seed([b0, emb_sel], files, weights))
        with tempfile.TemporaryDirectory() as tmp:
            for name, data in files.items():
                write(os.path.join(tmp, name), data)
            write(os.path.join(tmp, 'model.safetensors'), weights)
            for k, dtype in enumerate(['f32', 'q8', 'q4']):
                out = os.path.join(tmp, f'{dtype}.blb')
                r = subprocess.run([BIN, 'convert', tmp, out, '--dtype', dtype, '--license', 'fuzz seed'],
                                   capture_output=True, text=True)
                if r.returncode:
                    print(f'{fam} {dtype}: {r.stderr.strip()[-200:]}')
                    continue
                T = [40, 130, 511][k] - 4
                write(os.path.join(HERE, 'forward', f'{fam}-{dtype}'),
                      bytes([T & 0xFF | (k & 1), T >> 8]) + open(out, 'rb').read())
    for sub in ('hftok', 'convert', 'forward'):
        files = sorted(os.listdir(os.path.join(HERE, sub)))
        total = sum(os.path.getsize(os.path.join(HERE, sub, f)) for f in files)
        print(f'tests/fuzz/{sub}: {len(files)} files, {total // 1024} KB')


if __name__ == '__main__':
    main()
