//===- KernelsTest.cpp - the device library against naive references -----===//
//
// cuvil_mlu_kernels.h compiled against the emulator and run with tiles that
// do not divide the shapes, streaming loops of several tiles and odd task
// counts, each function checked against a plain loop in double.
//
//===----------------------------------------------------------------------===//

#include "cuvil/targets/mlu/emu/cuvil_bang_emu.h"

#include "cuvil/targets/mlu/bang/cuvil_mlu_kernels.h"

#include "gtest/gtest.h"

#include <cmath>
#include <random>
#include <vector>

namespace {

constexpr cnrtDim3_t kThreeTasks = {3, 1, 1};

/// Host values in a cnrtMalloc buffer, freed at scope exit.
template <class T> class Device {
public:
  explicit Device(const std::vector<T> &values) : n(values.size()) {
    EXPECT_EQ(cnrtMalloc(reinterpret_cast<void **>(&ptr), n * sizeof(T)),
              cnrtSuccess);
    std::vector<T> copy = values;
    EXPECT_EQ(cnrtMemcpy(ptr, copy.data(), n * sizeof(T), cnrtMemcpyHostToDev),
              cnrtSuccess);
  }
  ~Device() { cnrtFree(ptr); }
  std::vector<T> read() const {
    std::vector<T> values(n);
    EXPECT_EQ(
        cnrtMemcpy(values.data(), ptr, n * sizeof(T), cnrtMemcpyDevToHost),
        cnrtSuccess);
    return values;
  }
  T *ptr = nullptr;
  size_t n;
};

std::vector<float> randoms(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1, 1);
  std::vector<float> values(n);
  for (float &v : values)
    v = uniform(rng);
  return values;
}

void expectNear(const std::vector<float> &got, const std::vector<double> &want,
                double tolerance) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], tolerance) << "at " << i;
}

int up(int n) { return (n + 31) / 32 * 32; }

/// A product's fused activations other than relu and clip, against their
/// formulas: sigmoid, SiLU, hard sigmoid with its alpha and beta (in lo
/// and hi), hard swish.
TEST(KernelsTest, ProductsApplySigmoidSiluAndTheHardOnes) {
  cuvil_gemm_shape s{1, 5, 70, 37, 0, 0, 0, 2, 32, 16, 0};
  std::vector<float> a = randoms(5 * 37, 1), b = randoms(37 * 70, 2),
                     bias = randoms(70, 3);
  struct Case {
    int act;
    float lo, hi;
    double (*f)(double, double, double);
  };
  const Case cases[] = {
      {CUVIL_ACT_SIGMOID, 0, 0,
       [](double x, double, double) { return 1 / (1 + std::exp(-x)); }},
      {CUVIL_ACT_SILU, 0, 0,
       [](double x, double, double) { return x / (1 + std::exp(-x)); }},
      {CUVIL_ACT_HARDSIGMOID, 0.75f, 0.25f,
       [](double x, double al, double be) {
         return std::min(1.0, std::max(0.0, al * x + be));
       }},
      {CUVIL_ACT_HARDSWISH, 1.0f / 6, 0.5f, [](double x, double al, double be) {
         return x * std::min(1.0, std::max(0.0, al * x + be));
       }}};
  for (const Case &c : cases) {
    s.act = c.act;
    Device da(a), db(b), dbias(bias), dc(std::vector<float>(5 * 70));
    cuvil_emu::launch(
        "gemm_act",
        [&] {
          CUVIL_NRAM(float, na, 2 * s.Mt * s.Kt);
          CUVIL_NRAM(float, nb, 2 * s.Kt * s.Nt);
          CUVIL_NRAM(float, acc, s.Mt *s.Nt);
          CUVIL_NRAM(float, tmp, s.Nt);
          CUVIL_NRAM(float, vec, s.Nt);
          CUVIL_NRAM(float, act2, s.Nt);
          cuvil_gemm<float>(s, dc.ptr, da.ptr, db.ptr, dbias.ptr, nullptr, c.lo,
                            c.hi, na, nb, nullptr, acc, tmp, vec, nullptr,
                            nullptr, nullptr, act2);
        },
        kThreeTasks, cnrtFuncTypeBlock, nullptr);
    std::vector<double> want;
    for (int m = 0; m < 5; ++m)
      for (int n = 0; n < 70; ++n) {
        double sum = bias[n];
        for (int k = 0; k < 37; ++k)
          sum += double(a[m * 37 + k]) * b[k * 70 + n];
        want.push_back(c.f(sum, c.lo, c.hi));
      }
    SCOPED_TRACE(c.act);
    expectNear(dc.read(), want, 1e-5);
  }
}

