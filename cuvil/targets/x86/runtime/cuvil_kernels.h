/*===- cuvil_kernels.h - reference micro-kernels of compiled models -------===*
 *
 * C99 and libc: these are compiled into every model .so together with the
 * generated code (which calls them with pointers into the caller's
 * workspace). The kernels neither allocate nor call the OS and keep no
 * state; only the thread pool (created with a context) does. Shapes are
 * int64_t; tensors are dense, row-major.
 *
 *===----------------------------------------------------------------------===*/

#ifndef CUVIL_KERNELS_H
#define CUVIL_KERNELS_H

#include <stdint.h>

/* A fixed set of pthreads that run slices of a kernel's work. The work is
 * split into contiguous ranges, and every output element is computed by the
 * same sequence of operations whatever the number of threads, so results
 * do not depend on it. Created with a context; NULL means "this thread". */
typedef struct cuvil_pool cuvil_pool;
typedef void (*cuvil_task_fn)(void *arg, int64_t begin, int64_t end);

/* Returns NULL if `num_threads` <= 1 or on failure (then work runs on the
 * calling thread). The workers may run on the creating thread's CPUs; one
 * that takes a job on the CPU of the thread that posted it moves itself to
 * the others (sched_setaffinity on itself, never on the caller). */
cuvil_pool *cuvil_pool_create(int num_threads);
void cuvil_pool_destroy(cuvil_pool *pool);
/* Runs fn(arg, begin, end) over [0, count), split across the pool. */
void cuvil_parallel_for(cuvil_pool *pool, int64_t count, cuvil_task_fn fn,
                        void *arg);

/* The sgemm4 micro-kernels (ukernels/sgemm4.inc): up to 4 rows of C = A B
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
#if defined(CUVIL_ENABLE_SIMD_KERNELS)
void cuvil_sgemm4_avx2(int64_t rows, int64_t n, int64_t k, const float *a,
                       int64_t a_row, int64_t a_col, const float *b,
                       int64_t b_row, float *const *c, int accumulate);
void cuvil_sgemm4_avx512(int64_t rows, int64_t n, int64_t k, const float *a,
                         int64_t a_row, int64_t a_col, const float *b,
                         int64_t b_row, float *const *c, int accumulate);
#endif
/* The depthwise convolution micro-kernels (ukernels/dwconv.inc): one output
 * plane of one channel; chosen through CUVIL_DWCONV like CUVIL_SGEMM4. */
typedef void (*cuvil_dwconv_fn)(int64_t h, int64_t w, const float *input,
                                int64_t kh, int64_t kw, const float *weight,
                                float bias, int64_t stride_h, int64_t stride_w,
                                int64_t pad_top, int64_t pad_left,
                                int64_t dil_h, int64_t dil_w, int64_t oh,
                                int64_t ow, float *output);
#define CUVIL_DWCONV_DECLARE(name)                                             \
  void cuvil_dwconv_##name(int64_t h, int64_t w, const float *input,           \
                           int64_t kh, int64_t kw, const float *weight,        \
                           float bias, int64_t stride_h, int64_t stride_w,     \
                           int64_t pad_top, int64_t pad_left, int64_t dil_h,   \
                           int64_t dil_w, int64_t oh, int64_t ow,              \
                           float *output);
CUVIL_DWCONV_DECLARE(reference)
#if defined(CUVIL_ENABLE_SIMD_KERNELS)
CUVIL_DWCONV_DECLARE(avx2)
CUVIL_DWCONV_DECLARE(avx512)
#endif

#if defined(CUVIL_SGEMM4_RUNTIME_DISPATCH)
CUVIL_DWCONV_DECLARE(dispatch)
#define CUVIL_DWCONV cuvil_dwconv_dispatch
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
#ifndef CUVIL_DWCONV
#define CUVIL_DWCONV cuvil_dwconv_reference
#endif

