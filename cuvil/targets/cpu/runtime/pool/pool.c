/*===- pool.c - pooling ---------------------------------------------------===*
 *
 * One window at a time, each sum or maximum over (ky, kx) in order; float
 * pooling splits its output rows across the context's threads.
 *
 *===----------------------------------------------------------------------===*/

#include "cuvil/targets/cpu/runtime/pool/pool.h"

#include <math.h>
#include <string.h>

/* The window of one pooling call, and its image and output. */
struct cuvil_pool2d_args {
  int kind, count_include_pad;
  int64_t h, w, kh, kw, stride_h, stride_w, pad_top, pad_left, dil_h, dil_w;
  int64_t oh, ow, block;
  const float *input;
  float *output;
};

/* One output position's `BLOCK` lanes: each window step on all lanes at
 * once (a constant BLOCK keeps them in vector registers: one vmaxps or
 * vaddps per tap; v > acc ? v : acc is vmaxps's own rule, so a NaN in the
 * window is skipped); outside the image it counts padding, up to the
 * padded input's edge (count_include_pad's divisor). */
#define CUVIL_POOL_F32_POSITION(BLOCK)                                        \
  do {                                                                        \
    float acc_[64];                                                           \
    int64_t count_ = 0, padded_ = 0, l_, ky_, kx_;                            \
    for (l_ = 0; l_ < (BLOCK); ++l_)                                          \
      acc_[l_] = a->kind == 0 ? -INFINITY : 0.0f;                             \
    for (ky_ = 0; ky_ < a->kh; ++ky_) {                                       \
      int64_t iy_ = y * a->stride_h - a->pad_top + ky_ * a->dil_h;            \
      for (kx_ = 0; kx_ < a->kw; ++kx_) {                                     \
        int64_t ix_ = x * a->stride_w - a->pad_left + kx_ * a->dil_w;         \
        const float *v_;                                                      \
        if (iy_ < 0 || iy_ >= a->h || ix_ < 0 || ix_ >= a->w) {               \
          if (iy_ < a->h + a->pad_top && ix_ < a->w + a->pad_left)            \
            ++padded_;                                                        \
          continue;                                                           \
        }                                                                     \
        v_ = in + (iy_ * a->w + ix_) * (BLOCK);                               \
        if (a->kind == 0)                                                     \
          for (l_ = 0; l_ < (BLOCK); ++l_)                                    \
            acc_[l_] = v_[l_] > acc_[l_] ? v_[l_] : acc_[l_];                 \
        else                                                                  \
          for (l_ = 0; l_ < (BLOCK); ++l_)                                    \
            acc_[l_] += v_[l_];                                               \
        ++count_;                                                             \
      }                                                                       \
    }                                                                         \
    if (a->kind != 0) {                                                       \
      int64_t divisor_ = a->count_include_pad ? count_ + padded_ : count_;    \
      for (l_ = 0; l_ < (BLOCK); ++l_)                                        \
        acc_[l_] = divisor_ ? acc_[l_] / (float)divisor_ : 0.0f;              \
    }                                                                         \
    memcpy(out + x * (BLOCK), acc_, (size_t)(BLOCK) * sizeof(float));        \
  } while (0)

/* Columns [x0, x1) of output row y of a plain (NCHW) max pooling whose
 * windows lie inside the image's columns: tap by tap, (ky, kx) in the
 * order of CUVIL_POOL_F32_POSITION, each over the whole run of columns,
 * which the compiler vectorizes (one lane per column, strided loads); a
 * lane's sequence of comparisons is the position's own. */
#define CUVIL_MAXPOOL_TAP(STRIDE)                                              \
  do {                                                                         \
    for (x = x0; x < x1; ++x) {                                                \
      float v = row[x * (STRIDE)];                                             \
      out[x] = v > out[x] ? v : out[x];                                        \
    }                                                                          \
  } while (0)
static void cuvil_maxpool_plain_run(const struct cuvil_pool2d_args *a,
                                    const float *in, float *out, int64_t y,
                                    int64_t x0, int64_t x1) {
  int64_t ky, kx, x, sw = a->stride_w;
  for (x = x0; x < x1; ++x)
    out[x] = -INFINITY;
  for (ky = 0; ky < a->kh; ++ky) {
    int64_t iy = y * a->stride_h - a->pad_top + ky * a->dil_h;
    if (iy < 0 || iy >= a->h)
      continue;
    for (kx = 0; kx < a->kw; ++kx) {
      const float *row = in + iy * a->w - a->pad_left + kx * a->dil_w;
      /* Constant strides for the common windows: contiguous or pairwise
       * loads rather than gathers. */
      if (sw == 1)
        CUVIL_MAXPOOL_TAP(1);
      else if (sw == 2)
        CUVIL_MAXPOOL_TAP(2);
      else
        CUVIL_MAXPOOL_TAP(sw);
    }
  }
}

#undef CUVIL_MAXPOOL_TAP

