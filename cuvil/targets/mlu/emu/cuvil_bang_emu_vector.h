//===- cuvil_bang_emu_vector.h - BANG C vector functions, emulated -*- C++ -*-===//
//
// Part of cuvil_bang_emu.h, which includes it (then cuvil_bang_emu_cnrt.h)
// after its core; not to be included alone. The __bang_* functions Cuvil's
// kernels call, on NRAM operands, checked for alignment and bounds.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_TARGETS_MLU_EMU_CUVIL_BANG_EMU_VECTOR_H
#define CUVIL_TARGETS_MLU_EMU_CUVIL_BANG_EMU_VECTOR_H

#ifndef CUVIL_TARGETS_MLU_EMU_CUVIL_BANG_EMU_H
#error "include cuvil_bang_emu.h, which includes this part"
#endif

//===----------------------------------------------------------------------===//
// Vector functions (float and half, NRAM operands)
//===----------------------------------------------------------------------===//

namespace cuvil_emu {

template <class T>
inline void checkLength(const char *fn, const char *what, int n) {
  if (n <= 0)
    fail("%s: %s = %d; the element count must be positive", fn, what, n);
  if (size_t(n) * sizeof(T) % kVectorLengthBytes)
    fail("%s: %s = %d elements of %zu bytes = %zu bytes, not a multiple of "
         "%zu bytes; pad it to a multiple of %zu elements",
         fn, what, n, sizeof(T), size_t(n) * sizeof(T), kVectorLengthBytes,
         kVectorLengthBytes / sizeof(T));
}

template <class T>
inline void checkOperand(const char *fn, const char *role, const T *p, int n,
                         bool write) {
  currentTask(fn);
  if (addr(p) % kVectorAlignBytes)
    fail("%s: %s %p is not %zu-byte aligned; vector operands start on a "
         "%zu-byte boundary (offsets into a buffer: multiples of %zu elements)",
         fn, role, static_cast<const void *>(p), kVectorAlignBytes,
         kVectorAlignBytes, kVectorAlignBytes / sizeof(T));
  Access a{reinterpret_cast<unsigned char *>(const_cast<T *>(p)),
           n * static_cast<long long>(sizeof(T)), 0, 1};
  checkAccess(fn, role, write, a, Space::Nram);
}

// Half operands are computed in float, each result rounded to half.
template <class T, class F>
inline void binary(const char *fn, T *dst, const T *a, const T *b, int n, F f) {
  checkLength<T>(fn, "n", n);
  checkOperand(fn, "src0", a, n, false);
  checkOperand(fn, "src1", b, n, false);
  checkOperand(fn, "dst", dst, n, true);
  for (int i = 0; i < n; ++i)
    dst[i] = T(f(float(a[i]), float(b[i])));
}

template <class T, class F>
inline void unary(const char *fn, T *dst, const T *src, int n, F f) {
  checkLength<T>(fn, "n", n);
  checkOperand(fn, "src", src, n, false);
  checkOperand(fn, "dst", dst, n, true);
  for (int i = 0; i < n; ++i)
    dst[i] = T(f(float(src[i])));
}

// `cycle` (cycleN values) repeats along src's n values.
template <class T, class F>
inline void cycled(const char *fn, T *dst, const T *src, const T *cycle, int n,
                   int cycleN, F f) {
  checkLength<T>(fn, "n", n);
  checkLength<T>(fn, "cycle_n", cycleN);
  if (n % cycleN)
    fail("%s: n = %d is not a multiple of cycle_n = %d", fn, n, cycleN);
  checkOperand(fn, "src", src, n, false);
  checkOperand(fn, "cycle", cycle, cycleN, false);
  checkOperand(fn, "dst", dst, n, true);
  std::vector<T> period(cycle, cycle + cycleN); // dst may overlap it
  for (int i = 0; i < n; ++i)
    dst[i] = T(f(float(src[i]), float(period[size_t(i % cycleN)])));
}

template <class T> inline void fill(T *dst, int n, T value) {
  checkLength<T>("__bang_write_value", "n", n);
  checkOperand("__bang_write_value", "dst", dst, n, true);
  std::fill(dst, dst + n, value);
}

} // namespace cuvil_emu

