// The channel-blocked (NCHW<block>c) convolutions: the direct one in each
// tile variant the CPU has, against a double-precision NCHW convolution
// (input blocked or plain, strides, paddings, dilations, rows wide enough to
// read the input in place, rows narrow enough for AVX2's three-block units
// and AVX-512's two-row tiles,
// odd and even block counts, groups, bias and the
// residual and activation epilogues, batches, and the same bits for any thread
// count), and the depthwise one likewise.
extern "C" {
#include "cuvil/targets/cpu/runtime/contract/contract.h"
#include "cuvil/targets/cpu/runtime/conv_blocked/conv_blocked.h"
#include "cuvil/targets/cpu/runtime/layout/layout.h"
}

#include "cuvil/targets/cpu/runtime/cpu_has.h"
#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <tuple>
#include <vector>

namespace {

std::vector<float> random(size_t count, std::mt19937 &rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(count);
  for (float &x : v)
    x = dist(rng);
  return v;
}

std::vector<float> reorder(bool toBlocked, int64_t n, int64_t c, int64_t spatial, int64_t block,
                           const std::vector<float> &src) {
  int64_t channels = toBlocked ? (c + block - 1) / block * block : c;
  std::vector<float> dst(n * channels * spatial, -3.0f);
  cuvil_reorder_f32(toBlocked, n, c, spatial, block, src.data(), dst.data());
  return dst;
}

/// The epilogue in double precision: residual, then the activation; lo
/// and hi are -0.5 and 0.75 in every case here (clip's bounds,
/// hardsigmoid's alpha and beta).
double finish(double acc, float residual, int activation) {
  const double lo = -0.5, hi = 0.75;
  acc += residual;
  switch (activation) {
  case CUVIL_ACT_RELU:
    return std::max(acc, 0.0);
  case CUVIL_ACT_CLIP:
    return std::min(std::max(acc, lo), hi);
  case CUVIL_ACT_HARDSWISH:
    return acc * std::min(std::max(acc + 3.0, 0.0), 6.0) / 6.0;
  case CUVIL_ACT_HARDSIGMOID:
    return std::min(std::max(lo * acc + hi, 0.0), 1.0);
  case CUVIL_ACT_SIGMOID:
    return 1.0 / (1.0 + std::exp(-acc));
  case CUVIL_ACT_SILU:
    return acc / (1.0 + std::exp(-acc));
  default:
    return acc;
  }
}

struct Variant {
  const char *name;
  cuvil_convb_fn fn;
  int64_t block;
};

std::vector<Variant> variants() {
  using cuvil::runtime_testing::cpuHas;
  std::vector<Variant> v = {{"reference", cuvil_convb_reference, 16},
                            {"reference", cuvil_convb_reference, 8},
                            {"reference", cuvil_convb_reference, 4}};
#if defined(__x86_64__)
  if (cpuHas("avx2 fma"))
    v.push_back({"avx2", cuvil_convb_avx2, 8});
  if (cpuHas("avx512f")) {
    v.push_back({"avx512", cuvil_convb_avx512, 16});
    v.push_back({"avx512", cuvil_convb_avx512, 8}); // two blocks per register
  }
#elif defined(__aarch64__)
  if (cpuHas("neon"))
    v.push_back({"neon", cuvil_convb_neon, 4});
#endif
  return v;
}

struct Case {
  int64_t n, c, oc, h, w, k, stride, pad, dil;
  bool blockedInput, bias;
  int activation;
  bool residual;
  int64_t groups = 1;
};

TEST(ConvBlockedTest, MatchesDirectConvolution) {
  const Case cases[] = {
      // The ResNet stem: plain 3-channel input, 7x7 stride 2.
      {1, 3, 32, 23, 23, 7, 2, 3, 1, false, true, CUVIL_ACT_RELU, false},
      {2, 32, 48, 9, 17, 3, 1, 1, 1, true, true, CUVIL_ACT_RELU, true},
      {1, 16, 16, 30, 30, 3, 1, 1, 1, true, false, CUVIL_ACT_NONE, false},
      {1, 32, 64, 14, 14, 1, 2, 0, 1, true, true, CUVIL_ACT_NONE, false},
      {1, 16, 32, 11, 7, 3, 2, 1, 2, true, true, CUVIL_ACT_CLIP, true},
      {1, 5, 16, 6, 40, 3, 1, 0, 1, false, false, CUVIL_ACT_NONE, true},
      // Grouped (ResNeXt's 8 channels per group, RegNet's wider ones, a
      // pointwise one and one on plain input), each block reading its own
      // group's input blocks.
      {1, 32, 32, 9, 9, 3, 1, 1, 1, true, true, CUVIL_ACT_RELU, true, 4},
      {2, 64, 64, 7, 11, 3, 2, 1, 1, true, true, CUVIL_ACT_NONE, false, 2},
      {1, 48, 96, 8, 8, 3, 1, 1, 1, false, true, CUVIL_ACT_CLIP, false, 3},
      {1, 64, 32, 6, 5, 1, 1, 0, 1, true, false, CUVIL_ACT_NONE, true, 2},
      {1, 96, 96, 5, 6, 3, 1, 1, 2, true, true, CUVIL_ACT_RELU, false, 6},
      // 8-channel groups, an odd number of them (RegNetY's), on blocked and
      // plain input: at block 8 each block is a group of its own, and the
      // AVX-512 tiles run two groups per register.
      {1, 40, 40, 7, 30, 3, 1, 1, 1, true, true, CUVIL_ACT_CLIP, true, 5},
      {2, 32, 32, 9, 9, 3, 2, 1, 1, false, true, CUVIL_ACT_SILU, false, 4},
      // An odd number of 8-channel blocks, ungrouped: pairs, then one.
      {1, 24, 40, 9, 13, 3, 1, 1, 1, true, true, CUVIL_ACT_RELU, true},
      // Rows of 7 and 3 columns, which the AVX2 tiles take three blocks at
      // a time (4 + 3 columns): at stride 1 on whole blocks (5 blocks: a
      // unit of 3, then 2), at stride 2 (4 blocks: 3, then 1; at block 16,
      // the AVX-512 tiles' two rows at once at stride 2, a batch of 2), and
      // on plain input.
      {1, 24, 40, 7, 7, 3, 1, 1, 1, true, true, CUVIL_ACT_RELU, true},
      {2, 16, 32, 13, 13, 3, 2, 1, 1, true, true, CUVIL_ACT_CLIP, false},
      {1, 3, 24, 9, 6, 3, 2, 1, 1, false, false, CUVIL_ACT_NONE, true},
      // Rows of 7 columns on 16-channel blocks, which the AVX-512 tiles take
      // two at a time (7 rows: three pairs, then one): 3 blocks (a unit of
      // 2, then 1), an activation applied to each stored row.
      {1, 32, 48, 7, 7, 3, 1, 1, 1, true, true, CUVIL_ACT_HARDSWISH, true},
      // Pointwise at stride 1 (the plane read as one row of 28-column
      // spans): a 7 x 7 plane, 7 blocks of 8; a plane of 12 x 37.
      {1, 16, 56, 7, 7, 1, 1, 0, 1, true, true, CUVIL_ACT_RELU, true},
      {2, 48, 32, 12, 37, 1, 1, 0, 1, true, false, CUVIL_ACT_NONE, true},
      // The activations applied to each stored tile row (MobileNetV3's,
      // EfficientNet's), after a residual in one case.
      {1, 16, 32, 9, 10, 3, 1, 1, 1, true, true, CUVIL_ACT_HARDSWISH, false},
      {1, 32, 16, 5, 7, 1, 1, 0, 1, true, true, CUVIL_ACT_HARDSIGMOID, false},
      {2, 16, 16, 7, 9, 3, 2, 1, 1, true, true, CUVIL_ACT_SIGMOID, true},
      {1, 3, 32, 11, 11, 3, 2, 1, 1, false, true, CUVIL_ACT_SILU, false},
      // Rows wide enough to be framed (their middle columns read the input
      // in place, the edges a padded copy): grouped at strides 1 and 2,
      // dilated, a 5 x 5 on 8-channel groups, and the stem's 7 x 7.
      {1, 32, 32, 20, 70, 3, 1, 1, 1, true, true, CUVIL_ACT_RELU, true, 2},
      {1, 64, 64, 9, 80, 3, 2, 1, 1, true, true, CUVIL_ACT_NONE, false, 4},
      {1, 16, 32, 12, 60, 3, 1, 2, 2, true, false, CUVIL_ACT_NONE, true},
      {2, 40, 40, 11, 50, 5, 1, 2, 1, true, true, CUVIL_ACT_CLIP, true, 5},
      {1, 3, 32, 20, 90, 7, 2, 3, 1, false, true, CUVIL_ACT_RELU, false},
  };
  std::mt19937 rng(11);
  for (const Variant &v : variants()) {
    for (const Case &k : cases) {
      int64_t B = v.block, cg = k.c / k.groups, kg = k.oc / k.groups;
      if (kg % B || (k.blockedInput && cg % B))
        continue;
      int64_t ib = k.blockedInput ? B : 1;
      int64_t oh = (k.h + 2 * k.pad - k.dil * (k.k - 1) - 1) / k.stride + 1;
      int64_t ow = (k.w + 2 * k.pad - k.dil * (k.k - 1) - 1) / k.stride + 1;
      std::vector<float> x = random(k.n * k.c * k.h * k.w, rng);
      std::vector<float> wt = random(k.oc * cg * k.k * k.k, rng);
      std::vector<float> b = random(k.oc, rng);
      std::vector<float> res = random(k.n * k.oc * oh * ow, rng);
      // The compile-time packing: [OC/B][C/groups/ib][KH][KW][ib][B].
      std::vector<float> packed(wt.size());
      for (int64_t o = 0; o < k.oc; ++o)
        for (int64_t i = 0; i < cg; ++i)
          for (int64_t t = 0; t < k.k * k.k; ++t)
            packed[((((o / B) * (cg / ib) + i / ib) * k.k * k.k + t) * ib + i % ib) * B + o % B] =
                wt[(o * cg + i) * k.k * k.k + t];
      std::vector<float> in = k.blockedInput ? reorder(true, k.n, k.c, k.h * k.w, B, x) : x;
      std::vector<float> blockedRes = reorder(true, k.n, k.oc, oh * ow, B, res);
      auto run = [&](int threads) {
        std::vector<float> out(k.n * k.oc * oh * ow, -7.0f);
        // NaN in the scratch: a tile reading what the kernel did not write
        // there spoils its output.
        std::vector<float> scratch(
            std::max<int64_t>(1,
                              cuvil_conv2d_blocked_scratch_floats(
                                  k.c, k.h, k.w, k.k, k.k, k.stride, k.stride,
                                  k.pad, k.pad, k.dil, k.dil, oh, ow)),
            std::nanf(""));
        cuvil_epilogue e = {
            nullptr,      k.residual ? blockedRes.data() : nullptr,
            k.activation, -0.5f,
            0.75f,        nullptr,
            nullptr,      0,
            0.0f,         0.0f};
        cuvil_pool *pool = cuvil_pool_create(threads);
        cuvil_conv2d_blocked_f32(v.fn, pool, scratch.data(), k.n, k.c, k.h, k.w, in.data(), ib,
                                 k.oc, k.groups, k.k, k.k, packed.data(), k.bias ? b.data() : nullptr,
                                 k.stride, k.stride, k.pad, k.pad, k.dil, k.dil, oh, ow,
                                 out.data(), B, k.activation || k.residual ? &e : nullptr);
        cuvil_pool_destroy(pool);
        return out;
      };
      std::vector<float> blocked = run(1);
      std::vector<float> got = reorder(false, k.n, k.oc, oh * ow, B, blocked);
      double worst = 0;
      for (int64_t img = 0; img < k.n; ++img)
        for (int64_t o = 0; o < k.oc; ++o)
          for (int64_t y = 0; y < oh; ++y)
            for (int64_t xx = 0; xx < ow; ++xx) {
              double acc = k.bias ? b[o] : 0.0;
              int64_t first = o / kg * cg;
              for (int64_t i = first; i < first + cg; ++i)
                for (int64_t ky = 0; ky < k.k; ++ky)
                  for (int64_t kx = 0; kx < k.k; ++kx) {
                    int64_t iy = y * k.stride + ky * k.dil - k.pad;
                    int64_t ix = xx * k.stride + kx * k.dil - k.pad;
                    if (iy >= 0 && iy < k.h && ix >= 0 && ix < k.w)
                      acc += double(x[((img * k.c + i) * k.h + iy) * k.w + ix]) *
                             wt[((o * cg + i - first) * k.k + ky) * k.k + kx];
                  }
              int64_t at = ((img * k.oc + o) * oh + y) * ow + xx;
              acc = finish(acc, k.residual ? res[at] : 0.0f, k.activation);
              worst = std::max(worst, std::fabs(acc - got[at]));
            }
      std::string what = std::string(v.name) + " block " + std::to_string(B) + " c=" +
                         std::to_string(k.c) + " oc=" + std::to_string(k.oc) + " k=" +
                         std::to_string(k.k) + " stride " + std::to_string(k.stride) +
                         " groups " + std::to_string(k.groups);
      EXPECT_LE(worst, 1e-5 * std::sqrt(double(cg * k.k * k.k))) << what;
      EXPECT_EQ(blocked, run(3)) << what << ": results depend on the thread count";
    }
  }
}

TEST(ConvBlockedTest, DepthwiseMatchesDirectConvolution) {
  struct Dw {
    int64_t n, c, h, w, k, stride, pad, block;
    int activation;
    bool residual;
  };
  const Dw cases[] = {
      {1, 32, 12, 12, 3, 1, 1, 16, CUVIL_ACT_CLIP, false},
      {2, 24, 9, 14, 3, 2, 1, 8, CUVIL_ACT_RELU, true},
      {1, 16, 7, 7, 5, 1, 2, 16, CUVIL_ACT_NONE, true},
      {1, 16, 5, 40, 3, 2, 1, 8, CUVIL_ACT_RELU, true},
      {1, 32, 4, 37, 3, 1, 1, 16, CUVIL_ACT_NONE, false},
      // NCHW4c (NEON's block), 3x3 and 7x7 stride 2.
      {1, 12, 9, 19, 3, 1, 1, 4, CUVIL_ACT_RELU, true},
      {2, 8, 15, 15, 7, 2, 3, 4, CUVIL_ACT_NONE, false},
      // The activations beyond a clamp, at 3x3, 5x5 and 7x7.
      {1, 16, 11, 13, 3, 2, 1, 16, CUVIL_ACT_HARDSWISH, false},
      {1, 24, 9, 9, 5, 1, 2, 8, CUVIL_ACT_SILU, true},
      {1, 16, 8, 8, 7, 1, 3, 16, CUVIL_ACT_SIGMOID, false},
      {1, 8, 6, 17, 5, 2, 2, 4, CUVIL_ACT_HARDSIGMOID, true},
  };
  std::mt19937 rng(13);
  for (const Dw &k : cases) {
    int64_t B = k.block, oh = (k.h + 2 * k.pad - k.k) / k.stride + 1,
            ow = (k.w + 2 * k.pad - k.k) / k.stride + 1;
    std::vector<float> x = random(k.n * k.c * k.h * k.w, rng);
    std::vector<float> wt = random(k.c * k.k * k.k, rng), b = random(k.c, rng);
    std::vector<float> res = random(k.n * k.c * oh * ow, rng);
    // [C/B][KH][KW][B], as cuvil-cpu-assign-layouts packs it.
    std::vector<float> packed(wt.size());
    for (int64_t ch = 0; ch < k.c; ++ch)
      for (int64_t t = 0; t < k.k * k.k; ++t)
        packed[((ch / B) * k.k * k.k + t) * B + ch % B] = wt[ch * k.k * k.k + t];
    std::vector<float> in = reorder(true, k.n, k.c, k.h * k.w, B, x);
    std::vector<float> resb = reorder(true, k.n, k.c, oh * ow, B, res);
    auto run = [&](int threads) {
      std::vector<float> out(k.n * k.c * oh * ow, -7.0f);
      cuvil_epilogue e = {nullptr,      k.residual ? resb.data() : nullptr,
                          k.activation, -0.5f,
                          0.75f,        nullptr,
                          nullptr,      0,
                          0.0f,         0.0f};
      cuvil_pool *pool = cuvil_pool_create(threads);
      EXPECT_EQ(cuvil_dwconv_blocked_f32(pool, k.n, k.c, k.h, k.w, in.data(), k.k, k.k,
                                         packed.data(), b.data(), k.stride, k.stride, k.pad,
                                         k.pad, 1, 1, oh, ow, out.data(), B, &e),
                0);
      cuvil_pool_destroy(pool);
      return out;
    };
    std::vector<float> blocked = run(1);
    std::vector<float> got = reorder(false, k.n, k.c, oh * ow, B, blocked);
    double worst = 0;
    for (int64_t img = 0; img < k.n; ++img)
      for (int64_t ch = 0; ch < k.c; ++ch)
        for (int64_t y = 0; y < oh; ++y)
          for (int64_t xx = 0; xx < ow; ++xx) {
            double acc = b[ch];
            for (int64_t ky = 0; ky < k.k; ++ky)
              for (int64_t kx = 0; kx < k.k; ++kx) {
                int64_t iy = y * k.stride + ky - k.pad, ix = xx * k.stride + kx - k.pad;
                if (iy >= 0 && iy < k.h && ix >= 0 && ix < k.w)
                  acc += double(x[((img * k.c + ch) * k.h + iy) * k.w + ix]) *
                         wt[(ch * k.k + ky) * k.k + kx];
              }
            int64_t at = ((img * k.c + ch) * oh + y) * ow + xx;
            acc = finish(acc, k.residual ? res[at] : 0.0f, k.activation);
            worst = std::max(worst, std::fabs(acc - got[at]));
          }
    EXPECT_LE(worst, 1e-5) << "c=" << k.c << " block " << B;
    EXPECT_EQ(blocked, run(3)) << "results depend on the thread count";
  }
  std::vector<float> none(16);
  EXPECT_EQ(cuvil_dwconv_blocked_f32(nullptr, 1, 4, 1, 1, none.data(), 1, 1, none.data(),
                                     nullptr, 1, 1, 0, 0, 1, 1, 1, 1, none.data(), 2, nullptr),
            1)
      << "block 2 has no kernel";
}

} // namespace