/* Output rows [begin, end) of (plane, y) pairs. */
static void cuvil_pool2d_rows(void *p, int64_t begin, int64_t end) {
  const struct cuvil_pool2d_args *a = (const struct cuvil_pool2d_args *)p;
  int64_t r, x, B = a->block;
  /* Plain max pooling: the columns whose windows are inside the image
   * [x0, x1) as one vectorized run, the others one at a time. */
  int64_t x0 = 0, x1 = 0, reach = (a->kw - 1) * a->dil_w;
  if (B == 1 && a->kind == 0) {
    x0 = (a->pad_left + a->stride_w - 1) / a->stride_w;
    x1 = a->w - 1 - reach + a->pad_left < 0
             ? 0
             : (a->w - 1 - reach + a->pad_left) / a->stride_w + 1;
    x1 = x1 < a->ow ? x1 : a->ow;
    x0 = x0 < x1 ? x0 : x1;
  }
  for (r = begin; r < end; ++r) {
    int64_t plane = r / a->oh, y = r % a->oh;
    const float *in = a->input + plane * a->h * a->w * B;
    float *out = a->output + (plane * a->oh + y) * a->ow * B;
    if (x1 > x0)
      cuvil_maxpool_plain_run(a, in, out, y, x0, x1);
    for (x = 0; x < a->ow; ++x) {
      if (x == x0 && x1 > x0)
        x = x1;
      if (x >= a->ow)
        break;
      if (B == 16)
        CUVIL_POOL_F32_POSITION(16);
      else if (B == 8)
        CUVIL_POOL_F32_POSITION(8);
      else if (B == 4)
        CUVIL_POOL_F32_POSITION(4);
      else if (B == 1)
        CUVIL_POOL_F32_POSITION(1);
      else
        CUVIL_POOL_F32_POSITION(B);
    }
  }
}

void cuvil_pool2d_blocked_f32(cuvil_pool *pool, int kind, int64_t n,
                              int64_t c, int64_t h, int64_t w,
                              const float *input, int64_t kh, int64_t kw,
                              int64_t stride_h, int64_t stride_w,
                              int64_t pad_top, int64_t pad_left, int64_t dil_h,
                              int64_t dil_w, int count_include_pad, int64_t oh,
                              int64_t ow, float *output, int64_t block) {
  struct cuvil_pool2d_args a = {
      kind, count_include_pad, h, w, kh, kw, stride_h, stride_w, pad_top,
      pad_left, dil_h, dil_w, oh, ow, block, input, output};
  int64_t planes = n * ((c + block - 1) / block);
  cuvil_parallel_for(pool, planes * oh, cuvil_pool2d_rows, &a);
}

void cuvil_pool2d_f32(cuvil_pool *pool, int kind, int64_t n, int64_t c,
                      int64_t h, int64_t w, const float *input, int64_t kh,
                      int64_t kw, int64_t stride_h, int64_t stride_w,
                      int64_t pad_top, int64_t pad_left, int64_t dil_h,
                      int64_t dil_w, int count_include_pad, int64_t oh,
                      int64_t ow, float *output) {
  /* NCHW is NCHW1c. */
  cuvil_pool2d_blocked_f32(pool, kind, n, c, h, w, input, kh, kw, stride_h,
                           stride_w, pad_top, pad_left, dil_h, dil_w,
                           count_include_pad, oh, ow, output, 1);
}

/* One output position's `block` lanes: the max over the window's taps
 * inside the image. */
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

/* Output row y of one plane for a block of B lanes held in one vector
 * (GCC/Clang vector extensions: one vpmaxub / vpmaxsb per tap), the
 * window rows inside the image found once for the row. */
