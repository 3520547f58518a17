/*===- convb.c - the blocked direct convolution and its register tiles ---===*
 *
 * Each output row of 1 or 2 channel blocks in register tiles (convb.inc),
 * on a zero-padded copy of the image so that no tile tests bounds; rows
 * wide enough read the input in place but for their edges, which read a
 * copy of only the image's frame.
 *
 *===----------------------------------------------------------------------===*/

#include "cuvil/targets/cpu/runtime/conv_blocked/conv_blocked.h"

#include "cuvil/targets/cpu/runtime/contract/contract.h"
#include "cuvil/targets/cpu/runtime/neon/neon.h"

#include <string.h>

/* One output row of cuvil_conv2d_blocked_f32 as its tiles see it. */
struct cuvil_convb_row {
  const float *in;       /* the padded image at the row's first input row */
  const float *weight;   /* the first of the row's channel blocks' weights */
  const float *bias;     /* the first block's bias, or NULL */
  const float *residual; /* the row in the first block's residual, or NULL */
  float *out;            /* the row in the first block of the output */
  int64_t in_blocks, in_block, block;
  int64_t row_stride;    /* floats from one padded input row to the next */
  int64_t plane_stride;  /* floats from one input block to the next */
  int64_t kh, kw, stride_w, dil_h, dil_w;
  int64_t weight_stride; /* floats from one channel block's weights to the next */
  int64_t out_stride;    /* floats from one output channel block to the next */
  int64_t in_step;       /* floats from one block's input to the next block's:
                          * 0 when they share a group (or none) */
  /* Output rows the call computes (1, or 2 for the AVX-512 tiles of narrow
   * rows), the second's input and output that many floats on. */
  int64_t rows, row_in_step, row_out_step;
  int activation;
  float lo, hi;
};

/* bias, residual and activation for lane `l` of block `b`, column `x`. */
static inline float cuvil_convb_finish(const struct cuvil_convb_row *r,
                                       int64_t b, int64_t x, int64_t l,
                                       float v) {
  return cuvil_finish_value(
      v, r->bias ? r->bias + b * r->block + l : 0,
      r->residual ? r->residual + b * r->out_stride + x * r->block + l : 0,
      r->activation, r->lo, r->hi);
}

static void cuvil_convb_reference_row(const struct cuvil_convb_row *r,
                                      int64_t nb, int64_t x0, int64_t u) {
  int64_t b, x, c, ky, kx, i, l, B = r->block, ib = r->in_block;
  float acc[64];
  for (b = 0; b < nb; ++b)
    for (x = x0; x < x0 + u; ++x) {
      const float *wt = r->weight + b * r->weight_stride;
      const float *in = r->in + b * r->in_step + x * r->stride_w * ib;
      for (l = 0; l < B; ++l)
        acc[l] = 0.0f;
      for (c = 0; c < r->in_blocks; ++c)
        for (ky = 0; ky < r->kh; ++ky)
          for (kx = 0; kx < r->kw; ++kx) {
            const float *ip = in + c * r->plane_stride +
                              ky * r->dil_h * r->row_stride + kx * r->dil_w * ib;
            for (i = 0; i < ib; ++i, wt += B)
              for (l = 0; l < B; ++l)
                acc[l] += ip[i] * wt[l];
          }
      for (l = 0; l < B; ++l)
        r->out[b * r->out_stride + x * B + l] =
            cuvil_convb_finish(r, b, x, l, acc[l]);
    }
}

/* The second of two rows: its input, output and residual. */
static struct cuvil_convb_row
cuvil_convb_next_row(const struct cuvil_convb_row *r) {
  struct cuvil_convb_row next = *r;
  next.in += r->row_in_step;
  next.out += r->row_out_step;
  next.residual = r->residual ? r->residual + r->row_out_step : 0;
  next.rows = 1;
  return next;
}

int cuvil_convb_reference(const struct cuvil_convb_row *r, int64_t nb,
                          int64_t x0, int64_t u) {
  cuvil_convb_reference_row(r, nb, x0, u);
  if (r->rows == 2) {
    struct cuvil_convb_row next = cuvil_convb_next_row(r);
    cuvil_convb_reference_row(&next, nb, x0, u);
  }
  return 1;
}

#if defined(CUVIL_ENABLE_SIMD_KERNELS) && !defined(CUVIL_OMIT_CONVB_TILES)
/* Tiles that multiply two blocks by one input (their NB = 2 cases) take two
 * blocks of different groups (r->in_step on) one at a time. */
static inline int cuvil_convb_by_group(cuvil_convb_fn tiles,
                                       const struct cuvil_convb_row *r,
                                       int64_t nb, int64_t x0, int64_t u) {
  struct cuvil_convb_row one;
  if (nb != 2 || !r->in_step)
    return tiles(r, nb, x0, u);
  one = *r;
  one.in_step = 0;
  if (!tiles(&one, 1, x0, u))
    return 0;
  one.in += r->in_step;
  one.weight += r->weight_stride;
  one.bias = r->bias ? r->bias + r->block : 0;
  one.out += r->out_stride;
  one.residual = r->residual ? r->residual + r->out_stride : 0;
  return tiles(&one, 1, x0, u);
}

/* NB x U accumulators of LANES outputs per output row (ROWS of them: 1, or
 * 2 for CUVIL_CONVB_TILE2); fully unrolled, so that they live in
 * registers (U <= the variant's UMAX keeps them from spilling). IB, if not
 * 0, fixes the input block and the stride (SW): the U columns' inputs are
 * then constant offsets from one pointer, where a stride known only at run
 * time takes a register per column and spills some (10% of a pointwise
 * convolution's time on AVX-512, a fifth of a stem's). */
