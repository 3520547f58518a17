// RUN: cuvil-opt %s --cuvil-mark-sample-parallel --split-input-file | FileCheck %s
// RUN: cuvil-opt %s --cuvil-mark-sample-parallel=mode=on --split-input-file | FileCheck %s --check-prefix=ON
// RUN: cuvil-opt %s --cuvil-mark-sample-parallel=mode=off --split-input-file | FileCheck %s --check-prefix=OFF
// RUN: cuvil-opt %s --cuvil-mark-sample-parallel=min-reuse=64 --split-input-file | FileCheck %s --check-prefix=HIGH

// A small CNN: convolution (16 * 8 * 8 outputs of 3 * 3 * 3 taps = 27,648
// multiply-adds per image over 1,728 weight bytes: 16 per byte), pooling,
// a linear layer (10 * 16 over 640 bytes). Separable, with products:
// auto marks it (the default asks for 0.1 per byte); asked for 64 per
// byte, auto leaves it.
// CHECK-LABEL: func.func @cnn
// CHECK-SAME: attributes {cuvil.sample_parallel}
// HIGH-LABEL: func.func @cnn
// HIGH-NOT: cuvil.sample_parallel
// ON-LABEL: func.func @cnn
// ON-SAME: attributes {cuvil.sample_parallel}
// OFF-NOT: cuvil.sample_parallel
module attributes {cuvil.max_batch = 8 : i64} {
func.func @cnn(%x: tensor<?x3x8x8xf32>) -> tensor<?x10xf32> {
  %w = cuvil.constant dense<0.5> : tensor<16x3x3x3xf32>
  %b = cuvil.constant dense<0.1> : tensor<16xf32>
  %fc = cuvil.constant dense<0.25> : tensor<16x10xf32>
  %c = cuvil.conv2d %x, %w, %b {padding = array<i64: 1, 1, 1, 1>} : tensor<?x3x8x8xf32>, tensor<16x3x3x3xf32>, tensor<16xf32>
  %r = cuvil.relu %c : tensor<?x16x8x8xf32>
  %p = cuvil.global_avg_pool %r : tensor<?x16x8x8xf32>
  %f = cuvil.flatten %p {axis = 1} : tensor<?x16x1x1xf32>
  %y = cuvil.matmul %f, %fc : tensor<?x16xf32>, tensor<16x10xf32>
  %s = cuvil.softmax %y, axis = 1 : tensor<?x10xf32>
  return %s : tensor<?x10xf32>
}
}

// -----

// 64 output channels of 3 * 3 * 64 taps on a 16 x 16 image reuse each
// weight byte 64 times per image: auto marks it, even asked for 64.
// CHECK-LABEL: func.func @wide_conv
// CHECK-SAME: attributes {cuvil.sample_parallel}
// HIGH-LABEL: func.func @wide_conv
// HIGH-SAME: attributes {cuvil.sample_parallel}
module attributes {cuvil.max_batch = 4 : i64} {
func.func @wide_conv(%x: tensor<?x64x16x16xf32>) -> tensor<?x64x16x16xf32> {
  %w = cuvil.constant dense<0.5> : tensor<64x64x3x3xf32>
  %c = cuvil.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : tensor<?x64x16x16xf32>, tensor<64x64x3x3xf32>
  return %c : tensor<?x64x16x16xf32>
}
}

// -----

// Weights from a static input: separable; 9 multiply-adds per weight
// byte, so auto marks it (not when asked for 64).
// CHECK-LABEL: func.func @batch_weights
// CHECK-SAME: attributes {cuvil.sample_parallel}
// HIGH-LABEL: func.func @batch_weights
// HIGH-NOT: cuvil.sample_parallel
// HIGH: cuvil.conv2d
module attributes {cuvil.max_batch = 8 : i64} {
func.func @batch_weights(%x: tensor<?x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<?x4x6x6xf32> {
  %c = cuvil.conv2d %x, %w : tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>
  return %c : tensor<?x4x6x6xf32>
}
}
// ON-LABEL: func.func @batch_weights
// ON-SAME: attributes {cuvil.sample_parallel}

// -----

// Attention over each sample's rows: both operands are batched, and no
// weights are read again by every chunk.
// CHECK-LABEL: func.func @attention
// CHECK-SAME: attributes {cuvil.sample_parallel}
// ON-LABEL: func.func @attention
// ON-SAME: attributes {cuvil.sample_parallel}
module attributes {cuvil.max_batch = 8 : i64} {
func.func @attention(%q: tensor<?x4x16xf32>, %k: tensor<?x16x4xf32>) -> tensor<?x4x4xf32> {
  %s = cuvil.matmul %q, %k : tensor<?x4x16xf32>, tensor<?x16x4xf32>
  %p = cuvil.softmax %s, axis = 2 : tensor<?x4x4xf32>
  return %p : tensor<?x4x4xf32>
}
}


// -----

// Heads as rows: each sample's 4 x 8 becomes 2 rows of 16 and back.
// ON-LABEL: func.func @heads
// ON-SAME: attributes {cuvil.sample_parallel}
module attributes {cuvil.max_batch = 8 : i64} {
func.func @heads(%x: tensor<?x4x8xf32>) -> tensor<?x32xf32> {
  %h = cuvil.reshape %x, shape = [-1, 16] : tensor<?x4x8xf32>
  %s = cuvil.softmax %h, axis = 1 : tensor<?x16xf32>
  %y = cuvil.reshape %s, shape = [-1, 32] : tensor<?x16xf32>
  return %y : tensor<?x32xf32>
}
}

// -----

// A tree ensemble's tables are weights every chunk reads again, with no
// multiply-adds to amortize them (its walk splits rows over the threads
// anyway): auto leaves it, on marks it.
// CHECK-LABEL: func.func @stump
// CHECK-NOT: cuvil.sample_parallel
// ON-LABEL: func.func @stump
// ON-SAME: attributes {cuvil.sample_parallel}
module attributes {cuvil.max_batch = 1048576 : i64} {
func.func @stump(%x: tensor<?x2xf32>) -> tensor<?x1xf32> {
  %nodes = cuvil.constant dense<[[0, 1, 9], [0, 0, 0], [1, 0, 0]]> : tensor<3x3xi32>
  %thresholds = cuvil.constant dense<[0.5, 0.0, 0.0]> : tensor<3xf32>
  %trees = cuvil.constant dense<[[0, 0]]> : tensor<1x2xi32>
  %leaves = cuvil.constant dense<[[1.0], [2.0]]> : tensor<2x1xf32>
  %0 = cuvil.tree_ensemble %x, %nodes, %thresholds, %trees, %leaves {base_values = array<f64: 0.5>, post_transform = "logistic"} : tensor<?x2xf32>, tensor<3x3xi32>, tensor<3xf32>, tensor<1x2xi32>, tensor<2x1xf32>
  return %0 : tensor<?x1xf32>
}
}
