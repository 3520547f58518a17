// RUN: cuvil-opt %s --cuvil-lower-to-level2 --cuvil-cpu-fuse-conv-input-casts --split-input-file | FileCheck %s

// A bfloat16 convolution reads the float32 its input cast read (its kernel
// rounds as the cast does); the cast and its buffer are gone.
// CHECK-LABEL: func.func @fused
// CHECK-NOT: memref.alloc
// CHECK-NOT: "cast"
// CHECK: cuvil_l2.ukernel_call "conv2d" ins(%arg1, %{{.+}}, %{{.+}} : memref<1x2x4x4xf32>, memref<1x2x1x1xbf16>, memref<1xf32>) outs(%arg2 : memref<1x1x4x4xf32>) params {acc_type = f32
func.func @fused(%x: tensor<1x2x4x4xf32>) -> tensor<1x1x4x4xf32> {
  %w = cuvil.constant dense<1.0> : tensor<1x2x1x1xbf16>
  %b = cuvil.constant dense<0.5> : tensor<1xf32>
  %xb = cuvil.cast %x : tensor<1x2x4x4xf32> to tensor<1x2x4x4xbf16>
  %y = cuvil.conv2d %xb, %w, %b {acc_type = f32} : tensor<1x2x4x4xbf16>, tensor<1x2x1x1xbf16>, tensor<1xf32>
  return %y : tensor<1x1x4x4xf32>
}

// -----

// A cast something else reads stays, for that reader only.
// CHECK-LABEL: func.func @shared
// CHECK: %[[B:.+]] = memref.alloc() {{.*}} : memref<1x2x4x4xbf16>
// CHECK: cuvil_l2.ukernel_call "cast" ins(%arg1 : memref<1x2x4x4xf32>) outs(%[[B]] : memref<1x2x4x4xbf16>)
// CHECK: cuvil_l2.ukernel_call "conv2d" ins(%arg1, %{{.+}} : memref<1x2x4x4xf32>, memref<1x2x1x1xbf16>)
// CHECK: cuvil_l2.ukernel_call "relu" ins(%[[B]] : memref<1x2x4x4xbf16>)
func.func @shared(%x: tensor<1x2x4x4xf32>) -> (tensor<1x1x4x4xf32>, tensor<1x2x4x4xbf16>) {
  %w = cuvil.constant dense<1.0> : tensor<1x2x1x1xbf16>
  %xb = cuvil.cast %x : tensor<1x2x4x4xf32> to tensor<1x2x4x4xbf16>
  %y = cuvil.conv2d %xb, %w {acc_type = f32} : tensor<1x2x4x4xbf16>, tensor<1x2x1x1xbf16>
  %r = cuvil.relu %xb : tensor<1x2x4x4xbf16>
  return %y, %r : tensor<1x1x4x4xf32>, tensor<1x2x4x4xbf16>
}

// -----

// A bfloat16 input (a model's) has no cast to fuse; nor does a float32
// convolution's.
// CHECK-LABEL: func.func @untouched
// CHECK: cuvil_l2.ukernel_call "conv2d" ins(%arg1, %{{.+}} : memref<1x2x4x4xbf16>, memref<1x2x1x1xbf16>)
// CHECK: cuvil_l2.ukernel_call "cast"
// CHECK: cuvil_l2.ukernel_call "conv2d" ins(%{{.+}}, %{{.+}} : memref<1x2x4x4xf32>, memref<1x2x1x1xf32>)
func.func @untouched(%x: tensor<1x2x4x4xbf16>) -> (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) {
  %w = cuvil.constant dense<1.0> : tensor<1x2x1x1xbf16>
  %y = cuvil.conv2d %x, %w {acc_type = f32} : tensor<1x2x4x4xbf16>, tensor<1x2x1x1xbf16>
  %wf = cuvil.constant dense<1.0> : tensor<1x2x1x1xf32>
  %xf = cuvil.cast %x : tensor<1x2x4x4xbf16> to tensor<1x2x4x4xf32>
  %z = cuvil.conv2d %xf, %wf : tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>
  return %y, %z : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>
}