/// Union1 jobs on two clusters of four cores: the staged kernels' weights
/// go through each cluster's SRAM.
constexpr cnrtDim3_t kTwoClusters = {8, 1, 1};

class KernelsStagedTest : public ::testing::TestWithParam<bool> {};

TEST_P(KernelsStagedTest, GemmWithBiasResidualAndClipOverUnevenTiles) {
  bool staged = GetParam();
  cuvil_gemm_shape s{2, 5, 70, 37, 5 * 37, 37 * 70, 5 * 70, 2, 32, 16,
                     CUVIL_ACT_CLIP};
  std::vector<float> a = randoms(2 * 5 * 37, 1), b = randoms(2 * 37 * 70, 2),
                     bias = randoms(70, 3), res = randoms(2 * 5 * 70, 4);
  Device da(a), db(b), dbias(bias), dres(res), dc(std::vector<float>(700));
  cuvil_emu::launch(
      "gemm",
      [&] {
        CUVIL_NRAM(float, na, 2 * s.Mt * s.Kt);
        CUVIL_NRAM(float, nb, 2 * s.Kt * s.Nt);
        CUVIL_NRAM(float, acc, s.Mt * s.Nt);
        CUVIL_NRAM(float, tmp, s.Nt);
        CUVIL_NRAM(float, vec, s.Nt);
        CUVIL_NRAM(float, nres, s.Mt * s.Nt);
        if (!staged) {
          cuvil_gemm<float>(s, dc.ptr, da.ptr, db.ptr, dbias.ptr, dres.ptr,
                            -0.5f, 0.75f, na, nb, nullptr, acc, tmp, vec,
                            nullptr, nres, nullptr, nullptr);
          return;
        }
        CUVIL_SRAM(float, sb, s.K *s.Nt);
        cuvil_gemm_staged<float>(s, dc.ptr, da.ptr, db.ptr, dbias.ptr, dres.ptr,
                                 -0.5f, 0.75f, na, nb, nullptr, acc, tmp, vec,
                                 nullptr, nres, nullptr, nullptr, sb);
      },
      staged ? kTwoClusters : kThreeTasks,
      staged ? cnrtFuncTypeUnion1 : cnrtFuncTypeBlock, nullptr);
  std::vector<double> want;
  for (int bi = 0; bi < 2; ++bi)
    for (int m = 0; m < 5; ++m)
      for (int n = 0; n < 70; ++n) {
        double sum = bias[n] + res[(bi * 5 + m) * 70 + n];
        for (int k = 0; k < 37; ++k)
          sum += double(a[(bi * 5 + m) * 37 + k]) * b[(bi * 37 + k) * 70 + n];
        want.push_back(std::min(0.75, std::max(-0.5, sum)));
      }
  expectNear(dc.read(), want, 1e-5);
}

/// An integer at position `pos`: x / 2^pos to nearest, ties to even (as
/// cuvil.quantize rounds), saturated to int8.
int toInt8(double x, int pos) {
  double q = std::nearbyint(std::ldexp(x, -pos)); // the default: to even
  return int(std::min(127.0, std::max(-128.0, q)));
}

/// Inputs on a grid of half steps at position `pos`: every other one a tie
/// (k + 0.5 steps), which _rd alone would round away from zero.
std::vector<float> halfSteps(size_t n, int pos, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<float> v(n);
  for (float &x : v)
    x = std::ldexp(float(int(rng() % 301) - 150), pos - 1);
  return v;
}

