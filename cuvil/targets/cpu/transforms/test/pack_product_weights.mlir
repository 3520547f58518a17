// RUN: cuvil-opt %s --cuvil-lower-to-level2 --cuvil-cpu-select-kernels --cuvil-cpu-pack-product-weights --split-input-file | FileCheck %s

// A linear layer's constant [K, N] weight becomes strips of 32 columns,
// [ceil(N / 32), K, 32], zero past column N: with N = 33, the first strip is
// 16 rows of 32 halves, the second 16 rows of one half and 31 zeros. The call
// reads the packed global, is marked cuvil.packed_b and has no packing
// scratch; the original global is gone.
// CHECK-LABEL: memref.global "private" constant @linear_constant_0_strips : memref<2x16x32xf32> = dense_resource<linear_constant_0_strips>
// CHECK-NOT: @linear_constant_0 :
// CHECK-LABEL: func.func @linear
// CHECK: %[[B:.+]] = memref.get_global @linear_constant_0_strips : memref<2x16x32xf32>
// CHECK-NOT: memref.alloc
// CHECK: cuvil_l2.ukernel_call "matmul" ins(%{{.+}}, %[[B]] : memref<?x16x16xf32>, memref<2x16x32xf32>) outs(%{{.+}} : memref<?x16x33xf32>) packed_b
// CHECK: linear_constant_0_strips: "0x40000000{{((0000003F){128}){4}((0000003F)(00000000){31}){16}"}}
func.func @linear(%x: tensor<?x16x16xf32>) -> tensor<?x16x33xf32> {
  %w = cuvil.constant dense<0.5> : tensor<16x33xf32>
  %y = cuvil.matmul %x, %w : tensor<?x16x16xf32>, tensor<16x33xf32>
  return %y : tensor<?x16x33xf32>
}

// -----

// Not packed: a B that is computed (the call keeps its run-time packing
// scratch), and a product too small to get scratch at all.
// CHECK-LABEL: func.func @not_packed
// CHECK-NOT: packed_b
// CHECK: cuvil_l2.ukernel_call "matmul" ins({{.*}}) outs(%{{.+}}, %{{.+}} : memref<16x40xf32>, memref<1024xf32>)
// CHECK: cuvil_l2.ukernel_call "matmul" ins({{.*}}) outs(%{{.+}} : memref<4x40xf32>)
func.func @not_packed(%a: tensor<16x16xf32>, %b: tensor<16x40xf32>, %d: tensor<4x16xf32>) -> (tensor<16x40xf32>, tensor<4x40xf32>) {
  %w = cuvil.constant dense<0.5> : tensor<16x40xf32>
  %x = cuvil.matmul %a, %b : tensor<16x16xf32>, tensor<16x40xf32>
  %z = cuvil.matmul %d, %w : tensor<4x16xf32>, tensor<16x40xf32>
  return %x, %z : tensor<16x40xf32>, tensor<4x40xf32>
}

// -----

// A weight two products share is packed once; the original goes.
// CHECK-LABEL: memref.global "private" constant @shared_constant_0_strips : memref<1x16x32xf32>
// CHECK-NOT: @shared_constant_0 :
// CHECK-NOT: @shared_constant_0_strips_{{[0-9]+}}
// CHECK-LABEL: func.func @shared
// CHECK: %[[B1:.+]] = memref.get_global @shared_constant_0_strips
// CHECK: cuvil_l2.ukernel_call "matmul" ins(%{{.+}}, %[[B1]] : {{.*}}) packed_b
// CHECK: %[[B2:.+]] = memref.get_global @shared_constant_0_strips
// CHECK: cuvil_l2.ukernel_call "matmul" ins(%{{.+}}, %[[B2]] : {{.*}}) packed_b
func.func @shared(%x: tensor<16x16xf32>) -> tensor<16x32xf32> {
  %w = cuvil.constant dense<0.25> : tensor<16x32xf32>
  %w2 = cuvil.constant dense<0.5> : tensor<32x16xf32>
  %y = cuvil.matmul %x, %w : tensor<16x16xf32>, tensor<16x32xf32>
  %z = cuvil.matmul %y, %w2 : tensor<16x32xf32>, tensor<32x16xf32>
  %u = cuvil.matmul %z, %w : tensor<16x16xf32>, tensor<16x32xf32>
  return %u : tensor<16x32xf32>
}
