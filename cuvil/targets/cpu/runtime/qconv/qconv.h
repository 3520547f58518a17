/*===- qconv.h - int8 convolutions: blocked direct, depthwise, im2col ----===*
 *
 * The integer convolutions of quantized models (cuvil.quantized_conv2d).
 * The input is 8-bit per tensor (uint8 with a zero point; int8 is read as
 * uint8 + 128), the weights symmetric int8 per output channel, and each
 * output's sum over (input - zero point) x weight is exact in int32. Its
 * value is then, in float32 and in this order (the unfused ops' order):
 *
 *   v = (float)sum * scale[o]       (the input scale times the channel's)
 *   v = v + bias[o]                 (if any)
 *   v = v + residual                (a fused epilogue's, if any)
 *   v = relu(v) or clip(v, lo, hi)  (a fused epilogue's, if any)
 *
 * stored as float32, or requantized (cuvil_qout, a fused cuvil.quantize):
 * q = saturate(nearbyint(v / out_scale) + out_zero), NaN to out_zero.
 *
 *===----------------------------------------------------------------------===*/

#ifndef CUVIL_RUNTIME_QCONV_H
#define CUVIL_RUNTIME_QCONV_H

#include "cuvil/targets/cpu/runtime/epilogue/epilogue.h"
#include "cuvil/targets/cpu/runtime/qgemm/qgemm.h"
#include "cuvil/targets/cpu/runtime/threads/threads.h"
#include "cuvil/targets/cpu/runtime/tiles/tiles.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An output's value from its exact sum (the header's steps but the
 * store); `residual` points at its residual or is NULL. */
static inline float cuvil_qconv_value(int32_t sum, float scale,
                                      const float *bias, const float *residual,
                                      const cuvil_epilogue *e) {
  return cuvil_finish_value((float)sum * scale, bias, residual,
                            e ? e->activation : CUVIL_ACT_NONE,
                            e ? e->lo : 0.0f, e ? e->hi : 0.0f);
}

/* The bounds of v / out_scale, less the zero point, that give an
 * epilogue's activation (ReLU or clip) and the 8-bit range in one clamp,
 * for a requantized output without a residual (whose v can be NaN).
 * Correctly rounded division is monotonic, so clip(v, lo, hi) / s =
 * clip(v / s, lo / s, hi / s) bit for bit (ReLU's bound is 0), and two
 * clamps in a row are one whose bounds are the first one's clamped by the
 * second. */
static inline void cuvil_qout_bounds(const cuvil_qout *q,
                                     const cuvil_epilogue *e, float *lo,
                                     float *hi) {
  const float bottom = q->is_signed ? -128.0f : 0.0f;
  const float lo8 = bottom - q->zero, hi8 = bottom + 255.0f - q->zero;
  float l = -INFINITY, h = INFINITY;
  if (e && e->activation == CUVIL_ACT_RELU) {
    l = 0.0f;
  } else if (e && e->activation == CUVIL_ACT_CLIP) {
    l = e->lo / q->scale;
    h = e->hi / q->scale;
  }
  *lo = l < lo8 ? lo8 : l > hi8 ? hi8 : l;
  *hi = h < lo8 ? lo8 : h > hi8 ? hi8 : h;
}

/* The vector kernels' requantization multiplies by 1 / scale where it may,
 * since a division costs 8-10 cycles per vector and bounds the 1x1 and
 * depthwise layers. Let e = RN(v / scale), the quotient the steps above
 * round, and t = RN(v * rcp + zero) with rcp = RN(1 / scale) (or with two
 * roundings): |t - (e + zero)| <= 2u|e| + u|t| + u^2... with u = 2^-24,
 * under 1.2e-4 when |e| <= 512. Beyond that, both lie past the same bound
 * of the clamp (in [-255, 255] less the zero point); within it, clamping
 * (to bounds off by at most 2^-16) cannot take them further apart. So
 * where t clamped is closer than CUVIL_QOUT_MARGIN to its nearest integer
 * n, the steps above give n too; a vector with a lane that is not divides
 * instead. The constants: rcp (0 where it cannot stand in: a scale or
 * reciprocal that is not a normal float), the zero point, and the clamp's
 * bounds plus the zero point (cuvil_qout_bounds's when `folded`, else the
 * 8-bit range's). */
#define CUVIL_QOUT_MARGIN 0.4990234375f /* 0.5 - 2^-10 */
typedef struct cuvil_qout_fast {
  float rcp, zero, lo, hi;
} cuvil_qout_fast;
static inline cuvil_qout_fast
cuvil_qout_fast_for(const cuvil_qout *q, const cuvil_epilogue *e, int folded) {
  cuvil_qout_fast f = {0.0f, 0.0f, 0.0f, 0.0f};
  float lo, hi;
  if (!q || !isnormal(q->scale) || !isnormal(1.0f / q->scale))
    return f;
  if (folded) {
    cuvil_qout_bounds(q, e, &lo, &hi);
    lo += q->zero;
    hi += q->zero;
  } else {
    lo = q->is_signed ? -128.0f : 0.0f;
    hi = lo + 255.0f;
  }
  f.rcp = 1.0f / q->scale;
  f.zero = q->zero;
  f.lo = lo;
  f.hi = hi;
  return f;
}

