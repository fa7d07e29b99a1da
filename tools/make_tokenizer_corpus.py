#!/usr/bin/env python3
"""Build tests/corpus/tokenizer.jsonl: the tokenizer test corpus.

    python3 tools/make_tokenizer_corpus.py

Deterministic (fixed seed, no inputs besides this file). Each line is a JSON
object {"cat": category, "text": A, ["text_pair": B], ["max_length": N]} that
`bertlens tokenize --jsonl` reads directly ("cat" is ignored there).
Expected outputs are made from it by tests/fixtures/tokenizer/make.py.
"""
import json
import os
import random

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'corpus', 'tokenizer.jsonl')
rng = random.Random(20240611)

# Hand-written sentences in many languages and scripts (written for this corpus).
PROSE = [
    "The quick brown fox didn't jump over the lazy dog; it walked around it.",
    "Attention heads in layer 3 often look at the previous token.",
    "She paid $12.50 for two coffees at 8:45 a.m. on Tuesday.",
    "Dr. O'Neill's lab (room 4B) re-ran the experiment — twice!",
    "Café, naïve, résumé, jalapeño and façade are borrowed words.",
    "Der Größenwahn des Königs überraschte die Bürger von Köln.",
    "L'été dernier, nous sommes allés à Besançon voir ma grand-mère.",
    "¿Dónde está la estación de tren? ¡Necesito llegar pronto!",
    "A pesquisa mostrou que a situação econômica melhorou em São Paulo.",
    "Żółć gęślą jaźń — polskie znaki diakrytyczne są trudne.",
    "Příliš žluťoučký kůň úpěl ďábelské ódy.",
    "Árvíztűrő tükörfúrógép a magyar ékezetek tesztje.",
    "İstanbul'da IŞIK ve ışık farklı yazılır; Iğdır da öyle.",
    "Đây là một câu tiếng Việt có nhiều dấu thanh điệu.",
    "Η γρήγορη καφέ αλεπού πηδά πάνω από τον τεμπέλη σκύλο.",
    "ΣΟΦΙΑ και σοφία: το τελικό ς διαφέρει από το σ.",
    "Съешь же ещё этих мягких французских булок, да выпей чаю.",
    "Україна, Їжак і ґанок — літери, яких немає в російській.",
    "Ѓорѓи и Љубица живеат во Скопје.",
    "مرحبا بالعالم، هذه جملة عربية قصيرة للاختبار.",
    "الذكاء الاصطناعي يُستخدم في الترجمة الآلية.",
    "שלום עולם, זהו משפט בעברית עם ניקוד: שָׁלוֹם.",
    "यह एक हिंदी वाक्य है जिसमें संयुक्ताक्षर भी हैं।",
    "আমি বাংলায় গান গাই এবং কবিতা পড়ি।",
    "தமிழ் ஒரு பழமையான மொழி ஆகும்.",
    "ภาษาไทยไม่มีการเว้นวรรคระหว่างคำ",
    "ພາສາລາວມີຕົວອັກສອນຂອງຕົນເອງ",
    "မြန်မာဘာသာစကား",
    "ქართული ენა უნიკალური დამწერლობით იწერება.",
    "Հայերենն ունի իր սեփական այբուբենը։",
    "ኢትዮጵያ በአፍሪካ ቀንድ ትገኛለች።",
    "我们今天在北京学习自然语言处理。",
    "這是一個繁體中文的句子，包含標點符號。",
    "東京タワーの高さは333メートルです。",
    "ひらがなとカタカナ、そして漢字をまぜて書きます。",
    "ｶﾀｶﾅ　ﾊﾝｶｸ と 全角ＡＢＣ１２３ も あります。",
    "한국어 문장은 띄어쓰기를 사용합니다.",
    "훈민정음은 세종대왕이 만들었습니다.",
    "𠀀𠀁𠀂 are CJK Extension B characters; 𪜀 and 𫝀 too.",
    "Ꭰ Ꭱ Ꭲ — Cherokee syllabary, ᚠᚢᚦ runes, and 𐌰𐌱𐌲 Gothic.",
    "Tiếng Việt, Ελληνικά, Русский, العربية, עברית, 日本語, 한국어.",
    "Mathematical: ∀x ∈ ℝ, x² ≥ 0 and ∑ᵢ aᵢ = ½ · π ≈ 1.5708.",
    "Ligatures ﬁ ﬂ ﬀ, roman numerals Ⅻ ⅻ, circled ① ② ③.",
    "ＦＵＬＬＷＩＤＴＨ text and ｈａｌｆ mixed.",
    "The Ångström unit Å and Kelvin K signs decompose.",
    "Emoji time 😀😃😄 and 👩‍💻 working late 🌙.",
    "Family: 👨‍👩‍👧‍👦, flags 🇫🇷🇯🇵, skin tones 👍🏽👋🏿.",
    "Keycaps 1️⃣ #️⃣ and hearts ❤️ ♥ ❣.",
    "Code: for (int i = 0; i < n; ++i) { sum += a[i] * b[i]; }",
    "def f(x): return {'key': [1, 2, 3], \"q\": x ** 2}",
    "See https://example.com/path?q=bert&lang=en#section-2 for details.",
    "Mail me at first.last+tag@example.co.uk or call +1 (555) 010-9999.",
    "Version 2.0.1-beta was released on 2023-11-05T14:30:00Z.",
    "Prices: €1.234,56 vs $1,234.56 vs ¥100000 vs £9.99.",
    "Hashtags #NLP #BERT and mentions @huggingface are common online.",
    "C'est-à-dire qu'il n'y a pas d'arbres ici, n'est-ce pas ?",
    "Ich hab's dir doch gesagt: „Das geht so nicht!“",
    "«Ёлки-палки», — сказал он.",
    "Wait... what?! No way!!! Really???",
    "unaffable unbelievable counterrevolutionaries antidisestablishmentarianism",
]

