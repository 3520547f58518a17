// RUN: cuvil-opt %s --cuvil-quantize-products="power-of-two=true" --split-input-file | FileCheck %s
// RUN: cuvil-opt %s --cuvil-quantize-products="power-of-two=true" --cuvil-fold-quantized-products --canonicalize --split-input-file | FileCheck %s --check-prefix=FOLD

// Fixed point (power-of-two): the activation over [-1, 4] is int8 with the
// smallest power-of-two scale that holds 4 in 127 steps, 2^-4 (2^-5 holds
// only 3.97), zero point 0; the weights W^T * alpha = (2, -4, 1 | 0, 0, 0)
// per tensor at 2^-4 as well: q = (32, -64, 16 | 0, 0, 0).
// CHECK-LABEL: func.func @gemm
// CHECK: cuvil.quantize %arg0 : tensor<?x3xf32> to tensor<?x3x!quant.uniform<i8:f32, 6.250000e-02>>
// CHECK: %[[W:.+]] = cuvil.constant dense_resource<qweights> : tensor<3x2xi8>
// CHECK: cuvil.storage_cast %[[W]] : tensor<3x2xi8> to tensor<3x2x!quant.uniform<i8:f32, 6.250000e-02>>
// CHECK: qweights: "0x400000002000C0001000"
// FOLD-LABEL: func.func @gemm
// FOLD: cuvil.quantized_matmul %{{.+}}, %{{.+}} : tensor<?x3x!quant.uniform<i8:f32, 6.250000e-02>>, tensor<3x2x!quant.uniform<i8:f32, 6.250000e-02>>
func.func @gemm(%x: tensor<?x3xf32>) -> tensor<?x2xf32> {
  %w = cuvil.constant dense<[[1.0, -2.0, 0.5], [0.0, 0.0, 0.0]]> : tensor<2x3xf32>
  %b = cuvil.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %y = cuvil.gemm %x, %w, %b {trans_b, alpha = 2.0 : f64, cuvil.activation_range = array<f64: -1.0, 4.0>} : tensor<?x3xf32>, tensor<2x3xf32>, tensor<2xf32>
  return %y : tensor<?x2xf32>
}

// -----

// An exact power: 127 x 2^-3 = 15.875 is held by 2^-3 itself, one more by
// 2^-2; a convolution's weights share one scale across output channels
// (max |w| 3 in 127 steps: 2^-5).
// CHECK-LABEL: func.func @conv
// CHECK: cuvil.storage_cast %{{.+}} : tensor<2x1x1x1xi8> to tensor<2x1x1x1x!quant.uniform<i8:f32, 3.125000e-02>>
// CHECK: cuvil.quantize %arg0 : tensor<1x1x4x4xf32> to tensor<1x1x4x4x!quant.uniform<i8:f32, 1.250000e-01>>
// CHECK-LABEL: func.func @conv_one_more
// CHECK: cuvil.quantize %arg0 : tensor<1x1x4x4xf32> to tensor<1x1x4x4x!quant.uniform<i8:f32, 2.500000e-01>>
// CHECK: qweights: "0x4000000060F0"
// FOLD-LABEL: func.func @conv
// FOLD: cuvil.quantized_conv2d {{.+}} : tensor<1x1x4x4x!quant.uniform<i8:f32, 1.250000e-01>>, tensor<2x1x1x1x!quant.uniform<i8:f32, 3.125000e-02>>, tensor<2xf32>
func.func @conv(%x: tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = cuvil.constant dense<[[[[3.0]]], [[[-0.5]]]]> : tensor<2x1x1x1xf32>
  %b = cuvil.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %y = cuvil.conv2d %x, %w, %b {cuvil.activation_range = array<f64: 0.0, 15.875>} : tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>
  return %y : tensor<1x2x4x4xf32>
}
func.func @conv_one_more(%x: tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = cuvil.constant dense<[[[[3.0]]], [[[-0.5]]]]> : tensor<2x1x1x1xf32>
  %b = cuvil.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %y = cuvil.conv2d %x, %w, %b {cuvil.activation_range = array<f64: -15.9, 1.0>} : tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>
  return %y : tensor<1x2x4x4xf32>
}
