/*===- cuvil_kernels.c - reference micro-kernels of compiled models -------===*
 *
 * The reference variants: plain C99 loops that the C compiler vectorizes.
 * Accumulation order is fixed (no dependence on threads), so results are
 * deterministic.
 *
 *===----------------------------------------------------------------------===*/

/* For sched_getcpu and sched_setaffinity; a model's code defines it before
 * any include. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "cuvil_kernels.h"

#include <float.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

/* Fully unrolls a loop with a constant trip count (register tiles). */
#if defined(__clang__)
#define CUVIL_UNROLL _Pragma("clang loop unroll(full)")
#elif defined(__GNUC__)
#define CUVIL_UNROLL _Pragma("GCC unroll 32")
#else
#define CUVIL_UNROLL
#endif

/*===------------------------------------------------------------------===*
 * Thread pool
 *===------------------------------------------------------------------===*/

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

/*===------------------------------------------------------------------===*
 * Kernels
 *===------------------------------------------------------------------===*/

struct cuvil_matmul_args {
  int64_t m, n, k;
  const float *a;
  int64_t a_batch_stride, a_row_stride, a_col_stride;
  const float *b;
  int64_t b_batch_stride, b_row_stride, b_col_stride;
  float *c;
  const cuvil_epilogue *epilogue;
};

/* exp(x) for floats in plain C that vectorizes (libm's expf does not, and
 * a vector math library would be another dependency): x = n ln2 + r with
 * |r| <= ln2 / 2, e^r by its degree-7 Taylor polynomial (relative error
 * below 2e-7), scaled by 2^n through the exponent bits. 0 below -87.3 (so a
 * -inf mask gives exactly 0), inf above 88.7, NaN for NaN. */
static inline __attribute__((always_inline)) float cuvil_expf(float x) {
  float n = floorf(x * 1.44269504088896341f + 0.5f), r, p, low, high;
  int32_t whole, half, bits;
  r = x - n * 0.693145751953125f - n * 1.42860682030941723212e-6f;
  p = 1.0f + r * (1.0f + r * (0.5f + r * (1.0f / 6 + r * (1.0f / 24 + r * (1.0f / 120 + r * (1.0f / 720 + r * (1.0f / 5040)))))));
  /* 2^n as 2^half * 2^(n - half): both factors stay normal for n in
   * [-127, 128], the range x covers. */
  whole = (int32_t)(n < -127.0f ? -127.0f : n > 128.0f ? 128.0f : n);
  half = whole >> 1;
  bits = (half + 127) << 23;
  memcpy(&low, &bits, sizeof(low));
  bits = (whole - half + 127) << 23;
  memcpy(&high, &bits, sizeof(high));
  p = p * low * high;
  return x < -87.3f ? 0.0f : x > 88.72f ? INFINITY : p;
}

/* erf(x) in plain C that vectorizes (for exact GELU): Abramowitz and
 * Stegun 7.1.26 (absolute error below 1.5e-7) from 0.5 on, and below,
 * where that form cancels, the Taylor series to x^13 (error below 1e-9). */
static inline __attribute__((always_inline)) float cuvil_erff(float x) {
  float a = x < 0.0f ? -x : x, t = 1.0f / (1.0f + 0.3275911f * a), x2 = x * x, y;
  y = 1.0f - ((((1.061405429f * t - 1.453152027f) * t + 1.421413741f) * t - 0.284496736f) * t +
              0.254829592f) * t * cuvil_expf(-a * a);
  y = x < 0.0f ? -y : y;
  return a < 0.5f
             ? 1.1283791670955126f * x *
                   (1.0f - x2 * (1.0f / 3 - x2 * (1.0f / 10 - x2 * (1.0f / 42 - x2 * (1.0f / 216 - x2 * (1.0f / 1320 - x2 * (1.0f / 9360)))))))
             : y;
}

/* Applies `e` to `count` elements of one output row; `offset` is the row's
 * position in the output (where its residual is), `row` its bias index. */
static void cuvil_epilogue_row(const cuvil_epilogue *e, float *out,
                               int64_t offset, int64_t row, int64_t count) {
  const float *residual = e->residual ? e->residual + offset : 0;
  float bias = e->row_bias ? e->row_bias[row] : 0.0f;
  int64_t j;
  if (e->row_bias)
    for (j = 0; j < count; ++j)
      out[j] += bias;
  if (e->col_bias)
    for (j = 0; j < count; ++j)
      out[j] += e->col_bias[j];
  if (residual)
    for (j = 0; j < count; ++j)
      out[j] += residual[j];
  if (e->activation == CUVIL_ACT_RELU) {
    for (j = 0; j < count; ++j)
      out[j] = out[j] > 0.0f ? out[j] : 0.0f;
  } else if (e->activation == CUVIL_ACT_CLIP) {
    float lo = e->lo, hi = e->hi;
    for (j = 0; j < count; ++j) {
      float v = out[j] < lo ? lo : out[j];
      out[j] = v > hi ? hi : v;
    }
  }
}

void cuvil_sgemm4_reference(int64_t rows, int64_t n, int64_t k, const float *a,
                            int64_t a_row, int64_t a_col, const float *b,
                            int64_t b_row, float *const *c, int accumulate) {
  int64_t q, j, l;
  if (!accumulate)
    for (q = 0; q < rows; ++q)
      for (j = 0; j < n; ++j)
        c[q][j] = 0.0f;
  for (l = 0; l < k; ++l) {
    const float *brow = b + l * b_row;
    float av[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (q = 0; q < rows; ++q)
      av[q] = a[q * a_row + l * a_col];
    if (rows == 4) {
      float *c0 = c[0], *c1 = c[1], *c2 = c[2], *c3 = c[3];
      for (j = 0; j < n; ++j) {
        float bv = brow[j];
        c0[j] += av[0] * bv;
        c1[j] += av[1] * bv;
        c2[j] += av[2] * bv;
        c3[j] += av[3] * bv;
      }
    } else {
      for (q = 0; q < rows; ++q)
        for (j = 0; j < n; ++j)
          c[q][j] += av[q] * brow[j];
    }
  }
}

#if defined(CUVIL_ENABLE_SIMD_KERNELS)
#include <immintrin.h>

/* 4 rows x 16 columns in eight YMM accumulators over the whole k. */
__attribute__((target("avx2,fma"))) void
cuvil_sgemm4_avx2(int64_t rows, int64_t n, int64_t k, const float *a,
                  int64_t a_row, int64_t a_col, const float *b, int64_t b_row,
                  float *const *c, int accumulate) {
  /* Rows past `rows` repeat the last row (computed, never stored), so the
   * loop always keeps 4 x 2 accumulators in registers. */
  const float *arow[4];
  int64_t j = 0, l, q;
  for (q = 0; q < 4; ++q)
    arow[q] = a + (q < rows ? q : rows - 1) * a_row;
  for (; j + 16 <= n; j += 16) {
    __m256 c00 = _mm256_setzero_ps(), c01 = _mm256_setzero_ps(), c10 = _mm256_setzero_ps(),
           c11 = _mm256_setzero_ps(), c20 = _mm256_setzero_ps(), c21 = _mm256_setzero_ps(),
           c30 = _mm256_setzero_ps(), c31 = _mm256_setzero_ps();
    if (accumulate) {
      c00 = _mm256_loadu_ps(c[0] + j);
      c01 = _mm256_loadu_ps(c[0] + j + 8);
      if (rows > 1) {
        c10 = _mm256_loadu_ps(c[1] + j);
        c11 = _mm256_loadu_ps(c[1] + j + 8);
      }
      if (rows > 2) {
        c20 = _mm256_loadu_ps(c[2] + j);
        c21 = _mm256_loadu_ps(c[2] + j + 8);
      }
      if (rows > 3) {
        c30 = _mm256_loadu_ps(c[3] + j);
        c31 = _mm256_loadu_ps(c[3] + j + 8);
      }
    }
    for (l = 0; l < k; ++l) {
      const float *brow = b + l * b_row + j;
      __m256 b0 = _mm256_loadu_ps(brow), b1 = _mm256_loadu_ps(brow + 8);
      __m256 a0 = _mm256_set1_ps(arow[0][l * a_col]), a1 = _mm256_set1_ps(arow[1][l * a_col]);
      __m256 a2 = _mm256_set1_ps(arow[2][l * a_col]), a3 = _mm256_set1_ps(arow[3][l * a_col]);
      c00 = _mm256_fmadd_ps(a0, b0, c00);
      c01 = _mm256_fmadd_ps(a0, b1, c01);
      c10 = _mm256_fmadd_ps(a1, b0, c10);
      c11 = _mm256_fmadd_ps(a1, b1, c11);
      c20 = _mm256_fmadd_ps(a2, b0, c20);
      c21 = _mm256_fmadd_ps(a2, b1, c21);
      c30 = _mm256_fmadd_ps(a3, b0, c30);
      c31 = _mm256_fmadd_ps(a3, b1, c31);
    }
    _mm256_storeu_ps(c[0] + j, c00);
    _mm256_storeu_ps(c[0] + j + 8, c01);
    if (rows > 1) {
      _mm256_storeu_ps(c[1] + j, c10);
      _mm256_storeu_ps(c[1] + j + 8, c11);
    }
    if (rows > 2) {
      _mm256_storeu_ps(c[2] + j, c20);
      _mm256_storeu_ps(c[2] + j + 8, c21);
    }
    if (rows > 3) {
      _mm256_storeu_ps(c[3] + j, c30);
      _mm256_storeu_ps(c[3] + j + 8, c31);
    }
  }
  if (j < n) {
    /* The remaining columns, in the same summation order. */
    float *tail[4];
    for (q = 0; q < rows; ++q)
      tail[q] = c[q] + j;
    cuvil_sgemm4_reference(rows, n - j, k, a, a_row, a_col, b + j, b_row, tail,
                           accumulate);
  }
}

/* One strip of 4 rows x 32 columns in eight ZMM accumulators over the whole
 * k; m0/m1 mask the columns of a last, narrower strip (loads and stores),
 * so every column runs the same FMA sequence. Inlined twice: full strips
 * with constant all-ones masks compile to plain loads and stores. */
__attribute__((target("avx512f"), always_inline)) static inline void
cuvil_sgemm4_avx512_strip(const float *const *arow, int64_t a_col,
                          const float *b, int64_t b_row, int64_t k, int rows,
                          __mmask16 m0, __mmask16 m1, float *const *c,
                          int accumulate) {
  __m512 c00 = _mm512_setzero_ps(), c01 = _mm512_setzero_ps(),
         c10 = _mm512_setzero_ps(), c11 = _mm512_setzero_ps(),
         c20 = _mm512_setzero_ps(), c21 = _mm512_setzero_ps(),
         c30 = _mm512_setzero_ps(), c31 = _mm512_setzero_ps();
  if (accumulate) {
    c00 = _mm512_maskz_loadu_ps(m0, c[0]);
    c01 = _mm512_maskz_loadu_ps(m1, c[0] + 16);
    if (rows > 1) {
      c10 = _mm512_maskz_loadu_ps(m0, c[1]);
      c11 = _mm512_maskz_loadu_ps(m1, c[1] + 16);
    }
    if (rows > 2) {
      c20 = _mm512_maskz_loadu_ps(m0, c[2]);
      c21 = _mm512_maskz_loadu_ps(m1, c[2] + 16);
    }
    if (rows > 3) {
      c30 = _mm512_maskz_loadu_ps(m0, c[3]);
      c31 = _mm512_maskz_loadu_ps(m1, c[3] + 16);
    }
  }
  int64_t l;
  for (l = 0; l < k; ++l) {
    const float *brow = b + l * b_row;
    __m512 b0 = _mm512_maskz_loadu_ps(m0, brow);
    __m512 b1 = _mm512_maskz_loadu_ps(m1, brow + 16);
    __m512 a0 = _mm512_set1_ps(arow[0][l * a_col]), a1 = _mm512_set1_ps(arow[1][l * a_col]);
    __m512 a2 = _mm512_set1_ps(arow[2][l * a_col]), a3 = _mm512_set1_ps(arow[3][l * a_col]);
    c00 = _mm512_fmadd_ps(a0, b0, c00);
    c01 = _mm512_fmadd_ps(a0, b1, c01);
    c10 = _mm512_fmadd_ps(a1, b0, c10);
    c11 = _mm512_fmadd_ps(a1, b1, c11);
    c20 = _mm512_fmadd_ps(a2, b0, c20);
    c21 = _mm512_fmadd_ps(a2, b1, c21);
    c30 = _mm512_fmadd_ps(a3, b0, c30);
    c31 = _mm512_fmadd_ps(a3, b1, c31);
  }
  _mm512_mask_storeu_ps(c[0], m0, c00);
  _mm512_mask_storeu_ps(c[0] + 16, m1, c01);
  if (rows > 1) {
    _mm512_mask_storeu_ps(c[1], m0, c10);
    _mm512_mask_storeu_ps(c[1] + 16, m1, c11);
  }
  if (rows > 2) {
    _mm512_mask_storeu_ps(c[2], m0, c20);
    _mm512_mask_storeu_ps(c[2] + 16, m1, c21);
  }
  if (rows > 3) {
    _mm512_mask_storeu_ps(c[3], m0, c30);
    _mm512_mask_storeu_ps(c[3] + 16, m1, c31);
  }
}

/* 4 rows x 32 columns at a time; a last strip of fewer columns is masked. */
__attribute__((target("avx512f"))) void
cuvil_sgemm4_avx512(int64_t rows, int64_t n, int64_t k, const float *a,
                    int64_t a_row, int64_t a_col, const float *b, int64_t b_row,
                    float *const *c, int accumulate) {
  /* Rows past `rows` repeat the last row (computed, never stored), so the
   * loop always keeps 4 x 2 accumulators in registers. */
  const float *arow[4];
  float *strip[4];
  int64_t j = 0, q;
  for (q = 0; q < 4; ++q)
    arow[q] = a + (q < rows ? q : rows - 1) * a_row;
  for (; j + 32 <= n; j += 32) {
    for (q = 0; q < rows; ++q)
      strip[q] = c[q] + j;
    cuvil_sgemm4_avx512_strip(arow, a_col, b + j, b_row, k, (int)rows,
                              (__mmask16)0xFFFF, (__mmask16)0xFFFF, strip,
                              accumulate);
  }
  if (j < n) {
    int64_t rest = n - j;
    __mmask16 m0 = rest >= 16 ? (__mmask16)0xFFFF
                              : (__mmask16)((1u << rest) - 1);
    __mmask16 m1 = rest > 16 ? (__mmask16)((1u << (rest - 16)) - 1)
                             : (__mmask16)0;
    for (q = 0; q < rows; ++q)
      strip[q] = c[q] + j;
    cuvil_sgemm4_avx512_strip(arow, a_col, b + j, b_row, k, (int)rows, m0, m1,
                              strip, accumulate);
  }
}
#endif

/* The output columns [*x0, *x1) of a row whose input column
 * x * stride + base lies inside [0, w): a convolution tap's valid span. */
static void cuvil_tap_columns(int64_t ow, int64_t w, int64_t stride,
                              int64_t base, int64_t *x0, int64_t *x1) {
  *x0 = 0;
  while (*x0 < ow && *x0 * stride + base < 0)
    ++*x0;
  *x1 = ow;
  while (*x1 > *x0 && (*x1 - 1) * stride + base >= w)
    --*x1;
}

void cuvil_dwconv_reference(int64_t h, int64_t w, const float *input,
                            int64_t kh, int64_t kw, const float *weight,
                            float bias, int64_t stride_h, int64_t stride_w,
                            int64_t pad_top, int64_t pad_left, int64_t dil_h,
                            int64_t dil_w, int64_t oh, int64_t ow,
                            float *output) {
  /* Tap by tap over the whole plane: out[y][x0..x1) += w * in[iy][x *
   * stride + base], [x0, x1) the columns whose tap is inside the image:
   * long loops the compiler vectorizes for any stride, and each element
   * still sums its taps in (ky, kx) order. */
  int64_t y, x, ky, kx;
  for (x = 0; x < oh * ow; ++x)
    output[x] = bias;
  for (ky = 0; ky < kh; ++ky) {
    for (kx = 0; kx < kw; ++kx) {
      float wv = weight[ky * kw + kx];
      int64_t base = kx * dil_w - pad_left, x0, x1;
      cuvil_tap_columns(ow, w, stride_w, base, &x0, &x1);
      for (y = 0; y < oh; ++y) {
        int64_t iy = y * stride_h - pad_top + ky * dil_h;
        const float *row = input + iy * w + base;
        float *out = output + y * ow;
        if (iy < 0 || iy >= h)
          continue;
        for (x = x0; x < x1; ++x)
          out[x] += wv * row[x * stride_w];
      }
    }
  }
}

#if defined(CUVIL_ENABLE_SIMD_KERNELS)
/* The reference's loops with the unit-stride row update written in LANES
 * wide FMAs (other strides, and the last < LANES columns, as in C). */
#define CUVIL_DWCONV_SIMD(name, isa, vec, LANES, set1, loadu, storeu, fmadd)    \
  __attribute__((target(isa))) void cuvil_dwconv_##name(                       \
      int64_t h, int64_t w, const float *input, int64_t kh, int64_t kw,        \
      const float *weight, float bias, int64_t stride_h, int64_t stride_w,     \
      int64_t pad_top, int64_t pad_left, int64_t dil_h, int64_t dil_w,         \
      int64_t oh, int64_t ow, float *output) {                                 \
    int64_t y, x, ky, kx;                                                      \
    for (x = 0; x < oh * ow; ++x)                                              \
      output[x] = bias;                                                        \
    for (ky = 0; ky < kh; ++ky) {                                              \
      for (kx = 0; kx < kw; ++kx) {                                            \
        float wv = weight[ky * kw + kx];                                       \
        vec wvec = set1(wv);                                                   \
        int64_t base = kx * dil_w - pad_left, x0, x1;                          \
        cuvil_tap_columns(ow, w, stride_w, base, &x0, &x1);                    \
        for (y = 0; y < oh; ++y) {                                             \
          int64_t iy = y * stride_h - pad_top + ky * dil_h;                    \
          const float *row = input + iy * w + base;                            \
          float *out = output + y * ow;                                        \
          if (iy < 0 || iy >= h)                                               \
            continue;                                                          \
          x = x0;                                                              \
          if (stride_w == 1)                                                   \
            for (; x + LANES <= x1; x += LANES)                                \
              storeu(out + x, fmadd(wvec, loadu(row + x), loadu(out + x)));    \
          for (; x < x1; ++x)                                                  \
            out[x] += wv * row[x * stride_w];                                  \
        }                                                                      \
      }                                                                        \
    }                                                                          \
  }
