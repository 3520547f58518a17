// The contract the x86 passes rely on, checked against the kernels: each
// kernel stays inside the scratch its sizing function gives (guard floats
// past the end are untouched) and computes what it computes with more;
// cuvil_matmul_f32 packs exactly when CUVIL_PACK_MIN_ROWS and
// CUVIL_PACK_MIN_BYTES say; and the sizes the lit tests of the passes show.
extern "C" {
#include "cuvil/targets/cpu/runtime/contract/contract.h"
#include "cuvil/targets/cpu/runtime/conv/conv.h"
#include "cuvil/targets/cpu/runtime/conv_blocked/conv_blocked.h"
#include "cuvil/targets/cpu/runtime/gemm/gemm.h"
#include "cuvil/targets/cpu/runtime/winograd/winograd.h"
}

#include "gtest/gtest.h"

#include <algorithm>
#include <functional>
#include <random>
#include <vector>

namespace {

constexpr int64_t kGuard = 64;
constexpr float kSentinel = -12345.0f;

std::vector<float> random(size_t count, std::mt19937 &rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(count);
  for (float &x : v)
    x = dist(rng);
  return v;
}

/// Runs `kernel(scratch)` with exactly `floats` of scratch and guards after
/// them, then with twice as much: the guards stay, the outputs agree.
void expectWithin(int64_t floats, const std::function<std::vector<float>(float *)> &kernel) {
  std::vector<float> exact(floats + kGuard, kSentinel), roomy(2 * floats + kGuard, kSentinel);
  std::vector<float> got = kernel(exact.data());
  for (int64_t i = floats; i < floats + kGuard; ++i)
    ASSERT_EQ(exact[i], kSentinel) << "wrote scratch float " << i << " of " << floats;
  EXPECT_EQ(got, kernel(roomy.data()));
}

TEST(ContractTest, SizesAreThePassesExamples) {
  EXPECT_EQ(CUVIL_STRIP, 32);
  EXPECT_EQ(cuvil_strip_columns(36), 64);
  EXPECT_EQ(cuvil_strip_columns(64), 64);
  EXPECT_EQ(cuvil_matmul_scratch_floats(40, 16), 16 * 64);
  EXPECT_EQ(cuvil_im2col_scratch_floats(8, 3, 3, 6, 6), 72 * 64);
  // 36 x (8 x 32 + 8 x 49 + 8 x 49) (select_kernels.mlir).
  EXPECT_EQ(cuvil_winograd_scratch_floats(8, 8, 28, 28), 37440);
  EXPECT_EQ(cuvil_conv_extent(7, 3, 2, 1), 15);
  // No padding and the extents inside the image: the input is read in place.
  EXPECT_EQ(cuvil_conv2d_blocked_scratch_floats(16, 9, 9, 3, 3, 1, 1, 0, 0, 1, 1, 7, 7), 0);
  EXPECT_EQ(cuvil_conv2d_blocked_scratch_floats(16, 9, 9, 3, 3, 1, 1, 1, 1, 1, 1, 9, 9),
            16 * 11 * 11);
}

TEST(ContractTest, MatmulPacksWhenTheContractSaysAndStaysInside) {
  std::mt19937 rng(1);
  const int64_t n = 70, k = 300; // 84000 bytes of B: more than CUVIL_PACK_MIN_BYTES
  ASSERT_GT(n * k * 4, CUVIL_PACK_MIN_BYTES);
  std::vector<float> b = random(k * n, rng);
  for (int64_t m : {int64_t{CUVIL_PACK_MIN_ROWS} - 1, int64_t{CUVIL_PACK_MIN_ROWS}, int64_t{13}}) {
    std::vector<float> a = random(m * k, rng);
    int64_t floats = cuvil_matmul_scratch_floats(n, k);
    std::vector<float> scratch(floats, kSentinel);
    std::vector<float> c(m * n);
    cuvil_matmul_f32(nullptr, scratch.data(), 1, m, n, k, a.data(), 0, k, 1, b.data(), 0, n, 1,
                     c.data(), nullptr);
    bool packed = std::any_of(scratch.begin(), scratch.end(), [](float v) { return v != kSentinel; });
    EXPECT_EQ(packed, m >= CUVIL_PACK_MIN_ROWS) << "m=" << m;
    expectWithin(floats, [&](float *s) {
      std::vector<float> out(m * n);
      cuvil_matmul_f32(nullptr, s, 1, m, n, k, a.data(), 0, k, 1, b.data(), 0, n, 1, out.data(),
                       nullptr);
      return out;
    });
  }
  // A small B (inside an L1) is never packed.
  std::vector<float> a = random(16 * 8, rng), small = random(8 * 40, rng), c(16 * 40);
  std::vector<float> scratch(cuvil_matmul_scratch_floats(40, 8), kSentinel);
  cuvil_matmul_f32(nullptr, scratch.data(), 1, 16, 40, 8, a.data(), 0, 8, 1, small.data(), 0, 40,
                   1, c.data(), nullptr);
  EXPECT_TRUE(std::all_of(scratch.begin(), scratch.end(), [](float v) { return v == kSentinel; }));
}

TEST(ContractTest, ConvolutionsStayInsideTheirScratch) {
  std::mt19937 rng(2);
  const int64_t c = 20, oc = 40, h = 13, w = 17;
  std::vector<float> x = random(c * h * w, rng), wt = random(oc * c * 9, rng);
  std::vector<float> bias = random(oc, rng);
  // im2col, 3x3 "same": positions 221, not a whole number of strips.
  expectWithin(cuvil_im2col_scratch_floats(c, 3, 3, h, w), [&](float *s) {
    std::vector<float> out(oc * h * w);
    cuvil_conv2d_f32(nullptr, s, 1, c, h, w, x.data(), oc, 3, 3, wt.data(), bias.data(), 1, 1, 1,
                     1, 1, 1, 1, h, w, out.data(), nullptr);
    return out;
  });
  // Winograd: partial tiles both ways, OC ending inside a strip.
  expectWithin(cuvil_winograd_scratch_floats(c, oc, h, w), [&](float *s) {
    std::vector<float> out(oc * h * w);
    cuvil_conv2d_winograd_f32(nullptr, s, 1, c, h, w, x.data(), 1, oc, wt.data(), bias.data(), 1,
                              1, h, w, out.data(), 1, nullptr);
    return out;
  });
  // The blocked direct convolution's padded image (plain input, 8-channel
  // output blocks; weights in any order will do here).
  expectWithin(
      cuvil_conv2d_blocked_scratch_floats(c, h, w, 3, 3, 2, 2, 1, 1, 1, 1, 7, 9), [&](float *s) {
        std::vector<float> out(oc * 7 * 9);
        cuvil_conv2d_blocked_f32(cuvil_convb_reference, nullptr, s, 1, c, h, w, x.data(), 1, oc,
                                 1, 3, 3, wt.data(), bias.data(), 2, 2, 1, 1, 1, 1, 7, 9,
                                 out.data(), 8, nullptr);
        return out;
      });
}

} // namespace
