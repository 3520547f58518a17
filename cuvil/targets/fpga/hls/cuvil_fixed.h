//===- cuvil_fixed.h - fixed-point numbers for generated HLS C++ -*- C++ -*-===//
//
// cuvil::fixed<W, I, S, Q, O>: a W-bit two's complement (S) or unsigned
// number with I integer bits (the sign included) and F = W - I fraction
// bits, the value raw * 2^-F. Its semantics are those Xilinx documents for
// ap_fixed<W, I, Q, O> / ap_ufixed and Intel (Mentor) for ac_fixed<W, I, S,
// Q, O>, so that generated code computes the same bits with either:
//
//  - arithmetic is exact: a + b, a - b and a * b have a type wide enough
//    for every result (the vendor libraries' rules below), so nothing is
//    rounded or wrapped until a value is assigned to a narrower type;
//  - assignment (construction, operator=, +=, ...) quantizes the fraction
//    bits the target lacks by Q, then fits the integer bits by O:
//      TRN         floor                    TRN_ZERO    toward zero
//      RND         ties toward +infinity    RND_ZERO    ties toward zero
//      RND_MIN_INF ties toward -infinity    RND_INF     ties away from zero
//      RND_CONV    ties to even
//      WRAP        keep the low W bits      SAT         clamp to [min, max]
//      SAT_ZERO    0 if out of range        SAT_SYM     clamp to [-max, max]
//    (SAT_SYM also maps a signed type's most negative value to -max, as
//    both libraries do.) A double converts exactly, then the same way.
//
// Limits: W <= 64 for every type, the results of arithmetic included (a
// compile-time error beyond); the vendor types' saturation-bit count N is
// 0. Defining CUVIL_FIXED_USE_VENDOR makes `cuvil::fixed` the vendor type
// (ap_fixed.h, or ac_fixed.h with CUVIL_FIXED_USE_AC; oneAPI's own with
// CUVIL_FIXED_ONEAPI too) for synthesis.
//
// Header-only C++14, no dependency but <cstdint> and <cmath>; the generated
// projects carry a copy.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_FIXED_H
#define CUVIL_FIXED_H

#include <cmath>
#include <cstdint>

namespace cuvil {

enum class Q { TRN, TRN_ZERO, RND, RND_ZERO, RND_MIN_INF, RND_INF, RND_CONV };
enum class O { WRAP, SAT, SAT_ZERO, SAT_SYM };

} // namespace cuvil

#ifdef CUVIL_FIXED_USE_VENDOR
/* Each mode as the vendor's enumerator: PREFIX_TRN, PREFIX_SAT, ... */
#define CUVIL_FIXED_VENDOR_MODES(PREFIX, QTYPE, OTYPE)                         \
  template <Q q> struct VendorQ;                                               \
  template <O o> struct VendorO;                                               \
  CUVIL_FIXED_VENDOR_MODE(Q, QTYPE, PREFIX, TRN)                               \
  CUVIL_FIXED_VENDOR_MODE(Q, QTYPE, PREFIX, TRN_ZERO)                          \
  CUVIL_FIXED_VENDOR_MODE(Q, QTYPE, PREFIX, RND)                               \
  CUVIL_FIXED_VENDOR_MODE(Q, QTYPE, PREFIX, RND_ZERO)                          \
  CUVIL_FIXED_VENDOR_MODE(Q, QTYPE, PREFIX, RND_MIN_INF)                       \
  CUVIL_FIXED_VENDOR_MODE(Q, QTYPE, PREFIX, RND_INF)                           \
  CUVIL_FIXED_VENDOR_MODE(Q, QTYPE, PREFIX, RND_CONV)                          \
  CUVIL_FIXED_VENDOR_MODE(O, OTYPE, PREFIX, WRAP)                              \
  CUVIL_FIXED_VENDOR_MODE(O, OTYPE, PREFIX, SAT)                               \
  CUVIL_FIXED_VENDOR_MODE(O, OTYPE, PREFIX, SAT_ZERO)                          \
  CUVIL_FIXED_VENDOR_MODE(O, OTYPE, PREFIX, SAT_SYM)
