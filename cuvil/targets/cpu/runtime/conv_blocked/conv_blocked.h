/*===- conv_blocked.h - convolutions on channel-blocked NCHW<B>c ---------===*
 *
 * The layout cuvil-cpu-assign-layouts gives convolution nets: a vector of
 * B output channels per register, the weights packed at compile time.
 *
 *===----------------------------------------------------------------------===*/

#ifndef CUVIL_RUNTIME_CONV_BLOCKED_H
#define CUVIL_RUNTIME_CONV_BLOCKED_H

#include "cuvil/targets/cpu/runtime/epilogue/epilogue.h"
#include "cuvil/targets/cpu/runtime/threads/threads.h"
#include "cuvil/targets/cpu/runtime/tiles/tiles.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Channel-blocked direct convolution (cuvil-cpu-assign-layouts): the output is
 * NCHW<block>c ([N][OC / block][OH][OW][block]); the input is NCHW
 * (in_block 1, any C) or NCHW<in_block>c (C a multiple of in_block, which
 * may differ from block); the weight is packed at compile time as
 * [OC / block][C / groups / in_block][KH][KW][in_block][block]. A grouped
 * convolution (groups > 1) needs C / groups a multiple of in_block and
 * OC / groups of block, so that each output block reads whole input blocks
 * of its own group. Each output row of 1
 * or 2 channel blocks (3 on AVX2 for rows too narrow for two blocks' tiles
 * to keep 8 sums) is computed in register tiles of up to 14 (AVX-512)
 * or 6 (AVX2; 4 for 3 blocks) columns (AVX-512 takes rows of up to 7
 * columns two at a time, each weight vector read once for both), the sum
 * of each output running over (input block, ky, kx, input lane) in that
 * order. `scratch` holds
 * cuvil_conv2d_blocked_scratch_floats(...) floats (contract.h): the
 * zero-padded image (so that no tile tests bounds), of which a row wide
 * enough copies only the frame that its edge tiles read; its middle
 * columns read the input in place. `epilogue` as for
 * cuvil_conv2d_f32, its residual blocked like the output. OC is a multiple
 * of `block` (<= 64); `tile` is the variant of the register tiles below. */
struct cuvil_convb_row;
typedef int (*cuvil_convb_fn)(const struct cuvil_convb_row *r, int64_t nb,
                              int64_t x0, int64_t u);
void cuvil_conv2d_blocked_f32(cuvil_convb_fn tile, cuvil_pool *pool,
                              float *scratch, int64_t n,
                              int64_t c, int64_t h, int64_t w,
                              const float *input, int64_t in_block, int64_t oc,
                              int64_t groups, int64_t kh, int64_t kw,
                              const float *weight,
                              const float *bias, int64_t stride_h,
                              int64_t stride_w, int64_t pad_top,
                              int64_t pad_left, int64_t dil_h, int64_t dil_w,
                              int64_t oh, int64_t ow, float *output,
                              int64_t block, const cuvil_epilogue *epilogue);
/* Its register tiles (convb.inc; the emitter passes CUVIL_CONVB,
 * chosen like CUVIL_SGEMM4): one call computes columns [x0, x0 + u) of one
 * output row (two for the AVX-512 variant's narrow rows; or of a pointwise
 * plane read as one row) for `nb` (1 or 2;
 * 3 for the AVX2 variant, ungrouped) channel blocks, which share a group
 * or are one 8-channel group each. A
 * SIMD variant returns 0 when it cannot (another block size; the AVX-512
 * one runs two blocks of 8 per register, one on the AVX2 tiles); the
 * driver then uses the reference. */
#define CUVIL_CONVB_DECLARE(name)                                              \
  int cuvil_convb_##name(const struct cuvil_convb_row *r, int64_t nb,          \
                         int64_t x0, int64_t u);
CUVIL_CONVB_DECLARE(reference)
/* (Models without a blocked direct convolution leave the tiles out.) */
#if defined(CUVIL_ENABLE_SIMD_KERNELS) && defined(__x86_64__) && !defined(CUVIL_OMIT_CONVB_TILES)
CUVIL_CONVB_DECLARE(avx2)
CUVIL_CONVB_DECLARE(avx512)
#endif
#if defined(CUVIL_ENABLE_SIMD_KERNELS) && defined(__aarch64__) && !defined(CUVIL_OMIT_CONVB_TILES)
CUVIL_CONVB_DECLARE(neon)
#endif
#ifndef CUVIL_CONVB
#define CUVIL_CONVB cuvil_convb_reference
#endif

/* Depthwise convolution (groups == C == OC) on NCHW<block>c input and
 * output (block 4, 8 or 16; returns 1 for another), the weight packed as
 * [C / block][KH][KW][block]; bias (or NULL) and `epilogue` (residual
 * blocked) as for cuvil_conv2d_blocked_f32. */
int cuvil_dwconv_blocked_f32(cuvil_pool *pool, int64_t n, int64_t c, int64_t h,
                             int64_t w, const float *input, int64_t kh,
                             int64_t kw, const float *weight, const float *bias,
                             int64_t stride_h, int64_t stride_w,
                             int64_t pad_top, int64_t pad_left, int64_t dil_h,
                             int64_t dil_w, int64_t oh, int64_t ow,
                             float *output, int64_t block,
                             const cuvil_epilogue *epilogue);

#ifdef __cplusplus
}
#endif

#endif /* CUVIL_RUNTIME_CONV_BLOCKED_H */
