// The int8 convolutions against a direct int64 convolution written here:
// every blocked tile variant this CPU runs (qconvb.inc; the narrow one on
// weights it may take), the depthwise kernel and the im2col one, on plain
// and blocked inputs, uint8 and int8, with padding, strides, dilations,
// bias, residual and activations, float32 and requantized outputs, over
// pools of 1 and 3 threads.
//
// Exactness: the sums are compared bit for bit. With power-of-two scales
// and biases on a 2^-8 grid every float step is exact too (so a compiler
// that fuses a multiply and an add changes nothing), and the outputs are
// compared bit for bit, requantized ones including ties (half to even).
// With arbitrary scales, float32 outputs agree within 1e-6 relative and
// requantized ones within one level.
extern "C" {
#include "cuvil/targets/cpu/runtime/qconv/qconv.h"
}

#include "cuvil/targets/cpu/runtime/cpu_has.h"
#include "gtest/gtest.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

using cuvil::runtime_testing::cpuHas;

struct Tile {
  const char *name;
  cuvil_qconvb_fn fn;
  std::string features;
  bool narrowOnly;
};

std::vector<Tile> tiles() {
  return {
#define CUVIL_QCONVB_VARIANT(name, target, features, weights)                  \
  {#name, cuvil_qconvb_##name, features, std::string(#weights) == "narrow"},
#include "cuvil/targets/cpu/runtime/qconv/qconvb.inc"
#undef CUVIL_QCONVB_VARIANT
  };
}

/// A convolution problem and its reference results.
struct Problem {
  int64_t n = 1, c = 8, h = 7, w = 9, oc = 16, kh = 3, kw = 3;
  int64_t sh = 1, sw = 1, pt = 1, pl = 1, pb = 1, pr = 1, dh = 1, dw = 1;
  int64_t groups = 1;
  bool xSigned = false;
  int32_t xZero = 131;
  int weightMax = 127; // |w| <= weightMax
  bool bias = true, residual = true;
  int activation = CUVIL_ACT_RELU;
  float lo = -1.0f, hi = 1.0f;
  bool exactScales = true;
  // An output scale of 3 (no exact reciprocal) over values that are whole
  // multiples of 1.5: half the quotients are ties, which only the division
  // rounds exactly, so the kernels' multiplication by 1 / 3 must divide
  // there. `tieBias` shifts every bias by that many output steps (past 256:
  // the finish that folds the bias into one multiply-add may not run).
  bool ties = false;
  float tieBias = 0.0f;
  bool quantizedOut = false, outSigned = false;
  // Residuals with NaN, infinities and values far past the 8-bit range.
  bool extremes = false;
  // The residual quantized to 8 bits (cuvil_epilogue's residual8): 0 for
  // float32, 8 for uint8, -8 for int8.
  int residual8 = 0;

  int64_t oh() const { return (h + pt + pb - dh * (kh - 1) - 1) / sh + 1; }
  int64_t ow() const { return (w + pl + pr - dw * (kw - 1) - 1) / sw + 1; }
  int64_t icPerGroup() const { return c / groups; }
};

struct Data {
  std::vector<uint8_t> x; // NCHW stored bytes (int8 as two's complement)
  std::vector<int8_t> weights; // OIHW, I = C / groups
  std::vector<float> scale, bias, residual; // residual NCHW
  // An 8-bit residual (NCHW bytes) and what it stands for: `residual` holds
  // its values dequantized.
  std::vector<uint8_t> residual8;
  float r8scale = 0.0f, r8zero = 0.0f;
  cuvil_qout qout{};
};

Data makeData(const Problem &p, std::mt19937 &rng) {
  Data d;
  d.x.resize(p.n * p.c * p.h * p.w);
  for (uint8_t &v : d.x)
    v = uint8_t(rng() % 256);
  d.weights.resize(p.oc * p.icPerGroup() * p.kh * p.kw);
  for (int8_t &v : d.weights)
    v = int8_t(int(rng() % (2 * p.weightMax + 1)) - p.weightMax);
  // The extremes a saturating multiply would get wrong.
  d.weights[0] = int8_t(p.weightMax == 127 ? -128 : -p.weightMax);
  d.x[0] = p.xSigned ? 0x7f : 255;
  if (p.icPerGroup() >= 2) { // the same tap of channel 1: a pair of extremes
    d.weights[p.kh * p.kw] = d.weights[0];
    d.x[p.h * p.w] = d.x[0];
  }
  for (int64_t o = 0; o < p.oc; ++o) {
    d.scale.push_back(p.ties          ? 1.5f
                      : p.exactScales ? std::ldexp(1.0f, -int(4 + rng() % 3))
                                      : float(rng() % 1000 + 1) * 1.3e-4f);
    d.bias.push_back(p.ties
                         ? 1.5f * float(int(rng() % 81) - 40) + 3.0f * p.tieBias
                         : float(int(rng() % 2001) - 1000) / 64.0f);
  }
  d.residual.resize(p.n * p.oc * p.oh() * p.ow());
  for (float &v : d.residual)
    v = float(int(rng() % 2001) - 1000) / 64.0f;
  if (p.residual8) {
    d.r8scale = p.exactScales ? 0.25f : 0.0731f;
    d.r8zero = p.residual8 < 0 ? -5.0f : 121.0f;
    d.residual8.resize(d.residual.size());
    for (size_t i = 0; i < d.residual.size(); ++i) {
      d.residual8[i] = uint8_t(rng() % 256);
      float q = p.residual8 < 0 ? float(int8_t(d.residual8[i]))
                                : float(d.residual8[i]);
      d.residual[i] = (q - d.r8zero) * d.r8scale; // cuvil.dequantize's
    }
  }
  if (p.extremes) {
    const float special[] = {std::numeric_limits<float>::quiet_NaN(),
                             std::numeric_limits<float>::infinity(),
                             -std::numeric_limits<float>::infinity(),
                             3e38f,
                             -3e38f,
                             1e10f,
                             -1e10f,
                             300.0f,
                             -300.0f};
    for (size_t i = 0; i < d.residual.size(); i += 3)
      d.residual[i] = special[(i / 3) % 9];
  }
  d.qout.is_signed = p.outSigned;
  d.qout.scale = p.ties ? 3.0f : p.exactScales ? 0.5f : 0.0371f;
  d.qout.zero = p.outSigned ? -3.0f : 117.0f;
  return d;
}

/// The int64 sum of output (im, o, y, x).
int64_t referenceSum(const Problem &p, const Data &d, int64_t im, int64_t o,
                     int64_t y, int64_t x) {
  int64_t icg = p.icPerGroup(), g = o / (p.oc / p.groups), acc = 0;
  for (int64_t i = 0; i < icg; ++i) {
    int64_t ch = g * icg + i;
    for (int64_t ky = 0; ky < p.kh; ++ky)
      for (int64_t kx = 0; kx < p.kw; ++kx) {
        int64_t iy = y * p.sh - p.pt + ky * p.dh, ix = x * p.sw - p.pl + kx * p.dw;
        if (iy < 0 || iy >= p.h || ix < 0 || ix >= p.w)
          continue; // (zero - zero) * w
        uint8_t stored = d.x[((im * p.c + ch) * p.h + iy) * p.w + ix];
        int64_t value = p.xSigned ? int64_t(int8_t(stored)) : int64_t(stored);
        acc += (value - p.xZero) *
               d.weights[((o * icg + i) * p.kh + ky) * p.kw + kx];
      }
  }
  return acc;
}

/// qconv.h's steps, written out.
float referenceValue(const Problem &p, const Data &d, int64_t sum, int64_t o,
                     int64_t at) {
  float v = float(sum) * d.scale[o];
  if (p.bias)
    v = v + d.bias[o];
  if (p.residual)
    v = v + d.residual[at];
  if (p.activation == CUVIL_ACT_RELU)
    v = v > 0.0f ? v : 0.0f;
  else if (p.activation == CUVIL_ACT_CLIP)
    v = v < p.lo ? p.lo : v > p.hi ? p.hi : v;
  return v;
}

float referenceQuantized(const Data &d, float v) {
  float lo = d.qout.is_signed ? -128.0f : 0.0f, hi = d.qout.is_signed ? 127.0f : 255.0f;
  float r = std::nearbyint(v / d.qout.scale) + d.qout.zero;
  return std::isnan(r) ? d.qout.zero : std::min(std::max(r, lo), hi);
}

/// A [N][C][H][W] tensor as NCHW<block>c (block 1: itself).
template <typename T>
std::vector<T> toBlocked(const std::vector<T> &plain, int64_t n, int64_t c,
                         int64_t hw, int64_t block) {
  std::vector<T> out(plain.size());
  for (int64_t im = 0; im < n; ++im)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t i = 0; i < hw; ++i)
        out[((im * (c / block) + ch / block) * hw + i) * block + ch % block] =
            plain[(im * c + ch) * hw + i];
  return out;
}

