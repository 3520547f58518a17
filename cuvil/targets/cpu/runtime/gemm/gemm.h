/*===- gemm.h - matrix products: the sgemm4 micro-kernels and their drivers ===*
 *
 * C = A @ B, four rows at a time through the sgemm4 micro-kernel the target
 * has, on B as it is or packed in strips (contract.h), blocked for the
 * caches and split over the pool by rows.
 *
 *===----------------------------------------------------------------------===*/

#ifndef CUVIL_RUNTIME_GEMM_H
#define CUVIL_RUNTIME_GEMM_H

#include "cuvil/targets/cpu/runtime/epilogue/epilogue.h"
#include "cuvil/targets/cpu/runtime/threads/threads.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The sgemm4 micro-kernels (sgemm4.inc): up to 4 rows of C = A B
 * (C += A B when `accumulate`, which continues each element's running sum:
 * splitting k into blocks gives the same bits), B with unit column stride. The
 * reference variant is plain C; the SIMD variants exist when
 * CUVIL_ENABLE_SIMD_KERNELS is defined (the .so build) and are chosen by the
 * target's features through CUVIL_SGEMM4. */
typedef void (*cuvil_sgemm4_fn)(int64_t rows, int64_t n, int64_t k,
                                const float *a, int64_t a_row, int64_t a_col,
                                const float *b, int64_t b_row, float *const *c,
                                int accumulate);
void cuvil_sgemm4_reference(int64_t rows, int64_t n, int64_t k, const float *a,
                            int64_t a_row, int64_t a_col, const float *b,
                            int64_t b_row, float *const *c, int accumulate);
#if defined(CUVIL_ENABLE_SIMD_KERNELS) && defined(__x86_64__)
void cuvil_sgemm4_avx2(int64_t rows, int64_t n, int64_t k, const float *a,
                       int64_t a_row, int64_t a_col, const float *b,
                       int64_t b_row, float *const *c, int accumulate);
void cuvil_sgemm4_avx512(int64_t rows, int64_t n, int64_t k, const float *a,
                         int64_t a_row, int64_t a_col, const float *b,
                         int64_t b_row, float *const *c, int accumulate);
#endif
#if defined(CUVIL_ENABLE_SIMD_KERNELS) && defined(__aarch64__)
void cuvil_sgemm4_neon(int64_t rows, int64_t n, int64_t k, const float *a,
                       int64_t a_row, int64_t a_col, const float *b,
                       int64_t b_row, float *const *c, int accumulate);
#endif
#if defined(CUVIL_SGEMM4_RUNTIME_DISPATCH)
/* Benchmarks built once for any CPU choose the variant when they start;
 * compiled models never do (the emitter picks one for --cpu). */
void cuvil_sgemm4_dispatch(int64_t rows, int64_t n, int64_t k, const float *a,
                           int64_t a_row, int64_t a_col, const float *b,
                           int64_t b_row, float *const *c, int accumulate);
#define CUVIL_SGEMM4 cuvil_sgemm4_dispatch
#endif
#ifndef CUVIL_SGEMM4
#define CUVIL_SGEMM4 cuvil_sgemm4_reference
#endif

/* C = A @ B for B packed in strips (contract.h: at compile time by
 * cuvil-cpu-pack-product-weights, or by im2col), with the strides of A and
 * an `epilogue` (or NULL) per row. */
void cuvil_matmul_packed_f32(cuvil_pool *pool, int64_t m, int64_t n, int64_t k,
                             const float *a, int64_t a_row, int64_t a_col,
                             const float *packed, float *c,
                             const cuvil_epilogue *epilogue);

/* C[b] = A[b] @ B[b] for `batch` matrices; A is MxK, B is KxN, C is MxN.
 * Batch strides are in elements (0 broadcasts one matrix). `epilogue` (or
 * NULL) is applied to each row of C, row index within its matrix. With
 * `scratch` (cuvil_matmul_scratch_floats(n, k) floats, or NULL) each B is
 * packed in strips first (when that pays: CUVIL_PACK_MIN_ROWS and
 * CUVIL_PACK_MIN_BYTES, contract.h) and the product is blocked for the
 * caches. */
void cuvil_matmul_f32(cuvil_pool *pool, float *scratch, int64_t batch,
                      int64_t m, int64_t n, int64_t k, const float *a,
                      int64_t a_batch_stride, int64_t a_row_stride,
                      int64_t a_col_stride, const float *b,
                      int64_t b_batch_stride, int64_t b_row_stride,
                      int64_t b_col_stride, float *c,
                      const cuvil_epilogue *epilogue);

/* Rows [begin, end) of C (row stride ldc) = A (strides a_row, a_col) @ B
 * packed in strips (contract.h), blocked for the caches: the product under
 * cuvil_matmul_f32's packed path, cuvil_matmul_packed_f32 and Winograd's
 * 36 products. */
void cuvil_gemm_packed(int64_t begin, int64_t end, int64_t n, int64_t k,
                       const float *a, int64_t a_row, int64_t a_col,
                       const float *packed, float *c, int64_t ldc);

#ifdef __cplusplus
}
#endif

#endif /* CUVIL_RUNTIME_GEMM_H */
