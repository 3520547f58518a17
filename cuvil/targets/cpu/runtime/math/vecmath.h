/*===- vecmath.h - exp and erf for floats, in C that vectorizes ----------===*
 *
 * Static inline: the generated code (sigmoid, tanh, GELU, softmax's maps)
 * and the reductions call them in their loops, which the C compiler then
 * vectorizes for the target.
 *
 *===----------------------------------------------------------------------===*/

#ifndef CUVIL_RUNTIME_VECMATH_H
#define CUVIL_RUNTIME_VECMATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

/* exp(x) for floats in plain C that vectorizes (libm's expf does not, and
 * a vector math library would be another dependency): x = n ln2 + r with
 * |r| <= ln2 / 2, e^r by its degree-7 Taylor polynomial (relative error
 * below 2e-7), scaled by 2^n through the exponent bits. 0 below -87.3 (so a
 * -inf mask gives exactly 0), inf above 88.7, NaN for NaN. */
static inline __attribute__((always_inline)) float cuvil_expf(float x) {
  float n = floorf(x * 1.44269504088896341f + 0.5f), r, p, low, high;
  int32_t whole, half, bits;
  r = x - n * 0.693145751953125f - n * 1.42860682030941723212e-6f;
  p = 1.0f + r * (1.0f + r * (0.5f + r * (1.0f / 6 + r * (1.0f / 24 + r * (1.0f / 120 + r * (1.0f / 720 + r * (1.0f / 5040)))))));
  /* 2^n as 2^half * 2^(n - half): both factors stay normal for n in
   * [-127, 128], the range x covers. */
  /* Comparisons false for NaN clamp it too: converting NaN (or any float
   * out of int32's range) to an integer is undefined, and clang folds it
   * into garbage for a constant NaN; the polynomial still carries the NaN. */
  whole = (int32_t)(n >= -127.0f ? (n <= 128.0f ? n : 128.0f) : -127.0f);
  half = whole >> 1;
  bits = (half + 127) << 23;
  memcpy(&low, &bits, sizeof(low));
  bits = (whole - half + 127) << 23;
  memcpy(&high, &bits, sizeof(high));
  p = p * low * high;
  return x < -87.3f ? 0.0f : x > 88.72f ? INFINITY : p;
}

/* erf(x) in plain C that vectorizes (for exact GELU): Abramowitz and
 * Stegun 7.1.26 (absolute error below 1.5e-7) from 0.5 on, and below,
 * where that form cancels, the Taylor series to x^13 (error below 1e-9). */
static inline __attribute__((always_inline)) float cuvil_erff(float x) {
  float a = x < 0.0f ? -x : x, t = 1.0f / (1.0f + 0.3275911f * a), x2 = x * x, y;
  y = 1.0f - ((((1.061405429f * t - 1.453152027f) * t + 1.421413741f) * t - 0.284496736f) * t +
              0.254829592f) * t * cuvil_expf(-a * a);
  y = x < 0.0f ? -y : y;
  return a < 0.5f
             ? 1.1283791670955126f * x *
                   (1.0f - x2 * (1.0f / 3 - x2 * (1.0f / 10 - x2 * (1.0f / 42 - x2 * (1.0f / 216 - x2 * (1.0f / 1320 - x2 * (1.0f / 9360)))))))
             : y;
}

#endif /* CUVIL_RUNTIME_VECMATH_H */