/// Element (im, o, i) of an NCHW<block>c output.
int64_t blockedIndex(int64_t im, int64_t o, int64_t i, int64_t oc, int64_t hw,
                     int64_t block) {
  return ((im * (oc / block) + o / block) * hw + i) * block + o % block;
}

/// Compares a run's output (NCHW<block>c, float32 or 8-bit) with the
/// reference, reporting at most five mismatches per channel.
void expectMatches(const Problem &p, const Data &d, const std::vector<uint8_t> &out,
                   int64_t block, const std::string &what) {
  const int64_t oh = p.oh(), ow = p.ow(), hw = oh * ow;
  int reported = 0;
  for (int64_t im = 0; im < p.n; ++im)
    for (int64_t o = 0; o < p.oc; ++o)
      for (int64_t i = 0; i < hw && reported < 5; ++i) {
        int64_t plainAt = (im * p.oc + o) * hw + i;
        int64_t at = blockedIndex(im, o, i, p.oc, hw, block);
        int64_t sum = referenceSum(p, d, im, o, i / ow, i % ow);
        float v = referenceValue(p, d, sum, o, plainAt);
        std::string where = what + " at image " + std::to_string(im) +
                            " channel " + std::to_string(o) + " pixel " +
                            std::to_string(i) + " (sum " + std::to_string(sum) +
                            ")";
        if (p.quantizedOut) {
          float expected = referenceQuantized(d, v);
          float got = p.outSigned ? float(int8_t(out[at])) : float(out[at]);
          bool ok = p.exactScales ? got == expected
                                  : std::fabs(got - expected) <= 1.0f;
          EXPECT_TRUE(ok) << where << ": " << got << " vs " << expected;
          reported += !ok;
        } else {
          float got;
          std::memcpy(&got, out.data() + at * 4, 4);
          bool ok =
              p.exactScales
                  ? got == v || (std::isnan(got) && std::isnan(v))
                  : std::fabs(got - v) <= 1e-6f * std::max(1.0f, std::fabs(v));
          EXPECT_TRUE(ok) << where << ": " << got << " vs " << v;
          reported += !ok;
        }
      }
}

