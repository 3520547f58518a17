// RUN: cuvil-opt %s --cuvil-quantize-products --split-input-file -verify-diagnostics | FileCheck %s
// RUN: cuvil-opt %s --cuvil-quantize-products --cuvil-fold-quantized-products --canonicalize --split-input-file -verify-diagnostics | FileCheck %s --check-prefix=FOLD

// A calibrated linear layer (nn.Linear's gemm: trans_b, bias, alpha 2)
// becomes QDQ: the activation as uint8 over [-1, 4] (scale 5/255, zero
// point 51), the weights W^T * alpha per column symmetric int8: column 0
// is (2, -4, 1), scale 4/127, q = (64 (63.5 to even), -127, 32); column 1
// is zero, scale 1. The bias is added in float32.
// CHECK-LABEL: func.func @gemm
// CHECK: %[[B:.+]] = cuvil.constant dense<[5.000000e-01, -1.000000e+00]>
// CHECK: %[[Q:.+]] = cuvil.quantize %arg0 : tensor<?x3xf32> to tensor<?x3x!quant.uniform<u8:f32, 0.019607843831181526:51>>
// CHECK: %[[A:.+]] = cuvil.dequantize %[[Q]]
// CHECK: %[[W:.+]] = cuvil.constant dense_resource<qweights> : tensor<3x2xi8>
// CHECK: %[[WQ:.+]] = cuvil.storage_cast %[[W]] : tensor<3x2xi8> to tensor<3x2x!quant.uniform<i8:f32:1, {0.031496062874794006,1.000000e+00}>>
// CHECK: %[[WD:.+]] = cuvil.dequantize %[[WQ]]
// CHECK: %[[Y:.+]] = cuvil.matmul %[[A]], %[[WD]]
// CHECK: %[[R:.+]] = cuvil.add %[[Y]], %[[B]]
// CHECK: return %[[R]]
// CHECK: qweights: "0x40000000400081002000"
// FOLD-LABEL: func.func @gemm
// FOLD: cuvil.quantized_matmul
// FOLD-NOT: cuvil.gemm
func.func @gemm(%x: tensor<?x3xf32>) -> tensor<?x2xf32> {
  %w = cuvil.constant dense<[[1.0, -2.0, 0.5], [0.0, 0.0, 0.0]]> : tensor<2x3xf32>
  %b = cuvil.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %y = cuvil.gemm %x, %w, %b {trans_b, alpha = 2.0 : f64, cuvil.activation_range = array<f64: -1.0, 4.0>} : tensor<?x3xf32>, tensor<2x3xf32>, tensor<2xf32>
  return %y : tensor<?x2xf32>
}

// -----

// A post-ReLU range [0, 2.55] uses every level: scale 0.01, zero point 0.
// A constant bias with beta 0.5 is scaled at compile time.
// CHECK-LABEL: func.func @relu_range
// CHECK: cuvil.constant dense_resource<gemm_bias_scaled> : tensor<2xf32>
// CHECK: cuvil.quantize %arg0 : tensor<4x3xf32> to tensor<4x3x!quant.uniform<u8:f32, 0.0099999997764825821>>
// CHECK-NOT: cuvil.gemm
// CHECK: gemm_bias_scaled: "0x400000000000803F000000C0"
func.func @relu_range(%x: tensor<4x3xf32>) -> tensor<4x2xf32> {
  %w = cuvil.constant dense<1.0> : tensor<3x2xf32>
  %b = cuvil.constant dense<[2.0, -4.0]> : tensor<2xf32>
  %y = cuvil.gemm %x, %w, %b {beta = 0.5 : f64, cuvil.activation_range = array<f64: 0.0, 2.55>} : tensor<4x3xf32>, tensor<3x2xf32>, tensor<2xf32>
  return %y : tensor<4x2xf32>
}

// -----

