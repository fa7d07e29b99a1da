#!/usr/bin/env python3
"""Generate src/text/unicode_tables.c: the Unicode data the tokenizers need.

    python3 tools/gen_unicode.py             # rewrite src/text/unicode_tables.c
    python3 tools/gen_unicode.py --check     # exit 1 if the committed file is stale
    python3 tools/gen_unicode.py --probe-hf  # compare with Hugging Face `tokenizers`
                                             # over every code point (needs PyPI tokenizers)
    python3 tools/gen_unicode.py --probe-gc  # the same for \p{L} \p{N} \s of its regexes
    python3 tools/gen_unicode.py --probe-norm / --probe-word / --probe-digits / --probe-gcb
                                             # StripAccents + NFKD, \w, is_numeric, grapheme
                                             # clusters (see the lists below)

Source of truth: Python's `unicodedata` (its version, unicodedata.unidata_version,
is written into the generated header), plus a short, explicit list of
adjustments where Hugging Face's Rust tokenizer disagrees with it. HF mixes
several Unicode versions:

  * punctuation, non-spacing marks (Mn) and "other" (C*) categories come from
    the `unicode_categories` crate, whose tables are from about Unicode 8:
    characters given P*/Mn/Cf in later versions are not treated as such, and a
    few characters whose category changed since then keep the old one;
  * unassigned code points (Cn) are NOT removed by clean-up (HF's is_control
    covers Cc, Cf, Co, Cs only);
  * canonical decompositions and combining classes come from the
    `unicode-normalization-alignments` crate (also an older Unicode);
  * lower-casing is Rust's char::to_lowercase (a NEWER Unicode than Python 3.11:
    mappings added in Unicode 15..17 are applied);
  * the CJK ranges are HF's own list (note: 0x2B920..0x2CEAF, not 0x2B820).

The adjustment lists below were produced by `--probe-hf` against tokenizers
0.23.3; `--probe-hf` re-checks the complete model (tables + adjustments)
against HF for every code point and prints any remaining difference.

Tables emitted (all sorted, looked up by binary search; ASCII has fast paths
in the tokenizer):
  class runs   uint32 (start << 3 | class): class of every code point
  ccc runs     uint32 (start << 8 | ccc): canonical combining class
  decomp       {cp, a, b}: one level of canonical decomposition (b = 0 if a
               singleton); the C side recurses; Hangul syllables are algorithmic
  lower        {cp, lower}: simple lower-case mappings; the one multi-character
               mapping (U+0130 -> i + U+0307) is written separately
  gc runs      uint32 (start << 3 | kind): letter (L*), number (N*), White_Space, mark (M*),
               for the tokenizer.json pipeline (src/hf_tok_*.c): the \p{L} and
               \p{N} of GPT-2's split pattern (HF runs it on Oniguruma, whose
               tables are Unicode 16: ONIG_EXTRA_* below add what Python's 14.0
               lacks; --probe-gc checks every code point) and \s / Rust's
               char::is_whitespace
  gcb runs     uint32 (start << 4 | class): Grapheme_Cluster_Break (+ Extended_Pictographic)
  compat       full NFKD of every character whose NFKD differs from its NFD
               ({cp, start, length} into one array), for NFKD / NFKC
  compose      {first << 21 | second, composite}: canonical composition pairs
               (primary composites whose decomposition is two characters), for
               NFC; Hangul syllables are algorithmic
"""
import os
import sys
import unicodedata as ud

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'src', 'text', 'unicode_tables.c')

# Classes (must match src/text/unicode.h).
OTHER, REMOVE, SPACE, PUNCT, MN, CJK = range(6)
CLASS_NAMES = ['OTHER', 'REMOVE', 'SPACE', 'PUNCT', 'MN', 'CJK']

# White_Space property (PropList.txt; unchanged since Unicode 6.3), which is
# what Rust's char::is_whitespace implements.
WHITE_SPACE = '0009..000D 0020 0085 00A0 1680 2000..200A 2028 2029 202F 205F 3000'

# HF's CJK ideograph ranges (tokenizers/src/normalizers/bert.rs).
CJK_RANGES = '4E00..9FFF 3400..4DBF 20000..2A6DF 2A700..2B73F 2B740..2B81F 2B920..2CEAF F900..FAFF 2F800..2FA1F'

# ---- adjustments: where HF disagrees with unicodedata (see module doc) ----
# Cf in Python's Unicode, kept (not removed) by HF.
HF_NOT_CONTROL = '0890..0891 08E2 110CD 13430..13438'
# P* (or ASCII punctuation) in Python's Unicode, not punctuation for HF.
HF_NOT_PUNCT = ('061D 09FD 0A76 0C77 0C84 1B7D..1B7E 2E43..2E4F 2E52..2E5D 10EAD 10F55..10F59 '
                '10F86..10F89 1144B..1144F 1145A..1145B 1145D 11660..1166C 116B9 1183B 11944..11946 '
                '119E2 11A3F..11A46 11A9A..11A9C 11A9E..11AA2 11C41..11C45 11C70..11C71 11EF7..11EF8 '
                '11FFF 12FF1..12FF2 16E97..16E9A 16FE2 1E95E..1E95F')
