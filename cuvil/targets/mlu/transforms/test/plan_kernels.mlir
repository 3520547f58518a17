// RUN: cuvil-opt %s --split-input-file --cuvil-lower-to-level2 --cuvil-mlu-plan-kernels --verify-diagnostics | FileCheck %s

// An MLP layer on MLU270 (16 cores, 384 KB of NRAM planned into): the 4x128
// product is split until each core has an item, columns first (128 -> 32,
// one vector of 128 bytes), then rows (4 -> 1): 16 items on 16 tasks. K = 64
// is one tile, so nothing streams and nothing is double buffered. Every
// buffer is in NRAM, A and B twice (ping-pong).
// CHECK-LABEL: func.func @mlp
// CHECK: cuvil_l2.ukernel_call "gemm"
// CHECK-SAME: mlu.plan = {buffers = {a = memref<2x64xf32, #cuvil_l2.space<nram>>, acc = memref<32xf32, #cuvil_l2.space<nram>>, b = memref<2x2048xf32, #cuvil_l2.space<nram>>, tmp = memref<32xf32, #cuvil_l2.space<nram>>, vec = memref<32xf32, #cuvil_l2.space<nram>>}, function_type = "block", gdram_bytes = {{[0-9]+}} : i64, task_split = #cuvil_l2.task_split<axis = 0, parts = 16>, tile = #cuvil_l2.tile<sizes = [1, 64, 32], vector_width = 32>, work_items = 16 : i64}
module attributes {cuvil.target = #cuvil.target<backend = "mlu", cpu = "mlu270">} {
  func.func @mlp(%x: tensor<4x64xf32>) -> tensor<4x128xf32> {
    %w = cuvil.constant dense<0.5> : tensor<64x128xf32>
    %b = cuvil.constant dense<0.25> : tensor<128xf32>
    %y = cuvil.gemm %x, %w, %b : tensor<4x64xf32>, tensor<64x128xf32>, tensor<128xf32>
    return %y : tensor<4x128xf32>
  }
}

// -----

// All 64 x 128 channels and 8 rows would need 500 KB: the input channels
// stream in tiles of 32 instead (so the input rows and the weights are
// double buffered: a leading 2). Then the 16 cores get 16 items: rows 8 ->
// 4 (4 x 8 outputs still fill a vector of 32), then output channels 64 ->
// 8. The patch matrix holds one tile's 32 x 9 rows of 32 positions; input
// rows (4 - 1) + 3 = 6 of 8 values per channel.
// CHECK-LABEL: func.func @conv
// CHECK: cuvil_l2.ukernel_call "conv2d"
// CHECK-SAME: mlu.plan = {buffers = {acc = memref<256xf32, #cuvil_l2.space<nram>>, p = memref<9216xf32, #cuvil_l2.space<nram>>, tmp = memref<32xf32, #cuvil_l2.space<nram>>, vec = memref<32xf32, #cuvil_l2.space<nram>>, w = memref<2x2304xf32, #cuvil_l2.space<nram>>, x = memref<2x1536xf32, #cuvil_l2.space<nram>>}, double_buffered, function_type = "block"
// CHECK-SAME: tile = #cuvil_l2.tile<sizes = [8, 32, 4]>, work_items = 16 : i64
module attributes {cuvil.target = #cuvil.target<backend = "mlu", cpu = "mlu270">} {
  func.func @conv(%x: tensor<1x128x8x8xf32>) -> tensor<1x64x8x8xf32> {
    %w = cuvil.constant dense<0.5> : tensor<64x128x3x3xf32>
    %y = cuvil.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : tensor<1x128x8x8xf32>, tensor<64x128x3x3xf32>
    return %y : tensor<1x64x8x8xf32>
  }
}

// -----

// Rows of 100 values are padded to 128 (whole vectors of 128 bytes): 2 rows
// per task over 32 rows.
// CHECK-LABEL: func.func @softmax
// CHECK: cuvil_l2.ukernel_call "softmax"
// CHECK-SAME: t = memref<256xf32, #cuvil_l2.space<nram>>
// CHECK-SAME: tile = #cuvil_l2.tile<sizes = [2, 128], vector_width = 32>, work_items = 16
module attributes {cuvil.target = #cuvil.target<backend = "mlu", cpu = "mlu270">} {
  func.func @softmax(%x: tensor<32x100xf32>) -> tensor<32x100xf32> {
    %y = cuvil.softmax %x, axis = 1 : tensor<32x100xf32>
    return %y : tensor<32x100xf32>
  }
}

// -----

// A row of 200000 values cannot fit NRAM, whatever the tile.
module attributes {cuvil.target = #cuvil.target<backend = "mlu", cpu = "mlu270">} {
  func.func @too_long(%x: tensor<2x200000xf32>) -> tensor<2x200000xf32> {
    // expected-error @+1 {{'softmax' does not fit the MLU: its smallest tile (one row) needs 1600128 bytes of NRAM; mlu270 has 393216 per core after the 131072-byte reserve}}
    %y = cuvil.softmax %x, axis = 1 : tensor<2x200000xf32>
    return %y : tensor<2x200000xf32>
  }
}

// -----

