// RUN: cuvil-opt %s --split-input-file --cuvil-quantize-products="power-of-two=true" --cuvil-fold-quantized-products --canonicalize --cuvil-fuse-epilogues --cuvil-lower-to-level2 --cuvil-mlu-lower-fixed-point --canonicalize --verify-diagnostics | FileCheck %s
// RUN: cuvil-opt %s --split-input-file --cuvil-quantize-products="power-of-two=true" --cuvil-fold-quantized-products --canonicalize --cuvil-fuse-epilogues --cuvil-lower-to-level2 --cuvil-mlu-lower-fixed-point --canonicalize --cuvil-mlu-plan-kernels --verify-diagnostics | FileCheck %s --check-prefix=PLAN

// A linear layer in fixed point: the input over [-1, 4] at position -4
// (2^-4 holds 4 in 127 steps), the weights (max 2) at -5, so
// W^T = (1, -2, 0.5 | 0, 0.25, 0) is (32, -64, 16 | 0, 8, 0). The product
// reads the float32 input itself (the quantize call is gone) and the
// weights packed [Np = 64][Kp = 128]: row n holds column n of W^T, zeros
// after K = 3; the int8 [K, N] global is gone too.
// CHECK-LABEL: func.func @gemm
// CHECK-NOT: "quantize"
// CHECK: cuvil_l2.ukernel_call "fixed_matmul" ins(%arg1, %{{.+}}, %{{.+}} : memref<4x3xf32>, memref<64x128xi8>, memref<2xf32>) outs(%arg2 : memref<4x2xf32>) params {input_position = -4 : i64, weight_position = -5 : i64} epilogue <steps = [col_bias, relu]>
// CHECK-NOT: memref<3x2xi8>
// CHECK: gemm_constant_0_fixed: "0x4000000020C010{{(00){125}()}}000800{{(00){125}()}}{{(00)+}}"
// The plan: the row, its int8 copy and the sums in NRAM, the tile's
// weights (64 rows of Kp) in WRAM.
// PLAN-LABEL: func.func @gemm
// PLAN: "fixed_matmul"
// PLAN-SAME: q = memref<128xi8, #cuvil_l2.space<nram>>
// PLAN-SAME: row = memref<128xf32, #cuvil_l2.space<nram>>
// PLAN-SAME: wt = memref<8192xi8, #cuvil_l2.space<wram>>
// PLAN-SAME: tile = #cuvil_l2.tile<sizes = [1, 128, 64]
module attributes {cuvil.target = #cuvil.target<backend = "mlu", cpu = "mlu270">} {
  func.func @gemm(%x: tensor<4x3xf32>) -> tensor<4x2xf32> {
    %w = cuvil.constant dense<[[1.0, -2.0, 0.5], [0.0, 0.25, 0.0]]> : tensor<2x3xf32>
    %b = cuvil.constant dense<[0.5, -1.0]> : tensor<2xf32>
    %y = cuvil.gemm %x, %w, %b {trans_b, cuvil.activation_range = array<f64: -1.0, 4.0>} : tensor<4x3xf32>, tensor<2x3xf32>, tensor<2xf32>
    %r = cuvil.relu %y : tensor<4x2xf32>
    return %r : tensor<4x2xf32>
  }
}

// -----

