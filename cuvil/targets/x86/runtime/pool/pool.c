/*===- pool.c - pooling ---------------------------------------------------===*
 *
 * One window at a time, each sum or maximum over (ky, kx) in order.
 *
 *===----------------------------------------------------------------------===*/

#include "cuvil/targets/x86/runtime/pool/pool.h"

#include <math.h>
#include <string.h>

void cuvil_pool2d_blocked_f32(int kind, int64_t n, int64_t c, int64_t h,
                              int64_t w, const float *input, int64_t kh,
                              int64_t kw, int64_t stride_h, int64_t stride_w,
                              int64_t pad_top, int64_t pad_left, int64_t dil_h,
                              int64_t dil_w, int count_include_pad, int64_t oh,
                              int64_t ow, float *output, int64_t block) {
  /* Each window step on the `block` lanes of a position at once; outside
   * the image it counts padding, up to the padded input's edge
   * (count_include_pad's divisor). */
  int64_t planes = n * ((c + block - 1) / block), p, y, x, ky, kx, l;
  float acc[64];
  for (p = 0; p < planes; ++p) {
    const float *in = input + p * h * w * block;
    float *out = output + p * oh * ow * block;
    for (y = 0; y < oh; ++y)
      for (x = 0; x < ow; ++x) {
        int64_t count = 0, padded = 0;
        for (l = 0; l < block; ++l)
          acc[l] = kind == 0 ? -INFINITY : 0.0f;
        for (ky = 0; ky < kh; ++ky) {
          int64_t iy = y * stride_h - pad_top + ky * dil_h;
          for (kx = 0; kx < kw; ++kx) {
            int64_t ix = x * stride_w - pad_left + kx * dil_w;
            const float *v;
            if (iy < 0 || iy >= h || ix < 0 || ix >= w) {
              if (iy < h + pad_top && ix < w + pad_left)
                ++padded;
              continue;
            }
            v = in + (iy * w + ix) * block;
            if (kind == 0)
              for (l = 0; l < block; ++l)
                acc[l] = v[l] > acc[l] ? v[l] : acc[l];
            else
              for (l = 0; l < block; ++l)
                acc[l] += v[l];
            ++count;
          }
        }
        if (kind != 0) {
          int64_t divisor = count_include_pad ? count + padded : count;
          for (l = 0; l < block; ++l)
            acc[l] = divisor ? acc[l] / (float)divisor : 0.0f;
        }
        memcpy(out + (y * ow + x) * block, acc, (size_t)block * sizeof(float));
      }
  }
}

void cuvil_pool2d_f32(int kind, int64_t n, int64_t c, int64_t h, int64_t w,
                      const float *input, int64_t kh, int64_t kw,
                      int64_t stride_h, int64_t stride_w, int64_t pad_top,
                      int64_t pad_left, int64_t dil_h, int64_t dil_w,
                      int count_include_pad, int64_t oh, int64_t ow,
                      float *output) {
  /* NCHW is NCHW1c. */
  cuvil_pool2d_blocked_f32(kind, n, c, h, w, input, kh, kw, stride_h, stride_w,
                           pad_top, pad_left, dil_h, dil_w, count_include_pad,
                           oh, ow, output, 1);
}

/* One output position's `block` lanes: the max over the window's taps
 * inside the image. A constant `block` lets the compiler keep the lanes in
 * vector registers (one vpmaxub/vpmaxsb per tap). */
#define CUVIL_MAXPOOL_Q8_POSITION(T, LOWEST, BLOCK)                           \
  do {                                                                        \
    T acc_[64];                                                               \
    int64_t l_, ky_, kx_;                                                     \
    for (l_ = 0; l_ < (BLOCK); ++l_)                                          \
      acc_[l_] = (LOWEST);                                                    \
    for (ky_ = 0; ky_ < kh; ++ky_) {                                          \
      int64_t iy_ = y * stride_h - pad_top + ky_ * dil_h;                     \
      if (iy_ < 0 || iy_ >= h)                                                \
        continue;                                                             \
      for (kx_ = 0; kx_ < kw; ++kx_) {                                        \
        int64_t ix_ = x * stride_w - pad_left + kx_ * dil_w;                  \
        const T *v_;                                                          \
        if (ix_ < 0 || ix_ >= w)                                              \
          continue;                                                           \
        v_ = in + (iy_ * w + ix_) * (BLOCK);                                  \
        for (l_ = 0; l_ < (BLOCK); ++l_)                                      \
          acc_[l_] = v_[l_] > acc_[l_] ? v_[l_] : acc_[l_];                   \
      }                                                                       \
    }                                                                         \
    memcpy(out + (y * ow + x) * (BLOCK), acc_, (size_t)(BLOCK) * sizeof(T));  \
  } while (0)

/* The pooling of one storage type; `block` picks a specialized body. */
#define CUVIL_DEFINE_MAXPOOL_Q8(NAME, T, LOWEST)                              \
  static void NAME(int64_t planes, int64_t h, int64_t w, const T *input,      \
                   int64_t kh, int64_t kw, int64_t stride_h,                  \
                   int64_t stride_w, int64_t pad_top, int64_t pad_left,       \
                   int64_t dil_h, int64_t dil_w, int64_t oh, int64_t ow,      \
                   T *output, int64_t block) {                                \
    int64_t p, y, x;                                                          \
    for (p = 0; p < planes; ++p) {                                            \
      const T *in = input + p * h * w * block;                                \
      T *out = output + p * oh * ow * block;                                  \
      for (y = 0; y < oh; ++y)                                                \
        for (x = 0; x < ow; ++x) {                                            \
          if (block == 64)                                                    \
            CUVIL_MAXPOOL_Q8_POSITION(T, LOWEST, 64);                         \
          else if (block == 32)                                               \
            CUVIL_MAXPOOL_Q8_POSITION(T, LOWEST, 32);                         \
          else if (block == 16)                                               \
            CUVIL_MAXPOOL_Q8_POSITION(T, LOWEST, 16);                         \
          else if (block == 8)                                                \
            CUVIL_MAXPOOL_Q8_POSITION(T, LOWEST, 8);                          \
          else                                                                \
            CUVIL_MAXPOOL_Q8_POSITION(T, LOWEST, block);                      \
        }                                                                     \
    }                                                                         \
  }

CUVIL_DEFINE_MAXPOOL_Q8(max_pool_u8, uint8_t, 0)
CUVIL_DEFINE_MAXPOOL_Q8(max_pool_s8, int8_t, -128)

void cuvil_max_pool2d_q8(int is_signed, int64_t n, int64_t c, int64_t h,
                         int64_t w, const void *input, int64_t kh, int64_t kw,
                         int64_t stride_h, int64_t stride_w, int64_t pad_top,
                         int64_t pad_left, int64_t dil_h, int64_t dil_w,
                         int64_t oh, int64_t ow, void *output, int64_t block) {
  int64_t planes = n * ((c + block - 1) / block);
  if (is_signed)
    max_pool_s8(planes, h, w, (const int8_t *)input, kh, kw, stride_h,
                stride_w, pad_top, pad_left, dil_h, dil_w, oh, ow,
                (int8_t *)output, block);
  else
    max_pool_u8(planes, h, w, (const uint8_t *)input, kh, kw, stride_h,
                stride_w, pad_top, pad_left, dil_h, dil_w, oh, ow,
                (uint8_t *)output, block);
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
