/* cli.c — build/bertlens, the native command-line front end.
 *
 * COMMANDS below is the one list of commands: `bertlens help` prints it and
 * main() dispatches through it, so the two cannot drift apart.
 *
 * BUNDLE may be plain (.blb) or gzip-compressed (.blb.gz). Any error: a
 * message on stderr and exit status 1.
 *
 * --threads N, anywhere after the program name: threads of every forward
 * pass (bl_state_set_threads; default 0, one per logical core). The
 * results do not depend on it.
 *
 * This file takes --threads and dispatches; the commands are thin front
 * ends over the library, one group a file (cli.h): cli_info.c
 * (info, tokenize), cli_attend.c (attend, test-attend) with cli_npy.c
 * (--npy) and cli_heads.c (--ablate/--keep), cli_embed.c (embed, analyze),
 * cli_bench.c, cli_convert.c, cli_corpus.c; what they share (reading
 * bundles, the thread count, JSON helpers) is in cli_common.c.
 */
#include "cli.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif
#include "text/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- --threads */

/* Take "--threads N" out of argv (wherever it is); -1 on a bad value. */
static int take_threads_opt(int *argc, char **argv) {
    for (int i = 1; i < *argc; i++) {
        if (strcmp(argv[i], "--threads")) continue;
        char *end = NULL;
        long n = i + 1 < *argc ? strtol(argv[i + 1], &end, 10) : -1;
        if (!end || *end || end == argv[i + 1] || n < 0 || n > 64) {
            fprintf(stderr, "bertlens: --threads takes a number of threads, 1..64 (0: one per core)\n");
            return -1;
        }
        bli_cli_set_threads((int32_t)n);
        memmove(argv + i, argv + i + 2, (size_t)(*argc - i - 1) * sizeof *argv); /* keeps argv[argc] = NULL */
        *argc -= 2;
        return 0;
    }
    return 0;
}

/* Take "--low-memory" out of argv (wherever it is). */
static void take_low_memory_opt(int *argc, char **argv) {
    for (int i = 1; i < *argc; i++) {
        if (strcmp(argv[i], "--low-memory")) continue;
        bli_cli_set_low_memory(1);
        memmove(argv + i, argv + i + 1, (size_t)(*argc - i) * sizeof *argv); /* keeps argv[argc] = NULL */
        *argc -= 1;
        return;
    }
}

/* --------------------------------------------------------------- main */

int bli_cmd_corpus(int argc, char **argv, int32_t threads, int low_memory,
                   int (*read)(const char *, void **, size_t *, char *, size_t)); /* cli_corpus.c */

static int cmd_attend(int argc, char **argv) { return bli_cmd_attend(argc, argv, 0); }
static int cmd_test_attend(int argc, char **argv) { return bli_cmd_attend(argc, argv, 1); }
static int cmd_corpus(int argc, char **argv) {
    return bli_cmd_corpus(argc, argv, bli_cli_threads(), bli_cli_low_memory(), bli_cli_read_bundle);
}

/* Each command: its name, the function that runs it (the arguments after
 * the name) and its help, lines of "usage\n" (NULL: internal, not listed). */
