// The quantization ops' verifier errors.
// RUN: cuvil-opt %s -split-input-file -verify-diagnostics

func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{'cuvil.quantize' op changes the shape from 'tensor<4xf32>' to 'tensor<2x!quant.uniform<i8:f32, 1.000000e-01>>'; it only converts elements}}
  %0 = cuvil.quantize %x : tensor<4xf32> to tensor<2x!quant.uniform<i8:f32, 0.1>>
  return
}

// -----

func.func @f(%x: tensor<4xf16>) {
  // expected-error @+1 {{'cuvil.quantize' op converts between 'f16' and '!quant.uniform<i8:f32, 1.000000e-01>', which expresses 'f32'}}
  %0 = cuvil.quantize %x : tensor<4xf16> to tensor<4x!quant.uniform<i8:f32, 0.1>>
  return
}

// -----

func.func @f(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'cuvil.quantize' op result type 'tensor<2x3x!quant.uniform<i8:f32:1, {1.000000e-01,2.000000e-01}>>' has 2 scales for the 3 indices of axis 1}}
  %0 = cuvil.quantize %x : tensor<2x3xf32> to tensor<2x3x!quant.uniform<i8:f32:1, {0.1, 0.2}>>
  return
}

// -----

func.func @f(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'cuvil.quantize' op result type 'tensor<2x3x!quant.uniform<i8:f32:2, {1.000000e-01,2.000000e-01}>>' quantizes along axis 2 of a rank-2 tensor}}
  %0 = cuvil.quantize %x : tensor<2x3xf32> to tensor<2x3x!quant.uniform<i8:f32:2, {0.1, 0.2}>>
  return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{stores 4-bit integers; Cuvil quantizes to 8, 16 or 32 bits}}
  %0 = cuvil.quantize %x : tensor<4xf32> to tensor<4x!quant.uniform<i4:f32, 0.1>>
  return
}

// -----

func.func @f(%x: tensor<4xi8>) {
  // expected-error @+1 {{'cuvil.storage_cast' op casts '!quant.uniform<u8:f32, 1.000000e-01>', stored as 'ui8', to or from 'i8'}}
  %0 = cuvil.storage_cast %x : tensor<4xi8> to tensor<4x!quant.uniform<u8:f32, 0.1>>
  return
}

// -----

func.func @f(%x: tensor<4xi8>) {
  // expected-error @+1 {{'cuvil.storage_cast' op casts 'tensor<4xi8>' to 'tensor<4xi8>'; one side must be quantized and the other its storage}}
  %0 = cuvil.storage_cast %x : tensor<4xi8> to tensor<4xi8>
  return
}

// -----

func.func @f(%x: tensor<4x!quant.uniform<i8:f32, 0.1>>) {
  // expected-error @+1 {{'cuvil.requantize' op converts between 'f32' and '!quant.uniform<i8:f16, 1.000000e-01>', which expresses 'f16'}}
  %0 = cuvil.requantize %x : tensor<4x!quant.uniform<i8:f32, 0.1>> to tensor<4x!quant.uniform<i8:f16, 0.1>>
  return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  // Operands of other ops are never quantized.
  %q = cuvil.quantize %x : tensor<4xf32> to tensor<4x!quant.uniform<i8:f32, 0.1>>
  // expected-error @+1 {{'cuvil.relu' op operand #0 must be ranked tensor of}}
  %0 = cuvil.relu %q : tensor<4x!quant.uniform<i8:f32, 0.1>>
  return
}

// -----

func.func @f(%a: tensor<2x3x!quant.uniform<u8:f32, 0.1:128>>, %w: tensor<3x4x!quant.uniform<i8:f32, 0.5:1>>) {
  // expected-error @+1 {{'cuvil.quantized_matmul' op of 'tensor<2x3x!quant.uniform<u8:f32, 1.000000e-01:128>>' and 'tensor<3x4x!quant.uniform<i8:f32, 5.000000e-01:1>>': its rhs must be symmetric (zero point 0)}}
  %0 = cuvil.quantized_matmul %a, %w : tensor<2x3x!quant.uniform<u8:f32, 0.1:128>>, tensor<3x4x!quant.uniform<i8:f32, 0.5:1>>
  return
}

// -----

func.func @f(%a: tensor<2x3x!quant.uniform<u8:f32, 0.1:128>>, %w: tensor<5x4x!quant.uniform<i8:f32, 0.5>>) {
  // expected-error @+1 {{its contracting dimensions must be static and equal}}
  %0 = cuvil.quantized_matmul %a, %w : tensor<2x3x!quant.uniform<u8:f32, 0.1:128>>, tensor<5x4x!quant.uniform<i8:f32, 0.5>>
  return
}

// -----

