/* fuzz_tokenizer.c — libFuzzer target for the tokenizer and the jsonl reader.
 *
 *   make fuzz   (clang -fsanitize=fuzzer,address,undefined; seeds in tests/fuzz/tokenizer/)
 *
 * Input: byte 0 = options (bit 0 cased, bit 1 sentence pair, bits 2..7 pick
 * max_tokens), byte 1 = where to split a pair, the rest = text bytes (any
 * bytes: invalid UTF-8 must be rejected cleanly). Checks the invariants of
 * every successful result; the same bytes also go through the JSON reader
 * and writer. A tokenizer is built once per variant from a small vocabulary
 * of real bert-base-uncased entries (listed below; ids are positions here).
 */
#include "bertlens.h"
#include "text/json.h"

#include <stdlib.h>
#include <string.h>

static const char *const VOCAB[] = {
    "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "!", "\"", "#", "$", "%", "&", "'", "(", ")", "*",
    "+", ",", "-", ".", "/", "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", ":", ";", "<", "=",
    ">", "?", "@", "[", "\\", "]", "^", "_", "`", "a", "b", "c", "the", "of", "and", "in", "to",
    "was", "he", "is", "as", "for", "on", "with", "that", "it", "his", "by", "at", "from", "her",
    "##s", "she", "you", "had", "an", "were", "but", "be", "this", "are", "not", "my", "they",
    "one", "which", "including", "tell", "money", "##ion", "issues", "score", "wind", "##ga",
    "francisco", "growth", "remain", "champions", "20th", "candidate", "mount", "technical",
    "titled", "thanks", "drug", "phase", "labour", "sites", "dean", "promotion", "49", "employed",
    "survey", "sale", "gain", "wins", "frederick", "##zed", "unusual", "actors", "leather",
    "exposed", "brazilian", "compilation", "pace", "hence", "1880", "continental", "grinned",
    "competitive", "detail", "craig", "doctors", "honest", "householder", "goddess", "ruth",
    "##sey", "pulls", "physically", "protocol", "booth", "hank", "nasa", "eva", "relegation",
    "cracked", "specified", "murders", "afl", "##cht", "gentleman", "communicate", "##uch",
    "terrace", "makers", "prof", "explosive", "auditorium", "crow", "decent", "drift", "tooth",
    "sophisticated", "asteroid", "cumberland", "jade", "johannes", "shortened", "yelling", "##roy",
    "119", "recovering", "jenna", "lyric", "##lina", "abdomen", "bundle", "##uru", "##dley", "pits",
    "diabetes", "1200", "laden", "exposing", "progression", "138", "ou", "##tling", "noticing",
    "cautiously", "basal", "##physics", "louisa", "pacing", "##ntal", "definitive", "conceded",
    "suitcase", "captained", "mas", "merrill", "distributor", "##rana", "##cre", "ponds", "gunfire",
    "accession", "conceptual", "joachim", "giggle", "plagued", "moreno", "subcommittee",
    "proceeding", "172", "slash", "bordering", "cathy", "##grapher", "lao", "fore", "bursts",
    "homework", "spikes", "axes", "cardboard", "backseat", "leicestershire", "researching",
    "##hetic", "landowner", "950", "yates", "nearer", "##fusion", "rendezvous", "caller",
    "applause", "courtroom", "##eli", "distinguishing", "clocks", "##berries", "differentiate",
    "atkins", "##auer", "brasil", "##rts", "geologist", "hayward", "rower", "flair", "##eptive",
    "lastly", "timed", "halftime", "##forms", "gotham", "secession", "##cript", "precedence",
    "##isse", "hardness", "elgin", "wilcox", "##zee", "boar", "leaking", "narayan", "##river",
    "milne", "jed", "tyres", "pastures", "distillery", "reorganisation", "##sle", "contiguous",
    "reprint", "penultimate", "##resses", "americana", "##49", "355", "880", "cranes", "##egorical",
    "faerie", "explodes", "vulture", "##lga", "##lez", "excerpt", "haji", "jerseys", "enlist",
    "oakley", "407", "pebbles", "gough", "wavelengths", "abolitionist", "##⽥", "##す", "##女",
    "##ing", "un", "##able", "中", "文", "日", "σ", "##α", "##ed", "hello", "world", "##a", "##b", "i",
};
#define N_VOCAB ((int32_t)(sizeof VOCAB / sizeof VOCAB[0]))