// A batched matmul (a linear layer on [B, S, E]) keeps its rank.
// CHECK-LABEL: func.func @batched
// CHECK: cuvil.matmul %{{.+}}, %{{.+}} : tensor<2x5x3xf32>, tensor<3x4xf32>
// FOLD-LABEL: func.func @batched
// FOLD: cuvil.quantized_matmul {{.+}} : tensor<2x5x3x!quant.uniform
func.func @batched(%x: tensor<2x5x3xf32>) -> tensor<2x5x4xf32> {
  %w = cuvil.constant dense<0.25> : tensor<3x4xf32>
  %y = cuvil.matmul %x, %w {cuvil.activation_range = array<f64: -3.0, 3.0>} : tensor<2x5x3xf32>, tensor<3x4xf32>
  return %y : tensor<2x5x4xf32>
}

// -----

// A convolution is quantized in place: its input through uint8 over [0, 2.55]
// and its OIHW weights per output channel (axis 0): channel 0 is
// (1, -2, 0.5, 0) scaled by 2/127, channel 1 all zero (scale 1). Bias and
// attributes stay.
// CHECK-LABEL: func.func @conv
// CHECK: %[[W:.+]] = cuvil.storage_cast %{{.+}} : tensor<2x1x2x2xi8> to tensor<2x1x2x2x!quant.uniform<i8:f32:0, {0.015748031437397003,1.000000e+00}>>
// CHECK: %[[Q:.+]] = cuvil.quantize %arg0 : tensor<1x1x3x3xf32> to tensor<1x1x3x3x!quant.uniform<u8:f32, 0.0099999997764825821>>
// CHECK: cuvil.conv2d %{{.+}}, %{{.+}}, %{{.+}} {padding = array<i64: 1, 1, 1, 1>} : tensor<1x1x3x3xf32>, tensor<2x1x2x2xf32>, tensor<2xf32>
// CHECK: qweights: "0x400000004081200000000000"
// FOLD-LABEL: func.func @conv
// FOLD: cuvil.quantized_conv2d {{.+}} {padding = array<i64: 1, 1, 1, 1>}
func.func @conv(%x: tensor<1x1x3x3xf32>) -> tensor<1x2x4x4xf32> {
  %w = cuvil.constant dense<[[[[1.0, -2.0], [0.5, 0.0]]], [[[0.0, 0.0], [0.0, 0.0]]]]> : tensor<2x1x2x2xf32>
  %b = cuvil.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %y = cuvil.conv2d %x, %w, %b {padding = array<i64: 1, 1, 1, 1>, cuvil.activation_range = array<f64: 0.0, 2.55>} : tensor<1x1x3x3xf32>, tensor<2x1x2x2xf32>, tensor<2xf32>
  return %y : tensor<1x2x4x4xf32>
}

// -----

func.func @bad_range(%x: tensor<4x3xf32>) -> tensor<4x2xf32> {
  %w = cuvil.constant dense<1.0> : tensor<3x2xf32>
  // expected-error @+1 {{cuvil.activation_range must be array<f64: lo, hi> with finite lo <= hi}}
  %y = cuvil.matmul %x, %w {cuvil.activation_range = array<f64: 2.0, 1.0>} : tensor<4x3xf32>, tensor<3x2xf32>
  return %y : tensor<4x2xf32>
}

// -----

func.func @runtime_weights(%x: tensor<4x3xf32>, %w: tensor<3x2xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{cannot be quantized: its weights are computed at run time}}
  %y = cuvil.matmul %x, %w {cuvil.activation_range = array<f64: 0.0, 1.0>} : tensor<4x3xf32>, tensor<3x2xf32>
  return %y : tensor<4x2xf32>
}

// -----

func.func @not_a_product(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{has cuvil.activation_range but is no matrix product or convolution}}
  %y = cuvil.relu %x {cuvil.activation_range = array<f64: 0.0, 1.0>} : tensor<4xf32>
  return %y : tensor<4xf32>
}