// A convolution: OIHW (3 | -0.5) at position -5 is (96 | -16), packed
// [OCp = 64][KH][KW][Cp = 64]: one byte at the start of each of the first
// two rows of 64. Planned as 4 items of one output row each (64 channels
// in and out): each reads one input row of 4 values of 64 channels (xh,
// HWC) and the 64 x 64 weights in WRAM.
// CHECK-LABEL: func.func @conv
// CHECK: cuvil_l2.ukernel_call "fixed_conv2d" ins(%arg1, %{{.+}}, %{{.+}} : memref<1x1x4x4xf32>, memref<64x1x1x64xi8>, memref<2xf32>) outs(%arg2 : memref<1x2x4x4xf32>) params {groups = 1 : i64, input_position = -3 : i64, weight_position = -5 : i64}
// CHECK: _fixed: "0x4000000060{{(00){63}()}}F0{{(00)+}}"
// PLAN-LABEL: func.func @conv
// PLAN: "fixed_conv2d"
// PLAN-SAME: wt = memref<4096xi8, #cuvil_l2.space<wram>>
// PLAN-SAME: xh = memref<256xi8, #cuvil_l2.space<nram>>
// PLAN-SAME: task_split = #cuvil_l2.task_split<axis = 0, parts = 4>, tile = #cuvil_l2.tile<sizes = [64, 64, 1]>
module attributes {cuvil.target = #cuvil.target<backend = "mlu", cpu = "mlu270">} {
  func.func @conv(%x: tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32> {
    %w = cuvil.constant dense<[[[[3.0]]], [[[-0.5]]]]> : tensor<2x1x1x1xf32>
    %b = cuvil.constant dense<[0.5, -1.0]> : tensor<2xf32>
    %y = cuvil.conv2d %x, %w, %b {cuvil.activation_range = array<f64: 0.0, 15.875>} : tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>
    return %y : tensor<1x2x4x4xf32>
  }
}

// -----

// Two products of one input (attention's projections): one quantize for
// both, gone once both read the float32 input.
// CHECK-LABEL: func.func @shared_input
// CHECK-NOT: "quantize"
// CHECK-COUNT-2: "fixed_matmul" ins(%arg1,
module attributes {cuvil.target = #cuvil.target<backend = "mlu", cpu = "mlu270">} {
  func.func @shared_input(%x: tensor<4x3xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>) {
    %w = cuvil.constant dense<[[1.0, -2.0, 0.5], [0.0, 0.25, 0.0]]> : tensor<2x3xf32>
    %v = cuvil.constant dense<[[1.0, 2.0, 0.5], [1.0, 0.25, 0.0]]> : tensor<2x3xf32>
    %y = cuvil.gemm %x, %w {trans_b, cuvil.activation_range = array<f64: -1.0, 4.0>} : tensor<4x3xf32>, tensor<2x3xf32>
    %z = cuvil.gemm %x, %v {trans_b, cuvil.activation_range = array<f64: -1.0, 4.0>} : tensor<4x3xf32>, tensor<2x3xf32>
    return %y, %z : tensor<4x2xf32>, tensor<4x2xf32>
  }
}

// -----

// An imported QDQ model's scales are not powers of two: the tensor unit
// cannot run it, and the error says what to compile instead.
module attributes {cuvil.target = #cuvil.target<backend = "mlu", cpu = "mlu270">} {
  func.func @qdq(%x: tensor<4x3xf32>) -> tensor<4x2xf32> {
    %w = cuvil.constant dense<[[1, -2], [3, 0], [5, 6]]> : tensor<3x2xi8>
    %wq = cuvil.storage_cast %w : tensor<3x2xi8> to tensor<3x2x!quant.uniform<i8:f32, 0.07>>
    %q = cuvil.quantize %x : tensor<4x3xf32> to tensor<4x3x!quant.uniform<i8:f32, 0.03>>
    // expected-error @+1 {{'quantized_matmul' cannot run on the MLU's tensor unit: MLU2xx's int8 is fixed point, symmetric int8 per tensor with power-of-two scales, and this layer's types are '!quant.uniform<i8:f32, 3.000000e-02>' and '!quant.uniform<i8:f32, 7.000000e-02>'; compile the float model with --precision=int8 and calibration data}}
    %y = cuvil.quantized_matmul %q, %wq : tensor<4x3x!quant.uniform<i8:f32, 0.03>>, tensor<3x2x!quant.uniform<i8:f32, 0.07>>
    return %y : tensor<4x2xf32>
  }
}

// -----

// A grouped convolution in fixed point (written by hand: calibration keeps
// them float32 on this target) is refused at the call.
module attributes {cuvil.target = #cuvil.target<backend = "mlu", cpu = "mlu270">} {
  func.func @grouped(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
    %w = cuvil.constant dense<[[[[1]]], [[[2]]]]> : tensor<2x1x1x1xi8>
    %wq = cuvil.storage_cast %w : tensor<2x1x1x1xi8> to tensor<2x1x1x1x!quant.uniform<i8:f32, 0.125>>
    %q = cuvil.quantize %x : tensor<1x2x4x4xf32> to tensor<1x2x4x4x!quant.uniform<i8:f32, 0.25>>
    // expected-error @+1 {{'quantized_conv2d' cannot run on the MLU's tensor unit: the tensor unit's convolution has no groups or dilation}}
    %y = cuvil.quantized_conv2d %q, %wq {groups = 2 : i64} : tensor<1x2x4x4x!quant.uniform<i8:f32, 0.25>>, tensor<2x1x1x1x!quant.uniform<i8:f32, 0.125>>
    return %y : tensor<1x2x4x4xf32>
  }
}

// -----

// ResNet's stem at 224x224 in int8: the input's float32 rows hold its 3
// real channels (3 x 11 rows x 224), not the 64 the tensor unit pads them
// to (which needed 670 KB of NRAM and did not fit); its 64 x 7 x 7 x 64
// weights are staged in each cluster's SRAM (Union1) and copied to WRAM
// per item.
// PLAN-LABEL: func.func @stem
// PLAN: "fixed_conv2d"
// PLAN-SAME: sw = memref<200704xi8, #cuvil_l2.space<sram>>
// PLAN-SAME: wt = memref<200704xi8, #cuvil_l2.space<wram>>
// PLAN-SAME: x = memref<7424xf32, #cuvil_l2.space<nram>>
// PLAN-SAME: function_type = "union1"
// PLAN-SAME: tile = #cuvil_l2.tile<sizes = [64, 64, 3]>
module attributes {cuvil.target = #cuvil.target<backend = "mlu", cpu = "mlu270">} {
  func.func @stem(%x: tensor<1x3x224x224xf32>) -> tensor<1x64x112x112xf32> {
    %w = cuvil.constant dense<0.5> : tensor<64x3x7x7xf32>
    %y = cuvil.conv2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 3, 3, 3, 3>, cuvil.activation_range = array<f64: -4.0, 4.0>} : tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>
    return %y : tensor<1x64x112x112xf32>
  }
}
