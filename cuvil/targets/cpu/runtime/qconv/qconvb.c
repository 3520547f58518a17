/*===- qconvb.c - the int8 blocked convolution's register tiles ----------===*
 *
 * Each output row of 1 or 2 channel blocks in register tiles (qconvb.inc)
 * of exact int32 sums, finished (qconv.h's steps) while in registers. The
 * tiles read 4 input channels per 32-bit broadcast from an image blocked by
 * 8 or 16, padded with the zero point when the window needs it, so that no
 * tile tests bounds and padding adds (zero - zero) x w = 0. The packing,
 * the padded image and the rows over threads are qconvb_driver.c's.
 *
 *===----------------------------------------------------------------------===*/

#include "cuvil/targets/cpu/runtime/qconv/qconv.h"

int cuvil_qconvb_reference(const struct cuvil_qconvb_row *r, int64_t nb,
                           int64_t x0, int64_t u) {
  int64_t b, x, c, ky, kx, t, l, s, B = r->block, ib = r->in_block;
  int32_t acc[64];
  for (b = 0; b < nb; ++b)
    for (x = x0; x < x0 + u; ++x) {
      const int8_t *wt = r->weight + b * r->weight_stride;
      const uint8_t *in = r->in + x * r->stride_w * ib;
      for (l = 0; l < B; ++l)
        acc[l] = 0;
      for (c = 0; c < r->in_blocks; ++c)
        for (ky = 0; ky < r->kh; ++ky)
          for (kx = 0; kx < r->kw; ++kx) {
            const uint8_t *ip = in + c * r->plane_stride +
                                ky * r->dil_h * r->row_stride +
                                kx * r->dil_w * ib;
            for (t = 0; t < ib / 4; ++t, wt += 4 * B)
              for (l = 0; l < B; ++l)
                for (s = 0; s < 4; ++s)
                  acc[l] += (int32_t)ip[4 * t + s] * wt[4 * l + s];
          }
      for (l = 0; l < B; ++l) {
        int64_t o = b * B + l, at = b * r->out_stride + x * B + l;
        float r8 =
            r->residual8 ? cuvil_residual8(r->epilogue, r->residual8, at) : 0;
        float v = cuvil_qconv_value(acc[l] - r->zero * r->sums[o], r->scale[o],
                                    r->bias ? r->bias + o : 0,
                                    r->residual    ? r->residual + at
                                    : r->residual8 ? &r8
                                                   : 0,
                                    r->epilogue);
        cuvil_qout_store(r->qout, r->out, at, v);
      }
    }
  return 1;
}

#if defined(CUVIL_ENABLE_SIMD_KERNELS) && defined(__x86_64__)
#include <immintrin.h>

/* Four bytes of the image, read as one int32 wherever they are. */
typedef int32_t cuvil_qconvb_i32 __attribute__((aligned(1), may_alias));

/* The activation of the epilogue on a vector of values, NaN as the
 * scalar steps treat it (cuvil_activate): ReLU makes it 0 (maxps returns
 * its second operand when either is NaN), clip keeps it (the bound first). */
#define CUVIL_QCONVB_ACTIVATE(v, e, maxv, minv, set1, zero)                    \
  do {                                                                         \
    if ((e) && (e)->activation == CUVIL_ACT_RELU)                              \
      v = maxv(v, zero());                                                     \
    else if ((e) && (e)->activation == CUVIL_ACT_CLIP)                         \
      v = minv(set1((e)->hi), maxv(set1((e)->lo), v));                         \
  } while (0)

/* cuvil_qout_store's requantization, in fewer steps that give the same
 * bytes: t = v / scale is clamped to [bottom - zero, top - zero] before
 * rounding, so that round(t) + zero is in range and exact in int32. Only a
 * residual can make v NaN (the sums, scales and biases are finite), so
 * only then are NaN lanes sent to the zero point. When `folded`, the
 * activation is still to do and [lo_, hi_] (cuvil_qout_bounds) clamps for
 * both. Rounding is the default MXCSR mode's (to nearest even), as
 * nearbyintf's. Sets the int32 vector `iv`. */
#define CUVIL_QCONVB_REQUANT(iv, q, v, folded, lo_, hi_, has_nan, divv, minv,  \
                             maxv, set1, cmpnan, blend, cvt, addi, set1i,      \
                             vzero)                                            \
  do {                                                                         \
    const float bottom_ = (q)->is_signed ? -128.0f : 0.0f;                     \
    v = divv(v, set1((q)->scale));                                             \
    if (folded) {                                                              \
      v = maxv(minv(v, set1(hi_)), set1(lo_));                                 \
    } else if (has_nan) {                                                      \
      nan_ = cmpnan(v);                                                        \
      v = blend(maxv(minv(v, set1(bottom_ + 255.0f - (q)->zero)),              \
                     set1(bottom_ - (q)->zero)),                               \
                vzero(), nan_);                                                \
    } else {                                                                   \
      v = maxv(minv(v, set1(bottom_ + 255.0f - (q)->zero)),                    \
               set1(bottom_ - (q)->zero));                                     \
    }                                                                          \
    iv = addi(cvt(v), set1i((int32_t)(q)->zero));                              \
  } while (0)

#define CUVIL_QCONVB_NAN8(v) _mm256_cmp_ps(v, v, _CMP_UNORD_Q)
#define CUVIL_QCONVB_BLEND8(a, b, m) _mm256_blendv_ps(a, b, m)
#define CUVIL_QCONVB_NAN16(v) _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q)
#define CUVIL_QCONVB_BLEND16(a, b, m) _mm512_mask_blend_ps(m, a, b)

/* The requantized int32 values of v, the zero point added: by the
 * reciprocal (cuvil_qout_fast) where every lane rounds as the quotient
 * would, else by CUVIL_QCONVB_REQUANT's division. NaN (only a residual
 * brings it) goes to the zero point either way. */