WORDS = {
    'en': "the of and model attention token layer head query key value matrix language learning neural network "
          "sentence word piece vocabulary embedding transformer encoder running jumped happily understanding".split(),
    'fr': "le la les été où déjà très garçon français cœur naïve bientôt château forêt élève".split(),
    'de': "der die das Straße Mädchen Größe über schön fünf Bücher Fußball Äpfel Öl".split(),
    'es': "el la niño mañana corazón canción pingüino también árbol está años".split(),
    'pt': "não são ação coração avô irmã pão informação".split(),
    'pl': "żółty źle gęś ćma łódź świat ją".split(),
    'cs': "řeka čas šest žena ďábel ťava ůl".split(),
    'tr': "İzmir ışık ağaç çiçek öğrenci şehir üzüm IĞDIR".split(),
    'vi': "người Việt tiếng đường phở cảm ơn nhiều".split(),
    'el': "καλημέρα ευχαριστώ Ελλάδα θάλασσα ΟΔΟΣ ψυχή άνθρωπος".split(),
    'ru': "привет мир язык Москва ЁЖИК съезд подъём".split(),
    'ar': "كتاب مدرسة الحمد لله السلام عليكم قلم".split(),
    'he': "ספר בית ילד מים אור שָׁלוֹם".split(),
    'hi': "नमस्ते भारत हिंदी क्षत्रिय ज्ञान विद्यालय".split(),
    'th': "สวัสดี ขอบคุณ ภาษา ประเทศไทย".split(),
    'zh': "你好 世界 中国 人工智能 学习 语言".split(),
    'ja': "こんにちは ありがとう カタカナ 日本 東京 ラーメン".split(),
    'ko': "안녕하세요 감사합니다 한국 서울 사랑".split(),
    'ka': "გამარჯობა საქართველო".split(),
    'hy': "բարեւ Հայաստան".split(),
}
PUNCT = list(".,;:!?-–—()[]{}\"'/\\…«»“”‘’·•@#$%^&*_+=<>|~`")

WHITESPACE = ['\t', '\n', '\r', '\x0b', '\x0c', '\x85', '\xa0', '\u1680'] + [chr(c) for c in range(0x2000, 0x200b)] + \
             ['\u2028', '\u2029', '\u202f', '\u205f', '\u3000']