/// The residual as the kernels read it: like the output.
std::vector<float> blockedResidual(const Problem &p, const Data &d, int64_t block) {
  return toBlocked(d.residual, p.n, p.oc, p.oh() * p.ow(), block);
}

/// An 8-bit residual as the kernels read it: like the output.
std::vector<uint8_t> blockedResidual8(const Problem &p, const Data &d,
                                      int64_t block) {
  if (d.residual8.empty())
    return {};
  return toBlocked(d.residual8, p.n, p.oc, p.oh() * p.ow(), block);
}

/// As the emitter writes it: clip bounds infinite unless clipping; the
/// residual as float32 or (p.residual8) its 8-bit bytes.
cuvil_epilogue epilogueOf(const Problem &p, const Data &d,
                          const std::vector<float> &residual,
                          const std::vector<uint8_t> &residual8) {
  bool clip = p.activation == CUVIL_ACT_CLIP;
  float inf = std::numeric_limits<float>::infinity();
  cuvil_epilogue e = {nullptr,
                      p.residual && !p.residual8 ? residual.data() : nullptr,
                      p.activation,
                      clip ? p.lo : -inf,
                      clip ? p.hi : inf,
                      nullptr,
                      p.residual && p.residual8 ? residual8.data() : nullptr,
                      p.residual8 < 0,
                      d.r8scale,
                      d.r8zero};
  return e;
}

