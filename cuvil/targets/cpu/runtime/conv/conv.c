/*===- conv.c - NCHW convolutions ------------------------------------------===*
 *
 * Every output element sums its terms in one order (input channel, ky, kx)
 * however planes are grouped or split across threads.
 *
 *===----------------------------------------------------------------------===*/

#include "cuvil/targets/cpu/runtime/contract/contract.h"
#include "cuvil/targets/cpu/runtime/conv/conv.h"
#include "cuvil/targets/cpu/runtime/gemm/gemm.h"
#include "cuvil/targets/cpu/runtime/neon/neon.h"

#include <stddef.h>

/* The output columns [*x0, *x1) of a row whose input column
 * x * stride + base lies inside [0, w): a convolution tap's valid span. */
static void cuvil_tap_columns(int64_t ow, int64_t w, int64_t stride,
                              int64_t base, int64_t *x0, int64_t *x1) {
  *x0 = 0;
  while (*x0 < ow && *x0 * stride + base < 0)
    ++*x0;
  *x1 = ow;
  while (*x1 > *x0 && (*x1 - 1) * stride + base >= w)
    --*x1;
}

void cuvil_dwconv_reference(int64_t h, int64_t w, const float *input,
                            int64_t kh, int64_t kw, const float *weight,
                            float bias, int64_t stride_h, int64_t stride_w,
                            int64_t pad_top, int64_t pad_left, int64_t dil_h,
                            int64_t dil_w, int64_t oh, int64_t ow,
                            float *output) {
  /* Tap by tap over the whole plane: out[y][x0..x1) += w * in[iy][x *
   * stride + base], [x0, x1) the columns whose tap is inside the image:
   * long loops the compiler vectorizes for any stride, and each element
   * still sums its taps in (ky, kx) order. */
  int64_t y, x, ky, kx;
  for (x = 0; x < oh * ow; ++x)
    output[x] = bias;
  for (ky = 0; ky < kh; ++ky) {
    for (kx = 0; kx < kw; ++kx) {
      float wv = weight[ky * kw + kx];
      int64_t base = kx * dil_w - pad_left, x0, x1;
      cuvil_tap_columns(ow, w, stride_w, base, &x0, &x1);
      for (y = 0; y < oh; ++y) {
        int64_t iy = y * stride_h - pad_top + ky * dil_h;
        const float *row = input + iy * w + base;
        float *out = output + y * ow;
        if (iy < 0 || iy >= h)
          continue;
        for (x = x0; x < x1; ++x)
          out[x] += wv * row[x * stride_w];
      }
    }
  }
}

#if defined(CUVIL_ENABLE_SIMD_KERNELS)
/* The reference's loops with the unit-stride row update written in LANES
 * wide FMAs (other strides, and the last < LANES columns, as in C). */
#define CUVIL_DWCONV_SIMD(name, isa, vec, LANES, set1, loadu, storeu, fmadd)    \
  __attribute__((target(isa))) void cuvil_dwconv_##name(                       \
      int64_t h, int64_t w, const float *input, int64_t kh, int64_t kw,        \
      const float *weight, float bias, int64_t stride_h, int64_t stride_w,     \
      int64_t pad_top, int64_t pad_left, int64_t dil_h, int64_t dil_w,         \
      int64_t oh, int64_t ow, float *output) {                                 \
    int64_t y, x, ky, kx;                                                      \
    for (x = 0; x < oh * ow; ++x)                                              \
      output[x] = bias;                                                        \
    for (ky = 0; ky < kh; ++ky) {                                              \
      for (kx = 0; kx < kw; ++kx) {                                            \
        float wv = weight[ky * kw + kx];                                       \
        vec wvec = set1(wv);                                                   \
        int64_t base = kx * dil_w - pad_left, x0, x1;                          \
        cuvil_tap_columns(ow, w, stride_w, base, &x0, &x1);                    \
        for (y = 0; y < oh; ++y) {                                             \
          int64_t iy = y * stride_h - pad_top + ky * dil_h;                    \
          const float *row = input + iy * w + base;                            \
          float *out = output + y * ow;                                        \
          if (iy < 0 || iy >= h)                                               \
            continue;                                                          \
          x = x0;                                                              \
          if (stride_w == 1)                                                   \
            for (; x + LANES <= x1; x += LANES)                                \
              storeu(out + x, fmadd(wvec, loadu(row + x), loadu(out + x)));    \
          for (; x < x1; ++x)                                                  \
            out[x] += wv * row[x * stride_w];                                  \
        }                                                                      \
      }                                                                        \
    }                                                                          \
  }
