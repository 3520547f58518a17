// RUN: cuvil-opt %s --cuvil-batch-parallel-convs --split-input-file | FileCheck %s

// An Inception block: three 1x1 branches (+ relu) of one input merge into one
// convolution over the concatenated weights and biases, one relu and a split;
// the 3x3 branch (other geometry) and the branch without relu stay apart. The
// target makes a kernel call cost 10 us, so merging pays.
// CHECK-LABEL: func.func @inception
// CHECK-SAME: (%[[X:.+]]: tensor<1x2x4x4xf32>)
// CHECK: %[[W:.+]] = cuvil.constant dense_resource<conv_weight_batched> : tensor<6x2x1x1xf32>
// CHECK-NEXT: %[[B:.+]] = cuvil.constant dense_resource<conv_bias_batched> : tensor<6xf32>
// CHECK-NEXT: %[[C:.+]] = cuvil.conv2d %[[X]], %[[W]], %[[B]] {{.*}}: tensor<1x2x4x4xf32>, tensor<6x2x1x1xf32>, tensor<6xf32>
// CHECK-NEXT: %[[R:.+]] = cuvil.relu %[[C]] : tensor<1x6x4x4xf32>
// CHECK-NEXT: %[[S:.+]]:3 = cuvil.split %[[R]], axis = 1, sizes = [2, 1, 3] : tensor<1x6x4x4xf32>
// CHECK: %[[T:.+]] = cuvil.conv2d %[[X]], %{{.+}} {{.*}}tensor<4x2x3x3xf32>
// CHECK: %[[L:.+]] = cuvil.conv2d %[[X]], %{{.+}} : tensor<1x2x4x4xf32>, tensor<5x2x1x1xf32>
// CHECK-NOT: cuvil.relu
// CHECK: %[[CAT:.+]] = cuvil.concat(%[[S]]#0, %[[S]]#1, %[[S]]#2, %[[T]], %[[L]]) axis = 1
// CHECK: return %[[CAT]]
module attributes {cuvil.target = #cuvil.target<backend = "test", kernel_overhead_seconds = 1.0e-5>} {
  func.func @inception(%x: tensor<1x2x4x4xf32>) -> tensor<1x15x4x4xf32> {
    %w1 = cuvil.constant dense<1.0> : tensor<2x2x1x1xf32>
    %b1 = cuvil.constant dense<0.5> : tensor<2xf32>
    %w2 = cuvil.constant dense<2.0> : tensor<1x2x1x1xf32>
    %w3 = cuvil.constant dense<3.0> : tensor<3x2x1x1xf32>
    %b3 = cuvil.constant dense<-1.0> : tensor<3xf32>
    %w4 = cuvil.constant dense<4.0> : tensor<4x2x3x3xf32>
    %w5 = cuvil.constant dense<5.0> : tensor<5x2x1x1xf32>
    %c1 = cuvil.conv2d %x, %w1, %b1 : tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>
    %r1 = cuvil.relu %c1 : tensor<1x2x4x4xf32>
    %c2 = cuvil.conv2d %x, %w2 : tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>
    %r2 = cuvil.relu %c2 : tensor<1x1x4x4xf32>
    %c3 = cuvil.conv2d %x, %w3, %b3 : tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>, tensor<3xf32>
    %r3 = cuvil.relu %c3 : tensor<1x3x4x4xf32>
    %c4 = cuvil.conv2d %x, %w4 {padding = array<i64: 1, 1, 1, 1>} : tensor<1x2x4x4xf32>, tensor<4x2x3x3xf32>
    %c5 = cuvil.conv2d %x, %w5 : tensor<1x2x4x4xf32>, tensor<5x2x1x1xf32>
    %y = cuvil.concat(%r1, %r2, %r3, %c4, %c5) axis = 1 : tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x3x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x5x4x4xf32>
    return %y : tensor<1x15x4x4xf32>
  }
}
// Weights: two rows of 1.0, one of 2.0, three of 3.0 (two input channels
// each); biases 0.5 0.5, 0 (no bias), -1 -1 -1.
// CHECK: conv_weight_batched: "0x400000000000803F0000803F0000803F0000803F0000004000000040000040400000404000004040000040400000404000004040"
// CHECK: conv_bias_batched: "0x400000000000003F0000003F00000000000080BF000080BF000080BF"

// -----

// The same block when kernel calls are cheap and the split copy dominates:
// the cost model keeps the branches apart.
// CHECK-LABEL: func.func @not_worth_it
// CHECK-NOT: cuvil.split
// CHECK-COUNT-2: cuvil.conv2d
module attributes {cuvil.target = #cuvil.target<backend = "test", kernel_overhead_seconds = 0.0, batching_threshold = 1.5>} {
  func.func @not_worth_it(%x: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32>) {
    %w1 = cuvil.constant dense<1.0> : tensor<2x2x1x1xf32>
    %w2 = cuvil.constant dense<2.0> : tensor<1x2x1x1xf32>
    %c1 = cuvil.conv2d %x, %w1 : tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>
    %c2 = cuvil.conv2d %x, %w2 : tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>
    return %c1, %c2 : tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32>
  }
}

// -----

// Weights that are not constants, and convolutions of different inputs, are
// never merged; a dynamic batch is fine.
// CHECK-LABEL: func.func @not_mergeable
// CHECK-NOT: cuvil.split
// CHECK-COUNT-3: cuvil.conv2d
module attributes {cuvil.target = #cuvil.target<backend = "test", kernel_overhead_seconds = 1.0e-5>} {
  func.func @not_mergeable(%x: tensor<?x2x4x4xf32>, %z: tensor<?x2x4x4xf32>, %w: tensor<2x2x1x1xf32>) -> (tensor<?x2x4x4xf32>, tensor<?x2x4x4xf32>, tensor<?x2x4x4xf32>) {
    %w1 = cuvil.constant dense<1.0> : tensor<2x2x1x1xf32>
    %c1 = cuvil.conv2d %x, %w : tensor<?x2x4x4xf32>, tensor<2x2x1x1xf32>
    %c2 = cuvil.conv2d %x, %w1 : tensor<?x2x4x4xf32>, tensor<2x2x1x1xf32>
    %c3 = cuvil.conv2d %z, %w1 : tensor<?x2x4x4xf32>, tensor<2x2x1x1xf32>
    return %c1, %c2, %c3 : tensor<?x2x4x4xf32>, tensor<?x2x4x4xf32>, tensor<?x2x4x4xf32>
  }
}
