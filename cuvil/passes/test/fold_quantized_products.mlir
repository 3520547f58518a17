// RUN: cuvil-opt %s --cuvil-fold-quantized-products --canonicalize --split-input-file -verify-diagnostics | FileCheck %s

!a = !quant.uniform<u8:f32, 0.05:120>
!w = !quant.uniform<i8:f32:1, {0.5, 0.25}>

// A QDQ linear layer: the activation and the weights' dequantizes fold into
// one integer product; they and the float matmul are gone.
// CHECK-LABEL: func.func @linear
// CHECK: %[[Q:.+]] = cuvil.quantize %arg0
// CHECK: %[[W:.+]] = cuvil.storage_cast
// CHECK: %[[Y:.+]] = cuvil.quantized_matmul %[[Q]], %[[W]] : tensor<?x3x!quant.uniform<u8:f32, 5.000000e-02:120>>, tensor<3x2x!quant.uniform<i8:f32:1, {5.000000e-01,2.500000e-01}>>
// CHECK-NEXT: return %[[Y]] : tensor<?x2xf32>
// CHECK-NOT: dequantize
func.func @linear(%x: tensor<?x3xf32>) -> tensor<?x2xf32> {
  %q = cuvil.quantize %x : tensor<?x3xf32> to tensor<?x3x!a>
  %xd = cuvil.dequantize %q : tensor<?x3x!a>
  %c = cuvil.constant dense<[[1, -2], [3, 4], [-5, 6]]> : tensor<3x2xi8>
  %wq = cuvil.storage_cast %c : tensor<3x2xi8> to tensor<3x2x!w>
  %wd = cuvil.dequantize %wq : tensor<3x2x!w>
  %y = cuvil.matmul %xd, %wd : tensor<?x3xf32>, tensor<3x2xf32>
  return %y : tensor<?x2xf32>
}

// -----

// Asymmetric weights have no integer product: float32, with a warning.
// CHECK-LABEL: func.func @asymmetric
// CHECK: cuvil.matmul
// CHECK-NOT: quantized_matmul
func.func @asymmetric(%x: tensor<2x3xf32>) -> tensor<2x2xf32> {
  %q = cuvil.quantize %x : tensor<2x3xf32> to tensor<2x3x!quant.uniform<u8:f32, 0.05:120>>
  %xd = cuvil.dequantize %q : tensor<2x3x!quant.uniform<u8:f32, 0.05:120>>
  %c = cuvil.constant dense<1> : tensor<3x2xi8>
  %wq = cuvil.storage_cast %c : tensor<3x2xi8> to tensor<3x2x!quant.uniform<i8:f32, 0.5:3>>
  %wd = cuvil.dequantize %wq : tensor<3x2x!quant.uniform<i8:f32, 0.5:3>>
  // expected-warning @+1 {{runs in float32 on dequantized values: an integer product needs 8-bit activations per tensor and symmetric int8 weights [K, N] per tensor or per column, but its rhs must be symmetric (zero point 0)}}
  %y = cuvil.matmul %xd, %wd : tensor<2x3xf32>, tensor<3x2xf32>
  return %y : tensor<2x2xf32>
}

// -----

// Weights computed at run time stay float32 too.
func.func @computed(%x: tensor<2x3xf32>, %w: tensor<3x2xi8>) -> tensor<2x2xf32> {
  %q = cuvil.quantize %x : tensor<2x3xf32> to tensor<2x3x!quant.uniform<u8:f32, 0.05:120>>
  %xd = cuvil.dequantize %q : tensor<2x3x!quant.uniform<u8:f32, 0.05:120>>
  %wq = cuvil.storage_cast %w : tensor<3x2xi8> to tensor<3x2x!quant.uniform<i8:f32, 0.5>>
  %wd = cuvil.dequantize %wq : tensor<3x2x!quant.uniform<i8:f32, 0.5>>
  // expected-warning @+1 {{but its weights are computed at run time}}
  %y = cuvil.matmul %xd, %wd : tensor<2x3xf32>, tensor<3x2xf32>
  return %y : tensor<2x2xf32>
}

// -----