/* An elementwise epilogue (the passes' fused groups) that a producer kernel
 * applies to each row of output right after computing it, while it is in
 * cache: out = activation(out + row_bias[row] + col_bias + residual), in that order
 * (the order of the unfused ops, so results are the same bit for bit). */
enum { CUVIL_ACT_NONE = 0, CUVIL_ACT_RELU = 1, CUVIL_ACT_CLIP = 2 };
typedef struct cuvil_epilogue {
  const float *row_bias; /* one per row (a convolution's channel), or NULL */
  const float *residual; /* laid out like the output, or NULL */
  int activation;        /* CUVIL_ACT_* */
  float lo, hi;          /* CUVIL_ACT_CLIP bounds (-/+ huge if absent) */
  /* One per column (a linear layer's bias), added after row_bias; last, so
   * initializers that stop before it leave it NULL. */
  const float *col_bias;
} cuvil_epilogue;

/* C[b] = A[b] @ B[b] for `batch` matrices; A is MxK, B is KxN, C is MxN.
 * Batch strides are in elements (0 broadcasts one matrix). `epilogue` (or
 * NULL) is applied to each row of C, row index within its matrix. With
 * `scratch` (cuvil_matmul_scratch_floats(n, k) floats, or NULL) each B is
 * packed in strips first and the product is blocked for the caches. */
int64_t cuvil_matmul_scratch_floats(int64_t n, int64_t k);
/* C = A @ B for B packed at compile time in strips of 32 columns
 * ([ceil(N / 32)][K][32], zero past column N; cuvil-x86-pack-product-weights),
 * with the strides of A and an `epilogue` (or NULL) per row. */
void cuvil_matmul_packed_f32(cuvil_pool *pool, int64_t m, int64_t n, int64_t k,
                             const float *a, int64_t a_row, int64_t a_col,
                             const float *packed, float *c,
                             const cuvil_epilogue *epilogue);
void cuvil_matmul_f32(cuvil_pool *pool, float *scratch, int64_t batch,
                      int64_t m, int64_t n, int64_t k, const float *a,
                      int64_t a_batch_stride, int64_t a_row_stride,
                      int64_t a_col_stride, const float *b,
                      int64_t b_batch_stride, int64_t b_row_stride,
                      int64_t b_col_stride, float *c,
                      const cuvil_epilogue *epilogue);

/* A 3x3, stride-1, undilated, ungrouped convolution by Winograd's minimal
 * filtering F(4x4, 3x3): per image, 6x6 input tiles (stride 4) and the
 * weights go to the transform domain, 36 matrix products of
 * [T x C] @ [C x OC] (T = ceil(OH/4) * ceil(OW/4) tiles) replace 9 * OH * OW
 * multiply-adds per channel pair by 36 * T, and each 4x4 output tile comes
 * back by the inverse transform, with bias and `epilogue` applied. 2.25x
 * fewer multiplies than direct at 56x56. The transforms work on 16 channels
 * as one vector. `scratch` holds cuvil_winograd_scratch_floats(...) floats
 * (weights transformed per call: the artifact stores only the original ones).
 * Input and output are NCHW (block 1) or channel-blocked NCHW<block>c
 * (cuvil-x86-assign-layouts; C a multiple of the block), where a point's
 * channels are contiguous vectors. */
int64_t cuvil_winograd_scratch_floats(int64_t c, int64_t oc, int64_t oh, int64_t ow);
void cuvil_conv2d_winograd_f32(cuvil_pool *pool, float *scratch, int64_t n, int64_t c,
                               int64_t h, int64_t w, const float *input, int64_t in_block,
                               int64_t oc, const float *weight, const float *bias,
                               int64_t pad_top, int64_t pad_left, int64_t oh, int64_t ow,
                               float *output, int64_t out_block,
                               const cuvil_epilogue *epilogue);