/// cuvil_gemm_int8 over uneven tiles against the fixed-point arithmetic
/// written out in integers: each sum is exact, then scaled by
/// 2^(pos_a + pos_w) (a float32 rounding), biased and clipped.
void checkGemmInt8(bool residual, bool staged) {
  const int M = 5, N = 100, K = 150, Np = 128, Kp = 256;
  cuvil_gemm_int8_shape s{M, N, K, Np, Kp, 2, 64, -6, -7, CUVIL_ACT_CLIP};
  std::vector<float> a = halfSteps(M * K, -6, 5), bias = randoms(N, 6),
                     res = randoms(M * N, 7);
  std::vector<int8_t> w(Np * Kp, 0);
  std::mt19937 rng(8);
  for (int n = 0; n < N; ++n)
    for (int k = 0; k < K; ++k)
      w[n * Kp + k] = int8_t(int(rng() % 255) - 127);
  Device da(a), dbias(bias), dres(res), dc(std::vector<float>(M * N));
  Device<int8_t> dw(w);
  cuvil_emu::launch(
      "gemm_int8",
      [&] {
        CUVIL_NRAM(float, row, Kp);
        CUVIL_NRAM(int8_t, q, Kp);
        CUVIL_NRAM(float, acc, s.Mt *s.Nt);
        CUVIL_NRAM(float, tmp, s.Nt);
        CUVIL_NRAM(float, vec, s.Nt);
        CUVIL_NRAM(float, nres, s.Mt *s.Nt);
        CUVIL_WRAM(int8_t, wt, s.Nt * Kp);
        if (!staged) {
          cuvil_gemm_int8(s, dc.ptr, da.ptr, dw.ptr, dbias.ptr,
                          residual ? dres.ptr : nullptr, -0.5f, 0.75f, row, q,
                          acc, tmp, vec, nullptr, nres, nullptr, wt, nullptr);
          return;
        }
        CUVIL_SRAM(int8_t, sw, s.Nt * Kp);
        cuvil_gemm_int8_staged(s, dc.ptr, da.ptr, dw.ptr, dbias.ptr,
                               residual ? dres.ptr : nullptr, -0.5f, 0.75f, row,
                               q, acc, tmp, vec, nullptr, nres, nullptr, wt,
                               nullptr, sw);
      },
      staged ? kTwoClusters : kThreeTasks,
      staged ? cnrtFuncTypeUnion1 : cnrtFuncTypeBlock, nullptr);
  std::vector<float> got = dc.read();
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      long long sum = 0;
      for (int k = 0; k < K; ++k)
        sum += (long long)toInt8(double(a[m * K + k]), -6) * w[n * Kp + k];
      double v = double(float(std::ldexp(double(sum), -13))) + double(bias[n]) +
                 (residual ? double(res[m * N + n]) : 0.0);
      double want = std::min(0.75, std::max(-0.5, v));
      ASSERT_NEAR(got[m * N + n], want, 1e-6) << m << "," << n;
    }
}

TEST(KernelsTest, Int8GemmOnTheTensorUnitIsTheFixedPointArithmetic) {
  for (bool staged : {false, true}) {
    SCOPED_TRACE(staged ? "staged in SRAM" : "block");
    checkGemmInt8(true, staged);
    checkGemmInt8(false, staged);
  }
}