#define CUVIL_MAXPOOL_Q8_VECTOR(T, S, B)                                       \
  typedef T cuvil_mp_##S##B                                                    \
      __attribute__((vector_size(B), aligned(1), may_alias));                  \
  static void cuvil_mp_row_##S##B(                                             \
      const T *in, int64_t h, int64_t w, int64_t kh, int64_t kw,               \
      int64_t stride_h, int64_t stride_w, int64_t pad_top, int64_t pad_left,   \
      int64_t dil_h, int64_t dil_w, int64_t y, int64_t ow, T lowest, T *out) { \
    int64_t x, ky, kx, ky0 = 0, ky1 = kh;                                      \
    const int64_t iy0 = y * stride_h - pad_top;                                \
    while (ky0 < kh && iy0 + ky0 * dil_h < 0)                                  \
      ++ky0;                                                                   \
    while (ky1 > ky0 && iy0 + (ky1 - 1) * dil_h >= h)                          \
      --ky1;                                                                   \
    for (x = 0; x < ow; ++x) {                                                 \
      const int64_t ix0 = x * stride_w - pad_left;                             \
      cuvil_mp_##S##B acc = {0};                                               \
      acc += lowest;                                                           \
      for (ky = ky0; ky < ky1; ++ky) {                                         \
        const T *row = in + (iy0 + ky * dil_h) * w * (B);                      \
        for (kx = 0; kx < kw; ++kx) {                                          \
          const int64_t ix = ix0 + kx * dil_w;                                 \
          cuvil_mp_##S##B v, m;                                                \
          if (ix < 0 || ix >= w)                                               \
            continue;                                                          \
          v = *(const cuvil_mp_##S##B *)(row + ix * (B));                      \
          m = (cuvil_mp_##S##B)(v > acc);                                      \
          acc = (v & m) | (acc & ~m);                                          \
        }                                                                      \
      }                                                                        \
      memcpy(out + x * (B), &acc, (B));                                        \
    }                                                                          \
  }
CUVIL_MAXPOOL_Q8_VECTOR(uint8_t, u, 8)
CUVIL_MAXPOOL_Q8_VECTOR(uint8_t, u, 16)
CUVIL_MAXPOOL_Q8_VECTOR(uint8_t, u, 32)
CUVIL_MAXPOOL_Q8_VECTOR(uint8_t, u, 64)
CUVIL_MAXPOOL_Q8_VECTOR(int8_t, s, 8)
CUVIL_MAXPOOL_Q8_VECTOR(int8_t, s, 16)
CUVIL_MAXPOOL_Q8_VECTOR(int8_t, s, 32)
CUVIL_MAXPOOL_Q8_VECTOR(int8_t, s, 64)
#undef CUVIL_MAXPOOL_Q8_VECTOR

/* The pooling of one storage type (S: u or s); blocks of 8 to 64 lanes
 * take the vector rows, others one position at a time. */
#define CUVIL_DEFINE_MAXPOOL_Q8(NAME, T, S, LOWEST)                            \
  static void NAME(int64_t planes, int64_t h, int64_t w, const T *input,       \
                   int64_t kh, int64_t kw, int64_t stride_h, int64_t stride_w, \
                   int64_t pad_top, int64_t pad_left, int64_t dil_h,           \
                   int64_t dil_w, int64_t oh, int64_t ow, T *output,           \
                   int64_t block) {                                            \
    int64_t p, y, x;                                                           \
    for (p = 0; p < planes; ++p) {                                             \
      const T *in = input + p * h * w * block;                                 \
      T *out = output + p * oh * ow * block;                                   \
      for (y = 0; y < oh; ++y) {                                               \
        T *row = out + y * ow * block;                                         \
        if (block == 8)                                                        \
          cuvil_mp_row_##S##8(in, h, w, kh, kw, stride_h, stride_w, pad_top,   \
                              pad_left, dil_h, dil_w, y, ow, LOWEST, row);     \
        else if (block == 16)                                                  \
          cuvil_mp_row_##S##16(in, h, w, kh, kw, stride_h, stride_w, pad_top,  \
                               pad_left, dil_h, dil_w, y, ow, LOWEST, row);    \
        else if (block == 32)                                                  \
          cuvil_mp_row_##S##32(in, h, w, kh, kw, stride_h, stride_w, pad_top,  \
                               pad_left, dil_h, dil_w, y, ow, LOWEST, row);    \
        else if (block == 64)                                                  \
          cuvil_mp_row_##S##64(in, h, w, kh, kw, stride_h, stride_w, pad_top,  \
                               pad_left, dil_h, dil_w, y, ow, LOWEST, row);    \
        else                                                                   \
          for (x = 0; x < ow; ++x)                                             \
            CUVIL_MAXPOOL_Q8_POSITION(T, LOWEST, block);                       \
      }                                                                        \
    }                                                                          \
  }

CUVIL_DEFINE_MAXPOOL_Q8(max_pool_u8, uint8_t, u, 0)
CUVIL_DEFINE_MAXPOOL_Q8(max_pool_s8, int8_t, s, -128)

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

void cuvil_max_pool2d_indices_f32(int64_t planes, int64_t h, int64_t w,
                                  const float *input, int64_t kh, int64_t kw,
                                  int64_t stride_h, int64_t stride_w,
                                  int64_t pad_top, int64_t pad_left,
                                  int64_t dil_h, int64_t dil_w,
                                  int column_major, int64_t oh, int64_t ow,
                                  int64_t *output) {
  int64_t p, y, x, ky, kx;
  for (p = 0; p < planes; ++p) {
    const float *in = input + p * h * w;
    for (y = 0; y < oh; ++y)
      for (x = 0; x < ow; ++x) {
        int64_t best_y = -1, best_x = 0;
        float best = 0;
        for (ky = 0; ky < kh; ++ky) {
          int64_t iy = y * stride_h - pad_top + ky * dil_h;
          if (iy < 0 || iy >= h)
            continue;
          for (kx = 0; kx < kw; ++kx) {
            int64_t ix = x * stride_w - pad_left + kx * dil_w;
            float v;
            if (ix < 0 || ix >= w)
              continue;
            v = in[iy * w + ix];
            /* The first tap, a larger one, or the first NaN. */
            if (best_y < 0 || (best == best && (v > best || v != v))) {
              best = v;
              best_y = iy;
              best_x = ix;
            }
          }
        }
        output[(p * oh + y) * ow + x] = best_y < 0 ? -1
                                        : column_major
                                            ? (p * w + best_x) * h + best_y
                                            : (p * h + best_y) * w + best_x;
      }
  }
}
