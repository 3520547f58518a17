// RUN: cuvil-opt %s --cuvil-hoist-quantize --split-input-file | FileCheck %s

!a = !quant.uniform<u8:f32, 0.05:3>

// ResNet's stem: the quantize of the pooled tensor moves before the pool,
// which then pools the 8-bit values into the same type; the float pool is
// gone.
// CHECK-LABEL: func.func @stem
// CHECK-NEXT: %[[Q:.+]] = cuvil.quantize %arg0 : tensor<1x4x8x8xf32> to tensor<1x4x8x8x!quant.uniform<u8:f32, 5.000000e-02:3>>
// CHECK-NEXT: %[[P:.+]] = cuvil.max_pool2d %[[Q]] {kernel_shape = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<1x4x8x8x!quant.uniform<u8:f32, 5.000000e-02:3>>
// CHECK-NEXT: %[[D:.+]] = cuvil.dequantize %[[P]] : tensor<1x4x4x4x!quant.uniform<u8:f32, 5.000000e-02:3>>
// CHECK-NEXT: return %[[D]] : tensor<1x4x4x4xf32>
func.func @stem(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32> {
  %p = cuvil.max_pool2d %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<1x4x8x8xf32>
  %q = cuvil.quantize %p : tensor<1x4x4x4xf32> to tensor<1x4x4x4x!a>
  %d = cuvil.dequantize %q : tensor<1x4x4x4x!a>
  return %d : tensor<1x4x4x4xf32>
}

// -----

!a = !quant.uniform<u8:f32, 0.05:3>

// The pool's float result is used too (a shortcut): the pool moves all
// the same, and the float use reads its bytes dequantized.
// CHECK-LABEL: func.func @float_use
// CHECK-NEXT: %[[Q:.+]] = cuvil.quantize %arg0 : tensor<1x4x8x8xf32>
// CHECK-NEXT: %[[P:.+]] = cuvil.max_pool2d %[[Q]]
// CHECK-NEXT: %[[D:.+]] = cuvil.dequantize %[[P]]
// CHECK-NEXT: return %[[P]], %[[D]]
func.func @float_use(%x: tensor<1x4x8x8xf32>) -> (tensor<1x4x4x4x!a>, tensor<1x4x4x4xf32>) {
  %p = cuvil.max_pool2d %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x4x8x8xf32>
  %q = cuvil.quantize %p : tensor<1x4x4x4xf32> to tensor<1x4x4x4x!a>
  return %q, %p : tensor<1x4x4x4x!a>, tensor<1x4x4x4xf32>
}

// -----

!w = !quant.uniform<i8:f32:1, {0.5, 0.25}>

// Scales per channel do not order the stored integers alike: not moved.
// CHECK-LABEL: func.func @per_axis
// CHECK-NEXT: %[[P:.+]] = cuvil.max_pool2d %arg0
// CHECK-NEXT: cuvil.quantize %[[P]]
func.func @per_axis(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x2x2x!w> {
  %p = cuvil.max_pool2d %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x2x4x4xf32>
  %q = cuvil.quantize %p : tensor<1x2x2x2xf32> to tensor<1x2x2x2x!w>
  return %q : tensor<1x2x2x2x!w>
}

// -----

!a = !quant.uniform<i8:f32, 0.1:-5>
!b = !quant.uniform<u8:f32, 0.2:0>

// Two quantizes of one pool, to different types: each gets its own
// quantized pool, and the float pool goes.
// CHECK-LABEL: func.func @two_types
// CHECK-NEXT: %[[QB:.+]] = cuvil.quantize %arg0 : tensor<1x1x4x4xf32> to tensor<1x1x4x4x!quant.uniform<u8:f32, 2.000000e-01>>
// CHECK-NEXT: %[[PB:.+]] = cuvil.max_pool2d %[[QB]]
// CHECK-NEXT: %[[QA:.+]] = cuvil.quantize %arg0 : tensor<1x1x4x4xf32> to tensor<1x1x4x4x!quant.uniform<i8:f32, 1.000000e-01:-5>>
// CHECK-NEXT: %[[PA:.+]] = cuvil.max_pool2d %[[QA]]
// CHECK-NEXT: return %[[PA]], %[[PB]]
func.func @two_types(%x: tensor<1x1x4x4xf32>) -> (tensor<1x1x2x2x!a>, tensor<1x1x2x2x!b>) {
  %p = cuvil.max_pool2d %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x1x4x4xf32>
  %qa = cuvil.quantize %p : tensor<1x1x2x2xf32> to tensor<1x1x2x2x!a>
  %qb = cuvil.quantize %p : tensor<1x1x2x2xf32> to tensor<1x1x2x2x!b>
  return %qa, %qb : tensor<1x1x2x2x!a>, tensor<1x1x2x2x!b>
}
