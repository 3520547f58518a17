/*===- cuvil_kernels.c - reference micro-kernels of compiled models -------===*
 *
 * The reference variants: plain C99 loops that the C compiler vectorizes.
 * Accumulation order is fixed (no dependence on threads), so results are
 * deterministic.
 *
 *===----------------------------------------------------------------------===*/

#include "cuvil_kernels.h"

#include <float.h>
#include <math.h>
#include <string.h>

void cuvil_matmul_f32(int64_t batch, int64_t m, int64_t n, int64_t k,
                      const float *a, int64_t a_batch_stride, int64_t a_row_stride,
                      int64_t a_col_stride, const float *b,
                      int64_t b_batch_stride, int64_t b_row_stride,
                      int64_t b_col_stride, float *c) {
  for (int64_t p = 0; p < batch; ++p) {
    const float *ap = a + p * a_batch_stride;
    const float *bp = b + p * b_batch_stride;
    float *cp = c + p * m * n;
    for (int64_t i = 0; i < m; ++i) {
      float *crow = cp + i * n;
      for (int64_t j = 0; j < n; ++j)
        crow[j] = 0.0f;
      for (int64_t l = 0; l < k; ++l) {
        float av = ap[i * a_row_stride + l * a_col_stride];
        const float *brow = bp + l * b_row_stride;
        if (b_col_stride == 1) {
          for (int64_t j = 0; j < n; ++j)
            crow[j] += av * brow[j];
        } else {
          for (int64_t j = 0; j < n; ++j)
            crow[j] += av * brow[j * b_col_stride];
        }
      }
    }
  }
}

void cuvil_conv2d_f32(int64_t n, int64_t c, int64_t h, int64_t w,
                      const float *input, int64_t oc, int64_t kh, int64_t kw,
                      const float *weight, const float *bias, int64_t groups,
                      int64_t stride_h, int64_t stride_w, int64_t pad_top,
                      int64_t pad_left, int64_t dil_h, int64_t dil_w,
                      int64_t oh, int64_t ow, float *output) {
  int64_t cg = c / groups, ocg = oc / groups;
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t o = 0; o < oc; ++o) {
      int64_t g = o / ocg;
      float *out = output + (b * oc + o) * oh * ow;
      float init = bias ? bias[o] : 0.0f;
      for (int64_t i = 0; i < oh * ow; ++i)
        out[i] = init;
      for (int64_t ci = 0; ci < cg; ++ci) {
        const float *in = input + (b * c + g * cg + ci) * h * w;
        const float *wt = weight + (o * cg + ci) * kh * kw;
        for (int64_t ky = 0; ky < kh; ++ky) {
          for (int64_t kx = 0; kx < kw; ++kx) {
            float wv = wt[ky * kw + kx];
            for (int64_t y = 0; y < oh; ++y) {
              int64_t iy = y * stride_h - pad_top + ky * dil_h;
              if (iy < 0 || iy >= h)
                continue;
              const float *inrow = in + iy * w;
              float *outrow = out + y * ow;
              /* Output columns whose input column is inside the image. */
              int64_t x0 = 0, x1 = ow;
              int64_t base = -pad_left + kx * dil_w;
              while (x0 < ow && x0 * stride_w + base < 0)
                ++x0;
              while (x1 > x0 && (x1 - 1) * stride_w + base >= w)
                --x1;
              if (stride_w == 1) {
                const float *src = inrow + base;
                for (int64_t x = x0; x < x1; ++x)
                  outrow[x] += wv * src[x];
              } else {
                for (int64_t x = x0; x < x1; ++x)
                  outrow[x] += wv * inrow[x * stride_w + base];
              }
            }
          }
        }
      }
    }
  }
}

void cuvil_pool2d_f32(int kind, int64_t n, int64_t c, int64_t h, int64_t w,
                      const float *input, int64_t kh, int64_t kw,
                      int64_t stride_h, int64_t stride_w, int64_t pad_top,
                      int64_t pad_left, int64_t dil_h, int64_t dil_w,
                      int count_include_pad, int64_t oh, int64_t ow,
                      float *output) {
  for (int64_t p = 0; p < n * c; ++p) {
    const float *in = input + p * h * w;
    float *out = output + p * oh * ow;
    for (int64_t y = 0; y < oh; ++y) {
      for (int64_t x = 0; x < ow; ++x) {
        float acc = kind == 0 ? -INFINITY : 0.0f;
        int64_t count = 0, padded = 0;
        for (int64_t ky = 0; ky < kh; ++ky) {
          int64_t iy = y * stride_h - pad_top + ky * dil_h;
          for (int64_t kx = 0; kx < kw; ++kx) {
            int64_t ix = x * stride_w - pad_left + kx * dil_w;
            if (iy < 0 || iy >= h || ix < 0 || ix >= w) {
              /* Padding counts only up to the padded input's edge. */
              if (iy < h + pad_top && ix < w + pad_left)
                ++padded;
              continue;
            }
            float v = in[iy * w + ix];
            if (kind == 0)
              acc = v > acc ? v : acc;
            else
              acc += v;
            ++count;
          }
        }
        if (kind != 0) {
          int64_t divisor = count_include_pad ? count + padded : count;
          acc = divisor ? acc / (float)divisor : 0.0f;
        }
        out[y * ow + x] = acc;
      }
    }
  }
}

