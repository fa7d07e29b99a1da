/* threads.h — a small fixed pool of threads for the forward pass (internal).
 *
 * A pool of n threads runs one task at a time: bli_pool_run(p, fn, ctx)
 * calls fn(ctx, w, n) once for every w in 0 .. n-1 (w = 0 on the calling
 * thread, the others on the pool's n - 1 threads) and returns when all n
 * calls have returned. What a call does with w is the caller's business;
 * the encoder splits token rows or attention heads by it (encoder.c).
 *
 * Threads are created by bli_pool_new and joined by bli_pool_free; running
 * a task creates nothing and allocates nothing. A NULL pool is one thread:
 * fn(ctx, 0, 1) on the caller, so the single-threaded path is the same code.
 * One pool serves one caller at a time (it belongs to one bl_state).
 *
 * Waiting: a pool thread spins for a few microseconds on the task counter
 * (the encoder's next task usually follows within that), then sleeps on a
 * condition variable; the caller waits for the last thread the same way.
 *
 * Builds without threads (wasm without -pthread: __EMSCRIPTEN__ and no
 * __EMSCRIPTEN_PTHREADS__) compile the same interface: bli_pool_new
 * returns NULL (one thread) whatever n is, and bli_cores() is 1.
 */
#ifndef BL_THREADS_H
#define BL_THREADS_H

#include <stddef.h>
#include <stdint.h>

#define BL_MAX_THREADS 64 /* upper bound for bl_state_set_threads */

typedef struct bli_pool bli_pool;
typedef void (*bli_task_fn)(void *ctx, int w, int n);

/* A pool of n threads (the caller counts as one, so n - 1 are started).
 * n <= 1, or a build without threads: NULL without error (one thread).
 * On failure (a thread could not be started) returns NULL and sets *failed
 * to 1 with a reason in err; threads already started are joined. */
bli_pool *bli_pool_new(int n, int *failed, char *err, size_t errlen);
void bli_pool_free(bli_pool *p);
/* Thread w of n's share of `total` rows, in whole groups of 4 (the
 * kernels' tile height): [*r0, *r1), possibly empty. The encoder's row
 * tasks and the analyses (encoder.c, analyze.c) split rows by it. */
static inline void bli_rows_of(int32_t total, int w, int n, int32_t *r0, int32_t *r1) {
    const int64_t groups = (total + 3) / 4;
    const int64_t a = 4 * (groups * w / n), b = 4 * (groups * (w + 1) / n);
    *r0 = (int32_t)(a < total ? a : total);
    *r1 = (int32_t)(b < total ? b : total);
}
/* Threads the pool runs a task on (1 for NULL). */
int bli_pool_threads(const bli_pool *p);
void bli_pool_run(bli_pool *p, bli_task_fn fn, void *ctx);
/* Whether this build can start threads at all. */
int bli_threads_supported(void);
/* Logical cores of the machine (navigator.hardwareConcurrency in a
 * browser); 1 when unknown or in a build without threads. */
int bli_cores(void);

/* The pool of a state (encoder.c; NULL: one thread), for work on its
 * results that follows a forward pass (analyze.c bl_analyze). */
struct bl_state;
bli_pool *bli_state_pool(const struct bl_state *s);

#endif
