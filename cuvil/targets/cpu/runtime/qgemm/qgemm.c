/*===- qgemm.c - int8 GEMM: packing, the qgemm4 micro-kernels, the driver ===*
 *
 * The reference in plain C; the SIMD variants with __attribute__((target)),
 * so no -march is needed to build them.
 *
 *===--------------------------------------------------------------------===*/

#include "cuvil/targets/cpu/runtime/qgemm/qgemm.h"
#include "cuvil/targets/cpu/runtime/neon/neon.h"

#include <string.h>

static int64_t cuvil_qgemm_groups(int64_t k) { return (k + 3) / 4; }

size_t cuvil_qgemm_packed_bytes(int64_t k, int64_t n) {
  int64_t strips = (n + CUVIL_QGEMM_NR - 1) / CUVIL_QGEMM_NR;
  return (size_t)(strips * cuvil_qgemm_groups(k) * CUVIL_QGEMM_NR * 4);
}

static size_t cuvil_qgemm_panel_bytes(int64_t k) {
  return (size_t)(cuvil_qgemm_groups(k) * 16);
}

static int64_t cuvil_qgemm_num_chunks(int64_t m) {
  int64_t blocks = (m + 3) / 4;
  return m < 0 || blocks > CUVIL_QGEMM_CHUNKS ? CUVIL_QGEMM_CHUNKS : blocks;
}

size_t cuvil_qgemm_scratch_bytes(int64_t m, int64_t k) {
  int64_t chunks = cuvil_qgemm_num_chunks(m);
  return (size_t)(chunks > 0 ? chunks : 1) * cuvil_qgemm_panel_bytes(k);
}

void cuvil_qgemm_pack_b(int64_t k, int64_t n, const int8_t *b, int64_t b_row,
                        int8_t *packed, int32_t *col_sums) {
  int64_t k4 = cuvil_qgemm_groups(k), strips = (n + 15) / 16, s, g, j, t;
  for (j = 0; j < n; ++j)
    col_sums[j] = 0;
  for (s = 0; s < strips; ++s)
    for (g = 0; g < k4; ++g)
      for (j = 0; j < 16; ++j)
        for (t = 0; t < 4; ++t) {
          int64_t row = 4 * g + t, col = 16 * s + j;
          int8_t v = row < k && col < n ? b[row * b_row + col] : 0;
          packed[((s * k4 + g) * 16 + j) * 4 + t] = v;
          if (row < k && col < n)
            col_sums[col] += v;
        }
}

int cuvil_int8_pairs_are_narrow(const int8_t *packed, size_t bytes) {
  size_t i;
  for (i = 0; i + 1 < bytes; i += 2) {
    int32_t a = packed[i], b = packed[i + 1];
    int32_t pos = (a > 0 ? a : 0) + (b > 0 ? b : 0);
    int32_t neg = (a < 0 ? a : 0) + (b < 0 ? b : 0);
    if (255 * pos > 32767 || 255 * neg < -32768)
      return 0;
  }
  return 1;
}

void cuvil_qgemm4_reference(int64_t k4, const uint8_t *a_panel,
                            const int8_t *b_strip, int32_t *acc) {
  int64_t g, r, j, t;
  for (r = 0; r < 64; ++r)
    acc[r] = 0;
  for (g = 0; g < k4; ++g)
    for (r = 0; r < 4; ++r)
      for (j = 0; j < 16; ++j) {
        int32_t sum = 0;
        for (t = 0; t < 4; ++t)
          sum += (int32_t)a_panel[g * 16 + r * 4 + t] *
                 (int32_t)b_strip[(g * 16 + j) * 4 + t];
        acc[r * 16 + j] += sum;
      }
}

#if defined(CUVIL_ENABLE_SIMD_KERNELS) && defined(__x86_64__)
#include <immintrin.h>

/* Per k group: the panel's 16 bytes widened to int16 (four per row), each
 * row's four broadcast to every 64-bit lane; B's 16 columns x 4 widened in
 * four chunks of 4 columns. vpmaddwd leaves two partial sums per column. */