/// cuvil_conv2d_int8 (strided, padded, uneven output tiles, three chunks
/// of input channels, two tiles of output channels, a residual and relu)
/// against the fixed-point arithmetic written out in integers: the tiles
/// move, the numbers do not.
void checkConvInt8(bool staged) {
  cuvil_window_shape s{};
  s.N = 2, s.C = 150, s.H = 9, s.W = 7, s.OC = 70, s.G = 1, s.KH = 3, s.KW = 3;
  s.SH = 2, s.SW = 2, s.PT = 1, s.PL = 1, s.DH = 1, s.DW = 1;
  s.OH = (9 + 2 - 3) / 2 + 1, s.OW = (7 + 2 - 3) / 2 + 1;
  s.OCt = 64, s.Ht = 2, s.Ct = 64, s.act = CUVIL_ACT_RELU;
  s.Pt = up(s.Ht * s.OW), s.RowsIn = (s.Ht - 1) * s.SH + s.KH;
  cuvil_fixed_conv f{192, 128, (s.OW - 1) * s.SW + s.KW, -5, -7};
  int taps = 9;
  std::vector<float> x = halfSteps(2 * 150 * 9 * 7, -5, 5),
                     bias = randoms(70, 7),
                     res = randoms(2 * 70 * s.OH * s.OW, 8);
  std::vector<int8_t> w(f.OCp * taps * f.Cp, 0); // [OCp][KH][KW][Cp]
  std::mt19937 rng(6);
  for (int o = 0; o < s.OC; ++o)
    for (int t = 0; t < taps; ++t)
      for (int c = 0; c < s.C; ++c)
        w[(o * taps + t) * f.Cp + c] = int8_t(int(rng() % 255) - 127);
  size_t outputs = 2 * 70 * s.OH * s.OW;
  Device dx(x), dbias(bias), dres(res), dy{std::vector<float>(outputs)};
  Device<int8_t> dw(w);
  int nq = (s.Ct * s.RowsIn * s.W + 127) / 128 * 128;
  cuvil_emu::launch(
      "conv_int8",
      [&] {
        CUVIL_NRAM(float, nx, nq);
        CUVIL_NRAM(int8_t, q, nq);
        CUVIL_NRAM(int8_t, xh, (s.RowsIn * f.Wp * s.Ct + 127) / 128 * 128);
        CUVIL_NRAM(float, part, s.OCt *s.Pt);
        CUVIL_NRAM(float, acc, s.OCt *s.Pt);
        CUVIL_NRAM(float, tmp, s.Pt);
        CUVIL_NRAM(float, vec, s.OCt);
        CUVIL_NRAM(float, nres, s.OCt *s.Pt);
        CUVIL_WRAM(int8_t, wt, s.OCt * taps * s.Ct);
        if (!staged) {
          cuvil_conv2d_int8(s, f, dy.ptr, dx.ptr, dw.ptr, dbias.ptr, dres.ptr,
                            0.0f, 0.0f, nx, q, xh, wt, part, acc, tmp, vec,
                            nres, nullptr);
          return;
        }
        CUVIL_SRAM(int8_t, sw, s.OCt * taps * f.Cp);
        cuvil_conv2d_int8_staged(s, f, dy.ptr, dx.ptr, dw.ptr, dbias.ptr,
                                 dres.ptr, 0.0f, 0.0f, nx, q, xh, wt, part, acc,
                                 tmp, vec, nres, nullptr, sw);
      },
      staged ? kTwoClusters : kThreeTasks,
      staged ? cnrtFuncTypeUnion1 : cnrtFuncTypeBlock, nullptr);
  std::vector<float> got = dy.read();
  for (int n = 0; n < 2; ++n)
    for (int o = 0; o < s.OC; ++o)
      for (int oh = 0; oh < s.OH; ++oh)
        for (int ow = 0; ow < s.OW; ++ow) {
          long long sum = 0;
          for (int kh = 0; kh < 3; ++kh)
            for (int kw = 0; kw < 3; ++kw) {
              int ih = oh * 2 - 1 + kh, iw = ow * 2 - 1 + kw;
              if (ih < 0 || ih >= s.H || iw < 0 || iw >= s.W)
                continue;
              for (int c = 0; c < s.C; ++c)
                sum += (long long)toInt8(
                           x[((n * s.C + c) * s.H + ih) * s.W + iw], -5) *
                       w[(o * taps + kh * 3 + kw) * f.Cp + c];
            }
          size_t at = ((n * s.OC + o) * s.OH + oh) * s.OW + ow;
          double v = double(float(std::ldexp(double(sum), -12))) +
                     double(bias[o]) + double(res[at]);
          ASSERT_NEAR(got[at], std::max(0.0, v), 1e-5)
              << n << "," << o << "," << oh << "," << ow;
        }
}

TEST(KernelsTest, Int8ConvolutionOnTheTensorUnitIsTheFixedPointArithmetic) {
  for (bool staged : {false, true}) {
    SCOPED_TRACE(staged ? "staged in SRAM" : "block");
    checkConvInt8(staged);
  }
}

