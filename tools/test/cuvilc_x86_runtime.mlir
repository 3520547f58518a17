// An artifact includes only the runtime families its model calls: a softmax
// needs the thread pool (every context owns one) and the reductions (with
// the math they use), none of the matrix products', convolutions', pooling,
// layout or gather code, nor the contract's. Its --emit=c output still
// compiles as strict C99.
// RUN: cuvilc --quiet --emit=c %s -o %t.c
// RUN: FileCheck %s < %t.c
// RUN: FileCheck %s --check-prefix=ABSENT < %t.c
// RUN: gcc -std=c99 -pedantic -Wall -Wextra -Werror -c %t.c -o %t.o

func.func @probabilities(%x: tensor<4x10xf32>) -> tensor<4x10xf32> {
  %p = cuvil.softmax %x, axis = 1 : tensor<4x10xf32>
  return %p : tensor<4x10xf32>
}

// CHECK-DAG: void cuvil_parallel_for(cuvil_pool *pool, int64_t count, cuvil_task_fn fn,
// CHECK-DAG: static inline __attribute__((always_inline)) float cuvil_expf(float x) {
// CHECK-DAG: void cuvil_softmax_f32(int log, int64_t outer, int64_t axis, int64_t inner,
// CHECK-DAG: cuvil_softmax_f32(0, 4, 10, 1,

// ABSENT-NOT: cuvil_sgemm4_
// ABSENT-NOT: cuvil_matmul_
// ABSENT-NOT: cuvil_epilogue
// ABSENT-NOT: cuvil_conv2d_
// ABSENT-NOT: cuvil_dwconv_
// ABSENT-NOT: cuvil_convb_
// ABSENT-NOT: cuvil_pool2d_
// ABSENT-NOT: cuvil_reorder_f32
// ABSENT-NOT: cuvil_gather
// ABSENT-NOT: _scratch_floats
// ABSENT-NOT: #include "cuvil/