__attribute__((target("avx2"))) static inline __m256i
cuvil_qconvb_divide8(const struct cuvil_qconvb_row *r, __m256 v) {
  __m256i iv;
  __m256 nan_;
  CUVIL_QCONVB_REQUANT(iv, r->qout, v, r->folded, r->lo, r->hi, r->residual,
                       _mm256_div_ps, _mm256_min_ps, _mm256_max_ps,
                       _mm256_set1_ps, CUVIL_QCONVB_NAN8, CUVIL_QCONVB_BLEND8,
                       _mm256_cvtps_epi32, _mm256_add_epi32, _mm256_set1_epi32,
                       _mm256_setzero_ps);
  (void)nan_;
  return iv;
}
/* Whether every lane of t (clamped) rounds to n as the quotient would. */
__attribute__((target("avx2"), always_inline)) static inline int
cuvil_qconvb_rounds_alike8(__m256 t, __m256i n) {
  __m256 d = _mm256_andnot_ps(_mm256_set1_ps(-0.0f),
                              _mm256_sub_ps(t, _mm256_cvtepi32_ps(n)));
  return _mm256_movemask_ps(_mm256_cmp_ps(d, _mm256_set1_ps(CUVIL_QOUT_MARGIN),
                                          _CMP_LT_OQ)) == 0xff;
}
__attribute__((target("avx2"), always_inline)) static inline __m256i
cuvil_qconvb_requant8(const struct cuvil_qconvb_row *r, __m256 v) {
  const cuvil_qout_fast *f = &r->fast;
  __m256 t;
  __m256i n;
  if (!f->rcp)
    return cuvil_qconvb_divide8(r, v);
  t = _mm256_add_ps(_mm256_mul_ps(v, _mm256_set1_ps(f->rcp)),
                    _mm256_set1_ps(f->zero));
  t = _mm256_max_ps(_mm256_min_ps(t, _mm256_set1_ps(f->hi)),
                    _mm256_set1_ps(f->lo));
  if (r->residual) /* NaN lanes, which the clamp made f->hi */
    t = _mm256_blendv_ps(t, _mm256_set1_ps(f->zero), CUVIL_QCONVB_NAN8(v));
  n = _mm256_cvtps_epi32(t);
  if (__builtin_expect(!cuvil_qconvb_rounds_alike8(t, n), 0))
    return cuvil_qconvb_divide8(r, v);
  return n;
}
__attribute__((target("avx512f,avx512bw"))) static inline __m512i
cuvil_qconvb_divide16(const struct cuvil_qconvb_row *r, __m512 v) {
  __m512i iv;
  __mmask16 nan_;
  CUVIL_QCONVB_REQUANT(iv, r->qout, v, r->folded, r->lo, r->hi, r->residual,
                       _mm512_div_ps, _mm512_min_ps, _mm512_max_ps,
                       _mm512_set1_ps, CUVIL_QCONVB_NAN16, CUVIL_QCONVB_BLEND16,
                       _mm512_cvtps_epi32, _mm512_add_epi32, _mm512_set1_epi32,
                       _mm512_setzero_ps);
  (void)nan_;
  return iv;
}
/* Whether every lane of t (clamped) rounds to n as the quotient would. */
__attribute__((target("avx512f,avx512bw"), always_inline)) static inline int
cuvil_qconvb_rounds_alike16(__m512 t, __m512i n) {
  return _mm512_cmp_ps_mask(
             _mm512_abs_ps(_mm512_sub_ps(t, _mm512_cvtepi32_ps(n))),
             _mm512_set1_ps(CUVIL_QOUT_MARGIN), _CMP_LT_OQ) == 0xffff;
}
__attribute__((target("avx512f,avx512bw"), always_inline)) static inline __m512i
cuvil_qconvb_requant16(const struct cuvil_qconvb_row *r, __m512 v) {
  const cuvil_qout_fast *f = &r->fast;
  __m512 t;
  __m512i n;
  if (!f->rcp)
    return cuvil_qconvb_divide16(r, v);
  t = _mm512_fmadd_ps(v, _mm512_set1_ps(f->rcp), _mm512_set1_ps(f->zero));
  t = _mm512_max_ps(_mm512_min_ps(t, _mm512_set1_ps(f->hi)),
                    _mm512_set1_ps(f->lo));
  if (r->residual) /* NaN lanes, which the clamp made f->hi */
    t = _mm512_mask_blend_ps(CUVIL_QCONVB_NAN16(v), t, _mm512_set1_ps(f->zero));
  n = _mm512_cvtps_epi32(t);
  if (__builtin_expect(!cuvil_qconvb_rounds_alike16(t, n), 0))
    return cuvil_qconvb_divide16(r, v);
  return n;
}

/* 8 or 16 residual bytes from element `at`, dequantized
 * (cuvil_residual8's steps). */
__attribute__((target("avx2"))) static inline __m256
cuvil_qconvb_residual8_8(const struct cuvil_qconvb_row *r, int64_t at) {
  const cuvil_epilogue *e = r->epilogue;
  __m128i q = _mm_loadl_epi64((const __m128i *)(r->residual8 + at));
  __m256i i =
      e->residual8_signed ? _mm256_cvtepi8_epi32(q) : _mm256_cvtepu8_epi32(q);
  return _mm256_mul_ps(
      _mm256_sub_ps(_mm256_cvtepi32_ps(i), _mm256_set1_ps(e->residual8_zero)),
      _mm256_set1_ps(e->residual8_scale));
}
__attribute__((target("avx512f,avx512bw"))) static inline __m512
cuvil_qconvb_residual8_16(const struct cuvil_qconvb_row *r, int64_t at) {
  const cuvil_epilogue *e = r->epilogue;
  __m128i q = _mm_loadu_si128((const __m128i *)(r->residual8 + at));
  __m512i i =
      e->residual8_signed ? _mm512_cvtepi8_epi32(q) : _mm512_cvtepu8_epi32(q);
  return _mm512_mul_ps(
      _mm512_sub_ps(_mm512_cvtepi32_ps(i), _mm512_set1_ps(e->residual8_zero)),
      _mm512_set1_ps(e->residual8_scale));
}

/* Eight outputs of block b at column x, from their sums (the zero point's
 * correction taken off already): scaled, biased, residual and activation,
 * stored as float32 or requantized. */
