// RUN: cuvil-opt %s --cuvil-lower-to-level2 --cuvil-x86-pack-quantized-weights --split-input-file -verify-diagnostics | FileCheck %s

// The int8 weights [3, 2] become one strip of 16 columns with k in one
// group of 4 (64 bytes, zero padded: column 0 holds 1, 3, -5, 0), their
// column sums (-1, 8) and the column scales 0.05 * (0.5, 0.25); the call
// reads them, keeps a 16-byte A-panel scratch and is marked packed_b; the
// storage cast and the unpacked weights are gone.
// CHECK-DAG: memref.global "private" constant @linear_constant_0_qpacked : memref<64xi8>
// CHECK-DAG: memref.global "private" constant @linear_constant_0_qsums : memref<2xi32>
// CHECK-DAG: memref.global "private" constant @linear_constant_0_qscales : memref<2xf32>
// CHECK-NOT: @linear_constant_0 :
// CHECK-LABEL: func.func @linear
// CHECK-NOT: storage_cast
// CHECK: %[[S:.+]] = memref.alloc() {alignment = 64 : i64} : memref<16xi8>
// CHECK: cuvil_l2.ukernel_call "quantized_matmul" ins(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : memref<4x3x!quant.uniform<u8:f32, 5.000000e-02:120>>, memref<64xi8>, memref<2xi32>, memref<2xf32>) outs(%{{.+}}, %[[S]] : memref<4x2xf32>, memref<16xi8>) packed_b
// CHECK-DAG: linear_constant_0_qpacked: "0x400000000103FB00FE040600{{0+}}"
// CHECK-DAG: linear_constant_0_qsums: "0x40000000FFFFFFFF08000000"
// CHECK-DAG: linear_constant_0_qscales: "0x40000000CDCCCC3CCDCC4C3C"
func.func @linear(%x: tensor<4x3xf32>) -> tensor<4x2xf32> {
  %q = cuvil.quantize %x : tensor<4x3xf32> to tensor<4x3x!quant.uniform<u8:f32, 0.05:120>>
  %c = cuvil.constant dense<[[1, -2], [3, 4], [-5, 6]]> : tensor<3x2xi8>
  %wq = cuvil.storage_cast %c : tensor<3x2xi8> to tensor<3x2x!quant.uniform<i8:f32:1, {0.5, 0.25}>>
  %y = cuvil.quantized_matmul %q, %wq : tensor<4x3x!quant.uniform<u8:f32, 0.05:120>>, tensor<3x2x!quant.uniform<i8:f32:1, {0.5, 0.25}>>
  return %y : tensor<4x2xf32>
}

// -----

func.func @computed(%x: tensor<4x3xf32>, %w: tensor<3x2xi8>) -> tensor<4x2xf32> {
  %q = cuvil.quantize %x : tensor<4x3xf32> to tensor<4x3x!quant.uniform<u8:f32, 0.05:120>>
  %wq = cuvil.storage_cast %w : tensor<3x2xi8> to tensor<3x2x!quant.uniform<i8:f32, 0.5>>
  // expected-error @+1 {{'cuvil_l2.ukernel_call' op multiplies int8 only against constant weights on the x86 target}}
  %y = cuvil.quantized_matmul %q, %wq : tensor<4x3x!quant.uniform<u8:f32, 0.05:120>>, tensor<3x2x!quant.uniform<i8:f32, 0.5>>
  return %y : tensor<4x2xf32>
}

// -----

// A fused epilogue's bias stays the last input, after the packed weights;
// rows of a dynamic batch get a panel for each of the 64 chunks a call may
// split into (64 x 16 bytes).
// CHECK-LABEL: func.func @fused_bias
// CHECK: %[[S:.+]] = memref.alloc() {alignment = 64 : i64} : memref<1024xi8>
// CHECK: cuvil_l2.ukernel_call "quantized_matmul" ins(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[B:.+]] : memref<?x3x!quant.uniform<u8:f32, 5.000000e-02:120>>, memref<64xi8>, memref<2xi32>, memref<2xf32>, memref<2xf32>) outs(%{{.+}}, %[[S]] : memref<?x2xf32>, memref<1024xi8>) epilogue <steps = [col_bias, relu]> packed_b
func.func @fused_bias(%x: tensor<?x3xf32>) -> tensor<?x2xf32> {
  %q = cuvil.quantize %x : tensor<?x3xf32> to tensor<?x3x!quant.uniform<u8:f32, 0.05:120>>
  %c = cuvil.constant dense<[[1, -2], [3, 4], [-5, 6]]> : tensor<3x2xi8>
  %wq = cuvil.storage_cast %c : tensor<3x2xi8> to tensor<3x2x!quant.uniform<i8:f32:1, {0.5, 0.25}>>
  %b = cuvil.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %y = cuvil.fused_group kind = "epilogue"(%q, %wq, %b) : (tensor<?x3x!quant.uniform<u8:f32, 0.05:120>>, tensor<3x2x!quant.uniform<i8:f32:1, {0.5, 0.25}>>, tensor<2xf32>) -> tensor<?x2xf32> {
  ^bb0(%a0: tensor<?x3x!quant.uniform<u8:f32, 0.05:120>>, %a1: tensor<3x2x!quant.uniform<i8:f32:1, {0.5, 0.25}>>, %a2: tensor<2xf32>):
    %p = cuvil.quantized_matmul %a0, %a1 : tensor<?x3x!quant.uniform<u8:f32, 0.05:120>>, tensor<3x2x!quant.uniform<i8:f32:1, {0.5, 0.25}>>
    %s = cuvil.add %p, %a2 : tensor<?x2xf32>, tensor<2xf32>
    %r = cuvil.relu %s : tensor<?x2xf32>
    cuvil.yield %r : tensor<?x2xf32>
  }
  return %y : tensor<?x2xf32>
}