CUVIL_DWCONV_SIMD(avx2, "avx2,fma", __m256, 8, _mm256_set1_ps, _mm256_loadu_ps,
                  _mm256_storeu_ps, _mm256_fmadd_ps)
CUVIL_DWCONV_SIMD(avx512, "avx512f", __m512, 16, _mm512_set1_ps,
                  _mm512_loadu_ps, _mm512_storeu_ps, _mm512_fmadd_ps)
#undef CUVIL_DWCONV_SIMD
#endif

/*===------------------------------------------------------------------===*
 * Channel-blocked direct convolution (NCHW<block>c)
 *===------------------------------------------------------------------===*/

/* One output row of cuvil_conv2d_blocked_f32 as its tiles see it. */
struct cuvil_convb_row {
  const float *in;       /* the padded image at the row's first input row */
  const float *weight;   /* the first of the row's channel blocks' weights */
  const float *bias;     /* the first block's bias, or NULL */
  const float *residual; /* the row in the first block's residual, or NULL */
  float *out;            /* the row in the first block of the output */
  int64_t in_blocks, in_block, block;
  int64_t row_stride;    /* floats from one padded input row to the next */
  int64_t plane_stride;  /* floats from one input block to the next */
  int64_t kh, kw, stride_w, dil_h, dil_w;
  int64_t weight_stride; /* floats from one channel block's weights to the next */
  int64_t out_stride;    /* floats from one output channel block to the next */
  int activation;
  float lo, hi;
};

/* bias, residual and activation for lane `l` of block `b`, column `x`. */
static inline float cuvil_convb_finish(const struct cuvil_convb_row *r,
                                       int64_t b, int64_t x, int64_t l,
                                       float v) {
  if (r->bias)
    v += r->bias[b * r->block + l];
  if (r->residual)
    v += r->residual[b * r->out_stride + x * r->block + l];
  if (r->activation == CUVIL_ACT_RELU)
    v = v > 0.0f ? v : 0.0f;
  else if (r->activation == CUVIL_ACT_CLIP)
    v = v < r->lo ? r->lo : v > r->hi ? r->hi : v;
  return v;
}

int cuvil_convb_reference(const struct cuvil_convb_row *r, int64_t nb,
                          int64_t x0, int64_t u) {
  int64_t b, x, c, ky, kx, i, l, B = r->block, ib = r->in_block;
  float acc[64];
  for (b = 0; b < nb; ++b)
    for (x = x0; x < x0 + u; ++x) {
      const float *wt = r->weight + b * r->weight_stride;
      const float *in = r->in + x * r->stride_w * ib;
      for (l = 0; l < B; ++l)
        acc[l] = 0.0f;
      for (c = 0; c < r->in_blocks; ++c)
        for (ky = 0; ky < r->kh; ++ky)
          for (kx = 0; kx < r->kw; ++kx) {
            const float *ip = in + c * r->plane_stride +
                              ky * r->dil_h * r->row_stride + kx * r->dil_w * ib;
            for (i = 0; i < ib; ++i, wt += B)
              for (l = 0; l < B; ++l)
                acc[l] += ip[i] * wt[l];
          }
      for (l = 0; l < B; ++l)
        r->out[b * r->out_stride + x * B + l] =
            cuvil_convb_finish(r, b, x, l, acc[l]);
    }
  return 1;
}

#if defined(CUVIL_ENABLE_SIMD_KERNELS) && !defined(CUVIL_OMIT_CONVB_TILES)
/* NB x U accumulators of LANES outputs; fully unrolled, so that they live in
 * registers (U <= the variant's UMAX keeps them from spilling). */
#define CUVIL_CONVB_TILE(name, isa, vec, LANES, NB, U, set1, loadu, storeu,    \
                         fmadd, add, maxv, minv, zero)                          \
  __attribute__((target(isa), noinline)) static void                           \
      cuvil_convb_##name##_##NB##_##U(const struct cuvil_convb_row *r,         \
                                      int64_t x0) {                            \
    vec acc[NB][U];                                                            \
    const int64_t ib = r->in_block, step = r->stride_w * ib;                   \
    const float *in = r->in + x0 * step;                                       \
    int64_t c, ky, kx, i;                                                      \
    int b, j;                                                                  \
    CUVIL_UNROLL for (b = 0; b < NB; ++b)                \
        CUVIL_UNROLL for (j = 0; j < U; ++j)             \
            acc[b][j] = zero();                                                \
    const float *wt = r->weight;                                               \
    for (c = 0; c < r->in_blocks; ++c)                                         \
      for (ky = 0; ky < r->kh; ++ky)                                           \
        for (kx = 0; kx < r->kw; ++kx) {                                       \
          const float *ip = in + c * r->plane_stride +                         \
                            ky * r->dil_h * r->row_stride + kx * r->dil_w * ib; \
          for (i = 0; i < ib; ++i, wt += LANES) {                              \
            vec wv[NB];                                                        \
            CUVIL_UNROLL for (b = 0; b < NB; ++b)        \
                wv[b] = loadu(wt + b * r->weight_stride);                      \
            CUVIL_UNROLL for (j = 0; j < U; ++j) {       \
              vec xv = set1(ip[j * step + i]);                                 \
              CUVIL_UNROLL for (b = 0; b < NB; ++b)      \
                  acc[b][j] = fmadd(xv, wv[b], acc[b][j]);                     \
            }                                                                  \
          }                                                                    \
        }                                                                      \
    CUVIL_UNROLL for (b = 0; b < NB; ++b) {              \
      vec bv = r->bias ? loadu(r->bias + b * LANES) : zero();                  \
      float *out = r->out + b * r->out_stride + x0 * LANES;                    \
      const float *res =                                                       \
          r->residual ? r->residual + b * r->out_stride + x0 * LANES : 0;      \
      CUVIL_UNROLL for (j = 0; j < U; ++j) {             \
        vec v = add(acc[b][j], bv);                                            \
        if (res)                                                               \
          v = add(v, loadu(res + j * LANES));                                  \
        if (r->activation == CUVIL_ACT_RELU)                                   \
          v = maxv(v, zero());                                                 \
        else if (r->activation == CUVIL_ACT_CLIP)                              \
          v = minv(maxv(v, set1(r->lo)), set1(r->hi));                         \
        storeu(out + j * LANES, v);                                            \
      }                                                                        \
    }                                                                          \
  }