__attribute__((target("avx2"), always_inline)) static inline void
cuvil_qconvb_finish8(const struct cuvil_qconvb_row *r, int b, int64_t x,
                     __m256i acc) {
  int64_t at = b * r->out_stride + x * 8;
  __m256 v =
      _mm256_mul_ps(_mm256_cvtepi32_ps(acc), _mm256_loadu_ps(r->scale + b * 8));
  __m256i iv;
  __m128i i16;
  if (r->bias)
    v = _mm256_add_ps(v, _mm256_loadu_ps(r->bias + b * 8));
  if (r->residual)
    v = _mm256_add_ps(v, _mm256_loadu_ps(r->residual + at));
  else if (r->residual8)
    v = _mm256_add_ps(v, cuvil_qconvb_residual8_8(r, at));
  if (!r->folded)
    CUVIL_QCONVB_ACTIVATE(v, r->epilogue, _mm256_max_ps, _mm256_min_ps,
                          _mm256_set1_ps, _mm256_setzero_ps);
  if (!r->qout) {
    _mm256_storeu_ps((float *)r->out + at, v);
    return;
  }
  iv = cuvil_qconvb_requant8(r, v);
  i16 = _mm_packs_epi32(_mm256_castsi256_si128(iv),
                        _mm256_extracti128_si256(iv, 1));
  _mm_storel_epi64((__m128i *)((uint8_t *)r->out + at),
                   r->qout->is_signed ? _mm_packs_epi16(i16, i16)
                                      : _mm_packus_epi16(i16, i16));
}

__attribute__((target("avx512f,avx512bw"), always_inline)) static inline void
cuvil_qconvb_finish16(const struct cuvil_qconvb_row *r, int b, int64_t x,
                      __m512i acc) {
  int64_t at = b * r->out_stride + x * 16;
  __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(acc),
                           _mm512_loadu_ps(r->scale + b * 16));
  __m512i iv;
  if (r->bias)
    v = _mm512_add_ps(v, _mm512_loadu_ps(r->bias + b * 16));
  if (r->residual)
    v = _mm512_add_ps(v, _mm512_loadu_ps(r->residual + at));
  else if (r->residual8)
    v = _mm512_add_ps(v, cuvil_qconvb_residual8_16(r, at));
  if (!r->folded)
    CUVIL_QCONVB_ACTIVATE(v, r->epilogue, _mm512_max_ps, _mm512_min_ps,
                          _mm512_set1_ps, _mm512_setzero_ps);
  if (!r->qout) {
    _mm512_storeu_ps((float *)r->out + at, v);
    return;
  }
  iv = cuvil_qconvb_requant16(r, v);
  /* In range already: vpmovdb's truncation keeps each value's byte. */
  _mm_storeu_si128((__m128i *)((uint8_t *)r->out + at),
                   _mm512_cvtepi32_epi8(iv));
}

/* The plain case (cuvil_qconvb_row's `plain`) in the fewest steps: t =
 * sum x (scale / out_scale) + (bias / out_scale + zero), constants made
 * once per block of a tile. Its error and the quotient's own are at most
 * 2^13 u = 2^-11 (u = 2^-24) together while |sum x scale / out_scale| <=
 * 1024 and |bias / out_scale| <= 256 (which `plain` requires); beyond,
 * both are past the same bound of the clamp. So where t rounds alike
 * (qconv.h's CUVIL_QOUT_MARGIN), it gives the steps' bytes; elsewhere the
 * steps run. */
typedef struct {
  __m256 s, b;
} cuvil_qconvb_finish8_k;
__attribute__((target("avx2"),
               always_inline)) static inline cuvil_qconvb_finish8_k
cuvil_qconvb_finish8_consts(const struct cuvil_qconvb_row *r, int b) {
  const cuvil_qout_fast *f = &r->fast;
  cuvil_qconvb_finish8_k k;
  k.s =
      _mm256_mul_ps(_mm256_loadu_ps(r->scale + b * 8), _mm256_set1_ps(f->rcp));
  k.b = _mm256_set1_ps(f->zero);
  if (r->bias)
    k.b = _mm256_add_ps(
        _mm256_mul_ps(_mm256_loadu_ps(r->bias + b * 8), _mm256_set1_ps(f->rcp)),
        k.b);
  return k;
}
__attribute__((target("avx2"), always_inline)) static inline void
cuvil_qconvb_finish8_plain(const struct cuvil_qconvb_row *r,
                           const cuvil_qconvb_finish8_k *k, int b, int64_t x,
                           __m256i acc) {
  const cuvil_qout_fast *f = &r->fast;
  int64_t at = b * r->out_stride + x * 8;
  __m256 a = _mm256_cvtepi32_ps(acc);
  __m256 t = _mm256_add_ps(_mm256_mul_ps(a, k->s), k->b);
  __m256i n;
  __m128i i16;
  t = _mm256_max_ps(_mm256_min_ps(t, _mm256_set1_ps(f->hi)),
                    _mm256_set1_ps(f->lo));
  n = _mm256_cvtps_epi32(t);
  if (__builtin_expect(!cuvil_qconvb_rounds_alike8(t, n), 0)) {
    __m256 v = _mm256_mul_ps(a, _mm256_loadu_ps(r->scale + b * 8));
    if (r->bias)
      v = _mm256_add_ps(v, _mm256_loadu_ps(r->bias + b * 8));
    n = cuvil_qconvb_divide8(r, v);
  }
  i16 = _mm_packs_epi32(_mm256_castsi256_si128(n),
                        _mm256_extracti128_si256(n, 1));
  _mm_storel_epi64((__m128i *)((uint8_t *)r->out + at),
                   r->qout->is_signed ? _mm_packs_epi16(i16, i16)
                                      : _mm_packus_epi16(i16, i16));
}
typedef struct {
  __m512 s, b;
} cuvil_qconvb_finish16_k;
__attribute__((target("avx512f,avx512bw"),
               always_inline)) static inline cuvil_qconvb_finish16_k
