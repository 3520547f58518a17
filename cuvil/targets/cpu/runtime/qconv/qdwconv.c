/*===- qdwconv.c - int8 depthwise convolutions -----------------------------===*
 *
 * Each output sums (x - zero) * w over its window's taps inside the image
 * (a padded tap would add (zero - zero) * w = 0). Every product is a whole
 * number of magnitude at most 255 * 128 and every partial sum below 2^24
 * (CUVIL_QDWCONV_MAX_TAPS), so float32 sums are the exact integer sums in
 * any order: the blocked kernel converts a block of 8 or 16 input bytes to
 * floats and runs one vector FMA per tap, 8 columns of independent sums at
 * a time, like cuvil_dwconv_blocked_f32.
 *
 *===----------------------------------------------------------------------===*/

#include "cuvil/targets/cpu/runtime/qconv/qconv.h"

#include <string.h>

void cuvil_qdwconv_pack(int64_t c, int64_t kh, int64_t kw,
                        const int8_t *weights, int64_t block, float *packed) {
  int64_t ch, t, taps = kh * kw;
  for (ch = 0; ch < c; ++ch)
    for (t = 0; t < taps; ++t)
      packed[((ch / block) * taps + t) * block + ch % block] =
          (float)weights[ch * taps + t];
}

/* Pointers the finishing loops write through alias nothing else (C99's
 * restrict; GNU spelling in C++ and older modes). */
#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 199901L
#define CUVIL_RESTRICT restrict
#else
#define CUVIL_RESTRICT __restrict__
#endif

struct cuvil_qdw_args {
  const uint8_t *input;
  const float *weight, *scale, *bias, *residual;
  const void *residual8; /* the epilogue's 8-bit residual, or NULL */
  uint8_t *output;
  int64_t blocks, h, w, kh, kw, stride_h, stride_w, pad_top, pad_left, dil_h,
      dil_w, oh, ow, block, out_bytes;
  int x_signed;
  float zero;
  const cuvil_epilogue *epilogue;
  const cuvil_qout *qout;
};

/* The taps [*k0, *k1) of a window starting at `start` that fall inside
 * [0, size). */
static void cuvil_qdw_taps(int64_t start, int64_t k, int64_t dil, int64_t size,
                           int64_t *k0, int64_t *k1) {
  *k0 = 0;
  *k1 = k;
  while (*k0 < k && start + *k0 * dil < 0)
    ++*k0;
  while (*k1 > *k0 && start + (*k1 - 1) * dil >= size)
    --*k1;
}

/* The blocked kernels' vectors of 16 floats are whole zmm registers even
 * where the CPU's tuning prefers 256-bit ones (clang's for Intel's AVX-512
 * cores): split in two, they double the instructions. */
#if defined(__clang__)
#define CUVIL_QDW_WIDE __attribute__((min_vector_width(512)))
#else
#define CUVIL_QDW_WIDE
#endif

/* B lanes as one vector (GCC/Clang vector extensions); unaligned, allowed
 * to alias what they are loaded from. */
typedef float cuvil_qdw_f8 __attribute__((vector_size(32), aligned(4), may_alias));
typedef float cuvil_qdw_f16 __attribute__((vector_size(64), aligned(4), may_alias));
typedef uint8_t cuvil_qdw_u8 __attribute__((vector_size(8), aligned(1), may_alias));
typedef uint8_t cuvil_qdw_u16 __attribute__((vector_size(16), aligned(1), may_alias));
typedef int8_t cuvil_qdw_i8 __attribute__((vector_size(8), aligned(1), may_alias));
typedef int8_t cuvil_qdw_i16 __attribute__((vector_size(16), aligned(1), may_alias));

/* qconv.h's steps on the sums of `cols` columns of one output row of
 * channel block `block_index` (B channels per column), stored from output
 * element `at` on. Loops with a constant lane count, so each step is a
 * few vector instructions per column. */
