/*===- bconvb.c - bfloat16 blocked direct convolutions and their tiles ---===*
 *
 * The image is converted once per call into the scratch: bfloat16, blocked
 * by the tiles' input block (pairs of channels from a plain input), zero
 * padded. Each output row of 1 or 2 channel blocks is then computed in
 * register tiles (bconvb.inc), each tile reading one channel pair per
 * 32-bit broadcast, and finished in registers.
 *
 *===----------------------------------------------------------------------===*/

#include "cuvil/targets/cpu/runtime/bconv/bconv.h"

#include "cuvil/targets/cpu/runtime/contract/contract.h"

#include <string.h>

int64_t cuvil_bconvb_input_block(int64_t in_block) {
  return in_block >= 2 && in_block % 2 == 0 ? in_block : 2;
}

size_t cuvil_bconvb_packed_elements(int64_t oc, int64_t c, int64_t kh,
                                    int64_t kw, int64_t in_block,
                                    int64_t block) {
  int64_t ib = cuvil_bconvb_input_block(in_block);
  return (size_t)(oc / block * ((c + ib - 1) / ib) * kh * kw * ib * block);
}

/* A bfloat16 denormal as a zero of its sign. */
static uint16_t cuvil_bconv_daz(uint16_t v) {
  return (v & 0x7f80) == 0 ? (uint16_t)(v & 0x8000) : v;
}

void cuvil_bconvb_pack(int64_t oc, int64_t c, int64_t kh, int64_t kw,
                       const uint16_t *oihw, int64_t in_block, int64_t block,
                       uint16_t *packed) {
  int64_t ib = cuvil_bconvb_input_block(in_block), planes = (c + ib - 1) / ib;
  int64_t taps = kh * kw, o, i, t;
  memset(packed, 0,
         cuvil_bconvb_packed_elements(oc, c, kh, kw, in_block, block) *
             sizeof(uint16_t));
  for (o = 0; o < oc; ++o)
    for (i = 0; i < c; ++i)
      for (t = 0; t < taps; ++t) {
        int64_t lane = i % ib;
        /* [o / B][i / ib][t][lane / 2][o % B][lane % 2] */
        packed[((((o / block) * planes + i / ib) * taps + t) * (ib / 2) +
                lane / 2) *
                   block * 2 +
               (o % block) * 2 + lane % 2] =
            cuvil_bconv_daz(oihw[(o * c + i) * taps + t]);
      }
}

/* Bytes of the converted image, rounded up to a cache line. */
static int64_t cuvil_bconvb_image_bytes(int64_t c, int64_t in_block,
                                        int64_t hp, int64_t wp) {
  int64_t ib = cuvil_bconvb_input_block(in_block);
  int64_t bytes = (c + ib - 1) / ib * hp * wp * ib * (int64_t)sizeof(uint16_t);
  return (bytes + 63) / 64 * 64;
}

/* Whether the tiles' blocked output goes through the scratch. */
static int cuvil_bconvb_via_scratch(int64_t block, int64_t out_block) {
  return block > 1 && out_block != block;
}

int64_t cuvil_bconvb_scratch_bytes(int64_t c, int64_t in_block, int64_t kh,
                                   int64_t kw, int64_t stride_h,
                                   int64_t stride_w, int64_t dil_h,
                                   int64_t dil_w, int64_t oc, int64_t oh,
                                   int64_t ow, int64_t block,
                                   int64_t out_block) {
  int64_t hp = cuvil_conv_extent(oh, kh, stride_h, dil_h);
  int64_t wp = cuvil_conv_extent(ow, kw, stride_w, dil_w);
  return cuvil_bconvb_image_bytes(c, in_block, hp, wp) +
         (cuvil_bconvb_via_scratch(block, out_block)
              ? oc * oh * ow * (int64_t)sizeof(float)
              : 0);
}