INVISIBLE = ['\x00', '\x01', '\x07', '\x1b', '\x1f', '\x7f', '\x80', '\x9f', '\u00ad', '\u061c', '\u200b', '\u200c',
             '\u200d', '\u200e', '\u200f', '\u202a', '\u202e', '\u2060', '\u2066', '\ufeff', '\ufffd', '\ufffe',
             '\ue000', '\uf8ff', '\U000f0000', '\U0010fffd', '\U000e0001', '\U000e0041', '\u180e', '\u0890',
             '\u08e2', '\U00013430', '\u0378', '\U0001fffe', '\U0003fffd']
COMBINING = ['\u0300', '\u0301', '\u0302', '\u0303', '\u0308', '\u030a', '\u0327', '\u0328', '\u0334', '\u0345',
             '\u05b0', '\u0651', '\u093c', '\u094d', '\u0e48', '\u1ab0', '\u1dc0', '\u20d7', '\u20dd', '\u302a',
             '\U0001d165', '\U0001d16d', '\U0001d16e', '\u1734', '\u07fd', '\u0898', '\U0001e944']


def word(lang=None):
    lang = lang or rng.choice(list(WORDS))
    return rng.choice(WORDS[lang])


def casing(w):
    r = rng.random()
    return w.upper() if r < 0.1 else w.capitalize() if r < 0.3 else w


def sentence(n=None, langs=None):
    n = n or rng.randint(3, 18)
    out = []
    for _ in range(n):
        w = casing(word(rng.choice(langs) if langs else None))
        if rng.random() < 0.12:
            w += rng.choice(PUNCT)
        out.append(w)
    s = ' '.join(out)
    return s + rng.choice(['.', '!', '?', '', '...', '。', '।'])


def rand_scalar(plane_bias=True):
    while True:
        if plane_bias and rng.random() < 0.7:
            cp = rng.choice([rng.randrange(0x80, 0x3000), rng.randrange(0x3000, 0x10000),
                             rng.randrange(0x10000, 0x20000), rng.randrange(0x20000, 0x32000),
                             rng.randrange(0xE0000, 0xE0200)])
        else:
            cp = rng.randrange(0, 0x110000)
        if not 0xD800 <= cp <= 0xDFFF:
            return chr(cp)


def nfd_like(s):
    import unicodedata
    return unicodedata.normalize('NFD', s)