/* A variant's entry: the columns in tiles of at most UMAX, as even as
 * possible (56 = 4 x 14; with UMAX 6, 6 x 6 + 4 x 5), so that no tile is
 * too narrow to hide the FMA latency. */
#define CUVIL_CONVB_CASE(name, NB, U)                                          \
  case NB * 64 + U:                                                            \
    cuvil_convb_##name##_##NB##_##U(r, x0);                                    \
    break;
#define CUVIL_CONVB_ENTRY(name, isa, LANES, UMAX, NARROWER, CASES)             \
  __attribute__((target(isa))) int cuvil_convb_##name(                         \
      const struct cuvil_convb_row *r, int64_t nb, int64_t x0, int64_t u) {    \
    int64_t tiles = (u + UMAX - 1) / UMAX, t;                                  \
    if (r->block != LANES || nb < 1 || nb > 2)                                 \
      return NARROWER;                                                         \
    for (t = 0; t < tiles; ++t) {                                              \
      int64_t width = u / tiles + (t < u % tiles);                             \
      switch (nb * 64 + width) { CASES }                                       \
      x0 += width;                                                             \
    }                                                                          \
    return 1;                                                                  \
  }

#define CUVIL_CONVB_AVX512(NB, U)                                              \
  CUVIL_CONVB_TILE(avx512, "avx512f", __m512, 16, NB, U, _mm512_set1_ps,       \
                   _mm512_loadu_ps, _mm512_storeu_ps, _mm512_fmadd_ps,         \
                   _mm512_add_ps, _mm512_max_ps, _mm512_min_ps,                \
                   _mm512_setzero_ps)
#define CUVIL_CONVB_AVX2(NB, U)                                                \
  CUVIL_CONVB_TILE(avx2, "avx2,fma", __m256, 8, NB, U, _mm256_set1_ps,         \
                   _mm256_loadu_ps, _mm256_storeu_ps, _mm256_fmadd_ps,         \
                   _mm256_add_ps, _mm256_max_ps, _mm256_min_ps,                \
                   _mm256_setzero_ps)
/* Widths 1..6 and 7..14 of one block count (NB). */
#define CUVIL_CONVB_W6(X, NB) X(NB, 1) X(NB, 2) X(NB, 3) X(NB, 4) X(NB, 5) X(NB, 6)
#define CUVIL_CONVB_W14(X, NB)                                                 \
  CUVIL_CONVB_W6(X, NB) X(NB, 7) X(NB, 8) X(NB, 9) X(NB, 10) X(NB, 11)         \
      X(NB, 12) X(NB, 13) X(NB, 14)
#define CUVIL_CONVB_CASE_AVX512(NB, U) CUVIL_CONVB_CASE(avx512, NB, U)
#define CUVIL_CONVB_CASE_AVX2(NB, U) CUVIL_CONVB_CASE(avx2, NB, U)

/* AVX-512: 32 registers, 2 x 14 accumulators; AVX2: 16, 2 x 6. */
CUVIL_CONVB_W14(CUVIL_CONVB_AVX512, 1)
CUVIL_CONVB_W14(CUVIL_CONVB_AVX512, 2)
/* NCHW8c on an AVX-512 target (channel counts that are multiples of 8, not
 * 16) runs the AVX2 tiles, which that CPU has. */
CUVIL_CONVB_ENTRY(avx512, "avx512f", 16, 14,
                  cuvil_convb_avx2(r, nb, x0, u),
                  CUVIL_CONVB_W14(CUVIL_CONVB_CASE_AVX512, 1)
                      CUVIL_CONVB_W14(CUVIL_CONVB_CASE_AVX512, 2))
CUVIL_CONVB_W6(CUVIL_CONVB_AVX2, 1)
CUVIL_CONVB_W6(CUVIL_CONVB_AVX2, 2)
CUVIL_CONVB_ENTRY(avx2, "avx2,fma", 8, 6, 0,
                  CUVIL_CONVB_W6(CUVIL_CONVB_CASE_AVX2, 1)
                      CUVIL_CONVB_W6(CUVIL_CONVB_CASE_AVX2, 2))
#undef CUVIL_CONVB_AVX512
#undef CUVIL_CONVB_AVX2
#undef CUVIL_CONVB_CASE_AVX512
#undef CUVIL_CONVB_CASE_AVX2
#undef CUVIL_CONVB_W6
#undef CUVIL_CONVB_W14
#undef CUVIL_CONVB_ENTRY
#undef CUVIL_CONVB_CASE
#undef CUVIL_CONVB_TILE
#endif

/* The padded image (rows and columns the tiles read) and where the input's
 * first element sits in it. */
struct cuvil_convb_args {
  cuvil_convb_fn tile;
  struct cuvil_convb_row base;
  const float *input, *image, *weight, *bias, *residual;
  float *padded, *output;
  int64_t h, w, hp, wp, pad_top, pad_left, planes;
  int64_t oh, ow, stride_h, nb, groups;
};

static int64_t cuvil_convb_extent(int64_t o, int64_t k, int64_t stride,
                                  int64_t dil) {
  return (o - 1) * stride + (k - 1) * dil + 1;
}

int64_t cuvil_conv2d_blocked_scratch_floats(int64_t c, int64_t h, int64_t w,
                                            int64_t kh, int64_t kw,
                                            int64_t stride_h, int64_t stride_w,
                                            int64_t pad_top, int64_t pad_left,
                                            int64_t dil_h, int64_t dil_w,
                                            int64_t oh, int64_t ow) {
  int64_t hp = cuvil_convb_extent(oh, kh, stride_h, dil_h);
  int64_t wp = cuvil_convb_extent(ow, kw, stride_w, dil_w);
  if (pad_top == 0 && pad_left == 0 && hp <= h && wp <= w)
    return 0;
  return c * hp * wp;
}

/* Input block planes [begin, end) into the zero-padded image. */
static void cuvil_convb_pad(void *p, int64_t begin, int64_t end) {
  const struct cuvil_convb_args *a = (const struct cuvil_convb_args *)p;
  int64_t ib = a->base.in_block, q, y, x;
  for (q = begin; q < end; ++q) {
    const float *src = a->input + q * a->h * a->w * ib;
    float *dst = a->padded + q * a->hp * a->wp * ib;
    for (y = 0; y < a->hp; ++y) {
      int64_t iy = y - a->pad_top;
      float *row = dst + y * a->wp * ib;
      if (iy < 0 || iy >= a->h) {
        memset(row, 0, (size_t)(a->wp * ib) * sizeof(float));
        continue;
      }
      /* Columns [x0, x1) of the padded row are the input row's [0, x1 - x0)
       * (fewer when the window ends before the input does). */
      x = a->pad_left < a->wp ? a->pad_left : a->wp;
      {
        int64_t x1 = a->pad_left + a->w < a->wp ? a->pad_left + a->w : a->wp;
        memset(row, 0, (size_t)(x * ib) * sizeof(float));
        if (x1 > x)
          memcpy(row + x * ib, src + iy * a->w * ib,
                 (size_t)((x1 - x) * ib) * sizeof(float));
        else
          x1 = x;
        memset(row + x1 * ib, 0, (size_t)((a->wp - x1) * ib) * sizeof(float));
      }
    }
  }
}

/* Output rows [begin, end) of (channel block group, row) pairs: a group's
 * weights stay in cache across its rows. */
static void cuvil_convb_rows(void *p, int64_t begin, int64_t end) {
  const struct cuvil_convb_args *a = (const struct cuvil_convb_args *)p;
  int64_t t, B = a->base.block;
  for (t = begin; t < end; ++t) {
    int64_t g = t / a->oh, y = t % a->oh, first = g * a->nb;
    struct cuvil_convb_row r = a->base;
    r.in = a->image + y * a->stride_h * r.row_stride;
    r.weight = a->weight + first * r.weight_stride;
    r.bias = a->bias ? a->bias + first * B : 0;
    r.out = a->output + first * r.out_stride + y * a->ow * B;
    r.residual =
        a->residual ? a->residual + first * r.out_stride + y * a->ow * B : 0;
    if (!a->tile || !a->tile(&r, a->nb, 0, a->ow))
      cuvil_convb_reference(&r, a->nb, 0, a->ow);
  }
}

void cuvil_conv2d_blocked_f32(cuvil_convb_fn tile, cuvil_pool *pool,
                              float *scratch, int64_t n, int64_t c, int64_t h,
                              int64_t w, const float *input, int64_t in_block,
                              int64_t oc, int64_t kh, int64_t kw,
                              const float *weight, const float *bias,
                              int64_t stride_h, int64_t stride_w,
                              int64_t pad_top, int64_t pad_left, int64_t dil_h,
                              int64_t dil_w, int64_t oh, int64_t ow,
                              float *output, int64_t block,
                              const cuvil_epilogue *epilogue) {
  struct cuvil_convb_args a;
  int64_t blocks = oc / block, b;
  int64_t in_planes = (c + in_block - 1) / in_block;
  int padded = cuvil_conv2d_blocked_scratch_floats(
                   in_planes * in_block, h, w, kh, kw, stride_h, stride_w,
                   pad_top, pad_left, dil_h, dil_w, oh, ow) != 0;
  memset(&a, 0, sizeof(a));
  a.tile = tile;
  a.h = h;
  a.w = w;
  a.pad_top = pad_top;
  a.pad_left = pad_left;
  a.hp = padded ? cuvil_convb_extent(oh, kh, stride_h, dil_h) : h;
  a.wp = padded ? cuvil_convb_extent(ow, kw, stride_w, dil_w) : w;
  a.planes = in_planes;
  a.oh = oh;
  a.ow = ow;
  a.stride_h = stride_h;
  a.nb = blocks % 2 == 0 ? 2 : 1;
  a.groups = blocks / a.nb;
  a.weight = weight;
  a.bias = bias;
  a.padded = scratch;
  a.base.in_blocks = in_planes;
  a.base.in_block = in_block;
  a.base.block = block;
  a.base.row_stride = a.wp * in_block;
  a.base.plane_stride = a.hp * a.wp * in_block;
  a.base.kh = kh;
  a.base.kw = kw;
  a.base.stride_w = stride_w;
  a.base.dil_h = dil_h;
  a.base.dil_w = dil_w;
  a.base.weight_stride = in_planes * kh * kw * in_block * block;
  a.base.out_stride = oh * ow * block;
  a.base.activation = epilogue ? epilogue->activation : CUVIL_ACT_NONE;
  a.base.lo = epilogue ? epilogue->lo : 0.0f;
  a.base.hi = epilogue ? epilogue->hi : 0.0f;
  for (b = 0; b < n; ++b) {
    a.input = input + b * in_planes * in_block * h * w;
    a.output = output + b * oc * oh * ow;
    a.residual = epilogue && epilogue->residual
                     ? epilogue->residual + b * oc * oh * ow
                     : 0;
    if (padded) {
      cuvil_parallel_for(pool, in_planes, cuvil_convb_pad, &a);
      a.image = scratch;
    } else {
      a.image = a.input;
    }
    cuvil_parallel_for(pool, a.groups * oh, cuvil_convb_rows, &a);
  }
}

/* Depthwise convolution on NCHW<block>c: one task per (image, channel block,
 * output row); each output's block of channels sums its taps in (ky, kx)
 * order after the bias, as cuvil_dwconv_reference does per channel. The
 * lane loops have a constant trip count (8 or 16), so they become one
 * vector FMA per tap. */
struct cuvil_dwb_args {
  const float *input, *weight, *bias, *residual;
  float *output;
  int64_t blocks, h, w, kh, kw, stride_h, stride_w, pad_top, pad_left, dil_h,
      dil_w, oh, ow, block;
  int activation;
  float lo, hi;
};

/* The taps [*k0, *k1) of a window starting at `start` that fall inside
 * [0, size). */