#if defined(__x86_64__)
#include <immintrin.h>
CUVIL_DWCONV_SIMD(avx2, "avx2,fma", __m256, 8, _mm256_set1_ps, _mm256_loadu_ps,
                  _mm256_storeu_ps, _mm256_fmadd_ps)
CUVIL_DWCONV_SIMD(avx512_taps, "avx512f", __m512, 16, _mm512_set1_ps,
                  _mm512_loadu_ps, _mm512_storeu_ps, _mm512_fmadd_ps)

/* Lanes l of [0, n) whose element base + l lies in [0, w). */
static inline uint32_t cuvil_dwconv_inside(int64_t base, int64_t n, int64_t w) {
  int64_t lo = base < 0 ? -base : 0, hi = w - base < n ? w - base : n;
  if (hi <= lo)
    return 0;
  return (uint32_t)((((uint64_t)1 << hi) - 1) & ~(((uint64_t)1 << lo) - 1));
}

/* 16 output columns from x0 at stride 1 or 2, the taps' elements outside
 * the row read as zeros by masked loads (which do not touch masked-out
 * memory). */
__attribute__((target("avx512f"))) static inline __m512
cuvil_dwconv_columns16(const float *row, int64_t base, int64_t stride,
                       int64_t w) {
  if (stride == 1)
    return _mm512_maskz_loadu_ps((__mmask16)cuvil_dwconv_inside(base, 16, w),
                                 row + base);
  {
    uint32_t m = cuvil_dwconv_inside(base, 32, w);
    __m512 lo = _mm512_maskz_loadu_ps((__mmask16)m, row + base);
    __m512 hi = _mm512_maskz_loadu_ps((__mmask16)(m >> 16), row + base + 16);
    const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14,
                                          12, 10, 8, 6, 4, 2, 0);
    return _mm512_permutex2var_ps(lo, even, hi);
  }
}

/* AVX-512, stride 1 or 2: each output row in vectors of 16 columns that
 * stay in a register across all taps (ky, kx in order, as the reference
 * sums them), the row's edges and tail by masks; a tap outside the image
 * adds w * 0. Other strides: tap by tap over the plane. */
__attribute__((target("avx512f"))) void
cuvil_dwconv_avx512(int64_t h, int64_t w, const float *input, int64_t kh,
                    int64_t kw, const float *weight, float bias,
                    int64_t stride_h, int64_t stride_w, int64_t pad_top,
                    int64_t pad_left, int64_t dil_h, int64_t dil_w, int64_t oh,
                    int64_t ow, float *output) {
  int64_t y, x0, ky, kx;
  if (stride_w != 1 && stride_w != 2) {
    cuvil_dwconv_avx512_taps(h, w, input, kh, kw, weight, bias, stride_h,
                             stride_w, pad_top, pad_left, dil_h, dil_w, oh, ow,
                             output);
    return;
  }
  for (y = 0; y < oh; ++y)
    for (x0 = 0; x0 < ow; x0 += 16) {
      __mmask16 cols = (__mmask16)cuvil_dwconv_inside(x0, 16, ow);
      __m512 acc = _mm512_set1_ps(bias);
      for (ky = 0; ky < kh; ++ky) {
        int64_t iy = y * stride_h - pad_top + ky * dil_h;
        const float *row = input + iy * w;
        if (iy < 0 || iy >= h)
          continue;
        for (kx = 0; kx < kw; ++kx)
          acc = _mm512_fmadd_ps(
              _mm512_set1_ps(weight[ky * kw + kx]),
              cuvil_dwconv_columns16(row, x0 * stride_w - pad_left + kx * dil_w,
                                     stride_w, w),
              acc);
      }
      _mm512_mask_storeu_ps(output + y * ow + x0, cols, acc);
    }
}
#elif defined(__aarch64__)
CUVIL_DWCONV_SIMD(neon, "+neon", float32x4_t, 4, vdupq_n_f32, vld1q_f32,
                  vst1q_f32, cuvil_neon_fmadd)
