/*===- dwconv_blocked.c - depthwise convolution on NCHW<B>c --------------===*
 *
 * Blocks of 4, 8 or 16 channels as one vector (GCC/Clang vector
 * extensions: one NEON, AVX2 or AVX-512 register),
 * 8 columns of independent sums at a time.
 *
 *===----------------------------------------------------------------------===*/

#include "cuvil/targets/cpu/runtime/conv_blocked/conv_blocked.h"

/* Depthwise convolution on NCHW<block>c: one task per (image, channel block,
 * output row); each output's block of channels sums its taps in (ky, kx)
 * order after the bias, as cuvil_dwconv_reference does per channel. The
 * lane loops have a constant trip count (4, 8 or 16), so they become one
 * vector FMA per tap. */
struct cuvil_dwb_args {
  const float *input, *weight, *bias, *residual;
  float *output;
  int64_t blocks, h, w, kh, kw, stride_h, stride_w, pad_top, pad_left, dil_h,
      dil_w, oh, ow, block;
  int activation;
  float lo, hi;
};

/* The taps [*k0, *k1) of a window starting at `start` that fall inside
 * [0, size). */
static void cuvil_dwb_taps(int64_t start, int64_t k, int64_t dil, int64_t size,
                           int64_t *k0, int64_t *k1) {
  *k0 = 0;
  *k1 = k;
  while (*k0 < k && start + *k0 * dil < 0)
    ++*k0;
  while (*k1 > *k0 && start + (*k1 - 1) * dil >= size)
    --*k1;
}

/* Residual and activation on `count` stored outputs (a loop the compiler
 * vectorizes). */
static void cuvil_dwb_finish(const struct cuvil_dwb_args *a, float *out,
                             const float *res, int64_t count) {
  int64_t i;
  if (res)
    for (i = 0; i < count; ++i)
      out[i] += res[i];
  if (a->activation == CUVIL_ACT_RELU)
    for (i = 0; i < count; ++i)
      out[i] = out[i] > 0.0f ? out[i] : 0.0f;
  else if (a->activation == CUVIL_ACT_CLIP)
    for (i = 0; i < count; ++i) {
      float v = out[i] > a->lo ? out[i] : a->lo;
      out[i] = v < a->hi ? v : a->hi;
    }
  else
    cuvil_activate_f32(a->activation, a->lo, a->hi, out, count);
}

/* B lanes as one vector (GCC/Clang vector extension: one register with the
 * target's ISA, split otherwise); unaligned, and allowed to alias the
 * floats it is loaded from (like __m512). */
typedef float cuvil_vec4 __attribute__((vector_size(16), aligned(4), may_alias));
typedef float cuvil_vec8 __attribute__((vector_size(32), aligned(4), may_alias));
typedef float cuvil_vec16 __attribute__((vector_size(64), aligned(4), may_alias));

/* Columns whose whole window is inside the row go CUVIL_DWB_COLS at a time
 * (independent sums: one FMA chain per column would wait on its latency);
 * the edges one at a time over their valid taps. */