// An op without an MLU kernel is named, with what the target runs.
module attributes {cuvil.target = #cuvil.target<backend = "mlu", cpu = "mlu270">} {
  func.func @cumsum(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
    // expected-error @+1 {{'cumsum' cannot run on the MLU target: the target has no kernel for it yet}}
    %y = cuvil.cumsum %x, axis = 1 : tensor<4x8xf32>
    return %y : tensor<4x8xf32>
  }
}

// -----

// A module for another device is refused.
// expected-error @+1 {{cuvil-mlu-plan-kernels needs a #cuvil.target whose cpu is an MLU chip: unknown MLU 'xcu250'}}
module attributes {cuvil.target = #cuvil.target<backend = "fpga", cpu = "xcu250">} {
  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// fp16 (the target's config): operands in f16, padded to 64 of them (128
// bytes); the sums and the widened B tile in f32, and the sums narrowed
// back into `out` to store.
// CHECK-LABEL: func.func @fp16
// CHECK: cuvil_l2.ukernel_call "gemm"
// CHECK-SAME: mlu.plan = {buffers = {a = memref<2x64xf16, #cuvil_l2.space<nram>>, acc = memref<64xf32, #cuvil_l2.space<nram>>, b = memref<2x4096xf16, #cuvil_l2.space<nram>>, bf = memref<4096xf32, #cuvil_l2.space<nram>>, out = memref<64xf16, #cuvil_l2.space<nram>>, tmp = memref<64xf32, #cuvil_l2.space<nram>>, vec = memref<64xf16, #cuvil_l2.space<nram>>, vecf = memref<64xf32, #cuvil_l2.space<nram>>}
// CHECK-SAME: tile = #cuvil_l2.tile<sizes = [1, 64, 64], vector_width = 64>
module attributes {cuvil.target = #cuvil.target<backend = "mlu", cpu = "mlu270", config = {precision = "fp16"}>} {
  func.func @fp16(%x: tensor<4x64xf32>) -> tensor<4x128xf32> {
    %w = cuvil.constant dense<0.5> : tensor<64x128xf32>
    %b = cuvil.constant dense<0.25> : tensor<128xf32>
    %y = cuvil.gemm %x, %w, %b : tensor<4x64xf32>, tensor<64x128xf32>, tensor<128xf32>
    return %y : tensor<4x128xf32>
  }
}

// -----

// Weights many items share are staged in SRAM: 512 rows of a product by
// one 64 x 64 B. Block tasks would read B once per row tile (8 tiles of
// 64); as Union1 tasks each of the 4 clusters copies the B block (K x Nt,
// 16 KB) into its SRAM once and the 16 tasks take rows tiles of
// 512 / 16 = 32 from there. The launch takes every core (parts = 16).
// CHECK-LABEL: func.func @staged_gemm
// CHECK: cuvil_l2.ukernel_call "matmul"
// CHECK-SAME: sb = memref<4096xf32, #cuvil_l2.space<sram>>
// CHECK-SAME: function_type = "union1"
// CHECK-SAME: task_split = #cuvil_l2.task_split<axis = 0, parts = 16>, tile = #cuvil_l2.tile<sizes = [32, 64, 64]
module attributes {cuvil.target = #cuvil.target<backend = "mlu", cpu = "mlu270">} {
  func.func @staged_gemm(%x: tensor<512x64xf32>) -> tensor<512x64xf32> {
    %w = cuvil.constant dense<0.5> : tensor<64x64xf32>
    %y = cuvil.matmul %x, %w : tensor<512x64xf32>, tensor<64x64xf32>
    return %y : tensor<512x64xf32>
  }
}

// -----

// A 3x3 convolution of 64 channels over 32 rows: its 64 x 64 x 9 weights
// (144 KB) staged in SRAM, the rows split to 2 per item so that every one
// of the 16 tasks has one (input channels stream 8 at a time, as the
// Block plan's NRAM fit chose). A depthwise convolution (a few weights per
// group) stays Block.
// CHECK-LABEL: func.func @staged_conv
// CHECK: cuvil_l2.ukernel_call "conv2d"
// CHECK-SAME: sw = memref<36864xf32, #cuvil_l2.space<sram>>
// CHECK-SAME: function_type = "union1"
// CHECK-SAME: tile = #cuvil_l2.tile<sizes = [64, 8, 2]
// CHECK: cuvil_l2.ukernel_call "conv2d"
// CHECK-NOT: sram
// CHECK-SAME: function_type = "block"
module attributes {cuvil.target = #cuvil.target<backend = "mlu", cpu = "mlu270">} {
  func.func @staged_conv(%x: tensor<1x64x32x32xf32>) -> tensor<1x64x32x32xf32> {
    %w = cuvil.constant dense<0.5> : tensor<64x64x3x3xf32>
    %y = cuvil.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : tensor<1x64x32x32xf32>, tensor<64x64x3x3xf32>
    %d = cuvil.constant dense<0.5> : tensor<64x1x3x3xf32>
    %z = cuvil.conv2d %y, %d {groups = 64 : i64, padding = array<i64: 1, 1, 1, 1>} : tensor<1x64x32x32xf32>, tensor<64x1x3x3xf32>
    return %z : tensor<1x64x32x32xf32>
  }
}