static bl_tokenizer *make(int cased) {
    static uint32_t lens[N_VOCAB];
    for (int32_t i = 0; i < N_VOCAB; i++) lens[i] = (uint32_t)strlen(VOCAB[i]);
    bl_tokenizer_opts o = {!cased, !cased, 1, 100, 1, 2, 3, 0, 4};
    bl_tokenizer *t = bl_tokenizer_new(VOCAB, lens, N_VOCAB, &o, NULL, 0);
    if (!t) __builtin_trap();
    return t;
}

/* Strict UTF-8 validity, written independently of the tokenizer's decoder;
 * also counts UTF-16 units. */
static int valid_utf8(const uint8_t *s, size_t n, int32_t *u16) {
    *u16 = 0;
    for (size_t i = 0; i < n;) {
        uint32_t c = s[i];
        size_t k = c < 0x80 ? 0 : c >= 0xC2 && c <= 0xDF ? 1 : c >= 0xE0 && c <= 0xEF ? 2 : c >= 0xF0 && c <= 0xF4 ? 3 : 9;
        if (k == 9 || (k && i + k >= n)) return 0;
        for (size_t j = 1; j <= k; j++)
            if ((s[i + j] & 0xC0) != 0x80) return 0;
        if (c == 0xE0 && s[i + 1] < 0xA0) return 0; /* overlong */
        if (c == 0xED && s[i + 1] >= 0xA0) return 0; /* surrogate */
        if (c == 0xF0 && s[i + 1] < 0x90) return 0; /* overlong */
        if (c == 0xF4 && s[i + 1] >= 0x90) return 0; /* > U+10FFFF */
        *u16 += k == 3 ? 2 : 1;
        i += k + 1;
    }
    return 1;
}

static void check(const bl_tokenizer *t, const bl_tokens *k, int pair, int32_t max_tokens, int32_t ua, int32_t ub) {
    if (k->n < (pair ? 3 : 2) || (max_tokens && k->n > max_tokens)) __builtin_trap();
    if (k->ids[0] != 2 || k->ids[k->n_a - 1] != 3 || k->ids[k->n - 1] != 3) __builtin_trap();
    int32_t last_word = -1;
    for (int32_t i = 0; i < k->n; i++) {
        int32_t ty = i < k->n_a ? 0 : 1, s = k->offsets[2 * i], e = k->offsets[2 * i + 1];
        if (k->type_ids[i] != ty || k->ids[i] < 0 || k->ids[i] >= N_VOCAB || !bl_token_str(t, k->ids[i])) __builtin_trap();
        if (i == k->n_a) last_word = -1;
        if (k->word_ids[i] < 0) {
            if (s || e) __builtin_trap();
            continue;
        }
        if (s < 0 || s >= e || e > (ty ? ub : ua) || k->word_ids[i] < last_word) __builtin_trap();
        last_word = k->word_ids[i];
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static bl_tokenizer *tok[2];
    if (!tok[0]) tok[0] = make(0), tok[1] = make(1);
    if (size < 2) return 0;
    int cased = data[0] & 1, pair = (data[0] >> 1) & 1;
    int32_t max_tokens = (data[0] >> 2) ? 2 + (data[0] >> 2) * 3 : 0;
    const char *text = (const char *)data + 2;
    size_t n = size - 2, split = pair && n ? data[1] % (n + 1) : n;
    const char *b = pair ? text + split : NULL;
    size_t nb = pair ? n - split : 0;
    int is_pair = pair && nb > 0;
    if (max_tokens && max_tokens < 3) max_tokens = 3;

    char err[256];
    bl_tokens k;
    int rc = bl_tokenize(tok[cased], text, split, b, nb, max_tokens, &k, err, sizeof err);
    int32_t ua, ub = 0;
    int ok = valid_utf8((const uint8_t *)text, split, &ua) && (!is_pair || valid_utf8((const uint8_t *)b, nb, &ub));
    if ((rc == 0) != ok) __builtin_trap();
    if (rc == 0) {
        check(tok[cased], &k, is_pair, max_tokens, ua, ub);
        bli_jbuf j = {0};
        bli_json_tokens(&j, tok[cased], &k, 1);
        bli_jbuf_free(&j);
        bl_tokens_free(&k);
    } else if (!strstr(err, "invalid UTF-8")) {
        __builtin_trap();
    }

    /* The same bytes as a jsonl input line. */
    char *a2, *b2;
    size_t la, lb;
    int32_t ml;
    if (bli_json_read_input((const char *)data, size, &a2, &la, &b2, &lb, &ml, err, sizeof err) == 0) {
        if (bl_tokenize(tok[cased], a2, la, b2, lb, 0, &k, err, sizeof err) == 0) bl_tokens_free(&k);
        free(a2);
        free(b2);
    }
    return 0;
}