/// A grouped, strided, dilated, padded convolution, against a direct loop.
TEST_P(KernelsStagedTest, ConvolutionStreamsItsInputChannels) {
  bool staged = GetParam();
  cuvil_window_shape s{};
  s.N = 2, s.C = 6, s.H = 9, s.W = 7, s.OC = 4, s.G = 2, s.KH = 3, s.KW = 2;
  s.SH = 2, s.SW = 1, s.PT = 1, s.PL = 0, s.DH = 1, s.DW = 2;
  s.OH = (9 + 1 + 1 - 3) / 2 + 1, s.OW = (7 - 3) / 1 + 1; // padding 1,0,1,0
  s.OCt = 1, s.Ht = 2, s.Ct = 2, s.act = CUVIL_ACT_RELU;
  s.Pt = up(s.Ht * s.OW), s.RowsIn = (s.Ht - 1) * s.SH + (s.KH - 1) * s.DH + 1;
  int cg = 3, taps = 6;
  std::vector<float> x = randoms(2 * 6 * 9 * 7, 5), w = randoms(4 * cg * taps, 6),
                     bias = randoms(4, 7);
  size_t outputs = 2 * 4 * s.OH * s.OW;
  Device dx(x), dw(w), dbias(bias), dy{std::vector<float>(outputs)};
  cuvil_emu::launch(
      "conv",
      [&] {
        CUVIL_NRAM(float, nx, 2 * s.Ct * s.RowsIn * s.W);
        CUVIL_NRAM(float, nw, 2 * s.OCt * s.Ct * taps);
        CUVIL_NRAM(float, p, s.Ct * taps * s.Pt);
        CUVIL_NRAM(float, acc, s.OCt * s.Pt);
        CUVIL_NRAM(float, tmp, s.Pt);
        CUVIL_NRAM(float, vec, 32);
        if (!staged) {
          cuvil_conv2d<float>(s, dy.ptr, dx.ptr, dw.ptr, dbias.ptr, nullptr, 0,
                              0, nx, nw, p, nullptr, acc, tmp, vec, nullptr,
                              nullptr, nullptr);
          return;
        }
        CUVIL_SRAM(float, sw, s.OCt *cg *taps);
        cuvil_conv2d_staged<float>(s, dy.ptr, dx.ptr, dw.ptr, dbias.ptr,
                                   nullptr, 0, 0, nx, nw, p, nullptr, acc, tmp,
                                   vec, nullptr, nullptr, nullptr, sw);
      },
      staged ? kTwoClusters : kThreeTasks,
      staged ? cnrtFuncTypeUnion1 : cnrtFuncTypeBlock, nullptr);
  std::vector<double> want;
  for (int n = 0; n < 2; ++n)
    for (int oc = 0; oc < 4; ++oc)
      for (int oh = 0; oh < s.OH; ++oh)
        for (int ow = 0; ow < s.OW; ++ow) {
          double sum = bias[oc];
          int g = oc / 2;
          for (int c = 0; c < cg; ++c)
            for (int kh = 0; kh < 3; ++kh)
              for (int kw = 0; kw < 2; ++kw) {
                int ih = oh * 2 - 1 + kh, iw = ow + kw * 2;
                if (ih < 0 || ih >= 9 || iw < 0 || iw >= 7)
                  continue;
                sum += double(x[((n * 6 + g * cg + c) * 9 + ih) * 7 + iw]) *
                       w[((oc * cg + c) * 3 + kh) * 2 + kw];
              }
          want.push_back(std::max(0.0, sum));
        }
  expectNear(dy.read(), want, 1e-5);
}

INSTANTIATE_TEST_SUITE_P(BlockAndStagedInSram, KernelsStagedTest,
                         ::testing::Bool());

TEST(KernelsTest, MaxAndAveragePoolingWithPadding) {
  cuvil_window_shape s{};
  s.N = 1, s.C = 3, s.H = 7, s.W = 5, s.OC = 3, s.G = 3, s.KH = 3, s.KW = 3;
  s.SH = 2, s.SW = 2, s.PT = 1, s.PL = 1, s.DH = 1, s.DW = 1;
  s.OH = 4, s.OW = 3, s.OCt = 1, s.Ct = 1, s.Ht = 3;
  s.Pt = up(s.Ht * s.OW), s.RowsIn = (s.Ht - 1) * 2 + 3;
  std::vector<float> x = randoms(3 * 7 * 5, 8), recip(12, 1.0f / 9);
  Device dx(x), drecip(recip), dmax(std::vector<float>(36)),
      davg(std::vector<float>(36));
  for (bool isMax : {true, false})
    cuvil_emu::launch(
        "pool",
        [&] {
          CUVIL_NRAM(float, nx, s.RowsIn * s.W);
          CUVIL_NRAM(float, p, 9 * s.Pt);
          CUVIL_NRAM(float, acc, s.Pt);
          CUVIL_NRAM(float, tmp, s.Pt);
          cuvil_pool2d<float>(s, isMax ? dmax.ptr : davg.ptr, dx.ptr,
                              drecip.ptr, isMax, nx, p, acc, tmp);
        },
        kThreeTasks, cnrtFuncTypeBlock, nullptr);
  std::vector<double> wantMax, wantAvg; // average counting padding as 0
  for (int c = 0; c < 3; ++c)
    for (int oh = 0; oh < 4; ++oh)
      for (int ow = 0; ow < 3; ++ow) {
        double most = -INFINITY, sum = 0;
        for (int kh = 0; kh < 3; ++kh)
          for (int kw = 0; kw < 3; ++kw) {
            int ih = oh * 2 - 1 + kh, iw = ow * 2 - 1 + kw;
            if (ih < 0 || ih >= 7 || iw < 0 || iw >= 5)
              continue;
            most = std::max<double>(most, x[(c * 7 + ih) * 5 + iw]);
            sum += x[(c * 7 + ih) * 5 + iw];
          }
        wantMax.push_back(most);
        wantAvg.push_back(sum / 9);
      }
  expectNear(dmax.read(), wantMax, 0);
  expectNear(davg.read(), wantAvg, 1e-6);
}

