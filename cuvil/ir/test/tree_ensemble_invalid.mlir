// Every cuvil.tree_ensemble verifier and inference error, with its message.
// RUN: cuvil-opt %s -split-input-file -verify-diagnostics

// input not a matrix
func.func @f(%x: tensor<4xf32>) {
  %n = cuvil.constant dense<[[0, 1, 1], [0, 0, 0], [1, 0, 0]]> : tensor<3x3xi32>
  %t = cuvil.constant dense<[0.5, 0.0, 0.0]> : tensor<3xf32>
  %r = cuvil.constant dense<[[0, 0]]> : tensor<1x2xi32>
  %l = cuvil.constant dense<[[1.0], [2.0]]> : tensor<2x1xf32>
  // expected-error @+1 {{'cuvil.tree_ensemble' op expects input [batch, features] of f32 or f64, got tensor<4xf32>}}
  %0 = cuvil.tree_ensemble %x, %n, %t, %r, %l {base_values = array<f64: 0.0>} : tensor<4xf32>, tensor<3x3xi32>, tensor<3xf32>, tensor<1x2xi32>, tensor<2x1xf32>
  return
}

// -----

// integer input
func.func @f(%x: tensor<4x2xi32>) {
  %n = cuvil.constant dense<[[0, 1, 1], [0, 0, 0], [1, 0, 0]]> : tensor<3x3xi32>
  %t = cuvil.constant dense<[0.5, 0.0, 0.0]> : tensor<3xf32>
  %r = cuvil.constant dense<[[0, 0]]> : tensor<1x2xi32>
  %l = cuvil.constant dense<[[1.0], [2.0]]> : tensor<2x1xf32>
  // expected-error @+1 {{'cuvil.tree_ensemble' op expects input [batch, features] of f32 or f64, got tensor<4x2xi32>}}
  %0 = cuvil.tree_ensemble %x, %n, %t, %r, %l {base_values = array<f64: 0.0>} : tensor<4x2xi32>, tensor<3x3xi32>, tensor<3xf32>, tensor<1x2xi32>, tensor<2x1xf32>
  return
}

// -----

// nodes of two columns
func.func @f(%x: tensor<4x2xf32>) {
  %n = cuvil.constant dense<[[0, 1], [0, 0], [1, 0]]> : tensor<3x2xi32>
  %t = cuvil.constant dense<[0.5, 0.0, 0.0]> : tensor<3xf32>
  %r = cuvil.constant dense<[[0, 0]]> : tensor<1x2xi32>
  %l = cuvil.constant dense<[[1.0], [2.0]]> : tensor<2x1xf32>
  // expected-error @+1 {{'cuvil.tree_ensemble' op expects nodes of type tensor<Nx3xi32>, got tensor<3x2xi32>}}
  %0 = cuvil.tree_ensemble %x, %n, %t, %r, %l {base_values = array<f64: 0.0>} : tensor<4x2xf32>, tensor<3x2xi32>, tensor<3xf32>, tensor<1x2xi32>, tensor<2x1xf32>
  return
}

// -----

// a threshold missing
func.func @f(%x: tensor<4x2xf32>) {
  %n = cuvil.constant dense<[[0, 1, 1], [0, 0, 0], [1, 0, 0]]> : tensor<3x3xi32>
  %t = cuvil.constant dense<[0.5, 0.0]> : tensor<2xf32>
  %r = cuvil.constant dense<[[0, 0]]> : tensor<1x2xi32>
  %l = cuvil.constant dense<[[1.0], [2.0]]> : tensor<2x1xf32>
  // expected-error @+1 {{'cuvil.tree_ensemble' op expects one f32 or f64 threshold per node, got tensor<2xf32> for tensor<3x3xi32>}}
  %0 = cuvil.tree_ensemble %x, %n, %t, %r, %l {base_values = array<f64: 0.0>} : tensor<4x2xf32>, tensor<3x3xi32>, tensor<2xf32>, tensor<1x2xi32>, tensor<2x1xf32>
  return
}

// -----