#define CUVIL_FIXED_VENDOR_MODE(KIND, TYPE, PREFIX, MODE)                      \
  template <> struct Vendor##KIND<KIND::MODE> {                                \
    static const TYPE value = PREFIX##_##MODE;                                 \
  };
#endif

#if defined(CUVIL_FIXED_USE_VENDOR) && defined(CUVIL_FIXED_USE_AC)
#if defined(CUVIL_FIXED_ONEAPI) /* oneAPI ships ac_fixed with SYCL */
#include <sycl/ext/intel/ac_types/ac_fixed.hpp>
#else
#include <ac_fixed.h>
#endif
namespace cuvil {
namespace detail {
CUVIL_FIXED_VENDOR_MODES(AC, ac_q_mode, ac_o_mode)
} // namespace detail
template <int W, int I, bool S = true, Q q = Q::TRN, O o = O::WRAP>
using fixed = ac_fixed<W, I, S, detail::VendorQ<q>::value, detail::VendorO<o>::value>;
} // namespace cuvil
#elif defined(CUVIL_FIXED_USE_VENDOR)
#include <ap_fixed.h>
namespace cuvil {
namespace detail {
CUVIL_FIXED_VENDOR_MODES(AP, ap_q_mode, ap_o_mode)
template <int W, int I, bool S, Q q, O o> struct Vendor {
  typedef ap_fixed<W, I, VendorQ<q>::value, VendorO<o>::value> type;
};
template <int W, int I, Q q, O o> struct Vendor<W, I, false, q, o> {
  typedef ap_ufixed<W, I, VendorQ<q>::value, VendorO<o>::value> type;
};
} // namespace detail
template <int W, int I, bool S = true, Q q = Q::TRN, O o = O::WRAP>
using fixed = typename detail::Vendor<W, I, S, q, o>::type;
} // namespace cuvil
#else

namespace cuvil {

namespace detail {

typedef __int128 wide;

constexpr int maxOf(int a, int b) { return a > b ? a : b; }

/// 2^n as a wide integer (n < 127).
constexpr wide pow2(int n) { return static_cast<wide>(1) << n; }

/// floor(value / 2^shift) adjusted by `q` (for |value| < 2^120): the bits
/// shifted out decide (their first bit `half`, any other bit `rest`), as
/// the libraries' rule for each mode does.
template <Q q> wide quantizeShift(wide value, int shift) {
  if (shift <= 0)
    return value * pow2(-shift); // exact: callers keep it below 2^127
  wide floor;
  bool half, rest;
  if (shift > 120) { // every bit shifted out
    floor = value < 0 ? -1 : 0;
    half = value < 0;
    rest = value != 0;
  } else {
    floor = value >> shift; // arithmetic: floor for negatives too
    wide dropped = value - floor * pow2(shift);
    half = (dropped >> (shift - 1)) & 1;
    rest = (dropped & (pow2(shift - 1) - 1)) != 0;
  }
  bool negative = value < 0, up = false;
  switch (q) {
  case Q::TRN: up = false; break;
  case Q::TRN_ZERO: up = negative && (half || rest); break;
  case Q::RND: up = half; break;
  case Q::RND_ZERO: up = half && (negative || rest); break;
  case Q::RND_MIN_INF: up = half && rest; break;
  case Q::RND_INF: up = half && (!negative || rest); break;
  case Q::RND_CONV: up = half && ((floor & 1) || rest); break;
  }
  return floor + up;
}

/// `value` (an integer count of 2^-F) fitted to W bits by `o`.
template <int W, bool S, O o> int64_t fitRange(wide value) {
  const wide max = S ? pow2(W - 1) - 1 : pow2(W) - 1;
  const wide min = S ? -pow2(W - 1) : 0;
  const wide symMin = (o == O::SAT_SYM && S) ? min + 1 : min;
  switch (o) {
  case O::WRAP: {
    wide low = value & (pow2(W) - 1);
    if (S && low > max)
      low -= pow2(W);
    return static_cast<int64_t>(low);
  }
  case O::SAT_ZERO:
    return value > max || value < min ? 0 : static_cast<int64_t>(value);
  case O::SAT:
  case O::SAT_SYM:
    return static_cast<int64_t>(value > max ? max : value < symMin ? symMin : value);
  }
  return 0;
}

} // namespace detail

template <int W, int I, bool S = true, Q q = Q::TRN, O o = O::WRAP>
class fixed {
  static_assert(W >= 1 && W <= 64, "cuvil::fixed holds 1 to 64 bits");

public:
  static const int width = W;
  static const int iwidth = I;
  static const int fwidth = W - I;
  static const bool is_signed = S;

