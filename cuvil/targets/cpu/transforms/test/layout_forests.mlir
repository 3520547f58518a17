// RUN: cuvil-opt %s --cuvil-lower-to-level2 --cuvil-cpu-layout-forests --split-input-file | FileCheck %s

// Two trees: a stump on feature 1 (< 0.5, a missing value goes left) and a
// tree of depth 2 whose left child is a leaf. As perfect trees of depth 2:
// per tree 3 node words by level and 4 leaves. The stump's leaves (1, 2)
// fill two leaves each; its second level tests feature 0 against 0 (either
// way gives the copy). The second tree's left leaf (3) fills leaves 0 and
// 1, its right node (feature 2, < 1.5) leads to 4 and 5. Words carry the
// missing direction in bit 31 (0x80000001 = -2147483647). A target without
// AVX2 gets no interleaved copy of the nodes.
// CHECK-DAG: memref.global "private" constant @forest_words : memref<2x3xi32> = dense_resource<forest_words>
// CHECK-DAG: memref.global "private" constant @forest_leaves : memref<2x4xf32> = dense_resource<forest_leaves>
// CHECK-NOT: memref.global "private" constant @forest_constant
// CHECK-NOT: @forest_pairs
// CHECK-LABEL: func.func @forest
// CHECK: cuvil_l2.ukernel_call "tree_ensemble" ins(%{{.*}} : memref<?x3xf32>, memref<2x3xi32>, memref<2x3xf32>, memref<2xi32>, memref<2x4xf32>) outs(%{{.*}} : memref<?x1xf32>) params {aggregate = "sum", base_values = array<f64: 0.000000e+00>, post_transform = "none"} {cuvil.forest_comparison = 1 : i64, cuvil.forest_depth = 2 : i64}
// CHECK-DAG: forest_words: "0x40000000010000800000000000000000000000000000000002000000"
// CHECK-DAG: forest_thresholds: "0x400000000000003F00000000000000000000803E000000000000C03F"
// CHECK-DAG: forest_targets: "0x400000000000000000000000"
// CHECK-DAG: forest_leaves: "0x400000000000803F0000803F00000040000000400000404000004040000080400000A040"
func.func @forest(%x: tensor<?x3xf32>) -> tensor<?x1xf32> {
  %nodes = cuvil.constant dense<[[1, 1, 9], [0, 0, 0], [1, 0, 0],
                                 [0, 4, 1], [2, 0, 0], [2, 6, 1], [3, 0, 0], [4, 0, 0]]> : tensor<8x3xi32>
  %thresholds = cuvil.constant dense<[0.5, 0.0, 0.0, 0.25, 0.0, 1.5, 0.0, 0.0]> : tensor<8xf32>
  %trees = cuvil.constant dense<[[0, 0], [3, 0]]> : tensor<2x2xi32>
  %leaves = cuvil.constant dense<[[1.0], [2.0], [3.0], [4.0], [5.0]]> : tensor<5x1xf32>
  %0 = cuvil.tree_ensemble %x, %nodes, %thresholds, %trees, %leaves {base_values = array<f64: 0.0>} : tensor<?x3xf32>, tensor<8x3xi32>, tensor<8xf32>, tensor<2x2xi32>, tensor<5x1xf32>
  return %0 : tensor<?x1xf32>
}

// -----

// Mixed comparisons stay on the general tables.
// CHECK-LABEL: func.func @mixed
// CHECK: cuvil_l2.ukernel_call "tree_ensemble" ins(%{{.*}} : memref<?x2xf32>, memref<5x3xi32>, memref<5xf32>, memref<1x2xi32>, memref<3x1xf32>)
// CHECK-NOT: cuvil.forest_depth
// CHECK-NOT: cuvil.forest_comparison
func.func @mixed(%x: tensor<?x2xf32>) -> tensor<?x1xf32> {
  %nodes = cuvil.constant dense<[[0, 1, 1], [1, 3, 2], [0, 0, 0], [1, 0, 0], [2, 0, 0]]> : tensor<5x3xi32>
  %thresholds = cuvil.constant dense<[0.5, 0.5, 0.0, 0.0, 0.0]> : tensor<5xf32>
  %trees = cuvil.constant dense<[[0, 0]]> : tensor<1x2xi32>
  %leaves = cuvil.constant dense<[[1.0], [2.0], [3.0]]> : tensor<3x1xf32>
  %0 = cuvil.tree_ensemble %x, %nodes, %thresholds, %trees, %leaves {base_values = array<f64: 0.0>} : tensor<?x2xf32>, tensor<5x3xi32>, tensor<5xf32>, tensor<1x2xi32>, tensor<3x1xf32>
  return %0 : tensor<?x1xf32>
}