// f64 features, f32 thresholds
func.func @f(%x: tensor<4x2xf64>) {
  %n = cuvil.constant dense<[[0, 1, 1], [0, 0, 0], [1, 0, 0]]> : tensor<3x3xi32>
  %t = cuvil.constant dense<[0.5, 0.0, 0.0]> : tensor<3xf32>
  %r = cuvil.constant dense<[[0, 0]]> : tensor<1x2xi32>
  %l = cuvil.constant dense<[[1.0], [2.0]]> : tensor<2x1xf32>
  // expected-error @+1 {{'cuvil.tree_ensemble' op compares f64 features with f32 thresholds; cast the features to f32 or widen the thresholds to f64}}
  %0 = cuvil.tree_ensemble %x, %n, %t, %r, %l {base_values = array<f64: 0.0>} : tensor<4x2xf64>, tensor<3x3xi32>, tensor<3xf32>, tensor<1x2xi32>, tensor<2x1xf32>
  return
}

// -----

// trees of one column
func.func @f(%x: tensor<4x2xf32>) {
  %n = cuvil.constant dense<[[0, 1, 1], [0, 0, 0], [1, 0, 0]]> : tensor<3x3xi32>
  %t = cuvil.constant dense<[0.5, 0.0, 0.0]> : tensor<3xf32>
  %r = cuvil.constant dense<[[0]]> : tensor<1x1xi32>
  %l = cuvil.constant dense<[[1.0], [2.0]]> : tensor<2x1xf32>
  // expected-error @+1 {{'cuvil.tree_ensemble' op expects trees of type tensor<Tx2xi32>, got tensor<1x1xi32>}}
  %0 = cuvil.tree_ensemble %x, %n, %t, %r, %l {base_values = array<f64: 0.0>} : tensor<4x2xf32>, tensor<3x3xi32>, tensor<3xf32>, tensor<1x1xi32>, tensor<2x1xf32>
  return
}

// -----

// no targets
func.func @f(%x: tensor<4x2xf32>) {
  %n = cuvil.constant dense<[[0, 1, 1], [0, 0, 0], [1, 0, 0]]> : tensor<3x3xi32>
  %t = cuvil.constant dense<[0.5, 0.0, 0.0]> : tensor<3xf32>
  %r = cuvil.constant dense<[[0, 0]]> : tensor<1x2xi32>
  %l = cuvil.constant dense<[[1.0], [2.0]]> : tensor<2x1xf32>
  // expected-error @+1 {{'cuvil.tree_ensemble' op expects one base value per target, got none}}
  %0 = cuvil.tree_ensemble %x, %n, %t, %r, %l {base_values = array<f64>} : tensor<4x2xf32>, tensor<3x3xi32>, tensor<3xf32>, tensor<1x2xi32>, tensor<2x1xf32>
  return
}

// -----

// unknown transform
func.func @f(%x: tensor<4x2xf32>) {
  %n = cuvil.constant dense<[[0, 1, 1], [0, 0, 0], [1, 0, 0]]> : tensor<3x3xi32>
  %t = cuvil.constant dense<[0.5, 0.0, 0.0]> : tensor<3xf32>
  %r = cuvil.constant dense<[[0, 0]]> : tensor<1x2xi32>
  %l = cuvil.constant dense<[[1.0], [2.0]]> : tensor<2x1xf32>
  // expected-error @+1 {{'cuvil.tree_ensemble' op post_transform "probit" is not one of none, logistic, softmax, exp}}
  %0 = cuvil.tree_ensemble %x, %n, %t, %r, %l {base_values = array<f64: 0.0>, post_transform = "probit"} : tensor<4x2xf32>, tensor<3x3xi32>, tensor<3xf32>, tensor<1x2xi32>, tensor<2x1xf32>
  return
}

// -----

