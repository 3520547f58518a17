/*===- qgemm.h - int8 matrix products, exact in int32 --------------------===*
 *
 * C[m][n] = sum over l < k of (A[m][l] - a_zero) * B[l][n], with A uint8
 * (activations and their zero point), B int8 (weights) and C int32, exact
 * for k <= CUVIL_QGEMM_MAX_K (every partial sum stays below 2^31). Scales
 * and requantizing C are the caller's.
 *
 * B is packed once (at compile time for weights) in strips of 16 columns,
 * each strip k in groups of 4: [ceil(n/16)][ceil(k/4)][16][4], zero padded,
 * with its column sums (the a_zero correction). A is packed per call, four
 * rows at a time, into a panel [ceil(k/4)][4][4]. A call splits its rows
 * into at most CUVIL_QGEMM_CHUNKS contiguous chunks, each with its own
 * panel in the scratch, which a thread pool runs in parallel: every output
 * is computed the same way whatever the split.
 *
 *===--------------------------------------------------------------------===*/
#ifndef CUVIL_RUNTIME_QGEMM_H
#define CUVIL_RUNTIME_QGEMM_H

#include "cuvil/targets/cpu/runtime/epilogue/epilogue.h"
#include "cuvil/targets/cpu/runtime/threads/threads.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#define CUVIL_QGEMM_NR 16
#define CUVIL_QGEMM_CHUNKS 64
/* 255 * 128 * k < 2^31. */
#define CUVIL_QGEMM_MAX_K 65536

/* Bytes of B packed (qgemm.h's layout), and of the scratch of a product
 * of at most `m` rows (one A panel per chunk; m < 0: any number). */
size_t cuvil_qgemm_packed_bytes(int64_t k, int64_t n);
size_t cuvil_qgemm_scratch_bytes(int64_t m, int64_t k);

/* Whether packed int8 weights (any packing whose consecutive byte pairs
 * are the pairs vpmaddubsw multiplies: qgemm's and qconvb's) suit the
 * narrow variants: every pair keeps 255 * (its positive sum) <= 32767 and
 * 255 * (its negative sum) >= -32768, so that vpmaddubsw's saturating
 * int16 sums of uint8 x int8 products are exact. Weights of magnitude <=
 * 64 always do. */
int cuvil_int8_pairs_are_narrow(const int8_t *packed, size_t bytes);

/* Packs row-major B (row stride b_row) and writes its n column sums. */
void cuvil_qgemm_pack_b(int64_t k, int64_t n, const int8_t *b, int64_t b_row,
                        int8_t *packed, int32_t *col_sums);

/* The micro-kernels (qgemm.inc): one 4 x 16 tile, acc row-major [4][16]. */
typedef void (*cuvil_qgemm4_fn)(int64_t k4, const uint8_t *a_panel,
                                const int8_t *b_strip, int32_t *acc);
void cuvil_qgemm4_reference(int64_t k4, const uint8_t *a_panel,
                            const int8_t *b_strip, int32_t *acc);
#if defined(CUVIL_ENABLE_SIMD_KERNELS) && defined(__x86_64__)
void cuvil_qgemm4_avx2(int64_t k4, const uint8_t *a_panel,
                       const int8_t *b_strip, int32_t *acc);
void cuvil_qgemm4_avx2_narrow(int64_t k4, const uint8_t *a_panel,
                              const int8_t *b_strip, int32_t *acc);
void cuvil_qgemm4_avx512bw(int64_t k4, const uint8_t *a_panel,
                           const int8_t *b_strip, int32_t *acc);
void cuvil_qgemm4_avx512bw_narrow(int64_t k4, const uint8_t *a_panel,
                                  const int8_t *b_strip, int32_t *acc);
void cuvil_qgemm4_avxvnni(int64_t k4, const uint8_t *a_panel,
                          const int8_t *b_strip, int32_t *acc);
void cuvil_qgemm4_avx512vnni(int64_t k4, const uint8_t *a_panel,
                             const int8_t *b_strip, int32_t *acc);
#endif
#if defined(CUVIL_ENABLE_SIMD_KERNELS) && defined(__aarch64__)
void cuvil_qgemm4_neon(int64_t k4, const uint8_t *a_panel,
                       const int8_t *b_strip, int32_t *acc);
void cuvil_qgemm4_neon_dotprod(int64_t k4, const uint8_t *a_panel,
                               const int8_t *b_strip, int32_t *acc);
#endif