/* Whether the plain finish (qconvb.c's, and qdwconv.c's) may run on n
 * channels: every |bias / out_scale| at most 256 and every scale /
 * out_scale finite, as its error bound needs (bias may be NULL). */
static inline int cuvil_qout_plain_fits(const float *scale, const float *bias,
                                        int64_t n, float rcp) {
  int64_t i;
  for (i = 0; i < n; ++i)
    if (!isfinite(scale[i] * rcp) ||
        (bias && !(fabsf(bias[i] * rcp) <= 256.0f)))
      return 0;
  return 1;
}

/*===- Blocked direct convolutions (qconvb*.c) ---------------------------===*
 *
 * Output NCHW<block>c (block 8 or 16), float32 or 8-bit; input 8-bit
 * NCHW<in_block>c (8 or 16) or NCHW (in_block 1). The tiles read 4 input
 * channels per step (one 32-bit broadcast): from an input block of 8 or 16
 * directly, or from a copy of the image (cuvil_qconvb_scratch_bytes) blocked
 * by cuvil_qconvb_input_block(in_block) (4 for a plain input), padded with
 * the zero point, and flipped to uint8 for int8 input. Weights are packed
 * at compile time by cuvil_qconvb_pack (the narrow tiles take them when
 * cuvil_int8_pairs_are_narrow). Rows of (channel block pair, output
 * row) are split over `pool`; every output is computed the same way
 * whatever the split. */

/* Input channels per block of the image the tiles read. */
int64_t cuvil_qconvb_input_block(int64_t in_block);

/* Packed weights: [OC / block][ceil(C / ib)][KH][KW][ib / 4][block][4]
 * bytes, ib = cuvil_qconvb_input_block(in_block), channels past C zero. */
size_t cuvil_qconvb_packed_bytes(int64_t oc, int64_t c, int64_t kh, int64_t kw,
                                 int64_t in_block, int64_t block);

/* Packs OIHW int8 weights and writes each output channel's weight sum (the
 * zero point's correction). OC is a multiple of `block`. */
void cuvil_qconvb_pack(int64_t oc, int64_t c, int64_t kh, int64_t kw,
                       const int8_t *oihw, int64_t in_block, int64_t block,
                       int8_t *packed, int32_t *sums);

/* Scratch bytes: the converted image, or 0 when the tiles read the input
 * in place (uint8 blocked by 8 or 16 and no padding needed). */
int64_t cuvil_qconvb_scratch_bytes(int64_t c, int64_t in_block, int x_signed,
                                   int64_t h, int64_t w, int64_t kh,
                                   int64_t kw, int64_t stride_h,
                                   int64_t stride_w, int64_t pad_top,
                                   int64_t pad_left, int64_t dil_h,
                                   int64_t dil_w, int64_t oh, int64_t ow);

/* One output row of cuvil_qconv2d_blocked as its tiles see it. */
struct cuvil_qconvb_row {
  const uint8_t *in;     /* the image at the row's first input row */
  const int8_t *weight;  /* the first of the row's channel blocks' weights */
  const int32_t *sums;   /* the first block's weight sums */
  const float *scale;    /* the first block's output scales */
  const float *bias;     /* the first block's bias, or NULL */
  const float *residual; /* the row in the first block's residual, or NULL */
  /* Or the row in an 8-bit residual (cuvil_epilogue's residual8), read with
   * the epilogue's sign, scale and zero point. */
  const uint8_t *residual8;
  void *out;             /* the row in the first block of the output */
  int32_t zero;          /* the image's zero point (as uint8) */
  int64_t in_blocks, in_block, block;
  int64_t row_stride;    /* bytes from one image row to the next */
  int64_t plane_stride;  /* bytes from one input block to the next */
  int64_t kh, kw, stride_w, dil_h, dil_w;
  int64_t weight_stride; /* bytes from one channel block's weights to the next */
  int64_t out_stride;    /* elements from one output block to the next */
  const cuvil_epilogue *epilogue;
  const cuvil_qout *qout;
  /* With a requantized output and no residual: `folded`, and
   * cuvil_qout_bounds's lo and hi. */
  int folded;
  float lo, hi;
  cuvil_qout_fast fast; /* its requantization's constants */
  /* Requantized, folded, by the reciprocal, with a bias in range: the
   * epilogue's common case (qconvb.c's plain finish). */
  int plain;
};
/* The register tiles (qconvb.inc): one call computes columns [x0, x0 + u)
 * of one output row for nb (1 or 2) channel blocks, or returns 0 when it
 * cannot (another block size); the driver then runs the reference. */
typedef int (*cuvil_qconvb_fn)(const struct cuvil_qconvb_row *r, int64_t nb,
                               int64_t x0, int64_t u);
#define CUVIL_QCONVB_DECLARE(name)                                             \
  int cuvil_qconvb_##name(const struct cuvil_qconvb_row *r, int64_t nb,        \
                          int64_t x0, int64_t u);