#define CUVIL_CONVB_TILE(name, isa, vec, LANES, NB, U, set1, loadu, storeu,    \
                         fmadd, add, maxv, minv, zero, IB, SW)                 \
  CUVIL_CONVB_TILE_ROWS(name, isa, vec, LANES, NB, U, set1, loadu, storeu,     \
                        fmadd, add, maxv, minv, zero, IB, SW, 1)
/* Two output rows at once (r->rows == 2): each weight vector loaded once
 * for both, half the weight reads of a narrow row's tiles (a 7-column
 * row's 2 x 7 sums would read them once per 14 FMAs). */
#define CUVIL_CONVB_TILE2(name, isa, vec, LANES, NB, U, set1, loadu, storeu,   \
                          fmadd, add, maxv, minv, zero, IB, SW)                \
  CUVIL_CONVB_TILE_ROWS(name, isa, vec, LANES, NB, U, set1, loadu, storeu,     \
                        fmadd, add, maxv, minv, zero, IB, SW, 2)
#define CUVIL_CONVB_TILE_ROWS(name, isa, vec, LANES, NB, U, set1, loadu,       \
                              storeu, fmadd, add, maxv, minv, zero, IB, SW,    \
                              ROWS)                                            \
  __attribute__((target(isa), noinline)) static void                           \
      cuvil_convb_##name##_##NB##_##U(const struct cuvil_convb_row *r,         \
                                      int64_t x0) {                            \
    vec acc[ROWS][NB][U];                                                      \
    const int64_t ib = (IB) ? (IB) : r->in_block;                              \
    const int64_t step = (IB) ? (IB) * (SW) : r->stride_w * ib;                \
    const int64_t next = (ROWS) > 1 ? r->row_in_step : 0;                      \
    const float *in = r->in + x0 * step;                                       \
    int64_t c, ky, kx, i;                                                      \
    int b, j, q;                                                               \
    CUVIL_UNROLL for (q = 0; q < ROWS; ++q)                                    \
        CUVIL_UNROLL for (b = 0; b < NB; ++b)                                  \
            CUVIL_UNROLL for (j = 0; j < U; ++j) acc[q][b][j] = zero();        \
    const float *wt = r->weight;                                               \
    for (c = 0; c < r->in_blocks; ++c)                                         \
      for (ky = 0; ky < r->kh; ++ky)                                           \
        for (kx = 0; kx < r->kw; ++kx) {                                       \
          const float *ip = in + c * r->plane_stride +                         \
                            ky * r->dil_h * r->row_stride +                    \
                            kx * r->dil_w * ib;                                \
          for (i = 0; i < ib; ++i, wt += LANES) {                              \
            vec wv[NB];                                                        \
            CUVIL_UNROLL for (b = 0; b < NB; ++b) wv[b] =                      \
                loadu(wt + b * r->weight_stride);                              \
            CUVIL_UNROLL for (j = 0; j < U; ++j)                               \
                CUVIL_UNROLL for (q = 0; q < ROWS; ++q) {                      \
              vec xv = set1(ip[q * next + j * step + i]);                      \
              CUVIL_UNROLL for (b = 0; b < NB; ++b) acc[q][b][j] =             \
                  fmadd(xv, wv[b], acc[q][b][j]);                              \
            }                                                                  \
          }                                                                    \
        }                                                                      \
    CUVIL_TILE_FINISH_F32(r, acc[0], x0, vec, LANES, NB, U, zero, loadu,       \
                          storeu, add, maxv, minv, set1)                       \
    if ((ROWS) > 1) {                                                          \
      const struct cuvil_convb_row second = cuvil_convb_next_row(r);           \
      CUVIL_TILE_FINISH_F32((&second), acc[(ROWS)-1], x0, vec, LANES, NB, U,   \
                            zero, loadu, storeu, add, maxv, minv, set1)        \
    }                                                                          \
  }

/* A variant's entry (tiles.h): the row in tiles of at most UMAX; IB_CASES
 * (if IB) for stride SW on input blocks of IB. */
#define CUVIL_CONVB_CASE(name, NB, U) CUVIL_TILE_CASE(cuvil_convb, name, NB, U)
#define CUVIL_CONVB_ENTRY(name, isa, LANES, UMAX, NARROWER, IB, SW, CASES,     \
                          IB_CASES)                                            \
  CUVIL_TILE_ENTRY(cuvil_convb, cuvil_convb_row, name, isa, LANES, UMAX,       \
                   NARROWER, IB, SW, CASES, IB_CASES)

/* Widths 1..6, 1..12 and 1..14 of one block count (NB). */
#define CUVIL_CONVB_W6(X, NB) X(NB, 1) X(NB, 2) X(NB, 3) X(NB, 4) X(NB, 5) X(NB, 6)
#define CUVIL_CONVB_W12(X, NB)                                                 \
  CUVIL_CONVB_W6(X, NB) X(NB, 7) X(NB, 8) X(NB, 9) X(NB, 10) X(NB, 11) X(NB, 12)
#define CUVIL_CONVB_W14(X, NB) CUVIL_CONVB_W12(X, NB) X(NB, 13) X(NB, 14)

#if defined(__x86_64__)
#include <immintrin.h>

#define CUVIL_CONVB_ZMM(name, NB, U, IB, SW)                                   \
  CUVIL_CONVB_TILE(name, "avx512f", __m512, 16, NB, U, _mm512_set1_ps,         \
                   _mm512_loadu_ps, _mm512_storeu_ps, _mm512_fmadd_ps,         \
                   _mm512_add_ps, _mm512_max_ps, _mm512_min_ps,                \
                   _mm512_setzero_ps, IB, SW)
#define CUVIL_CONVB_YMM(name, NB, U, IB, SW)                                   \
  CUVIL_CONVB_TILE(name, "avx2,fma", __m256, 8, NB, U, _mm256_set1_ps,         \
                   _mm256_loadu_ps, _mm256_storeu_ps, _mm256_fmadd_ps,         \
                   _mm256_add_ps, _mm256_max_ps, _mm256_min_ps,                \
                   _mm256_setzero_ps, IB, SW)
