/* The machine's int8 multiply-accumulate peak, measured like fma_peak.c:
 * independent chains of the instructions Cuvil's int8 kernels
 * (runtime/qgemm) use, on one thread and on every core at once. One
 * multiply-add counts as 2 ops. Built and run by benchmarks/bench.py with
 * clang; prints JSON.
 *
 *   int8_peak THREADS  ->  {"avx512vnni": {"1": GOPS, "THREADS": GOPS}, ...}
 *
 * avx512vnni: vpdpbusd zmm, 64 u8 x s8 products per instruction.
 * avxvnni:    vpdpbusd ymm (VEX), 32 products.
 * avx2:       vpmaddwd + vpaddd ymm on int16, 16 products (the exact
 *             widening path of cuvil_qgemm4_avx2), chained through the
 *             multiply so that neither can be hoisted.
 * avx2_narrow: vpmaddubsw + vpmaddwd (by ones) + vpaddd ymm, 32 products
 *             (cuvil_qconvb_avx2_narrow's sequence, for 7-bit weights).
 */
#include <cpuid.h>
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>

#include "peak.h"

#define ITERATIONS 50000000L
#define CHAINS 12

static volatile int sink;

__attribute__((target("avx512f,avx512bw,avx512vnni"))) static void *
vnni512(void *arg) {
  __m512i acc[CHAINS], a = _mm512_set1_epi8(3), b = _mm512_set1_epi8(-2);
  long i;
  int c;
  (void)arg;
  for (c = 0; c < CHAINS; ++c)
    acc[c] = _mm512_set1_epi32(c);
  for (i = 0; i < ITERATIONS; ++i)
    for (c = 0; c < CHAINS; ++c)
      acc[c] = _mm512_dpbusd_epi32(acc[c], a, b);
  for (c = 1; c < CHAINS; ++c)
    acc[0] = _mm512_add_epi32(acc[0], acc[c]);
  sink = _mm512_reduce_add_epi32(acc[0]);
  return 0;
}

__attribute__((target("avx2,avxvnni"))) static void *vnni256(void *arg) {
  __m256i acc[CHAINS], a = _mm256_set1_epi8(3), b = _mm256_set1_epi8(-2);
  long i;
  int c, out[8];
  (void)arg;
  for (c = 0; c < CHAINS; ++c)
    acc[c] = _mm256_set1_epi32(c);
  for (i = 0; i < ITERATIONS; ++i)
    for (c = 0; c < CHAINS; ++c)
      acc[c] = _mm256_dpbusd_avx_epi32(acc[c], a, b);
  for (c = 1; c < CHAINS; ++c)
    acc[0] = _mm256_add_epi32(acc[0], acc[c]);
  _mm256_storeu_si256((__m256i *)out, acc[0]);
  sink = out[0];
  return 0;
}

/* AVX-VNNI: cpuid leaf 7.1 EAX bit 4 (the OS's AVX state comes with avx2). */
static int has_avxvnni(void) {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __builtin_cpu_supports("avx2") &&
         __get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx) && (eax >> 4 & 1);
}

__attribute__((target("avx2"))) static void *avx2(void *arg) {
  __m256i acc[CHAINS], a = _mm256_set1_epi16(3), b = _mm256_set1_epi16(-2);
  long i;
  int c, out[8];
  (void)arg;
  for (c = 0; c < CHAINS; ++c)
    acc[c] = _mm256_set1_epi32(c);
  for (i = 0; i < ITERATIONS; ++i)
    for (c = 0; c < CHAINS; ++c)
      acc[c] = _mm256_add_epi32(_mm256_madd_epi16(acc[c], b), a);
  for (c = 1; c < CHAINS; ++c)
    acc[0] = _mm256_add_epi32(acc[0], acc[c]);
  _mm256_storeu_si256((__m256i *)out, acc[0]);
  sink = out[0];
  return 0;
}

/* The accumulators feed the next step's bytes, so nothing is hoisted. */
__attribute__((target("avx2"))) static void *avx2_narrow(void *arg) {
  __m256i acc[CHAINS], w = _mm256_set1_epi8(-2), ones = _mm256_set1_epi16(1);
  long i;
  int c, out[8];
  (void)arg;
  for (c = 0; c < CHAINS; ++c)
    acc[c] = _mm256_set1_epi32(c);
  for (i = 0; i < ITERATIONS; ++i)
    for (c = 0; c < CHAINS; ++c)
      acc[c] = _mm256_add_epi32(
          acc[c], _mm256_madd_epi16(_mm256_maddubs_epi16(acc[c], w), ones));
  for (c = 1; c < CHAINS; ++c)
    acc[0] = _mm256_add_epi32(acc[0], acc[c]);
  _mm256_storeu_si256((__m256i *)out, acc[0]);
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
  if (__builtin_cpu_supports("avx512vnni")) {
    printf("\"avx512vnni\": {\"1\": %.2f, \"%d\": %.2f}",
           measure(vnni512, 1, 64), threads, measure(vnni512, threads, 64));
    first = 0;
  }
  if (has_avxvnni()) {
    printf("%s\"avxvnni\": {\"1\": %.2f, \"%d\": %.2f}", first ? "" : ", ",
           measure(vnni256, 1, 32), threads, measure(vnni256, threads, 32));
    first = 0;
  }
  if (__builtin_cpu_supports("avx2"))
    printf("%s\"avx2\": {\"1\": %.2f, \"%d\": %.2f}, "
           "\"avx2_narrow\": {\"1\": %.2f, \"%d\": %.2f}",
           first ? "" : ", ", measure(avx2, 1, 16), threads,
           measure(avx2, threads, 16), measure(avx2_narrow, 1, 32), threads,
           measure(avx2_narrow, threads, 32));
  printf("}\n");
  return 0;
}