CUVIL_QCONVB_DECLARE(reference)
#if defined(CUVIL_ENABLE_SIMD_KERNELS) && defined(__x86_64__)
CUVIL_QCONVB_DECLARE(avx2)
CUVIL_QCONVB_DECLARE(avx2_narrow)
CUVIL_QCONVB_DECLARE(avx512bw)
CUVIL_QCONVB_DECLARE(avx512bw_narrow)
CUVIL_QCONVB_DECLARE(avxvnni)
CUVIL_QCONVB_DECLARE(avx512vnni)
#endif
/* The variants a model calls (RuntimeSelection.cpp defines them): for any
 * weights, and for narrow ones. */
#ifndef CUVIL_QCONVB
#define CUVIL_QCONVB cuvil_qconvb_reference
#endif
#ifndef CUVIL_QCONVB_NARROW
#define CUVIL_QCONVB_NARROW CUVIL_QCONVB
#endif

/* The convolution: `x_zero` is the input's zero point as stored (int8:
 * -128..127), `sums` and `scale` one per output channel, `bias` NULL or
 * one per output channel, `qout` NULL for float32 output. The epilogue's
 * residual (float32) is blocked like the output; its row_bias is unused. */
void cuvil_qconv2d_blocked(cuvil_qconvb_fn tile, cuvil_pool *pool,
                           uint8_t *scratch, int64_t n, int64_t c, int64_t h,
                           int64_t w, const void *x, int64_t in_block,
                           int x_signed, int32_t x_zero, int64_t oc,
                           int64_t kh, int64_t kw, const int8_t *packed,
                           const int32_t *sums, const float *scale,
                           const float *bias, int64_t stride_h,
                           int64_t stride_w, int64_t pad_top, int64_t pad_left,
                           int64_t dil_h, int64_t dil_w, int64_t oh,
                           int64_t ow, void *y, int64_t block,
                           const cuvil_qout *qout,
                           const cuvil_epilogue *epilogue);

/*===- Depthwise convolutions (qdwconv.c) --------------------------------===*
 *
 * One filter per channel (groups == C == OC), on NCHW<block>c input and
 * output (block 8 or 16) or NCHW (block 1). Weights are the int8 values as
 * floats, packed [C / block][KH][KW][block] by cuvil_qdwconv_pack: every
 * product (x - zero) * w is a whole number below 2^15 in magnitude, so a
 * float32 sum of up to CUVIL_QDWCONV_MAX_TAPS of them is exact, which lets
 * the blocked kernel sum with vector FMAs and give the integer result. */
#define CUVIL_QDWCONV_MAX_TAPS 512
void cuvil_qdwconv_pack(int64_t c, int64_t kh, int64_t kw,
                        const int8_t *weights, int64_t block, float *packed);
void cuvil_qdwconv(cuvil_pool *pool, int64_t n, int64_t c, int64_t h,
                   int64_t w, const void *x, int x_signed, int32_t x_zero,
                   int64_t kh, int64_t kw, const float *packed,
                   const float *scale, const float *bias, int64_t stride_h,
                   int64_t stride_w, int64_t pad_top, int64_t pad_left,
                   int64_t dil_h, int64_t dil_w, int64_t oh, int64_t ow,
                   void *y, int64_t block, const cuvil_qout *qout,
                   const cuvil_epilogue *epilogue);

/*===- NCHW convolutions on the GEMM (qconv_im2col.c) --------------------===*
 *
 * Any convolution, grouped or not: each group's OIHW int8 weights packed
 * as B [C/G * KH * KW][O/G] by cuvil_qgemm_pack_b (row (c * KH + i) * KW +
 * j, column o), the groups' one after another (cuvil_qconv2d_packed_bytes
 * in all; the column sums and scales likewise per output channel); for
 * each image and group, the group's channels unfolded (im2col: [OH * OW]
 * [C/G * KH * KW] bytes, padded with the zero point) into the scratch,
 * then multiplied with its rows split over `pool`. Output NCHW. */
size_t cuvil_qconv2d_packed_bytes(int64_t o, int64_t c, int64_t kh, int64_t kw,
                                  int64_t groups);
size_t cuvil_qconv2d_scratch_bytes(int64_t c, int64_t kh, int64_t kw,
                                   int64_t oh, int64_t ow, int64_t groups);
void cuvil_qconv2d(cuvil_pool *pool, cuvil_qgemm4_fn kernel, int64_t n,
                   int64_t c, int64_t h, int64_t w, const void *x,
                   int x_signed, int32_t x_zero, int64_t o, int64_t kh,
                   int64_t kw, int64_t groups, const int8_t *packed_w,
                   const int32_t *col_sums, const float *col_scale,
                   const float *bias, int64_t sh, int64_t sw, int64_t ph,
                   int64_t pw, int64_t dh, int64_t dw, int64_t oh, int64_t ow,
                   void *y, uint8_t *scratch, const cuvil_qout *qout,
                   const cuvil_epilogue *epilogue);

#ifdef __cplusplus
}
#endif

#endif /* CUVIL_RUNTIME_QCONV_H */
