// Google Benchmark from Debian: registers a benchmark, runs it briefly, and
// fails unless it ran.
#include "benchmark/benchmark.h"

#include <cstdio>

static int iterationsRun = 0;

static void BM_Sum(benchmark::State &state) {
  for (auto _ : state) {
    int sum = 0;
    for (int i = 0; i < 64; ++i)
      benchmark::DoNotOptimize(sum += i);
    ++iterationsRun;
  }
}
BENCHMARK(BM_Sum);

int main(int argc, char **argv) {
  char minTime[] = "--benchmark_min_time=0.01";
  char *args[] = {argv[0], minTime};
  int n = 2;
  benchmark::Initialize(&n, args);
  size_t ran = benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  if (ran != 1 || iterationsRun == 0) {
    std::fprintf(stderr, "expected 1 benchmark to run, got %zu\n", ran);
    return 1;
  }
  return 0;
}