// unknown aggregate
func.func @f(%x: tensor<4x2xf32>) {
  %n = cuvil.constant dense<[[0, 1, 1], [0, 0, 0], [1, 0, 0]]> : tensor<3x3xi32>
  %t = cuvil.constant dense<[0.5, 0.0, 0.0]> : tensor<3xf32>
  %r = cuvil.constant dense<[[0, 0]]> : tensor<1x2xi32>
  %l = cuvil.constant dense<[[1.0], [2.0]]> : tensor<2x1xf32>
  // expected-error @+1 {{'cuvil.tree_ensemble' op aggregate "max" is not one of sum, average}}
  %0 = cuvil.tree_ensemble %x, %n, %t, %r, %l {base_values = array<f64: 0.0, 0.0>, aggregate = "max"} : tensor<4x2xf32>, tensor<3x3xi32>, tensor<3xf32>, tensor<1x2xi32>, tensor<2x1xf32>
  return
}


// -----

// flags beyond the comparison, missing and zero-missing bits
func.func @f(%x: tensor<4x2xf32>) {
  %n = cuvil.constant dense<[[0, 1, 65], [0, 0, 0], [1, 0, 0]]> : tensor<3x3xi32>
  %t = cuvil.constant dense<[0.5, 0.0, 0.0]> : tensor<3xf32>
  %r = cuvil.constant dense<[[0, 0]]> : tensor<1x2xi32>
  %l = cuvil.constant dense<[[1.0], [2.0]]> : tensor<2x1xf32>
  // expected-error @+1 {{'cuvil.tree_ensemble' op node 0 has unknown flags 65}}
  %0 = cuvil.tree_ensemble %x, %n, %t, %r, %l {base_values = array<f64: 0.0>} : tensor<4x2xf32>, tensor<3x3xi32>, tensor<3xf32>, tensor<1x2xi32>, tensor<2x1xf32>
  return
}

// -----

// a leaf that says missing goes left
func.func @f(%x: tensor<4x2xf32>) {
  %n = cuvil.constant dense<[[0, 1, 1], [0, 0, 8], [1, 0, 0]]> : tensor<3x3xi32>
  %t = cuvil.constant dense<[0.5, 0.0, 0.0]> : tensor<3xf32>
  %r = cuvil.constant dense<[[0, 0]]> : tensor<1x2xi32>
  %l = cuvil.constant dense<[[1.0], [2.0]]> : tensor<2x1xf32>
  // expected-error @+1 {{'cuvil.tree_ensemble' op leaf node 1 has flags 8}}
  %0 = cuvil.tree_ensemble %x, %n, %t, %r, %l {base_values = array<f64: 0.0>} : tensor<4x2xf32>, tensor<3x3xi32>, tensor<3xf32>, tensor<1x2xi32>, tensor<2x1xf32>
  return
}

// -----

// a leaf row beyond the leaves
func.func @f(%x: tensor<4x2xf32>) {
  %n = cuvil.constant dense<[[0, 1, 1], [0, 0, 0], [2, 0, 0]]> : tensor<3x3xi32>
  %t = cuvil.constant dense<[0.5, 0.0, 0.0]> : tensor<3xf32>
  %r = cuvil.constant dense<[[0, 0]]> : tensor<1x2xi32>
  %l = cuvil.constant dense<[[1.0], [2.0]]> : tensor<2x1xf32>
  // expected-error @+1 {{'cuvil.tree_ensemble' op leaf node 2 refers to leaf row 2 of 2}}
  %0 = cuvil.tree_ensemble %x, %n, %t, %r, %l {base_values = array<f64: 0.0>} : tensor<4x2xf32>, tensor<3x3xi32>, tensor<3xf32>, tensor<1x2xi32>, tensor<2x1xf32>
  return
}

// -----

// a feature beyond the input
func.func @f(%x: tensor<4x2xf32>) {
  %n = cuvil.constant dense<[[2, 1, 1], [0, 0, 0], [1, 0, 0]]> : tensor<3x3xi32>
  %t = cuvil.constant dense<[0.5, 0.0, 0.0]> : tensor<3xf32>
  %r = cuvil.constant dense<[[0, 0]]> : tensor<1x2xi32>
  %l = cuvil.constant dense<[[1.0], [2.0]]> : tensor<2x1xf32>
  // expected-error @+1 {{'cuvil.tree_ensemble' op node 0 tests feature 2, outside the input's 2 features}}
  %0 = cuvil.tree_ensemble %x, %n, %t, %r, %l {base_values = array<f64: 0.0>} : tensor<4x2xf32>, tensor<3x3xi32>, tensor<3xf32>, tensor<1x2xi32>, tensor<2x1xf32>
  return
}