/* Each ISA's tiles: any input, stride 1 on whole blocks (_ib), and the
 * stem's stride 2 on plain (one-channel-block) input (_stem). */
#define CUVIL_CONVB_AVX512(NB, U) CUVIL_CONVB_ZMM(avx512, NB, U, 0, 1)
#define CUVIL_CONVB_AVX512_IB(NB, U) CUVIL_CONVB_ZMM(avx512_ib, NB, U, 16, 1)
#define CUVIL_CONVB_AVX512_STEM(NB, U) CUVIL_CONVB_ZMM(avx512_stem, NB, U, 1, 2)
#define CUVIL_CONVB_AVX2(NB, U) CUVIL_CONVB_YMM(avx2, NB, U, 0, 1)
#define CUVIL_CONVB_AVX2_IB(NB, U) CUVIL_CONVB_YMM(avx2_ib, NB, U, 8, 1)
#define CUVIL_CONVB_AVX2_STEM(NB, U) CUVIL_CONVB_YMM(avx2_stem, NB, U, 1, 2)
#define CUVIL_CONVB_CASE_AVX512(NB, U) CUVIL_CONVB_CASE(avx512, NB, U)
#define CUVIL_CONVB_CASE_AVX512_IB(NB, U) CUVIL_CONVB_CASE(avx512_ib, NB, U)
#define CUVIL_CONVB_CASE_AVX512_STEM(NB, U) CUVIL_CONVB_CASE(avx512_stem, NB, U)
#define CUVIL_CONVB_CASE_AVX2(NB, U) CUVIL_CONVB_CASE(avx2, NB, U)
#define CUVIL_CONVB_CASE_AVX2_IB(NB, U) CUVIL_CONVB_CASE(avx2_ib, NB, U)
#define CUVIL_CONVB_CASE_AVX2_STEM(NB, U) CUVIL_CONVB_CASE(avx2_stem, NB, U)
/* A width list W of X for both block counts. */
#define CUVIL_CONVB_NB12(W, X) W(X, 1) W(X, 2)

/* AVX-512: 32 registers, 2 x 14 accumulators; AVX2: 16, 2 x 6. */
CUVIL_CONVB_NB12(CUVIL_CONVB_W14, CUVIL_CONVB_AVX512)
CUVIL_CONVB_NB12(CUVIL_CONVB_W14, CUVIL_CONVB_AVX512_IB)
CUVIL_CONVB_NB12(CUVIL_CONVB_W14, CUVIL_CONVB_AVX512_STEM)
CUVIL_CONVB_NB12(CUVIL_CONVB_W6, CUVIL_CONVB_AVX2)
CUVIL_CONVB_NB12(CUVIL_CONVB_W6, CUVIL_CONVB_AVX2_IB)
CUVIL_CONVB_NB12(CUVIL_CONVB_W6, CUVIL_CONVB_AVX2_STEM)
/* Units of three blocks (3 weights, a broadcast and 3 x 4 sums fill the
 * 16 registers) for rows that two blocks' tiles would cut into tiles of
 * fewer than 8 sums, too few to keep both multipliers' chains busy (a
 * 7-column row: 4 + 3 columns; 14% faster on ResNet's 7 x 7 layers). */
#define CUVIL_CONVB_W4(X, NB) X(NB, 1) X(NB, 2) X(NB, 3) X(NB, 4)
CUVIL_CONVB_W4(CUVIL_CONVB_AVX2, 3)
CUVIL_CONVB_W4(CUVIL_CONVB_AVX2_IB, 3)
CUVIL_CONVB_ENTRY(avx2_three_tiles, "avx2,fma", 8, 4, 0, 8, 1,
                  CUVIL_CONVB_W4(CUVIL_CONVB_CASE_AVX2, 3),
                  CUVIL_CONVB_W4(CUVIL_CONVB_CASE_AVX2_IB, 3))
#undef CUVIL_CONVB_W4
CUVIL_CONVB_ENTRY(avx2_tiles, "avx2,fma", 8, 6, 0, 8, 1,
                  CUVIL_CONVB_NB12(CUVIL_CONVB_W6, CUVIL_CONVB_CASE_AVX2),
                  CUVIL_CONVB_NB12(CUVIL_CONVB_W6, CUVIL_CONVB_CASE_AVX2_IB))
CUVIL_CONVB_ENTRY(avx2_stem_tiles, "avx2,fma", 8, 6, 0, 1, 2,
                  CUVIL_CONVB_NB12(CUVIL_CONVB_W6, CUVIL_CONVB_CASE_AVX2),
                  CUVIL_CONVB_NB12(CUVIL_CONVB_W6, CUVIL_CONVB_CASE_AVX2_STEM))
int cuvil_convb_avx2(const struct cuvil_convb_row *r, int64_t nb, int64_t x0,
                     int64_t u) {
  /* Three blocks share one input (the driver takes them ungrouped). */
  if (nb == 3)
    return r->in_step ? 0 : cuvil_convb_avx2_three_tiles(r, nb, x0, u);
  return cuvil_convb_by_group(r->in_block == 1 ? cuvil_convb_avx2_stem_tiles
                                               : cuvil_convb_avx2_tiles,
                              r, nb, x0, u);
}

#if !defined(CUVIL_OMIT_CONVB_PAIRS)
/* Two 8-channel blocks side by side in one 16-lane register: an NCHW8c net
 * on an AVX-512 target (channel counts that 16 does not divide, and
 * ResNeXt's and RegNet's 8-channel groups) at the full vector width rather
 * than on the AVX2 tiles. Lanes 0-7 are block b's, 8-15 block b + 1's: the
 * weights of the two blocks joined per input lane, and in GROUPED tiles each
 * half multiplied by its own group's input (r->in_step on). */