size_t outputBytes(const Problem &p) {
  return size_t(p.n * p.oc * p.oh() * p.ow()) * (p.quantizedOut ? 1 : 4);
}

/// Runs the blocked direct convolution with `tile` on input blocked by
/// `inBlock` and output blocked by `block`, with `threads` threads.
std::vector<uint8_t> runBlocked(const Problem &p, const Data &d, cuvil_qconvb_fn tile,
                                int64_t inBlock, int64_t block, int threads,
                                bool *narrow = nullptr) {
  std::vector<int8_t> packed(
      cuvil_qconvb_packed_bytes(p.oc, p.c, p.kh, p.kw, inBlock, block));
  std::vector<int32_t> sums(p.oc);
  cuvil_qconvb_pack(p.oc, p.c, p.kh, p.kw, d.weights.data(), inBlock, block,
                    packed.data(), sums.data());
  if (narrow)
    *narrow = cuvil_int8_pairs_are_narrow(packed.data(), packed.size());
  std::vector<uint8_t> x = toBlocked(d.x, p.n, p.c, p.h * p.w, inBlock);
  std::vector<uint8_t> scratch(cuvil_qconvb_scratch_bytes(
      p.c, inBlock, p.xSigned, p.h, p.w, p.kh, p.kw, p.sh, p.sw, p.pt, p.pl,
      p.dh, p.dw, p.oh(), p.ow()));
  std::vector<float> residual = blockedResidual(p, d, block);
  std::vector<uint8_t> residual8 = blockedResidual8(p, d, block);
  cuvil_epilogue e = epilogueOf(p, d, residual, residual8);
  std::vector<uint8_t> out(outputBytes(p), 0xcd);
  cuvil_pool *pool = threads > 1 ? cuvil_pool_create(threads) : nullptr;
  cuvil_qconv2d_blocked(tile, pool, scratch.data(), p.n, p.c, p.h, p.w,
                        x.data(), inBlock, p.xSigned, p.xZero, p.oc, p.kh,
                        p.kw, packed.data(), sums.data(), d.scale.data(),
                        p.bias ? d.bias.data() : nullptr, p.sh, p.sw, p.pt,
                        p.pl, p.dh, p.dw, p.oh(), p.ow(), out.data(), block,
                        p.quantizedOut ? &d.qout : nullptr, &e);
  if (pool)
    cuvil_pool_destroy(pool);
  return out;
}

/// `p` with residuals past every bound (NaN, infinities, beyond int32 once
/// divided by the output scale): clipped to int8 of a negative zero point,
/// ReLU to uint8, and clipped to float32.
std::vector<Problem> extremeProblems(Problem p) {
  p.extremes = true;
  p.w = 23;
  p.activation = CUVIL_ACT_CLIP;
  p.lo = -1e20f;
  p.hi = 1e20f;
  p.quantizedOut = true;
  p.outSigned = true;
  Problem relu = p;
  relu.activation = CUVIL_ACT_RELU;
  relu.outSigned = false;
  Problem floats = p;
  floats.quantizedOut = false;
  return {p, relu, floats};
}

