// RUN: cuvil-opt %s --split-input-file --cuvil-fpga-assign-fixed-point --cuvil-lower-to-level2 --cuvil-fpga-plan-design --verify-diagnostics | FileCheck %s

// A 16-64 dense layer at fixed<16,6> on ZU9EG whose DSP cap (80% of 2520)
// holds its 1024 products at once: reuse factor 1, latency strategy, the
// weights as constants in the multipliers (no memory space), II 1. The
// softmax's tables are its own; it has no weights to place.
// CHECK-LABEL: func.func @dense
// CHECK-SAME: fpga.decisions = []
// CHECK: ukernel_call "gemm"
// CHECK-SAME: fpga.plan = {hints = #cuvil_l2.loop_hints<pipeline_ii = 1, unroll = 1024>, ii = 1 : i64, latency = {{[0-9]+}} : i64, reuse_factor = 1 : i64, strategy = "latency"}
// CHECK: ukernel_call "softmax"
// CHECK-SAME: fpga.plan = {hints = #cuvil_l2.loop_hints<pipeline_ii = 1>, ii = 1 : i64
module attributes {cuvil.target = #cuvil.target<backend = "fpga", cpu = "xczu9eg", config = {clock_ns = 5.0 : f64}>} {
  func.func @dense(%x: tensor<1x16xf32>) -> tensor<1x64xf32> {
    %w = cuvil.constant dense<0.3> : tensor<16x64xf32>
    %b = cuvil.constant dense<0.5> : tensor<64xf32>
    %y = cuvil.gemm %x, %w, %b : tensor<1x16xf32>, tensor<16x64xf32>, tensor<64xf32> loc("/fc1/Gemm")
    %s = cuvil.softmax %y, axis = 1 : tensor<1x64xf32> loc("/softmax/Softmax")
    return %s : tensor<1x64xf32>
  }
}

// -----

// The user's reuse factor of 8 (the target's config): 128 multipliers a
// cycle, 8 cycles a sample, folded (resource) with its weights in LUT RAM.
// CHECK-LABEL: func.func @folded
// CHECK: ukernel_call "gemm"
// CHECK-SAME: fpga.plan = {hints = #cuvil_l2.loop_hints<pipeline_ii = 8, unroll = 128>, ii = 8 : i64, latency = {{[0-9]+}} : i64, memory = #cuvil_l2.space<lutram>, reuse_factor = 8 : i64, strategy = "resource"}
module attributes {cuvil.target = #cuvil.target<backend = "fpga", cpu = "xczu9eg", config = {clock_ns = 5.0 : f64, layer_reuse_factor = {"/fc1/Gemm" = 8}}>} {
  func.func @folded(%x: tensor<1x16xf32>) -> tensor<1x64xf32> {
    %w = cuvil.constant dense<0.3> : tensor<16x64xf32>
    %y = cuvil.gemm %x, %w : tensor<1x16xf32>, tensor<16x64xf32> loc("/fc1/Gemm")
    return %y : tensor<1x64xf32>
  }
}

// -----

// 128 x 512 products do not fit 80% of ZU9EG's DSPs at once: the reuse
// factor is raised to 64, and the decision is there for a person to read;
// 64 words are shallow enough for LUT RAM.
// CHECK-LABEL: func.func @raised
// CHECK-SAME: fpga.decisions = ["layer /big/Gemm (layer1): reuse factor raised from 1 to 64 so that the design fits 80% of xczu9eg"]
// CHECK: fpga.plan = {hints = #cuvil_l2.loop_hints<pipeline_ii = 64, unroll = 1024>, ii = 64 : i64, latency = {{[0-9]+}} : i64, memory = #cuvil_l2.space<lutram>, reuse_factor = 64 : i64, strategy = "resource"}
module attributes {cuvil.target = #cuvil.target<backend = "fpga", cpu = "xczu9eg", config = {clock_ns = 5.0 : f64}>} {
  func.func @raised(%x: tensor<1x128xf32>) -> tensor<1x512xf32> {
    %w = cuvil.constant dense<0.3> : tensor<128x512xf32>
    %y = cuvil.matmul %x, %w : tensor<1x128xf32>, tensor<128x512xf32> loc("/big/Gemm")
    return %y : tensor<1x512xf32>
  }
}

// -----

// At reuse factor 512 the weights are 512 words deep: block RAM.
// CHECK-LABEL: func.func @deep
// CHECK: fpga.plan = {{.*}}memory = #cuvil_l2.space<bram>, reuse_factor = 512 : i64, strategy = "resource"}
module attributes {cuvil.target = #cuvil.target<backend = "fpga", cpu = "xczu9eg", config = {clock_ns = 5.0 : f64, reuse_factor = 512}>} {
  func.func @deep(%x: tensor<1x128xf32>) -> tensor<1x512xf32> {
    %w = cuvil.constant dense<0.3> : tensor<128x512xf32>
    %y = cuvil.matmul %x, %w : tensor<1x128xf32>, tensor<128x512xf32> loc("/big/Gemm")
    return %y : tensor<1x512xf32>
  }
}

// -----

// A design that cannot fit at the reuse factor the user fixed says what
// it needs.
// expected-error @+1 {{the design does not fit xczu9eg: it needs 8192 DSP}}
module attributes {cuvil.target = #cuvil.target<backend = "fpga", cpu = "xczu9eg", config = {clock_ns = 5.0 : f64, layer_reuse_factor = {"/big/Gemm" = 1}}>} {
  func.func @fixed(%x: tensor<1x128xf32>) -> tensor<1x64xf32> {
    %w = cuvil.constant dense<0.3> : tensor<128x64xf32>
    %y = cuvil.matmul %x, %w : tensor<1x128xf32>, tensor<128x64xf32> loc("/big/Gemm")
    return %y : tensor<1x64xf32>
  }
}

// -----

// The part must be an FPGA's.
// expected-error @+1 {{cuvil-fpga-plan-design needs a #cuvil.target whose cpu is an FPGA part: unknown FPGA device 'mlu270'}}
module attributes {cuvil.target = #cuvil.target<backend = "fpga", cpu = "mlu270">} {
  func.func @wrong(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
    %y = cuvil.relu %x : tensor<1x4xf32>
    return %y : tensor<1x4xf32>
  }
}