def build():
    lines = []

    def add(cat, text, pair=None, max_length=None, ascii_only=False):
        d = {'cat': cat, 'text': text}
        if pair is not None:
            d['text_pair'] = pair
        if max_length:
            d['max_length'] = max_length
        lines.append(json.dumps(d, ensure_ascii=ascii_only))

    # 1. prose: hand-written, then generated sentences in every language
    for s in PROSE:
        add('prose', s)
        add('prose', s.upper())
        add('prose', nfd_like(s))
    for _ in range(1200):
        r = rng.random()
        langs = [rng.choice(list(WORDS))] if r < 0.6 else None
        add('prose', sentence(langs=langs))
    # 2. accents and combining marks
    base = "aeiouAEIOUnNcCyYsSzZ"
    for _ in range(350):
        out = []
        for _ in range(rng.randint(1, 8)):
            w = ''.join(rng.choice(base) + ''.join(rng.choice(COMBINING) for _ in range(rng.choice([0, 0, 1, 1, 2, 3])))
                        for _ in range(rng.randint(1, 7)))
            out.append(w)
        add('combining', ' '.join(out), ascii_only=rng.random() < 0.5)
    for s in ["e\u0301", "\u00e9", "\u0301start", "a\u0345\u0334b", "a\U0001d16d\U0001d165", "a\U0001d16d\u200b\U0001d165b",
              "\u1e9b\u0323", "\u01c4\u01c5\u01c6", "\u1f82\u1fb3\u1ff7", "\uac00\ud7a3\u1100\u1161\u11a8", "\uf900\uf9ff\ufa0e\U0002f800",
              "\u212b\u212a\u2126", "\u0130\u0131 \u0130stanbul \u0130\u0307", "\u1e9e\u00df", "\u03a3\u03c3\u03c2",
              "\u0344\u0340\u0341\u0343", "\u0f73\u0f75\u0f81", "\U0001d15e\U0001d160", "\u0958\u095f\u09dc",
              "[CLS]\u0301", "x\u0301[SEP]\u0301y", "\U0001e900\U0001e922", "\u10a0\u2d00", "\u13a0\uab70"]:
        add('combining', s, ascii_only=True)
    # 3. emoji
    emoji = ['😀', '👩\u200d💻', '👨\u200d👩\u200d👧\u200d👦', '🇫🇷', '🏳️\u200d🌈', '👍🏽', '1️⃣', '❤️', '🧑🏿\u200d🦰',
             '🫠', '🦄', '☕', '⌚', '🔥', '\U0001faf6', '\U0001f9d1\u200d\U0001f91d\u200d\U0001f9d1']
    for _ in range(300):
        parts = [rng.choice(emoji) if rng.random() < 0.5 else word('en') for _ in range(rng.randint(1, 10))]
        add('emoji', rng.choice(['', ' ']).join(parts))
    # 4. control, zero-width and whitespace characters
    for ch in WHITESPACE + INVISIBLE:
        add('whitespace', 'a' + ch + 'b', ascii_only=True)
        add('whitespace', ch + 'word' + ch, ascii_only=True)
        add('whitespace', ch, ascii_only=True)
        add('whitespace', 'x ' + ch + ' [CLS]' + ch + 'y', ascii_only=True)
    for _ in range(250):
        parts = []
        for _ in range(rng.randint(1, 10)):
            parts.append(casing(word()))
            parts.append(''.join(rng.choice(WHITESPACE + INVISIBLE) for _ in range(rng.randint(0, 3))))
        add('whitespace', ''.join(parts), ascii_only=True)
    # 5. words around the 100-character limit (counted after normalization)
    unit_sets = ['a', 'ab', 'é', 'e\u0301', 'İ', 'ß', '𐌰', '中', 'x\u200b', 'Σ', 'ä']
    for n in range(95, 106):
        for u in unit_sets:
            add('wordlen', u * n)
            add('wordlen', 'pre ' + (u * n)[:n] + ' post')
    for n in (99, 100, 101):
        add('wordlen', 'un' + 'believable' * 9 + 'x' * (n - 92))
        add('wordlen', 'a' * (n - 1) + '\u0301' + 'b')
        add('wordlen', 'q' * n + '.' + 'q' * n)
    # 6. URLs, code, numbers
    hosts = ['example.com', 'sub.domain.org', 'localhost:8080', '127.0.0.1', 'xn--bcher-kva.example', 'bücher.de']
    for _ in range(160):
        add('url', 'https://%s/%s?%s=%d&x=%s#%s' % (rng.choice(hosts), '/'.join(word('en') for _ in range(rng.randint(0, 3))),
                                                   word('en'), rng.randint(0, 99999), word(), word('en')))
    code = ['int main(void) { return 0; }', 'x = [i**2 for i in range(10) if i % 2]', 'a->b = c[d] >> 2;',
            '#include <stdio.h>', 'SELECT * FROM t WHERE id=42 AND name LIKE \'%bert%\';', '$ ls -la ~/.config | grep -v "^d"',
            'const f = (a, b) => a ?? b;', '<div class="x">Hello&nbsp;world</div>', 'if (x != y && !z) { y ||= 1; }',
            '{"key": [1, 2.5e-3, null, true]}', 'fn main() -> Result<(), Box<dyn Error>> { Ok(()) }', 'm@x_v4l = 0b1010_1010']
    for _ in range(170):
        add('code', rng.choice(code) + (' // ' + sentence(4) if rng.random() < 0.3 else ''))
    for _ in range(170):
        r = rng.random()
        if r < 0.25:
            s = '%d,%03d,%03d' % (rng.randint(1, 999), rng.randint(0, 999), rng.randint(0, 999))
        elif r < 0.5:
            s = '%.*f' % (rng.randint(0, 6), rng.uniform(-1e6, 1e6))
        elif r < 0.75:
            s = '%.3e' % rng.uniform(-1e30, 1e30)
        else:
            s = '%04d-%02d-%02d %02d:%02d' % (rng.randint(1900, 2100), rng.randint(1, 12), rng.randint(1, 28),
                                             rng.randint(0, 23), rng.randint(0, 59))
        add('number', s + ' ' + sentence(rng.randint(1, 5)))
    for s in ['0', '-0', '3.14159265358979323846', '1e-10', '１２３４５', '١٢٣٤٥', '१२३', '²³¹', '½¼¾', 'Ⅳ ⅳ',
              '100%', '#1', '№5', '12th', '1,000.00', '0x1F', 'v1.2.3']:
        add('number', s)
    # 7. typed special tokens
    specials = ['[CLS]', '[SEP]', '[MASK]', '[PAD]', '[UNK]', '[cls]', '[Sep]', '[ MASK ]', '[MASK', 'MASK]', '[[CLS]]',
                '[CLS][SEP]', '[MASK]ed', 'un[MASK]able', '＜CLS＞', '[ＣＬＳ]', '[CLS\u200b]', '[\u200bCLS]']
    for _ in range(300):
        parts = [rng.choice(specials) if rng.random() < 0.4 else casing(word()) for _ in range(rng.randint(1, 8))]
        add('special', rng.choice([' ', '', '  ', '\t']).join(parts))
    for s in specials:
        add('special', s)
        add('special', 'x' + s + 'y')
    # 8. sentence pairs
    for _ in range(500):
        a = sentence() if rng.random() < 0.8 else rng.choice(PROSE)
        b = sentence() if rng.random() < 0.8 else rng.choice(PROSE)
        add('pair', a, b)
    for a, b in [('', 'x'), ('x', ''), ('', ''), ('x', ' '), ('x', '\u200b'), (' ', ' '), ('[SEP]', '[CLS]'),
                 ('a [SEP] b', 'c [SEP]'), ('中文', '日本語'), ('e\u0301', '\u00e9')]:
        add('pair', a, b, ascii_only=True)
    # 9. truncation: long single texts and pairs at several max lengths
    for _ in range(40):
        add('long', ' '.join(sentence() for _ in range(rng.randint(20, 90))))
    for _ in range(10):
        add('long', ''.join(rng.choice(WORDS['zh'] + WORDS['ja']) for _ in range(rng.randint(300, 700))))
    for ml in (3, 4, 5, 8, 16, 17, 32, 64, 100, 128, 257, 512):
        for _ in range(22):
            na = rng.choice([0, 1, 2, 5, 10, 40, 100, 300])
            nb = rng.choice([1, 2, 5, 10, 40, 100, 300])
            a = ' '.join(casing(word()) for _ in range(na))
            b = ' '.join(casing(word()) for _ in range(nb))
            add('truncation', a, b, max_length=ml)
        for _ in range(6):
            add('truncation', sentence(rng.randint(1, 60)), max_length=max(ml, 2))
    # 10. random Unicode from all planes (valid scalar values only)
    for i in range(600):
        n = rng.randint(1, 60)
        s = ''.join(rand_scalar(plane_bias=i % 3 != 0) if rng.random() < 0.85 else ' ' for _ in range(n))
        add('random', s, ascii_only=True)
    # 11. odd shapes
    for s in ['', ' ', '   ', '\n', '.', '...', '!!!???', '-' * 50, 'a', 'A', 'aa' * 300, '\u0301', '\u0301\u0301 \u0301',
              ' leading', 'trailing ', ' both ', 'a.b.c.d', "it's", "'quoted'", '"dq"', '(paren)', 'a-b-c', 'a_b_c',
              'ALLCAPS', 'MiXeD CaSe', 'x' * 1000, 'word ' * 200]:
        add('edge', s, ascii_only=True)
    for _ in range(200):
        add('edge', ''.join(rng.choice(PUNCT + [' ', 'a', '1', 'é', '中']) for _ in range(rng.randint(1, 40))))
    return lines


def main():
    lines = build()
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, 'w', encoding='utf-8', newline='\n') as f:
        for ln in lines:
            assert '\n' not in ln and '\r' not in ln
            f.write(ln + '\n')
    cats = {}
    for ln in lines:
        c = json.loads(ln)['cat']
        cats[c] = cats.get(c, 0) + 1
    print('wrote %s: %d lines, %d bytes' % (os.path.relpath(OUT), len(lines), os.path.getsize(OUT)))
    print('  ' + ', '.join('%s %d' % kv for kv in cats.items()))


if __name__ == '__main__':
    main()