#endif
#undef CUVIL_DWCONV_SIMD
#endif

struct cuvil_conv2d_args {
  int64_t c, h, w, oc, kh, kw, groups, stride_h, stride_w, pad_top, pad_left,
      dil_h, dil_w, oh, ow;
  const float *input, *weight, *bias;
  float *output;
  const cuvil_epilogue *epilogue;
};

/* Output planes [begin, end) of n * oc (plane p: image p / oc, channel
 * p % oc). Up to four planes of one group are computed together so that
 * each input row loaded feeds four accumulations; every output element still
 * sums its terms in the same order (input channel, then ky, then kx), so the
 * result does not depend on how planes are grouped or split across threads. */
static void cuvil_conv2d_planes(void *p, int64_t begin, int64_t end) {
  const struct cuvil_conv2d_args *x = (const struct cuvil_conv2d_args *)p;
  if (x->groups == x->c && x->oc == x->c) {
    /* Depthwise: one plane per channel, through the micro-kernel family. */
    int64_t plane;
    for (plane = begin; plane < end; ++plane) {
      int64_t b = plane / x->oc, o = plane % x->oc;
      float *out = x->output + plane * x->oh * x->ow;
      CUVIL_DWCONV(x->h, x->w, x->input + (b * x->c + o) * x->h * x->w, x->kh,
                   x->kw, x->weight + o * x->kh * x->kw,
                   x->bias ? x->bias[o] : 0.0f, x->stride_h, x->stride_w,
                   x->pad_top, x->pad_left, x->dil_h, x->dil_w, x->oh, x->ow,
                   out);
      if (x->epilogue)
        cuvil_epilogue_row(x->epilogue, out, plane * x->oh * x->ow, 0,
                           x->oh * x->ow);
    }
    return;
  }
  int64_t cg = x->c / x->groups, ocg = x->oc / x->groups, plane, count;
  int64_t h = x->h, w = x->w, kh = x->kh, kw = x->kw, oh = x->oh, ow = x->ow;
  int64_t stride_h = x->stride_h, stride_w = x->stride_w;
  for (plane = begin; plane < end; plane += count) {
    int64_t b = plane / x->oc, o = plane % x->oc, g = o / ocg, ci, i, j;
    float *out[4];
    count = end - plane;
    if (count > 4)
      count = 4;
    if (count > ocg - o % ocg)
      count = ocg - o % ocg;
    for (j = 0; j < count; ++j) {
      float init = x->bias ? x->bias[o + j] : 0.0f;
      out[j] = x->output + (plane + j) * oh * ow;
      for (i = 0; i < oh * ow; ++i)
        out[j][i] = init;
    }
    for (ci = 0; ci < cg; ++ci) {
      const float *in = x->input + (b * x->c + g * cg + ci) * h * w;
      int64_t ky, kx;
      for (ky = 0; ky < kh; ++ky) {
        for (kx = 0; kx < kw; ++kx) {
          float wv[4] = {0.0f, 0.0f, 0.0f, 0.0f};
          int64_t y, x0, x1, base = -x->pad_left + kx * x->dil_w;
          for (j = 0; j < count; ++j)
            wv[j] = x->weight[((o + j) * cg + ci) * kh * kw + ky * kw + kx];
          cuvil_tap_columns(ow, w, stride_w, base, &x0, &x1);
          for (y = 0; y < oh; ++y) {
            int64_t iy = y * stride_h - x->pad_top + ky * x->dil_h, col;
            const float *inrow;
            if (iy < 0 || iy >= h)
              continue;
            inrow = in + iy * w + base;
            if (count == 4 && stride_w == 1) {
              float *o0 = out[0] + y * ow, *o1 = out[1] + y * ow;
              float *o2 = out[2] + y * ow, *o3 = out[3] + y * ow;
              for (col = x0; col < x1; ++col) {
                float v = inrow[col];
                o0[col] += wv[0] * v;
                o1[col] += wv[1] * v;
                o2[col] += wv[2] * v;
                o3[col] += wv[3] * v;
              }
            } else {
              for (j = 0; j < count; ++j) {
                float *orow = out[j] + y * ow;
                for (col = x0; col < x1; ++col)
                  orow[col] += wv[j] * inrow[col * stride_w];
              }
            }
          }
        }
      }
    }
    if (x->epilogue)
      for (j = 0; j < count; ++j)
        cuvil_epilogue_row(x->epilogue, out[j], (plane + j) * oh * ow, 0,
                           oh * ow);
  }
}

