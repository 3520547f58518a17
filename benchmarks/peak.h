/* What the peak probes (fma_peak.c, int8_peak.c) share: each runs `fn`, a
 * loop of independent instruction chains, on 1..THREADS threads at once and
 * reports the rate. */
#ifndef CUVIL_BENCHMARKS_PEAK_H
#define CUVIL_BENCHMARKS_PEAK_H

#include <pthread.h>
#include <time.h>

static double peak_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* Giga-operations per second of `fn` on `threads` threads at once, each
 * doing `ops` operations. */
static double peak_measure(void *(*fn)(void *), int threads, double ops) {
  pthread_t ids[256];
  double start = peak_now(), seconds;
  int t;
  for (t = 0; t < threads; ++t)
    pthread_create(&ids[t], 0, fn, 0);
  for (t = 0; t < threads; ++t)
    pthread_join(ids[t], 0);
  seconds = peak_now() - start;
  return ops * threads / seconds / 1e9;
}

#endif /* CUVIL_BENCHMARKS_PEAK_H */
