/*===- winograd.h - 3x3 convolutions by Winograd F(4x4, 3x3) -------------===*
 *
 * NCHW or channel-blocked input and output; its 36 products run on the
 * packed matrix product (gemm).
 *
 *===----------------------------------------------------------------------===*/

#ifndef CUVIL_RUNTIME_WINOGRAD_H
#define CUVIL_RUNTIME_WINOGRAD_H

#include "cuvil/targets/cpu/runtime/epilogue/epilogue.h"
#include "cuvil/targets/cpu/runtime/threads/threads.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A 3x3, stride-1, undilated, ungrouped convolution by Winograd's minimal
 * filtering F(4x4, 3x3): per image, 6x6 input tiles (stride 4) and the
 * weights go to the transform domain, 36 matrix products of
 * [T x C] @ [C x OC] (T = ceil(OH/4) * ceil(OW/4) tiles) replace 9 * OH * OW
 * multiply-adds per channel pair by 36 * T, and each 4x4 output tile comes
 * back by the inverse transform, with bias and `epilogue` applied. 2.25x
 * fewer multiplies than direct at 56x56. The transforms work on 16 channels
 * as one vector. `scratch` holds cuvil_winograd_scratch_floats(...) floats
 * (contract.h; weights transformed per call: the artifact stores only the
 * original ones).
 * Input and output are NCHW (block 1) or channel-blocked NCHW<block>c
 * (cuvil-cpu-assign-layouts; C a multiple of the block), where a point's
 * channels are contiguous vectors. */
void cuvil_conv2d_winograd_f32(cuvil_pool *pool, float *scratch, int64_t n, int64_t c,
                               int64_t h, int64_t w, const float *input, int64_t in_block,
                               int64_t oc, const float *weight, const float *bias,
                               int64_t pad_top, int64_t pad_left, int64_t oh, int64_t ow,
                               float *output, int64_t out_block,
                               const cuvil_epilogue *epilogue);

#ifdef __cplusplus
}
#endif

#endif /* CUVIL_RUNTIME_WINOGRAD_H */
