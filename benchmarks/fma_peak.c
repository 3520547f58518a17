/* The machine's fp32 FMA peak, measured: independent FMA chains (enough to
 * cover the latency of every FMA pipe) in AVX-512 and AVX2 registers, on one
 * thread and on every core at once. Built and run by benchmarks/bench.py
 * with clang; prints JSON.
 *
 *   fma_peak THREADS  ->  {"avx512": {"1": GFLOPS, "THREADS": GFLOPS}, ...}
 */
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>

#include "peak.h"

#define ITERATIONS 100000000L
#define CHAINS 12

static volatile float sink;

__attribute__((target("avx512f"))) static void *avx512(void *arg) {
  __m512 acc[CHAINS], m = _mm512_set1_ps(0.999999f), a = _mm512_set1_ps(1e-7f);
  long i;
  int c;
  (void)arg;
  for (c = 0; c < CHAINS; ++c)
    acc[c] = _mm512_set1_ps((float)c);
  for (i = 0; i < ITERATIONS; ++i)
    for (c = 0; c < CHAINS; ++c)
      acc[c] = _mm512_fmadd_ps(acc[c], m, a);
  for (c = 1; c < CHAINS; ++c)
    acc[0] = _mm512_add_ps(acc[0], acc[c]);
  sink = _mm512_reduce_add_ps(acc[0]);
  return 0;
}

__attribute__((target("avx2,fma"))) static void *avx2(void *arg) {
  __m256 acc[CHAINS], m = _mm256_set1_ps(0.999999f), a = _mm256_set1_ps(1e-7f);
  long i;
  int c;
  float out[8];
  (void)arg;
  for (c = 0; c < CHAINS; ++c)
    acc[c] = _mm256_set1_ps((float)c);
  for (i = 0; i < ITERATIONS; ++i)
    for (c = 0; c < CHAINS; ++c)
      acc[c] = _mm256_fmadd_ps(acc[c], m, a);
  for (c = 1; c < CHAINS; ++c)
    acc[0] = _mm256_add_ps(acc[0], acc[c]);
  _mm256_storeu_ps(out, acc[0]);
  sink = out[0];
  return 0;
}

/* 2 operations (a multiply and an add) per lane of each chain step. */
static double measure(void *(*fn)(void *), int threads, int lanes) {
  return peak_measure(fn, threads, 2.0 * lanes * CHAINS * (double)ITERATIONS);
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 1, first = 1;
  if (threads < 1 || threads > 256)
    threads = 1;
  __builtin_cpu_init();
  printf("{");
  if (__builtin_cpu_supports("avx512f")) {
    printf("\"avx512\": {\"1\": %.2f, \"%d\": %.2f}", measure(avx512, 1, 16),
           threads, measure(avx512, threads, 16));
    first = 0;
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    printf("%s\"avx2\": {\"1\": %.2f, \"%d\": %.2f}", first ? "" : ", ",
           measure(avx2, 1, 8), threads, measure(avx2, threads, 8));
  printf("}\n");
  return 0;
}
