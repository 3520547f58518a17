/*===- scalar.h - scalar helpers of the generated code -------------------===*
 *
 * Half-precision conversions (float16 and bfloat16 are stored as their bits
 * and computed in float; round to nearest even) and integer power. Every
 * model's code starts with them; unused, they cost nothing.
 *
 *===--------------------------------------------------------------------===*/
#ifndef CUVIL_RUNTIME_SCALAR_H
#define CUVIL_RUNTIME_SCALAR_H

#include <stdint.h>
#include <string.h>

#if defined(__aarch64__)
/* armv8-a converts between half and single precision in one instruction
 * (fcvt, round to nearest even like the bit arithmetic below; a NaN keeps
 * its payload's top bits, quieted). */
static inline float cuvil_h2f(uint16_t h) {
  __fp16 v;
  memcpy(&v, &h, 2);
  return (float)v;
}

static inline uint16_t cuvil_f2h(float value) {
  __fp16 v = (__fp16)value;
  uint16_t h;
  memcpy(&h, &v, 2);
  return h;
}
#else
static inline float cuvil_h2f(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu,
           mant = h & 0x3ffu, x;
  float f;
  if (exp == 0) {
    if (mant == 0) {
      x = sign;
    } else {
      exp = 113;
      while (!(mant & 0x400u)) {
        mant <<= 1;
        --exp;
      }
      x = sign | (exp << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 0x1f) {
    x = sign | 0x7f800000u | (mant << 13);
  } else {
    x = sign | ((exp + 112) << 23) | (mant << 13);
  }
  memcpy(&f, &x, 4);
  return f;
}

static inline uint16_t cuvil_f2h(float value) {
  uint32_t x, sign, exp, mant, half, rem;
  int32_t e;
  memcpy(&x, &value, 4);
  sign = (x >> 16) & 0x8000u;
  exp = (x >> 23) & 0xffu;
  mant = x & 0x7fffffu;
  if (exp == 0xffu)
    return (uint16_t)(sign | 0x7c00u | (mant ? 0x200u : 0u));
  e = (int32_t)exp - 112;
  if (e >= 0x1f)
    return (uint16_t)(sign | 0x7c00u);
  if (e <= 0) {
    uint32_t shift;
    if (e < -10)
      return (uint16_t)sign;
    mant |= 0x800000u;
    shift = (uint32_t)(14 - e);
    half = mant >> shift;
    rem = mant & ((1u << shift) - 1u);
    if (rem > (1u << (shift - 1)) || (rem == (1u << (shift - 1)) && (half & 1u)))
      ++half;
    return (uint16_t)(sign | half);
  }
  half = sign | ((uint32_t)e << 10) | (mant >> 13);
  rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1u)))
    ++half;
  return (uint16_t)half;
}
#endif

static inline float cuvil_bf2f(uint16_t b) {
  uint32_t x = (uint32_t)b << 16;
  float f;
  memcpy(&f, &x, 4);
  return f;
}

static inline uint16_t cuvil_f2bf(float value) {
  uint32_t x;
  memcpy(&x, &value, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return (uint16_t)((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return (uint16_t)(x >> 16);
}

static inline int64_t cuvil_ipow(int64_t base, int64_t exponent) {
  int64_t result = 1;
  if (exponent < 0)
    return base == 1 ? 1 : base == -1 ? (exponent % 2 ? -1 : 1) : 0;
  while (exponent) {
    if (exponent & 1)
      result *= base;
    base *= base;
    exponent >>= 1;
  }
  return result;
}

#endif /* CUVIL_RUNTIME_SCALAR_H */