__attribute__((target("avx2"))) void
cuvil_qgemm4_avx2(int64_t k4, const uint8_t *a_panel, const int8_t *b_strip,
                  int32_t *acc) {
  __m256i sums[4][4];
  int64_t g;
  int r, q, c;
  for (r = 0; r < 4; ++r)
    for (q = 0; q < 4; ++q)
      sums[r][q] = _mm256_setzero_si256();
  for (g = 0; g < k4; ++g) {
    __m256i a16 = _mm256_cvtepu8_epi16(
        _mm_loadu_si128((const __m128i *)(a_panel + 16 * g)));
    __m256i rows[4];
    rows[0] = _mm256_permute4x64_epi64(a16, 0x00);
    rows[1] = _mm256_permute4x64_epi64(a16, 0x55);
    rows[2] = _mm256_permute4x64_epi64(a16, 0xaa);
    rows[3] = _mm256_permute4x64_epi64(a16, 0xff);
    for (q = 0; q < 4; ++q) {
      __m256i b16 = _mm256_cvtepi8_epi16(
          _mm_loadu_si128((const __m128i *)(b_strip + 64 * g + 16 * q)));
      for (r = 0; r < 4; ++r)
        sums[r][q] =
            _mm256_add_epi32(sums[r][q], _mm256_madd_epi16(b16, rows[r]));
    }
  }
  for (r = 0; r < 4; ++r)
    for (q = 0; q < 4; ++q) {
      int32_t pairs[8];
      _mm256_storeu_si256((__m256i *)pairs, sums[r][q]);
      for (c = 0; c < 4; ++c)
        acc[r * 16 + 4 * q + c] = pairs[2 * c] + pairs[2 * c + 1];
    }
}

/* Narrow weights: per k group, B's 16 columns x 4 bytes as two ymm halves,
 * each row's four bytes broadcast; vpmaddubsw sums byte pairs in int16
 * (exact for narrow weights), vpmaddwd by ones the two pairs in int32. */
__attribute__((target("avx2"))) void
cuvil_qgemm4_avx2_narrow(int64_t k4, const uint8_t *a_panel,
                         const int8_t *b_strip, int32_t *acc) {
  __m256i c[4][2], ones = _mm256_set1_epi16(1);
  int64_t g;
  int r, h;
  for (r = 0; r < 4; ++r)
    c[r][0] = c[r][1] = _mm256_setzero_si256();
  for (g = 0; g < k4; ++g) {
    int32_t a[4];
    __m256i b[2];
    b[0] = _mm256_loadu_si256((const __m256i *)(b_strip + 64 * g));
    b[1] = _mm256_loadu_si256((const __m256i *)(b_strip + 64 * g + 32));
    memcpy(a, a_panel + 16 * g, 16);
    for (r = 0; r < 4; ++r) {
      __m256i ar = _mm256_set1_epi32(a[r]);
      for (h = 0; h < 2; ++h)
        c[r][h] = _mm256_add_epi32(
            c[r][h], _mm256_madd_epi16(_mm256_maddubs_epi16(ar, b[h]), ones));
    }
  }
  for (r = 0; r < 4; ++r) {
    _mm256_storeu_si256((__m256i *)(acc + 16 * r), c[r][0]);
    _mm256_storeu_si256((__m256i *)(acc + 16 * r + 8), c[r][1]);
  }
}

/* AVX-VNNI (the VEX vpdpbusd of CPUs without AVX-512, and of those with
 * both): the strip's 16 columns as two ymm halves, each row's four bytes
 * broadcast, eight accumulators. */
