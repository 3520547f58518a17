/*===- contract.c - scratch sizes the x86 passes allocate ----------------===*
 *
 * The sizing rules of contract.h, one definition each: the passes size the
 * scratch buffers they add with these functions and the kernels lay their
 * scratch out by them.
 *
 *===----------------------------------------------------------------------===*/

#include "cuvil/targets/cpu/runtime/contract/contract.h"

int64_t cuvil_strip_columns(int64_t n) {
  return (n + CUVIL_STRIP - 1) / CUVIL_STRIP * CUVIL_STRIP;
}

int64_t cuvil_matmul_scratch_floats(int64_t n, int64_t k) {
  return k * cuvil_strip_columns(n);
}

int64_t cuvil_im2col_scratch_floats(int64_t c, int64_t kh, int64_t kw,
                                    int64_t oh, int64_t ow) {
  return c * kh * kw * cuvil_strip_columns(oh * ow);
}

int64_t cuvil_winograd_scratch_floats(int64_t c, int64_t oc, int64_t oh,
                                      int64_t ow) {
  int64_t t = CUVIL_WINO_TILES(oh) * CUVIL_WINO_TILES(ow);
  return 36 * (cuvil_strip_columns(oc) * c + c * t + oc * t);
}

int64_t cuvil_conv_extent(int64_t o, int64_t k, int64_t stride, int64_t dil) {
  return (o - 1) * stride + (k - 1) * dil + 1;
}

int64_t cuvil_conv2d_blocked_scratch_floats(int64_t c, int64_t h, int64_t w,
                                            int64_t kh, int64_t kw,
                                            int64_t stride_h, int64_t stride_w,
                                            int64_t pad_top, int64_t pad_left,
                                            int64_t dil_h, int64_t dil_w,
                                            int64_t oh, int64_t ow) {
  int64_t hp = cuvil_conv_extent(oh, kh, stride_h, dil_h);
  int64_t wp = cuvil_conv_extent(ow, kw, stride_w, dil_w);
  if (pad_top == 0 && pad_left == 0 && hp <= h && wp <= w)
    return 0;
  return c * hp * wp;
}
