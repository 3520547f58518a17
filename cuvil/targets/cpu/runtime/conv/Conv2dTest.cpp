// cuvil_conv2d_f32, the NCHW convolution, on each of its paths against a
// double-precision convolution: im2col + packed product (given scratch),
// pointwise as a product on the image, depthwise through the dwconv
// micro-kernel, grouped and unscratched ones directly; with bias and the
// residual / relu / clip epilogue, batches, and the same bits for any
// thread count.
extern "C" {
#include "cuvil/targets/cpu/runtime/contract/contract.h"
#include "cuvil/targets/cpu/runtime/conv/conv.h"
}

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace {

std::vector<float> random(size_t count, std::mt19937 &rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(count);
  for (float &x : v)
    x = dist(rng);
  return v;
}

struct Case {
  const char *path;
  int64_t n, c, oc, h, w, k, groups, stride, pad, dil;
  bool scratch;
  int activation;
  bool residual;
};

TEST(Conv2dTest, EveryPathMatchesDoublePrecision) {
  const Case cases[] = {
      {"im2col", 2, 5, 7, 9, 11, 3, 1, 1, 1, 1, true, CUVIL_ACT_RELU, true},
      {"im2col strided", 1, 8, 4, 12, 12, 3, 1, 2, 1, 2, true, CUVIL_ACT_CLIP, false},
      {"pointwise", 2, 16, 24, 7, 5, 1, 1, 1, 0, 1, false, CUVIL_ACT_NONE, true},
      {"depthwise", 2, 6, 6, 10, 13, 3, 6, 1, 1, 1, false, CUVIL_ACT_CLIP, true},
      {"depthwise strided", 1, 4, 4, 9, 9, 5, 4, 2, 2, 1, false, CUVIL_ACT_RELU, false},
      {"grouped", 1, 8, 12, 8, 6, 3, 4, 1, 1, 1, false, CUVIL_ACT_NONE, false},
      {"direct", 1, 3, 5, 7, 7, 3, 1, 2, 0, 1, false, CUVIL_ACT_RELU, true},
  };
  std::mt19937 rng(21);
  for (const Case &k : cases) {
    int64_t oh = (k.h + 2 * k.pad - k.dil * (k.k - 1) - 1) / k.stride + 1;
    int64_t ow = (k.w + 2 * k.pad - k.dil * (k.k - 1) - 1) / k.stride + 1;
    int64_t cg = k.c / k.groups, ocg = k.oc / k.groups;
    std::vector<float> x = random(k.n * k.c * k.h * k.w, rng);
    std::vector<float> wt = random(k.oc * cg * k.k * k.k, rng), b = random(k.oc, rng);
    std::vector<float> res = random(k.n * k.oc * oh * ow, rng);
    auto run = [&](int threads) {
      std::vector<float> out(k.n * k.oc * oh * ow, NAN);
      std::vector<float> scratch(
          k.scratch ? cuvil_im2col_scratch_floats(k.c, k.k, k.k, oh, ow) : 0);
      cuvil_epilogue e = {nullptr,      k.residual ? res.data() : nullptr,
                          k.activation, -0.5f,
                          0.75f,        nullptr,
                          nullptr,      0,
                          0.0f,         0.0f};
      cuvil_pool *pool = cuvil_pool_create(threads);
      cuvil_conv2d_f32(pool, k.scratch ? scratch.data() : nullptr, k.n, k.c, k.h, k.w, x.data(),
                       k.oc, k.k, k.k, wt.data(), b.data(), k.groups, k.stride, k.stride,
                       k.pad, k.pad, k.dil, k.dil, oh, ow, out.data(), &e);
      cuvil_pool_destroy(pool);
      return out;
    };
    std::vector<float> got = run(1);
    double worst = 0;
    for (int64_t img = 0; img < k.n; ++img)
      for (int64_t o = 0; o < k.oc; ++o)
        for (int64_t y = 0; y < oh; ++y)
          for (int64_t xx = 0; xx < ow; ++xx) {
            double acc = b[o];
            for (int64_t i = 0; i < cg; ++i)
              for (int64_t ky = 0; ky < k.k; ++ky)
                for (int64_t kx = 0; kx < k.k; ++kx) {
                  int64_t iy = y * k.stride + ky * k.dil - k.pad;
                  int64_t ix = xx * k.stride + kx * k.dil - k.pad;
                  int64_t ci = o / ocg * cg + i;
                  if (iy >= 0 && iy < k.h && ix >= 0 && ix < k.w)
                    acc += double(x[((img * k.c + ci) * k.h + iy) * k.w + ix]) *
                           wt[((o * cg + i) * k.k + ky) * k.k + kx];
                }
            int64_t at = ((img * k.oc + o) * oh + y) * ow + xx;
            if (k.residual)
              acc += res[at];
            if (k.activation == CUVIL_ACT_RELU)
              acc = std::max(acc, 0.0);
            if (k.activation == CUVIL_ACT_CLIP)
              acc = std::min(std::max(acc, -0.5), 0.75);
            worst = std::max(worst, std::fabs(acc - got[at]));
          }
    EXPECT_LE(worst, 1e-5 * std::sqrt(double(cg * k.k * k.k))) << k.path;
    EXPECT_EQ(got, run(3)) << k.path << ": results depend on the thread count";
  }
}

} // namespace