cuvil_qconvb_finish16_consts(const struct cuvil_qconvb_row *r, int b) {
  const cuvil_qout_fast *f = &r->fast;
  cuvil_qconvb_finish16_k k;
  k.s =
      _mm512_mul_ps(_mm512_loadu_ps(r->scale + b * 16), _mm512_set1_ps(f->rcp));
  k.b = _mm512_set1_ps(f->zero);
  if (r->bias)
    k.b = _mm512_fmadd_ps(_mm512_loadu_ps(r->bias + b * 16),
                          _mm512_set1_ps(f->rcp), k.b);
  return k;
}
__attribute__((target("avx512f,avx512bw"), always_inline)) static inline void
cuvil_qconvb_finish16_plain(const struct cuvil_qconvb_row *r,
                            const cuvil_qconvb_finish16_k *k, int b, int64_t x,
                            __m512i acc) {
  const cuvil_qout_fast *f = &r->fast;
  int64_t at = b * r->out_stride + x * 16;
  __m512 a = _mm512_cvtepi32_ps(acc);
  __m512 t = _mm512_fmadd_ps(a, k->s, k->b);
  __m512i n;
  t = _mm512_max_ps(_mm512_min_ps(t, _mm512_set1_ps(f->hi)),
                    _mm512_set1_ps(f->lo));
  n = _mm512_cvtps_epi32(t);
  if (__builtin_expect(!cuvil_qconvb_rounds_alike16(t, n), 0)) {
    __m512 v = _mm512_mul_ps(a, _mm512_loadu_ps(r->scale + b * 16));
    if (r->bias)
      v = _mm512_add_ps(v, _mm512_loadu_ps(r->bias + b * 16));
    n = cuvil_qconvb_divide16(r, v);
  }
  _mm_storeu_si128((__m128i *)((uint8_t *)r->out + at),
                   _mm512_cvtepi32_epi8(n));
}

/* The dot products of four bytes of input (broadcast to every lane) with
 * four weights per lane, added to int32 sums. `a` and `w` are a variant's
 * prepared operands (CUVIL_QCONVB_<variant>_A / _W). */

/* avx2: the bytes widened in place, even and odd ones apart, so that two
 * vpmaddwd sum 2 x 2 exact products (255 x 128 fits int16's products). */
typedef struct {
  __m256i even, odd;
} cuvil_qconvb_pair;
__attribute__((target("avx2"))) static inline cuvil_qconvb_pair
cuvil_qconvb_avx2_a(const uint8_t *p) {
  __m256i a = _mm256_set1_epi32(*(const cuvil_qconvb_i32 *)p);
  cuvil_qconvb_pair s = {_mm256_and_si256(a, _mm256_set1_epi16(0xff)),
                         _mm256_srli_epi16(a, 8)};
  return s;
}
__attribute__((target("avx2"))) static inline cuvil_qconvb_pair
cuvil_qconvb_avx2_w(const int8_t *p) {
  __m256i w = _mm256_loadu_si256((const __m256i *)p);
  cuvil_qconvb_pair s = {_mm256_srai_epi16(_mm256_slli_epi16(w, 8), 8),
                         _mm256_srai_epi16(w, 8)};
  return s;
}
#define CUVIL_QCONVB_AVX2_A cuvil_qconvb_avx2_a
#define CUVIL_QCONVB_AVX2_W cuvil_qconvb_avx2_w
#define CUVIL_QCONVB_AVX2_DOT(acc, a, w)                                       \
  _mm256_add_epi32(acc,                                                        \
                   _mm256_add_epi32(_mm256_madd_epi16(a.even, w.even),         \
                                    _mm256_madd_epi16(a.odd, w.odd)))
#define CUVIL_QCONVB_AVX2_ATYPE cuvil_qconvb_pair
#define CUVIL_QCONVB_AVX2_WTYPE cuvil_qconvb_pair

/* avx2_narrow: vpmaddubsw's saturating pair sums, exact for narrow
 * weights, widened by vpmaddwd with ones. */
#define CUVIL_QCONVB_NARROW_A(p)                                               \
  _mm256_set1_epi32(*(const cuvil_qconvb_i32 *)(p))
#define CUVIL_QCONVB_NARROW_W(p) _mm256_loadu_si256((const __m256i *)(p))
#define CUVIL_QCONVB_NARROW_DOT(acc, a, w)                                     \
  _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(a, w),          \
                                          _mm256_set1_epi16(1)))
#define CUVIL_QCONVB_NARROW_ATYPE __m256i
#define CUVIL_QCONVB_NARROW_WTYPE __m256i

/* avx512bw, avx512bw_narrow: the two AVX2 schemes on zmm. */
typedef struct {
  __m512i even, odd;
} cuvil_qconvb_pair512;
__attribute__((target("avx512f,avx512bw"))) static inline cuvil_qconvb_pair512
cuvil_qconvb_avx512bw_a(const uint8_t *p) {
  __m512i a = _mm512_set1_epi32(*(const cuvil_qconvb_i32 *)p);
  cuvil_qconvb_pair512 s = {_mm512_and_si512(a, _mm512_set1_epi16(0xff)),
                            _mm512_srli_epi16(a, 8)};
  return s;
}
__attribute__((target("avx512f,avx512bw"))) static inline cuvil_qconvb_pair512
cuvil_qconvb_avx512bw_w(const int8_t *p) {
  __m512i w = _mm512_loadu_si512((const void *)p);
  cuvil_qconvb_pair512 s = {_mm512_srai_epi16(_mm512_slli_epi16(w, 8), 8),
                            _mm512_srai_epi16(w, 8)};
  return s;
}
#define CUVIL_QCONVB_BW512_A cuvil_qconvb_avx512bw_a
#define CUVIL_QCONVB_BW512_W cuvil_qconvb_avx512bw_w
#define CUVIL_QCONVB_BW512_DOT(acc, a, w)                                      \
  _mm512_add_epi32(acc,                                                        \
                   _mm512_add_epi32(_mm512_madd_epi16(a.even, w.even),         \
                                    _mm512_madd_epi16(a.odd, w.odd)))
#define CUVIL_QCONVB_BW512_ATYPE cuvil_qconvb_pair512
#define CUVIL_QCONVB_BW512_WTYPE cuvil_qconvb_pair512
#define CUVIL_QCONVB_NARROW512_A(p)                                            \
  _mm512_set1_epi32(*(const cuvil_qconvb_i32 *)(p))
#define CUVIL_QCONVB_NARROW512_W(p) _mm512_loadu_si512((const void *)(p))
#define CUVIL_QCONVB_NARROW512_DOT(acc, a, w)                                  \
  _mm512_add_epi32(acc, _mm512_madd_epi16(_mm512_maddubs_epi16(a, w),          \
                                          _mm512_set1_epi16(1)))
