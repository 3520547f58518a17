// RUN: cuvil-opt %s --cuvil-lower-to-level2 --cuvil-cpu-select-kernels --split-input-file | FileCheck %s

// The x86 kernel choices on the neutral lowering (cuvil-cpu-select-kernels).
// A 3x3 convolution gets patch scratch ([C * 3 * 3, OH * OW], positions
// padded to the micro-kernels' strip of 32: 36 -> 64) as a second output; a
// pointwise one does not.
// CHECK-LABEL: func.func @convs
// CHECK: %[[S:.+]] = memref.alloc() {alignment = 64 : i64} : memref<72x64xf32>
// CHECK: cuvil_l2.ukernel_call "conv2d" ins({{.*}}) outs(%{{.+}}, %[[S]] : memref<1x4x6x6xf32>, memref<72x64xf32>) params {{.*}} algorithm <im2col>
// CHECK: cuvil_l2.ukernel_call "conv2d" ins({{.*}}) outs(%{{.+}} : memref<1x4x6x6xf32>) params {
func.func @convs(%x: tensor<1x8x6x6xf32>) -> tensor<1x4x6x6xf32> {
  %w3 = cuvil.constant dense<0.5> : tensor<4x8x3x3xf32>
  %w1 = cuvil.constant dense<0.5> : tensor<4x4x1x1xf32>
  %a = cuvil.conv2d %x, %w3 {padding = array<i64: 1, 1, 1, 1>} : tensor<1x8x6x6xf32>, tensor<4x8x3x3xf32>
  %b = cuvil.conv2d %a, %w1 : tensor<1x4x6x6xf32>, tensor<4x4x1x1xf32>
  return %b : tensor<1x4x6x6xf32>
}

// -----

// A 3x3 stride-1 convolution with at least 28x28 outputs and 8 channels runs
// by Winograd F(4x4, 3x3): its scratch holds the transformed weights (36 x
// 8 x 32: output channels in strips of 32), inputs (36 x 8 x 49 tiles) and
// products (36 x 8 x 49): 37440 floats. A 14x14 one, and a strided one, keep im2col.
// CHECK-LABEL: func.func @winograd
// CHECK: %[[S:.+]] = memref.alloc() {alignment = 64 : i64} : memref<37440xf32>
// CHECK: cuvil_l2.ukernel_call "conv2d" ins({{.*}}) outs(%{{.+}}, %[[S]] : memref<1x8x28x28xf32>, memref<37440xf32>) params {{.*}} algorithm <winograd_f4x3> {cpu.algorithm_why = "3x3 stride 1 on 28x28 outputs and 8 -> 8 channels (Winograd pays from 28x28 and 8)"}
// CHECK: cuvil_l2.ukernel_call "conv2d" ins({{.*}}) outs(%{{.+}}, %{{.+}} : memref<1x8x14x14xf32>, memref<72x224xf32>) params {{.*}} algorithm <im2col>
// CHECK-NOT: winograd
// CHECK: return
func.func @winograd(%x: tensor<1x8x28x28xf32>) -> tensor<1x8x14x14xf32> {
  %w = cuvil.constant dense<0.5> : tensor<8x8x3x3xf32>
  %a = cuvil.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : tensor<1x8x28x28xf32>, tensor<8x8x3x3xf32>
  %b = cuvil.conv2d %a, %w {padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<1x8x28x28xf32>, tensor<8x8x3x3xf32>
  return %b : tensor<1x8x14x14xf32>
}

// -----

// A matrix product with static K and N of at least 16 and 32 gets scratch
// to pack B in strips of 32 columns (K x round_up(N, 32) floats): N = 40
// pads to 64. One with fewer than 8 rows of A does not.
// CHECK-LABEL: func.func @products
// CHECK: %[[S:.+]] = memref.alloc() {alignment = 64 : i64} : memref<1024xf32>
// CHECK: cuvil_l2.ukernel_call "matmul" ins({{.*}}) outs(%{{.+}}, %[[S]] : memref<2x16x40xf32>, memref<1024xf32>)
// CHECK: cuvil_l2.ukernel_call "gemm" ins({{.*}}) outs(%{{.+}}, %{{.+}} : memref<?x40xf32>, memref<1024xf32>)
// CHECK: cuvil_l2.ukernel_call "matmul" ins({{.*}}) outs(%{{.+}} : memref<4x40xf32>)
func.func @products(%a: tensor<2x16x16xf32>, %b: tensor<16x40xf32>, %c: tensor<?x16xf32>, %d: tensor<4x16xf32>) -> (tensor<2x16x40xf32>, tensor<?x40xf32>, tensor<4x40xf32>) {
  %x = cuvil.matmul %a, %b : tensor<2x16x16xf32>, tensor<16x40xf32>
  %y = cuvil.gemm %c, %b : tensor<?x16xf32>, tensor<16x40xf32>
  %z = cuvil.matmul %d, %b : tensor<4x16xf32>, tensor<16x40xf32>
  return %x, %y, %z : tensor<2x16x40xf32>, tensor<?x40xf32>, tensor<4x40xf32>
}

// -----

// A bfloat16 convolution has one kernel (its weights and scratch come from
// cuvil-cpu-pack-quantized-weights): no algorithm, no im2col scratch.
// CHECK-LABEL: func.func @bf16_conv
// CHECK-NOT: memref.alloc
// CHECK: cuvil_l2.ukernel_call "conv2d" ins({{.*}}) outs(%arg2 : memref<1x8x4x4xf32>) params {acc_type = f32, groups = 1 : i64, padding = array<i64: 1, 1, 1, 1>}{{$}}
func.func @bf16_conv(%x: tensor<1x8x4x4xbf16>) -> tensor<1x8x4x4xf32> {
  %w = cuvil.constant dense<1.0> : tensor<8x8x3x3xbf16>
  %y = cuvil.conv2d %x, %w {acc_type = f32, padding = array<i64: 1, 1, 1, 1>} : tensor<1x8x4x4xbf16>, tensor<8x8x3x3xbf16>
  return %y : tensor<1x8x4x4xf32>
}

// -----

// A float16 convolution always multiplies im2col patches, pointwise too:
// [C * KH * KW, positions in strips of 32] float16 scratch.
// CHECK-LABEL: func.func @f16_conv
// CHECK: cuvil_l2.ukernel_call "conv2d" ins(%{{.+}}, %{{.+}} : memref<1x4x6x6xf16>, memref<8x4x3x3xf16>) outs(%{{.+}}, %{{.+}} : memref<1x8x6x6xf16>, memref<36x64xf16>) params {{.*}} algorithm <im2col>
// CHECK: cuvil_l2.ukernel_call "conv2d" ins(%{{.+}}, %{{.+}} : memref<1x8x6x6xf16>, memref<2x8x1x1xf16>) outs(%{{.+}}, %{{.+}} : memref<1x2x6x6xf16>, memref<8x64xf16>) params {{.*}} algorithm <im2col>
func.func @f16_conv(%x: tensor<1x4x6x6xf16>) -> tensor<1x2x6x6xf16> {
  %w = cuvil.constant dense<0.5> : tensor<8x4x3x3xf16>
  %c = cuvil.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : tensor<1x4x6x6xf16>, tensor<8x4x3x3xf16>
  %w2 = cuvil.constant dense<0.5> : tensor<2x8x1x1xf16>
  %p = cuvil.conv2d %c, %w2 : tensor<1x8x6x6xf16>, tensor<2x8x1x1xf16>
  return %p : tensor<1x2x6x6xf16>
}