#define CUVIL_QDW_FINISH(B)                                                    \
  static void cuvil_qdw_finish_##B(const struct cuvil_qdw_args *a,             \
                                   float *sums_, int64_t block_index,          \
                                   int64_t at, int64_t cols) {                 \
    float *CUVIL_RESTRICT sums = sums_;                                        \
    const float *CUVIL_RESTRICT scale = a->scale + block_index * B;            \
    const float *CUVIL_RESTRICT bias =                                         \
        a->bias ? a->bias + block_index * B : 0;                               \
    const float *CUVIL_RESTRICT res = a->residual ? a->residual + at : 0;      \
    const cuvil_epilogue *e = a->epilogue;                                     \
    const int act = e ? e->activation : CUVIL_ACT_NONE;                        \
    const float lo = e ? e->lo : 0.0f, hi = e ? e->hi : 0.0f;                  \
    const int64_t n = cols * B;                                                \
    int64_t j, l;                                                              \
    for (j = 0; j < cols; ++j)                                                 \
      for (l = 0; l < B; ++l) {                                                \
        float v = sums[j * B + l] * scale[l];                                  \
        if (bias)                                                              \
          v = v + bias[l];                                                     \
        sums[j * B + l] = v;                                                   \
      }                                                                        \
    if (res)                                                                   \
      for (j = 0; j < n; ++j)                                                  \
        sums[j] = sums[j] + res[j];                                            \
    else if (a->residual8)                                                     \
      for (j = 0; j < n; ++j)                                                  \
        sums[j] = sums[j] + cuvil_residual8(e, a->residual8, at + j);          \
    if (act == CUVIL_ACT_RELU)                                                 \
      for (j = 0; j < n; ++j)                                                  \
        sums[j] = sums[j] > 0.0f ? sums[j] : 0.0f;                             \
    else if (act == CUVIL_ACT_CLIP)                                            \
      for (j = 0; j < n; ++j)                                                  \
        sums[j] = sums[j] < lo ? lo : sums[j] > hi ? hi : sums[j];             \
    if (!a->qout) {                                                            \
      float *CUVIL_RESTRICT out = (float *)a->output + at;                     \
      for (j = 0; j < n; ++j)                                                  \
        out[j] = sums[j];                                                      \
    } else {                                                                   \
      const float qs = a->qout->scale, qz = a->qout->zero;                     \
      const float qlo = a->qout->is_signed ? -128.0f : 0.0f;                   \
      const float qhi = a->qout->is_signed ? 127.0f : 255.0f;                  \
      for (j = 0; j < n; ++j) {                                                \
        float r = nearbyintf(sums[j] / qs) + qz;                               \
        sums[j] = r != r ? qz : r < qlo ? qlo : r > qhi ? qhi : r;             \
      }                                                                        \
      if (a->qout->is_signed) {                                                \
        int8_t *CUVIL_RESTRICT out = (int8_t *)a->output + at;                 \
        for (j = 0; j < n; ++j)                                                \
          out[j] = (int8_t)(int32_t)sums[j];                                   \
      } else {                                                                 \
        uint8_t *CUVIL_RESTRICT out = a->output + at;                          \
        for (j = 0; j < n; ++j)                                                \
          out[j] = (uint8_t)(int32_t)sums[j];                                  \
      }                                                                        \
    }                                                                          \
  }
CUVIL_QDW_FINISH(1)
#undef CUVIL_QDW_FINISH

/* The blocked kernels finish a vector of B outputs in registers: masks
 * select lanes (vector comparisons give 0 or -1 per lane), whole numbers
 * round half to even (clang's elementwise builtin; lane by lane
 * otherwise). */