static void cuvil_dwb_taps(int64_t start, int64_t k, int64_t dil, int64_t size,
                           int64_t *k0, int64_t *k1) {
  *k0 = 0;
  *k1 = k;
  while (*k0 < k && start + *k0 * dil < 0)
    ++*k0;
  while (*k1 > *k0 && start + (*k1 - 1) * dil >= size)
    --*k1;
}

/* Residual and activation on `count` stored outputs (a loop the compiler
 * vectorizes). */
static void cuvil_dwb_finish(const struct cuvil_dwb_args *a, float *out,
                             const float *res, int64_t count) {
  int64_t i;
  if (res)
    for (i = 0; i < count; ++i)
      out[i] += res[i];
  if (a->activation == CUVIL_ACT_RELU)
    for (i = 0; i < count; ++i)
      out[i] = out[i] > 0.0f ? out[i] : 0.0f;
  else if (a->activation == CUVIL_ACT_CLIP)
    for (i = 0; i < count; ++i) {
      float v = out[i] > a->lo ? out[i] : a->lo;
      out[i] = v < a->hi ? v : a->hi;
    }
}

/* B lanes as one vector (GCC/Clang vector extension: one register with the
 * target's ISA, split otherwise); unaligned, and allowed to alias the
 * floats it is loaded from (like __m512). */
typedef float cuvil_vec8 __attribute__((vector_size(32), aligned(4), may_alias));
typedef float cuvil_vec16 __attribute__((vector_size(64), aligned(4), may_alias));

/* Columns whose whole window is inside the row go CUVIL_DWB_COLS at a time
 * (independent sums: one FMA chain per column would wait on its latency);
 * the edges one at a time over their valid taps. */
