/*===- threads.h - the pthread pool the kernels split their work over ----===*
 *
 * The one family with state and OS calls: a context creates a pool, every
 * kernel that parallelizes takes it (NULL: run on the calling thread).
 *
 *===----------------------------------------------------------------------===*/

#ifndef CUVIL_RUNTIME_THREADS_H
#define CUVIL_RUNTIME_THREADS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A fixed set of pthreads that run slices of a kernel's work. The work is
 * split into contiguous ranges, and every output element is computed by the
 * same sequence of operations whatever the number of threads, so results
 * do not depend on it. Created with a context; NULL means "this thread". */
typedef struct cuvil_pool cuvil_pool;
typedef void (*cuvil_task_fn)(void *arg, int64_t begin, int64_t end);

/* Returns NULL if `num_threads` <= 1 or on failure (then work runs on the
 * calling thread). The workers may run on the creating thread's CPUs; one
 * that takes a job on the CPU of the thread that posted it moves itself to
 * the others (sched_setaffinity on itself, never on the caller). */
cuvil_pool *cuvil_pool_create(int num_threads);
void cuvil_pool_destroy(cuvil_pool *pool);
/* Threads of `pool`, the caller included (1 for NULL). */
int cuvil_pool_threads(const cuvil_pool *pool);
/* Runs fn(arg, begin, end) over [0, count), split across the pool. */
void cuvil_parallel_for(cuvil_pool *pool, int64_t count, cuvil_task_fn fn,
                        void *arg);

#ifdef __cplusplus
}
#endif

#endif /* CUVIL_RUNTIME_THREADS_H */