# Not P* in Python's Unicode, punctuation for HF (older category Po).
HF_EXTRA_PUNCT = '166D 111C9'
# Mn in Python's Unicode, not stripped by HF.
HF_NOT_MN = ('07FD 0898..089F 08CA..08E1 09FE 0AFA..0AFF 0B55 0C04 0C3C 0D00 0D3B..0D3C 0D81 0EBA '
             '180F 1885..1886 1ABF..1ACE 1DF6..1DFB A82C A8C5 A8FF A9BD 10D24..10D27 10EAB..10EAC '
             '10F46..10F50 10F82..10F85 11070 11073..11074 110C2 111C9 111CF 1123E 1133B 11438..1143F '
             '11442..11444 11446 1145E 1182F..11837 11839..1183A 1193B..1193C 1193E 11943 119D4..119D7 '
             '119DA..119DB 119E0 11A01..11A0A 11A33..11A38 11A3B..11A3E 11A47 11A51..11A56 11A59..11A5B '
             '11A8A..11A96 11A98..11A99 11C30..11C36 11C38..11C3D 11C3F 11C92..11CA7 11CAA..11CB0 '
             '11CB2..11CB3 11CB5..11CB6 11D31..11D36 11D3A 11D3C..11D3D 11D3F..11D45 11D47 11D90..11D91 '
             '11D95 11D97 11EF3..11EF4 16F4F 16FE4 1CF00..1CF2D 1CF30..1CF46 1E000..1E006 1E008..1E018 '
             '1E01B..1E021 1E023..1E024 1E026..1E02A 1E130..1E136 1E2AE 1E2EC..1E2EF 1E944..1E94A')
# Not Mn in Python's Unicode (Mc since Unicode 14), stripped by HF.
HF_EXTRA_MN = '1734'
# Canonical decompositions HF's normalization crate does not know.
HF_NO_DECOMP = '11938'
# Non-zero combining class in Python's Unicode, 0 for HF's normalization crate.
HF_CCC_ZERO_RANGES = ('07FD 0898..089F 08CA..08D3 09FE 0C3C 0D3B..0D3C 0EBA 1715 1ABF..1ACE 1DF6..1DFA '
                      'A82C 10D24..10D27 10EAB..10EAC 10F46..10F50 10F82..10F85 11070 1133B 1145E '
                      '11839..1183A 1193D..1193E 11943 119E0 11A34 11A47 11A99 11D42 11D44..11D45 11D97 '
                      '16FF0..16FF1 1E130..1E136 1E2AE 1E2EC..1E2EF')
# Lower-case mappings of characters added after Python's Unicode (Rust std
# is newer): code point -> lower-case code point.
HF_EXTRA_LOWER = {
    0x1C89: 0x1C8A, 0xA7CB: 0x0264, 0xA7CC: 0xA7CD, 0xA7CE: 0xA7CF, 0xA7D2: 0xA7D3, 0xA7D4: 0xA7D5,
    0xA7DA: 0xA7DB, 0xA7DC: 0x019B,
    **{cp: cp + 0x20 for cp in range(0x10D50, 0x10D66)},
    **{cp: cp + 0x1B for cp in range(0x16EA0, 0x16EB9)},
}


# Letters / numbers for the \\p{L} / \\p{N} of tokenizers' regular expressions
# (Oniguruma, Unicode 16) that Python 3.11's Unicode 14 does not have; made by
# --probe-gc (tokenizers 0.23.3), which also checks that nothing is missing.
ONIG_EXTRA_LETTER = ('1C89..1C8A A7CB..A7CD A7DA..A7DC 105C0..105F3 10D4A..10D65 10D6F..10D85 10EC2..10EC4 1123F..11240 11380..11389 1138B 1138E 11390..113B5 113B7 113D1 113D3 11BC0..11BE0 11F02 11F04..11F10 11F12..11F33 1342F 13441..13446 13460..143FA 16100..1611D 16D40..16D6C 18CFF 1B132 1B155 1DF25..1DF2A 1E030..1E06D 1E4D0..1E4EB 1E5D0..1E5ED 1E5F0 2B739 2EBF0..2EE5D 31350..323AF')
ONIG_EXTRA_NUMBER = ('10D40..10D49 116D0..116E3 11BF0..11BF9 11F50..11F59 16130..16139 16D70..16D79 1CCF0..1CCF9 1D2C0..1D2D3 1E4F0..1E4F9 1E5F1..1E5FA')


# Marks (M*) as tokenizers' StripAccents sees them (the alignments crate's
# is_combining_mark, an older Unicode): added / removed against Python's M*.
# This list and HF_NO_COMPAT come from --probe-norm (tokenizers 0.23.3).
HF_MARK_ADD = ('1CF2..1CF3')
HF_MARK_DEL = ('07FD 0898..089F 08CA..08D3 09FE 0AFA..0AFF 0B55 0C04 0C3C 0D00 0D3B..0D3C 0D81 0EBA 1715 '
    '180F 1ABF..1ACE 1CF7 1DF6..1DFA A82C A8FF 10D24..10D27 10EAB..10EAC 10F46..10F50 '
    '10F82..10F85 11070 11073..11074 110C2 11145..11146 111C9 111CE..111CF 1133B 1145E '
    '1182C..1183A 11930..11935 11937..11938 1193B..1193E 11940 11942..11943 119D1..119D7 '
    '119DA..119E0 119E4 11A01..11A0A 11A33..11A39 11A3B..11A3E 11A47 11A51..11A5B 11A8A..11A99 '
    '11D31..11D36 11D3A 11D3C..11D3D 11D3F..11D45 11D47 11D8A..11D8E 11D90..11D91 11D93..11D97 '
    '11EF3..11EF6 16F4F 16F7F..16F87 16FE4 16FF0..16FF1 1CF00..1CF2D 1CF30..1CF46 1E130..1E136 '
    '1E2AE 1E2EC..1E2EF')
# Characters with a compatibility decomposition in Python's Unicode that HF's
# NFKD / NFKC leave alone (added after the crate's Unicode version).
HF_NO_COMPAT = ('32FF A7F2..A7F4 AB69 10781..10785 10787..107B0 107B2..107BA 1F16C 1FBF0..1FBF9')

# Numbers for Rust's char::is_numeric (the Digits pre-tokenizer), a newer
# Unicode than Oniguruma's \\p{N}: these on top of the N* kind (--probe-digits).
HF_NUMERIC_ADD = '11DE0..11DE9 16FF4..16FF6'

