// Every qgemm4 variant this CPU can run (qgemm.inc) through the packed
// driver, bit for bit against a plain int64 product: shapes with row,
// column and k remainders, zero points, and the extremes (A = 255 against
// B = -128 and 127) that a saturating 16-bit multiply would get wrong.
extern "C" {
#include "cuvil/targets/cpu/runtime/qgemm/qgemm.h"
}

#include "cuvil/targets/cpu/runtime/cpu_has.h"
#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Variant {
  const char *name;
  cuvil_qgemm4_fn fn;
  std::string features;
  bool narrowOnly;
};

std::vector<Variant> variants() {
  return {
#define CUVIL_QGEMM4_VARIANT(name, target, features, weights)                  \
  {#name, cuvil_qgemm4_##name, features, std::string(#weights) == "narrow"},
#include "cuvil/targets/cpu/runtime/qgemm/qgemm.inc"
#undef CUVIL_QGEMM4_VARIANT
  };
}

using cuvil::runtime_testing::cpuHas;

/// The weights a variant takes: any int8, or narrow ones (|w| <= 64, the
/// quantizer's range for CPUs without VNNI) for the vpmaddubsw variant.
int weightMax(const Variant &v) { return v.narrowOnly ? 64 : 128; }

/// A random weight in the variant's range ([-128, 127] or [-64, 64]).
int8_t randomWeight(std::mt19937 &rng, const Variant &v) {
  int m = weightMax(v);
  return int8_t(int(rng() % (2 * m)) - m + (m == 64 ? int(rng() % 2) : 0));
}

/// (A - zero) B in int64, row-major.
std::vector<int64_t> reference(int64_t m, int64_t n, int64_t k,
                               const std::vector<uint8_t> &a, int32_t zero,
                               const std::vector<int8_t> &b) {
  std::vector<int64_t> c(m * n, 0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t l = 0; l < k; ++l)
      for (int64_t j = 0; j < n; ++j)
        c[i * n + j] += (int64_t(a[i * k + l]) - zero) * b[l * n + j];
  return c;
}

void expectExact(const Variant &v, int64_t m, int64_t n, int64_t k,
                 const std::vector<uint8_t> &a, int32_t zero,
                 const std::vector<int8_t> &b) {
  std::vector<int8_t> packed(cuvil_qgemm_packed_bytes(k, n));
  std::vector<int32_t> sums(n);
  std::vector<uint8_t> scratch(cuvil_qgemm_scratch_bytes(m, k));
  cuvil_qgemm_pack_b(k, n, b.data(), n, packed.data(), sums.data());
  // C with a wider row stride: nothing outside the m x n block is written.
  std::vector<int32_t> c(m * (n + 3), -7);
  cuvil_qgemm_s32(v.fn, m, n, k, a.data(), k, zero, packed.data(), sums.data(),
                  c.data(), n + 3, scratch.data());
  std::vector<int64_t> expected = reference(m, n, k, a, zero, b);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j)
      ASSERT_EQ(c[i * (n + 3) + j], expected[i * n + j])
          << v.name << " m=" << m << " n=" << n << " k=" << k << " at (" << i
          << ", " << j << ")";
    for (int64_t j = n; j < n + 3; ++j)
      ASSERT_EQ(c[i * (n + 3) + j], -7) << v.name << " wrote past column n";
  }
}

TEST(QgemmTest, VariantsAreExact) {
  std::mt19937 rng(11);
  int tested = 0;
  for (const Variant &v : variants()) {
    if (!cpuHas(v.features)) {
      std::printf("skipping %s: this CPU lacks %s\n", v.name,
                  v.features.c_str());
      continue;
    }
    ++tested;
    for (int64_t m : {1, 3, 4, 9})
      for (int64_t n : {1, 15, 16, 17, 40, 100})
        for (int64_t k : {1, 3, 4, 5, 64, 131}) {
          std::vector<uint8_t> a(m * k);
          std::vector<int8_t> b(k * n);
          for (uint8_t &x : a)
            x = uint8_t(rng() % 256);
          for (int8_t &x : b)
            x = randomWeight(rng, v);
          expectExact(v, m, n, k, a, int32_t(rng() % 256), b);
        }
  }
  EXPECT_GE(tested, 1);
}

TEST(QgemmTest, ExtremesDoNotSaturate) {
  // 255 * -128 and 255 * 127 in every product, k long enough that pairs of
  // them overflow int16.
  const int64_t m = 4, n = 16, k = 2048;
  std::vector<uint8_t> a(m * k, 255);
  for (int sign : {-1, 1}) {
    for (const Variant &v : variants())
      if (cpuHas(v.features)) {
        // -128 / 127, or the narrow extremes -64 / 64.
        int top = v.narrowOnly ? 64 : 127;
        int8_t fill = int8_t(sign < 0 ? -weightMax(v) : top);
        std::vector<int8_t> b(k * n, fill);
        expectExact(v, m, n, k, a, 0, b);
        expectExact(v, m, n, k, a, 255, b);
      }
  }
}