/* One output row of cuvil_bconv2d_blocked as its tiles see it. */
struct cuvil_bconvb_row {
  const uint16_t *in;     /* the image at the row's first input row */
  const uint16_t *weight; /* the first of the row's channel blocks' weights */
  const float *bias;      /* the first block's bias, or NULL */
  const float *residual;  /* the row in the first block's residual, or NULL */
  float *out;             /* the row in the first block of the output */
  int64_t in_blocks, in_block, block;
  int64_t row_stride;    /* elements from one image row to the next */
  int64_t plane_stride;  /* elements from one input block to the next */
  int64_t kh, kw, stride_w, dil_h, dil_w;
  int64_t weight_stride; /* elements from one channel block's weights to the next */
  int64_t out_stride;    /* floats from one output block to the next */
  int activation;
  float lo, hi;
};

static float cuvil_bconv_widen(uint16_t v) {
  uint32_t bits = (uint32_t)v << 16;
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

/* bias, residual and activation for lane `l` of block `b`, column `x`. */
static float cuvil_bconvb_finish(const struct cuvil_bconvb_row *r, int64_t b,
                                 int64_t x, int64_t l, float v) {
  return cuvil_finish_value(
      v, r->bias ? r->bias + b * r->block + l : 0,
      r->residual ? r->residual + b * r->out_stride + x * r->block + l : 0,
      r->activation, r->lo, r->hi);
}

int cuvil_bconvb_reference(const struct cuvil_bconvb_row *r, int64_t nb,
                           int64_t x0, int64_t u) {
  int64_t b, x, c, ky, kx, p, l, B = r->block, ib = r->in_block;
  float acc[64];
  for (b = 0; b < nb; ++b)
    for (x = x0; x < x0 + u; ++x) {
      const uint16_t *wt = r->weight + b * r->weight_stride;
      const uint16_t *in = r->in + x * r->stride_w * ib;
      for (l = 0; l < B; ++l)
        acc[l] = 0.0f;
      for (c = 0; c < r->in_blocks; ++c)
        for (ky = 0; ky < r->kh; ++ky)
          for (kx = 0; kx < r->kw; ++kx) {
            const uint16_t *ip = in + c * r->plane_stride +
                                 ky * r->dil_h * r->row_stride +
                                 kx * r->dil_w * ib;
            for (p = 0; p < ib / 2; ++p, wt += 2 * B) {
              float even = cuvil_bconv_widen(ip[2 * p]);
              float odd = cuvil_bconv_widen(ip[2 * p + 1]);
              for (l = 0; l < B; ++l) {
                float sum = acc[l];
                sum += odd * cuvil_bconv_widen(wt[2 * l + 1]);
                sum += even * cuvil_bconv_widen(wt[2 * l]);
                acc[l] = sum;
              }
            }
          }
      for (l = 0; l < B; ++l)
        r->out[b * r->out_stride + x * B + l] =
            cuvil_bconvb_finish(r, b, x, l, acc[l]);
    }
  return 1;
}

#if defined(CUVIL_ENABLE_SIMD_KERNELS) && defined(__x86_64__)
#include <immintrin.h>

/* A channel pair of the image, read as one int32 wherever it is. */
typedef int32_t cuvil_bconvb_i32 __attribute__((aligned(1), may_alias));

/* The products of one channel pair (broadcast to every lane) with a pair
 * of weights per lane, added to float32 sums: the odd product first, then
 * the even one. `a` and `w` are a variant's prepared operands
 * (CUVIL_BCONVB_<V>_A / _W). */

/* avx2, avx512: each pair widened to float32, even and odd apart. */
#define CUVIL_BCONVB_WIDE(V, isa, vec, veci, loadi, set1i, slli, andi, cast,   \
                          fmadd)                                               \
  typedef struct {                                                             \
    vec even, odd;                                                             \
  } cuvil_bconvb_##V##_pair;                                                   \
  __attribute__((target(isa))) static inline cuvil_bconvb_##V##_pair           \
      cuvil_bconvb_##V##_split(veci v) {                                       \
    cuvil_bconvb_##V##_pair s = {cast(slli(v, 16)),                            \
                                 cast(andi(v, set1i((int)0xffff0000u)))};      \
    return s;                                                                  \
  }                                                                            \
  __attribute__((target(isa))) static inline cuvil_bconvb_##V##_pair           \
      cuvil_bconvb_##V##_a(const uint16_t *p) {                                \
    return cuvil_bconvb_##V##_split(set1i(*(const cuvil_bconvb_i32 *)p));      \
  }                                                                            \
  __attribute__((target(isa))) static inline cuvil_bconvb_##V##_pair           \
      cuvil_bconvb_##V##_w(const uint16_t *p) {                                \
    return cuvil_bconvb_##V##_split(loadi(p));                                 \
  }                                                                            \
  __attribute__((target(isa))) static inline vec cuvil_bconvb_##V##_dot(       \
      vec acc, cuvil_bconvb_##V##_pair a, cuvil_bconvb_##V##_pair w) {         \
    return fmadd(a.even, w.even, fmadd(a.odd, w.odd, acc));                    \
  }