#define CUVIL_DWB_COLS 8
#define CUVIL_DWB_ROW(B)                                                       \
  static void cuvil_dwb_row_##B(const struct cuvil_dwb_args *a, int64_t t) {   \
    int64_t y = t % a->oh, q = t / a->oh, x = 0, ky, kx, j, ky0, ky1;          \
    int64_t xa = 0, xb = a->ow, k0, k1;                                        \
    const float *in = a->input + q * a->h * a->w * B;                          \
    const float *wt = a->weight + (q % a->blocks) * a->kh * a->kw * B;         \
    const cuvil_vec##B zero = {0};                                             \
    const cuvil_vec##B bias =                                                  \
        a->bias ? *(const cuvil_vec##B *)(a->bias + (q % a->blocks) * B)       \
                : zero;                                                        \
    float *out = a->output + (q * a->oh + y) * a->ow * B;                      \
    const float *res =                                                         \
        a->residual ? a->residual + (q * a->oh + y) * a->ow * B : 0;           \
    const int64_t iy0 = y * a->stride_h - a->pad_top, sw = a->stride_w * B;    \
    cuvil_vec##B acc[CUVIL_DWB_COLS];                                          \
    cuvil_dwb_taps(iy0, a->kh, a->dil_h, a->h, &ky0, &ky1);                    \
    while (xa < a->ow) {                                                       \
      cuvil_dwb_taps(xa * a->stride_w - a->pad_left, a->kw, a->dil_w, a->w,    \
                     &k0, &k1);                                                \
      if (k0 == 0 && k1 == a->kw)                                              \
        break;                                                                 \
      ++xa;                                                                    \
    }                                                                          \
    while (xb > xa) {                                                          \
      cuvil_dwb_taps((xb - 1) * a->stride_w - a->pad_left, a->kw, a->dil_w,    \
                     a->w, &k0, &k1);                                          \
      if (k0 == 0 && k1 == a->kw)                                              \
        break;                                                                 \
      --xb;                                                                    \
    }                                                                          \
    while (x < a->ow) {                                                        \
      int64_t cols = x >= xa && x + CUVIL_DWB_COLS <= xb ? CUVIL_DWB_COLS : 1; \
      if (cols == CUVIL_DWB_COLS) {                                            \
        CUVIL_UNROLL for (j = 0; j < CUVIL_DWB_COLS; ++j) acc[j] = bias;       \
        for (ky = ky0; ky < ky1; ++ky) {                                       \
          const float *row = in + (iy0 + ky * a->dil_h) * a->w * B +           \
                             (x * a->stride_w - a->pad_left) * B;              \
          for (kx = 0; kx < a->kw; ++kx) {                                     \
            const float *p = row + kx * a->dil_w * B;                          \
            const cuvil_vec##B wk =                                            \
                *(const cuvil_vec##B *)(wt + (ky * a->kw + kx) * B);           \
            CUVIL_UNROLL for (j = 0; j < CUVIL_DWB_COLS; ++j) acc[j] +=        \
                *(const cuvil_vec##B *)(p + j * sw) * wk;                      \
          }                                                                    \
        }                                                                      \
      } else {                                                                 \
        int64_t ix0 = x * a->stride_w - a->pad_left;                           \
        cuvil_dwb_taps(ix0, a->kw, a->dil_w, a->w, &k0, &k1);                  \
        acc[0] = bias;                                                         \
        for (ky = ky0; ky < ky1; ++ky) {                                       \
          const float *row = in + (iy0 + ky * a->dil_h) * a->w * B;            \
          for (kx = k0; kx < k1; ++kx)                                         \
            acc[0] += *(const cuvil_vec##B *)(row + (ix0 + kx * a->dil_w) * B) \
                      * *(const cuvil_vec##B *)(wt + (ky * a->kw + kx) * B);   \
        }                                                                      \
      }                                                                        \
      for (j = 0; j < cols; ++j)                                               \
        *(cuvil_vec##B *)(out + (x + j) * B) = acc[j];                         \
      cuvil_dwb_finish(a, out + x * B, res ? res + x * B : 0, cols * B);       \
      x += cols;                                                               \
    }                                                                          \
  }
CUVIL_DWB_ROW(4)
CUVIL_DWB_ROW(8)
CUVIL_DWB_ROW(16)
#undef CUVIL_DWB_ROW

static void cuvil_dwb_rows(void *p, int64_t begin, int64_t end) {
  const struct cuvil_dwb_args *a = (const struct cuvil_dwb_args *)p;
  int64_t t;
  for (t = begin; t < end; ++t) {
    if (a->block == 16)
      cuvil_dwb_row_16(a, t);
    else if (a->block == 8)
      cuvil_dwb_row_8(a, t);
    else
      cuvil_dwb_row_4(a, t);
  }
}

int cuvil_dwconv_blocked_f32(cuvil_pool *pool, int64_t n, int64_t c, int64_t h,
                             int64_t w, const float *input, int64_t kh,
                             int64_t kw, const float *weight, const float *bias,
                             int64_t stride_h, int64_t stride_w,
                             int64_t pad_top, int64_t pad_left, int64_t dil_h,
                             int64_t dil_w, int64_t oh, int64_t ow,
                             float *output, int64_t block,
                             const cuvil_epilogue *epilogue) {
  struct cuvil_dwb_args a;
  if (block != 4 && block != 8 && block != 16)
    return 1;
  a.input = input;
  a.weight = weight;
  a.bias = bias;
  a.residual = epilogue ? epilogue->residual : 0;
  a.output = output;
  a.blocks = c / block;
  a.h = h;
  a.w = w;
  a.kh = kh;
  a.kw = kw;
  a.stride_h = stride_h;
  a.stride_w = stride_w;
  a.pad_top = pad_top;
  a.pad_left = pad_left;
  a.dil_h = dil_h;
  a.dil_w = dil_w;
  a.oh = oh;
  a.ow = ow;
  a.block = block;
  a.activation = epilogue ? epilogue->activation : CUVIL_ACT_NONE;
  a.lo = epilogue ? epilogue->lo : 0.0f;
  a.hi = epilogue ? epilogue->hi : 0.0f;
  cuvil_parallel_for(pool, n * a.blocks * oh, cuvil_dwb_rows, &a);
  return 0;
}
