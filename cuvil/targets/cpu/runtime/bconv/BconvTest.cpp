// The bfloat16 blocked convolution: every tile variant this CPU runs
// (bconvb.inc), bit for bit against the sum written out here in float32 in
// bconv.h's order from the NCHW / OIHW tensors (plain and blocked inputs,
// float32 inputs rounded by the kernel and bfloat16 ones, strides,
// paddings, dilations, odd block counts, bias, residual, relu and clip,
// batches, any thread count), and within float32 rounding of a
// double-precision convolution of the same bfloat16 values.
extern "C" {
#include "cuvil/targets/cpu/runtime/bconv/bconv.h"
}

#include "cuvil/targets/cpu/runtime/cpu_has.h"
#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

using cuvil::runtime_testing::cpuHas;

struct Variant {
  const char *name;
  cuvil_bconvb_fn fn;
  std::string features;
};

std::vector<Variant> variants() {
  return {
#define CUVIL_BCONVB_VARIANT(name, target, features)                           \
  {#name, cuvil_bconvb_##name, features},
#include "cuvil/targets/cpu/runtime/bconv/bconvb.inc"
#undef CUVIL_BCONVB_VARIANT
  };
}

uint32_t bitsOf(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

float fromBits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

/// float32 to bfloat16, to nearest even, written out: the bits below the
/// kept 16 compared with half of the last kept bit.
uint16_t toBf16(float f) {
  uint32_t b = bitsOf(f);
  if (std::isnan(f))
    return uint16_t((b >> 16) | 0x40);
  uint32_t kept = b >> 16, rest = b & 0xffff;
  if (rest > 0x8000 || (rest == 0x8000 && (kept & 1)))
    ++kept;
  if ((kept & 0x7f80) == 0) // a denormal reads as zero
    kept &= 0x8000;
  return uint16_t(kept);
}

float widen(uint16_t v) { return fromBits(uint32_t(v) << 16); }

TEST(BconvTest, RoundsToNearestEvenKeepsNaNsQuietAndFlushesDenormals) {
  const uint32_t cases[][2] = {
      {0x3f808000, 0x3f80}, // a tie to the even below
      {0x3f818000, 0x3f82}, // a tie to the even above
      {0x3f808001, 0x3f81}, {0xbf807fff, 0xbf80},
      {0x7f800000, 0x7f80}, {0xff800000, 0xff80}, // infinities
      {0x7f7fffff, 0x7f80}, // the largest float rounds to infinity
      {0x7fc00001, 0x7fc0}, {0x7f800001, 0x7fc0}, // NaNs, quiet
      {0x00400000, 0x0000}, {0x80400000, 0x8000}, // denormals
      {0x00800000, 0x0080}, // the smallest normal stays
  };
  for (const auto &c : cases)
    EXPECT_EQ(cuvil_bconv_round(c[0]), c[1]) << std::hex << c[0];
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> value(-100.0f, 100.0f);
  for (int i = 0; i < 10000; ++i) {
    float f = value(rng);
    EXPECT_EQ(cuvil_bconv_round(bitsOf(f)), toBf16(f)) << f;
  }
}

struct Case {
  int64_t n, c, oc, h, w, k, stride, pad, dil, inBlock, block;
  bool bias, residual, bf16Input;
  int activation;
  int64_t outBlock; // 0: block
};

struct Tensors {
  std::vector<float> x;          // NCHW, float32
  std::vector<uint16_t> xb, wb;  // x and OIHW weights as bfloat16
  std::vector<float> bias, res;  // res NCHW
};

Tensors randomTensors(const Case &k, int64_t oh, int64_t ow, std::mt19937 &rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  Tensors t;
  auto fill = [&](size_t count) {
    std::vector<float> v(count);
    for (float &f : v)
      f = dist(rng);
    return v;
  };
  t.x = fill(k.n * k.c * k.h * k.w);
  for (float f : t.x)
    t.xb.push_back(toBf16(f));
  for (float f : fill(k.oc * k.c * k.k * k.k))
    t.wb.push_back(toBf16(f));
  t.bias = fill(k.oc);
  t.res = fill(k.n * k.oc * oh * ow);
  return t;
}

/// NCHW to NCHW<B>c (B = 1: as it is), channels past C left out.
template <typename T>
std::vector<T> toBlocked(const std::vector<T> &src, int64_t n, int64_t c, int64_t spatial,
                         int64_t block) {
  std::vector<T> dst(src.size());
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t s = 0; s < spatial; ++s)
        dst[((i * (c / block) + ch / block) * spatial + s) * block + ch % block] =
            src[(i * c + ch) * spatial + s];
  return dst;
}

/// NCHW<B>c back to NCHW.
std::vector<float> fromBlocked(const std::vector<float> &src, int64_t n, int64_t c,
                               int64_t spatial, int64_t block) {
  std::vector<float> dst(src.size());
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t s = 0; s < spatial; ++s)
        dst[(i * c + ch) * spatial + s] =
            src[((i * (c / block) + ch / block) * spatial + s) * block + ch % block];
  return dst;
}

