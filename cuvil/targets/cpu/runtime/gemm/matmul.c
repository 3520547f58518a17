/*===- matmul.c - matrix products blocked for the caches ----------------===*
 *
 * Every element sums over k in order, whatever the blocking and the thread
 * split, so results are the same bits for any of them.
 *
 *===----------------------------------------------------------------------===*/

#include "cuvil/targets/cpu/runtime/contract/contract.h"
#include "cuvil/targets/cpu/runtime/gemm/gemm.h"

#include <string.h>

/* The target's L2 per core, from its description (cuvilc defines it). */
#ifndef CUVIL_L2_BYTES
#define CUVIL_L2_BYTES 1048576
#endif

/* Columns per block of the product: the block of B (k x block floats) that
 * every 4-row group of a thread's range reuses should stay in L2 (an eighth
 * of it, leaving room for A's rows, C and the other operands), instead of
 * streaming all of B from memory once per group. Whole strips, at least
 * one. */
static int64_t cuvil_matmul_column_block(int64_t n, int64_t k) {
  int64_t block = (int64_t)(CUVIL_L2_BYTES / 8 / sizeof(float)) /
                  (k > 0 ? k : 1) / CUVIL_STRIP * CUVIL_STRIP;
  if (block < CUVIL_STRIP)
    block = CUVIL_STRIP;
  return block < n ? block : n;
}

/* Products on B packed in strips of CUVIL_STRIP columns ([n / 32][k][32],
 * zero past column n), the layout im2col writes and cuvil_pack_strips makes.
 * Blocked for the caches: a block of CUVIL_GEMM_KC rows of B by the columns
 * that fill half of L2 is reused by every 4-row group of a thread's range,
 * whose 4 x KC slice of A (16 KiB) stays in L1 across the block's strips.
 * Long blocks of k reload C's tiles less often: KC 1024 ran SGEMM 1024 and
 * 2048 5-10% faster than 256 (kernel_benchmark). A is read
 * once per column block (not once per strip: a convolution's weights on a
 * 7x7 or 14x14 image are most of its traffic). Blocks of k continue each
 * element's running sum (accumulate), so the result is the same bits as one
 * pass over k. */
#ifndef CUVIL_GEMM_KC
#define CUVIL_GEMM_KC 1024
#endif

static int64_t cuvil_gemm_column_block(void) {
  int64_t nc = (int64_t)(CUVIL_L2_BYTES / 2 / sizeof(float)) / CUVIL_GEMM_KC /
               CUVIL_STRIP * CUVIL_STRIP;
  return nc < CUVIL_STRIP ? CUVIL_STRIP : nc;
}

void cuvil_gemm_packed(int64_t begin, int64_t end, int64_t n, int64_t k,
                       const float *a, int64_t a_row, int64_t a_col,
                       const float *packed, float *c, int64_t ldc) {
  int64_t nc = cuvil_gemm_column_block(), j0, l0, r, j, q, count;
  if (k == 0) {
    for (r = begin; r < end; ++r)
      for (j = 0; j < n; ++j)
        c[r * ldc + j] = 0.0f;
    return;
  }
  for (j0 = 0; j0 < n; j0 += nc) {
    int64_t j1 = j0 + nc < n ? j0 + nc : n;
    for (l0 = 0; l0 < k; l0 += CUVIL_GEMM_KC) {
      int64_t kb = k - l0 < CUVIL_GEMM_KC ? k - l0 : CUVIL_GEMM_KC;
      for (r = begin; r < end; r += count) {
        float *rows[4];
        count = end - r < 4 ? end - r : 4;
        for (j = j0; j < j1; j += CUVIL_STRIP) {
          int64_t width = j1 - j < CUVIL_STRIP ? j1 - j : CUVIL_STRIP;
          for (q = 0; q < count; ++q)
            rows[q] = c + (r + q) * ldc + j;
          CUVIL_SGEMM4(
              count, width, kb, a + r * a_row + l0 * a_col, a_row, a_col,
              packed + (j / CUVIL_STRIP) * k * CUVIL_STRIP + l0 * CUVIL_STRIP,
              CUVIL_STRIP, rows, l0 > 0);
        }
      }
    }
  }
}