#define CUVIL_QCONVB_NARROW512_ATYPE __m512i
#define CUVIL_QCONVB_NARROW512_WTYPE __m512i

#define CUVIL_QCONVB_VNNI_A CUVIL_QCONVB_NARROW_A
#define CUVIL_QCONVB_VNNI_W CUVIL_QCONVB_NARROW_W
#define CUVIL_QCONVB_VNNI_DOT(acc, a, w) _mm256_dpbusd_avx_epi32(acc, a, w)
#define CUVIL_QCONVB_VNNI_ATYPE __m256i
#define CUVIL_QCONVB_VNNI_WTYPE __m256i

/* AVX-512 VNNI's on ymm (EVEX vpdpbusd, AVX512VL): blocks of 8 with 32
 * registers, so twice the columns of AVX-VNNI's. */
#define CUVIL_QCONVB_VNNIY_A CUVIL_QCONVB_NARROW_A
#define CUVIL_QCONVB_VNNIY_W CUVIL_QCONVB_NARROW_W
#define CUVIL_QCONVB_VNNIY_DOT(acc, a, w) _mm256_dpbusd_epi32(acc, a, w)
#define CUVIL_QCONVB_VNNIY_ATYPE __m256i
#define CUVIL_QCONVB_VNNIY_WTYPE __m256i

#define CUVIL_QCONVB_VNNI512_A(p)                                              \
  _mm512_set1_epi32(*(const cuvil_qconvb_i32 *)(p))
#define CUVIL_QCONVB_VNNI512_W(p) _mm512_loadu_si512((const void *)(p))
#define CUVIL_QCONVB_VNNI512_DOT(acc, a, w) _mm512_dpbusd_epi32(acc, a, w)
#define CUVIL_QCONVB_VNNI512_ATYPE __m512i
#define CUVIL_QCONVB_VNNI512_WTYPE __m512i

/* NB x U accumulators of LANES sums; fully unrolled, so that they live in
 * registers (U <= the variant's UMAX keeps them from spilling). IB, if not
 * 0, is the input block and SW the stride of a convolution known at
 * compile time: the U columns are then constant offsets from one pointer
 * (not U pointers, which outnumber the general registers and spill). */
#define CUVIL_QCONVB_TILE(name, isa, V, vec, LANES, NB, U, loadi, set1i,       \
                          mullo, finish, IB, SW)                               \
  __attribute__((target(isa), noinline)) static void                           \
      cuvil_qconvb_##name##_##NB##_##U(const struct cuvil_qconvb_row *r,       \
                                       int64_t x0) {                           \
    vec acc[NB][U];                                                            \
    const int64_t ib = (IB) ? (IB) : r->in_block;                              \
    const int64_t step = (IB) ? (IB) * (SW) : r->stride_w * ib;                \
    const uint8_t *in = r->in + x0 * step;                                     \
    const int8_t *wt = r->weight;                                              \
    int64_t c, ky, kx, g;                                                      \
    int b, j;                                                                  \
    /* The sums start at -zero x (the weights' sums): exact in int32. */       \
    CUVIL_UNROLL for (b = 0; b < NB; ++b) {                                    \
      vec corr = mullo(set1i(-r->zero), loadi(r->sums + b * LANES));           \
      CUVIL_UNROLL for (j = 0; j < U; ++j) acc[b][j] = corr;                   \
    }                                                                          \
    for (c = 0; c < r->in_blocks; ++c)                                         \
      for (ky = 0; ky < r->kh; ++ky)                                           \
        for (kx = 0; kx < r->kw; ++kx) {                                       \
          const uint8_t *ip = in + c * r->plane_stride +                       \
                              ky * r->dil_h * r->row_stride +                  \
                              kx * r->dil_w * ib;                              \
          for (g = 0; g < ib; g += 4, wt += 4 * LANES) {                       \
            CUVIL_QCONVB_##V##_WTYPE wv[NB];                                   \
            CUVIL_UNROLL for (b = 0; b < NB; ++b) wv[b] =                      \
                CUVIL_QCONVB_##V##_W(wt + b * r->weight_stride);               \
            CUVIL_UNROLL for (j = 0; j < U; ++j) {                             \
              CUVIL_QCONVB_##V##_ATYPE av =                                    \
                  CUVIL_QCONVB_##V##_A(ip + j * step + g);                     \
              CUVIL_UNROLL for (b = 0; b < NB; ++b) acc[b][j] =                \
                  CUVIL_QCONVB_##V##_DOT(acc[b][j], av, wv[b]);                \
            }                                                                  \
          }                                                                    \
        }                                                                      \
    {                                                                          \
      /* A copy the byte stores cannot alias: its fields and the constants     \
       * made from them stay in registers across the tile's stores. */         \
      const struct cuvil_qconvb_row fr = *r;                                   \
      if (fr.plain) {                                                          \
        CUVIL_UNROLL for (b = 0; b < NB; ++b) {                                \
          const finish##_k k = finish##_consts(&fr, b);                        \
          CUVIL_UNROLL for (j = 0; j < U; ++j)                                 \
              finish##_plain(&fr, &k, b, x0 + j, acc[b][j]);                   \
        }                                                                      \
      } else {                                                                 \
        CUVIL_UNROLL for (b = 0; b < NB; ++b)                                  \
            CUVIL_UNROLL for (j = 0; j < U; ++j)                               \
                finish(&fr, b, x0 + j, acc[b][j]);                             \
      }                                                                        \
    }                                                                          \
  }

/* A variant's entry (tiles.h): the row in tiles of at most UMAX;
 * CUVIL_QCONVB_ENTRY_IB's IB_CASES for stride SW on input blocks of IB. */
#define CUVIL_QCONVB_CASE(name, NB, U) CUVIL_TILE_CASE(cuvil_qconvb, name, NB, U)
#define CUVIL_QCONVB_ENTRY(name, isa, LANES, UMAX, NARROWER, CASES)            \
  CUVIL_QCONVB_ENTRY_IB(name, isa, LANES, UMAX, NARROWER, 0, 1, CASES, )
