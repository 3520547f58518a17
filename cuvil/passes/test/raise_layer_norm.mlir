// RUN: cuvil-opt %s --canonicalize --cuvil-raise-layer-norm --split-input-file | FileCheck %s

// torch's nn.LayerNorm as ONNX opset 13 spells it (Pow(d, 2) is d * d after
// canonicalization): one layer_norm over the last axis, gamma and beta as
// its scale and bias, epsilon from the Add.
// CHECK-LABEL: func.func @layer_norm
// CHECK-SAME: (%[[X:.+]]: tensor<?x197x768xf32>, %[[G:.+]]: tensor<768xf32>, %[[B:.+]]: tensor<768xf32>)
// CHECK-NEXT: %[[N:.+]] = cuvil.layer_norm %[[X]] scale %[[G]] : tensor<768xf32> bias %[[B]] : tensor<768xf32> {axis = 2 : i64, epsilon = 9.9999999747524271E-7 : f64} : tensor<?x197x768xf32>
// CHECK-NEXT: return %[[N]]
func.func @layer_norm(%x: tensor<?x197x768xf32>, %g: tensor<768xf32>, %b: tensor<768xf32>) -> tensor<?x197x768xf32> {
  %two = cuvil.constant dense<2.0> : tensor<f32>
  %eps = cuvil.constant dense<1.0e-6> : tensor<f32>
  %mean = cuvil.reduce_mean %x, axes = [-1] keepdims : tensor<?x197x768xf32>
  %d = cuvil.sub %x, %mean : tensor<?x197x768xf32>, tensor<?x197x1xf32>
  %sq = cuvil.pow %d, %two : tensor<?x197x768xf32>, tensor<f32>
  %var = cuvil.reduce_mean %sq, axes = [-1] keepdims : tensor<?x197x768xf32>
  %ve = cuvil.add %var, %eps : tensor<?x197x1xf32>, tensor<f32>
  %s = cuvil.sqrt %ve : tensor<?x197x1xf32>
  %n = cuvil.div %d, %s : tensor<?x197x768xf32>, tensor<?x197x1xf32>
  %y = cuvil.mul %n, %g : tensor<?x197x768xf32>, tensor<768xf32>
  %z = cuvil.add %y, %b : tensor<?x197x768xf32>, tensor<768xf32>
  return %z : tensor<?x197x768xf32>
}

// -----

// Over the last two axes, without gamma and beta (elementwise_affine=False).
// CHECK-LABEL: func.func @two_axes
// CHECK-NEXT: %[[N:.+]] = cuvil.layer_norm %{{.+}} {axis = 1 : i64, epsilon = 9.9999997473787516E-6 : f64} : tensor<2x4x8xf32>
// CHECK-NEXT: return %[[N]]
func.func @two_axes(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %eps = cuvil.constant dense<1.0e-5> : tensor<f32>
  %mean = cuvil.reduce_mean %x, axes = [1, 2] keepdims : tensor<2x4x8xf32>
  %d = cuvil.sub %x, %mean : tensor<2x4x8xf32>, tensor<2x1x1xf32>
  %sq = cuvil.mul %d, %d : tensor<2x4x8xf32>, tensor<2x4x8xf32>
  %var = cuvil.reduce_mean %sq, axes = [-1, -2] keepdims : tensor<2x4x8xf32>
  %ve = cuvil.add %eps, %var : tensor<f32>, tensor<2x1x1xf32>
  %s = cuvil.sqrt %ve : tensor<2x1x1xf32>
  %n = cuvil.div %d, %s : tensor<2x4x8xf32>, tensor<2x1x1xf32>
  return %n : tensor<2x4x8xf32>
}

// -----

// Left alone: a normalization over a leading axis (not a layer norm), and
// one whose centered values are also returned.
// CHECK-LABEL: func.func @not_layer_norms
// CHECK-NOT: cuvil.layer_norm
func.func @not_layer_norms(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %eps = cuvil.constant dense<1.0e-5> : tensor<f32>
  %mean = cuvil.reduce_mean %x, axes = [0] keepdims : tensor<4x8xf32>
  %d = cuvil.sub %x, %mean : tensor<4x8xf32>, tensor<1x8xf32>
  %sq = cuvil.mul %d, %d : tensor<4x8xf32>, tensor<4x8xf32>
  %var = cuvil.reduce_mean %sq, axes = [0] keepdims : tensor<4x8xf32>
  %ve = cuvil.add %var, %eps : tensor<1x8xf32>, tensor<f32>
  %s = cuvil.sqrt %ve : tensor<1x8xf32>
  %n = cuvil.div %d, %s : tensor<4x8xf32>, tensor<1x8xf32>

  %mean2 = cuvil.reduce_mean %x, axes = [1] keepdims : tensor<4x8xf32>
  %d2 = cuvil.sub %x, %mean2 : tensor<4x8xf32>, tensor<4x1xf32>
  %sq2 = cuvil.mul %d2, %d2 : tensor<4x8xf32>, tensor<4x8xf32>
  %var2 = cuvil.reduce_mean %sq2, axes = [1] keepdims : tensor<4x8xf32>
  %ve2 = cuvil.add %var2, %eps : tensor<4x1xf32>, tensor<f32>
  %s2 = cuvil.sqrt %ve2 : tensor<4x1xf32>
  %n2 = cuvil.div %d2, %s2 : tensor<4x8xf32>, tensor<4x1xf32>
  return %n, %n2, %d2 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}
