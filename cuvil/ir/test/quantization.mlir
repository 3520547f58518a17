// The quantization ops: round trip (per tensor, per axis, unsigned and
// 32-bit storage, a power-of-two scale as fixed point), inferred
// dequantize types, and storage casts that cancel.
// RUN: cuvil-opt %s | cuvil-opt | FileCheck %s
// RUN: cuvil-opt %s --mlir-print-op-generic | cuvil-opt | FileCheck %s
// RUN: cuvil-opt %s --canonicalize | FileCheck %s --check-prefix=FOLD

!i8 = !quant.uniform<i8:f32, 0.05:-3>
!u8 = !quant.uniform<u8:f32, 0.1:128>
!axis = !quant.uniform<i8:f32:0, {0.5, 0.25:1}>
!acc = !quant.uniform<i32:f32, 0.001>
!fixed = !quant.uniform<i16:f32, 0.00390625>

// CHECK-LABEL: func.func @per_tensor
func.func @per_tensor(%x: tensor<?x16xf32>) -> tensor<?x16xf32> {
  // CHECK: %[[Q:.+]] = cuvil.quantize %{{.+}} : tensor<?x16xf32> to tensor<?x16x!quant.uniform<i8:f32, 5.000000e-02:-3>>
  %q = cuvil.quantize %x : tensor<?x16xf32> to tensor<?x16x!i8>
  // CHECK: %[[R:.+]] = cuvil.requantize %[[Q]] : tensor<?x16x!quant.uniform<i8:f32, 5.000000e-02:-3>> to tensor<?x16x!quant.uniform<u8:f32, 1.000000e-01:128>>
  %r = cuvil.requantize %q : tensor<?x16x!i8> to tensor<?x16x!u8>
  // CHECK: cuvil.dequantize %[[R]] : tensor<?x16x!quant.uniform<u8:f32, 1.000000e-01:128>>
  %y = cuvil.dequantize %r : tensor<?x16x!u8>
  return %y : tensor<?x16xf32>
}

// CHECK-LABEL: func.func @per_axis_weights
func.func @per_axis_weights(%w: tensor<2x3xi8>) -> tensor<2x3xf32> {
  // CHECK: cuvil.storage_cast %{{.+}} : tensor<2x3xi8> to tensor<2x3x!quant.uniform<i8:f32:0, {5.000000e-01,2.500000e-01:1}>>
  %q = cuvil.storage_cast %w : tensor<2x3xi8> to tensor<2x3x!axis>
  %y = cuvil.dequantize %q : tensor<2x3x!axis>
  return %y : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @accumulator_and_fixed_point
func.func @accumulator_and_fixed_point(%a: tensor<8xi32>, %x: tensor<8xf32>)
    -> (tensor<8xf32>, tensor<8xi16>) {
  %q = cuvil.storage_cast %a : tensor<8xi32> to tensor<8x!acc>
  %y = cuvil.dequantize %q : tensor<8x!acc>
  // CHECK: cuvil.quantize %{{.+}} : tensor<8xf32> to tensor<8x!quant.uniform<i16:f32, 3.906250e-03>>
  %f = cuvil.quantize %x : tensor<8xf32> to tensor<8x!fixed>
  %s = cuvil.storage_cast %f : tensor<8x!fixed> to tensor<8xi16>
  return %y, %s : tensor<8xf32>, tensor<8xi16>
}

// An integer product: [batch, S, K] rows against [K, N] per column.
// CHECK-LABEL: func.func @integer_product
func.func @integer_product(%a: tensor<?x5x2x!i8>, %w: tensor<2x3xi8>) -> tensor<?x5x3xf32> {
  %wq = cuvil.storage_cast %w : tensor<2x3xi8> to tensor<2x3x!quant.uniform<i8:f32:1, {0.5, 0.25, 0.125}>>
  // CHECK: cuvil.quantized_matmul %{{.+}}, %{{.+}} : tensor<?x5x2x!quant.uniform<i8:f32, 5.000000e-02:-3>>, tensor<2x3x!quant.uniform<i8:f32:1, {5.000000e-01,2.500000e-01,1.250000e-01}>>
  %y = cuvil.quantized_matmul %a, %wq : tensor<?x5x2x!i8>, tensor<2x3x!quant.uniform<i8:f32:1, {0.5, 0.25, 0.125}>>
  return %y : tensor<?x5x3xf32>
}

// An integer convolution: NCHW uint8 input, OIHW int8 weights per output
// channel, a float bias; the result is float NCHW.
// CHECK-LABEL: func.func @integer_convolution
func.func @integer_convolution(%x: tensor<?x2x5x5x!quant.uniform<u8:f32, 0.02:128>>, %w: tensor<3x2x3x3xi8>, %b: tensor<3xf32>) -> tensor<?x3x3x3xf32> {
  %wq = cuvil.storage_cast %w : tensor<3x2x3x3xi8> to tensor<3x2x3x3x!quant.uniform<i8:f32:0, {0.5, 0.25, 0.125}>>
  // CHECK: cuvil.quantized_conv2d %{{.+}}, %{{.+}}, %{{.+}} {padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<?x2x5x5x!quant.uniform<u8:f32, 2.000000e-02:128>>, tensor<3x2x3x3x!quant.uniform<i8:f32:0, {5.000000e-01,2.500000e-01,1.250000e-01}>>, tensor<3xf32>
  %y = cuvil.quantized_conv2d %x, %wq, %b {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<?x2x5x5x!quant.uniform<u8:f32, 0.02:128>>, tensor<3x2x3x3x!quant.uniform<i8:f32:0, {0.5, 0.25, 0.125}>>, tensor<3xf32>
  return %y : tensor<?x3x3x3xf32>
}

// An integer tensor cast to a quantized type and back is itself.
// FOLD-LABEL: func.func @casts_cancel
func.func @casts_cancel(%x: tensor<4xi8>) -> tensor<4xi8> {
  // FOLD-NEXT: return %arg0
  %q = cuvil.storage_cast %x : tensor<4xi8> to tensor<4x!i8>
  %y = cuvil.storage_cast %q : tensor<4x!i8> to tensor<4xi8>
  return %y : tensor<4xi8>
}