/// The problems every tile runs: input layouts, signedness, windows,
/// epilogues and outputs.
std::vector<Problem> blockedProblems(int64_t block, int weightMax) {
  std::vector<Problem> problems;
  Problem base;
  base.weightMax = weightMax;
  base.oc = 2 * block;
  base.c = block;
  problems.push_back(base); // 3x3, padding 1, ReLU, float32 out
  Problem stem = base;      // plain 3-channel input, 7x7 stride 2
  stem.c = 3;
  stem.h = stem.w = 15;
  stem.kh = stem.kw = 7;
  stem.sh = stem.sw = 2;
  stem.pt = stem.pl = stem.pb = stem.pr = 3;
  stem.oc = block;
  stem.quantizedOut = true;
  problems.push_back(stem);
  Problem wideStem = stem; // rows in several tiles of several widths
  wideStem.h = 9;
  wideStem.w = 61;
  wideStem.quantizedOut = false;
  problems.push_back(wideStem);
  Problem pointwise = base; // 1x1, no padding: read in place
  pointwise.kh = pointwise.kw = 1;
  pointwise.pt = pointwise.pl = pointwise.pb = pointwise.pr = 0;
  pointwise.c = 2 * block;
  pointwise.oc = 3 * block; // one block pair and a single block
  pointwise.w = 23;         // several tiles and a remainder
  pointwise.residual = false;
  pointwise.activation = CUVIL_ACT_NONE;
  pointwise.quantizedOut = true;
  pointwise.outSigned = true;
  problems.push_back(pointwise);
  for (float shift : {0.0f, -300.0f}) { // ties, as the division rounds them
    Problem ties = pointwise;
    ties.ties = true;
    ties.tieBias = shift;
    ties.outSigned = shift == 0.0f;
    ties.weightMax = std::min(weightMax, 3); // sums near the 8-bit range
    problems.push_back(ties);
  }
  Problem strided = base; // int8 input, stride 2, dilation 2, clip
  strided.xSigned = true;
  strided.xZero = -9;
  strided.h = 11;
  strided.w = 13;
  strided.sh = 2;
  strided.dw = 2;
  strided.pr = 0;
  strided.activation = CUVIL_ACT_CLIP;
  strided.lo = -3.0f;
  strided.hi = 5.0f;
  strided.n = 2;
  strided.bias = false;
  strided.quantizedOut = true;
  problems.push_back(strided);
  Problem any = base; // arbitrary scales
  any.exactScales = false;
  any.n = 2;
  problems.push_back(any);
  Problem anyQ = any;
  anyQ.quantizedOut = true;
  problems.push_back(anyQ);
  for (Problem extreme : extremeProblems(base))
    problems.push_back(extreme);
  // Stride 2 across rows as well (the constant-offset tiles of blocks of 8
  // at stride 2): 3x3 padded, and 1x1 read in place.
  for (int64_t k : {3, 1}) {
    Problem s2 = base;
    s2.kh = s2.kw = k;
    s2.pt = s2.pl = s2.pb = s2.pr = k / 2;
    s2.sh = s2.sw = 2;
    s2.w = 37;
    s2.h = 9;
    s2.residual = k == 3;
    s2.quantizedOut = true;
    problems.push_back(s2);
  }
  // 8-bit residuals (a shortcut the next block reads as the bytes its
  // convolution does): uint8 into a requantized ReLU, int8 into float32
  // out, and through 3x3 windows.
  for (int kind : {8, -8}) {
    Problem shortcut = pointwise;
    shortcut.residual = true;
    shortcut.residual8 = kind;
    shortcut.activation = CUVIL_ACT_RELU;
    shortcut.quantizedOut = kind > 0;
    shortcut.outSigned = false;
    problems.push_back(shortcut);
    Problem window = base;
    window.residual8 = kind;
    window.exactScales = kind > 0;
    window.quantizedOut = true;
    problems.push_back(window);
  }
  // Requantized clips folded into the 8-bit range's clamp: one crossing
  // its top, one wholly above it (every output the top byte).
  for (float lo : {2.0f, 100.0f}) {
    Problem clip = pointwise;
    clip.activation = CUVIL_ACT_CLIP;
    clip.lo = lo;
    clip.hi = lo == 2.0f ? 1e6f : 200.0f;
    clip.outSigned = false;
    problems.push_back(clip);
  }
  return problems;
}