__attribute__((target("avx512f"))) static inline __m512
cuvil_convb_join8(__m256 lo, __m256 hi) {
  return _mm512_castpd_ps(_mm512_insertf64x4(
      _mm512_castpd256_pd512(_mm256_castps_pd(lo)), _mm256_castps_pd(hi), 1));
}

/* The pair's sums finished in the unfused ops' order (+ bias, + residual,
 * activation), each half stored to its own block's row. */
#define CUVIL_CONVB_PAIR8_FINISH(r, acc, x0, U)                                \
  {                                                                            \
    __m512 bv = (r)->bias ? _mm512_loadu_ps((r)->bias) : _mm512_setzero_ps();  \
    float *lo = (r)->out + (x0)*8, *hi = lo + (r)->out_stride;                 \
    const float *res = (r)->residual ? (r)->residual + (x0)*8 : 0;             \
    CUVIL_UNROLL for (j = 0; j < U; ++j) {                                     \
      __m512 v = _mm512_add_ps(acc[j], bv);                                    \
      if (res)                                                                 \
        v = _mm512_add_ps(                                                     \
            v, cuvil_convb_join8(                                              \
                   _mm256_loadu_ps(res + j * 8),                               \
                   _mm256_loadu_ps(res + (r)->out_stride + j * 8)));           \
      if ((r)->activation == CUVIL_ACT_RELU)                                   \
        v = _mm512_max_ps(v, _mm512_setzero_ps());                             \
      else if ((r)->activation == CUVIL_ACT_CLIP)                              \
        v = _mm512_min_ps(_mm512_max_ps(v, _mm512_set1_ps((r)->lo)),           \
                          _mm512_set1_ps((r)->hi));                            \
      _mm256_storeu_ps(lo + j * 8, _mm512_castps512_ps256(v));                 \
      _mm256_storeu_ps(hi + j * 8, _mm256_castpd_ps(_mm512_extractf64x4_pd(    \
                                       _mm512_castps_pd(v), 1)));              \
    }                                                                          \
    if ((r)->activation > CUVIL_ACT_CLIP) {                                    \
      cuvil_activate_f32((r)->activation, (r)->lo, (r)->hi, lo, U * 8);        \
      cuvil_activate_f32((r)->activation, (r)->lo, (r)->hi, hi, U * 8);        \
    }                                                                          \
  }

#define CUVIL_CONVB_PAIR8(KIND, GROUPED, IB, U)                                \
  __attribute__((target("avx512f"), noinline)) static void                     \
      cuvil_convb_pair8##KIND##_##U(const struct cuvil_convb_row *r,           \
                                    int64_t x0) {                              \
    __m512 acc[U];                                                             \
    const int64_t ib = (IB) ? (IB) : r->in_block;                              \
    const int64_t step = (IB) ? (IB) : r->stride_w * ib;                       \
    const int64_t other = GROUPED ? r->in_step : 0;                            \
    const float *in = r->in + x0 * step, *wt = r->weight;                      \
    int64_t c, ky, kx, i;                                                      \
    int j;                                                                     \
    CUVIL_UNROLL for (j = 0; j < U; ++j) acc[j] = _mm512_setzero_ps();         \
    for (c = 0; c < r->in_blocks; ++c)                                         \
      for (ky = 0; ky < r->kh; ++ky)                                           \
        for (kx = 0; kx < r->kw; ++kx) {                                       \
          const float *ip = in + c * r->plane_stride +                         \
                            ky * r->dil_h * r->row_stride +                    \
                            kx * r->dil_w * ib;                                \
          for (i = 0; i < ib; ++i, wt += 8) {                                  \
            __m512 wv = cuvil_convb_join8(                                     \
                _mm256_loadu_ps(wt), _mm256_loadu_ps(wt + r->weight_stride));  \
            CUVIL_UNROLL for (j = 0; j < U; ++j) {                             \
              const float *xp = ip + j * step + i;                             \
              __m512 xv = GROUPED                                              \
                              ? cuvil_convb_join8(_mm256_set1_ps(xp[0]),       \
                                                  _mm256_set1_ps(xp[other]))   \
                              : _mm512_set1_ps(xp[0]);                         \
              acc[j] = _mm512_fmadd_ps(xv, wv, acc[j]);                        \
            }                                                                  \
          }                                                                    \
        }                                                                      \
    CUVIL_CONVB_PAIR8_FINISH(r, acc, x0, U)                                    \
  }
/* Kinds: s(hared input) or g(rouped), and i: stride 1 on whole blocks of 8
 * (constant column offsets, as CUVIL_CONVB_TILE's IB). */
#define CUVIL_CONVB_PAIR8_S(NB, U) CUVIL_CONVB_PAIR8(s, 0, 0, U)
#define CUVIL_CONVB_PAIR8_G(NB, U) CUVIL_CONVB_PAIR8(g, 1, 0, U)
#define CUVIL_CONVB_PAIR8_SI(NB, U) CUVIL_CONVB_PAIR8(si, 0, 8, U)
#define CUVIL_CONVB_PAIR8_GI(NB, U) CUVIL_CONVB_PAIR8(gi, 1, 8, U)
#define CUVIL_CONVB_PAIR8_CASE(KIND, U)                                        \
  case U:                                                                      \
    cuvil_convb_pair8##KIND##_##U(r, x0);                                      \
    break;
#define CUVIL_CONVB_PAIR8_CASE_S(NB, U) CUVIL_CONVB_PAIR8_CASE(s, U)
#define CUVIL_CONVB_PAIR8_CASE_G(NB, U) CUVIL_CONVB_PAIR8_CASE(g, U)
#define CUVIL_CONVB_PAIR8_CASE_SI(NB, U) CUVIL_CONVB_PAIR8_CASE(si, U)
#define CUVIL_CONVB_PAIR8_CASE_GI(NB, U) CUVIL_CONVB_PAIR8_CASE(gi, U)
CUVIL_CONVB_W14(CUVIL_CONVB_PAIR8_S, 2)
CUVIL_CONVB_W14(CUVIL_CONVB_PAIR8_G, 2)
CUVIL_CONVB_W14(CUVIL_CONVB_PAIR8_SI, 2)
CUVIL_CONVB_W14(CUVIL_CONVB_PAIR8_GI, 2)