// -----

// a child before its parent (a cycle)
func.func @f(%x: tensor<4x2xf32>) {
  %n = cuvil.constant dense<[[0, 0, 1], [0, 0, 0], [1, 0, 0]]> : tensor<3x3xi32>
  %t = cuvil.constant dense<[0.5, 0.0, 0.0]> : tensor<3xf32>
  %r = cuvil.constant dense<[[0, 0]]> : tensor<1x2xi32>
  %l = cuvil.constant dense<[[1.0], [2.0]]> : tensor<2x1xf32>
  // expected-error @+1 {{'cuvil.tree_ensemble' op node 0 has children 0 and 1; children must follow their parent inside the 3 nodes}}
  %0 = cuvil.tree_ensemble %x, %n, %t, %r, %l {base_values = array<f64: 0.0>} : tensor<4x2xf32>, tensor<3x3xi32>, tensor<3xf32>, tensor<1x2xi32>, tensor<2x1xf32>
  return
}

// -----

// a right child outside the table
func.func @f(%x: tensor<4x2xf32>) {
  %n = cuvil.constant dense<[[0, 2, 1], [0, 0, 0], [1, 0, 0]]> : tensor<3x3xi32>
  %t = cuvil.constant dense<[0.5, 0.0, 0.0]> : tensor<3xf32>
  %r = cuvil.constant dense<[[0, 0]]> : tensor<1x2xi32>
  %l = cuvil.constant dense<[[1.0], [2.0]]> : tensor<2x1xf32>
  // expected-error @+1 {{'cuvil.tree_ensemble' op node 0 has children 2 and 3; children must follow their parent inside the 3 nodes}}
  %0 = cuvil.tree_ensemble %x, %n, %t, %r, %l {base_values = array<f64: 0.0>} : tensor<4x2xf32>, tensor<3x3xi32>, tensor<3xf32>, tensor<1x2xi32>, tensor<2x1xf32>
  return
}

// -----

// a root outside the table
func.func @f(%x: tensor<4x2xf32>) {
  %n = cuvil.constant dense<[[0, 1, 1], [0, 0, 0], [1, 0, 0]]> : tensor<3x3xi32>
  %t = cuvil.constant dense<[0.5, 0.0, 0.0]> : tensor<3xf32>
  %r = cuvil.constant dense<[[3, 0]]> : tensor<1x2xi32>
  %l = cuvil.constant dense<[[1.0], [2.0]]> : tensor<2x1xf32>
  // expected-error @+1 {{'cuvil.tree_ensemble' op tree 0 has root 3 outside 3 nodes}}
  %0 = cuvil.tree_ensemble %x, %n, %t, %r, %l {base_values = array<f64: 0.0>} : tensor<4x2xf32>, tensor<3x3xi32>, tensor<3xf32>, tensor<1x2xi32>, tensor<2x1xf32>
  return
}

// -----

// a target beyond the result
func.func @f(%x: tensor<4x2xf32>) {
  %n = cuvil.constant dense<[[0, 1, 1], [0, 0, 0], [1, 0, 0]]> : tensor<3x3xi32>
  %t = cuvil.constant dense<[0.5, 0.0, 0.0]> : tensor<3xf32>
  %r = cuvil.constant dense<[[0, 1]]> : tensor<1x2xi32>
  %l = cuvil.constant dense<[[1.0], [2.0]]> : tensor<2x1xf32>
  // expected-error @+1 {{'cuvil.tree_ensemble' op tree 0 adds 1 values from target 1, beyond the 1 targets}}
  %0 = cuvil.tree_ensemble %x, %n, %t, %r, %l {base_values = array<f64: 0.0>} : tensor<4x2xf32>, tensor<3x3xi32>, tensor<3xf32>, tensor<1x2xi32>, tensor<2x1xf32>
  return
}