// A float operand: nothing to fold, and nothing to say.
// CHECK-LABEL: func.func @float_lhs
// CHECK: cuvil.matmul
func.func @float_lhs(%x: tensor<2x3xf32>) -> tensor<2x2xf32> {
  %c = cuvil.constant dense<1> : tensor<3x2xi8>
  %wq = cuvil.storage_cast %c : tensor<3x2xi8> to tensor<3x2x!quant.uniform<i8:f32, 0.5>>
  %wd = cuvil.dequantize %wq : tensor<3x2x!quant.uniform<i8:f32, 0.5>>
  %y = cuvil.matmul %x, %wd : tensor<2x3xf32>, tensor<3x2xf32>
  return %y : tensor<2x2xf32>
}

// -----

// nn.Linear in a QDQ model: a gemm with trans_b, int8 weights [N, K] per
// output channel (axis 0) and a bias. The weights are transposed to [K, N]
// with the channel axis 1; the bias is added after the integer product.
// CHECK-LABEL: func.func @linear_gemm
// CHECK-DAG: %[[WT:.+]] = cuvil.constant dense_resource<qweights_t> : tensor<3x2xi8>
// CHECK-DAG: %[[Q:.+]] = cuvil.quantize %arg0
// CHECK: %[[W:.+]] = cuvil.storage_cast %[[WT]] : tensor<3x2xi8> to tensor<3x2x!quant.uniform<i8:f32:1, {5.000000e-01,2.500000e-01}>>
// CHECK: %[[Y:.+]] = cuvil.quantized_matmul %[[Q]], %[[W]]
// CHECK: %[[R:.+]] = cuvil.add %[[Y]], %{{.+}} : tensor<?x2xf32>, tensor<2xf32>
// CHECK-NEXT: return %[[R]]
// CHECK-NOT: cuvil.gemm
// CHECK: qweights_t: "0x40000000010203FB0406"
func.func @linear_gemm(%x: tensor<?x3xf32>) -> tensor<?x2xf32> {
  %q = cuvil.quantize %x : tensor<?x3xf32> to tensor<?x3x!quant.uniform<u8:f32, 0.05:120>>
  %xd = cuvil.dequantize %q : tensor<?x3x!quant.uniform<u8:f32, 0.05:120>>
  %c = cuvil.constant dense<[[1, 3, 4], [2, -5, 6]]> : tensor<2x3xi8>
  %wq = cuvil.storage_cast %c : tensor<2x3xi8> to tensor<2x3x!quant.uniform<i8:f32:0, {0.5, 0.25}>>
  %wd = cuvil.dequantize %wq : tensor<2x3x!quant.uniform<i8:f32:0, {0.5, 0.25}>>
  %b = cuvil.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %y = cuvil.gemm %xd, %wd, %b {trans_b} : tensor<?x3xf32>, tensor<2x3xf32>, tensor<2xf32>
  return %y : tensor<?x2xf32>
}

// -----

// A scaled gemm (alpha) keeps its float32 product, with the reason.
// CHECK-LABEL: func.func @scaled_gemm
// CHECK: cuvil.gemm
// CHECK-NOT: quantized_matmul
func.func @scaled_gemm(%x: tensor<2x3xf32>) -> tensor<2x2xf32> {
  %q = cuvil.quantize %x : tensor<2x3xf32> to tensor<2x3x!quant.uniform<u8:f32, 0.05:120>>
  %xd = cuvil.dequantize %q : tensor<2x3x!quant.uniform<u8:f32, 0.05:120>>
  %c = cuvil.constant dense<1> : tensor<3x2xi8>
  %wq = cuvil.storage_cast %c : tensor<3x2xi8> to tensor<3x2x!quant.uniform<i8:f32, 0.5>>
  %wd = cuvil.dequantize %wq : tensor<3x2x!quant.uniform<i8:f32, 0.5>>
  // expected-warning @+1 {{runs in float32 on dequantized values: an integer product needs 8-bit activations per tensor and symmetric int8 weights [K, N] per tensor or per column, but it scales the product or the bias (alpha, beta)}}
  %y = cuvil.gemm %xd, %wd {alpha = 2.0 : f64} : tensor<2x3xf32>, tensor<3x2xf32>
  return %y : tensor<2x2xf32>
}

// -----

