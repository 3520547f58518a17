// RUN: cuvil-opt %s --cuvil-lower-to-level2 --cuvil-cpu-assign-layouts=block=8 --cuvil-cpu-pack-quantized-weights --split-input-file -verify-diagnostics | FileCheck %s

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
  // expected-error @+1 {{'cuvil_l2.ukernel_call' op multiplies int8 only against constant weights on the CPU targets}}
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
// aligned to 64) and an A panel of 16 bytes for each 4 of its 9 rows;
// small weights are narrow (vpmaddubsw's kernels may take them).
// CHECK-LABEL: func.func @conv
// CHECK: %[[S:.+]] = memref.alloc() {alignment = 64 : i64} : memref<112xi8>
// CHECK: cuvil_l2.ukernel_call "quantized_conv2d" ins(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : memref<1x1x4x4x!quant.uniform<u8:f32, 5.000000e-02:120>>, memref<64xi8>, memref<2xi32>, memref<2xf32>) outs(%{{.+}}, %[[S]] : memref<1x2x3x3xf32>, memref<112xi8>) params {groups = 1 : i64} packed_b {{[{]}}{{.*}}cuvil.kernel_size = array<i64: 2, 2>, cuvil.narrow_weights}
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
  // expected-error @+1 {{'cuvil_l2.ukernel_call' op multiplies bfloat16 only against constant weights on the CPU targets}}
  %y = cuvil.matmul %x, %w {acc_type = f32} : tensor<4x3xbf16>, tensor<3x2xbf16>
  return %y : tensor<4x2xf32>
}

// -----

// A float16 product (cuvil-convert-products-to-f16) gets its [K, N] weights
// packed in strips of 32 columns, [K][32] zero padded (1.0 = 0x3C00, -2.0 =
// 0xC000, 3.0 = 0x4200, ...), and no scratch.
// CHECK-LABEL: func.func @f16_linear
// CHECK: cuvil_l2.ukernel_call "matmul" ins(%{{.+}}, %{{.+}} : memref<4x3xf16>, memref<96xi16>) outs(%{{.+}} : memref<4x2xf16>) packed_b
// CHECK: f16_linear_constant_0_hpacked: "0x40000000003C00C0{{0+}}00420044{{0+}}00C50046{{0+}}"
func.func @f16_linear(%x: tensor<4x3xf16>) -> tensor<4x2xf16> {
  %w = cuvil.constant dense<[[1.0, -2.0], [3.0, 4.0], [-5.0, 6.0]]> : tensor<3x2xf16>
  %y = cuvil.matmul %x, %w : tensor<4x3xf16>, tensor<3x2xf16>
  return %y : tensor<4x2xf16>
}

// -----

func.func @f16_computed(%x: tensor<4x3xf16>, %w: tensor<3x2xf16>) -> tensor<4x2xf16> {
  // expected-error @+1 {{'cuvil_l2.ukernel_call' op multiplies float16 only against constant weights on the CPU targets}}
  %y = cuvil.matmul %x, %w : tensor<4x3xf16>, tensor<3x2xf16>
  return %y : tensor<4x2xf16>
}

// -----

// An int8 convolution with a blocked output (its float32 model output is
// written through a blocked intermediate and a reorder): its weights are
// packed for the qconvb tiles, [OC/8][C/ib][KH][KW][ib/4][8][4] with ib 4
// for the plain input (2 x 9 x 4 x 8 = 576 bytes), and marked narrow (|w|
// <= 64); the input is converted into a padded NCHW4c scratch (2 planes of
// 6 x 6 x 4 bytes).
// CHECK-LABEL: func.func @blocked
// CHECK: %[[Y:.+]] = memref.alloc() {{.*}} : memref<1x8x4x4xf32, #cuvil_l2.layout<"NCHW" to "NCHW8c">>
// CHECK: %[[S:.+]] = memref.alloc() {alignment = 64 : i64} : memref<288xi8>
// CHECK: cuvil_l2.ukernel_call "quantized_conv2d" ins(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : memref<1x8x4x4x!quant.uniform<u8:f32, 5.000000e-02:120>>, memref<576xi8>, memref<8xi32>, memref<8xf32>) outs(%[[Y]], %[[S]] : {{.*}}) params {{.*}} algorithm <direct_blocked> packed_b {{[{]}}{{.*}}cuvil.kernel_size = array<i64: 3, 3>, cuvil.narrow_weights}
// CHECK: cuvil_l2.copy %[[Y]], %{{.+}}
func.func @blocked(%x: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  %q = cuvil.quantize %x : tensor<1x8x4x4xf32> to tensor<1x8x4x4x!quant.uniform<u8:f32, 0.05:120>>
  %c = cuvil.constant dense<1> : tensor<8x8x3x3xi8>
  %wq = cuvil.storage_cast %c : tensor<8x8x3x3xi8> to tensor<8x8x3x3x!quant.uniform<i8:f32, 0.5>>
  %y = cuvil.quantized_conv2d %q, %wq {padding = array<i64: 1, 1, 1, 1>} : tensor<1x8x4x4x!quant.uniform<u8:f32, 0.05:120>>, tensor<8x8x3x3x!quant.uniform<i8:f32, 0.5>>
  return %y : tensor<1x8x4x4xf32>
}

// -----