typedef int32_t cuvil_qdw_m8 __attribute__((vector_size(32)));
typedef int32_t cuvil_qdw_m16 __attribute__((vector_size(64)));
typedef uint8_t cuvil_qdw_b8 __attribute__((vector_size(8)));
typedef uint8_t cuvil_qdw_b16 __attribute__((vector_size(16)));
typedef int8_t cuvil_qdw_s8 __attribute__((vector_size(8)));
typedef int8_t cuvil_qdw_s16 __attribute__((vector_size(16)));
#define CUVIL_QDW_SELECT(B, m, x, y)                                           \
  ((cuvil_qdw_f##B)(((cuvil_qdw_m##B)(x) & (m)) | ((cuvil_qdw_m##B)(y) & ~(m))))
#if defined(__clang__)
#define CUVIL_QDW_ROUND(B, v) __builtin_elementwise_roundeven(v)
#else
#define CUVIL_QDW_ROUND(B, v) cuvil_qdw_round_##B(v)
/* (Through memory: GCC warns of vector arguments' ABI otherwise.) */
#define CUVIL_QDW_ROUND_LANES(B)                                               \
  static inline void cuvil_qdw_round_lanes_##B(float *v) {                     \
    int l;                                                                     \
    for (l = 0; l < B; ++l)                                                    \
      v[l] = nearbyintf(v[l]);                                                 \
  }
#define cuvil_qdw_round_8(v)                                                   \
  (cuvil_qdw_round_lanes_8((float *)&(v)), (v))
#define cuvil_qdw_round_16(v)                                                  \
  (cuvil_qdw_round_lanes_16((float *)&(v)), (v))
CUVIL_QDW_ROUND_LANES(8)
CUVIL_QDW_ROUND_LANES(16)
#undef CUVIL_QDW_ROUND_LANES
#endif
/* B bytes of the 8-bit residual from element `at`, dequantized
 * (cuvil_residual8's steps). */
#define CUVIL_QDW_RESIDUAL8(B, a, at)                                          \
  ((((a)->epilogue->residual8_signed                                           \
         ? __builtin_convertvector(                                            \
               *(const cuvil_qdw_i##B *)((const int8_t *)(a)->residual8 +      \
                                         (at)),                                \
               cuvil_qdw_f##B)                                                 \
         : __builtin_convertvector(                                            \
               *(const cuvil_qdw_u##B *)((const uint8_t *)(a)->residual8 +     \
                                         (at)),                                \
               cuvil_qdw_f##B)) -                                              \
    (a)->epilogue->residual8_zero) *                                           \
   (a)->epilogue->residual8_scale)
/* B requantized values (int32, in the 8-bit range) stored as bytes. */
#define CUVIL_QDW_STORE(B, a, m, at)                                           \
  do {                                                                         \
    if ((a)->qout->is_signed) {                                                \
      cuvil_qdw_s##B q_ = __builtin_convertvector(m, cuvil_qdw_s##B);          \
      memcpy((a)->output + (at), &q_, B);                                      \
    } else {                                                                   \
      cuvil_qdw_b##B q_ = __builtin_convertvector(m, cuvil_qdw_b##B);          \
      memcpy((a)->output + (at), &q_, B);                                      \
    }                                                                          \
  } while (0)
/* What finishing a block's outputs needs, loaded once per row. */
#define CUVIL_QDW_PUT(B)                                                       \
  /* qbottom and qtop bound v / qs, less the zero point: the 8-bit range,      \
   * or with no residual cuvil_qout_bounds's (the activation folded in). */    \
  struct cuvil_qdw_k##B {                                                      \
    cuvil_qdw_f##B zero, scale, bias, lo, hi, qs, qbottom, qtop;               \
    cuvil_qdw_m##B qz;                                                         \
    /* cuvil_qout_fast's constants, when `fast` */                             \
    cuvil_qdw_f##B rcp, fzero, flo, fhi;                                       \
    /* When `plain` (qconvb.c's plain finish): scale / out_scale and           \
     * bias / out_scale + zero */                                              \
    cuvil_qdw_f##B pscale, pbias;                                              \
    int has_bias, act, fast, plain;                                            \
  };                                                                           \
  static void cuvil_qdw_k##B##_init(const struct cuvil_qdw_args *a,            \
                                    int64_t block, struct cuvil_qdw_k##B *k) { \
    const cuvil_qdw_f##B zero = {0};                                           \
    const cuvil_epilogue *e = a->epilogue;                                     \
    k->zero = zero;                                                            \
    k->scale = *(const cuvil_qdw_f##B *)(a->scale + block * B);                \
    k->has_bias = a->bias != 0;                                                \
    k->bias = a->bias ? *(const cuvil_qdw_f##B *)(a->bias + block * B) : zero; \
    k->act = e ? e->activation : CUVIL_ACT_NONE;                               \
    k->fast = k->plain = 0;                                                    \
    k->lo = zero + (e ? e->lo : 0.0f);                                         \
    k->hi = zero + (e ? e->hi : 0.0f);                                         \
    if (a->qout) {                                                             \
      const float bottom = a->qout->is_signed ? -128.0f : 0.0f;                \
      const cuvil_qdw_m##B izero = {0};                                        \
      k->qs = zero + a->qout->scale;                                           \
      k->qbottom = zero + (bottom - a->qout->zero);                            \
      k->qtop = zero + (bottom + 255.0f - a->qout->zero);                      \
      k->qz = izero + (int32_t)a->qout->zero;                                  \
      const int folded = !cuvil_has_residual(e);                               \
      const cuvil_qout_fast f = cuvil_qout_fast_for(a->qout, e, folded);       \
      if (folded) { /* the activation in the clamp */                          \
        float lo, hi;                                                          \
        cuvil_qout_bounds(a->qout, e, &lo, &hi);                               \
        k->qbottom = zero + lo;                                                \
        k->qtop = zero + hi;                                                   \
        k->act = CUVIL_ACT_NONE;                                               \
      }                                                                        \
      k->fast = f.rcp != 0.0f;                                                 \
      k->rcp = zero + f.rcp;                                                   \
      k->fzero = zero + f.zero;                                                \
      k->flo = zero + f.lo;                                                    \
      k->fhi = zero + f.hi;                                                    \
      k->pscale = k->scale * k->rcp;                                           \
      k->pbias = k->bias * k->rcp + k->fzero;                                  \
      k->plain =                                                               \
          k->fast && folded &&                                                 \
          cuvil_qout_plain_fits(a->scale + block * B,                          \
                                a->bias ? a->bias + block * B : 0, B, f.rcp);  \
    }                                                                          \
  }                                                                            \
  /* t clamped to [flo, fhi] and stored rounded, if every lane rounds as       \
   * the quotient would (qconv.h's CUVIL_QOUT_MARGIN); else 0. */              \
  static inline CUVIL_QDW_WIDE int cuvil_qdw_store_rounded_##B(                \
      const struct cuvil_qdw_args *a, const struct cuvil_qdw_k##B *k,          \
      const cuvil_qdw_f##B *tp, int64_t at) {                                  \
    cuvil_qdw_f##B t = *tp, n, d;                                              \
    cuvil_qdw_m##B m;                                                          \
    int ok = -1, l;                                                            \
    t = CUVIL_QDW_SELECT(B, t < k->fhi, t, k->fhi);                            \
    t = CUVIL_QDW_SELECT(B, t > k->flo, t, k->flo);                            \
    n = t;                                                                     \
    n = CUVIL_QDW_ROUND(B, n);                                                 \
    d = t - n;                                                                 \
    m = (d < CUVIL_QOUT_MARGIN) & (d > -CUVIL_QOUT_MARGIN);                    \
    for (l = 0; l < B; ++l)                                                    \
      ok &= m[l];                                                              \
    if (__builtin_expect(!ok, 0))                                              \
      return 0;                                                                \
    m = __builtin_convertvector(n, cuvil_qdw_m##B);                            \
    CUVIL_QDW_STORE(B, a, m, at);                                              \
    return 1;                                                                  \
  }                                                                            \
  /* The plain case in the fewest steps: qconvb.c's plain finish. */           \
  static inline CUVIL_QDW_WIDE int cuvil_qdw_put_plain_##B(                    \
      const struct cuvil_qdw_args *a, const struct cuvil_qdw_k##B *k,          \
      const cuvil_qdw_f##B *sum, int64_t at) {                                 \
    const cuvil_qdw_f##B t = *sum * k->pscale + k->pbias;                      \
    return cuvil_qdw_store_rounded_##B(a, k, &t, at);                          \
  }                                                                            \
  /* qconv.h's steps on one vector of sums, stored at output element at. */    \
  static inline CUVIL_QDW_WIDE void cuvil_qdw_put_##B(                         \
      const struct cuvil_qdw_args *a, const struct cuvil_qdw_k##B *k,          \
      const cuvil_qdw_f##B *sum, int64_t at) {                                 \
    cuvil_qdw_m##B m;                                                          \
    cuvil_qdw_f##B v = *sum;                                                   \
    if (k->plain && cuvil_qdw_put_plain_##B(a, k, sum, at))                    \
      return;                                                                  \
    v = v * k->scale;                                                          \
    if (k->has_bias)                                                           \
      v = v + k->bias;                                                         \
    if (a->residual)                                                           \
      v = v + *(const cuvil_qdw_f##B *)(a->residual + at);                     \
    else if (a->residual8)                                                     \
      v = v + CUVIL_QDW_RESIDUAL8(B, a, at);                                   \
    if (k->act == CUVIL_ACT_RELU) {                                            \
      m = v > k->zero;                                                         \
      v = (cuvil_qdw_f##B)((cuvil_qdw_m##B)v & m);                             \
    } else if (k->act == CUVIL_ACT_CLIP) {                                     \
      v = CUVIL_QDW_SELECT(B, v < k->lo, k->lo,                                \
                           CUVIL_QDW_SELECT(B, v > k->hi, k->hi, v));          \
    }                                                                          \
    if (!a->qout) {                                                            \
      *(cuvil_qdw_f##B *)((float *)a->output + at) = v;                        \
      return;                                                                  \
    }                                                                          \
    if (k->fast) { /* by the reciprocal, where it rounds alike (qconv.h) */    \
      cuvil_qdw_f##B t = v * k->rcp + k->fzero;                                \
      if (a->residual)                                                         \
        t = CUVIL_QDW_SELECT(B, v != v, k->fzero, t);                          \
      if (cuvil_qdw_store_rounded_##B(a, k, &t, at))                           \
        return;                                                                \
    }                                                                          \
    /* qconvb.c's CUVIL_QCONVB_REQUANT: v / scale clamped to [qbottom,         \
     * qtop] (forms that compile to minps / maxps), rounded, plus the zero     \
     * point in int32; NaN (only a residual brings it) to the zero point. */   \
    v = v / k->qs;                                                             \
    m = v != v;                                                                \
    v = CUVIL_QDW_SELECT(B, v < k->qtop, v, k->qtop);                          \
    v = CUVIL_QDW_SELECT(B, v > k->qbottom, v, k->qbottom);                    \
    if (a->residual)                                                           \
      v = CUVIL_QDW_SELECT(B, m, k->zero, v);                                  \
    m = __builtin_convertvector(CUVIL_QDW_ROUND(B, v), cuvil_qdw_m##B) +       \
        k->qz;                                                                 \
    CUVIL_QDW_STORE(B, a, m, at);                                              \
  }
CUVIL_QDW_PUT(8)
CUVIL_QDW_PUT(16)
#undef CUVIL_QDW_PUT

#define CUVIL_QDW_COLS 8
/* Input pixels an 8-column group converts once per window row (stride and
 * dilation permitting), instead of once per tap. */
#define CUVIL_QDW_SPAN 32
/* B input bytes at p as floats. */
#define CUVIL_QDW_LOAD(B, p)                                                   \
  (a->x_signed ? __builtin_convertvector(*(const cuvil_qdw_i##B *)(p),         \
                                         cuvil_qdw_f##B)                       \
               : __builtin_convertvector(*(const cuvil_qdw_u##B *)(p),         \
                                         cuvil_qdw_f##B))
/* A group of 8 columns (of which the first `cols` are stored) for a window
 * KW wide at stride S (dilation 1), input bytes of type T, from `row`, the
 * group's span of its first window row: each input pixel of a window row
 * is converted once and multiplied into every column whose window holds
 * it, all unrolled, so that the 8 sums stay in registers and the weights
 * come as memory operands. The sums and the zero point's part (`corr`) as
 * in cuvil_qdw_row_B's interior groups. */
#define CUVIL_QDW_GROUP(B, KW, S, SIGN, T)                                     \
  static CUVIL_QDW_WIDE void cuvil_qdw_group_##B##_##KW##_##S##_##SIGN(        \
      const struct cuvil_qdw_args *a, const struct cuvil_qdw_k##B *k,          \
      const uint8_t *row, int64_t row_step, int64_t rows, const float *wr,     \
      const cuvil_qdw_f##B *corr, int64_t at, int64_t cols) {                  \
    const cuvil_qdw_f##B zero = {0}, c = *corr;                                \
    cuvil_qdw_f##B acc[CUVIL_QDW_COLS];                                        \
    int64_t r;                                                                 \
    int s, j;                                                                  \
    CUVIL_UNROLL for (j = 0; j < CUVIL_QDW_COLS; ++j) acc[j] = zero;           \
    for (r = 0; r < rows; ++r, row += row_step, wr += (KW)*B) {                \
      CUVIL_UNROLL for (s = 0; s < (CUVIL_QDW_COLS - 1) * (S) + (KW); ++s) {   \
        const cuvil_qdw_f##B xv = __builtin_convertvector(                     \
            *(const T *)(row + s * B), cuvil_qdw_f##B);                        \
        CUVIL_UNROLL for (j = 0; j < CUVIL_QDW_COLS; ++j) {                    \
          if (s - j * (S) >= 0 && s - j * (S) < (KW))                          \
            acc[j] += xv * *(const cuvil_qdw_f##B *)(wr + (s - j * (S)) * B);  \
        }                                                                      \
      }                                                                        \
    }                                                                          \
    CUVIL_UNROLL for (j = 0; j < CUVIL_QDW_COLS; ++j) {                        \
      acc[j] -= c;                                                             \
      if (j < cols)                                                            \
        cuvil_qdw_put_##B(a, k, &acc[j], at + j * B);                          \
    }                                                                          \
  }
#define CUVIL_QDW_GROUPS(B, KW, S)                                             \
  CUVIL_QDW_GROUP(B, KW, S, u, cuvil_qdw_u##B)                                 \
  CUVIL_QDW_GROUP(B, KW, S, s, cuvil_qdw_i##B)
/* The windows with a group of their own: MobileNet's, MnasNet's and
 * EfficientNet's depthwise convolutions. */
#define CUVIL_QDW_SHAPES(X, B) X(B, 3, 1) X(B, 3, 2) X(B, 5, 1) X(B, 5, 2)
CUVIL_QDW_SHAPES(CUVIL_QDW_GROUPS, 8)
CUVIL_QDW_SHAPES(CUVIL_QDW_GROUPS, 16)
#undef CUVIL_QDW_GROUPS
#undef CUVIL_QDW_GROUP

/* The group function of `a`'s window, or NULL. */
#define CUVIL_QDW_PICK(B, KW, S)                                               \
  if (a->kw == (KW) && a->stride_w == (S))                                     \
    return a->x_signed ? cuvil_qdw_group_##B##_##KW##_##S##_s                  \
                       : cuvil_qdw_group_##B##_##KW##_##S##_u;
#define CUVIL_QDW_GROUP_OF(B)                                                  \
  typedef void (*cuvil_qdw_group_##B##_fn)(                                    \
      const struct cuvil_qdw_args *, const struct cuvil_qdw_k##B *,            \
      const uint8_t *, int64_t, int64_t, const float *,                        \
      const cuvil_qdw_f##B *, int64_t, int64_t);                               \
  static cuvil_qdw_group_##B##_fn cuvil_qdw_group_of_##B(                      \
      const struct cuvil_qdw_args *a) {                                        \
    if (a->dil_w != 1)                                                         \
      return 0;                                                                \
    CUVIL_QDW_SHAPES(CUVIL_QDW_PICK, B)                                        \
    return 0;                                                                  \
  }
CUVIL_QDW_GROUP_OF(8)
CUVIL_QDW_GROUP_OF(16)
#undef CUVIL_QDW_GROUP_OF
#undef CUVIL_QDW_PICK
#undef CUVIL_QDW_SHAPES

/* Window rows a group reads from a padded copy (the specialized windows'
 * heights, and more). */
#define CUVIL_QDW_COPY_ROWS 8
/* The row's columns in groups of 8 (cuvil_qdw_group_of; the last one may
 * store fewer), from `row`, the image block at its first window row inside
 * the image, for `rows` window rows from weights `wr`: a group whose
 * window leaves the image reads a copy of its input span padded with the
 * zero point's byte (which adds (zero - zero) x w = 0). Returns the
 * columns done (all, or none if the window is too tall or wide for the
 * copy); the caller does the rest. */
#define CUVIL_QDW_ROW_GROUPS(B)                                                \
  static int64_t cuvil_qdw_row_groups_##B(                                     \
      const struct cuvil_qdw_args *a, const struct cuvil_qdw_k##B *k,          \
      cuvil_qdw_group_##B##_fn group, const uint8_t *row, int64_t rows,        \
      const float *wr, const cuvil_qdw_f##B *corr, int64_t at) {               \
    const int64_t span = (CUVIL_QDW_COLS - 1) * a->stride_w + a->kw;           \
    const int64_t row_step = a->dil_h * a->w * B;                              \
    uint8_t copy[CUVIL_QDW_COPY_ROWS * CUVIL_QDW_SPAN * B];                    \
    uint8_t pads[B];                                                           \
    int64_t x, r, s;                                                           \
    if (rows > CUVIL_QDW_COPY_ROWS || span > CUVIL_QDW_SPAN)                   \
      return 0;                                                                \
    memset(pads, (uint8_t)(int32_t)a->zero, B);                                \
    for (x = 0; x < a->ow; x += CUVIL_QDW_COLS) {                              \
      const int64_t ix0 = x * a->stride_w - a->pad_left;                       \
      const int64_t cols =                                                     \
          a->ow - x < CUVIL_QDW_COLS ? a->ow - x : CUVIL_QDW_COLS;             \
      if (ix0 >= 0 && ix0 + span <= a->w) {                                    \
        group(a, k, row + ix0 * B, row_step, rows, wr, corr, at + x * B,       \
              cols);                                                           \
        continue;                                                              \
      }                                                                        \
      for (r = 0; r < rows; ++r)                                               \
        for (s = 0; s < span; ++s)                                             \
          memcpy(copy + (r * span + s) * B,                                    \
                 ix0 + s < 0 || ix0 + s >= a->w                                \
                     ? pads                                                    \
                     : row + r * row_step + (ix0 + s) * B,                     \
                 B);                                                           \
      group(a, k, copy, B *span, rows, wr, corr, at + x * B, cols);            \
    }                                                                          \
    return a->ow;                                                              \
  }
CUVIL_QDW_ROW_GROUPS(8)
CUVIL_QDW_ROW_GROUPS(16)
#undef CUVIL_QDW_ROW_GROUPS

/* An interior group sums x * w over whole window rows [ky0, ky1) and takes
 * the zero point's part, zero * (the sum of those weights), off once: both
 * are whole numbers below 2^24 (CUVIL_QDWCONV_MAX_TAPS), so it is exact.
 * Edge columns sum (x - zero) * w over their taps inside the image. */
#define CUVIL_QDW_ROW(B)                                                       \
  static CUVIL_QDW_WIDE void cuvil_qdw_row_##B(const struct cuvil_qdw_args *a, \
                                               int64_t t) {                    \
    const int64_t y = t % a->oh, q = t / a->oh, block = q % a->blocks;         \
    int64_t x = 0, ky, kx, j, s, ky0, ky1, xa = 0, xb = a->ow, k0, k1;         \
    const int64_t kh = a->kh, kw = a->kw, dil_w = a->dil_w,                    \
                  stride = a->stride_w;                                        \
    const uint8_t *in = a->input + q * a->h * a->w * B;                        \
    const float *wt = a->weight + block * kh * kw * B;                         \
    const cuvil_qdw_f##B zero = {0}, fzero = zero + a->zero;                   \
    const int64_t at = (q * a->oh + y) * a->ow * B;                            \
    const int64_t iy0 = y * a->stride_h - a->pad_top, sw = stride * B;         \
    const int64_t span = (CUVIL_QDW_COLS - 1) * stride + (kw - 1) * dil_w + 1; \
    cuvil_qdw_f##B acc[CUVIL_QDW_COLS], xs[CUVIL_QDW_SPAN], corr = zero;       \
    const cuvil_qdw_group_##B##_fn group = cuvil_qdw_group_of_##B(a);          \
    struct cuvil_qdw_k##B k;                                                   \
    cuvil_qdw_k##B##_init(a, block, &k);                                       \
    cuvil_qdw_taps(iy0, kh, a->dil_h, a->h, &ky0, &ky1);                       \
    for (ky = ky0; ky < ky1; ++ky)                                             \
      for (kx = 0; kx < kw; ++kx)                                              \
        corr += *(const cuvil_qdw_f##B *)(wt + (ky * kw + kx) * B);            \
    corr *= fzero;                                                             \
    if (group && ky1 > ky0)                                                    \
      x = cuvil_qdw_row_groups_##B(a, &k, group,                               \
                                   in + (iy0 + ky0 * a->dil_h) * a->w * B,     \
                                   ky1 - ky0, wt + ky0 * kw * B, &corr, at);   \
    while (x < a->ow && xa < a->ow) {                                          \
      cuvil_qdw_taps(stride *xa - a->pad_left, kw, dil_w, a->w, &k0, &k1);     \
      if (k0 == 0 && k1 == kw)                                                 \
        break;                                                                 \
      ++xa;                                                                    \
    }                                                                          \
    while (xb > xa) {                                                          \
      cuvil_qdw_taps((xb - 1) * stride - a->pad_left, kw, dil_w, a->w, &k0,    \
                     &k1);                                                     \
      if (k0 == 0 && k1 == kw)                                                 \
        break;                                                                 \
      --xb;                                                                    \
    }                                                                          \
    while (x < a->ow) {                                                        \
      /* Interior columns in groups of 8, the last group of the interior       \
       * shorter (a loop, not unrolled); edge columns one at a time. */        \
      int64_t cols = x >= xa && x < xb ? xb - x : 1;                           \
      cols = cols > CUVIL_QDW_COLS ? CUVIL_QDW_COLS : cols;                    \
      if (x >= xa && x < xb && cols < CUVIL_QDW_COLS) {                        \
        for (j = 0; j < cols; ++j)                                             \
          acc[j] = zero;                                                       \
        for (ky = ky0; ky < ky1; ++ky) {                                       \
          const uint8_t *row = in + (iy0 + ky * a->dil_h) * a->w * B +         \
                               (x * stride - a->pad_left) * B;                 \
          const float *wr = wt + ky * kw * B;                                  \
          for (kx = 0; kx < kw; ++kx) {                                        \
            const uint8_t *p = row + kx * dil_w * B;                           \
            const cuvil_qdw_f##B wk = *(const cuvil_qdw_f##B *)(wr + kx * B);  \
            for (j = 0; j < cols; ++j)                                         \
              acc[j] += CUVIL_QDW_LOAD(B, p + j * sw) * wk;                    \
          }                                                                    \
        }                                                                      \
        for (j = 0; j < cols; ++j)                                             \
          acc[j] -= corr;                                                      \
      } else if (cols == CUVIL_QDW_COLS) {                                     \
        CUVIL_UNROLL for (j = 0; j < CUVIL_QDW_COLS; ++j) acc[j] = zero;       \
        for (ky = ky0; ky < ky1; ++ky) {                                       \
          const uint8_t *row = in + (iy0 + ky * a->dil_h) * a->w * B +         \
                               (x * stride - a->pad_left) * B;                 \
          const float *wr = wt + ky * kw * B;                                  \
          if (span <= CUVIL_QDW_SPAN) {                                        \
            for (s = 0; s < span; ++s)                                         \
              xs[s] = CUVIL_QDW_LOAD(B, row + s * B);                          \
            for (kx = 0; kx < kw; ++kx) {                                      \
              const cuvil_qdw_f##B wk =                                        \
                  *(const cuvil_qdw_f##B *)(wr + kx * B);                      \
              CUVIL_UNROLL for (j = 0; j < CUVIL_QDW_COLS; ++j) acc[j] +=      \
                  xs[j * stride + kx * dil_w] * wk;                            \
            }                                                                  \
          } else {                                                             \
            for (kx = 0; kx < kw; ++kx) {                                      \
              const uint8_t *p = row + kx * dil_w * B;                         \
              const cuvil_qdw_f##B wk =                                        \
                  *(const cuvil_qdw_f##B *)(wr + kx * B);                      \
              CUVIL_UNROLL for (j = 0; j < CUVIL_QDW_COLS; ++j) acc[j] +=      \
                  CUVIL_QDW_LOAD(B, p + j * sw) * wk;                          \
            }                                                                  \
          }                                                                    \
        }                                                                      \
        CUVIL_UNROLL for (j = 0; j < CUVIL_QDW_COLS; ++j) acc[j] -= corr;      \
      } else {                                                                 \
        int64_t ix0 = x * stride - a->pad_left;                                \
        cuvil_qdw_taps(ix0, kw, dil_w, a->w, &k0, &k1);                        \
        acc[0] = zero;                                                         \
        for (ky = ky0; ky < ky1; ++ky) {                                       \
          const uint8_t *row = in + (iy0 + ky * a->dil_h) * a->w * B;          \
          for (kx = k0; kx < k1; ++kx)                                         \
            acc[0] +=                                                          \
                (CUVIL_QDW_LOAD(B, row + (ix0 + kx * dil_w) * B) - fzero) *    \
                *(const cuvil_qdw_f##B *)(wt + (ky * kw + kx) * B);            \
        }                                                                      \
      }                                                                        \
      for (j = 0; j < cols; ++j)                                               \
        cuvil_qdw_put_##B(a, &k, &acc[j], at + (x + j) * B);                   \
      x += cols;                                                               \
    }                                                                          \
  }
CUVIL_QDW_ROW(8)
CUVIL_QDW_ROW(16)
#undef CUVIL_QDW_ROW
#undef CUVIL_QDW_LOAD

/* NCHW (one channel per block): one output at a time over its valid taps. */
/* Images are done a band of output rows of one channel block at a time
 * from a copy of the input rows it reads, padded with the zero point's
 * byte: every column group is then an interior one, and what a row sets up
 * is set up once per band. The copy holds the columns the windows read,
 * and past them those that the last group of 8 reads for the lanes it does
 * not store. */
#define CUVIL_QDW_BAND_BYTES 16384
struct cuvil_qdw_bands {
  int64_t wp;    /* the copy's width in pixels */
  int64_t rows;  /* output rows per band (0: the image takes rows) */
  int64_t bands; /* bands per plane */
};
static struct cuvil_qdw_bands
cuvil_qdw_bands_of(const struct cuvil_qdw_args *a) {
  const int64_t groups = (a->ow + CUVIL_QDW_COLS - 1) / CUVIL_QDW_COLS;
  const int64_t read = (groups * CUVIL_QDW_COLS - 1) * a->stride_w + a->kw;
  const int64_t reach = (a->kh - 1) * a->dil_h + 1; /* a window's rows */
  struct cuvil_qdw_bands b = {0, 0, 0};
  int64_t fit;
  b.wp = a->w + a->pad_left > read ? a->w + a->pad_left : read;
  fit = a->block > 1 ? CUVIL_QDW_BAND_BYTES / (b.wp * a->block) : 0;
  if (a->dil_w != 1 || fit < reach)
    return b;
  b.rows = (fit - reach) / a->stride_h + 1;
  b.rows = b.rows > a->oh ? a->oh : b.rows;
  b.bands = (a->oh + b.rows - 1) / b.rows;
  return b;
}
/* Input rows [iy0, iy0 + rows) into the copy at column pad_left, the rest
 * the zero point. */
static void cuvil_qdw_pad_rows(const struct cuvil_qdw_args *a,
                               const uint8_t *in, int64_t wp, int64_t iy0,
                               int64_t rows, uint8_t *copy) {
  const int64_t B = a->block, row = wp * B;
  const uint8_t pad = (uint8_t)(int32_t)a->zero;
  int64_t r;
  for (r = 0; r < rows; ++r) {
    const int64_t iy = iy0 + r;
    uint8_t *dst = copy + r * row;
    if (iy < 0 || iy >= a->h) {
      memset(dst, pad, (size_t)row);
      continue;
    }
    memset(dst, pad, (size_t)(a->pad_left * B));
    memcpy(dst + a->pad_left * B, in + iy * a->w * B, (size_t)(a->w * B));
    memset(dst + (a->pad_left + a->w) * B, pad,
           (size_t)((wp - a->pad_left - a->w) * B));
  }
}
#define CUVIL_QDW_BAND(B)                                                      \
  static CUVIL_QDW_WIDE void cuvil_qdw_band_##B(                               \
      const struct cuvil_qdw_args *a, cuvil_qdw_group_##B##_fn group,          \
      const struct cuvil_qdw_bands *bs, int64_t t) {                           \
    const int64_t q = t / bs->bands, y0 = t % bs->bands * bs->rows;            \
    const int64_t y1 = y0 + bs->rows < a->oh ? y0 + bs->rows : a->oh;          \
    const int64_t block = q % a->blocks, taps = a->kh * a->kw;                 \
    const int64_t wp = bs->wp, step = a->dil_h * wp * B;                       \
    const float *wt = a->weight + block * taps * B;                            \
    const cuvil_qdw_f##B zero = {0};                                           \
    uint8_t copy[CUVIL_QDW_BAND_BYTES];                                        \
    cuvil_qdw_f##B corr = zero;                                                \
    struct cuvil_qdw_k##B k;                                                   \
    int64_t y, x, i;                                                           \
    cuvil_qdw_pad_rows(                                                        \
        a, a->input + q * a->h * a->w * B, wp, y0 * a->stride_h - a->pad_top,  \
        (y1 - 1 - y0) * a->stride_h + (a->kh - 1) * a->dil_h + 1, copy);       \
    cuvil_qdw_k##B##_init(a, block, &k);                                       \
    for (i = 0; i < taps; ++i)                                                 \
      corr += *(const cuvil_qdw_f##B *)(wt + i * B);                           \
    corr *= zero + a->zero;                                                    \
    for (y = y0; y < y1; ++y) {                                                \
      const uint8_t *row = copy + (y - y0) * a->stride_h * wp * B;             \
      const int64_t at = (q * a->oh + y) * a->ow * B;                          \
      for (x = 0; x < a->ow; x += CUVIL_QDW_COLS)                              \
        group(a, &k, row + x * a->stride_w * B, step, a->kh, wt, &corr,        \
              at + x * B,                                                      \
              a->ow - x < CUVIL_QDW_COLS ? a->ow - x : CUVIL_QDW_COLS);        \
    }                                                                          \
  }
CUVIL_QDW_BAND(8)
CUVIL_QDW_BAND(16)
#undef CUVIL_QDW_BAND

static void cuvil_qdw_band_items(void *p, int64_t begin, int64_t end) {
  const struct cuvil_qdw_args *a = (const struct cuvil_qdw_args *)p;
  const struct cuvil_qdw_bands bs = cuvil_qdw_bands_of(a);
  int64_t t;
  for (t = begin; t < end; ++t) {
    if (a->block == 16)
      cuvil_qdw_band_16(a, cuvil_qdw_group_of_16(a), &bs, t);
    else
      cuvil_qdw_band_8(a, cuvil_qdw_group_of_8(a), &bs, t);
  }
}

static void cuvil_qdw_row_1(const struct cuvil_qdw_args *a, int64_t t) {
  int64_t y = t % a->oh, q = t / a->oh, ch = q % a->blocks, x, ky, kx;
  int64_t ky0, ky1, k0, k1, iy0 = y * a->stride_h - a->pad_top;
  const uint8_t *in = a->input + q * a->h * a->w;
  const float *wt = a->weight + ch * a->kh * a->kw;
  cuvil_qdw_taps(iy0, a->kh, a->dil_h, a->h, &ky0, &ky1);
  for (x = 0; x < a->ow; ++x) {
    int64_t ix0 = x * a->stride_w - a->pad_left;
    float sum = 0.0f;
    cuvil_qdw_taps(ix0, a->kw, a->dil_w, a->w, &k0, &k1);
    for (ky = ky0; ky < ky1; ++ky)
      for (kx = k0; kx < k1; ++kx) {
        const uint8_t *p = in + (iy0 + ky * a->dil_h) * a->w + ix0 + kx * a->dil_w;
        float v = a->x_signed ? (float)(int8_t)*p : (float)*p;
        sum += (v - a->zero) * wt[ky * a->kw + kx];
      }
    cuvil_qdw_finish_1(a, &sum, ch, (q * a->oh + y) * a->ow + x, 1);
  }
}

static void cuvil_qdw_rows(void *p, int64_t begin, int64_t end) {
  const struct cuvil_qdw_args *a = (const struct cuvil_qdw_args *)p;
  int64_t t;
  for (t = begin; t < end; ++t) {
    if (a->block == 16)
      cuvil_qdw_row_16(a, t);
    else if (a->block == 8)
      cuvil_qdw_row_8(a, t);
    else
      cuvil_qdw_row_1(a, t);
  }
}

void cuvil_qdwconv(cuvil_pool *pool, int64_t n, int64_t c, int64_t h,
                   int64_t w, const void *x, int x_signed, int32_t x_zero,
                   int64_t kh, int64_t kw, const float *packed,
                   const float *scale, const float *bias, int64_t stride_h,
                   int64_t stride_w, int64_t pad_top, int64_t pad_left,
                   int64_t dil_h, int64_t dil_w, int64_t oh, int64_t ow,
                   void *y, int64_t block, const cuvil_qout *qout,
                   const cuvil_epilogue *epilogue) {
  struct cuvil_qdw_args a;
  struct cuvil_qdw_bands bands;
  a.input = (const uint8_t *)x;
  a.weight = packed;
  a.scale = scale;
  a.bias = bias;
  a.residual = epilogue ? epilogue->residual : 0;
  a.residual8 = epilogue ? epilogue->residual8 : 0;
  a.output = (uint8_t *)y;
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
  a.out_bytes = qout ? 1 : (int64_t)sizeof(float);
  a.x_signed = x_signed;
  a.zero = (float)x_zero;
  a.epilogue = epilogue;
  a.qout = qout;
  bands = cuvil_qdw_bands_of(&a);
  /* Bands where a copy holds one and they are enough to share out evenly. */
  if (bands.rows &&
      (block == 16 ? cuvil_qdw_group_of_16(&a) != 0
                   : block == 8 && cuvil_qdw_group_of_8(&a) != 0) &&
      n * a.blocks * bands.bands >= 4 * (int64_t)cuvil_pool_threads(pool))
    cuvil_parallel_for(pool, n * a.blocks * bands.bands, cuvil_qdw_band_items,
                       &a);
  else
    cuvil_parallel_for(pool, n * a.blocks * oh, cuvil_qdw_rows, &a);
}
