/* cli.h — internal to the native front end (build/bertlens): what its
 * files share. cli.c takes --threads and dispatches; cli_common.c reads
 * bundles and holds the thread count; each command group lives in its own
 * cli_*.c and formats its own output over the library (bertlens.h),
 * printing every error on stderr.
 */
#ifndef BL_CLI_H
#define BL_CLI_H

#include "bertlens.h"

#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------ cli_common.c: bundles */

typedef struct {
    void *bytes;  /* 64-byte aligned copy of the inflated bundle */
    size_t size;
    bl_model *model;
} bli_cli_bundle;

/* Read a bundle file (.blb, or .blb.gz inflated) into 64-byte aligned
 * memory of at most the size its header declares; 0, or -1 with a reason. */
int bli_cli_read_bundle(const char *path, void **out, size_t *out_size, char *err, size_t errlen);
/* Load BUNDLE (.blb or .blb.gz) or print why not. Returns 0 on success. */
int bli_cli_open_bundle(const char *path, bli_cli_bundle *cb);
void bli_cli_close_bundle(bli_cli_bundle *cb);
/* The --threads count (0: one per core) every state gets. */
void bli_cli_set_threads(int32_t n);
/* --low-memory: bundles are packed in place once loaded (bl_model_pack_in_place). */
void bli_cli_set_low_memory(int on);
int bli_cli_low_memory(void);
int32_t bli_cli_threads(void);
/* bl_state_new on the --threads count. */
bl_state *bli_cli_new_state(const bl_model *m, int32_t max_tokens, unsigned flags, char *err, size_t errlen);

/* Clocks of the timing commands (bench, explain --time), ms: wall time
 * (monotonic) and the CPU time of the whole process (every thread; on a
 * shared machine the ratio of CPU times holds where wall times swing). */
double bli_cli_now_ms(void);
double bli_cli_cpu_ms(void);

/* JSON on stdout: a token string (json.h's escaping; NULL: ""), and n
 * floats as a list, %.9g (round-trips f32). */
void bli_cli_json_str(const char *s);
void bli_cli_json_floats(const float *x, size_t n);

/* "1,2,3" into a malloc'ed array *out. Returns the count, or -1. */
int bli_cli_parse_int_list(const char *s, int32_t **out);

/* ----------------------------------------------- cli_heads.c: head lists */

/* --ablate or --keep at argv[*i] (value in argv[*i + 1]) into *ablate or
 * *keep. Returns 1 if it was one of them, 0 if not, -1 on a bad use. */
int bli_cli_heads_opt(int argc, char **argv, int *i, const char **ablate, const char **keep);
/* Apply --ablate / --keep (at most one given) to s. Prints why not. */
int bli_cli_apply_heads(bl_state *s, const char *ablate, const char *keep);

/* ------------------------------------------------- cli_npy.c: --npy DIR */

typedef struct {
    const bl_tokenizer *tk;
    const int32_t *ids, *types; /* [T] */
    int T, truncated, l0, l1, norms, qk;
} bli_cli_npy_index;

/* Every array of the last forward of s (layers l0..l1-1; norms, q/k as
 * asked) into dir as .npy files, and tokens.json there and on stdout.
 * d: d_head. Prints why not and returns -1. */
int bli_cli_write_npy(const char *dir, const bl_state *s, const bli_cli_npy_index *ix, int NH, int d);

/* ------------------------------------------------------------ commands
 * argc/argv after the command's name; the process's exit status. */

int bli_cmd_info(int argc, char **argv);                  /* cli_info.c    */
int bli_cmd_tokenize(int argc, char **argv);              /* cli_info.c    */
int bli_cmd_attend(int argc, char **argv, int internal);  /* cli_attend.c (1: test-attend) */
int bli_cmd_embed(int argc, char **argv);                 /* cli_embed.c   */
int bli_cmd_analyze(int argc, char **argv);               /* cli_embed.c   */
int bli_cmd_bench(int argc, char **argv);                 /* cli_bench.c   */
int bli_cmd_convert(int argc, char **argv);               /* cli_convert.c */
int bli_cmd_predict(int argc, char **argv);               /* cli_predict.c */
/* `bertlens info`'s task head line (cli_predict.c). */
void bli_cli_info_task(const bl_model *m);
int bli_cmd_explain(int argc, char **argv);               /* cli_explain.c */

#endif