__attribute__((target("avx2,avxvnni"))) void
cuvil_qgemm4_avxvnni(int64_t k4, const uint8_t *a_panel, const int8_t *b_strip,
                     int32_t *acc) {
  __m256i c[4][2];
  int64_t g;
  int r;
  for (r = 0; r < 4; ++r)
    c[r][0] = c[r][1] = _mm256_setzero_si256();
  for (g = 0; g < k4; ++g) {
    int32_t a[4];
    __m256i b0 = _mm256_loadu_si256((const __m256i *)(b_strip + 64 * g));
    __m256i b1 = _mm256_loadu_si256((const __m256i *)(b_strip + 64 * g + 32));
    memcpy(a, a_panel + 16 * g, 16);
    for (r = 0; r < 4; ++r) {
      __m256i ar = _mm256_set1_epi32(a[r]);
      c[r][0] = _mm256_dpbusd_avx_epi32(c[r][0], ar, b0);
      c[r][1] = _mm256_dpbusd_avx_epi32(c[r][1], ar, b1);
    }
  }
  for (r = 0; r < 4; ++r) {
    _mm256_storeu_si256((__m256i *)(acc + 16 * r), c[r][0]);
    _mm256_storeu_si256((__m256i *)(acc + 16 * r + 8), c[r][1]);
  }
}

/* AVX-512BW without VNNI, any weights: per k group the strip's 64 bytes
 * split into int16 lanes, the even bytes of each column's four and the odd
 * ones; each row's four bytes broadcast and split the same way. Two
 * vpmaddwd then sum the four exact products of every column (255 x 128
 * fits int16's products, two of them int32). */
__attribute__((target("avx512f,avx512bw"))) void
cuvil_qgemm4_avx512bw(int64_t k4, const uint8_t *a_panel,
                      const int8_t *b_strip, int32_t *acc) {
  __m512i c[4], low = _mm512_set1_epi16(0xff);
  int64_t g;
  int r;
  for (r = 0; r < 4; ++r)
    c[r] = _mm512_setzero_si512();
  for (g = 0; g < k4; ++g) {
    int32_t a[4];
    __m512i b = _mm512_loadu_si512((const void *)(b_strip + 64 * g));
    __m512i b_even = _mm512_srai_epi16(_mm512_slli_epi16(b, 8), 8);
    __m512i b_odd = _mm512_srai_epi16(b, 8);
    memcpy(a, a_panel + 16 * g, 16);
    for (r = 0; r < 4; ++r) {
      __m512i ar = _mm512_set1_epi32(a[r]);
      c[r] = _mm512_add_epi32(
          c[r], _mm512_add_epi32(
                    _mm512_madd_epi16(_mm512_and_si512(ar, low), b_even),
                    _mm512_madd_epi16(_mm512_srli_epi16(ar, 8), b_odd)));
    }
  }
  for (r = 0; r < 4; ++r)
    _mm512_storeu_si512((void *)(acc + 16 * r), c[r]);
}

/* AVX-512BW, narrow weights: vpmaddubsw's int16 pair sums (exact for them)
 * widened by vpmaddwd with ones, on the whole 64-byte strip per row. */
__attribute__((target("avx512f,avx512bw"))) void
cuvil_qgemm4_avx512bw_narrow(int64_t k4, const uint8_t *a_panel,
                             const int8_t *b_strip, int32_t *acc) {
  __m512i c[4], ones = _mm512_set1_epi16(1);
  int64_t g;
  int r;
  for (r = 0; r < 4; ++r)
    c[r] = _mm512_setzero_si512();
  for (g = 0; g < k4; ++g) {
    int32_t a[4];
    __m512i b = _mm512_loadu_si512((const void *)(b_strip + 64 * g));
    memcpy(a, a_panel + 16 * g, 16);
    for (r = 0; r < 4; ++r)
      c[r] = _mm512_add_epi32(
          c[r], _mm512_madd_epi16(
                    _mm512_maddubs_epi16(_mm512_set1_epi32(a[r]), b), ones));
  }
  for (r = 0; r < 4; ++r)
    _mm512_storeu_si512((void *)(acc + 16 * r), c[r]);
}

/* Per k group: one 64-byte load of B's strip, each row's four bytes
 * broadcast, vpdpbusd (unsigned x signed, four products per lane). */