#define CUVIL_QCONVB_ENTRY_IB(name, isa, LANES, UMAX, NARROWER, IB, SW, CASES, \
                              IB_CASES)                                        \
  CUVIL_TILE_ENTRY(cuvil_qconvb, cuvil_qconvb_row, name, isa, LANES, UMAX,     \
                   NARROWER, IB, SW, CASES, IB_CASES)

#define CUVIL_QCONVB_YMM(name, isa, V, NB, U)                                  \
  CUVIL_QCONVB_TILE(name, isa, V, __m256i, 8, NB, U, CUVIL_QCONVB_LOADU256,    \
                    _mm256_set1_epi32, _mm256_mullo_epi32,                     \
                    cuvil_qconvb_finish8, 0, 1)
#define CUVIL_QCONVB_LOADU256(p) _mm256_loadu_si256((const __m256i *)(p))
#define CUVIL_QCONVB_LOADU512(p) _mm512_loadu_si512((const void *)(p))
#define CUVIL_QCONVB_T_AVX2(NB, U) CUVIL_QCONVB_YMM(avx2, "avx2", AVX2, NB, U)
#define CUVIL_QCONVB_T_NARROW(NB, U)                                           \
  CUVIL_QCONVB_YMM(avx2_narrow, "avx2", NARROW, NB, U)
#define CUVIL_QCONVB_YMM_IB(name, V, NB, U, IB, SW)                            \
  CUVIL_QCONVB_TILE(name, "avx2", V, __m256i, 8, NB, U, CUVIL_QCONVB_LOADU256, \
                    _mm256_set1_epi32, _mm256_mullo_epi32,                     \
                    cuvil_qconvb_finish8, IB, SW)
#define CUVIL_QCONVB_T_NARROW_IB8(NB, U)                                       \
  CUVIL_QCONVB_YMM_IB(avx2_narrow_ib8, NARROW, NB, U, 8, 1)
#define CUVIL_QCONVB_T_NARROW_IB4S2(NB, U)                                     \
  CUVIL_QCONVB_YMM_IB(avx2_narrow_ib4s2, NARROW, NB, U, 4, 2)
#define CUVIL_QCONVB_T_NARROW_IB8S2(NB, U)                                     \
  CUVIL_QCONVB_YMM_IB(avx2_narrow_ib8s2, NARROW, NB, U, 8, 2)
#define CUVIL_QCONVB_T_VNNI(NB, U)                                             \
  CUVIL_QCONVB_YMM(avxvnni, "avx2,avxvnni", VNNI, NB, U)
#define CUVIL_QCONVB_ZMM(name, isa, V, NB, U, IB, SW)                          \
  CUVIL_QCONVB_TILE(name, isa, V, __m512i, 16, NB, U, CUVIL_QCONVB_LOADU512,   \
                    _mm512_set1_epi32, _mm512_mullo_epi32,                     \
                    cuvil_qconvb_finish16, IB, SW)
#define CUVIL_QCONVB_ISA_VNNI512 "avx512f,avx512bw,avx512vnni"
#define CUVIL_QCONVB_T_VNNI512(NB, U)                                          \
  CUVIL_QCONVB_ZMM(avx512vnni, CUVIL_QCONVB_ISA_VNNI512, VNNI512, NB, U, 0, 1)
#define CUVIL_QCONVB_ISA_VNNIY "avx512f,avx512bw,avx512vl,avx512vnni"
#define CUVIL_QCONVB_T_VNNIY(NB, U)                                            \
  CUVIL_QCONVB_YMM(avx512vnni_ymm, CUVIL_QCONVB_ISA_VNNIY, VNNIY, NB, U)
#define CUVIL_QCONVB_T_VNNI512_IB16(NB, U)                                     \
  CUVIL_QCONVB_ZMM(avx512vnni_ib16, CUVIL_QCONVB_ISA_VNNI512, VNNI512, NB, U,  \
                   16, 1)
/* Input in blocks of 8 (MobileNet's 24 channels) into blocks of 16. */
#define CUVIL_QCONVB_T_VNNI512_IB8(NB, U)                                      \
  CUVIL_QCONVB_ZMM(avx512vnni_ib8, CUVIL_QCONVB_ISA_VNNI512, VNNI512, NB, U,   \
                   8, 1)
/* A stem's: 3 or 4 channels (blocks of 4) at stride 2. */
#define CUVIL_QCONVB_T_VNNI512_IB4S2(NB, U)                                    \
  CUVIL_QCONVB_ZMM(avx512vnni_ib4s2, CUVIL_QCONVB_ISA_VNNI512, VNNI512, NB, U, \
                   4, 2)
#define CUVIL_QCONVB_T_BW512(NB, U)                                            \
  CUVIL_QCONVB_ZMM(avx512bw, "avx512f,avx512bw", BW512, NB, U, 0, 1)
#define CUVIL_QCONVB_T_NARROW512(NB, U)                                        \
  CUVIL_QCONVB_ZMM(avx512bw_narrow, "avx512f,avx512bw", NARROW512, NB, U, 0, 1)
#define CUVIL_QCONVB_C_AVX2(NB, U) CUVIL_QCONVB_CASE(avx2, NB, U)
#define CUVIL_QCONVB_C_NARROW(NB, U) CUVIL_QCONVB_CASE(avx2_narrow, NB, U)
#define CUVIL_QCONVB_C_NARROW_IB8(NB, U)                                       \
  CUVIL_QCONVB_CASE(avx2_narrow_ib8, NB, U)
#define CUVIL_QCONVB_C_NARROW_IB4S2(NB, U)                                     \
  CUVIL_QCONVB_CASE(avx2_narrow_ib4s2, NB, U)
#define CUVIL_QCONVB_C_NARROW_IB8S2(NB, U)                                     \
  CUVIL_QCONVB_CASE(avx2_narrow_ib8s2, NB, U)
#define CUVIL_QCONVB_C_VNNI(NB, U) CUVIL_QCONVB_CASE(avxvnni, NB, U)
#define CUVIL_QCONVB_C_VNNI512(NB, U) CUVIL_QCONVB_CASE(avx512vnni, NB, U)
#define CUVIL_QCONVB_C_VNNIY(NB, U) CUVIL_QCONVB_CASE(avx512vnni_ymm, NB, U)
#define CUVIL_QCONVB_C_VNNI512_IB16(NB, U)                                     \
  CUVIL_QCONVB_CASE(avx512vnni_ib16, NB, U)