TEST(QconvTest, BlockedTilesMatchADirectIntegerConvolution) {
  std::mt19937 rng(7);
  int tested = 0;
  for (const Tile &t : tiles()) {
    if (!cpuHas(t.features)) {
      std::printf("skipping %s: this CPU lacks %s\n", t.name, t.features.c_str());
      continue;
    }
    ++tested;
    for (int64_t block : {8, 16})
      for (const Problem &p : blockedProblems(block, t.narrowOnly ? 64 : 127)) {
        Data d = makeData(p, rng);
        for (int64_t inBlock : {int64_t(1), int64_t(8), int64_t(16)}) {
          if (inBlock > block || p.c % inBlock != 0)
            continue;
          bool narrow = false;
          std::vector<uint8_t> out = runBlocked(p, d, t.fn, inBlock, block, 1, &narrow);
          ASSERT_EQ(narrow, p.weightMax <= 64);
          expectMatches(p, d, out, block,
                        std::string(t.name) + " block " + std::to_string(block) +
                            " in_block " + std::to_string(inBlock) + " " +
                            std::to_string(p.kh) + "x" + std::to_string(p.kw));
          // Any split over threads gives the same bytes.
          EXPECT_EQ(runBlocked(p, d, t.fn, inBlock, block, 3), out) << t.name;
        }
      }
  }
  EXPECT_GE(tested, 1);
}

TEST(QconvTest, PackedWeightsLayout) {
  // OC 8, C 5 (ib 4: two planes, the second zero past channel 4), 1x2.
  const int64_t oc = 8, c = 5, kh = 1, kw = 2;
  std::vector<int8_t> w(oc * c * kh * kw);
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = int8_t(i % 100);
  std::vector<int8_t> packed(cuvil_qconvb_packed_bytes(oc, c, kh, kw, 1, 8));
  std::vector<int32_t> sums(oc);
  ASSERT_EQ(packed.size(), size_t(1 * 2 * 2 * 1 * 8 * 4));
  cuvil_qconvb_pack(oc, c, kh, kw, w.data(), 1, 8, packed.data(), sums.data());
  // [o / 8][i / 4][tap][lane / 4][o % 8][lane % 4]
  auto at = [](int64_t o, int64_t i, int64_t t) {
    return (((i / 4) * 2 + t) * 8 + o) * 4 + i % 4;
  };
  EXPECT_EQ(packed[at(3, 2, 1)], w[(3 * c + 2) * 2 + 1]);
  EXPECT_EQ(packed[at(7, 4, 0)], w[(7 * c + 4) * 2 + 0]);
  EXPECT_EQ(packed[at(7, 5, 0)], 0); // channel 5: padding
  int32_t sum = 0;
  for (int64_t i = 0; i < c * kh * kw; ++i)
    sum += w[6 * c * kh * kw + i];
  EXPECT_EQ(sums[6], sum);
}

/// The depthwise kernel on NCHW<block>c (block 1: NCHW).
std::vector<uint8_t> runDepthwise(const Problem &p, const Data &d, int64_t block,
                                  int threads) {
  std::vector<float> packed(p.c * p.kh * p.kw);
  cuvil_qdwconv_pack(p.c, p.kh, p.kw, d.weights.data(), block, packed.data());
  std::vector<uint8_t> x = toBlocked(d.x, p.n, p.c, p.h * p.w, block);
  std::vector<float> residual = blockedResidual(p, d, block);
  std::vector<uint8_t> residual8 = blockedResidual8(p, d, block);
  cuvil_epilogue e = epilogueOf(p, d, residual, residual8);
  std::vector<uint8_t> out(outputBytes(p), 0xcd);
  cuvil_pool *pool = threads > 1 ? cuvil_pool_create(threads) : nullptr;
  cuvil_qdwconv(pool, p.n, p.c, p.h, p.w, x.data(), p.xSigned, p.xZero, p.kh,
                p.kw, packed.data(), d.scale.data(),
                p.bias ? d.bias.data() : nullptr, p.sh, p.sw, p.pt, p.pl, p.dh,
                p.dw, p.oh(), p.ow(), out.data(), block,
                p.quantizedOut ? &d.qout : nullptr, &e);
  if (pool)
    cuvil_pool_destroy(pool);
  return out;
}