__attribute__((target("avx512f,avx512bw,avx512vnni"))) void
cuvil_qgemm4_avx512vnni(int64_t k4, const uint8_t *a_panel,
                        const int8_t *b_strip, int32_t *acc) {
  __m512i c0 = _mm512_setzero_si512(), c1 = _mm512_setzero_si512(),
          c2 = _mm512_setzero_si512(), c3 = _mm512_setzero_si512();
  int64_t g;
  for (g = 0; g < k4; ++g) {
    int32_t a[4];
    __m512i b = _mm512_loadu_si512((const void *)(b_strip + 64 * g));
    memcpy(a, a_panel + 16 * g, 16);
    c0 = _mm512_dpbusd_epi32(c0, _mm512_set1_epi32(a[0]), b);
    c1 = _mm512_dpbusd_epi32(c1, _mm512_set1_epi32(a[1]), b);
    c2 = _mm512_dpbusd_epi32(c2, _mm512_set1_epi32(a[2]), b);
    c3 = _mm512_dpbusd_epi32(c3, _mm512_set1_epi32(a[3]), b);
  }
  _mm512_storeu_si512((void *)acc, c0);
  _mm512_storeu_si512((void *)(acc + 16), c1);
  _mm512_storeu_si512((void *)(acc + 32), c2);
  _mm512_storeu_si512((void *)(acc + 48), c3);
}
#endif

#if defined(CUVIL_ENABLE_SIMD_KERNELS) && defined(__aarch64__)
/* NEON: per k group, the strip's 16 columns x 4 bytes de-interleaved by
 * vld4q_s8 (register t holds byte t of every column) and widened to int16;
 * each row's bytes (the panel's 16, widened) multiply them by lane (smlal
 * by element) into 4 x 4 int32 accumulators. A uint8 times an int8 fits
 * int16's multiply; the sums are exact in int32. */
#define CUVIL_QGEMM4_NEON_TAP(R, SRC, LANE, BLO, BHI)                          \
  do {                                                                         \
    sums[R][0] = vmlal_laneq_s16(sums[R][0], vget_low_s16(BLO), SRC, LANE);    \
    sums[R][1] = vmlal_high_laneq_s16(sums[R][1], BLO, SRC, LANE);             \
    sums[R][2] = vmlal_laneq_s16(sums[R][2], vget_low_s16(BHI), SRC, LANE);    \
    sums[R][3] = vmlal_high_laneq_s16(sums[R][3], BHI, SRC, LANE);             \
  } while (0)
#define CUVIL_QGEMM4_NEON_K(T)                                                 \
  do {                                                                         \
    int16x8_t blo = vmovl_s8(vget_low_s8(b.val[T]));                           \
    int16x8_t bhi = vmovl_high_s8(b.val[T]);                                   \
    CUVIL_QGEMM4_NEON_TAP(0, a01, T, blo, bhi);                                \
    CUVIL_QGEMM4_NEON_TAP(1, a01, 4 + T, blo, bhi);                            \
    CUVIL_QGEMM4_NEON_TAP(2, a23, T, blo, bhi);                                \
    CUVIL_QGEMM4_NEON_TAP(3, a23, 4 + T, blo, bhi);                            \
  } while (0)

__attribute__((target("+neon"))) void
cuvil_qgemm4_neon(int64_t k4, const uint8_t *a_panel, const int8_t *b_strip,
                  int32_t *acc) {
  int32x4_t sums[4][4];
  int64_t g;
  int r, q;
  for (r = 0; r < 4; ++r)
    for (q = 0; q < 4; ++q)
      sums[r][q] = vdupq_n_s32(0);
  for (g = 0; g < k4; ++g) {
    int8x16x4_t b = vld4q_s8(b_strip + g * 64);
    uint8x16_t a = vld1q_u8(a_panel + g * 16);
    int16x8_t a01 = vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(a)));
    int16x8_t a23 = vreinterpretq_s16_u16(vmovl_high_u8(a));
    CUVIL_QGEMM4_NEON_K(0);
    CUVIL_QGEMM4_NEON_K(1);
    CUVIL_QGEMM4_NEON_K(2);
    CUVIL_QGEMM4_NEON_K(3);
  }
  for (r = 0; r < 4; ++r)
    for (q = 0; q < 4; ++q)
      vst1q_s32(acc + r * 16 + q * 4, sums[r][q]);
}
#undef CUVIL_QGEMM4_NEON_K
#undef CUVIL_QGEMM4_NEON_TAP