// -----

// an infinite base value
func.func @f(%x: tensor<4x2xf32>) {
  %n = cuvil.constant dense<[[0, 1, 1], [0, 0, 0], [1, 0, 0]]> : tensor<3x3xi32>
  %t = cuvil.constant dense<[0.5, 0.0, 0.0]> : tensor<3xf32>
  %r = cuvil.constant dense<[[0, 0]]> : tensor<1x2xi32>
  %l = cuvil.constant dense<[[1.0], [2.0]]> : tensor<2x1xf32>
  // expected-error @+1 {{'cuvil.tree_ensemble' op expects finite base values}}
  %0 = cuvil.tree_ensemble %x, %n, %t, %r, %l {base_values = array<f64: 0x7FF0000000000000>} : tensor<4x2xf32>, tensor<3x3xi32>, tensor<3xf32>, tensor<1x2xi32>, tensor<2x1xf32>
  return
}

// -----

// a NaN missing value
func.func @f(%x: tensor<4x2xf32>) {
  %n = cuvil.constant dense<[[0, 1, 1], [0, 0, 0], [1, 0, 0]]> : tensor<3x3xi32>
  %t = cuvil.constant dense<[0.5, 0.0, 0.0]> : tensor<3xf32>
  %r = cuvil.constant dense<[[0, 0]]> : tensor<1x2xi32>
  %l = cuvil.constant dense<[[1.0], [2.0]]> : tensor<2x1xf32>
  // expected-error @+1 {{'cuvil.tree_ensemble' op expects a finite missing_value (NaN is always missing)}}
  %0 = cuvil.tree_ensemble %x, %n, %t, %r, %l {base_values = array<f64: 0.0>, missing_value = 0x7FF8000000000000 : f64} : tensor<4x2xf32>, tensor<3x3xi32>, tensor<3xf32>, tensor<1x2xi32>, tensor<2x1xf32>
  return
}


// -----

// a categorical split without category sets
func.func @f(%x: tensor<4x2xf32>) {
  %n = cuvil.constant dense<[[0, 1, 7], [0, 0, 0], [1, 0, 0]]> : tensor<3x3xi32>
  %t = cuvil.constant dense<[0.0, 0.0, 0.0]> : tensor<3xf32>
  %r = cuvil.constant dense<[[0, 0]]> : tensor<1x2xi32>
  %l = cuvil.constant dense<[[1.0], [2.0]]> : tensor<2x1xf32>
  // expected-error @+1 {{'cuvil.tree_ensemble' op node 0 is a categorical split, but the op has no categories}}
  %0 = cuvil.tree_ensemble %x, %n, %t, %r, %l {base_values = array<f64: 0.0>} : tensor<4x2xf32>, tensor<3x3xi32>, tensor<3xf32>, tensor<1x2xi32>, tensor<2x1xf32>
  return
}

// -----

// a category set past the words
func.func @f(%x: tensor<4x2xf32>) {
  %n = cuvil.constant dense<[[0, 1, 7], [0, 0, 0], [1, 0, 0]]> : tensor<3x3xi32>
  %t = cuvil.constant dense<[1.0, 0.0, 0.0]> : tensor<3xf32>
  %r = cuvil.constant dense<[[0, 0]]> : tensor<1x2xi32>
  %l = cuvil.constant dense<[[1.0], [2.0]]> : tensor<2x1xf32>
  %c = cuvil.constant dense<[1, 10, 2]> : tensor<3xi32>
  // expected-error @+1 {{'cuvil.tree_ensemble' op node 0's category set at 1 does not fit in the 3 category words}}
  %0 = cuvil.tree_ensemble %x, %n, %t, %r, %l categories(%c : tensor<3xi32>) {base_values = array<f64: 0.0>} : tensor<4x2xf32>, tensor<3x3xi32>, tensor<3xf32>, tensor<1x2xi32>, tensor<2x1xf32>
  return
}