/// bconv.h's order from the logical tensors: input blocks of ib channels,
/// ky, kx, channel pairs, the odd product then the even one.
std::vector<float> ordered(const Case &k, const Tensors &t, int64_t oh, int64_t ow) {
  int64_t ib = cuvil_bconvb_input_block(k.inBlock), blocks = (k.c + ib - 1) / ib;
  std::vector<float> out(k.n * k.oc * oh * ow);
  auto input = [&](int64_t img, int64_t ch, int64_t iy, int64_t ix) {
    if (ch >= k.c || iy < 0 || iy >= k.h || ix < 0 || ix >= k.w)
      return 0.0f;
    return widen(t.xb[((img * k.c + ch) * k.h + iy) * k.w + ix]);
  };
  auto weight = [&](int64_t o, int64_t ch, int64_t ky, int64_t kx) {
    return ch >= k.c ? 0.0f : widen(t.wb[((o * k.c + ch) * k.k + ky) * k.k + kx]);
  };
  for (int64_t img = 0; img < k.n; ++img)
    for (int64_t o = 0; o < k.oc; ++o)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t x = 0; x < ow; ++x) {
          float sum = 0.0f;
          for (int64_t cb = 0; cb < blocks; ++cb)
            for (int64_t ky = 0; ky < k.k; ++ky)
              for (int64_t kx = 0; kx < k.k; ++kx) {
                int64_t iy = y * k.stride + ky * k.dil - k.pad;
                int64_t ix = x * k.stride + kx * k.dil - k.pad;
                for (int64_t ch = cb * ib; ch < (cb + 1) * ib; ch += 2) {
                  float odd = input(img, ch + 1, iy, ix) * weight(o, ch + 1, ky, kx);
                  sum = sum + odd;
                  float even = input(img, ch, iy, ix) * weight(o, ch, ky, kx);
                  sum = sum + even;
                }
              }
          int64_t at = ((img * k.oc + o) * oh + y) * ow + x;
          if (k.bias)
            sum = sum + t.bias[o];
          if (k.residual)
            sum = sum + t.res[at];
          if (k.activation == CUVIL_ACT_RELU)
            sum = sum > 0.0f ? sum : 0.0f;
          if (k.activation == CUVIL_ACT_CLIP)
            sum = std::min(std::max(sum, -0.5f), 0.75f);
          out[at] = sum;
        }
  return out;
}

/// The largest distance from a double-precision convolution of the same
/// bfloat16 values, before the epilogue (cases without one).
double distanceFromExact(const Case &k, const Tensors &t, int64_t oh, int64_t ow,
                         const std::vector<float> &got) {
  double worst = 0;
  for (int64_t img = 0; img < k.n; ++img)
    for (int64_t o = 0; o < k.oc; ++o)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t x = 0; x < ow; ++x) {
          double acc = k.bias ? t.bias[o] : 0.0;
          for (int64_t ch = 0; ch < k.c; ++ch)
            for (int64_t ky = 0; ky < k.k; ++ky)
              for (int64_t kx = 0; kx < k.k; ++kx) {
                int64_t iy = y * k.stride + ky * k.dil - k.pad;
                int64_t ix = x * k.stride + kx * k.dil - k.pad;
                if (iy >= 0 && iy < k.h && ix >= 0 && ix < k.w)
                  acc += double(widen(t.xb[((img * k.c + ch) * k.h + iy) * k.w + ix])) *
                         widen(t.wb[((o * k.c + ch) * k.k + ky) * k.k + kx]);
              }
          int64_t at = ((img * k.oc + o) * oh + y) * ow + x;
          worst = std::max(worst, std::fabs(acc - got[at]));
        }
  return worst;
}

