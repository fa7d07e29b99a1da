# Writes families.ref.json for families.scenarios.mjs: Hugging Face's tokens
# for the pair each scenario types, by the tokenizer of each fixture folder
# (tests/fixtures/families/), and where the pair template puts sentence B:
# after the tokens of A encoded alone (<s> A </s> for RoBERTa, whose pair is
# <s> A </s></s> B </s>; [CLS] A [SEP] for BERT-like templates), n_a, and
# that count without the specials (n_a_hidden, "hide specials" on).
# For the issue-33 families (NomicBERT, GTE, EuroBERT) also Hugging Face's
# attention on that pair (eager, float32) at layer/head 0/0 and 1/1
# ("attn": {"L,H": T×T rows}), which the page's f32 conversion must show.
# Run from the repository root: python3 tests/browser/families_ref.py
import json
import torch
from transformers import AutoModel, AutoTokenizer

A = 'The quick brown fox jumps over the lazy dog.'
LONG = ('The quick brown fox jumps over the lazy dog while the curious students in the old library '
        'quietly read books about ancient history and the strange habits of birds.')
B = 'It was not amused at all.'
out = {}
NEW = ['nomic-bert', 'gte', 'eurobert']
for fam in ['roberta', 'xlm-roberta', 'modernbert', 'deberta-v2', 'albert'] + NEW:
    tok = AutoTokenizer.from_pretrained(f'tests/fixtures/families/{fam}')
    text = LONG if fam == 'modernbert' else A
    enc = tok(text, B)
    n_a = len(tok(text)['input_ids'])
    assert n_a <= enc.sequence_ids().index(1)
    out[fam] = {'text': text, 'text_b': B, 'tokens': tok.convert_ids_to_tokens(enc['input_ids']),
                'n_a': n_a, 'n_a_hidden': sum(w is not None for w in enc.word_ids()[:n_a]),
                'specials': sorted({t for t, w in zip(tok.convert_ids_to_tokens(enc['input_ids']), enc.word_ids()) if w is None})}
    if fam in NEW:
        model = AutoModel.from_pretrained(f'tests/fixtures/families/{fam}', attn_implementation='eager').eval()
        args = {'input_ids': torch.tensor([enc['input_ids']])}
        if 'token_type_ids' in enc and getattr(model.config, 'type_vocab_size', 0):
            args['token_type_ids'] = torch.tensor([enc['token_type_ids']])
        with torch.no_grad():
            att = model(**args, output_attentions=True).attentions
        out[fam]['attn'] = {f'{l},{h}': [[round(float(v), 7) for v in row] for row in att[l][0, h]] for l, h in [(0, 0), (1, 1)]}
with open('tests/browser/families.ref.json', 'w') as f:
    json.dump(out, f, ensure_ascii=False, indent=1)
    f.write('\n')