/* NCHW input, OIHW weight, optional bias (NULL), grouped, dilated. With
 * `scratch` (C * KH * KW * round_up(OH * OW, 32) floats; groups == 1) the
 * convolution runs as im2col, packed in strips of 32 positions, and a matrix
 * product; NULL computes it directly.
 * `epilogue` (or NULL; its row_bias unused: `bias` is the conv's) adds a
 * residual and applies an activation to each output plane. */
void cuvil_conv2d_f32(cuvil_pool *pool, float *scratch, int64_t n, int64_t c, int64_t h, int64_t w,
                      const float *input, int64_t oc, int64_t kh, int64_t kw,
                      const float *weight, const float *bias, int64_t groups,
                      int64_t stride_h, int64_t stride_w, int64_t pad_top,
                      int64_t pad_left, int64_t dil_h, int64_t dil_w,
                      int64_t oh, int64_t ow, float *output,
                      const cuvil_epilogue *epilogue);

/* Channel-blocked direct convolution (cuvil-x86-assign-layouts): the output is
 * NCHW<block>c ([N][OC / block][OH][OW][block]); the input is NCHW
 * (in_block 1, any C) or NCHW<in_block>c (C a multiple of in_block, which
 * may differ from block); the weight is packed at compile time as
 * [OC / block][C / in_block][KH][KW][in_block][block]. Each output row of 1
 * or 2 channel blocks is computed in register tiles of up to 14 (AVX-512)
 * or 6 (AVX2) columns, the sum of each output running over (input block,
 * ky, kx, input lane) in that order. `scratch` holds
 * cuvil_conv2d_blocked_scratch_floats(...) floats: the zero-padded image
 * (so that no tile tests bounds). `epilogue` as for cuvil_conv2d_f32, its
 * residual blocked like the output. OC is a multiple of `block` (<= 64);
 * `tile` is the variant of the register tiles below. */
int64_t cuvil_conv2d_blocked_scratch_floats(int64_t c, int64_t h, int64_t w,
                                            int64_t kh, int64_t kw,
                                            int64_t stride_h, int64_t stride_w,
                                            int64_t pad_top, int64_t pad_left,
                                            int64_t dil_h, int64_t dil_w,
                                            int64_t oh, int64_t ow);
struct cuvil_convb_row;
typedef int (*cuvil_convb_fn)(const struct cuvil_convb_row *r, int64_t nb,
                              int64_t x0, int64_t u);
void cuvil_conv2d_blocked_f32(cuvil_convb_fn tile, cuvil_pool *pool,
                              float *scratch, int64_t n,
                              int64_t c, int64_t h, int64_t w,
                              const float *input, int64_t in_block, int64_t oc,
                              int64_t kh, int64_t kw, const float *weight,
                              const float *bias, int64_t stride_h,
                              int64_t stride_w, int64_t pad_top,
                              int64_t pad_left, int64_t dil_h, int64_t dil_w,
                              int64_t oh, int64_t ow, float *output,
                              int64_t block, const cuvil_epilogue *epilogue);
/* Its register tiles (ukernels/convb.inc; the emitter passes CUVIL_CONVB,
 * chosen like CUVIL_SGEMM4): one call computes columns [x0, x0 + u) of one
 * output row for `nb` (1 or 2) channel blocks. A SIMD variant returns 0 when
 * it cannot (another block size; the AVX-512 one runs blocks of 8 with the
 * AVX2 tiles); the driver then uses the reference. */
#define CUVIL_CONVB_DECLARE(name)                                              \
  int cuvil_convb_##name(const struct cuvil_convb_row *r, int64_t nb,          \
                         int64_t x0, int64_t u);
CUVIL_CONVB_DECLARE(reference)
/* (Models without a blocked direct convolution leave the tiles out.) */
#if defined(CUVIL_ENABLE_SIMD_KERNELS) && !defined(CUVIL_OMIT_CONVB_TILES)
CUVIL_CONVB_DECLARE(avx2)
CUVIL_CONVB_DECLARE(avx512)
#endif
#ifndef CUVIL_CONVB
#define CUVIL_CONVB cuvil_convb_reference
#endif

