// Round trip of level2 attributes, types and ops.
// RUN: cuvil-opt %s | cuvil-opt | FileCheck %s
// RUN: cuvil-opt %s --mlir-print-op-generic | cuvil-opt | FileCheck %s

// A ResNet-style step: reorder the input to NCHW16c, run a micro-kernel,
// apply a fused epilogue kernel, reorder back. All intermediates are views of
// the caller's arena.
// CHECK-LABEL: func.func @conv_block
// CHECK-SAME: %[[ARENA:[a-z0-9]+]]: memref<1048576xi8> {cuvil_l2.arena}
func.func @conv_block(%in: memref<?x64x8x8xf32>, %w: memref<64x64x3x3xf32, #cuvil_l2.layout<"OIHW" to "OIHW16i16o">>,
                      %out: memref<?x64x8x8xf32>, %arena: memref<1048576xi8> {cuvil_l2.arena},
                      %n: index) {
  // CHECK: %[[X:.+]] = cuvil_l2.view %[[ARENA]][0] (%{{.+}}) bounds [16] : memref<1048576xi8> to memref<?x64x8x8xf32, #cuvil_l2.layout<"NCHW" to "NCHW16c">>
  %x = cuvil_l2.view %arena[0] (%n) bounds [16] : memref<1048576xi8> to memref<?x64x8x8xf32, #cuvil_l2.layout<"NCHW" to "NCHW16c">>
  // 16 x 64 x 8 x 8 x 4 bytes = 262144
  %y = cuvil_l2.view %arena[262144] (%n) bounds [16] : memref<1048576xi8> to memref<?x64x8x8xf32, #cuvil_l2.layout<"NCHW" to "NCHW16c">>
  // CHECK: cuvil_l2.copy %{{.+}}, %[[X]] : memref<?x64x8x8xf32>, memref<?x64x8x8xf32, #cuvil_l2.layout<"NCHW" to "NCHW16c">>
  cuvil_l2.copy %in, %x : memref<?x64x8x8xf32>, memref<?x64x8x8xf32, #cuvil_l2.layout<"NCHW" to "NCHW16c">>
  // CHECK: cuvil_l2.ukernel_call "conv3x3_f32_avx512_nchw16c" ins(%[[X]], %{{.+}}, %{{.+}} : {{.*}}) outs(%{{.+}} : {{.*}}) {padding = 1 : i64}
  cuvil_l2.ukernel_call "conv3x3_f32_avx512_nchw16c"
      ins(%x, %w, %n : memref<?x64x8x8xf32, #cuvil_l2.layout<"NCHW" to "NCHW16c">>, memref<64x64x3x3xf32, #cuvil_l2.layout<"OIHW" to "OIHW16i16o">>, index)
      outs(%y : memref<?x64x8x8xf32, #cuvil_l2.layout<"NCHW" to "NCHW16c">>) {padding = 1 : i64}
  // CHECK: cuvil_l2.kernel "relu_epilogue" ins(%{{.+}} : index) outs(%{{.+}} : {{.*}}) tile = <sizes = [1, 1, 8, 8, 16], vector_width = 16> hints = <parallel = true> split = <axis = 0, parts = 2> {
  cuvil_l2.kernel "relu_epilogue" ins(%n : index) outs(%y : memref<?x64x8x8xf32, #cuvil_l2.layout<"NCHW" to "NCHW16c">>)
      tile = #cuvil_l2.tile<sizes = [1, 1, 8, 8, 16], vector_width = 16>
      hints = #cuvil_l2.loop_hints<parallel = true>
      split = #cuvil_l2.task_split<axis = 0, parts = 2> {
  ^bb0(%batch: index, %buf: memref<?x64x8x8xf32, #cuvil_l2.layout<"NCHW" to "NCHW16c">>):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c64 = arith.constant 64 : index
    %zero = arith.constant 0.0 : f32
    // CHECK: scf.for
    // CHECK: {cuvil_l2.hints = #cuvil_l2.loop_hints<pipeline_ii = 1, unroll = 4>}
    scf.for %b = %c0 to %batch step %c1 {
      scf.for %c = %c0 to %c64 step %c1 {
        scf.for %h = %c0 to %c8 step %c1 {
          scf.for %ww = %c0 to %c8 step %c1 {
            %v = memref.load %buf[%b, %c, %h, %ww] : memref<?x64x8x8xf32, #cuvil_l2.layout<"NCHW" to "NCHW16c">>
            %r = arith.maximumf %v, %zero : f32
            memref.store %r, %buf[%b, %c, %h, %ww] : memref<?x64x8x8xf32, #cuvil_l2.layout<"NCHW" to "NCHW16c">>
          } {cuvil_l2.hints = #cuvil_l2.loop_hints<pipeline_ii = 1, unroll = 4>}
        }
      }
    }
    // The terminator is implicit in the printed form.
    // CHECK-NOT: cuvil_l2.end
    cuvil_l2.end
  }
  cuvil_l2.copy %y, %out : memref<?x64x8x8xf32, #cuvil_l2.layout<"NCHW" to "NCHW16c">>, memref<?x64x8x8xf32>
  return
}

// On-chip memories and fixed point (FPGA and MLU).
// CHECK-LABEL: func.func @on_chip
func.func @on_chip(%ddr: memref<64x!cuvil_l2.fixed<16, 8>>,
                   %nram_arena: memref<4096xi8, #cuvil_l2.space<nram>> {cuvil_l2.arena}) {
  // CHECK: cuvil_l2.view %{{.+}}[64] : memref<4096xi8, #cuvil_l2.space<nram>> to memref<64x!cuvil_l2.fixed<16, 8>, #cuvil_l2.space<nram>>
  %buf = cuvil_l2.view %nram_arena[64] : memref<4096xi8, #cuvil_l2.space<nram>> to memref<64x!cuvil_l2.fixed<16, 8>, #cuvil_l2.space<nram>>
  // CHECK: cuvil_l2.copy %{{.+}}, %{{.+}} : memref<64x!cuvil_l2.fixed<16, 8>>, memref<64x!cuvil_l2.fixed<16, 8>, #cuvil_l2.space<nram>>
  cuvil_l2.copy %ddr, %buf : memref<64x!cuvil_l2.fixed<16, 8>>, memref<64x!cuvil_l2.fixed<16, 8>, #cuvil_l2.space<nram>>
  // CHECK: memref<8x!cuvil_l2.fixed<8, 4, unsigned>, #cuvil_l2.space<bram>>
  %bram = memref.alloca() : memref<8x!cuvil_l2.fixed<8, 4, unsigned>, #cuvil_l2.space<bram>>
  // CHECK: #cuvil_l2.space<wram>
  // CHECK: #cuvil_l2.space<sram>
  // CHECK: #cuvil_l2.space<uram>
  %a = memref.alloca() : memref<4xf32, #cuvil_l2.space<wram>>
  %b = memref.alloca() : memref<4xf32, #cuvil_l2.space<sram>>
  %c = memref.alloca() : memref<4xf32, #cuvil_l2.space<uram>>
  return
}

// The micro-kernel contract, typed: a call the lowering made carries its
// level1 op's attributes as params, a target's algorithm and the epilogue
// its kernel applies; a product's B may be packed at compile time.
// CHECK-LABEL: func.func @contract
// CHECK: cuvil_l2.ukernel_call "conv2d" ins(%{{.+}}, %{{.+}}, %{{.+}} : memref<1x8x28x28xf32>, memref<8x8x3x3xf32>, memref<1x8x28x28xf32>) outs(%{{.+}}, %{{.+}} : memref<1x8x28x28xf32>, memref<37440xf32>) params {groups = 1 : i64, operandSegmentSizes = array<i32: 1, 1, 0>, padding = array<i64: 1, 1, 1, 1>} algorithm <winograd_f4x3> epilogue <steps = [add, clip], clip_min = 0.000000e+00 : f64, clip_max = 6.000000e+00 : f64>
// CHECK: cuvil_l2.ukernel_call "matmul" ins({{.*}}) outs(%{{.+}} : memref<4x32xf32>) epilogue <steps = [col_bias, relu]> packed_b
func.func @contract(%x: memref<1x8x28x28xf32>, %w: memref<8x8x3x3xf32>, %y: memref<1x8x28x28xf32>,
                    %s: memref<37440xf32>, %a: memref<4x16xf32>, %b: memref<1x16x32xf32>,
                    %bias: memref<32xf32>, %c: memref<4x32xf32>) {
  cuvil_l2.ukernel_call "conv2d" ins(%x, %w, %x : memref<1x8x28x28xf32>, memref<8x8x3x3xf32>, memref<1x8x28x28xf32>)
      outs(%y, %s : memref<1x8x28x28xf32>, memref<37440xf32>)
      params {groups = 1 : i64, operandSegmentSizes = array<i32: 1, 1, 0>, padding = array<i64: 1, 1, 1, 1>}
      algorithm #cuvil_l2.algorithm<winograd_f4x3>
      epilogue #cuvil_l2.epilogue<steps = [add, clip], clip_min = 0.0 : f64, clip_max = 6.0 : f64>
  cuvil_l2.ukernel_call "matmul" ins(%a, %b, %bias : memref<4x16xf32>, memref<1x16x32xf32>, memref<32xf32>)
      outs(%c : memref<4x32xf32>)
      epilogue #cuvil_l2.epilogue<steps = [col_bias, relu]> packed_b
  return
}

// CHECK-LABEL: func @control_flow
func.func @control_flow(%c: memref<i1>, %m: memref<i64>, %i: memref<i64>, %x: memref<4xf32>, %s: memref<3x4xf32>) {
  // CHECK: cuvil_l2.if %{{.+}} : memref<i1> {
  // CHECK: } else {
  cuvil_l2.if %c : memref<i1> {
    cuvil_l2.copy %x, %x : memref<4xf32>, memref<4xf32>
  } else {
  }
  // CHECK: cuvil_l2.loop max(%{{.+}} : memref<i64>) while %{{.+}} : memref<i1> iteration(%{{.+}} : memref<i64>) {
  // CHECK: cuvil_l2.insert_row %{{.+}}, %{{.+}}[%{{.+}}] : memref<4xf32>, memref<3x4xf32>, memref<i64>
  cuvil_l2.loop max(%m : memref<i64>) while %c : memref<i1> iteration(%i : memref<i64>) {
    cuvil_l2.insert_row %x, %s[%i] : memref<4xf32>, memref<3x4xf32>, memref<i64>
  }
  return
}
