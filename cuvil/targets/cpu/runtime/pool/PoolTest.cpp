// Pooling against a naive loop in double precision: max and average over
// windows with stride, padding and dilation (count_include_pad counting
// the positions in the padded image, PyTorch's rule for symmetric padding),
// adaptive average pooling with PyTorch's bins, and the blocked kernel
// against the plain one, bit for bit; 8-bit max pooling, plain and
// blocked, against a naive loop over integers; max pooling's indices by
// hand (ties, NaN, padding, dilation, column-major).
extern "C" {
#include "cuvil/targets/cpu/runtime/layout/layout.h"
#include "cuvil/targets/cpu/runtime/pool/pool.h"
}

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
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

struct Window {
  int64_t k, stride, pad, dil;
};

TEST(PoolTest, MatchesNaiveLoops) {
  std::mt19937 rng(7);
  // A wide image too: plain max pooling runs the columns whose windows are
  // inside the image as vectors.
  for (auto [h, w] : {std::pair<int64_t, int64_t>{11, 9}, {6, 53}})
    for (Window win : {Window{3, 2, 1, 1}, Window{2, 2, 0, 1},
                       Window{3, 1, 1, 2}, Window{5, 3, 2, 1}})
      for (int kind : {0, 1})
        for (int includePad : {0, 1}) {
          int64_t oh =
              (h + 2 * win.pad - win.dil * (win.k - 1) - 1) / win.stride + 1;
          int64_t ow =
              (w + 2 * win.pad - win.dil * (win.k - 1) - 1) / win.stride + 1;
          const int64_t n = 2, c = 3;
          std::vector<float> x = random(n * c * h * w, rng);
          std::vector<float> got(n * c * oh * ow, NAN);
          cuvil_pool2d_f32(nullptr, kind, n, c, h, w, x.data(), win.k, win.k,
                           win.stride, win.stride, win.pad, win.pad, win.dil,
                           win.dil, includePad, oh, ow, got.data());
          for (int64_t p = 0; p < n * c; ++p)
            for (int64_t y = 0; y < oh; ++y)
              for (int64_t xx = 0; xx < ow; ++xx) {
                double acc = kind == 0 ? -INFINITY : 0.0;
                int64_t inside = 0, padded = 0;
                for (int64_t ky = 0; ky < win.k; ++ky)
                  for (int64_t kx = 0; kx < win.k; ++kx) {
                    int64_t iy = y * win.stride - win.pad + ky * win.dil;
                    int64_t ix = xx * win.stride - win.pad + kx * win.dil;
                    if (iy >= 0 && iy < h && ix >= 0 && ix < w) {
                      double v = x[(p * h + iy) * w + ix];
                      acc = kind == 0 ? std::max(acc, v) : acc + v;
                      ++inside;
                    } else if (iy < h + win.pad && ix < w + win.pad) {
                      ++padded;
                    }
                  }
                if (kind == 1)
                  acc /= double(includePad ? inside + padded : inside);
                EXPECT_NEAR(got[(p * oh + y) * ow + xx], acc, 1e-6)
                    << "kind " << kind << " include_pad " << includePad << " k"
                    << win.k << " s" << win.stride << " p" << win.pad << " d"
                    << win.dil << " at (" << p << ", " << y << ", " << xx
                    << ")";
              }
        }
}

TEST(PoolTest, AdaptiveAverageUsesPyTorchBins) {
  std::mt19937 rng(9);
  const int64_t n = 1, c = 2, h = 10, w = 7;
  std::vector<float> x = random(n * c * h * w, rng);
  for (auto [oh, ow] : {std::pair<int64_t, int64_t>{1, 1}, {3, 4}, {10, 7}, {4, 3}}) {
    std::vector<float> got(n * c * oh * ow, NAN);
    cuvil_adaptive_avg_pool2d_f32(n, c, h, w, x.data(), oh, ow, got.data());
    for (int64_t p = 0; p < n * c; ++p)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t xx = 0; xx < ow; ++xx) {
          int64_t y0 = int64_t(std::floor(double(y * h) / oh));
          int64_t y1 = int64_t(std::ceil(double((y + 1) * h) / oh));
          int64_t x0 = int64_t(std::floor(double(xx * w) / ow));
          int64_t x1 = int64_t(std::ceil(double((xx + 1) * w) / ow));
          double acc = 0;
          for (int64_t iy = y0; iy < y1; ++iy)
            for (int64_t ix = x0; ix < x1; ++ix)
              acc += x[(p * h + iy) * w + ix];
          acc /= double((y1 - y0) * (x1 - x0));
          EXPECT_NEAR(got[(p * oh + y) * ow + xx], acc, 1e-6) << oh << "x" << ow;
        }
  }
}

// Each lane count the kernel specializes (16, 8) and one it does not (5),
// with a NaN in the image (skipped by max pooling, as the plain loop does),
// and rows split over three threads: the plain kernel's bits.
TEST(PoolTest, BlockedMatchesPlainBitForBit) {
  std::mt19937 rng(5);
  const int64_t n = 2, c = 32, h = 13, w = 13;
  std::vector<float> x = random(n * c * h * w, rng);
  x[h * w + 5] = NAN;
  cuvil_pool *threads = cuvil_pool_create(3);
  for (int64_t B : {16, 8, 5, 4})
    for (int kind : {0, 1})
      for (int includePad : {0, 1}) {
        std::vector<float> xb = reorder(true, n, c, h * w, B, x);
        int64_t oh = 7, ow = 7; // 3x3, stride 2, padding 1
        std::vector<float> plain(n * c * oh * ow), blocked(n * (c + B - 1) / B * B * oh * ow);
        cuvil_pool2d_f32(nullptr, kind, n, c, h, w, x.data(), 3, 3, 2, 2, 1, 1, 1, 1,
                         includePad, oh, ow, plain.data());
        cuvil_pool2d_blocked_f32(threads, kind, n, c, h, w, xb.data(), 3, 3, 2, 2, 1, 1, 1, 1,
                                 includePad, oh, ow, blocked.data(), B);
        std::vector<float> unblocked = reorder(false, n, c, oh * ow, B, blocked);
        ASSERT_EQ(unblocked.size(), plain.size());
        EXPECT_EQ(0, std::memcmp(unblocked.data(), plain.data(), plain.size() * sizeof(float)))
            << "block " << B << " kind " << kind << " include_pad " << includePad;
      }
  cuvil_pool_destroy(threads);
}

