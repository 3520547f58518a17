// cuvilc's x86 outputs: level2, C, header and a .so, and the x86 errors.
// RUN: cuvilc --quiet --emit=mlir-level2 %s | FileCheck %s --check-prefix=L2
// RUN: cuvilc --quiet --emit=c --cpu=x86-64-v3 %s | FileCheck %s --check-prefix=C
// RUN: cuvilc --quiet --emit=header %s | FileCheck %s --check-prefix=HEADER
// RUN: cuvilc --max-batch=8 --cpu=x86-64-v2 %s -o %t.so 2>&1 | FileCheck %s --check-prefix=SO
// RUN: cuvilc --emit=header %s -o %t.noted.h 2>&1 | FileCheck %s --check-prefix=NOTE
// NOTE: cuvilc: note: the model has a dynamic batch; it is bounded to 1 (use --max-batch=N for batches up to N)
// RUN: test -s %t.so && test -s %t.h

func.func @classifier(%x: tensor<?x10xf32>) -> tensor<?x10xf32> {
  %w = cuvil.constant dense<0.5> : tensor<10x10xf32>
  %h = cuvil.matmul %x, %w : tensor<?x10xf32>, tensor<10x10xf32>
  %r = cuvil.relu %h : tensor<?x10xf32>
  %p = cuvil.softmax %r, axis = 1 : tensor<?x10xf32>
  return %p : tensor<?x10xf32>
}

// L2: memref.global "private" constant @classifier_constant_0 : memref<10x10xf32> = dense<5.000000e-01> {alignment = 64 : i64}
// L2: func.func @classifier(%[[B:.+]]: index {cuvil.name = "batch"}, %[[X:.+]]: memref<?x10xf32>, %[[Y:.+]]: memref<?x10xf32>, %[[A:.+]]: memref<{{[0-9]+}}xi8> {cuvil_l2.arena})
// L2: cuvil_l2.view %[[A]][0] (%[[B]]) bounds [1]
// The relu rides in the matrix product's epilogue.
// L2: cuvil_l2.ukernel_call "matmul" {{.*}}epilogue <steps = [relu]>
// L2-NOT: ukernel_call "relu"
// The last op writes the output buffer directly.
// L2: cuvil_l2.ukernel_call "softmax" ins(%{{.+}} : memref<?x10xf32>) outs(%[[Y]] : memref<?x10xf32>) params {axis = 1 : i64}

// C: #define CUVIL_MODEL_NUM_INPUTS 1
// C: static const union { uint64_t words[50]; float values[100]; } cuvil_w0 CUVIL_ALIGN64
// The ops' code is in parts of bounded size, called in order.
// C: static CUVIL_NOINLINE int cuvil_run_part0(
// C: cuvil_matmul_f32(pool, NULL, 1, batch, 10, 10,
// C: cuvil_softmax_f32(0, batch, 10, 1,
// C: static int cuvil_run_batch(
// C: if ((status = cuvil_run_part0(batch, inputs, outputs, arena, pool)) != CUVIL_OK)
// C: CUVIL_INTERNAL int cuvil_internal_run(
// C: return cuvil_run_batch(batch, inputs, outputs, arena, pool);
// C: ok &= (r7[1] >> 5) & 1; /* avx2 */
// C: CUVIL_EXPORT int cuvil_model_run(

// Without --max-batch a dynamic batch is bounded to 1.
// HEADER: #define CUVIL_MODEL_MAX_BATCH 1
// HEADER: /* input 0 'input0': float32 [batch, 10] */
// HEADER: int cuvil_model_run(int64_t batch,

// SO: cuvilc: [5/5] building the shared object with clang (-march=x86-64-v2)
// SO: cuvilc: memory plan: arena {{[0-9]+}} bytes
// SO: cuvilc: wrote {{.*}}.so ({{[0-9]+}} bytes) and {{.*}}.h