TEST(KernelsTest, RowsOfAnUnalignedLength) {
  cuvil_rows_shape s{7, 45, 64, 2};
  std::vector<float> x = randoms(7 * 45, 9), gamma = randoms(45, 10),
                     beta = randoms(45, 11);
  Device dx(x), dg(gamma), db(beta), dsoft(std::vector<float>(315)),
      dlog(std::vector<float>(315)), dnorm(std::vector<float>(315)),
      dmean(std::vector<float>(7));
  cuvil_emu::launch(
      "rows",
      [&] {
        CUVIL_NRAM(float, t, s.Rt * s.Lp);
        CUVIL_NRAM(float, e, s.Lp);
        CUVIL_NRAM(float, sq, s.Lp);
        CUVIL_NRAM(float, g, s.Lp);
        CUVIL_NRAM(float, b, s.Lp);
        CUVIL_NRAM(float, mask, s.Lp);
        CUVIL_NRAM(float, out, 32);
        CUVIL_NRAM(float, lanes, 32);
        cuvil_softmax<float>(s, dsoft.ptr, dx.ptr, false, t, e, lanes,
                             nullptr);
        cuvil_softmax<float>(s, dlog.ptr, dx.ptr, true, t, e, lanes, nullptr);
        cuvil_layer_norm<float>(s, dnorm.ptr, dx.ptr, dg.ptr, db.ptr, 1e-5f, t,
                                sq, g, b, mask, lanes, nullptr);
        cuvil_rows_reduce<float>(s, dmean.ptr, dx.ptr, CUVIL_REDUCE_MEAN, t, out,
                                 lanes, nullptr);
      },
      kThreeTasks, cnrtFuncTypeBlock, nullptr);
  std::vector<double> soft, log, norm, mean;
  for (int r = 0; r < 7; ++r) {
    const float *row = &x[r * 45];
    double most = *std::max_element(row, row + 45), sum = 0, m = 0, v = 0;
    for (int i = 0; i < 45; ++i)
      sum += std::exp(row[i] - most), m += row[i] / 45.0;
    for (int i = 0; i < 45; ++i)
      v += (row[i] - m) * (row[i] - m) / 45.0;
    for (int i = 0; i < 45; ++i) {
      soft.push_back(std::exp(row[i] - most) / sum);
      log.push_back(row[i] - most - std::log(sum));
      norm.push_back((row[i] - m) / std::sqrt(v + 1e-5) * gamma[i] + beta[i]);
    }
    mean.push_back(m);
  }
  expectNear(dsoft.read(), soft, 1e-6);
  expectNear(dlog.read(), log, 1e-5);
  expectNear(dnorm.read(), norm, 1e-5);
  expectNear(dmean.read(), mean, 1e-6);
}

/// Per-row values (a squeeze-and-excitation scale), per-column values (a
/// bias over the last axis) and the reversed forms of the non-commutative
/// ops, against plain loops.
TEST(KernelsTest, BroadcastsByRowAndByColumn) {
  cuvil_rows_shape s{6, 40, 64, 4};
  std::vector<float> a = randoms(240, 13), rows = randoms(3, 14),
                     cols = randoms(40, 15);
  for (float &v : cols)
    v += 2; // no division by ~0
  Device da(a), dr(rows), dc(cols), y1{std::vector<float>(240)},
      y2{std::vector<float>(240)}, y3{std::vector<float>(240)},
      y4{std::vector<float>(240)};
  cuvil_emu::launch(
      "broadcast",
      [&] {
        CUVIL_NRAM(float, t, s.Rt * s.Lp);
        CUVIL_NRAM(float, bv, 64);
        CUVIL_NRAM(float, tmp, s.Lp);
        cuvil_broadcast<float>(s, y1.ptr, da.ptr, dr.ptr, 3, CUVIL_PER_ROW,
                               CUVIL_MUL, false, t, bv, tmp, nullptr);
        cuvil_broadcast<float>(s, y2.ptr, da.ptr, dr.ptr, 3, CUVIL_PER_ROW,
                               CUVIL_SUB, true, t, bv, tmp, nullptr);
        cuvil_broadcast<float>(s, y3.ptr, da.ptr, dc.ptr, 40,
                               CUVIL_PER_COLUMN, CUVIL_DIV, false, t, bv, tmp,
                               nullptr);
        cuvil_broadcast<float>(s, y4.ptr, da.ptr, dr.ptr, 3, CUVIL_PER_ROW,
                               CUVIL_MAX, false, t, bv, tmp, nullptr);
      },
      kThreeTasks, cnrtFuncTypeBlock, nullptr);
  std::vector<double> w1, w2, w3, w4;
  for (int r = 0; r < 6; ++r)
    for (int l = 0; l < 40; ++l) {
      double x = a[r * 40 + l];
      w1.push_back(x * rows[r % 3]);
      w2.push_back(rows[r % 3] - x);
      w3.push_back(x / cols[l]);
      w4.push_back(std::max<double>(x, rows[r % 3]));
    }
  expectNear(y1.read(), w1, 1e-6);
  expectNear(y2.read(), w2, 1e-6);
  expectNear(y3.read(), w3, 1e-6);
  expectNear(y4.read(), w4, 0);
}

