/*===- contract.h - what the x86 passes and the kernels agree on ---------===*
 *
 * Compiled into cuvilc (the x86 level2 passes link it and call these
 * functions; //cuvil/targets/cpu/runtime:contract) and into every artifact
 * that runs a kernel with scratch or packed operands, so a layout or a
 * scratch size is defined here once and never restated. Kernels rely on
 * everything in this file; the passes' heuristics (when Winograd or packing
 * pays) stay in the passes.
 *
 *===----------------------------------------------------------------------===*/

#ifndef CUVIL_RUNTIME_CONTRACT_H
#define CUVIL_RUNTIME_CONTRACT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Columns per strip of a packed matrix-product operand: B as
 * [ceil(N / CUVIL_STRIP)][K][CUVIL_STRIP], zero past column N (the widest
 * sgemm4 tile, AVX-512's 2 x 16 lanes). cuvil-cpu-pack-product-weights
 * writes it at compile time; cuvil_matmul_f32's packing, im2col and
 * Winograd's transformed weights write it at run time. */
#define CUVIL_STRIP 32

/* cuvil_matmul_f32 packs B into its scratch only when A has at least this
 * many rows and B more bytes than this (an L1): packing costs a pass over
 * B, which fewer rows do not pay back, and a small B stays in L1 strided or
 * not. cuvil-cpu-select-kernels gives no scratch below the rows. */
#define CUVIL_PACK_MIN_ROWS 8
#define CUVIL_PACK_MIN_BYTES 32768

/* Output tiles per dimension of Winograd F(4x4, 3x3): 4 outputs each. */
#define CUVIL_WINO_TILES(o) (((o) + 3) / 4)

/* `n` columns rounded up to whole strips. */
int64_t cuvil_strip_columns(int64_t n);

/* Scratch of cuvil_matmul_f32 for a K x N B: B packed in strips. */
int64_t cuvil_matmul_scratch_floats(int64_t n, int64_t k);

/* Scratch of cuvil_conv2d_f32's im2col, per image: the patches
 * [C * KH * KW][cuvil_strip_columns(OH * OW)], written packed in strips of
 * positions. */
int64_t cuvil_im2col_scratch_floats(int64_t c, int64_t kh, int64_t kw,
                                    int64_t oh, int64_t ow);

/* Scratch of cuvil_conv2d_winograd_f32: the 36 transform points of the
 * weights U (output channels in strips, [36][C][strip_columns(OC)]), of
 * the input tiles V ([36][T][C]) and of their products M ([36][T][OC]),
 * T = CUVIL_WINO_TILES(OH) * CUVIL_WINO_TILES(OW), in that order. */
int64_t cuvil_winograd_scratch_floats(int64_t c, int64_t oc, int64_t oh,
                                      int64_t ow);

/* Input rows (or columns) that `o` outputs of a convolution window of `k`
 * taps read: (o - 1) * stride + (k - 1) * dil + 1. */
int64_t cuvil_conv_extent(int64_t o, int64_t k, int64_t stride, int64_t dil);

/* Scratch of cuvil_conv2d_blocked_f32: one zero-padded image, C x the
 * extents of OH x OW, so that no register tile tests bounds; 0 when the
 * image needs no padding (no top or left padding and the extents inside
 * it): the kernel then reads the input in place. */
int64_t cuvil_conv2d_blocked_scratch_floats(int64_t c, int64_t h, int64_t w,
                                            int64_t kh, int64_t kw,
                                            int64_t stride_h, int64_t stride_w,
                                            int64_t pad_top, int64_t pad_left,
                                            int64_t dil_h, int64_t dil_w,
                                            int64_t oh, int64_t ow);

#ifdef __cplusplus
}
#endif

#endif /* CUVIL_RUNTIME_CONTRACT_H */