/* The dot-product extension: udot sums four uint8 products per lane, so
 * the int8 weights are read as uint8 (w + 128, a sign flip) and 128 times
 * each row's sum is taken off at the end: sum a (w + 128) - 128 sum a =
 * sum a w. Every sum stays below 255 * 255 * 65536 < 2^32 (k <=
 * CUVIL_QGEMM_MAX_K), and the difference, taken modulo 2^32, is the exact
 * int32. A strip's 4 columns x 4 bytes are one register; a row's 4 bytes
 * are lane r of the panel (udot by element). */
#define CUVIL_QGEMM4_DOT_ROWS(Q, BQ)                                           \
  do {                                                                         \
    sums[0][Q] = vdotq_laneq_u32(sums[0][Q], BQ, a, 0);                        \
    sums[1][Q] = vdotq_laneq_u32(sums[1][Q], BQ, a, 1);                        \
    sums[2][Q] = vdotq_laneq_u32(sums[2][Q], BQ, a, 2);                        \
    sums[3][Q] = vdotq_laneq_u32(sums[3][Q], BQ, a, 3);                        \
  } while (0)

__attribute__((target("+neon,+dotprod"))) void
cuvil_qgemm4_neon_dotprod(int64_t k4, const uint8_t *a_panel,
                          const int8_t *b_strip, int32_t *acc) {
  const uint8x16_t flip = vdupq_n_u8(0x80), ones = vdupq_n_u8(1);
  uint32x4_t sums[4][4], row_sums = vdupq_n_u32(0);
  uint32_t row_sum[4];
  int64_t g;
  int r, q;
  for (r = 0; r < 4; ++r)
    for (q = 0; q < 4; ++q)
      sums[r][q] = vdupq_n_u32(0);
  for (g = 0; g < k4; ++g) {
    const uint8_t *strip = (const uint8_t *)b_strip + g * 64;
    uint8x16_t a = vld1q_u8(a_panel + g * 16);
    row_sums = vdotq_u32(row_sums, a, ones);
    CUVIL_QGEMM4_DOT_ROWS(0, veorq_u8(vld1q_u8(strip), flip));
    CUVIL_QGEMM4_DOT_ROWS(1, veorq_u8(vld1q_u8(strip + 16), flip));
    CUVIL_QGEMM4_DOT_ROWS(2, veorq_u8(vld1q_u8(strip + 32), flip));
    CUVIL_QGEMM4_DOT_ROWS(3, veorq_u8(vld1q_u8(strip + 48), flip));
  }
  vst1q_u32(row_sum, row_sums);
  for (r = 0; r < 4; ++r) {
    uint32x4_t offset = vdupq_n_u32(128u * row_sum[r]);
    for (q = 0; q < 4; ++q)
      vst1q_s32(acc + r * 16 + q * 4,
                vreinterpretq_s32_u32(vsubq_u32(sums[r][q], offset)));
  }
}
#undef CUVIL_QGEMM4_DOT_ROWS
#endif

/* Four rows of A (rows past m and columns past k as 0: B is 0 there),
 * int8 ones flipped to uint8 (x ^ 0x80 = x + 128). */
static void cuvil_qgemm_pack_a(int64_t rows, int64_t k, const uint8_t *a,
                               int64_t a_row, int a_signed, uint8_t *panel) {
  int64_t g, r, t, k4 = cuvil_qgemm_groups(k);
  uint8_t flip = a_signed ? 0x80 : 0;
  for (g = 0; g < k4; ++g)
    for (r = 0; r < 4; ++r)
      for (t = 0; t < 4; ++t) {
        int64_t l = 4 * g + t;
        panel[g * 16 + r * 4 + t] =
            r < rows && l < k ? (uint8_t)(a[r * a_row + l] ^ flip) : 0;
      }
}

struct cuvil_qgemm_job {
  cuvil_qgemm4_fn kernel;
  int64_t m, n, k, a_row;
  const uint8_t *a;
  int a_signed;
  int32_t a_zero; /* with the int8 flip applied */
  const int8_t *packed_b;
  const int32_t *col_sums;
  uint8_t *scratch;
  int64_t chunks;
  cuvil_qgemm_store_fn store;
  cuvil_qgemm_finish_fn finish;
  void *out;
};