/* Columns [x0, x0 + u) of a pair of 8-channel blocks, in tiles of at most
 * 14 columns. */
__attribute__((target("avx512f"))) static int
cuvil_convb_avx512_pairs(const struct cuvil_convb_row *r, int64_t x0,
                         int64_t u) {
  int64_t tiles = (u + 13) / 14, t;
  int fixed = r->in_block == 8 && r->stride_w == 1;
  for (t = 0; t < tiles; ++t) {
    int64_t width = cuvil_tile_width(u, tiles, t);
    if (r->in_step && fixed) {
      switch (width) { CUVIL_CONVB_W14(CUVIL_CONVB_PAIR8_CASE_GI, 2) }
    } else if (r->in_step) {
      switch (width) { CUVIL_CONVB_W14(CUVIL_CONVB_PAIR8_CASE_G, 2) }
    } else if (fixed) {
      switch (width) { CUVIL_CONVB_W14(CUVIL_CONVB_PAIR8_CASE_SI, 2) }
    } else {
      switch (width) { CUVIL_CONVB_W14(CUVIL_CONVB_PAIR8_CASE_S, 2) }
    }
    x0 += width;
  }
  return 1;
}

#endif /* !CUVIL_OMIT_CONVB_PAIRS */

CUVIL_CONVB_ENTRY(avx512_tiles, "avx512f", 16, 14, 0, 16, 1,
                  CUVIL_CONVB_NB12(CUVIL_CONVB_W14, CUVIL_CONVB_CASE_AVX512),
                  CUVIL_CONVB_NB12(CUVIL_CONVB_W14, CUVIL_CONVB_CASE_AVX512_IB))
CUVIL_CONVB_ENTRY(avx512_stem_tiles, "avx512f", 16, 14, 0, 1, 2,
                  CUVIL_CONVB_NB12(CUVIL_CONVB_W14, CUVIL_CONVB_CASE_AVX512),
                  CUVIL_CONVB_NB12(CUVIL_CONVB_W14,
                                   CUVIL_CONVB_CASE_AVX512_STEM))
#define CUVIL_CONVB_ZMM2(name, NB, U, IB, SW)                                  \
  CUVIL_CONVB_TILE2(name, "avx512f", __m512, 16, NB, U, _mm512_set1_ps,        \
                    _mm512_loadu_ps, _mm512_storeu_ps, _mm512_fmadd_ps,        \
                    _mm512_add_ps, _mm512_max_ps, _mm512_min_ps,               \
                    _mm512_setzero_ps, IB, SW)
#define CUVIL_CONVB_AVX512_2R(NB, U) CUVIL_CONVB_ZMM2(avx512_2r, NB, U, 0, 1)
#define CUVIL_CONVB_AVX512_2R_IB(NB, U)                                        \
  CUVIL_CONVB_ZMM2(avx512_2r_ib, NB, U, 16, 1)
#define CUVIL_CONVB_CASE_AVX512_2R(NB, U) CUVIL_CONVB_CASE(avx512_2r, NB, U)
#define CUVIL_CONVB_CASE_AVX512_2R_IB(NB, U)                                   \
  CUVIL_CONVB_CASE(avx512_2r_ib, NB, U)
#define CUVIL_CONVB_W7(X, NB) CUVIL_CONVB_W6(X, NB) X(NB, 7)
CUVIL_CONVB_NB12(CUVIL_CONVB_W7, CUVIL_CONVB_AVX512_2R)
CUVIL_CONVB_NB12(CUVIL_CONVB_W7, CUVIL_CONVB_AVX512_2R_IB)
CUVIL_CONVB_ENTRY(avx512_2r_tiles, "avx512f", 16, 7, 0, 16, 1,
                  CUVIL_CONVB_NB12(CUVIL_CONVB_W7, CUVIL_CONVB_CASE_AVX512_2R),
                  CUVIL_CONVB_NB12(CUVIL_CONVB_W7,
                                   CUVIL_CONVB_CASE_AVX512_2R_IB))