TEST(QconvTest, DepthwiseMatchesADirectIntegerConvolution) {
  std::mt19937 rng(5);
  for (int64_t block : {1, 8, 16}) {
    Problem p;
    p.c = p.oc = p.groups = 32;
    p.w = 21; // full 8-column groups and edges
    std::vector<Problem> problems = {p};
    Problem s2 = p; // 5x5 stride 2, int8 in and out, clip
    s2.kh = s2.kw = 5;
    s2.pt = s2.pl = s2.pb = s2.pr = 2;
    s2.sh = s2.sw = 2;
    s2.xSigned = true;
    s2.xZero = 4;
    s2.activation = CUVIL_ACT_CLIP;
    s2.lo = 0.0f;
    s2.hi = 6.0f;
    s2.quantizedOut = true;
    s2.outSigned = true;
    problems.push_back(s2);
    Problem dil = p; // dilation 2, uint8 out, no bias or residual
    dil.dh = dil.dw = 2;
    dil.pt = dil.pl = dil.pb = dil.pr = 2;
    dil.bias = dil.residual = false;
    dil.quantizedOut = true;
    dil.n = 2;
    problems.push_back(dil);
    Problem any = p;
    any.exactScales = false;
    problems.push_back(any);
    // The unrolled groups of 3x3 and 5x5 windows at strides 1 and 2: rows
    // whose last group stores fewer than 8 columns, edges read from padded
    // copies, int8 and uint8 input.
    for (int64_t k : {3, 5})
      for (int64_t stride : {1, 2}) {
        Problem g = p;
        g.kh = g.kw = k;
        g.pt = g.pl = g.pb = g.pr = k / 2;
        g.sh = g.sw = stride;
        g.w = stride == 1 ? 21 : 37;
        g.h = 5;
        g.residual = false;
        g.xSigned = stride == 2;
        g.xZero = stride == 2 ? -7 : 131;
        g.quantizedOut = k == 3;
        if (stride == 2) { // folded into the requantization's clamp
          g.activation = CUVIL_ACT_CLIP;
          g.lo = -3.0f;
          g.hi = 5.0f;
        }
        problems.push_back(g);
      }
    Problem ties = p; // ties, as the division rounds them
    ties.ties = true;
    ties.residual = false;
    ties.quantizedOut = true;
    ties.weightMax = 3;
    problems.push_back(ties);
    Problem tall = p; // several bands of rows per plane (qdwconv.c)
    tall.h = 70;
    tall.w = 45;
    tall.quantizedOut = true;
    problems.push_back(tall);
    Problem tallS2 = tall; // ... at stride 2, 5x5, whose bands overlap
    tallS2.kh = tallS2.kw = 5;
    tallS2.pt = tallS2.pl = tallS2.pb = tallS2.pr = 2;
    tallS2.sh = tallS2.sw = 2;
    problems.push_back(tallS2);
    Problem narrow = p; // rows narrower than a group, with a residual
    narrow.w = 7;
    narrow.h = 7;
    problems.push_back(narrow);
    Problem tiny = narrow; // 5x5 window wider than the 3-wide image
    tiny.w = 3;
    tiny.kh = tiny.kw = 5;
    tiny.pt = tiny.pl = tiny.pb = tiny.pr = 2;
    tiny.quantizedOut = true;
    problems.push_back(tiny);
    for (Problem extreme : extremeProblems(p))
      problems.push_back(extreme);
    for (int kind : {8, -8}) { // 8-bit residuals, quantized out or not
      Problem shortcut = p;
      shortcut.residual8 = kind;
      shortcut.quantizedOut = kind > 0;
      problems.push_back(shortcut);
    }
    for (size_t i = 0; i < problems.size(); ++i) {
      const Problem &q = problems[i];
      Data d = makeData(q, rng);
      std::vector<uint8_t> out = runDepthwise(q, d, block, 1);
      expectMatches(q, d, out, block,
                    "depthwise problem " + std::to_string(i) + " block " +
                        std::to_string(block));
      EXPECT_EQ(runDepthwise(q, d, block, 3), out);
    }
  }
}

