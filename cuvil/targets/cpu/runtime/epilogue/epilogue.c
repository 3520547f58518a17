/*===- epilogue.c - an epilogue applied to one row of output -------------===*
 *
 * In the order of the unfused ops, so that fusing changes no bit.
 *
 *===----------------------------------------------------------------------===*/

#include "cuvil/targets/cpu/runtime/epilogue/epilogue.h"

void cuvil_epilogue_row(const cuvil_epilogue *e, float *out, int64_t offset,
                        int64_t row, int64_t count) {
  const float *residual = e->residual ? e->residual + offset : 0;
  float bias = e->row_bias ? e->row_bias[row] : 0.0f;
  int64_t j;
  if (e->row_bias)
    for (j = 0; j < count; ++j)
      out[j] += bias;
  if (e->col_bias)
    for (j = 0; j < count; ++j)
      out[j] += e->col_bias[j];
  if (residual)
    for (j = 0; j < count; ++j)
      out[j] += residual[j];
  cuvil_activate_f32(e->activation, e->lo, e->hi, out, count);
}

/* A loop per activation: `activation` fixed inside, so clang vectorizes
 * each (cuvil_expf included). */
#define CUVIL_ACTIVATE_LOOP(KIND)                                              \
  for (i = 0; i < count; ++i)                                                  \
    values[i] = cuvil_activate(KIND, values[i], lo, hi);                       \
  break

void cuvil_activate_f32(int activation, float lo, float hi, float *values,
                        int64_t count) {
  int64_t i;
  switch (activation) {
  case CUVIL_ACT_RELU:
    CUVIL_ACTIVATE_LOOP(CUVIL_ACT_RELU);
  case CUVIL_ACT_CLIP:
    CUVIL_ACTIVATE_LOOP(CUVIL_ACT_CLIP);
  case CUVIL_ACT_HARDSWISH:
    CUVIL_ACTIVATE_LOOP(CUVIL_ACT_HARDSWISH);
  case CUVIL_ACT_HARDSIGMOID:
    CUVIL_ACTIVATE_LOOP(CUVIL_ACT_HARDSIGMOID);
  case CUVIL_ACT_SIGMOID:
    CUVIL_ACTIVATE_LOOP(CUVIL_ACT_SIGMOID);
  case CUVIL_ACT_SILU:
    CUVIL_ACTIVATE_LOOP(CUVIL_ACT_SILU);
  default:
    break;
  }
}