func.func @f(%a: tensor<2x3x!quant.uniform<i16:f32, 0.1>>, %w: tensor<3x4x!quant.uniform<i8:f32, 0.5>>) {
  // expected-error @+1 {{its lhs must be quantized per tensor to 8 bits}}
  %0 = cuvil.quantized_matmul %a, %w : tensor<2x3x!quant.uniform<i16:f32, 0.1>>, tensor<3x4x!quant.uniform<i8:f32, 0.5>>
  return
}

// -----

func.func @f(%a: tensor<2x3x!quant.uniform<u8:f32, 0.1>>, %w: tensor<3x4x!quant.uniform<i8:f32:0, {0.5, 0.5, 0.5}>>) {
  // expected-error @+1 {{its rhs must be quantized per tensor or per column (axis 1)}}
  %0 = cuvil.quantized_matmul %a, %w : tensor<2x3x!quant.uniform<u8:f32, 0.1>>, tensor<3x4x!quant.uniform<i8:f32:0, {0.5, 0.5, 0.5}>>
  return
}

// -----

func.func @f(%x: tensor<?x3xf32>) {
  // expected-error @+1 {{quantizes along axis 0, which is dynamic: its scales need a static size}}
  %0 = cuvil.quantize %x : tensor<?x3xf32> to tensor<?x3x!quant.uniform<i8:f32:0, {0.1, 0.2}>>
  return
}

// -----

func.func @f(%x: tensor<1x16384x5x5x!quant.uniform<u8:f32, 0.1>>, %w: tensor<4x8192x3x3x!quant.uniform<i8:f32, 0.5>>) {
  // expected-error @+1 {{C/G * KH * KW must be at most 65536 (its sums are exact in int32)}}
  %0 = cuvil.quantized_conv2d %x, %w {groups = 2 : i64} : tensor<1x16384x5x5x!quant.uniform<u8:f32, 0.1>>, tensor<4x8192x3x3x!quant.uniform<i8:f32, 0.5>>
  return
}

// -----

func.func @f(%x: tensor<1x4x30x30x!quant.uniform<u8:f32, 0.1>>, %w: tensor<4x1x23x23x!quant.uniform<i8:f32, 0.5>>) {
  // expected-error @+1 {{its depthwise window must have at most 512 taps (so that float32 sums of its products are exact)}}
  %0 = cuvil.quantized_conv2d %x, %w {groups = 4 : i64} : tensor<1x4x30x30x!quant.uniform<u8:f32, 0.1>>, tensor<4x1x23x23x!quant.uniform<i8:f32, 0.5>>
  return
}

// -----

func.func @f(%x: tensor<1x2x5x5x!quant.uniform<u8:f32, 0.1>>, %w: tensor<4x2x3x3x!quant.uniform<i8:f32:1, {0.5, 0.5}>>) {
  // expected-error @+1 {{its weights must be quantized per tensor or along axis 0}}
  %0 = cuvil.quantized_conv2d %x, %w : tensor<1x2x5x5x!quant.uniform<u8:f32, 0.1>>, tensor<4x2x3x3x!quant.uniform<i8:f32:1, {0.5, 0.5}>>
  return
}

// -----

func.func @f(%x: tensor<1x2x5x5x!quant.uniform<u8:f32, 0.1>>, %w: tensor<4x2x3x3x!quant.uniform<i8:f32, 0.5>>, %b: tensor<3xf32>) {
  // expected-error @+1 {{expects a bias of shape 4, got tensor<3xf32>}}
  %0 = cuvil.quantized_conv2d %x, %w, %b : tensor<1x2x5x5x!quant.uniform<u8:f32, 0.1>>, tensor<4x2x3x3x!quant.uniform<i8:f32, 0.5>>, tensor<3xf32>
  return
}

// -----

// Max pooling takes quantized values per tensor only.
func.func @f(%x: tensor<1x2x4x4x!quant.uniform<i8:f32:1, {0.5, 0.25}>>) {
  // expected-error @+1 {{'cuvil.max_pool2d' op pools quantized values of one scale only (per tensor), got 'tensor<1x2x4x4x!quant.uniform<i8:f32:1, {5.000000e-01,2.500000e-01}>>'}}
  %0 = cuvil.max_pool2d %x {kernel_shape = array<i64: 2, 2>} : tensor<1x2x4x4x!quant.uniform<i8:f32:1, {0.5, 0.25}>>
  return
}

// -----

// Averages of quantized values would round: average pooling is float only.
func.func @f(%x: tensor<1x1x4x4x!quant.uniform<u8:f32, 0.1:3>>) {
  // expected-error @+1 {{'cuvil.avg_pool2d' op operand #0 must be ranked tensor of}}
  %0 = cuvil.avg_pool2d %x {kernel_shape = array<i64: 2, 2>} : tensor<1x1x4x4x!quant.uniform<u8:f32, 0.1:3>>
  return
}
