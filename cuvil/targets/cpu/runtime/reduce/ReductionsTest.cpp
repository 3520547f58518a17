// The vectorized reductions (softmax, log-softmax, layer norm, reduce), batch
// norm and cuvil_expf against double precision, on lengths that exercise the
// vector body and its tail, with -inf masks and extreme inputs.
extern "C" {
#include "cuvil/targets/cpu/runtime/reduce/reduce.h"
}

#include "gtest/gtest.h"

#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace {

std::vector<float> random(size_t count, float scale, std::mt19937 &rng) {
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<float> v(count);
  for (float &x : v)
    x = dist(rng);
  return v;
}

TEST(ReductionsTest, SoftmaxMatchesDouble) {
  std::mt19937 rng(3);
  for (int log = 0; log < 2; ++log)
    for (auto [outer, axis, inner] : {std::tuple<int64_t, int64_t, int64_t>{3, 37, 1},
                                      {2, 128, 1}, {2, 5, 19}, {1, 7, 3}}) {
      std::vector<float> x = random(outer * axis * inner, 8.0f, rng), y(x.size());
      x[0] = -std::numeric_limits<float>::infinity(); // an attention mask
      cuvil_softmax_f32(log, outer, axis, inner, x.data(), y.data());
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          double max = -INFINITY, sum = 0;
          for (int64_t a = 0; a < axis; ++a)
            max = std::max(max, double(x[(o * axis + a) * inner + i]));
          for (int64_t a = 0; a < axis; ++a)
            sum += std::exp(double(x[(o * axis + a) * inner + i]) - max);
          for (int64_t a = 0; a < axis; ++a) {
            size_t at = (o * axis + a) * inner + i;
            double ref = double(x[at]) - max;
            ref = log ? ref - std::log(sum) : std::exp(ref) / sum;
            if (std::isinf(ref))
              EXPECT_EQ(y[at], float(ref));
            else
              EXPECT_NEAR(y[at], ref, 1e-6 * std::max(1.0, std::fabs(ref))) << at;
          }
        }
      EXPECT_EQ(y[0], log ? -INFINITY : 0.0f);
    }
}

TEST(ReductionsTest, LayerNormMatchesDouble) {
  std::mt19937 rng(4);
  for (int64_t inner : {512, 13, 8}) {
    std::vector<float> x = random(3 * inner, 4.0f, rng), y(x.size());
    std::vector<float> scale = random(inner, 1.0f, rng), bias = random(inner, 1.0f, rng);
    for (float &v : x)
      v += 100.0f; // a large mean: the variance must not cancel
    cuvil_layer_norm_f32(3, inner, x.data(), scale.data(), bias.data(), 1e-5, y.data());
    for (int64_t o = 0; o < 3; ++o) {
      double mean = 0, var = 0;
      for (int64_t i = 0; i < inner; ++i)
        mean += x[o * inner + i];
      mean /= inner;
      for (int64_t i = 0; i < inner; ++i)
        var += (x[o * inner + i] - mean) * (x[o * inner + i] - mean);
      var /= inner;
      for (int64_t i = 0; i < inner; ++i) {
        double ref = (x[o * inner + i] - mean) / std::sqrt(var + 1e-5) * scale[i] + bias[i];
        EXPECT_NEAR(y[o * inner + i], ref, 2e-5 * std::max(1.0, std::fabs(ref)));
      }
    }
  }
}

TEST(ReductionsTest, ReduceLastAxisMatchesDouble) {
  std::mt19937 rng(5);
  for (int kind : {0, 1, 2})
    for (int64_t reduced : {1000, 17, 3}) {
      std::vector<float> x = random(2 * reduced, 1.0f, rng), y(2);
      cuvil_reduce_f32(kind, 2, reduced, 1, x.data(), y.data());
      for (int64_t o = 0; o < 2; ++o) {
        double acc = kind == 2 ? -INFINITY : 0;
        for (int64_t r = 0; r < reduced; ++r)
          acc = kind == 2 ? std::max(acc, double(x[o * reduced + r])) : acc + x[o * reduced + r];
        if (kind == 1)
          acc /= reduced;
        EXPECT_NEAR(y[o], acc, 1e-5 * std::max(1.0, std::fabs(acc)));
      }
    }
}

TEST(ReductionsTest, BatchNormMatchesDouble) {
  std::mt19937 rng(6);
  const int64_t n = 2, c = 5, spatial = 13;
  std::vector<float> x = random(n * c * spatial, 3.0f, rng), y(x.size());
  std::vector<float> scale = random(c, 1.0f, rng), bias = random(c, 1.0f, rng);
  std::vector<float> mean = random(c, 1.0f, rng), variance = random(c, 1.0f, rng);
  for (float &v : variance)
    v = std::fabs(v) + 0.1f;
  cuvil_batch_norm_f32(n, c, spatial, 1, x.data(), scale.data(), bias.data(), mean.data(),
                       variance.data(), 1e-5, y.data());
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t i = 0; i < spatial; ++i) {
        size_t at = (b * c + ch) * spatial + i;
        double ref = (x[at] - double(mean[ch])) / std::sqrt(double(variance[ch]) + 1e-5) *
                         scale[ch] +
                     bias[ch];
        EXPECT_NEAR(y[at], ref, 1e-5 * std::max(1.0, std::fabs(ref))) << at;
      }
}

TEST(ReductionsTest, BlockedBatchNormIsThePlainOneReordered) {
  // NCHW8c (DenseNet's pre-activation norms on blocked concatenations):
  // element (b, ch, i) at ((b * C/8 + ch/8) * spatial + i) * 8 + ch % 8,
  // the plain kernel's values.
  std::mt19937 rng(7);
  const int64_t n = 2, c = 16, spatial = 5, block = 8;
  std::vector<float> x = random(n * c * spatial, 3.0f, rng), plain(x.size());
  std::vector<float> scale = random(c, 1.0f, rng), bias = random(c, 1.0f, rng);
  std::vector<float> mean = random(c, 1.0f, rng), variance = random(c, 1.0f, rng);
  for (float &v : variance)
    v = std::fabs(v) + 0.1f;
  cuvil_batch_norm_f32(n, c, spatial, 1, x.data(), scale.data(), bias.data(), mean.data(),
                       variance.data(), 1e-5, plain.data());
  auto blockedAt = [&](int64_t b, int64_t ch, int64_t i) {
    return ((b * (c / block) + ch / block) * spatial + i) * block + ch % block;
  };
  std::vector<float> xb(x.size()), yb(x.size(), -9.0f);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t i = 0; i < spatial; ++i)
        xb[blockedAt(b, ch, i)] = x[(b * c + ch) * spatial + i];
  cuvil_batch_norm_f32(n, c, spatial, block, xb.data(), scale.data(), bias.data(),
                       mean.data(), variance.data(), 1e-5, yb.data());
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t i = 0; i < spatial; ++i)
        EXPECT_FLOAT_EQ(yb[blockedAt(b, ch, i)], plain[(b * c + ch) * spatial + i])
            << b << " " << ch << " " << i;
}

} // namespace