TEST(BconvTest, EveryVariantSumsInTheSpecifiedOrder) {
  const Case cases[] = {
      // The ResNet stem: plain 3-channel input (pairs, one zero channel).
      {1, 3, 32, 23, 23, 7, 2, 3, 1, 1, 16, true, false, false, CUVIL_ACT_RELU, 0},
      {2, 32, 48, 9, 17, 3, 1, 1, 1, 16, 16, true, true, false, CUVIL_ACT_RELU, 0},
      {1, 32, 64, 14, 14, 1, 2, 0, 1, 16, 16, true, false, true, CUVIL_ACT_NONE, 0},
      {1, 16, 32, 11, 7, 3, 2, 1, 2, 16, 16, false, true, false, CUVIL_ACT_CLIP, 0},
      {1, 16, 16, 30, 30, 3, 1, 1, 1, 16, 16, false, false, false, CUVIL_ACT_NONE, 0},
      // Blocks of 8 (AVX-512 runs them on the AVX2 tiles), odd block counts.
      {1, 24, 40, 10, 13, 3, 1, 1, 1, 8, 8, true, true, true, CUVIL_ACT_RELU, 0},
      {1, 5, 24, 6, 40, 3, 1, 0, 1, 1, 8, false, false, false, CUVIL_ACT_NONE, 0},
      // Plain output, on the reference.
      {1, 6, 5, 7, 9, 3, 1, 1, 1, 1, 1, true, true, false, CUVIL_ACT_RELU, 0},
      // Plain output computed in blocks through the scratch.
      {2, 16, 32, 6, 7, 3, 1, 1, 1, 16, 16, true, true, false, CUVIL_ACT_RELU, 1},
      {1, 8, 16, 5, 5, 3, 2, 1, 1, 8, 8, false, true, true, CUVIL_ACT_CLIP, 1},
      {1, 3, 16, 9, 9, 3, 1, 0, 1, 1, 16, true, false, false, CUVIL_ACT_NONE, 1},
  };
  std::mt19937 rng(11);
  for (const Case &k : cases) {
    int64_t outBlock = k.outBlock ? k.outBlock : k.block;
    int64_t oh = (k.h + 2 * k.pad - k.dil * (k.k - 1) - 1) / k.stride + 1;
    int64_t ow = (k.w + 2 * k.pad - k.dil * (k.k - 1) - 1) / k.stride + 1;
    Tensors t = randomTensors(k, oh, ow, rng);
    std::vector<uint16_t> packed(
        cuvil_bconvb_packed_elements(k.oc, k.c, k.k, k.k, k.inBlock, k.block));
    cuvil_bconvb_pack(k.oc, k.c, k.k, k.k, t.wb.data(), k.inBlock, k.block, packed.data());
    std::vector<float> xf = toBlocked(t.x, k.n, k.c, k.h * k.w, k.inBlock);
    std::vector<uint16_t> xb = toBlocked(t.xb, k.n, k.c, k.h * k.w, k.inBlock);
    std::vector<float> res = toBlocked(t.res, k.n, k.oc, oh * ow, outBlock);
    std::vector<float> expected =
        toBlocked(ordered(k, t, oh, ow), k.n, k.oc, oh * ow, outBlock);
    std::vector<uint8_t> scratch(cuvil_bconvb_scratch_bytes(
        k.c, k.inBlock, k.k, k.k, k.stride, k.stride, k.dil, k.dil, k.oc, oh, ow, k.block,
        outBlock));
    for (const Variant &v : variants()) {
      if (!cpuHas(v.features))
        continue;
      auto run = [&](int threads) {
        std::vector<float> out(k.n * k.oc * oh * ow, -7.0f);
        cuvil_epilogue e = {nullptr,      k.residual ? res.data() : nullptr,
                            k.activation, -0.5f,
                            0.75f,        nullptr,
                            nullptr,      0,
                            0.0f,         0.0f};
        cuvil_pool *pool = cuvil_pool_create(threads);
        cuvil_bconv2d_blocked(v.fn, pool, scratch.data(), k.n, k.c, k.h, k.w,
                              k.bf16Input ? static_cast<const void *>(xb.data()) : xf.data(),
                              k.bf16Input, k.inBlock, k.oc, k.k, k.k, packed.data(),
                              k.bias ? t.bias.data() : nullptr, k.stride, k.stride, k.pad, k.pad,
                              k.dil, k.dil, oh, ow, out.data(), k.block, outBlock,
                              k.activation || k.residual ? &e : nullptr);
        cuvil_pool_destroy(pool);
        return out;
      };
      std::string what = std::string(v.name) + " block " + std::to_string(k.block) +
                         " out_block " + std::to_string(outBlock) +
                         " c=" + std::to_string(k.c) + " k=" + std::to_string(k.k) +
                         " stride " + std::to_string(k.stride);
      std::vector<float> got = run(1);
      EXPECT_EQ(got, expected) << what;
      EXPECT_EQ(run(3), got) << what << ": results depend on the thread count";
      if (!k.residual && !k.activation) {
        EXPECT_LE(distanceFromExact(k, t, oh, ow, fromBlocked(got, k.n, k.oc, oh * ow, outBlock)),
                  2e-6 * double(k.c * k.k * k.k))
            << what;
      }
    }
  }
}

} // namespace