TEST(QgemmTest, DequantizedProductOfSignedActivations) {
  // int8 activations (read as uint8 + 128) and float column scales: the
  // int32 sum exact, then one float multiply, as the test computes it.
  std::mt19937 rng(5);
  const int64_t m = 6, n = 21, k = 37;
  std::vector<int8_t> a(m * k), b(k * n);
  std::vector<float> scale(n);
  for (int8_t &x : a)
    x = int8_t(int(rng() % 256) - 128);
  for (int8_t &x : b)
    x = int8_t(int(rng() % 256) - 128);
  for (float &x : scale)
    x = float(rng() % 1000 + 1) * 1e-5f;
  const int32_t zero = -9;
  std::vector<int8_t> packed(cuvil_qgemm_packed_bytes(k, n));
  std::vector<int32_t> sums(n);
  std::vector<uint8_t> scratch(cuvil_qgemm_scratch_bytes(m, k));
  cuvil_qgemm_pack_b(k, n, b.data(), n, packed.data(), sums.data());
  // (Full-range weights: the narrow variant's driver is the same.)
  for (const Variant &v : variants()) {
    if (!cpuHas(v.features) || v.narrowOnly)
      continue;
    std::vector<float> c(m * n);
    cuvil_qgemm_f32(nullptr, v.fn, m, n, k, a.data(), k, /*a_signed=*/1, zero,
                    packed.data(), sums.data(), scale.data(), c.data(), n,
                    scratch.data(), nullptr);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        int64_t acc = 0;
        for (int64_t l = 0; l < k; ++l)
          acc += (int64_t(a[i * k + l]) - zero) * b[l * n + j];
        ASSERT_EQ(c[i * n + j], float(acc) * scale[j])
            << v.name << " at (" << i << ", " << j << ")";
      }
  }
}

// A linear layer's epilogue (bias per column, residual, ReLU) applied by
// the kernel, and rows split over a pool of 3 threads into chunks (more
// 4-row blocks than CUVIL_QGEMM_CHUNKS): the same bits as one thread
// computing the product and then the epilogue's steps in order.
TEST(QgemmTest, EpilogueAndThreadsGiveTheSameBits) {
  std::mt19937 rng(9);
  const int64_t m = 4 * CUVIL_QGEMM_CHUNKS + 7, n = 19, k = 45;
  std::vector<uint8_t> a(m * k);
  std::vector<int8_t> b(k * n);
  std::vector<float> scale(n), bias(n), residual(m * n);
  for (uint8_t &x : a)
    x = uint8_t(rng() % 256);
  for (int8_t &x : b)
    x = int8_t(int(rng() % 255) - 127);
  for (float &x : scale)
    x = float(rng() % 1000 + 1) * 1e-4f;
  for (float &x : bias)
    x = float(int(rng() % 2001) - 1000) * 1e-2f;
  for (float &x : residual)
    x = float(int(rng() % 2001) - 1000) * 1e-2f;
  const int32_t zero = 131;
  std::vector<int8_t> packed(cuvil_qgemm_packed_bytes(k, n));
  std::vector<int32_t> sums(n);
  std::vector<uint8_t> scratch(cuvil_qgemm_scratch_bytes(m, k));
  cuvil_qgemm_pack_b(k, n, b.data(), n, packed.data(), sums.data());
  cuvil_epilogue epilogue = {nullptr,        residual.data(),
                             CUVIL_ACT_RELU, -1e30f,
                             1e30f,          bias.data(),
                             nullptr,        0,
                             0.0f,           0.0f};
  cuvil_pool *pool = cuvil_pool_create(3);
  for (const Variant &v : variants()) {
    if (!cpuHas(v.features) || v.narrowOnly)
      continue;
    std::vector<float> c(m * n);
    cuvil_qgemm_f32(pool, v.fn, m, n, k, a.data(), k, /*a_signed=*/0, zero,
                    packed.data(), sums.data(), scale.data(), c.data(), n,
                    scratch.data(), &epilogue);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        int64_t acc = 0;
        for (int64_t l = 0; l < k; ++l)
          acc += (int64_t(a[i * k + l]) - zero) * b[l * n + j];
        float y = float(acc) * scale[j];
        y = y + bias[j];
        y = y + residual[i * n + j];
        y = y > 0.0f ? y : 0.0f;
        ASSERT_EQ(c[i * n + j], y) << v.name << " at (" << i << ", " << j << ")";
      }
  }
  cuvil_pool_destroy(pool);
}