# \\w of the Rust regex crate (tokenizers' Whitespace pre-tokenizer, single_word
# added tokens): derived as L* M* Nd Nl Pc ZWNJ ZWJ, plus these (Alphabetic
# So such as circled letters, Unicode 15-16 additions); --probe-word checks.
HF_WORD_ADD = ('0897 0CF3 0ECE 1C89..1C8A 24B6..24E9 A7CB..A7CD A7DA..A7DC 105C0..105F3 10D40..10D65 '
    '10D69..10D6D 10D6F..10D85 10EC2..10EC4 10EFC..10EFF 1123F..11241 11380..11389 1138B 1138E '
    '11390..113B5 113B7..113C0 113C2 113C5 113C7..113CA 113CC..113D3 113E1..113E2 116D0..116E3 '
    '11BC0..11BE0 11BF0..11BF9 11F00..11F10 11F12..11F3A 11F3E..11F42 11F50..11F5A 1342F '
    '13440..13455 13460..143FA 16100..16139 16D40..16D6C 16D70..16D79 18CFF 1B132 1B155 '
    '1CCF0..1CCF9 1DF25..1DF2A 1E030..1E06D 1E08F 1E4D0..1E4F9 1E5D0..1E5FA 1F130..1F149 '
    '1F150..1F169 1F170..1F189 2B739 2EBF0..2EE5D 31350..323AF')

# Grapheme_Cluster_Break, for the Precompiled normalizer (it looks extended
# grapheme clusters up whole; tokenizers uses the unicode-segmentation crate,
# Unicode 16). Derived here from Python's categories by UAX #29's definitions
# (Extend = Mn Me ZWNJ skin tones, SpacingMark = Mc, Control = Cc Cf Zl Zp,
# Hangul L V T LV LVT, RI, ZWJ, CR, LF), then these additions / removals so
# that every class equals the `regex` module's \\p{GCB=...} and
# \\p{Extended_Pictographic} (made by --probe-gcb, which needs PyPI regex).
GCB_ADJUST = (
    ('Control', 'ADD',
     '2065 FFF0..FFF8 13439..1343F E0000 E0002..E001F E0080..E00FF E01F0..E0FFF'),
    ('Control', 'DEL',
     '0600..0605 06DD 070F 0890..0891 08E2 110BD 110CD E0020..E007F'),
    ('Extend', 'ADD',
     '0897 09BE 09D7 0B3E 0B57 0BBE 0BD7 0CC0 0CC2 0CC7..0CC8 0CCA..0CCB 0CD5..0CD6 0D3E 0D57 0DCF '
     '0DDF 0ECE 1715 1734 1ACF..1ADD 1AE0..1AEB 1B35 1B3B 1B3D 1B43..1B44 1BAA 1BF2..1BF3 '
     '302E..302F A953 A9C0 FF9E..FF9F 10D69..10D6D 10EFA..10EFF 111C0 11235 11241 1133E 1134D '
     '11357 113B8 113BB..113C0 113C2 113C5 113C7..113C9 113CE..113D0 113D2 113E1..113E2 114B0 '
     '114BD 115AF 116B6 11930 1193D 11B60 11B62..11B64 11B66 11F00..11F01 11F36..11F3A '
     '11F40..11F42 11F5A 13440 13447..13455 1611E..16129 1612D..1612F 16FF0..16FF1 1D165..1D166 '
     '1D16D..1D172 1E08F 1E4EC..1E4EF 1E5EE..1E5EF 1E6E3 1E6E6 1E6EE..1E6EF 1E6F5 E0020..E007F'),
    ('Extend', 'DEL',
     '1171E'),
    ('Prepend', 'ADD',
     '0600..0605 06DD 070F 0890..0891 08E2 0D4E 110BD 110CD 111C2..111C3 113D1 1193F 11941 '
     '11A84..11A89 11D46 11F02'),
    ('SpacingMark', 'ADD',
     '0CF3 0E33 0EB3 113B9..113BA 113CA 113CC..113CD 1171E 11B61 11B65 11B67 11F03 11F34..11F35 '
     '11F3E..11F3F 1612A..1612C'),
    ('SpacingMark', 'DEL',
     '09BE 09D7 0B3E 0B57 0BBE 0BD7 0CC0 0CC2 0CC7..0CC8 0CCA..0CCB 0CD5..0CD6 0D3E 0D57 0DCF 0DDF '
     '102B..102C 1038 1062..1064 1067..106D 1083 1087..108C 108F 109A..109C 1715 1734 1A61 '
     '1A63..1A64 1B35 1B3B 1B3D 1B43..1B44 1BAA 1BF2..1BF3 302E..302F A953 A9C0 AA7B AA7D 111C0 '
     '11235 1133E 1134D 11357 114B0 114BD 115AF 116B6 11720..11721 11930 1193D 16FF0..16FF1 '
     '1D165..1D166 1D16D..1D172'),
    ('V', 'ADD',
     '16D63 16D67..16D6A'),
    ('ExtPict', 'ADD',
     '00A9 00AE 203C 2049 2122 2139 2194..2199 21A9..21AA 231A..231B 2328 23CF 23E9..23F3 '
     '23F8..23FA 24C2 25AA..25AB 25B6 25C0 25FB..25FE 2600..2604 260E 2611 2614..2615 2618 261D '
     '2620 2622..2623 2626 262A 262E..262F 2638..263A 2640 2642 2648..2653 265F..2660 2663 '
     '2665..2666 2668 267B 267E..267F 2692..2697 2699 269B..269C 26A0..26A1 26A7 26AA..26AB '
     '26B0..26B1 26BD..26BE 26C4..26C5 26C8 26CE..26CF 26D1 26D3..26D4 26E9..26EA 26F0..26F5 '
     '26F7..26FA 26FD 2702 2705 2708..270D 270F 2712 2714 2716 271D 2721 2728 2733..2734 2744 2747 '
     '274C 274E 2753..2755 2757 2763..2764 2795..2797 27A1 27B0 27BF 2934..2935 2B05..2B07 '
     '2B1B..2B1C 2B50 2B55 3030 303D 3297 3299 1F004 1F02C..1F02F 1F094..1F09F 1F0AF..1F0B0 1F0C0 '
     '1F0CF..1F0D0 1F0F6..1F0FF 1F170..1F171 1F17E..1F17F 1F18E 1F191..1F19A 1F1AE..1F1E5 '
     '1F201..1F20F 1F21A 1F22F 1F232..1F23A 1F23C..1F23F 1F249..1F25F 1F266..1F321 1F324..1F393 '
     '1F396..1F397 1F399..1F39B 1F39E..1F3F0 1F3F3..1F3F5 1F3F7..1F3FA 1F400..1F4FD 1F4FF..1F53D '
     '1F549..1F54E 1F550..1F567 1F56F..1F570 1F573..1F57A 1F587 1F58A..1F58D 1F590 1F595..1F596 '
     '1F5A4..1F5A5 1F5A8 1F5B1..1F5B2 1F5BC 1F5C2..1F5C4 1F5D1..1F5D3 1F5DC..1F5DE 1F5E1 1F5E3 '
     '1F5E8 1F5EF 1F5F3 1F5FA..1F64F 1F680..1F6C5 1F6CB..1F6D2 1F6D5..1F6E5 1F6E9 1F6EB..1F6F0 '
     '1F6F3..1F6FF 1F7DA..1F7FF 1F80C..1F80F 1F848..1F84F 1F85A..1F85F 1F888..1F88F 1F8AE..1F8AF '
     '1F8BC..1F8BF 1F8C2..1F8CF 1F8D9..1F8FF 1F90C..1F93A 1F93C..1F945 1F947..1F9FF 1FA58..1FA5F '
     '1FA6E..1FAFF 1FC00..1FFFD'),
)