// A QDQ convolution: uint8 input, int8 OIHW weights per output channel and a
// float bias become one integer convolution with the same attributes.
// CHECK-LABEL: func.func @conv
// CHECK: %[[Y:.+]] = cuvil.quantized_conv2d %{{.+}}, %{{.+}}, %{{.+}} {padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<1x2x5x5x!quant.uniform<u8:f32, 5.000000e-02:120>>, tensor<3x2x3x3x!quant.uniform<i8:f32:0, {5.000000e-01,2.500000e-01,1.250000e-01}>>, tensor<3xf32>
// CHECK-NEXT: return %[[Y]]
func.func @conv(%x: tensor<1x2x5x5xf32>) -> tensor<1x3x3x3xf32> {
  %q = cuvil.quantize %x : tensor<1x2x5x5xf32> to tensor<1x2x5x5x!quant.uniform<u8:f32, 0.05:120>>
  %xd = cuvil.dequantize %q : tensor<1x2x5x5x!quant.uniform<u8:f32, 0.05:120>>
  %c = cuvil.constant dense<1> : tensor<3x2x3x3xi8>
  %wq = cuvil.storage_cast %c : tensor<3x2x3x3xi8> to tensor<3x2x3x3x!quant.uniform<i8:f32:0, {0.5, 0.25, 0.125}>>
  %wd = cuvil.dequantize %wq : tensor<3x2x3x3x!quant.uniform<i8:f32:0, {0.5, 0.25, 0.125}>>
  %b = cuvil.constant dense<[0.5, -1.0, 2.0]> : tensor<3xf32>
  %y = cuvil.conv2d %xd, %wd, %b {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>, tensor<3xf32>
  return %y : tensor<1x3x3x3xf32>
}

// -----

// A depthwise QDQ convolution becomes an integer one.
// CHECK-LABEL: func.func @depthwise
// CHECK: %[[Q:.+]] = cuvil.quantize
// CHECK: %[[W:.+]] = cuvil.storage_cast
// CHECK: cuvil.quantized_conv2d %[[Q]], %[[W]] {groups = 2 : i64}
// CHECK-NOT: cuvil.conv2d
func.func @depthwise(%x: tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32> {
  %q = cuvil.quantize %x : tensor<1x2x5x5xf32> to tensor<1x2x5x5x!quant.uniform<u8:f32, 0.05:120>>
  %xd = cuvil.dequantize %q : tensor<1x2x5x5x!quant.uniform<u8:f32, 0.05:120>>
  %c = cuvil.constant dense<1> : tensor<2x1x3x3xi8>
  %wq = cuvil.storage_cast %c : tensor<2x1x3x3xi8> to tensor<2x1x3x3x!quant.uniform<i8:f32, 0.5>>
  %wd = cuvil.dequantize %wq : tensor<2x1x3x3x!quant.uniform<i8:f32, 0.5>>
  %y = cuvil.conv2d %xd, %wd {groups = 2 : i64} : tensor<1x2x5x5xf32>, tensor<2x1x3x3xf32>
  return %y : tensor<1x2x3x3xf32>
}

// -----

// A grouped one with two channels per group folds as well.
// CHECK-LABEL: func.func @grouped
// CHECK: cuvil.quantized_conv2d %{{.+}}, %{{.+}} {groups = 2 : i64}
// CHECK-NOT: cuvil.conv2d
func.func @grouped(%x: tensor<1x4x5x5xf32>) -> tensor<1x4x3x3xf32> {
  %q = cuvil.quantize %x : tensor<1x4x5x5xf32> to tensor<1x4x5x5x!quant.uniform<u8:f32, 0.05:120>>
  %xd = cuvil.dequantize %q : tensor<1x4x5x5x!quant.uniform<u8:f32, 0.05:120>>
  %c = cuvil.constant dense<1> : tensor<4x2x3x3xi8>
  %wq = cuvil.storage_cast %c : tensor<4x2x3x3xi8> to tensor<4x2x3x3x!quant.uniform<i8:f32, 0.5>>
  %wd = cuvil.dequantize %wq : tensor<4x2x3x3x!quant.uniform<i8:f32, 0.5>>
  %y = cuvil.conv2d %xd, %wd {groups = 2 : i64} : tensor<1x4x5x5xf32>, tensor<4x2x3x3xf32>
  return %y : tensor<1x4x3x3xf32>
}
