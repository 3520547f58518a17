// Every bgemm8 variant this CPU can run (bgemm.inc) through the packed
// driver, bit for bit against the sum written out here in float32 in
// bgemm.h's order (fmaf of exact products: the odd element of each k pair,
// then the even one), on shapes with row, column and k remainders; and
// within float32 rounding of a double-precision product.
extern "C" {
#include "cuvil/targets/cpu/runtime/bgemm/bgemm.h"
}

#include "cuvil/targets/cpu/runtime/cpu_has.h"
#include "gtest/gtest.h"

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

struct Variant {
  const char *name;
  cuvil_bgemm8_fn fn;
  std::string features;
};

std::vector<Variant> variants() {
  return {
#define CUVIL_BGEMM8_VARIANT(name, target, features)                           \
  {#name, cuvil_bgemm8_##name, features},
#include "cuvil/targets/cpu/runtime/bgemm/bgemm.inc"
#undef CUVIL_BGEMM8_VARIANT
  };
}

using cuvil::runtime_testing::cpuHas;

float widen(uint16_t v) {
  uint32_t bits = uint32_t(v) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

/// Random bfloat16 values of both signs over a few binades (never
/// denormal), as their bits.
std::vector<uint16_t> randomBf16(std::mt19937 &rng, size_t count) {
  std::uniform_real_distribution<float> value(-4.0f, 4.0f);
  std::vector<uint16_t> out(count);
  for (uint16_t &v : out) {
    float f = value(rng);
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    v = uint16_t(bits >> 16);
  }
  return out;
}

/// The specified order, on the unpacked row-major operands.
std::vector<float> ordered(int64_t m, int64_t n, int64_t k,
                           const std::vector<uint16_t> &a,
                           const std::vector<uint16_t> &b) {
  std::vector<float> c(m * n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float sum = 0.0f;
      for (int64_t p = 0; 2 * p < k; ++p) {
        if (2 * p + 1 < k)
          sum = std::fmaf(widen(a[i * k + 2 * p + 1]),
                          widen(b[(2 * p + 1) * n + j]), sum);
        sum = std::fmaf(widen(a[i * k + 2 * p]), widen(b[2 * p * n + j]), sum);
      }
      c[i * n + j] = sum;
    }
  return c;
}

std::vector<float> run(const Variant &v, cuvil_pool *pool, int64_t m,
                       int64_t n, int64_t k, const std::vector<uint16_t> &a,
                       const std::vector<uint16_t> &b,
                       const cuvil_epilogue *epilogue = nullptr) {
  std::vector<uint16_t> packed(cuvil_bgemm_packed_bytes(k, n) / 2);
  std::vector<uint8_t> scratch(cuvil_bgemm_scratch_bytes(m, k));
  cuvil_bgemm_pack_b(k, n, b.data(), n, packed.data());
  std::vector<float> c(m * n, -7.0f);
  cuvil_bgemm_f32(pool, v.fn, m, n, k, a.data(), k, packed.data(), c.data(), n,
                  scratch.data(), epilogue);
  return c;
}

TEST(BgemmTest, VariantsSumInTheSpecifiedOrder) {
  std::mt19937 rng(5);
  int tested = 0;
  for (const Variant &v : variants()) {
    if (!cpuHas(v.features)) {
      std::printf("skipping %s: this CPU lacks %s\n", v.name,
                  v.features.c_str());
      continue;
    }
    ++tested;
    for (int64_t m : {1, 7, 8, 10, 19})
      for (int64_t n : {1, 16, 37, 70})
        for (int64_t k : {1, 2, 33, 130}) {
          std::vector<uint16_t> a = randomBf16(rng, m * k),
                                b = randomBf16(rng, k * n);
          std::vector<float> c = run(v, nullptr, m, n, k, a, b);
          std::vector<float> expected = ordered(m, n, k, a, b);
          for (int64_t i = 0; i < m * n; ++i) {
            ASSERT_EQ(c[i], expected[i])
                << v.name << " m=" << m << " n=" << n << " k=" << k
                << " at " << i;
            double exact = 0;
            for (int64_t l = 0; l < k; ++l)
              exact += double(widen(a[i / n * k + l])) *
                       widen(b[l * n + i % n]);
            ASSERT_NEAR(c[i], exact, 1e-5 * (1 + std::fabs(exact)) * k);
          }
        }
  }
  EXPECT_GE(tested, 1);
}

// Denormal bfloat16 inputs read as zeros of their sign in every variant
// (vdpbf16ps does; the packing makes the others agree).
TEST(BgemmTest, DenormalInputsAreZeros) {
  for (const Variant &v : variants()) {
    if (!cpuHas(v.features))
      continue;
    std::vector<uint16_t> a = {0x0001, 0x3f80}, b = {0x3f80, 0x0040};
    std::vector<float> c = run(v, nullptr, 1, 1, 2, a, b);
    EXPECT_EQ(c[0], 0.0f) << v.name;
  }
}

// A linear layer's epilogue (bias per column, then ReLU) applied by the
// kernel, and rows split over a pool of 3 threads: the same bits as one
// thread computing the product and then the epilogue.
TEST(BgemmTest, EpilogueAndThreadsGiveTheSameBits) {
  std::mt19937 rng(9);
  int64_t m = 150, n = 40, k = 70;
  std::vector<uint16_t> a = randomBf16(rng, m * k), b = randomBf16(rng, k * n);
  std::vector<float> bias(n);
  for (int64_t j = 0; j < n; ++j)
    bias[j] = 0.25f * float(j % 7) - 1.0f;
  cuvil_epilogue epilogue = {nullptr, nullptr,     CUVIL_ACT_RELU, 0.0f,
                             0.0f,    bias.data(), nullptr,        0,
                             0.0f,    0.0f};
  cuvil_pool *pool = cuvil_pool_create(3);
  for (const Variant &v : variants()) {
    if (!cpuHas(v.features))
      continue;
    std::vector<float> fused = run(v, pool, m, n, k, a, b, &epilogue);
    std::vector<float> plain = ordered(m, n, k, a, b);
    for (int64_t i = 0; i < m * n; ++i) {
      float y = plain[i] + bias[i % n];
      ASSERT_EQ(fused[i], y > 0.0f ? y : 0.0f) << v.name << " at " << i;
    }
  }
  cuvil_pool_destroy(pool);
}

} // namespace
