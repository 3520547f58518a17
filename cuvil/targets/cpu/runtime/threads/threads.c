/*===- threads.c - the models' thread pool -------------------------------===*
 *
 * Workers poll between jobs before they sleep, yield while they poll, and
 * leave their caller's CPU: a fork/join per layer must cost less than the
 * layer (the comments below record why each is needed).
 *
 *===----------------------------------------------------------------------===*/

/* For sched_getcpu and sched_setaffinity; a model's code defines it before
 * any include. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "cuvil/targets/cpu/runtime/threads/threads.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

/* Where threads run, on Linux; elsewhere nothing is known or moved. */
#if defined(__linux__)
typedef cpu_set_t cuvil_cpu_set;
static void cuvil_allowed_cpus(cuvil_cpu_set *cpus) {
  if (sched_getaffinity(0, sizeof(*cpus), cpus) != 0)
    CPU_ZERO(cpus);
}
static int cuvil_current_cpu(void) { return sched_getcpu(); }
/* Limits the calling thread to `cpus` but `cpu`, if that leaves any. */
static void cuvil_leave_cpu(const cuvil_cpu_set *cpus, int cpu) {
  cuvil_cpu_set others = *cpus;
  if (cpu < 0 || cpu >= CPU_SETSIZE)
    return;
  CPU_CLR(cpu, &others);
  if (CPU_COUNT(&others) > 0)
    sched_setaffinity(0, sizeof(others), &others);
}
#else
typedef int cuvil_cpu_set;
static void cuvil_allowed_cpus(cuvil_cpu_set *cpus) { *cpus = 0; }
static int cuvil_current_cpu(void) { return -1; }
static void cuvil_leave_cpu(const cuvil_cpu_set *cpus, int cpu) {
  (void)cpus;
  (void)cpu;
}
#endif

struct cuvil_worker {
  struct cuvil_pool *pool;
  int index;
};

struct cuvil_pool {
  int num_threads; /* including the calling thread */
  pthread_t *threads;
  struct cuvil_worker *workers;
  pthread_mutex_t mutex; /* guards everything below */
  pthread_cond_t wake, done;
  unsigned long generation; /* one per job */
  int pending;              /* workers still on the current job */
  int stop;
  int caller_cpu;     /* where the current job was posted from; -1 unknown */
  cuvil_cpu_set cpus; /* where the creating thread may run; set once */
  cuvil_task_fn fn;
  void *arg;
  int64_t count;
};

/* Between a model's kernels (and its calls) the workers and the caller poll
 * the pool this many times (a few hundred microseconds) before sleeping on
 * a condition variable: a fork/join through futex waits costs more than a
 * small layer. Every poll takes the mutex (uncontended: no system call), so
 * all hand-offs are lock-ordered, which race checkers such as helgrind
 * verify. Between polls the mutex stays free for CUVIL_POLL_GAP pauses: a
 * poller that let go of it for a single pause held it most of the time, and
 * a thread that had to sleep on it (the caller posting a job, a worker
 * reporting one done) could wait out the whole spin, ~240 us per call. */
#ifndef CUVIL_SPIN
#define CUVIL_SPIN 250
#endif
#define CUVIL_POLL_GAP 16
/* The scheduler may wake a worker on the caller's CPU (or the machine may
 * have fewer free CPUs than threads): then the thread being waited for
 * cannot run while its waiter spins, and every fork/join would cost a whole
 * spin. Yielding now and then hands it the CPU (a system call only when
 * polling already takes a while). */
#define CUVIL_YIELD_EVERY 8
/* Yielding only bounds that cost; it does not end it. The load balancer
 * leaves running (cache-hot) threads where they are, and on the 2-vCPU VM
 * we measure on, even a worker made to sleep was woken on its waker's CPU:
 * the two shared a core for whole benchmark runs with the other idle. So a
 * worker that takes a job on the CPU it was posted from leaves it: it
 * limits itself to the pool's CPUs but that one (the caller may be pinned;
 * the worker is ours to move). This costs a system call only when they
 * met; sched_getcpu() reads the rseq area glibc registers. */