int cuvil_convb_avx512(const struct cuvil_convb_row *r, int64_t nb, int64_t x0,
                       int64_t u) {
  /* Two rows share each weight vector (the driver takes them ungrouped). */
  if (r->rows == 2)
    return r->in_step ? 0 : cuvil_convb_avx512_2r_tiles(r, nb, x0, u);
  if (r->block == 8)
#if !defined(CUVIL_OMIT_CONVB_PAIRS)
    return nb == 2 ? cuvil_convb_avx512_pairs(r, x0, u)
                   : cuvil_convb_avx2(r, nb, x0, u);
#else
    return cuvil_convb_avx2(r, nb, x0, u);
#endif
  return cuvil_convb_by_group(r->in_block == 1 ? cuvil_convb_avx512_stem_tiles
                                               : cuvil_convb_avx512_tiles,
                              r, nb, x0, u);
}
#undef CUVIL_CONVB_PAIR8_FINISH
#undef CUVIL_CONVB_PAIR8
#undef CUVIL_CONVB_PAIR8_S
#undef CUVIL_CONVB_PAIR8_G
#undef CUVIL_CONVB_PAIR8_SI
#undef CUVIL_CONVB_PAIR8_GI
#undef CUVIL_CONVB_PAIR8_CASE
#undef CUVIL_CONVB_PAIR8_CASE_S
#undef CUVIL_CONVB_PAIR8_CASE_G
#undef CUVIL_CONVB_PAIR8_CASE_SI
#undef CUVIL_CONVB_PAIR8_CASE_GI
#undef CUVIL_CONVB_ZMM
#undef CUVIL_CONVB_YMM
#undef CUVIL_CONVB_AVX512
#undef CUVIL_CONVB_AVX512_IB
#undef CUVIL_CONVB_AVX512_STEM
#undef CUVIL_CONVB_AVX2
#undef CUVIL_CONVB_AVX2_IB
#undef CUVIL_CONVB_AVX2_STEM
#undef CUVIL_CONVB_CASE_AVX512
#undef CUVIL_CONVB_CASE_AVX512_IB
#undef CUVIL_CONVB_CASE_AVX512_STEM
#undef CUVIL_CONVB_CASE_AVX2
#undef CUVIL_CONVB_CASE_AVX2_IB
#undef CUVIL_CONVB_CASE_AVX2_STEM
#undef CUVIL_CONVB_ZMM2
#undef CUVIL_CONVB_AVX512_2R
#undef CUVIL_CONVB_AVX512_2R_IB
#undef CUVIL_CONVB_CASE_AVX512_2R
#undef CUVIL_CONVB_CASE_AVX512_2R_IB
#undef CUVIL_CONVB_W7
#undef CUVIL_CONVB_NB12
#elif defined(__aarch64__)
/* NEON: 32 registers, 2 x 12 accumulators of NCHW4c blocks. */
#define CUVIL_CONVB_NEON(NB, U)                                                \
  CUVIL_CONVB_TILE(neon, "+neon", float32x4_t, 4, NB, U, vdupq_n_f32,          \
                   vld1q_f32, vst1q_f32, cuvil_neon_fmadd, vaddq_f32,          \
                   vmaxq_f32, vminq_f32, cuvil_neon_zero, 0, 1)
#define CUVIL_CONVB_CASE_NEON(NB, U) CUVIL_CONVB_CASE(neon, NB, U)
CUVIL_CONVB_W12(CUVIL_CONVB_NEON, 1)
CUVIL_CONVB_W12(CUVIL_CONVB_NEON, 2)
CUVIL_CONVB_ENTRY(neon_tiles, "+neon", 4, 12, 0, 0, 1,
                  CUVIL_CONVB_W12(CUVIL_CONVB_CASE_NEON, 1)
                      CUVIL_CONVB_W12(CUVIL_CONVB_CASE_NEON, 2), )
int cuvil_convb_neon(const struct cuvil_convb_row *r, int64_t nb, int64_t x0,
                     int64_t u) {
  return cuvil_convb_by_group(cuvil_convb_neon_tiles, r, nb, x0, u);
}
#undef CUVIL_CONVB_NEON
#undef CUVIL_CONVB_CASE_NEON
#endif
#undef CUVIL_CONVB_W6
#undef CUVIL_CONVB_W12
#undef CUVIL_CONVB_W14
#undef CUVIL_CONVB_ENTRY
#undef CUVIL_CONVB_CASE
#undef CUVIL_CONVB_TILE
#undef CUVIL_CONVB_TILE2
#undef CUVIL_CONVB_TILE_ROWS
#endif

/* The padded image (rows and columns the tiles read) and where the input's
 * first element sits in it. */
struct cuvil_convb_args {
  cuvil_convb_fn tile;
  struct cuvil_convb_row base;
  const float *input, *image, *weight, *bias, *residual;
  float *padded, *output;
  int64_t h, w, hp, wp, pad_top, pad_left, planes;
  int64_t oh, ow, stride_h, blocks, nb, units;
  /* Each unit's output in `spans` of up to `span` columns: the output rows,
   * or (pointwise, stride 1, unpadded) the plane read as one row, cut so
   * that small planes still fill whole tiles. */
  int64_t span, spans, flat;
  int64_t rows; /* output rows per task: 2 for the AVX-512 two-row tiles */
  int64_t group_blocks; /* output blocks per group (all when ungrouped) */
  /* Framed (a padded image with rows wide enough): output rows [yt, yb),
   * columns [left, right) read the input in place; the padded image holds
   * only what the other tiles read, its rows [0, top_end) and
   * [bottom_begin, hp) and, between them, its columns [0, left_end) and
   * [right_begin, wp). */
  int framed;
  int64_t yt, yb, left, right, top_end, bottom_begin, left_end, right_begin;
};

/* Columns [x0, x1) of padded row y of input block plane q: the input's, or
 * zeros outside it. */
static void cuvil_convb_pad_columns(const struct cuvil_convb_args *a, int64_t q,
                                    int64_t y, int64_t x0, int64_t x1) {
  int64_t ib = a->base.in_block, iy = y - a->pad_top;
  float *row = a->padded + (q * a->hp + y) * a->wp * ib;
  /* Padded columns [c0, c1) are the input's [c0 - pad_left, c1 - pad_left). */
  int64_t c0 = x0 > a->pad_left ? x0 : a->pad_left;
  int64_t c1 = a->pad_left + a->w < x1 ? a->pad_left + a->w : x1;
  if (iy < 0 || iy >= a->h || c1 <= c0) {
    memset(row + x0 * ib, 0, (size_t)((x1 - x0) * ib) * sizeof(float));
    return;
  }
  memset(row + x0 * ib, 0, (size_t)((c0 - x0) * ib) * sizeof(float));
  memcpy(row + c0 * ib,
         a->input + ((q * a->h + iy) * a->w + c0 - a->pad_left) * ib,
         (size_t)((c1 - c0) * ib) * sizeof(float));
  memset(row + c1 * ib, 0, (size_t)((x1 - c1) * ib) * sizeof(float));
}

/* Input block planes [begin, end) into the zero-padded image: all of it, or
 * the frame that a framed convolution's edge tiles read. */
