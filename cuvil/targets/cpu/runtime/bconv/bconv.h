/*===- bconv.h - bfloat16 convolutions, summed in float32 ----------------===*
 *
 * The convolutions of bf16 models (cuvil.conv2d with acc_type = f32): the
 * input and the weights are bfloat16 values, every product is exact in
 * float32, and each output's sum runs in one fixed order, over input
 * channel blocks, ky, kx and channel pairs (2p, 2p + 1), adding the odd
 * product first, then the even one (vdpbf16ps's order), so every variant
 * gives the same bits. Then, in float32: + bias, + residual, activation.
 *
 * The input is float32 (rounded to bfloat16 here, to nearest even, NaN
 * kept quiet, as cuvil.cast rounds) or bfloat16, NCHW (in_block 1) or
 * NCHW<in_block>c. The output channels are computed in blocks of `block`
 * (8 or 16 for the SIMD tiles, any other on the reference), each tile
 * writing float32 NCHW<block>c; an NCHW output (out_block 1) is computed
 * into the scratch so, then finished (residual, activation) into place,
 * in the same order: the same bits in either layout. bfloat16
 * denormals (exponent 0) are read as zeros of their sign, as vdpbf16ps
 * reads them, in every variant: the weights when packed, the image when
 * converted.
 *
 *===----------------------------------------------------------------------===*/

#ifndef CUVIL_RUNTIME_BCONV_H
#define CUVIL_RUNTIME_BCONV_H

#include "cuvil/targets/cpu/runtime/epilogue/epilogue.h"
#include "cuvil/targets/cpu/runtime/threads/threads.h"
#include "cuvil/targets/cpu/runtime/tiles/tiles.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A float32 as the kernels round it to bfloat16: to nearest even, a NaN
 * quiet, a denormal result as a zero of its sign. */
static inline uint16_t cuvil_bconv_round(uint32_t bits) {
  uint32_t r = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
  r = (bits & 0x7fffffffu) > 0x7f800000u ? (bits >> 16) | 0x40u : r;
  return (uint16_t)((r & 0x7f80u) == 0 ? r & 0x8000u : r);
}

/* Input channels per block of the image the tiles read: the input's
 * block, or pairs for a plain input. */
int64_t cuvil_bconvb_input_block(int64_t in_block);

/* Packed weights, as uint16: [OC / block][ceil(C / ib)][KH][KW][ib / 2]
 * [block][2], ib = cuvil_bconvb_input_block(in_block), channels past C
 * zero. */
size_t cuvil_bconvb_packed_elements(int64_t oc, int64_t c, int64_t kh,
                                    int64_t kw, int64_t in_block,
                                    int64_t block);

/* Packs OIHW bfloat16 weights (their bits). OC is a multiple of `block`. */
void cuvil_bconvb_pack(int64_t oc, int64_t c, int64_t kh, int64_t kw,
                       const uint16_t *oihw, int64_t in_block, int64_t block,
                       uint16_t *packed);

/* Scratch bytes: the image converted to bfloat16, blocked by the tiles'
 * input block and zero-padded so that no tile tests bounds; for an NCHW
 * output (out_block 1, block > 1), one image's blocked output after it. */
int64_t cuvil_bconvb_scratch_bytes(int64_t c, int64_t in_block, int64_t kh,
                                   int64_t kw, int64_t stride_h,
                                   int64_t stride_w, int64_t dil_h,
                                   int64_t dil_w, int64_t oc, int64_t oh,
                                   int64_t ow, int64_t block,
                                   int64_t out_block);

/* The register tiles (bconvb.inc): one call computes columns [x0, x0 + u)
 * of one output row for nb (1 or 2) channel blocks, or returns 0 when it
 * cannot (another block size); the driver then runs the reference. */
struct cuvil_bconvb_row;
typedef int (*cuvil_bconvb_fn)(const struct cuvil_bconvb_row *r, int64_t nb,
                               int64_t x0, int64_t u);
#define CUVIL_BCONVB_DECLARE(name)                                             \
  int cuvil_bconvb_##name(const struct cuvil_bconvb_row *r, int64_t nb,        \
                          int64_t x0, int64_t u);
CUVIL_BCONVB_DECLARE(reference)
#if defined(CUVIL_ENABLE_SIMD_KERNELS) && defined(__x86_64__)
CUVIL_BCONVB_DECLARE(avx2)
CUVIL_BCONVB_DECLARE(avx512)
CUVIL_BCONVB_DECLARE(avx512bf16)
#endif
/* The variant a model calls (RuntimeSelection.cpp defines it). */
#ifndef CUVIL_BCONVB
#define CUVIL_BCONVB cuvil_bconvb_reference
#endif

/* The convolution (ungrouped): `x` float32, or bfloat16 when x_bf16;
 * `packed` from cuvil_bconvb_pack for `block`; `bias` NULL or one float
 * per output channel; `y` NCHW<block>c, or NCHW when out_block is 1; the
 * epilogue's residual (float32) laid out like the output, its row_bias
 * unused. OC is a multiple of `block`. Rows of (channel block pair,
 * output row) are split over `pool`; every output is computed the same
 * way whatever the split. */
void cuvil_bconv2d_blocked(cuvil_bconvb_fn tile, cuvil_pool *pool,
                           uint8_t *scratch, int64_t n, int64_t c, int64_t h,
                           int64_t w, const void *x, int x_bf16,
                           int64_t in_block, int64_t oc, int64_t kh,
                           int64_t kw, const uint16_t *packed,
                           const float *bias, int64_t stride_h,
                           int64_t stride_w, int64_t pad_top, int64_t pad_left,
                           int64_t dil_h, int64_t dil_w, int64_t oh,
                           int64_t ow, float *y, int64_t block,
                           int64_t out_block, const cuvil_epilogue *epilogue);

#ifdef __cplusplus
}
#endif

#endif /* CUVIL_RUNTIME_BCONV_H */