#define CUVIL_BCONVB_LOADU256(p) _mm256_loadu_si256((const __m256i *)(p))
#define CUVIL_BCONVB_LOADU512(p) _mm512_loadu_si512((const void *)(p))
CUVIL_BCONVB_WIDE(AVX2, "avx2,fma", __m256, __m256i, CUVIL_BCONVB_LOADU256,
                  _mm256_set1_epi32, _mm256_slli_epi32, _mm256_and_si256,
                  _mm256_castsi256_ps, _mm256_fmadd_ps)
CUVIL_BCONVB_WIDE(AVX512, "avx512f", __m512, __m512i, CUVIL_BCONVB_LOADU512,
                  _mm512_set1_epi32, _mm512_slli_epi32, _mm512_and_si512,
                  _mm512_castsi512_ps, _mm512_fmadd_ps)
#define CUVIL_BCONVB_AVX2_ATYPE cuvil_bconvb_AVX2_pair
#define CUVIL_BCONVB_AVX2_WTYPE cuvil_bconvb_AVX2_pair
#define CUVIL_BCONVB_AVX512_ATYPE cuvil_bconvb_AVX512_pair
#define CUVIL_BCONVB_AVX512_WTYPE cuvil_bconvb_AVX512_pair

/* avx512bf16: the pair as it is, into vdpbf16ps. */
#define CUVIL_BCONVB_BF16_ATYPE __m512bh
#define CUVIL_BCONVB_BF16_WTYPE __m512bh
#define cuvil_bconvb_BF16_a(p)                                                 \
  ((__m512bh)_mm512_set1_epi32(*(const cuvil_bconvb_i32 *)(p)))
#define cuvil_bconvb_BF16_w(p) ((__m512bh)_mm512_loadu_si512((const void *)(p)))
#define cuvil_bconvb_BF16_dot(acc, a, w) _mm512_dpbf16_ps(acc, a, w)

/* NB x U accumulators of LANES sums; fully unrolled, so that they live in
 * registers (U <= the variant's UMAX keeps them from spilling). IB, if not
 * 0, is the input block of a stride-1 convolution known at compile time:
 * the U columns are then constant offsets from one pointer. */