static void cuvil_convb_pad(void *p, int64_t begin, int64_t end) {
  const struct cuvil_convb_args *a = (const struct cuvil_convb_args *)p;
  int64_t q, y;
  for (q = begin; q < end; ++q)
    for (y = 0; y < a->hp; ++y) {
      if (!a->framed || y < a->top_end || y >= a->bottom_begin) {
        cuvil_convb_pad_columns(a, q, y, 0, a->wp);
        continue;
      }
      cuvil_convb_pad_columns(a, q, y, 0, a->left_end);
      cuvil_convb_pad_columns(a, q, y, a->right_begin, a->wp);
    }
}

/* Columns [x0, x0 + u) of a unit's output row `r` (its weights, bias and
 * first output column set), reading the image from `in` + `at` (the
 * floats to column 0) with `r`'s strides, or the input in place. */
static void cuvil_convb_span(const struct cuvil_convb_args *a,
                             struct cuvil_convb_row r, int64_t nb,
                             const float *in, int64_t at, int in_place,
                             int64_t x0, int64_t u) {
  if (u <= 0)
    return;
  if (in_place) {
    r.row_stride = a->w * r.in_block;
    r.row_in_step = a->stride_h * r.row_stride;
    r.plane_stride = a->h * r.row_stride;
    r.in_step = r.in_step ? r.in_blocks * r.plane_stride : 0;
  }
  r.in = in + (at + x0 * r.stride_w * r.in_block);
  r.out += x0 * r.block;
  r.residual = r.residual ? r.residual + x0 * r.block : 0;
  if (!a->tile || !a->tile(&r, nb, 0, u))
    cuvil_convb_reference(&r, nb, 0, u);
}

/* Output rows [begin, end) of (unit of nb channel blocks, row) pairs:
 * their weights stay in cache across their rows. Each block reads its own
 * group's input blocks: the unit's blocks share one group, or are one group
 * each (base.in_step apart). The last unit may have fewer blocks (then 1
 * or 2). A framed row's columns [left, right) read the input in place. */
static void cuvil_convb_rows(void *p, int64_t begin, int64_t end) {
  const struct cuvil_convb_args *a = (const struct cuvil_convb_args *)p;
  int64_t t, B = a->base.block;
  for (t = begin; t < end; ++t) {
    int64_t g = t / a->spans, y = t % a->spans * a->rows, first = g * a->nb;
    int64_t group = first / a->group_blocks;
    int64_t nb = a->blocks - first < a->nb ? a->blocks - first : a->nb;
    int64_t x0 = y * a->span, u = a->span,
            in_at = y * a->stride_h * a->base.row_stride;
    struct cuvil_convb_row r = a->base;
    const float *padded = a->image + group * r.in_blocks * r.plane_stride;
    if (a->flat) {
      u = a->oh * a->ow - x0 < u ? a->oh * a->ow - x0 : u;
      in_at = x0 * r.in_block;
    }
    r.weight = a->weight + first * r.weight_stride;
    r.bias = a->bias ? a->bias + first * B : 0;
    r.out = a->output + first * r.out_stride + x0 * B;
    r.residual = a->residual ? a->residual + first * r.out_stride + x0 * B : 0;
    r.rows = a->oh - y < a->rows ? a->oh - y : a->rows;
    if (!a->framed || y < a->yt || y >= a->yb) {
      cuvil_convb_span(a, r, nb, padded, in_at, 0, 0, u);
      continue;
    }
    cuvil_convb_span(a, r, nb, padded, in_at, 0, 0, a->left);
    /* Input row y * stride_h - pad_top, whose columns from
     * left * stride_w - pad_left on lie inside the input. */
    cuvil_convb_span(
        a, r, nb, a->input + group * r.in_blocks * a->h * a->w * r.in_block,
        ((y * a->stride_h - a->pad_top) * a->w - a->pad_left) * r.in_block, 1,
        a->left, a->right - a->left);
    cuvil_convb_span(a, r, nb, padded, in_at, 0, a->right, u - a->right);
  }
}

/* The narrowest edge span of a framed row: wide enough for a tile that
 * keeps its accumulators' chains busy. */
enum { CUVIL_CONVB_EDGE = 8 };

/* Frames a padded convolution whose rows have at least two edge spans'
 * worth of columns inside the input: rows and columns whose windows lie
 * inside it read it in place, so that only the frame is copied (a grouped
 * convolution's few multiply-adds per input value would otherwise wait on
 * a copy of the whole image). */
static void cuvil_convb_frame(struct cuvil_convb_args *a, int64_t kh,
                              int64_t kw, int64_t stride_w, int64_t dil_h,
                              int64_t dil_w) {
  /* The last output row (column) whose window ends inside the input, + 1. */
  int64_t last_h = a->h - 1 + a->pad_top - (kh - 1) * dil_h;
  int64_t last_w = a->w - 1 + a->pad_left - (kw - 1) * dil_w;
  int64_t yb = last_h < 0 ? 0 : last_h / a->stride_h + 1;
  int64_t xr = last_w < 0 ? 0 : last_w / stride_w + 1;
  int64_t xl = (a->pad_left + stride_w - 1) / stride_w;
  a->yt = (a->pad_top + a->stride_h - 1) / a->stride_h;
  a->yb = yb < a->oh ? yb : a->oh;
  a->left = xl > 0 ? (xl > CUVIL_CONVB_EDGE ? xl : CUVIL_CONVB_EDGE) : 0;
  a->right = xr >= a->ow                     ? a->ow
             : xr < a->ow - CUVIL_CONVB_EDGE ? xr
                                             : a->ow - CUVIL_CONVB_EDGE;
  a->framed = a->yt < a->yb && a->right - a->left >= 2 * CUVIL_CONVB_EDGE;
  if (!a->framed)
    return;
  a->top_end = a->yt > 0 ? cuvil_conv_extent(a->yt, kh, a->stride_h, dil_h) : 0;
  a->bottom_begin = a->yb < a->oh ? a->yb * a->stride_h : a->hp;
  a->left_end =
      a->left > 0 ? cuvil_conv_extent(a->left, kw, stride_w, dil_w) : 0;
  a->right_begin = a->right < a->ow ? a->right * stride_w : a->wp;
}

