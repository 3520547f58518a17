// GFLOP/s of the x86 runtime's matrix product and convolution kernels, as
// compiled models call them (one thread, the best sgemm4 variant the CPU
// has), for scripts/bench: an SGEMM size sweep and the convolution layers
// issue #8 names; GOP/s of the int8 products (qgemm), every variant the CPU
// runs.
extern "C" {
#include "cuvil/targets/cpu/runtime/contract/contract.h"
#include "cuvil/targets/cpu/runtime/conv/conv.h"
#include "cuvil/targets/cpu/runtime/conv_blocked/conv_blocked.h"
#include "cuvil/targets/cpu/runtime/gemm/gemm.h"
#include "cuvil/targets/cpu/runtime/qgemm/qgemm.h"
#include "cuvil/targets/cpu/runtime/winograd/winograd.h"
}

#include "benchmark/benchmark.h"
#include "cuvil/targets/cpu/runtime/cpu_has.h"

#include <algorithm>
#include <vector>

namespace {

cuvil_sgemm4_fn chooseSgemm4() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f"))
    return cuvil_sgemm4_avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return cuvil_sgemm4_avx2;
  return cuvil_sgemm4_reference;
}

const cuvil_sgemm4_fn bestSgemm4 = chooseSgemm4();

cuvil_dwconv_fn chooseDwconv() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f"))
    return cuvil_dwconv_avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return cuvil_dwconv_avx2;
  return cuvil_dwconv_reference;
}

const cuvil_dwconv_fn bestDwconv = chooseDwconv();

cuvil_convb_fn chooseConvb(int64_t *block) {
  __builtin_cpu_init();
  *block = 16;
  if (__builtin_cpu_supports("avx512f"))
    return cuvil_convb_avx512;
  *block = 8;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return cuvil_convb_avx2;
  return cuvil_convb_reference;
}

} // namespace

extern "C" void cuvil_dwconv_dispatch(int64_t h, int64_t w, const float *input,
                                      int64_t kh, int64_t kw,
                                      const float *weight, float bias,
                                      int64_t stride_h, int64_t stride_w,
                                      int64_t pad_top, int64_t pad_left,
                                      int64_t dil_h, int64_t dil_w, int64_t oh,
                                      int64_t ow, float *output) {
  bestDwconv(h, w, input, kh, kw, weight, bias, stride_h, stride_w, pad_top,
             pad_left, dil_h, dil_w, oh, ow, output);
}

extern "C" void cuvil_sgemm4_dispatch(int64_t rows, int64_t n, int64_t k,
                                      const float *a, int64_t a_row,
                                      int64_t a_col, const float *b,
                                      int64_t b_row, float *const *c,
                                      int accumulate) {
  bestSgemm4(rows, n, k, a, a_row, a_col, b, b_row, c, accumulate);
}