struct cuvil_pack_args {
  int64_t n, k, b_row, b_col;
  const float *b;
  float *packed;
};

/* Strips [begin, end) of B (k x n, strides b_row and b_col) into the packed
 * layout: each strip's rows become contiguous. */
static void cuvil_pack_strips(void *p, int64_t begin, int64_t end) {
  const struct cuvil_pack_args *x = (const struct cuvil_pack_args *)p;
  int64_t s, l, j;
  /* Row by row: each row's part under strips [begin, end) is read in order
   * (a strip at a time would touch a new page per row) and lands in 128-byte
   * pieces, whole cache lines, at the strips' row l. */
  for (l = 0; l < x->k; ++l) {
    const float *row = x->b + l * x->b_row;
    for (s = begin; s < end; ++s) {
      int64_t j0 = s * CUVIL_STRIP;
      int64_t width = x->n - j0 < CUVIL_STRIP ? x->n - j0 : CUVIL_STRIP;
      float *d = x->packed + (s * x->k + l) * CUVIL_STRIP;
      if (x->b_col == 1 && width == CUVIL_STRIP) {
        memcpy(d, row + j0, CUVIL_STRIP * sizeof(float));
        continue;
      }
      for (j = 0; j < width; ++j)
        d[j] = row[(j0 + j) * x->b_col];
      for (j = width; j < CUVIL_STRIP; ++j)
        d[j] = 0.0f;
    }
  }
}

struct cuvil_packed_args {
  int64_t m, n, k, a_row, a_col;
  const float *a, *packed;
  float *c;
  const cuvil_epilogue *epilogue;
  int64_t row0; /* C's first row among all the epilogue's rows */
};

/* Rows [begin, end) of one C = A @ B with B packed, then the epilogue. */
static void cuvil_packed_rows(void *p, int64_t begin, int64_t end) {
  const struct cuvil_packed_args *x = (const struct cuvil_packed_args *)p;
  int64_t r;
  cuvil_gemm_packed(begin, end, x->n, x->k, x->a, x->a_row, x->a_col, x->packed,
                    x->c, x->n);
  if (x->epilogue)
    for (r = begin; r < end; ++r)
      cuvil_epilogue_row(x->epilogue, x->c + r * x->n, (x->row0 + r) * x->n, r,
                         x->n);
}

struct cuvil_matmul_args {
  int64_t m, n, k;
  const float *a;
  int64_t a_batch_stride, a_row_stride, a_col_stride;
  const float *b;
  int64_t b_batch_stride, b_row_stride, b_col_stride;
  float *c;
  const cuvil_epilogue *epilogue;
};

/* Rows [begin, end) of all batches flattened (row r: batch r / m), four at a
 * time through the target's sgemm4 micro-kernel, one column block at a
 * time. Every element sums over l in order, so the result does not depend
 * on the blocking or the thread split. */