static inline void cuvil_pause(void) {
#if defined(__x86_64__) || defined(__i386__)
  __asm__ __volatile__("pause");
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

/* With the mutex held: polls while `busy` holds, up to CUVIL_SPIN times,
 * releasing the mutex between polls. */
#define CUVIL_POLL(pool, busy)                                                 \
  do {                                                                         \
    int spin_, gap_;                                                           \
    for (spin_ = 0; spin_ < CUVIL_SPIN && (busy); ++spin_) {                   \
      pthread_mutex_unlock(&(pool)->mutex);                                    \
      for (gap_ = 0; gap_ < CUVIL_POLL_GAP; ++gap_)                            \
        cuvil_pause();                                                         \
      if (spin_ % CUVIL_YIELD_EVERY == CUVIL_YIELD_EVERY - 1)                  \
        sched_yield();                                                         \
      pthread_mutex_lock(&(pool)->mutex);                                      \
    }                                                                          \
  } while (0)

static void cuvil_run_slice(struct cuvil_pool *pool, int index) {
  int64_t begin = pool->count * index / pool->num_threads;
  int64_t end = pool->count * (index + 1) / pool->num_threads;
  if (begin < end)
    pool->fn(pool->arg, begin, end);
}

static void *cuvil_worker_main(void *p) {
  struct cuvil_worker *self = (struct cuvil_worker *)p;
  struct cuvil_pool *pool = self->pool;
  unsigned long seen = 0;
  int caller_cpu;
  for (;;) {
    pthread_mutex_lock(&pool->mutex);
    CUVIL_POLL(pool, !pool->stop && pool->generation == seen);
    while (!pool->stop && pool->generation == seen)
      pthread_cond_wait(&pool->wake, &pool->mutex);
    if (pool->stop) {
      pthread_mutex_unlock(&pool->mutex);
      return NULL;
    }
    seen = pool->generation;
    caller_cpu = pool->caller_cpu;
    pthread_mutex_unlock(&pool->mutex);
    if (caller_cpu >= 0 && cuvil_current_cpu() == caller_cpu)
      cuvil_leave_cpu(&pool->cpus, caller_cpu);
    cuvil_run_slice(pool, self->index);
    pthread_mutex_lock(&pool->mutex);
    if (--pool->pending == 0)
      pthread_cond_signal(&pool->done);
    pthread_mutex_unlock(&pool->mutex);
  }
}

cuvil_pool *cuvil_pool_create(int num_threads) {
  struct cuvil_pool *pool;
  int i;
  if (num_threads <= 1)
    return NULL;
  pool = (struct cuvil_pool *)calloc(1, sizeof(*pool));
  if (!pool)
    return NULL;
  pool->num_threads = num_threads;
  pool->threads = (pthread_t *)calloc((size_t)num_threads, sizeof(pthread_t));
  pool->workers = (struct cuvil_worker *)calloc((size_t)num_threads,
                                                sizeof(struct cuvil_worker));
  if (!pool->threads || !pool->workers) {
    free(pool->threads);
    free(pool->workers);
    free(pool);
    return NULL;
  }
  pthread_mutex_init(&pool->mutex, NULL);
  pthread_cond_init(&pool->wake, NULL);
  pthread_cond_init(&pool->done, NULL);
  pool->caller_cpu = -1;
  cuvil_allowed_cpus(&pool->cpus);
  for (i = 1; i < num_threads; ++i) {
    pool->workers[i].pool = pool;
    pool->workers[i].index = i;
    if (pthread_create(&pool->threads[i], NULL, cuvil_worker_main,
                       &pool->workers[i]) != 0) {
      /* Run with the threads that started. */
      pool->num_threads = i;
      break;
    }
  }
  if (pool->num_threads == 1) {
    cuvil_pool_destroy(pool);
    return NULL;
  }
  return pool;
}

void cuvil_pool_destroy(cuvil_pool *pool) {
  int i;
  if (!pool)
    return;
  pthread_mutex_lock(&pool->mutex);
  pool->stop = 1;
  pthread_cond_broadcast(&pool->wake);
  pthread_mutex_unlock(&pool->mutex);
  for (i = 1; i < pool->num_threads; ++i)
    pthread_join(pool->threads[i], NULL);
  pthread_mutex_destroy(&pool->mutex);
  pthread_cond_destroy(&pool->wake);
  pthread_cond_destroy(&pool->done);
  free(pool->threads);
  free(pool->workers);
  free(pool);
}

int cuvil_pool_threads(const cuvil_pool *pool) {
  return pool ? pool->num_threads : 1;
}

void cuvil_parallel_for(cuvil_pool *pool, int64_t count, cuvil_task_fn fn,
                        void *arg) {
  int cpu;
  if (!pool || count < 2) {
    if (count > 0)
      fn(arg, 0, count);
    return;
  }
  cpu = cuvil_current_cpu();
  pthread_mutex_lock(&pool->mutex);
  pool->caller_cpu = cpu;
  pool->fn = fn;
  pool->arg = arg;
  pool->count = count;
  pool->pending = pool->num_threads - 1;
  ++pool->generation;
  /* Polling workers see the generation; sleeping ones need the broadcast
   * (no system call when none sleeps). */
  pthread_cond_broadcast(&pool->wake);
  pthread_mutex_unlock(&pool->mutex);
  cuvil_run_slice(pool, 0);
  pthread_mutex_lock(&pool->mutex);
  CUVIL_POLL(pool, pool->pending);
  while (pool->pending)
    pthread_cond_wait(&pool->done, &pool->mutex);
  pthread_mutex_unlock(&pool->mutex);
}