/* Depthwise convolution (groups == C == OC) on NCHW<block>c input and
 * output (block 8 or 16; returns 1 for another), the weight packed as
 * [C / block][KH][KW][block]; bias (or NULL) and `epilogue` (residual
 * blocked) as for cuvil_conv2d_blocked_f32. */
int cuvil_dwconv_blocked_f32(cuvil_pool *pool, int64_t n, int64_t c, int64_t h,
                             int64_t w, const float *input, int64_t kh,
                             int64_t kw, const float *weight, const float *bias,
                             int64_t stride_h, int64_t stride_w,
                             int64_t pad_top, int64_t pad_left, int64_t dil_h,
                             int64_t dil_w, int64_t oh, int64_t ow,
                             float *output, int64_t block,
                             const cuvil_epilogue *epilogue);

/* NCHW <-> NCHW<block>c over [n][c][spatial]: to_blocked copies plain `src`
 * into blocked `dst` (zero past channel c), else blocked into plain. */
void cuvil_reorder_f32(int to_blocked, int64_t n, int64_t c, int64_t spatial,
                       int64_t block, const float *src, float *dst);

/* cuvil_pool2d_f32 on NCHW<block>c input and output (block <= 64; the
 * plain version is block 1). */
void cuvil_pool2d_blocked_f32(int kind, int64_t n, int64_t c, int64_t h,
                              int64_t w, const float *input, int64_t kh,
                              int64_t kw, int64_t stride_h, int64_t stride_w,
                              int64_t pad_top, int64_t pad_left, int64_t dil_h,
                              int64_t dil_w, int count_include_pad, int64_t oh,
                              int64_t ow, float *output, int64_t block);

/* kind: 0 max, 1 average (count_include_pad selects the divisor). */
void cuvil_pool2d_f32(int kind, int64_t n, int64_t c, int64_t h, int64_t w,
                      const float *input, int64_t kh, int64_t kw,
                      int64_t stride_h, int64_t stride_w, int64_t pad_top,
                      int64_t pad_left, int64_t dil_h, int64_t dil_w,
                      int count_include_pad, int64_t oh, int64_t ow,
                      float *output);

void cuvil_adaptive_avg_pool2d_f32(int64_t n, int64_t c, int64_t h, int64_t w,
                                   const float *input, int64_t oh, int64_t ow,
                                   float *output);

/* Softmax (log_softmax if `log`) over the middle dim of [outer, axis, inner]. */
void cuvil_softmax_f32(int log, int64_t outer, int64_t axis, int64_t inner,
                       const float *input, float *output);

/* Normalizes each of `outer` rows of `inner` elements; scale/bias have
 * `inner` elements or are NULL. */
void cuvil_layer_norm_f32(int64_t outer, int64_t inner, const float *input,
                          const float *scale, const float *bias, double epsilon,
                          float *output);

/* Inference batch norm over [n, c, spatial]. */
void cuvil_batch_norm_f32(int64_t n, int64_t c, int64_t spatial,
                          const float *input, const float *scale,
                          const float *bias, const float *mean,
                          const float *variance, double epsilon, float *output);

/* Reduces the middle dim of [outer, reduced, inner]: kind 0 sum, 1 mean,
 * 2 max, 3 min. */
void cuvil_reduce_f32(int kind, int64_t outer, int64_t reduced, int64_t inner,
                      const float *input, float *output);

/* Gathers rows: data is [outer, axis, inner] of `element_size` bytes,
 * indices (int64 or int32 per `indices_are_i64`) has `count` entries;
 * output is [outer, count, inner]. Returns 0, or 1 if an index is out of
 * range (the output is then unspecified). */
int cuvil_gather(int64_t element_size, int64_t outer, int64_t axis,
                 int64_t inner, const void *data, const void *indices,
                 int indices_are_i64, int64_t count, void *output);

#endif /* CUVIL_KERNELS_H */
