/*===- sgemm4.c - the sgemm4 micro-kernels (sgemm4.inc) ------------------===*
 *
 * The reference in plain C the compiler vectorizes; the SIMD variants with
 * __attribute__((target)), so no -march is needed to build them (the
 * emitter chooses one by the target's features).
 *
 *===----------------------------------------------------------------------===*/

#include "cuvil/targets/cpu/runtime/gemm/gemm.h"
#include "cuvil/targets/cpu/runtime/neon/neon.h"

void cuvil_sgemm4_reference(int64_t rows, int64_t n, int64_t k, const float *a,
                            int64_t a_row, int64_t a_col, const float *b,
                            int64_t b_row, float *const *c, int accumulate) {
  int64_t q, j, l;
  if (!accumulate)
    for (q = 0; q < rows; ++q)
      for (j = 0; j < n; ++j)
        c[q][j] = 0.0f;
  for (l = 0; l < k; ++l) {
    const float *brow = b + l * b_row;
    float av[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (q = 0; q < rows; ++q)
      av[q] = a[q * a_row + l * a_col];
    if (rows == 4) {
      float *c0 = c[0], *c1 = c[1], *c2 = c[2], *c3 = c[3];
      for (j = 0; j < n; ++j) {
        float bv = brow[j];
        c0[j] += av[0] * bv;
        c1[j] += av[1] * bv;
        c2[j] += av[2] * bv;
        c3[j] += av[3] * bv;
      }
    } else {
      for (q = 0; q < rows; ++q)
        for (j = 0; j < n; ++j)
          c[q][j] += av[q] * brow[j];
    }
  }
}

#if defined(CUVIL_ENABLE_SIMD_KERNELS) && defined(__x86_64__)
#include <immintrin.h>

/* 4 rows x 16 columns in eight YMM accumulators over the whole k. */
__attribute__((target("avx2,fma"))) void
cuvil_sgemm4_avx2(int64_t rows, int64_t n, int64_t k, const float *a,
                  int64_t a_row, int64_t a_col, const float *b, int64_t b_row,
                  float *const *c, int accumulate) {
  /* Rows past `rows` repeat the last row (computed, never stored), so the
   * loop always keeps 4 x 2 accumulators in registers. */
  const float *arow[4];
  int64_t j = 0, l, q;
  for (q = 0; q < 4; ++q)
    arow[q] = a + (q < rows ? q : rows - 1) * a_row;
  for (; j + 16 <= n; j += 16) {
    __m256 c00 = _mm256_setzero_ps(), c01 = _mm256_setzero_ps(), c10 = _mm256_setzero_ps(),
           c11 = _mm256_setzero_ps(), c20 = _mm256_setzero_ps(), c21 = _mm256_setzero_ps(),
           c30 = _mm256_setzero_ps(), c31 = _mm256_setzero_ps();
    if (accumulate) {
      c00 = _mm256_loadu_ps(c[0] + j);
      c01 = _mm256_loadu_ps(c[0] + j + 8);
      if (rows > 1) {
        c10 = _mm256_loadu_ps(c[1] + j);
        c11 = _mm256_loadu_ps(c[1] + j + 8);
      }
      if (rows > 2) {
        c20 = _mm256_loadu_ps(c[2] + j);
        c21 = _mm256_loadu_ps(c[2] + j + 8);
      }
      if (rows > 3) {
        c30 = _mm256_loadu_ps(c[3] + j);
        c31 = _mm256_loadu_ps(c[3] + j + 8);
      }
    }
    for (l = 0; l < k; ++l) {
      const float *brow = b + l * b_row + j;
      __m256 b0 = _mm256_loadu_ps(brow), b1 = _mm256_loadu_ps(brow + 8);
      __m256 a0 = _mm256_set1_ps(arow[0][l * a_col]), a1 = _mm256_set1_ps(arow[1][l * a_col]);
      __m256 a2 = _mm256_set1_ps(arow[2][l * a_col]), a3 = _mm256_set1_ps(arow[3][l * a_col]);
      c00 = _mm256_fmadd_ps(a0, b0, c00);
      c01 = _mm256_fmadd_ps(a0, b1, c01);
      c10 = _mm256_fmadd_ps(a1, b0, c10);
      c11 = _mm256_fmadd_ps(a1, b1, c11);
      c20 = _mm256_fmadd_ps(a2, b0, c20);
      c21 = _mm256_fmadd_ps(a2, b1, c21);
      c30 = _mm256_fmadd_ps(a3, b0, c30);
      c31 = _mm256_fmadd_ps(a3, b1, c31);
    }
    _mm256_storeu_ps(c[0] + j, c00);
    _mm256_storeu_ps(c[0] + j + 8, c01);
    if (rows > 1) {
      _mm256_storeu_ps(c[1] + j, c10);
      _mm256_storeu_ps(c[1] + j + 8, c11);
    }
    if (rows > 2) {
      _mm256_storeu_ps(c[2] + j, c20);
      _mm256_storeu_ps(c[2] + j + 8, c21);
    }
    if (rows > 3) {
      _mm256_storeu_ps(c[3] + j, c30);
      _mm256_storeu_ps(c[3] + j + 8, c31);
    }
  }
  if (j < n) {
    /* The remaining columns, in the same summation order. */
    float *tail[4];
    for (q = 0; q < rows; ++q)
      tail[q] = c[q] + j;
    cuvil_sgemm4_reference(rows, n - j, k, a, a_row, a_col, b + j, b_row, tail,
                           accumulate);
  }
}

/* One strip of 4 rows x 32 columns in eight ZMM accumulators over the whole
 * k; m0/m1 mask the columns of a last, narrower strip (loads and stores),
 * so every column runs the same FMA sequence. Inlined twice: full strips
 * with constant all-ones masks compile to plain loads and stores. */
__attribute__((target("avx512f"), always_inline)) static inline void
cuvil_sgemm4_avx512_strip(const float *const *arow, int64_t a_col,
                          const float *b, int64_t b_row, int64_t k, int rows,
                          __mmask16 m0, __mmask16 m1, float *const *c,
                          int accumulate) {
  __m512 c00 = _mm512_setzero_ps(), c01 = _mm512_setzero_ps(),
         c10 = _mm512_setzero_ps(), c11 = _mm512_setzero_ps(),
         c20 = _mm512_setzero_ps(), c21 = _mm512_setzero_ps(),
         c30 = _mm512_setzero_ps(), c31 = _mm512_setzero_ps();
  if (accumulate) {
    c00 = _mm512_maskz_loadu_ps(m0, c[0]);
    c01 = _mm512_maskz_loadu_ps(m1, c[0] + 16);
    if (rows > 1) {
      c10 = _mm512_maskz_loadu_ps(m0, c[1]);
      c11 = _mm512_maskz_loadu_ps(m1, c[1] + 16);
    }
    if (rows > 2) {
      c20 = _mm512_maskz_loadu_ps(m0, c[2]);
      c21 = _mm512_maskz_loadu_ps(m1, c[2] + 16);
    }
    if (rows > 3) {
      c30 = _mm512_maskz_loadu_ps(m0, c[3]);
      c31 = _mm512_maskz_loadu_ps(m1, c[3] + 16);
    }
  }
  int64_t l;
  for (l = 0; l < k; ++l) {
    const float *brow = b + l * b_row;
    __m512 b0 = _mm512_maskz_loadu_ps(m0, brow);
    __m512 b1 = _mm512_maskz_loadu_ps(m1, brow + 16);
    __m512 a0 = _mm512_set1_ps(arow[0][l * a_col]), a1 = _mm512_set1_ps(arow[1][l * a_col]);
    __m512 a2 = _mm512_set1_ps(arow[2][l * a_col]), a3 = _mm512_set1_ps(arow[3][l * a_col]);
    c00 = _mm512_fmadd_ps(a0, b0, c00);
    c01 = _mm512_fmadd_ps(a0, b1, c01);
    c10 = _mm512_fmadd_ps(a1, b0, c10);
    c11 = _mm512_fmadd_ps(a1, b1, c11);
    c20 = _mm512_fmadd_ps(a2, b0, c20);
    c21 = _mm512_fmadd_ps(a2, b1, c21);
    c30 = _mm512_fmadd_ps(a3, b0, c30);
    c31 = _mm512_fmadd_ps(a3, b1, c31);
  }
  _mm512_mask_storeu_ps(c[0], m0, c00);
  _mm512_mask_storeu_ps(c[0] + 16, m1, c01);
  if (rows > 1) {
    _mm512_mask_storeu_ps(c[1], m0, c10);
    _mm512_mask_storeu_ps(c[1] + 16, m1, c11);
  }
  if (rows > 2) {
    _mm512_mask_storeu_ps(c[2], m0, c20);
    _mm512_mask_storeu_ps(c[2] + 16, m1, c21);
  }
  if (rows > 3) {
    _mm512_mask_storeu_ps(c[3], m0, c30);
    _mm512_mask_storeu_ps(c[3] + 16, m1, c31);
  }
}

/* 4 rows x 32 columns at a time; a last strip of fewer columns is masked. */
__attribute__((target("avx512f"))) void
cuvil_sgemm4_avx512(int64_t rows, int64_t n, int64_t k, const float *a,
                    int64_t a_row, int64_t a_col, const float *b, int64_t b_row,
                    float *const *c, int accumulate) {
  /* Rows past `rows` repeat the last row (computed, never stored), so the
   * loop always keeps 4 x 2 accumulators in registers. */
  const float *arow[4];
  float *strip[4];
  int64_t j = 0, q;
  for (q = 0; q < 4; ++q)
    arow[q] = a + (q < rows ? q : rows - 1) * a_row;
  for (; j + 32 <= n; j += 32) {
    for (q = 0; q < rows; ++q)
      strip[q] = c[q] + j;
    cuvil_sgemm4_avx512_strip(arow, a_col, b + j, b_row, k, (int)rows,
                              (__mmask16)0xFFFF, (__mmask16)0xFFFF, strip,
                              accumulate);
  }
  if (j < n) {
    int64_t rest = n - j;
    __mmask16 m0 = rest >= 16 ? (__mmask16)0xFFFF
                              : (__mmask16)((1u << rest) - 1);
    __mmask16 m1 = rest > 16 ? (__mmask16)((1u << (rest - 16)) - 1)
                             : (__mmask16)0;
    for (q = 0; q < rows; ++q)
      strip[q] = c[q] + j;
    cuvil_sgemm4_avx512_strip(arow, a_col, b + j, b_row, k, (int)rows, m0, m1,
                              strip, accumulate);
  }
}
#endif

#if defined(CUVIL_ENABLE_SIMD_KERNELS) && defined(__aarch64__)
/* NEON: ROWS rows x 16 columns in up to sixteen Q accumulators over the
 * whole k (32 registers hold them, four B vectors and the A values). With
 * unit column stride A's rows give 4 k at a time as one vector each, and
 * each k takes its lane (fmla by element), so no value is broadcast; each
 * element still sums its k in order. ROWS is a constant (one copy per row
 * count): a matrix-vector product (a batch of 1) does no wasted rows. */
#define CUVIL_SGEMM4_NEON_STEP(l, A, LANE)                                     \
  do {                                                                         \
    const float *brow_ = b + (l) * b_row + j;                                  \
    float32x4_t b0_ = vld1q_f32(brow_), b1_ = vld1q_f32(brow_ + 4),            \
                b2_ = vld1q_f32(brow_ + 8), b3_ = vld1q_f32(brow_ + 12);       \
    for (q = 0; q < ROWS; ++q) {                                               \
      acc[q][0] = vfmaq_laneq_f32(acc[q][0], b0_, A[q], LANE);                 \
      acc[q][1] = vfmaq_laneq_f32(acc[q][1], b1_, A[q], LANE);                 \
      acc[q][2] = vfmaq_laneq_f32(acc[q][2], b2_, A[q], LANE);                 \
      acc[q][3] = vfmaq_laneq_f32(acc[q][3], b3_, A[q], LANE);                 \
    }                                                                          \
  } while (0)

static inline __attribute__((always_inline)) void
cuvil_sgemm4_neon_rows(const int ROWS, int64_t n, int64_t k, const float *a,
                       int64_t a_row, int64_t a_col, const float *b,
                       int64_t b_row, float *const *c, int accumulate) {
  int64_t j = 0, l, q, v;
  for (; j + 16 <= n; j += 16) {
    float32x4_t acc[4][4], av[4];
    for (q = 0; q < ROWS; ++q)
      for (v = 0; v < 4; ++v)
        acc[q][v] = accumulate ? vld1q_f32(c[q] + j + 4 * v) : cuvil_neon_zero();
    l = 0;
    if (a_col == 1)
      for (; l + 4 <= k; l += 4) {
        for (q = 0; q < ROWS; ++q)
          av[q] = vld1q_f32(a + q * a_row + l);
        CUVIL_SGEMM4_NEON_STEP(l, av, 0);
        CUVIL_SGEMM4_NEON_STEP(l + 1, av, 1);
        CUVIL_SGEMM4_NEON_STEP(l + 2, av, 2);
        CUVIL_SGEMM4_NEON_STEP(l + 3, av, 3);
      }
    for (; l < k; ++l) {
      for (q = 0; q < ROWS; ++q)
        av[q] = vdupq_n_f32(a[q * a_row + l * a_col]);
      CUVIL_SGEMM4_NEON_STEP(l, av, 0);
    }
    for (q = 0; q < ROWS; ++q)
      for (v = 0; v < 4; ++v)
        vst1q_f32(c[q] + j + 4 * v, acc[q][v]);
  }
  for (; j + 4 <= n; j += 4) {
    float32x4_t acc4[4];
    for (q = 0; q < ROWS; ++q)
      acc4[q] = accumulate ? vld1q_f32(c[q] + j) : cuvil_neon_zero();
    for (l = 0; l < k; ++l) {
      float32x4_t bv = vld1q_f32(b + l * b_row + j);
      for (q = 0; q < ROWS; ++q)
        acc4[q] = vfmaq_n_f32(acc4[q], bv, a[q * a_row + l * a_col]);
    }
    for (q = 0; q < ROWS; ++q)
      vst1q_f32(c[q] + j, acc4[q]);
  }
  if (j < n) {
    /* The remaining columns, in the same summation order. */
    float *tail[4];
    for (q = 0; q < ROWS; ++q)
      tail[q] = c[q] + j;
    cuvil_sgemm4_reference(ROWS, n - j, k, a, a_row, a_col, b + j, b_row, tail,
                           accumulate);
  }
}
#undef CUVIL_SGEMM4_NEON_STEP

void cuvil_sgemm4_neon(int64_t rows, int64_t n, int64_t k, const float *a,
                       int64_t a_row, int64_t a_col, const float *b,
                       int64_t b_row, float *const *c, int accumulate) {
  switch (rows) {
  case 1:
    cuvil_sgemm4_neon_rows(1, n, k, a, a_row, a_col, b, b_row, c, accumulate);
    break;
  case 2:
    cuvil_sgemm4_neon_rows(2, n, k, a, a_row, a_col, b, b_row, c, accumulate);
    break;
  case 3:
    cuvil_sgemm4_neon_rows(3, n, k, a, a_row, a_col, b, b_row, c, accumulate);
    break;
  default:
    cuvil_sgemm4_neon_rows(4, n, k, a, a_row, a_col, b, b_row, c, accumulate);
  }
}
#endif
