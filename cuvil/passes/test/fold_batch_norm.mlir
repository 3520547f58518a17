// RUN: cuvil-opt %s --cuvil-fold-batch-norm --canonicalize --split-input-file | FileCheck %s

// s = scale / sqrt(variance + epsilon) = [0.5, 1]; W' = W * s = [1, 3];
// b' = (0 - mean) * s + bias = [0, -1]. The batch norm is gone.
// CHECK-LABEL: func.func @conv_bn
// CHECK-DAG: %[[W:.+]] = cuvil.constant dense_resource<conv_weight_bn_folded> : tensor<2x1x1x1xf32>
// CHECK-DAG: %[[B:.+]] = cuvil.constant dense_resource<conv_bias_bn_folded> : tensor<2xf32>
// CHECK: %[[C:.+]] = cuvil.conv2d %arg0, %[[W]], %[[B]] : tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>
// CHECK-NEXT: return %[[C]]
// CHECK-NOT: batch_norm
func.func @conv_bn(%x: tensor<1x1x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %w = cuvil.constant dense<[[[[2.0]]], [[[3.0]]]]> : tensor<2x1x1x1xf32>
  %scale = cuvil.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %bias = cuvil.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %mean = cuvil.constant dense<[1.0, 0.0]> : tensor<2xf32>
  %var = cuvil.constant dense<3.0> : tensor<2xf32>
  %c = cuvil.conv2d %x, %w : tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>
  %y = cuvil.batch_norm %c, %scale, %bias, %mean, %var {epsilon = 1.0 : f64} : tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
  return %y : tensor<1x2x2x2xf32>
}
// CHECK-DAG: conv_weight_bn_folded: "0x400000000000803F00004040"
// CHECK-DAG: conv_bias_bn_folded: "0x4000000000000000000080BF"

// -----

// Not folded: a convolution whose result is also used elsewhere, and a
// batch norm whose statistics are not constants.
// CHECK-LABEL: func.func @not_folded
// CHECK: cuvil.batch_norm
// CHECK: cuvil.batch_norm
func.func @not_folded(%x: tensor<1x1x2x2xf32>, %scale: tensor<2xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) {
  %w = cuvil.constant dense<1.0> : tensor<2x1x1x1xf32>
  %s = cuvil.constant dense<1.0> : tensor<2xf32>
  %c = cuvil.conv2d %x, %w : tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>
  %y = cuvil.batch_norm %c, %s, %s, %s, %s : tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
  %c2 = cuvil.conv2d %x, %w : tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>
  %z = cuvil.batch_norm %c2, %scale, %s, %s, %s : tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
  return %y, %c, %z : tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>
}