// A depthwise one whose input is the model's (plain): its filters as
// floats [C][KH][KW] (one channel per block), no scratch; weights of 127
// are not narrow (which only the blocked tiles care about).
// CHECK-LABEL: func.func @depthwise
// CHECK-NOT: cuvil_l2.copy
// CHECK: cuvil_l2.ukernel_call "quantized_conv2d" ins(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : memref<1x8x4x4x!quant.uniform<u8:f32, 5.000000e-02:120>>, memref<72xf32>, memref<8xi32>, memref<8xf32>) outs(%{{[a-z0-9]+}} : memref<1x8x4x4xf32>) params {groups = 8 : i64, padding = array<i64: 1, 1, 1, 1>} packed_b {{[{]}}{{.*}}cuvil.kernel_size = array<i64: 3, 3>}
// CHECK-NOT: narrow_weights
func.func @depthwise(%x: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  %q = cuvil.quantize %x : tensor<1x8x4x4xf32> to tensor<1x8x4x4x!quant.uniform<u8:f32, 0.05:120>>
  %c = cuvil.constant dense<127> : tensor<8x1x3x3xi8>
  %wq = cuvil.storage_cast %c : tensor<8x1x3x3xi8> to tensor<8x1x3x3x!quant.uniform<i8:f32, 0.5>>
  %y = cuvil.quantized_conv2d %q, %wq {groups = 8 : i64, padding = array<i64: 1, 1, 1, 1>} : tensor<1x8x4x4x!quant.uniform<u8:f32, 0.05:120>>, tensor<8x1x3x3x!quant.uniform<i8:f32, 0.5>>
  return %y : tensor<1x8x4x4xf32>
}

// -----

// A bfloat16 convolution reading a bfloat16 input (a plain one: no cast to
// fuse) packs its OIHW weights for its layouts, [OC/B][C/ib][KH][KW][ib/2]
// [B][2] (ib 2 for a plain input; B 1 for one output channel: 1.0 and
// 1.01171875 as 0x3F80, 0x3F82), takes the converted image (2 channels x
// 4 x 4 bfloat16 = 64 bytes) as scratch, runs direct_blocked and records
// its kernel size and channel block; its bias stays an input.
// CHECK-DAG: memref.global "private" constant @bf16_conv_constant_0_bpacked : memref<2xi16>
// CHECK-NOT: @bf16_conv_constant_0 :
// CHECK-LABEL: func.func @bf16_conv
// CHECK: %[[S:.+]] = memref.alloc() {alignment = 64 : i64} : memref<64xi8>
// CHECK: cuvil_l2.ukernel_call "conv2d" ins(%arg1, %{{.+}}, %{{.+}} : memref<1x2x4x4xbf16>, memref<2xi16>, memref<1xf32>) outs(%arg2, %[[S]] : memref<1x1x4x4xf32>, memref<64xi8>) params {acc_type = f32, groups = 1 : i64} algorithm <direct_blocked> packed_b {{[{]}}{{.*}}cuvil.channel_block = 1 : i64, cuvil.kernel_size = array<i64: 1, 1>}
// CHECK: bf16_conv_constant_0_bpacked: "0x40000000803F823F"
func.func @bf16_conv(%x: tensor<1x2x4x4xbf16>) -> tensor<1x1x4x4xf32> {
  %w = cuvil.constant dense<[[[[1.0]], [[1.01171875]]]]> : tensor<1x2x1x1xbf16>
  %b = cuvil.constant dense<0.5> : tensor<1xf32>
  %y = cuvil.conv2d %x, %w, %b {acc_type = f32} : tensor<1x2x4x4xbf16>, tensor<1x2x1x1xbf16>, tensor<1xf32>
  return %y : tensor<1x1x4x4xf32>
}

// -----

// A plain output of 24 channels on an AVX-512 target is computed in
// blocks of 8 (24 is no multiple of 16), through the scratch: the image
// (64 bytes) and one image's blocked output (24 x 4 x 4 floats).
// CHECK-LABEL: func.func @bf16_plain_output
// CHECK: %[[S:.+]] = memref.alloc() {alignment = 64 : i64} : memref<1600xi8>
// CHECK: cuvil_l2.ukernel_call "conv2d" {{.*}} outs(%arg2, %[[S]] : memref<1x24x4x4xf32>, memref<1600xi8>) {{.*}} {{[{]}}{{.*}}cuvil.channel_block = 8 : i64, cuvil.kernel_size = array<i64: 1, 1>}
module attributes {cuvil.target = #cuvil.target<backend = "x86", vector_bits = 512>} {
func.func @bf16_plain_output(%x: tensor<1x2x4x4xbf16>) -> tensor<1x24x4x4xf32> {
  %w = cuvil.constant dense<1.0> : tensor<24x2x1x1xbf16>
  %y = cuvil.conv2d %x, %w {acc_type = f32} : tensor<1x2x4x4xbf16>, tensor<24x2x1x1xbf16>
  return %y : tensor<1x24x4x4xf32>
}
}

// -----

func.func @bf16_conv_computed(%x: tensor<1x2x4x4xbf16>, %w: tensor<1x2x1x1xbf16>) -> tensor<1x1x4x4xf32> {
  // expected-error @+1 {{'cuvil_l2.ukernel_call' op multiplies bfloat16 only against constant weights on the CPU targets}}
  %y = cuvil.conv2d %x, %w {acc_type = f32} : tensor<1x2x4x4xbf16>, tensor<1x2x1x1xbf16>
  return %y : tensor<1x1x4x4xf32>
}
