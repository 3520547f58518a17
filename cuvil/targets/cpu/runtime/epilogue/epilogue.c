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
  if (e->activation == CUVIL_ACT_RELU) {
    for (j = 0; j < count; ++j)
      out[j] = out[j] > 0.0f ? out[j] : 0.0f;
  } else if (e->activation == CUVIL_ACT_CLIP) {
    float lo = e->lo, hi = e->hi;
    for (j = 0; j < count; ++j) {
      float v = out[j] < lo ? lo : out[j];
      out[j] = v > hi ? hi : v;
    }
  }
}