void cuvil_adaptive_avg_pool2d_f32(int64_t n, int64_t c, int64_t h, int64_t w,
                                   const float *input, int64_t oh, int64_t ow,
                                   float *output) {
  for (int64_t p = 0; p < n * c; ++p) {
    const float *in = input + p * h * w;
    for (int64_t y = 0; y < oh; ++y) {
      int64_t y0 = (y * h) / oh, y1 = ((y + 1) * h + oh - 1) / oh;
      for (int64_t x = 0; x < ow; ++x) {
        int64_t x0 = (x * w) / ow, x1 = ((x + 1) * w + ow - 1) / ow;
        float acc = 0.0f;
        for (int64_t iy = y0; iy < y1; ++iy)
          for (int64_t ix = x0; ix < x1; ++ix)
            acc += in[iy * w + ix];
        output[(p * oh + y) * ow + x] = acc / (float)((y1 - y0) * (x1 - x0));
      }
    }
  }
}

void cuvil_softmax_f32(int log, int64_t outer, int64_t axis, int64_t inner,
                       const float *input, float *output) {
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const float *in = input + o * axis * inner + i;
      float *out = output + o * axis * inner + i;
      float max = -INFINITY;
      for (int64_t a = 0; a < axis; ++a)
        max = in[a * inner] > max ? in[a * inner] : max;
      float sum = 0.0f;
      for (int64_t a = 0; a < axis; ++a) {
        float e = expf(in[a * inner] - max);
        sum += e;
        if (!log)
          out[a * inner] = e;
      }
      if (log) {
        float shift = max + logf(sum);
        for (int64_t a = 0; a < axis; ++a)
          out[a * inner] = in[a * inner] - shift;
      } else {
        float inv = 1.0f / sum;
        for (int64_t a = 0; a < axis; ++a)
          out[a * inner] *= inv;
      }
    }
  }
}

void cuvil_layer_norm_f32(int64_t outer, int64_t inner, const float *input,
                          const float *scale, const float *bias, double epsilon,
                          float *output) {
  for (int64_t o = 0; o < outer; ++o) {
    const float *in = input + o * inner;
    float *out = output + o * inner;
    double mean = 0.0, var = 0.0;
    for (int64_t i = 0; i < inner; ++i)
      mean += in[i];
    mean /= (double)inner;
    for (int64_t i = 0; i < inner; ++i) {
      double d = in[i] - mean;
      var += d * d;
    }
    var /= (double)inner;
    float inv = (float)(1.0 / sqrt(var + epsilon));
    float m = (float)mean;
    for (int64_t i = 0; i < inner; ++i) {
      float v = (in[i] - m) * inv;
      if (scale)
        v *= scale[i];
      if (bias)
        v += bias[i];
      out[i] = v;
    }
  }
}

void cuvil_batch_norm_f32(int64_t n, int64_t c, int64_t spatial,
                          const float *input, const float *scale,
                          const float *bias, const float *mean,
                          const float *variance, double epsilon, float *output) {
  for (int64_t ch = 0; ch < c; ++ch) {
    float s = (float)(scale[ch] / sqrt((double)variance[ch] + epsilon));
    float t = bias[ch] - mean[ch] * s;
    for (int64_t b = 0; b < n; ++b) {
      const float *in = input + (b * c + ch) * spatial;
      float *out = output + (b * c + ch) * spatial;
      for (int64_t i = 0; i < spatial; ++i)
        out[i] = in[i] * s + t;
    }
  }
}

void cuvil_reduce_f32(int kind, int64_t outer, int64_t reduced, int64_t inner,
                      const float *input, float *output) {
  for (int64_t o = 0; o < outer; ++o) {
    float *out = output + o * inner;
    const float *in = input + o * reduced * inner;
    for (int64_t i = 0; i < inner; ++i)
      out[i] = kind == 2 ? -INFINITY : kind == 3 ? INFINITY : 0.0f;
    for (int64_t r = 0; r < reduced; ++r) {
      const float *row = in + r * inner;
      for (int64_t i = 0; i < inner; ++i) {
        float v = row[i];
        if (kind == 2)
          out[i] = v > out[i] ? v : out[i];
        else if (kind == 3)
          out[i] = v < out[i] ? v : out[i];
        else
          out[i] += v;
      }
    }
    if (kind == 1)
      for (int64_t i = 0; i < inner; ++i)
        out[i] /= (float)reduced;
  }
}

int cuvil_gather(int64_t element_size, int64_t outer, int64_t axis,
                 int64_t inner, const void *data, const void *indices,
                 int indices_are_i64, int64_t count, void *output) {
  const char *src = (const char *)data;
  char *dst = (char *)output;
  int64_t row = inner * element_size;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < count; ++i) {
      int64_t index = indices_are_i64 ? ((const int64_t *)indices)[i]
                                      : ((const int32_t *)indices)[i];
      if (index < 0)
        index += axis;
      if (index < 0 || index >= axis)
        return 1;
      memcpy(dst + (o * count + i) * row, src + (o * axis + index) * row,
             (size_t)row);
    }
  }
  return 0;
}