#define CUVIL_DWB_COLS 8
#define CUVIL_DWB_ROW(B)                                                       \
  static void cuvil_dwb_row_##B(const struct cuvil_dwb_args *a, int64_t t) {   \
    int64_t y = t % a->oh, q = t / a->oh, x = 0, ky, kx, j, ky0, ky1;          \
    int64_t xa = 0, xb = a->ow, k0, k1;                                        \
    const float *in = a->input + q * a->h * a->w * B;                          \
    const float *wt = a->weight + (q % a->blocks) * a->kh * a->kw * B;         \
    const cuvil_vec##B zero = {0};                                             \
    const cuvil_vec##B bias =                                                  \
        a->bias ? *(const cuvil_vec##B *)(a->bias + (q % a->blocks) * B)       \
                : zero;                                                        \
    float *out = a->output + (q * a->oh + y) * a->ow * B;                      \
    const float *res =                                                         \
        a->residual ? a->residual + (q * a->oh + y) * a->ow * B : 0;           \
    const int64_t iy0 = y * a->stride_h - a->pad_top, sw = a->stride_w * B;    \
    cuvil_vec##B acc[CUVIL_DWB_COLS];                                          \
    cuvil_dwb_taps(iy0, a->kh, a->dil_h, a->h, &ky0, &ky1);                    \
    while (xa < a->ow) {                                                       \
      cuvil_dwb_taps(xa * a->stride_w - a->pad_left, a->kw, a->dil_w, a->w,    \
                     &k0, &k1);                                                \
      if (k0 == 0 && k1 == a->kw)                                              \
        break;                                                                 \
      ++xa;                                                                    \
    }                                                                          \
    while (xb > xa) {                                                          \
      cuvil_dwb_taps((xb - 1) * a->stride_w - a->pad_left, a->kw, a->dil_w,    \
                     a->w, &k0, &k1);                                          \
      if (k0 == 0 && k1 == a->kw)                                              \
        break;                                                                 \
      --xb;                                                                    \
    }                                                                          \
    while (x < a->ow) {                                                        \
      int64_t cols = x >= xa && x + CUVIL_DWB_COLS <= xb ? CUVIL_DWB_COLS : 1; \
      if (cols == CUVIL_DWB_COLS) {                                            \
        CUVIL_UNROLL for (j = 0; j < CUVIL_DWB_COLS; ++j) acc[j] = bias;       \
        for (ky = ky0; ky < ky1; ++ky) {                                       \
          const float *row = in + (iy0 + ky * a->dil_h) * a->w * B +           \
                             (x * a->stride_w - a->pad_left) * B;              \
          for (kx = 0; kx < a->kw; ++kx) {                                     \
            const float *p = row + kx * a->dil_w * B;                          \
            const cuvil_vec##B wk =                                            \
                *(const cuvil_vec##B *)(wt + (ky * a->kw + kx) * B);           \
            CUVIL_UNROLL for (j = 0; j < CUVIL_DWB_COLS; ++j) acc[j] +=        \
                *(const cuvil_vec##B *)(p + j * sw) * wk;                      \
          }                                                                    \
        }                                                                      \
      } else {                                                                 \
        int64_t ix0 = x * a->stride_w - a->pad_left;                           \
        cuvil_dwb_taps(ix0, a->kw, a->dil_w, a->w, &k0, &k1);                  \
        acc[0] = bias;                                                         \
        for (ky = ky0; ky < ky1; ++ky) {                                       \
          const float *row = in + (iy0 + ky * a->dil_h) * a->w * B;            \
          for (kx = k0; kx < k1; ++kx)                                         \
            acc[0] += *(const cuvil_vec##B *)(row + (ix0 + kx * a->dil_w) * B) \
                      * *(const cuvil_vec##B *)(wt + (ky * a->kw + kx) * B);   \
        }                                                                      \
      }                                                                        \
      for (j = 0; j < cols; ++j)                                               \
        *(cuvil_vec##B *)(out + (x + j) * B) = acc[j];                         \
      cuvil_dwb_finish(a, out + x * B, res ? res + x * B : 0, cols * B);       \
      x += cols;                                                               \
    }                                                                          \
  }
CUVIL_DWB_ROW(8)
CUVIL_DWB_ROW(16)
#undef CUVIL_DWB_ROW

static void cuvil_dwb_rows(void *p, int64_t begin, int64_t end) {
  const struct cuvil_dwb_args *a = (const struct cuvil_dwb_args *)p;
  int64_t t;
  for (t = begin; t < end; ++t) {
    if (a->block == 16)
      cuvil_dwb_row_16(a, t);
    else
      cuvil_dwb_row_8(a, t);
  }
}

int cuvil_dwconv_blocked_f32(cuvil_pool *pool, int64_t n, int64_t c, int64_t h,
                             int64_t w, const float *input, int64_t kh,
                             int64_t kw, const float *weight, const float *bias,
                             int64_t stride_h, int64_t stride_w,
                             int64_t pad_top, int64_t pad_left, int64_t dil_h,
                             int64_t dil_w, int64_t oh, int64_t ow,
                             float *output, int64_t block,
                             const cuvil_epilogue *epilogue) {
  struct cuvil_dwb_args a;
  if (block != 8 && block != 16)
    return 1;
  a.input = input;
  a.weight = weight;
  a.bias = bias;
  a.residual = epilogue ? epilogue->residual : 0;
  a.output = output;
  a.blocks = c / block;
  a.h = h;
  a.w = w;
  a.kh = kh;
  a.kw = kw;
  a.stride_h = stride_h;
  a.stride_w = stride_w;
  a.pad_top = pad_top;
  a.pad_left = pad_left;
  a.dil_h = dil_h;
  a.dil_w = dil_w;
  a.oh = oh;
  a.ow = ow;
  a.block = block;
  a.activation = epilogue ? epilogue->activation : CUVIL_ACT_NONE;
  a.lo = epilogue ? epilogue->lo : 0.0f;
  a.hi = epilogue ? epilogue->hi : 0.0f;
  cuvil_parallel_for(pool, n * a.blocks * oh, cuvil_dwb_rows, &a);
  return 0;
}

/* Plain [n][c][spatial] <-> blocked [n][ceil(c / block)][spatial][block]. */
void cuvil_reorder_f32(int to_blocked, int64_t n, int64_t c, int64_t spatial,
                       int64_t block, const float *src, float *dst) {
  int64_t blocks = (c + block - 1) / block, b, q, s, l;
  for (b = 0; b < n; ++b)
    for (q = 0; q < blocks; ++q)
      for (s = 0; s < spatial; ++s)
        for (l = 0; l < block; ++l) {
          int64_t ch = q * block + l;
          int64_t at = ((b * blocks + q) * spatial + s) * block + l;
          if (to_blocked)
            dst[at] = ch < c ? src[(b * c + ch) * spatial + s] : 0.0f;
          else if (ch < c)
            dst[(b * c + ch) * spatial + s] = src[at];
        }
}

void cuvil_pool2d_blocked_f32(int kind, int64_t n, int64_t c, int64_t h,
                              int64_t w, const float *input, int64_t kh,
                              int64_t kw, int64_t stride_h, int64_t stride_w,
                              int64_t pad_top, int64_t pad_left, int64_t dil_h,
                              int64_t dil_w, int count_include_pad, int64_t oh,
                              int64_t ow, float *output, int64_t block) {
  /* Each window step on the `block` lanes of a position at once; outside
   * the image it counts padding, up to the padded input's edge
   * (count_include_pad's divisor). */
  int64_t planes = n * ((c + block - 1) / block), p, y, x, ky, kx, l;
  float acc[64];
  for (p = 0; p < planes; ++p) {
    const float *in = input + p * h * w * block;
    float *out = output + p * oh * ow * block;
    for (y = 0; y < oh; ++y)
      for (x = 0; x < ow; ++x) {
        int64_t count = 0, padded = 0;
        for (l = 0; l < block; ++l)
          acc[l] = kind == 0 ? -INFINITY : 0.0f;
        for (ky = 0; ky < kh; ++ky) {
          int64_t iy = y * stride_h - pad_top + ky * dil_h;
          for (kx = 0; kx < kw; ++kx) {
            int64_t ix = x * stride_w - pad_left + kx * dil_w;
            const float *v;
            if (iy < 0 || iy >= h || ix < 0 || ix >= w) {
              if (iy < h + pad_top && ix < w + pad_left)
                ++padded;
              continue;
            }
            v = in + (iy * w + ix) * block;
            if (kind == 0)
              for (l = 0; l < block; ++l)
                acc[l] = v[l] > acc[l] ? v[l] : acc[l];
            else
              for (l = 0; l < block; ++l)
                acc[l] += v[l];
            ++count;
          }
        }
        if (kind != 0) {
          int64_t divisor = count_include_pad ? count + padded : count;
          for (l = 0; l < block; ++l)
            acc[l] = divisor ? acc[l] / (float)divisor : 0.0f;
        }
        memcpy(out + (y * ow + x) * block, acc, (size_t)block * sizeof(float));
      }
  }
}

/* The target's L2 per core, from its description (cuvilc defines it). */
#ifndef CUVIL_L2_BYTES
#define CUVIL_L2_BYTES 1048576
#endif

/* Columns per block of the product: the block of B (k x block floats) that
 * every 4-row group of a thread's range reuses should stay in L2 (an eighth
 * of it, leaving room for A's rows, C and the other operands), instead of
 * streaming all of B from memory once per group. A multiple of 32 (the
 * widest micro-kernel strip), at least one strip. */
static int64_t cuvil_matmul_column_block(int64_t n, int64_t k) {
  int64_t block = (int64_t)(CUVIL_L2_BYTES / 8 / sizeof(float)) / (k > 0 ? k : 1) / 32 * 32;
  if (block < 32)
    block = 32;
  return block < n ? block : n;
}

/* Products on B packed in strips of CUVIL_STRIP columns ([n / 32][k][32],
 * zero past column n), the layout im2col writes and cuvil_pack_strips makes.
 * Blocked for the caches: a block of CUVIL_GEMM_KC rows of B by the columns
 * that fill half of L2 is reused by every 4-row group of a thread's range,
 * whose 4 x KC slice of A (16 KiB) stays in L1 across the block's strips.
 * Long blocks of k reload C's tiles less often: KC 1024 ran SGEMM 1024 and
 * 2048 5-10% faster than 256 (kernel_benchmark). A is read
 * once per column block (not once per strip: a convolution's weights on a
 * 7x7 or 14x14 image are most of its traffic). Blocks of k continue each
 * element's running sum (accumulate), so the result is the same bits as one
 * pass over k. */
#define CUVIL_STRIP 32
#ifndef CUVIL_GEMM_KC
#define CUVIL_GEMM_KC 1024
#endif
/* When cuvil_matmul_f32 packs B (given scratch): A has this many rows, and
 * B more bytes than this (an L1). */
#define CUVIL_PACK_MIN_ROWS 8
#define CUVIL_PACK_MIN_BYTES 32768

static int64_t cuvil_gemm_column_block(void) {
  int64_t nc = (int64_t)(CUVIL_L2_BYTES / 2 / sizeof(float)) / CUVIL_GEMM_KC /
               CUVIL_STRIP * CUVIL_STRIP;
  return nc < CUVIL_STRIP ? CUVIL_STRIP : nc;
}

/* Rows [begin, end) of C (row stride ldc) = A (strides a_row, a_col) @ B
 * (packed). */
static void cuvil_gemm_packed(int64_t begin, int64_t end, int64_t n, int64_t k,
                              const float *a, int64_t a_row, int64_t a_col,
                              const float *packed, float *c, int64_t ldc) {
  int64_t nc = cuvil_gemm_column_block(), j0, l0, r, j, q, count;
  if (k == 0) {
    for (r = begin; r < end; ++r)
      for (j = 0; j < n; ++j)
        c[r * ldc + j] = 0.0f;
    return;
  }
  for (j0 = 0; j0 < n; j0 += nc) {
    int64_t j1 = j0 + nc < n ? j0 + nc : n;
    for (l0 = 0; l0 < k; l0 += CUVIL_GEMM_KC) {
      int64_t kb = k - l0 < CUVIL_GEMM_KC ? k - l0 : CUVIL_GEMM_KC;
      for (r = begin; r < end; r += count) {
        float *rows[4];
        count = end - r < 4 ? end - r : 4;
        for (j = j0; j < j1; j += CUVIL_STRIP) {
          int64_t width = j1 - j < CUVIL_STRIP ? j1 - j : CUVIL_STRIP;
          for (q = 0; q < count; ++q)
            rows[q] = c + (r + q) * ldc + j;
          CUVIL_SGEMM4(
              count, width, kb, a + r * a_row + l0 * a_col, a_row, a_col,
              packed + (j / CUVIL_STRIP) * k * CUVIL_STRIP + l0 * CUVIL_STRIP,
              CUVIL_STRIP, rows, l0 > 0);
        }
      }
    }
  }
}

struct cuvil_pack_args {
  int64_t n, k, b_row, b_col;
  const float *b;
  float *packed;
};

/* Strips [begin, end) of B (k x n, strides b_row and b_col) into the packed
 * layout: each strip's rows become contiguous. */
static void cuvil_pack_strips(void *p, int64_t begin, int64_t end) {
  const struct cuvil_pack_args *x = (const struct cuvil_pack_args *)p;
  int64_t s, l, j;
  /* Row by row: each row's part under strips [begin, end) is read in order
   * (a strip at a time would touch a new page per row) and lands in 128-byte
   * pieces, whole cache lines, at the strips' row l. */
  for (l = 0; l < x->k; ++l) {
    const float *row = x->b + l * x->b_row;
    for (s = begin; s < end; ++s) {
      int64_t j0 = s * CUVIL_STRIP;
      int64_t width = x->n - j0 < CUVIL_STRIP ? x->n - j0 : CUVIL_STRIP;
      float *d = x->packed + (s * x->k + l) * CUVIL_STRIP;
      if (x->b_col == 1 && width == CUVIL_STRIP) {
        memcpy(d, row + j0, CUVIL_STRIP * sizeof(float));
        continue;
      }
      for (j = 0; j < width; ++j)
        d[j] = row[(j0 + j) * x->b_col];
      for (j = width; j < CUVIL_STRIP; ++j)
        d[j] = 0.0f;
    }
  }
}

struct cuvil_packed_args {
  int64_t m, n, k, a_row, a_col;
  const float *a, *packed;
  float *c;
  const cuvil_epilogue *epilogue;
  int64_t row0; /* C's first row among all the epilogue's rows */
};

/* Rows [begin, end) of one C = A @ B with B packed, then the epilogue. */
static void cuvil_packed_rows(void *p, int64_t begin, int64_t end) {
  const struct cuvil_packed_args *x = (const struct cuvil_packed_args *)p;
  int64_t r;
  cuvil_gemm_packed(begin, end, x->n, x->k, x->a, x->a_row, x->a_col, x->packed,
                    x->c, x->n);
  if (x->epilogue)
    for (r = begin; r < end; ++r)
      cuvil_epilogue_row(x->epilogue, x->c + r * x->n, (x->row0 + r) * x->n, r,
                         x->n);
}

/* Rows [begin, end) of all batches flattened (row r: batch r / m), four at a
 * time through the target's sgemm4 micro-kernel, one column block at a
 * time. Every element sums over l in order, so the result does not depend
 * on the blocking or the thread split. */
static void cuvil_matmul_rows(void *p, int64_t begin, int64_t end) {
  const struct cuvil_matmul_args *x = (const struct cuvil_matmul_args *)p;
  int64_t r, count, n = x->n, j0, q;
  int64_t block = cuvil_matmul_column_block(n, x->k);
  for (j0 = 0; j0 < n; j0 += block) {
    int64_t width = n - j0 < block ? n - j0 : block;
    for (r = begin; r < end; r += count) {
      int64_t batch = r / x->m, i = r % x->m, j, l;
      const float *ap = x->a + batch * x->a_batch_stride;
      const float *bp = x->b + batch * x->b_batch_stride + j0 * x->b_col_stride;
      float *c[4];
      count = end - r;
      if (count > 4)
        count = 4;
      if (count > x->m - i)
        count = x->m - i;
      for (q = 0; q < count; ++q)
        c[q] = x->c + (r + q) * n + j0;
      if (x->b_col_stride == 1) {
        CUVIL_SGEMM4(count, width, x->k, ap + i * x->a_row_stride,
                     x->a_row_stride, x->a_col_stride, bp, x->b_row_stride, c,
                     0);
        continue;
      }
      for (q = 0; q < count; ++q)
        for (j = 0; j < width; ++j)
          c[q][j] = 0.0f;
      for (l = 0; l < x->k; ++l) {
        const float *brow = bp + l * x->b_row_stride;
        for (q = 0; q < count; ++q) {
          float av = ap[(i + q) * x->a_row_stride + l * x->a_col_stride];
          for (j = 0; j < width; ++j)
            c[q][j] += av * brow[j * x->b_col_stride];
        }
      }
    }
  }
  if (x->epilogue)
    for (r = begin; r < end; ++r)
      cuvil_epilogue_row(x->epilogue, x->c + r * n, r * n, r % x->m, n);
}

void cuvil_matmul_f32(cuvil_pool *pool, float *scratch, int64_t batch,
                      int64_t m, int64_t n, int64_t k, const float *a,
                      int64_t a_batch_stride, int64_t a_row_stride,
                      int64_t a_col_stride, const float *b,
                      int64_t b_batch_stride, int64_t b_row_stride,
                      int64_t b_col_stride, float *c,
                      const cuvil_epilogue *epilogue) {
  struct cuvil_matmul_args args;
  /* Batches of A against one B, back to back (a linear layer on [L, N, E]
   * activations): one product with batch * m rows. */
  if (batch > 1 && b_batch_stride == 0 && a_batch_stride == m * a_row_stride) {
    m *= batch;
    batch = 1;
  }
  /* Packing B costs a pass over it; it pays once enough rows reuse it and
   * B is larger than L1 (a small one stays there, strided or not). */
  if (scratch && m >= CUVIL_PACK_MIN_ROWS &&
      k * n * (int64_t)sizeof(float) > CUVIL_PACK_MIN_BYTES) {
    int64_t i, strips = (n + CUVIL_STRIP - 1) / CUVIL_STRIP;
    for (i = 0; i < batch; ++i) {
      struct cuvil_pack_args pack = {
          n, k, b_row_stride, b_col_stride, b + i * b_batch_stride, scratch};
      struct cuvil_packed_args product = {m,
                                          n,
                                          k,
                                          a_row_stride,
                                          a_col_stride,
                                          a + i * a_batch_stride,
                                          scratch,
                                          c + i * m * n,
                                          epilogue,
                                          i * m};
      if (i == 0 || b_batch_stride != 0)
        cuvil_parallel_for(pool, strips, cuvil_pack_strips, &pack);
      cuvil_parallel_for(pool, m, cuvil_packed_rows, &product);
    }
    return;
  }
  args.m = m;
  args.n = n;
  args.k = k;
  args.a = a;
  args.a_batch_stride = a_batch_stride;
  args.a_row_stride = a_row_stride;
  args.a_col_stride = a_col_stride;
  args.b = b;
  args.b_batch_stride = b_batch_stride;
  args.b_row_stride = b_row_stride;
  args.b_col_stride = b_col_stride;
  args.c = c;
  args.epilogue = epilogue;
  cuvil_parallel_for(pool, batch * m, cuvil_matmul_rows, &args);
}

void cuvil_matmul_packed_f32(cuvil_pool *pool, int64_t m, int64_t n, int64_t k,
                             const float *a, int64_t a_row, int64_t a_col,
                             const float *packed, float *c,
                             const cuvil_epilogue *epilogue) {
  struct cuvil_packed_args product = {m, n,      k, a_row,    a_col,
                                      a, packed, c, epilogue, 0};
  cuvil_parallel_for(pool, m, cuvil_packed_rows, &product);
}

int64_t cuvil_matmul_scratch_floats(int64_t n, int64_t k) {
  return k * ((n + CUVIL_STRIP - 1) / CUVIL_STRIP * CUVIL_STRIP);
}

struct cuvil_conv2d_args {
  int64_t c, h, w, oc, kh, kw, groups, stride_h, stride_w, pad_top, pad_left,
      dil_h, dil_w, oh, ow;
  const float *input, *weight, *bias;
  float *output;
  const cuvil_epilogue *epilogue;
};

/* Output planes [begin, end) of n * oc (plane p: image p / oc, channel
 * p % oc). Up to four planes of one group are computed together so that
 * each input row loaded feeds four accumulations; every output element still
 * sums its terms in the same order (input channel, then ky, then kx), so the
 * result does not depend on how planes are grouped or split across threads. */
static void cuvil_conv2d_planes(void *p, int64_t begin, int64_t end) {
  const struct cuvil_conv2d_args *x = (const struct cuvil_conv2d_args *)p;
  if (x->groups == x->c && x->oc == x->c) {
    /* Depthwise: one plane per channel, through the micro-kernel family. */
    int64_t plane;
    for (plane = begin; plane < end; ++plane) {
      int64_t b = plane / x->oc, o = plane % x->oc;
      float *out = x->output + plane * x->oh * x->ow;
      CUVIL_DWCONV(x->h, x->w, x->input + (b * x->c + o) * x->h * x->w, x->kh,
                   x->kw, x->weight + o * x->kh * x->kw,
                   x->bias ? x->bias[o] : 0.0f, x->stride_h, x->stride_w,
                   x->pad_top, x->pad_left, x->dil_h, x->dil_w, x->oh, x->ow,
                   out);
      if (x->epilogue)
        cuvil_epilogue_row(x->epilogue, out, plane * x->oh * x->ow, 0,
                           x->oh * x->ow);
    }
    return;
  }
  int64_t cg = x->c / x->groups, ocg = x->oc / x->groups, plane, count;
  int64_t h = x->h, w = x->w, kh = x->kh, kw = x->kw, oh = x->oh, ow = x->ow;
  int64_t stride_h = x->stride_h, stride_w = x->stride_w;
  for (plane = begin; plane < end; plane += count) {
    int64_t b = plane / x->oc, o = plane % x->oc, g = o / ocg, ci, i, j;
    float *out[4];
    count = end - plane;
    if (count > 4)
      count = 4;
    if (count > ocg - o % ocg)
      count = ocg - o % ocg;
    for (j = 0; j < count; ++j) {
      float init = x->bias ? x->bias[o + j] : 0.0f;
      out[j] = x->output + (plane + j) * oh * ow;
      for (i = 0; i < oh * ow; ++i)
        out[j][i] = init;
    }
    for (ci = 0; ci < cg; ++ci) {
      const float *in = x->input + (b * x->c + g * cg + ci) * h * w;
      int64_t ky, kx;
      for (ky = 0; ky < kh; ++ky) {
        for (kx = 0; kx < kw; ++kx) {
          float wv[4] = {0.0f, 0.0f, 0.0f, 0.0f};
          int64_t y, x0, x1, base = -x->pad_left + kx * x->dil_w;
          for (j = 0; j < count; ++j)
            wv[j] = x->weight[((o + j) * cg + ci) * kh * kw + ky * kw + kx];
          cuvil_tap_columns(ow, w, stride_w, base, &x0, &x1);
          for (y = 0; y < oh; ++y) {
            int64_t iy = y * stride_h - x->pad_top + ky * x->dil_h, col;
            const float *inrow;
            if (iy < 0 || iy >= h)
              continue;
            inrow = in + iy * w + base;
            if (count == 4 && stride_w == 1) {
              float *o0 = out[0] + y * ow, *o1 = out[1] + y * ow;
              float *o2 = out[2] + y * ow, *o3 = out[3] + y * ow;
              for (col = x0; col < x1; ++col) {
                float v = inrow[col];
                o0[col] += wv[0] * v;
                o1[col] += wv[1] * v;
                o2[col] += wv[2] * v;
                o3[col] += wv[3] * v;
              }
            } else {
              for (j = 0; j < count; ++j) {
                float *orow = out[j] + y * ow;
                for (col = x0; col < x1; ++col)
                  orow[col] += wv[j] * inrow[col * stride_w];
              }
            }
          }
        }
      }
    }
    if (x->epilogue)
      for (j = 0; j < count; ++j)
        cuvil_epilogue_row(x->epilogue, out[j], (plane + j) * oh * ow, 0,
                           oh * ow);
  }
}

/* Writes the patches of one image, packed for the micro-kernels: column
 * strips of CUVIL_STRIP positions, each strip [c * kh * kw][CUVIL_STRIP]
 * contiguous (row (ci, ky, kx), column (y, x) - strip start), zero where the
 * window reads padding and past the last position. A strip is then read
 * sequentially by the kernel instead of one cache line per row of patches. */
static void cuvil_im2col_packed_f32(int64_t c, int64_t h, int64_t w,
                                    const float *input, int64_t kh, int64_t kw,
                                    int64_t stride_h, int64_t stride_w,
                                    int64_t pad_top, int64_t pad_left,
                                    int64_t dil_h, int64_t dil_w, int64_t oh,
                                    int64_t ow, float *patches, int64_t c_begin,
                                    int64_t c_end) {
  int64_t rows = c * kh * kw, ci, ky, kx;
  for (ci = c_begin; ci < c_end; ++ci) {
    for (ky = 0; ky < kh; ++ky) {
      for (kx = 0; kx < kw; ++kx) {
        int64_t row = (ci * kh + ky) * kw + kx, base = kx * dil_w - pad_left;
        int64_t y, col, x0, x1, p, end;
        const float *plane = input + ci * h * w;
        float *dst = patches + row * CUVIL_STRIP;
        cuvil_tap_columns(ow, w, stride_w, base, &x0, &x1);
        /* Position p lives at dst[(p / 32) * rows * 32 + p % 32]: a row of
         * outputs is written in runs that stay inside one strip, each a
         * zero head, a copy (a vectorizable loop) and a zero tail. */
        end = (oh * ow + CUVIL_STRIP - 1) / CUVIL_STRIP * CUVIL_STRIP;
        for (y = 0; y <= oh; ++y) {
          int64_t iy = y * stride_h - pad_top + ky * dil_h;
          int64_t p0 = y * ow, stop_col = y < oh ? ow : end - oh * ow;
          int inside = y < oh && iy >= 0 && iy < h;
          const float *in = plane + iy * w + base;
          for (col = 0; col < stop_col; col = p) {
            int64_t at = p0 + col, lane = at % CUVIL_STRIP, q, lo, hi;
            float *d = dst + (at / CUVIL_STRIP) * rows * CUVIL_STRIP + lane;
            p = col + (CUVIL_STRIP - lane) < stop_col
                    ? col + (CUVIL_STRIP - lane)
                    : stop_col;
            /* Columns [col, p): input inside [lo, hi), zero around it.
             * (Row oh is the padding after the last position.) */
            lo = inside ? (x0 > col ? x0 : col) : p;
            hi = inside ? (x1 < p ? x1 : p) : p;
            if (hi < lo)
              hi = lo;
            for (q = col; q < lo; ++q)
              d[q - col] = 0.0f;
            if (stride_w == 1)
              for (; q < hi; ++q)
                d[q - col] = in[q];
            else
              for (; q < hi; ++q)
                d[q - col] = in[q * stride_w];
            for (; q < p; ++q)
              d[q - col] = 0.0f;
          }
        }
      }
    }
  }
}

/* The patches of input channels [begin, end): each writes its own rows. */
struct cuvil_im2col_args {
  int64_t c, h, w, kh, kw, stride_h, stride_w, pad_top, pad_left, dil_h, dil_w,
      oh, ow;
  const float *input;
  float *patches;
};

static void cuvil_im2col_channels(void *p, int64_t begin, int64_t end) {
  const struct cuvil_im2col_args *x = (const struct cuvil_im2col_args *)p;
  cuvil_im2col_packed_f32(x->c, x->h, x->w, x->input, x->kh, x->kw,
                          x->stride_h, x->stride_w, x->pad_top, x->pad_left,
                          x->dil_h, x->dil_w, x->oh, x->ow, x->patches, begin,
                          end);
}

void cuvil_conv2d_f32(cuvil_pool *pool, float *scratch, int64_t n, int64_t c,
                      int64_t h, int64_t w, const float *input, int64_t oc,
                      int64_t kh, int64_t kw, const float *weight,
                      const float *bias, int64_t groups, int64_t stride_h,
                      int64_t stride_w, int64_t pad_top, int64_t pad_left,
                      int64_t dil_h, int64_t dil_w, int64_t oh, int64_t ow,
                      float *output, const cuvil_epilogue *epilogue) {
  struct cuvil_conv2d_args args;
  /* As a matrix product, the bias joins the epilogue of each image. */
  cuvil_epilogue image_epilogue = {0, 0, CUVIL_ACT_NONE, 0.0f, 0.0f, 0};
  int as_product = (scratch && groups == 1) ||
                   (kh == 1 && kw == 1 && stride_h == 1 && stride_w == 1 &&
                    pad_top == 0 && pad_left == 0 && groups == 1 && oh == h &&
                    ow == w);
  if (as_product) {
    /* out[oc, oh*ow] = weight[oc, c*kh*kw] @ patches[c*kh*kw, oh*ow] (packed
     * in strips); a pointwise convolution multiplies the image itself. */
    int64_t b, patch = c * kh * kw;
    int pointwise = !(scratch && groups == 1);
    if (epilogue)
      image_epilogue = *epilogue;
    image_epilogue.row_bias = bias;
    for (b = 0; b < n; ++b) {
      float *out = output + b * oc * oh * ow;
      const float *rhs = input + b * c * h * w;
      if (epilogue && epilogue->residual)
        image_epilogue.residual = epilogue->residual + b * oc * oh * ow;
      if (!pointwise) {
        struct cuvil_packed_args packed;
        struct cuvil_im2col_args im2col = {c,        h,       w,       kh,
                                           kw,       stride_h, stride_w, pad_top,
                                           pad_left, dil_h,   dil_w,   oh,
                                           ow,       rhs,     scratch};
        cuvil_parallel_for(pool, c, cuvil_im2col_channels, &im2col);
        packed.m = oc;
        packed.n = oh * ow;
        packed.k = patch;
        packed.a_row = patch;
        packed.a_col = 1;
        packed.a = weight;
        packed.row0 = 0;
        packed.packed = scratch;
        packed.c = out;
        packed.epilogue = bias || epilogue ? &image_epilogue : 0;
        cuvil_parallel_for(pool, oc, cuvil_packed_rows, &packed);
        continue;
      }
      cuvil_matmul_f32(pool, NULL, 1, oc, oh * ow, patch, weight, 0, patch, 1,
                       rhs, 0, oh * ow, 1, out,
                       bias || epilogue ? &image_epilogue : 0);
    }
    return;
  }
  args.c = c;
  args.h = h;
  args.w = w;
  args.oc = oc;
  args.kh = kh;
  args.kw = kw;
  args.groups = groups;
  args.stride_h = stride_h;
  args.stride_w = stride_w;
  args.pad_top = pad_top;
  args.pad_left = pad_left;
  args.dil_h = dil_h;
  args.dil_w = dil_w;
  args.oh = oh;
  args.ow = ow;
  args.input = input;
  args.weight = weight;
  args.bias = bias;
  args.output = output;
  args.epilogue = epilogue;
  cuvil_parallel_for(pool, n * oc, cuvil_conv2d_planes, &args);
}

/* Winograd F(4x4, 3x3) with the points 0, 1, -1, 2, -2 and infinity
 * (Lavin and Gray): Y = A^T [(G g G^T) . (B^T d B)] A.
 * The transforms work on CUVIL_WINO_LANES channels as one vector, so the
 * transform domain keeps channels innermost: V[xi][t][i] for the input
 * tiles, U[xi] packed as a matrix product's B ([ceil(OC / 32)][C][32], the
 * strips cuvil_gemm_packed reads) and M[xi][t][o] = V[xi] @ U[xi]. In
 * NCHW<block>c a tile point's channels then move as one contiguous vector
 * in both directions; in NCHW they are gathered and scattered. */
#define CUVIL_WINO_TILES(o) (((o) + 3) / 4)
#define CUVIL_WINO_LANES 16
/* Tiles of a row whose six input rows the input transform buffers at once
 * (6 x 66 points x 16 lanes: 25 KiB, an L1's share). */
#define CUVIL_WINO_CHUNK 16

static int64_t cuvil_winograd_u_floats(int64_t c, int64_t oc) {
  return (oc + CUVIL_STRIP - 1) / CUVIL_STRIP * CUVIL_STRIP * c;
}

int64_t cuvil_winograd_scratch_floats(int64_t c, int64_t oc, int64_t oh, int64_t ow) {
  int64_t t = CUVIL_WINO_TILES(oh) * CUVIL_WINO_TILES(ow);
  return 36 * (cuvil_winograd_u_floats(c, oc) + c * t + oc * t);
}

struct cuvil_winograd_args {
  int64_t c, h, w, oc, pad_top, pad_left, oh, ow, tiles_x, tiles_y, tiles;
  int64_t in_block, out_block; /* channel blocks (1: NCHW) */
  const float *input, *weight, *bias;
  float *u, *v, *m, *output;
  const cuvil_epilogue *epilogue;
};

/* Channels [first, first + count) (count <= CUVIL_WINO_LANES) of NCHW<block>c
 * planes of `points` points: point p of lane l is at off[l] + p * block.
 * Returns how many lanes at a time are contiguous (16, 8 or 1). */
static int cuvil_wino_lanes(int64_t first, int64_t count, int64_t block,
                            int64_t points, int64_t *off) {
  int64_t l;
  int run;
  for (l = 0; l < count; ++l)
    off[l] = (first + l) / block * points * block + (first + l) % block;
  for (run = 16; run >= 8; run /= 2) {
    int ok = count % run == 0;
    for (l = 0; ok && l < count; ++l)
      ok = off[l] == off[l - l % run] + l % run;
    if (ok)
      return run;
  }
  return 1;
}

/* dst[l] = src[off[l]] for `count` lanes, in runs of `run`. */
static inline void cuvil_wino_gather(float *dst, const float *src,
                                     const int64_t *off, int64_t count,
                                     int run) {
  int64_t l;
  if (run == 16) {
    memcpy(dst, src + off[0], 16 * sizeof(float));
  } else if (run == 8) {
    for (l = 0; l < count; l += 8)
      memcpy(dst + l, src + off[l], 8 * sizeof(float));
  } else {
    for (l = 0; l < count; ++l)
      dst[l] = src[off[l]];
  }
}

static inline void cuvil_wino_scatter(float *dst, const float *src,
                                      const int64_t *off, int64_t count,
                                      int run) {
  int64_t l;
  if (run == 16) {
    memcpy(dst + off[0], src, 16 * sizeof(float));
  } else if (run == 8) {
    for (l = 0; l < count; l += 8)
      memcpy(dst + off[l], src + l, 8 * sizeof(float));
  } else {
    for (l = 0; l < count; ++l)
      dst[off[l]] = src[l];
  }
}

/* U for output channels [16 * begin, 16 * end): lane l of a vector is output
 * channel o0 + l, and each input channel's 36 transformed vectors land in
 * their strips. Lanes past OC are zero, as the packed layout wants. */
static void cuvil_winograd_weights(void *p, int64_t begin, int64_t end) {
  const struct cuvil_winograd_args *x = (const struct cuvil_winograd_args *)p;
  int64_t g, i, r, col, l, k, uf = cuvil_winograd_u_floats(x->c, x->oc);
  for (g = begin; g < end; ++g) {
    int64_t o0 = g * CUVIL_WINO_LANES;
    int64_t lanes =
        x->oc - o0 < CUVIL_WINO_LANES ? x->oc - o0 : CUVIL_WINO_LANES;
    float *strip =
        x->u + (o0 / CUVIL_STRIP) * x->c * CUVIL_STRIP + o0 % CUVIL_STRIP;
    /* The strip's other half has no channels when OC ends in this one. */
    int clear = o0 % CUVIL_STRIP == 0 && o0 + CUVIL_WINO_LANES >= x->oc;
    for (i = 0; i < x->c; ++i) {
      float gw[9][CUVIL_WINO_LANES], t[6][3][CUVIL_WINO_LANES],
          u[36][CUVIL_WINO_LANES];
      const float *src = x->weight + (o0 * x->c + i) * 9;
      for (k = 0; k < 9; ++k)
        for (l = 0; l < CUVIL_WINO_LANES; ++l)
          gw[k][l] = l < lanes ? src[l * x->c * 9 + k] : 0.0f;
      for (col = 0; col < 3; ++col)
        for (l = 0; l < CUVIL_WINO_LANES; ++l) {
          float g0 = gw[col][l], g1 = gw[3 + col][l], g2 = gw[6 + col][l];
          t[0][col][l] = g0 * 0.25f;
          t[1][col][l] = -(g0 + g1 + g2) * (1.0f / 6);
          t[2][col][l] = -(g0 - g1 + g2) * (1.0f / 6);
          t[3][col][l] = g0 * (1.0f / 24) + g1 * (1.0f / 12) + g2 * (1.0f / 6);
          t[4][col][l] = g0 * (1.0f / 24) - g1 * (1.0f / 12) + g2 * (1.0f / 6);
          t[5][col][l] = g2;
        }
      for (r = 0; r < 6; ++r)
        for (l = 0; l < CUVIL_WINO_LANES; ++l) {
          float g0 = t[r][0][l], g1 = t[r][1][l], g2 = t[r][2][l];
          u[r * 6 + 0][l] = g0 * 0.25f;
          u[r * 6 + 1][l] = -(g0 + g1 + g2) * (1.0f / 6);
          u[r * 6 + 2][l] = -(g0 - g1 + g2) * (1.0f / 6);
          u[r * 6 + 3][l] = g0 * (1.0f / 24) + g1 * (1.0f / 12) + g2 * (1.0f / 6);
          u[r * 6 + 4][l] = g0 * (1.0f / 24) - g1 * (1.0f / 12) + g2 * (1.0f / 6);
          u[r * 6 + 5][l] = g2;
        }
      for (r = 0; r < 36; ++r) {
        float *dst = strip + r * uf + i * CUVIL_STRIP;
        memcpy(dst, u[r], sizeof u[r]);
        if (clear)
          memset(dst + CUVIL_WINO_LANES, 0,
                 (CUVIL_STRIP - CUVIL_WINO_LANES) * sizeof(float));
      }
    }
  }
}

/* V for items [begin, end) of (input channel group, tile row): the six input
 * rows under up to CUVIL_WINO_CHUNK tiles go to a zero-padded buffer of
 * channel vectors, then each tile's 36 vectors B^T d B go to V[xi][t]. */
static void cuvil_winograd_inputs(void *p, int64_t begin, int64_t end) {
  const struct cuvil_winograd_args *x = (const struct cuvil_winograd_args *)p;
  float line[6][4 * CUVIL_WINO_CHUNK + 2][CUVIL_WINO_LANES];
  int64_t item, t0, tt, r, col, l, points = x->h * x->w, step = x->tiles * x->c;
  memset(line, 0, sizeof line);
  for (item = begin; item < end; ++item) {
    int64_t i0 = item / x->tiles_y * CUVIL_WINO_LANES, ty = item % x->tiles_y,
            off[16];
    int64_t lanes = x->c - i0 < CUVIL_WINO_LANES ? x->c - i0 : CUVIL_WINO_LANES;
    int run = cuvil_wino_lanes(i0, lanes, x->in_block, points, off);
    for (t0 = 0; t0 < x->tiles_x; t0 += CUVIL_WINO_CHUNK) {
      int64_t nt = x->tiles_x - t0 < CUVIL_WINO_CHUNK ? x->tiles_x - t0
                                                      : CUVIL_WINO_CHUNK;
      for (r = 0; r < 6; ++r) {
        int64_t yy = ty * 4 - x->pad_top + r;
        for (col = 0; col < 4 * nt + 2; ++col) {
          int64_t xx = t0 * 4 - x->pad_left + col;
          if (yy >= 0 && yy < x->h && xx >= 0 && xx < x->w)
            cuvil_wino_gather(line[r][col],
                              x->input + (yy * x->w + xx) * x->in_block, off,
                              lanes, run);
          else
            memset(line[r][col], 0, sizeof line[r][col]);
        }
      }
      for (tt = 0; tt < nt; ++tt) {
        float s[6][6][CUVIL_WINO_LANES], v[36][CUVIL_WINO_LANES];
        float *dst = x->v + (ty * x->tiles_x + t0 + tt) * x->c + i0;
        for (col = 0; col < 6; ++col) {
          int64_t at = 4 * tt + col;
          for (l = 0; l < CUVIL_WINO_LANES; ++l) {
            float d0 = line[0][at][l], d1 = line[1][at][l], d2 = line[2][at][l],
                  d3 = line[3][at][l], d4 = line[4][at][l], d5 = line[5][at][l];
            s[0][col][l] = 4 * d0 - 5 * d2 + d4;
            s[1][col][l] = -4 * d1 - 4 * d2 + d3 + d4;
            s[2][col][l] = 4 * d1 - 4 * d2 - d3 + d4;
            s[3][col][l] = -2 * d1 - d2 + 2 * d3 + d4;
            s[4][col][l] = 2 * d1 - d2 - 2 * d3 + d4;
            s[5][col][l] = 4 * d1 - 5 * d3 + d5;
          }
        }
        for (r = 0; r < 6; ++r)
          for (l = 0; l < CUVIL_WINO_LANES; ++l) {
            float d0 = s[r][0][l], d1 = s[r][1][l], d2 = s[r][2][l],
                  d3 = s[r][3][l], d4 = s[r][4][l], d5 = s[r][5][l];
            v[r * 6 + 0][l] = 4 * d0 - 5 * d2 + d4;
            v[r * 6 + 1][l] = -4 * d1 - 4 * d2 + d3 + d4;
            v[r * 6 + 2][l] = 4 * d1 - 4 * d2 - d3 + d4;
            v[r * 6 + 3][l] = -2 * d1 - d2 + 2 * d3 + d4;
            v[r * 6 + 4][l] = 2 * d1 - d2 - 2 * d3 + d4;
            v[r * 6 + 5][l] = 4 * d1 - 5 * d3 + d5;
          }
        if (lanes == CUVIL_WINO_LANES)
          for (r = 0; r < 36; ++r)
            memcpy(dst + r * step, v[r], sizeof v[r]);
        else
          for (r = 0; r < 36; ++r)
            memcpy(dst + r * step, v[r], (size_t)lanes * sizeof(float));
      }
    }
  }
}

/* M[xi] = V[xi] @ U[xi] for rows [begin, end) of the 36 products stacked
 * (row r: point r / T, tile r % T). */
static void cuvil_winograd_products(void *p, int64_t begin, int64_t end) {
  const struct cuvil_winograd_args *x = (const struct cuvil_winograd_args *)p;
  int64_t uf = cuvil_winograd_u_floats(x->c, x->oc), r = begin;
  while (r < end) {
    int64_t xi = r / x->tiles, first = r % x->tiles;
    int64_t last =
        end - xi * x->tiles < x->tiles ? end - xi * x->tiles : x->tiles;
    cuvil_gemm_packed(first, last, x->oc, x->c, x->v + xi * x->tiles * x->c,
                      x->c, 1, x->u + xi * uf, x->m + xi * x->tiles * x->oc,
                      x->oc);
    r = xi * x->tiles + last;
  }
}

/* Items [begin, end) of (output channel group, tile row): Y = A^T M A per
 * tile, then bias and the epilogue in the order cuvil_epilogue_row applies
 * them, each output point's channels as one vector. */
static void cuvil_winograd_outputs(void *p, int64_t begin, int64_t end) {
  const struct cuvil_winograd_args *x = (const struct cuvil_winograd_args *)p;
  const cuvil_epilogue *e = x->epilogue;
  int64_t item, tx, r, col, l, step = x->tiles * x->oc, ob = x->out_block;
  for (item = begin; item < end; ++item) {
    int64_t o0 = item / x->tiles_y * CUVIL_WINO_LANES, ty = item % x->tiles_y,
            off[16];
    int64_t lanes =
        x->oc - o0 < CUVIL_WINO_LANES ? x->oc - o0 : CUVIL_WINO_LANES;
    int run = cuvil_wino_lanes(o0, lanes, ob, x->oh * x->ow, off);
    float bias[CUVIL_WINO_LANES];
    for (l = 0; l < CUVIL_WINO_LANES; ++l)
      bias[l] = x->bias && l < lanes ? x->bias[o0 + l] : 0.0f;
    for (tx = 0; tx < x->tiles_x; ++tx) {
      const float *mp = x->m + (ty * x->tiles_x + tx) * x->oc + o0;
      float m[36][CUVIL_WINO_LANES], s[4][6][CUVIL_WINO_LANES],
          y[4][4][CUVIL_WINO_LANES];
      if (lanes == CUVIL_WINO_LANES) {
        for (r = 0; r < 36; ++r)
          memcpy(m[r], mp + r * step, sizeof m[r]);
      } else {
        memset(m, 0, sizeof m);
        for (r = 0; r < 36; ++r)
          memcpy(m[r], mp + r * step, (size_t)lanes * sizeof(float));
      }
      for (col = 0; col < 6; ++col)
        for (l = 0; l < CUVIL_WINO_LANES; ++l) {
          float m0 = m[col][l], m1 = m[6 + col][l], m2 = m[12 + col][l],
                m3 = m[18 + col][l], m4 = m[24 + col][l], m5 = m[30 + col][l];
          s[0][col][l] = m0 + m1 + m2 + m3 + m4;
          s[1][col][l] = m1 - m2 + 2 * m3 - 2 * m4;
          s[2][col][l] = m1 + m2 + 4 * m3 + 4 * m4;
          s[3][col][l] = m1 - m2 + 8 * m3 - 8 * m4 + m5;
        }
      for (r = 0; r < 4; ++r)
        for (l = 0; l < CUVIL_WINO_LANES; ++l) {
          float m0 = s[r][0][l], m1 = s[r][1][l], m2 = s[r][2][l],
                m3 = s[r][3][l], m4 = s[r][4][l], m5 = s[r][5][l];
          y[r][0][l] = m0 + m1 + m2 + m3 + m4;
          y[r][1][l] = m1 - m2 + 2 * m3 - 2 * m4;
          y[r][2][l] = m1 + m2 + 4 * m3 + 4 * m4;
          y[r][3][l] = m1 - m2 + 8 * m3 - 8 * m4 + m5;
        }
      for (r = 0; r < 4 && ty * 4 + r < x->oh; ++r)
        for (col = 0; col < 4 && tx * 4 + col < x->ow; ++col) {
          int64_t at = ((ty * 4 + r) * x->ow + tx * 4 + col) * ob;
          float *v = y[r][col], res[CUVIL_WINO_LANES];
          for (l = 0; l < CUVIL_WINO_LANES; ++l)
            v[l] += bias[l];
          if (e && e->residual) {
            cuvil_wino_gather(res, e->residual + at, off, lanes, run);
            for (l = 0; l < CUVIL_WINO_LANES; ++l)
              v[l] += l < lanes ? res[l] : 0.0f;
          }
          if (e && e->activation == CUVIL_ACT_RELU)
            for (l = 0; l < CUVIL_WINO_LANES; ++l)
              v[l] = v[l] > 0.0f ? v[l] : 0.0f;
          else if (e && e->activation == CUVIL_ACT_CLIP)
            for (l = 0; l < CUVIL_WINO_LANES; ++l)
              v[l] = v[l] < e->lo ? e->lo : v[l] > e->hi ? e->hi : v[l];
          cuvil_wino_scatter(x->output + at, v, off, lanes, run);
        }
    }
  }
}

void cuvil_conv2d_winograd_f32(cuvil_pool *pool, float *scratch, int64_t n, int64_t c,
                               int64_t h, int64_t w, const float *input, int64_t in_block,
                               int64_t oc, const float *weight, const float *bias,
                               int64_t pad_top, int64_t pad_left, int64_t oh, int64_t ow,
                               float *output, int64_t out_block,
                               const cuvil_epilogue *epilogue) {
  struct cuvil_winograd_args x;
  int64_t b, groups_in = (c + CUVIL_WINO_LANES - 1) / CUVIL_WINO_LANES,
             groups_out = (oc + CUVIL_WINO_LANES - 1) / CUVIL_WINO_LANES;
  x.in_block = in_block;
  x.out_block = out_block;
  x.c = c;
  x.h = h;
  x.w = w;
  x.oc = oc;
  x.pad_top = pad_top;
  x.pad_left = pad_left;
  x.oh = oh;
  x.ow = ow;
  x.tiles_x = CUVIL_WINO_TILES(ow);
  x.tiles_y = CUVIL_WINO_TILES(oh);
  x.tiles = x.tiles_y * x.tiles_x;
  x.weight = weight;
  x.bias = bias;
  x.u = scratch;
  x.v = x.u + 36 * cuvil_winograd_u_floats(c, oc);
  x.m = x.v + 36 * c * x.tiles;
  cuvil_parallel_for(pool, groups_out, cuvil_winograd_weights, &x);
  for (b = 0; b < n; ++b) {
    cuvil_epilogue image = {0, 0, CUVIL_ACT_NONE, 0.0f, 0.0f, 0};
    x.input = input + b * c * h * w;
    x.output = output + b * oc * oh * ow;
    if (epilogue) {
      image = *epilogue;
      if (image.residual)
        image.residual += b * oc * oh * ow;
    }
    x.epilogue = epilogue ? &image : 0;
    cuvil_parallel_for(pool, groups_in * x.tiles_y, cuvil_winograd_inputs, &x);
    cuvil_parallel_for(pool, 36 * x.tiles, cuvil_winograd_products, &x);
    cuvil_parallel_for(pool, groups_out * x.tiles_y, cuvil_winograd_outputs,
                       &x);
  }
}

void cuvil_pool2d_f32(int kind, int64_t n, int64_t c, int64_t h, int64_t w,
                      const float *input, int64_t kh, int64_t kw,
                      int64_t stride_h, int64_t stride_w, int64_t pad_top,
                      int64_t pad_left, int64_t dil_h, int64_t dil_w,
                      int count_include_pad, int64_t oh, int64_t ow,
                      float *output) {
  /* NCHW is NCHW1c. */
  cuvil_pool2d_blocked_f32(kind, n, c, h, w, input, kh, kw, stride_h, stride_w,
                           pad_top, pad_left, dil_h, dil_w, count_include_pad,
                           oh, ow, output, 1);
}

void cuvil_adaptive_avg_pool2d_f32(int64_t n, int64_t c, int64_t h, int64_t w,
                                   const float *input, int64_t oh, int64_t ow,
                                   float *output) {
  for (int64_t p = 0; p < n * c; ++p) {
    const float *in = input + p * h * w;
    for (int64_t y = 0; y < oh; ++y) {
      int64_t y0 = (y * h) / oh, y1 = ((y + 1) * h + oh - 1) / oh;
      for (int64_t x = 0; x < ow; ++x) {
        int64_t x0 = (x * w) / ow, x1 = ((x + 1) * w + ow - 1) / ow;
        float acc = 0.0f;
        for (int64_t iy = y0; iy < y1; ++iy)
          for (int64_t ix = x0; ix < x1; ++ix)
            acc += in[iy * w + ix];
        output[(p * oh + y) * ow + x] = acc / (float)((y1 - y0) * (x1 - x0));
      }
    }
  }
}

/* Reductions keep CUVIL_LANES partial results (sums, maxima) that the
 * compiler turns into vector registers, combined in a fixed order at the end:
 * the result depends only on the data, never on the thread count. */
#define CUVIL_LANES 16

/* The maximum of `count` floats at stride 1. */
static float cuvil_max_f32(const float *x, int64_t count) {
  float lanes[CUVIL_LANES], best = -INFINITY;
  int64_t i, l, body = count / CUVIL_LANES * CUVIL_LANES;
  for (l = 0; l < CUVIL_LANES; ++l)
    lanes[l] = -INFINITY;
  for (i = 0; i < body; i += CUVIL_LANES)
    for (l = 0; l < CUVIL_LANES; ++l)
      lanes[l] = x[i + l] > lanes[l] ? x[i + l] : lanes[l];
  for (; i < count; ++i)
    best = x[i] > best ? x[i] : best;
  for (l = 0; l < CUVIL_LANES; ++l)
    best = lanes[l] > best ? lanes[l] : best;
  return best;
}

/* The sum of `count` floats at stride 1. */
static float cuvil_sum_f32(const float *x, int64_t count) {
  float lanes[CUVIL_LANES], sum = 0.0f;
  int64_t i, l, body = count / CUVIL_LANES * CUVIL_LANES;
  for (l = 0; l < CUVIL_LANES; ++l)
    lanes[l] = 0.0f;
  for (i = 0; i < body; i += CUVIL_LANES)
    for (l = 0; l < CUVIL_LANES; ++l)
      lanes[l] += x[i + l];
  for (l = 0; l < CUVIL_LANES; ++l)
    sum += lanes[l];
  for (; i < count; ++i)
    sum += x[i];
  return sum;
}

void cuvil_softmax_f32(int log, int64_t outer, int64_t axis, int64_t inner,
                       const float *input, float *output) {
  int64_t o, a, i0, i;
  if (inner == 1) {
    /* The common case (the last axis): contiguous rows. */
    for (o = 0; o < outer; ++o) {
      const float *in = input + o * axis;
      float *out = output + o * axis;
      float max = cuvil_max_f32(in, axis), sum;
      for (a = 0; a < axis; ++a)
        out[a] = cuvil_expf(in[a] - max);
      sum = cuvil_sum_f32(out, axis);
      if (log) {
        float shift = max + logf(sum);
        for (a = 0; a < axis; ++a)
          out[a] = in[a] - shift;
      } else {
        float inv = 1.0f / sum;
        for (a = 0; a < axis; ++a)
          out[a] *= inv;
      }
    }
    return;
  }
  /* Otherwise CUVIL_LANES positions of the inner dimensions at a time, each
   * reduced over the axis in order. */
  for (o = 0; o < outer; ++o)
    for (i0 = 0; i0 < inner; i0 += CUVIL_LANES) {
      int64_t width = inner - i0 < CUVIL_LANES ? inner - i0 : CUVIL_LANES;
      const float *in = input + o * axis * inner + i0;
      float *out = output + o * axis * inner + i0;
      float max[CUVIL_LANES], sum[CUVIL_LANES];
      for (i = 0; i < width; ++i) {
        max[i] = -INFINITY;
        sum[i] = 0.0f;
      }
      for (a = 0; a < axis; ++a)
        for (i = 0; i < width; ++i)
          max[i] = in[a * inner + i] > max[i] ? in[a * inner + i] : max[i];
      for (a = 0; a < axis; ++a)
        for (i = 0; i < width; ++i) {
          float e = cuvil_expf(in[a * inner + i] - max[i]);
          sum[i] += e;
          out[a * inner + i] = e;
        }
      for (i = 0; i < width; ++i)
        sum[i] = log ? max[i] + logf(sum[i]) : 1.0f / sum[i];
      for (a = 0; a < axis; ++a)
        for (i = 0; i < width; ++i)
          out[a * inner + i] =
              log ? in[a * inner + i] - sum[i] : out[a * inner + i] * sum[i];
    }
}

void cuvil_layer_norm_f32(int64_t outer, int64_t inner, const float *input,
                          const float *scale, const float *bias, double epsilon,
                          float *output) {
  for (int64_t o = 0; o < outer; ++o) {
    const float *in = input + o * inner;
    float *out = output + o * inner;
    /* Mean and variance in double, over 8 lanes. */
    double lanes[8], mean = 0.0, var = 0.0;
    int64_t i, l, body = inner / 8 * 8;
    for (l = 0; l < 8; ++l)
      lanes[l] = 0.0;
    for (i = 0; i < body; i += 8)
      for (l = 0; l < 8; ++l)
        lanes[l] += in[i + l];
    for (l = 0; l < 8; ++l)
      mean += lanes[l];
    for (; i < inner; ++i)
      mean += in[i];
    mean /= (double)inner;
    for (l = 0; l < 8; ++l)
      lanes[l] = 0.0;
    for (i = 0; i < body; i += 8)
      for (l = 0; l < 8; ++l) {
        double d = in[i + l] - mean;
        lanes[l] += d * d;
      }
    for (l = 0; l < 8; ++l)
      var += lanes[l];
    for (; i < inner; ++i) {
      double d = in[i] - mean;
      var += d * d;
    }
    var /= (double)inner;
    float inv = (float)(1.0 / sqrt(var + epsilon));
    float m = (float)mean;
    for (i = 0; i < inner; ++i) {
      float v = (in[i] - m) * inv;
      if (scale)
        v *= scale[i];
      if (bias)
        v += bias[i];
      out[i] = v;
    }
  }
}

void cuvil_batch_norm_f32(int64_t n, int64_t c, int64_t spatial,
                          const float *input, const float *scale,
                          const float *bias, const float *mean,
                          const float *variance, double epsilon, float *output) {
  for (int64_t ch = 0; ch < c; ++ch) {
    float s = (float)(scale[ch] / sqrt((double)variance[ch] + epsilon));
    float t = bias[ch] - mean[ch] * s;
    for (int64_t b = 0; b < n; ++b) {
      const float *in = input + (b * c + ch) * spatial;
      float *out = output + (b * c + ch) * spatial;
      for (int64_t i = 0; i < spatial; ++i)
        out[i] = in[i] * s + t;
    }
  }
}

void cuvil_reduce_f32(int kind, int64_t outer, int64_t reduced, int64_t inner,
                      const float *input, float *output) {
  for (int64_t o = 0; o < outer; ++o) {
    float *out = output + o * inner;
    const float *in = input + o * reduced * inner;
    if (inner == 1 && (kind == 0 || kind == 1 || kind == 2)) {
      /* Reducing the last axis: a contiguous row, over vector lanes. */
      out[0] = kind == 2 ? cuvil_max_f32(in, reduced) : cuvil_sum_f32(in, reduced);
      if (kind == 1)
        out[0] /= (float)reduced;
      continue;
    }
    for (int64_t i = 0; i < inner; ++i)
      out[i] = kind == 2 ? -INFINITY : kind == 3 ? INFINITY : 0.0f;
    for (int64_t r = 0; r < reduced; ++r) {
      const float *row = in + r * inner;
      for (int64_t i = 0; i < inner; ++i) {
        float v = row[i];
        if (kind == 2)
          out[i] = v > out[i] ? v : out[i];
        else if (kind == 3)
          out[i] = v < out[i] ? v : out[i];
        else
          out[i] += v;
      }
    }
    if (kind == 1)
      for (int64_t i = 0; i < inner; ++i)
        out[i] /= (float)reduced;
  }
}

int cuvil_gather(int64_t element_size, int64_t outer, int64_t axis,
                 int64_t inner, const void *data, const void *indices,
                 int indices_are_i64, int64_t count, void *output) {
  const char *src = (const char *)data;
  char *dst = (char *)output;
  int64_t row = inner * element_size;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < count; ++i) {
      int64_t index = indices_are_i64 ? ((const int64_t *)indices)[i]
                                      : ((const int32_t *)indices)[i];
      if (index < 0)
        index += axis;
      if (index < 0 || index >= axis)
        return 1;
      memcpy(dst + (o * count + i) * row, src + (o * axis + index) * row,
             (size_t)row);
    }
  }
  return 0;
}