static void cuvil_matmul_rows(void *p, int64_t begin, int64_t end) {
  const struct cuvil_matmul_args *x = (const struct cuvil_matmul_args *)p;
  int64_t r, count, n = x->n, j0, q;
  int64_t block = cuvil_matmul_column_block(n, x->k);
  for (j0 = 0; j0 < n; j0 += block) {
    int64_t width = n - j0 < block ? n - j0 : block;
    for (r = begin; r < end; r += count) {
      int64_t batch = r / x->m, i = r % x->m, j, l;
      const float *ap = x->a + batch * x->a_batch_stride;
      const float *bp = x->b + batch * x->b_batch_stride + j0 * x->b_col_stride;
      float *c[4];
      count = end - r;
      if (count > 4)
        count = 4;
      if (count > x->m - i)
        count = x->m - i;
      for (q = 0; q < count; ++q)
        c[q] = x->c + (r + q) * n + j0;
      if (x->b_col_stride == 1) {
        CUVIL_SGEMM4(count, width, x->k, ap + i * x->a_row_stride,
                     x->a_row_stride, x->a_col_stride, bp, x->b_row_stride, c,
                     0);
        continue;
      }
      for (q = 0; q < count; ++q)
        for (j = 0; j < width; ++j)
          c[q][j] = 0.0f;
      for (l = 0; l < x->k; ++l) {
        const float *brow = bp + l * x->b_row_stride;
        for (q = 0; q < count; ++q) {
          float av = ap[(i + q) * x->a_row_stride + l * x->a_col_stride];
          for (j = 0; j < width; ++j)
            c[q][j] += av * brow[j * x->b_col_stride];
        }
      }
    }
  }
  if (x->epilogue)
    for (r = begin; r < end; ++r)
      cuvil_epilogue_row(x->epilogue, x->c + r * n, r * n, r % x->m, n);
}

void cuvil_matmul_f32(cuvil_pool *pool, float *scratch, int64_t batch,
                      int64_t m, int64_t n, int64_t k, const float *a,
                      int64_t a_batch_stride, int64_t a_row_stride,
                      int64_t a_col_stride, const float *b,
                      int64_t b_batch_stride, int64_t b_row_stride,
                      int64_t b_col_stride, float *c,
                      const cuvil_epilogue *epilogue) {
  struct cuvil_matmul_args args;
  /* Batches of A against one B, back to back (a linear layer on [L, N, E]
   * activations): one product with batch * m rows. */
  if (batch > 1 && b_batch_stride == 0 && a_batch_stride == m * a_row_stride) {
    m *= batch;
    batch = 1;
  }
  /* Packing B costs a pass over it; it pays once enough rows reuse it and
   * B is larger than L1 (a small one stays there, strided or not). */
  if (scratch && m >= CUVIL_PACK_MIN_ROWS &&
      k * n * (int64_t)sizeof(float) > CUVIL_PACK_MIN_BYTES) {
    int64_t i, strips = (n + CUVIL_STRIP - 1) / CUVIL_STRIP;
    for (i = 0; i < batch; ++i) {
      struct cuvil_pack_args pack = {
          n, k, b_row_stride, b_col_stride, b + i * b_batch_stride, scratch};
      struct cuvil_packed_args product = {m,
                                          n,
                                          k,
                                          a_row_stride,
                                          a_col_stride,
                                          a + i * a_batch_stride,
                                          scratch,
                                          c + i * m * n,
                                          epilogue,
                                          i * m};
      if (i == 0 || b_batch_stride != 0)
        cuvil_parallel_for(pool, strips, cuvil_pack_strips, &pack);
      cuvil_parallel_for(pool, m, cuvil_packed_rows, &product);
    }
    return;
  }
  args.m = m;
  args.n = n;
  args.k = k;
  args.a = a;
  args.a_batch_stride = a_batch_stride;
  args.a_row_stride = a_row_stride;
  args.a_col_stride = a_col_stride;
  args.b = b;
  args.b_batch_stride = b_batch_stride;
  args.b_row_stride = b_row_stride;
  args.b_col_stride = b_col_stride;
  args.c = c;
  args.epilogue = epilogue;
  cuvil_parallel_for(pool, batch * m, cuvil_matmul_rows, &args);
}

void cuvil_matmul_packed_f32(cuvil_pool *pool, int64_t m, int64_t n, int64_t k,
                             const float *a, int64_t a_row, int64_t a_col,
                             const float *packed, float *c,
                             const cuvil_epilogue *epilogue) {
  struct cuvil_packed_args product = {m, n,      k, a_row,    a_col,
                                      a, packed, c, epilogue, 0};
  cuvil_parallel_for(pool, m, cuvil_packed_rows, &product);
}