// -----

// An average (a random forest) is laid out too: the perfect walk divides
// by the trees and adds the base values after the sums, as the tables'.
// CHECK-LABEL: func.func @average
// CHECK: cuvil_l2.ukernel_call "tree_ensemble" ins(%{{.*}} : memref<?x2xf32>, memref<1x1xi32>, memref<1x1xf32>, memref<1xi32>, memref<1x2xf32>) outs(%{{.*}} : memref<?x1xf32>) params {aggregate = "average", base_values = array<f64: 0.000000e+00>, post_transform = "none"} {cuvil.forest_comparison = 2 : i64, cuvil.forest_depth = 1 : i64}
func.func @average(%x: tensor<?x2xf32>) -> tensor<?x1xf32> {
  %nodes = cuvil.constant dense<[[0, 1, 2], [0, 0, 0], [1, 0, 0]]> : tensor<3x3xi32>
  %thresholds = cuvil.constant dense<[0.5, 0.0, 0.0]> : tensor<3xf32>
  %trees = cuvil.constant dense<[[0, 0]]> : tensor<1x2xi32>
  %leaves = cuvil.constant dense<[[1.0], [2.0]]> : tensor<2x1xf32>
  %0 = cuvil.tree_ensemble %x, %nodes, %thresholds, %trees, %leaves {base_values = array<f64: 0.0>, aggregate = "average"} : tensor<?x2xf32>, tensor<3x3xi32>, tensor<3xf32>, tensor<1x2xi32>, tensor<2x1xf32>
  return %0 : tensor<?x1xf32>
}

// -----

// A node where zero counts as missing (LightGBM) keeps the scalar walk.
// CHECK-LABEL: func.func @zero_missing
// CHECK-NOT: cuvil.forest_comparison
func.func @zero_missing(%x: tensor<?x2xf32>) -> tensor<?x1xf32> {
  %nodes = cuvil.constant dense<[[0, 1, 18], [0, 0, 0], [1, 0, 0]]> : tensor<3x3xi32>
  %thresholds = cuvil.constant dense<[0.5, 0.0, 0.0]> : tensor<3xf32>
  %trees = cuvil.constant dense<[[0, 0]]> : tensor<1x2xi32>
  %leaves = cuvil.constant dense<[[1.0], [2.0]]> : tensor<2x1xf32>
  %0 = cuvil.tree_ensemble %x, %nodes, %thresholds, %trees, %leaves {base_values = array<f64: 0.0>} : tensor<?x2xf32>, tensor<3x3xi32>, tensor<3xf32>, tensor<1x2xi32>, tensor<2x1xf32>
  return %0 : tensor<?x1xf32>
}

// -----

// scikit-learn: float32 features against float64 thresholds (`<=` here),
// float64 leaves. Each threshold narrows to the largest float32 at or
// below it, which decides every float32 value alike: 0.1 (double) becomes
// 0x3DCCCCCC (0.099999994f; 0.1f is above 0.1). The leaves stay float64
// for an AVX-512 target, and an x86 target gets the few-rows walks' copy
// of each node: its threshold's bits, then its word (feature 1).
// CHECK-LABEL: func.func @sklearn_le
// CHECK: cuvil_l2.ukernel_call "tree_ensemble" ins(%{{.*}} : memref<?x2xf32>, memref<1x1xi32>, memref<1x1xf32>, memref<1xi32>, memref<1x2xf64>, memref<1x1xi64>) outs(%{{.*}} : memref<?x1xf64>) {{.*}} {cuvil.forest_comparison = 2 : i64, cuvil.forest_depth = 1 : i64}
// CHECK-DAG: forest_thresholds: "0x40000000CCCCCC3D"
// CHECK-DAG: forest_pairs: "0x40000000CCCCCC3D01000000"
// CHECK-DAG: forest_leaves: "0x40000000000000000000F03F9A9999999999B93F"
module attributes {cuvil.target = #cuvil.target<backend = "x86", features = ["avx2", "avx512f"], vector_bits = 512>} {
func.func @sklearn_le(%x: tensor<?x2xf32>) -> tensor<?x1xf64> {
  %nodes = cuvil.constant dense<[[1, 1, 2], [0, 0, 0], [1, 0, 0]]> : tensor<3x3xi32>
  %thresholds = cuvil.constant dense<[0.1, 0.0, 0.0]> : tensor<3xf64>
  %trees = cuvil.constant dense<[[0, 0]]> : tensor<1x2xi32>
  %leaves = cuvil.constant dense<[[1.0], [0.1]]> : tensor<2x1xf64>
  %0 = cuvil.tree_ensemble %x, %nodes, %thresholds, %trees, %leaves {base_values = array<f64: 0.0>} : tensor<?x2xf32>, tensor<3x3xi32>, tensor<3xf64>, tensor<1x2xi32>, tensor<2x1xf64>
  return %0 : tensor<?x1xf64>
}
}