// One overload per operand type, as in BANG C, so that a scalar argument
// converts to the operands' type. The lambdas compute on floats.
#define CUVIL_EMU_BINARY(T, NAME, EXPR)                                        \
  inline void NAME(T *dst, const T *src0, const T *src1, int n) {              \
    cuvil_emu::binary(#NAME, dst, src0, src1, n,                               \
                      [](float a, float b) { return EXPR; });                  \
  }
#define CUVIL_EMU_SCALAR(T, NAME, EXPR)                                        \
  inline void NAME(T *dst, const T *src, T value, int n) {                     \
    cuvil_emu::unary(#NAME, dst, src, n,                                       \
                     [b = float(value)](float a) { return EXPR; });            \
  }
#define CUVIL_EMU_UNARY(T, NAME, EXPR)                                         \
  inline void NAME(T *dst, const T *src, int n) {                              \
    cuvil_emu::unary(#NAME, dst, src, n, [](float a) { return EXPR; });        \
  }
#define CUVIL_EMU_CYCLE(T, NAME, EXPR)                                         \
  inline void NAME(T *dst, const T *src, const T *cycle, int n, int cycle_n) { \
    cuvil_emu::cycled(#NAME, dst, src, cycle, n, cycle_n,                      \
                      [](float a, float b) { return EXPR; });                  \
  }
// NaN passes through relu, so poisoned data stays visible.
#define CUVIL_EMU_VECTOR_FUNCTIONS(T)                                          \
  CUVIL_EMU_BINARY(T, __bang_add, a + b)                                       \
  CUVIL_EMU_BINARY(T, __bang_sub, a - b)                                       \
  CUVIL_EMU_BINARY(T, __bang_mul, (a * b))                                     \
  CUVIL_EMU_BINARY(T, __bang_maxequal, std::max(a, b))                         \
  CUVIL_EMU_BINARY(T, __bang_minequal, std::min(a, b))                         \
  CUVIL_EMU_SCALAR(T, __bang_add_scalar, a + b)                                \
  CUVIL_EMU_SCALAR(T, __bang_mul_scalar, (a * b))                              \
  CUVIL_EMU_UNARY(T, __bang_active_relu, a < 0.0f ? 0.0f : a)                  \
  CUVIL_EMU_UNARY(T, __bang_relu, a < 0.0f ? 0.0f : a)                         \
  CUVIL_EMU_UNARY(T, __bang_active_exp, std::exp(a))                           \
  CUVIL_EMU_UNARY(T, __bang_active_recip, 1.0f / a)                            \
  CUVIL_EMU_UNARY(T, __bang_active_sigmoid, 1.0f / (1.0f + std::exp(-a)))      \
  CUVIL_EMU_UNARY(T, __bang_active_tanh, std::tanh(a))                         \
  CUVIL_EMU_CYCLE(T, __bang_cycle_add, a + b)                                  \
  CUVIL_EMU_CYCLE(T, __bang_cycle_mul, (a * b))                                \
  inline void __bang_write_value(T *dst, int n, T value) {                     \
    cuvil_emu::fill(dst, n, value);                                            \
  }

CUVIL_EMU_VECTOR_FUNCTIONS(float)
CUVIL_EMU_VECTOR_FUNCTIONS(half)

// Conversions: a float32 row from a float16 one (exact) and back, rounded
// to nearest even (BANG C's _rn). Both rows are vector operands: whole
// 128 bytes of the float16 side, and of the float32 side.
inline void __bang_half2float(float *dst, const half *src, int n) {
  cuvil_emu::checkLength<half>("__bang_half2float", "n", n);
  cuvil_emu::checkOperand("__bang_half2float", "src", src, n, false);
  cuvil_emu::checkOperand("__bang_half2float", "dst", dst, n, true);
  std::vector<half> in(src, src + n); // dst may overlap it
  for (int i = 0; i < n; ++i)
    dst[i] = float(in[size_t(i)]);
}
inline void __bang_float2half_rn(half *dst, const float *src, int n) {
  cuvil_emu::checkLength<half>("__bang_float2half_rn", "n", n);
  cuvil_emu::checkOperand("__bang_float2half_rn", "src", src, n, false);
  cuvil_emu::checkOperand("__bang_float2half_rn", "dst", dst, n, true);
  std::vector<float> in(src, src + n);
  for (int i = 0; i < n; ++i)
    dst[i] = half(in[size_t(i)]);
}

//===----------------------------------------------------------------------===//
// Fixed point: conversions with a position, and the tensor unit
//===----------------------------------------------------------------------===//
//
// A fixed-point value q with position p stands for q * 2^p (BANG C's
// fix_position; MLU2xx's int8 and int16 tensors). Documented in Cambricon's
// bang_device_functions_decls.h: float -> fixed divides by 2^p and rounds
// as the suffix says (_rd to nearest with ties away from zero, _tz toward
// zero, _dn down, _up up, _oz away from zero; _rn needs a newer MLU);
// __bang_conv and __bang_mlp multiply integer tensors, src and dst in NRAM
// and the weights in WRAM, and scale the sums by 2^fix_position, the sum of
// the operands' positions, in [-127, 127]. Not documented, and chosen
// here: values past the integer type saturate, NaN converts to 0, and the
// tensor unit's sums are exact, scaled and biased in double and rounded
// once to the destination type. On MLU2xx the conversions take counts of
// whole 128 elements on 64-byte aligned operands, and the tensor unit
// input channels of whole 64 bytes and output channels in multiples of 64.

namespace cuvil_emu {

enum class Rounding { Rd, Tz, Dn, Up, Oz };

inline double roundAs(Rounding mode, double x) {
  switch (mode) {
  case Rounding::Rd:
    return std::round(x);
  case Rounding::Tz:
    return std::trunc(x);
  case Rounding::Dn:
    return std::floor(x);
  case Rounding::Up:
    return std::ceil(x);
  case Rounding::Oz:
    return x < 0 ? std::floor(x) : std::ceil(x);
  }
  return x;
}

inline void checkPosition(const char *fn, int position) {
  if (position < -127 || position > 127)
    fail("%s: fix_position %d is outside [-127, 127]", fn, position);
}

inline void checkFixedCount(const char *fn, int n) {
  if (n <= 0 || n % 128)
    fail("%s: n = %d is not a positive multiple of 128 elements (MLU2xx's "
         "conversions); pad it to %d",
         fn, n, n <= 0 ? 128 : (n + 127) / 128 * 128);
}

template <class I, class F>
inline void toFixed(const char *fn, I *dst, const F *src, int n, int position,
                    Rounding mode) {
  checkFixedCount(fn, n);
  checkPosition(fn, position);
  checkOperand(fn, "src", src, n, false);
  checkOperand(fn, "dst", dst, n, true);
  std::vector<F> in(src, src + n); // dst may overlap it
  const double lo = std::numeric_limits<I>::min(),
               hi = std::numeric_limits<I>::max();
  for (int i = 0; i < n; ++i) {
    double x = double(in[size_t(i)]);
    double q = x != x ? 0.0 : roundAs(mode, std::ldexp(x, -position));
    dst[i] = I(q < lo ? lo : q > hi ? hi : q);
  }
}

template <class F, class I>
inline void fromFixed(const char *fn, F *dst, const I *src, int n,
                      int position) {
  checkFixedCount(fn, n);
  checkPosition(fn, position);
  checkOperand(fn, "src", src, n, false);
  checkOperand(fn, "dst", dst, n, true);
  std::vector<I> in(src, src + n);
  for (int i = 0; i < n; ++i)
    dst[i] = F(std::ldexp(double(in[size_t(i)]), position));
}

/// Checks a WRAM operand of `bytes` (tensor-unit weights: 32-byte aligned).
inline void checkWeights(const char *fn, const void *p, long long bytes) {
  currentTask(fn);
  if (addr(p) % 32)
    fail("%s: the weights %p are not 32-byte aligned", fn, p);
  Access a{reinterpret_cast<unsigned char *>(const_cast<void *>(p)), bytes, 0,
           1};
  checkAccess(fn, "weights", false, a, Space::Wram);
}

template <class S>
inline void checkInputChannels(const char *fn, const char *what, int c) {
  if (c <= 0 || size_t(c) * sizeof(S) % 64)
    fail("%s: %s = %d of %zu-byte values is not a positive multiple of 64 "
         "bytes; pad it to %zu",
         fn, what, c, sizeof(S),
         (size_t(c > 0 ? c : 1) * sizeof(S) + 63) / 64 * 64 / sizeof(S));
}

inline void checkOutputChannels(const char *fn, const char *what, int c) {
  if (c <= 0 || c % 64)
    fail("%s: %s = %d is not a positive multiple of 64; pad it to %d", fn, what,
         c, c <= 0 ? 64 : (c + 63) / 64 * 64);
}

// dst[o] = (sum_k src[k] * weight[o * width + k]) * 2^position + bias[o].
template <class D, class S, class W>
inline void mlp(D *dst, const S *src, const D *bias, const W *weight,
                int height, int width, int position) {
  const char *fn = "__bang_mlp";
  checkOutputChannels(fn, "height", height);
  checkInputChannels<S>(fn, "width", width);
  checkPosition(fn, position);
  checkOperand(fn, "src", src, width, false);
  if (bias)
    checkOperand(fn, "bias", bias, height, false);
  checkWeights(fn, weight, (long long)height * width * sizeof(W));
  checkOperand(fn, "dst", dst, height, true);
  std::vector<D> out(size_t(height), D(0));
  for (int o = 0; o < height; ++o) {
    long long sum = 0;
    for (int k = 0; k < width; ++k)
      sum += (long long)src[k] * weight[(long long)o * width + k];
    out[size_t(o)] =
        D(std::ldexp(double(sum), position) + (bias ? double(bias[o]) : 0.0));
  }
  std::copy(out.begin(), out.end(), dst);
}

// src [height][width][ci], kernel [co][kh][kw][ci], dst [oh][ow][co], no
// padding: oh = (height - kh) / stride_h + 1, likewise ow.
template <class D, class S, class W>
inline void conv(D *dst, const S *src, const W *kernel, const D *bias, int ci,
                 int height, int width, int kh, int kw, int stride_w,
                 int stride_h, int co, int position) {
  const char *fn = "__bang_conv";
  checkInputChannels<S>(fn, "channel_input", ci);
  checkOutputChannels(fn, "channel_output", co);
  checkPosition(fn, position);
  if (kh <= 0 || kw <= 0 || stride_h <= 0 || stride_w <= 0 || height < kh ||
      width < kw)
    fail("%s: a %dx%d window at strides %d (height), %d (width) does not fit "
         "a %dx%d input",
         fn, kh, kw, stride_h, stride_w, height, width);
  const int oh = (height - kh) / stride_h + 1, ow = (width - kw) / stride_w + 1;
  checkOperand(fn, "src", src, height * width * ci, false);
  if (bias)
    checkOperand(fn, "bias", bias, co, false);
  checkWeights(fn, kernel, (long long)co * kh * kw * ci * sizeof(W));
  checkOperand(fn, "dst", dst, oh * ow * co, true);
  std::vector<D> out(size_t(oh) * ow * co, D(0));
  for (int y = 0; y < oh; ++y)
    for (int x = 0; x < ow; ++x)
      for (int o = 0; o < co; ++o) {
        long long sum = 0;
        for (int ky = 0; ky < kh; ++ky)
          for (int kx = 0; kx < kw; ++kx) {
            const S *in = src + ((long long)(y * stride_h + ky) * width +
                                 x * stride_w + kx) *
                                    ci;
            const W *w = kernel + (((long long)o * kh + ky) * kw + kx) * ci;
            for (int c = 0; c < ci; ++c)
              sum += (long long)in[c] * w[c];
          }
        out[(size_t(y) * ow + x) * co + o] = D(
            std::ldexp(double(sum), position) + (bias ? double(bias[o]) : 0.0));
      }
  std::copy(out.begin(), out.end(), dst);
}

} // namespace cuvil_emu

#define CUVIL_EMU_TO_FIXED(F, FNAME, I, INAME, MODE, SUFFIX)                   \
  inline void __bang_##FNAME##2##INAME##_##SUFFIX(I *dst, const F *src, int n, \
                                                  int fix_position) {          \
    cuvil_emu::toFixed("__bang_" #FNAME "2" #INAME "_" #SUFFIX, dst, src, n,   \
                       fix_position, cuvil_emu::Rounding::MODE);               \
  }
