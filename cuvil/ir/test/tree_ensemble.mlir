// cuvil.tree_ensemble round-trips, infers [batch, targets] of the leaves'
// type, and lowers to one tree_ensemble kernel call over its tables.
// RUN: cuvil-opt %s | cuvil-opt | FileCheck %s
// RUN: cuvil-opt %s --cuvil-lower-to-level2 | FileCheck %s --check-prefix=L2

// CHECK-LABEL: func.func @stump
// CHECK: cuvil.tree_ensemble %arg0, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {base_values = array<f64: 5.000000e-01>, post_transform = "logistic"}
// L2-LABEL: func.func @stump
// L2: cuvil_l2.ukernel_call "tree_ensemble" ins(%{{.*}} : memref<?x2xf32>, memref<3x3xi32>, memref<3xf32>, memref<1x2xi32>, memref<2x1xf32>) outs(%{{.*}} : memref<?x1xf32>) params {aggregate = "sum", base_values = array<f64: 5.000000e-01>, post_transform = "logistic"}
func.func @stump(%x: tensor<?x2xf32>) -> tensor<?x1xf32> {
  // Feature 0 < 0.5 (a missing value goes left): leaf row 0, else row 1.
  %nodes = cuvil.constant dense<[[0, 1, 9], [0, 0, 0], [1, 0, 0]]> : tensor<3x3xi32>
  %thresholds = cuvil.constant dense<[0.5, 0.0, 0.0]> : tensor<3xf32>
  %trees = cuvil.constant dense<[[0, 0]]> : tensor<1x2xi32>
  %leaves = cuvil.constant dense<[[1.0], [2.0]]> : tensor<2x1xf32>
  %0 = cuvil.tree_ensemble %x, %nodes, %thresholds, %trees, %leaves {base_values = array<f64: 0.5>, post_transform = "logistic"} : tensor<?x2xf32>, tensor<3x3xi32>, tensor<3xf32>, tensor<1x2xi32>, tensor<2x1xf32>
  return %0 : tensor<?x1xf32>
}

// CHECK-LABEL: func.func @scikit_learn_style
// CHECK: cuvil.tree_ensemble {{.*}} : tensor<4x3xf32>, tensor<3x3xi32>, tensor<3xf64>, tensor<2x2xi32>, tensor<2x2xf64>
func.func @scikit_learn_style(%x: tensor<4x3xf32>) -> tensor<4x2xf64> {
  // Float features against double thresholds with <=, leaves of two
  // values (class probabilities), summed in double.
  %nodes = cuvil.constant dense<[[2, 1, 2], [0, 0, 0], [1, 0, 0]]> : tensor<3x3xi32>
  %thresholds = cuvil.constant dense<[0.1, 0.0, 0.0]> : tensor<3xf64>
  %trees = cuvil.constant dense<[[0, 0], [0, 0]]> : tensor<2x2xi32>
  %leaves = cuvil.constant dense<[[0.25, 0.75], [1.0, 0.0]]> : tensor<2x2xf64>
  %0 = cuvil.tree_ensemble %x, %nodes, %thresholds, %trees, %leaves {base_values = array<f64: 0.0, 0.0>} : tensor<4x3xf32>, tensor<3x3xi32>, tensor<3xf64>, tensor<2x2xi32>, tensor<2x2xf64>
  return %0 : tensor<4x2xf64>
}

// A categorical split keeps its category sets through level2.
// CHECK-LABEL: func.func @categorical
// CHECK: cuvil.tree_ensemble %arg0, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} categories(%{{.*}} : tensor<3xi32>)
// L2-LABEL: func.func @categorical
// L2: cuvil_l2.ukernel_call "tree_ensemble" ins(%{{.*}} : memref<?x2xf32>, memref<3x3xi32>, memref<3xf32>, memref<1x2xi32>, memref<2x1xf32>, memref<3xi32>)
func.func @categorical(%x: tensor<?x2xf32>) -> tensor<?x1xf32> {
  %n = cuvil.constant dense<[[0, 1, 7], [0, 0, 0], [1, 0, 0]]> : tensor<3x3xi32>
  %t = cuvil.constant dense<[0.0, 0.0, 0.0]> : tensor<3xf32>
  %r = cuvil.constant dense<[[0, 0]]> : tensor<1x2xi32>
  %l = cuvil.constant dense<[[1.0], [2.0]]> : tensor<2x1xf32>
  %c = cuvil.constant dense<[2, 10, 2]> : tensor<3xi32>
  %0 = cuvil.tree_ensemble %x, %n, %t, %r, %l categories(%c : tensor<3xi32>) {base_values = array<f64: 0.0>} : tensor<?x2xf32>, tensor<3x3xi32>, tensor<3xf32>, tensor<1x2xi32>, tensor<2x1xf32>
  return %0 : tensor<?x1xf32>
}
