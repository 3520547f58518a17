/*===- bgemm.c - bfloat16 GEMM: packing, the bgemm8 micro-kernels, driver ===*
 *
 * The reference in plain C; the SIMD variants with __attribute__((target)),
 * so no -march is needed to build them.
 *
 *===--------------------------------------------------------------------===*/

#include "cuvil/targets/cpu/runtime/bgemm/bgemm.h"

#include <string.h>

static int64_t cuvil_bgemm_pairs(int64_t k) { return (k + 1) / 2; }

size_t cuvil_bgemm_packed_bytes(int64_t k, int64_t n) {
  int64_t strips = (n + CUVIL_BGEMM_NR - 1) / CUVIL_BGEMM_NR;
  return (size_t)(strips * cuvil_bgemm_pairs(k) * CUVIL_BGEMM_NR * 4);
}

static size_t cuvil_bgemm_panel_bytes(int64_t k) {
  return (size_t)(cuvil_bgemm_pairs(k) * CUVIL_BGEMM_MR * 4);
}

static int64_t cuvil_bgemm_num_chunks(int64_t m) {
  int64_t blocks = (m + CUVIL_BGEMM_MR - 1) / CUVIL_BGEMM_MR;
  return m < 0 || blocks > CUVIL_BGEMM_CHUNKS ? CUVIL_BGEMM_CHUNKS : blocks;
}

size_t cuvil_bgemm_scratch_bytes(int64_t m, int64_t k) {
  int64_t chunks = cuvil_bgemm_num_chunks(m);
  return (size_t)(chunks > 0 ? chunks : 1) * cuvil_bgemm_panel_bytes(k);
}

/* A denormal (exponent bits 0) as a zero of its sign, as vdpbf16ps reads
 * it. */
static uint16_t cuvil_bgemm_daz(uint16_t v) {
  return (v & 0x7f80) == 0 ? (uint16_t)(v & 0x8000) : v;
}

void cuvil_bgemm_pack_b(int64_t k, int64_t n, const uint16_t *b, int64_t b_row,
                        uint16_t *packed) {
  int64_t k2 = cuvil_bgemm_pairs(k), strips = (n + 31) / 32, s, p, j, t;
  for (s = 0; s < strips; ++s)
    for (p = 0; p < k2; ++p)
      for (j = 0; j < 32; ++j)
        for (t = 0; t < 2; ++t) {
          int64_t row = 2 * p + t, col = 32 * s + j;
          packed[((s * k2 + p) * 32 + j) * 2 + t] =
              row < k && col < n ? cuvil_bgemm_daz(b[row * b_row + col]) : 0;
        }
}