// -----

// An int8 convolution: OIHW weights [2, 1, 2, 2] packed as B [K = 4][O = 2]
// (row (c * KH + i) * KW + j, column o), the kernel size recorded for the
// emitter, the scratch the 3 x 3 output's unfolded image (9 x 4 bytes,
// aligned to 64) and an A panel of 16 bytes for each 4 of its 9 rows.
// CHECK-LABEL: func.func @conv
// CHECK: %[[S:.+]] = memref.alloc() {alignment = 64 : i64} : memref<112xi8>
// CHECK: cuvil_l2.ukernel_call "quantized_conv2d" ins(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : memref<1x1x4x4x!quant.uniform<u8:f32, 5.000000e-02:120>>, memref<64xi8>, memref<2xi32>, memref<2xf32>) outs(%{{.+}}, %[[S]] : memref<1x2x3x3xf32>, memref<112xi8>) params {groups = 1 : i64} packed_b {cuvil.kernel_size = array<i64: 2, 2>}
// CHECK-DAG: conv_constant_0_qsums: "0x400000000A000000FEFFFFFF"
func.func @conv(%x: tensor<1x1x4x4xf32>) -> tensor<1x2x3x3xf32> {
  %q = cuvil.quantize %x : tensor<1x1x4x4xf32> to tensor<1x1x4x4x!quant.uniform<u8:f32, 0.05:120>>
  %c = cuvil.constant dense<[[[[1, 2], [3, 4]]], [[[-1, 0], [0, -1]]]]> : tensor<2x1x2x2xi8>
  %wq = cuvil.storage_cast %c : tensor<2x1x2x2xi8> to tensor<2x1x2x2x!quant.uniform<i8:f32:0, {0.5, 0.25}>>
  %y = cuvil.quantized_conv2d %q, %wq : tensor<1x1x4x4x!quant.uniform<u8:f32, 0.05:120>>, tensor<2x1x2x2x!quant.uniform<i8:f32:0, {0.5, 0.25}>>
  return %y : tensor<1x2x3x3xf32>
}

// -----

// A bfloat16 product's weights [3, 2] become one strip of 32 columns by k
// pairs (column 0: 1.0 and 3.0 in pair 0, -5.0 and a zero in pair 1), and
// its four rows get one 64-byte A panel; the unpacked weights are gone.
// CHECK-DAG: memref.global "private" constant @bf16_linear_constant_0_bpacked : memref<128xi16>
// CHECK-NOT: @bf16_linear_constant_0 :
// CHECK-LABEL: func.func @bf16_linear
// CHECK: %[[S:.+]] = memref.alloc() {alignment = 64 : i64} : memref<64xi8>
// CHECK: cuvil_l2.ukernel_call "matmul" ins(%{{.+}}, %{{.+}} : memref<4x3xbf16>, memref<128xi16>) outs(%{{.+}}, %[[S]] : memref<4x2xf32>, memref<64xi8>) params {acc_type = f32} packed_b
// CHECK: bf16_linear_constant_0_bpacked: "0x40000000803F404000C08040{{0+}}A0C00000C0400000{{0+}}"
func.func @bf16_linear(%x: tensor<4x3xf32>) -> tensor<4x2xf32> {
  %xb = cuvil.cast %x : tensor<4x3xf32> to tensor<4x3xbf16>
  %w = cuvil.constant dense<[[1.0, -2.0], [3.0, 4.0], [-5.0, 6.0]]> : tensor<3x2xbf16>
  %y = cuvil.matmul %xb, %w {acc_type = f32} : tensor<4x3xbf16>, tensor<3x2xbf16>
  return %y : tensor<4x2xf32>
}

// -----

func.func @bf16_computed(%x: tensor<4x3xbf16>, %w: tensor<3x2xbf16>) -> tensor<4x2xf32> {
  // expected-error @+1 {{'cuvil_l2.ukernel_call' op multiplies bfloat16 only against constant weights on the x86 target}}
  %y = cuvil.matmul %x, %w {acc_type = f32} : tensor<4x3xbf16>, tensor<3x2xbf16>
  return %y : tensor<4x2xf32>
}
