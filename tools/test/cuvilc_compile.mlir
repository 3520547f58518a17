// cuvilc compiles a level1 model, reports progress, and writes its output.
// RUN: cuvilc %s --emit=mlir-level1 --quiet | FileCheck %s
// RUN: cuvilc %s --emit=mlir-level1 -o %t.mlir 2>&1 | FileCheck %s --check-prefix=PROGRESS
// RUN: cuvil-opt %t.mlir | FileCheck %s
// RUN: cuvilc --emit=mlir-level1 --print_ir_after_all --quiet %s 2>&1 >/dev/null | FileCheck %s --check-prefix=IR

// CHECK-LABEL: func.func @classifier
// CHECK: cuvil.matmul
// CHECK-NOT: cuvil.mul
// CHECK: cuvil.softmax
func.func @classifier(%x: tensor<1x10xf32>) -> tensor<1x10xf32> {
  %w = cuvil.constant dense<0.5> : tensor<10x10xf32>
  %one = cuvil.constant dense<1.0> : tensor<f32>
  %0 = cuvil.matmul %x, %w : tensor<1x10xf32>, tensor<10x10xf32>
  %1 = cuvil.mul %0, %one : tensor<1x10xf32>, tensor<f32>
  %2 = cuvil.softmax %1, axis = 1 : tensor<1x10xf32>
  return %2 : tensor<1x10xf32>
}

// PROGRESS: cuvilc: [1/2] reading {{.*}}cuvilc_compile.mlir
// PROGRESS: cuvilc: [2/2] optimizing level1
// PROGRESS: cuvilc: wrote {{.*}}.mlir ({{[0-9]+}} bytes)

// IR: IR Dump After Canonicalizer
// IR: IR Dump After CSE