static float cuvil_bgemm_widen(uint16_t v) {
  uint32_t bits = (uint32_t)v << 16;
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

void cuvil_bgemm8_reference(int64_t k2, int64_t rows, const uint16_t *a_panel,
                            const uint16_t *b_strip, float *acc) {
  int64_t p, r, j;
  for (r = 0; r < 8 * 32; ++r)
    acc[r] = 0.0f;
  for (p = 0; p < k2; ++p)
    for (r = 0; r < rows; ++r) {
      float a_even = cuvil_bgemm_widen(a_panel[(p * 8 + r) * 2]);
      float a_odd = cuvil_bgemm_widen(a_panel[(p * 8 + r) * 2 + 1]);
      for (j = 0; j < 32; ++j) {
        float sum = acc[r * 32 + j];
        sum += a_odd * cuvil_bgemm_widen(b_strip[(p * 32 + j) * 2 + 1]);
        sum += a_even * cuvil_bgemm_widen(b_strip[(p * 32 + j) * 2]);
        acc[r * 32 + j] = sum;
      }
    }
}

#if defined(CUVIL_ENABLE_SIMD_KERNELS) && defined(__x86_64__)
#include <immintrin.h>

/* R rows (a constant once inlined, so the loops unroll) of 8 columns from
 * `col`: each column's 32-bit pair split into the even element (shifted
 * up) and the odd one (masked), each row's pair likewise broadcast. */
static inline __attribute__((always_inline, target("avx2,fma"))) void
cuvil_bgemm_avx2_columns(int R, int64_t k2, const uint16_t *a_panel,
                         const uint16_t *b_strip, int col, float *acc) {
  const __m256i high = _mm256_set1_epi32((int)0xffff0000u);
  __m256 c[8];
  int64_t p;
  int r;
  for (r = 0; r < R; ++r)
    c[r] = _mm256_setzero_ps();
  for (p = 0; p < k2; ++p) {
    __m256i b = _mm256_loadu_si256(
        (const __m256i *)(b_strip + (p * 32 + col) * 2));
    __m256 b_even = _mm256_castsi256_ps(_mm256_slli_epi32(b, 16));
    __m256 b_odd = _mm256_castsi256_ps(_mm256_and_si256(b, high));
    for (r = 0; r < R; ++r) {
      uint32_t pair;
      memcpy(&pair, a_panel + (p * 8 + r) * 2, 4);
      __m256i a = _mm256_set1_epi32((int)pair);
      c[r] = _mm256_fmadd_ps(_mm256_castsi256_ps(_mm256_and_si256(a, high)),
                             b_odd, c[r]);
      c[r] = _mm256_fmadd_ps(_mm256_castsi256_ps(_mm256_slli_epi32(a, 16)),
                             b_even, c[r]);
    }
  }
  for (r = 0; r < R; ++r)
    _mm256_storeu_ps(acc + r * 32 + col, c[r]);
}

static inline __attribute__((always_inline, target("avx2,fma"))) void
cuvil_bgemm_avx2_tile(int R, int64_t k2, const uint16_t *a_panel,
                      const uint16_t *b_strip, float *acc) {
  int col;
  for (col = 0; col < 32; col += 8)
    cuvil_bgemm_avx2_columns(R, k2, a_panel, b_strip, col, acc);
}

__attribute__((target("avx2,fma"))) void
cuvil_bgemm8_avx2(int64_t k2, int64_t rows, const uint16_t *a_panel,
                  const uint16_t *b_strip, float *acc) {
  if (rows <= 1)
    cuvil_bgemm_avx2_tile(1, k2, a_panel, b_strip, acc);
  else if (rows <= 2)
    cuvil_bgemm_avx2_tile(2, k2, a_panel, b_strip, acc);
  else if (rows <= 4)
    cuvil_bgemm_avx2_tile(4, k2, a_panel, b_strip, acc);
  else
    cuvil_bgemm_avx2_tile(8, k2, a_panel, b_strip, acc);
}

/* R rows x 32 columns in float32 FMAs: per pair the strip's two 64-byte
 * loads split into even elements (shifted up) and odd ones (masked), each
 * row's pair likewise broadcast; the odd product added first, then the
 * even one (vdpbf16ps's order, so the same bits). */
static inline __attribute__((always_inline, target("avx512f"))) void
cuvil_bgemm_avx512_tile(int R, int64_t k2, const uint16_t *a_panel,
                        const uint16_t *b_strip, float *acc) {
  const __m512i high = _mm512_set1_epi32((int)0xffff0000u);
  __m512 c[8][2];
  int64_t p;
  int r, h;
  for (r = 0; r < R; ++r)
    c[r][0] = c[r][1] = _mm512_setzero_ps();
  for (p = 0; p < k2; ++p) {
    __m512 even[2], odd[2];
    for (h = 0; h < 2; ++h) {
      __m512i b = _mm512_loadu_si512((const void *)(b_strip + p * 64 + 32 * h));
      even[h] = _mm512_castsi512_ps(_mm512_slli_epi32(b, 16));
      odd[h] = _mm512_castsi512_ps(_mm512_and_si512(b, high));
    }
    for (r = 0; r < R; ++r) {
      uint32_t pair;
      memcpy(&pair, a_panel + (p * 8 + r) * 2, 4);
      __m512 a_odd = _mm512_set1_ps(cuvil_bgemm_widen((uint16_t)(pair >> 16)));
      __m512 a_even = _mm512_set1_ps(cuvil_bgemm_widen((uint16_t)pair));
      for (h = 0; h < 2; ++h) {
        c[r][h] = _mm512_fmadd_ps(a_odd, odd[h], c[r][h]);
        c[r][h] = _mm512_fmadd_ps(a_even, even[h], c[r][h]);
      }
    }
  }
  for (r = 0; r < R; ++r) {
    _mm512_storeu_ps(acc + r * 32, c[r][0]);
    _mm512_storeu_ps(acc + r * 32 + 16, c[r][1]);
  }
}

__attribute__((target("avx512f"))) void
cuvil_bgemm8_avx512(int64_t k2, int64_t rows, const uint16_t *a_panel,
                    const uint16_t *b_strip, float *acc) {
  if (rows <= 1)
    cuvil_bgemm_avx512_tile(1, k2, a_panel, b_strip, acc);
  else if (rows <= 2)
    cuvil_bgemm_avx512_tile(2, k2, a_panel, b_strip, acc);
  else if (rows <= 4)
    cuvil_bgemm_avx512_tile(4, k2, a_panel, b_strip, acc);
  else
    cuvil_bgemm_avx512_tile(8, k2, a_panel, b_strip, acc);
}

/* R rows x 32 columns: per pair two 64-byte loads of the strip, each
 * row's pair broadcast, vdpbf16ps (the odd product, then the even one,
 * into each lane); 2R accumulators. */
static inline __attribute__((always_inline, target("avx512f,avx512bf16"))) void
cuvil_bgemm_avx512bf16_tile(int R, int64_t k2, const uint16_t *a_panel,
                            const uint16_t *b_strip, float *acc) {
  __m512 c[8][2];
  int64_t p;
  int r;
  for (r = 0; r < R; ++r)
    c[r][0] = c[r][1] = _mm512_setzero_ps();
  for (p = 0; p < k2; ++p) {
    __m512bh b0 = (__m512bh)_mm512_loadu_si512(
        (const void *)(b_strip + p * 64));
    __m512bh b1 = (__m512bh)_mm512_loadu_si512(
        (const void *)(b_strip + p * 64 + 32));
    for (r = 0; r < R; ++r) {
      uint32_t pair;
      memcpy(&pair, a_panel + (p * 8 + r) * 2, 4);
      __m512bh a = (__m512bh)_mm512_set1_epi32((int)pair);
      c[r][0] = _mm512_dpbf16_ps(c[r][0], a, b0);
      c[r][1] = _mm512_dpbf16_ps(c[r][1], a, b1);
    }
  }
  for (r = 0; r < R; ++r) {
    _mm512_storeu_ps(acc + r * 32, c[r][0]);
    _mm512_storeu_ps(acc + r * 32 + 16, c[r][1]);
  }
}

__attribute__((target("avx512f,avx512bf16"))) void
cuvil_bgemm8_avx512bf16(int64_t k2, int64_t rows, const uint16_t *a_panel,
                        const uint16_t *b_strip, float *acc) {
  if (rows <= 1)
    cuvil_bgemm_avx512bf16_tile(1, k2, a_panel, b_strip, acc);
  else if (rows <= 2)
    cuvil_bgemm_avx512bf16_tile(2, k2, a_panel, b_strip, acc);
  else if (rows <= 4)
    cuvil_bgemm_avx512bf16_tile(4, k2, a_panel, b_strip, acc);
  else
    cuvil_bgemm_avx512bf16_tile(8, k2, a_panel, b_strip, acc);
}
#endif

/* Eight rows of A (rows past m and columns past k as 0: B is 0 there). */
static void cuvil_bgemm_pack_a(int64_t rows, int64_t k, const uint16_t *a,
                               int64_t a_row, uint16_t *panel) {
  int64_t p, r, t, k2 = cuvil_bgemm_pairs(k);
  for (p = 0; p < k2; ++p)
    for (r = 0; r < 8; ++r)
      for (t = 0; t < 2; ++t) {
        int64_t l = 2 * p + t;
        panel[(p * 8 + r) * 2 + t] =
            r < rows && l < k ? cuvil_bgemm_daz(a[r * a_row + l]) : 0;
      }
}

struct cuvil_bgemm_job {
  cuvil_bgemm8_fn kernel;
  int64_t m, n, k, a_row, c_row, chunks;
  const uint16_t *a, *packed_b;
  float *c;
  uint8_t *scratch;
  const cuvil_epilogue *epilogue;
};

/* Chunks [begin, end): each a contiguous run of 8-row blocks, every 8 x 32
 * tile in order, packed in the chunk's own panel; a block's epilogue runs
 * once its rows are whole, while they are in cache. */
static void cuvil_bgemm_chunks(void *arg, int64_t begin, int64_t end) {
  const struct cuvil_bgemm_job *job = (const struct cuvil_bgemm_job *)arg;
  int64_t k2 = cuvil_bgemm_pairs(job->k), strips = (job->n + 31) / 32;
  int64_t blocks = (job->m + 7) / 8, chunk, block, s, r;
  float acc[8 * 32];
  for (chunk = begin; chunk < end; ++chunk) {
    uint16_t *panel = (uint16_t *)(job->scratch +
                                   chunk * cuvil_bgemm_panel_bytes(job->k));
    for (block = chunk * blocks / job->chunks;
         block < (chunk + 1) * blocks / job->chunks; ++block) {
      int64_t i = 8 * block, rows = job->m - i < 8 ? job->m - i : 8;
      cuvil_bgemm_pack_a(rows, job->k, job->a + i * job->a_row, job->a_row,
                         panel);
      for (s = 0; s < strips; ++s) {
        int64_t cols = job->n - 32 * s < 32 ? job->n - 32 * s : 32;
        job->kernel(k2, rows, panel, job->packed_b + s * k2 * 64, acc);
        for (r = 0; r < rows; ++r)
          memcpy(job->c + (i + r) * job->c_row + 32 * s, acc + r * 32,
                 (size_t)cols * sizeof(float));
      }
      if (job->epilogue)
        for (r = i; r < i + rows; ++r)
          cuvil_epilogue_row(job->epilogue, job->c + r * job->c_row,
                             r * job->c_row, r, job->n);
    }
  }
}

void cuvil_bgemm_f32(cuvil_pool *pool, cuvil_bgemm8_fn kernel, int64_t m,
                     int64_t n, int64_t k, const uint16_t *a, int64_t a_row,
                     const uint16_t *packed_b, float *c, int64_t c_row,
                     uint8_t *scratch, const cuvil_epilogue *epilogue) {
  struct cuvil_bgemm_job job;
  job.kernel = kernel;
  job.m = m;
  job.n = n;
  job.k = k;
  job.a_row = a_row;
  job.c_row = c_row;
  job.chunks = cuvil_bgemm_num_chunks(m);
  job.a = a;
  job.packed_b = packed_b;
  job.c = c;
  job.scratch = scratch;
  job.epilogue = epilogue;
  if (job.chunks > 0)
    cuvil_parallel_for(pool, job.chunks, cuvil_bgemm_chunks, &job);
}
