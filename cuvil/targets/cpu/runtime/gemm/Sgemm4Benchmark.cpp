// GFLOP/s of each sgemm4 variant (listed once in sgemm4.inc) on 4 rows x N
// x K, for scripts/bench. Variants the CPU lacks are skipped.
extern "C" {
#include "cuvil/targets/cpu/runtime/gemm/gemm.h"
}

#include "benchmark/benchmark.h"
#include "cuvil/targets/cpu/runtime/cpu_has.h"

#include <string>
#include <vector>

namespace {

using cuvil::runtime_testing::cpuHas;

void run(benchmark::State &state, cuvil_sgemm4_fn fn, std::string features) {
  if (!cpuHas(features)) {
    state.SkipWithError("CPU lacks the variant's features");
    return;
  }
  int64_t n = state.range(0), k = state.range(1);
  std::vector<float> a(4 * k, 0.5f), b(k * n, 0.25f), c(4 * n);
  float *cp[4] = {c.data(), c.data() + n, c.data() + 2 * n, c.data() + 3 * n};
  for (auto _ : state) {
    fn(4, n, k, a.data(), k, 1, b.data(), n, cp, 0);
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(
      2.0 * 4 * n * k, benchmark::Counter::kIsIterationInvariantRate,
      benchmark::Counter::kIs1000);
}

#define CUVIL_SGEMM4_VARIANT(name, target, features)                           \
  BENCHMARK_CAPTURE(run, name, cuvil_sgemm4_##name, features)                  \
      ->Args({256, 256})                                                       \
      ->Args({1024, 512});
#include "cuvil/targets/cpu/runtime/gemm/sgemm4.inc"
#undef CUVIL_SGEMM4_VARIANT

} // namespace
