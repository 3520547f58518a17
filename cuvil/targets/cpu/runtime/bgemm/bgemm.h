/*===- bgemm.h - bfloat16 matrix products, accumulated in float32 --------===*
 *
 * C[m][n] = sum over l < k of A[m][l] * B[l][n], A and B bfloat16 (stored
 * as their 16 bits), products and sums in float32, in one fixed order:
 * for each pair of k (2p, 2p + 1), the odd term is added first, then the
 * even one, as vdpbf16ps does. A bfloat16 product is exact in float32, so
 * every variant computes the same float32 sums, bit for bit, except that
 * vdpbf16ps flushes float32 denormals (|x| < 2^-126) to zero; the packing
 * flushes denormal inputs for every variant alike.
 *
 * B is packed once (at compile time for weights) in strips of 32 columns,
 * each strip k in pairs: [ceil(n/32)][ceil(k/2)][32][2], zero padded. A is
 * packed per call, eight rows at a time, into a panel [ceil(k/2)][8][2]. A
 * call splits its rows into at most CUVIL_BGEMM_CHUNKS contiguous chunks,
 * each with its own panel in the scratch, which a thread pool runs in
 * parallel: every output is computed the same way whatever the split.
 *
 *===--------------------------------------------------------------------===*/
#ifndef CUVIL_RUNTIME_BGEMM_H
#define CUVIL_RUNTIME_BGEMM_H

#include "cuvil/targets/cpu/runtime/epilogue/epilogue.h"
#include "cuvil/targets/cpu/runtime/threads/threads.h"

#include <stddef.h>
#include <stdint.h>

#define CUVIL_BGEMM_MR 8
#define CUVIL_BGEMM_NR 32
#define CUVIL_BGEMM_CHUNKS 64

/* Bytes of B packed (the layout above), and of the scratch of a product of
 * at most `m` rows (one A panel per chunk; m < 0: any number). */
size_t cuvil_bgemm_packed_bytes(int64_t k, int64_t n);
size_t cuvil_bgemm_scratch_bytes(int64_t m, int64_t k);

/* Packs row-major bfloat16 B (row stride b_row). */
void cuvil_bgemm_pack_b(int64_t k, int64_t n, const uint16_t *b, int64_t b_row,
                        uint16_t *packed);

/* The micro-kernels (bgemm.inc): the first `rows` (1 to 8) rows of one
 * 8 x 32 tile of sums over k2 pairs, acc row-major [8][32]. Panel and
 * strip are read as 32-bit pairs. */
typedef void (*cuvil_bgemm8_fn)(int64_t k2, int64_t rows,
                                const uint16_t *a_panel,
                                const uint16_t *b_strip, float *acc);
void cuvil_bgemm8_reference(int64_t k2, int64_t rows, const uint16_t *a_panel,
                            const uint16_t *b_strip, float *acc);
#if defined(CUVIL_ENABLE_SIMD_KERNELS) && defined(__x86_64__)
void cuvil_bgemm8_avx2(int64_t k2, int64_t rows, const uint16_t *a_panel,
                       const uint16_t *b_strip, float *acc);
void cuvil_bgemm8_avx512(int64_t k2, int64_t rows, const uint16_t *a_panel,
                         const uint16_t *b_strip, float *acc);
void cuvil_bgemm8_avx512bf16(int64_t k2, int64_t rows, const uint16_t *a_panel,
                             const uint16_t *b_strip, float *acc);
#endif

/* C = A B with `kernel`, then `epilogue` (a linear layer's bias, a
 * residual, an activation; NULL: none) on each row of 8 as soon as it is
 * finished. Rows are split over `pool` (NULL: this thread); the scratch
 * holds cuvil_bgemm_scratch_bytes(m, k) bytes. */
void cuvil_bgemm_f32(cuvil_pool *pool, cuvil_bgemm8_fn kernel, int64_t m,
                     int64_t n, int64_t k, const uint16_t *a, int64_t a_row,
                     const uint16_t *packed_b, float *c, int64_t c_row,
                     uint8_t *scratch, const cuvil_epilogue *epilogue);

/* The variant a model's code calls (RuntimeSelection.cpp defines it). */
#ifndef CUVIL_BGEMM8
#define CUVIL_BGEMM8 cuvil_bgemm8_reference
#endif

#endif /* CUVIL_RUNTIME_BGEMM_H */