// -----

// `<` narrows upward: 0.1 becomes 0x3DCCCCCD (0.1f), the smallest float32
// above it.
// CHECK-LABEL: func.func @sklearn_lt
// CHECK: forest_thresholds: "0x40000000CDCCCC3D"
module attributes {cuvil.target = #cuvil.target<backend = "x86", features = ["avx2", "avx512f"], vector_bits = 512>} {
func.func @sklearn_lt(%x: tensor<?x2xf32>) -> tensor<?x1xf64> {
  %nodes = cuvil.constant dense<[[1, 1, 1], [0, 0, 0], [1, 0, 0]]> : tensor<3x3xi32>
  %thresholds = cuvil.constant dense<[0.1, 0.0, 0.0]> : tensor<3xf64>
  %trees = cuvil.constant dense<[[0, 0]]> : tensor<1x2xi32>
  %leaves = cuvil.constant dense<[[1.0], [0.1]]> : tensor<2x1xf64>
  %0 = cuvil.tree_ensemble %x, %nodes, %thresholds, %trees, %leaves {base_values = array<f64: 0.0>} : tensor<?x2xf32>, tensor<3x3xi32>, tensor<3xf64>, tensor<1x2xi32>, tensor<2x1xf64>
  return %0 : tensor<?x1xf64>
}
}

// -----

// Without AVX-512 float64 leaves keep the tables (the other walks would
// take them one row at a time).
// CHECK-LABEL: func.func @sklearn_avx2
// CHECK-NOT: cuvil.forest_depth
module attributes {cuvil.target = #cuvil.target<backend = "x86", features = ["avx2"], vector_bits = 256>} {
func.func @sklearn_avx2(%x: tensor<?x2xf32>) -> tensor<?x1xf64> {
  %nodes = cuvil.constant dense<[[1, 1, 2], [0, 0, 0], [1, 0, 0]]> : tensor<3x3xi32>
  %thresholds = cuvil.constant dense<[0.1, 0.0, 0.0]> : tensor<3xf64>
  %trees = cuvil.constant dense<[[0, 0]]> : tensor<1x2xi32>
  %leaves = cuvil.constant dense<[[1.0], [0.1]]> : tensor<2x1xf64>
  %0 = cuvil.tree_ensemble %x, %nodes, %thresholds, %trees, %leaves {base_values = array<f64: 0.0>} : tensor<?x2xf32>, tensor<3x3xi32>, tensor<3xf64>, tensor<1x2xi32>, tensor<2x1xf64>
  return %0 : tensor<?x1xf64>
}
}

// -----

// Leaves of two values (a classifier's class probabilities) are laid out
// [trees][2^depth][values] for an AVX-512 target.
// CHECK-LABEL: func.func @two_values
// CHECK: cuvil_l2.ukernel_call "tree_ensemble" ins(%{{.*}} : memref<?x2xf32>, memref<1x1xi32>, memref<1x1xf32>, memref<1xi32>, memref<1x2x2xf64>, memref<1x1xi64>) outs(%{{.*}} : memref<?x2xf64>) {{.*}} {cuvil.forest_comparison = 2 : i64, cuvil.forest_depth = 1 : i64}
module attributes {cuvil.target = #cuvil.target<backend = "x86", features = ["avx2", "avx512f"], vector_bits = 512>} {
func.func @two_values(%x: tensor<?x2xf32>) -> tensor<?x2xf64> {
  %nodes = cuvil.constant dense<[[1, 1, 2], [0, 0, 0], [1, 0, 0]]> : tensor<3x3xi32>
  %thresholds = cuvil.constant dense<[0.1, 0.0, 0.0]> : tensor<3xf64>
  %trees = cuvil.constant dense<[[0, 0]]> : tensor<1x2xi32>
  %leaves = cuvil.constant dense<[[1.0, 0.0], [0.25, 0.75]]> : tensor<2x2xf64>
  %0 = cuvil.tree_ensemble %x, %nodes, %thresholds, %trees, %leaves {base_values = array<f64: 0.0, 0.0>, aggregate = "average"} : tensor<?x2xf32>, tensor<3x3xi32>, tensor<3xf64>, tensor<1x2xi32>, tensor<2x2xf64>
  return %0 : tensor<?x2xf64>
}
}
