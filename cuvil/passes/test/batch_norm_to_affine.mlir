// RUN: cuvil-opt %s --cuvil-batch-norm-to-affine --split-input-file | FileCheck %s

// s = scale / sqrt(variance + epsilon) = [0.5, 1] and t = bias - mean * s
// = [0, -1], as [C, 1, 1] constants: x * s + t, which then fuses with the
// relu like any elementwise chain.
// CHECK-LABEL: func.func @after_concat
// CHECK-DAG: %[[S:.+]] = cuvil.constant dense_resource<batch_norm_scale> : tensor<2x1x1xf32>
// CHECK-DAG: %[[T:.+]] = cuvil.constant dense_resource<batch_norm_shift> : tensor<2x1x1xf32>
// CHECK: %[[C:.+]] = cuvil.concat
// CHECK: %[[M:.+]] = cuvil.mul %[[C]], %[[S]] : tensor<1x2x2x2xf32>, tensor<2x1x1xf32>
// CHECK: %[[A:.+]] = cuvil.add %[[M]], %[[T]] : tensor<1x2x2x2xf32>, tensor<2x1x1xf32>
// CHECK: cuvil.relu %[[A]]
// CHECK-NOT: batch_norm
func.func @after_concat(%x: tensor<1x1x2x2xf32>, %y: tensor<1x1x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %scale = cuvil.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %bias = cuvil.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %mean = cuvil.constant dense<[1.0, 0.0]> : tensor<2xf32>
  %var = cuvil.constant dense<3.0> : tensor<2xf32>
  %c = cuvil.concat(%x, %y) axis = 1 : tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>
  %n = cuvil.batch_norm %c, %scale, %bias, %mean, %var {epsilon = 1.0 : f64} : tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
  %r = cuvil.relu %n : tensor<1x2x2x2xf32>
  return %r : tensor<1x2x2x2xf32>
}
// CHECK-DAG: batch_norm_scale: "0x400000000000003F0000803F"
// CHECK-DAG: batch_norm_shift: "0x4000000000000000000080BF"

// -----

// BatchNorm1d on [N, C]: the constants are [C].
// CHECK-LABEL: func.func @rank2
// CHECK: cuvil.mul %arg0, %{{.+}} : tensor<4x3xf32>, tensor<3xf32>
// CHECK: cuvil.add
func.func @rank2(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %s = cuvil.constant dense<1.0> : tensor<3xf32>
  %n = cuvil.batch_norm %x, %s, %s, %s, %s : tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
  return %n : tensor<4x3xf32>
}

// -----

// Left alone: statistics that are not constants (a function argument).
// CHECK-LABEL: func.func @not_constant
// CHECK: cuvil.batch_norm
// CHECK-NOT: cuvil.mul
func.func @not_constant(%x: tensor<1x2x2x2xf32>, %scale: tensor<2xf32>) -> tensor<1x2x2x2xf32> {
  %s = cuvil.constant dense<1.0> : tensor<2xf32>
  %n = cuvil.batch_norm %x, %scale, %s, %s, %s : tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
  return %n : tensor<1x2x2x2xf32>
}