#define CUVIL_EMU_TO_FIXED_MODES(F, FNAME, I, INAME)                           \
  CUVIL_EMU_TO_FIXED(F, FNAME, I, INAME, Rd, rd)                               \
  CUVIL_EMU_TO_FIXED(F, FNAME, I, INAME, Tz, tz)                               \
  CUVIL_EMU_TO_FIXED(F, FNAME, I, INAME, Dn, dn)                               \
  CUVIL_EMU_TO_FIXED(F, FNAME, I, INAME, Up, up)                               \
  CUVIL_EMU_TO_FIXED(F, FNAME, I, INAME, Oz, oz)                               \
  inline void __bang_##INAME##2##FNAME(F *dst, const I *src, int n,            \
                                       int fix_position) {                     \
    cuvil_emu::fromFixed("__bang_" #INAME "2" #FNAME, dst, src, n,             \
                         fix_position);                                        \
  }
CUVIL_EMU_TO_FIXED_MODES(float, float, int8_t, int8)
CUVIL_EMU_TO_FIXED_MODES(float, float, int16_t, int16)
CUVIL_EMU_TO_FIXED_MODES(half, half, int8_t, int8)
CUVIL_EMU_TO_FIXED_MODES(half, half, int16_t, int16)
#undef CUVIL_EMU_TO_FIXED_MODES
#undef CUVIL_EMU_TO_FIXED

