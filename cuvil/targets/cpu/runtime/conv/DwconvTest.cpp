// Every depthwise-convolution variant this CPU can run (listed once in
// dwconv.inc) against a double-precision convolution: kernel sizes,
// strides, paddings and dilations that hit the vector interior, its tail and
// the edges.
extern "C" {
#include "cuvil/targets/cpu/runtime/conv/conv.h"
}

#include "cuvil/targets/cpu/runtime/cpu_has.h"
#include "gtest/gtest.h"

#include <cmath>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Variant {
  const char *name;
  cuvil_dwconv_fn fn;
  std::string features;
};

std::vector<Variant> variants() {
  return {
#define CUVIL_DWCONV_VARIANT(name, target, features)                           \
  {#name, cuvil_dwconv_##name, features},
#include "cuvil/targets/cpu/runtime/conv/dwconv.inc"
#undef CUVIL_DWCONV_VARIANT
  };
}

using cuvil::runtime_testing::cpuHas;

struct Case {
  int64_t h, w, k, stride, pad, dil;
};

TEST(DwconvTest, VariantsMatchDoublePrecision) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  const Case cases[] = {
      {5, 5, 3, 1, 1, 1},
      {7, 40, 3, 1, 1, 1},
      {12, 37, 3, 2, 1, 1},
      {9, 33, 5, 1, 2, 1},
      {8, 50, 3, 1, 2, 2},
      {6, 17, 3, 1, 0, 1},
      {112, 112, 3, 1, 1, 1},
      {4, 3, 3, 1, 1, 1},
      {10, 64, 1, 1, 0, 1},
      // Stride 2 over rows wider than a vector (5x5, dilated 3x3, 7x7 at
      // stride 1), and stride 3 (tap by tap).
      {9, 47, 5, 2, 2, 1},
      {11, 40, 3, 2, 2, 2},
      {8, 45, 7, 1, 3, 1},
      {10, 30, 3, 3, 1, 1},
  };
  int tested = 0;
  for (const Variant &v : variants()) {
    if (!cpuHas(v.features)) {
      std::printf("skipping %s: this CPU lacks %s\n", v.name,
                  v.features.c_str());
      continue;
    }
    ++tested;
    for (const Case &c : cases) {
      int64_t oh = (c.h + 2 * c.pad - c.dil * (c.k - 1) - 1) / c.stride + 1;
      int64_t ow = (c.w + 2 * c.pad - c.dil * (c.k - 1) - 1) / c.stride + 1;
      std::vector<float> input(c.h * c.w), weight(c.k * c.k),
          output(oh * ow, NAN);
      for (float &x : input)
        x = dist(rng);
      for (float &x : weight)
        x = dist(rng);
      float bias = dist(rng);
      v.fn(c.h, c.w, input.data(), c.k, c.k, weight.data(), bias, c.stride,
           c.stride, c.pad, c.pad, c.dil, c.dil, oh, ow, output.data());
      for (int64_t y = 0; y < oh; ++y) {
        for (int64_t x = 0; x < ow; ++x) {
          double expected = bias;
          for (int64_t ky = 0; ky < c.k; ++ky)
            for (int64_t kx = 0; kx < c.k; ++kx) {
              int64_t iy = y * c.stride - c.pad + ky * c.dil;
              int64_t ix = x * c.stride - c.pad + kx * c.dil;
              if (iy >= 0 && iy < c.h && ix >= 0 && ix < c.w)
                expected += double(weight[ky * c.k + kx]) * input[iy * c.w + ix];
            }
          ASSERT_NEAR(output[y * ow + x], expected, 1e-5)
              << v.name << " " << c.h << "x" << c.w << " k" << c.k << " s"
              << c.stride << " p" << c.pad << " d" << c.dil << " at (" << y
              << ", " << x << ")";
        }
      }
    }
  }
  EXPECT_GE(tested, 1);
}

} // namespace
