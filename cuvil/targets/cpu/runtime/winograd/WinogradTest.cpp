// Winograd F(4x4, 3x3) convolution against a double-precision direct
// convolution: sizes that leave partial tiles, paddings 0 and 1, bias, the
// residual + relu and clip epilogues, batches, and identical results for any
// thread count; on blocked layouts, the same bits as on NCHW.
extern "C" {
#include "cuvil/targets/cpu/runtime/contract/contract.h"
#include "cuvil/targets/cpu/runtime/layout/layout.h"
#include "cuvil/targets/cpu/runtime/winograd/winograd.h"
}

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <tuple>
#include <vector>

namespace {

struct Case {
  int64_t n, c, oc, h, w, pad;
  bool bias;
  int activation;
  bool residual;
};

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

std::vector<float> run(const Case &k, const std::vector<float> &x, const std::vector<float> &wt,
                       const std::vector<float> &b, const std::vector<float> &res, int threads) {
  int64_t oh = k.h + 2 * k.pad - 2, ow = k.w + 2 * k.pad - 2;
  std::vector<float> out(k.n * k.oc * oh * ow, -7.0f);
  std::vector<float> scratch(cuvil_winograd_scratch_floats(k.c, k.oc, oh, ow));
  cuvil_epilogue e = {nullptr,      k.residual ? res.data() : nullptr,
                      k.activation, -0.5f,
                      0.75f,        nullptr,
                      nullptr,      0,
                      0.0f,         0.0f};
  cuvil_pool *pool = cuvil_pool_create(threads);
  cuvil_conv2d_winograd_f32(pool, scratch.data(), k.n, k.c, k.h, k.w, x.data(), 1, k.oc,
                            wt.data(), k.bias ? b.data() : nullptr, k.pad, k.pad, oh, ow,
                            out.data(), 1, k.activation || k.residual ? &e : nullptr);
  cuvil_pool_destroy(pool);
  return out;
}

TEST(WinogradTest, MatchesDirectConvolution) {
  const Case cases[] = {
      {1, 3, 5, 9, 9, 1, true, CUVIL_ACT_NONE, false},
      {2, 16, 8, 28, 28, 1, true, CUVIL_ACT_RELU, true},
      {1, 4, 4, 7, 11, 0, false, CUVIL_ACT_NONE, false},
      {1, 8, 12, 13, 6, 1, true, CUVIL_ACT_CLIP, false},
      {1, 64, 64, 56, 56, 1, true, CUVIL_ACT_RELU, true},
      // A partial vector of input channels; output channels ending half-way
      // into a strip of the packed weights.
      {1, 20, 48, 10, 70, 1, false, CUVIL_ACT_RELU, false},
      // The activations beyond a clamp (hardsigmoid's alpha, beta: -0.5,
      // 0.75).
      {1, 16, 16, 12, 12, 1, true, CUVIL_ACT_HARDSWISH, true},
      {1, 8, 16, 9, 9, 1, true, CUVIL_ACT_SILU, false},
      {1, 8, 8, 6, 10, 1, true, CUVIL_ACT_SIGMOID, false},
      {1, 8, 8, 6, 6, 0, true, CUVIL_ACT_HARDSIGMOID, false},
  };
  std::mt19937 rng(7);
  for (const Case &k : cases) {
    int64_t oh = k.h + 2 * k.pad - 2, ow = k.w + 2 * k.pad - 2;
    std::vector<float> x = random(k.n * k.c * k.h * k.w, rng);
    std::vector<float> wt = random(k.oc * k.c * 9, rng);
    std::vector<float> b = random(k.oc, rng);
    std::vector<float> res = random(k.n * k.oc * oh * ow, rng);
    std::vector<float> got = run(k, x, wt, b, res, 1);
    double worst = 0, scale = 0;
    for (int64_t img = 0; img < k.n; ++img)
      for (int64_t o = 0; o < k.oc; ++o)
        for (int64_t y = 0; y < oh; ++y)
          for (int64_t xx = 0; xx < ow; ++xx) {
            double acc = k.bias ? b[o] : 0.0;
            for (int64_t i = 0; i < k.c; ++i)
              for (int64_t ky = 0; ky < 3; ++ky)
                for (int64_t kx = 0; kx < 3; ++kx) {
                  int64_t iy = y + ky - k.pad, ix = xx + kx - k.pad;
                  if (iy >= 0 && iy < k.h && ix >= 0 && ix < k.w)
                    acc += double(x[((img * k.c + i) * k.h + iy) * k.w + ix]) *
                           wt[((o * k.c + i) * 3 + ky) * 3 + kx];
                }
            int64_t at = ((img * k.oc + o) * oh + y) * ow + xx;
            if (k.residual)
              acc += res[at];
            if (k.activation == CUVIL_ACT_RELU)
              acc = std::max(acc, 0.0);
            if (k.activation == CUVIL_ACT_CLIP)
              acc = std::min(std::max(acc, -0.5), 0.75);
            if (k.activation == CUVIL_ACT_HARDSWISH)
              acc = acc * std::min(std::max(acc + 3.0, 0.0), 6.0) / 6.0;
            if (k.activation == CUVIL_ACT_HARDSIGMOID)
              acc = std::min(std::max(-0.5 * acc + 0.75, 0.0), 1.0);
            if (k.activation == CUVIL_ACT_SIGMOID)
              acc = 1.0 / (1.0 + std::exp(-acc));
            if (k.activation == CUVIL_ACT_SILU)
              acc = acc / (1.0 + std::exp(-acc));
            worst = std::max(worst, std::fabs(acc - got[at]));
            scale = std::max(scale, std::fabs(acc));
          }
    // F(4x4, 3x3) loses a few bits to its transforms (points up to +-2).
    EXPECT_LE(worst, 1e-5 * std::max(scale, 1.0) * std::sqrt(double(k.c)))
        << "c=" << k.c << " oc=" << k.oc << " " << k.h << "x" << k.w;
    EXPECT_EQ(got, run(k, x, wt, b, res, 3)) << "results depend on the thread count";
  }
}

// On NCHW<block>c input and output, the same bits as on NCHW.
TEST(WinogradTest, BlockedLayoutsMatchPlain) {
  std::mt19937 rng(5);
  const int64_t n = 2, h = 13, w = 13;
  // Winograd's vectors are 16 channels: blocks of 16, and blocks of 8 and
  // 4 (NEON's) with channel counts that leave a partial vector (24 in, 40
  // out; 12 in, 20 out).
  for (const auto &[wb, wc, oc] :
       {std::tuple<int64_t, int64_t, int64_t>{16, 32, 48},
        std::tuple<int64_t, int64_t, int64_t>{8, 24, 40},
        std::tuple<int64_t, int64_t, int64_t>{4, 12, 20}}) {
    const int64_t oh = h, ow = w;
    std::vector<float> wx = random(n * wc * h * w, rng);
    std::vector<float> wxb = reorder(true, n, wc, h * w, wb, wx);
    std::vector<float> wt = random(oc * wc * 9, rng), b = random(oc, rng);
    std::vector<float> res = random(n * oc * oh * ow, rng);
    std::vector<float> resb = reorder(true, n, oc, oh * ow, wb, res);
    std::vector<float> scratch(cuvil_winograd_scratch_floats(wc, oc, oh, ow));
    std::vector<float> plain(n * oc * oh * ow), blocked(plain.size());
    cuvil_epilogue e = {nullptr, res.data(), CUVIL_ACT_RELU, 0.0f,
                        0.0f,    nullptr,    nullptr,        0,
                        0.0f,    0.0f};
    cuvil_conv2d_winograd_f32(nullptr, scratch.data(), n, wc, h, w, wx.data(),
                              1, oc, wt.data(), b.data(), 1, 1, oh, ow,
                              plain.data(), 1, &e);
    e.residual = resb.data();
    cuvil_conv2d_winograd_f32(nullptr, scratch.data(), n, wc, h, w, wxb.data(),
                              wb, oc, wt.data(), b.data(), 1, 1, oh, ow,
                              blocked.data(), wb, &e);
    EXPECT_EQ(reorder(false, n, oc, oh * ow, wb, blocked), plain)
        << "block " << wb;
  }
}

} // namespace
