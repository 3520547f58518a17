// Folders of level1 ops, driven by the canonicalizer.
// RUN: cuvil-opt %s -canonicalize -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @add_zero
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
// CHECK-NEXT: return %[[X]], %[[X]]
func.func @add_zero(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %zero = cuvil.constant dense<0.0> : tensor<3xf32>
  %0 = cuvil.add %x, %zero : tensor<2x3xf32>, tensor<3xf32>
  %1 = cuvil.add %zero, %x : tensor<3xf32>, tensor<2x3xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// Adding zero that broadcasts the result to a larger shape is not a no-op.
// CHECK-LABEL: func.func @add_zero_broadcasting
// CHECK: %[[R:.+]] = cuvil.add
// CHECK: return %[[R]]
func.func @add_zero_broadcasting(%x: tensor<3xf32>) -> tensor<2x3xf32> {
  %zero = cuvil.constant dense<0.0> : tensor<2x3xf32>
  %0 = cuvil.add %x, %zero : tensor<3xf32>, tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @mul_one
// CHECK-SAME: (%[[X:.+]]: tensor<4xi32>)
// CHECK-NEXT: return %[[X]]
func.func @mul_one(%x: tensor<4xi32>) -> tensor<4xi32> {
  %one = cuvil.constant dense<1> : tensor<i32>
  %0 = cuvil.mul %one, %x : tensor<i32>, tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @mul_not_one
// CHECK: cuvil.mul
func.func @mul_not_one(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = cuvil.constant dense<0.5> : tensor<4xf32>
  %0 = cuvil.mul %x, %c : tensor<4xf32>, tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @cast_same_type
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>)
// CHECK-NEXT: return %[[X]]
func.func @cast_same_type(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = cuvil.cast %x : tensor<4xf32> to tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_chain
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[R:.+]] = cuvil.reshape %[[X]], shape = [4, 6] : tensor<2x3x4xf32>
// CHECK-NEXT: return %[[R]]
func.func @reshape_chain(%x: tensor<2x3x4xf32>) -> tensor<4x6xf32> {
  %0 = cuvil.reshape %x, shape = [24] : tensor<2x3x4xf32>
  %1 = cuvil.reshape %0, shape = [4, 6] : tensor<24xf32>
  return %1 : tensor<4x6xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_identity
// CHECK-SAME: (%[[X:.+]]: tensor<?x4xf32>)
// CHECK-NEXT: return %[[X]]
func.func @reshape_identity(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = cuvil.reshape %x, shape = [-1, 4] : tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// Shape arithmetic on constants folds at compile time.
// CHECK-LABEL: func.func @reshape_constant
// CHECK-NEXT: %[[C:.+]] = cuvil.constant dense<{{\[}}[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi64>
// CHECK-NEXT: return %[[C]]
func.func @reshape_constant() -> tensor<2x3xi64> {
  %c = cuvil.constant dense<[1, 2, 3, 4, 5, 6]> : tensor<6xi64>
  %0 = cuvil.reshape %c, shape = [2, -1] : tensor<6xi64>
  return %0 : tensor<2x3xi64>
}

// -----

// CHECK-LABEL: func.func @transpose
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
// CHECK-NEXT: %[[C:.+]] = cuvil.constant dense<2.000000e+00> : tensor<3x2xf32>
// CHECK-NEXT: return %[[X]], %[[C]]
func.func @transpose(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3x2xf32>) {
  %0 = cuvil.transpose %x, perm = [0, 1] : tensor<2x3xf32>
  %c = cuvil.constant dense<2.0> : tensor<2x3xf32>
  %1 = cuvil.transpose %c, perm = [1, 0] : tensor<2x3xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<3x2xf32>
}

// -----

// CHECK-LABEL: func.func @concat_single
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
// CHECK-NEXT: return %[[X]]
func.func @concat_single(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = cuvil.concat(%x) axis = 0 : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Pure ops with no users are removed.
// CHECK-LABEL: func.func @dead
// CHECK-NOT: cuvil.
// CHECK: return
func.func @dead(%x: tensor<2x3xf32>) {
  %0 = cuvil.relu %x : tensor<2x3xf32>
  %1 = cuvil.softmax %0, axis = 1 : tensor<2x3xf32>
  return
}

// -----

// An if on a constant condition is the branch it takes.
// CHECK-LABEL: func @constant_if
func.func @constant_if(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-NOT: cuvil.if
  // CHECK: %[[R:.+]] = cuvil.neg %{{.+}}
  // CHECK: return %[[R]]
  %c = cuvil.constant dense<false> : tensor<i1>
  %r = cuvil.if %c : tensor<i1> -> tensor<4xf32> {
    %a = cuvil.relu %x : tensor<4xf32>
    cuvil.yield %a : tensor<4xf32>
  } else {
    %b = cuvil.neg %x : tensor<4xf32>
    cuvil.yield %b : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