/* Chunks [begin, end): each a contiguous run of 4-row blocks, every 4 x 16
 * tile of (A - a_zero) B in order, packed in the chunk's own panel. */
static void cuvil_qgemm_chunks(void *arg, int64_t begin, int64_t end) {
  const struct cuvil_qgemm_job *job = (const struct cuvil_qgemm_job *)arg;
  int64_t k4 = cuvil_qgemm_groups(job->k), strips = (job->n + 15) / 16;
  int64_t blocks = (job->m + 3) / 4, chunk, block, s, r, j;
  int32_t acc[64];
  for (chunk = begin; chunk < end; ++chunk) {
    uint8_t *panel =
        job->scratch + chunk * cuvil_qgemm_panel_bytes(job->k);
    for (block = chunk * blocks / job->chunks;
         block < (chunk + 1) * blocks / job->chunks; ++block) {
      int64_t i = 4 * block, rows = job->m - i < 4 ? job->m - i : 4;
      cuvil_qgemm_pack_a(rows, job->k, job->a + i * job->a_row, job->a_row,
                         job->a_signed, panel);
      for (s = 0; s < strips; ++s) {
        int64_t cols = job->n - 16 * s < 16 ? job->n - 16 * s : 16;
        job->kernel(k4, panel, job->packed_b + s * k4 * 64, acc);
        for (r = 0; r < rows; ++r)
          for (j = 0; j < cols; ++j)
            acc[r * 16 + j] -= job->a_zero * job->col_sums[16 * s + j];
        job->store(job->out, i, rows, 16 * s, cols, acc);
      }
      if (job->finish)
        job->finish(job->out, i, rows);
    }
  }
}

void cuvil_qgemm_run(cuvil_pool *pool, cuvil_qgemm4_fn kernel, int64_t m,
                     int64_t n, int64_t k, const uint8_t *a, int64_t a_row,
                     int a_signed, int32_t a_zero, const int8_t *packed_b,
                     const int32_t *col_sums, uint8_t *scratch,
                     cuvil_qgemm_store_fn store, cuvil_qgemm_finish_fn finish,
                     void *out) {
  struct cuvil_qgemm_job job;
  job.kernel = kernel;
  job.m = m;
  job.n = n;
  job.k = k;
  job.a_row = a_row;
  job.a = a;
  job.a_signed = a_signed;
  job.a_zero = a_signed ? a_zero + 128 : a_zero;
  job.packed_b = packed_b;
  job.col_sums = col_sums;
  job.scratch = scratch;
  job.chunks = cuvil_qgemm_num_chunks(m);
  job.store = store;
  job.finish = finish;
  job.out = out;
  if (job.chunks > 0)
    cuvil_parallel_for(pool, job.chunks, cuvil_qgemm_chunks, &job);
}

struct cuvil_qgemm_s32_out {
  int32_t *c;
  int64_t c_row;
};

static void cuvil_qgemm_store_s32(void *out, int64_t i, int64_t rows,
                                  int64_t j, int64_t cols, const int32_t *acc) {
  const struct cuvil_qgemm_s32_out *o = (const struct cuvil_qgemm_s32_out *)out;
  int64_t r, q;
  for (r = 0; r < rows; ++r)
    for (q = 0; q < cols; ++q)
      o->c[(i + r) * o->c_row + j + q] = acc[r * 16 + q];
}

void cuvil_qgemm_s32(cuvil_qgemm4_fn kernel, int64_t m, int64_t n, int64_t k,
                     const uint8_t *a, int64_t a_row, int32_t a_zero,
                     const int8_t *packed_b, const int32_t *col_sums,
                     int32_t *c, int64_t c_row, uint8_t *scratch) {
  struct cuvil_qgemm_s32_out out;
  out.c = c;
  out.c_row = c_row;
  cuvil_qgemm_run(NULL, kernel, m, n, k, a, a_row, 0, a_zero, packed_b,
                  col_sums, scratch, cuvil_qgemm_store_s32, NULL, &out);
}