TEST(KernelsTest, BatchNormAndConcatenation) {
  cuvil_rows_shape s{2 * 3, 10, 32, 4}; // N = 2, C = 3, H * W = 10
  std::vector<float> x = randoms(60, 16), scale = randoms(3, 17),
                     bias = randoms(3, 18), mean = randoms(3, 19),
                     var = {0.5f, 1.5f, 2.0f};
  Device dx(x), ds(scale), db(bias), dm(mean), dv(var),
      dy{std::vector<float>(60)}, dcat{std::vector<float>(120)};
  cuvil_emu::launch(
      "bn",
      [&] {
        CUVIL_NRAM(float, t, s.Rt * s.Lp);
        CUVIL_NRAM(float, sc, 32);
        CUVIL_NRAM(float, sh, 32);
        CUVIL_NRAM(float, tmp, 32);
        cuvil_batch_norm<float>(s, dy.ptr, dx.ptr, ds.ptr, db.ptr, dm.ptr,
                                dv.ptr, 1e-5f, 3, t, sc, sh, tmp, nullptr);
        // cat([x, x], axis=1) of [2, 30]: each row takes 30 values twice.
        cuvil_copy_rows(dcat.ptr, dx.ptr, 2, 30 * 4, 60 * 4, 30 * 4);
        cuvil_copy_rows(dcat.ptr + 30, dx.ptr, 2, 30 * 4, 60 * 4, 30 * 4);
      },
      kThreeTasks, cnrtFuncTypeBlock, nullptr);
  std::vector<double> want, cat;
  for (int r = 0; r < 6; ++r)
    for (int l = 0; l < 10; ++l) {
      int c = r % 3;
      want.push_back((x[r * 10 + l] - mean[c]) / std::sqrt(var[c] + 1e-5) *
                         scale[c] + bias[c]);
    }
  for (int n = 0; n < 2; ++n)
    for (int k = 0; k < 2; ++k)
      for (int i = 0; i < 30; ++i)
        cat.push_back(x[n * 30 + i]);
  expectNear(dy.read(), want, 1e-5);
  expectNear(dcat.read(), cat, 0);
}

TEST(KernelsTest, ErfAndConstantPadding) {
  std::vector<float> x(256);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = -4.0f + 8.0f * i / 255;
  x[100] = 0; // erf(0) = 0, through the sign's guard
  std::vector<float> small = randoms(24, 20);
  Device dx(x), derf{std::vector<float>(256)}, ds(small),
      dpad{std::vector<float>(2 * 5 * 7)};
  cuvil_pad_shape pad{3, {2, 5, 7}, {2, 3, 4}, {0, 1, 2}};
  cuvil_emu::launch(
      "erf_pad",
      [&] {
        CUVIL_NRAM(float, ta, 256);
        CUVIL_NRAM(float, tb, 256);
        CUVIL_NRAM(float, tc, 256);
        CUVIL_NRAM(float, td, 256);
        CUVIL_NRAM(float, row, 32);
        CUVIL_NRAM(float, fill, 32);
        cuvil_unary<float>(derf.ptr, dx.ptr, 256, CUVIL_ERF, 0, 0, 256, ta,
                           tb, tc, td, nullptr);
        cuvil_pad<float>(pad, dpad.ptr, ds.ptr, -1.0f, row, fill);
      },
      kThreeTasks, cnrtFuncTypeBlock, nullptr);
  std::vector<double> wantErf, wantPad;
  for (float v : x)
    wantErf.push_back(std::erf(double(v)));
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 5; ++b)
      for (int c = 0; c < 7; ++c) {
        bool in = b >= 1 && b < 4 && c >= 2 && c < 6;
        wantPad.push_back(in ? small[(a * 3 + b - 1) * 4 + c - 2] : -1.0);
      }
  // The formula's 1.5e-7, plus float32 rounding of 1 - p e near 0.
  expectNear(derf.read(), wantErf, 5e-7);
  expectNear(dpad.read(), wantPad, 0);
}