#define CUVIL_QCONVB_C_VNNI512_IB8(NB, U)                                      \
  CUVIL_QCONVB_CASE(avx512vnni_ib8, NB, U)
#define CUVIL_QCONVB_C_VNNI512_IB4S2(NB, U)                                    \
  CUVIL_QCONVB_CASE(avx512vnni_ib4s2, NB, U)
#define CUVIL_QCONVB_C_BW512(NB, U) CUVIL_QCONVB_CASE(avx512bw, NB, U)
#define CUVIL_QCONVB_C_NARROW512(NB, U) CUVIL_QCONVB_CASE(avx512bw_narrow, NB, U)
/* Widths 1..N of one block count (NB). */
#define CUVIL_QCONVB_W4(X, NB) X(NB, 1) X(NB, 2) X(NB, 3) X(NB, 4)
#define CUVIL_QCONVB_W5(X, NB) CUVIL_QCONVB_W4(X, NB) X(NB, 5)
#define CUVIL_QCONVB_W6(X, NB) CUVIL_QCONVB_W5(X, NB) X(NB, 6)
#define CUVIL_QCONVB_W12(X, NB)                                                \
  CUVIL_QCONVB_W6(X, NB) X(NB, 7) X(NB, 8) X(NB, 9) X(NB, 10) X(NB, 11)        \
      X(NB, 12)
#define CUVIL_QCONVB_W14(X, NB) CUVIL_QCONVB_W12(X, NB) X(NB, 13) X(NB, 14)
#define CUVIL_QCONVB_BOTH(W, X) W(X, 1) W(X, 2)

/* 16 ymm registers: the exact avx2 tiles hold two registers per operand
 * (2 x 4 sums), vpmaddubsw's one (2 x 5), vpdpbusd's need no temporary
 * (2 x 6); AVX-512's 32 zmm hold 2 x 14 with vpdpbusd, 2 x 12 for the
 * AVX-512BW ones (their operands and temporaries). A model compiles only the
 * variants it calls (CUVIL_QCONVB_ONLY, then CUVIL_QCONVB_KEEP_<name> for
 * each: ~30 tile functions a variant); tests and benchmarks all. */
#if !defined(CUVIL_QCONVB_ONLY) || defined(CUVIL_QCONVB_KEEP_avx2)
CUVIL_QCONVB_BOTH(CUVIL_QCONVB_W4, CUVIL_QCONVB_T_AVX2)
CUVIL_QCONVB_ENTRY(avx2, "avx2", 8, 4, 0,
                   CUVIL_QCONVB_BOTH(CUVIL_QCONVB_W4, CUVIL_QCONVB_C_AVX2))
#endif
#if !defined(CUVIL_QCONVB_ONLY) || defined(CUVIL_QCONVB_KEEP_avx2_narrow)
/* As the VNNI ones below, layers on blocks of 8 at strides 1 and 2 and
 * stems (3 or 4 channels, stride 2) take tiles whose columns are constant
 * offsets from one pointer. */
CUVIL_QCONVB_BOTH(CUVIL_QCONVB_W5, CUVIL_QCONVB_T_NARROW)
CUVIL_QCONVB_BOTH(CUVIL_QCONVB_W5, CUVIL_QCONVB_T_NARROW_IB8)
CUVIL_QCONVB_BOTH(CUVIL_QCONVB_W5, CUVIL_QCONVB_T_NARROW_IB8S2)
CUVIL_QCONVB_BOTH(CUVIL_QCONVB_W5, CUVIL_QCONVB_T_NARROW_IB4S2)
int cuvil_qconvb_avx2_narrow_any(const struct cuvil_qconvb_row *r, int64_t nb,
                                 int64_t x0, int64_t u);
int cuvil_qconvb_avx2_narrow_s2(const struct cuvil_qconvb_row *r, int64_t nb,
                                int64_t x0, int64_t u);
int cuvil_qconvb_avx2_narrow_stem(const struct cuvil_qconvb_row *r, int64_t nb,
                                  int64_t x0, int64_t u);
CUVIL_QCONVB_ENTRY_IB(avx2_narrow_any, "avx2", 8, 5, 0, 8, 1,
                      CUVIL_QCONVB_BOTH(CUVIL_QCONVB_W5, CUVIL_QCONVB_C_NARROW),
                      CUVIL_QCONVB_BOTH(CUVIL_QCONVB_W5,
                                        CUVIL_QCONVB_C_NARROW_IB8))
CUVIL_QCONVB_ENTRY_IB(avx2_narrow_s2, "avx2", 8, 5, 0, 8, 2,
                      CUVIL_QCONVB_BOTH(CUVIL_QCONVB_W5, CUVIL_QCONVB_C_NARROW),
                      CUVIL_QCONVB_BOTH(CUVIL_QCONVB_W5,
                                        CUVIL_QCONVB_C_NARROW_IB8S2))
CUVIL_QCONVB_ENTRY_IB(avx2_narrow_stem, "avx2", 8, 5, 0, 4, 2,
                      CUVIL_QCONVB_BOTH(CUVIL_QCONVB_W5, CUVIL_QCONVB_C_NARROW),
                      CUVIL_QCONVB_BOTH(CUVIL_QCONVB_W5,
                                        CUVIL_QCONVB_C_NARROW_IB4S2))
__attribute__((target("avx2"))) int
cuvil_qconvb_avx2_narrow(const struct cuvil_qconvb_row *r, int64_t nb,
                         int64_t x0, int64_t u) {
  if (r->stride_w != 2)
    return cuvil_qconvb_avx2_narrow_any(r, nb, x0, u);
  return r->in_block == 4 ? cuvil_qconvb_avx2_narrow_stem(r, nb, x0, u)
                          : cuvil_qconvb_avx2_narrow_s2(r, nb, x0, u);
}
#endif
#if !defined(CUVIL_QCONVB_ONLY) || defined(CUVIL_QCONVB_KEEP_avxvnni)
CUVIL_QCONVB_BOTH(CUVIL_QCONVB_W6, CUVIL_QCONVB_T_VNNI)
CUVIL_QCONVB_ENTRY(avxvnni, "avx2,avxvnni", 8, 6, 0,
                   CUVIL_QCONVB_BOTH(CUVIL_QCONVB_W6, CUVIL_QCONVB_C_VNNI))