#define CUVIL_BCONVB_TILE(name, isa, V, vec, LANES, NB, U, zero, loadf,        \
                          storef, addf, maxf, minf, set1f, IB)                 \
  __attribute__((target(isa), noinline)) static void                           \
      cuvil_bconvb_##name##_##NB##_##U(const struct cuvil_bconvb_row *r,       \
                                       int64_t x0) {                           \
    vec acc[NB][U];                                                            \
    const int64_t ib = (IB) ? (IB) : r->in_block;                              \
    const int64_t step = (IB) ? (IB) : r->stride_w * ib;                       \
    const uint16_t *in = r->in + x0 * step;                                    \
    const uint16_t *wt = r->weight;                                            \
    int64_t c, ky, kx, g;                                                      \
    int b, j;                                                                  \
    CUVIL_UNROLL for (b = 0; b < NB; ++b) CUVIL_UNROLL for (j = 0; j < U; ++j) \
        acc[b][j] = zero();                                                    \
    for (c = 0; c < r->in_blocks; ++c)                                         \
      for (ky = 0; ky < r->kh; ++ky)                                           \
        for (kx = 0; kx < r->kw; ++kx) {                                       \
          const uint16_t *ip = in + c * r->plane_stride +                      \
                               ky * r->dil_h * r->row_stride +                 \
                               kx * r->dil_w * ib;                             \
          for (g = 0; g < ib; g += 2, wt += 2 * LANES) {                       \
            CUVIL_BCONVB_##V##_WTYPE wv[NB];                                   \
            CUVIL_UNROLL for (b = 0; b < NB; ++b) wv[b] =                      \
                cuvil_bconvb_##V##_w(wt + b * r->weight_stride);               \
            CUVIL_UNROLL for (j = 0; j < U; ++j) {                             \
              CUVIL_BCONVB_##V##_ATYPE av =                                    \
                  cuvil_bconvb_##V##_a(ip + j * step + g);                     \
              CUVIL_UNROLL for (b = 0; b < NB; ++b) acc[b][j] =                \
                  cuvil_bconvb_##V##_dot(acc[b][j], av, wv[b]);                \
            }                                                                  \
          }                                                                    \
        }                                                                      \
    CUVIL_TILE_FINISH_F32(r, acc, x0, vec, LANES, NB, U, zero, loadf, storef,  \
                          addf, maxf, minf, set1f)                             \
  }

/* A variant's entry (tiles.h): the row in tiles of at most UMAX; IB_CASES
 * (if IB) for stride 1 on input blocks of IB. */
#define CUVIL_BCONVB_CASE(name, NB, U) CUVIL_TILE_CASE(cuvil_bconvb, name, NB, U)
#define CUVIL_BCONVB_ENTRY(name, isa, LANES, UMAX, NARROWER, IB, CASES,        \
                           IB_CASES)                                           \
  CUVIL_TILE_ENTRY(cuvil_bconvb, cuvil_bconvb_row, name, isa, LANES, UMAX,     \
                   NARROWER, IB, 1, CASES, IB_CASES)

#define CUVIL_BCONVB_YMM(name, V, NB, U)                                       \
  CUVIL_BCONVB_TILE(name, "avx2,fma", V, __m256, 8, NB, U, _mm256_setzero_ps,  \
                    _mm256_loadu_ps, _mm256_storeu_ps, _mm256_add_ps,          \
                    _mm256_max_ps, _mm256_min_ps, _mm256_set1_ps, 0)
#define CUVIL_BCONVB_ZMM(name, isa, V, NB, U, IB)                              \
  CUVIL_BCONVB_TILE(name, isa, V, __m512, 16, NB, U, _mm512_setzero_ps,        \
                    _mm512_loadu_ps, _mm512_storeu_ps, _mm512_add_ps,          \
                    _mm512_max_ps, _mm512_min_ps, _mm512_set1_ps, IB)
#define CUVIL_BCONVB_T_AVX2(NB, U) CUVIL_BCONVB_YMM(avx2, AVX2, NB, U)
#define CUVIL_BCONVB_T_AVX512(NB, U)                                           \
  CUVIL_BCONVB_ZMM(avx512, "avx512f", AVX512, NB, U, 0)
#define CUVIL_BCONVB_T_BF16(NB, U)                                             \
  CUVIL_BCONVB_ZMM(avx512bf16, "avx512f,avx512bf16", BF16, NB, U, 0)
#define CUVIL_BCONVB_T_BF16_IB16(NB, U)                                        \
  CUVIL_BCONVB_ZMM(avx512bf16_ib16, "avx512f,avx512bf16", BF16, NB, U, 16)