/* Writes the patches of one image, packed for the micro-kernels: column
 * strips of CUVIL_STRIP positions, each strip [c * kh * kw][CUVIL_STRIP]
 * contiguous (row (ci, ky, kx), column (y, x) - strip start), zero where the
 * window reads padding and past the last position. A strip is then read
 * sequentially by the kernel instead of one cache line per row of patches. */
static void cuvil_im2col_packed_f32(int64_t c, int64_t h, int64_t w,
                                    const float *input, int64_t kh, int64_t kw,
                                    int64_t stride_h, int64_t stride_w,
                                    int64_t pad_top, int64_t pad_left,
                                    int64_t dil_h, int64_t dil_w, int64_t oh,
                                    int64_t ow, float *patches, int64_t c_begin,
                                    int64_t c_end) {
  int64_t rows = c * kh * kw, ci, ky, kx;
  for (ci = c_begin; ci < c_end; ++ci) {
    for (ky = 0; ky < kh; ++ky) {
      for (kx = 0; kx < kw; ++kx) {
        int64_t row = (ci * kh + ky) * kw + kx, base = kx * dil_w - pad_left;
        int64_t y, col, x0, x1, p, end;
        const float *plane = input + ci * h * w;
        float *dst = patches + row * CUVIL_STRIP;
        cuvil_tap_columns(ow, w, stride_w, base, &x0, &x1);
        /* Position p lives at dst[(p / 32) * rows * 32 + p % 32]: a row of
         * outputs is written in runs that stay inside one strip, each a
         * zero head, a copy (a vectorizable loop) and a zero tail. */
        end = cuvil_strip_columns(oh * ow);
        for (y = 0; y <= oh; ++y) {
          int64_t iy = y * stride_h - pad_top + ky * dil_h;
          int64_t p0 = y * ow, stop_col = y < oh ? ow : end - oh * ow;
          int inside = y < oh && iy >= 0 && iy < h;
          const float *in = plane + iy * w + base;
          for (col = 0; col < stop_col; col = p) {
            int64_t at = p0 + col, lane = at % CUVIL_STRIP, q, lo, hi;
            float *d = dst + (at / CUVIL_STRIP) * rows * CUVIL_STRIP + lane;
            p = col + (CUVIL_STRIP - lane) < stop_col
                    ? col + (CUVIL_STRIP - lane)
                    : stop_col;
            /* Columns [col, p): input inside [lo, hi), zero around it.
             * (Row oh is the padding after the last position.) */
            lo = inside ? (x0 > col ? x0 : col) : p;
            hi = inside ? (x1 < p ? x1 : p) : p;
            if (hi < lo)
              hi = lo;
            for (q = col; q < lo; ++q)
              d[q - col] = 0.0f;
            if (stride_w == 1)
              for (; q < hi; ++q)
                d[q - col] = in[q];
            else
              for (; q < hi; ++q)
                d[q - col] = in[q * stride_w];
            for (; q < p; ++q)
              d[q - col] = 0.0f;
          }
        }
      }
    }
  }
}