struct cuvil_qgemm_f32_out {
  float *c;
  int64_t c_row, n;
  const float *col_scale;
  const cuvil_epilogue *epilogue;
};

static void cuvil_qgemm_store_f32(void *out, int64_t i, int64_t rows,
                                  int64_t j, int64_t cols, const int32_t *acc) {
  const struct cuvil_qgemm_f32_out *o = (const struct cuvil_qgemm_f32_out *)out;
  int64_t r, q;
  for (r = 0; r < rows; ++r)
    for (q = 0; q < cols; ++q)
      o->c[(i + r) * o->c_row + j + q] =
          (float)acc[r * 16 + q] * o->col_scale[j + q];
}

/* A linear layer's epilogue on rows [i, i + rows), in cache. */
static void cuvil_qgemm_finish_f32(void *out, int64_t i, int64_t rows) {
  const struct cuvil_qgemm_f32_out *o = (const struct cuvil_qgemm_f32_out *)out;
  int64_t r;
  for (r = i; r < i + rows; ++r)
    cuvil_epilogue_row(o->epilogue, o->c + r * o->c_row, r * o->c_row, r,
                       o->n);
}

void cuvil_qgemm_f32(cuvil_pool *pool, cuvil_qgemm4_fn kernel, int64_t m,
                     int64_t n, int64_t k, const void *a, int64_t a_row,
                     int a_signed, int32_t a_zero, const int8_t *packed_b,
                     const int32_t *col_sums, const float *col_scale,
                     float *c, int64_t c_row, uint8_t *scratch,
                     const cuvil_epilogue *epilogue) {
  struct cuvil_qgemm_f32_out out;
  out.c = c;
  out.c_row = c_row;
  out.n = n;
  out.col_scale = col_scale;
  out.epilogue = epilogue;
  cuvil_qgemm_run(pool, kernel, m, n, k, (const uint8_t *)a, a_row, a_signed,
                  a_zero, packed_b, col_sums, scratch, cuvil_qgemm_store_f32,
                  epilogue ? cuvil_qgemm_finish_f32 : NULL, &out);
}

struct cuvil_qgemm_q8_out {
  void *c;
  int64_t c_row;
  const float *col_scale;
  const cuvil_epilogue *epilogue;
  const cuvil_qout *qout;
};

/* A finished tile, scaled, through the epilogue and requantized. */
static void cuvil_qgemm_store_q8(void *out, int64_t i, int64_t rows,
                                 int64_t j, int64_t cols, const int32_t *acc) {
  const struct cuvil_qgemm_q8_out *o = (const struct cuvil_qgemm_q8_out *)out;
  int64_t r, q;
  for (r = 0; r < rows; ++r)
    for (q = 0; q < cols; ++q) {
      int64_t at = (i + r) * o->c_row + j + q;
      float v = (float)acc[r * 16 + q] * o->col_scale[j + q];
      if (o->epilogue)
        v = cuvil_epilogue_value(o->epilogue, v, i + r, j + q, at);
      cuvil_qout_store(o->qout, o->c, at, v);
    }
}

void cuvil_qgemm_q8(cuvil_pool *pool, cuvil_qgemm4_fn kernel, int64_t m,
                    int64_t n, int64_t k, const void *a, int64_t a_row,
                    int a_signed, int32_t a_zero, const int8_t *packed_b,
                    const int32_t *col_sums, const float *col_scale, void *c,
                    int64_t c_row, uint8_t *scratch, const cuvil_qout *qout,
                    const cuvil_epilogue *epilogue) {
  struct cuvil_qgemm_q8_out out;
  out.c = c;
  out.c_row = c_row;
  out.col_scale = col_scale;
  out.epilogue = epilogue;
  out.qout = qout;
  cuvil_qgemm_run(pool, kernel, m, n, k, (const uint8_t *)a, a_row, a_signed,
                  a_zero, packed_b, col_sums, scratch, cuvil_qgemm_store_q8,
                  NULL, &out);
}