#define CUVIL_BCONVB_C_AVX2(NB, U) CUVIL_BCONVB_CASE(avx2, NB, U)
#define CUVIL_BCONVB_C_AVX512(NB, U) CUVIL_BCONVB_CASE(avx512, NB, U)
#define CUVIL_BCONVB_C_BF16(NB, U) CUVIL_BCONVB_CASE(avx512bf16, NB, U)
#define CUVIL_BCONVB_C_BF16_IB16(NB, U) CUVIL_BCONVB_CASE(avx512bf16_ib16, NB, U)
/* Widths 1..N of one block count (NB). */
#define CUVIL_BCONVB_W5(X, NB) X(NB, 1) X(NB, 2) X(NB, 3) X(NB, 4) X(NB, 5)
#define CUVIL_BCONVB_W12(X, NB)                                                \
  CUVIL_BCONVB_W5(X, NB) X(NB, 6) X(NB, 7) X(NB, 8) X(NB, 9) X(NB, 10)         \
      X(NB, 11) X(NB, 12)
#define CUVIL_BCONVB_W14(X, NB) CUVIL_BCONVB_W12(X, NB) X(NB, 13) X(NB, 14)
#define CUVIL_BCONVB_BOTH(W, X) W(X, 1) W(X, 2)

/* 16 ymm registers: the widening tiles hold two per weight operand and two
 * per broadcast (2 x 5 sums); AVX-512's 32 zmm hold 2 x 12 widening, 2 x 14
 * with vdpbf16ps. A model compiles only the variant it calls
 * (CUVIL_BCONVB_ONLY, then CUVIL_BCONVB_KEEP_<name>); tests and
 * benchmarks all. Blocks of 8 on an AVX-512 target run the AVX2 tiles. */
#if !defined(CUVIL_BCONVB_ONLY) || defined(CUVIL_BCONVB_KEEP_avx2)
CUVIL_BCONVB_BOTH(CUVIL_BCONVB_W5, CUVIL_BCONVB_T_AVX2)
CUVIL_BCONVB_ENTRY(avx2, "avx2,fma", 8, 5, 0, 0,
                   CUVIL_BCONVB_BOTH(CUVIL_BCONVB_W5, CUVIL_BCONVB_C_AVX2), )
#endif
#if !defined(CUVIL_BCONVB_ONLY) || defined(CUVIL_BCONVB_KEEP_avx512)
CUVIL_BCONVB_BOTH(CUVIL_BCONVB_W12, CUVIL_BCONVB_T_AVX512)
CUVIL_BCONVB_ENTRY(avx512, "avx512f", 16, 12, cuvil_bconvb_avx2(r, nb, x0, u),
                   0, CUVIL_BCONVB_BOTH(CUVIL_BCONVB_W12, CUVIL_BCONVB_C_AVX512),
                   )
#endif
#if !defined(CUVIL_BCONVB_ONLY) || defined(CUVIL_BCONVB_KEEP_avx512bf16)
CUVIL_BCONVB_BOTH(CUVIL_BCONVB_W14, CUVIL_BCONVB_T_BF16)
CUVIL_BCONVB_BOTH(CUVIL_BCONVB_W14, CUVIL_BCONVB_T_BF16_IB16)
CUVIL_BCONVB_ENTRY(
    avx512bf16, "avx512f,avx512bf16", 16, 14, cuvil_bconvb_avx2(r, nb, x0, u),
    16, CUVIL_BCONVB_BOTH(CUVIL_BCONVB_W14, CUVIL_BCONVB_C_BF16),
    CUVIL_BCONVB_BOTH(CUVIL_BCONVB_W14, CUVIL_BCONVB_C_BF16_IB16))
#endif
#endif

/* The image the tiles read, the rows they compute. */
struct cuvil_bconvb_args {
  cuvil_bconvb_fn tile;
  struct cuvil_bconvb_row base;
  const void *input;
  const uint16_t *weight;
  const float *bias, *residual;
  uint16_t *image;
  float *output, *plain;  /* plain: the NCHW output, or NULL */
  int64_t c, h, w, hp, wp, pad_top, pad_left, src_block;
  int x_bf16;
  int64_t oh, ow, stride_h, nb, groups;
};