// The byte of channel `ch` at `pos` of image `i` in NCHW<block>c.
int64_t blockedIndex(int64_t i, int64_t c, int64_t ch, int64_t pos, int64_t spatial,
                     int64_t block) {
  int64_t blocks = (c + block - 1) / block;
  return ((i * blocks + ch / block) * spatial + pos) * block + ch % block;
}

TEST(PoolTest, IntegerMaxPoolingMatchesNaiveLoops) {
  std::mt19937 rng(11);
  const int64_t n = 2, c = 19, h = 10, w = 9;
  for (int isSigned : {0, 1})
    for (int64_t block : {1, 5, 8, 16, 32, 64})
      for (Window win : {Window{3, 2, 1, 1}, Window{2, 2, 0, 1}, Window{3, 1, 1, 2}}) {
        int64_t oh = (h + 2 * win.pad - win.dil * (win.k - 1) - 1) / win.stride + 1;
        int64_t ow = (w + 2 * win.pad - win.dil * (win.k - 1) - 1) / win.stride + 1;
        int64_t padded = (c + block - 1) / block * block;
        std::vector<uint8_t> x(n * padded * h * w);
        for (uint8_t &v : x)
          v = uint8_t(rng());
        std::vector<uint8_t> got(n * padded * oh * ow, 0x5a);
        cuvil_max_pool2d_q8(isSigned, n, c, h, w, x.data(), win.k, win.k, win.stride,
                            win.stride, win.pad, win.pad, win.dil, win.dil, oh, ow, got.data(),
                            block);
        auto value = [&](uint8_t byte) { return isSigned ? int(int8_t(byte)) : int(byte); };
        for (int64_t i = 0; i < n; ++i)
          for (int64_t ch = 0; ch < c; ++ch)
            for (int64_t y = 0; y < oh; ++y)
              for (int64_t xx = 0; xx < ow; ++xx) {
                int want = isSigned ? -128 : 0;
                for (int64_t ky = 0; ky < win.k; ++ky)
                  for (int64_t kx = 0; kx < win.k; ++kx) {
                    int64_t iy = y * win.stride - win.pad + ky * win.dil;
                    int64_t ix = xx * win.stride - win.pad + kx * win.dil;
                    if (iy >= 0 && iy < h && ix >= 0 && ix < w)
                      want = std::max(want, value(x[blockedIndex(i, c, ch, iy * w + ix,
                                                                 h * w, block)]));
                  }
                ASSERT_EQ(value(got[blockedIndex(i, c, ch, y * ow + xx, oh * ow, block)]), want)
                    << (isSigned ? "int8" : "uint8") << " block " << block << " k" << win.k
                    << " s" << win.stride << " p" << win.pad << " d" << win.dil << " at ("
                    << i << ", " << ch << ", " << y << ", " << xx << ")";
              }
      }
}

TEST(MaxPoolIndices, FirstLargestByHand) {
  // Plane 0 (3 x 4), then plane 1, whose indices continue after it:
  //   1 5 5 0     0 0 0 0
  //   2 5 9 9     0 0 0 0
  //   3 N 0 9     0 0 0 7    (N: NaN)
  const float nan = std::nanf("");
  std::vector<float> x = {1, 5, 5, 0, 2, 5, 9, 9, 3, nan, 0, 9,
                          0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7};
  // 2 x 2 windows at stride 2 over rows 0-1: the tied 5s' first, (0, 1);
  // the first 9, (1, 2).
  std::vector<int64_t> got(2, -7);
  cuvil_max_pool2d_indices_f32(1, 3, 4, x.data(), 2, 2, 2, 2, 0, 0, 1, 1, 0,
                               1, 2, got.data());
  EXPECT_EQ(got, (std::vector<int64_t>{1, 6}));
  // With a row and a column of padding before: the windows' rows are
  // {0} and {1, 2}, their columns {0}, {1, 2} and {3}. Row 0: 1, the first
  // 5, 0; rows 1-2: 3 at (2, 0), the NaN at (2, 1) over 9, the first 9 of
  // column 3, (1, 3).
  got.assign(6, -7);
  cuvil_max_pool2d_indices_f32(1, 3, 4, x.data(), 2, 2, 2, 2, 1, 1, 1, 1, 0,
                               2, 3, got.data());
  EXPECT_EQ(got, (std::vector<int64_t>{0, 1, 3, 8, 9, 7}));
  // Dilation 2 (rows 0 and 2, columns x and x + 2), both planes, indices
  // column-major ((p * 4 + col) * 3 + row): plane 0's 5 at (0, 2) is 6, its
  // NaN at (2, 1) 5; plane 1's first zero (0, 0) is 12, its 7 at (2, 3) 23.
  got.assign(4, -7);
  cuvil_max_pool2d_indices_f32(2, 3, 4, x.data(), 2, 2, 1, 1, 0, 0, 2, 2, 1,
                               1, 2, got.data());
  EXPECT_EQ(got, (std::vector<int64_t>{6, 5, 12, 23}));
}

} // namespace
