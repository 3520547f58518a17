// Every hgemm4 variant this CPU can run (hgemm.inc), through the driver and
// the convolution, bit for bit against a chain of fused float16
// multiply-adds written out here another way: std::fma in double, rounded
// to float16 by the compiler's _Float16 conversion (not cuvil_d2h), over
// shapes with row, column and k remainders, subnormal and overflowing
// values; cuvil_d2h itself against that conversion over every half's
// neighbourhood; and the same bits for any thread count.
extern "C" {
#include "cuvil/targets/cpu/runtime/hgemm/hgemm.h"
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
  cuvil_hgemm4_fn fn;
  std::string features;
};

std::vector<Variant> variants() {
  return {
#define CUVIL_HGEMM4_VARIANT(name, target, features)                           \
  {#name, cuvil_hgemm4_##name, features},
#include "cuvil/targets/cpu/runtime/hgemm/hgemm.inc"
#undef CUVIL_HGEMM4_VARIANT
  };
}

using cuvil::runtime_testing::cpuHas;

uint16_t toHalf(double v) {
  _Float16 h = static_cast<_Float16>(v);
  uint16_t bits;
  std::memcpy(&bits, &h, 2);
  return bits;
}

double fromHalf(uint16_t bits) {
  _Float16 h;
  std::memcpy(&h, &bits, 2);
  return static_cast<double>(h);
}

/// round16(a * b + acc), one rounding.
uint16_t fused(uint16_t a, uint16_t b, uint16_t acc) {
  return toHalf(std::fma(fromHalf(a), fromHalf(b), fromHalf(acc)));
}

/// Random halves of both signs over a few binades.
std::vector<uint16_t> randomHalves(std::mt19937 &rng, size_t count, double scale) {
  std::normal_distribution<double> value(0.0, scale);
  std::vector<uint16_t> out(count);
  for (uint16_t &v : out)
    v = toHalf(value(rng));
  return out;
}

/// C[m][n] as fused float16 steps over l in order, from row-major A, B.
std::vector<uint16_t> reference(int64_t m, int64_t n, int64_t k,
                                const std::vector<uint16_t> &a,
                                const std::vector<uint16_t> &b) {
  std::vector<uint16_t> c(m * n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      uint16_t acc = 0;
      for (int64_t l = 0; l < k; ++l)
        acc = fused(a[i * k + l], b[l * n + j], acc);
      c[i * n + j] = acc;
    }
  return c;
}

TEST(HgemmTest, RoundsDoublesToHalvesOnce) {
  // Every half, and points a quarter, a half (ties) and three quarters of
  // the way to the next one, both signs; past the largest half, overflow.
  for (uint32_t bits = 0; bits < 0x7c00; ++bits) {
    double lo = fromHalf(uint16_t(bits)), hi = fromHalf(uint16_t(bits + 1));
    for (double t : {0.0, 0.25, 0.5, 0.75}) {
      double v = lo + t * (hi - lo);
      ASSERT_EQ(cuvil_d2h(v), toHalf(v)) << "at " << v;
      ASSERT_EQ(cuvil_d2h(-v), toHalf(-v)) << "at " << -v;
    }
  }
  EXPECT_EQ(cuvil_d2h(65520.0), 0x7c00u);
  EXPECT_EQ(cuvil_d2h(1e300), 0x7c00u);
  EXPECT_EQ(cuvil_d2h(std::ldexp(1.0, -25)), 0u);  // a tie, to even: 0
  EXPECT_EQ(cuvil_d2h(std::ldexp(1.5, -25)), 1u);
  EXPECT_EQ(cuvil_d2h(NAN) & 0x7e00u, 0x7e00u);
}

TEST(HgemmTest, EveryVariantMatchesFusedHalfSteps) {
  std::mt19937 rng(7);
  struct Shape {
    int64_t m, n, k;
    double scale;
  };
  // Row, column and k remainders; large values that overflow some sums to
  // infinity; tiny ones that go subnormal.
  const Shape shapes[] = {{1, 32, 8, 1.0},  {4, 32, 64, 0.5}, {3, 45, 17, 1.0},
                          {7, 70, 33, 2.0}, {5, 9, 5, 200.0}, {2, 64, 40, 1e-3}};
  for (const Variant &v : variants()) {
    if (!cpuHas(v.features))
      continue;
    for (const Shape &s : shapes) {
      std::vector<uint16_t> a = randomHalves(rng, s.m * s.k, s.scale);
      std::vector<uint16_t> b = randomHalves(rng, s.k * s.n, s.scale);
      std::vector<uint16_t> packed(cuvil_hgemm_packed_halves(s.k, s.n), 0xffff);
      cuvil_hgemm_pack_b(s.k, s.n, b.data(), s.n, packed.data());
      std::vector<uint16_t> expected = reference(s.m, s.n, s.k, a, b);
      for (int threads : {1, 3}) {
        std::vector<uint16_t> c(s.m * s.n, 0xabcd);
        cuvil_pool *pool = cuvil_pool_create(threads);
        cuvil_hgemm_f16(pool, v.fn, s.m, s.n, s.k, a.data(), s.k, packed.data(),
                        c.data(), s.n);
        cuvil_pool_destroy(pool);
        ASSERT_EQ(c, expected) << v.name << " " << s.m << "x" << s.n << "x"
                               << s.k << " on " << threads << " threads";
      }
    }
  }
}

TEST(HgemmTest, ConvolutionSumsChannelsThenTapsInOrder) {
  std::mt19937 rng(11);
  struct Case {
    int64_t n, c, oc, h, w, k, stride, pad, dil;
  };
  const Case cases[] = {{1, 3, 8, 9, 9, 3, 1, 1, 1},
                        {2, 5, 6, 11, 7, 3, 2, 1, 1},
                        {1, 4, 33, 6, 6, 1, 1, 0, 1},
                        {1, 2, 4, 10, 10, 3, 1, 2, 2}};
  for (const Variant &v : variants()) {
    if (!cpuHas(v.features))
      continue;
    for (const Case &k : cases) {
      int64_t oh = (k.h + 2 * k.pad - k.dil * (k.k - 1) - 1) / k.stride + 1;
      int64_t ow = (k.w + 2 * k.pad - k.dil * (k.k - 1) - 1) / k.stride + 1;
      std::vector<uint16_t> x = randomHalves(rng, k.n * k.c * k.h * k.w, 1.0);
      std::vector<uint16_t> wt = randomHalves(rng, k.oc * k.c * k.k * k.k, 0.3);
      std::vector<uint16_t> expected(k.n * k.oc * oh * ow);
      for (int64_t img = 0; img < k.n; ++img)
        for (int64_t o = 0; o < k.oc; ++o)
          for (int64_t y = 0; y < oh; ++y)
            for (int64_t xx = 0; xx < ow; ++xx) {
              uint16_t acc = 0;
              for (int64_t ci = 0; ci < k.c; ++ci)
                for (int64_t ky = 0; ky < k.k; ++ky)
                  for (int64_t kx = 0; kx < k.k; ++kx) {
                    int64_t iy = y * k.stride - k.pad + ky * k.dil;
                    int64_t ix = xx * k.stride - k.pad + kx * k.dil;
                    uint16_t in = iy >= 0 && iy < k.h && ix >= 0 && ix < k.w
                                      ? x[((img * k.c + ci) * k.h + iy) * k.w + ix]
                                      : 0;
                    acc = fused(wt[((o * k.c + ci) * k.k + ky) * k.k + kx], in, acc);
                  }
              expected[((img * k.oc + o) * oh + y) * ow + xx] = acc;
            }
      std::vector<uint16_t> scratch(cuvil_hconv_scratch_halves(k.c, k.k, k.k, oh, ow));
      for (int threads : {1, 2}) {
        std::vector<uint16_t> out(expected.size(), 0xabcd);
        cuvil_pool *pool = cuvil_pool_create(threads);
        cuvil_conv2d_f16(pool, v.fn, scratch.data(), k.n, k.c, k.h, k.w, x.data(),
                         k.oc, k.k, k.k, wt.data(), k.stride, k.stride, k.pad, k.pad,
                         k.dil, k.dil, oh, ow, out.data());
        cuvil_pool_destroy(pool);
        ASSERT_EQ(out, expected) << v.name << " c=" << k.c << " oc=" << k.oc
                                 << " k=" << k.k << " stride " << k.stride;
      }
    }
  }
}

} // namespace