/* `count` input elements from `at` as the tiles' bfloat16. */
static void cuvil_bconvb_convert_run(const struct cuvil_bconvb_args *a,
                                     int64_t at, int64_t count,
                                     uint16_t *dst) {
  int64_t i;
  if (a->x_bf16) {
    const uint16_t *src = (const uint16_t *)a->input + at;
    for (i = 0; i < count; ++i)
      dst[i] = cuvil_bconv_daz(src[i]);
  } else {
    const uint32_t *src = (const uint32_t *)a->input + at;
    for (i = 0; i < count; ++i)
      dst[i] = cuvil_bconv_round(src[i]);
  }
}

/* Image blocks [begin, end) into the scratch: bfloat16, blocked by the
 * tiles' input block, zero padded. */
static void cuvil_bconvb_convert(void *p, int64_t begin, int64_t end) {
  const struct cuvil_bconvb_args *a = (const struct cuvil_bconvb_args *)p;
  int64_t ib = a->base.in_block, sb = a->src_block, q, y, x, s;
  for (q = begin; q < end; ++q) {
    uint16_t *dst = a->image + q * a->hp * a->wp * ib;
    for (y = 0; y < a->hp; ++y) {
      int64_t iy = y - a->pad_top;
      uint16_t *row = dst + y * a->wp * ib;
      if (iy < 0 || iy >= a->h) {
        memset(row, 0, (size_t)(a->wp * ib) * sizeof(uint16_t));
        continue;
      }
      if (sb == ib) {
        /* Blocks as they are: the row's pixels between padding. */
        int64_t x0 = a->pad_left < a->wp ? a->pad_left : a->wp;
        int64_t x1 = a->pad_left + a->w < a->wp ? a->pad_left + a->w : a->wp;
        memset(row, 0, (size_t)(x0 * ib) * sizeof(uint16_t));
        if (x1 > x0)
          cuvil_bconvb_convert_run(a, ((q * a->h + iy) * a->w) * ib,
                                   (x1 - x0) * ib, row + x0 * ib);
        else
          x1 = x0;
        memset(row + x1 * ib, 0, (size_t)((a->wp - x1) * ib) * sizeof(uint16_t));
        continue;
      }
      for (x = 0; x < a->wp; ++x) {
        int64_t ix = x - a->pad_left;
        for (s = 0; s < ib; ++s) {
          int64_t ch = q * ib + s;
          if (ix < 0 || ix >= a->w || ch >= a->c)
            row[x * ib + s] = 0;
          else
            cuvil_bconvb_convert_run(
                a, (((ch / sb) * a->h + iy) * a->w + ix) * sb + ch % sb, 1,
                row + x * ib + s);
        }
      }
    }
  }
}

/* Channels [begin, end) of an NCHW output from the blocked one: the
 * residual and the activation the tiles left out, in their order. */
static void cuvil_bconvb_unblock(void *p, int64_t begin, int64_t end) {
  const struct cuvil_bconvb_args *a = (const struct cuvil_bconvb_args *)p;
  const struct cuvil_bconvb_row *r = &a->base;
  int64_t B = r->block, plane = a->oh * a->ow, o, s;
  for (o = begin; o < end; ++o) {
    const float *src = a->output + (o / B) * plane * B + o % B;
    const float *res = a->residual ? a->residual + o * plane : 0;
    float *dst = a->plain + o * plane;
    for (s = 0; s < plane; ++s)
      dst[s] = cuvil_finish_value(src[s * B], 0, res ? res + s : 0,
                                  r->activation, r->lo, r->hi);
  }
}

/* Output rows [begin, end) of (channel block group, row) pairs: a group's
 * weights stay in cache across its rows. */
static void cuvil_bconvb_rows(void *p, int64_t begin, int64_t end) {
  const struct cuvil_bconvb_args *a = (const struct cuvil_bconvb_args *)p;
  int64_t t, B = a->base.block;
  for (t = begin; t < end; ++t) {
    int64_t g = t / a->oh, y = t % a->oh, first = g * a->nb;
    int64_t at = first * a->base.out_stride + y * a->ow * B;
    struct cuvil_bconvb_row r = a->base;
    r.in = a->image + y * a->stride_h * r.row_stride;
    r.weight = a->weight + first * r.weight_stride;
    r.bias = a->bias ? a->bias + first * B : 0;
    r.out = a->output + at;
    /* Through the scratch, the residual waits for cuvil_bconvb_unblock. */
    r.residual = a->residual && !a->plain ? a->residual + at : 0;
    if (!a->tile || !a->tile(&r, a->nb, 0, a->ow))
      cuvil_bconvb_reference(&r, a->nb, 0, a->ow);
  }
}