#endif
/* AVX-512 without VNNI; blocks of 8 run the AVX2 tiles of the same
 * weights (kept with these). */
#if !defined(CUVIL_QCONVB_ONLY) || defined(CUVIL_QCONVB_KEEP_avx512bw)
CUVIL_QCONVB_BOTH(CUVIL_QCONVB_W12, CUVIL_QCONVB_T_BW512)
CUVIL_QCONVB_ENTRY(avx512bw, "avx512f,avx512bw", 16, 12,
                   cuvil_qconvb_avx2(r, nb, x0, u),
                   CUVIL_QCONVB_BOTH(CUVIL_QCONVB_W12, CUVIL_QCONVB_C_BW512))
#endif
#if !defined(CUVIL_QCONVB_ONLY) || defined(CUVIL_QCONVB_KEEP_avx512bw_narrow)
CUVIL_QCONVB_BOTH(CUVIL_QCONVB_W12, CUVIL_QCONVB_T_NARROW512)
CUVIL_QCONVB_ENTRY(avx512bw_narrow, "avx512f,avx512bw", 16, 12,
                   cuvil_qconvb_avx2_narrow(r, nb, x0, u),
                   CUVIL_QCONVB_BOTH(CUVIL_QCONVB_W12, CUVIL_QCONVB_C_NARROW512))
#endif
#if !defined(CUVIL_QCONVB_ONLY) || defined(CUVIL_QCONVB_KEEP_avx512vnni)
CUVIL_QCONVB_BOTH(CUVIL_QCONVB_W14, CUVIL_QCONVB_T_VNNI512)
CUVIL_QCONVB_BOTH(CUVIL_QCONVB_W14, CUVIL_QCONVB_T_VNNI512_IB16)
CUVIL_QCONVB_BOTH(CUVIL_QCONVB_W14, CUVIL_QCONVB_T_VNNI512_IB8)
CUVIL_QCONVB_BOTH(CUVIL_QCONVB_W14, CUVIL_QCONVB_T_VNNI512_IB4S2)
CUVIL_QCONVB_BOTH(CUVIL_QCONVB_W14, CUVIL_QCONVB_T_VNNIY)
/* Blocks of 8 (channel counts that are multiples of 8, not 16, as
 * MobileNetV2's 24) run vpdpbusd on ymm, 14 columns of 2 blocks in the 32
 * registers (they ran the exact AVX2 tiles: 4 columns, two vpmaddwd and
 * their widening per 4 products, about 3x slower). Stride-1 layers on
 * input blocks of 16 or 8 and stems (3 or 4 channels, stride 2) take tiles
 * whose columns are constant offsets; the stem's at 2.5x the general
 * tiles' speed, MobileNetV2's 24 -> 144 at 1.6x. */
int cuvil_qconvb_avx512vnni_ymm(const struct cuvil_qconvb_row *r, int64_t nb,
                                int64_t x0, int64_t u);
int cuvil_qconvb_avx512vnni_any(const struct cuvil_qconvb_row *r, int64_t nb,
                                int64_t x0, int64_t u);
int cuvil_qconvb_avx512vnni_in8(const struct cuvil_qconvb_row *r, int64_t nb,
                                int64_t x0, int64_t u);
int cuvil_qconvb_avx512vnni_stem(const struct cuvil_qconvb_row *r,
                                 int64_t nb, int64_t x0, int64_t u);
CUVIL_QCONVB_ENTRY(avx512vnni_ymm, CUVIL_QCONVB_ISA_VNNIY, 8, 14, 0,
                   CUVIL_QCONVB_BOTH(CUVIL_QCONVB_W14, CUVIL_QCONVB_C_VNNIY))
CUVIL_QCONVB_ENTRY_IB(avx512vnni_any, CUVIL_QCONVB_ISA_VNNI512, 16, 14,
                      cuvil_qconvb_avx512vnni_ymm(r, nb, x0, u), 16, 1,
                      CUVIL_QCONVB_BOTH(CUVIL_QCONVB_W14,
                                        CUVIL_QCONVB_C_VNNI512),
                      CUVIL_QCONVB_BOTH(CUVIL_QCONVB_W14,
                                        CUVIL_QCONVB_C_VNNI512_IB16))
CUVIL_QCONVB_ENTRY_IB(avx512vnni_in8, CUVIL_QCONVB_ISA_VNNI512, 16, 14,
                      cuvil_qconvb_avx512vnni_ymm(r, nb, x0, u), 8, 1,
                      CUVIL_QCONVB_BOTH(CUVIL_QCONVB_W14,
                                        CUVIL_QCONVB_C_VNNI512),
                      CUVIL_QCONVB_BOTH(CUVIL_QCONVB_W14,
                                        CUVIL_QCONVB_C_VNNI512_IB8))
CUVIL_QCONVB_ENTRY_IB(avx512vnni_stem, CUVIL_QCONVB_ISA_VNNI512, 16, 14,
                      cuvil_qconvb_avx512vnni_ymm(r, nb, x0, u), 4, 2,
                      CUVIL_QCONVB_BOTH(CUVIL_QCONVB_W14,
                                        CUVIL_QCONVB_C_VNNI512),
                      CUVIL_QCONVB_BOTH(CUVIL_QCONVB_W14,
                                        CUVIL_QCONVB_C_VNNI512_IB4S2))
__attribute__((target(CUVIL_QCONVB_ISA_VNNI512))) int
cuvil_qconvb_avx512vnni(const struct cuvil_qconvb_row *r, int64_t nb,
                        int64_t x0, int64_t u) {
  if (r->in_block == 4 && r->stride_w == 2)
    return cuvil_qconvb_avx512vnni_stem(r, nb, x0, u);
  return r->in_block == 8 ? cuvil_qconvb_avx512vnni_in8(r, nb, x0, u)
                          : cuvil_qconvb_avx512vnni_any(r, nb, x0, u);
}
#endif
#endif
