/*===- epilogue.h - the fused elementwise tail of a producer kernel ------===*
 *
 * What cuvil-fuse-epilogues fuses into a matrix product or a convolution
 * (`cuvil.epilogue`), as the generated code passes it to the kernels.
 *
 *===----------------------------------------------------------------------===*/

#ifndef CUVIL_RUNTIME_EPILOGUE_H
#define CUVIL_RUNTIME_EPILOGUE_H

#include "cuvil/targets/cpu/runtime/math/vecmath.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An elementwise epilogue (the passes' fused groups) that a producer kernel
 * applies to each row of output right after computing it, while it is in
 * cache: out = activation(out + row_bias[row] + col_bias + residual), in that order
 * (the order of the unfused ops, so results are the same bit for bit). */
enum {
  CUVIL_ACT_NONE = 0,
  CUVIL_ACT_RELU = 1,
  CUVIL_ACT_CLIP = 2,
  /* The ones below take more than a compare: kernels apply them to a
   * block of stored output with cuvil_activate_f32, a loop that
   * vectorizes. */
  CUVIL_ACT_HARDSWISH = 3,   /* x * clip(x + 3, 0, 6) / 6 */
  CUVIL_ACT_HARDSIGMOID = 4, /* clip(lo * x + hi, 0, 1): lo, hi = alpha, beta */
  CUVIL_ACT_SIGMOID = 5,     /* 1 / (1 + exp(-x)) */
  CUVIL_ACT_SILU = 6         /* x / (1 + exp(-x)) */
};
typedef struct cuvil_epilogue {
  const float *row_bias; /* one per row (a convolution's channel), or NULL */
  const float *residual; /* laid out like the output, or NULL */
  int activation;        /* CUVIL_ACT_* */
  /* CUVIL_ACT_CLIP's bounds (-/+ huge if absent); CUVIL_ACT_HARDSIGMOID's
   * alpha and beta. */
  float lo, hi;
  /* One per column (a linear layer's bias), added after row_bias; after
   * the fields every initializer sets, so those that stop before it leave
   * it NULL. */
  const float *col_bias;
  /* In place of `residual`, for the int8 convolutions only: a residual
   * quantized to 8 bits per tensor (int8 if residual8_signed, else uint8),
   * read as cuvil.dequantize computes it (cuvil_residual8). */
  const void *residual8;
  int residual8_signed;
  float residual8_scale, residual8_zero;
} cuvil_epilogue;

/* Element `at` of `bytes` (e->residual8 or a place in it) as the float it
 * stands for: ((float)q - zero) * scale, the generated dequantize's
 * expression (a model built with -ffp-contract=fast may fuse the product
 * with the add that follows, as it fuses the bias's). */
static inline float cuvil_residual8(const cuvil_epilogue *e, const void *bytes,
                                    int64_t at) {
  float q = e->residual8_signed ? (float)((const int8_t *)bytes)[at]
                                : (float)((const uint8_t *)bytes)[at];
  return (q - e->residual8_zero) * e->residual8_scale;
}

/* Whether `e` adds a residual, float32 or 8-bit: an output that may then be
 * NaN, whose requantization cannot fold the activation into its clamp. */
static inline int cuvil_has_residual(const cuvil_epilogue *e) {
  return e && (e->residual || e->residual8);
}

/* Applies `e` to `count` elements of one output row; `offset` is the row's
 * position in the output (where its residual is), `row` its bias index.
 * For the kernels that apply it row by row (the matrix products, the NCHW
 * convolutions); the blocked ones apply the same steps per vector. */
void cuvil_epilogue_row(const cuvil_epilogue *e, float *out, int64_t offset,
                        int64_t row, int64_t count);

/* The activation of one value, as the unfused op computes it (the same
 * expressions as the generated elementwise code, so fusing changes no
 * bit). */
static inline __attribute__((always_inline)) float
cuvil_activate(int activation, float v, float lo, float hi) {
  float t;
  switch (activation) {
  case CUVIL_ACT_RELU:
    return v > 0.0f ? v : 0.0f;
  case CUVIL_ACT_CLIP:
    return v < lo ? lo : v > hi ? hi : v;
  case CUVIL_ACT_HARDSWISH:
    t = v + 3.0f;
    return v * (t < 0.0f ? 0.0f : t > 6.0f ? 6.0f : t) / 6.0f;
  case CUVIL_ACT_HARDSIGMOID:
    t = lo * v + hi;
    return t < 0.0f ? 0.0f : t > 1.0f ? 1.0f : t;
  case CUVIL_ACT_SIGMOID:
    return 1.0f / (1.0f + cuvil_expf(-v));
  case CUVIL_ACT_SILU:
    return v / (1.0f + cuvil_expf(-v));
  default:
    return v;
  }
}

/* `activation` on `count` values in place: one loop per kind, so each
 * vectorizes. */
void cuvil_activate_f32(int activation, float lo, float hi, float *values,
                        int64_t count);

/* One element's tail, in the unfused ops' order: + *bias, + *residual
 * (each if not NULL), then the activation. Every kernel that finishes
 * element by element goes through it. */
static inline float cuvil_finish_value(float v, const float *bias,
                                       const float *residual, int activation,
                                       float lo, float hi) {
  if (bias)
    v += *bias;
  if (residual)
    v += *residual;
  return cuvil_activate(activation, v, lo, hi);
}

/* The steps of `e` on one element: `v` at `row`, column `col`, position
 * `at` of the output. */
static inline float cuvil_epilogue_value(const cuvil_epilogue *e, float v,
                                         int64_t row, int64_t col,
                                         int64_t at) {
  if (e->row_bias)
    v += e->row_bias[row];
  return cuvil_finish_value(v, e->col_bias ? e->col_bias + col : 0,
                            e->residual ? e->residual + at : 0, e->activation,
                            e->lo, e->hi);
}

#ifdef __cplusplus
}
#endif

#endif /* CUVIL_RUNTIME_EPILOGUE_H */
