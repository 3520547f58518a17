/*===- qgemm.c - int8 GEMM: packing, the qgemm4 micro-kernels, the driver ===*
 *
 * The reference in plain C; the SIMD variants with __attribute__((target)),
 * so no -march is needed to build them.
 *
 *===--------------------------------------------------------------------===*/

#include "cuvil/targets/x86/runtime/qgemm/qgemm.h"

#include <string.h>

static int64_t cuvil_qgemm_groups(int64_t k) { return (k + 3) / 4; }

size_t cuvil_qgemm_packed_bytes(int64_t k, int64_t n) {
  int64_t strips = (n + CUVIL_QGEMM_NR - 1) / CUVIL_QGEMM_NR;
  return (size_t)(strips * cuvil_qgemm_groups(k) * CUVIL_QGEMM_NR * 4);
}

size_t cuvil_qgemm_scratch_bytes(int64_t k) {
  return (size_t)(cuvil_qgemm_groups(k) * 16);
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

#if defined(CUVIL_ENABLE_SIMD_KERNELS)
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

/* Where a driver puts a finished tile: rows [i, i + rows) and columns
 * [j, j + cols) of the sums, zero point applied (acc row-major [4][16]). */
typedef void (*cuvil_qgemm_store_fn)(void *out, int64_t i, int64_t rows,
                                     int64_t j, int64_t cols,
                                     const int32_t *acc);

/* Every 4 x 16 tile of (A - a_zero) B, in order, to `store`. */
static void cuvil_qgemm_tiles(cuvil_qgemm4_fn kernel, int64_t m, int64_t n,
                              int64_t k, const uint8_t *a, int64_t a_row,
                              int a_signed, int32_t a_zero,
                              const int8_t *packed_b, const int32_t *col_sums,
                              uint8_t *scratch, cuvil_qgemm_store_fn store,
                              void *out) {
  int64_t k4 = cuvil_qgemm_groups(k), strips = (n + 15) / 16, i, s, r, j;
  int32_t acc[64];
  if (a_signed)
    a_zero += 128;
  for (i = 0; i < m; i += 4) {
    int64_t rows = m - i < 4 ? m - i : 4;
    cuvil_qgemm_pack_a(rows, k, a + i * a_row, a_row, a_signed, scratch);
    for (s = 0; s < strips; ++s) {
      int64_t cols = n - 16 * s < 16 ? n - 16 * s : 16;
      kernel(k4, scratch, packed_b + s * k4 * 64, acc);
      for (r = 0; r < rows; ++r)
        for (j = 0; j < cols; ++j)
          acc[r * 16 + j] -= a_zero * col_sums[16 * s + j];
      store(out, i, rows, 16 * s, cols, acc);
    }
  }
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
  cuvil_qgemm_tiles(kernel, m, n, k, a, a_row, 0, a_zero, packed_b, col_sums,
                    scratch, cuvil_qgemm_store_s32, &out);
}

struct cuvil_qgemm_f32_out {
  float *c;
  int64_t c_row;
  const float *col_scale;
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

void cuvil_qgemm_f32(cuvil_qgemm4_fn kernel, int64_t m, int64_t n, int64_t k,
                     const void *a, int64_t a_row, int a_signed,
                     int32_t a_zero, const int8_t *packed_b,
                     const int32_t *col_sums, const float *col_scale,
                     float *c, int64_t c_row, uint8_t *scratch) {
  struct cuvil_qgemm_f32_out out;
  out.c = c;
  out.c_row = c_row;
  out.col_scale = col_scale;
  cuvil_qgemm_tiles(kernel, m, n, k, (const uint8_t *)a, a_row, a_signed,
                    a_zero, packed_b, col_sums, scratch, cuvil_qgemm_store_f32,
                    &out);
}