void cuvil_bconv2d_blocked(cuvil_bconvb_fn tile, cuvil_pool *pool,
                           uint8_t *scratch, int64_t n, int64_t c, int64_t h,
                           int64_t w, const void *x, int x_bf16,
                           int64_t in_block, int64_t oc, int64_t kh,
                           int64_t kw, const uint16_t *packed,
                           const float *bias, int64_t stride_h,
                           int64_t stride_w, int64_t pad_top, int64_t pad_left,
                           int64_t dil_h, int64_t dil_w, int64_t oh,
                           int64_t ow, float *y, int64_t block,
                           int64_t out_block, const cuvil_epilogue *epilogue) {
  struct cuvil_bconvb_args a;
  int via = cuvil_bconvb_via_scratch(block, out_block);
  int64_t ib = cuvil_bconvb_input_block(in_block), planes = (c + ib - 1) / ib;
  int64_t blocks = oc / block, b;
  int64_t in_elements = (c + in_block - 1) / in_block * in_block * h * w;
  memset(&a, 0, sizeof(a));
  a.tile = tile;
  a.c = c;
  a.h = h;
  a.w = w;
  a.hp = cuvil_conv_extent(oh, kh, stride_h, dil_h);
  a.wp = cuvil_conv_extent(ow, kw, stride_w, dil_w);
  a.pad_top = pad_top;
  a.pad_left = pad_left;
  a.src_block = in_block;
  a.x_bf16 = x_bf16;
  a.oh = oh;
  a.ow = ow;
  a.stride_h = stride_h;
  a.nb = blocks % 2 == 0 ? 2 : 1;
  a.groups = blocks / a.nb;
  a.weight = packed;
  a.bias = bias;
  a.image = (uint16_t *)scratch;
  a.base.in_blocks = planes;
  a.base.in_block = ib;
  a.base.block = block;
  a.base.row_stride = a.wp * ib;
  a.base.plane_stride = a.hp * a.wp * ib;
  a.base.kh = kh;
  a.base.kw = kw;
  a.base.stride_w = stride_w;
  a.base.dil_h = dil_h;
  a.base.dil_w = dil_w;
  a.base.weight_stride = planes * kh * kw * ib * block;
  a.base.out_stride = oh * ow * block;
  a.base.activation = epilogue ? epilogue->activation : CUVIL_ACT_NONE;
  a.base.lo = epilogue ? epilogue->lo : 0.0f;
  a.base.hi = epilogue ? epilogue->hi : 0.0f;
  for (b = 0; b < n; ++b) {
    a.input = x_bf16 ? (const void *)((const uint16_t *)x + b * in_elements)
                     : (const void *)((const float *)x + b * in_elements);
    a.output = y + b * oc * oh * ow;
    a.residual = epilogue && epilogue->residual
                     ? epilogue->residual + b * oc * oh * ow
                     : 0;
    if (via) {
      /* The tiles write blocks after the image; unblocking finishes. */
      a.plain = a.output;
      a.output = (float *)(scratch + cuvil_bconvb_image_bytes(c, in_block,
                                                              a.hp, a.wp));
      a.base.activation = CUVIL_ACT_NONE;
    }
    cuvil_parallel_for(pool, planes, cuvil_bconvb_convert, &a);
    cuvil_parallel_for(pool, a.groups * oh, cuvil_bconvb_rows, &a);
    if (via) {
      a.base.activation = epilogue ? epilogue->activation : CUVIL_ACT_NONE;
      cuvil_parallel_for(pool, oc, cuvil_bconvb_unblock, &a);
    }
  }
}