  fixed() : raw_(0) {}
  /// Another fixed-point value, quantized and fitted to this type.
  template <int W2, int I2, bool S2, Q q2, O o2>
  fixed(const fixed<W2, I2, S2, q2, o2> &other)
      : raw_(fromScaled(other.raw(), W2 - I2)) {}
  /// A double, exactly, then quantized and fitted (NaN is 0).
  fixed(double value) : raw_(fromDouble(value)) {}
  fixed(float value) : raw_(fromDouble(value)) {}
  fixed(int value) : raw_(fromScaled(value, 0)) {}
  fixed(long value) : raw_(fromScaled(value, 0)) {}
  fixed(long long value) : raw_(fromScaled(value, 0)) {}

  /// The value whose stored integer is `raw` (fitted to W bits by O).
  static fixed from_raw(int64_t raw) {
    fixed f;
    f.raw_ = detail::fitRange<W, S, O::WRAP>(raw);
    return f;
  }
  int64_t raw() const { return raw_; }
  double to_double() const { return std::ldexp(static_cast<double>(raw_), -(W - I)); }
  float to_float() const { return static_cast<float>(to_double()); }
  /// The integer part, rounded toward zero (as the vendors' to_int; the
  /// generated code takes it of non-negative values only).
  int to_int() const {
    const int f = W - I;
    if (f <= 0)
      return static_cast<int>(raw_ * static_cast<int64_t>(detail::pow2(-f)));
    return static_cast<int>(raw_ >= 0 ? raw_ >> f : -((-raw_) >> f));
  }

  template <typename T> fixed &operator+=(const T &other) { return *this = *this + other; }
  template <typename T> fixed &operator-=(const T &other) { return *this = *this - other; }
  template <typename T> fixed &operator*=(const T &other) { return *this = *this * other; }

private:
  /// A value beyond every range W <= 64 holds: its low 64 bits are 0.
  static int64_t beyond(bool positive) {
    return o == O::WRAP ? 0
                        : detail::fitRange<W, S, o>(positive ? detail::pow2(100)
                                                             : -detail::pow2(100));
  }

  /// raw / 2^f of another type (f its fraction bits, |raw| < 2^64), here.
  static int64_t fromScaled(detail::wide raw, int f) {
    int shift = f - (W - I);
    if (shift <= -64 && raw != 0)
      return beyond(raw > 0);
    return detail::fitRange<W, S, o>(detail::quantizeShift<q>(raw, shift));
  }

  static int64_t fromDouble(double value) {
    if (value != value)
      return 0;
    if (std::isinf(value))
      return beyond(value > 0);
    int exponent;
    double mantissa = std::frexp(value, &exponent); // |mantissa| in [0.5, 1)
    detail::wide m = static_cast<detail::wide>(std::ldexp(mantissa, 53));
    // value = m * 2^(exponent - 53) exactly, m below 2^53.
    return fromScaled(m, 53 - exponent);
  }