static const struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *help;
} COMMANDS[] = {
    {"info", bli_cmd_info, "bertlens info BUNDLE   metadata, head and tensor summary (cli_info.c)\n"},
    {"tokenize", bli_cmd_tokenize,
     "bertlens tokenize BUNDLE TEXT [TEXT_B]   one JSON object (cli_info.c)\n"
     "bertlens tokenize --jsonl BUNDLE        (JSON lines on stdin)\n"},
    {"attend", cmd_attend,
     "bertlens attend [--layer N] [--qk] [--norms] [--scores] [--ablate L:H,...|--keep L:H,...] [--npy DIR] BUNDLE TEXT [TEXT_B]\n"
     "bertlens attend [options] --ids ID,... [--types T,...] BUNDLE   (token ids instead of a text; cli_attend.c)\n"
     "    --ablate masks these heads (L:* a whole layer), --keep all but these\n"
     "    --npy DIR writes DIR/attention_L<l>.npy (float32 [head][T][T]; norms_, queries_,\n"
     "    keys_ likewise) and DIR/tokens.json instead of JSON on stdout\n"
     "    --scores adds each head's pre-softmax scores and the terms they add up from\n"},
    {"test-attend", cmd_test_attend, NULL}, /* attend plus test outputs, for the tests */
    {"embed", bli_cmd_embed, "bertlens embed [--ablate ...|--keep ...] BUNDLE TEXT [TEXT...]   sentence embeddings, cosines (cli_embed.c)\n"},
    {"analyze", bli_cmd_analyze, "bertlens analyze BUNDLE TEXT [TEXT_B]   head features + classes, rollout (cli_embed.c)\n"},
    {"predict", bli_cmd_predict,
     "bertlens predict [--top K] [--positions I,J,...] [--layers] BUNDLE TEXT [TEXT_B]   the head's output:\n"
     "    masked words (--layers: at every layer), classes, or a QA answer (JSON; cli_predict.c)\n"},
    {"explain", bli_cmd_explain,
     "bertlens explain [--method grad-input|ig] [--steps M] [--target LABEL|N] [--heads] [--position P] [--ablate ..|--keep ..] BUNDLE TEXT [TEXT_B]\n"
     "    which tokens (and heads) drove the head's prediction (JSON; cli_explain.c)\n"},
    {"corpus", cmd_corpus, "bertlens corpus [--top N] BUNDLE FILE   every head over many inputs (a line each, TAB before B; - stdin; cli_corpus.c)\n"},
    {"bench", bli_cmd_bench, "bertlens bench [--tokens 16,128,512] [--runs N] [--flags attn|none] BUNDLE   forward-pass timings (cli_bench.c)\n"},
    {"convert", bli_cmd_convert,
     "bertlens convert CHECKPOINT_DIR OUT.blb[.gz] [--dtype f32|f16|q8|q4|q8h|q9|q10|q11|q12] [--embed-dtype D] [--name N]\n"
     "    [--license SPDX] [--cased]   Hugging Face checkpoint folder -> bundle (cli_convert.c)\n"},
};
#define N_COMMANDS ((int)(sizeof COMMANDS / sizeof COMMANDS[0]))

static void usage(FILE *f) {
    fprintf(f, "bertlens %s — attention of BERT-family encoders from a bundle\nusage:\n", BL_VERSION);
    for (int i = 0; i < N_COMMANDS; i++) {
        const char *h = COMMANDS[i].help;
        while (h && *h) { /* each line indented by two */
            const char *nl = strchr(h, '\n');
            fprintf(f, "  %.*s\n", (int)(nl - h), h);
            h = nl + 1;
        }
    }
    fputs("  --threads N (any command): threads of the forward pass, default one per core\n"
          "  --low-memory (any command): q8 weights held once, re-laid out in the bundle's bytes (as in the page);\n"
          "      natively their products then run on SSE4.1, slower than the default AVX2/AVX-512\n",
          f);
}

int main(int argc, char **argv) {
#ifdef __GLIBC__
    /* Freed blocks of up to 32 MB stay in the heap for the next call rather
     * than going back to the system, as in the page's wasm heap (which only
     * grows): each explanation's work buffers (bert-base, 128 tokens: ~50 MB
     * in blocks of up to 28 MB) would otherwise be faulted in anew, page by
     * page, every time (~12,000 page faults an explanation). */
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
#endif
    if (take_threads_opt(&argc, argv)) return 1;
    take_low_memory_opt(&argc, argv);
    if (argc < 2) {
        usage(stderr);
        return 1;
    }
    const char *cmd = argv[1];
    for (int i = 0; i < N_COMMANDS; i++) {
        if (!strcmp(cmd, COMMANDS[i].name)) return COMMANDS[i].run(argc - 2, argv + 2);
    }
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        usage(stdout);
        return 0;
    }
    bli_term_line(stderr, "bertlens: unknown command '%s'", cmd);
    usage(stderr);
    return 1;
}