namespace {

void sgemm(benchmark::State &state) {
  int64_t n = state.range(0);
  std::vector<float> a(n * n, 0.5f), b(n * n, 0.25f), c(n * n),
      scratch(cuvil_matmul_scratch_floats(n, n));
  for (auto _ : state) {
    cuvil_matmul_f32(nullptr, scratch.data(), 1, n, n, n, a.data(), 0, n, 1,
                     b.data(), 0, n, 1, c.data(), nullptr);
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(
      2.0 * n * n * n, benchmark::Counter::kIsIterationInvariantRate,
      benchmark::Counter::kIs1000);
}
BENCHMARK(sgemm)->Arg(64)->Arg(128)->Arg(256)->Arg(512)->Arg(1024)->Arg(2048);

/// An n x n x n int8 product through the packed driver (B packed once, as
/// for weights), with `kernel`.
void qgemm(benchmark::State &state, cuvil_qgemm4_fn kernel) {
  int64_t n = state.range(0);
  std::vector<uint8_t> a(n * n, 200), scratch(cuvil_qgemm_scratch_bytes(n, n));
  std::vector<int8_t> b(n * n, -3), packed(cuvil_qgemm_packed_bytes(n, n));
  std::vector<int32_t> sums(n), c(n * n);
  cuvil_qgemm_pack_b(n, n, b.data(), n, packed.data(), sums.data());
  for (auto _ : state) {
    cuvil_qgemm_s32(kernel, n, n, n, a.data(), n, 128, packed.data(),
                    sums.data(), c.data(), n, scratch.data());
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["GOP/s"] = benchmark::Counter(
      2.0 * n * n * n, benchmark::Counter::kIsIterationInvariantRate,
      benchmark::Counter::kIs1000);
}

/// qgemm/<variant>/<n> for each variant of qgemm.inc this CPU runs.
const bool qgemmRegistered = [] {
#define CUVIL_QGEMM4_VARIANT(name, target, features, weights)                  \
  if (cuvil::runtime_testing::cpuHas(features))                                \
    benchmark::RegisterBenchmark("qgemm/" #name, qgemm, cuvil_qgemm4_##name)  \
        ->Arg(256)                                                             \
        ->Arg(1024);
#include "cuvil/targets/cpu/runtime/qgemm/qgemm.inc"
#undef CUVIL_QGEMM4_VARIANT
  return true;
}();

/// One NCHW convolution (batch 1, "same" padding, stride 1) with the
/// scratch cuvil-cpu-select-kernels gives it.
void conv(benchmark::State &state) {
  int64_t c = state.range(0), oc = state.range(1), hw = state.range(2),
          k = state.range(3), groups = state.range(4);
  int64_t pad = k / 2, positions = hw * hw;
  bool product = groups == 1 && k > 1;
  std::vector<float> input(c * positions, 0.5f),
      weight(oc * (c / groups) * k * k, 0.01f), bias(oc, 0.1f),
      output(oc * positions),
      scratch(product ? cuvil_im2col_scratch_floats(c, k, k, hw, hw) : 0);
  for (auto _ : state) {
    cuvil_conv2d_f32(nullptr, product ? scratch.data() : nullptr, 1, c, hw, hw,
                     input.data(), oc, k, k, weight.data(), bias.data(), groups,
                     1, 1, pad, pad, 1, 1, hw, hw, output.data(), nullptr);
    benchmark::DoNotOptimize(output.data());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(
      2.0 * oc * (c / groups) * k * k * positions,
      benchmark::Counter::kIsIterationInvariantRate,
      benchmark::Counter::kIs1000);
}
// {C, OC, H=W, K, groups}
BENCHMARK(conv)
    ->ArgNames({"c", "oc", "hw", "k", "groups"})
    ->Args({64, 64, 56, 3, 1})
    ->Args({64, 256, 56, 1, 1})
    ->Args({512, 512, 7, 3, 1})
    ->Args({32, 32, 112, 3, 32});

/// A 3x3 convolution by Winograd F(4x4, 3x3) (what cuvil-lower-to-level2
/// picks for 3x3 stride-1 layers of 28x28 and more; the 14x14 and 7x7 rows
/// show why not below), on the blocked layout models run it on. GFLOP/s
/// counts the direct convolution's flops, so it compares with `conv` and
/// `conv_blocked`. Built here without -march, the tile transforms are
/// slower than in a model's .so (-march=<cpu>); the products are not.
void conv_winograd(benchmark::State &state) {
  int64_t c = state.range(0), oc = state.range(1), hw = state.range(2),
          positions = hw * hw, block = 16;
  chooseConvb(&block);
  std::vector<float> input(c * positions, 0.5f), weight(oc * c * 9, 0.01f), bias(oc, 0.1f),
      output(oc * positions), scratch(cuvil_winograd_scratch_floats(c, oc, hw, hw));
  for (auto _ : state) {
    cuvil_conv2d_winograd_f32(nullptr, scratch.data(), 1, c, hw, hw,
                              input.data(), block, oc, weight.data(),
                              bias.data(), 1, 1, hw, hw, output.data(), block,
                              nullptr);
    benchmark::DoNotOptimize(output.data());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * oc * c * 9 * positions,
                                                 benchmark::Counter::kIsIterationInvariantRate,
                                                 benchmark::Counter::kIs1000);
}
/// The channel-blocked direct convolution (cuvil-cpu-assign-layouts' NCHW16c or
/// NCHW8c, weights packed, "same" padding), batch 1, the tile variant the
/// CPU has.
void conv_blocked(benchmark::State &state) {
  int64_t c = state.range(0), oc = state.range(1), hw = state.range(2),
          k = state.range(3), stride = state.range(4), block = 16;
  static const cuvil_convb_fn tile = chooseConvb(&block);
  int64_t pad = k / 2, ohw = (hw + 2 * pad - k) / stride + 1;
  std::vector<float> input(c * hw * hw, 0.5f), weight(oc * c * k * k, 0.01f),
      bias(oc, 0.1f), output(oc * ohw * ohw),
      scratch(std::max<int64_t>(1, cuvil_conv2d_blocked_scratch_floats(
                                       c, hw, hw, k, k, stride, stride, pad,
                                       pad, 1, 1, ohw, ohw)));
  for (auto _ : state) {
    cuvil_conv2d_blocked_f32(tile, nullptr, scratch.data(), 1, c, hw, hw,
                             input.data(), block, oc, 1, k, k, weight.data(),
                             bias.data(), stride, stride, pad, pad, 1, 1, ohw,
                             ohw, output.data(), block, nullptr);
    benchmark::DoNotOptimize(output.data());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(
      2.0 * oc * c * k * k * ohw * ohw,
      benchmark::Counter::kIsIterationInvariantRate,
      benchmark::Counter::kIs1000);
}
// {C, OC, H=W, K, stride}: issue #8's layers and ResNet's deeper ones.
BENCHMARK(conv_blocked)
    ->ArgNames({"c", "oc", "hw", "k", "stride"})
    ->Args({64, 64, 56, 3, 1})
    ->Args({64, 256, 56, 1, 1})
    ->Args({256, 256, 14, 3, 1})
    ->Args({512, 512, 7, 3, 1})
    ->Args({128, 256, 28, 3, 2});

BENCHMARK(conv_winograd)
    ->ArgNames({"c", "oc", "hw"})
    ->Args({64, 64, 56})
    ->Args({128, 128, 28})
    ->Args({256, 256, 14})
    ->Args({512, 512, 7});

} // namespace