// A requantizing linear layer (a fused cuvil.quantize): each output's
// float32 steps as above, then round half to even, the zero point, and
// saturation to int8 or uint8, written out here in double precision
// (exact for these values); across threads, the same bytes.
TEST(QgemmTest, RequantizedOutputs) {
  std::mt19937 rng(10);
  const int64_t m = 4 * CUVIL_QGEMM_CHUNKS + 3, n = 21, k = 37;
  std::vector<uint8_t> a(m * k);
  std::vector<int8_t> b(k * n);
  std::vector<float> scale(n), bias(n);
  for (uint8_t &x : a)
    x = uint8_t(rng() % 256);
  for (int8_t &x : b)
    x = int8_t(int(rng() % 255) - 127);
  for (float &x : scale)
    x = float(rng() % 1000 + 1) * 1e-4f;
  for (float &x : bias)
    x = float(int(rng() % 2001) - 1000) * 1e-2f;
  const int32_t zero = 77;
  std::vector<int8_t> packed(cuvil_qgemm_packed_bytes(k, n));
  std::vector<int32_t> sums(n);
  std::vector<uint8_t> scratch(cuvil_qgemm_scratch_bytes(m, k));
  cuvil_qgemm_pack_b(k, n, b.data(), n, packed.data(), sums.data());
  cuvil_epilogue epilogue = {nullptr, nullptr,     CUVIL_ACT_CLIP, -6.0f,
                             6.0f,    bias.data(), nullptr,        0,
                             0.0f,    0.0f};
  cuvil_pool *pool = cuvil_pool_create(3);
  for (int isSigned : {0, 1}) {
    // A scale that saturates some outputs and leaves ties on others.
    const cuvil_qout qout = {isSigned, 0.03125f, isSigned ? -3.0f : 100.0f};
    for (const Variant &v : variants()) {
      if (!cpuHas(v.features) || v.narrowOnly)
        continue;
      auto run = [&](cuvil_pool *p) {
        std::vector<uint8_t> c(m * n);
        cuvil_qgemm_q8(p, v.fn, m, n, k, a.data(), k, /*a_signed=*/0, zero, packed.data(),
                       sums.data(), scale.data(), c.data(), n, scratch.data(), &qout,
                       &epilogue);
        return c;
      };
      std::vector<uint8_t> c = run(nullptr);
      int saturated = 0;
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          int64_t acc = 0;
          for (int64_t l = 0; l < k; ++l)
            acc += (int64_t(a[i * k + l]) - zero) * b[l * n + j];
          float y = float(acc) * scale[j];
          y = y + bias[j];
          y = std::min(std::max(y, -6.0f), 6.0f);
          double q = std::nearbyint(double(y) / 0.03125) + qout.zero;
          double lo = isSigned ? -128 : 0, hi = isSigned ? 127 : 255;
          saturated += q < lo || q > hi;
          q = std::min(std::max(q, lo), hi);
          uint8_t expected = isSigned ? uint8_t(int8_t(q)) : uint8_t(q);
          ASSERT_EQ(c[i * n + j], expected) << v.name << " at (" << i << ", " << j << ")";
        }
      EXPECT_GT(saturated, 0);
      EXPECT_EQ(run(pool), c) << v.name;
    }
  }
  cuvil_pool_destroy(pool);
}

TEST(QgemmTest, NarrowWeights) {
  // Pairs a vpmaddubsw multiplies: 255 * (positive sum) must stay <= 32767,
  // 255 * (negative sum) >= -32768.
  std::vector<int8_t> ok = {64, 64, -64, -64, 127, -128, -128, 127, 0, 127};
  EXPECT_TRUE(cuvil_int8_pairs_are_narrow(ok.data(), ok.size()));
  std::vector<int8_t> high = {64, 65};
  EXPECT_FALSE(cuvil_int8_pairs_are_narrow(high.data(), high.size()));
  std::vector<int8_t> low = {-65, -64};
  EXPECT_FALSE(cuvil_int8_pairs_are_narrow(low.data(), low.size()));
  std::vector<int8_t> odd = {0, 0, 127, 2}; // the second pair: 129 * 255 > 32767
  EXPECT_FALSE(cuvil_int8_pairs_are_narrow(odd.data(), odd.size()));
}

TEST(QgemmTest, ColumnSumsCoverTheZeroPoint) {
  const int64_t k = 5, n = 3;
  std::vector<int8_t> b = {1, -2, 3, 4, 5, -6, 7, 8, 9, -10, 11, 12, 13, 14, -15};
  std::vector<int8_t> packed(cuvil_qgemm_packed_bytes(k, n));
  std::vector<int32_t> sums(n);
  cuvil_qgemm_pack_b(k, n, b.data(), n, packed.data(), sums.data());
  EXPECT_EQ(sums, (std::vector<int32_t>{1 + 4 + 7 - 10 + 13, -2 + 5 + 8 + 11 + 14,
                                        3 - 6 + 9 + 12 - 15}));
  // One strip of 16 columns, two groups of 4 rows, zero padded.
  EXPECT_EQ(packed.size(), size_t(1 * 2 * 16 * 4));
  EXPECT_EQ(packed[(1 * 16 + 0) * 4 + 0], 13); // row 4, column 0
  EXPECT_EQ(packed[(1 * 16 + 0) * 4 + 1], 0);  // row 5: padding
  EXPECT_EQ(packed[(0 * 16 + 3) * 4 + 0], 0);  // column 3: padding
}

} // namespace
