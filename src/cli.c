/* cli.c — build/bertlens, the native command-line front end.
 *
 *   bertlens info BUNDLE                               metadata + tensor summary
 *   bertlens tokenize BUNDLE TEXT [TEXT_B]             one JSON object
 *   bertlens tokenize --jsonl BUNDLE                   JSON lines in, JSON lines out
 *   bertlens attend [--layer N] [--qk] [--norms] [--scores] [--ablate L:H,..|--keep L:H,..] BUNDLE TEXT [TEXT_B]
 *   bertlens embed [--ablate L:H,..|--keep L:H,..] BUNDLE TEXT [TEXT...]
 *                                                      sentence embeddings (JSON lines)
 *   bertlens attend --npy DIR ... BUNDLE TEXT [TEXT_B] the same arrays as .npy files in DIR
 *   bertlens analyze BUNDLE TEXT [TEXT_B]              head features, rollout (JSON)
 *   bertlens predict [--top K] [--positions I,..] BUNDLE TEXT [TEXT_B]  the MLM head's top words (cli_predict.c)
 *   bertlens bench [--tokens 16,128,512] BUNDLE        forward-pass timings (JSON lines)
 *   bertlens convert CHECKPOINT_DIR OUT.blb[.gz] [--dtype ...]  Hugging Face -> bundle (cli_convert.c)
 *   bertlens test-attend ...                           internal: attend + test outputs
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
#include "json.h"

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

static void usage(FILE *f) {
    fprintf(f,
            "bertlens %s — BERT attention from a bundle\n"
            "usage:\n"
            "  bertlens info BUNDLE\n"
            "  bertlens tokenize BUNDLE TEXT [TEXT_B]\n"
            "  bertlens tokenize --jsonl BUNDLE        (JSON lines on stdin)\n"
            "  bertlens attend [--layer N] [--qk] [--norms] [--scores] [--ablate L:H,...|--keep L:H,...] [--npy DIR] BUNDLE TEXT [TEXT_B]\n"
            "  bertlens attend [options] --ids ID,... [--types T,...] BUNDLE   (token ids instead of a text)\n"
            "                      --ablate masks these heads (L:* a whole layer), --keep all but these\n"
            "                      --npy DIR writes DIR/attention_L<l>.npy (float32 [head][T][T]; norms_, queries_,\n"
            "                      keys_ likewise) and DIR/tokens.json instead of JSON on stdout\n"
            "                      --scores adds each head's pre-softmax scores and the terms they add up from\n"
            "  bertlens embed [--ablate ...|--keep ...] BUNDLE TEXT [TEXT...]   sentence embeddings, cosines\n"
            "  bertlens analyze BUNDLE TEXT [TEXT_B]   head features + classes, rollout\n"
            "  bertlens predict [--top K] [--positions I,J,...] [--layers] BUNDLE TEXT [TEXT_B]   the head's output: "
            "masked words (--layers: at every layer), classes, or a QA answer (JSON)\n"
            "  bertlens explain [--method grad-input|ig] [--steps M] [--target LABEL|N] [--heads] [--position P] [--ablate ..|--keep ..] BUNDLE TEXT [TEXT_B]\n"
            "                      which tokens (and heads) drove the head's prediction (JSON)\n"
            "  bertlens corpus [--top N] BUNDLE FILE   every head over many inputs (a line each, TAB before B; - stdin)\n"
            "  bertlens bench [--tokens 16,128,512] [--runs N] [--flags attn|none] BUNDLE   forward-pass timings\n"
            "  bertlens convert CHECKPOINT_DIR OUT.blb[.gz] [--dtype f32|f16|q8|q4|q8h|q9|q10|q11|q12] [--embed-dtype D] [--name N]\n"
            "                  [--license SPDX] [--cased]   Hugging Face BERT folder -> bundle\n"
            "  --threads N (any command): threads of the forward pass, default one per core\n"
            "  --low-memory (any command): q8 weights held once, re-laid out in the bundle's bytes (as in the page);\n"
            "                      natively their products then run on SSE4.1, slower than the default AVX2/AVX-512\n",
            BL_VERSION);
}

int main(int argc, char **argv) {
    if (take_threads_opt(&argc, argv)) return 1;
    take_low_memory_opt(&argc, argv);
    if (argc < 2) {
        usage(stderr);
        return 1;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "info")) return bli_cmd_info(argc - 2, argv + 2);
    if (!strcmp(cmd, "tokenize")) return bli_cmd_tokenize(argc - 2, argv + 2);
    if (!strcmp(cmd, "attend")) return bli_cmd_attend(argc - 2, argv + 2, 0);
    if (!strcmp(cmd, "test-attend")) return bli_cmd_attend(argc - 2, argv + 2, 1); /* internal, for tests */
    if (!strcmp(cmd, "analyze")) return bli_cmd_analyze(argc - 2, argv + 2);
    if (!strcmp(cmd, "embed")) return bli_cmd_embed(argc - 2, argv + 2);
    if (!strcmp(cmd, "bench")) return bli_cmd_bench(argc - 2, argv + 2);
    if (!strcmp(cmd, "convert")) return bli_cmd_convert(argc - 2, argv + 2);
    if (!strcmp(cmd, "predict")) return bli_cmd_predict(argc - 2, argv + 2);
    if (!strcmp(cmd, "explain")) return bli_cmd_explain(argc - 2, argv + 2); /* cli_explain.c */
    if (!strcmp(cmd, "corpus")) return bli_cmd_corpus(argc - 2, argv + 2, bli_cli_threads(), bli_cli_low_memory(), bli_cli_read_bundle);
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        usage(stdout);
        return 0;
    }
    bli_term_line(stderr, "bertlens: unknown command '%s'", cmd);
    usage(stderr);
    return 1;
}