/// One strided row longer than a DMA's 65536 segments, split over the
/// tasks in pieces: exact.
TEST(KernelsTest, LongStridedRowSplitsIntoPiecesAndDescriptors) {
  std::vector<float> x = randoms(2 * 70001, 21);
  Device dx(x), dy{std::vector<float>(70001)};
  cuvil_gather_shape every_other{1, {70001}, {2}, 1};
  cuvil_emu::launch(
      "long_row", [&] { cuvil_gather<float>(every_other, dy.ptr, dx.ptr); },
      cnrtDim3_t{1, 1, 1}, cnrtFuncTypeBlock, nullptr);
  std::vector<double> want;
  for (int i = 0; i < 70001; ++i)
    want.push_back(x[1 + 2 * i]);
  expectNear(dy.read(), want, 0);
  Device dz{std::vector<float>(70001)};
  cuvil_emu::launch(
      "pieces", [&] { cuvil_gather<float>(every_other, dz.ptr, dx.ptr); },
      kThreeTasks, cnrtFuncTypeBlock, nullptr);
  expectNear(dz.read(), want, 0);
}

/// float16 storage, float32 arithmetic: a layer norm whose sum of squares
/// (102400) is far beyond float16's 65504, and erf around 0, where float16
/// arithmetic cancels; results within float16's rounding.
TEST(KernelsTest, HalfRowsAndErfComputeInFloat) {
  cuvil_rows_shape s{2, 1024, 1024, 1};
  std::vector<half> x(2048), small(128);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = half(i % 2 ? 10.0f : -10.0f);
  for (size_t i = 0; i < small.size(); ++i)
    small[i] = half((int(i) - 64) * 1e-3f);
  Device<half> dx(x), dy{std::vector<half>(2048)}, ds(small),
      de{std::vector<half>(128)};
  cuvil_emu::launch(
      "half_rows",
      [&] {
        CUVIL_NRAM(float, t, 1024);
        CUVIL_NRAM(float, sq, 1024);
        CUVIL_NRAM(float, mask, 1024);
        CUVIL_NRAM(float, lanes, 32);
        CUVIL_NRAM(half, stage, 1024);
        CUVIL_NRAM(float, ta, 128);
        CUVIL_NRAM(float, tb, 128);
        CUVIL_NRAM(float, tc, 128);
        CUVIL_NRAM(float, td, 128);
        cuvil_layer_norm<half>(s, dy.ptr, dx.ptr, nullptr, nullptr, 1e-5f, t,
                               sq, nullptr, nullptr, mask, lanes, stage);
        cuvil_unary<half>(de.ptr, ds.ptr, 128, CUVIL_ERF, 0, 0, 128, ta, tb,
                          tc, td, stage);
      },
      kThreeTasks, cnrtFuncTypeBlock, nullptr);
  std::vector<half> y = dy.read(), e = de.read();
  for (size_t i = 0; i < y.size(); ++i)
    ASSERT_NEAR(float(y[i]), i % 2 ? 1.0f : -1.0f, 1e-3f) << i;
  for (size_t i = 0; i < e.size(); ++i) { // float16's rounding of the result
    double want = std::erf(double(float(small[i])));
    ASSERT_NEAR(float(e[i]), want, std::abs(want) * 0x1p-11 + 1e-7) << i;
  }
  EXPECT_EQ(float(e[64]), 0.0f); // erf(0), not NaN
}

/// A transpose of the last two dimensions, then a slice with steps: exact.
TEST(KernelsTest, GathersAreExact) {
  std::vector<float> x = randoms(2 * 3 * 5, 12);
  Device dx(x), dt(std::vector<float>(30)), ds(std::vector<float>(4));
  cuvil_gather_shape transpose{3, {2, 5, 3}, {15, 1, 5}, 0};
  cuvil_gather_shape slice{2, {2, 2}, {15, 2 * 5}, 1}; // x[:, 0:3:2, 1]
  cuvil_emu::launch(
      "gather",
      [&] {
        cuvil_gather<float>(transpose, dt.ptr, dx.ptr);
        cuvil_gather<float>(slice, ds.ptr, dx.ptr);
      },
      kThreeTasks, cnrtFuncTypeBlock, nullptr);
  std::vector<double> wantT, wantS;
  for (int a = 0; a < 2; ++a)
    for (int c = 0; c < 5; ++c)
      for (int b = 0; b < 3; ++b)
        wantT.push_back(x[(a * 3 + b) * 5 + c]);
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 3; b += 2)
      wantS.push_back(x[(a * 3 + b) * 5 + 1]);
  expectNear(dt.read(), wantT, 0);
  expectNear(ds.read(), wantS, 0);
}

} // namespace
