/*===- qconv_im2col.c - int8 NCHW convolutions on the int8 GEMM ----------===*
 *
 * Any ungrouped convolution, on plain NCHW: each image unfolded into bytes,
 * then multiplied by cuvil_qgemm_run, whose tiles are finished here into
 * the channel-major output.
 *
 *===----------------------------------------------------------------------===*/

#include "cuvil/targets/cpu/runtime/qconv/qconv.h"

static int64_t cuvil_qconv_align(int64_t bytes) { return (bytes + 63) / 64 * 64; }

size_t cuvil_qconv2d_packed_bytes(int64_t o, int64_t c, int64_t kh, int64_t kw,
                                  int64_t groups) {
  return (size_t)groups *
         cuvil_qgemm_packed_bytes(c / groups * kh * kw, o / groups);
}

size_t cuvil_qconv2d_scratch_bytes(int64_t c, int64_t kh, int64_t kw,
                                   int64_t oh, int64_t ow, int64_t groups) {
  int64_t k = c / groups * kh * kw, p = oh * ow;
  return (size_t)cuvil_qconv_align(p * k) + cuvil_qgemm_scratch_bytes(p, k);
}

/* One image's [OH * OW][C * KH * KW] patches; taps outside it read `pad`
 * (the zero point's stored byte). */
static void cuvil_qconv_im2col(const uint8_t *x, int64_t c, int64_t h,
                               int64_t w, int64_t kh, int64_t kw, int64_t sh,
                               int64_t sw, int64_t ph, int64_t pw, int64_t dh,
                               int64_t dw, int64_t oh, int64_t ow, uint8_t pad,
                               uint8_t *cols) {
  int64_t k = c * kh * kw, y0, x0, ch, i, j;
  for (y0 = 0; y0 < oh; ++y0)
    for (x0 = 0; x0 < ow; ++x0) {
      uint8_t *row = cols + (y0 * ow + x0) * k;
      for (ch = 0; ch < c; ++ch)
        for (i = 0; i < kh; ++i) {
          int64_t yy = y0 * sh - ph + i * dh;
          for (j = 0; j < kw; ++j) {
            int64_t xx = x0 * sw - pw + j * dw;
            *row++ = yy >= 0 && yy < h && xx >= 0 && xx < w
                         ? x[(ch * h + yy) * w + xx]
                         : pad;
          }
        }
    }
}

struct cuvil_qconv_out {
  void *y; /* this image's [O][OH * OW] */
  int64_t pixels;
  const float *col_scale, *bias, *residual; /* residual: this image's */
  const uint8_t *residual8;                 /* or this image's 8-bit residual */
  const cuvil_epilogue *epilogue;
  const cuvil_qout *qout;
};

/* A tile of pixels [i, i + rows) x channels [j, j + cols), finished (qconv.h)
 * and written channel-major. */
static void cuvil_qconv_store(void *out, int64_t i, int64_t rows, int64_t j,
                              int64_t cols, const int32_t *acc) {
  const struct cuvil_qconv_out *o = (const struct cuvil_qconv_out *)out;
  int64_t r, q;
  for (q = 0; q < cols; ++q)
    for (r = 0; r < rows; ++r) {
      int64_t at = (j + q) * o->pixels + i + r;
      float r8 =
          o->residual8 ? cuvil_residual8(o->epilogue, o->residual8, at) : 0.0f;
      float v = cuvil_qconv_value(acc[r * 16 + q], o->col_scale[j + q],
                                  o->bias ? o->bias + j + q : 0,
                                  o->residual    ? o->residual + at
                                  : o->residual8 ? &r8
                                                 : 0,
                                  o->epilogue);
      cuvil_qout_store(o->qout, o->y, at, v);
    }
}

void cuvil_qconv2d(cuvil_pool *pool, cuvil_qgemm4_fn kernel, int64_t n,
                   int64_t c, int64_t h, int64_t w, const void *x,
                   int x_signed, int32_t x_zero, int64_t o, int64_t kh,
                   int64_t kw, int64_t groups, const int8_t *packed_w,
                   const int32_t *col_sums, const float *col_scale,
                   const float *bias, int64_t sh, int64_t sw, int64_t ph,
                   int64_t pw, int64_t dh, int64_t dw, int64_t oh, int64_t ow,
                   void *y, uint8_t *scratch, const cuvil_qout *qout,
                   const cuvil_epilogue *epilogue) {
  int64_t cg = c / groups, og = o / groups, k = cg * kh * kw, p = oh * ow;
  int64_t out_bytes = qout ? 1 : (int64_t)sizeof(float), b, g;
  size_t group_bytes = cuvil_qgemm_packed_bytes(k, og);
  uint8_t *cols = scratch, *panels = scratch + cuvil_qconv_align(p * k);
  /* The stored byte of the zero point: uint8, or int8's two's complement. */
  uint8_t pad = (uint8_t)x_zero;
  struct cuvil_qconv_out out;
  out.pixels = p;
  out.epilogue = epilogue;
  out.qout = qout;
  for (b = 0; b < n; ++b)
    for (g = 0; g < groups; ++g) {
      /* The group's channels in, its output channels out. */
      int64_t first = b * o + g * og;
      cuvil_qconv_im2col((const uint8_t *)x + (b * c + g * cg) * h * w, cg, h,
                         w, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow, pad, cols);
      out.y = (uint8_t *)y + first * p * out_bytes;
      out.col_scale = col_scale + g * og;
      out.bias = bias ? bias + g * og : NULL;
      out.residual = epilogue && epilogue->residual
                         ? epilogue->residual + first * p
                         : NULL;
      out.residual8 = epilogue && epilogue->residual8
                          ? (const uint8_t *)epilogue->residual8 + first * p
                          : NULL;
      cuvil_qgemm_run(pool, kernel, p, og, k, cols, k, x_signed, x_zero,
                      packed_w + g * group_bytes, col_sums + g * og, panels,
                      cuvil_qconv_store, NULL, &out);
    }
}