/* The patches of input channels [begin, end): each writes its own rows. */
struct cuvil_im2col_args {
  int64_t c, h, w, kh, kw, stride_h, stride_w, pad_top, pad_left, dil_h, dil_w,
      oh, ow;
  const float *input;
  float *patches;
};

static void cuvil_im2col_channels(void *p, int64_t begin, int64_t end) {
  const struct cuvil_im2col_args *x = (const struct cuvil_im2col_args *)p;
  cuvil_im2col_packed_f32(x->c, x->h, x->w, x->input, x->kh, x->kw,
                          x->stride_h, x->stride_w, x->pad_top, x->pad_left,
                          x->dil_h, x->dil_w, x->oh, x->ow, x->patches, begin,
                          end);
}

void cuvil_conv2d_f32(cuvil_pool *pool, float *scratch, int64_t n, int64_t c,
                      int64_t h, int64_t w, const float *input, int64_t oc,
                      int64_t kh, int64_t kw, const float *weight,
                      const float *bias, int64_t groups, int64_t stride_h,
                      int64_t stride_w, int64_t pad_top, int64_t pad_left,
                      int64_t dil_h, int64_t dil_w, int64_t oh, int64_t ow,
                      float *output, const cuvil_epilogue *epilogue) {
  struct cuvil_conv2d_args args;
  /* As a matrix product, the bias joins the epilogue of each image. */
  cuvil_epilogue image_epilogue = {0, 0, CUVIL_ACT_NONE, 0.0f, 0.0f, 0,
                                   0, 0, 0.0f,           0.0f};
  int as_product = (scratch && groups == 1) ||
                   (kh == 1 && kw == 1 && stride_h == 1 && stride_w == 1 &&
                    pad_top == 0 && pad_left == 0 && groups == 1 && oh == h &&
                    ow == w);
  if (as_product) {
    /* out[oc, oh*ow] = weight[oc, c*kh*kw] @ patches[c*kh*kw, oh*ow] (packed
     * in strips); a pointwise convolution multiplies the image itself. */
    int64_t b, patch = c * kh * kw;
    int pointwise = !(scratch && groups == 1);
    if (epilogue)
      image_epilogue = *epilogue;
    image_epilogue.row_bias = bias;
    for (b = 0; b < n; ++b) {
      float *out = output + b * oc * oh * ow;
      const float *rhs = input + b * c * h * w;
      if (epilogue && epilogue->residual)
        image_epilogue.residual = epilogue->residual + b * oc * oh * ow;
      if (!pointwise) {
        struct cuvil_im2col_args im2col = {c,        h,       w,       kh,
                                           kw,       stride_h, stride_w, pad_top,
                                           pad_left, dil_h,   dil_w,   oh,
                                           ow,       rhs,     scratch};
        cuvil_parallel_for(pool, c, cuvil_im2col_channels, &im2col);
        cuvil_matmul_packed_f32(pool, oc, oh * ow, patch, weight, patch, 1,
                                scratch, out,
                                bias || epilogue ? &image_epilogue : 0);
        continue;
      }
      cuvil_matmul_f32(pool, NULL, 1, oc, oh * ow, patch, weight, 0, patch, 1,
                       rhs, 0, oh * ow, 1, out,
                       bias || epilogue ? &image_epilogue : 0);
    }
    return;
  }
  args.c = c;
  args.h = h;
  args.w = w;
  args.oc = oc;
  args.kh = kh;
  args.kw = kw;
  args.groups = groups;
  args.stride_h = stride_h;
  args.stride_w = stride_w;
  args.pad_top = pad_top;
  args.pad_left = pad_left;
  args.dil_h = dil_h;
  args.dil_w = dil_w;
  args.oh = oh;
  args.ow = ow;
  args.input = input;
  args.weight = weight;
  args.bias = bias;
  args.output = output;
  args.epilogue = epilogue;
  cuvil_parallel_for(pool, n * oc, cuvil_conv2d_planes, &args);
}