// The tensor unit, for each destination, input and weight type of MLU2xx's
// table (int8 x int8, int16 x int8, int16 x int16 into half or float).
#define CUVIL_EMU_TENSOR_UNIT(D, S, W)                                         \
  inline void __bang_mlp(D *dst, const S *src, const W *weight, int height,    \
                         int width, int fix_position) {                        \
    cuvil_emu::mlp<D, S, W>(dst, src, nullptr, weight, height, width,          \
                            fix_position);                                     \
  }                                                                            \
  inline void __bang_mlp(D *dst, const S *src, const D *bias, const W *weight, \
                         int height, int width, int fix_position) {            \
    cuvil_emu::mlp<D, S, W>(dst, src, bias, weight, height, width,             \
                            fix_position);                                     \
  }                                                                            \
  inline void __bang_conv(                                                     \
      D *dst, const S *src, const W *kernel, int channel_input, int height,    \
      int width, int kernel_height, int kernel_width, int stride_width,        \
      int stride_height, int channel_output, int fix_position) {               \
    cuvil_emu::conv<D, S, W>(dst, src, kernel, nullptr, channel_input, height, \
                             width, kernel_height, kernel_width, stride_width, \
                             stride_height, channel_output, fix_position);     \
  }                                                                            \
  inline void __bang_conv(D *dst, const S *src, const W *kernel,               \
                          const D *bias, int channel_input, int height,        \
                          int width, int kernel_height, int kernel_width,      \
                          int stride_width, int stride_height,                 \
                          int channel_output, int fix_position) {              \
    cuvil_emu::conv<D, S, W>(dst, src, kernel, bias, channel_input, height,    \
                             width, kernel_height, kernel_width, stride_width, \
                             stride_height, channel_output, fix_position);     \
  }
CUVIL_EMU_TENSOR_UNIT(float, int8_t, int8_t)
CUVIL_EMU_TENSOR_UNIT(float, int16_t, int8_t)
CUVIL_EMU_TENSOR_UNIT(float, int16_t, int16_t)
CUVIL_EMU_TENSOR_UNIT(half, int8_t, int8_t)
CUVIL_EMU_TENSOR_UNIT(half, int16_t, int8_t)
CUVIL_EMU_TENSOR_UNIT(half, int16_t, int16_t)
#undef CUVIL_EMU_TENSOR_UNIT

#undef CUVIL_EMU_VECTOR_FUNCTIONS
#undef CUVIL_EMU_BINARY
#undef CUVIL_EMU_SCALAR
#undef CUVIL_EMU_UNARY
#undef CUVIL_EMU_CYCLE

#endif // CUVIL_TARGETS_MLU_EMU_CUVIL_BANG_EMU_VECTOR_H