/* Whether `tile` takes units of three blocks (ungrouped) for spans of
 * `span` columns: the AVX2 tiles, where two blocks' tiles (of at most 6
 * columns) would hold fewer than 8 sums. */
static int cuvil_convb_three(cuvil_convb_fn tile, int64_t span) {
#if defined(CUVIL_ENABLE_SIMD_KERNELS) && defined(__x86_64__) &&               \
    !defined(CUVIL_OMIT_CONVB_TILES)
  return tile == cuvil_convb_avx2 && span / ((span + 5) / 6) < 4;
#else
  (void)tile;
  (void)span;
  return 0;
#endif
}

/* Whether `tile` computes two rows at once: the AVX-512 tiles' rows of 7
 * columns or fewer on 16-channel blocks (ungrouped, blocked input). */
static int cuvil_convb_two_rows(cuvil_convb_fn tile, int64_t block,
                                int64_t in_block, int64_t groups, int64_t ow,
                                int64_t oh) {
#if defined(CUVIL_ENABLE_SIMD_KERNELS) && defined(__x86_64__) &&               \
    !defined(CUVIL_OMIT_CONVB_TILES)
  return tile == cuvil_convb_avx512 && block == 16 && in_block > 1 &&
         groups == 1 && ow <= 7 && oh >= 2;
#else
  (void)tile;
  (void)block;
  (void)in_block;
  (void)groups;
  (void)ow;
  (void)oh;
  return 0;
#endif
}

void cuvil_conv2d_blocked_f32(cuvil_convb_fn tile, cuvil_pool *pool,
                              float *scratch, int64_t n, int64_t c, int64_t h,
                              int64_t w, const float *input, int64_t in_block,
                              int64_t oc, int64_t groups, int64_t kh, int64_t kw,
                              const float *weight, const float *bias,
                              int64_t stride_h, int64_t stride_w,
                              int64_t pad_top, int64_t pad_left, int64_t dil_h,
                              int64_t dil_w, int64_t oh, int64_t ow,
                              float *output, int64_t block,
                              const cuvil_epilogue *epilogue) {
  struct cuvil_convb_args a;
  int64_t blocks = oc / block, b;
  int64_t in_planes = (c + in_block - 1) / in_block;
  /* A group's input blocks (a grouped convolution's C / groups and OC /
   * groups are multiples of the blocks: no block spans two groups). */
  int64_t group_planes = groups > 1 ? c / groups / in_block : in_planes;
  int padded = cuvil_conv2d_blocked_scratch_floats(
                   in_planes * in_block, h, w, kh, kw, stride_h, stride_w,
                   pad_top, pad_left, dil_h, dil_w, oh, ow) != 0;
  memset(&a, 0, sizeof(a));
  a.tile = tile;
  a.h = h;
  a.w = w;
  a.pad_top = pad_top;
  a.pad_left = pad_left;
  a.hp = padded ? cuvil_conv_extent(oh, kh, stride_h, dil_h) : h;
  a.wp = padded ? cuvil_conv_extent(ow, kw, stride_w, dil_w) : w;
  a.planes = in_planes;
  a.oh = oh;
  a.ow = ow;
  a.stride_h = stride_h;
  a.blocks = blocks;
  a.group_blocks = blocks / groups;
  a.flat = !padded && kh == 1 && kw == 1 && stride_h == 1 && stride_w == 1;
  a.span = a.flat && ow < 28 ? 28 : ow;
  a.rows =
      !a.flat && cuvil_convb_two_rows(tile, block, in_block, groups, ow, oh)
          ? 2
          : 1;
  a.spans =
      a.flat ? (oh * ow + a.span - 1) / a.span : (oh + a.rows - 1) / a.rows;
  /* Units of two blocks, but not across groups of more than one block. */
  a.nb = groups == 1 || a.group_blocks % 2 == 0 || a.group_blocks == 1 ? 2 : 1;
  if (groups == 1 && cuvil_convb_three(tile, a.span))
    a.nb = 3;
  a.units = (blocks + a.nb - 1) / a.nb;
  a.weight = weight;
  a.bias = bias;
  a.padded = scratch;
  a.base.in_blocks = group_planes;
  a.base.in_block = in_block;
  a.base.block = block;
  a.base.row_stride = a.wp * in_block;
  a.base.plane_stride = a.hp * a.wp * in_block;
  a.base.kh = kh;
  a.base.kw = kw;
  a.base.stride_w = stride_w;
  a.base.dil_h = dil_h;
  a.base.dil_w = dil_w;
  a.base.weight_stride = group_planes * kh * kw * in_block * block;
  a.base.out_stride = oh * ow * block;
  a.base.rows = 1;
  a.base.row_in_step = stride_h * a.base.row_stride;
  a.base.row_out_step = ow * block;
  a.base.in_step = groups > 1 && a.group_blocks == 1
                       ? group_planes * a.base.plane_stride
                       : 0;
  a.base.activation = epilogue ? epilogue->activation : CUVIL_ACT_NONE;
  a.base.lo = epilogue ? epilogue->lo : 0.0f;
  a.base.hi = epilogue ? epilogue->hi : 0.0f;
  if (padded && !a.flat)
    cuvil_convb_frame(&a, kh, kw, stride_w, dil_h, dil_w);
  for (b = 0; b < n; ++b) {
    a.input = input + b * in_planes * in_block * h * w;
    a.output = output + b * oc * oh * ow;
    a.residual = epilogue && epilogue->residual
                     ? epilogue->residual + b * oc * oh * ow
                     : 0;
    if (padded) {
      cuvil_parallel_for(pool, in_planes, cuvil_convb_pad, &a);
      a.image = scratch;
    } else {
      a.image = a.input;
    }
    cuvil_parallel_for(pool, a.units * a.spans, cuvil_convb_rows, &a);
  }
}
