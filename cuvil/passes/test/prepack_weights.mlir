// RUN: cuvil-opt %s --cuvil-prepack-weights --canonicalize --split-input-file | FileCheck %s

// A Linear layer's weight ([N, K], trans_b) is stored transposed ([K, N])
// and trans_b dropped; the old constant is dead and goes.
// CHECK-LABEL: func.func @linear
// CHECK-NEXT: %[[B:.+]] = cuvil.constant dense<1.000000e+00> : tensor<2xf32>
// CHECK-NEXT: %[[W:.+]] = cuvil.constant dense_resource<gemm_b_prepacked_0> : tensor<3x2xf32>
// CHECK-NEXT: %[[Y:.+]] = cuvil.gemm %arg0, %[[W]], %[[B]] : tensor<4x3xf32>, tensor<3x2xf32>, tensor<2xf32>
// CHECK-NOT: trans_b
// CHECK: return %[[Y]]
func.func @linear(%x: tensor<4x3xf32>) -> tensor<4x2xf32> {
  %w = cuvil.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %b = cuvil.constant dense<1.0> : tensor<2xf32>
  %y = cuvil.gemm %x, %w, %b {trans_b} : tensor<4x3xf32>, tensor<2x3xf32>, tensor<2xf32>
  return %y : tensor<4x2xf32>
}
// The transposed bytes: 1 4 / 2 5 / 3 6 (after the 64-byte alignment word).
// CHECK: gemm_b_prepacked_0: "0x400000000000803F00008040000000400000A040000040400000C040"

// -----

// A transpose of a constant (any rank, any permutation) becomes a constant;
// one of a non-constant stays.
// CHECK-LABEL: func.func @transposes
// CHECK-NEXT: %[[C:.+]] = cuvil.constant dense_resource<transpose_prepacked_0> : tensor<3x1x2xi32>
// CHECK-NEXT: %[[T:.+]] = cuvil.transpose %arg0, perm = [1, 0]
// CHECK-NEXT: return %[[C]], %[[T]]
func.func @transposes(%x: tensor<2x3xf32>) -> (tensor<3x1x2xi32>, tensor<3x2xf32>) {
  %c = cuvil.constant dense<[[[1, 2, 3]], [[4, 5, 6]]]> : tensor<2x1x3xi32>
  %t = cuvil.transpose %c, perm = [2, 1, 0] : tensor<2x1x3xi32>
  %u = cuvil.transpose %x, perm = [1, 0] : tensor<2x3xf32>
  return %t, %u : tensor<3x1x2xi32>, tensor<3x2xf32>
}
// CHECK: transpose_prepacked_0: "0x40000000010000000400000002000000050000000300000006000000"
