//===- FixedPointTest.cpp - The emulated fixed-point built-ins ------------===//
//
// BANG C's conversions with a fix_position and the tensor unit
// (__bang_mlp, __bang_conv) on exact values against integer references
// written out here, and each of their checks provoked.
//
//===----------------------------------------------------------------------===//

#include "cuvil/targets/mlu/emu/cuvil_bang_emu.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

namespace {

constexpr cnrtDim3_t kOneTask = {1, 1, 1};

/// Runs `body` as one Block task; returns the `n` values it stored in `out`.
template <class T>
std::vector<T> runTask(size_t n, const std::function<void(T *out)> &body) {
  T *out = nullptr;
  EXPECT_EQ(cnrtMalloc(reinterpret_cast<void **>(&out), n * sizeof(T)),
            cnrtSuccess);
  cuvil_emu::launch(
      "FixedPoint", [&] { body(out); }, kOneTask, cnrtFuncTypeBlock, nullptr);
  std::vector<T> values(n);
  EXPECT_EQ(cnrtMemcpy(values.data(), out, n * sizeof(T), cnrtMemcpyDevToHost),
            cnrtSuccess);
  cnrtFree(out);
  return values;
}

TEST(FixedPointTest, FloatToInt8RoundsAsEachSuffixSays) {
  // Values at position -1 (steps of 0.5): x / 2^-1 = 2x.
  const float x[] = {1.25f, -1.25f, 1.2f, -1.3f, 100.0f, -100.0f, NAN, 0.0f};
  const int8_t expect[5][8] = {
      {3, -3, 2, -3, 127, -128, 0, 0},  // rd: nearest, ties away from zero
      {2, -2, 2, -2, 127, -128, 0, 0},  // tz: toward zero
      {2, -3, 2, -3, 127, -128, 0, 0},  // dn: down
      {3, -2, 3, -2, 127, -128, 0, 0},  // up: up
      {3, -3, 3, -3, 127, -128, 0, 0}}; // oz: away from zero
  std::vector<int8_t> got = runTask<int8_t>(5 * 128, [&](int8_t *out) {
    CUVIL_NRAM(float, f, 128);
    CUVIL_NRAM(int8_t, q, 5 * 128);
    for (int i = 0; i < 128; ++i)
      f[i] = x[i % 8];
    __bang_float2int8_rd(q, f, 128, -1);
    __bang_float2int8_tz(q + 128, f, 128, -1);
    __bang_float2int8_dn(q + 256, f, 128, -1);
    __bang_float2int8_up(q + 384, f, 128, -1);
    __bang_float2int8_oz(q + 512, f, 128, -1);
    __memcpy(out, q, 5 * 128, NRAM2GDRAM);
  });
  for (int mode = 0; mode < 5; ++mode)
    for (int i = 0; i < 8; ++i)
      EXPECT_EQ(got[mode * 128 + i], expect[mode][i])
          << "mode " << mode << ", x = " << x[i];
}

TEST(FixedPointTest, FixedToFloatAndHalfScaleByTheirPosition) {
  std::vector<float> got = runTask<float>(256, [](float *out) {
    CUVIL_NRAM(int16_t, q, 128);
    CUVIL_NRAM(half, h, 128);
    CUVIL_NRAM(float, f, 256);
    for (int i = 0; i < 128; ++i)
      q[i] = int16_t(i * 257 - 16000);
    __bang_int162float(f, q, 128, -8);
    __bang_int162half(h, q, 128, 3);
    __bang_half2float(f + 128, h, 128);
    __memcpy(out, f, 256 * 4, NRAM2GDRAM);
  });
  for (int i = 0; i < 128; ++i) {
    float q = float(i * 257 - 16000);
    EXPECT_EQ(got[i], q / 256.0f) << i;
    EXPECT_EQ(got[128 + i], float(half(q * 8.0f))) << i; // one rounding
  }
}

TEST(FixedPointTest, HalfToInt16RoundTripsAtItsPosition) {
  std::vector<int16_t> got = runTask<int16_t>(128, [](int16_t *out) {
    CUVIL_NRAM(half, h, 128);
    CUVIL_NRAM(int16_t, q, 128);
    for (int i = 0; i < 128; ++i)
      h[i] = half(float(i) * 0.375f - 20.0f); // multiples of 2^-3
    __bang_half2int16_rd(q, h, 128, -3);
    __memcpy(out, q, 128 * 2, NRAM2GDRAM);
  });
  for (int i = 0; i < 128; ++i)
    EXPECT_EQ(got[i], int16_t(i * 3 - 160)) << i;
}

/// height x width int8 weights, row-major.
std::vector<int8_t> someWeights(int height, int width) {
  std::vector<int8_t> w(size_t(height) * width);
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = int8_t(int(i * 37 % 255) - 127);
  return w;
}

TEST(FixedPointTest, MlpSumsExactlyThenScalesAndAddsTheBias) {
  constexpr int kHeight = 128, kWidth = 192;
  const std::vector<int8_t> w = someWeights(kHeight, kWidth);
  std::vector<float> got = runTask<float>(2 * kHeight, [&](float *out) {
    CUVIL_NRAM(int8_t, x, kWidth);
    CUVIL_NRAM(float, bias, kHeight);
    CUVIL_NRAM(float, y, 2 * kHeight);
    CUVIL_WRAM(int8_t, wt, kHeight * kWidth);
    for (int k = 0; k < kWidth; ++k)
      x[k] = int8_t(k % 2 ? 127 - k % 50 : -128 + k % 40);
    for (int o = 0; o < kHeight; ++o)
      bias[o] = 0.25f * float(o);
    for (int i = 0; i < kHeight * kWidth; ++i)
      wt[i] = w[size_t(i)];
    __bang_mlp(y, x, wt, kHeight, kWidth, -9);
    __bang_mlp(y + kHeight, x, bias, wt, kHeight, kWidth, -9);
    __memcpy(out, y, 2 * kHeight * 4, NRAM2GDRAM);
  });
  for (int o = 0; o < kHeight; ++o) {
    long long sum = 0;
    for (int k = 0; k < kWidth; ++k)
      sum += (long long)(k % 2 ? 127 - k % 50 : -128 + k % 40) *
             w[size_t(o) * kWidth + k];
    EXPECT_EQ(got[o], float(double(sum) / 512.0)) << o;
    EXPECT_EQ(got[kHeight + o], float(double(sum) / 512.0 + 0.25 * o)) << o;
  }
}

TEST(FixedPointTest, ConvSlidesAnUnpaddedWindowOverHwcInput) {
  constexpr int kC = 64, kH = 5, kW = 6, kK = 3, kS = 2, kCo = 64;
  constexpr int kOh = (kH - kK) / kS + 1, kOw = (kW - kK) / kS + 1;
  auto input = [](int y, int x, int c) {
    return int8_t((y * 31 + x * 17 + c * 7) % 255 - 127);
  };
  const std::vector<int8_t> w = someWeights(kCo, kK * kK * kC);
  std::vector<half> got = runTask<half>(kOh * kOw * kCo, [&](half *out) {
    CUVIL_NRAM(int8_t, x, kH * kW * kC);
    CUVIL_NRAM(half, bias, kCo);
    CUVIL_NRAM(half, y, kOh * kOw * kCo);
    CUVIL_WRAM(int8_t, wt, kCo * kK * kK * kC);
    for (int i = 0; i < kH * kW * kC; ++i)
      x[i] = input(i / kC / kW, i / kC % kW, i % kC);
    for (int o = 0; o < kCo; ++o)
      bias[o] = half(float(o) - 32.0f);
    for (int i = 0; i < kCo * kK * kK * kC; ++i)
      wt[i] = w[size_t(i)];
    __bang_conv(y, x, wt, bias, kC, kH, kW, kK, kK, kS, kS, kCo, -12);
    __memcpy(out, y, kOh * kOw * kCo * 2, NRAM2GDRAM);
  });
  for (int oy = 0; oy < kOh; ++oy)
    for (int ox = 0; ox < kOw; ++ox)
      for (int o = 0; o < kCo; ++o) {
        long long sum = 0;
        for (int ky = 0; ky < kK; ++ky)
          for (int kx = 0; kx < kK; ++kx)
            for (int c = 0; c < kC; ++c)
              sum += (long long)input(oy * kS + ky, ox * kS + kx, c) *
                     w[((size_t(o) * kK + ky) * kK + kx) * kC + c];
        EXPECT_EQ(float(got[(size_t(oy) * kOw + ox) * kCo + o]),
                  float(half(double(sum) / 4096.0 + (o - 32))))
            << oy << "," << ox << "," << o;
      }
}

//===----------------------------------------------------------------------===//
// Each check, provoked
//===----------------------------------------------------------------------===//

class FixedPointDeathTest : public testing::Test {
protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

void runAlone(const std::function<void()> &body) {
  cuvil_emu::launch("Checked", body, kOneTask, cnrtFuncTypeBlock, nullptr);
}

TEST_F(FixedPointDeathTest, ConversionOfAPartialCount) {
  EXPECT_DEATH(runAlone([] {
                 CUVIL_NRAM(float, f, 128);
                 CUVIL_NRAM(int8_t, q, 128);
                 __bang_float2int8_rd(q, f, 96, 0);
               }),
               "__bang_float2int8_rd: n = 96 is not a positive multiple of "
               "128 elements \\(MLU2xx's conversions\\); pad it to 128");
}

TEST_F(FixedPointDeathTest, PositionOutOfRange) {
  EXPECT_DEATH(
      runAlone([] {
        CUVIL_NRAM(int8_t, q, 128);
        CUVIL_NRAM(float, f, 128);
        __bang_int82float(f, q, 128, 130);
      }),
      "__bang_int82float: fix_position 130 is outside \\[-127, 127\\]");
}

TEST_F(FixedPointDeathTest, TensorUnitWeightsOutsideWram) {
  EXPECT_DEATH(runAlone([] {
                 CUVIL_NRAM(int8_t, x, 64);
                 CUVIL_NRAM(int8_t, w, 64 * 64);
                 CUVIL_NRAM(float, y, 64);
                 __bang_mlp(y, x, w, 64, 64, 0);
               }),
               "__bang_mlp: the weights 0x[0-9a-f]+ is in NRAM, not WRAM "
               "\\(declare it with CUVIL_WRAM\\)");
}

TEST_F(FixedPointDeathTest, MlpHeightNotAMultipleOf64) {
  EXPECT_DEATH(runAlone([] {
                 CUVIL_NRAM(int8_t, x, 64);
                 CUVIL_WRAM(int8_t, w, 96 * 64);
                 CUVIL_NRAM(float, y, 96);
                 __bang_mlp(y, x, w, 96, 64, 0);
               }),
               "__bang_mlp: height = 96 is not a positive multiple of 64; pad "
               "it to 128");
}

TEST_F(FixedPointDeathTest, ConvInputChannelsNotWhole64Bytes) {
  EXPECT_DEATH(runAlone([] {
                 CUVIL_NRAM(int16_t, x, 4 * 4 * 48);
                 CUVIL_WRAM(int16_t, w, 64 * 9 * 48);
                 CUVIL_NRAM(float, y, 4 * 64);
                 __bang_conv(y, x, w, 48, 4, 4, 3, 3, 1, 1, 64, 0);
               }),
               "__bang_conv: channel_input = 48 of 2-byte values is not a "
               "positive multiple of 64 bytes; pad it to 64");
}

TEST_F(FixedPointDeathTest, ConvWindowLargerThanItsInput) {
  EXPECT_DEATH(runAlone([] {
                 CUVIL_NRAM(int8_t, x, 2 * 2 * 64);
                 CUVIL_WRAM(int8_t, w, 64 * 9 * 64);
                 CUVIL_NRAM(float, y, 64);
                 __bang_conv(y, x, w, 64, 2, 2, 3, 3, 1, 1, 64, 0);
               }),
               "__bang_conv: a 3x3 window at strides 1 \\(height\\), 1 "
               "\\(width\\) does not fit a 2x2 input");
}

TEST_F(FixedPointDeathTest, ConvDestinationPastItsBuffer) {
  EXPECT_DEATH(runAlone([] {
                 CUVIL_NRAM(int8_t, x, 4 * 4 * 64);
                 CUVIL_WRAM(int8_t, w, 64 * 9 * 64);
                 CUVIL_NRAM(float, y, 64); // 2x2 outputs need 256
                 __bang_conv(y, x, w, 64, 4, 4, 3, 3, 1, 1, 64, 0);
               }),
               "__bang_conv writes outside");
}

} // namespace
