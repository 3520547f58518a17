/*===- hgemm.h - float16 matrix products and convolutions ----------------===*
 *
 * fp16 models (cuvilc --quantize=fp16): C[m][n] = sum over l < k of
 * A[m][l] * B[l][n] in half precision, each output a chain of fused
 * multiply-adds in float16, in order of l from 0 (acc = fma16(a, b, acc),
 * one rounding per step: what NEON's fmla on 8 halves computes). So every
 * variant gives the same bits. Halves are stored as their 16 bits.
 *
 * B is packed once (at compile time for weights, per call for a
 * convolution's patches) in strips of 32 columns: [ceil(n/32)][k][32], zero
 * padded. A and C are row-major. A call splits its (4-row group, strip)
 * tiles over a thread pool: every output is computed the same way whatever
 * the split.
 *
 *===--------------------------------------------------------------------===*/
#ifndef CUVIL_RUNTIME_HGEMM_H
#define CUVIL_RUNTIME_HGEMM_H

#include "cuvil/targets/cpu/runtime/math/scalar.h"
#include "cuvil/targets/cpu/runtime/threads/threads.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define CUVIL_HGEMM_NR 32

/* A double as the nearest float16 (ties to even; overflow to infinity; a
 * NaN stays one): one rounding, where a conversion through float could
 * round twice. */
#if defined(__aarch64__)
static inline uint16_t cuvil_d2h(double value) {
  __fp16 v = (__fp16)value; /* fcvt h, d */
  uint16_t h;
  memcpy(&h, &v, 2);
  return h;
}
#else
static inline uint16_t cuvil_d2h(double value) {
  uint64_t x, mant, half, rem, halfway;
  uint16_t sign;
  int64_t e;
  memcpy(&x, &value, 8);
  sign = (uint16_t)((x >> 48) & 0x8000u);
  mant = x & 0xfffffffffffffull;
  e = (int64_t)((x >> 52) & 0x7ffu) - 1023 + 15;
  if (e == 0x7ff - 1023 + 15)
    return (uint16_t)(sign | 0x7c00u | (mant ? 0x200u : 0u));
  if (e >= 31)
    return (uint16_t)(sign | 0x7c00u);
  if (e <= 0) {
    unsigned shift;
    if (e < -10)
      return sign;
    mant |= 1ull << 52;
    shift = (unsigned)(43 - e);
    half = mant >> shift;
    rem = mant & ((1ull << shift) - 1u);
    halfway = 1ull << (shift - 1);
    if (rem > halfway || (rem == halfway && (half & 1u)))
      ++half;
    return (uint16_t)(sign | half);
  }
  half = ((uint64_t)e << 10) | (mant >> 42);
  rem = mant & ((1ull << 42) - 1u);
  halfway = 1ull << 41;
  if (rem > halfway || (rem == halfway && (half & 1u)))
    ++half; /* may carry into the exponent, up to infinity */
  return (uint16_t)(sign | half);
}
#endif

/* round16(a * b + acc) of halves, rounded once: the product is exact in
 * double, and so is the sum unless the two are over 2^31 apart, where the
 * sum's rounding cannot move the float16 result (the smaller one is below
 * half a float16 step of the larger, and never decides a tie within
 * float16's range). */
static inline uint16_t cuvil_fma16(uint16_t a, uint16_t b, uint16_t acc) {
  return cuvil_d2h((double)cuvil_h2f(a) * (double)cuvil_h2f(b) +
                   (double)cuvil_h2f(acc));
}

/* Halves of B packed (the layout above). */
size_t cuvil_hgemm_packed_halves(int64_t k, int64_t n);

/* Packs row-major float16 B (row stride b_row). */
void cuvil_hgemm_pack_b(int64_t k, int64_t n, const uint16_t *b, int64_t b_row,
                        uint16_t *packed);

/* The micro-kernels (hgemm.inc): `rows` (1 to 4) rows of A (row stride
 * a_row) times one strip, the first `cols` (1 to 32) columns written to C
 * (row stride c_row). */
typedef void (*cuvil_hgemm4_fn)(int64_t rows, int64_t k, const uint16_t *a,
                                int64_t a_row, const uint16_t *strip,
                                uint16_t *c, int64_t c_row, int64_t cols);
void cuvil_hgemm4_reference(int64_t rows, int64_t k, const uint16_t *a,
                            int64_t a_row, const uint16_t *strip, uint16_t *c,
                            int64_t c_row, int64_t cols);
#if defined(CUVIL_ENABLE_SIMD_KERNELS) && defined(__aarch64__)
void cuvil_hgemm4_neon_fp16(int64_t rows, int64_t k, const uint16_t *a,
                            int64_t a_row, const uint16_t *strip, uint16_t *c,
                            int64_t c_row, int64_t cols);
#endif

/* C = A B with `kernel`, its tiles split over `pool` (NULL: this thread). */
void cuvil_hgemm_f16(cuvil_pool *pool, cuvil_hgemm4_fn kernel, int64_t m,
                     int64_t n, int64_t k, const uint16_t *a, int64_t a_row,
                     const uint16_t *packed_b, uint16_t *c, int64_t c_row);

/* Halves of the scratch of cuvil_conv2d_f16: one image's patches, packed
 * as B ([ceil(oh * ow / 32)][c * kh * kw][32]). */
size_t cuvil_hconv_scratch_halves(int64_t c, int64_t kh, int64_t kw,
                                  int64_t oh, int64_t ow);

/* An ungrouped NCHW float16 convolution without bias, OIHW weights: each
 * image's patches (im2col, zero where the window reads padding) packed
 * into `scratch`, then weights [oc][c * kh * kw] @ patches with `kernel`.
 * Each output sums its terms in (input channel, ky, kx) order. */
void cuvil_conv2d_f16(cuvil_pool *pool, cuvil_hgemm4_fn kernel,
                      uint16_t *scratch, int64_t n, int64_t c, int64_t h,
                      int64_t w, const uint16_t *input, int64_t oc, int64_t kh,
                      int64_t kw, const uint16_t *weight, int64_t stride_h,
                      int64_t stride_w, int64_t pad_top, int64_t pad_left,
                      int64_t dil_h, int64_t dil_w, int64_t oh, int64_t ow,
                      uint16_t *output);

/* The variant a model's code calls (RuntimeSelection.cpp defines it). */
#ifndef CUVIL_HGEMM4
#define CUVIL_HGEMM4 cuvil_hgemm4_reference
#endif

#endif /* CUVIL_RUNTIME_HGEMM_H */
