// RUN: cuvil-opt %s --cuvil-quantize-residuals --split-input-file | FileCheck %s

!q = !quant.uniform<u8:f32, 0.05:3>
!w = !quant.uniform<i8:f32, 0.5>

// A residual block: %y is quantized for the block's first convolution and
// added, as float32, to its last one. The add reads the 8-bit tensor
// dequantized, so %y's only user is its quantize.
// CHECK-LABEL: func.func @shortcut
// CHECK: %[[Q:.+]] = cuvil.quantize %arg0
// CHECK-NEXT: %[[D:.+]] = cuvil.dequantize %[[Q]] : tensor<1x8x5x5x!quant.uniform<u8:f32, 5.000000e-02:3>>
// CHECK: %[[B:.+]] = cuvil.quantize %
// CHECK-NEXT: %[[C:.+]] = cuvil.quantized_conv2d %[[B]]
// CHECK-NEXT: %[[S:.+]] = cuvil.add %[[D]], %[[C]] : tensor<1x8x5x5xf32>, tensor<1x8x5x5xf32>
// CHECK-NEXT: cuvil.relu %[[S]]
func.func @shortcut(%y: tensor<1x8x5x5xf32>) -> tensor<1x8x5x5xf32> {
  %c = cuvil.constant dense<1> : tensor<8x8x1x1xi8>
  %w = cuvil.storage_cast %c : tensor<8x8x1x1xi8> to tensor<8x8x1x1x!w>
  %q = cuvil.quantize %y : tensor<1x8x5x5xf32> to tensor<1x8x5x5x!q>
  %a = cuvil.quantized_conv2d %q, %w : tensor<1x8x5x5x!q>, tensor<8x8x1x1x!w>
  %b = cuvil.quantize %a : tensor<1x8x5x5xf32> to tensor<1x8x5x5x!q>
  %conv = cuvil.quantized_conv2d %b, %w : tensor<1x8x5x5x!q>, tensor<8x8x1x1x!w>
  %s = cuvil.add %y, %conv : tensor<1x8x5x5xf32>, tensor<1x8x5x5xf32>
  %r = cuvil.relu %s : tensor<1x8x5x5xf32>
  return %r : tensor<1x8x5x5xf32>
}

// -----

!q = !quant.uniform<u8:f32, 0.05:3>
!w = !quant.uniform<i8:f32, 0.5>
!q16 = !quant.uniform<i16:f32, 0.05>

// Adds left alone: of a float32 convolution; of an int8 convolution whose
// result is used again; with a shortcut quantized only to 16 bits, or only
// after the add.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: cuvil.dequantize
// CHECK: return
func.func @left_alone(%y: tensor<1x8x5x5xf32>, %x: tensor<1x8x5x5x!q>, %f: tensor<8x8x1x1xf32>)
    -> (tensor<1x8x5x5xf32>, tensor<1x8x5x5xf32>, tensor<1x8x5x5xf32>, tensor<1x8x5x5xf32>, tensor<1x8x5x5xf32>, tensor<1x8x5x5x!q16>, tensor<1x8x5x5x!q>) {
  %c = cuvil.constant dense<1> : tensor<8x8x1x1xi8>
  %w = cuvil.storage_cast %c : tensor<8x8x1x1xi8> to tensor<8x8x1x1x!w>
  %q16 = cuvil.quantize %y : tensor<1x8x5x5xf32> to tensor<1x8x5x5x!q16>
  %fc = cuvil.conv2d %y, %f : tensor<1x8x5x5xf32>, tensor<8x8x1x1xf32>
  %s1 = cuvil.add %fc, %y : tensor<1x8x5x5xf32>, tensor<1x8x5x5xf32>
  %twice = cuvil.quantized_conv2d %x, %w : tensor<1x8x5x5x!q>, tensor<8x8x1x1x!w>
  %s2 = cuvil.add %twice, %y : tensor<1x8x5x5xf32>, tensor<1x8x5x5xf32>
  %once = cuvil.quantized_conv2d %x, %w : tensor<1x8x5x5x!q>, tensor<8x8x1x1x!w>
  %s3 = cuvil.add %once, %y : tensor<1x8x5x5xf32>, tensor<1x8x5x5xf32>
  %q8 = cuvil.quantize %y : tensor<1x8x5x5xf32> to tensor<1x8x5x5x!q>
  return %s1, %s2, %twice, %s3, %fc, %q16, %q8 : tensor<1x8x5x5xf32>, tensor<1x8x5x5xf32>, tensor<1x8x5x5xf32>, tensor<1x8x5x5xf32>, tensor<1x8x5x5xf32>, tensor<1x8x5x5x!q16>, tensor<1x8x5x5x!q>
}