  int64_t raw_;
};

namespace detail {

/// The exact result types of arithmetic, as both vendor libraries define
/// them (a signed operand widens an unsigned one's integer bits by one).
template <int W1, int I1, bool S1, int W2, int I2, bool S2> struct Result {
  static const int F = maxOf(W1 - I1, W2 - I2);
  static const int plusI = maxOf(I1 + (S2 && !S1), I2 + (S1 && !S2)) + 1;
  typedef fixed<W1 + W2, I1 + I2, S1 || S2> mult;
  typedef fixed<plusI + F, plusI, S1 || S2> plus;
  typedef fixed<plusI + F, plusI, true> minus;
};

} // namespace detail

#define CUVIL_FIXED_ARGS int W1, int I1, bool S1, Q q1, O o1, int W2, int I2, bool S2, Q q2, O o2
#define CUVIL_FIXED_A fixed<W1, I1, S1, q1, o1>
#define CUVIL_FIXED_B fixed<W2, I2, S2, q2, o2>
#define CUVIL_FIXED_R detail::Result<W1, I1, S1, W2, I2, S2>

template <CUVIL_FIXED_ARGS>
typename CUVIL_FIXED_R::mult operator*(const CUVIL_FIXED_A &a, const CUVIL_FIXED_B &b) {
  return CUVIL_FIXED_R::mult::from_raw(a.raw() * b.raw());
}

template <CUVIL_FIXED_ARGS>
typename CUVIL_FIXED_R::plus operator+(const CUVIL_FIXED_A &a, const CUVIL_FIXED_B &b) {
  const int F = CUVIL_FIXED_R::F;
  return CUVIL_FIXED_R::plus::from_raw(
      static_cast<int64_t>((static_cast<detail::wide>(a.raw()) << (F - (W1 - I1))) +
                           (static_cast<detail::wide>(b.raw()) << (F - (W2 - I2)))));
}

template <CUVIL_FIXED_ARGS>
typename CUVIL_FIXED_R::minus operator-(const CUVIL_FIXED_A &a, const CUVIL_FIXED_B &b) {
  const int F = CUVIL_FIXED_R::F;
  return CUVIL_FIXED_R::minus::from_raw(
      static_cast<int64_t>((static_cast<detail::wide>(a.raw()) << (F - (W1 - I1))) -
                           (static_cast<detail::wide>(b.raw()) << (F - (W2 - I2)))));
}

/// Comparisons of the exact values.
template <CUVIL_FIXED_ARGS> int compare(const CUVIL_FIXED_A &a, const CUVIL_FIXED_B &b) {
  const int F = detail::maxOf(W1 - I1, W2 - I2);
  detail::wide x = static_cast<detail::wide>(a.raw()) << (F - (W1 - I1));
  detail::wide y = static_cast<detail::wide>(b.raw()) << (F - (W2 - I2));
  return x < y ? -1 : x > y ? 1 : 0;
}
template <CUVIL_FIXED_ARGS> bool operator<(const CUVIL_FIXED_A &a, const CUVIL_FIXED_B &b) {
  return compare(a, b) < 0;
}
template <CUVIL_FIXED_ARGS> bool operator>(const CUVIL_FIXED_A &a, const CUVIL_FIXED_B &b) {
  return compare(a, b) > 0;
}
template <CUVIL_FIXED_ARGS> bool operator<=(const CUVIL_FIXED_A &a, const CUVIL_FIXED_B &b) {
  return compare(a, b) <= 0;
}
template <CUVIL_FIXED_ARGS> bool operator>=(const CUVIL_FIXED_A &a, const CUVIL_FIXED_B &b) {
  return compare(a, b) >= 0;
}
template <CUVIL_FIXED_ARGS> bool operator==(const CUVIL_FIXED_A &a, const CUVIL_FIXED_B &b) {
  return compare(a, b) == 0;
}
template <CUVIL_FIXED_ARGS> bool operator!=(const CUVIL_FIXED_A &a, const CUVIL_FIXED_B &b) {
  return compare(a, b) != 0;
}

#undef CUVIL_FIXED_ARGS
#undef CUVIL_FIXED_A
#undef CUVIL_FIXED_B
#undef CUVIL_FIXED_R

} // namespace cuvil

#endif // CUVIL_FIXED_USE_VENDOR
#endif // CUVIL_FIXED_H
