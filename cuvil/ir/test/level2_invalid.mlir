// Every level2 verifier error, with its message.
// RUN: cuvil-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{logical dimensions are capital letters, got 'nchw'}}
func.func @f(%a: memref<1x2x3x4xf32, #cuvil_l2.layout<"nchw" to "NCHW">>)

// -----

// expected-error @+1 {{logical dimension 'C' is repeated}}
func.func @f(%a: memref<1x2x3x4xf32, #cuvil_l2.layout<"NCCW" to "NCCW">>)

// -----

// expected-error @+1 {{layout needs at least one logical dimension}}
func.func @f(%a: memref<f32, #cuvil_l2.layout<"" to "">>)

// -----

// expected-error @+1 {{bad physical layout 'NCHWc': inner block 'c' needs a size, e.g. 16c}}
func.func @f(%a: memref<1x2x3x4xf32, #cuvil_l2.layout<"NCHW" to "NCHWc">>)

// -----

// expected-error @+1 {{bad physical layout 'N16CHW': 'C' is an outer dimension and takes no size}}
func.func @f(%a: memref<1x2x3x4xf32, #cuvil_l2.layout<"NCHW" to "N16CHW">>)

// -----

// expected-error @+1 {{bad physical layout 'NCHW16x': 'x' is not a logical dimension}}
func.func @f(%a: memref<1x2x3x4xf32, #cuvil_l2.layout<"NCHW" to "NCHW16x">>)

// -----

// expected-error @+1 {{bad physical layout 'NCHW1c': block sizes must be at least 2}}
func.func @f(%a: memref<1x2x3x4xf32, #cuvil_l2.layout<"NCHW" to "NCHW1c">>)

// -----

// expected-error @+1 {{bad physical layout 'NCHW16': ends with a number}}
func.func @f(%a: memref<1x2x3x4xf32, #cuvil_l2.layout<"NCHW" to "NCHW16">>)

// -----

// expected-error @+1 {{bad physical layout 'NC-HW': unexpected '-'}}
func.func @f(%a: memref<1x2x3x4xf32, #cuvil_l2.layout<"NCHW" to "NC-HW">>)

// -----

// expected-error @+1 {{physical layout 'NHW' must name 'C' exactly once in capitals}}
func.func @f(%a: memref<1x2x3x4xf32, #cuvil_l2.layout<"NCHW" to "NHW">>)

// -----

// expected-error @+1 {{physical layout 'NCHW8c4c' blocks 'C' more than once}}
func.func @f(%a: memref<1x2x3x4xf32, #cuvil_l2.layout<"NCHW" to "NCHW8c4c">>)

// -----

// expected-error @+1 {{layout NCHW -> NCHW16c expects rank 4, got rank 2}}
func.func @f(%a: memref<2x3xf32, #cuvil_l2.layout<"NCHW" to "NCHW16c">>)

// -----

// expected-error @+1 {{tile needs one size per loop}}
func.func @f() attributes {cuvil_l2.tile = #cuvil_l2.tile<sizes = []>}

// -----

// expected-error @+1 {{tile sizes must be >= 0 (0: not tiled), got -4}}
func.func @f() attributes {cuvil_l2.tile = #cuvil_l2.tile<sizes = [-4]>}

// -----

// expected-error @+1 {{vector_width must be 0 or a power of two, got 12}}
func.func @f() attributes {cuvil_l2.tile = #cuvil_l2.tile<sizes = [24], vector_width = 12>}

// -----

// expected-error @+1 {{the innermost tile (24) must be a multiple of vector_width (16)}}
func.func @f() attributes {cuvil_l2.tile = #cuvil_l2.tile<sizes = [24], vector_width = 16>}

// -----

// expected-error @+1 {{pipeline_ii must be >= 0 (0: not pipelined), got -1}}
func.func @f() attributes {x = #cuvil_l2.loop_hints<pipeline_ii = -1>}

// -----

// expected-error @+1 {{unroll must be >= 0 (0: target decides), got -2}}
func.func @f() attributes {x = #cuvil_l2.loop_hints<unroll = -2>}

// -----

// expected-error @+1 {{task_split axis must be >= 0, got -1}}
func.func @f() attributes {x = #cuvil_l2.task_split<axis = -1, parts = 2>}

// -----

// expected-error @+1 {{task_split parts must be >= 1, got 0}}
func.func @f() attributes {x = #cuvil_l2.task_split<axis = 0, parts = 0>}

// -----

// expected-error @+1 {{fixed-point width must be in [2, 64], got 65}}
func.func @f(%a: memref<4x!cuvil_l2.fixed<65, 8>>)

// -----

// expected-error @+1 {{fixed-point fraction bits (9) exceed the width (8)}}
func.func @f(%a: memref<4x!cuvil_l2.fixed<8, 9>>)

// -----

// expected-error @+1 {{'cuvil_l2.tile' must be a #cuvil_l2.tile}}
func.func @f() attributes {cuvil_l2.tile = 3 : i64} {
  return
}

// -----

// expected-error @+1 {{'cuvil_l2.hints' must be a #cuvil_l2.loop_hints}}
func.func @f() attributes {cuvil_l2.hints = 3 : i64} {
  return
}

// -----

func.func @f() {
  // expected-error @+1 {{'cuvil_l2.hints' annotates loops, but 'arith.constant' has no body}}
  %c = arith.constant {cuvil_l2.hints = #cuvil_l2.loop_hints<unroll = 2>} 0 : index
  return
}

// -----

// expected-error @+1 {{'cuvil_l2.arena' marks a function argument, not an op}}
func.func @f() attributes {cuvil_l2.arena}

// -----

// expected-error @+1 {{unknown cuvil_l2 attribute 'cuvil_l2.nope'}}
func.func @f() attributes {cuvil_l2.nope}

// -----

// expected-error @+1 {{unknown cuvil_l2 argument attribute 'cuvil_l2.nope'}}
func.func @f(%a: memref<64xi8> {cuvil_l2.nope}) {
  return
}

// -----

// expected-error @+1 {{'cuvil_l2.arena' is a unit attribute}}
func.func @f(%a: memref<64xi8> {cuvil_l2.arena = 1 : i64}) {
  return
}

// -----

// expected-error @+1 {{the arena (argument 0) must be a static 1-D i8 memref, got 'memref<?xi8>'}}
func.func @f(%a: memref<?xi8> {cuvil_l2.arena}) {
  return
}

// -----

func.func @f(%arena: memref<?xi8>) {
  // expected-error @+1 {{'cuvil_l2.view' op expects a statically sized arena, got 'memref<?xi8>'}}
  %v = cuvil_l2.view %arena[0] : memref<?xi8> to memref<4xf32>
  return
}

// -----

func.func @f(%arena: memref<256xi8, #cuvil_l2.space<nram>>) {
  // expected-error @+1 {{'cuvil_l2.view' op cannot change the memory space (arena in #cuvil_l2.space<nram>, view in <<NULL ATTRIBUTE>>); use cuvil_l2.copy}}
  %v = cuvil_l2.view %arena[0] : memref<256xi8, #cuvil_l2.space<nram>> to memref<4xf32>
  return
}

// -----

func.func @f(%arena: memref<256xi8>) {
  // expected-error @+1 {{'cuvil_l2.view' op offset 32 must be a non-negative multiple of 64}}
  %v = cuvil_l2.view %arena[32] : memref<256xi8> to memref<4xf32>
  return
}

// -----

func.func @f(%arena: memref<256xi8>, %n: index) {
  // expected-error @+1 {{'cuvil_l2.view' op expects one size and one bound per dynamic dimension (1), got 0 sizes and 0 bounds}}
  %v = cuvil_l2.view %arena[0] : memref<256xi8> to memref<?x4xf32>
  return
}

// -----

func.func @f(%arena: memref<256xi8>, %n: index) {
  // expected-error @+1 {{'cuvil_l2.view' op bounds must be >= 1, got 0}}
  %v = cuvil_l2.view %arena[0] (%n) bounds [0] : memref<256xi8> to memref<?x4xf32>
  return
}

// -----

func.func @f(%arena: memref<256xi8>) {
  %ok = cuvil_l2.view %arena[192] : memref<256xi8> to memref<16xf32>
  // expected-error @+1 {{'cuvil_l2.view' op needs bytes [192, 320) but the arena has 256}}
  %v = cuvil_l2.view %arena[192] : memref<256xi8> to memref<32xf32>
  return
}

// -----

func.func @f(%arena: memref<1536xi8>) {
  // Blocked channels are padded: 20 channels (1280 bytes plain) take 2 blocks
  // of 16 (2048 bytes), more than the arena.
  %ok = cuvil_l2.view %arena[0] : memref<1536xi8> to memref<1x16x4x4xf32, #cuvil_l2.layout<"NCHW" to "NCHW16c">>
  // expected-error @+1 {{'cuvil_l2.view' op needs bytes [0, 2048) but the arena has 1536}}
  %v = cuvil_l2.view %arena[0] : memref<1536xi8> to memref<1x20x4x4xf32, #cuvil_l2.layout<"NCHW" to "NCHW16c">>
  return
}

// -----

func.func @f(%arena: memref<4096xi8>) {
  // expected-error @+1 {{'cuvil_l2.view' op cannot size 'memref<4xf32, strided<[2]>>': only identity and #cuvil_l2.layout layouts are planned}}
  %v = cuvil_l2.view %arena[0] : memref<4096xi8> to memref<4xf32, strided<[2]>>
  return
}

// -----

func.func @f(%arena: memref<4096xi8>) {
  // expected-error @+1 {{'cuvil_l2.view' op element type 'index' has no storage size}}
  %v = cuvil_l2.view %arena[0] : memref<4096xi8> to memref<4xindex>
  return
}

// -----

func.func @f(%a: memref<4xf32>, %b: memref<4xf16>) {
  // expected-error @+1 {{'cuvil_l2.copy' op copies between element types 'f32' and 'f16'; convert elements in a kernel}}
  cuvil_l2.copy %a, %b : memref<4xf32>, memref<4xf16>
  return
}

// -----

func.func @f(%a: memref<4xf32>, %b: memref<5xf32>) {
  // expected-error @+1 {{'cuvil_l2.copy' op expects the same logical shape, got 'memref<4xf32>' and 'memref<5xf32>'}}
  cuvil_l2.copy %a, %b : memref<4xf32>, memref<5xf32>
  return
}

// -----

func.func @f(%a: memref<4xf32>) {
  // expected-error @+1 {{'cuvil_l2.ukernel_call' op kernel name 'gemm-avx2' must be a C identifier}}
  cuvil_l2.ukernel_call "gemm-avx2" outs(%a : memref<4xf32>)
  return
}

// -----

func.func @f(%a: memref<4xf32>) {
  // expected-error @+1 {{'cuvil_l2.ukernel_call' op expects at least one output buffer}}
  "cuvil_l2.ukernel_call"(%a) <{kernel = "gemm", operandSegmentSizes = array<i32: 1, 0>}> : (memref<4xf32>) -> ()
  return
}

// -----

func.func @f(%a: memref<4xf32>) {
  // expected-error @+1 {{'cuvil_l2.kernel' op kernel name '1relu' must be a C identifier}}
  cuvil_l2.kernel "1relu" outs(%a : memref<4xf32>) {
  ^bb0(%x: memref<4xf32>):
    cuvil_l2.end
  }
  return
}

// -----

func.func @f(%a: memref<4xf32>) {
  // expected-error @+1 {{'cuvil_l2.kernel' op expects at least one output buffer}}
  "cuvil_l2.kernel"(%a) <{name = "relu", operandSegmentSizes = array<i32: 1, 0>}> ({
  ^bb0(%x: memref<4xf32>):
    cuvil_l2.end
  }) : (memref<4xf32>) -> ()
  return
}

// -----

func.func @f(%a: memref<4xf32>, %b: memref<4xf32>) {
  // expected-error @+1 {{'cuvil_l2.kernel' op expects the body to take the ins then the outs (memref<4xf32>, memref<4xf32>), got (memref<4xf32>)}}
  cuvil_l2.kernel "relu" ins(%a : memref<4xf32>) outs(%b : memref<4xf32>) {
  ^bb0(%x: memref<4xf32>):
    cuvil_l2.end
  }
  return
}

// -----

func.func @f(%a: memref<4xf32>) {
  // expected-error @+1 {{'cuvil_l2.kernel' op splits loop 1 but the tile has only 1 loops}}
  cuvil_l2.kernel "relu" outs(%a : memref<4xf32>) tile = #cuvil_l2.tile<sizes = [4]> split = #cuvil_l2.task_split<axis = 1, parts = 2> {
  ^bb0(%x: memref<4xf32>):
    cuvil_l2.end
  }
  return
}

// -----

func.func @f() {
  // expected-error @+1 {{'cuvil_l2.end' op expects parent op to be one of 'cuvil_l2.kernel, cuvil_l2.if, cuvil_l2.loop'}}
  cuvil_l2.end
}

// -----

// The micro-kernel contract: every malformed call names what is wrong.
func.func @f(%x: memref<1x4x5x5xf32>, %w: memref<4x4x1x1xf32>, %y: memref<1x4x5x5xf32>) {
  // expected-error @+1 {{'cuvil_l2.ukernel_call' op param 'stride' is not an attribute of 'cuvil.conv2d'}}
  cuvil_l2.ukernel_call "conv2d" ins(%x, %w : memref<1x4x5x5xf32>, memref<4x4x1x1xf32>) outs(%y : memref<1x4x5x5xf32>)
      params {stride = array<i64: 2, 2>}
  return
}

// -----

func.func @f(%x: memref<1x4x5x5xf32>, %w: memref<4x4x1x1xf32>, %y: memref<1x4x5x5xf32>) {
  // expected-error @+1 {{'cuvil_l2.ukernel_call' op params are not those of 'cuvil.conv2d': }}
  cuvil_l2.ukernel_call "conv2d" ins(%x, %w : memref<1x4x5x5xf32>, memref<4x4x1x1xf32>) outs(%y : memref<1x4x5x5xf32>)
      params {groups = "one"}
  return
}

// -----

func.func @f(%x: memref<1x4x5x5xf32>, %w: memref<4x4x1x1xf32>, %y: memref<1x4x5x5xf32>) {
  // expected-error @+1 {{'cuvil_l2.ukernel_call' op algorithm 'winograd_f4x3' needs its scratch as the second of two outputs, got 1 outputs}}
  cuvil_l2.ukernel_call "conv2d" ins(%x, %w : memref<1x4x5x5xf32>, memref<4x4x1x1xf32>) outs(%y : memref<1x4x5x5xf32>)
      algorithm #cuvil_l2.algorithm<winograd_f4x3>
  return
}

// -----

func.func @f(%x: memref<4x4xf32>, %y: memref<4x4xf32>, %s: memref<16xf32>) {
  // expected-error @+1 {{'cuvil_l2.ukernel_call' op algorithm 'im2col' is for convolutions, not 'matmul'}}
  cuvil_l2.ukernel_call "matmul" ins(%x, %x : memref<4x4xf32>, memref<4x4xf32>) outs(%y, %s : memref<4x4xf32>, memref<16xf32>)
      algorithm #cuvil_l2.algorithm<im2col>
  return
}

// -----

func.func @f(%x: memref<4x4xf32>, %y: memref<4x4xf32>) {
  // expected-error @+1 {{'cuvil_l2.ukernel_call' op has 2 inputs, but its epilogue reads 2 after the kernel's own}}
  cuvil_l2.ukernel_call "matmul" ins(%x, %x : memref<4x4xf32>, memref<4x4xf32>) outs(%y : memref<4x4xf32>)
      epilogue #cuvil_l2.epilogue<steps = [col_bias, add]>
  return
}

// -----

func.func @f(%x: memref<4xf32>, %y: memref<4xf32>) {
  // expected-error @+1 {{'cuvil_l2.ukernel_call' op a col_bias epilogue needs a matrix product, not 'relu'}}
  cuvil_l2.ukernel_call "relu" ins(%x, %x : memref<4xf32>, memref<4xf32>) outs(%y : memref<4xf32>)
      epilogue #cuvil_l2.epilogue<steps = [col_bias]>
  return
}

// -----

func.func @f(%x: memref<4x4xf32>, %y: memref<4x4xf32>, %s: memref<16xf32>) {
  // expected-error @+1 {{'cuvil_l2.ukernel_call' op with packed_b needs no packing scratch, got 2 outputs}}
  cuvil_l2.ukernel_call "matmul" ins(%x, %x : memref<4x4xf32>, memref<4x4xf32>) outs(%y, %s : memref<4x4xf32>, memref<16xf32>) packed_b
  return
}

// -----

func.func @f(%x: memref<4xf32>, %y: memref<4xf32>) {
  // expected-error @+1 {{'cuvil_l2.ukernel_call' op packed_b is for matrix products, not 'relu'}}
  cuvil_l2.ukernel_call "relu" ins(%x : memref<4xf32>) outs(%y : memref<4xf32>) packed_b
  return
}

// -----

func.func @f(%x: memref<4xf32>, %y: memref<4xf32>) {
  // expected-error @+2 {{epilogue steps must be an optional col_bias, an optional add, at most one activation, then an optional quantize}}
  cuvil_l2.ukernel_call "relu" ins(%x, %x : memref<4xf32>, memref<4xf32>) outs(%y : memref<4xf32>)
      epilogue #cuvil_l2.epilogue<steps = [relu, add]>
  return
}

// -----

func.func @f(%x: memref<4xf32>, %y: memref<4x!quant.uniform<u8:f32, 0.5:3>>) {
  // expected-error @+2 {{epilogue steps must be an optional col_bias, an optional add, at most one activation, then an optional quantize}}
  cuvil_l2.ukernel_call "relu" ins(%x : memref<4xf32>) outs(%y : memref<4x!quant.uniform<u8:f32, 0.5:3>>)
      epilogue #cuvil_l2.epilogue<steps = [quantize, relu]>
  return
}

// -----

func.func @f(%x: memref<4xf32>, %y: memref<4xf32>) {
  // expected-error @+1 {{a quantize epilogue writes 8 bits per tensor, but the output is 'memref<4xf32>'}}
  cuvil_l2.ukernel_call "relu" ins(%x : memref<4xf32>) outs(%y : memref<4xf32>)
      epilogue #cuvil_l2.epilogue<steps = [quantize]>
  return
}

// -----

func.func @f(%x: memref<4xf32>, %y: memref<4xf32>) {
  // expected-error @+2 {{epilogue clip bounds without a clip step}}
  cuvil_l2.ukernel_call "relu" ins(%x : memref<4xf32>) outs(%y : memref<4xf32>)
      epilogue #cuvil_l2.epilogue<steps = [relu], clip_min = 0.0 : f64>
  return
}

// -----

func.func @f(%x: memref<4xf32>, %y: memref<4xf32>) {
  // expected-error @+2 {{epilogue clips to an empty range (clip_min above clip_max)}}
  cuvil_l2.ukernel_call "relu" ins(%x : memref<4xf32>) outs(%y : memref<4xf32>)
      epilogue #cuvil_l2.epilogue<steps = [clip], clip_min = 6.0 : f64, clip_max = 0.0 : f64>
  return
}

// -----

func.func @f(%c: memref<2xi1>) {
  // expected-error @+1 {{'cuvil_l2.if' op expects a condition buffer of one i1, got 'memref<2xi1>'}}
  cuvil_l2.if %c : memref<2xi1> {
  } else {
  }
  return
}

// -----

func.func @f(%c: memref<i1>, %m: memref<2xi64>) {
  // expected-error @+1 {{'cuvil_l2.loop' op expects one-element buffers for its trip count, condition and iteration, got 'memref<2xi64>'}}
  cuvil_l2.loop max(%m : memref<2xi64>) while %c : memref<i1> {
  }
  return
}

// -----

func.func @f(%x: memref<4xf32>, %s: memref<3x5xf32>, %i: memref<i64>) {
  // expected-error @+1 {{'cuvil_l2.insert_row' op expects a row-major target of one more (leading) dimension than its source, got 'memref<4xf32>' and 'memref<3x5xf32>'}}
  cuvil_l2.insert_row %x, %s[%i] : memref<4xf32>, memref<3x5xf32>, memref<i64>
  return
}

// -----

func.func @f(%x: memref<4xf32>, %y: memref<4xf32>) {
  // expected-error @+2 {{epilogue alpha and beta without a hardsigmoid step}}
  cuvil_l2.ukernel_call "relu" ins(%x : memref<4xf32>) outs(%y : memref<4xf32>)
      epilogue #cuvil_l2.epilogue<steps = [hardswish], alpha = 0.2 : f64>
  return
}

// -----

func.func @f(%x: memref<4xf32>, %y: memref<4xf32>) {
  // expected-error @+2 {{epilogue steps must be an optional col_bias, an optional add, at most one activation, then an optional quantize}}
  cuvil_l2.ukernel_call "relu" ins(%x : memref<4xf32>) outs(%y : memref<4xf32>)
      epilogue #cuvil_l2.epilogue<steps = [silu, relu]>
  return
}

// -----

func.func @f(%x: memref<4xf32>, %y: memref<4x!quant.uniform<u8:f32, 0.5:3>>) {
  // expected-error @+2 {{a quantize epilogue follows relu or clip only (the int8 kernels apply no other activation)}}
  cuvil_l2.ukernel_call "relu" ins(%x : memref<4xf32>) outs(%y : memref<4x!quant.uniform<u8:f32, 0.5:3>>)
      epilogue #cuvil_l2.epilogue<steps = [hardswish, quantize]>
  return
}
