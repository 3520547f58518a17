// cuvil_epilogue_row against the unfused ops it replaces, applied one after
// another in float: row bias, column bias, residual, then relu or clip. The
// same bits (fusing must not change a model's results), for every subset
// of the steps, at a row whose residual starts at an offset; and the
// activations beyond a clamp against their unfused expressions.
extern "C" {
#include "cuvil/targets/cpu/runtime/epilogue/epilogue.h"
}

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace {

TEST(EpilogueTest, MatchesTheUnfusedOpsBitForBit) {
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  const int64_t count = 37, row = 2, offset = 5;
  std::vector<float> rowBias(4), colBias(count), residual(offset + count), out(count);
  for (std::vector<float> *v : {&rowBias, &colBias, &residual, &out})
    for (float &x : *v)
      x = dist(rng);
  for (int steps = 0; steps < 8; ++steps)
    for (int activation : {CUVIL_ACT_NONE, CUVIL_ACT_RELU, CUVIL_ACT_CLIP}) {
      bool useRow = steps & 1, useCol = steps & 2, useResidual = steps & 4;
      cuvil_epilogue e = {useRow ? rowBias.data() : nullptr,
                          useResidual ? residual.data() : nullptr,
                          activation,
                          -0.5f,
                          0.75f,
                          useCol ? colBias.data() : nullptr,
                          nullptr,
                          0,
                          0.0f,
                          0.0f};
      std::vector<float> got = out;
      cuvil_epilogue_row(&e, got.data(), offset, row, count);
      for (int64_t j = 0; j < count; ++j) {
        float want = out[j];
        if (useRow)
          want = want + rowBias[row];
        if (useCol)
          want = want + colBias[j];
        if (useResidual)
          want = want + residual[offset + j];
        if (activation == CUVIL_ACT_RELU)
          want = want > 0.0f ? want : 0.0f;
        if (activation == CUVIL_ACT_CLIP)
          want = want < -0.5f ? -0.5f : want > 0.75f ? 0.75f : want;
        ASSERT_EQ(got[j], want) << "steps " << steps << " activation " << activation
                                << " at " << j;
      }
    }
}

// The activations beyond a clamp: bit for bit the expressions the
// generated code computes for the unfused op (Elementwise.cpp), and within
// float rounding of the exact function in double.
TEST(EpilogueTest, ActivationsMatchTheUnfusedOps) {
  std::vector<float> in;
  for (float x = -12.0f; x <= 12.0f; x += 0.37f)
    in.push_back(x);
  for (float x : {-3.0f, 3.0f, 0.0f, -0.0f, -100.0f, 100.0f, -88.0f, 88.0f})
    in.push_back(x);
  const float alpha = 0.2f, beta = 0.4f;
  struct Kind {
    int activation;
    float (*unfused)(float);
    double (*exact)(double);
  };
  const Kind kinds[] = {
      {CUVIL_ACT_HARDSWISH,
       [](float x) {
         return x *
                ((x + 3.0f) < 0.0f   ? 0.0f
                 : (x + 3.0f) > 6.0f ? 6.0f
                                     : (x + 3.0f)) /
                6.0f;
       },
       [](double x) {
         return x * std::min(std::max(x + 3.0, 0.0), 6.0) / 6.0;
       }},
      {CUVIL_ACT_HARDSIGMOID,
       [](float x) {
         float t = 0.2f * x + 0.4f;
         return t < 0.0f ? 0.0f : t > 1.0f ? 1.0f : t;
       },
       [](double x) { return std::min(std::max(0.2 * x + 0.4, 0.0), 1.0); }},
      {CUVIL_ACT_SIGMOID,
       [](float x) { return 1.0f / (1.0f + cuvil_expf(-x)); },
       [](double x) { return 1.0 / (1.0 + std::exp(-x)); }},
      {CUVIL_ACT_SILU, [](float x) { return x / (1.0f + cuvil_expf(-x)); },
       [](double x) { return x / (1.0 + std::exp(-x)); }},
  };
  for (const Kind &kind : kinds) {
    cuvil_epilogue e = {nullptr, nullptr, kind.activation, alpha,
                        beta,    nullptr, nullptr,         0,
                        0.0f,    0.0f};
    std::vector<float> got = in;
    cuvil_epilogue_row(&e, got.data(), 0, 0, static_cast<int64_t>(got.size()));
    for (size_t j = 0; j < in.size(); ++j) {
      ASSERT_EQ(got[j], kind.unfused(in[j]))
          << "activation " << kind.activation << " at x = " << in[j];
      double exact = kind.exact(in[j]);
      EXPECT_NEAR(got[j], exact, 4e-7 * std::max(1.0, std::fabs(exact)))
          << "activation " << kind.activation << " at x = " << in[j];
    }
  }
  // NaN stays NaN through each.
  for (const Kind &kind : kinds) {
    float nan = std::nanf("");
    cuvil_activate_f32(kind.activation, alpha, beta, &nan, 1);
    EXPECT_TRUE(std::isnan(nan)) << "activation " << kind.activation;
  }
}

} // namespace