TEST(QconvTest, Im2colMatchesADirectIntegerConvolution) {
  std::mt19937 rng(21);
  Problem p;
  p.n = 2;
  p.c = 3;
  p.h = 9;
  p.w = 7;
  p.oc = 5;
  p.kh = 3;
  p.kw = 2;
  p.sh = 2;
  p.dw = 2;
  p.pb = 0;
  p.xSigned = true;
  p.xZero = -17;
  Problem grouped = p; // 3 groups of 2 channels in, 3 out
  grouped.c = 6;
  grouped.oc = 9;
  grouped.groups = 3;
  grouped.xSigned = false;
  grouped.xZero = 3;
  Problem shortcut = grouped; // an int8 residual
  shortcut.residual8 = -8;
  for (Problem q : {p, grouped, shortcut})
    for (bool quantized : {false, true}) {
      q.quantizedOut = quantized;
      Data d = makeData(q, rng);
      const int64_t og = q.oc / q.groups, k = q.icPerGroup() * q.kh * q.kw;
      // Per group, B [C/G * KH * KW][O/G]: row (ch * KH + i) * KW + j,
      // column o; the groups one after another.
      const size_t groupBytes = cuvil_qgemm_packed_bytes(k, og);
      std::vector<int8_t> packed(cuvil_qconv2d_packed_bytes(q.oc, q.c, q.kh, q.kw, q.groups));
      ASSERT_EQ(packed.size(), q.groups * groupBytes);
      std::vector<int32_t> sums(q.oc);
      for (int64_t g = 0; g < q.groups; ++g) {
        std::vector<int8_t> b(k * og);
        for (int64_t o = 0; o < og; ++o)
          for (int64_t r = 0; r < k; ++r)
            b[r * og + o] = d.weights[(g * og + o) * k + r];
        cuvil_qgemm_pack_b(k, og, b.data(), og, packed.data() + g * groupBytes,
                           sums.data() + g * og);
      }
      std::vector<uint8_t> scratch(
          cuvil_qconv2d_scratch_bytes(q.c, q.kh, q.kw, q.oh(), q.ow(), q.groups));
      cuvil_epilogue e = epilogueOf(q, d, d.residual, d.residual8);
      cuvil_pool *pool = cuvil_pool_create(2);
      std::vector<uint8_t> out(outputBytes(q), 0xcd);
      cuvil_qconv2d(pool, CUVIL_QGEMM4, q.n, q.c, q.h, q.w, d.x.data(), q.xSigned, q.xZero,
                    q.oc, q.kh, q.kw, q.groups, packed.data(), sums.data(), d.scale.data(),
                    d.bias.data(), q.sh, q.sw, q.pt, q.pl, q.dh, q.dw, q.oh(), q.ow(),
                    out.data(), scratch.data(), quantized ? &d.qout : nullptr, &e);
      cuvil_pool_destroy(pool);
      expectMatches(q, d, out, 1,
                    std::string(quantized ? "im2col, uint8 out" : "im2col") + ", " +
                        std::to_string(q.groups) + " groups");
    }
}

} // namespace
