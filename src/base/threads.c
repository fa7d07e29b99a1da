/* threads.c — the forward pass's thread pool (see threads.h).
 *
 * One task at a time. The caller publishes fn/ctx, sets `pending` to the
 * number of pool threads and bumps `gen` under the mutex; each pool thread
 * runs when it sees a new gen, and the last one to finish signals `done`.
 * Both sides spin briefly before sleeping, because the encoder starts its
 * next task (another layer's rows or heads) a few microseconds after the
 * last one ends: a sleep and wake-up per task would cost more than the
 * smallest tasks (16 tokens) take.
 */
#include "threads.h"
#include "error.h"

#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
#define BL_NO_THREADS 1
#endif

#ifdef BL_NO_THREADS

bli_pool *bli_pool_new(int n, int *failed, char *err, size_t errlen) {
    (void)n, (void)err, (void)errlen;
    *failed = 0;
    return NULL;
}
void bli_pool_free(bli_pool *p) { (void)p; }
int bli_pool_threads(const bli_pool *p) { return (void)p, 1; }
void bli_pool_run(bli_pool *p, bli_task_fn fn, void *ctx) { (void)p, fn(ctx, 0, 1); }
int bli_threads_supported(void) { return 0; }
int bli_cores(void) { return 1; }

#else

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __EMSCRIPTEN__
#include <emscripten/threading.h>
#endif

/* Polls of the task counter before sleeping (~10-50 us). */
#define SPIN 20000

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

typedef struct {
    bli_pool *pool;
    int w;
} worker_arg;

struct bli_pool {
    int n;                 /* threads running a task, the caller included */
    int started;           /* pool threads started (n - 1 when complete)  */
    pthread_t *tid;        /* [n - 1]                                     */
    worker_arg *args;      /* [n - 1]                                     */
    pthread_mutex_t mu;
    pthread_cond_t wake;   /* gen changed                                 */
    pthread_cond_t done;   /* pending reached 0                           */
    bli_task_fn fn;        /* the current task                            */
    void *ctx;
    int stop;              /* set with the last gen bump: threads exit    */
    atomic_uint gen;       /* task number                                 */
    atomic_int pending;    /* pool threads still in the current task      */
};

static void *worker_main(void *arg) {
    bli_pool *p = ((worker_arg *)arg)->pool;
    const int w = ((worker_arg *)arg)->w;
    unsigned seen = 0;
    for (;;) {
        unsigned g = atomic_load_explicit(&p->gen, memory_order_acquire);
        for (int i = 0; g == seen && i < SPIN; i++) {
            cpu_relax();
            g = atomic_load_explicit(&p->gen, memory_order_acquire);
        }
        if (g == seen) {
            pthread_mutex_lock(&p->mu);
            while ((g = atomic_load_explicit(&p->gen, memory_order_acquire)) == seen) pthread_cond_wait(&p->wake, &p->mu);
            pthread_mutex_unlock(&p->mu);
        }
        seen = g;
        if (p->stop) break;
        p->fn(p->ctx, w, p->n);
        if (atomic_fetch_sub_explicit(&p->pending, 1, memory_order_acq_rel) == 1) {
            pthread_mutex_lock(&p->mu);
            pthread_cond_signal(&p->done);
            pthread_mutex_unlock(&p->mu);
        }
    }
    return NULL;
}

/* Publish a task (or the stop request) to every pool thread. */
static void publish(bli_pool *p, bli_task_fn fn, void *ctx, int stop) {
    p->fn = fn;
    p->ctx = ctx;
    p->stop = stop;
    atomic_store_explicit(&p->pending, p->started, memory_order_relaxed);
    pthread_mutex_lock(&p->mu);
    atomic_fetch_add_explicit(&p->gen, 1, memory_order_release);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
}

void bli_pool_free(bli_pool *p) {
    if (!p) return;
    if (p->started) {
        publish(p, NULL, NULL, 1);
        for (int i = 0; i < p->started; i++) pthread_join(p->tid[i], NULL);
    }
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->wake);
    pthread_cond_destroy(&p->done);
    free(p->tid);
    free(p->args);
    free(p);
}

bli_pool *bli_pool_new(int n, int *failed, char *err, size_t errlen) {
    *failed = 0;
    if (n <= 1) return NULL;
    bli_pool *p = calloc(1, sizeof *p);
    if (!p || !(p->tid = calloc((size_t)n - 1, sizeof *p->tid)) || !(p->args = calloc((size_t)n - 1, sizeof *p->args))) {
        if (p) free(p->tid);
        free(p);
        *failed = 1;
        bli_set_err(err, errlen, "out of memory creating a pool of %d threads", n);
        return NULL;
    }
    p->n = n;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->wake, NULL);
    pthread_cond_init(&p->done, NULL);
    atomic_init(&p->gen, 0);
    atomic_init(&p->pending, 0);
    for (int i = 0; i < n - 1; i++) {
        p->args[i] = (worker_arg){p, i + 1};
        int rc = pthread_create(&p->tid[i], NULL, worker_main, &p->args[i]);
        if (rc) {
            *failed = 1;
            bli_set_err(err, errlen, "could not start thread %d of %d (%s)", i + 2, n, strerror(rc));
            bli_pool_free(p);
            return NULL;
        }
        p->started++;
    }
    return p;
}

int bli_pool_threads(const bli_pool *p) { return p ? p->n : 1; }

void bli_pool_run(bli_pool *p, bli_task_fn fn, void *ctx) {
    if (!p) {
        fn(ctx, 0, 1);
        return;
    }
    publish(p, fn, ctx, 0);
    fn(ctx, 0, p->n);
    for (int i = 0; i < SPIN; i++) {
        if (!atomic_load_explicit(&p->pending, memory_order_acquire)) return;
        cpu_relax();
    }
    pthread_mutex_lock(&p->mu);
    while (atomic_load_explicit(&p->pending, memory_order_acquire)) pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
}

int bli_threads_supported(void) { return 1; }

int bli_cores(void) {
#ifdef __EMSCRIPTEN__
    int n = emscripten_num_logical_cores();
#else
    long n = sysconf(_SC_NPROCESSORS_ONLN);
#endif
    return n >= 1 ? (n < BL_MAX_THREADS ? (int)n : BL_MAX_THREADS) : 1;
}

#endif
