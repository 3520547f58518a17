/*===- conv.h - NCHW convolutions: direct, im2col and depthwise ----------===*
 *
 * The plain-layout convolution: a matrix product on im2col patches (given
 * scratch) or on the image itself (pointwise), the depthwise micro-kernels
 * (dwconv.inc), and a direct reference for the rest.
 *
 *===----------------------------------------------------------------------===*/

#ifndef CUVIL_RUNTIME_CONV_H
#define CUVIL_RUNTIME_CONV_H

#include "cuvil/targets/cpu/runtime/epilogue/epilogue.h"
#include "cuvil/targets/cpu/runtime/threads/threads.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The depthwise convolution micro-kernels (dwconv.inc): one output
 * plane of one channel; chosen through CUVIL_DWCONV like CUVIL_SGEMM4. */
typedef void (*cuvil_dwconv_fn)(int64_t h, int64_t w, const float *input,
                                int64_t kh, int64_t kw, const float *weight,
                                float bias, int64_t stride_h, int64_t stride_w,
                                int64_t pad_top, int64_t pad_left,
                                int64_t dil_h, int64_t dil_w, int64_t oh,
                                int64_t ow, float *output);
#define CUVIL_DWCONV_DECLARE(name)                                             \
  void cuvil_dwconv_##name(int64_t h, int64_t w, const float *input,           \
                           int64_t kh, int64_t kw, const float *weight,        \
                           float bias, int64_t stride_h, int64_t stride_w,     \
                           int64_t pad_top, int64_t pad_left, int64_t dil_h,   \
                           int64_t dil_w, int64_t oh, int64_t ow,              \
                           float *output);
CUVIL_DWCONV_DECLARE(reference)
#if defined(CUVIL_ENABLE_SIMD_KERNELS) && defined(__x86_64__)
CUVIL_DWCONV_DECLARE(avx2)
CUVIL_DWCONV_DECLARE(avx512)
#endif
#if defined(CUVIL_ENABLE_SIMD_KERNELS) && defined(__aarch64__)
CUVIL_DWCONV_DECLARE(neon)
#endif

#if defined(CUVIL_SGEMM4_RUNTIME_DISPATCH)
/* Chosen when a benchmark starts, like cuvil_sgemm4_dispatch. */
CUVIL_DWCONV_DECLARE(dispatch)
#define CUVIL_DWCONV cuvil_dwconv_dispatch
#endif
#ifndef CUVIL_DWCONV
#define CUVIL_DWCONV cuvil_dwconv_reference
#endif

/* NCHW input, OIHW weight, optional bias (NULL), grouped, dilated. With
 * `scratch` (cuvil_im2col_scratch_floats(...) floats, contract.h; groups
 * == 1) the convolution runs as im2col, packed in strips of positions, and a
 * matrix product; NULL computes it directly.
 * `epilogue` (or NULL; its row_bias unused: `bias` is the conv's) adds a
 * residual and applies an activation to each output plane. */
void cuvil_conv2d_f32(cuvil_pool *pool, float *scratch, int64_t n, int64_t c, int64_t h, int64_t w,
                      const float *input, int64_t oc, int64_t kh, int64_t kw,
                      const float *weight, const float *bias, int64_t groups,
                      int64_t stride_h, int64_t stride_w, int64_t pad_top,
                      int64_t pad_left, int64_t dil_h, int64_t dil_w,
                      int64_t oh, int64_t ow, float *output,
                      const cuvil_epilogue *epilogue);

#ifdef __cplusplus
}
#endif

#endif /* CUVIL_RUNTIME_CONV_H */
