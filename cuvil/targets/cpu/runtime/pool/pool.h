/*===- pool.h - pooling over windows of NCHW or NCHW<B>c images -----------===*
 *
 * Max and average pooling (plain or channel-blocked) and adaptive average
 * pooling; global pooling is a reduction (reduce.h).
 *
 *===----------------------------------------------------------------------===*/

#ifndef CUVIL_RUNTIME_POOL_H
#define CUVIL_RUNTIME_POOL_H

#include "cuvil/targets/cpu/runtime/threads/threads.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* cuvil_pool2d_f32 on NCHW<block>c input and output (block <= 64; the
 * plain version is block 1). */
void cuvil_pool2d_blocked_f32(cuvil_pool *pool, int kind, int64_t n,
                              int64_t c, int64_t h, int64_t w,
                              const float *input, int64_t kh, int64_t kw,
                              int64_t stride_h, int64_t stride_w,
                              int64_t pad_top, int64_t pad_left, int64_t dil_h,
                              int64_t dil_w, int count_include_pad, int64_t oh,
                              int64_t ow, float *output, int64_t block);

/* kind: 0 max, 1 average (count_include_pad selects the divisor). Output
 * rows split across `pool`'s threads (NULL: this thread). */
void cuvil_pool2d_f32(cuvil_pool *pool, int kind, int64_t n, int64_t c,
                      int64_t h, int64_t w, const float *input, int64_t kh,
                      int64_t kw, int64_t stride_h, int64_t stride_w,
                      int64_t pad_top, int64_t pad_left, int64_t dil_h,
                      int64_t dil_w, int count_include_pad, int64_t oh,
                      int64_t ow, float *output);

/* Max pooling of 8-bit quantized values (int8 when is_signed, else
 * uint8), NCHW<block>c (block 1 is NCHW). Quantization is monotonic, so
 * this is the float max pool of the values before they were quantized:
 * padding is the storage minimum, the quantized -infinity. */
void cuvil_max_pool2d_q8(int is_signed, int64_t n, int64_t c, int64_t h,
                         int64_t w, const void *input, int64_t kh, int64_t kw,
                         int64_t stride_h, int64_t stride_w, int64_t pad_top,
                         int64_t pad_left, int64_t dil_h, int64_t dil_w,
                         int64_t oh, int64_t ow, void *output, int64_t block);

/* Where max pooling of NCHW `input` finds each maximum (ONNX MaxPool's
 * Indices): the flattened input index of its window's first largest
 * element, NaN counting as the largest (as numpy's argmax), which is
 * ((n * C + c) * H + h) * W + w, or ((n * C + c) * W + w) * H + h when
 * column_major. `planes` is N * C. A window with no tap inside the image
 * gives -1. */
void cuvil_max_pool2d_indices_f32(int64_t planes, int64_t h, int64_t w,
                                  const float *input, int64_t kh, int64_t kw,
                                  int64_t stride_h, int64_t stride_w,
                                  int64_t pad_top, int64_t pad_left,
                                  int64_t dil_h, int64_t dil_w,
                                  int column_major, int64_t oh, int64_t ow,
                                  int64_t *output);

void cuvil_adaptive_avg_pool2d_f32(int64_t n, int64_t c, int64_t h, int64_t w,
                                   const float *input, int64_t oh, int64_t ow,
                                   float *output);

#ifdef __cplusplus
}
#endif

#endif /* CUVIL_RUNTIME_POOL_H */
