// The level1 pipeline folds, canonicalizes and deduplicates.
// RUN: cuvil-opt %s --cuvil-level1-pipeline | FileCheck %s

// CHECK-LABEL: func.func @classifier
// CHECK-SAME: (%[[X:.+]]: tensor<1x10xf32>)
func.func @classifier(%x: tensor<1x10xf32>) -> (tensor<1x10xf32>, tensor<1x10xf32>) {
  // The two identical matmuls become one; x * 1 folds away.
  // CHECK: %[[W:.+]] = cuvil.constant
  // CHECK-NEXT: %[[MM:.+]] = cuvil.matmul %[[X]], %[[W]]
  // CHECK-NEXT: %[[P:.+]] = cuvil.softmax %[[MM]], axis = 1
  // CHECK-NEXT: return %[[P]], %[[P]]
  %w = cuvil.constant dense<0.5> : tensor<10x10xf32>
  %one = cuvil.constant dense<1.0> : tensor<f32>
  %a = cuvil.matmul %x, %w : tensor<1x10xf32>, tensor<10x10xf32>
  %b = cuvil.matmul %x, %w : tensor<1x10xf32>, tensor<10x10xf32>
  %a1 = cuvil.mul %a, %one : tensor<1x10xf32>, tensor<f32>
  %pa = cuvil.softmax %a1, axis = 1 : tensor<1x10xf32>
  %pb = cuvil.softmax %b, axis = 1 : tensor<1x10xf32>
  return %pa, %pb : tensor<1x10xf32>, tensor<1x10xf32>
}