/* A requantized output: 8-bit integers of scale `scale` and zero point
 * `zero` (a whole number), int8 when is_signed, else uint8. Kernels take
 * NULL for a float32 output. */
typedef struct cuvil_qout {
  int is_signed;
  float scale, zero;
} cuvil_qout;

/* An output's stored form, per element: the float32 value, or its
 * requantized byte (the arithmetic of cuvil.quantize). */
static inline void cuvil_qout_store(const cuvil_qout *q, void *out,
                                    int64_t at, float v) {
  float r, lo, hi;
  if (!q) {
    ((float *)out)[at] = v;
    return;
  }
  lo = q->is_signed ? -128.0f : 0.0f;
  hi = q->is_signed ? 127.0f : 255.0f;
  r = nearbyintf(v / q->scale) + q->zero;
  r = r != r ? q->zero : r < lo ? lo : r > hi ? hi : r;
  if (q->is_signed)
    ((int8_t *)out)[at] = (int8_t)r;
  else
    ((uint8_t *)out)[at] = (uint8_t)r;
}

/* C = (A - a_zero) B with `kernel`, on the calling thread; scratch holds
 * cuvil_qgemm_scratch_bytes(m, k) bytes. */
void cuvil_qgemm_s32(cuvil_qgemm4_fn kernel, int64_t m, int64_t n, int64_t k,
                     const uint8_t *a, int64_t a_row, int32_t a_zero,
                     const int8_t *packed_b, const int32_t *col_sums,
                     int32_t *c, int64_t c_row, uint8_t *scratch);

/* The dequantized product of quantized models: C[i][j] = (float)((A -
 * a_zero) B)[i][j] * col_scale[j] (the activation's scale times the
 * weight column's), then `epilogue` (a linear layer's bias, a residual, an
 * activation; NULL: none) on each row of 4 as soon as it is finished. A is
 * int8 when a_signed (read as uint8 A + 128, with a_zero + 128: the same
 * differences). Rows are split over `pool` (NULL: this thread). */
void cuvil_qgemm_f32(cuvil_pool *pool, cuvil_qgemm4_fn kernel, int64_t m,
                     int64_t n, int64_t k, const void *a, int64_t a_row,
                     int a_signed, int32_t a_zero, const int8_t *packed_b,
                     const int32_t *col_sums, const float *col_scale,
                     float *c, int64_t c_row, uint8_t *scratch,
                     const cuvil_epilogue *epilogue);

/* As cuvil_qgemm_f32, each output then requantized into `c` (8 bits,
 * row stride c_row) by `qout` (a fused cuvil.quantize: no float32 tensor
 * between two int8 layers), in the same float32 steps. */
void cuvil_qgemm_q8(cuvil_pool *pool, cuvil_qgemm4_fn kernel, int64_t m,
                    int64_t n, int64_t k, const void *a, int64_t a_row,
                    int a_signed, int32_t a_zero, const int8_t *packed_b,
                    const int32_t *col_sums, const float *col_scale, void *c,
                    int64_t c_row, uint8_t *scratch, const cuvil_qout *qout,
                    const cuvil_epilogue *epilogue);

/* The driver behind them: where it puts a finished tile (rows [i, i +
 * rows) and columns [j, j + cols) of the sums, zero point applied, acc
 * row-major [4][16]) and, if set, what it does to rows [i, i + rows) once
 * they are whole. For other layouts of the output (qconv.h). */
typedef void (*cuvil_qgemm_store_fn)(void *out, int64_t i, int64_t rows,
                                     int64_t j, int64_t cols,
                                     const int32_t *acc);
typedef void (*cuvil_qgemm_finish_fn)(void *out, int64_t i, int64_t rows);
void cuvil_qgemm_run(cuvil_pool *pool, cuvil_qgemm4_fn kernel, int64_t m,
                     int64_t n, int64_t k, const uint8_t *a, int64_t a_row,
                     int a_signed, int32_t a_zero, const int8_t *packed_b,
                     const int32_t *col_sums, uint8_t *scratch,
                     cuvil_qgemm_store_fn store, cuvil_qgemm_finish_fn finish,
                     void *out);

/* The variants a model's code calls (RuntimeSelection.cpp defines them):
 * for any weights, and for narrow ones. */
#ifndef CUVIL_QGEMM4
#define CUVIL_QGEMM4 cuvil_qgemm4_reference
#endif
#ifndef CUVIL_QGEMM4_NARROW
#define CUVIL_QGEMM4_NARROW CUVIL_QGEMM4
#endif

#endif /* CUVIL_RUNTIME_QGEMM_H */
