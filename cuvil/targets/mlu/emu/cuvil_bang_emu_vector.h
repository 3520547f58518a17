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

#undef CUVIL_EMU_VECTOR_FUNCTIONS
#undef CUVIL_EMU_BINARY
#undef CUVIL_EMU_SCALAR
#undef CUVIL_EMU_UNARY
#undef CUVIL_EMU_CYCLE

#endif // CUVIL_TARGETS_MLU_EMU_CUVIL_BANG_EMU_VECTOR_H