def parse_ranges(s):
    out = set()
    for part in s.split():
        if '..' in part:
            a, b = part.split('..')
            out.update(range(int(a, 16), int(b, 16) + 1))
        else:
            out.add(int(part, 16))
    return out


def scalar_values():
    return (cp for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF)


class Model:
    """HF's BertNormalizer / BertPreTokenizer character model from the tables."""

    def __init__(self):
        self.ws = parse_ranges(WHITE_SPACE)
        self.cjk = parse_ranges(CJK_RANGES)
        not_control = parse_ranges(HF_NOT_CONTROL)
        not_punct = parse_ranges(HF_NOT_PUNCT)
        extra_punct = parse_ranges(HF_EXTRA_PUNCT)
        not_mn = parse_ranges(HF_NOT_MN)
        extra_mn = parse_ranges(HF_EXTRA_MN)
        self.no_decomp = parse_ranges(HF_NO_DECOMP)
        self.ccc_zero = parse_ranges(HF_CCC_ZERO_RANGES)
        self.cls = {}
        for cp in scalar_values():
            c = chr(cp)
            cat = ud.category(c)
            if cp in (0x9, 0xA, 0xD):
                k = SPACE
            elif cp == 0 or cp == 0xFFFD or (cat in ('Cc', 'Cf', 'Co') and cp not in not_control):
                k = REMOVE
            elif cp in self.ws:
                k = SPACE
            elif ((cat[0] == 'P' or (33 <= cp <= 126 and not c.isalnum())) and cp not in not_punct) \
                    or cp in extra_punct:
                k = PUNCT
            elif (cat == 'Mn' and cp not in not_mn) or cp in extra_mn:
                k = MN
            elif cp in self.cjk:
                k = CJK
            else:
                k = OTHER
            if k != OTHER:
                self.cls[cp] = k
        self.decomp = {}  # one level, canonical
        self.ccc = {}
        self.lower = {}
        for cp in scalar_values():
            c = chr(cp)
            d = ud.decomposition(c)
            if d and not d.startswith('<') and cp not in self.no_decomp:
                self.decomp[cp] = [int(x, 16) for x in d.split()]
            k = ud.combining(c)
            if k and cp not in self.ccc_zero:
                self.ccc[cp] = k
            lo = c.lower()
            if lo != c:
                self.lower[cp] = [ord(x) for x in lo]
        for cp, lo in HF_EXTRA_LOWER.items():
            assert cp not in self.lower
            self.lower[cp] = [lo]

    def klass(self, cp):
        return self.cls.get(cp, OTHER)

    def nfd(self, cps):
        out = []
        for cp in cps:
            out.extend(self.decompose(cp))
        # canonical ordering: stable sort of every run of non-zero classes
        i = 0
        while i < len(out):
            if self.ccc.get(out[i], 0) == 0:
                i += 1
                continue
            j = i
            while j < len(out) and self.ccc.get(out[j], 0) != 0:
                j += 1
            out[i:j] = sorted(out[i:j], key=lambda x: self.ccc[x])
            i = j
        return out

    def decompose(self, cp):
        if 0xAC00 <= cp <= 0xD7A3:
            s = cp - 0xAC00
            r = [0x1100 + s // 588, 0x1161 + (s % 588) // 28]
            if s % 28:
                r.append(0x11A7 + s % 28)
            return r
        if cp in self.decomp:
            r = []
            for x in self.decomp[cp]:
                r.extend(self.decompose(x))
            return r
        return [cp]

    def normalize(self, text, lowercase=True, strip_accents=True, chinese=True):
        """Same steps, same order as HF's BertNormalizer."""
        cps = []
        for c in map(ord, text):
            k = self.klass(c)
            if k == REMOVE:
                continue
            cps.append(0x20 if k == SPACE else c)
        if chinese:
            out = []
            for c in cps:
                out.extend([0x20, c, 0x20] if self.klass(c) == CJK else [c])
            cps = out
        if strip_accents:
            cps = [c for c in self.nfd(cps) if self.klass(c) != MN]
        if lowercase:
            out = []
            for c in cps:
                out.extend(self.lower.get(c, [c]))
            cps = out
        return ''.join(map(chr, cps))


GC_LETTER, GC_NUMBER, GC_SPACE, GC_MARK = 1, 2, 3, 4
GC_WORD = 8  # flag on top of the kind


def gc_kinds(m):
    out = {}
    extra_l, extra_n = parse_ranges(ONIG_EXTRA_LETTER), parse_ranges(ONIG_EXTRA_NUMBER)
    mark_add, mark_del = parse_ranges(HF_MARK_ADD), parse_ranges(HF_MARK_DEL)
    word_add = parse_ranges(HF_WORD_ADD)
    for cp in scalar_values():
        cat = ud.category(chr(cp))
        if cp in m.ws:
            out[cp] = GC_SPACE
        elif cat[0] == 'L' or cp in extra_l:
            out[cp] = GC_LETTER
        elif cat[0] == 'N' or cp in extra_n:
            out[cp] = GC_NUMBER
        elif (cat[0] == 'M' and cp not in mark_del) or cp in mark_add:
            out[cp] = GC_MARK  # (a letter in mark_add stays a letter: bli_uc_is_mark adds it)
        if cat[0] in 'LM' or cat in ('Nd', 'Nl', 'Pc') or cp in (0x200C, 0x200D) or cp in word_add:
            out[cp] = out.get(cp, 0) | GC_WORD
    return out


GCB_NAMES = ['Other', 'CR', 'LF', 'Control', 'Extend', 'ZWJ', 'Regional_Indicator', 'Prepend', 'SpacingMark',
             'L', 'V', 'T', 'LV', 'LVT', 'ExtPict']


def gcb_derived():
    d = {n: set() for n in GCB_NAMES[1:]}
    for c in scalar_values():
        cat = ud.category(chr(c))
        if c == 13: d['CR'].add(c)
        elif c == 10: d['LF'].add(c)
        elif c == 0x200D: d['ZWJ'].add(c)
        elif c == 0x200C or 0x1F3FB <= c <= 0x1F3FF: d['Extend'].add(c)
        elif 0x1F1E6 <= c <= 0x1F1FF: d['Regional_Indicator'].add(c)
        elif cat in ('Zl', 'Zp', 'Cc', 'Cf'): d['Control'].add(c)
        elif cat in ('Mn', 'Me'): d['Extend'].add(c)
        elif cat == 'Mc': d['SpacingMark'].add(c)
        elif 0x1100 <= c <= 0x115F or 0xA960 <= c <= 0xA97C: d['L'].add(c)
        elif 0x1160 <= c <= 0x11A7 or 0xD7B0 <= c <= 0xD7C6: d['V'].add(c)
        elif 0x11A8 <= c <= 0x11FF or 0xD7CB <= c <= 0xD7FB: d['T'].add(c)
        elif 0xAC00 <= c <= 0xD7A3: d['LV' if (c - 0xAC00) % 28 == 0 else 'LVT'].add(c)
    return d


def gcb_classes():
    """code point -> index in GCB_NAMES (Other absent); ExtPict never overlaps another class."""
    d = gcb_derived()
    for name, op, r in GCB_ADJUST:
        (d[name].update if op == 'ADD' else d[name].difference_update)(parse_ranges(r))
    out = {}
    for k, name in enumerate(GCB_NAMES[1:], 1):
        for c in d[name]:
            assert c not in out, (hex(c), name)
            out[c] = k
    return out


def probe_gcb():
    import regex
    d = gcb_derived()
    for name in GCB_NAMES[1:]:
        r = regex.compile(r'\p{Extended_Pictographic}' if name == 'ExtPict' else r'\p{GCB=%s}' % name)
        want = {c for c in scalar_values() if r.match(chr(c))}
        for op, diff in (('ADD', want - d[name]), ('DEL', d[name] - want)):
            if diff:
                print(name, op, ' '.join('%04X' % x for x in sorted(diff)))


def compat_decompositions():
    out = {}
    none = parse_ranges(HF_NO_COMPAT)
    for cp in scalar_values():
        c = chr(cp)
        if cp in none:
            out[cp] = [cp]
            continue
        k = ud.normalize('NFKD', c)
        if k != ud.normalize('NFD', c):
            out[cp] = [ord(x) for x in k]
    return out


def compositions(m):
    """(first, second) -> composite, for every primary composite with a two-character decomposition."""
    out = {}
    for cp, d in m.decomp.items():
        if len(d) != 2 or 0xAC00 <= cp <= 0xD7A3:
            continue
        c = chr(cp)
        if ud.normalize('NFC', ud.normalize('NFD', c)) != c:  # composition exclusion or non-starter
            continue
        out[(d[0], d[1])] = cp
    return out


def runs(values, shift, mask):
    """[(start, value)] runs covering 0..0x10FFFF (value 0 where absent)."""
    out = []
    prev = None
    for cp in range(0x110000):
        v = values.get(cp, 0)
        if v != prev:
            assert v <= mask
            out.append((cp << shift) | v)
            prev = v
    return out


def fmt_list(items, per_line):
    lines = []
    for i in range(0, len(items), per_line):
        lines.append('    ' + ' '.join(items[i:i + per_line]))
    return '\n'.join(lines)


C_FUNCTIONS = r'''
/* ------------------------------------------------------------ lookups */

static uint32_t run_lookup(const uint32_t *runs, size_t n, uint32_t cp, int shift) {
    size_t lo = 0, hi = n; /* last run whose start <= cp */
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if ((runs[mid] >> shift) <= cp) lo = mid; else hi = mid;
    }
    return runs[lo] & ((1u << shift) - 1);
}

int bli_uc_class(uint32_t cp) {
    if (cp > 0x10FFFF) return BL_UC_OTHER;
    return (int)run_lookup(class_runs, sizeof class_runs / sizeof class_runs[0], cp, 3);
}

int bli_uc_ccc(uint32_t cp) {
    if (cp < 0x300 || cp > 0x10FFFF) return 0;
    return (int)run_lookup(ccc_runs, sizeof ccc_runs / sizeof ccc_runs[0], cp, 8);
}

static int decompose_into(uint32_t cp, uint32_t *out, int n) {
    if (cp >= 0xAC00 && cp <= 0xD7A3) { /* Hangul syllable: L V (T) */
        uint32_t s = cp - 0xAC00;
        out[n++] = 0x1100 + s / 588;
        out[n++] = 0x1161 + (s % 588) / 28;
        if (s % 28) out[n++] = 0x11A7 + s % 28;
        return n;
    }
    if (cp >= 0xC0) {
        size_t lo = 0, hi = sizeof decomp / sizeof decomp[0];
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (decomp[mid][0] < cp) lo = mid + 1; else hi = mid;
        }
        if (lo < sizeof decomp / sizeof decomp[0] && decomp[lo][0] == cp) {
            n = decompose_into(decomp[lo][1], out, n);
            if (decomp[lo][2]) n = decompose_into(decomp[lo][2], out, n);
            return n;
        }
    }
    out[n++] = cp;
    return n;
}

int bli_uc_decompose(uint32_t cp, uint32_t out[BL_UC_MAX_DECOMP]) {
    return decompose_into(cp, out, 0);
}

int bli_uc_gc(uint32_t cp) {
    if (cp > 0x10FFFF) return BL_GC_OTHER;
    return (int)run_lookup(gc_runs, sizeof gc_runs / sizeof gc_runs[0], cp, 4) & 7;
}

int bli_uc_is_word(uint32_t cp) {
    if (cp > 0x10FFFF) return 0;
    return (int)run_lookup(gc_runs, sizeof gc_runs / sizeof gc_runs[0], cp, 4) >> 3;
}

int bli_uc_is_numeric(uint32_t cp) {
    if (bli_uc_gc(cp) == BL_GC_NUMBER) return 1;
    for (size_t k = 0; k < sizeof numeric_extra / sizeof numeric_extra[0]; k++)
        if (numeric_extra[k] == cp) return 1;
    return 0;
}

int bli_uc_is_mark(uint32_t cp) {
    if (bli_uc_gc(cp) == BL_GC_MARK) return 1;
    for (size_t k = 0; k < sizeof mark_letters / sizeof mark_letters[0]; k++)
        if (mark_letters[k] == cp) return 1;
    return 0;
}

int bli_uc_gcb(uint32_t cp) {
    if (cp > 0x10FFFF) return BL_GCB_OTHER;
    return (int)run_lookup(gcb_runs, sizeof gcb_runs / sizeof gcb_runs[0], cp, 4);
}

int bli_uc_decompose_compat(uint32_t cp, uint32_t out[BL_UC_MAX_COMPAT]) {
    if (cp >= 0xA0) {
        size_t lo = 0, hi = sizeof compat / sizeof compat[0];
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (compat[mid][0] < cp) lo = mid + 1; else hi = mid;
        }
        if (lo < sizeof compat / sizeof compat[0] && compat[lo][0] == cp) {
            for (uint32_t k = 0; k < compat[lo][2]; k++) out[k] = compat_cps[compat[lo][1] + k];
            return (int)compat[lo][2];
        }
    }
    return decompose_into(cp, out, 0);
}

uint32_t bli_uc_compose(uint32_t a, uint32_t b) {
    if (a >= 0x1100 && a < 0x1113 && b >= 0x1161 && b < 0x1176) /* Hangul L + V */
        return 0xAC00 + ((a - 0x1100) * 21 + (b - 0x1161)) * 28;
    if (a >= 0xAC00 && a <= 0xD7A3 && (a - 0xAC00) % 28 == 0 && b > 0x11A7 && b < 0x11C3) /* LV + T */
        return a + (b - 0x11A7);
    uint64_t key = (uint64_t)a << 21 | b;
    size_t lo = 0, hi = sizeof compose / sizeof compose[0];
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (compose[mid].key < key) lo = mid + 1; else hi = mid;
    }
    return lo < sizeof compose / sizeof compose[0] && compose[lo].key == key ? compose[lo].cp : 0;
}

int bli_uc_lower(uint32_t cp, uint32_t out[BL_UC_MAX_LOWER]) {
    if (cp < 0x80) {
        out[0] = (cp >= 'A' && cp <= 'Z') ? cp + 32 : cp;
        return 1;
    }
    if (cp == 0x130) { out[0] = 0x69; out[1] = 0x307; return 2; }
    size_t lo = 0, hi = sizeof lower / sizeof lower[0];
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (lower[mid][0] < cp) lo = mid + 1; else hi = mid;
    }
    out[0] = (lo < sizeof lower / sizeof lower[0] && lower[lo][0] == cp) ? lower[lo][1] : cp;
    return 1;
}
'''


def generate():
    m = Model()
    multi = {cp: lo for cp, lo in m.lower.items() if len(lo) > 1}
    assert multi == {0x130: [0x69, 0x307]}, multi  # hard-coded in C_FUNCTIONS
    assert all(cp >= 0x80 for cp in m.lower if cp > ord('Z'))
    max_decomp = max(len(m.decompose(cp)) for cp in scalar_values())
    assert min(m.decomp) >= 0xC0 and min(m.ccc) >= 0x300
    assert all(len(v) <= 2 for v in m.decomp.values())
    class_runs = runs(m.cls, 3, 7)
    ccc_runs = runs(m.ccc, 8, 255)
    out = []
    out.append('/* unicode_tables.c — GENERATED by tools/gen_unicode.py; do not edit.\n'
               ' *\n'
               ' * Unicode version: %s (Python %d.%d unicodedata), with the adjustments\n'
               ' * listed in tools/gen_unicode.py that make it agree with Hugging Face\n'
               ' * tokenizers (older category/normalization tables, newer lower-casing).\n'
               ' */' % (ud.unidata_version, sys.version_info[0], sys.version_info[1]))
    out.append('#include "unicode.h"\n#include <stddef.h>\n')
    out.append('const char bli_unicode_version[] = "%s";\n' % ud.unidata_version)
    out.append('#if BL_UC_MAX_DECOMP < %d\n#error "BL_UC_MAX_DECOMP too small"\n#endif\n' % max_decomp)
    out.append('/* class runs: (first code point << 3) | BL_UC_* class, sorted; %d runs */' % len(class_runs))
    out.append('static const uint32_t class_runs[] = {\n%s\n};\n'
               % fmt_list(['0x%x,' % v for v in class_runs], 10))
    out.append('/* canonical combining class runs: (first code point << 8) | ccc; %d runs */' % len(ccc_runs))
    out.append('static const uint32_t ccc_runs[] = {\n%s\n};\n'
               % fmt_list(['0x%x,' % v for v in ccc_runs], 10))
    items = ['{0x%x,0x%x,0x%x},' % (cp, d[0], d[1] if len(d) > 1 else 0) for cp, d in sorted(m.decomp.items())]
    out.append('/* one level of canonical decomposition {cp, first, second or 0}; %d entries */' % len(items))
    out.append('static const uint32_t decomp[][3] = {\n%s\n};\n' % fmt_list(items, 5))
    items = ['{0x%x,0x%x},' % (cp, lo[0]) for cp, lo in sorted(m.lower.items()) if cp >= 0x80 and len(lo) == 1]
    out.append('/* simple lower-case mappings {cp, lower} for cp >= 0x80; %d entries */' % len(items))
    out.append('static const uint32_t lower[][2] = {\n%s\n};\n' % fmt_list(items, 6))
    gc = runs(gc_kinds(m), 4, 15)
    out.append('/* gc runs: (first code point << 4) | 8 if \\w | BL_GC_* kind; %d runs */' % len(gc))
    out.append('static const uint32_t gc_runs[] = {\n%s\n};\n' % fmt_list(['0x%x,' % v for v in gc], 10))
    kinds = {cp: k & 7 for cp, k in gc_kinds(m).items()}
    ml = sorted(c for c in parse_ranges(HF_MARK_ADD) if kinds.get(c) != GC_MARK)
    ne = sorted(c for c in parse_ranges(HF_NUMERIC_ADD) if kinds.get(c) != GC_NUMBER)
    out.append('/* numeric for Rust (Digits) beyond the N* kind */')
    out.append('static const uint32_t numeric_extra[] = {%s};\n' % ', '.join('0x%x' % c for c in ne))
    out.append('/* letters (for \\p{L}) that StripAccents removes as marks */')
    out.append('static const uint32_t mark_letters[] = {%s};\n' % ', '.join('0x%x' % c for c in ml))
    gr = runs(gcb_classes(), 4, 15)
    out.append('/* grapheme cluster break runs: (first code point << 4) | BL_GCB_* class; %d runs */' % len(gr))
    out.append('static const uint32_t gcb_runs[] = {\n%s\n};\n' % fmt_list(['0x%x,' % v for v in gr], 10))
    cd = compat_decompositions()
    assert min(cd) >= 0xA0 and max(len(v) for v in cd.values()) <= 18
    flat, items = [], []
    for cp, v in sorted(cd.items()):
        items.append('{0x%x,%d,%d},' % (cp, len(flat), len(v)))
        flat.extend(v)
    out.append('#if BL_UC_MAX_COMPAT < %d\n#error "BL_UC_MAX_COMPAT too small"\n#endif' % max(len(v) for v in cd.values()))
    out.append('/* full NFKD where it differs from NFD: {cp, start in compat_cps, length}; %d entries */' % len(items))
    out.append('static const uint32_t compat[][3] = {\n%s\n};\n' % fmt_list(items, 6))
    out.append('static const uint32_t compat_cps[] = {\n%s\n};\n' % fmt_list(['0x%x,' % v for v in flat], 10))
    comp = sorted(((a << 21 | b), c) for (a, b), c in compositions(m).items())
    items = ['{0x%xull,0x%x},' % kc for kc in comp]
    out.append('/* canonical composition pairs {first << 21 | second, composite}, sorted; %d entries */' % len(items))
    out.append('static const struct { uint64_t key; uint32_t cp; } compose[] = {\n%s\n};' % fmt_list(items, 4))
    out.append(C_FUNCTIONS)
    return '\n'.join(out)


def probe_hf():
    """Compare the model with HF's normalizer and pre-tokenizer, code point by code point."""
    from tokenizers import normalizers as N, pre_tokenizers as P
    m = Model()
    clean = N.BertNormalizer(clean_text=True, handle_chinese_chars=False, strip_accents=False, lowercase=False)
    chin = N.BertNormalizer(clean_text=False, handle_chinese_chars=True, strip_accents=False, lowercase=False)
    strip = N.BertNormalizer(clean_text=False, handle_chinese_chars=False, strip_accents=True, lowercase=False)
    low = N.BertNormalizer(clean_text=False, handle_chinese_chars=False, strip_accents=False, lowercase=True)
    nfd = N.NFD()
    pre = P.BertPreTokenizer()
    diffs = {}

    def note(kind, cp):
        diffs.setdefault(kind, []).append(cp)

    marks = [0x334, 0x345, 0x301, 0x5B0]  # ccc 1, 240, 230, 10
    for cp in scalar_values():
        c = chr(cp)
        k = m.klass(cp)
        want = '' if k == REMOVE else ' ' if k == SPACE else c
        if clean.normalize_str(c) != want:
            note('clean', cp)
        if (chin.normalize_str(c) != c) != (k == CJK):
            note('cjk', cp)
        if strip.normalize_str(c) != ''.join(chr(x) for x in m.nfd([cp]) if m.klass(x) != MN):
            note('strip', cp)
        if low.normalize_str(c) != ''.join(map(chr, m.lower.get(cp, [cp]))):
            note('lower', cp)
        if nfd.normalize_str(c) != ''.join(map(chr, m.nfd([cp]))):
            note('nfd', cp)
        n = len(pre.pre_tokenize_str('a' + c + 'a'))
        if n != (2 if k == SPACE or cp in m.ws else 3 if k == PUNCT else 1):  # VT/FF/NEL are removed earlier
            note('pretok', cp)
        for mk in marks:
            for s in ([0x61, mk, cp], [0x61, cp, mk]):
                if nfd.normalize_str(''.join(map(chr, s))) != ''.join(map(chr, m.nfd(s))):
                    note('ccc', cp)
                    break
            else:
                continue
            break
    for kind, cps in diffs.items():
        print('%-7s %5d differences: %s' % (kind, len(cps), ' '.join('%04X' % x for x in cps[:200])))
    print('probe: %d kinds of difference (Python unicodedata %s)' % (len(diffs), ud.unidata_version))
    return 1 if diffs else 0


def probe_gc():
    """HF's \\p{L}, \\p{N}, \\s (Split(Regex) pre-tokenizer) against gc_kinds, every code point."""
    from tokenizers import pre_tokenizers as P, Regex
    cps = list(scalar_values())

    def hf_set(pattern):
        out = set()
        for i in range(0, len(cps), 50000):
            chunk = cps[i:i + 50000]
            covered = set()
            for _, (s, e) in P.Split(Regex(pattern), 'removed').pre_tokenize_str('|'.join(map(chr, chunk))):
                covered.update(range(s, e))
            out.update(c for k, c in enumerate(chunk) if 2 * k not in covered)
        return out
    kinds = {cp: k & 7 for cp, k in gc_kinds(Model()).items()}
    bad = 0
    for kind, pattern in ((GC_LETTER, r'\p{L}'), (GC_NUMBER, r'\p{N}'), (GC_SPACE, r'\s')):
        mine = {cp for cp, k in kinds.items() if k == kind}
        hf = hf_set(pattern)
        for name, d in (('HF only', hf - mine), ('here only', mine - hf)):
            if d:
                bad += 1
                print('%s %s: %s' % (pattern, name, ' '.join('%04X' % x for x in sorted(d)[:200])))
    print('probe-gc: %d differences' % bad)
    return 1 if bad else 0


def probe_norm():
    """HF's StripAccents marks and NFKD of every code point against the tables' model."""
    from tokenizers import normalizers as N
    kinds = {cp: k & 7 for cp, k in gc_kinds(Model()).items()}
    compat = compat_decompositions()
    cps = [c for c in scalar_values() if '|' not in ud.normalize('NFKD', chr(c))]
    text = '|'.join(map(chr, cps))
    bad = 0
    kept = N.StripAccents().normalize_str(text).split('|')
    extra = parse_ranges(HF_MARK_ADD)
    marks = [c for c, k in zip(cps, kept) if (k == '') != (kinds.get(c) == GC_MARK or c in extra)]
    nfkd = N.NFKD().normalize_str(text).split('|')
    m = Model()
    want = lambda c: compat.get(c) or m.nfd([c])
    decomp = [c for c, k in zip(cps, nfkd) if k != ''.join(map(chr, want(c)))]
    for name, d in (('StripAccents', marks), ('NFKD', decomp)):
        if d:
            bad += 1
            print('%s differs: %s' % (name, ' '.join('%04X' % x for x in d[:200])))
    print('probe-norm: %d kinds of difference' % bad)
    return 1 if bad else 0


def probe_word():
    """HF's \\w (Whitespace pre-tokenizer, Rust regex) against the word flag, every code point."""
    from tokenizers import pre_tokenizers as P
    flagged = {cp for cp, k in gc_kinds(Model()).items() if k & GC_WORD}
    cps = [c for c in scalar_values() if c != 0x7C]
    hf = set()
    for i in range(0, len(cps), 50000):
        chunk = cps[i:i + 50000]
        for _, (s, e) in P.Whitespace().pre_tokenize_str('|'.join(map(chr, chunk))):
            if e - s == 1 and s % 2 == 0:  # a word character stands alone between the pipes
                hf.add(chunk[s // 2])
    bad = sorted(hf ^ flagged)
    print('probe-word: %d differences %s' % (len(bad), ' '.join('%04X' % x for x in bad[:100])))
    return 1 if bad else 0


def probe_digits():
    """Rust's char::is_numeric (Digits pre-tokenizer) against N* + HF_NUMERIC_ADD, every code point."""
    from tokenizers import pre_tokenizers as P
    kinds = {cp: k & 7 for cp, k in gc_kinds(Model()).items()}
    mine = {c for c, k in kinds.items() if k == GC_NUMBER} | parse_ranges(HF_NUMERIC_ADD)
    cps = [c for c in scalar_values() if c != 0x7C]
    hf = set()
    for i in range(0, len(cps), 50000):
        chunk = cps[i:i + 50000]
        for _, (s, e) in P.Digits(individual_digits=True).pre_tokenize_str('|'.join(map(chr, chunk))):
            if e - s == 1 and s % 2 == 0:  # a digit stands alone between the pipes
                hf.add(chunk[s // 2])
    bad = sorted(hf ^ mine)
    print('probe-digits: %d differences %s' % (len(bad), ' '.join('%04X' % x for x in bad[:100])))
    return 1 if bad else 0


def main():
    if '--probe-digits' in sys.argv:
        sys.exit(probe_digits())
    if '--probe-word' in sys.argv:
        sys.exit(probe_word())
    if '--probe-norm' in sys.argv:
        sys.exit(probe_norm())
    if '--probe-hf' in sys.argv:
        sys.exit(probe_hf())
    if '--probe-gc' in sys.argv:
        sys.exit(probe_gc())
    if '--probe-gcb' in sys.argv:  # prints raw lists; GCB_ADJUST holds them as ranges
        sys.exit(probe_gcb())
    text = generate()
    if '--check' in sys.argv:
        with open(OUT, encoding='utf-8') as f:
            same = f.read() == text
        print('src/text/unicode_tables.c is %s' % ('up to date' if same else 'STALE'))
        sys.exit(0 if same else 1)
    with open(OUT, 'w', encoding='utf-8') as f:
        f.write(text)
    print('wrote %s (%d bytes, Unicode %s)' % (os.path.relpath(OUT), len(text), ud.unidata_version))


if __name__ == '__main__':
    main()
